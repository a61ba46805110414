"""Resampling axes, the pairwise-count path, parallel trials and the Dask backend.

The exact cases compare each criterion to a plain per-trial loop over the same draws, or
to a value computed by hand; the statistical ones use fixed seeds.
"""

from __future__ import annotations

import dataclasses
import importlib

import json
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
from metascore.analysis import shared as E
from metascore.analysis import draws as D
from metascore.analysis import per_trial
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
    few, many = D.draw(7, 5, "both", 6, 4), D.draw(7, 50, "both", 6, 4)
    np.testing.assert_array_equal(few.candidates, many.candidates[:5])
    np.testing.assert_array_equal(few.counts, many.counts[:5])
    np.testing.assert_array_equal(few.seeds, many.seeds[:5])
    assert few.counts.sum(axis=1).tolist() == [4] * 5 and few.seed == 7
    assert D.draw(7, 5, "judges", 6, 4).candidates is None
    assert D.draw(7, 5, "candidates", 6, 4).counts is None


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
    res = condorcet_rate(m, ["copeland", "mean"], axis=axis, n_trials=300, run=ms.Execution(seed=3))
    draws = D.draw(3, 300, axis, 4, 5)
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
    res = condorcet_rate(m, "copeland", n_trials=400, run=ms.Execution(seed=1))
    draws = D.draw(1, 400, "candidates", 4, 3)
    best = draws.candidates.min(axis=1)
    once = (draws.candidates == best[:, None]).sum(axis=1) == 1
    np.testing.assert_array_equal(np.isfinite(res.values["copeland"]), once)
    assert res.mean["copeland"] == 1.0


def test_winner_rank_by_hand_under_candidate_resampling():
    # unanimous: the best drawn candidate wins; with c copies it has rank 1 + (c - 1)/2
    # on every judge, so the value is 1 - (c - 1) / (2 (n - 1))
    n = 5
    res = winner_rank_bootstrap(unanimous(n, 3), ["mean", "kemeny_young"], n_trials=200, run=ms.Execution(seed=4))
    draws = D.draw(4, 200, "candidates", n, 3)
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
    res = winner_rank_bootstrap(m, "average_rank", axis="judges", n_trials=100, run=ms.Execution(seed=2))
    counts = D.draw(2, 100, "judges", 3, 2).counts
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
    res = generalization(m, "mean", n_trials=40, run=ms.Execution(seed=6))
    draws = D.draw(6, 40, "both", 6, 8)
    v = m.values
    for t in range(40):
        rows, counts = draws.candidates[t], draws.counts[t]
        inbag = np.repeat(np.arange(8), counts)
        score = v[np.ix_(rows, inbag)].mean(axis=1)
        rhos = [ms.stats.spearman(score, v[rows, j]) for j in np.flatnonzero(counts == 0)]
        assert res.values["mean"][t] == pytest.approx(np.mean(rhos))


# --------------------------------------------------------------------------- statistics
def test_stability_grows_with_the_number_of_judges():
    curve = stability_vs_judges(noisy(2), ["average_rank", "copeland"], [2, 8, 30], q=30, r=3, run=ms.Execution(seed=11))
    for name in curve.methods:
        assert curve.mean[name][0] < curve.mean[name][1] < curve.mean[name][2]
    assert curve.judges_needed(0.0) == {"average_rank": 2, "copeland": 2}


def test_copies_lower_candidate_stability_of_clone_sensitive_methods():
    # mean ignores the other candidates: perfectly stable under candidate resampling;
    # success rate depends on who is drawn
    res = stability(noisy(3, n=10, m=5, signal=0.1), ["mean", "success_rate"], axis="candidates", q=30, r=3, run=ms.Execution(seed=2))
    assert res.mean["mean"] == 1.0 and res.mean["success_rate"] < 1.0


