"""The exact resampling shortcuts of the classical methods (:mod:`.classical` declares them).

``mean``, ``average_rank``, ``success_rate`` and ``relative_difference`` score a candidate
by a weighted sum of per-judge contributions, so under judge resampling a trial only
reweights contributions computed once on the full matrix; ``copeland`` reads the trial's
head-to-head tallies; ``median`` is the weighted median of each row with the judges'
multiplicities as weights. Under candidate resampling, a candidate's rank among the drawn
multiset is one plus the weight of the drawn candidates that beat it (plus half the ties,
copies included), so ``average_rank``, ``success_rate`` and ``copeland`` are linear in the
candidate multiplicities (:class:`~metascore.resampling.PairStats`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..stats import ranks_along
from ..resampling import (
    BLOCK,
    CandidateDraws,
    JudgeDraws,
    PairStats,
    ResampleBase,
    Shortcuts,
    exact_products,
    integer_valued,
    kept,
    real_products,
)

__all__ = ["MEAN", "MEDIAN", "AVERAGE_RANK", "SUCCESS_RATE", "COPELAND", "RELATIVE_DIFFERENCE",
           "weighted_medians", "count_medians"]

#: Largest n * n * m for which relative_difference on values keeps its per-judge pair
#: terms between blocks of candidate-and-judge resamples (float64: 64 MB); above, each
#: block computes them again, a slab of judges at a time.
RD_TERMS_KEPT = 8_000_000

#: Largest n * m * m for which :func:`count_medians` keeps the indicator of
#: :func:`_short_row_medians` (float32: 64 MB).
SMALL_ROWS = 16_000_000

#: Half-width of the window of :func:`count_medians`, in standard deviations of the count
#: of draws below the median position.
WINDOW_Z = 3.5


def _equal_weights(base: ResampleBase, params: dict[str, Any]) -> str | None:
    weights = np.asarray(base.matrix.weights, dtype=float)
    return None if np.all(weights == weights[0]) else "median's fast path needs equal judge weights"



def _integer_weights(base: ResampleBase, params: dict[str, Any]) -> str | None:
    return None if integer_valued(np.asarray(base.matrix.weights)) else "non-integer judge weights"


def _fractional_ties(base: ResampleBase, params: dict[str, Any]) -> str | None:
    if params.get("ties", "average") != "average":
        return "average_rank's fast path uses fractional ranks (ties='average')"
    return None


def _dense_ties_need_values(params: dict[str, Any]) -> str | None:
    if params.get("ties") == "dense":
        return "average_rank's dense ties need the scores, not only the pairwise counts"
    return None


def weighted_medians(values: np.ndarray, cw: np.ndarray) -> np.ndarray:
    """Median of each row of ``values`` with its columns repeated ``cw[t]`` times (T x n).

    With integer multiplicities, the median of the expanded row is the mean of the first
    value whose cumulative multiplicity reaches half the total and the first one that
    exceeds it (the same value unless the total is even and splits between two values).
    """
    order = np.argsort(values, axis=1, kind="stable")
    xs = np.take_along_axis(values, order, axis=1)
    rows = np.arange(values.shape[0])
    out = np.empty((cw.shape[0], values.shape[0]))
    for t, weights in enumerate(cw):
        cum = np.cumsum(weights[order], axis=1)
        half = cum[:, -1:] / 2.0
        lower = xs[rows, np.argmax(cum >= half, axis=1)]
        upper = xs[rows, np.argmax(cum > half, axis=1)]
        out[t] = (lower + upper) / 2.0
    return out


def count_medians(values: np.ndarray, counts: np.ndarray,
                  cache: dict | None = None) -> np.ndarray:
    """:func:`weighted_medians` for integer multiplicities ``counts`` (T x m), in time
    that does not grow with m per trial beyond one matrix product.

    A row's median sits where the cumulative count of its sorted values crosses half the
    total K; that count at the middle position varies by about sqrt(K) / 2 draws between
    trials. So each row is read only in a window of sorted positions around the middle
    (``WINDOW_Z`` standard deviations wide): the draws before the window come from one
    product with the indicator of the positions before it, and a cumulative sum runs over
    the window alone. A row whose median falls outside its window (about never) is
    computed in full. A window would cover most of the row only for a few draws (the
    drawn columns are then read alone) or a short row (every row's cumulative counts
    from one product: :func:`_short_row_medians`). ``cache`` keeps the sorted rows and
    the indicators between calls.
    """
    cache = {} if cache is None else cache
    n, m = values.shape
    if ("order",) not in cache:
        order = np.argsort(values, axis=1, kind="stable").astype(np.int32)
        cache[("order",)] = (order, np.take_along_axis(values, order, axis=1))
    order, xs = cache[("order",)]
    totals = counts.sum(axis=1)
    out = np.empty((counts.shape[0], n))
    for total in np.unique(totals):
        trials = np.flatnonzero(totals == total)
        block = counts if trials.size == len(counts) else counts[trials]
        half = float(total) / 2.0
        width = int(np.ceil(WINDOW_Z * m / (2.0 * np.sqrt(max(float(total), 1.0))))) + 1
        lo, hi = max(0, m // 2 - width), min(m, m // 2 + width)
        if 4 * (hi - lo) >= m:  # the window would be most of the row
            if 4 * total < m:  # few draws (at most 1,024): the drawn columns only
                for t in trials:
                    drawn = np.flatnonzero(counts[t])
                    out[t] = weighted_medians(values[:, drawn],
                                              counts[t:t + 1, drawn].astype(float))[0]
            elif n * m * m <= SMALL_ROWS and total < 2**24:
                out[trials] = _short_row_medians(order, xs, block, half, cache)
            else:
                out[trials] = weighted_medians(values, block.astype(float))
            continue
        if cache.get("below", (None,))[0] != lo:  # the positions before the window
            below = np.zeros((n, m), dtype=np.int8)
            below[np.arange(n)[:, None], order[:, :lo]] = 1.0
            cache["below"] = (lo, below)
        before = exact_products(block, cache["below"][1], 1.0, True, float(total))  # T x n
        window = block[:, order[:, lo:hi]]  # T x n x width
        cum = np.cumsum(window, axis=2)
        cum += before[:, :, None]
        first = (cum < half).sum(axis=2)  # cum is nondecreasing: the first index >= half
        above = (cum <= half).sum(axis=2)
        outside = (first == hi - lo) | (above == hi - lo) | (before >= half)
        first, above = np.minimum(first, hi - lo - 1), np.minimum(above, hi - lo - 1)
        rows = np.arange(n)[None, :]
        out[trials] = (xs[rows, lo + first] + xs[rows, lo + above]) / 2.0
        for i, a in zip(*np.nonzero(outside)):
            t = trials[i]
            out[t, a] = weighted_medians(values[a:a + 1], counts[t:t + 1].astype(float))[0, 0]
    return out


def _short_row_medians(order: np.ndarray, xs: np.ndarray, counts: np.ndarray, half: float,
                       cache: dict) -> np.ndarray:
    """:func:`weighted_medians` of short rows (sorted ``xs``, their ``order``) for integer
    ``counts`` (T x m) with the same total 2 ``half``: the cumulative counts of every row
    in sorted order are one float32 product with the indicator ``L[j, (a, p)]`` of judge
    j at or before position p of row a (exact: integers below 2**24)."""
    n, m = xs.shape
    if ("at or before",) not in cache:
        position = np.empty_like(order)
        np.put_along_axis(position, order, np.broadcast_to(np.arange(m), (n, m)), axis=1)
        cache[("at or before",)] = (position.T[:, :, None] <= np.arange(m)).reshape(
            m, n * m).astype(np.float32)
    cum = (np.asarray(counts, dtype=np.float32) @ cache[("at or before",)]).reshape(-1, n, m)
    first = (cum < np.float32(half)).sum(axis=2)  # the first position reaching half
    above = (cum <= np.float32(half)).sum(axis=2)  # the first one past it
    rows = np.arange(n)[None, :]
    return (xs[rows, first] + xs[rows, above]) / 2.0


# ---------------------------------------------------------------------- mean, median
def _filled_values(base: ResampleBase) -> np.ndarray:
    return kept(base, ("values",),
                lambda: base.prepared.filled(values_based=True))


def _mean_judges(base: ResampleBase, params: dict[str, Any], draws: JudgeDraws) -> np.ndarray:
    return real_products(draws.cw, _filled_values(base)) / draws.total


def _mean_candidates(base: ResampleBase, params: dict[str, Any], draws: CandidateDraws
                     ) -> np.ndarray:
    cw = draws.cw if draws.judges_resampled else draws.cw[:1]  # the same in every trial
    return real_products(cw, base.matrix.oriented()) / cw.sum(axis=1, dtype=np.float64)[:, None]


def _counts(base: ResampleBase, cw: np.ndarray) -> np.ndarray:
    """The judges' multiplicities from their weights (all judges weigh the same)."""
    weight = float(base.matrix.weights[0])
    return cw if weight == 1.0 else np.rint(cw / weight)


