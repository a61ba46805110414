"""Formats ``codabench_json`` and ``codabench_csv``: Codabench leaderboard result exports.

``results.json?phase=<id>`` maps ``"<leaderboard> - <phase>(<phase id>)"`` to
``{"<owner>-<submission id>": {"<task>(<task id>)-<column>": score, ...}}``;
``results.csv?phase=<id>`` (saved as ``<leaderboard> - <phase>(<id>).csv``) has a
``Username`` column holding ``<owner>-<submission id>`` and one column per
``<task>(<task id>)-<column>``. The candidate is the submission, its participant the
owner; ``fact_sheet_answers`` is not a score. The judge is (task name, column title): the
task id is kept only when two tasks of one phase share a name, so the task of the
development phase and the task of the final phase with the same name are the same judge
(an export of every phase holds both ids). A (task, column) pair nobody has a score in
is dropped (a leaderboard column that task does not fill).

An export holds no submission time: "the earlier submission" of the tie-break is read from
the submission ids (:mod:`metascore.submission_order`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError, short_text
from ..submission_order import split_submission_key
from . import table
from .input_format import InputFormat, Sniff, Verdict
from .rows import Rows, cell_at, csv_header, csv_rows, load_json, score_cell, score_cells

__all__ = ["CODABENCH_CSV_FORMAT", "CODABENCH_JSON_FORMAT", "is_leaderboard_title",
           "is_submission_key", "read_codabench_csv", "read_codabench_json"]

# "<leaderboard title> - <phase name>(<phase id>)"; the title part is optional here.
_CODABENCH_TITLE = re.compile(r"(?:(?P<board>.*?) - )?(?P<phase>.*?)(?:\((?P<id>\d+)\))?")
# "<task name>(<task id>)-<column title>"
_CODABENCH_COLUMN = re.compile(r"(?P<task>.*?)\((?P<tid>\d+)\)-(?P<metric>.*)")
_FACT_SHEET = "fact_sheet_answers"


def is_leaderboard_title(key: str) -> bool:
    """Whether ``key`` reads ``<leaderboard> - <phase>(<phase id>)`` (a results.json key)."""
    match = _CODABENCH_TITLE.fullmatch(key)
    return bool(match and match.group("board") is not None and match.group("id"))


def is_submission_key(key: str) -> bool:
    """Whether ``key`` reads ``<owner>-<submission id>`` (a results.json row key)."""
    return split_submission_key(key) is not None


def _codabench_phase(title: str) -> str:
    match = _CODABENCH_TITLE.fullmatch(title.strip())
    return (match.group("phase") if match else title).strip()


def _codabench_owner(key: str) -> str:
    """The owner of ``<owner>-<id>`` (everything before the last ``-<digits>``), else the key."""
    parts = split_submission_key(key)
    return parts[0] if parts else key


def _codabench_judges(columns: Iterable[str]) -> dict[str, tuple[str, str]]:
    """``column -> (task, metric)``; a task name used by two task ids keeps its id."""
    parsed: dict[str, tuple[str, str, str]] = {}
    for col in columns:
        if col == _FACT_SHEET or col in parsed:
            continue
        match = _CODABENCH_COLUMN.fullmatch(col)
        if match:
            parsed[col] = (match.group("task").strip(), match.group("tid"), match.group("metric").strip())
        else:
            parsed[col] = ("", "", col.strip())
    ids: dict[str, set[str]] = {}
    for task, tid, _ in parsed.values():
        ids.setdefault(task, set()).add(tid)
    return {
        col: (f"{task}({tid})" if len(ids[task]) > 1 else task, metric)
        for col, (task, tid, metric) in parsed.items()
    }


def read_codabench_json(path: Path, rows: Rows, data: Any = None) -> None:
    """Add the rows of a Codabench ``results.json`` export (every phase in it) to ``rows``
    (``data``: the file already parsed, else it is read here).

    Each phase's scores go in as one block (:meth:`~metascore.readers.rows.Rows.add_block`):
    the largest competitions export hundreds of thousands of submissions.
    """
    data = load_json(path) if data is None else data
    if not isinstance(data, dict):
        raise InputError(
            f"{path}: a Codabench results export is an object keyed by leaderboard title; got "
            f"{type(data).__name__}."
        )
    rows.drop_empty_judges = True
    for title, board in data.items():
        if not isinstance(board, dict):
            raise InputError(f"{path}, key {title!r}: expected an object of submissions, got "
                             f"{short_text(board)}.")
        _add_board(path, title, board, rows)


def _add_board(path: Path, title: str, board: dict[str, Any], rows: Rows) -> None:
    """One leaderboard's rows, in file order: a row per (submission, column) cell. The row
    keys (candidates) and their owners become texts when the table is built: made now,
    among the parsed export's own small objects, they would keep its memory taken."""
    keys = list(board)
    for key in keys:
        if not isinstance(board[key], dict):
            raise InputError(f"{path}, key {title!r} > {key!r}: expected an object, got "
                             f"{short_text(board[key])}.")
    # per phase: the same task name in two phases (two task ids) is the same judge
    judges = _codabench_judges(c for row in board.values() for c in row)
    columns = list(judges)
    index = {c: k for k, c in enumerate(columns)}
    col_of: list[int] = []
    cells: list[Any] = []
    counts = np.zeros(len(keys), dtype=np.intp)
    for i, row in enumerate(board.values()):
        names = [c for c in row if c != _FACT_SHEET] if _FACT_SHEET in row else list(row)
        col_of.extend(map(index.__getitem__, names))
        cells.extend(map(row.__getitem__, names))
        counts[i] = len(names)
    if not cells:
        return
    at_row = np.repeat(np.arange(len(keys), dtype=np.intp), counts)
    at_col = np.asarray(col_of, dtype=np.intp)
    # the keys as one text and their ends (one object, not one per key)
    text, ends = "".join(keys), np.cumsum([len(k) for k in keys])
    starts = ends - np.array([len(k) for k in keys])
    n_keys = len(keys)
    del keys

    def key(i: int) -> str:
        return text[starts[i]:ends[i]]

    def where(i: int) -> str:
        return f"{path}, key {title!r} > {key(at_row[i])!r} > {columns[at_col[i]]!r}"

    def candidates() -> pd.Categorical:
        return table.from_codes(at_row, [key(i) for i in range(n_keys)])

    def participants() -> pd.Categorical:
        owners, owner_names = pd.factorize(
            np.array([_codabench_owner(key(i)) for i in range(n_keys)], dtype=object))
        return table.from_codes(owners[at_row], list(owner_names))

    if "" in board and counts[list(board).index("")]:
        raise InputError(f"{where(int(np.argmax(at_row == list(board).index(''))))}: the candidate is empty.")
    tasks, task_names = pd.factorize(np.array([judges[c][0] for c in columns], dtype=object))
    metrics, metric_names = pd.factorize(np.array([judges[c][1] for c in columns], dtype=object))
    n = len(cells)
    rows.add_block({
        "phase": table.constant(_codabench_phase(title), n),
        "candidate": candidates,
        "participant": participants,
        "task": table.from_codes(tasks[at_col], list(task_names)),
        "metric": table.from_codes(metrics[at_col], list(metric_names)),
        "value": score_cells(cells, where),
        "submitted_at": table.constant(None, n),
        "is_baseline": np.zeros(n, dtype=bool),
    }, n, where)