# --------------------------------------------------------------------------- exact paths
@pytest.mark.parametrize("axis", ["judges", "candidates", "both"])
def test_pairwise_count_path_equals_the_registry(axis):
    rng = np.random.default_rng(5)
    v = rng.integers(0, 4, size=(6, 7)).astype(float)
    v[2, 3] = np.nan
    v[1:, 5] = np.nan  # a judge scoring one candidate: often empty in a candidate resample
    m = matrix(v, weights=[1, 2, 1, 1, 3, 1, 2], higher_is_better=[True] * 5 + [False] * 2)
    s = E.setup(m, COUNTED, ms.Execution(seed=1))
    draws = D.draw(9, 12, axis, s.n, s.m)
    assert all(B.counts_path_reason(s, name, draws) is None for name in COUNTED)
    fast, slow = B.bootstrap_scores(s, draws), B.bootstrap_scores(s, draws, ms.Execution(fast=False))
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
    s = E.setup(m, CANDIDATE_FAST, ms.Execution(params=params, seed=1))
    draws = D.draw(4, 25, axis, s.n, s.m)
    if axis == "judges":
        assert B.fast_path_reason(s, "relative_difference") is None
        assert (B.fast_path_reason(s, "median") is None) == (weights is None)
    else:
        fast_names = [n for n in CANDIDATE_FAST
                      if B.candidate_fast_reason(s, n, draws.counts is not None) is None]
        assert fast_names == [n for n in CANDIDATE_FAST if weights is None or n != "median"]
    fast, slow = B.bootstrap_scores(s, draws), B.bootstrap_scores(s, draws, ms.Execution(fast=False))
    for name in CANDIDATE_FAST:
        np.testing.assert_allclose(fast[name], slow[name], rtol=0, atol=1e-12)
        np.testing.assert_array_equal(E.rank_codes(fast[name]), E.rank_codes(slow[name]))


def test_candidate_fast_paths_fall_back():
    v = np.array([[1.0, 2.0], [2.0, np.nan], [3.0, 3.0]])
    s = E.setup(matrix(v), ["mean"], ms.Execution(seed=1))
    assert "missing" in B.candidate_fast_reason(s, "mean", False)
    s = E.setup(matrix(v[[0, 2]], weights=[0.5, 1.5]), ["copeland", "median", "schulze"], ms.Execution(seed=1))
    assert B.candidate_fast_reason(s, "copeland", False) == "non-integer judge weights"
    assert "equal judge weights" in B.candidate_fast_reason(s, "median", True)
    assert B.candidate_fast_reason(s, "schulze", True) == "no fast path for this method"
    dense = E.setup(matrix(v[[0, 2]]), ["average_rank"], ms.Execution(params={"ties": "dense"}, seed=1))
    assert "ties='average'" in B.candidate_fast_reason(dense, "average_rank", False)


@pytest.mark.parametrize("name", COUNTED + ["copeland", "success_rate", "sco"])
def test_counts_scores_equal_the_public_rank(name):
    rng = np.random.default_rng(3)
    v = rng.integers(0, 5, size=(9, 6)).astype(float)
    pc = ms.PairwiseCounts.from_matrix(v, np.array([1, 2, 1, 1, 3, 1.0]))
    for seed in (1, 2):
        np.testing.assert_array_equal(per_trial.counts_scores(pc, ms.get_ranking_method(name), {}, seed),
                                      ms.rank(pc, name, seed=seed).scores)
    if name == "epp":
        np.testing.assert_array_equal(per_trial.counts_scores(pc, ms.get_ranking_method(name), {"ridge": 0.5}, 1),
                                      ms.rank(pc, name, ridge=0.5).scores)


@pytest.mark.parametrize("axis", ["judges", "candidates", "both"])
def test_direct_value_path_equals_the_registry(axis):
    rng = np.random.default_rng(6)
    v = rng.integers(1, 5, size=(7, 6)) + rng.random(size=(7, 6)).round(1)
    m = matrix(v, weights=[1, 2, 1, 1, 3, 1], higher_is_better=[True] * 4 + [False] * 2)
    names = ["mean", "median", "relative_difference"]
    for params in ({}, {"relative_difference": {"on": "ranks"}}):
        s = E.setup(m, names, ms.Execution(params=params, seed=1))
        assert all(B.direct_values_reason(s, name) is None for name in names)
        draws = D.draw(4, 15, axis, s.n, s.m)
        fast, slow = B.bootstrap_scores(s, draws), B.bootstrap_scores(s, draws, ms.Execution(fast=False))
        for name in names:  # the fast paths are products: equal up to rounding
            if (B.fast_path_reason(s, name) is None if axis == "judges" else
                    B.candidate_fast_reason(s, name, axis == "both") is None):
                np.testing.assert_allclose(fast[name], slow[name], rtol=0, atol=1e-12)
            else:
                np.testing.assert_array_equal(fast[name], slow[name])
    holes = matrix(np.where(v > 4.5, np.nan, v))
    assert "missing" in B.direct_values_reason(E.setup(holes, "mean", ms.Execution(seed=1)), "mean")