def _median_judges(base: ResampleBase, params: dict[str, Any], draws: JudgeDraws) -> np.ndarray:
    cache = kept(base, ("median",), dict)
    return count_medians(_filled_values(base), _counts(base, draws.cw), cache)


def _median_candidates(base: ResampleBase, params: dict[str, Any], draws: CandidateDraws
                       ) -> np.ndarray:
    # no missing cell here (the analyses' rule), so the filled values are the oriented ones
    cache = kept(base, ("median",), dict)
    cw = draws.cw if draws.judges_resampled else draws.cw[:1]  # the same in every trial
    return count_medians(_filled_values(base), _counts(base, cw), cache)


MEAN = Shortcuts(judges=_mean_judges, candidates=_mean_candidates)
MEDIAN = Shortcuts(judges=_median_judges, judges_reason=_equal_weights,
                   candidates=_median_candidates, candidates_reason=_equal_weights)


# ---------------------------------------------------------------------- rank-based
def _doubled(base: ResampleBase, key: str, make: Any) -> np.ndarray:
    """Twice a per-judge statistic made of multiples of 1/2 (small integers, float32)."""
    return kept(base, ("doubled", key), lambda: (2.0 * make()).astype(np.float32))


def _average_rank_judges(base: ResampleBase, params: dict[str, Any], draws: JudgeDraws
                         ) -> np.ndarray:
    if draws.margins_known():  # a judge's rank is (n + 1) / 2 - sum_b sign_ab / 2
        return draws.margin_sums / (2.0 * draws.total) - (base.n + 1) / 2.0
    ranks = _doubled(base, "ranks", lambda: base.filled_ranks)
    return -exact_products(draws.cw, ranks, 2.0 * base.n, draws.integral,
                           float(draws.total.max())) / (2.0 * draws.total)


