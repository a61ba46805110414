"""``competition.yaml`` (Codabench v2 and CodaLab v1) parsed and checked.

:func:`check_bundle` reads a bundle directory and returns a :class:`BundleReport`: the
parsed :class:`Competition` (or ``None``), the **errors** (what Codabench would refuse or
what makes the bundle unrunnable) and the **warnings** (what Codabench silently ignores or
gets wrong). :func:`load_competition` raises :class:`~metascore.errors.ConfigError` on the
first error. Every message starts with the key path, e.g.
``competition.yaml: leaderboards[0].columns[2].sorting: 'dsc' is not one of 'desc', 'asc'
(did you mean 'desc'?)``.

Version detection follows Codabench (research/codabench.md 2.1): ``version: 2`` is v2;
``1``, ``1.5`` or no version is v1, mapped the way Codabench's v1 unpacker maps it: each
phase becomes a phase with exactly one task, ``label`` -> ``title``, ``sort`` ->
``sorting``, ``numeric_format`` -> ``precision``, columns ordered by ``rank``, and
``computed:`` columns dropped to plain columns (with a warning).

Warnings (Codabench accepts these but the result is not what the organizer meant):
unknown keys; ``leaderboards`` beyond the first (only ``leaderboards[0]`` is attached, to
every phase); ``leaderboard:`` singular next to ``leaderboards:``; ``computation_indexes``
written as a string; no column at the primary index; column keys or titles longer than 36
characters; column keys that no scoring program file or reference data mentions; v1
``computed:`` columns; dataset UUID keys (not runnable offline); shell syntax in a
``command`` (there is no shell); ``$program`` with ``ingestion_only_during_scoring``.

Differences from Codabench, on purpose: a path that does not exist and is not a UUID is an
error here (Codabench would look it up as a dataset key and fail the unpack), and a
``meta_scoring_program/`` folder that is absent or holds only a README is accepted, because
``metascore bundle run`` / ``bundle zip`` fill it with metascore's meta-scoring program.
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from ..errors import ConfigError, did_you_mean
from .archive import is_noise, needs_meta_program

__all__ = [
    "Column",
    "Leaderboard",
    "Task",
    "Phase",
    "Solution",
    "Competition",
    "BundleReport",
    "SORTINGS",
    "COMPUTATIONS",
    "SUBMISSION_RULES",
    "PATH_KEYS",
    "MAX_KEY_LENGTH",
    "DEFAULT_IMAGE",
    "DEFAULT_TIME_LIMIT",
    "check_bundle",
    "load_competition",
    "path_references",
    "read_metadata",
]

SORTINGS = ("desc", "asc")
COMPUTATIONS = ("avg", "sum", "min", "max", "avg_rank")
SUBMISSION_RULES = (
    "Add", "Add_And_Delete", "Add_And_Delete_Multiple", "Force_Last", "Force_Latest_Multiple",
    "Force_Best",
)
COMPETITION_TYPES = ("competition", "benchmark")
#: Keys whose value is a path inside the bundle (v2 and v1).
PATH_KEYS = (
    "image", "terms", "file", "path", "scoring_program", "ingestion_program", "input_data",
    "reference_data", "starting_kit", "public_data",
)
MAX_KEY_LENGTH = 36
DEFAULT_IMAGE = "codalab/codalab-legacy:py37"
DEFAULT_TIME_LIMIT = 600
METADATA_FILES = ("metadata.yaml", "metadata")

_V2_TOP = {
    "version", "title", "description", "image", "terms", "pages", "tasks", "phases",
    "leaderboards", "solutions", "docker_image", "queue", "registration_auto_approve",
    "enable_detailed_results", "show_detailed_results_in_submission_panel",
    "show_detailed_results_in_leaderboard", "auto_run_submissions",
    "can_participants_make_submissions_public", "make_programs_available",
    "make_input_data_available", "competition_type", "fact_sheet", "reward", "contact_email",
    "forum_enabled",
}
_V2_TASK = {
    "index", "key", "name", "description", "scoring_program", "ingestion_program",
    "input_data", "reference_data", "ingestion_only_during_scoring",
}
_V2_PHASE = {
    "index", "name", "description", "start", "end", "tasks", "execution_time_limit",
    "max_submissions_per_day", "max_submissions", "auto_migrate_to_this_phase", "hide_output",
    "hide_prediction_output", "hide_score_output", "starting_kit", "public_data",
    "accepts_only_result_submissions", "solutions",
}
_V2_LEADERBOARD = {"title", "key", "columns", "submission_rule", "hidden", "primary_index", "index"}
_V2_COLUMN = {
    "title", "key", "index", "sorting", "computation", "computation_indexes", "precision",
    "hidden",
}
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_SHELL = re.compile(r"&&|\|\||[|;<>`]|\$\(")


# ====================================================================== data model
@dataclass(frozen=True)
class Column:
    """A leaderboard column: the ``scores.json`` key it shows and its direction."""

    key: str
    title: str
    index: int
    sorting: str = "desc"
    computation: str | None = None
    computation_indexes: tuple[int, ...] = ()
    precision: int = 2
    hidden: bool = False

    @property
    def higher_is_better(self) -> bool:
        return self.sorting == "desc"


@dataclass(frozen=True)
class Leaderboard:
    """``leaderboards[0]``: the one leaderboard Codabench attaches to every phase."""

    title: str
    key: str
    columns: tuple[Column, ...]
    primary_index: int = 0
    submission_rule: str = "Add"

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.columns)


@dataclass(frozen=True)
class Task:
    """A task: paths are as written in the yaml (relative to the bundle root), or ``None``."""

    index: int
    name: str
    scoring_program: str | None = None
    ingestion_program: str | None = None
    input_data: str | None = None
    reference_data: str | None = None
    ingestion_only_during_scoring: bool = False
    key: str | None = None  # an existing Codabench task (not runnable offline)


@dataclass(frozen=True)
class Phase:
    index: int
    name: str
    tasks: tuple[int, ...]
    execution_time_limit: int = DEFAULT_TIME_LIMIT
    starting_kit: str | None = None
    public_data: str | None = None
    start: dt.datetime | None = None
    end: dt.datetime | None = None


@dataclass(frozen=True)
class Solution:
    index: int
    tasks: tuple[int, ...]
    path: str | None = None


@dataclass(frozen=True)
class Competition:
    """A parsed bundle, v1 bundles mapped to the v2 model as Codabench maps them."""

    root: Path
    version: int
    title: str
    docker_image: str
    tasks: dict[int, Task]
    phases: tuple[Phase, ...]
    leaderboard: Leaderboard | None
    solutions: tuple[Solution, ...] = ()
    pages: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()

    def path(self, ref: str | None) -> Path | None:
        """The bundle file or folder ``ref`` points to (a ``.zip`` or a folder), or ``None``."""
        if not ref or _UUID.match(ref):
            return None
        return self.root / ref.rstrip("/")

    def phase_tasks(self, phase: Phase) -> list[Task]:
        return [self.tasks[i] for i in phase.tasks]


@dataclass
class BundleReport:
    """What :func:`check_bundle` found."""

    root: Path
    competition: Competition | None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


# ====================================================================== entry points
def load_competition(root: str | Path, *, meta_program_available: bool = True) -> Competition:
    """Parse and check ``<root>/competition.yaml``; raise on the first error.

    Raises
    ------
    ConfigError
        Naming the key, the bad value and the allowed values.
    """
    report = check_bundle(root, meta_program_available=meta_program_available)
    if report.errors:
        more = len(report.errors) - 1
        tail = f" ({more} more problem(s): run `metascore bundle check {root}`)" if more else ""
        raise ConfigError(report.errors[0] + tail)
    assert report.competition is not None
    return report.competition


def check_bundle(root: str | Path, *, meta_program_available: bool = True) -> BundleReport:
    """Check a bundle directory: schema, referenced files, programs' metadata.

    ``meta_program_available``: accept a ``meta_scoring_program/`` folder that is absent or
    holds only a README (it is filled from metascore's own meta-scoring program).
    """
    root = Path(root)
    report = BundleReport(root=root, competition=None)
    yaml_path = root / "competition.yaml"
    if not root.is_dir():
        report.errors.append(f"{root}: not a bundle directory.")
        return report
    if not yaml_path.is_file():
        nested = sorted(p.parent.name for p in root.glob("*/competition.yaml"))
        hint = (
            f" (found in {nested[0]}/: put its contents, not the folder, at the bundle root)"
            if nested else ""
        )
        report.errors.append(f"{root}: competition.yaml is missing from the bundle root{hint}.")
        return report
    try:
        data = yaml.safe_load(yaml_path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        report.errors.append(f"competition.yaml: not valid YAML{where} ({problem}).")
        return report
    if not isinstance(data, dict):
        report.errors.append("competition.yaml: expected a mapping of keys at the top level.")
        return report
    parser = _Parser(root, report, meta_program_available)
    version = str(data.get("version", "1.5"))
    if version == "2":
        competition = parser.parse_v2(data)
    elif version in ("1", "1.5"):
        competition = parser.parse_v1(data)
    else:
        report.errors.append(
            f"competition.yaml: version: {data['version']!r} is not one of 2, 1.5 or 1."
        )
        return report
    if competition is not None:
        parser.check_programs(competition)
        parser.check_column_keys(competition)
        report.competition = Competition(
            **{**competition.__dict__, "warnings": tuple(report.warnings)}
        )
    return report


def path_references(data: Any) -> list[str]:
    """Every bundle path a parsed ``competition.yaml`` references (v2 or v1), in order."""
    refs: list[str] = []

    def walk(node: Any, key: str | None = None) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k if key != "html" else "file")
        elif isinstance(node, list):
            for item in node:
                walk(item, key)
        elif isinstance(node, str) and key in PATH_KEYS and not _UUID.match(node):
            if node not in refs:
                refs.append(node)

    walk(data)
    return refs


def read_metadata(program: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The parsed ``metadata.yaml`` (preferred) or ``metadata`` of a program folder or zip.

    Returns ``(metadata, file name)``, or ``(None, None)`` when there is none. Raises
    :class:`ConfigError` when it is not a YAML mapping.
    """
    for name in METADATA_FILES:
        text = _member_text(program, name)
        if text is None:
            continue
        try:
            meta = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{program}/{name}: not valid YAML ({exc}).") from None
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


def _as_datetime(value: Any) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    from dateutil import parser as dateparser

    return dateparser.parse(str(value)).replace(tzinfo=None)


# ====================================================================== parser
class _Parser:
    def __init__(self, root: Path, report: BundleReport, meta_program_available: bool) -> None:
        self.root = root
        self.report = report
        self.meta_ok = meta_program_available

    def error(self, where: str, msg: str) -> None:
        self.report.errors.append(f"competition.yaml: {where}: {msg}")

    def warn(self, where: str, msg: str) -> None:
        self.report.warnings.append(f"competition.yaml: {where}: {msg}")

    # ------------------------------------------------------------ typed getters
    def get(
        self, node: dict, key: str, where: str, kind: type | tuple[type, ...], *,
        required: bool = False, default: Any = None,
    ) -> Any:
        here = f"{where}.{key}" if where else key
        if key not in node or node[key] is None:
            if required:
                self.error(here, "this key is required.")
            return default
        value = node[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if bool in kinds and isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if isinstance(value, bool) and bool not in kinds:
            ok = False
        else:
            ok = isinstance(value, kinds) or (float in kinds and isinstance(value, int))
        if not ok:
            names = " or ".join({int: "an integer", str: "a string", list: "a list",
                                 dict: "a mapping", bool: "true/false", float: "a number"}[k]
                                for k in kinds)
            self.error(here, f"expected {names}; got {value!r}.")
            return default
        return value

    def choice(self, node: dict, key: str, where: str, choices: tuple[str, ...], default: Any) -> Any:
        value = node.get(key)
        if value is None:
            return default
        if value not in choices:
            allowed = ", ".join(repr(c) for c in choices)
            self.error(
                f"{where}.{key}",
                f"{value!r} is not one of {allowed}{did_you_mean(str(value), choices)}.",
            )
            return default
        return value

    def unknown_keys(self, node: dict, known: set[str], where: str) -> None:
        for key in node:
            if key not in known:
                label = f"{where}.{key}" if where else str(key)
                self.warn(
                    label,
                    f"unknown key{did_you_mean(str(key), sorted(known))}; Codabench ignores it.",
                )

    def path(self, node: dict, key: str, where: str, *, required: bool = False) -> str | None:
        value = self.get(node, key, where, str, required=required)
        if value is None:
            return None
        here = f"{where}.{key}" if where else key
        if _UUID.match(value):
            self.warn(here, f"{value!r} is the key of an existing Codabench dataset; it cannot be "
                      "run offline.")
            return value
        clean = PurePosixPath(value.rstrip("/"))
        if clean.is_absolute() or ".." in clean.parts:
            self.error(here, f"{value!r} must be a path inside the bundle (no '/' start, no '..').")
            return None
        target = self.root / clean
        if not target.exists():
            if self.meta_ok and needs_meta_program(target):
                return value
            siblings = [p.name for p in target.parent.iterdir()] if target.parent.is_dir() else []
            self.error(
                here,
                f"{value!r} does not exist in the bundle{did_you_mean(clean.name, siblings)} "
                "(Codabench would look it up as a dataset key and fail).",
            )
            return None
        return value

    # ------------------------------------------------------------ v2
    def parse_v2(self, data: dict) -> Competition | None:
        self.unknown_keys(data, _V2_TOP, "")
        title = self.get(data, "title", "", str, required=True, default="")
        self.path(data, "image", "", required=True)
        self.path(data, "terms", "", required=True)
        self.get(data, "competition_type", "", str)
        if "competition_type" in data:
            self.choice(data, "competition_type", "", COMPETITION_TYPES, None)
        pages = self.pages_v2(data)
        tasks = self.tasks_v2(data)
        solutions = self.solutions_v2(data, tasks)
        phases = self.phases_v2(data, tasks)
        leaderboard = self.leaderboards_v2(data)
        image = self.get(data, "docker_image", "", str, default=DEFAULT_IMAGE)
        if self.report.errors and (not phases or leaderboard is None):
            return None
        return Competition(
            root=self.root, version=2, title=title, docker_image=image, tasks=tasks,
            phases=phases, leaderboard=leaderboard, solutions=solutions, pages=pages,
        )

    def pages_v2(self, data: dict) -> tuple[tuple[str, str], ...]:
        pages = self.get(data, "pages", "", list, required=True, default=[])
        out = []
        for i, page in enumerate(pages):
            where = f"pages[{i}]"
            if not isinstance(page, dict):
                self.error(where, f"expected {{title, file}}; got {page!r}.")
                continue
            title = self.get(page, "title", where, str, required=True, default="")
            ref = self.path(page, "file", where, required=True)
            if ref and (self.root / ref).is_file() and not (self.root / ref).read_text(
                encoding="utf-8", errors="replace"
            ).strip():
                self.error(f"{where}.file", f"{ref!r} is empty; Codabench refuses empty pages.")
            out.append((title, ref or ""))
        return tuple(out)

    def tasks_v2(self, data: dict) -> dict[int, Task]:
        tasks: dict[int, Task] = {}
        for i, node in enumerate(self.get(data, "tasks", "", list, required=True, default=[])):
            where = f"tasks[{i}]"
            if not isinstance(node, dict):
                self.error(where, f"expected a mapping; got {node!r}.")
                continue
            self.unknown_keys(node, _V2_TASK, where)
            index = self.get(node, "index", where, int, required=True)
            if index is None:
                continue
            if index in tasks:
                self.error(f"{where}.index", f"{index} is used by another task; indexes must be unique.")
                continue
            key = self.get(node, "key", where, str)
            if key is not None:
                self.warn(where, f"key {key!r} refers to an existing Codabench task; it cannot be "
                          "run offline and its other keys are ignored.")
                tasks[index] = Task(index=index, name=str(node.get("name") or key), key=key)
                continue
            tasks[index] = Task(
                index=index,
                name=self.get(node, "name", where, str, required=True, default=f"task {index}"),
                scoring_program=self.path(node, "scoring_program", where, required=True),
                ingestion_program=self.path(node, "ingestion_program", where),
                input_data=self.path(node, "input_data", where),
                reference_data=self.path(node, "reference_data", where),
                ingestion_only_during_scoring=bool(
                    self.get(node, "ingestion_only_during_scoring", where, bool, default=False)
                ),
            )
        if not tasks and "tasks" in data:
            self.error("tasks", "at least one task is required.")
        return tasks

    def solutions_v2(self, data: dict, tasks: dict[int, Task]) -> tuple[Solution, ...]:
        out = []
        for i, node in enumerate(self.get(data, "solutions", "", list, default=[])):
            where = f"solutions[{i}]"
            if not isinstance(node, dict):
                self.error(where, f"expected {{index, tasks, path}}; got {node!r}.")
                continue
            index = self.get(node, "index", where, int, required=True, default=i)
            task_ids = self.task_list(node, where, tasks)
            if "key" in node:
                self.warn(where, "a solution given by dataset key cannot be run offline.")
                continue
            out.append(Solution(index=index, tasks=task_ids, path=self.path(node, "path", where, required=True)))
        return tuple(out)

    def task_list(self, node: dict, where: str, tasks: dict[int, Task]) -> tuple[int, ...]:
        values = self.get(node, "tasks", where, list, required=True, default=[])
        out = []
        for value in values:
            if not isinstance(value, int) or isinstance(value, bool):
                self.error(f"{where}.tasks", f"expected task indexes (integers); got {value!r}.")
            elif value not in tasks:
                known = ", ".join(str(t) for t in sorted(tasks)) or "none"
                self.error(f"{where}.tasks", f"task index {value} is not defined (tasks: {known}).")
            else:
                out.append(value)
        return tuple(out)

    def phases_v2(self, data: dict, tasks: dict[int, Task]) -> tuple[Phase, ...]:
        nodes = self.get(data, "phases", "", list, required=True, default=[])
        if not nodes and "phases" in data:
            self.error("phases", "at least one phase is required.")
        indexed = [(n.get("index", i) if isinstance(n, dict) else i, i, n) for i, n in enumerate(nodes)]
        indexed.sort(key=lambda t: (t[0] if isinstance(t[0], int) else t[1], t[1]))
        phases: list[Phase] = []
        for order, (_, i, node) in enumerate(indexed):
            where = f"phases[{i}]"
            if not isinstance(node, dict):
                self.error(where, f"expected a mapping; got {node!r}.")
                continue
            self.unknown_keys(node, _V2_PHASE, where)
            name = self.get(node, "name", where, str, required=True, default=f"phase {order}")
            start = self.date(node, "start", where, required=True)
            end = self.date(node, "end", where, required=order < len(indexed) - 1)
            limit = self.get(node, "execution_time_limit", where, int, default=DEFAULT_TIME_LIMIT)
            if limit is not None and limit <= 0:
                self.error(f"{where}.execution_time_limit", f"must be a positive number of seconds; got {limit}.")
                limit = DEFAULT_TIME_LIMIT
            if order == 0 and node.get("auto_migrate_to_this_phase"):
                self.warn(f"{where}.auto_migrate_to_this_phase", "must not be set on the first phase.")
            for key in ("accepts_only_result_submissions", "solutions"):
                if key in node:
                    self.warn(f"{where}.{key}", "documented but not read by Codabench's unpacker; ignored.")
            phases.append(Phase(
                index=order, name=name, tasks=self.task_list(node, where, tasks),
                execution_time_limit=limit, starting_kit=self.path(node, "starting_kit", where),
                public_data=self.path(node, "public_data", where), start=start, end=end,
            ))
        self.check_dates(phases)
        names = [p.name for p in phases]
        for name in {n for n in names if names.count(n) > 1}:
            self.error("phases", f"phase name {name!r} is used twice; the runner names outputs by phase.")
        return tuple(phases)

    def date(self, node: dict, key: str, where: str, *, required: bool) -> dt.datetime | None:
        if node.get(key) is None:
            if required:
                self.error(f"{where}.{key}", "this key is required (every phase but the last needs an end).")
            return None
        try:
            return _as_datetime(node[key])
        except (ValueError, OverflowError):
            self.error(f"{where}.{key}", f"{node[key]!r} is not a date (e.g. 2026-01-31 or 2026-01-31 23:59:00).")
            return None

    def check_dates(self, phases: list[Phase]) -> None:
        for a, b in zip(phases, phases[1:]):
            if a.end and b.start and b.start <= a.end:
                self.error(
                    f"phases ({a.name!r} -> {b.name!r})",
                    f"phase {b.name!r} starts at {b.start} but {a.name!r} ends at {a.end}; a phase "
                    "must start after the previous one ends (equal times are refused too).",
                )
            if a.start and a.end and a.end < a.start:
                self.error(f"phases ({a.name!r})", f"ends ({a.end}) before it starts ({a.start}).")

    def leaderboards_v2(self, data: dict) -> Leaderboard | None:
        if "leaderboards" not in data:
            if "leaderboard" in data:
                self.error("leaderboards", "missing; found 'leaderboard:' (singular), which Codabench's "
                           "v2 unpacker does not read: rename it 'leaderboards:' and make it a list.")
            else:
                self.error("leaderboards", "this key is required (a list with at least one leaderboard).")
            return None
        if "leaderboard" in data:
            self.warn("leaderboard", "ignored by Codabench v2; only 'leaderboards:' is read.")
        boards = self.get(data, "leaderboards", "", list, required=True, default=[])
        if not boards:
            self.error("leaderboards", "at least one leaderboard is required.")
            return None
        if len(boards) > 1:
            self.warn("leaderboards", f"{len(boards)} leaderboards given; Codabench attaches only "
                      "leaderboards[0] to every phase, the others are orphaned. Put every column "
                      "(including meta-phase columns) on leaderboards[0].")
        node = boards[0]
        where = "leaderboards[0]"
        if not isinstance(node, dict):
            self.error(where, f"expected a mapping; got {node!r}.")
            return None
        self.unknown_keys(node, _V2_LEADERBOARD, where)
        title = self.get(node, "title", where, str, required=True, default="")
        key = self.get(node, "key", where, str, required=True, default="")
        if len(key) > MAX_KEY_LENGTH:
            self.warn(f"{where}.key", f"{key!r} is longer than {MAX_KEY_LENGTH} characters.")
        rule = self.choice(node, "submission_rule", where, SUBMISSION_RULES, "Add")
        primary = self.get(node, "primary_index", where, int, default=0)
        columns = self.columns_v2(node, where)
        if columns and primary not in {c.index for c in columns}:
            self.warn(f"{where}.columns", f"no column has index {primary} (the primary index); "
                      "Codabench's leaderboard pages fail without it.")
        return Leaderboard(title=title, key=key, columns=columns, primary_index=primary,
                           submission_rule=rule)

    def columns_v2(self, board: dict, where: str) -> tuple[Column, ...]:
        nodes = self.get(board, "columns", where, list, required=True, default=[])
        if not nodes and "columns" in board:
            self.error(f"{where}.columns", "at least one column is required.")
        raw = []
        for i, node in enumerate(nodes):
            here = f"{where}.columns[{i}]"
            if not isinstance(node, dict):
                self.error(here, f"expected a mapping; got {node!r}.")
                continue
            self.unknown_keys(node, _V2_COLUMN, here)
            key = self.get(node, "key", here, str, required=True)
            title = self.get(node, "title", here, str, required=True, default=key or "")
            index = self.get(node, "index", here, int, required=True)
            for label, text in (("key", key), ("title", title)):
                if text and len(text) > MAX_KEY_LENGTH:
                    self.warn(f"{here}.{label}", f"{text!r} is {len(text)} characters, more than "
                              f"Codabench's limit of {MAX_KEY_LENGTH}.")
            indexes = node.get("computation_indexes")
            if isinstance(indexes, str):
                self.warn(f"{here}.computation_indexes", f"{indexes!r} is a string; Codabench "
                          "iterates it per character and fails. Write a YAML list, e.g. [1, 2].")
                indexes = [int(t) for t in re.findall(r"-?\d+", indexes)]
            elif indexes is not None and not (
                isinstance(indexes, list) and all(isinstance(x, int) for x in indexes)
            ):
                self.error(f"{here}.computation_indexes", f"expected a list of column indexes; got {indexes!r}.")
                indexes = None
            raw.append((here, Column(
                key=key or "", title=title, index=index if index is not None else -1,
                sorting=self.choice(node, "sorting", here, SORTINGS, "desc"),
                computation=self.choice(node, "computation", here, COMPUTATIONS, None),
                computation_indexes=tuple(indexes or ()),
                precision=self.get(node, "precision", here, int, default=2),
                hidden=bool(self.get(node, "hidden", here, bool, default=False)),
            )))
        return self.check_columns(raw)

    def check_columns(self, raw: list[tuple[str, Column]]) -> tuple[Column, ...]:
        seen_keys: dict[str, str] = {}
        seen_index: dict[int, str] = {}
        for here, col in raw:
            if col.key in seen_keys:
                self.error(f"{here}.key", f"{col.key!r} is already the key of {seen_keys[col.key]}; keys must be unique.")
            seen_keys.setdefault(col.key, here)
            if col.index in seen_index:
                self.error(f"{here}.index", f"{col.index} is already the index of {seen_index[col.index]}; indexes must be unique.")
            seen_index.setdefault(col.index, here)
        for here, col in raw:
            if col.computation and not col.computation_indexes:
                self.error(f"{here}.computation_indexes", f"required with computation: {col.computation}.")
            for i in col.computation_indexes:
                if i == col.index:
                    self.error(f"{here}.computation_indexes", f"{i} is the column itself.")
                elif i not in seen_index:
                    self.error(f"{here}.computation_indexes", f"no column has index {i} (indexes: {sorted(seen_index)}).")
            if col.computation_indexes and not col.computation:
                self.warn(f"{here}.computation_indexes", "given without 'computation'; ignored.")
        return tuple(sorted((c for _, c in raw), key=lambda c: c.index))

    # ------------------------------------------------------------ v1
    def parse_v1(self, data: dict) -> Competition | None:
        title = self.get(data, "title", "", str, required=True, default="")
        self.path(data, "image", "")
        html = self.get(data, "html", "", dict, default={})
        if "terms" not in html:
            self.error("html", "Codabench's v1 unpacker needs html.terms (the terms page).")
        pages = []
        for key in html:
            ref = self.path(html, key, "html")
            pages.append((str(key), ref or ""))
        image = self.get(data, "competition_docker_image", "", str, default=DEFAULT_IMAGE)
        nodes = self.get(data, "phases", "", dict, required=True, default={})
        tasks: dict[int, Task] = {}
        phases: list[Phase] = []
        ordered = sorted(nodes.items(), key=lambda kv: _phase_number(kv))
        for order, (number, node) in enumerate(ordered):
            where = f"phases.{number}"
            if not isinstance(node, dict):
                self.error(where, f"expected a mapping; got {node!r}.")
                continue
            if node.get("is_parallel_parent") or "parent_phasenumber" in node:
                self.warn(where, "v1.8 parallel phases: Codabench drops the parent phase and makes "
                          "each child its own phase.")
            if node.get("is_scoring_only"):
                self.warn(f"{where}.is_scoring_only", "dropped by Codabench's v1 unpacker.")
            if "datasets" in node:
                self.warn(f"{where}.datasets", "dataset keys cannot be run offline.")
            name = str(self.get(node, "label", where, str, default=f"Phase {number}"))
            tasks[order] = Task(
                index=order, name=name,
                scoring_program=self.path(node, "scoring_program", where, required=True),
                ingestion_program=self.path(node, "ingestion_program", where),
                input_data=self.path(node, "input_data", where),
                reference_data=self.path(node, "reference_data", where),
                ingestion_only_during_scoring=bool(self.get(
                    node, "ingestion_program_only_during_scoring", where, bool, default=False)),
            )
            phases.append(Phase(
                index=order, name=name, tasks=(order,),
                execution_time_limit=self.get(node, "execution_time_limit", where, int,
                                              default=DEFAULT_TIME_LIMIT),
                starting_kit=self.path(node, "starting_kit", where),
                public_data=self.path(node, "public_data", where),
                start=self.date(node, "start_date", where, required=True),
            ))
        if not phases and "phases" in data:
            self.error("phases", "at least one phase is required.")
        leaderboard = self.leaderboard_v1(data)
        if not phases or leaderboard is None:
            return None
        return Competition(
            root=self.root, version=1, title=title, docker_image=image, tasks=tasks,
            phases=tuple(phases), leaderboard=leaderboard, pages=tuple(pages),
        )

    def leaderboard_v1(self, data: dict) -> Leaderboard | None:
        node = self.get(data, "leaderboard", "", dict, required=True)
        if node is None:
            return None
        boards = self.get(node, "leaderboards", "leaderboard", dict, required=True, default={})
        if not boards:
            return None
        ranked = sorted(boards.items(), key=lambda kv: (kv[1] or {}).get("rank", 1))
        first_key, first = ranked[0]
        first = first or {}
        if len(ranked) > 1:
            self.warn("leaderboard.leaderboards", "several leaderboards; Codabench attaches only "
                      "the first to the phases.")
        label = str(first.get("label", first_key))
        raw = []
        columns = self.get(node, "columns", "leaderboard", dict, required=True, default={})
        ordered = sorted(columns.items(), key=lambda kv: (kv[1] or {}).get("rank", 1))
        index = 0
        for key, col in ordered:
            where = f"leaderboard.columns.{key}"
            col = col or {}
            board = col.get("leaderboard") or {}
            if str(board.get("label", "")).lower() != label.lower():
                continue
            if "computed" in col:
                comp = col["computed"] or {}
                self.warn(f"{where}.computed", (
                    f"operation {comp.get('operation')!r} over {comp.get('fields')!r} is dropped by "
                    "Codabench's v1 unpacker: the column becomes a plain column that no scoring "
                    "program fills, so it shows n/a. CodaLab v1 computed the average of the "
                    "fields' ranks; on Codabench rank with a metascore meta phase instead."))
            sort = col.get("sort", "desc")
            if sort not in SORTINGS:
                self.error(f"{where}.sort", f"{sort!r} is not one of 'desc', 'asc'{did_you_mean(str(sort), SORTINGS)}.")
                sort = "desc"
            raw.append((where, Column(
                key=str(key), title=str(col.get("label", key)), index=index, sorting=sort,
                precision=int(col.get("numeric_format", 2) or 2), hidden=bool(col.get("hidden", False)),
            )))
            index += 1
        return Leaderboard(title=label, key=str(first_key), columns=self.check_columns(raw))

    # ------------------------------------------------------------ programs and keys
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
            from . import archive

            try:
                texts.extend(_texts(archive.default_scoring_program()))
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


def _phase_number(item: tuple[Any, Any]) -> tuple[int, str]:
    number, node = item
    value = node.get("phasenumber", number) if isinstance(node, dict) else number
    try:
        return int(value), str(number)
    except (TypeError, ValueError):
        return 0, str(number)
