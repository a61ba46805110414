"""The batched computations of the analyses against their plain counterparts, to the bit.

Each test draws random data with ties (and, where the computation allows them, missing
cells) and compares a batched kernel with the direct computation it replaces.
"""

from __future__ import annotations

import numpy as np
import pytest

from metascore.analysis import _engine as E
from metascore.resampling import JudgeDraws, PairSums


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
