"""Formats ``codalab_csv`` and ``coopetition``: CodaLab v1 leaderboard exports.

``codalab_csv`` is the leaderboard CSV of a CodaLab v1 competition (``value (rank)``
cells, one block per leaderboard group), also the in-container ``input/scores/metadata``
file; ``coopetition`` is ``coopetition_scores_phase_<N>.txt``, the same table (checked
against ``codalab/competition-examples``:
``developers/coopetition/automl_hackathon_bundle/scoring_program/run/coopetition``),
whose phase is ``<N>``.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import InputError
from .input_format import InputFormat, Sniff, Verdict
from .rows import Rows, csv_rows, read_text, score_cell

__all__ = ["BLIND_PHASE", "COOPETITION_NAME", "COOPETITION_FORMAT", "CODALAB_CSV_FORMAT",
           "read_codalab_csv", "read_coopetition"]

BLIND_PHASE = "Not allowed, phase is blind."
COOPETITION_NAME = re.compile(r"coopetition_scores_phase_(\d+)(?:\.txt|\.csv)?", re.I)
#: A label in angle brackets (``<Rank>``, ``<Avg>``) names a computed column, an aggregate
#: of the others (CodaLab's average rank), never a judge.
COMPUTED_LABEL = re.compile(r"<[^<>]*>")
# CodaLab v1 cell: "0.8406 (1)" -> value "0.8406"
_CODALAB_CELL = re.compile(r"(?P<value>.*?)\s*\((?P<rank>[^()]*)\)")


def read_coopetition(path: Path, rows: Rows, phase: str | None) -> None:
    """Add the rows of ``coopetition_scores_phase_<N>.txt`` to ``rows``, with phase ``<N>``.

    ``phase``, when given, replaces ``<N>``.
    """
    if phase is None:
        match = COOPETITION_NAME.fullmatch(path.name)
        phase = match.group(1) if match else ""
    read_codalab_csv(path, rows, phase)


def read_codalab_csv(path: Path, rows: Rows, phase: str = "") -> None:
    """CodaLab v1 leaderboard CSV / coopetition file (``get_results_csv``).

    Each leaderboard group is a block starting with ``submission_pk,User,<label>...``.
    When a group has column groups, a sub-header row follows; the v1 writer emits it one
    cell to the left (its first cell stands for ``User``), which is undone here. A cell
    ``<value> (<rank>)`` gives ``<value>``; ``-`` is missing. Columns whose label is in
    angle brackets (``<Rank>``) are computed aggregates and are left out, with a note. Extra empty trailing cells
    (the v1 writer pads every row) are ignored. Caveat: v1 writes every sub-column of one
    column group into the same cell, so only groups with one sub-column survive the export.
    """
    _refuse_blind(path)
    rows.drop_empty_judges = True
    header: list[str] | None = None
    judges: list[tuple[int, str, str]] = []
    expect_subheader = False
    for n, row in csv_rows(path):
        first = row[0].strip()
        if first == "submission_pk":
            header = [h.strip() for h in row]
            if len(header) < 2 or header[1] != "User":
                raise InputError(f"{path}, line {n}: expected 'submission_pk,User,...'; got {row}.")
            judges = [(i, "", h) for i, h in enumerate(header) if i >= 2 and h]
            expect_subheader = True
            continue
        if header is None:
            raise InputError(
                f"{path}, line {n}: expected the header 'submission_pk,User,...' first; got {row}."
            )
        if expect_subheader and first == "":
            judges = _codalab_subheader(path, n, header, [s.strip() for s in row])
            expect_subheader = False
            continue
        expect_subheader = False
        judges = _without_computed(path, judges, rows)
        if first == "No data available":
            continue
        if first.startswith("Exception parsing scores"):
            raise InputError(
                f"{path}, line {n}: CodaLab could not export this leaderboard group (the file "
                f"says {first!r})."
            )
        _add_row(f"{path}, line {n}", row, header, judges, rows, phase)


def _refuse_blind(path: Path) -> None:
    """An :class:`InputError` when the file is what CodaLab exports of a blind phase."""
    text = read_text(path)
    if text.strip().startswith(BLIND_PHASE.rstrip(".")):
        raise InputError(
            f"{path} says {BLIND_PHASE!r}: CodaLab does not export the scores of a blind "
            "phase; export them once the phase is no longer blind."
        )


def _without_computed(path: Path, judges: list[tuple[int, str, str]], rows: Rows,
                      ) -> list[tuple[int, str, str]]:
    """The judges but the computed columns (a label in angle brackets), each left out
    with a note."""
    computed = [metric for _, _, metric in judges if COMPUTED_LABEL.fullmatch(metric)]
    if not computed:
        return judges
    note = (f"{path.name}: column(s) {', '.join(map(repr, computed))} left out: a label in "
            "angle brackets is a computed column (CodaLab's average rank), not a score.")
    if note not in rows.notes:
        rows.notes.append(note)
    return [j for j in judges if not COMPUTED_LABEL.fullmatch(j[2])]


def _add_row(at: str, row: list[str], header: list[str], judges: list[tuple[int, str, str]],
             rows: Rows, phase: str) -> None:
    """Add one submission's row (``at``: where it is) to ``rows``: a score per judge."""
    if len(row) < len(header):
        raise InputError(f"{at}: the row has {len(row)} cells but the header has {len(header)}.")
    extra = [c for c in row[len(header):] if c.strip()]
    if extra:
        raise InputError(f"{at}: cell {extra[0]!r} lies beyond the last header column.")
    user = row[1].strip()
    participant = None if user in ("", "Anonymous") else user
    first = row[0].strip()
    for i, task, metric in judges:
        cell = row[i].strip()
        match = _CODALAB_CELL.fullmatch(cell)
        raw = match.group("value") if match else cell
        value = score_cell(raw, f"{at}, column {header[i]!r}")
        rows.add(at, phase, first, participant, task, metric, value)


