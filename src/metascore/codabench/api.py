"""The Codabench API payloads metascore reads, parsed and checked field by field.

Shapes follow Codabench's serializers and views (``codalab/codabench`` @ ``c7dbc756``,
``src/apps/api/``):

- ``GET /api/competitions/<id>/`` (``CompetitionDetailSerializer``): ``phases[]`` with
  ``id, index, name, tasks[] {id, name}`` (and, read when present, ``start``, ``end``,
  ``status``) and ``leaderboards[] {id, title, hidden, columns[] {key, title, sorting,
  index, hidden, computation}}`` (and ``submission_rule`` when present); a token without
  admin rights does not see hidden leaderboards; ``created_by`` (a username) and
  ``collaborators[] {username}``, who organize it.
- ``GET /api/competitions/<id>/results.json?phase=<pid>`` (``collect_leaderboard_data``):
  ``{"<leaderboard title> - <phase name>(<phase id>)": {"<owner>-<parent id or id>":
  {"fact_sheet_answers": ..., "<task name>(<task id>)-<column title>": "0.9100000000" or
  ""}}}``; leaderboard children only, hidden columns included.
- ``GET /api/phases/<pid>/get_leaderboard/`` (``PhaseViewSet.get_leaderboard``, anyone may
  read it): ``{title, id, submissions[] {id, owner, scores[] {index, score, column_key,
  task_id}, detailed_results[] {task, id}, created_when}, tasks[] {id, name, columns[]
  {key, index, precision, hidden}}}``: one row per ``<owner><parent or id>``, ``id`` its
  first submission (a task's, in a multi-task phase), ``owner`` the display name else the
  username; hidden columns left out; each score ``str(round(float(score), precision))``.
- ``GET /api/submissions/?phase=<pid>`` (``SubmissionSerializer``, not paginated):
  ``[{id, owner, parent, has_children, created_when, status, task {id}, scores[]}]``.

A payload that does not have this shape raises :class:`PayloadError` naming the request and
the field (``phases[1].tasks[0].id``), so a changed or wrong site is reported, not guessed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..readers.columns import Column
from ..submission_order import split_submission_key
from .client import PlatformError

__all__ = [
    "PayloadError",
    "LeaderboardInfo",
    "TaskInfo",
    "PhaseInfo",
    "CompetitionInfo",
    "ExportRow",
    "SubmissionInfo",
    "parse_competition",
    "parse_results",
    "parse_submissions",
    "parse_submission",
    "parse_dataset",
    "PublicRow",
    "PublicBoard",
    "parse_leaderboard",
]

FACT_SHEET = "fact_sheet_answers"
#: Submission statuses after which nothing changes any more.
TERMINAL_STATUSES = ("Finished", "Failed", "Cancelled")


class PayloadError(PlatformError):
    """An answer of the platform does not have the shape Codabench sends."""


@dataclass(frozen=True)
class LeaderboardInfo:
    id: int
    title: str
    columns: tuple[Column, ...]
    hidden: bool = False
    submission_rule: str | None = None


@dataclass(frozen=True)
class TaskInfo:
    id: int
    name: str


@dataclass(frozen=True)
class PhaseInfo:
    id: int
    index: int
    name: str
    tasks: tuple[TaskInfo, ...]
    start: str | None = None  # ISO 8601 as the site sends it; None: not given
    end: str | None = None  # None: the phase never ends
    status: str | None = None  # "Previous", "Current" or "Next"


@dataclass(frozen=True)
class CompetitionInfo:
    id: int
    title: str
    phases: tuple[PhaseInfo, ...]
    leaderboards: tuple[LeaderboardInfo, ...]
    queue: int | None = None
    #: The accounts that organize it: its creator and collaborators (usernames).
    organizers: frozenset[str] = frozenset()

    def phase(self, name: str) -> PhaseInfo | None:
        return next((p for p in self.phases if p.name == name), None)


@dataclass(frozen=True)
class ExportRow:
    """One row of a results export: a submission and its scores per (task id, column key)."""

    key: str
    owner: str
    submission_id: int
    scores: dict[tuple[int, str], float]


@dataclass(frozen=True)
class SubmissionInfo:
    id: int
    owner: str
    parent: int | None
    created_when: str | None
    status: str
    scores: tuple[tuple[str, float], ...] = ()
    status_details: str | None = None


@dataclass(frozen=True)
class PublicRow:
    """One row of a phase's public leaderboard: what anyone sees of a submission."""

    id: int  # its first submission (a task's child in a multi-task phase)
    owner: str  # the display name, else the username
    ids: tuple[int, ...]  # every submission of the row (one per task)
    created_when: str | None
    #: (task id, column key) -> the value shown, rounded to the column's precision
    scores: dict[tuple[int, str], float]


@dataclass(frozen=True)
class PublicBoard:
    """``get_leaderboard`` of a phase: its visible columns' precision and its rows."""

    title: str
    precision: dict[str, int]  # column key -> decimals shown
    rows: tuple[PublicRow, ...]