def _average_rank_pairs(stats: PairStats, params: dict[str, Any]) -> np.ndarray:
    return -(stats.w + stats.beaten_by + stats.ties / 2.0) / stats.w


def _success_rate_judges(base: ResampleBase, params: dict[str, Any], draws: JudgeDraws
                         ) -> np.ndarray:
    ranks, n = base.filled_ranks, base.n
    if draws.margins_known() and params.get("ties", "zero") == "half":  # wins + ties / 2
        return (draws.margin_sums / draws.total + (n - 1)) / (2.0 * (n - 1))
    if params.get("ties", "zero") == "half":
        beaten = _doubled(base, "beaten_half", lambda: n - ranks)  # worse + 1/2 (tied others)
    else:
        beaten = _doubled(base, "beaten", lambda: n - ranks_along(ranks, "max", axis=0))
    return exact_products(draws.cw, beaten, 2.0 * n, draws.integral,
                          float(draws.total.max())) / (2.0 * draws.total * (n - 1))


def _success_rate_pairs(stats: PairStats, params: dict[str, Any]) -> np.ndarray:
    won = stats.beats + stats.ties / 2.0 if params.get("ties", "zero") == "half" else stats.beats
    return won / (stats.w * (stats.n - 1))


def _copeland_judges(base: ResampleBase, params: dict[str, Any], draws: JudgeDraws) -> np.ndarray:
    won, tied = draws.tallies
    return (won + 0.5 * tied) / (base.n - 1)


def _copeland_pairs(stats: PairStats, params: dict[str, Any]) -> np.ndarray:
    """Copeland points ``(G c)_a - 1/2`` with ``G = [margin > 0] + [margin = 0] / 2``
    (diagonal 1/2: a copy ties); with the judges resampled, G by pair (G(b, a) is
    1 - G(a, b))."""
    if stats.by_pair is not None:
        g = (stats.by_pair > 0) + np.float32(0.5) * (stats.by_pair == 0)
        points = stats.pulls(g, float(stats.c.sum(axis=1).max()), lower=1 - g) + 0.5 * stats.c
        return (points - 0.5) / (stats.n - 1)
    wins = stats.wins
    margin = wins - wins.transpose(0, 2, 1)
    g = (margin > 0) + 0.5 * (margin == 0)
    points = (np.matmul(g, stats.c[:, :, None])[:, :, 0] if stats.judges_resampled
              else stats.c @ g[0].T)
    return (points - 0.5) / (stats.n - 1)


AVERAGE_RANK = Shortcuts(judges=_average_rank_judges, judges_reason=_fractional_ties,
                         candidate_pairs=_average_rank_pairs, candidates_reason=_fractional_ties,
                         counts_reason=_dense_ties_need_values)
