"""What the judges' weights move, method by method: the per-judge points of the methods
whose score is a weighted mean of them (:mod:`.robustness` reads them).

A method is *linear in the weights* when a candidate's score is, up to a strictly
increasing transform, ``sum_j w_j p_ij / sum_j w_j`` over the judges scoring it, with
points ``p_ij`` that do not depend on the weights (:func:`linear_points`). Then two
candidates scored by the same judges compare by the sign of ``sum_j w_j (p_aj - p cj)``, a
linear form in the weights, and the smallest re-weighting that swaps them has a closed
form. Checked against each method's definition in :mod:`metascore.methods`:

- ``mean``: the oriented values (a missing cell filled by the missing-data policy with the
  judge's worst value);
- ``geometric_mean``: ``log x`` (``-log x`` on a lower-is-better judge); a candidate with a
  0 has the score 0 whatever the weights (its points are one constant below every other
  candidate's);
- ``optimality_gap``: minus the shortfall below each judge's target, the targets read from
  the scores only (a percentile, the best score, or given);
- ``dowdall``: ``1 / position`` (shared points for ties), ``plurality``: 1 for a first
  place alone, ``average_rank``: minus the judge's rank (fractional, lowest or dense);
- ``success_rate``: the share of the other candidates the judge puts below (a tie counting
  0 or 1/2), ``relative_difference``: the mean signed relative difference to the others on
  the judge; both only when every pair of candidates is compared on the same judges (not
  under ``missing: pairwise`` with missing cells, where each pair has its own total
  weight).

Every other method is not linear in the weights (:data:`NOT_LINEAR` says why).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..method_spec import RankingMethod
from ..methods.positional import dowdall_points, first_alone, position_spans, targets
from ..missing import Prepared
from ..stats import dense_ranks, fractional_ranks, ranks_along

__all__ = ["linear_points", "weighted_scores", "NOT_LINEAR", "PAIR_WEIGHTED"]

#: Why a method's score is no weighted mean of per-judge points.
NOT_LINEAR = {
    "median": "the weighted median jumps from one judge's score to another's when a "
              "judge's weight crosses half of the total",
    "threshold": "it compares counts of last places one after the other, not one weighted sum",
    "random_dictator": "it is the ranking of one judge drawn with a probability proportional "
                       "to its weight, so any change of the weights can change the draw",
    "epp": "its strengths are fitted to the weighted comparisons, without a closed form",
    "elo": "its strengths are fitted to the weighted comparisons, without a closed form",
    "sco": "its ratings are fitted to the weighted comparisons by a seeded solver, without "
           "a closed form",
    "sco_fenchel_young": "its ratings are fitted to the weighted comparisons by a seeded "
                         "solver, without a closed form",
}

#: The linear methods whose scores divide by each pair's compared weight: linear only when
#: every pair of candidates is compared on the same judges.
PAIR_WEIGHTED = ("success_rate", "relative_difference")


def linear_points(spec: RankingMethod, params: Mapping[str, Any], prepared: Prepared
                  ) -> np.ndarray | None:
    """The per-judge points ``p_ij`` (candidates x judges; NaN where the judge does not
    score the candidate, under ``missing: pairwise``) of a method linear in the weights,
    on the matrix the method saw (:meth:`Prepared.filled`); None for another method, or
    for a method of :data:`PAIR_WEIGHTED` when a pair of candidates is compared on judges
    of its own."""
    maker = _POINTS.get(spec.name)
    if maker is None:
        return None
    x = prepared.filled(values_based=spec.input == "values" and not spec.order_only)
    if spec.name in PAIR_WEIGHTED and np.isnan(x).any():
        return None
    return maker(x, prepared, dict(params))


def weighted_scores(points: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``sum_j w_j p_ij / sum_j w_j`` over the judges scoring each candidate: the score of
    a linear method, up to the method's increasing transform."""
    present = ~np.isnan(points)
    if present.all():
        return points @ weights / weights.sum()
    own = np.where(present, weights[None, :], 0.0).sum(axis=1)
    return np.where(present, points, 0.0) @ weights / own


def _mean(x: np.ndarray, prepared: Prepared, params: dict) -> np.ndarray:
    return np.array(x, dtype=float)


def _geometric(x: np.ndarray, prepared: Prepared, params: dict) -> np.ndarray:
    signs = prepared.matrix.signs
    with np.errstate(divide="ignore"):
        logs = np.log(x * signs[None, :]) * signs[None, :]
    zero = np.isneginf(logs).any(axis=1)  # the geometric mean is 0, whatever the weights
    if zero.any():
        finite = logs[~zero]
        floor = np.nanmin(finite) - 1.0 if finite.size and np.isfinite(finite).any() else 0.0
        logs[zero] = np.where(np.isnan(logs[zero]), np.nan, floor)
    return logs


def _gap(x: np.ndarray, prepared: Prepared, params: dict) -> np.ndarray:
    g = targets(params["gamma"], prepared.matrix.judges, x, prepared.matrix.signs)
    return -(g[None, :] - np.minimum(x, g[None, :]))


def _dowdall(x: np.ndarray, prepared: Prepared, params: dict) -> np.ndarray:
    return dowdall_points(*position_spans(x), params["ties"])


def _plurality(x: np.ndarray, prepared: Prepared, params: dict) -> np.ndarray:
    return first_alone(*position_spans(x))


def _average_rank(x: np.ndarray, prepared: Prepared, params: dict) -> np.ndarray:
    ties = params["ties"]
    if ties == "dense":
        return -dense_ranks(x)
    if ties == "min":
        return -ranks_along(-x, "min", axis=0).astype(float)
    return -fractional_ranks(x, axis=0)


def _success_rate(x: np.ndarray, prepared: Prepared, params: dict) -> np.ndarray:
    low = ranks_along(x, "min", axis=0).astype(float)   # 1 + the candidates strictly below
    high = ranks_along(x, "max", axis=0).astype(float)  # that + the others tied with it
    tie = 0.5 if params["ties"] == "half" else 0.0
    return ((low - 1.0) + tie * (high - low)) / (x.shape[0] - 1)


def _relative_difference(x: np.ndarray, prepared: Prepared, params: dict) -> np.ndarray:
    if params["on"] == "ranks":
        base, sgn = fractional_ranks(x, axis=0), -np.ones(x.shape[1])
    else:
        sgn = prepared.matrix.signs
        base = x * sgn[None, :]  # the raw values
    n = x.shape[0]
    out = np.empty_like(base)
    for a in range(n):  # (u - v) / (u + v) = 2 u / (u + v) - 1, a 0/0 term is 0
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = base[a] / (base[a] + base)
        np.nan_to_num(ratio, copy=False, nan=0.5)
        out[a] = (2.0 * ratio - 1.0).sum(axis=0)
    return out * sgn[None, :] / (n - 1)


_POINTS = {
    "mean": _mean,
    "geometric_mean": _geometric,
    "optimality_gap": _gap,
    "dowdall": _dowdall,
    "plurality": _plurality,
    "average_rank": _average_rank,
    "success_rate": _success_rate,
    "relative_difference": _relative_difference,
}
