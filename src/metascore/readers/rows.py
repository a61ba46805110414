"""Shared pieces of the score readers: the canonical rows, cell parsers, file loading.

- :class:`Rows` collects canonical long-table rows (:data:`CANONICAL_COLUMNS`) with where
  each came from, and turns them into the checked :class:`~.score_table.ScoreTable` every
  reader returns.
- ``*_cell`` functions parse one cell (score, text, flag, submission time).
- :func:`read_text`, :func:`csv_rows`, :func:`load_json` load a file, turning decoding and
  syntax errors into :class:`~metascore.errors.InputError` naming file and line.
- :func:`check_inside` refuses a path that leaves its root.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError, did_you_mean, short_text
from .spreadsheet import unquoted_text
from ..cells import MISSING_TOKENS, parse_score
from . import table
from .score_table import Failure, Flag, ScoreTable, Unscored

CANONICAL_COLUMNS = [
    "phase",
    "candidate",
    "participant",
    "task",
    "metric",
    "value",
    "submitted_at",
    "is_baseline",
]
__all__ = [
    "CANONICAL_COLUMNS",
    "Rows",
    "score_cell",
    "score_cells",
    "text_cell",
    "optional_text_cell",
    "flag_cell",
    "cell_truth",
    "time_cell",
    "cell_at",
    "read_text",
    "csv_rows",
    "text_lines",
    "csv_table",
    "csv_header",
    "column_index",
    "require_columns",
    "load_json",
    "check_inside",
]

_TRUE = frozenset({"true", "1", "yes", "y", "t"})
_FALSE = frozenset({"false", "0", "no", "n", "f", ""}) | MISSING_TOKENS


# ================================================================ rows
class Rows:
    """Collects canonical rows plus where each came from (for error messages).

    Readers add rows one at a time (:meth:`add`) or as a block of columns (:meth:`add_block`:
    categoricals and arrays, one function giving each row's location); :meth:`score_table` makes
    the table (:mod:`metascore.readers.table` says how it is stored).
    """

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {c: [] for c in CANONICAL_COLUMNS}
        self.where: list[str] = []
        self._blocks: list[tuple[dict[str, Any], int, Callable[[int], str]]] = []
        self._order: list[Any] = []  # list rows (as "rows") and blocks, in the order added
        self.failed: list[Failure] = []
        #: runs that finished after their prediction step failed
        self.flagged: list[Flag] = []
        #: submissions with no score at all (every run failed), so they are still accounted for
        self.unscored: list[Unscored] = []
        self.notes: list[str] = []  # what a reader left out on purpose, said once
        self.directions: dict[str, bool] = {}  # the competition's column sortings, if known
        self.drop_empty_judges = False

    def add(
        self,
        where: str,
        phase: str,
        candidate: str,
        participant: str | None,
        task: str,
        metric: str,
        value: float,
        submitted_at: str | None = None,
        is_baseline: bool = False,
    ) -> None:
        if candidate == "":
            raise InputError(f"{where}: the candidate is empty.")
        for col, val in zip(
            CANONICAL_COLUMNS,
            (phase, candidate, participant, task, metric, value, submitted_at, is_baseline),
        ):
            self.columns[col].append(val)
        self.where.append(where)

    def extend(self, where: list[str], columns: dict[str, list[Any]]) -> None:
        """Add many checked rows at once (``columns`` keyed by :data:`CANONICAL_COLUMNS`)."""
        for col in CANONICAL_COLUMNS:
            self.columns[col].extend(columns[col])
        self.where.extend(where)

    def add_block(self, columns: dict[str, Any], n: int, where: Callable[[int], str]) -> None:
        """Add ``n`` checked rows as columns: text columns as categoricals, ``value`` a float
        array, ``is_baseline`` a bool array; ``where(i)`` locates row ``i`` of the block.

        A text column may be a function giving its categorical, called when the table is
        built: a reader of a parsed file (JSON) makes the texts it keeps after the parsed
        file is released, so that they do not pin the memory the file's objects held."""
        self._flush()
        self._blocks.append((columns, n, where))
        self._order.append(len(self._blocks) - 1)

    def _flush(self) -> None:
        """Turn the rows added one at a time so far into a block."""
        if not self.where:
            return
        columns = {c: table.categorical(self.columns[c]) for c in table.TEXT_COLUMNS}
        columns["value"] = np.asarray(self.columns["value"], dtype=float)
        columns["is_baseline"] = np.asarray(self.columns["is_baseline"], dtype=bool)
        texts = list(self.where)
        self._blocks.append((columns, len(texts), texts.__getitem__))
        self._order.append(len(self._blocks) - 1)
        self.columns = {c: [] for c in CANONICAL_COLUMNS}
        self.where = []

    def score_table(self, path: Path, fmt: str, phase: str | None) -> ScoreTable:
        """The canonical table and the reader's findings, after phase selection and
        consistency checks."""
        frame, where = self._frame(path)
        keep: np.ndarray | None = None  # rows kept, as positions into ``where``
        if self.drop_empty_judges and len(frame):
            keep = _scored_pairs(frame)
            if keep is not None:
                frame = frame.iloc[keep]
        findings = (self.failed, self.unscored, self.flagged)
        if phase is not None:
            frame, kept, findings = _select_phase(frame, phase, path, findings)
            if kept is not None:
                keep = kept if keep is None else keep[kept]
        if not frame["value"].notna().any():
            raise InputError(f"no scores found in {path}.")
        if keep is not None:
            frame = frame.reset_index(drop=True)
            for col in table.TEXT_COLUMNS:
                frame[col] = frame[col].cat.remove_unused_categories()
            where = _Kept(where, keep)
        table.check_unique(frame, where)
        table.check_metadata(frame, where)
        failed, unscored, flagged = findings
        return ScoreTable(frame, format=fmt, source=str(path), failed=tuple(failed),
                          unscored=tuple(unscored), flagged=tuple(flagged), notes=tuple(self.notes),
                          directions=dict(self.directions))

    def _frame(self, path: Path) -> tuple[pd.DataFrame, table.Where]:
        """Every row added, as the canonical frame (names escaped where they must be), and
        where each row comes from."""
        self._flush()
        blocks = [self._blocks[k] for k in self._order]
        for columns, _, _ in blocks:
            for col in table.TEXT_COLUMNS:
                if callable(columns[col]):
                    columns[col] = columns[col]()
        self._escape(blocks, path)
        where = table.Where()
        for _, n, locate in blocks:
            where.block(n, locate)
        if blocks:
            columns = table.concat_columns([b[0] for b in blocks], CANONICAL_COLUMNS)
        else:
            columns = {c: table.constant("", 0) for c in table.TEXT_COLUMNS}
            columns.update(value=np.empty(0), is_baseline=np.empty(0, dtype=bool))
        return pd.DataFrame(columns, columns=CANONICAL_COLUMNS, copy=False), where

    def _escape(self, blocks: list[tuple[dict[str, Any], int, Callable[[int], str]]], path: Path) -> None:
        """Names holding a lone surrogate, escaped in every block (with a note saying so)."""
        escaped: list[str] = []
        try:
            for columns, _, _ in blocks:
                for col in table.TEXT_COLUMNS:
                    columns[col], found = table.escape_surrogates(columns[col])
                    escaped += [name for name in found if name not in escaped]
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from None
        if escaped:
            shown = ", ".join(f"'{name}'" for name in escaped[:3]) + (", ..." if len(escaped) > 3 else "")
            self.notes.append(f"{path}: {len(escaped)} name(s) hold text that is not valid Unicode (a "
                              f"lone surrogate), written with a backslash escape instead: {shown}.")


def _scored_pairs(frame: pd.DataFrame) -> np.ndarray | None:
    """The positions of the rows whose (task, metric) pair has a score somewhere (None:
    every row): an export lists every (task, column) pair, and a pair nobody has a score in
    is a leaderboard column that task does not fill, not a judge."""
    task, tasks = table.codes_of(frame["task"])
    metric, metrics = table.codes_of(frame["metric"])
    pair = task.astype(np.int64) * (len(metrics) + 1) + metric
    pair, _ = pd.factorize(pair)
    scored = np.bincount(pair[frame["value"].notna().to_numpy()],
                         minlength=int(pair.max()) + 1) > 0
    mask = scored[pair]
    return None if mask.all() else np.flatnonzero(mask)


_Findings = tuple[Sequence[Any], Sequence[Any], Sequence[Any]]


def _select_phase(frame: pd.DataFrame, phase: str, path: Path, findings: _Findings,
                  ) -> tuple[pd.DataFrame, np.ndarray | None, _Findings]:
    """The rows of ``phase``, the positions kept (None: every row) and the reader's
    findings (failed, unscored, flagged) of that phase; a file naming no phase is all
    ``phase``, one naming others but not it an error."""
    present = sorted(set(frame["phase"].unique()) - {""})
    if not present:
        return table.with_phase(frame, str(phase)), None, findings
    if str(phase) not in present:
        raise InputError(
            f"phase {phase!r} is not in {path}{did_you_mean(phase, present)}; it holds "
            f"phase(s) {present}."
        )
    mask = (frame["phase"] == str(phase)).to_numpy()
    kept = None if mask.all() else np.flatnonzero(mask)
    failed, unscored, flagged = ([f for f in found if f.phase == str(phase)] for found in findings)
    return frame if kept is None else frame.iloc[kept], kept, (failed, unscored, flagged)


class _Kept:
    """The locations of the rows kept from a larger table."""

    def __init__(self, where: table.Where, keep: np.ndarray) -> None:
        self.where, self.keep = where, keep

    def __getitem__(self, i: int) -> str:
        return self.where[int(self.keep[int(i)])]


# ================================================================ cells
def score_cell(cell: Any, where: str | Callable[[], str]) -> float:
    """A score cell: missing tokens -> NaN; infinities and non-numbers are errors.

    ``where`` may be a function building the location, called only on error.
    """
    if isinstance(cell, (str, float, int)) and not isinstance(cell, bool):
        try:
            number = float(cell)
        except ValueError:
            pass
        except OverflowError:  # an integer beyond the range of a float
            raise InputError(f"{where() if callable(where) else where}: score "
                             f"{short_text(cell, 40)} is too large; a score must be a finite "
                             "number.") from None
        else:
            if not math.isinf(number):
                return number
    if callable(where):
        where = where()
    number = parse_score(cell, where=where, allow_inf=True)
    if math.isinf(number):
        raise InputError(
            f"{where}: score {cell!r} is infinite; a score must be a finite number (leave "
            "the cell empty when the score is missing)."
        )
    return number


def score_cells(cells: list[Any], where: Callable[[int], str]) -> np.ndarray:
    """:func:`score_cell` of every cell, as one float array; ``where(i)`` locates cell ``i``.

    Strings, numbers and empty strings (missing) are converted at once (numpy calls
    Python's ``float`` on each, as :func:`score_cell` does); cells of any other kind, and
    cells numpy refuses (a missing-value token, a non-number) or reads as infinite, send
    the whole list through :func:`score_cell` one cell at a time: the same numbers, and
    the error of the first bad cell.
    """
    if set(map(type, cells)) <= {str, float, int}:
        arr = np.array(cells, dtype=object)
        out = np.full(len(cells), np.nan)
        given = arr != ""
        try:
            out[given] = arr[given].astype(float)
        except (ValueError, TypeError, OverflowError):
            pass
        else:
            if not np.isinf(out).any():
                return out
    return np.array([score_cell(c, functools.partial(where, i)) for i, c in enumerate(cells)],
                    dtype=float)


def text_cell(cell: Any) -> str:
    """A text cell, stripped; ``None``/NaN -> ``""``; a formula a writer quoted for
    spreadsheets (``'=x``) is read without the quote (:func:`~metascore.readers.spreadsheet.unquoted_text`)."""
    if cell is None or (isinstance(cell, float) and math.isnan(cell)):
        return ""
    return unquoted_text(str(cell).strip()).strip()


def optional_text_cell(cell: Any) -> str | None:
    """A text cell, or ``None`` when it holds a missing-value token."""
    text = text_cell(cell)
    return None if text.lower() in MISSING_TOKENS else text


def cell_truth(cell: Any) -> bool | None:
    """What a true/false cell says (empty -> ``False``; ``true, 1, yes, y, t`` and ``false,
    0, no, n, f`` in any case), or None when it is not a true/false value."""
    if isinstance(cell, (bool, np.bool_)):
        return bool(cell)
    if cell is None:
        return False
    if isinstance(cell, (int, float)) and not isinstance(cell, bool) and cell in (0, 1):
        return bool(cell)
    text = text_cell(cell).lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return None


def flag_cell(cell: Any, where: str | Callable[[], str]) -> bool:
    """A true/false cell (:func:`cell_truth`); anything else is an error at ``where``."""
    said = cell_truth(cell)
    if said is not None:
        return said
    raise InputError(
        f"{where() if callable(where) else where}: {cell!r} is not a true/false value (use "
        "true or false)."
    )


def time_cell(cell: Any, where: str | Callable[[], str]) -> str | None:
    """A submission-time cell as ISO 8601, or ``None`` when empty."""
    text = optional_text_cell(cell)
    if text is None:
        return None
    iso = _iso_time(text)
    if iso is None:
        raise InputError(
            f"{where() if callable(where) else where}: submission time {text!r} is not a "
            "date/time (use ISO 8601, e.g. 2024-03-01T10:00:00Z)."
        )
    return iso


@functools.lru_cache(maxsize=4096)
def _iso_time(text: str) -> str | None:
    try:
        stamp = pd.Timestamp(text)
    except (TypeError, ValueError):
        return None
    return None if stamp is pd.NaT else stamp.isoformat()


# ================================================================ files
def read_text(path: Path) -> str:
    """The file's text (UTF-8, a BOM dropped); undecodable bytes are an error."""
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a file.") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: byte {exc.start} is not valid UTF-8; save the file as UTF-8."
        ) from None


