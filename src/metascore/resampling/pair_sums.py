"""The numeric kernels of the resampling shortcuts: exact sums over a block of trials.

:func:`exact_products` multiplies the trials' judge weights (T x m) with per-judge features
in float32 where every partial sum is an integer float32 holds (about twice as fast as
float64, and exact), in float64 otherwise; :class:`PairSums` sums every pair of candidates'
per-judge signs and ties with those weights (margins, tallies, wins), :class:`Pulls` sums
pair values with the candidate multiplicities. Every temporary is bounded (``BLOCK``
elements, slabs of judges), so memory does not grow with the number of trials.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["BLOCK", "COUNTS_LIMIT", "integer_valued", "exact_products", "real_products",
           "PairSums", "Pulls", "pair_tensor_fits", "pair_blocks"]

#: Elements per block of the temporary tensors of a shortcut (their memory bound).
BLOCK = 4_000_000

#: Largest n * n * m for which a shortcut may hold the per-judge pair indicators at once.
COUNTS_LIMIT = 60_000_000


def integer_valued(x: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(x)) and np.all(x == np.round(x)))



def exact_products(cw: np.ndarray, features: np.ndarray, peak: float | None = None,
                   integral: bool | None = None, largest: float | None = None) -> np.ndarray:
    """``cw @ features.T`` (T x P, float64) for judge weights ``cw`` (T x m, >= 0) and
    per-judge ``features`` (P x m), by slabs of judges.

    When every weight is an integer, every feature an integer of magnitude at most
    ``peak`` (default: the largest) and a slab's sums stay below 2**24, the slab is
    multiplied in float32: about twice as fast as float64, and exact (every partial sum
    is an integer float32 represents). Otherwise in float64. ``integral``: whether every
    weight is an integer, when the caller knows (else checked); ``largest``: the largest
    row sum of ``cw``, when known. Features may be stored smaller (int8 signs): each slab
    is converted on the way, about ``BLOCK`` values.
    """
    trials, m = cw.shape
    if not trials or not m or not features.shape[0]:
        return np.zeros((trials, features.shape[0]))
    integral = integer_valued(cw) if integral is None else integral
    if not (integral and (peak is not None or integer_valued(features))):
        return real_products(cw, features)
    peak = float(np.abs(features).max()) if peak is None else peak
    slab = m if features.dtype == np.float32 else max(1, BLOCK // features.shape[0])
    largest = float(cw.sum(axis=1, dtype=np.float64).max()) if largest is None else largest
    if largest * peak >= 2**24:  # weights are >= 0
        # a slab of s judges sums to at most s * max(cw) * peak
        slab = min(slab, max(1, int((2**24 - 1) // (float(cw.max()) * max(peak, 1.0)))))
    out = np.zeros((trials, features.shape[0]))
    for j0 in range(0, m, slab):
        w = np.asarray(cw[:, j0:j0 + slab], dtype=np.float32)
        out += w @ np.asarray(features[:, j0:j0 + slab], dtype=np.float32).T
    return out


def real_products(cw: np.ndarray, features: np.ndarray) -> np.ndarray:
    """``cw @ features.T`` in float64, by slabs of judges (bounded temporaries)."""
    trials, m = cw.shape
    out = np.zeros((trials, features.shape[0]))
    slab = max(1, BLOCK // max(1, trials + features.shape[0]))
    for j0 in range(0, m, slab):
        out += (np.asarray(cw[:, j0:j0 + slab], dtype=np.float64)
                @ np.asarray(features[:, j0:j0 + slab], dtype=np.float64).T)
    return out



class PairSums:
    """The pairs of every judge of the full data, summed with per-trial judge weights.

    ``ranks`` are per-judge ranks (n x m, lower is better, no NaN). For each pair
    ``a < b`` (``a``, ``b``: :func:`numpy.triu_indices` order) and judge j the sign
    ``sign(rank_bj - rank_aj)`` (+1: a above b) and, for the judges that tie some pair,
    the tie indicator; :meth:`margins` and :meth:`ties` weight them with the judge weights
    of a block of trials, one matrix product each (:func:`exact_products`). The signs are
    kept as int8 when they fit in ``KEEP`` bytes, else rebuilt slab by slab.
    """

    KEEP = 400_000_000
    KEEP32 = 16_000_000  # signs kept in float32 too (64 MB) for :meth:`pair_margins`

    def __init__(self, ranks: np.ndarray) -> None:
        ranks = np.asarray(ranks, dtype=float)
        if np.isnan(ranks).any():
            raise ValueError("PairSums needs every judge to rank every candidate.")
        self.ranks = ranks
        self.n, self.m = ranks.shape
        self.a, self.b = np.triu_indices(self.n, 1)
        sorted_ranks = np.sort(ranks, axis=0)
        self.tied = np.flatnonzero((sorted_ranks[1:] == sorted_ranks[:-1]).any(axis=0))
        self._signs = self._slab(0, self.m) if self.a.size * self.m <= self.KEEP else None
        self._signs32: np.ndarray | None = None  # float32 copies, made on first use
        self._ties32: np.ndarray | None = None
        self._ties = (ranks[self.a][:, self.tied] == ranks[self.b][:, self.tied]).astype(
            np.int8) if self.tied.size else None

    def _slab(self, j0: int, j1: int) -> np.ndarray:
        r = self.ranks[:, j0:j1]
        signs = np.empty((self.a.size, j1 - j0), dtype=np.int8)
        for a in range(self.n - 1):  # the pairs (a, b > a) are contiguous rows
            lo = a * self.n - a * (a + 1) // 2
            np.sign(r[a + 1:] - r[a], out=signs[lo:lo + self.n - 1 - a], casting="unsafe")
        return signs

    def margins(self, cw: np.ndarray, integral: bool | None = None,
                largest: float | None = None) -> np.ndarray:
        """``sum_j cw[t, j] sign(rank_bj - rank_aj)`` for every trial and pair (T x P)
        (``integral``, ``largest``: see :func:`exact_products`)."""
        if self._signs is not None:
            return exact_products(cw, self._signs, 1.0, integral, largest)
        step = max(1, self.KEEP // max(1, self.a.size))
        return sum(exact_products(cw[:, j0:j0 + step], self._slab(j0, min(self.m, j0 + step)),
                                  1.0, integral, largest) for j0 in range(0, self.m, step))

    def pair_margins(self, cw: np.ndarray, integral: bool | None = None,
                     largest: float | None = None) -> np.ndarray:
        """:meth:`margins` laid out pairs x trials (P x T), what :meth:`net_sums`,
        :meth:`tallies` and :class:`Pulls` read. One float32 product when it is exact
        (integer weights whose trial totals stay below 2**24: every partial sum is an
        integer float32 holds), and then kept in float32; else :meth:`margins` transposed."""
        integral = integer_valued(cw) if integral is None else integral
        largest = _largest(cw) if largest is None else largest
        if (self._signs is None or self._signs.size > self.KEEP32 or not integral
                or largest >= 2**24 or not cw.size):
            return self.margins(cw, integral, largest).T
        if self._signs32 is None:
            self._signs32 = self._signs.astype(np.float32)
        return self._signs32 @ np.asarray(cw, dtype=np.float32).T

    def pair_counts(self, cw: np.ndarray, integral: bool | None = None
                    ) -> tuple[np.ndarray, np.ndarray | None, float]:
        """The margins ``M_t(a, b)`` and the tied weights ``Z_t(a, b)`` of every pair
        a < b (P x T each; None: no judge ties) and the largest trial weight: float32
        when every value and every half of one is exact there (totals below 2**23),
        else float64. ``N(a, b) = (W - Z(a, b) + M(a, b)) / 2``."""
        integral = integer_valued(cw) if integral is None else integral
        largest = _largest(cw)
        margins = self.pair_margins(cw, integral, largest)
        dtype = np.float32 if margins.dtype == np.float32 and largest < 2**23 else np.float64
        if self._ties is None:
            ties = None
        elif dtype == np.float32 and self._ties.size <= self.KEEP32:  # exact as the margins
            if self._ties32 is None:
                self._ties32 = self._ties.astype(np.float32)
            ties = self._ties32 @ np.asarray(cw[:, self.tied], dtype=np.float32).T
        else:
            ties = self.ties(cw, integral, largest).T.astype(dtype)
        return margins.astype(dtype, copy=False), ties, largest

    @cached_property
    def _incidence(self) -> tuple[Any, Any]:
        """Pair p = (a, b) as columns of two n x P sparse matrices: +1 at a and -1 at b
        (a row's sum of an antisymmetric matrix), +1 at both (how many pairs a row holds)."""
        first, second = self._ends
        return (first - second).tocsr(), (first + second).tocsr()

    def net_sums(self, pair_margins: np.ndarray, largest: float) -> np.ndarray:
        """``sum_b M_t(a, b)`` (T x n, float64) from :meth:`pair_margins` (P x T), with
        ``largest`` the largest trial weight: one sparse product, exact in float32 while
        the sums stay below 2**24 (else in float64)."""
        net = self._incidence[0]
        if pair_margins.dtype != np.float32 or largest * (self.n - 1) >= 2**24:
            net = net.astype(np.float64)
        return np.asarray((net @ pair_margins).T, dtype=np.float64)

    def tallies(self, pair_margins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Head-to-head ``(won, tied)`` of every candidate in every trial (T x n each):
        the opponents with a positive margin and with a zero one, from the signs of
        :meth:`pair_margins` (P x T) by two sparse products (counts: exact in float32)."""
        signs = np.sign(pair_margins).astype(np.float32, copy=False)
        net, touch = self._incidence
        balance = (net @ signs).T.astype(np.float64)  # won - lost
        decided = (touch @ np.abs(signs)).T.astype(np.float64)  # won + lost
        return (decided + balance) / 2.0, (self.n - 1) - decided

    @cached_property
    def _ends(self) -> tuple[Any, Any]:
        """Pair p = (a, b) as a column of n x P sparse matrices: 1 at a; 1 at b."""
        p, ones = np.arange(self.a.size), np.ones(self.a.size, dtype=np.float32)
        return (sp.csr_array((ones, (self.a, p)), shape=(self.n, self.a.size)),
                sp.csr_array((ones, (self.b, p)), shape=(self.n, self.a.size)))

    def ties(self, cw: np.ndarray, integral: bool | None = None,
             largest: float | None = None) -> np.ndarray:
        """``sum_j cw[t, j] [rank_aj = rank_bj]`` for every trial and pair (T x P)."""
        if self._ties is None:
            return np.zeros((cw.shape[0], self.a.size))
        return exact_products(np.ascontiguousarray(cw[:, self.tied]), self._ties, 1.0, integral,
                              largest)

    def square(self, upper: np.ndarray, sign: float, lower: np.ndarray | None = None
               ) -> np.ndarray:
        """T x n x n from T x P values of the pairs a < b; (b, a) gets ``sign`` times
        them, or ``lower`` (T x P) when given.

        The pairs of one row ``a`` are contiguous (``triu_indices`` order): they fill row
        ``a`` right of the diagonal and column ``a`` below it, one slice each (several
        times faster than a scatter by pair indices)."""
        out = np.zeros((upper.shape[0], self.n, self.n))
        if lower is None and sign != 0.0:
            lower = upper if sign == 1.0 else sign * upper
        for a in range(self.n - 1):
            lo, hi = a * self.n - a * (a + 1) // 2, (a + 1) * self.n - (a + 1) * (a + 2) // 2
            out[:, a, a + 1:] = upper[:, lo:hi]
            if lower is not None:
                out[:, a + 1:, a] = lower[:, lo:hi]
        return out

    def wins(self, cw: np.ndarray, integral: bool | None = None) -> np.ndarray:
        """``N_t(a, b) = sum_j cw[t, j] [rank_aj < rank_bj]`` (T x n x n): half of the
        total weight less the ties, plus or minus half the margin (:meth:`pair_counts`).
        A view of an n x n x T array: each pair's T values are contiguous, as the
        products give them, so every row of pairs is copied in one slice."""
        margins, tied, _ = self.pair_counts(cw, integral)
        half = (cw.sum(axis=1, dtype=np.float64)[None, :] - (0.0 if tied is None else tied)) / 2.0
        above, below = half + margins / 2.0, half - margins / 2.0
        out = np.zeros((self.n, self.n, cw.shape[0]))
        for a in range(self.n - 1):
            lo, hi = a * self.n - a * (a + 1) // 2, (a + 1) * self.n - (a + 1) * (a + 2) // 2
            out[a, a + 1:] = above[lo:hi]
            out[a + 1:, a] = below[lo:hi]
        return out.transpose(2, 0, 1)


def _largest(cw: np.ndarray) -> float:
    """The largest total weight of a trial."""
    return float(cw.sum(axis=1, dtype=np.float64).max(initial=0.0))


class Pulls:
    """Sums ``sum_b X_t(a, b) c_t(b)`` over the pairs of :class:`PairSums` for one
    block's multiplicities c (T x n), each by two sparse products (:meth:`__call__`);
    c at both ends of every pair (P x T) is gathered once per precision."""

    def __init__(self, pairs: PairSums, c: np.ndarray) -> None:
        self.pairs, self.c = pairs, c
        self._gathered: dict[Any, tuple[np.ndarray, np.ndarray]] = {}

    def _ends(self, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
        if dtype not in self._gathered:
            ct = np.asarray(self.c, dtype=dtype).T  # n x T
            self._gathered[dtype] = (ct[self.pairs.b], ct[self.pairs.a])
        return self._gathered[dtype]

    def __call__(self, upper: np.ndarray, bound: float, lower: np.ndarray | None = None,
                 sign: float = 1.0) -> np.ndarray:
        """The sums (T x n) for ``X(a, b) = upper[p]`` and ``X(b, a) = lower[p]`` (default
        ``sign`` times ``upper[p]``) for each pair p = (a, b), a < b (P x T each), and
        X(a, a) = 0. In float32 when the inputs are and ``bound`` (the largest ``|X|``
        times the largest total of c) is below 2**23 (sums of halves of integers:
        exact), else in float64."""
        dtype = np.float32 if (upper.dtype == np.float32 and bound < 2**23 and (
            lower is None or lower.dtype == np.float32)) else np.float64
        at_b, at_a = self._ends(dtype)
        first, second = self.pairs._ends
        if dtype == np.float64:
            first, second = first.astype(np.float64), second.astype(np.float64)
        upper = np.asarray(upper, dtype=dtype)
        out = first @ (upper * at_b)
        if lower is None:
            back = second @ (upper * at_a)
            out += back if sign == 1.0 else sign * back
        else:
            out += second @ (np.asarray(lower, dtype=dtype) * at_a)
        return out.T.astype(np.float64)


def pair_tensor_fits(n: int, m: int) -> bool:
    """Whether the per-judge pair indicators of n candidates and m judges fit at once."""
    return n * n * m <= COUNTS_LIMIT


def pair_blocks(ranks: np.ndarray, cw: np.ndarray, kind: str = "wins"
                ) -> Iterator[tuple[int, int, np.ndarray]]:
    """The trials' pairwise wins (``kind="wins"``: ``sum_j cw[t, j] [rank_aj < rank_bj]``)
    or margins (``"margins"``), T x n x n, as one block ``(0, T, x)`` (:class:`PairSums`,
    which bounds its own memory)."""
    pairs = PairSums(ranks)
    yield 0, cw.shape[0], (pairs.wins(cw) if kind == "wins"
                           else pairs.square(pairs.margins(cw), -1.0))


