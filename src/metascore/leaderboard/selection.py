"""Participant selection: which submission represents a participant in a phase.

A participant (or team) may submit several times in a phase; the ranking needs one
candidate per participant. Policies:

- ``best``: the submission with the best score under the configured ranking method, the
  method being applied to all submissions of the phase together (what a leaderboard of
  every submission would show); among equal scores, the earlier submission, then the
  smaller candidate id.
- ``last``: the latest submission (largest ``submitted_at``; a submission without a time
  counts as the earliest; among equal times, the larger candidate id).
- ``all``: every submission is its own candidate.

"Earlier" and "larger id" read a candidate id ``<owner>-<id>`` (a Codabench results
export's row key) by its submission number, as a number (``zoe-10`` comes after
``zoe-9``), then as text; a submission without a number counts as the earliest.

Baselines are never merged: every baseline submission stays a candidate of its own. A
submission without a participant is its own participant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..matrix import ScoreMatrix
from ..ranking import Ranking
from ..submission_order import submission_number

__all__ = ["Selection", "participant_key", "select_candidates"]


@dataclass(frozen=True)
class Selection:
    """The selected candidates of a phase and why the others were left out.

    Attributes
    ----------
    matrix : ScoreMatrix
        The phase's score matrix restricted to the selected candidates.
    dropped : dict
        ``{candidate: reason}`` for the submissions that do not represent their participant.
    unscored : dict
        ``{candidate: why}`` for the candidates of the phase with no score on any judge (kept
        with every score missing; :func:`~metascore.leaderboard.phases.phase_matrix`).
    """

    matrix: ScoreMatrix
    dropped: dict[str, str] = field(default_factory=dict)
    unscored: dict[str, str] = field(default_factory=dict)


def participant_key(matrix: ScoreMatrix, i: int) -> str:
    """The participant of candidate ``i``, or its candidate id when it has none."""
    part = matrix.participants[i] if matrix.participants else None
    return matrix.candidates[i] if part is None else part


def select_candidates(
    matrix: ScoreMatrix, policy: str, rank_fn: Callable[[ScoreMatrix], Ranking]
) -> Selection:
    """Keep one candidate per participant according to ``policy`` (module docstring).

    ``rank_fn`` ranks a score matrix with the configured method; it is called only for
    ``best`` and only when some participant has several submissions.
    """
    n = matrix.n_candidates
    baseline = np.array(matrix.is_baseline or [False] * n, dtype=bool)
    keys = np.array([participant_key(matrix, i) for i in range(n)], dtype=object)
    if policy == "all" or not pd.Series(keys[~baseline]).duplicated().any():
        return Selection(matrix)

    times = np.array(
        [-np.inf if t is None else pd.Timestamp(t).value for t in
         (matrix.submitted_at or [None] * n)], dtype=float,
    )
    # submission numbers (<owner>-<id>) as numbers: zoe-10 is later than zoe-9
    numbers = np.array([-np.inf if k is None else float(k)
                        for k in map(submission_number, matrix.candidates)])
    id_order = pd.Index(matrix.candidates).argsort().argsort()
    if policy == "best":
        ranking = rank_fn(matrix)
        # candidates dropped by the missing-data policy come last
        # (fractional ranks treat scores equal up to float noise as tied)
        rank_of = np.full(n, np.inf)
        for j, cand in enumerate(ranking.candidates):
            rank_of[matrix.candidates.index(cand)] = ranking.ranks[j]
        sort_keys = (id_order, numbers, times, rank_of)  # lexsort: the last key sorts first
        how = "best score among its submissions"
    elif policy == "last":
        sort_keys = (-id_order, -numbers, -times)
        how = "latest submission"
    else:  # pragma: no cover - validated by the config
        raise ValueError(f"unknown selection policy {policy!r}")

    keep = baseline.copy()
    dropped: dict[str, str] = {}
    order = np.lexsort(sort_keys)
    rank_in_order = np.empty(n, dtype=int)
    rank_in_order[order] = np.arange(n)
    for key in pd.unique(keys[~baseline]):
        idx = np.flatnonzero((keys == key) & ~baseline)
        chosen = idx[np.argmin(rank_in_order[idx])]
        keep[chosen] = True
        for i in idx[idx != chosen]:
            dropped[matrix.candidates[i]] = (
                f"participant {key!r} is represented by {matrix.candidates[chosen]!r} "
                f"({how}; selection: {policy})"
            )
    return Selection(matrix.subset(candidates=np.flatnonzero(keep)), dropped)

