"""Resampling axes, the pairwise-count path, parallel trials and the Dask backend.

The exact cases compare each criterion to a plain per-trial loop over the same draws, or
to a value computed by hand; the statistical ones use fixed seeds.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import metascore as ms
from metascore.analysis import (
    PAPER_AXES,
    compare_methods,
    condorcet_rate,
    generalization,
    rank_uncertainty,
    stability,
    stability_vs_judges,
    winner_rank_bootstrap,
)
from metascore.analysis import _engine as E
from metascore.analysis import bootstrap as B
from metascore.errors import ConfigError

COUNTED = ["kemeny_young", "schulze", "ranked_pairs", "epp", "elo", "average_rank"]


def matrix(values, **kw):
    values = np.asarray(values, dtype=float)
    return ms.ScoreMatrix.from_array(values, [f"c{i}" for i in range(len(values))], **kw)


def unanimous(n=5, m=4):
    return matrix(np.repeat(np.arange(n, 0, -1.0)[:, None], m, axis=1))


def noisy(seed=0, n=8, m=30, signal=0.4):
    rng = np.random.default_rng(seed)
    return matrix(np.arange(n, 0, -1.0)[:, None] * signal + rng.normal(size=(n, m)))


# --------------------------------------------------------------------------- draws
def test_a_trial_depends_only_on_the_seed_and_its_index():
    few, many = B.draw(7, 5, "both", 6, 4), B.draw(7, 50, "both", 6, 4)
    np.testing.assert_array_equal(few.candidates, many.candidates[:5])
    np.testing.assert_array_equal(few.counts, many.counts[:5])
    np.testing.assert_array_equal(few.seeds, many.seeds[:5])
    assert few.counts.sum(axis=1).tolist() == [4] * 5 and few.seed == 7
    assert B.draw(7, 5, "judges", 6, 4).candidates is None
    assert B.draw(7, 5, "candidates", 6, 4).counts is None


def test_paper_defaults():
    assert PAPER_AXES == {"winner_rank": "candidates", "condorcet_rate": "candidates",
                          "generalization": "both"}
    m = noisy(n=5, m=6)
    assert winner_rank_bootstrap(m, "mean", n_trials=3).axis == "candidates"
    assert condorcet_rate(m, "mean", n_trials=3).axis == "candidates"
    assert generalization(m, "mean", n_trials=3).axis == "both"
    assert stability(m, "mean", q=2, r=1).concordance == "kendall_w"
    assert stability(m, "mean", axis="candidates", q=2, r=1).concordance == "spearman"


# --------------------------------------------------------------------------- exact cases
def _plain_condorcet_winner(values: np.ndarray, rows: np.ndarray, counts: np.ndarray | None):
    """Row index of the Condorcet winner of the resampled matrix, by explicit loops."""
    cols = np.arange(values.shape[1]) if counts is None else np.repeat(np.arange(len(counts)), counts)
    sub = values[np.ix_(rows, cols)]
    for a in range(len(rows)):
        if all((sub[a] > sub[b]).sum() > (sub[b] > sub[a]).sum()
               for b in range(len(rows)) if b != a):
            return a
    return None


@pytest.mark.parametrize("axis", ["candidates", "both", "judges"])
def test_condorcet_rate_matches_a_plain_loop(axis):
    # A beats everyone on 3 judges of 5; B, C, D form a majority cycle below A
    v = np.array([[9, 9, 9, 0, 0],
                  [3, 2, 1, 5, 5],
                  [1, 3, 2, 6, 4],
                  [2, 1, 3, 4, 6]], dtype=float)
    m = matrix(v)
    res = condorcet_rate(m, ["copeland", "mean"], axis=axis, n_trials=300, seed=3)
    draws = B.draw(3, 300, axis, 4, 5)
    found = []
    for t in range(300):
        rows = np.arange(4) if draws.candidates is None else draws.candidates[t]
        counts = None if draws.counts is None else draws.counts[t]
        winner = _plain_condorcet_winner(v, rows, counts)
        found.append(winner is not None)
        if winner is None:
            assert np.isnan(res.values["copeland"][t])
            continue
        assert res.values["copeland"][t] == 1.0  # Copeland always elects it
        cols = np.arange(5) if counts is None else np.repeat(np.arange(5), counts)
        means = v[np.ix_(rows, cols)].mean(axis=1)
        top = np.flatnonzero(means == means.max())
        expected = (1.0 / len(set(rows[top]))) if rows[winner] in rows[top] else 0.0
        assert res.values["mean"][t] == pytest.approx(expected)
    assert res.n_valid == sum(found) and 0 < res.n_valid < 300


def test_duplicated_candidate_cannot_be_condorcet_winner():
    # c0 is first on every judge: a resample has a Condorcet winner iff its best drawn
    # candidate was drawn exactly once (a copy ties with its original)
    m = unanimous(4, 3)
    res = condorcet_rate(m, "copeland", n_trials=400, seed=1)
    draws = B.draw(1, 400, "candidates", 4, 3)
    best = draws.candidates.min(axis=1)
    once = (draws.candidates == best[:, None]).sum(axis=1) == 1
    np.testing.assert_array_equal(np.isfinite(res.values["copeland"]), once)
    assert res.mean["copeland"] == 1.0


def test_winner_rank_by_hand_under_candidate_resampling():
    # unanimous: the best drawn candidate wins; with c copies it has rank 1 + (c - 1)/2
    # on every judge, so the value is 1 - (c - 1) / (2 (n - 1))
    n = 5
    res = winner_rank_bootstrap(unanimous(n, 3), ["mean", "kemeny_young"], n_trials=200, seed=4)
    draws = B.draw(4, 200, "candidates", n, 3)
    best = draws.candidates.min(axis=1)
    copies = (draws.candidates == best[:, None]).sum(axis=1)
    expected = 1.0 - (copies - 1) / (2.0 * (n - 1))
    np.testing.assert_allclose(res.values["mean"], expected)
    np.testing.assert_allclose(res.values["kemeny_young"], expected)
    assert res.std["mean"] > 0


def test_winner_rank_under_judge_resampling_by_hand():
    # A ranks (1, 3), B (2, 1), C (3, 2): average_rank elects B unless the resample
    # favours j1; value per trial from the drawn multiplicities
    m = matrix([[3, 1], [2, 3], [1, 2]])
    res = winner_rank_bootstrap(m, "average_rank", axis="judges", n_trials=100, seed=2)
    counts = B.draw(2, 100, "judges", 3, 2).counts
    ranks = np.array([[1, 3], [2, 1], [3, 2]], dtype=float)
    for t in range(100):
        avg = ranks @ counts[t] / counts[t].sum()
        winners = np.flatnonzero(avg == avg.min())
        assert res.values["average_rank"][t] == pytest.approx(np.mean(1 - (avg[winners] - 1) / 2))


@pytest.mark.parametrize("axis", ["judges", "candidates", "both"])
@pytest.mark.parametrize("concordance", ["kendall_w", "spearman"])
def test_unanimous_matrix_has_stability_one_on_every_axis(axis, concordance):
    res = stability(unanimous(), ["mean", "copeland", "kemeny_young", "epp"], axis=axis,
                    concordance=concordance, q=6, r=2)
    for name in res.methods:
        np.testing.assert_array_equal(res.values[name], [1.0, 1.0])


def test_generalization_needs_resampled_judges():
    with pytest.raises(ConfigError, match="out-of-bag judges.*not 'candidates'"):
        generalization(unanimous(), "mean", axis="candidates")
    with pytest.raises(ConfigError, match=r"must be one of \['judges', 'candidates', 'both'\]"):
        condorcet_rate(unanimous(), "mean", axis="rows")


def test_generalization_with_candidates_matches_a_plain_loop():
    m = noisy(1, n=6, m=8)
    res = generalization(m, "mean", n_trials=40, seed=6)
    draws = B.draw(6, 40, "both", 6, 8)
    v = m.values
    for t in range(40):
        rows, counts = draws.candidates[t], draws.counts[t]
        inbag = np.repeat(np.arange(8), counts)
        score = v[np.ix_(rows, inbag)].mean(axis=1)
        rhos = [ms.stats.spearman(score, v[rows, j]) for j in np.flatnonzero(counts == 0)]
        assert res.values["mean"][t] == pytest.approx(np.mean(rhos))


# --------------------------------------------------------------------------- statistics
def test_stability_grows_with_the_number_of_judges():
    curve = stability_vs_judges(noisy(2), ["average_rank", "copeland"], [2, 8, 30], q=30, r=3,
                                seed=11)
    for name in curve.methods:
        assert curve.mean[name][0] < curve.mean[name][1] < curve.mean[name][2]
    assert curve.judges_needed(0.0) == {"average_rank": 2, "copeland": 2}


def test_copies_lower_candidate_stability_of_clone_sensitive_methods():
    # mean ignores the other candidates: perfectly stable under candidate resampling;
    # success rate depends on who is drawn
    res = stability(noisy(3, n=10, m=5, signal=0.1), ["mean", "success_rate"],
                    axis="candidates", q=30, r=3, seed=2)
    assert res.mean["mean"] == 1.0 and res.mean["success_rate"] < 1.0


# --------------------------------------------------------------------------- exact paths
@pytest.mark.parametrize("axis", ["judges", "candidates", "both"])
def test_pairwise_count_path_equals_the_registry(axis):
    rng = np.random.default_rng(5)
    v = rng.integers(0, 4, size=(6, 7)).astype(float)
    v[2, 3] = np.nan
    v[1:, 5] = np.nan  # a judge scoring one candidate: often empty in a candidate resample
    m = matrix(v, weights=[1, 2, 1, 1, 3, 1, 2], higher_is_better=[True] * 5 + [False] * 2)
    s = E.setup(m, COUNTED, None, "worst", 1)
    draws = B.draw(9, 12, axis, s.n, s.m)
    assert all(B.counts_path_reason(s, name, draws) is None for name in COUNTED)
    fast, slow = B.bootstrap_scores(s, draws), B.bootstrap_scores(s, draws, fast=False)
    for name in COUNTED:  # epp, elo: Newton from the full fit, the same optimum to its 1e-9 tolerance
        tol = {"rtol": 1e-8, "atol": 1e-7} if name in ("epp", "elo") else {"rtol": 0, "atol": 1e-12}
        np.testing.assert_allclose(fast[name], slow[name], **tol)
        np.testing.assert_array_equal(E.rank_codes(fast[name]), E.rank_codes(slow[name]))


CANDIDATE_FAST = ["mean", "median", "average_rank", "success_rate", "copeland",
                  "relative_difference"]


@pytest.mark.parametrize("axis", ["judges", "candidates", "both"])
@pytest.mark.parametrize("weights", [None, [1, 2, 1, 1, 3, 1, 2]])
@pytest.mark.parametrize("variant", ["default", "half_and_ranks"])
def test_candidate_fast_paths_equal_the_registry(axis, weights, variant):
    # ties and zeros (4 levels), repeated candidates in every resample, lower-is-better judges
    rng = np.random.default_rng(11)
    v = rng.integers(0, 4, size=(8, 7)).astype(float)
    m = matrix(v, weights=weights, higher_is_better=[True] * 5 + [False] * 2)
    params = None if variant == "default" else {"success_rate": {"ties": "half"},
                                                 "relative_difference": {"on": "ranks"}}
    s = E.setup(m, CANDIDATE_FAST, params, "worst", 1)
    draws = B.draw(4, 25, axis, s.n, s.m)
    if axis == "judges":
        assert B.fast_path_reason(s, "relative_difference") is None
        assert (B.fast_path_reason(s, "median") is None) == (weights is None)
    else:
        fast_names = [n for n in CANDIDATE_FAST
                      if B.candidate_fast_reason(s, n, draws.counts is not None) is None]
        assert fast_names == [n for n in CANDIDATE_FAST if weights is None or n != "median"]
    fast, slow = B.bootstrap_scores(s, draws), B.bootstrap_scores(s, draws, fast=False)
    for name in CANDIDATE_FAST:
        np.testing.assert_allclose(fast[name], slow[name], rtol=0, atol=1e-12)
        np.testing.assert_array_equal(E.rank_codes(fast[name]), E.rank_codes(slow[name]))


def test_candidate_fast_paths_fall_back():
    v = np.array([[1.0, 2.0], [2.0, np.nan], [3.0, 3.0]])
    s = E.setup(matrix(v), ["mean"], None, "worst", 1)
    assert "missing" in B.candidate_fast_reason(s, "mean", False)
    s = E.setup(matrix(v[[0, 2]], weights=[0.5, 1.5]), ["copeland", "median", "schulze"],
                None, "worst", 1)
    assert B.candidate_fast_reason(s, "copeland", False) == "non-integer judge weights"
    assert "equal judge weights" in B.candidate_fast_reason(s, "median", True)
    assert B.candidate_fast_reason(s, "schulze", True) == "no fast path for this method"
    dense = E.setup(matrix(v[[0, 2]]), ["average_rank"], {"ties": "dense"}, "worst", 1)
    assert "ties='average'" in B.candidate_fast_reason(dense, "average_rank", False)


@pytest.mark.parametrize("name", COUNTED + ["copeland", "success_rate", "sco"])
def test_counts_scores_equal_the_public_rank(name):
    rng = np.random.default_rng(3)
    v = rng.integers(0, 5, size=(9, 6)).astype(float)
    pc = ms.PairwiseCounts.from_matrix(v, np.array([1, 2, 1, 1, 3, 1.0]))
    for seed in (1, 2):
        np.testing.assert_array_equal(B.counts_scores(pc, name, {}, seed),
                                      ms.rank(pc, name, seed=seed).scores)
    if name == "epp":
        np.testing.assert_array_equal(B.counts_scores(pc, name, {"ridge": 0.5}, 1),
                                      ms.rank(pc, name, ridge=0.5).scores)


@pytest.mark.parametrize("axis", ["judges", "candidates", "both"])
def test_direct_value_path_equals_the_registry(axis):
    rng = np.random.default_rng(6)
    v = rng.integers(1, 5, size=(7, 6)) + rng.random(size=(7, 6)).round(1)
    m = matrix(v, weights=[1, 2, 1, 1, 3, 1], higher_is_better=[True] * 4 + [False] * 2)
    names = ["mean", "median", "relative_difference"]
    for params in ({}, {"relative_difference": {"on": "ranks"}}):
        s = E.setup(m, names, params, "worst", 1)
        assert all(B.direct_values_reason(s, name) is None for name in names)
        draws = B.draw(4, 15, axis, s.n, s.m)
        fast, slow = B.bootstrap_scores(s, draws), B.bootstrap_scores(s, draws, fast=False)
        for name in names:  # the fast paths are products: equal up to rounding
            if (B.fast_path_reason(s, name) is None if axis == "judges" else
                    B.candidate_fast_reason(s, name, axis == "both") is None):
                np.testing.assert_allclose(fast[name], slow[name], rtol=0, atol=1e-12)
            else:
                np.testing.assert_array_equal(fast[name], slow[name])
    holes = matrix(np.where(v > 4.5, np.nan, v))
    assert "missing" in B.direct_values_reason(E.setup(holes, "mean", None, "worst", 1), "mean")


def test_counts_path_falls_back_when_it_cannot_be_exact():
    m = matrix([[1, 2], [2, 1], [3, 3]], weights=[0.5, 1.5])
    s = E.setup(m, ["schulze", "median"], None, "worst", 1)
    judges = B.draw(1, 2, "judges", 3, 2)
    assert B.counts_path_reason(s, "schulze", judges) == "non-integer judge weights"
    assert B.counts_path_reason(s, "schulze", B.draw(1, 2, "candidates", 3, 2)) is None
    assert "scores" in B.counts_path_reason(s, "median", judges)
    s2 = E.setup(matrix([[1, np.nan], [2, 1], [3, 3]]), "schulze", None, "pairwise", 1)
    assert "missing" in B.counts_path_reason(s2, "schulze", judges)


# --------------------------------------------------------------------------- parallel
def test_two_jobs_equal_one_job():
    m = noisy(4, n=7, m=9)
    names = ["median", "copeland", "schulze", "epp"]
    for axis in ("judges", "candidates", "both"):
        one = stability(m, names, axis=axis, q=8, r=2, seed=3)
        two = stability(m, names, axis=axis, q=8, r=2, seed=3, jobs=2)
        assert one.to_dict() == two.to_dict()
    a = compare_methods(m, names, n_trials=30, q=5, r=2, seed=8)
    b = compare_methods(m, names, n_trials=30, q=5, r=2, seed=8, jobs=2, backend="threading")
    assert a.to_dict() == b.to_dict()
    u1 = rank_uncertainty(m, "ranked_pairs", n_trials=40, seed=2)
    u2 = rank_uncertainty(m, "ranked_pairs", n_trials=40, seed=2, jobs=2)
    assert u1.to_dict() == u2.to_dict()


def test_progress_reaches_the_total():
    calls = []
    stability(noisy(n=5, m=6), ["median"], q=4, r=3, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (12, 12) and [d for d, _ in calls] == sorted(d for d, _ in calls)
    with pytest.raises(ConfigError, match="`jobs` must be a positive integer or -1"):
        stability(noisy(n=5, m=6), "median", q=4, r=1, jobs=0)


def test_dask_backend_on_a_local_cluster():
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("dask[distributed] is missing under CI: install metascore[dask]")
        pytest.skip("dask[distributed] is not installed (pip install 'metascore[dask]')")
    m = noisy(5, n=6, m=8)
    names = ["median", "kemeny_young", "epp"]
    local = stability(m, names, axis="both", q=6, r=2, seed=4)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster):
        remote = stability(m, names, axis="both", q=6, r=2, seed=4, jobs=2, backend="dask")
    assert local.to_dict() == remote.to_dict()


@pytest.mark.parametrize("seed", [1, 3])
def test_epp_resamples_split_ties_as_the_registry(seed):
    # Tie-heavy judges and two identical candidates: strengths equal in exact arithmetic
    # must come out equal (or apart) as in the registry's fit from zero. A warm-started fit
    # that stopped on a vanishing line-search step (7e-8 away) split one such tie here.
    rng = np.random.default_rng(seed)
    v = rng.integers(0, 3, size=(15, 30)).astype(float)
    v[3] = v[7]
    s = E.setup(matrix(v), ["epp"], None, "worst", 1)
    for axis in ("judges", "both"):
        draws = B.draw(seed, 100, axis, s.n, s.m)
        fast = B.bootstrap_scores(s, draws)["epp"]
        slow = B.bootstrap_scores(s, draws, fast=False)["epp"]
        np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(E.rank_codes(fast), E.rank_codes(slow))
