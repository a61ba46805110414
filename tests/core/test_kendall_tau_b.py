"""kendall_tau_b without scipy.stats (issue 43): the same value as scipy's, bit for bit, so the
meta-scoring program's outputs do not change and its own Python leaves scipy.stats out."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from metascore.stats import kendall_tau_b


def _scipy(x: np.ndarray, y: np.ndarray) -> float:
    keep = ~(np.isnan(x) | np.isnan(y))
    if keep.sum() < 2:
        return float("nan")
    return float(stats.kendalltau(x[keep], y[keep], variant="b").statistic)


@pytest.mark.parametrize("seed", range(8))
def test_the_same_bits_as_scipy_with_ties_nan_and_inf(seed):
    rng = np.random.default_rng(seed)
    for case in range(300):
        n, levels = int(rng.integers(2, 80)), int(rng.integers(1, 9))
        x = rng.integers(0, levels, n).astype(float) if case % 2 else rng.random(n)
        y = rng.integers(0, levels, n).astype(float) if case % 3 else x + rng.normal(0, 0.3, n)
        if case % 5 == 0:
            x[rng.integers(0, n)] = np.nan
        if case % 7 == 0:
            y[0] = np.inf
        ours, theirs = kendall_tau_b(x, y), _scipy(x, y)
        assert ours == theirs or (np.isnan(ours) and np.isnan(theirs)), (seed, case, ours, theirs)


def test_constant_vectors_and_too_few_pairs_give_nan():
    assert np.isnan(kendall_tau_b(np.ones(5), np.arange(5.0)))
    assert np.isnan(kendall_tau_b(np.array([1.0, np.nan]), np.array([2.0, 3.0])))
    assert kendall_tau_b(np.arange(4.0), np.arange(4.0)[::-1]) == -1.0


def test_the_package_does_not_import_scipy_stats():
    code = ("import sys, numpy as np, metascore, metascore.program; "
            "metascore.kendall_tau_b(np.arange(9.0), np.arange(9.0) % 4); "
            "print('scipy.stats' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"
