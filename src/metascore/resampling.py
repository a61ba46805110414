"""Exact resampling shortcuts a ranking method may declare, and the statistics they share.

A bootstrap trial ranks a resampled matrix: judges drawn with replacement (each judge gets
a multiplicity), candidates drawn with replacement (each candidate gets a multiplicity,
copies tie with their original), or both. Many methods need not rank each resample from
scratch: their scores are functions of *sufficient statistics* of the full matrix that the
multiplicities only reweight (the way sacrebleu splits a metric's corpus statistics from
the score computed from them, so resampling reuses the statistics). A method declares what
it can do with :class:`Shortcuts`, given to :func:`metascore.registry.ranking_method` next
to its function::

    @ranking_method("mean", resampling=Shortcuts(judges=mean_by_judges, ...))

The analyses (:mod:`metascore.analysis.bootstrap`) read these declarations and never name
a method. Every shortcut must give the registry's scores on the resampled matrix exactly
(``tests/test_method_shortcuts.py`` checks each declared one against :func:`~metascore.rank`).

This module also holds the shared statistics: per-trial judge weights (:class:`JudgeDraws`),
candidate multiplicities (:class:`CandidateDraws`), the pairwise wins of each trial's judges
among the drawn candidates (:class:`PairStats`), and the matrix products computing them
(:func:`pair_blocks`, :func:`pairwise_tallies`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from .matrix import ScoreMatrix
from .pairwise import PairwiseCounts

__all__ = [
    "Shortcuts",
    "ResampleBase",
    "JudgeDraws",
    "CandidateDraws",
    "PairStats",
    "integer_valued",
    "pair_tensor_fits",
    "pair_blocks",
    "pairwise_tallies",
    "pair_stats",
    "reduced_counts",
]

#: Elements per block of the pairwise tensors (memory bound of the products).
BLOCK = 4_000_000

#: Largest n * n * m for which the per-judge win indicators are materialized.
COUNTS_LIMIT = 60_000_000


class ResampleBase(Protocol):
    """The full data every shortcut reads (the analyses' validated input).

    ``matrix`` is the score matrix after the missing-data policy ``missing``;
    ``filled_ranks`` the per-judge fractional ranks (n x m, 1 = best; a missing cell is
    tied last under ``missing="worst"``, NaN otherwise); ``n`` and ``m`` its shape.
    """

    matrix: ScoreMatrix
    missing: str
    filled_ranks: np.ndarray

    @property
    def n(self) -> int: ...

    @property
    def m(self) -> int: ...


@dataclass(frozen=True, eq=False)
class JudgeDraws:
    """Judge resamples: ``cw[t, j]``, the weight of judge j in trial t (its weight times
    how many times it was drawn), T x m. ``ranks`` are the full data's per-judge ranks."""

    ranks: np.ndarray
    cw: np.ndarray
    given_tallies: tuple[np.ndarray, np.ndarray] | None = None

    @cached_property
    def total(self) -> np.ndarray:
        """Total judge weight of each trial, T x 1."""
        return self.cw.sum(axis=1)[:, None]

    @cached_property
    def tallies(self) -> tuple[np.ndarray, np.ndarray]:
        """Head-to-head ``(won, tied)`` of every candidate in every trial (:func:`pairwise_tallies`)."""
        if self.given_tallies is not None:
            return self.given_tallies
        return pairwise_tallies(self.ranks, self.cw)


@dataclass(frozen=True, eq=False)
class CandidateDraws:
    """Candidate resamples (axis ``candidates`` or ``both``).

    ``cands`` holds each trial's drawn candidate positions (T x k, with repeats), ``c`` the
    multiplicity of each candidate in each trial (T x n), ``cw`` each trial's judge weights
    (T x m), ``judges_resampled`` whether the judges were drawn too.
    """

    cands: np.ndarray
    c: np.ndarray
    cw: np.ndarray
    judges_resampled: bool


@dataclass(frozen=True, eq=False)
class PairStats:
    """The sufficient statistics of a block of candidate resamples, trials ``lo:hi``.

    With ``N(a, b)`` the weight of the trial's judges ranking a strictly above b (``wins``,
    one n x n matrix per trial, or a single one when the judges were not resampled), W
    their total weight (``w``, per trial) and ``c`` the candidate multiplicities:
    ``beats = N c`` (the weight of drawn opponents each candidate beats, copies included),
    ``beaten_by = c N`` and ``ties = W (k - 1) - beats - beaten_by`` (the weight of its
    ties with the other drawn candidates, its copies included).
    """

    n: int
    c: np.ndarray
    w: np.ndarray
    wins: np.ndarray
    beats: np.ndarray
    beaten_by: np.ndarray
    ties: np.ndarray
    judges_resampled: bool


@dataclass(frozen=True)
class Shortcuts:
    """What a ranking method can do on resamples, each exactly equal to :func:`~metascore.rank`.

    Every callable receives ``base`` (:class:`ResampleBase`) and ``params`` (the method's
    checked parameters). A reason callable returns None when its shortcut applies, else
    one sentence saying why not.

    Attributes
    ----------
    judges : callable or None
        ``judges(base, params, draws: JudgeDraws) -> (T, n) scores`` under judge resampling
        (the score of a resample is a weighted sum of per-judge contributions, or a
        function of the trial's pairwise tallies). The analyses apply it only when every
        candidate is ranked by every judge (no missing cell, or ``missing="worst"``).
    judges_reason : callable or None
        ``judges_reason(base, params) -> str | None``: further conditions of ``judges``.
    candidates : callable or None
        ``candidates(base, params, draws: CandidateDraws) -> (T, n) scores`` under candidate
        resampling (any value for a candidate not drawn). Applied only without missing cells.
    candidate_pairs : callable or None
        ``candidate_pairs(stats: PairStats, params) -> (hi - lo, n) scores`` under candidate
        resampling, from the pairwise statistics the analyses compute once for every
        method declaring it.
    candidates_reason : callable or None
        ``candidates_reason(base, params) -> str | None``: further conditions of
        ``candidates`` or ``candidate_pairs``.
    per_trial : bool
        ``candidates`` costs a pass per trial: the analyses run it in their workers.
    clone_beats : callable or None
        ``clone_beats(counts, params) -> (k, k) bool``: for a method whose relation between
        two candidates ignores their copies and whose score is the share of drawn opponents
        beaten, the relation on the distinct drawn candidates (ranked once each).
    scores : callable or None
        ``scores(counts, **params) -> scores`` alone (no details), the same as the method's
        scores; with ``warm_start`` it also accepts ``start=`` (one value per candidate of
        ``counts``), and ``multiplicity=`` (copies fitted once: ``counts`` of the distinct
        candidates with each pair weighted by the product of their multiplicities).
    warm_start : callable or None
        ``warm_start(ranking) -> array``: a start for ``scores``, per candidate, from the
        full data's :class:`~metascore.Ranking`.
    counts_reason : callable or None
        ``counts_reason(params) -> str | None``: why the pairwise counts alone do not give
        the scores with these parameters (for a pairwise method that also reads values).
    """

    judges: Callable[..., np.ndarray] | None = None
    judges_reason: Callable[..., str | None] | None = None
    candidates: Callable[..., np.ndarray] | None = None
    candidate_pairs: Callable[..., np.ndarray] | None = None
    candidates_reason: Callable[..., str | None] | None = None
    per_trial: bool = False
    clone_beats: Callable[..., np.ndarray] | None = None
    scores: Callable[..., Any] | None = None
    warm_start: Callable[..., np.ndarray] | None = None
    counts_reason: Callable[[dict[str, Any]], str | None] | None = None

    def __post_init__(self) -> None:
        if self.candidates is not None and self.candidate_pairs is not None:
            raise ValueError("declare either `candidates` or `candidate_pairs`, not both.")
        if self.per_trial and self.candidates is None:
            raise ValueError("`per_trial` describes a `candidates` shortcut; none is declared.")
        if self.warm_start is not None and self.scores is None:
            raise ValueError("`warm_start` is a start for `scores`; declare `scores` too.")


# ---------------------------------------------------------------------- shared statistics
def integer_valued(x: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(x)) and np.all(x == np.round(x)))


