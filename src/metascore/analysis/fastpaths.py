"""Fast paths of the bootstrap: scores of resampled matrices without re-ranking them.

For the classical methods whose score is a weighted sum of per-judge contributions
(``mean``, ``average_rank``, ``success_rate``, ``copeland``), the scores of every trial
come from a few matrix products on quantities computed once on the full matrix:

- under judge resampling (:func:`judge_fast_scores`), a trial only reweights the judges;
- under candidate resampling (:func:`candidate_fast_scores`, axis ``candidates`` or
  ``both``), a candidate's rank among the drawn multiset is one plus the weight of the
  drawn candidates that beat it (plus half the ties, copies included), so every score is
  linear in the candidate multiplicities: ``c_t @ N`` with ``N`` the pairwise counts of
  the trial's judges. ``median`` is the weighted median of each row with the trial's judge
  multiplicities as weights.

Each path gives the registry's scores on the resampled matrix (tested against it).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from scipy import stats as _st

from ..missing import prepare
from ._engine import Setup

__all__ = [
    "FAST_METHODS",
    "CANDIDATE_FAST_METHODS",
    "PER_TRIAL_METHODS",
    "CLONE_REDUCIBLE",
    "integer_valued",
    "pair_tensor_fits",
    "fast_path_reason",
    "candidate_fast_reason",
    "pair_blocks",
    "pairwise_tallies",
    "judge_fast_scores",
    "candidate_fast_scores",
]

#: Methods with an exactly equal fast path under judge resampling.
FAST_METHODS = ("mean", "median", "average_rank", "success_rate", "copeland",
                "relative_difference")

#: Elements per block of the pairwise tensors (memory bound of the products).
_BLOCK = 4_000_000

#: Largest n * n * m for which the per-judge win indicators are materialized.
_COUNTS_LIMIT = 60_000_000

def integer_valued(x: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(x)) and np.all(x == np.round(x)))


def pair_tensor_fits(n: int, m: int) -> bool:
    """Whether the per-judge pair tensor of n candidates and m judges fits in memory."""
    return n * n * m <= _COUNTS_LIMIT


def fast_path_reason(s: Setup, name: str) -> str | None:
    """None when ``name`` can use its fast path on ``s`` under judge resampling, else why not.

    A fast path applies when the score of a resampled matrix is a weighted sum of per-judge
    contributions computed once on the full matrix: this holds for ``mean``,
    ``average_rank`` and ``success_rate`` (their contributions are the oriented values, the
    per-judge ranks and the per-judge numbers of beaten opponents) and for ``copeland``
    (the pairwise margins are sums of per-judge signs). It needs every candidate ranked by
    every judge (no missing cell, or ``missing="worst"``), and integer-valued weights for
    ``copeland``, so that margins are exact integers and a zero margin is exactly zero.
    """
    if name not in FAST_METHODS:
        return "no fast path for this method"
    if name == "average_rank" and s.params[name].get("ties", "average") != "average":
        return "average_rank's fast path uses fractional ranks (ties='average')"
    if np.isnan(s.matrix.values).any() and s.missing != "worst":
        return f"missing cells under missing={s.missing!r}"
    if name == "relative_difference" and np.isnan(s.matrix.values).any():
        return "missing cells (relative_difference averages over the pairs both judges score)"
    weights = np.asarray(s.matrix.weights, dtype=float)
    if name == "median" and not np.all(weights == weights[0]):
        return "median's fast path needs equal judge weights"
    if name == "copeland" and not integer_valued(np.asarray(s.matrix.weights)):
        return "non-integer judge weights"
    return None


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
    step = max(1, _BLOCK // max(1, n * n))
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
    candidate rows keep the sign tensor under ``_BLOCK`` elements; the sums are one matrix
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
    rows = max(1, _BLOCK // max(1, n * m))
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


def judge_fast_scores(
    s: Setup, name: str, cw: np.ndarray, tallies: tuple[np.ndarray, np.ndarray] | None
) -> np.ndarray:
    """Scores (T x n) of ``name`` on resampled judges with per-trial judge weights ``cw``."""
    ranks = s.filled_ranks
    total = cw.sum(axis=1)[:, None]
    n = s.n
    if name == "average_rank":
        return -(cw @ ranks.T) / total
    if name in ("mean", "median"):
        values = prepare(s.matrix, s.missing).filled(values_based=True)
        if name == "median":
            return _weighted_medians(values, cw / float(s.matrix.weights[0]))
        return (cw @ values.T) / total
    if name == "success_rate":
        if s.params[name].get("ties", "zero") == "half":
            beaten = n - ranks  # worse + 1/2 (tied others)
        else:
            beaten = n - _st.rankdata(ranks, method="max", axis=0)
        return (cw @ beaten.T) / (total * (n - 1))
    if name == "copeland":
        won, tied = pairwise_tallies(ranks, cw) if tallies is None else tallies
        return (won + 0.5 * tied) / (n - 1)
    if name == "relative_difference":
        base, sgn = _rd_base(s)
        ones = np.ones(n)
        per_judge = np.stack([_rd_terms(base[:, k:k + 1], ones, sgn[k:k + 1])
                              for k in range(s.m)], axis=1)  # sum over opponents, n x m
        return (cw @ per_judge.T) / (total * (n - 1))
    raise AssertionError(name)  # pragma: no cover


# ---------------------------------------------------------------------- relative difference
def _rd_base(s: Setup) -> tuple[np.ndarray, np.ndarray]:
    """What relative_difference divides (raw values, or None for per-subset ranks) and the
    sign of each judge's terms."""
    if s.params["relative_difference"].get("on", "values") == "ranks":
        return s.filled_ranks, -np.ones(s.m)
    signs = np.where(np.asarray(s.matrix.higher_is_better, dtype=bool), 1.0, -1.0)
    return s.matrix.oriented() * signs[None, :], signs


