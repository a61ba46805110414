"""Fast paths of the bootstrap: scores of resampled matrices without re-ranking them.

A ranking method declares the exact shortcuts it offers next to its function
(:class:`metascore.resampling.Shortcuts`, the ``resampling=`` of its registration); this
module decides, from those declarations and the data, which one a resample may take, and
computes the statistics several methods share:

- under judge resampling (:func:`judge_fast_scores`), a trial only reweights the judges:
  the method's ``judges`` shortcut reads the per-trial judge weights (and, if it needs
  them, the trial's head-to-head tallies, computed once for every method);
- under candidate resampling (:func:`candidate_fast_scores`, axis ``candidates`` or
  ``both``), a ``candidates`` shortcut reads the candidate multiplicities, and a
  ``candidate_pairs`` shortcut the pairwise statistics of the drawn multiset
  (:class:`~metascore.resampling.PairStats`), one pass of matrix products shared by every
  method declaring it.

Each path gives the registry's scores on the resampled matrix (tested against it).
"""

from __future__ import annotations

import numpy as np

from ..registry import get_ranking_method
from ..resampling import (
    CandidateDraws,
    JudgeDraws,
    Shortcuts,
    integer_valued,
    pair_blocks,
    pair_stats,
    pair_tensor_fits,
    pairwise_tallies,
)
from ._engine import Setup

__all__ = [
    "shortcuts",
    "integer_valued",
    "pair_tensor_fits",
    "fast_path_reason",
    "candidate_fast_reason",
    "candidate_fast_per_trial",
    "pair_blocks",
    "pairwise_tallies",
    "judge_fast_scores",
    "candidate_fast_scores",
]

_NONE = Shortcuts()


def shortcuts(name: str) -> Shortcuts:
    """The resampling shortcuts the method ``name`` declares (none: an empty declaration)."""
    return get_ranking_method(name).resampling or _NONE


def fast_path_reason(s: Setup, name: str) -> str | None:
    """None when ``name`` can use its fast path on ``s`` under judge resampling, else why not.

    The method must declare a ``judges`` shortcut, every candidate must be ranked by every
    judge (no missing cell, or ``missing="worst"``), and the method's own conditions
    (``judges_reason``) must hold.
    """
    hooks = shortcuts(name)
    if hooks.judges is None:
        return "no fast path for this method"
    if np.isnan(s.matrix.values).any() and s.missing != "worst":
        return f"missing cells under missing={s.missing!r}"
    return None if hooks.judges_reason is None else hooks.judges_reason(s, s.params[name])


def candidate_fast_reason(s: Setup, name: str, judges_resampled: bool) -> str | None:
    """None when ``name`` can use its fast path under candidate resampling, else why not.

    The method must declare a ``candidates`` or ``candidate_pairs`` shortcut, the matrix
    must have no missing cell (the worst value a missing cell receives depends on the
    drawn candidates), the method's own conditions (``candidates_reason``) must hold, and
    with judges resampled too the per-judge pair tensor of ``candidate_pairs`` must fit.
    """
    hooks = shortcuts(name)
    if hooks.candidates is None and hooks.candidate_pairs is None:
        return "no fast path for this method"
    if np.isnan(s.matrix.values).any():
        return "missing cells (their fill value depends on the drawn candidates)"
    if hooks.candidates_reason is not None:
        reason = hooks.candidates_reason(s, s.params[name])
        if reason is not None:
            return reason
    if hooks.candidate_pairs is not None and judges_resampled and not pair_tensor_fits(s.n, s.m):
        return "too many candidates x judges for the pairwise tensor"
    return None


def candidate_fast_per_trial(name: str) -> bool:
    """Whether the candidate fast path of ``name`` costs a pass per trial (run in the
    workers when ``jobs > 1``)."""
    return shortcuts(name).per_trial


def judge_fast_scores(
    s: Setup, name: str, cw: np.ndarray, tallies: tuple[np.ndarray, np.ndarray] | None
) -> np.ndarray:
    """Scores (T x n) of ``name`` on resampled judges with per-trial judge weights ``cw``
    (``tallies``: :func:`pairwise_tallies` of ``cw``, if the caller has them)."""
    return judge_fast_scores_of(s, [name], JudgeDraws(s.filled_ranks, cw, tallies))[name]


def judge_fast_scores_of(s: Setup, names: list[str], draws: JudgeDraws) -> dict[str, np.ndarray]:
    """Scores (T x n) of each of ``names`` on the judge resamples ``draws`` (the tallies,
    computed when a method first needs them, are shared)."""
    return {name: shortcuts(name).judges(s, s.params[name], draws) for name in names}


def candidate_fast_scores(s: Setup, names: list[str], cands: np.ndarray, cw: np.ndarray,
                          judges_resampled: bool) -> dict[str, np.ndarray]:
    """Scores (T x n, NaN for a candidate not drawn) of ``names`` on candidate resamples.

    ``cands`` holds each trial's drawn candidate positions (T x n, with repeats), ``cw``
    each trial's judge weights (T x m); copies of a candidate tie with it, as in the
    registry on the resampled matrix.
    """
    trials, n = cands.shape[0], s.n
    flat = (cands + n * np.arange(trials)[:, None]).ravel()
    c = np.bincount(flat, minlength=trials * n).reshape(trials, n).astype(float)
    draws = CandidateDraws(cands, c, cw, judges_resampled)
    out: dict[str, np.ndarray] = {}
    paired = []
    for name in names:
        hooks = shortcuts(name)
        if hooks.candidate_pairs is not None:
            paired.append(name)
        else:
            out[name] = hooks.candidates(s, s.params[name], draws)
    if paired:
        scores = {name: np.empty(c.shape) for name in paired}
        for lo, hi, stats in pair_stats(s.filled_ranks, draws):
            for name in paired:
                scores[name][lo:hi] = shortcuts(name).candidate_pairs(stats, s.params[name])
        out.update(scores)
    for scores in out.values():
        scores[c == 0] = np.nan
    return {name: out[name] for name in names}
