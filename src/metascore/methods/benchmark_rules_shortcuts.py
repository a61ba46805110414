"""The exact resampling shortcuts of the benchmark rules (:mod:`.benchmark_rules` declares them).

Plurality, Dowdall, the geometric mean and the optimality gap score a candidate by a
weighted average of per-judge contributions (first alone, points, signed logs, shortfalls),
so under judge resampling a trial only reweights contributions computed once on the full
matrix. Under candidate resampling a candidate's positions are those among the drawn
multiset (copies tie with their original: :func:`~.positional.spans`); the geometric mean
of a row does not depend on the other rows; the optimality gap's ``"best"`` target is the
best drawn score. Minimax reads each trial's head-to-head counts: its defeats between two
distinct candidates do not depend on their copies.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..pairwise import snap_margins
from ..resampling import CandidateDraws, JudgeDraws, PairStats, ResampleBase, Shortcuts, pair_blocks
from ..resampling import pair_tensor_fits
from ..stats import ranks_along
from .positional import DEFAULT_GAMMA, dowdall_points, first_alone, position_spans, spans, targets

__all__ = ["PLURALITY", "DOWDALL", "GEOMETRIC_MEAN", "MINIMAX", "OPTIMALITY_GAP", "worst_defeats"]


def _groups(base: ResampleBase) -> np.ndarray:
    """Dense tie groups of each judge's ranks (n x m, 0 = best), no missing cell."""
    return ranks_along(base.filled_ranks, "dense", axis=0).astype(np.intp) - 1


def _reweighted(per_judge: np.ndarray, draws: JudgeDraws) -> np.ndarray:
    """``cw @ per_judge.T / total``: each trial's weighted average of the contributions."""
    return (draws.cw @ per_judge.T) / draws.total


def _per_trial(points_of, base: ResampleBase, draws: CandidateDraws) -> np.ndarray:
    """Each trial's weighted average of ``points_of(lo, hi)`` among the drawn multiset."""
    groups = _groups(base)
    out = np.full(draws.c.shape, np.nan)
    for t, mult in enumerate(draws.c):
        lo, hi = spans(groups, mult)
        out[t] = points_of(lo, hi) @ draws.cw[t] / draws.cw[t].sum()
    return out


# ---------------------------------------------------------------------- plurality, Dowdall
def _plurality_judges(base: ResampleBase, params: dict[str, Any], draws: JudgeDraws) -> np.ndarray:
    return _reweighted(first_alone(*position_spans(-base.filled_ranks)), draws)


def _plurality_candidates(base: ResampleBase, params: dict[str, Any], draws: CandidateDraws
                          ) -> np.ndarray:
    return _per_trial(first_alone, base, draws)


def _dowdall_judges(base: ResampleBase, params: dict[str, Any], draws: JudgeDraws) -> np.ndarray:
    lo, hi = position_spans(-base.filled_ranks)
    return _reweighted(dowdall_points(lo, hi, params.get("ties", "average")), draws)


def _dowdall_candidates(base: ResampleBase, params: dict[str, Any], draws: CandidateDraws
                        ) -> np.ndarray:
    ties = params.get("ties", "average")
    return _per_trial(lambda lo, hi: dowdall_points(lo, hi, ties), base, draws)


PLURALITY = Shortcuts(judges=_plurality_judges, candidates=_plurality_candidates, per_trial=True)
DOWDALL = Shortcuts(judges=_dowdall_judges, candidates=_dowdall_candidates, per_trial=True)


# ---------------------------------------------------------------------- geometric mean
def _signed_logs(base: ResampleBase) -> np.ndarray:
    """``log x`` (``-log x`` on lower-is-better judges) of the filled raw scores."""
    x = base.prepared.filled(values_based=True)
    signs = base.matrix.signs
    with np.errstate(divide="ignore"):
        return np.log(x * signs[None, :]) * signs[None, :]


def _geometric_mean(logs: np.ndarray, cw: np.ndarray) -> np.ndarray:
    """Each trial's weighted geometric mean (0 for a row holding a drawn zero score)."""
    zero = np.isneginf(logs)
    finite = np.where(zero, 0.0, logs)
    out = np.exp((cw @ finite.T) / cw.sum(axis=1)[:, None])
    return np.where((cw @ zero.T) > 0, 0.0, out)


