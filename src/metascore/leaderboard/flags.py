"""Runs that finished after their prediction step failed, carried to the rows they concern.

The compute worker goes on to scoring when the submission or the ingestion program fails;
the scoring program may then write stand-in scores (0, 999, ...) that are ranked like any
other. ``metascore bundle run`` knows it: it writes ``prediction_failed.txt`` next to such
a run's scores in its outputs tree (:data:`metascore.readers.tree.FLAG_FILE`), which the
tree reader lists in the score table's ``flagged`` as ``(phase, candidate, task, what
failed)``. :func:`flag_board` puts on each board row the runs that concern it: its own in
the board's phase and, on the final board, those of the development submission whose score
decided whether it qualified (:attr:`~metascore.leaderboard.model.Row.prediction_failed`);
:func:`flag_message` says it once. A Codabench results export holds only scores, so on the
site the meta phase never sees such a mark: without one, boards and files are unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from ..readers.score_table import Flag
from .model import Board

__all__ = ["flag_board", "flag_message", "flag_text"]

#: How many runs the message names.
_NAMED = 6


def flag_text(flag: Flag) -> str:
    """``'alice-2' in 'Development', task 'datasets': <what failed>``."""
    return f"{flag.candidate!r} in {flag.phase!r}, task {flag.task!r}: {flag.reason}"


def flag_board(board: Board, flagged: Sequence[Flag],
               counterparts: Mapping[str, tuple[str, str]] | None = None) -> Board:
    """``board`` with each row's flagged runs (``counterparts``: a final candidate's
    development ``(phase, candidate)``, whose runs decided whether it qualified)."""
    if not flagged:
        return board
    runs: dict[tuple[str, str], list[str]] = {}
    for flag in flagged:
        runs.setdefault((flag.phase, flag.candidate), []).append(flag_text(flag))
    rows = []
    for row in board.rows:
        texts = list(runs.get((board.phase, row.candidate), []))
        other = (counterparts or {}).get(row.candidate)
        if other is not None and other != (board.phase, row.candidate):
            texts += runs.get(other, [])
        rows.append(dataclasses.replace(row, prediction_failed=tuple(texts)) if texts else row)
    return dataclasses.replace(board, rows=tuple(rows))


def flag_message(flagged: Sequence[Flag]) -> str | None:
    """One sentence about every flagged run (None when there is none)."""
    if not flagged:
        return None
    named = "; ".join(flag_text(f) for f in flagged[:_NAMED])
    more = f"; and {len(flagged) - _NAMED} more" if len(flagged) > _NAMED else ""
    return (f"{len(flagged)} run(s) finished after their prediction step failed, so their scores "
            "come from a scoring program that ran without (all) the predictions (often stand-in "
            f"values such as 0 or 999), and they are ranked as they are: {named}{more}. Their rows "
            "are marked (prediction_failed). Only a local run (`metascore bundle run`) knows this: "
            "a Codabench results export holds only scores, so the meta phase on the site ranks "
            "such runs without a mark.")
