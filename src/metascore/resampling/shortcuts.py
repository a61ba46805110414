"""The resampling contract: what a ranking method declares (:class:`Shortcuts`), the full
data a shortcut reads (:class:`ResampleBase`) and what it is handed for a block of trials.

A shortcut receives judge resamples (:class:`JudgeDraws`: each trial's judge weights, and
the trials' head-to-head margins and tallies computed once for every method that reads
them) or candidate resamples (:class:`CandidateDraws`: each candidate's multiplicity in
each trial; :class:`PairStats`: the pairwise statistics of the drawn candidates,
:func:`pair_stats`). What it computes once from the full data it keeps in ``base.cache``
(:func:`kept`). The numeric kernels behind these statistics are in :mod:`.pair_sums`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from ..matrix import ScoreMatrix
from ..missing import Prepared
from ..pairwise import PairwiseCounts
from .pair_sums import PairSums, Pulls

__all__ = ["Shortcuts", "ResampleBase", "JudgeDraws", "CandidateDraws", "PairStats", "kept",
           "pair_stats", "reduced_counts"]


class ResampleBase(Protocol):
    """The full data every shortcut reads (the analyses' validated input).

    ``prepared`` is the score matrix after the missing-data policy ``missing`` (its
    ``matrix`` and filled values); ``filled_ranks`` the per-judge fractional ranks (n x m,
    1 = best; a missing cell is tied last under ``missing="worst"``, NaN otherwise); ``n``
    and ``m`` its shape; ``cache`` a dict where shortcuts keep what they compute once
    (:func:`kept`).
    """

    filled_ranks: np.ndarray
    cache: dict[Any, Any]

    @property
    def prepared(self) -> Prepared: ...

    @property
    def matrix(self) -> ScoreMatrix: ...

    @property
    def missing(self) -> str: ...

    @property
    def n(self) -> int: ...

    @property
    def m(self) -> int: ...


@dataclass(frozen=True, eq=False)
class CandidateDraws:
    """Candidate resamples (axis ``candidates`` or ``both``).

    ``cands`` holds each trial's drawn candidate positions (T x k, with repeats), ``c`` the
    multiplicity of each candidate in each trial (T x n), ``cw`` each trial's judge weights
    (T x m; when not ``judges_resampled``, a read-only view of the same weights in every
    row: ``cw[:1]`` is all a shortcut needs then).
    """

    cands: np.ndarray
    c: np.ndarray
    cw: np.ndarray
    judges_resampled: bool

    def weights(self, t: int) -> np.ndarray:
        """The judge weights of trial t."""
        return self.cw[t if self.judges_resampled else 0]


@dataclass(frozen=True, eq=False)
class PairStats:
    """The sufficient statistics of a block of candidate resamples.

    With ``N(a, b)`` the weight of the trial's judges ranking a strictly above b (``wins``,
    one n x n matrix per trial, or a single one when the judges were not resampled), W
    their total weight (``w``, per trial) and ``c`` the candidate multiplicities:
    ``beats = N c`` (the weight of drawn opponents each candidate beats, copies included),
    ``beaten_by = c N`` and ``ties = W (k - 1) - beats - beaten_by`` (the weight of its
    ties with the other drawn candidates, its copies included). With the judges
    resampled, ``by_pair`` holds each trial's margins by pair (P x T,
    :meth:`PairSums.pair_margins`) and ``pulls`` the :class:`Pulls` that sum them with
    the multiplicities; ``wins`` is then squared from the pairs when first read.
    """

    n: int
    c: np.ndarray
    w: np.ndarray
    beats: np.ndarray
    beaten_by: np.ndarray
    ties: np.ndarray
    judges_resampled: bool
    wins_of: Callable[[], np.ndarray] = field(repr=False)
    by_pair: np.ndarray | None = None
    pulls: Pulls | None = None

    @cached_property
    def wins(self) -> np.ndarray:
        return self.wins_of()



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
        resampling (any value for a candidate not drawn; a single row (1, n) when the
        scores do not depend on the drawn candidates and the judges were not resampled).
        Applied only without missing cells.
    candidate_pairs : callable or None
        ``candidate_pairs(stats: PairStats, params) -> (T, n) scores`` under candidate
        resampling, from the pairwise statistics the analyses compute once for every
        method declaring it.
    candidates_reason : callable or None
        ``candidates_reason(base, params) -> str | None``: further conditions of
        ``candidates`` or ``candidate_pairs``.
    per_trial : bool or callable
        ``candidates`` costs a pass per trial: the analyses run it in their workers and
        report its cost. A callable ``per_trial(params) -> bool`` says it for the
        method's parameters (:meth:`one_at_a_time`).
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
    margins : bool
        The ``judges`` shortcut reads the trials' head-to-head margins
        (:attr:`JudgeDraws.margins`): the analyses compute them first, so that other
        shortcuts may read them too instead of a product of their own.
    """

    judges: Callable[..., np.ndarray] | None = None
    judges_reason: Callable[..., str | None] | None = None
    candidates: Callable[..., np.ndarray] | None = None
    candidate_pairs: Callable[..., np.ndarray] | None = None
    candidates_reason: Callable[..., str | None] | None = None
    per_trial: bool | Callable[[dict[str, Any]], bool] = False
    clone_beats: Callable[..., np.ndarray] | None = None
    scores: Callable[..., Any] | None = None
    warm_start: Callable[..., np.ndarray] | None = None
    counts_reason: Callable[[dict[str, Any]], str | None] | None = None
    margins: bool = False

    def __post_init__(self) -> None:
        if self.candidates is not None and self.candidate_pairs is not None:
            raise ValueError("declare either `candidates` or `candidate_pairs`, not both.")
        if self.per_trial and self.candidates is None:
            raise ValueError("`per_trial` describes a `candidates` shortcut; none is declared.")
        if self.warm_start is not None and self.scores is None:
            raise ValueError("`warm_start` is a start for `scores`; declare `scores` too.")

    def one_at_a_time(self, params: dict[str, Any]) -> bool:
        """Whether ``candidates`` takes a pass per trial with these parameters."""
        return bool(self.per_trial(params) if callable(self.per_trial) else self.per_trial)


