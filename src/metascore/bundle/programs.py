"""Programs (scoring, ingestion, submissions): their metadata file and the checks on them.

A program is a folder or a zip with ``metadata.yaml`` (preferred) or ``metadata`` at its root
holding a ``command``; :func:`read_metadata` reads it (the runner too). :class:`ProgramChecks`
checks every program a competition references: metadata present at the root (not inside a
single top-level folder, which Codabench does not flatten), ``command`` one string, no shell
syntax (there is no shell), no unknown ``$placeholder``, the files the command runs present.
It also warns about leaderboard column keys that no scoring program or reference data file
mentions.
"""

from __future__ import annotations

import re
import shlex
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import ConfigError
from ..io.yaml_loader import load_yaml
from .files import METADATA_FILES, is_noise
from .meta_program import default_scoring_program, needs_meta_program
from .model import Competition, Task
from .schema_base import SchemaChecker

__all__ = ["METADATA_FILES", "read_metadata", "ProgramChecks"]

_SHELL = re.compile(r"&&|\|\||[|;<>`]|\$\(")


def read_metadata(program: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The parsed ``metadata.yaml`` (preferred) or ``metadata`` of a program folder or zip.

    Returns ``(metadata, file name)``, or ``(None, None)`` when there is none. Raises
    :class:`ConfigError` when it is not a YAML mapping.
    """
    for name in METADATA_FILES:
        text = _member_text(program, name)
        if text is None:
            continue
        # the worker reads it with yaml.load: a duplicate key keeps its last value there too
        meta = load_yaml(text, f"{program}/{name}", on_duplicate=lambda _: None)
        if meta is None:
            meta = {}
        if not isinstance(meta, dict):
            raise ConfigError(f"{program}/{name}: expected a mapping such as 'command: ...'.")
        return meta, name
    return None, None


def _member_text(program: Path, name: str) -> str | None:
    if program.is_dir():
        path = program / name
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
    if zipfile.is_zipfile(program):
        with zipfile.ZipFile(program) as zf:
            try:
                return zf.read(name).decode("utf-8", "replace")
            except KeyError:
                return None
    return None


def _root_names(program: Path) -> list[str]:
    if program.is_dir():
        return sorted(p.name for p in program.iterdir() if not is_noise(p.name))
    with zipfile.ZipFile(program) as zf:
        names = {n.split("/")[0] for n in zf.namelist() if not is_noise(n)}
    return sorted(names)


def _nested_metadata(program: Path, folder: str) -> bool:
    if program.is_dir():
        return any((program / folder / m).is_file() for m in METADATA_FILES)
    with zipfile.ZipFile(program) as zf:
        return any(f"{folder}/{m}" in zf.namelist() for m in METADATA_FILES)


class ProgramChecks(SchemaChecker):
    """Check the programs a parsed competition references, and its column keys."""

    def check_programs(self, comp: Competition) -> None:
        for task in comp.tasks.values():
            where = f"tasks[index={task.index}]" if comp.version == 2 else f"phase {task.name!r}"
            for kind, ref in (("scoring", task.scoring_program), ("ingestion", task.ingestion_program)):
                path = comp.path(ref)
                if path is None or not path.exists():
                    continue
                if needs_meta_program(path):
                    continue
                self.check_program(path, f"{where}.{kind}_program", task)

    def check_program(self, path: Path, where: str, task: Task) -> None:
        if path.is_file() and not zipfile.is_zipfile(path):
            self.error(where, f"{path.name} is neither a folder nor a zip file.")
            return
        try:
            meta, name = read_metadata(path)
        except ConfigError as exc:
            self.error(where, str(exc))
            return
        if meta is None:
            names = _root_names(path)
            if len(names) == 1 and _nested_metadata(path, names[0]):
                self.error(where, f"{path.name}: metadata is inside {names[0]}/, not at the root; "
                           "Codabench does not flatten a single top-level folder.")
            else:
                self.error(where, f"{path.name} has no metadata.yaml or metadata at its root; the "
                           "compute worker needs one with a 'command'.")
            return
        command = meta.get("command")
        if isinstance(command, list):
            self.error(f"{where} ({name})", "command is a list (CodaLab v1 multi-track); Codabench "
                       "v2 needs one string.")
            return
        if not isinstance(command, str) or not command.strip():
            self.error(f"{where} ({name})", f"no 'command' string; got {command!r}.")
            return
        self.check_command(command, where, name or "", path, task)

    def check_command(self, command: str, where: str, name: str, path: Path, task: Task) -> None:
        here = f"{where} ({name})"
        if _SHELL.search(command):
            self.warn(here, f"command {command!r} uses shell syntax, but the worker runs it without "
                      "a shell; wrap it as: bash -c \"...\".")
        if task.ingestion_only_during_scoring and "$program" in command:
            self.warn(here, "'$program' becomes /app/ingestion_program with "
                      "ingestion_only_during_scoring, which the worker never mounts; use /app/program.")
        leftover = re.findall(r"\$\{?([A-Za-z_]\w*)", command)
        known = {"input", "output", "program", "ingestion_program", "hidden", "shared",
                 "submission_program", "tmp", "predictions"}
        for var in leftover:
            if var not in known:
                self.warn(here, f"'${var}' is not a Codabench placeholder and there is no shell to "
                          "expand it.")
        try:
            tokens = shlex.split(command)
        except ValueError as exc:
            self.error(here, f"command {command!r} cannot be split ({exc}).")
            return
        if not path.is_dir():
            return
        for token in tokens[1:]:
            rel = None
            for prefix in ("/app/program/", "$program/", "$ingestion_program/"):
                if token.startswith(prefix):
                    rel = token[len(prefix):]
            if rel is None and token.endswith((".py", ".R", ".sh")) and not token.startswith(("/", "$")):
                rel = token
            if rel and not (path / rel).exists():
                self.warn(here, f"the command runs {token!r} but {path.name}/{rel} does not exist.")

    def check_column_keys(self, comp: Competition) -> None:
        if comp.leaderboard is None:
            return
        texts = []
        meta = False
        for task in comp.tasks.values():
            for ref in (task.scoring_program, task.reference_data):
                path = comp.path(ref)
                if path is None or not path.exists():
                    continue
                meta |= needs_meta_program(path)
                texts.extend(_texts(path))
        if meta:  # the meta-scoring program's keys come from its config (in reference data)
            try:
                texts.extend(_texts(default_scoring_program()))
            except ConfigError:
                pass
        blob = "\n".join(texts)
        for col in comp.leaderboard.columns:
            if not col.computation and col.key and col.key not in blob:
                self.warn(f"leaderboard column {col.key!r}", "no scoring program or reference data "
                          "file mentions this key; the column stays empty unless a program writes it "
                          "(keys built at run time are not detected).")

def _texts(path: Path, limit: int = 1_000_000) -> Iterator[str]:
    suffixes = {".py", ".r", ".yaml", ".yml", ".json", ".txt", ".sh", ".cfg", ".toml", ".ini", ""}
    if path.is_dir():
        for p in sorted(path.rglob("*")):
            if p.is_file() and p.suffix.lower() in suffixes and p.stat().st_size <= limit:
                yield p.read_text(encoding="utf-8", errors="replace")
    elif zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if PurePosixPath(info.filename).suffix.lower() in suffixes and info.file_size <= limit:
                    yield zf.read(info).decode("utf-8", "replace")

