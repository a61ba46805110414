"""``codabench.json``: the competition's leaderboard columns next to a scoring-output tree.

Written by ``metascore codabench pull`` (with the pulled exports) and by the mock runner
(``metascore bundle run``, next to the outputs tree it feeds the meta phase), in one
format; only these keys are read here::

    {"phases": [{"name": "Development",
                 "tasks": [{"name": "wine", "folder": "wine"}, ...],
                 "leaderboard": {"title": "Results", "columns": [
                     {"key": "mae", "title": "MAE", "index": 0, "sorting": "asc",
                      "hidden": false, "computation": null}, ...]}}, ...]}

The mock runner also writes each leaderboard's ``submission_rule``, which the tree reader
quotes when the tree is empty. :func:`read_directions` turns the visible, non-computed
columns into directions keyed by
column key (and title, as Codabench's results export names columns by title): ``sorting:
desc`` is higher-is-better, ``asc`` lower-is-better. Codabench attaches one leaderboard
to every task of a phase, so a direction belongs to a column key, not to a task.
:func:`read_titles` gives the same columns' titles, which the report shows instead of the
keys.
:func:`read_hidden` gives the keys of the hidden columns (judges only when a configuration
lists them), whose values the ranking page's record leaves out (a participant never sees them).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from .rows import check_inside, load_json

__all__ = ["COLUMNS_FILE", "Column", "read_directions", "read_titles", "read_hidden"]

COLUMNS_FILE = "codabench.json"
_SORTINGS = {"desc": True, "asc": False}


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
    #: a CodaLab v1 ``computed:`` operation (``Avg``...) that Codabench's v1 import drops:
    #: the column stays on the leaderboard, empty, and is no judge
    dropped_computation: str | None = None

    @property
    def higher_is_better(self) -> bool:
        return self.sorting == "desc"


def read_directions(root: Path) -> dict[str, bool]:
    """``{column key or title: higher_is_better}`` from ``<root>/codabench.json`` ({} when
    absent). A name that sorts both ways in different phases is an error."""
    out: dict[str, bool] = {}
    seen: dict[str, str] = {}
    for path, at, col in _judge_columns(root):
        sorting = col.get("sorting", "desc")
        if sorting not in _SORTINGS:
            raise InputError(f"{path}: {at}.sorting is {sorting!r}; expected 'asc' or 'desc'.")
        for name in dict.fromkeys(n for n in (col["key"], col.get("title")) if isinstance(n, str) and n):
            higher = _SORTINGS[sorting]
            if name in out and out[name] != higher:
                raise InputError(
                    f"{path}: column {name!r} sorts {sorting!r} at {at} but "
                    f"{'desc' if out[name] else 'asc'} at {seen[name]}; a column keeps one "
                    "direction in every phase."
                )
            out[name], seen[name] = higher, at
    return out


def read_titles(root: Path) -> dict[str, str]:
    """``{column key: title}`` of the judge columns of ``<root>/codabench.json`` whose title
    differs from the key ({} when absent); the first phase naming a key wins."""
    out: dict[str, str] = {}
    for _, _, col in _judge_columns(root):
        title = col.get("title")
        if isinstance(title, str) and title.strip() and title.strip() != col["key"]:
            out.setdefault(col["key"], title.strip())
    return out


def read_hidden(root: Path) -> frozenset[str]:
    """The keys of the hidden columns of ``<root>/codabench.json`` (empty when absent)."""
    return frozenset(col["key"] for _, _, col in _columns(root) if col.get("hidden"))


def _judge_columns(root: Path) -> Iterator[tuple[Path, str, dict[str, Any]]]:
    """``(path, where, column)`` of every visible, non-computed leaderboard column of
    ``<root>/codabench.json`` (nothing when absent)."""
    for path, at, col in _columns(root):
        if not (col.get("hidden") or col.get("computation")):  # hidden, or an aggregate of the others
            yield path, at, col


def _columns(root: Path) -> Iterator[tuple[Path, str, dict[str, Any]]]:
    """``(path, where, column)`` of every leaderboard column of ``<root>/codabench.json``
    (nothing when absent); a column without a string key is an error."""
    path = root / COLUMNS_FILE
    if not (path.exists() or path.is_symlink()):
        return
    path = check_inside(root, path, shown=COLUMNS_FILE)
    data = load_json(path)
    for p, phase in enumerate(_list(data, "phases", path, "the top level")):
        board = phase.get("leaderboard") if isinstance(phase, dict) else None
        where = f"phases[{p}].leaderboard"
        if board is None:
            continue
        for c, col in enumerate(_list(board, "columns", path, where)):
            at = f"{where}.columns[{c}]"
            if not isinstance(col, dict) or not isinstance(col.get("key"), str):
                raise InputError(f"{path}: {at} must be an object with a string `key`.")
            yield path, at, col


def _list(data: Any, key: str, path: Path, where: str) -> list[Any]:
    value = data.get(key, []) if isinstance(data, dict) else None
    if not isinstance(value, list):
        raise InputError(f"{path}: `{key}` in {where} must be a list.")
    return value