def test_counts_path_falls_back_when_it_cannot_be_exact():
    m = matrix([[1, 2], [2, 1], [3, 3]], weights=[0.5, 1.5])
    s = E.setup(m, ["schulze", "median"], ms.Execution(seed=1))
    judges = D.draw(1, 2, "judges", 3, 2)
    assert B.counts_path_reason(s, "schulze", judges) == "non-integer judge weights"
    assert B.counts_path_reason(s, "schulze", D.draw(1, 2, "candidates", 3, 2)) is None
    assert "scores" in B.counts_path_reason(s, "median", judges)
    s2 = E.setup(matrix([[1, np.nan], [2, 1], [3, 3]]), "schulze", ms.Execution(missing="pairwise", seed=1))
    assert "missing" in B.counts_path_reason(s2, "schulze", judges)


# --------------------------------------------------------------------------- parallel
def test_two_jobs_equal_one_job():
    m = noisy(4, n=7, m=9)
    names = ["median", "copeland", "schulze", "epp"]
    for axis in ("judges", "candidates", "both"):
        one = stability(m, names, axis=axis, q=8, r=2, run=ms.Execution(seed=3))
        two = stability(m, names, axis=axis, q=8, r=2, run=ms.Execution(seed=3, jobs=2))
        assert one.to_dict() == two.to_dict()
    a = compare_methods(m, names, n_trials=30, q=5, r=2, run=ms.Execution(seed=8))
    b = compare_methods(m, names, n_trials=30, q=5, r=2, run=ms.Execution(seed=8, jobs=2, backend="threading"))
    assert a.to_dict() == b.to_dict()
    u1 = rank_uncertainty(m, "ranked_pairs", n_trials=40, run=ms.Execution(seed=2))
    u2 = rank_uncertainty(m, "ranked_pairs", n_trials=40, run=ms.Execution(seed=2, jobs=2))
    assert u1.to_dict() == u2.to_dict()


def test_progress_reaches_the_total():
    calls = []
    stability(noisy(n=5, m=6), ["median"], q=4, r=3, run=ms.Execution(progress=lambda _stage, d, t: calls.append((d, t))))
    assert calls[-1] == (12, 12) and [d for d, _ in calls] == sorted(d for d, _ in calls)
    with pytest.raises(ConfigError, match="`jobs` must be a positive integer or -1"):
        stability(noisy(n=5, m=6), "median", q=4, r=1, run=ms.Execution(jobs=0))


def test_dask_backend_on_a_local_cluster():
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("dask[distributed] is missing under CI: install metascore[dask]")
        pytest.skip("dask[distributed] is not installed (pip install 'metascore[dask]')")
    m = noisy(5, n=6, m=8)
    names = ["median", "kemeny_young", "epp"]
    local = stability(m, names, axis="both", q=6, r=2, run=ms.Execution(seed=4))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster):
        remote = stability(m, names, axis="both", q=6, r=2, run=ms.Execution(seed=4, jobs=2, backend="dask"))
    assert local.to_dict() == remote.to_dict()


@pytest.mark.parametrize("seed", [1, 3])
def test_epp_resamples_split_ties_as_the_registry(seed):
    # Tie-heavy judges and two identical candidates: strengths equal in exact arithmetic
    # must come out equal (or apart) as in the registry's fit from zero. A warm-started fit
    # that stopped on a vanishing line-search step (7e-8 away) split one such tie here.
    rng = np.random.default_rng(seed)
    v = rng.integers(0, 3, size=(15, 30)).astype(float)
    v[3] = v[7]
    s = E.setup(matrix(v), ["epp"], ms.Execution(seed=1))
    for axis in ("judges", "both"):
        draws = D.draw(seed, 100, axis, s.n, s.m)
        fast = B.bootstrap_scores(s, draws)["epp"]
        slow = B.bootstrap_scores(s, draws, ms.Execution(fast=False))["epp"]
        np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(E.rank_codes(fast), E.rank_codes(slow))


