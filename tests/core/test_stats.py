"""Rank statistics: fractional ranks, correlations, distances and Kendall's W."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

import metascore as ms


def test_fractional_ranks_match_the_spec_formula(rng):
    v = rng.integers(0, 4, size=12).astype(float)
    expected = [1 + (v > x).sum() + 0.5 * ((v == x).sum() - 1) for x in v]
    np.testing.assert_allclose(ms.fractional_ranks(v), expected)


def test_fractional_ranks_skip_nan():
    r = ms.fractional_ranks(np.array([0.5, np.nan, 0.9]))
    assert r[0] == 2 and np.isnan(r[1]) and r[2] == 1


def test_spearman_and_kendall_against_scipy(rng):
    x, y = rng.normal(size=30), rng.normal(size=30)
    assert ms.spearman(x, y) == pytest.approx(st.spearmanr(x, y).statistic)
    y[:5] = y[5]
    assert ms.kendall_tau_b(x, y) == pytest.approx(st.kendalltau(x, y).statistic)


def test_kendall_tau_distance():
    assert ms.kendall_tau_distance([1, 2, 3, 4], [1, 2, 3, 4]) == 0
    assert ms.kendall_tau_distance([1, 2, 3, 4], [4, 3, 2, 1]) == 1
    assert ms.kendall_tau_distance([1, 2, 3], [1, 3, 2], normalize=False) == 1
    assert ms.kendall_tau_distance([1, 1, 3], [2, 1, 3], normalize=False) == 0  # tie is not discordant


def test_kendall_w_without_ties():
    # 3 candidates, 2 judges in complete agreement -> W = 1; reversed -> 0
    assert ms.kendall_w(np.array([[3, 3], [2, 2], [1, 1.0]])) == pytest.approx(1.0)
    assert ms.kendall_w(np.array([[3, 1], [2, 2], [1, 3.0]])) == pytest.approx(0.0)


def test_kendall_w_tie_correction_by_hand():
    # judge 1 ranks: 1, 2.5, 2.5 ; judge 2 ranks: 1, 2, 3 -> R = 2, 4.5, 5.5, mean 4
    # S = 4 + 0.25 + 2.25 = 6.5; T1 = 2^3 - 2 = 6; W = 12*6.5 / (4*24 - 2*6) = 78/84
    values = np.array([[5, 9], [1, 5], [1, 1.0]])
    assert ms.kendall_w(values) == pytest.approx(78 / 84)
    assert ms.kendall_w(values, ties=False) == pytest.approx(78 / 96)


def test_mean_spearman_from_w(rng):
    values = rng.normal(size=(8, 5))
    w = ms.kendall_w(values)
    rho = [st.spearmanr(values[:, a], values[:, b]).statistic for a in range(5) for b in range(a + 1, 5)]
    assert ms.mean_spearman_from_w(w, 5) == pytest.approx(np.mean(rho))


def test_kendall_w_refuses_missing():
    with pytest.raises(ms.InputError, match="complete data"):
        ms.kendall_w(np.array([[1, np.nan], [2, 3.0]]))


def test_kendall_tau_distance_treats_scores_equal_within_tolerance_as_ties():
    assert ms.kendall_tau_distance([0.1 + 0.2, 0.3], [1, 2], normalize=False) == 0
    assert ms.kendall_tau_distance([0.1 + 0.2, 0.3], [1, 2], normalize=False, ties="half") == 0.5
    assert ms.kendall_tau_distance([1, 1, 3], [2, 1, 3], normalize=False, ties="half") == 0.5


@pytest.mark.parametrize("method", ["average", "min", "max", "dense"])
def test_ranks_along_are_scipys_rankdata_with_nan_omitted(method):
    from metascore.stats import ranks_along

    rng = np.random.default_rng(11)
    for _ in range(60):
        shape = tuple(rng.integers(1, 7, size=rng.integers(1, 4)))
        x = rng.integers(0, 4, size=shape).astype(float)  # ties
        if rng.random() < 0.5:
            x[rng.random(shape) < 0.3] = np.nan
        axis = int(rng.integers(-len(shape), len(shape)))
        want = st.rankdata(x, method=method, axis=axis, nan_policy="omit")
        got = ranks_along(x, method, axis)
        np.testing.assert_array_equal(got, want)


def test_ranks_along_refuses_an_unknown_tie_method():
    from metascore.errors import ConfigError
    from metascore.stats import ranks_along

    with pytest.raises(ConfigError, match="unknown tie method 'ordinal'; use 'average'"):
        ranks_along(np.array([1.0, 2.0]), "ordinal")
        if not np.isnan(x).any():
            assert got.dtype == want.dtype
