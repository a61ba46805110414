"""Format ``wide``: a CSV with one row per candidate and one column per judge.

The candidate is the ``candidate`` column, else the first one; ``participant``,
``submitted_at`` and ``is_baseline`` columns are metadata; every other column is a judge
(``task`` = its name, ``metric`` = ``""``).

A file without commas whose first line holds several whitespace-separated cells is a
**whitespace-separated matrix** (a plain ``numpy.savetxt`` file, with or without a header
line). A first line whose cells after the first are all numbers is data, not a header:
judges are then named ``j1``,
``j2``, ... (columns, left to right). When every row starts with a cell that is not a
number, that cell is the candidate; otherwise candidates are named ``c1``, ``c2``, ...
(rows, top to bottom).

A row's scores are converted at once (numpy parses each cell as Python's ``float``
does); only a row holding a missing cell, a non-number or an infinity is read cell by
cell, with the same result and errors. The rows go into the canonical table as one block
(:meth:`~metascore.readers.rows.Rows.add_block`): per-sample judges make files of hundreds of
thousands of columns.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from ..cells import MISSING_TOKENS
from . import table
from .input_format import InputFormat, Sniff, Verdict
from .rows import Rows, cell_at, column_index, csv_header, csv_rows, flag_cell, optional_text_cell
from .rows import read_text, score_cell, text_cell, text_lines, time_cell

__all__ = ["WIDE_FORMAT", "read_wide"]


def read_wide(path: Path, rows: Rows) -> None:
    """Add the rows of a wide CSV to ``rows``: one row per candidate, one column per judge."""
    text = read_text(path)
    if "," not in text and len(_first_line(text).split()) > 1:
        _read_matrix(path, text, rows)
        return
    lines = _csv_lines(path, text)
    _, header = csv_header(path, lines)
    try:
        meta = column_index(header, ("candidate", "participant", "submitted_at", "is_baseline"))
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    cand = meta.get("candidate", 0)
    judges = [(i, h) for i, h in enumerate(header) if i != cand and i not in meta.values()]
    if not judges:
        raise InputError(f"no scores found in {path} (no judge columns besides the candidate).")
    seen: set[str] = set()
    for i, h in judges:
        if not h:
            raise InputError(f"{path}: column {i + 1} of the header has no name.")
        if h in seen:
            raise InputError(f"{path}: column {h!r} appears twice in the header.")
        seen.add(h)
    positions = [i for i, _ in judges]
    names = [h for _, h in judges]
    first, m = positions[0], len(positions)
    contiguous = positions == list(range(first, first + m))
    block = _Block(path, names, text.count("\n") + 1)
    width = len(header)
    for n, row in lines:
        at = f"{path}, line {n}"
        if len(row) > width and any(c.strip() for c in row[width:]):
            raise InputError(f"{at}: the row has {len(row)} cells but the header has {width}.")
        participant = optional_text_cell(cell_at(row, meta.get("participant")))
        submitted = time_cell(cell_at(row, meta.get("submitted_at")), f"{at}, column 'submitted_at'")
        baseline = flag_cell(cell_at(row, meta.get("is_baseline")), f"{at}, column 'is_baseline'")
        candidate = text_cell(cell_at(row, cand))
        if len(row) < width:
            row = row + [""] * (width - len(row))
        cells = row[first:first + m] if contiguous else [row[i] for i in positions]
        block.add(n, candidate, participant, submitted, baseline, _scores(cells, names, at, candidate))
    del lines, text  # the text is read: free it before the table is built
    block.close(rows)


class _Block:
    """The rows of a wide file, collected as a (candidates x judges) array and per-row
    metadata, then added to the canonical table in one block."""

    def __init__(self, path: Path, judges: Sequence[str], max_rows: int) -> None:
        self.path, self.judges = path, list(judges)
        # np.empty touches no memory: only the rows written take space
        self.values = np.empty((max_rows, len(self.judges)))
        self.lines: list[int] = []
        self.candidates: list[str] = []
        self.participants: list[str | None] = []
        self.times: list[str | None] = []
        self.flags: list[bool] = []

    def add(self, line: int, candidate: str, participant: str | None, submitted: str | None,
            baseline: bool, values: np.ndarray) -> None:
        self.values[len(self.lines)] = values
        self.lines.append(line)
        self.candidates.append(candidate)
        self.participants.append(participant)
        self.times.append(submitted)
        self.flags.append(baseline)

    def close(self, rows: Rows) -> None:
        n, m = len(self.lines), len(self.judges)

        def per_row(values: list[str | None]) -> pd.Categorical:
            codes, cats = table.codes_of(table.categorical(values))
            return table.from_codes(np.repeat(codes, m), cats)

        columns = {
            "phase": table.constant("", n * m),
            "candidate": per_row(self.candidates),  # type: ignore[arg-type]
            "participant": per_row(self.participants),
            "task": table.tiled(self.judges, n),
            "metric": table.constant("", n * m),
            "value": self.values[:n].reshape(-1),
            "submitted_at": per_row(self.times),
            "is_baseline": np.repeat(np.array(self.flags, dtype=bool), m),
        }
        lines, path = self.lines, self.path
        rows.add_block(columns, n * m, lambda i: f"{path}, line {lines[i // m]}")


def _scores(cells: list[str], judges: Sequence[str], at: str, candidate: str) -> np.ndarray:
    """The scores of one row, as :func:`~metascore.readers.rows.score_cell` reads each cell.

    numpy converts a list of strings with Python's ``float``; a row it refuses (a missing
    cell) is tried again with the missing-value tokens as ``nan``, and a row that still
    fails, holds an infinity or has no candidate is read one cell at a time, which raises
    the error the file deserves (an empty candidate after its first cell's, as before).
    """
    if candidate:
        for attempt in (cells, None):
            if attempt is None:
                attempt = ["nan" if c.strip().lower() in MISSING_TOKENS else c for c in cells]
            try:
                values = np.array(attempt, dtype=float)
            except ValueError:
                continue
            if not np.isinf(values).any():
                return values
            break
    out = np.empty(len(cells))
    for k, cell in enumerate(cells):
        out[k] = score_cell(cell, lambda k=k: f"{at}, column {judges[k]!r}")
        if not candidate:
            raise InputError(f"{at}: the candidate is empty.")
    return out


def _first_line(text: str) -> str:
    """The first non-blank line of ``text`` (as ``str.splitlines`` cuts it), reading only
    as far as needed."""
    size = 4096
    while True:
        pieces = text[:size].splitlines()
        whole = size >= len(text)
        for line in pieces if whole else pieces[:-1]:  # the last piece may be cut short
            if line.strip():
                return line
        if whole:
            return ""
        size *= 4


def _csv_lines(path: Path, text: str) -> Iterator[tuple[int, list[str]]]:
    """``(line number, cells)`` of every non-blank CSV row, as :func:`csv_rows` gives them.

    Without quotes, NUL bytes or carriage returns other than in ``\\r\\n``, a row is a line
    split at its commas, which is what the csv module does with it, only faster.
    """
    if '"' in text or "\0" in text or ("\r" in text and "\r" in text.replace("\r\n", "")):
        yield from csv_rows(path)
        return
    for n, line in enumerate(text_lines(text), start=1):
        if line.endswith("\n"):
            line = line[:-2] if line.endswith("\r\n") else line[:-1]
        row = line.split(",")
        if any(cell.strip() for cell in row):
            yield n, row


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _read_matrix(path: Path, text: str, rows: Rows) -> None:
    """A whitespace-separated matrix (see the module docstring for the names)."""
    # each line is split when read: ten million cells as strings at once would take a
    # gigabyte
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    header: list[str] | None = None
    first = lines[0][1].split()
    if not all(_is_number(c) for c in first[1:]):
        header = first
        lines = lines[1:]
    if not lines:
        raise InputError(f"no scores found in {path} (a header line and no data).")
    named = all(not _is_number(line.split(None, 1)[0]) for _, line in lines)
    width = len(lines[0][1].split()) - named
    if header is not None:
        if len(header) == width + 1 and named:
            header = header[1:]  # a label above the names column
        if len(header) != width:
            raise InputError(f"{path}: the header has {len(header)} names for {width} score columns.")
    judges = header or [f"j{k}" for k in range(1, width + 1)]
    if len(set(judges)) != len(judges):
        raise InputError(f"{path}: a column name appears twice in the header {judges}.")
    block = _Block(path, judges, len(lines))
    for k, (n, line) in enumerate(lines, start=1):
        at = f"{path}, line {n}"
        cells = line.split()
        if len(cells) != width + named:
            raise InputError(f"{at}: the row has {len(cells)} cells; the first row has {width + named}.")
        candidate = cells[0] if named else f"c{k}"
        block.add(n, candidate, None, None, False, _scores(cells[named:], judges, at, candidate))
    block.close(rows)


def _looks_wide(s: Sniff) -> Verdict | None:
    """A CSV no other format claims; one with ``candidate`` and ``value`` columns and no
    ``task`` or ``metric`` (one judge named ``value``, or a long table of one judge) is
    ambiguous with ``long``."""
    if s.suffix != ".csv":
        return None
    names = {h.lower() for h in s.header}
    if {"candidate", "value"} <= names:
        return None if names & {"task", "metric"} else Verdict.MATCH
    return Verdict.FALLBACK


#: The record of format ``wide`` (:mod:`.input_format`).
WIDE_FORMAT = InputFormat("wide", lambda s, rows: read_wide(s.path, rows),
                          by_content=_looks_wide)