@pytest.mark.parametrize("weights", [None, "decimal"])
def test_schulze_resamples_equal_the_registry(weights):
    # Tie-heavy judges (zero margins), two identical candidates, unweighted judges (the
    # margins are their own codes) or decimal weights (coded by rank): the scores alone on
    # every judge resample and the clones' relation on every candidate resample are the
    # registry's, to the bit.
    rng = np.random.default_rng(8)
    v = rng.integers(0, 3, size=(15, 30)).astype(float)
    v[3] = v[7]
    w = None if weights is None else rng.integers(1, 30, size=30) / 10.0
    s = E.setup(matrix(v, weights=w), ["schulze"], ms.Execution(seed=1))
    for axis in ("judges", "candidates", "both"):
        draws = D.draw(2, 100, axis, s.n, s.m)
        fast = B.bootstrap_scores(s, draws)["schulze"]
        slow = B.bootstrap_scores(s, draws, ms.Execution(fast=False))["schulze"]
        np.testing.assert_array_equal(fast, slow)


# --------------------------------------------------------------------------- no usable judge
# c0 and c1 have no score on j1: a "both" resample drawing only c0/c1 and only j1 has
# nothing to rank (probability 8/27 x 1/4); the candidate or judge axis alone never does.
NOJUDGE = [[1, np.nan], [2, np.nan], [3, 1]]
SKIP_METHODS = ["mean", "median", "copeland", "schulze", "kemeny_young", "epp"]


def plain_usable(values, draws) -> np.ndarray:
    """Whether some drawn judge scores some drawn candidate, trial by trial."""
    values = np.asarray(values, dtype=float)
    out = []
    for t in range(draws.trials):
        rows = np.arange(len(values)) if draws.candidates is None else draws.candidates[t]
        cols = np.arange(values.shape[1]) if draws.counts is None else np.flatnonzero(draws.counts[t])
        out.append(bool(np.isfinite(values[np.ix_(rows, cols)]).any()))
    return np.array(out)


def seed_skipping_all(trials: int) -> int:
    """The first seed whose first ``trials`` "both" resamples of NOJUDGE are all unusable."""
    return next(seed for seed in range(20_000)
                if not plain_usable(NOJUDGE, D.draw(seed, trials, "both", 3, 2)).any())


@pytest.mark.parametrize("axis", ["judges", "candidates", "both"])
def test_usable_trials_matches_a_plain_loop(axis):
    s = E.setup(matrix(NOJUDGE), "mean", ms.Execution(seed=1))
    draws = D.draw(2, 300, axis, s.n, s.m)
    usable = B.usable_trials(s, draws)
    np.testing.assert_array_equal(usable, plain_usable(NOJUDGE, draws))
    assert usable.all() == (axis != "both")


def test_bootstrap_scores_leave_a_trial_without_a_judge_nan_on_every_path():
    # hand-made judge draws: trial 1 draws no judge at all; every path (fast, pairwise
    # counts, direct values, registry) leaves it NaN and scores the others as the registry
    m = matrix([[3, 1, 2], [2, 3, 1], [1, 2, 3], [0, 0, 4]], weights=[1, 2, 1])
    names = ["mean", "copeland", "kemeny_young", "median", "random_dictator"]
    s = E.setup(m, names, ms.Execution(seed=1))
    counts = np.array([[1, 1, 1], [0, 0, 0], [3, 0, 1]])
    draws = D.Draws("judges", counts, None, np.array([5, 6, 7]), 1)
    np.testing.assert_array_equal(B.usable_trials(s, draws), [True, False, True])
    assert B.direct_values_reason(s, "median") is None and B.fast_path_reason(s, "median")
    for fast in (True, False):
        out = B.bootstrap_scores(s, draws, ms.Execution(fast=fast))
        for name in names:
            assert np.isnan(out[name][1]).all(), name
            for t in (0, 2):
                sub = s.matrix.subset(judges=np.repeat(np.arange(3), counts[t]))
                expected = ms.rank(sub, name, seed=int(draws.seeds[t])).scores
                np.testing.assert_allclose(out[name][t], expected, rtol=0, atol=1e-12)


