"""The checks on the programs a competition references (scoring, ingestion): metadata, commands.

A program is a folder or a zip with ``metadata.yaml`` (preferred) or ``metadata`` at its root
holding a ``command``; :func:`~metascore.bundle.schema.metadata.read_metadata` reads it (the runner
too). :class:`ProgramChecks` checks every program a competition references: metadata present
at the root (not inside a single top-level folder, which Codabench does not flatten),
``command`` one string, then the command itself (:mod:`~metascore.bundle.schema.command_checks`:
the file it runs present, placeholders that work in its step, the submission passed to an
ingestion program). It also warns about leaderboard column keys that no file of any task's
scoring program, ingestion program or reference data mentions.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from ...errors import ConfigError
from .command_checks import check_command
from .competition import Competition, Task
from ..files import METADATA_FILES, is_noise
from ..platform.meta_program import default_scoring_program, in_runtime, needs_meta_program
from .metadata import read_metadata
from .base import SchemaChecker

__all__ = ["ProgramChecks"]


def _root_names(program: Path) -> list[str]:
    if program.is_dir():
        return sorted(p.name for p in program.iterdir() if not is_noise(p.name))
    with zipfile.ZipFile(program) as zf:
        names = {n.split("/")[0] for n in zf.namelist() if not is_noise(n)}
    return sorted(names)


def _file_names(program: Path) -> list[str]:
    """The files of a program folder or zip, as relative POSIX paths."""
    if program.is_dir():
        return [p.relative_to(program).as_posix() for p in program.rglob("*") if p.is_file()]
    with zipfile.ZipFile(program) as zf:
        return [n for n in zf.namelist() if not n.endswith("/")]


def _task_key(comp: Competition, task: Task) -> str:
    """Where a task's files are in competition.yaml: ``tasks[index=N]`` (v2), or the key of the
    v1 phase that holds them (``phases.3``; the task is named "<label> Task" by the import)."""
    if comp.version == 2:
        return f"tasks[index={task.index}]"
    phase = next((p for p in comp.phases if task.index in p.tasks), None)
    return phase.yaml_key if phase is not None and phase.yaml_key else f"task {task.name!r}"


def _nested_metadata(program: Path, folder: str) -> bool:
    if program.is_dir():
        return any((program / folder / m).is_file() for m in METADATA_FILES)
    with zipfile.ZipFile(program) as zf:
        return any(f"{folder}/{m}" in zf.namelist() for m in METADATA_FILES)


class ProgramChecks(SchemaChecker):
    """Check the programs a parsed competition references, and its column keys."""

    def check_programs(self, comp: Competition) -> None:
        for task in comp.tasks.values():
            where = _task_key(comp, task)
            for kind, ref in (("scoring", task.scoring_program), ("ingestion", task.ingestion_program)):
                path = comp.path(ref)
                if path is None:
                    continue
                if needs_meta_program(path):
                    self.meta_placeholder(comp, task, ref or "", f"{where}.{kind}_program", path.exists())
                    continue
                if path.exists():
                    self.check_program(path, f"{where}.{kind}_program", task, kind)
                    if kind == "scoring":
                        self.organizer_key(path, f"{where}.{kind}_program")

    def meta_placeholder(self, comp: Competition, task: Task, ref: str, where: str, present: bool) -> None:
        """The ``meta_scoring_program/`` placeholder (absent, or only a README): fine in a
        folder that ``bundle zip`` uploads (a note), an error in a zip, where the worker would
        find no program."""
        phases = ", ".join(repr(p.name) for p in comp.phases if task.index in p.tasks) or "none"
        what = "holds only a README" if present else "is absent"
        if self.meta_ok:
            self.note(where, f"{ref!r} {what}: it is the placeholder that `metascore bundle zip` "
                      "(and `bundle run`) fill with the meta-scoring program, so upload the zip "
                      "`metascore bundle zip` makes; a zip of this folder made otherwise has no "
                      f"program there, and on Codabench the submissions of phase(s) {phases} fail "
                      "after the time limit ('Execution Time Limit exceeded').")
        else:
            self.error(where, f"{ref!r} {what}, the placeholder that `metascore bundle zip` fills "
                       "with the meta-scoring program: in this zip the worker finds no program, and "
                       f"on Codabench the submissions of phase(s) {phases} fail after the time limit "
                       "('Execution Time Limit exceeded'); upload the zip that `metascore bundle zip "
                       "<bundle folder>` makes instead.")

    def organizer_key(self, path: Path, where: str) -> None:
        """A meta-scoring program that checks the organizer's signature (issue 46) but carries
        no ``organizer_key.pub`` refuses every results export."""
        try:
            names = set(_file_names(path))
        except (OSError, zipfile.BadZipFile):
            return
        if "metascore/signature/__init__.py" in names and "organizer_key.pub" not in names:
            self.error(where, f"{path.name}: the meta-scoring program has no organizer_key.pub, so it "
                       "refuses every results export, the organizer's too; let `metascore bundle zip` "
                       "fill it (it puts your organizer key's public half there).")

    def check_program(self, path: Path, where: str, task: Task, kind: str) -> None:
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
        self.check_command(command, where, name or "", path, task, kind)

    def check_command(self, command: str, where: str, name: str, path: Path, task: Task, kind: str) -> None:
        here = f"{where} ({name})"
        errors, warnings = check_command(command, kind=kind, task=task, program=path,
                                         source=lambda: "\n".join(_texts(path)))
        for text in errors:
            self.error(here, text)
        for text in warnings:
            self.warn(here, text)

    def check_data_layout(self, comp: Competition) -> None:
        """Warn about data whose content sits under one top-level folder that no program names."""
        for task in comp.tasks.values():
            where = _task_key(comp, task)
            for key, ref, mount in (("input_data", task.input_data, "/app/input_data"),
                                    ("reference_data", task.reference_data, "/app/input/ref")):
                path = comp.path(ref)
                if path is None or not path.exists() or needs_meta_program(path):
                    continue
                folder = _single_folder(path)
                if folder is None:
                    continue
                programs = [comp.path(r) for r in (task.scoring_program, task.ingestion_program)]
                source = "\n".join(t for p in programs if p is not None and p.exists() for t in _texts(p))
                if _names_folder(source, folder):
                    continue
                root = "the zip root" if path.is_file() else f"the top of {path.name}/"
                self.warn(f"{where}.{key}", f"{path.name} holds everything under one folder, {folder}/, "
                          f"and Codabench does not flatten it: the programs get {mount}/{folder}/... "
                          f"where they read {mount}/..., and no program file names {folder!r}. Put "
                          f"the folder's contents at {root}.")

    def check_column_keys(self, comp: Competition) -> None:
        if comp.leaderboard is None:
            return
        texts = []
        meta = False
        for task in comp.tasks.values():
            for ref in (task.scoring_program, task.ingestion_program, task.reference_data):
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
            if not (col.computation or col.dropped_computation) and col.key and col.key not in blob:
                self.warn(f"leaderboard column {col.key!r}", "no file of any task's scoring program, "
                          "ingestion program or reference data mentions this key; the column stays "
                          "empty unless a program writes it (keys built at run time are not detected).")

def _single_folder(data: Path) -> str | None:
    """The name of the only top-level entry of a data folder or zip when it is a folder."""
    if data.is_dir():
        entries = [p for p in data.iterdir() if not is_noise(p.name)]
        return entries[0].name if len(entries) == 1 and entries[0].is_dir() else None
    if not zipfile.is_zipfile(data):
        return None
    with zipfile.ZipFile(data) as zf:
        names = [n for n in zf.namelist() if not is_noise(n)]
    tops = {n.split("/")[0] for n in names}
    if len(tops) != 1 or not all("/" in n for n in names):
        return None
    return tops.pop()


def _names_folder(source: str, folder: str) -> bool:
    """Whether program text names ``folder`` other than as a worker path (``/app/<folder>``)
    or a placeholder (``$<folder>``)."""
    return re.search(rf"(?<![\w$])(?<!/app/){re.escape(folder)}(?!\w)", source) is not None


def _texts(path: Path, limit: int = 1_000_000) -> Iterator[str]:
    suffixes = {".py", ".r", ".yaml", ".yml", ".json", ".txt", ".sh", ".cfg", ".toml", ".ini", ""}
    if path.is_dir():  # a meta-scoring program's own Python (numpy's sources...) left out
        for p in sorted(path.rglob("*")):
            if (p.is_file() and p.suffix.lower() in suffixes and p.stat().st_size <= limit
                    and not in_runtime(p.relative_to(path).parts)):
                yield p.read_text(encoding="utf-8", errors="replace")
    elif zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                name = PurePosixPath(info.filename)
                if name.suffix.lower() in suffixes and info.file_size <= limit and not in_runtime(name.parts):
                    yield zf.read(info).decode("utf-8", "replace")

