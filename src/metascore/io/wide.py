"""Format ``wide``: a CSV with one row per candidate and one column per judge.

The candidate is the ``candidate`` column, else the first one; ``participant``,
``submitted_at`` and ``is_baseline`` columns are metadata; every other column is a judge
(``task`` = its name, ``metric`` = ``""``).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from .rows import Rows, cell_at, column_index, csv_header, csv_rows, flag_cell, optional_text_cell
from .rows import score_cell, text_cell, time_cell

__all__ = ["read_wide"]


def read_wide(path: Path, rows: Rows) -> None:
    """Add the rows of a wide CSV to ``rows``: one row per candidate, one column per judge."""
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