def test_winner_rank_and_condorcet_rate_skip_resamples_without_a_usable_judge():
    m = matrix(NOJUDGE)
    usable = plain_usable(NOJUDGE, D.draw(4, 200, "both", 3, 2))
    skipped = int((~usable).sum())
    assert 0 < skipped < 200
    wr = winner_rank_bootstrap(m, SKIP_METHODS, axis="both", n_trials=200, run=ms.Execution(seed=4))
    cr = condorcet_rate(m, SKIP_METHODS, axis="both", n_trials=200, run=ms.Execution(seed=4))
    note = f"{skipped} of 200 resamples kept no usable judge"
    for res in (wr, cr):
        assert res.skipped == skipped and res.notes[0].startswith(note)
        assert res.to_dict()["notes"][0].startswith(note)
        for name in SKIP_METHODS:
            assert np.isnan(res.values[name][~usable]).all()
    assert wr.n_valid == 200 - skipped
    for name in SKIP_METHODS:
        assert np.isfinite(wr.values[name][usable]).all()
        assert wr.mean[name] == pytest.approx(wr.values[name][usable].mean(), abs=1e-12)
    assert cr.n_valid == int(np.isfinite(cr.values["mean"]).sum()) <= 200 - skipped


def test_generalization_skips_resamples_without_in_bag_or_out_of_bag_judges():
    m = matrix(NOJUDGE)
    draws = D.draw(6, 200, "both", 3, 2)
    usable = plain_usable(NOJUDGE, draws)
    no_oob = int((usable & (draws.counts > 0).all(axis=1)).sum())
    res = generalization(m, SKIP_METHODS, axis="both", n_trials=200, run=ms.Execution(seed=6))
    assert res.skipped == int((~usable).sum()) + no_oob and (~usable).any() and no_oob
    assert res.notes == (
        f"{int((~usable).sum())} of 200 resamples kept no usable judge (every drawn judge "
        "lacks a score for every drawn candidate) and were skipped.",
        f"{no_oob} of 200 resamples drew every judge, leaving no out-of-bag judge to test "
        "on, and were skipped.")
    for name in SKIP_METHODS:
        assert np.isnan(res.values[name][~usable]).all()
    assert 0 < res.n_valid <= 200 - res.skipped


@pytest.mark.parametrize("axis", ["both", "candidates"])
def test_stability_leaves_skipped_resamples_out_of_their_repetition(axis):
    # under the candidate axis, c0 without any score empties a resample drawing only c0
    values = NOJUDGE if axis == "both" else [[np.nan, np.nan], [2, 1], [3, 3]]
    m = matrix(values)
    q, r = 6, 12
    res = stability(m, SKIP_METHODS, axis=axis, q=q, r=r, run=ms.Execution(seed=5))
    s = E.setup(m, SKIP_METHODS, ms.Execution(seed=5))
    draws = D.draw(5, q * r, axis, 3, 2)
    usable = plain_usable(values, draws).reshape(r, q)
    assert res.skipped == int((~usable).sum()) > 0
    assert res.notes[0].startswith(f"{res.skipped} of {q * r} resamples kept no usable judge")
    scores = B.bootstrap_scores(s, draws, ms.Execution(fast=False))
    for name in SKIP_METHODS:
        codes = E.rank_codes(scores[name]).reshape(r, q, 3)
        expected = [E.concordance_of(c[ok], res.concordance) for c, ok in zip(codes, usable)]
        np.testing.assert_allclose(res.values[name], expected, rtol=0, atol=1e-12)
    assert res.to_dict()["notes"] == list(res.notes)
    assert "notes" not in stability(matrix(NOJUDGE), "mean", axis="judges", q=3, r=2).to_dict()


def test_every_resample_skipped_leaves_each_criterion_undefined():
    m = matrix(NOJUDGE)
    one = seed_skipping_all(1)
    results = {
        "the winner rank": winner_rank_bootstrap(m, ["mean", "copeland"], axis="both", n_trials=1, run=ms.Execution(seed=one)),
        "the rate": condorcet_rate(m, ["mean", "copeland"], axis="both", n_trials=1, run=ms.Execution(seed=one)),
        "the generalization": generalization(m, ["mean", "copeland"], axis="both", n_trials=1, run=ms.Execution(seed=one)),
    }
    for what, res in results.items():
        assert res.skipped == 1 and res.n_valid == 0
        assert res.notes[-1] == f"every resample was skipped; {what} is undefined."
        d = res.to_dict()
        assert d["mean"] == {"mean": None, "copeland": None} == d["std"]
        assert json.dumps(d, allow_nan=False)
    st = stability(m, ["mean", "copeland"], axis="both", q=2, r=1, run=ms.Execution(seed=seed_skipping_all(2)))
    assert st.skipped == 2 and np.isnan(st.values["mean"]).all()
    assert st.notes[-1] == ("1 of 1 repetitions kept fewer than 2 rankings; their concordance "
                            "is undefined, and so is the stability.")
    assert st.to_dict()["mean"] == {"mean": None, "copeland": None}


