"""The batched computations of the analyses against their plain counterparts, to the bit.

Each test draws random data with ties (and, where the computation allows them, missing
cells) and compares a batched kernel with the direct computation it replaces.
"""

from __future__ import annotations

import numpy as np
import pytest

from metascore.analysis import shared as E
from metascore.resampling import JudgeDraws, PairSums, Pulls


def _tied_ranks(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
    return E.judge_ranks(rng.integers(0, 4, size=(n, m)).astype(float), "worst")


@pytest.mark.parametrize("n, scale", [(2, 1), (9, 1), (31, 1), (9, 300_000)])
def test_tallies_and_margin_sums_by_pair_equal_the_square(n, scale):
    rng = np.random.default_rng(n)
    ranks = _tied_ranks(rng, n, 40)
    pairs = PairSums(ranks)
    for cw in (rng.integers(0, 4, size=(6, 40)).astype(np.float32) * scale,  # float32 path
               rng.integers(0, 4, size=(6, 40)) + rng.random((6, 40)) / 4):  # float64 path
        cw[0] = 0.0  # a trial without weight: every pair tied
        integral = bool(np.all(cw == np.round(cw)))
        largest = float(cw.sum(axis=1).max())
        by_pair = pairs.pair_margins(cw, integral, largest)
        assert by_pair.dtype == (np.float32 if integral and largest < 2**24 else np.float64)
        square = pairs.square(pairs.margins(cw), -1.0)
        np.testing.assert_array_equal(pairs.square(by_pair.T, -1.0), square)
        won, tied = pairs.tallies(by_pair)
        np.testing.assert_array_equal(won, (square > 0).sum(axis=2))
        np.testing.assert_array_equal(tied, (square == 0).sum(axis=2) - 1)
        sums = pairs.net_sums(by_pair, largest)
        if integral:  # integers: exact in any order
            np.testing.assert_array_equal(sums, square.sum(axis=2))
        else:
            np.testing.assert_allclose(sums, square.sum(axis=2), rtol=1e-12, atol=1e-9)


def test_judge_draws_read_the_margins_by_pair_or_squared_alike():
    rng = np.random.default_rng(1)
    ranks = _tied_ranks(rng, 12, 30)
    cw = rng.integers(0, 3, size=(5, 30)).astype(float)
    by_pair, squared = JudgeDraws(ranks, cw), JudgeDraws(ranks, cw)
    by_pair.pair_margins  # noqa: B018  (what Copeland computes first in the analyses)
    squared.margins  # noqa: B018
    assert by_pair.margins_known() and squared.margins_known()
    assert "margins" not in by_pair.__dict__
    np.testing.assert_array_equal(by_pair.margin_sums, squared.margin_sums)
    for got, want in zip(by_pair.tallies, squared.tallies):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(by_pair.margins, squared.margins)


@pytest.mark.parametrize("scale", [1, 2**22])  # float32, then float64 past 2**23
def test_pair_stats_by_pair_equal_those_of_the_squared_wins(scale):
    from metascore.methods.classical_shortcuts import COPELAND
    from metascore.resampling import CandidateDraws, pair_stats

    rng = np.random.default_rng(2)
    n, m, trials = 11, 30, 7
    pairs = PairSums(_tied_ranks(rng, n, m))
    cw = rng.integers(0, 3, size=(trials, m)).astype(np.float32) * scale
    cands = rng.integers(0, n, size=(trials, n))
    c = np.stack([np.bincount(row, minlength=n) for row in cands]).astype(float)
    draws = CandidateDraws(cands, c, cw, True)
    by_pair = pair_stats(draws, pulls=Pulls(pairs, c), integral=True)
    squared = pair_stats(draws, pairs.wins(cw))
    assert by_pair.by_pair is not None and squared.by_pair is None
    for key in ("beats", "beaten_by", "ties"):
        np.testing.assert_array_equal(getattr(by_pair, key), getattr(squared, key))
    np.testing.assert_array_equal(by_pair.wins, squared.wins)
    np.testing.assert_array_equal(COPELAND.candidate_pairs(by_pair, {}),
                                  COPELAND.candidate_pairs(squared, {}))


def test_pull_sums_each_pair_into_both_candidates():
    rng = np.random.default_rng(3)
    n, trials = 8, 5
    pairs = PairSums(_tied_ranks(rng, n, 4))
    upper, lower = rng.integers(-9, 9, size=(2, pairs.a.size, trials)).astype(np.float32)
    c = rng.integers(0, 4, size=(trials, n)).astype(float)
    full = pairs.square(upper.T, 0.0, lower.T)  # T x n x n
    want = np.einsum("tab,tb->ta", full, c)
    np.testing.assert_array_equal(Pulls(pairs, c)(upper, 9.0 * c.sum(1).max(), lower), want)
    halves = (upper + 0.5).astype(np.float64)  # float64 inputs: computed in float64
    np.testing.assert_array_equal(Pulls(pairs, c)(halves, 1.0, lower),
                                  np.einsum("tab,tb->ta", pairs.square(halves.T, 0.0, lower.T), c))
    antisymmetric = pairs.square(upper.T, -1.0)
    np.testing.assert_array_equal(Pulls(pairs, c)(upper, 9.0 * c.sum(1).max(), sign=-1.0),
                                  np.einsum("tab,tb->ta", antisymmetric, c))


def test_code_ranks_are_the_sorted_fractional_ranks():
    rng = np.random.default_rng(4)
    for _ in range(200):
        q, n = rng.integers(1, 9), rng.integers(1, 12)
        scores = rng.integers(0, 4, size=(q, n)) * 0.1 + rng.choice([0, 1e-12, 1e-3], size=(q, n))
        scores[rng.random((q, n)) < 0.3 * rng.random()] = np.nan  # absent candidates
        codes = E.rank_codes(scores)
        np.testing.assert_array_equal(E.code_ranks(codes), E.fractional_ranks_rows(codes))


def _pairwise_spearman_one_pair_at_a_time(codes: np.ndarray) -> float:
    """The mean Spearman rho over pairs of rows, each pair ranked again on the candidates
    both rows rank, sums of doubled ranks in Python integers (exact)."""
    q = codes.shape[0]
    rhos = []
    for i in range(q):
        for j in range(i + 1, q):
            both = ~np.isnan(codes[i]) & ~np.isnan(codes[j])
            k = int(both.sum())
            if k < 2:
                rhos.append(np.nan)
                continue
            x = [int(v) for v in 2 * E.fractional_ranks_rows(codes[i, both][None])[0]]
            y = [int(v) for v in 2 * E.fractional_ranks_rows(codes[j, both][None])[0]]
            sxx, syy = ((sum(v * v for v in z) - k * (k + 1) ** 2) / 4.0 for z in (x, y))
            sxy = (sum(a * b for a, b in zip(x, y)) - k * (k + 1) ** 2) / 4.0
            flat_x, flat_y = sxx < 1e-3, syy < 1e-3
            rhos.append(1.0 if flat_x and flat_y else 0.0 if flat_x or flat_y
                        else sxy / np.sqrt(sxx * syy))
    rhos = np.array(rhos)
    return float(np.nanmean(rhos)) if np.isfinite(rhos).any() else float("nan")


@pytest.mark.parametrize("ties", [False, True])
def test_mean_pairwise_spearman_on_shared_candidates_is_the_pair_by_pair_one(ties):
    rng = np.random.default_rng(5 + ties)
    for _ in range(60):
        q, n = rng.integers(2, 9), rng.integers(2, 14)
        scores = rng.integers(0, 3, size=(q, n)) if ties else rng.normal(size=(q, n))
        scores = scores.astype(float)
        scores[rng.random((q, n)) < rng.random() * 0.7] = np.nan  # candidates not drawn
        codes = E.rank_codes(scores)
        if not np.isnan(codes).any():
            continue
        want = _pairwise_spearman_one_pair_at_a_time(codes)
        got = E.concordance_of(codes, "spearman")
        assert got == want or (np.isnan(got) and np.isnan(want))


@pytest.mark.parametrize("m", [1, 2, 7, 76])
def test_medians_of_short_rows_by_one_product_equal_the_weighted_medians(m):
    from metascore.methods.classical_shortcuts import count_medians, weighted_medians

    rng = np.random.default_rng(m)
    values = np.round(rng.normal(size=(30, m)), 1)  # ties
    for total in (m, m + 1, 3 * m):  # even and odd totals
        counts = np.stack([np.bincount(rng.integers(0, m, size=total), minlength=m)
                           for _ in range(9)]).astype(np.float32)
        cache: dict = {}
        got = count_medians(values, counts, cache)
        if m >= 4:  # the indicator of the one product was made (not the few-draws path)
            assert ("at or before",) in cache
        np.testing.assert_array_equal(got, weighted_medians(values, counts.astype(float)))


@pytest.mark.parametrize("kept_terms", [True, False])
def test_relative_difference_on_values_of_candidate_resamples_by_slabs_of_judges(
        kept_terms, monkeypatch):
    """The batched relative difference on values (no pass per resample) equals the
    registry on every resampled matrix when its pair terms come in several slabs of
    judges, kept between blocks or computed again."""
    import metascore as ms
    from metascore.analysis import draws as D
    from metascore.analysis import fastpaths as F
    from metascore.analysis import bootstrap as B
    from metascore.methods import classical_shortcuts as C

    monkeypatch.setattr(C, "BLOCK", 9 * 9 * 3)  # 3 judges a slab
    monkeypatch.setattr(C, "RD_TERMS_KEPT", 10**9 if kept_terms else 0)
    rng = np.random.default_rng(3)
    values = rng.integers(0, 5, size=(9, 10)).astype(float)  # ties and zeros
    m = ms.ScoreMatrix.from_array(values, weights=rng.integers(1, 3, 10),
                                  higher_is_better=[True] * 7 + [False] * 3)
    s = E.setup(m, "relative_difference", ms.Execution(seed=1))
    assert not s.hooks("relative_difference").one_at_a_time(s.params["relative_difference"])
    for axis in ("candidates", "both"):
        draws = D.draw(4, 8, axis, s.n, s.m)
        block = F.Block(s, draws, B.usable_trials(s, draws))
        got = F.candidate_fast_scores(block, ["relative_difference"])["relative_difference"]
        for t in range(draws.trials):
            judges = None if draws.counts is None else np.repeat(np.arange(s.m), draws.counts[t])
            cand = draws.candidates[t]
            sub = m.subset(candidates=cand, judges=judges)
            want = ms.rank(sub, "relative_difference").scores
            first = np.unique(cand, return_index=True)[1]
            np.testing.assert_allclose(got[t, cand[first]], want[first], rtol=0, atol=1e-12)
