"""What the benchmark rules read per judge: positions, the points the positional rules give
for them, and the optimality gap's targets.

A candidate's position on a judge is one plus the number of candidates the judge scores
strictly better; candidates with equal values share the positions they span, ``lo`` to
``hi``. Under the ``pairwise`` missing policy a judge places only the candidates it scores
(NaN elsewhere). :mod:`.benchmark_rules` scores candidates with these points, and its
resampling shortcuts (:mod:`.benchmark_rules_shortcuts`) reweight them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..constraints import percentile_of

__all__ = ["position_spans", "spans", "dowdall_points", "first_alone", "over_present", "targets", "judge_target",
           "DEFAULT_GAMMA"]


def position_spans(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's span of shared positions on its judge (a column of ``X``, higher is
    better), ``(lo, hi)``, both n x m.

    ``lo`` is one plus the number of candidates the judge scores strictly better, ``hi``
    that plus the number of others with the same value: an untied candidate has
    ``lo == hi``. A cell the judge does not score (NaN) has NaN positions. One sort per
    judge, all judges at once (a judge per contiguous row).
    """
    n, m = X.shape
    y = np.ascontiguousarray(-np.asarray(X, dtype=float).T)  # lower is better, NaN last
    order = np.argsort(y, axis=1, kind="stable")
    s = np.take_along_axis(y, order, axis=1)
    first = np.ones((m, n), dtype=bool)   # the first of its group of equal values
    first[:, 1:] = s[:, 1:] != s[:, :-1]
    last = np.ones((m, n), dtype=bool)
    last[:, :-1] = first[:, 1:]
    at = np.broadcast_to(np.arange(n), (m, n))
    start = np.maximum.accumulate(np.where(first, at, 0), axis=1)
    end = np.minimum.accumulate(np.where(last, at, n - 1)[:, ::-1], axis=1)[:, ::-1]
    lo, hi = np.empty((m, n)), np.empty((m, n))
    np.put_along_axis(lo, order, start + 1.0, axis=1)
    np.put_along_axis(hi, order, end + 1.0, axis=1)
    missing = np.isnan(y)
    lo[missing] = hi[missing] = np.nan
    return lo.T, hi.T


def spans(groups: np.ndarray, mult: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` of every candidate among a multiset of candidates.

    ``groups`` are the dense tie groups of each judge (n x m, 0 = best value), ``mult`` each
    candidate's multiplicity (0: not drawn; copies tie with their original). A candidate
    not drawn gets the span it would have if drawn once more, which the callers ignore.
    """
    n, m = groups.shape
    flat = (groups + n * np.arange(m)[None, :]).ravel()
    size = np.bincount(flat, np.repeat(mult, m), minlength=n * m).reshape(m, n).T
    above = np.cumsum(size, axis=0) - size  # multiplicity of the better groups
    cols = np.arange(m)[None, :]
    lo = 1.0 + above[groups, cols]
    return lo, np.maximum(lo, above[groups, cols] + size[groups, cols])


def _harmonic(n: int) -> np.ndarray:
    """``H[k] = 1 + 1/2 + ... + 1/k`` for k = 0..n."""
    return np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, n + 1))))


def dowdall_points(lo: np.ndarray, hi: np.ndarray, ties: str) -> np.ndarray:
    """Dowdall's ``1 / position`` of each cell: ``ties="average"`` shares the points of the
    positions ``lo..hi`` of a tie (their mean), ``ties="min"`` gives each tied candidate
    ``1 / lo``. NaN positions give NaN points."""
    if ties == "min":
        return 1.0 / lo
    present = ~np.isnan(lo)
    a = np.where(present, lo, 1).astype(np.intp)
    b = np.where(present, hi, 1).astype(np.intp)
    H = _harmonic(int(b.max(initial=1)))
    return np.where(present, (H[b] - H[a - 1]) / (b - a + 1), np.nan)


def first_alone(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """1 where the candidate is first on the judge and nobody shares it, 0 elsewhere, NaN
    where the judge does not score it."""
    return np.where(np.isnan(lo), np.nan, (hi == 1).astype(float))


def over_present(points: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The weighted average of per-judge ``points`` over the judges scoring each candidate
    (NaN: not scored)."""
    present = ~np.isnan(points)
    if present.all():
        return points @ w / w.sum()
    own = np.where(present, w[None, :], 0.0).sum(axis=1)
    return np.where(present, points, 0.0) @ w / own


#: The optimality gap's default target: each judge's 90th percentile (:func:`targets`).
DEFAULT_GAMMA = "q90"


def targets(gamma: Any, judges: Sequence[str] | None, X: np.ndarray, signs: np.ndarray
            ) -> np.ndarray:
    """The optimality gap's oriented target of each judge (a column of ``X``): ``signs *
    gamma``, per judge from a mapping ``{judge: gamma}`` (``judges``: the labels of the
    columns), each judge's best oriented score for ``gamma="best"``, or its P-th
    percentile of the oriented scores (numpy's linear interpolation, over the candidates it
    scores) for ``gamma="qP"``."""
    if gamma == "best":
        return np.nanmax(X, axis=0)
    if isinstance(gamma, str):  # "qP"
        return np.nanpercentile(X, percentile_of(gamma), axis=0)
    if isinstance(gamma, Mapping):
        if judges is None:
            raise RuntimeError("optimality_gap with a target per judge needs the judges' labels.")
        return signs * np.array([float(judge_target(gamma, j)) for j in judges])
    return signs * float(gamma)


def judge_target(gamma: Mapping[str, float], judge: str) -> float | None:
    """The target of ``judge`` in ``gamma``; a judge drawn several times by a resample
    (``"acc#1"``, :meth:`~metascore.ScoreMatrix.subset`) has its original's. None: none."""
    if judge in gamma:
        return gamma[judge]
    base, sep, k = judge.rpartition("#")
    return gamma.get(base) if sep and k.isdigit() else None
