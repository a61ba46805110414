"""Rank statistics: fractional ranks, rank correlations, distances and concordance.

Conventions shared by every method (docs/methods.md): ranks are fractional ("average")
and 1 is best, computed on values where higher is better:
``rank(v)_i = 1 + #{j: v_j > v_i} + 1/2 #{j != i: v_j = v_i}``.
"""

from __future__ import annotations

import numpy as np

from .errors import ConfigError, InputError
from .ranking import tie_groups

__all__ = [
    "fractional_ranks",
    "ranks_along",
    "dense_ranks",
    "spearman",
    "kendall_tau_b",
    "kendall_tau_distance",
    "kendall_w",
    "kendall_w_of_ranks",
    "mean_spearman_from_w",
    "KENDALL_TIES",
]

#: How :func:`kendall_tau_distance` counts a pair tied in one ranking.
KENDALL_TIES = ("ignore", "half")


def fractional_ranks(values: np.ndarray, axis: int = 0) -> np.ndarray:
    """Fractional ranks (1 = best, ties share the average) of higher-is-better values.

    NaN values get NaN ranks and the others are ranked among themselves.

    >>> fractional_ranks(np.array([0.9, 0.5, 0.9, 0.1])).tolist()
    [1.5, 3.0, 1.5, 4.0]
    """
    values = np.asarray(values, dtype=float)
    if values.ndim == 2 and axis in (0, -2) and values.shape[1] >= COLUMN_RANKS_FROM:
        return _column_ranks(values)
    return ranks_along(-values, "average", axis)


def ranks_along(values: np.ndarray, method: str = "average", axis: int = -1) -> np.ndarray:
    """Ranks along ``axis``, 1 = smallest, as :func:`scipy.stats.rankdata` with
    ``nan_policy="omit"``: a NaN gets a NaN rank and the others are ranked among
    themselves. Ties: ``"average"`` (fractional, float), ``"min"``, ``"max"`` or
    ``"dense"`` (integers; float when some value is NaN).

    >>> ranks_along(np.array([3.0, 1.0, 3.0, np.nan, 2.0])).tolist()
    [3.5, 1.0, 3.5, nan, 2.0]
    """
    if method not in ("average", "min", "max", "dense"):
        raise ConfigError(f"unknown tie method {method!r}; use 'average', 'min', 'max' or 'dense'.")
    x = np.moveaxis(np.asarray(values, dtype=float), axis, -1)
    shape = x.shape
    if not x.size:
        return np.moveaxis(x.copy() if method == "average" else x.astype(np.intp), -1, axis)
    rows = x.reshape(-1, shape[-1])
    order = np.argsort(rows, axis=1, kind="stable")  # NaN last
    xs = np.take_along_axis(rows, order, axis=1)
    new = np.ones(xs.shape, dtype=bool)  # a tie group starts here
    new[:, 1:] = xs[:, 1:] != xs[:, :-1]  # NaN != NaN: each its own group
    pos = np.arange(xs.shape[1])
    if method == "dense":
        ranked = np.cumsum(new, axis=1)
    else:
        last = np.ones(xs.shape, dtype=bool)
        last[:, :-1] = new[:, 1:]
        start = np.maximum.accumulate(np.where(new, pos, 0), axis=1)
        end = np.minimum.accumulate(np.where(last, pos, pos[-1:])[:, ::-1], axis=1)[:, ::-1]
        if method == "average":
            ranked = (start + end) / 2.0 + 1.0
        elif method == "min":
            ranked = start + 1
        else:  # "max"
            ranked = end + 1
    out = np.empty(rows.shape, dtype=ranked.dtype)
    np.put_along_axis(out, order, ranked, axis=1)
    missing = np.isnan(rows)
    if missing.any():
        out = out.astype(float)
        out[missing] = np.nan
    return np.moveaxis(out.reshape(shape), -1, axis)


#: From this many columns, :func:`fractional_ranks` along axis 0 sorts each column as a
#: contiguous row, a block of columns at a time (scipy's ``rankdata`` along a short first
#: axis is several times slower on per-sample judges: 20 x 471,033 values).
COLUMN_RANKS_FROM = 1000
_RANK_BLOCK = 1 << 21  # values per block