def text_lines(text: str) -> Iterator[str]:
    """The lines of ``text``, each with its ``\n``, one at a time (``io.StringIO`` would
    first copy the whole text at 4 bytes per character); a carriage return only ends a
    line before ``\n``."""
    start, size = 0, len(text)
    while start < size:
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end + 1]
        start = end + 1


def csv_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """``(line number, cells)`` for every non-blank CSV row."""
    reader = csv.reader(io.StringIO(read_text(path), newline=""))
    start = 1
    try:
        for row in reader:
            if any(cell.strip() for cell in row):
                yield start, row
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(f"{path}, line {reader.line_num}: malformed CSV ({exc}).") from None


def csv_table(path: Path) -> tuple[list[str], pd.DataFrame, np.ndarray] | None:
    """``(header, cells, line numbers)`` of a CSV file by pandas' C parser, or None.

    Cells are the raw strings (short rows padded with ""); blank rows are dropped as
    :func:`csv_rows` does. None when the file is empty, ragged beyond its header or holds
    a quoted line break (rows would not map to lines): :func:`csv_rows` reads it then,
    with exact line numbers in its errors.
    """
    text = read_text(path)
    if not text.strip() or "\r" in text.replace("\r\n", ""):
        return None
    try:
        cells = pd.read_csv(io.StringIO(text), header=None, dtype=str, na_filter=False,
                            skip_blank_lines=False, engine="c")
    except (ValueError, pd.errors.ParserError):
        return None
    n_lines = text.count("\n") + (not text.endswith("\n"))
    if len(cells) != n_lines:
        return None  # a quoted line break: rows and lines differ
    cells = cells.fillna("")
    lines = np.arange(1, len(cells) + 1)
    blank = np.array([not line.strip(" \t\r,") for line in text.split("\n")[:len(cells)]])
    cells, lines = cells[~blank].reset_index(drop=True), lines[~blank]
    header = [str(h).strip() for h in cells.iloc[0]]
    return header, cells.iloc[1:].reset_index(drop=True), lines[1:]


