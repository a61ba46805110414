"""Format ``long``: the canonical long table as CSV or JSON, one row per score.

Columns (case-insensitive) ``phase, candidate, participant, task, metric, value``
(+ ``submitted_at``, ``is_baseline``); only ``candidate`` and ``value`` are required. JSON
is a list of records or ``{"rows": [...]}``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..cells import MISSING_TOKENS
from . import table
from .input_format import InputFormat, Sniff, Verdict
from .rows import CANONICAL_COLUMNS, Rows, cell_at, column_index, csv_header, csv_rows, csv_table
from .rows import flag_cell
from .rows import load_json, optional_text_cell, read_text, require_columns, score_cell, text_cell
from .rows import time_cell

__all__ = ["LONG_FORMAT", "read_long", "read_long_csv", "read_long_json"]


def read_long(path: Path, rows: Rows, data: Any = None) -> None:
    """Add the rows of a long table to ``rows`` (``.json`` is JSON, anything else CSV;
    ``data``: the JSON already parsed)."""
    if path.suffix.lower() == ".json":
        read_long_json(path, rows, data)
    else:
        read_long_csv(path, rows)


def read_long_csv(path: Path, rows: Rows) -> None:
    """A long CSV: column by column when the file is plain (:func:`_read_long_columns`),
    else pandas' C parser on its cells and column-wise checks when rows map to lines (see
    :func:`~metascore.readers.rows.csv_table`), else the csv module row by row. All give the
    same table and the same errors (file, line, column and value)."""
    if _read_long_columns(path, rows):
        return
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


#: The missing-value tokens as pandas compares them (exact strings): each case of each.
_MISSING_CELLS = sorted({"".join(chars) for token in MISSING_TOKENS
                         for chars in itertools.product(*({c.lower(), c.upper()} for c in token))})
#: How each text column of a long table is read (``None`` for an absent column).
_TEXT_CELLS: dict[str, Callable[[Any, Callable[[], str]], Any]] = {
    "phase": lambda v, _: text_cell(v), "candidate": lambda v, _: text_cell(v),
    "task": lambda v, _: text_cell(v), "metric": lambda v, _: text_cell(v),
    "participant": lambda v, _: optional_text_cell(v), "submitted_at": time_cell,
}


class _Irregular(Exception):
    """The file needs the row-by-row reader (it raises the right error or reads what the
    column reader does not)."""


def _read_long_columns(path: Path, rows: Rows) -> bool:
    """A long CSV read column by column: pandas' C parser reads the cells (the text columns
    coded, each distinct text parsed once) and parses the scores; the rows go into the
    table as one block. Only a plain file qualifies (no quotes, NUL bytes or lone carriage
    returns, UTF-8, every row within the header's width, every cell valid); anything else
    returns False and is read by :func:`_read_long_table` or row by row, which give the
    same table, or the error naming the line. The bytes are checked, not decoded: pandas
    decodes them while it parses."""
    data = path.read_bytes()
    if not data.strip() or b'"' in data or b"\0" in data or (
            b"\r" in data and b"\r" in data.replace(b"\r\n", b"")):
        return False
    found = _header(data)
    del data  # pandas reads the file itself
    if found is None:
        return False
    header_line, header = found
    try:
        cols = column_index(header, CANONICAL_COLUMNS)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    require_columns(cols, ("candidate", "value"), path, header)
    # object, not "category": pandas would infer the categories' type ("001" -> 1)
    text_cols = {cols[name]: object for name in (*_TEXT_CELLS, "is_baseline") if name in cols}
    try:
        cells = pd.read_csv(  # the file itself: a StringIO would hold 4 bytes per character
            path, encoding="utf-8-sig", header=None, skiprows=header_line, names=list(range(len(header))),
            usecols=sorted([*text_cols, cols["value"]]), dtype=text_cols, keep_default_na=False,
            na_values={cols["value"]: _MISSING_CELLS}, skip_blank_lines=True, engine="c",
        )
        columns = _long_columns(cells, cols)
    except (ValueError, pd.errors.ParserError, _Irregular, InputError):  # UnicodeDecodeError too
        return False
    lines: list[int] = []

    def where(i: int) -> str:
        if not lines:  # lines end at "\n" here (no lone carriage return)
            lines.extend(n for n, line in enumerate(read_text(path).split("\n"), start=1)
                         if n > header_line and line.strip(" \t\r,"))
        return f"{path}, line {lines[i]}"

    rows.add_block(columns, len(cells), where)
    return True


def _header(data: bytes) -> tuple[int, list[str]] | None:
    """The line number and stripped names of the first non-blank line (the header), or
    None when it is not UTF-8 text with something in it."""
    start, n = 0, 1
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        line = data[start:end]
        if line.strip(b" \t\r,"):
            try:
                text = line.decode("utf-8-sig" if start == 0 else "utf-8")
            except UnicodeDecodeError:
                return None
            if not text.strip():
                return None
            return n, [h.strip() for h in text.rstrip("\r").split(",")]
        start, n = end + 1, n + 1
    return None


def _long_columns(cells: pd.DataFrame, cols: dict[str, int]) -> dict[str, Any]:
    """The canonical columns of a long table read by pandas (see :func:`_read_long_columns`);
    :class:`_Irregular` when a cell needs the row-by-row reader."""
    n = len(cells)
    value = cells[cols["value"]]
    if value.dtype.kind not in "fiu":
        raise _Irregular()  # a cell that is neither a number nor a missing-value token
    values = value.to_numpy(dtype=float)
    if np.isinf(values).any():
        raise _Irregular()
    out: dict[str, Any] = {"value": values}

    def where() -> str:
        raise _Irregular()  # a cell the parsers refuse: the row-by-row reader names its line

    for name, parse in _TEXT_CELLS.items():
        if name not in cols:
            out[name] = table.constant(None if name in ("participant", "submitted_at") else "", n)
            continue
        codes, raw = table.codes_of(cells[cols[name]])
        out[name] = table.recode(codes, raw, lambda _, v, parse=parse: parse("" if v is None else v, where))
    if "" in out["candidate"].categories:
        raise _Irregular()  # an empty candidate, or a line the row-by-row reader skips
    if "is_baseline" in cols:
        codes, raw = table.codes_of(cells[cols["is_baseline"]])
        flags = np.array([flag_cell(v, where) for v in raw] + [False], dtype=bool)
        out["is_baseline"] = flags[codes]
    else:
        out["is_baseline"] = np.zeros(n, dtype=bool)
    return out


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


def read_long_json(path: Path, rows: Rows, data: Any = None) -> None:
    data = load_json(path) if data is None else data
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


def _looks_long(s: Sniff) -> Verdict | None:
    """JSON: a list of records or ``{"rows": [...]}``; CSV: ``candidate`` and ``value``
    columns (case-insensitive)."""
    if s.is_json:
        data = s.data
        rows = isinstance(data, dict) and isinstance(data.get("rows"), list)
        return Verdict.MATCH if isinstance(data, list) or rows else None
    if s.suffix == ".csv" and {"candidate", "value"} <= {h.lower() for h in s.header}:
        return Verdict.MATCH
    return None


#: The record of format ``long`` (:mod:`.input_format`).
LONG_FORMAT = InputFormat("long", lambda s, rows: read_long(s.path, rows, s.data),
                          by_content=_looks_long)
