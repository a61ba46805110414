"""Rank uncertainty by bootstrap over the judges (thesis 4.5: error bars on rankings).

For each candidate: an interval of its fractional rank, its probability of being first and
the group of candidates it cannot be separated from. The result joins the leaderboard by
candidate (:meth:`RankUncertainty.to_frame`, :meth:`RankUncertainty.row`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ConfigError, InputError, did_you_mean
from ..matrix import ScoreMatrix
from ..jsonable import jsonable
from ..registry import DEFAULT_METHOD
from .execution import Execution
from .shared import code_ranks, rank_codes, resolve, Setup
from .bootstrap import run_trials
from .draws import plan_draws, skip_note

__all__ = ["rank_uncertainty", "RankUncertainty"]


@dataclass(frozen=True)
class RankUncertainty:
    """Bootstrap rank intervals of one method's ranking.

    Attributes
    ----------
    method : str
    candidates : tuple of str
        In input order (after the missing-data policy); every array below is aligned with it.
    rank : ndarray
        Fractional rank on the full matrix.
    position : ndarray of int
        Leaderboard position on the full matrix.
    lower, upper : ndarray
        Rank interval: the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the
        bootstrap fractional ranks (lower quantile rounded down, upper rounded up to ranks
        actually observed, so the interval is conservative).
    mean_rank, std_rank : ndarray
        Mean and standard deviation (ddof=1) of the bootstrap fractional ranks.
    p_first : ndarray
        Probability of being first: the mean over trials of 1/t when the candidate is among
        the t candidates tied first, 0 otherwise (sums to 1 over candidates).
    group : ndarray of int
        Indistinguishability group, 1 = top group (rule in :func:`rank_uncertainty`).
    level, n_trials, seed, missing, params
        How it was computed.
    skipped, notes
        Trials skipped, as in every bootstrap criterion, because their resample kept no
        usable judge (:func:`~.bootstrap.usable_trials`; with every candidate kept, only a
        judge without any score could be one, which the missing-data policies refuse). The
        statistics above are over the other trials; with none left they are NaN and every
        candidate is in group 1. ``notes`` is in :meth:`to_dict` only when not empty.
    """

    method: str
    candidates: tuple[str, ...]
    rank: np.ndarray
    position: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    mean_rank: np.ndarray
    std_rank: np.ndarray
    p_first: np.ndarray
    group: np.ndarray
    level: float
    n_trials: int
    seed: int | None
    missing: str
    params: dict[str, Any]
    excluded_candidates: dict[str, str]
    skipped: int = 0
    notes: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        """One row per candidate, best first; join with a leaderboard on ``candidate``."""
        frame = pd.DataFrame(
            {
                "candidate": list(self.candidates),
                "position": self.position,
                "rank": self.rank,
                "rank_lower": self.lower,
                "rank_upper": self.upper,
                "rank_mean": self.mean_rank,
                "rank_std": self.std_rank,
                "p_first": self.p_first,
                "group": self.group,
            }
        )
        return frame.sort_values(["position", "rank"], kind="stable").reset_index(drop=True)

    def row(self, candidate: str) -> dict[str, Any]:
        """The row of one candidate as a dict (for a leaderboard join)."""
        if candidate not in self.candidates:
            raise InputError(
                f"unknown candidate {candidate!r}{did_you_mean(candidate, self.candidates)}."
            )
        frame = self.to_frame()
        return jsonable(frame[frame["candidate"] == candidate].iloc[0].to_dict())

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "method": self.method,
                "level": self.level,
                "n_trials": self.n_trials,
                "seed": self.seed,
                "missing": self.missing,
                "params": self.params,
                "excluded_candidates": self.excluded_candidates,
                "rows": self.to_frame().to_dict(orient="records"),
            } | ({"notes": list(self.notes)} if self.notes else {})
        )


def _method(data: ScoreMatrix | Setup, method: str | None) -> str:
    """The method whose intervals are asked: ``method``, or by default a setup's only
    method (else :data:`~metascore.registry.DEFAULT_METHOD`)."""
    if method is None:
        if not isinstance(data, Setup):
            return DEFAULT_METHOD
        if len(data.methods) > 1:
            raise ConfigError(f"name the method whose rank intervals to compute: the setup "
                              f"compares {list(data.methods)}.")
        return data.methods[0]
    if not isinstance(method, str):
        raise ConfigError(f"`method` must be one method name; got {method!r}.")
    return method


def _groups(order: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Groups along the full-data order: a group opens at its best remaining candidate
    (the leader) and takes every following candidate whose interval overlaps the leader's
    (``lower <= upper(leader)``); the first candidate that does not opens the next group."""
    group = np.zeros(len(order), dtype=int)
    current, leader_upper = 0, -np.inf
    for i in order:
        if lower[i] > leader_upper:
            current += 1
            leader_upper = upper[i]
        group[i] = current
    return group