def pair_tensor_fits(n: int, m: int) -> bool:
    """Whether the per-judge pair tensor of n candidates and m judges fits in memory."""
    return n * n * m <= COUNTS_LIMIT


def _pair_tensor(ranks: np.ndarray, kind: str, dtype: type) -> np.ndarray:
    """Per-judge pair indicators as an (n * n) x m matrix: ``[rank_aj < rank_bj]`` for
    ``kind="wins"``, ``sign(rank_bj - rank_aj)`` (0 when either is NaN) for ``"margins"``."""
    n, m = ranks.shape
    r = np.asarray(ranks, dtype=float)
    if kind == "wins":
        pairs = r[:, None, :] < r[None, :, :]
    else:
        pairs = np.nan_to_num(np.sign(r[None, :, :] - r[:, None, :]))
    return pairs.reshape(n * n, m).astype(dtype)


def pair_blocks(ranks: np.ndarray, cw: np.ndarray, kind: str = "wins"
                ) -> Iterator[tuple[int, int, np.ndarray]]:
    """Pairwise wins (or margins) of every trial, by blocks of trials, one product per block.

    ``ranks`` are per-judge ranks (n x m, lower is better, NaN = not ranked), ``cw`` the
    weight of each judge in each trial (T x m). Yields ``(lo, hi, x)`` with
    ``x[t - lo, a, b] = sum_j cw[t, j] [rank_aj < rank_bj]`` (``kind="wins"``) or
    ``sum_j cw[t, j] sign(rank_bj - rank_aj)`` (``kind="margins"``), computed in float32
    when every sum is an exact integer below 2**24, else float64, returned as float64.
    """
    n, m = ranks.shape
    trials = cw.shape[0]
    exact32 = integer_valued(cw) and float(np.abs(cw).sum(axis=1).max(initial=0)) < 2**24
    dtype = np.float32 if exact32 else np.float64
    pairs = _pair_tensor(ranks, kind, dtype)
    step = max(1, BLOCK // max(1, n * n))
    for lo in range(0, trials, step):
        hi = min(trials, lo + step)
        block = pairs @ np.ascontiguousarray(cw[lo:hi].T, dtype=dtype)
        yield lo, hi, block.T.reshape(hi - lo, n, n).astype(np.float64)


def pairwise_tallies(ranks: np.ndarray, cw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Head-to-head wins and ties of every candidate in every trial.

    ``ranks`` are per-judge ranks (n x m, lower is better, NaN = not ranked: not compared),
    ``cw`` the weight of each judge in each trial (T x m). The margin of (a, b) in trial t is
    ``sum_j cw[t, j] sign(rank_bj - rank_aj)``; returns ``(won, tied)``, each T x n: the
    number of opponents each candidate beats (margin > 0) and ties (margin = 0). Blocks of
    candidate rows keep the sign tensor under ``BLOCK`` elements; the sums are one matrix
    product per block, in float32 when every sum is an exact integer below 2**24.
    """
    n, m = ranks.shape
    trials = cw.shape[0]
    exact32 = integer_valued(cw) and float(np.abs(cw).sum(axis=1).max(initial=0)) < 2**24
    dtype = np.float32 if exact32 else np.float64
    weights = np.ascontiguousarray(cw.T, dtype=dtype)
    r = np.asarray(ranks, dtype=dtype)  # multiples of 1/2 below 2**23: exact in float32
    has_nan = bool(np.isnan(r).any())
    won = np.zeros((n, trials))
    tied = np.zeros((n, trials))
    rows = max(1, BLOCK // max(1, n * m))
    for a0 in range(0, n - 1, rows):
        a1 = min(n - 1, a0 + rows)
        nb, nc = a1 - a0, n - a0 - 1
        signs = np.subtract(r[None, a0 + 1:, :], r[a0:a1, None, :])
        np.sign(signs, out=signs)
        if has_nan:
            signs[np.isnan(signs)] = 0.0
        margin = (signs.reshape(nb * nc, m) @ weights).reshape(nb, nc, trials)
        upper = (np.arange(nc)[None, :] >= np.arange(nb)[:, None])[:, :, None]  # b > a
        pos, neg, zero = (margin > 0) & upper, (margin < 0) & upper, (margin == 0) & upper
        won[a0:a1] += pos.sum(axis=1)
        won[a0 + 1:] += neg.sum(axis=0)
        tied[a0:a1] += zero.sum(axis=1)
        tied[a0 + 1:] += zero.sum(axis=0)
    return won.T, tied.T


def pair_stats(ranks: np.ndarray, draws: CandidateDraws) -> Iterator[tuple[int, int, PairStats]]:
    """:class:`PairStats` of every block of candidate resamples, one product per block
    (:func:`pair_blocks`); without judge resampling, one block for all trials."""
    c, cw, judges_resampled = draws.c, draws.cw, draws.judges_resampled
    n = ranks.shape[0]
    weights = cw if judges_resampled else cw[:1]
    k = c.sum(axis=1, keepdims=True)
    for lo, hi, wins in pair_blocks(ranks, weights):
        if judges_resampled:
            cb, w = c[lo:hi], weights[lo:hi].sum(axis=1)[:, None]
            beaten_by = np.einsum("tb,tba->ta", cb, wins)
            beats = np.einsum("tab,tb->ta", wins, cb)
        else:
            lo, hi = 0, c.shape[0]
            cb, w = c, np.full((hi, 1), weights[0].sum())
            beaten_by, beats = cb @ wins[0], cb @ wins[0].T
        ties = w * (k[lo:hi] - 1) - beats - beaten_by
        yield lo, hi, PairStats(n, cb, w, wins, beats, beaten_by, ties, judges_resampled)


def reduced_counts(once: PairwiseCounts, multiplicity: np.ndarray) -> PairwiseCounts:
    """The counts of the distinct drawn candidates ``once`` with each pair weighted by the
    product of the two multiplicities (what :attr:`Shortcuts.scores` fits copies on)."""
    both = np.outer(multiplicity, multiplicity).astype(float)
    return PairwiseCounts(once.candidates, once.wins * both, once.compared * both,
                          once.total_weight * float(multiplicity.max()) ** 2)