def _codalab_subheader(
    path: Path, n: int, header: list[str], subs: list[str]
) -> list[tuple[int, str, str]]:
    """``(cell, task, metric)`` per column, from the column-group labels and sub-labels.

    The v1 writer lists sub-labels from the second cell on (one cell left of their
    columns) and only for grouped columns, and it puts every value of one group in the
    group's first cell. So its files can be read only when every column is a group with
    one sub-column; anything else is refused rather than mislabelled.
    """
    shifted = len(subs) > 1 and subs[1] != ""
    labels = subs[1:] if shifted else subs[2:]
    columns = header[2:]
    while columns and not columns[-1]:
        columns.pop()
    while labels and not labels[-1]:
        labels.pop()
    if shifted:
        if len(labels) != len(columns):
            raise InputError(
                f"{path}, line {n}: the sub-header has {len(labels)} labels for {len(columns)} "
                "columns; CodaLab v1 writes sub-labels only for grouped columns, so a "
                "leaderboard mixing grouped and ungrouped columns cannot be aligned."
            )
        repeated = [a for a, b in zip(columns, columns[1:]) if a == b]
        if repeated:
            raise InputError(
                f"{path}, line {n}: column group {repeated[0]!r} has several sub-columns, "
                "and CodaLab v1's CSV export writes all of them into one cell, so their "
                "scores cannot be told apart; export the scores in another form (e.g. the "
                "scoring results as a tree)."
            )
    judges = []
    for i, group in enumerate(columns, start=2):
        sub = labels[i - 2] if i - 2 < len(labels) else ""
        judges.append((i, group if sub else "", sub or group))
    return judges


def _looks_codalab(s: Sniff) -> Verdict | None:
    """A blind phase's export (its first line says so: nothing else can be it), or a CSV
    whose header starts with ``submission_pk``."""
    if s.is_json:
        return None
    if s.first_line.startswith(BLIND_PHASE.rstrip(".")):
        return Verdict.SURE
    return Verdict.MATCH if s.header[0] == "submission_pk" else None


#: The record of format ``codalab_csv`` (:mod:`.input_format`).
CODALAB_CSV_FORMAT = InputFormat("codalab_csv", lambda s, rows: read_codalab_csv(s.path, rows),
                                 by_content=_looks_codalab, site_export=True)
#: The record of format ``coopetition``: ``coopetition_scores_phase_<N>.txt`` by its name.
COOPETITION_FORMAT = InputFormat(
    "coopetition", lambda s, rows: read_coopetition(s.path, rows, s.phase),
    by_path=lambda p: COOPETITION_NAME.fullmatch(p.name) is not None)
