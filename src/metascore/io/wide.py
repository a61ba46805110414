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
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from .rows import Rows, cell_at, column_index, csv_header, csv_rows, flag_cell, optional_text_cell
from .rows import read_text, score_cell, text_cell, time_cell

__all__ = ["read_wide"]


def read_wide(path: Path, rows: Rows) -> None:
    """Add the rows of a wide CSV to ``rows``: one row per candidate, one column per judge."""
    text = read_text(path)
    first = next((line for line in text.splitlines() if line.strip()), "")
    if "," not in text and len(first.split()) > 1:
        _read_matrix(path, text, rows)
        return
    lines = csv_rows(path)
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
    for n, row in lines:
        at = f"{path}, line {n}"
        if len(row) > len(header) and any(c.strip() for c in row[len(header):]):
            raise InputError(f"{at}: the row has {len(row)} cells but the header has {len(header)}.")
        participant = optional_text_cell(cell_at(row, meta.get("participant")))
        submitted = time_cell(cell_at(row, meta.get("submitted_at")), f"{at}, column 'submitted_at'")
        baseline = flag_cell(cell_at(row, meta.get("is_baseline")), f"{at}, column 'is_baseline'")
        candidate = text_cell(cell_at(row, cand))
        for i, judge in judges:
            value = score_cell(cell_at(row, i), lambda: f"{at}, column {judge!r}")
            rows.add(at, "", candidate, participant, judge, "", value, submitted, baseline)


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _read_matrix(path: Path, text: str, rows: Rows) -> None:
    """A whitespace-separated matrix (see the module docstring for the names)."""
    lines = [(n, line.split()) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    header: list[str] | None = None
    if not all(_is_number(c) for c in lines[0][1][1:]):
        header = lines[0][1]
        lines = lines[1:]
    if not lines:
        raise InputError(f"no scores found in {path} (a header line and no data).")
    named = all(not _is_number(cells[0]) for _, cells in lines)
    width = len(lines[0][1]) - named
    if header is not None:
        if len(header) == width + 1 and named:
            header = header[1:]  # a label above the names column
        if len(header) != width:
            raise InputError(f"{path}: the header has {len(header)} names for {width} score columns.")
    judges = header or [f"j{k}" for k in range(1, width + 1)]
    if len(set(judges)) != len(judges):
        raise InputError(f"{path}: a column name appears twice in the header {judges}.")
    for k, (n, cells) in enumerate(lines, start=1):
        at = f"{path}, line {n}"
        if len(cells) != width + named:
            raise InputError(f"{at}: the row has {len(cells)} cells; the first row has {width + named}.")
        candidate = cells[0] if named else f"c{k}"
        for judge, cell in zip(judges, cells[named:]):
            rows.add(at, "", candidate, None, judge, "", score_cell(cell, lambda: f"{at}, column {judge!r}"))