def csv_header(path: Path, rows: Iterator[tuple[int, list[str]]]) -> tuple[int, list[str]]:
    """The first row of ``rows`` (line number, stripped names); an empty file is an error."""
    try:
        n, header = next(rows)
    except StopIteration:
        raise InputError(f"no scores found in {path} (the file is empty).") from None
    return n, [h.strip() for h in header]


def column_index(header: list[str], names: Iterable[str]) -> dict[str, int]:
    """Positions of the wanted columns (case-insensitive); repeated names are an error."""
    wanted = set(names)
    found: dict[str, int] = {}
    for i, h in enumerate(header):
        key = h.lower()
        if key in wanted:
            if key in found:
                raise InputError(f"column {h!r} appears twice in the header.")
            found[key] = i
    return found


def cell_at(row: list[str], i: int | None) -> str:
    """Cell ``i`` of a CSV row; ``""`` when the column is absent or the row short."""
    return row[i] if i is not None and i < len(row) else ""


def require_columns(
    present: Iterable[str], names: Iterable[str], path: Path, header: list[str], where: str | None = None
) -> None:
    """Refuse a table lacking one of ``names`` (naming the closest column)."""
    have = set(present)
    for name in names:
        if name not in have:
            raise InputError(
                f"{where or path} has no {name!r} column{did_you_mean(name, header)}; "
                f"columns are {header}."
            )