# ---------------------------------------------------------------------- field access
class _Fields:
    """Typed access to a JSON payload; errors name the request and the field path."""

    def __init__(self, what: str) -> None:
        self.what = what

    def error(self, path: str, text: str) -> PayloadError:
        return PayloadError(
            f"{self.what}: field {path!r} {text}; this is not what a Codabench site sends "
            "(is --site right, and the site up to date?)."
        )

    def get(self, obj: Any, path: str, key: str, kind: type | tuple[type, ...], *,
            optional: bool = False, default: Any = None) -> Any:
        where = f"{path}.{key}" if path else key
        if not isinstance(obj, dict):
            raise self.error(path or "(top level)", f"is {_show(obj)}, expected an object")
        if key not in obj or (optional and obj[key] is None):
            if optional:
                return default
            raise self.error(where, "is missing")
        value = obj[key]
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            raise self.error(where, f"is {_show(value)}, expected {_kind(kind)}")
        if not isinstance(value, kind):
            raise self.error(where, f"is {_show(value)}, expected {_kind(kind)}")
        return value

    def items(self, obj: Any, path: str, key: str) -> list[tuple[str, Any]]:
        values = self.get(obj, path, key, list)
        base = f"{path}.{key}" if path else key
        return [(f"{base}[{i}]", v) for i, v in enumerate(values)]


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {int: "an integer", str: "a string", list: "a list", dict: "an object",
             bool: "true or false", float: "a number"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


# ---------------------------------------------------------------------- payloads
def parse_competition(data: Any, what: str) -> CompetitionInfo:
    """``GET /api/competitions/<id>/``."""
    f = _Fields(what)
    phases = []
    for path, phase in f.items(data, "", "phases"):
        tasks = tuple(
            TaskInfo(f.get(t, tp, "id", int), f.get(t, tp, "name", str))
            for tp, t in f.items(phase, path, "tasks")
        )
        phases.append(PhaseInfo(
            f.get(phase, path, "id", int), f.get(phase, path, "index", int),
            f.get(phase, path, "name", str), tasks,
            *(f.get(phase, path, key, str, optional=True) for key in ("start", "end", "status"))))
    boards = []
    for path, board in f.items(data, "", "leaderboards"):
        columns = []
        for cp, col in f.items(board, path, "columns"):
            sorting = f.get(col, cp, "sorting", str)
            if sorting not in ("asc", "desc"):
                raise f.error(f"{cp}.sorting", f"is {sorting!r}, expected 'asc' or 'desc'")
            columns.append(Column(
                f.get(col, cp, "key", str), f.get(col, cp, "title", str), f.get(col, cp, "index", int),
                sorting, computation=f.get(col, cp, "computation", str, optional=True),
                hidden=f.get(col, cp, "hidden", bool, optional=True, default=False),
            ))
        boards.append(LeaderboardInfo(f.get(board, path, "id", int), f.get(board, path, "title", str),
                                      tuple(columns),
                                      f.get(board, path, "hidden", bool, optional=True, default=False),
                                      f.get(board, path, "submission_rule", str, optional=True)))
    queue = f.get(data, "", "queue", dict, optional=True)
    organizers = {f.get(data, "", "created_by", str, optional=True)}
    organizers |= {f.get(c, cp, "username", str) for cp, c in (
        f.items(data, "", "collaborators") if data.get("collaborators") is not None else ())}
    return CompetitionInfo(
        f.get(data, "", "id", int), f.get(data, "", "title", str), tuple(phases), tuple(boards),
        None if queue is None else f.get(queue, "queue", "id", int), frozenset(organizers - {None}),
    )


def parse_results(
    data: Any, what: str, phase: PhaseInfo, boards: tuple[LeaderboardInfo, ...]
) -> tuple[LeaderboardInfo, list[ExportRow]]:
    """``results.json?phase=<pid>``: the phase's leaderboard and its rows (file order).

    ``""`` is a missing score; every other cell is a decimal string (numbers are accepted
    too). A column that is not ``<task name>(<task id>)-<column title>`` of the phase's
    tasks and the leaderboard's columns is an error naming it.
    """
    f = _Fields(what)
    if not isinstance(data, dict):
        raise f.error("(top level)", f"is {_show(data)}, expected an object keyed by leaderboard title")
    suffix = f" - {phase.name}({phase.id})"
    if len(data) != 1 or not next(iter(data)).endswith(suffix):
        raise f.error("(top level)", f"has keys {list(data)[:3]}, expected one key "
                      f"'<leaderboard title>{suffix}'")
    title, rows = next(iter(data.items()))
    board = next((b for b in boards if b.title == title[: -len(suffix)]), None)
    if board is None:
        raise f.error(title, f"names leaderboard {title[: -len(suffix)]!r}, which the competition "
                      f"does not list (it lists {[b.title for b in boards]})")
    if not isinstance(rows, dict):
        raise f.error(title, f"is {_show(rows)}, expected an object of submissions")
    columns: dict[str, tuple[int, str] | None] = {}
    for task in phase.tasks:
        for col in board.columns:
            name = f"{task.name}({task.id})-{col.title}"
            columns[name] = None if name in columns else (task.id, col.key)  # None: ambiguous
    out = []
    for key, row in rows.items():
        where = f"{title}.{key}"
        parts = split_submission_key(key)
        if parts is None:
            raise f.error(where, "is not a '<owner>-<submission id>' row key")
        if not isinstance(row, dict):
            raise f.error(where, f"is {_show(row)}, expected an object of scores")
        scores: dict[tuple[int, str], float] = {}
        for name, cell in row.items():
            if name == FACT_SHEET:
                continue
            if name not in columns:
                raise f.error(f"{where}.{name}", f"is not a column of phase {phase.name!r} "
                              "(expected '<task name>(<task id>)-<column title>')")
            value = _score(f, f"{where}.{name}", cell)
            if value is None:
                continue
            target = columns[name]
            if target is None:
                raise f.error(f"{where}.{name}", "matches two leaderboard columns with the same "
                              "title; give the columns distinct titles")
            scores[target] = value
        out.append(ExportRow(key, parts[0], parts[1], scores))
    return board, out


def _score(f: _Fields, where: str, cell: Any) -> float | None:
    if cell == "" or cell is None:
        return None
    if isinstance(cell, bool) or not isinstance(cell, (str, int, float)):
        raise f.error(where, f"is {_show(cell)}, expected a decimal string or ''")
    try:
        value = float(cell)
    except ValueError:
        raise f.error(where, f"is {_show(cell)}, expected a decimal string or ''") from None
    if not math.isfinite(value):
        raise f.error(where, f"is {_show(cell)}, not a finite number")
    return value


def parse_leaderboard(data: Any, what: str) -> PublicBoard:
    """``GET /api/phases/<pid>/get_leaderboard/``: the columns anyone sees and the rows."""
    f = _Fields(what)
    precision: dict[str, int] = {}
    for tp, task in f.items(data, "", "tasks"):
        for cp, col in f.items(task, tp, "columns"):
            precision[f.get(col, cp, "key", str)] = f.get(col, cp, "precision", int)
    rows = []
    for sp, sub in f.items(data, "", "submissions"):
        scores = {}
        for kp, score in f.items(sub, sp, "scores"):
            value = _score(f, f"{kp}.score", f.get(score, kp, "score", (str, int, float)))
            if value is not None:
                scores[(f.get(score, kp, "task_id", int), f.get(score, kp, "column_key", str))] = value
        first = f.get(sub, sp, "id", int)
        ids = [f.get(d, dp, "id", int) for dp, d in (
            f.items(sub, sp, "detailed_results") if sub.get("detailed_results") is not None else ())]
        rows.append(PublicRow(first, f.get(sub, sp, "owner", str), tuple(dict.fromkeys([first, *ids])),
                              f.get(sub, sp, "created_when", str, optional=True), scores))
    return PublicBoard(f.get(data, "", "title", str), precision, tuple(rows))


def parse_submissions(data: Any, what: str) -> dict[int, SubmissionInfo]:
    """``GET /api/submissions/?phase=<pid>``: submissions by id (parents and children)."""
    f = _Fields(what)
    if not isinstance(data, list):
        raise f.error("(top level)", f"is {_show(data)}, expected a list of submissions")
    return {s.id: s for s in (_submission(f, f"[{i}]", item) for i, item in enumerate(data))}


def parse_submission(data: Any, what: str) -> SubmissionInfo:
    """``GET /api/submissions/<id>/`` or the answer to ``POST /api/submissions/``."""
    return _submission(_Fields(what), "", data)


def _submission(f: _Fields, path: str, item: Any) -> SubmissionInfo:
    scores = []
    listed = f.items(item, path, "scores") if isinstance(item, dict) and "scores" in item else []
    for sp, score in listed:
        scores.append((f.get(score, sp, "column_key", str),
                       _score(f, f"{sp}.score", f.get(score, sp, "score", (str, int, float)))))
    owner = f.get(item, path, "owner", str, optional=True, default="")
    return SubmissionInfo(
        f.get(item, path, "id", int), owner, f.get(item, path, "parent", int, optional=True),
        f.get(item, path, "created_when", str, optional=True),
        f.get(item, path, "status", str, optional=True, default=""),
        tuple((k, v) for k, v in scores if v is not None),
        f.get(item, path, "status_details", str, optional=True),
    )


def parse_dataset(data: Any, what: str) -> tuple[str, str]:
    """The answer to ``POST /api/datasets/``: ``(key, signed upload URL)``."""
    f = _Fields(what)
    return f.get(data, "", "key", str), f.get(data, "", "sassy_url", str)