def kept(base: ResampleBase, key: Any, make: Callable[[], Any]) -> Any:
    """``base.cache[key]``, made by ``make()`` the first time (what a shortcut computes
    once from the full data and reuses on every block of trials)."""
    if key not in base.cache:
        base.cache[key] = make()
    return base.cache[key]



@dataclass(frozen=True, eq=False)
class JudgeDraws:
    """Judge resamples: ``cw[t, j]``, the weight of judge j in trial t (its weight times
    how many times it was drawn), T x m. ``ranks`` are the full data's per-judge ranks;
    ``pairs`` their :class:`PairSums` when the caller keeps one, or a function giving it on
    first use (else made on demand: only a shortcut that reads pairs pays for their n x n
    / 2 signs); ``integral``: whether every weight is an integer, when the caller knows."""

    ranks: np.ndarray
    cw: np.ndarray
    pairs: PairSums | Callable[[], PairSums] | None = None
    integral: bool | None = None

    @cached_property
    def total(self) -> np.ndarray:
        """Total judge weight of each trial, T x 1."""
        return self.cw.sum(axis=1, dtype=np.float64)[:, None]

    @cached_property
    def pair_sums(self) -> PairSums:
        if self.pairs is None:
            return PairSums(self.ranks)
        return self.pairs() if callable(self.pairs) else self.pairs

    def margins_known(self) -> bool:
        """Whether the margins are already computed (another shortcut asked for them):
        :attr:`margin_sums` is then one sparse product."""
        return "pair_margins" in self.__dict__ or "margins" in self.__dict__

    @cached_property
    def pair_margins(self) -> np.ndarray:
        """Head-to-head margins of every trial by pair (P x T: :meth:`PairSums.pair_margins`)."""
        return self.pair_sums.pair_margins(self.cw, self.integral, float(self.total.max()))

    @cached_property
    def margins(self) -> np.ndarray:
        """Head-to-head margins of every trial, T x n x n (``N(a, b) - N(b, a)``)."""
        pairs = self.pair_sums
        upper = (self.pair_margins.T if "pair_margins" in self.__dict__
                 else pairs.margins(self.cw, self.integral, float(self.total.max())))
        return pairs.square(upper, -1.0)

    @cached_property
    def margin_sums(self) -> np.ndarray:
        """``sum_b N(a, b) - N(b, a)`` of every candidate in every trial, T x n."""
        if "margins" in self.__dict__:
            return self.margins.sum(axis=2)
        return self.pair_sums.net_sums(self.pair_margins, float(self.total.max()))

    @cached_property
    def tallies(self) -> tuple[np.ndarray, np.ndarray]:
        """Head-to-head ``(won, tied)`` of every candidate in every trial, each T x n: the
        opponents it beats (margin > 0) and ties (margin = 0)."""
        return self.pair_sums.tallies(self.pair_margins)