def read_codabench_csv(path: Path, rows: Rows) -> None:
    """Add the rows of a Codabench ``results.csv`` export (one phase, named by the file) to ``rows``."""
    match = re.fullmatch(r"(?P<title>.+ - .*\(\d+\))\.csv", path.name, re.I)
    phase = _codabench_phase(match.group("title")) if match else ""
    lines = csv_rows(path)
    _, header = csv_header(path, lines)
    if not header or header[0] != "Username":
        raise InputError(
            f"{path}: a Codabench results CSV starts with a 'Username' column; the header is {header}."
        )
    rows.drop_empty_judges = True
    judges = _codabench_judges(header[1:])
    used = [(i, h) for i, h in enumerate(header) if i > 0 and h != _FACT_SHEET]
    seen: set[str] = set()
    for _, h in used:
        if h in seen:
            raise InputError(f"{path}: column {h!r} appears twice in the header.")
        seen.add(h)
    for n, row in lines:
        key = row[0].strip()
        owner = _codabench_owner(key)
        for i, col in used:
            at = f"{path}, line {n}, column {col!r}"
            task, metric = judges[col]
            rows.add(f"{path}, line {n}", phase, key, owner, task, metric, score_cell(cell_at(row, i), at))


def _looks_exported_json(s: Sniff) -> Verdict | None:
    """A JSON object mapping leaderboard titles (or boards of ``<owner>-<id>`` rows) to
    objects."""
    data = s.data
    if not (s.is_json and isinstance(data, dict) and data
            and all(isinstance(v, dict) for v in data.values())):
        return None
    return Verdict.MATCH if _submission_rows(data) or all(map(is_leaderboard_title, data)) else None


def _submission_rows(data: dict[str, Any]) -> bool:
    """Whether every board of ``data`` maps ``<owner>-<id>`` keys to objects (and some do)."""
    keys = [k for board in data.values() for k in board]
    return bool(keys) and all(
        is_submission_key(k) and isinstance(board[k], dict)
        for board in data.values()
        for k in board
    )


#: The record of format ``codabench_json`` (:mod:`.input_format`).
CODABENCH_JSON_FORMAT = InputFormat(
    "codabench_json", lambda s, rows: read_codabench_json(s.path, rows, s.data),
    by_content=_looks_exported_json, site_export=True)
#: The record of format ``codabench_csv``: a CSV whose header starts with ``Username``.
CODABENCH_CSV_FORMAT = InputFormat(
    "codabench_csv", lambda s, rows: read_codabench_csv(s.path, rows),
    by_content=lambda s: Verdict.MATCH if not s.is_json and s.header[0] == "Username" else None,
    site_export=True)