def rank_uncertainty(
    data: ScoreMatrix | Setup,
    method: str | None = None,
    *,
    n_trials: int = 1000,
    level: float = 0.95,
    run: Execution | None = None,
) -> RankUncertainty:
    """Bootstrap over the judges: per candidate a rank interval, P(first) and a group.

    Each trial draws m judges with replacement and ranks the candidates with ``method``
    (default: :data:`~metascore.registry.DEFAULT_METHOD`, or a setup's only method;
    through the registry, or an exactly equal fast path; ``run.jobs`` and ``run.backend``
    spread the trials over joblib workers with identical results). A setup's method
    reads the resamples the setup's other methods share. Candidates are then grouped
    along the full-data ranking: a candidate joins the group of the best candidate above
    it still opening a group when its rank interval overlaps that leader's interval, so a
    group is a set of candidates that cannot be separated from its best member at this
    ``level`` (groups are contiguous in the leaderboard order).

    Examples
    --------
    >>> import metascore as ms
    >>> m = ms.ScoreMatrix.from_array([[9, 9, 9, 9], [5, 6, 5, 6], [6, 5, 6, 5]], ["A", "B", "C"])
    >>> u = rank_uncertainty(m, n_trials=200)
    >>> u.to_frame()[["candidate", "p_first", "group"]].values.tolist()
    [['A', 1.0, 1], ['B', 0.0, 2], ['C', 0.0, 2]]
    """
    if isinstance(n_trials, bool) or not isinstance(n_trials, (int, np.integer)) or n_trials < 2:
        raise ConfigError(f"`n_trials` must be an integer >= 2; got {n_trials!r}.")
    if not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ConfigError(f"`level` must be a number strictly between 0 and 1; got {level!r}.")
    method = _method(data, method)
    s, run = resolve(data, None if isinstance(data, Setup) and method in data.methods
                     else method, run)
    plan = plan_draws(run.seed, n_trials, "judges", s.n, s.m)
    trials = run_trials(s, plan, run, progress=run.stage(f"rank intervals {method}"))
    usable = trials.usable
    skipped = int((~usable).sum())
    notes: tuple[str, ...] = () if not skipped else (skip_note(skipped, n_trials),)
    if skipped == n_trials:
        notes += ("every resample was skipped; the rank intervals are undefined.",)
    full = s.full[method]
    return RankUncertainty(
        method=method, candidates=s.matrix.candidates, rank=full.ranks,
        position=full.positions,
        **_intervals(trials.scores[method][usable] if skipped else trials.scores[method],
                     level, full.order, s.n),
        level=float(level), n_trials=int(n_trials), seed=plan.seed, missing=s.missing,
        params=s.params[method], excluded_candidates=s.excluded_candidates, skipped=skipped,
        notes=notes)


def _intervals(scores: np.ndarray, level: float, order: np.ndarray, n: int
               ) -> dict[str, np.ndarray]:
    """From the scores of the usable trials (trials x n): each candidate's rank interval at
    ``level``, mean and spread of its ranks, P(first) and group (along ``order``, the
    full-data ranking's); NaN, and one group, without a trial."""
    if not len(scores):
        undefined = np.full(n, np.nan)
        return dict(lower=undefined, upper=undefined, mean_rank=undefined, std_rank=undefined,
                    p_first=undefined, group=np.ones(n, dtype=int))
    codes = rank_codes(scores)
    ranks = code_ranks(codes)
    alpha = (1.0 - level) / 2.0
    lower = np.quantile(ranks, alpha, axis=0, method="lower")
    upper = np.quantile(ranks, 1.0 - alpha, axis=0, method="higher")
    top = codes == codes.max(axis=1, keepdims=True)
    return dict(lower=lower, upper=upper, mean_rank=ranks.mean(axis=0),
                std_rank=ranks.std(axis=0, ddof=1) if len(ranks) > 1 else np.zeros(n),
                p_first=(top / top.sum(axis=1, keepdims=True)).mean(axis=0),
                group=_groups(order, lower, upper))