def pair_stats(draws: CandidateDraws, wins: np.ndarray | None = None,
               pulls: Pulls | None = None, integral: bool | None = None) -> PairStats:
    """:class:`PairStats` of candidate resamples from ``wins``, the trials' ``N(a, b)``
    (T x n x n, or 1 x n x n for all when the judges were not resampled), or, with the
    judges resampled, from the judges' pairs (:meth:`PairSums.pair_counts`, summed by
    ``pulls``, :class:`Pulls` of these multiplicities: no n x n matrix per trial;
    ``integral``: whether every weight is an integer, when known)."""
    c, cw = draws.c, draws.cw
    k = c.sum(axis=1, keepdims=True)
    w = cw.sum(axis=1, dtype=np.float64)[:, None]
    by_pair = None
    if draws.judges_resampled and wins is None:
        pairs = pulls.pairs
        margins, tied, largest = pairs.pair_counts(cw, integral)  # M(a, b), Z(a, b): P x T
        bound = largest * float(k.max(initial=0.0))
        net = pulls(margins, bound, sign=-1.0)  # sum_b M(a, b) c_b
        rest = w * (k - c)  # sum_b W c_b over the other candidates (copies included)
        if tied is not None:
            rest = rest - pulls(tied, bound)  # less sum_b Z(a, b) c_b
        beats, beaten_by = (rest + net) / 2.0, (rest - net) / 2.0  # N(a, b) = (W - Z + M) / 2
        by_pair = margins
        wins_of = lambda: pairs.wins(cw, integral)  # noqa: E731  (when a method reads it)
    elif draws.judges_resampled:
        beaten_by = np.matmul(c[:, None, :], wins)[:, 0, :]
        beats = np.matmul(wins, c[:, :, None])[:, :, 0]
        wins_of = lambda: wins  # noqa: E731
    else:
        beaten_by, beats = c @ wins[0], c @ wins[0].T
        wins_of = lambda: wins  # noqa: E731
    ties = w * (k - 1) - beats - beaten_by
    return PairStats(c.shape[1], c, w, beats, beaten_by, ties, draws.judges_resampled,
                     wins_of, by_pair, pulls)



def reduced_counts(once: PairwiseCounts, multiplicity: np.ndarray) -> PairwiseCounts:
    """The counts of the distinct drawn candidates ``once`` with each pair weighted by the
    product of the two multiplicities (what :attr:`Shortcuts.scores` fits copies on)."""
    both = np.outer(multiplicity, multiplicity).astype(float)
    return PairwiseCounts(once.candidates, once.wins * both, once.compared * both,
                          once.total_weight * float(multiplicity.max()) ** 2)