def _without_judges_in(trial: int):
    """``D.plan_draws`` whose judge draws of one trial are empty (no judge drawn)."""
    real = D.plan_draws

    class Emptied(D.DrawPlan):
        def chunk(self, lo: int, hi: int) -> D.Draws:
            d = super().chunk(lo, hi)
            if lo <= trial < hi:
                counts = d.counts.copy()
                counts[trial - lo] = 0
                d = D.Draws(d.axis, counts, d.candidates, d.seeds, d.seed)
            return d

    def plan(*args, **kw):
        return Emptied(**dataclasses.asdict(real(*args, **kw)))
    return plan


def test_judge_axis_procedures_skip_a_resample_without_judges(monkeypatch):
    # a judge-axis resample keeps every candidate and draws judges that each score one,
    # so only an empty judge draw (forced here) has no usable judge: it is skipped too
    m = noisy(2, n=5, m=6)
    plan = _without_judges_in(1)
    for module in ("uncertainty", "stability"):  # where these criteria plan their draws
        monkeypatch.setattr(importlib.import_module(f"metascore.analysis.{module}"), "plan_draws", plan)
    u = rank_uncertainty(m, "copeland", n_trials=40, run=ms.Execution(seed=3))
    s = E.setup(m, "copeland", ms.Execution(seed=3))
    draws = plan(3, 40, "judges", s.n, s.m).chunk(0, 40)
    scores = np.delete(B.bootstrap_scores(s, draws, ms.Execution(fast=False))["copeland"], 1, axis=0)
    ranks = E.fractional_ranks_rows(E.rank_codes(scores))
    assert u.skipped == 1 and u.to_dict()["notes"] == list(u.notes)
    assert u.notes[0].startswith("1 of 40 resamples kept no usable judge")
    np.testing.assert_allclose(u.mean_rank, ranks.mean(axis=0), rtol=0, atol=1e-12)
    curve = stability_vs_judges(m, ["copeland", "mean"], [2, 4], q=4, r=2, run=ms.Execution(seed=3))
    assert curve.skipped == 2 and curve.notes[0].startswith("2 of 16 resamples kept")
    for k, size in enumerate((2, 4)):
        draws = plan(3, 8, "judges", s.n, s.m, judges=size).chunk(0, 8)
        codes = E.rank_codes(B.bootstrap_scores(s, draws, ms.Execution(fast=False))["copeland"])
        expected = [E.concordance_of(codes[[0, 2, 3]], "kendall_w"),
                    E.concordance_of(codes[4:], "kendall_w")]
        assert curve.mean["copeland"][k] == pytest.approx(np.mean(expected), abs=1e-12)


def test_pairwise_winner_rank_counts_only_winners_with_a_score():
    # missing='pairwise': A has no score on j1. A resample of j1 alone ranks B and A tied
    # first (A filled with the worst value): A has no rank there, so the trial is undefined
    # for the mean; a resample with j0 has a winner rank whatever A's row holds
    m = matrix([[1, np.nan], [1, 2]])
    res = winner_rank_bootstrap(m, ["mean"], axis="judges", n_trials=60, run=ms.Execution(seed=2, missing="pairwise"))
    draws = D.draw(2, 60, "judges", 2, 2)
    only_j1 = draws.counts[:, 0] == 0
    assert 0 < only_j1.sum() < 60
    assert np.isnan(res.values["mean"][only_j1]).all()
    assert np.isfinite(res.values["mean"][~only_j1]).all()
    assert res.n_valid == 60 - only_j1.sum() and res.skipped == 0
    assert res.notes == (f"mean: in {only_j1.sum()} of 60 resamples a winner has no score on "
                         "the drawn judges (missing='pairwise'); its winner rank is undefined "
                         "there.",)
    # A has no score on j1 but C wins every resample: the winner rank is always defined
    # (A's undefined average rank is not the winner's)
    m = matrix([[1, np.nan], [2, 2], [3, 3]])
    res = winner_rank_bootstrap(m, ["mean"], axis="judges", n_trials=60, run=ms.Execution(seed=2, missing="pairwise"))
    assert res.n_valid == 60 and res.notes == ()
    np.testing.assert_array_equal(res.values["mean"], np.ones(60))
