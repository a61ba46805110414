"""The per-judge points of the methods linear in the judges' weights
(:attr:`metascore.method_spec.Weighting.points`), each beside nothing but its definition.

A method is linear in the weights when a candidate's score is, up to a strictly increasing
transform, ``sum_j w_j p_ij / sum_j w_j`` over the judges scoring it, with points ``p_ij``
that do not depend on the weights. Each function below takes the matrix the method saw
(oriented, a missing cell filled by the missing-data policy, NaN under ``pairwise``), the
clean :class:`~metascore.matrix.ScoreMatrix` and the method's parameters, and is checked
against the method itself under random re-weightings (``tests/analysis/test_robustness.py``):

- mean: the oriented values;
- geometric mean: ``log x`` (``-log x`` on a lower-is-better judge); a candidate with a 0
  has the score 0 whatever the weights (its points are one constant below every other
  candidate's);
- optimality gap: minus the shortfall below each judge's target, the targets read from the
  scores only (a percentile, the best score, or given);
- Dowdall: ``1 / position`` (shared points for ties); plurality: 1 for a first place
  alone; average rank: minus the judge's rank (fractional, lowest or dense);
- success rate: the share of the other candidates the judge puts below (a tie counting 0
  or 1/2); relative difference: the mean signed relative difference to the others on the
  judge. Both divide by each pair's compared weight (``Weighting.per_pair``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..matrix import ScoreMatrix
from ..stats import dense_ranks, fractional_ranks, ranks_along
from .positional import dowdall_points, first_alone, position_spans, targets

__all__ = ["oriented", "log_values", "shortfall", "dowdall_shares", "first_places", "minus_ranks",
           "shares_below", "relative_differences"]


def oriented(x: np.ndarray, matrix: ScoreMatrix, params: dict[str, Any]) -> np.ndarray:
    """The oriented values themselves (the mean)."""
    return np.array(x, dtype=float)


def log_values(x: np.ndarray, matrix: ScoreMatrix, params: dict[str, Any]) -> np.ndarray:
    """``log x`` on the raw values, oriented (the geometric mean)."""
    signs = matrix.signs
    with np.errstate(divide="ignore"):
        logs = np.log(x * signs[None, :]) * signs[None, :]
    zero = np.isneginf(logs).any(axis=1)  # the geometric mean is 0, whatever the weights
    if zero.any():
        finite = logs[~zero]
        floor = np.nanmin(finite) - 1.0 if finite.size and np.isfinite(finite).any() else 0.0
        logs[zero] = np.where(np.isnan(logs[zero]), np.nan, floor)
    return logs


def shortfall(x: np.ndarray, matrix: ScoreMatrix, params: dict[str, Any]) -> np.ndarray:
    """Minus the shortfall below each judge's target (the optimality gap)."""
    g = targets(params["gamma"], matrix.judges, x, matrix.signs)
    return -(g[None, :] - np.minimum(x, g[None, :]))


def dowdall_shares(x: np.ndarray, matrix: ScoreMatrix, params: dict[str, Any]) -> np.ndarray:
    """``1 / position``, tied candidates sharing the points as ``ties`` says."""
    return dowdall_points(*position_spans(x), params["ties"])


def first_places(x: np.ndarray, matrix: ScoreMatrix, params: dict[str, Any]) -> np.ndarray:
    """1 for a first place alone, else 0 (plurality)."""
    return first_alone(*position_spans(x))


def minus_ranks(x: np.ndarray, matrix: ScoreMatrix, params: dict[str, Any]) -> np.ndarray:
    """Minus the judge's rank, ties as ``ties`` says (the average rank)."""
    ties = params["ties"]
    if ties == "dense":
        return -dense_ranks(x)
    if ties == "min":
        return -ranks_along(-x, "min", axis=0).astype(float)
    return -fractional_ranks(x, axis=0)


def shares_below(x: np.ndarray, matrix: ScoreMatrix, params: dict[str, Any]) -> np.ndarray:
    """The share of the other candidates the judge puts below (the success rate)."""
    low = ranks_along(x, "min", axis=0).astype(float)   # 1 + the candidates strictly below
    high = ranks_along(x, "max", axis=0).astype(float)  # that + the others tied with it
    tie = 0.5 if params["ties"] == "half" else 0.0
    return ((low - 1.0) + tie * (high - low)) / (x.shape[0] - 1)


def relative_differences(x: np.ndarray, matrix: ScoreMatrix, params: dict[str, Any]
                         ) -> np.ndarray:
    """The mean signed relative difference ``(u - v) / (u + v)`` to the others on each
    judge, on the raw values or the ranks."""
    if params["on"] == "ranks":
        base, sgn = fractional_ranks(x, axis=0), -np.ones(x.shape[1])
    else:
        sgn = matrix.signs
        base = x * sgn[None, :]  # the raw values
    n = x.shape[0]
    out = np.empty_like(base)
    for a in range(n):  # (u - v) / (u + v) = 2 u / (u + v) - 1, a 0/0 term is 0
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = base[a] / (base[a] + base)
        np.nan_to_num(ratio, copy=False, nan=0.5)
        out[a] = (2.0 * ratio - 1.0).sum(axis=0)
    return out * sgn[None, :] / (n - 1)