def _geometric_mean_judges(base: ResampleBase, params: dict[str, Any], draws: JudgeDraws
                           ) -> np.ndarray:
    return _geometric_mean(_signed_logs(base), draws.cw)


def _geometric_mean_candidates(base: ResampleBase, params: dict[str, Any], draws: CandidateDraws
                               ) -> np.ndarray:
    return _geometric_mean(_signed_logs(base), draws.cw)  # a row's mean ignores the others


GEOMETRIC_MEAN = Shortcuts(judges=_geometric_mean_judges, candidates=_geometric_mean_candidates)


# ---------------------------------------------------------------------- optimality gap
def _targets(base: ResampleBase, params: dict[str, Any], x: np.ndarray) -> np.ndarray:
    return targets(params.get("gamma", DEFAULT_GAMMA), base.matrix.judges, x, base.matrix.signs)


def _drawn_targets(params: dict[str, Any]) -> bool:
    """The target depends on the drawn candidates (their best score or a percentile)."""
    return isinstance(params.get("gamma", DEFAULT_GAMMA), str)


def _gap_judges(base: ResampleBase, params: dict[str, Any], draws: JudgeDraws) -> np.ndarray:
    x = base.prepared.filled(values_based=True)
    g = _targets(base, params, x)
    return -_reweighted(g[None, :] - np.minimum(x, g[None, :]), draws)


def _gap_candidates(base: ResampleBase, params: dict[str, Any], draws: CandidateDraws
                    ) -> np.ndarray:
    x = base.matrix.oriented()
    g = _targets(base, params, x)
    out = np.full(draws.c.shape, np.nan)
    for t, mult in enumerate(draws.c):
        if _drawn_targets(params):  # the target of the drawn multiset, copies included
            g = _targets(base, params, np.repeat(x, mult.astype(np.intp), axis=0))
        gap = (g[None, :] - np.minimum(x, g[None, :])) @ draws.cw[t] / draws.cw[t].sum()
        out[t] = -gap
    return out


OPTIMALITY_GAP = Shortcuts(judges=_gap_judges, candidates=_gap_candidates,
                           per_trial=_drawn_targets)


# ---------------------------------------------------------------------- minimax
def worst_defeats(wins: np.ndarray, total: np.ndarray, opponents: np.ndarray | None = None
                  ) -> np.ndarray:
    """Minimax scores ``-max_b D(a, b) / total`` of stacked counts ``wins`` (T x n x n, total
    weight ``total`` per trial), the opponents b restricted to ``opponents`` (T x n bool)."""
    out = np.empty(wins.shape[:2])
    for t, n_ab in enumerate(wins):
        margins = snap_margins(n_ab - n_ab.T, float(total[t]))
        defeat = np.where(margins < 0, snap_margins(n_ab.T, float(total[t])), 0.0)
        if opponents is not None:
            defeat = np.where(opponents[t][None, :], defeat, 0.0)
        out[t] = -defeat.max(axis=1) / total[t]
    return out


def _minimax_judges(base: ResampleBase, params: dict[str, Any], draws: JudgeDraws) -> np.ndarray:
    out = np.empty((draws.cw.shape[0], base.n))
    total = draws.cw.sum(axis=1)
    for lo, hi, wins in pair_blocks(draws.ranks, draws.cw):
        out[lo:hi] = worst_defeats(wins, total[lo:hi])
    return out


def _minimax_reason(base: ResampleBase, params: dict[str, Any]) -> str | None:
    if not pair_tensor_fits(base.n, base.m):
        return "too many candidates x judges for the pairwise tensor"
    return None


def _minimax_pairs(stats: PairStats, params: dict[str, Any]) -> np.ndarray:
    wins = stats.wins if stats.judges_resampled else np.broadcast_to(
        stats.wins[0], (stats.c.shape[0],) + stats.wins.shape[1:])
    return worst_defeats(wins, stats.w[:, 0], stats.c > 0)


MINIMAX = Shortcuts(judges=_minimax_judges, judges_reason=_minimax_reason,
                    candidate_pairs=_minimax_pairs)
