"""Format ``long``: the canonical long table as CSV or JSON, one row per score.

Columns (case-insensitive) ``phase, candidate, participant, task, metric, value``
(+ ``submitted_at``, ``is_baseline``); only ``candidate`` and ``value`` are required. JSON
is a list of records or ``{"rows": [...]}``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from .rows import CANONICAL_COLUMNS, Rows, cell_at, column_index, csv_header, csv_rows, csv_table
from .rows import flag_cell
from .rows import load_json, optional_text_cell, require_columns, score_cell, text_cell, time_cell

__all__ = ["read_long", "read_long_csv", "read_long_json"]


def read_long(path: Path, rows: Rows) -> None:
    """Add the rows of a long table to ``rows`` (``.json`` is JSON, anything else CSV)."""
    if path.suffix.lower() == ".json":
        read_long_json(path, rows)
    else:
        read_long_csv(path, rows)


def read_long_csv(path: Path, rows: Rows) -> None:
    """A long CSV: pandas' C parser and column-wise checks when rows map to lines (see
    :func:`~metascore.io.rows.csv_table`), else the csv module row by row. Both give the
    same table and the same errors (file, line, column and value)."""
    table = csv_table(path)
    if table is not None:
        _read_long_table(path, rows, *table)
        return
    lines = csv_rows(path)
    _, header = csv_header(path, lines)
    try:
        cols = column_index(header, CANONICAL_COLUMNS)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    require_columns(cols, ("candidate", "value"), path, header)
    for n, row in lines:
        record = {name: cell_at(row, i) for name, i in cols.items()}
        _add_long(rows, record, lambda col: f"{path}, line {n}, column {col!r}", f"{path}, line {n}")


def _read_long_table(path: Path, rows: Rows, header: list[str], cells: pd.DataFrame,
                     lines: np.ndarray) -> None:
    try:
        cols = column_index(header, CANONICAL_COLUMNS)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    require_columns(cols, ("candidate", "value"), path, header)
    empty = pd.Series("", index=cells.index, dtype=object)

    def raw(name: str) -> pd.Series:
        return cells.iloc[:, cols[name]] if name in cols else empty

    def at(i: int, col: str | None = None) -> str:
        return f"{path}, line {lines[i]}" + (f", column {col!r}" if col else "")

    text = {name: _by_value(raw(name), lambda v, _: text_cell(v), at, name)
            for name in ("phase", "candidate", "task", "metric")}
    if "" in text["candidate"]:
        raise InputError(f"{at(text['candidate'].index(''))}: the candidate is empty.")
    value = pd.to_numeric(raw("value"), errors="coerce").to_numpy(dtype=float, copy=True)
    maybe = np.flatnonzero(np.isnan(value) | np.isinf(value))
    for i in maybe:  # missing, or not a plain number: the cell parser says which
        value[i] = score_cell(raw("value").iloc[i], lambda i=i: at(i, "value"))
    columns = {
        **text, "value": value.tolist(),
        "participant": _by_value(raw("participant"), lambda v, _: optional_text_cell(v), at,
                                 "participant"),
        "submitted_at": _by_value(raw("submitted_at"), time_cell, at, "submitted_at"),
        "is_baseline": _by_value(raw("is_baseline"), flag_cell, at, "is_baseline"),
    }
    rows.extend([f"{path}, line {n}" for n in lines.tolist()], columns)


def _by_value(column: pd.Series, parse: Callable[..., Any], at: Callable[..., str],
              name: str) -> list[Any]:
    """``parse(cell, where)`` once per distinct cell (a column holds few: phases, tasks,
    flags); an error names the first row holding the cell."""
    codes, distinct = pd.factorize(column)
    parsed = np.empty(len(distinct), dtype=object)
    for k, v in enumerate(distinct):
        parsed[k] = parse(v, lambda k=k: at(int(np.argmax(codes == k)), name))
    return parsed[codes].tolist()


def read_long_json(path: Path, rows: Rows) -> None:
    data = load_json(path)
    records = data.get("rows") if isinstance(data, dict) else data
    if not isinstance(records, list):
        raise InputError(
            f"{path}: a long JSON table is a list of records or {{\"rows\": [...]}}; got "
            f"{type(data).__name__}."
        )
    for k, record in enumerate(records):
        if not isinstance(record, dict):
            raise InputError(f"{path}, record {k}: expected an object, got {record!r}.")
        record = {str(key).strip().lower(): val for key, val in record.items()}
        require_columns(record, ("candidate", "value"), path, list(record), where=f"{path}, record {k}")
        _add_long(rows, record, lambda col: f"{path}, record {k}, key {col!r}", f"{path}, record {k}")


def _add_long(rows: Rows, record: dict[str, Any], at: Callable[[str], str], where: str) -> None:
    for key in ("candidate", "phase", "task", "metric", "participant"):
        if isinstance(record.get(key), (dict, list)):
            raise InputError(f"{at(key)}: {record[key]!r} is not a plain value.")
    rows.add(
        where,
        phase=text_cell(record.get("phase")),
        candidate=text_cell(record.get("candidate")),
        participant=optional_text_cell(record.get("participant")),
        task=text_cell(record.get("task")),
        metric=text_cell(record.get("metric")),
        value=score_cell(record.get("value"), lambda: at("value")),
        submitted_at=time_cell(record.get("submitted_at"), lambda: at("submitted_at")),
        is_baseline=flag_cell(record.get("is_baseline"), lambda: at("is_baseline")),
    )