def _rd_terms(base: np.ndarray, c: np.ndarray, ws: np.ndarray) -> np.ndarray:
    """``sum_v c_v sum_k ws_k (b_uk - b_vk) / (b_uk + b_vk)`` for every row u of ``base``,
    a 0/0 term (both cells zero) being 0.

    Written ``2 sum_k ws_k b_uk sum_v c_v / (b_uk + b_vk) - sum_v c_v sum_k ws_k``, so the
    pair tensor costs one addition and one reciprocal; a 0/0 pair, counted -1 by the
    second term, is added back. Blocks of rows keep the tensor under ``_BLOCK`` elements.
    """
    k, m = base.shape
    inverse_sums = np.empty((k, m))
    rows = max(1, _BLOCK // max(1, k * m))
    for a0 in range(0, k, rows):
        a1 = min(k, a0 + rows)
        den = base[a0:a1, None, :] + base[None, :, :]
        with np.errstate(divide="ignore"):
            np.reciprocal(den, out=den)
        inverse_sums[a0:a1] = np.matmul(c, den)
    zero = base == 0
    with np.errstate(invalid="ignore"):
        out = 2.0 * ((base * inverse_sums) @ ws) - c.sum() * ws.sum()
    if zero.any():
        out[zero.any(axis=1)] = 0.0  # rows with a zero cell: recomputed below
        for u in np.flatnonzero(zero.any(axis=1)):
            with np.errstate(invalid="ignore", divide="ignore"):
                term = (base[u] - base) / (base[u] + base)
            term[(base[u] + base) == 0] = 0.0
            out[u] = c @ (term @ ws)
    return out


# ---------------------------------------------------------------------- candidate axis
#: Methods with a fast path under candidate resampling (axis ``candidates`` or ``both``).
CANDIDATE_FAST_METHODS = ("mean", "median", "average_rank", "success_rate", "copeland",
                          "relative_difference")
_PAIRWISE_FAST = ("average_rank", "success_rate", "copeland")
#: Pairwise methods ranked on the distinct drawn candidates: Schulze's relation between two
#: candidates ignores their copies (a beat path through a copy is one through its original,
#: and a copy ties with it), and its score is the share of drawn opponents beaten.
CLONE_REDUCIBLE = ("schulze",)
#: Candidate fast paths computed trial by trial (in the workers when ``jobs > 1``).
PER_TRIAL_METHODS = ("relative_difference",)


def candidate_fast_reason(s: Setup, name: str, judges_resampled: bool) -> str | None:
    """None when ``name`` can use its fast path under candidate resampling, else why not.

    It needs a matrix without missing cells (the worst value a missing cell receives
    depends on the drawn candidates), fractional ranks for ``average_rank``, equal judge
    weights for ``median`` (the median of the resampled judges is then the weighted median
    with their multiplicities) and integer weights for ``copeland`` (exact zero margins).
    """
    if name not in CANDIDATE_FAST_METHODS:
        return "no fast path for this method"
    if np.isnan(s.matrix.values).any():
        return "missing cells (their fill value depends on the drawn candidates)"
    weights = np.asarray(s.matrix.weights, dtype=float)
    if name == "average_rank" and s.params[name].get("ties", "average") != "average":
        return "average_rank's fast path uses fractional ranks (ties='average')"
    if name == "median" and not np.all(weights == weights[0]):
        return "median's fast path needs equal judge weights"
    if name == "copeland" and not integer_valued(weights):
        return "non-integer judge weights"
    if name == "relative_difference" and s.params[name].get("on", "values") == "values" \
            and not pair_tensor_fits(s.n, s.m):
        return "too many candidates x judges for the pairwise tensor"
    if name in _PAIRWISE_FAST and judges_resampled and not pair_tensor_fits(s.n, s.m):
        return "too many candidates x judges for the pairwise tensor"
    return None


def _weighted_medians(values: np.ndarray, cw: np.ndarray) -> np.ndarray:
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


def _pairwise_scores(s: Setup, names: list[str], c: np.ndarray, cw: np.ndarray,
                     judges_resampled: bool) -> dict[str, np.ndarray]:
    """``average_rank``, ``success_rate`` and ``copeland`` from the candidate multiplicities
    ``c`` (T x n) and the pairwise wins of each trial's judges.

    With ``N(a, b)`` the weight of the judges ranking a strictly above b, W the total weight
    and k the number of drawn candidates, the weight of a's ties with the drawn candidates
    (its copies included, itself excluded) is ``W (k - 1) - (N c)_a - (c N)_a``; the rank
    of a summed over the judges is ``W + (c N)_a + ties / 2``, the opponents it beats weigh
    ``(N c)_a``, and its Copeland points are ``(G c)_a - 1/2`` with
    ``G = [margin > 0] + [margin = 0] / 2`` (diagonal 1/2: a copy ties).
    """
    n = s.n
    out = {name: np.empty(c.shape) for name in names}
    weights = cw if judges_resampled else cw[:1]
    k = c.sum(axis=1, keepdims=True)
    for lo, hi, wins in pair_blocks(s.filled_ranks, weights):
        if judges_resampled:
            cb, w = c[lo:hi], weights[lo:hi].sum(axis=1)[:, None]
            beaten_by = np.einsum("tb,tba->ta", cb, wins)
            beats = np.einsum("tab,tb->ta", wins, cb)
        else:
            lo, hi = 0, c.shape[0]
            cb, w = c, np.full((hi, 1), weights[0].sum())
            beaten_by, beats = cb @ wins[0], cb @ wins[0].T
        ties = w * (k[lo:hi] - 1) - beats - beaten_by
        for name in names:
            if name == "average_rank":
                out[name][lo:hi] = -(w + beaten_by + ties / 2.0) / w
            elif name == "success_rate":
                won = beats + ties / 2.0 if s.params[name].get("ties", "zero") == "half" else beats
                out[name][lo:hi] = won / (w * (n - 1))
            else:  # copeland
                margin = wins - wins.transpose(0, 2, 1)
                g = (margin > 0) + 0.5 * (margin == 0)
                points = np.einsum("tab,tb->ta", g, cb) if judges_resampled else cb @ g[0].T
                out[name][lo:hi] = (points - 0.5) / (n - 1)
    return out


def _rd_candidates(s: Setup, cands: np.ndarray, c: np.ndarray, cw: np.ndarray) -> np.ndarray:
    """relative_difference of each trial on its distinct drawn candidates, each opponent
    counted with its multiplicity (a copy's terms are 0). On ranks, a candidate's rank
    among the drawn multiset is one plus the multiplicity of the drawn candidates above
    it plus half that of the others tied with it (copies included): see
    :func:`_rd_rank_terms`."""
    base, sgn = _rd_base(s)
    on_ranks = s.params["relative_difference"].get("on", "values") == "ranks"
    n, m = base.shape
    if on_ranks:  # dense tie groups per judge, 0 = best, flattened per judge
        groups = _st.rankdata(s.filled_ranks, method="dense", axis=0).astype(np.intp) - 1
        flat = groups + n * np.arange(m)[None, :]
        grid = np.arange(2, 2 * cands.shape[1] + 1, dtype=float)  # doubled ranks
        kernel = 2.0 / (grid[:, None] + grid[None, :])
    out = np.full(c.shape, np.nan)
    for t in range(c.shape[0]):
        drawn = np.flatnonzero(c[t])
        mult = c[t, drawn]
        total = cw[t].sum()
        if on_ranks:
            weight = np.bincount(flat[drawn].ravel(), np.repeat(mult, m), minlength=n * m)
            weight = weight.reshape(m, n).T  # multiplicity of each group, per judge
            above = np.cumsum(weight, axis=0) - weight
            g = groups[drawn]
            cols = np.arange(m)[None, :]
            b = 1.0 + above[g, cols] + (weight[g, cols] - 1.0) / 2.0
            terms = _rd_rank_terms(b, mult, cw[t] * sgn, kernel)
        else:
            terms = _rd_terms(base[drawn], mult, cw[t] * sgn)
        out[t, drawn] = terms / (total * (cands.shape[1] - 1))
    return out


def _rd_rank_terms(ranks: np.ndarray, c: np.ndarray, ws: np.ndarray, kernel: np.ndarray
                   ) -> np.ndarray:
    """:func:`_rd_terms` for ranks among K drawn candidates: multiples of 1/2 in [1, K], so
    twice a rank is an integer h in [2, 2K].

    ``sum_v c_v / (b_uk + b_vk)`` is then ``F[2 b_uk, k]`` with ``F = kernel @ H``, where
    ``H[h, k]`` is the multiplicity of the candidates whose doubled rank on judge k is h and
    ``kernel[s, h] = 2 / (s + h)`` (rows and columns from h = 2): one product on the rank
    grid replaces the pair tensor.
    """
    m = ranks.shape[1]
    doubled = np.rint(2.0 * ranks).astype(np.intp) - 2
    cols = np.arange(m)[None, :]
    hist = np.bincount((doubled * m + cols).ravel(), np.repeat(c, m),
                       minlength=kernel.shape[0] * m).reshape(kernel.shape[0], m)
    inverse_sums = (kernel @ hist)[doubled, cols]
    return 2.0 * ((ranks * inverse_sums) @ ws) - c.sum() * ws.sum()


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
    out: dict[str, np.ndarray] = {}
    values = s.matrix.oriented()
    if "mean" in names:
        out["mean"] = (cw @ values.T) / cw.sum(axis=1)[:, None]
    if "median" in names:
        out["median"] = _weighted_medians(values, cw / np.asarray(s.matrix.weights, dtype=float)[0])
    pairwise = [name for name in names if name in _PAIRWISE_FAST]
    if pairwise:
        out.update(_pairwise_scores(s, pairwise, c, cw, judges_resampled))
    if "relative_difference" in names:
        out["relative_difference"] = _rd_candidates(s, cands, c, cw)
    for scores in out.values():
        scores[c == 0] = np.nan
    return out