SUCCESS_RATE = Shortcuts(judges=_success_rate_judges, candidate_pairs=_success_rate_pairs)
COPELAND = Shortcuts(judges=_copeland_judges, judges_reason=_integer_weights, margins=True,
                     candidate_pairs=_copeland_pairs, candidates_reason=_integer_weights)


# ---------------------------------------------------------------------- relative difference
def _rd_base(base: ResampleBase, params: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """What relative_difference divides (raw values, or the per-judge ranks) and the sign
    of each judge's terms."""
    if params.get("on", "values") == "ranks":
        return base.filled_ranks, -np.ones(base.m)
    signs = np.where(np.asarray(base.matrix.higher_is_better, dtype=bool), 1.0, -1.0)
    return base.matrix.oriented() * signs[None, :], signs


def _rd_rank_terms(ranks: np.ndarray, c: np.ndarray, ws: np.ndarray, kernel: np.ndarray
                   ) -> np.ndarray:
    """``sum_v c_v sum_k ws_k (b_uk - b_vk) / (b_uk + b_vk)`` for every row u of ``ranks``
    (``b``), written ``2 sum_k ws_k b_uk sum_v c_v / (b_uk + b_vk) - sum_v c_v sum_k ws_k``.
    Ranks among K drawn candidates are multiples of 1/2 in [1, K], so twice a rank is an
    integer h in [2, 2K].

    ``sum_v c_v / (b_uk + b_vk)`` is then ``F[2 b_uk, k]`` with ``F = kernel @ H``, where
    ``H[h, k]`` is the multiplicity of the candidates whose doubled rank on judge k is h and
    ``kernel[s, h] = 2 / (s + h)`` (rows and columns from h = 2): one product on the rank
    grid replaces the pair tensor.
    """
    m = ranks.shape[1]
    cells = (np.rint(2.0 * ranks).astype(np.intp) - 2) * m + np.arange(m)  # (2 b_uk - 2, k)
    hist = np.bincount(cells.ravel(), np.repeat(c, m), minlength=kernel.shape[0] * m)
    inverse_sums = (kernel @ hist.reshape(kernel.shape[0], m)).ravel().take(cells)
    return 2.0 * ((ranks * inverse_sums) @ ws) - c.sum() * ws.sum()


def _rd_judges_reason(base: ResampleBase, params: dict[str, Any]) -> str | None:
    if np.isnan(base.matrix.values).any():
        return "missing cells (relative_difference averages over the pairs both judges score)"
    return None


def _rd_judges(base: ResampleBase, params: dict[str, Any], draws: JudgeDraws) -> np.ndarray:
    def terms() -> np.ndarray:  # each judge's sum over opponents, n x m
        b, sgn = _rd_base(base, params)
        ones = np.ones(base.n)
        out = np.empty((base.n, base.m))
        step = max(1, BLOCK // max(1, base.n * base.n))
        for k in range(0, base.m, step):
            out[:, k:k + step] = _rd_judge_terms(b[:, k:k + step], sgn[k:k + step], ones)
        return out

    per_judge = kept(base, ("relative_difference", params.get("on", "values")), terms)
    return real_products(draws.cw, per_judge) / (draws.total * (base.n - 1))


def _rd_judge_terms(b: np.ndarray, sgn: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``sum_v c_v sgn_k (b_uk - b_vk) / (b_uk + b_vk)`` for every row u and judge k
    (n x m; a 0/0 term is 0)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        term = (b[:, None, :] - b[None, :, :]) / (b[:, None, :] + b[None, :, :])
    term[np.isnan(term)] = 0.0
    return np.einsum("v,uvk->uk", c, term) * sgn[None, :]


def _rd_pair_slabs(b: np.ndarray, sgn: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """The signed per-judge pair terms ``D[u, v, k] = sgn_k (b_uk - b_vk) / (b_uk + b_vk)``
    (a 0/0 term 0), a slab of judges at a time: ``(first judge, n x n x judges)``, under
    ``BLOCK`` elements each."""
    n, m = b.shape
    step = max(1, BLOCK // max(1, n * n))
    for k in range(0, m, step):
        x = b[:, k:k + step]
        term = x[:, None, :] + x[None, :, :]
        zero = term == 0
        with np.errstate(invalid="ignore", divide="ignore"):
            np.divide(x[:, None, :] - x[None, :, :], term, out=term)
        term[zero] = 0.0
        term *= sgn[None, None, k:k + step]
        yield k, term


def _rd_value_candidates(base: ResampleBase, params: dict[str, Any], draws: CandidateDraws
                         ) -> np.ndarray:
    """relative_difference on values of a block of candidate resamples, without a pass
    per trial: the score of a drawn candidate u is ``sum_v c_v sum_k w_k D[u, v, k] / (W
    (K - 1))`` with c the multiplicities, K the draws, w the trial's judge weights, W their
    sum and D the per-judge pair terms (:func:`_rd_pair_slabs`). Without judge resampling,
    ``sum_k w_k D[u, v, k]`` is a fixed pair table (kept from the first block); with it,
    ``Z[t, u, k] = sum_v c_tv D[u, v, k] = -(c @ D[v, (u, k)])`` is one product a slab of
    judges (D is antisymmetric), then weighed by each trial's judge weights."""
    b, sgn = _rd_base(base, params)
    n, m = b.shape
    c = draws.c.astype(np.float64)
    draws_less_one = draws.cands.shape[1] - 1
    slabs = (kept(base, ("relative_difference", "pair terms"), lambda: list(_rd_pair_slabs(b, sgn)))
             if n * n * m <= RD_TERMS_KEPT else _rd_pair_slabs(b, sgn))
    if not draws.judges_resampled:
        w = np.asarray(draws.weights(0), dtype=np.float64)

        def table() -> np.ndarray:
            r = np.zeros((n, n))
            for k, slab in slabs:
                r += slab @ w[k:k + slab.shape[2]]
            return r

        pairs = kept(base, ("relative_difference", "pair table"), table)
        return (c @ pairs.T) / (w.sum() * draws_less_one)
    cw = np.asarray(draws.cw, dtype=np.float64)
    scores = np.zeros(c.shape)
    for k, slab in slabs:
        width = slab.shape[2]
        z = c @ slab.reshape(n, n * width)  # -Z[t, u, k] over the slab's judges
        scores -= np.einsum("tuk,tk->tu", z.reshape(len(c), n, width), cw[:, k:k + width])
    return scores / (cw.sum(axis=1)[:, None] * draws_less_one)


def _rd_candidates(base: ResampleBase, params: dict[str, Any], draws: CandidateDraws
                   ) -> np.ndarray:
    """relative_difference of each trial on its distinct drawn candidates, each opponent
    counted with its multiplicity (a copy's terms are 0). On values, a sum over a pair
    table for the whole block (:func:`_rd_value_candidates`). On ranks, one pass per
    trial: a candidate's rank among the drawn multiset is one plus the multiplicity of the
    drawn candidates above it plus half that of the others tied with it (copies
    included): see :func:`_rd_rank_terms`."""
    if params.get("on", "values") == "values":
        return _rd_value_candidates(base, params, draws)
    b, sgn = _rd_base(base, params)
    cands, c = draws.cands, draws.c
    n, m = b.shape
    # dense tie groups per judge, 0 = best, flattened per judge
    groups = ranks_along(base.filled_ranks, "dense", axis=0).astype(np.intp) - 1
    flat = groups + n * np.arange(m)[None, :]  # in an m x n array
    grid = np.arange(2, 2 * cands.shape[1] + 1, dtype=float)  # doubled ranks
    kernel = 2.0 / (grid[:, None] + grid[None, :])
    out = np.full(c.shape, np.nan)
    for t in range(c.shape[0]):
        drawn = np.flatnonzero(c[t])
        mult = c[t, drawn]
        weights = draws.weights(t)
        cells = flat[drawn]  # (judge, tie group) of each drawn candidate
        weight = np.bincount(cells.ravel(), np.repeat(mult, m), minlength=n * m)
        weight = weight.reshape(m, n)  # multiplicity of each tie group, per judge
        above = (np.cumsum(weight, axis=1) - weight).ravel().take(cells)
        ranks = 1.0 + above + (weight.ravel().take(cells) - 1.0) / 2.0
        terms = _rd_rank_terms(ranks, mult, weights * sgn, kernel)
        out[t, drawn] = terms / (weights.sum() * (cands.shape[1] - 1))
    return out


def _rd_on_ranks(params: dict[str, Any]) -> bool:
    """On ranks, the candidate resamples take a pass each (the ranks depend on the draw)."""
    return params.get("on", "values") == "ranks"


RELATIVE_DIFFERENCE = Shortcuts(judges=_rd_judges, judges_reason=_rd_judges_reason,
                                candidates=_rd_candidates, per_trial=_rd_on_ranks)
