"""``median`` selects the middle of each row once (issue 52): ``np.median`` also selects the
largest value, to find a NaN, which costs as much again; validation already knows."""

from __future__ import annotations

import numpy as np
import pytest

import metascore as ms
from metascore.methods import classical


def test_the_middle_is_np_median_to_the_bit():
    rng = np.random.default_rng(0)
    for trial in range(4000):
        n, m = rng.integers(1, 8), rng.integers(1, 14)
        x = [rng.normal(size=(n, m)), rng.integers(-3, 4, size=(n, m)).astype(float),
             rng.choice([-np.inf, np.inf, 0.0, -0.0, 1.0, -1.0], size=(n, m))][trial % 3]
        with np.errstate(invalid="ignore"):  # inf - inf in a middle pair, as np.median
            got, want = classical._middle(x), np.median(x, axis=1)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # 0.0, not -0.0


@pytest.mark.parametrize("shape", [(7, 1200), (6, 9), (5, 10)])
def test_a_complete_matrix_is_ranked_without_np_median(monkeypatch, shape):
    x = np.random.default_rng(1).normal(size=shape)
    want = ms.rank(ms.ScoreMatrix.from_array(x), "median").scores

    def refused(*args, **kwargs):
        raise AssertionError("np.median on a matrix without a missing cell")

    monkeypatch.setattr(classical.np, "median", refused)
    for lower in (False, True):  # row sums known from validation, or not
        m = ms.ScoreMatrix.from_array(x if not lower else -x, higher_is_better=not lower)
        np.testing.assert_array_equal(ms.rank(m, "median").scores, want)


def test_missing_cells_still_take_the_nan_median():
    x = np.random.default_rng(2).normal(size=(5, 6))
    x[1, 2] = np.nan
    got = ms.rank(ms.ScoreMatrix.from_array(x), "median", missing="pairwise").scores
    np.testing.assert_array_equal(got, np.nanmedian(x, axis=1))
