"""What the bootstrap criteria read from each trial besides the scores, a block at a time.

Each statistic has two exactly equal computations: the plain one, trial by trial on the
resampled rows and judges (the reference, ``fast=False``), and one for the whole block
from the pairwise sums of the trials (:class:`~.fastpaths.Block`), whose cost does not
grow with the number of judges beyond a matrix product:

- :func:`winner_stats`: each drawn candidate's average rank among the drawn rows over the
  trial's judges (the winner rank), and the trial's Condorcet winner. A candidate's rank
  among the drawn multiset c on one judge is ``(k + 1) / 2 - sum_b c_b sign_ab / 2``
  (``sign_ab``: +1 when it is above b), so its weighted average over the judges is
  ``(k + 1) / 2 - (M c)_a / (2 W)`` with M the trial's margins and W their weight;
- :func:`generalization_stats`: the weighted mean Spearman rho between each method's
  ranking of the drawn rows and the out-of-bag judges'. For a judge that ties no two
  candidates the spread of its ranks depends only on the multiplicities, and
  ``sum_a c_a (x_a - (k+1)/2) y_a = -(u^T S c) / 2`` with ``u = c (x - (k+1)/2)`` and S its
  signs, so the out-of-bag judges of that kind enter through their margins ``M'`` alone;
  judges with ties are grouped by their tie pattern (dense ranks) and computed per group.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..resampling import exact_products, kept
from ..stats import ranks_along
from .fastpaths import Block
from .shared import fractional_ranks_rows, judge_ranks, pearson_rows, rank_codes, Setup

__all__ = ["winner_stats", "generalization_stats", "drawn_ranks", "top_share"]


def top_share(scores: np.ndarray) -> np.ndarray:
    """Share of first place of each drawn candidate (T x n): 1/t for each of the t
    distinct candidates of the top tie group (:func:`~.shared.rank_codes`), else 0."""
    codes = rank_codes(scores)
    top = codes == 0.0
    return top / np.maximum(top.sum(axis=1, keepdims=True), 1)


def drawn_ranks(codes: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Fractional ranks (1 = best) of the drawn candidates among the drawn multiset
    (``c``: multiplicities, T x n; ``codes``: tie codes, higher is better, NaN for not
    drawn): one plus the multiplicity above each candidate plus half the others of its
    tie group, from each row sorted once."""
    order = np.argsort(-codes, axis=1, kind="stable")  # NaN (not drawn) last
    sorted_codes = np.take_along_axis(codes, order, axis=1)
    mult = np.take_along_axis(c, order, axis=1)
    cum = np.cumsum(mult, axis=1)
    new = np.ones(codes.shape, dtype=bool)
    new[:, 1:] = sorted_codes[:, 1:] != sorted_codes[:, :-1]
    last = np.ones(codes.shape, dtype=bool)
    last[:, :-1] = new[:, 1:]
    before = np.maximum.accumulate(np.where(new, cum - mult, -np.inf), axis=1)  # above the group
    through = np.minimum.accumulate(np.where(last, cum, np.inf)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty(codes.shape)
    np.put_along_axis(ranks, order, 1.0 + before + (through - before - 1.0) / 2.0, axis=1)
    return ranks


def _ones(block: Block) -> np.ndarray:
    return block.c if block.c is not None else np.ones((block.trials, block.s.n))


# ---------------------------------------------------------------------- winner rank, Condorcet
def winner_stats(block: Block, scores: dict[str, np.ndarray], fast: bool) -> dict[str, np.ndarray]:
    """``norm`` (T x n): ``1 - (r - 1) / (k - 1)`` with r each drawn candidate's weighted
    average rank among the k drawn rows (NaN: not drawn or, under ``pairwise``, without a
    score on the drawn judges); ``condorcet`` (T): the trial's Condorcet winner, -1 for
    none (a drawn candidate beating every other drawn one by a strict margin; a copy
    ties with its original, so a candidate drawn twice is never one)."""
    if not fast or np.isnan(block.s.filled_ranks).any():
        return _winner_stats_plain(block)
    s, c = block.s, _ones(block)
    k = s.n
    margins = block.margins  # T x n x n, or 1 x n x n for every trial
    total = (block.cw.sum(axis=1, dtype=np.float64) if block.cw is not None
             else np.full(block.trials, block.weights.sum()))[:, None]
    if block.c is None and block.cw is not None:  # every candidate once: ranks' weighted sum
        doubled = kept(s, ("analysis", "doubled ranks"),
                       lambda: (2.0 * s.filled_ranks).astype(np.float32))
        avg = exact_products(block.cw, doubled, 2.0 * k, block.integral,
                             float(total.max())) / (2.0 * total)
    else:
        pull = (c @ margins[0].T if margins.shape[0] == 1
                else np.matmul(margins, c[:, :, None])[:, :, 0])
        avg = (k + 1) / 2.0 - pull / (2.0 * total)
    norm = np.where(c > 0, 1.0 - (avg - 1.0) / (k - 1), np.nan)
    drawn = (c > 0).astype(float)
    strict = margins > 0
    beaten = (drawn @ strict[0].T if strict.shape[0] == 1
              else np.matmul(strict.astype(float), drawn[:, :, None])[:, :, 0])
    winner = (c == 1) & (beaten == drawn.sum(axis=1, keepdims=True) - 1)
    condorcet = np.where(winner.any(axis=1), np.argmax(winner, axis=1), -1)
    return {"norm": norm, "condorcet": condorcet}


def _winner_stats_plain(block: Block) -> dict[str, np.ndarray]:
    """:func:`winner_stats` trial by trial, on the rows and judges of each resample."""
    s, draws = block.s, block.draws
    oriented = s.matrix.oriented()
    norm = np.full((block.trials, s.n), np.nan)
    condorcet = np.full(block.trials, -1)
    w = block.weights
    for t in np.flatnonzero(block.usable):
        rows = np.arange(s.n) if draws.candidates is None else draws.candidates[t]
        weights = w if draws.counts is None else draws.counts[t] * w
        ranks = judge_ranks(oriented[rows], s.missing)
        present = ~np.isnan(ranks)
        with np.errstate(invalid="ignore"):  # pairwise: a row no drawn judge scores is NaN
            avg = np.where(present, ranks, 0.0) @ weights / (present * weights).sum(axis=1)
        norm[t, rows] = 1.0 - (avg - 1.0) / (len(rows) - 1)
        signs = np.nan_to_num(np.sign(s.filled_ranks[rows][None, :, :]
                                      - s.filled_ranks[rows][:, None, :]))
        margins = signs @ weights
        winner = np.flatnonzero((margins > 0).sum(axis=1) == len(rows) - 1)
        if winner.size:
            condorcet[t] = rows[winner[0]]
    return {"norm": norm, "condorcet": condorcet}


# ---------------------------------------------------------------------- generalization
def generalization_stats(block: Block, scores: dict[str, np.ndarray], fast: bool
                         ) -> dict[str, np.ndarray]:
    """Per method (T): the weighted mean over the out-of-bag judges (never drawn) of the
    Spearman rho between the method's ranking of the drawn rows and the judge's (a judge
    tying every drawn row is left out; a method tying them all has rho 0), NaN without
    an informative judge; ``no_oob`` (T): the trial drew every judge."""
    s = block.s
    oob = block.draws.counts == 0
    out = {"no_oob": ~oob.any(axis=1) & block.usable}
    if not fast or np.isnan(s.filled_ranks).any():
        out.update(_generalization_plain(block, scores, oob))
        return out
    c, k = _ones(block), s.n
    w = block.weights.astype(np.float32) if block.integral else block.weights
    ow = oob * w[None, :]  # the out-of-bag judges' weights
    tied = s.pairs.tied
    groups, members = _tie_patterns(s)
    group_weight = (sp.csr_array(ow[:, tied]) @ members).toarray() if tied.size else None
    ow[:, tied] = 0.0  # the judges without ties, through their margins
    plain_total = ow.sum(axis=1, dtype=np.float64)
    margins = s.pairs.pair_margins(ow, block.integral, float(plain_total.max()))  # P x T
    spread = np.sqrt(((k**3 - k) - (c**3 - c).sum(axis=1)) / 12.0)  # the untied judges'
    plain_weight = np.where(spread > 1e-12, plain_total, 0.0)
    pull = block.pulls(margins, float(plain_total.max()) * float(c.sum(axis=1).max()),
                       sign=-1.0)  # (M' c)_a, every method
    parts = {}
    for name in s.methods:
        codes = rank_codes(scores[name])
        x = np.where(c > 0, drawn_ranks(codes, c) - (k + 1) / 2.0, 0.0)
        u = c * x
        rn = np.sqrt((u * x).sum(axis=1))
        num = -(u * pull).sum(axis=1) / 2.0
        with np.errstate(invalid="ignore", divide="ignore"):
            sums = np.where((rn > 1e-12) & (plain_weight > 0), num / (rn * spread), 0.0)
        parts[name] = (u, rn, sums)
    weights = plain_weight
    if group_weight is not None:  # the judges with ties, by tie pattern
        extra, extra_weight = _patterns_rho(groups, group_weight, c,
                                            np.stack([parts[m][0] for m in s.methods]),
                                            np.stack([parts[m][1] for m in s.methods]))
        weights = weights + extra_weight
    for i, name in enumerate(s.methods):
        sums = parts[name][2] + (extra[i] if group_weight is not None else 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[name] = np.where((weights > 0) & block.usable & ~out["no_oob"],
                                 sums / weights, np.nan)
    return out


def _tie_patterns(s: Setup) -> tuple[np.ndarray, Any]:
    """The distinct tie patterns (dense ranks, lower is better) of the judges that tie
    some candidates (G x n), and which judge has which (m_tied x G, sparse)."""
    def make() -> tuple[np.ndarray, Any]:
        tied = s.pairs.tied
        if not tied.size:
            return np.zeros((0, s.n)), None
        dense = ranks_along(s.filled_ranks[:, tied].T, "dense", axis=1)
        groups, inverse = np.unique(dense, axis=0, return_inverse=True)
        inverse = np.ravel(inverse)
        members = sp.csr_array((np.ones(inverse.size), (np.arange(inverse.size), inverse)),
                               shape=(inverse.size, len(groups)))
        return groups, members

    return kept(s, ("analysis", "tie patterns"), make)


def _patterns_rho(groups: np.ndarray, weight: np.ndarray, c: np.ndarray, u: np.ndarray,
                  rn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per method and trial, the sum of ``weight x rho`` over the tie patterns, and per
    trial their informative weight (``weight``: each pattern's out-of-bag weight, T x G;
    ``u``, ``rn``: each method's centred ranks times the multiplicities and their norm,
    methods x T x n and methods x T)."""
    methods, trials, k = u.shape
    sums, total = np.zeros((methods, trials)), np.zeros(trials)
    for t in range(trials):
        live = np.flatnonzero(weight[t] > 0)
        if not live.size:
            continue
        centred = _pattern_ranks(groups[live], c[t]) - (k + 1) / 2.0  # G x n
        spread = np.sqrt((centred**2) @ c[t])
        informative = spread > 1e-12
        with np.errstate(invalid="ignore", divide="ignore"):
            rho = (centred @ u[:, t, :].T) / (spread[:, None] * rn[None, :, t])  # G x methods
        rho = np.where(rn[None, :, t] > 1e-12, rho, 0.0)
        w = np.where(informative, weight[t, live], 0.0)
        sums[:, t] = np.nan_to_num(rho).T @ w
        total[t] = w.sum()
    return sums, total


def _pattern_ranks(d: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Ranks of the drawn multiset c under each pattern of dense ranks ``d`` (G x n, 1 =
    best): one plus the multiplicity of the better levels plus half the others at its
    level, from each pattern's histogram of the multiplicities over its levels."""
    g, n = d.shape
    level = d.astype(np.intp)
    flat = (np.arange(g)[:, None] * (n + 1) + level).ravel()
    hist = np.bincount(flat, weights=np.tile(c, g), minlength=g * (n + 1)).reshape(g, n + 1)
    better = np.cumsum(hist, axis=1) - hist  # multiplicity of the levels above each
    rows = np.arange(g)[:, None]
    return 1.0 + better[rows, level] + (hist[rows, level] - 1.0) / 2.0


def _generalization_plain(block: Block, scores: dict[str, np.ndarray], oob: np.ndarray
                          ) -> dict[str, np.ndarray]:
    """:func:`generalization_stats` trial by trial."""
    s, draws = block.s, block.draws
    oriented = s.matrix.oriented()
    w = block.weights
    out = {name: np.full(block.trials, np.nan) for name in s.methods}
    for t in np.flatnonzero(block.usable & oob.any(axis=1)):
        rows = np.arange(s.n) if draws.candidates is None else draws.candidates[t]
        out_of_bag = np.flatnonzero(oob[t])
        judges = judge_ranks(oriented[np.ix_(rows, out_of_bag)], s.missing)
        for name in s.methods:
            ranks = fractional_ranks_rows(rank_codes(scores[name][t][rows]))[0]
            rho = rho_with_judges(ranks, judges)
            use = ~np.isnan(rho)
            if use.any():
                out[name][t] = rho[use] @ w[out_of_bag][use] / w[out_of_bag][use].sum()
    return out


def rho_with_judges(ranks: np.ndarray, judges: np.ndarray) -> np.ndarray:
    """Spearman rho between one ranking (k,) and each judge's ranks (k x J; NaN = not
    ranked: the pair is restricted to the candidates the judge ranks, ranks recomputed).
    An all-tied ranking has rho 0 with every judge; an all-tied judge gives NaN."""
    out = np.full(judges.shape[1], np.nan)
    complete = ~np.isnan(judges).any(axis=0)
    jc = judges[:, complete] - judges[:, complete].mean(axis=0)
    jn = np.sqrt((jc**2).sum(axis=0))
    rc = ranks - ranks.mean()
    rn = np.sqrt(rc @ rc)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (rc @ jc) / (rn * jn) if rn > 1e-12 else np.zeros(jn.size)
    out[complete] = np.where(jn > 1e-12, rho, np.nan)
    for j in np.flatnonzero(~complete):
        keep = ~np.isnan(judges[:, j])
        if keep.sum() >= 2 and np.ptp(judges[keep, j]) > 0:
            r = fractional_ranks_rows(ranks[keep][None, :])[0]
            out[j] = pearson_rows(r, judges[keep, j], np.ones(keep.sum(), bool))
    return out