def _column_ranks(values: np.ndarray) -> np.ndarray:
    """:func:`fractional_ranks` along axis 0 of a 2-D array, a block of columns at a time."""
    n, m = values.shape
    out = np.empty((n, m))
    step = max(1, _RANK_BLOCK // max(n, 1))
    pos = np.arange(n)
    for a in range(0, m, step):
        y = np.ascontiguousarray(-values[:, a:a + step].T)  # one column per row, lower is better
        order = np.argsort(y, axis=1, kind="stable")  # NaN last
        ys = np.take_along_axis(y, order, axis=1)
        new = np.ones(ys.shape, dtype=bool)
        new[:, 1:] = ys[:, 1:] != ys[:, :-1]  # NaN != NaN: each its own group
        start = np.maximum.accumulate(np.where(new, pos, 0), axis=1)
        last = np.ones(ys.shape, dtype=bool)
        last[:, :-1] = new[:, 1:]
        end = np.minimum.accumulate(np.where(last, pos, n)[:, ::-1], axis=1)[:, ::-1]
        ranks = np.empty(ys.shape)
        np.put_along_axis(ranks, order, (start + end) / 2.0 + 1.0, axis=1)
        out[:, a:a + step] = ranks.T
    out[np.isnan(values)] = np.nan
    return out


def dense_ranks(values: np.ndarray) -> np.ndarray:
    """Dense ranks per column (1 = best; equal values share a rank and the next distinct
    value gets the next integer: 1, 2, 2, 3) of higher-is-better values.

    NaN values get NaN ranks; ``-inf`` values (missing cells under ``missing="worst"``)
    tie with each other below every finite value. This is CodaLab v1's per-column rank.

    >>> dense_ranks(np.array([[0.9], [0.5], [0.9], [0.1]]))[:, 0].tolist()
    [1.0, 2.0, 1.0, 3.0]
    """
    x = np.asarray(values, dtype=float)
    one_d = x.ndim == 1
    x = x[:, None] if one_d else x
    y = -x  # lower is better; NaN stays NaN and sorts last
    order = np.argsort(y, axis=0, kind="stable")
    ys = np.take_along_axis(y, order, axis=0)
    new = np.ones_like(ys, dtype=np.int64)
    new[1:] = ys[1:] != ys[:-1]  # inf == inf: missing cells share one rank
    ranks = np.empty_like(ys)
    np.put_along_axis(ranks, order, np.cumsum(new, axis=0).astype(float), axis=0)
    ranks[np.isnan(x)] = np.nan
    return ranks[:, 0] if one_d else ranks


def _pair(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise InputError(f"need two 1-D vectors of the same length; got {x.shape} and {y.shape}.")
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho between two score (or rank) vectors; NaN pairs are dropped.

    Returns NaN when either vector is constant or fewer than 2 pairs remain.
    """
    x, y = _pair(x, y)
    if x.size < 2:
        return float("nan")
    rx, ry = ranks_along(x), ranks_along(y)
    sx, sy = rx.std(), ry.std()
    if sx == 0 or sy == 0:
        return float("nan")
    return float(np.mean((rx - rx.mean()) * (ry - ry.mean())) / (sx * sy))


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b (tie-corrected) between two vectors; NaN pairs are dropped.

    The value of ``scipy.stats.kendalltau(x, y, variant="b")``, bit for bit: the same
    integer counts of pairs (tied in x, tied in y, concordant minus discordant) and the
    same floating-point steps after them; NaN when either vector is constant. Computed here
    rather than imported: ``scipy.stats`` loads a quarter of scipy, which the meta-scoring
    program's own Python then needs not carry.
    """
    x, y = _pair(x, y)
    if x.size < 2:
        return float("nan")
    xr = np.unique(x, return_inverse=True)[1].astype(np.int64)  # equal values, equal codes
    yr = np.unique(y, return_inverse=True)[1].astype(np.int64)
    n = xr.size
    tot = n * (n - 1) // 2
    xtie, ytie = _tied_pairs(xr), _tied_pairs(yr)
    if xtie == tot or ytie == tot:
        return float("nan")
    both = _tied_pairs(xr * (int(yr.max()) + 1) + yr)
    con_minus_dis = tot - xtie - ytie + both - 2 * _discordant_pairs(xr, yr)
    tau = con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    return float(np.minimum(1.0, max(-1.0, tau)))


def _discordant_pairs(xr: np.ndarray, yr: np.ndarray) -> int:
    """The number of pairs ordered one way by the codes ``xr`` and the other way by ``yr``
    (ties in either are not discordant): in increasing x, each value counts the earlier ones
    (smaller x) with a larger y, read from a Fenwick tree of the y codes seen so far."""
    order = np.lexsort((yr, xr))
    xs, ys = xr[order].tolist(), yr[order].tolist()
    tree = [0] * (max(ys) + 2)
    discordant = seen = start = 0
    while start < len(xs):
        end = start
        while end < len(xs) and xs[end] == xs[start]:
            end += 1
        for y in ys[start:end]:  # the earlier groups only: equal x is a tie, not discordant
            i, below = y + 1, 0
            while i > 0:
                below, i = below + tree[i], i - (i & -i)
            discordant += seen - below
        for y in ys[start:end]:
            i = y + 1
            while i < len(tree):
                tree[i], i = tree[i] + 1, i + (i & -i)
        seen, start = seen + end - start, end
    return discordant


def _tied_pairs(codes: np.ndarray) -> int:
    """The number of pairs with equal codes."""
    counts = np.unique(codes, return_counts=True)[1].astype(np.int64)
    return int((counts * (counts - 1) // 2).sum())


def kendall_tau_distance(
    x: np.ndarray, y: np.ndarray, *, normalize: bool = True, ties: str = "ignore"
) -> float:
    """Number of candidate pairs that ``x`` and ``y`` order strictly oppositely.

    Scores equal within the registry's tolerance (:func:`metascore.ranking.tie_groups`)
    are tied. ``ties="ignore"`` counts a pair tied in either vector as 0; ``ties="half"``
    counts a pair tied in exactly one of them as 1/2 (a random tie-break would order it
    oppositely half the time). With ``normalize`` the count is divided by
    ``n (n - 1) / 2``, so 0 = same order and 1 = reversed. NaN pairs are left out.
    """
    if ties not in KENDALL_TIES:
        raise ConfigError(f"`ties` must be one of {list(KENDALL_TIES)}; got {ties!r}.")
    x, y = _pair(x, y)
    n = x.size
    if n < 2:
        return 0.0
    # tie-group ids: 0 = best group, so a larger id is a worse score
    gx, gy = tie_groups(x)[1], tie_groups(y)[1]
    dx = np.sign(gx[None, :] - gx[:, None])
    dy = np.sign(gy[None, :] - gy[:, None])
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    d = float(np.count_nonzero((dx * dy < 0) & upper))
    if ties == "half":
        d += 0.5 * float(np.count_nonzero(((dx == 0) ^ (dy == 0)) & upper))
    return d / (n * (n - 1) / 2) if normalize else d


def kendall_w(values: np.ndarray, *, ties: bool = True) -> float:
    """Kendall's coefficient of concordance W of ``m`` judges over ``n`` candidates.

    ``values`` is a candidates x judges array, higher is better, without missing cells.
    With ``ties`` the Siegel & Castellan correction is applied:
    ``W = 12 S / (m^2 (n^3 - n) - m sum_j T_j)``, ``T_j = sum (t^3 - t)`` over tie groups.
    Returns 1 for complete agreement, about 0 for none; NaN when undefined (all tied).

    >>> kendall_w(np.array([[3, 3], [2, 2], [1, 1.]]))
    1.0
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 2:
        raise InputError("kendall_w needs a 2-D candidates x judges array.")
    if np.isnan(values).any():
        raise InputError("kendall_w needs complete data; drop or fill the missing cells first.")
    return kendall_w_of_ranks(fractional_ranks(values, axis=0), ties=ties)


def kendall_w_of_ranks(ranks: np.ndarray, *, ties: bool = True) -> float:
    """:func:`kendall_w` from the judges' fractional ranks (candidates x judges, every
    candidate ranked by every judge), when they are known."""
    n, m = ranks.shape
    if n < 2 or m < 1:
        return float("nan")
    totals = ranks.sum(axis=1)
    s = float(((totals - totals.mean()) ** 2).sum())
    denom = m**2 * (n**3 - n)
    if ties and float(m) * n**3 < 2.0**50:
        # average ranks hold the ties: sum_i r_i^2 = sum_k k^2 - T_j / 12 per judge, exact here
        # (ranks are multiples of 1/2 and every partial sum stays below 2**51)
        t_sum = 12.0 * (m * n * (n + 1) * (2 * n + 1) / 6.0 - float(np.einsum("ij,ij->", ranks, ranks)))
        denom -= m * t_sum
    elif ties:
        ordered = np.sort(ranks, axis=0)  # equal ranks: tied values
        # tie-group sizes per judge: lengths of runs of equal sorted values
        change = np.vstack([np.ones((1, m), bool), ordered[1:] != ordered[:-1], np.ones((1, m), bool)])
        t_sum = 0.0
        idx = np.flatnonzero(change.T.ravel())  # positions in judge-major layout
        # run lengths per judge from boundary positions
        col = idx // (n + 1)
        pos = idx % (n + 1)
        same_col = col[1:] == col[:-1]
        runs = (pos[1:] - pos[:-1])[same_col]
        t_sum = float((runs.astype(float) ** 3 - runs).sum())
        denom -= m * t_sum
    if denom <= 0:
        return float("nan")
    return 12.0 * s / denom


def mean_spearman_from_w(w: float, m: int) -> float:
    """Average Spearman correlation between all pairs of ``m`` judges: ``(m W - 1)/(m - 1)``."""
    if m < 2:
        return float("nan")
    return (m * w - 1.0) / (m - 1.0)