def load_json(path: Path, **kwargs: Any) -> Any:
    """Parse a JSON file (``kwargs`` go to :func:`json.loads`). Syntax errors name line and
    column; a key given twice in one object (which ``json`` resolves silently to the last
    value), nesting too deep to read and an integer too long to read are errors naming
    the file, with a short quote at most."""
    text = read_text(path)
    if not text.strip():
        raise InputError(f"no scores found in {path} (the file is empty).")
    kwargs.setdefault("object_pairs_hook", functools.partial(_unique_keys, path))
    try:
        return json.loads(text, **kwargs)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})."
        ) from None
    except InputError:
        raise
    except RecursionError:  # the decoder's own guard: nothing is left half-read
        raise InputError(f"{path}: nested too deep to read (arrays or objects inside each other "
                         f"beyond about {sys.getrecursionlimit():,} levels).") from None
    except ValueError:  # int() refuses a number of more than 4,300 digits
        raise InputError(f"{path}: holds an integer too long to read (more than "
                         f"{sys.get_int_max_str_digits():,} digits).") from None


def _unique_keys(path: Path, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """One JSON object, refused when a key appears twice in it."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise InputError(f"{path}: key {short_text(key)} appears twice in one object; give each "
                         "key once (JSON readers keep only the last value).")
    return out


# ================================================================ paths
def check_inside(root: Path, path: Path, shown: str) -> Path:
    """``path`` resolved, refused when it leaves ``root`` (``shown`` names it in the error)."""
    base = root.resolve()
    target = path.resolve()
    if target != base and not target.is_relative_to(base):
        raise InputError(
            f"path {shown!r} leads outside {str(root)!r} (to {str(target)!r}); paths must stay "
            "inside it (no '..', absolute paths or symbolic links pointing out)."
        )
    return target
