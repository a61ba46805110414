"""Analysis module: exact small cases (hand-computed), properties and error messages.

Bootstrap sizes stay tiny (q, r, n_trials) so every test runs in well under a second.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, strategies as st

import metascore as ms
from metascore.analysis import (
    condorcet_rate,
    crowdsourcing_utility,
    difficulty,
    generalization,
    judge_agreement,
    k_star,
    rank_uncertainty,
    stability,
    stability_vs_judges,
    top_k_curves,
    winner_rank,
)
from metascore.analysis import shared as E
from metascore.analysis import draws as D
from metascore.analysis import bootstrap as B
from metascore.errors import ConfigError, InputError

FAST = ["mean", "average_rank", "success_rate", "copeland"]


def matrix(values, names="ABCDEFGHIJKL", **kw):
    values = np.asarray(values, dtype=float)
    return ms.ScoreMatrix.from_array(values, list(names[: len(values)]), **kw)


def unanimous(n=5, m=4):
    return matrix(np.repeat(np.arange(n, 0, -1.0)[:, None], m, axis=1))


def random_matrix(seed=0, n=7, m=9, levels=4, missing=True):
    rng = np.random.default_rng(seed)
    v = rng.integers(0, levels, size=(n, m)).astype(float)
    if missing:
        v[2, 3] = np.nan
    return matrix(
        v, higher_is_better=[True] * (m - 3) + [False] * 3, weights=[1, 2, 1, 1, 3, 1, 1, 1, 2][:m]
    )


# --------------------------------------------------------------------------- winner rank
class TestWinnerRank:
    def test_hand_case(self):
        # average ranks: A (1+3)/2 = 2, B (2+1)/2 = 1.5, C (3+2)/2 = 2.5: B wins
        m = matrix([[3, 1], [2, 3], [1, 2]])
        assert winner_rank(m, "average_rank") == pytest.approx(1 - (1.5 - 1) / (3 - 1))

    def test_denominator_is_n_minus_one(self):
        # 4 candidates, 2 judges: winner A has ranks 1 and 2 -> 1 - 0.5/3 (m - 1 would give 0.5)
        m = matrix([[4, 3], [3, 4], [2, 2], [1, 1]])
        r = ms.rank(m, "mean")  # A and B tie at 3.5: both winners, both average rank 1.5
        assert winner_rank(m, r) == pytest.approx(1 - 0.5 / 3)

    def test_weights_and_ties_for_first(self):
        # judge weights 3 and 1: A ranks (1, 3) -> 1.5, B ranks (2, 1) -> 1.75
        m = matrix([[3, 1], [2, 3], [1, 2]], weights=[3, 1])
        assert winner_rank(m, "average_rank") == pytest.approx(1 - 0.5 / 2)
        # C wins on j1 only, A and B tie on j2 ranks 1.5: tie for first averages the winners
        m2 = matrix([[2, 2], [2, 2], [1, 1]])
        assert winner_rank(m2, "mean") == pytest.approx(1 - (1.5 - 1) / 2)

    def test_missing_counts_as_last_under_worst(self):
        # A: judge 1 rank 1, judge 2 missing -> below every present candidate: rank 3
        m = matrix([[5, np.nan], [2, 3], [1, 1]])
        r = ms.rank(m, "mean")  # A (5 + 1)/2 = 3 (missing filled with the worst value, 1), B 2.5
        assert r.winner == "A"
        assert winner_rank(m, r) == pytest.approx(1 - (2 - 1) / 2)

    def test_unknown_type(self):
        with pytest.raises(InputError, match="must be a Ranking or a method name"):
            winner_rank(matrix([[1, 2], [2, 1]]), 3)


# --------------------------------------------------------------------------- Condorcet rate
class TestCondorcetRate:
    def test_every_resample_keeps_the_condorcet_winner(self):
        # A is first on every judge, so every resample has A as Condorcet winner
        m = matrix([[9, 9, 9, 9], [1, 5, 3, 2], [2, 4, 1, 3], [3, 1, 2, 1]])
        res = condorcet_rate(m, ["copeland", "average_rank", "mean"], axis="judges", n_trials=40)
        assert res.n_valid == 40
        assert res.mean == {"copeland": 1.0, "average_rank": 1.0, "mean": 1.0}

    def test_mean_misses_in_four_ninths_of_resamples(self):
        # A beats B and C on judges 1 and 2; B crushes everyone on judge 3.
        # With counts (c1, c2, c3) of a resample of 3 judges: A is the Condorcet winner iff
        # c3 <= 1 and B iff c3 >= 2. The mean picks A iff c3 == 0 and B iff c3 >= 1, so it
        # misses exactly when c3 == 1: probability 3 (1/3)(2/3)^2 = 4/9.
        m = matrix([[0.6, 0.6, 0.0], [0.5, 0.5, 1.0], [0.4, 0.4, 0.4]])
        res = condorcet_rate(m, ["mean", "copeland"], axis="judges", n_trials=3000, run=ms.Execution(seed=7))
        assert res.n_valid == 3000
        assert res.mean["copeland"] == 1.0
        assert res.mean["mean"] == pytest.approx(5 / 9, abs=0.03)

    def test_no_condorcet_winner_is_undefined(self):
        # a Condorcet cycle on 3 judges is broken by most resamples, but the original ranks
        # A > B > C, B > C > A, C > A > B: only trials with a repeated judge have a winner
        m = matrix([[3, 1, 2], [2, 3, 1], [1, 2, 3]])
        res = condorcet_rate(m, "copeland", axis="judges", n_trials=200)
        valid = np.isfinite(res.values["copeland"])
        assert 0 < valid.sum() < 200 and res.n_valid == valid.sum()
        assert res.mean["copeland"] == 1.0
        assert json.dumps(res.to_dict(), allow_nan=False)

    @pytest.mark.parametrize("axis", ["judges", "candidates", "both"])
    @given(seed=st.integers(0, 10_000))
    def test_copeland_always_picks_it(self, axis, seed):
        m = random_matrix(seed, missing=False)
        res = condorcet_rate(m, "copeland", axis=axis, n_trials=5, run=ms.Execution(seed=seed))
        vals = res.values["copeland"]
        assert np.all(vals[np.isfinite(vals)] == 1.0)


# --------------------------------------------------------------------------- generalization
class TestGeneralization:
    def test_unanimous_judges_generalize_perfectly(self):
        res = generalization(unanimous(), ["average_rank", "copeland", "median"], n_trials=20)
        assert res.axis == "both"
        assert res.mean == pytest.approx({"average_rank": 1.0, "copeland": 1.0, "median": 1.0})

    def test_two_opposite_judges(self):
        # in-bag {j1, j1} predicts out-of-bag j2 with rho = -1 (and vice versa); a trial
        # drawing both judges has no out-of-bag judge
        m = matrix([[3, 1], [2, 2], [1, 3]])
        res = generalization(m, "average_rank", axis="judges", n_trials=50)
        vals = res.values["average_rank"]
        np.testing.assert_allclose(vals[np.isfinite(vals)], -1.0)
        assert 0 < res.n_valid < 50

    def test_constant_judge_is_skipped(self):
        # j3 ties everyone: as out-of-bag judge it is skipped; a trial drawing only j3
        # ranks all candidates equal, which predicts nothing (rho 0)
        m = matrix([[3, 3, 5], [2, 2, 5], [1, 1, 5]])
        res = generalization(m, "mean", axis="judges", n_trials=60)
        vals = res.values["mean"][np.isfinite(res.values["mean"])]
        only_j3 = vals < 0.5
        np.testing.assert_allclose(vals[~only_j3], 1.0)
        np.testing.assert_allclose(vals[only_j3], 0.0)
        assert (~only_j3).any()


# --------------------------------------------------------------------------- stability
class TestStability:
    @pytest.mark.parametrize("axis", ["judges", "candidates"])
    @pytest.mark.parametrize("concordance", ["kendall_w", "spearman"])
    def test_unanimous_matrix_is_perfectly_stable(self, axis, concordance):
        res = stability(unanimous(), FAST + ["median"], axis=axis, concordance=concordance, q=5, r=2)
        for name in res.methods:
            np.testing.assert_array_equal(res.values[name], [1.0, 1.0])

    def test_deterministic_with_seed(self):
        m = random_matrix()
        a = stability(m, ["copeland", "median"], q=4, r=2, run=ms.Execution(seed=3))
        b = stability(m, ["copeland", "median"], q=4, r=2, run=ms.Execution(seed=3))
        assert a.to_dict() == b.to_dict() and a.seed == 3
        c = stability(m, ["copeland", "median"], q=4, r=2, run=ms.Execution(seed=np.random.default_rng(3)))
        assert c.seed is None

    def test_common_random_numbers(self):
        # with two judges the median of any resample is its mean: identical methods on
        # this matrix, so identical draws give identical values (mean takes the fast path,
        # median the registry)
        m = matrix(np.random.default_rng(1).normal(size=(6, 2)))
        for axis in ("judges", "candidates"):
            res = stability(m, ["mean", "median"], axis=axis, q=6, r=3, run=ms.Execution(seed=5))
            np.testing.assert_array_equal(res.values["mean"], res.values["median"])

    def test_draws_do_not_depend_on_the_other_methods(self):
        m = random_matrix(missing=False)
        alone = stability(m, "median", q=5, r=2, run=ms.Execution(seed=9))
        together = stability(m, ["random_dictator", "median", "copeland"], q=5, r=2, run=ms.Execution(seed=9))
        np.testing.assert_array_equal(alone.values["median"], together.values["median"])

    @pytest.mark.parametrize("seed", [0, 1, 2])
    @pytest.mark.parametrize("concordance", ["kendall_w", "spearman"])
    def test_fast_paths_equal_the_registry(self, seed, concordance):
        m = random_matrix(seed)  # ties, a missing cell, weights, lower-is-better judges
        fast = stability(m, FAST, q=6, r=2, concordance=concordance, run=ms.Execution(seed=seed))
        slow = stability(m, FAST, q=6, r=2, concordance=concordance, run=ms.Execution(seed=seed, fast=False))
        for name in FAST:
            np.testing.assert_array_equal(fast.values[name], slow.values[name])

    def test_median_fast_path_with_a_missing_cell(self):
        m = random_matrix(4)
        m = ms.ScoreMatrix.from_array(m.values, m.candidates, higher_is_better=m.higher_is_better)
        s = E.setup(m, ["median"], ms.Execution(seed=1))
        assert B.fast_path_reason(s, "median") is None
        draws = D.draw(3, 20, "judges", s.n, s.m)
        np.testing.assert_array_equal(B.bootstrap_scores(s, draws)["median"],
                                      B.bootstrap_scores(s, draws, ms.Execution(fast=False))["median"])

    def test_fast_scores_equal_registry_scores(self):
        m = random_matrix(4)
        for params in ({}, {"success_rate": {"ties": "half"}}):
            s = E.setup(m, FAST, ms.Execution(params=params, seed=1))
            draws = D.draw(2, 20, "judges", s.n, s.m)
            fast = B.bootstrap_scores(s, draws)
            slow = B.bootstrap_scores(s, draws, ms.Execution(fast=False))
            for name in FAST:
                np.testing.assert_allclose(fast[name], slow[name], rtol=0, atol=1e-12)
                np.testing.assert_array_equal(E.rank_codes(fast[name]), E.rank_codes(slow[name]))

    def test_no_fast_path_for_fractional_weights_in_copeland(self):
        s = E.setup(matrix([[1, 2], [2, 1]], weights=[0.5, 1]), "copeland", ms.Execution(seed=1))
        assert B.fast_path_reason(s, "copeland") == "non-integer judge weights"

    def test_kendall_w_and_mean_spearman_agree_without_ties(self):
        # Kendall & Gibbons: mean pairwise rho = (q W - 1)/(q - 1) for untied rankings
        m = matrix(np.random.default_rng(3).normal(size=(6, 8)))
        w = stability(m, "mean", q=7, r=3, concordance="kendall_w", run=ms.Execution(seed=1)).values["mean"]
        rho = stability(m, "mean", q=7, r=3, concordance="spearman", run=ms.Execution(seed=1)).values["mean"]
        np.testing.assert_allclose(rho, (7 * w - 1) / 6)

    @pytest.mark.parametrize("seed, q, n, levels, absent", [
        (0, 6, 8, 4, 0.3), (1, 12, 30, 30, 0.4), (2, 9, 25, 3, 0.5), (3, 5, 4, 2, 0.6),
        (4, 8, 40, 1000, 0.2)])
    def test_candidate_axis_spearman_matches_a_plain_loop(self, seed, q, n, levels, absent):
        rng = np.random.default_rng(seed)
        codes = rng.integers(0, levels, size=(q, n)).astype(float)
        codes[rng.random(codes.shape) < absent] = np.nan
        codes[-1] = np.nan  # a ranking without candidates shares none
        expected = []
        for i in range(q):
            for j in range(i + 1, q):
                keep = ~np.isnan(codes[i]) & ~np.isnan(codes[j])
                x, y = codes[i][keep], codes[j][keep]
                if keep.sum() < 2:
                    continue
                fx, fy = np.ptp(x) == 0, np.ptp(y) == 0
                expected.append(1.0 if fx and fy else 0.0 if fx or fy else ms.spearman(x, y))
        assert E.concordance_of(codes, "spearman") == pytest.approx(np.mean(expected))
        assert E.concordance_of(codes, "kendall_w") == pytest.approx(
            (1 + (q - 1) * np.mean(expected)) / q)

    def test_progress_is_reported(self):
        calls = []
        stability(random_matrix(), ["median"], q=3, r=2, run=ms.Execution(progress=lambda _stage, d, t: calls.append((d, t))))
        assert calls[-1] == (6, 6) and len(calls) == 6

    def test_errors(self):
        m = random_matrix()
        with pytest.raises(ConfigError, match=r"`axis` must be one of \['judges', 'candidates', 'both'\]"):
            stability(m, "mean", axis="judge")
        with pytest.raises(ConfigError, match="`q` must be an integer >= 2; got 1"):
            stability(m, "mean", q=1)
        with pytest.raises(ConfigError, match="unknown ranking method 'copland'.*did you mean 'copeland'"):
            stability(m, ["copland"])
        with pytest.raises(ConfigError, match="listed twice"):
            stability(m, ["mean", "mean"])
        with pytest.raises(ConfigError, match="`params` names method 'median'"):
            stability(m, ["mean"], run=ms.Execution(params={"median": {}, "mean": {}}))
        with pytest.raises(ConfigError, match="has no parameter 'tie'"):
            stability(m, "success_rate", run=ms.Execution(params={"tie": "half"}))
        with pytest.raises(ConfigError, match="unknown concordance|`concordance` must be one of"):
            stability(m, "mean", concordance="kendall")


class TestStabilityVsJudges:
    def test_more_judges_more_stable(self):
        rng = np.random.default_rng(0)
        v = np.linspace(1, 0, 8)[:, None] + rng.normal(scale=0.3, size=(8, 30))
        curve = stability_vs_judges(matrix(v), ["average_rank", "mean"], [2, 30], q=10, r=2)
        for name in curve.methods:
            assert curve.mean[name][1] > curve.mean[name][0]
        frame = curve.to_frame()
        assert list(frame.columns) == ["method", "n_judges", "stability", "std"] and len(frame) == 4
        assert curve.judges_needed(0.0) == {"average_rank": 2, "mean": 2}
        assert curve.judges_needed(1.01) == {"average_rank": None, "mean": None}

    def test_default_sizes(self):
        curve = stability_vs_judges(random_matrix(), "median", q=2, r=1)
        assert curve.sizes[0] == 2 and curve.sizes[-1] == 9


# --------------------------------------------------------------------------- uncertainty
class TestRankUncertainty:
    def test_dominant_candidate_and_an_inseparable_pair(self):
        m = matrix([[9, 9, 9, 9], [5, 6, 5, 6], [6, 5, 6, 5], [1, 1, 1, 1]])
        u = rank_uncertainty(m, "average_rank", n_trials=100)
        frame = u.to_frame().set_index("candidate")
        assert frame.loc["A", "p_first"] == 1.0
        assert (frame.loc["A", "rank_lower"], frame.loc["A", "rank_upper"]) == (1.0, 1.0)
        assert frame["group"].to_dict() == {"A": 1, "B": 2, "C": 2, "D": 3}
        assert frame.loc["B", "rank_lower"] == 2.0 and frame.loc["B", "rank_upper"] == 3.0
        assert u.row("D")["rank_upper"] == 4.0
        assert u.p_first.sum() == pytest.approx(1.0)
        json.dumps(u.to_dict(), allow_nan=False)

    def test_p_first_splits_ties(self):
        m = matrix([[2, 2], [2, 2], [1, 1]])
        u = rank_uncertainty(m, "mean", n_trials=10)
        np.testing.assert_allclose(u.p_first, [0.5, 0.5, 0.0])

    def test_errors(self):
        with pytest.raises(ConfigError, match="`level` must be a number strictly between 0 and 1"):
            rank_uncertainty(unanimous(), level=95)
        with pytest.raises(InputError, match="unknown candidate 'Z'"):
            rank_uncertainty(unanimous(), n_trials=5).row("Z")


# --------------------------------------------------------------------------- agreement
class TestJudgeAgreement:
    def test_hand_case(self):
        # rank sums A 3, B 3, C 6 (mean 4): S = 6, W = 12 * 6 / (2^2 (3^3 - 3)) = 0.75
        a = judge_agreement(matrix([[3, 2], [2, 3], [1, 1]]))
        assert a.w == pytest.approx(0.75) and a.mean_spearman == pytest.approx(0.5)

    def test_identical_rankings(self):
        assert judge_agreement(unanimous()).w == pytest.approx(1.0)

    def test_pairwise_refused(self):
        with pytest.raises(ConfigError, match="needs complete rankings"):
            judge_agreement(unanimous(), run=ms.Execution(missing="pairwise"))


# --------------------------------------------------------------------------- top-k
class TestTopK:
    def test_k_star_hand_case(self):
        # discordant pairs: A-B and C-D -> d = 2, n = 4
        res = k_star({"A": 4, "B": 3, "C": 2, "D": 1}, {"A": 3, "B": 4, "C": 1, "D": 2})
        assert (res.d, res.n, res.value, res.k, res.conservative) == (2, 4, 1.5, 2, 2.0)

    def test_k_star_ties(self):
        # A-B tied in dev only; A-C and B-C discordant
        dev, final = {"A": 2, "B": 2, "C": 1}, {"A": 2, "B": 1, "C": 3}
        assert k_star(dev, final).value == pytest.approx(1 + 2 / 3)
        assert k_star(dev, final, ties="half").value == pytest.approx(1 + 2.5 / 3)

    def test_k_star_from_rankings_uses_common_candidates(self):
        dev = ms.rank(matrix([[3], [2], [1]]), "mean")
        final = ms.rank(matrix([[1], [2], [3], [0]], names="ABCZ"), "mean")
        res = k_star(dev, final)
        assert (res.n, res.d) == (3, 3)

    def test_curves_hand_case(self):
        # D: A > B > C > D, F: B > A > D > C, P: A > C > B > D
        dev = {"A": 4, "B": 3, "C": 2, "D": 1}
        final = {"B": 4, "A": 3, "D": 2, "C": 1}
        post = {"A": 4, "C": 3, "B": 2, "D": 1}
        c = top_k_curves(dev, final, post)
        # k = 1 picks A: rank 2 in F, 1 in P; k >= 2 picks B: rank 1 in F, 3 in P
        np.testing.assert_allclose(c.meta_train, [1 / 3, 0, 0, 0])
        np.testing.assert_allclose(c.meta_test, [0, 2 / 3, 2 / 3, 2 / 3])
        np.testing.assert_allclose(c.gap, [-1 / 3, 2 / 3, 2 / 3, 2 / 3])
        assert (c.k_best, c.k_star, c.n_trials, c.mode) == (1, 1.5, 1, "given")

    @pytest.mark.parametrize("mode", ["split_all", "split_final"])
    def test_meta_train_decreases_with_k(self, mode):
        rng = np.random.default_rng(0)
        v = np.linspace(1, 0, 10)[:, None] + rng.normal(scale=0.5, size=(10, 12))
        m = matrix(v)
        c = top_k_curves(m, n_trials=20) if mode == "split_all" else top_k_curves(m, m, n_trials=20)
        assert c.mode == mode and c.n_trials == 20
        assert np.all(np.diff(c.meta_train) <= 1e-12)
        assert np.all((0 <= c.meta_test) & (c.meta_test <= 1))
        json.dumps(c.to_dict(), allow_nan=False)

    @pytest.mark.parametrize("m_judges", [22, 30, 76])
    def test_the_papers_split_draws_judges_with_replacement_and_cuts_them_in_thirds(
            self, m_judges, monkeypatch):
        """METAGEN 2022's code: m judges drawn with replacement, D and F int(m/3) draws
        each, P the rest; so the phases share judges (about 28% of F's judges are also in
        P) and a phase may hold a judge twice. The default deals each judge to one phase."""
        import importlib

        topk = importlib.import_module("metascore.analysis.topk")
        seen = []
        real = topk.bootstrap_scores
        monkeypatch.setattr(topk, "bootstrap_scores",
                            lambda s, draws, *a, **kw: seen.append(draws.counts) or real(s, draws, *a, **kw))
        rng = np.random.default_rng(1)
        m = matrix(np.linspace(1, 0, 8)[:, None] + rng.normal(size=(8, m_judges)))
        third = m_judges // 3
        paper = top_k_curves(m, n_trials=400, judge_split="paper")
        counts = seen[-1].reshape(400, 3, m_judges)
        assert paper.split == "paper" and paper.to_dict()["split"] == "paper"
        assert (counts.sum(axis=2) == [third, third, m_judges - 2 * third]).all()
        shared = ((counts[:, 1] > 0) & (counts[:, 2] > 0)).sum(axis=1) / (counts[:, 1] > 0).sum(axis=1)
        # P holds m - 2 int(m/3) draws: a judge of F is in P with 1 - (1 - 1/m)^(m - 2 m//3)
        want = 1 - (1 - 1 / m_judges) ** (m_judges - 2 * third)
        assert shared.mean() == pytest.approx(want, abs=0.03)
        assert (counts > 1).any()
        disjoint = top_k_curves(m, n_trials=400)
        counts = seen[-1].reshape(400, 3, m_judges)
        assert disjoint.split == "disjoint" and counts.max() == 1
        assert (counts.sum(axis=1) == 1).all()  # each judge in exactly one phase
        for c in (paper, disjoint):
            assert c.k_band[0] <= c.k_best <= c.k_band[1]
            assert c.to_dict()["d_over_n"] == pytest.approx(c.d_mean / 8)
        with pytest.raises(ConfigError, match="`judge_split` must be one of"):
            top_k_curves(m, n_trials=4, judge_split="thirds")

    def test_the_band_of_a_flat_curve_is_wide_and_of_a_sharp_one_narrow(self):
        """k_band: where another run's best k falls. Pure noise (every phase an independent
        draw): every k is as good, the band is wide; one clear winner: k = 1 only."""
        rng = np.random.default_rng(2)
        noise = matrix(rng.normal(size=(12, 30)))
        assert np.diff(top_k_curves(noise, n_trials=300).k_band)[0] >= 4
        clear = matrix(np.linspace(3, 0, 12)[:, None] + 0.01 * rng.normal(size=(12, 30)))
        assert top_k_curves(clear, n_trials=300).k_band == (1, 1)

    def test_errors(self):
        with pytest.raises(InputError, match="`dev` must be a ScoreMatrix to split"):
            top_k_curves({"A": 1, "B": 2})
        with pytest.raises(InputError, match="at least 2 candidates ranked in both phases"):
            k_star({"A": 1}, {"A": 2, "B": 1})


# --------------------------------------------------------------------------- utility
class TestUtilityAndDifficulty:
    def test_bounded_metric(self):
        # best 0.9, mean 0.7 on [0, 1]: U = 0.9 / 0.7 with both formulas
        for formula in ("normalized", "thesis"):
            u = crowdsourcing_utility([0.5, 0.7, 0.9], 0, 1, formula=formula)
            assert u == pytest.approx(0.9 / 0.7)

    def test_lower_is_better_bounded(self):
        # error rates 0.1, 0.3, 0.5 -> 1 - s: 0.9, 0.7, 0.5
        assert crowdsourcing_utility([0.1, 0.3, 0.5], 0, 1, higher_is_better=False) == pytest.approx(0.9 / 0.7)

    def test_semi_bounded_with_random_model(self):
        # MAE 1, 2, 3; random model 4; s~ = 4 - s = 3, 2, 1 on [0, 4]
        mae = [1.0, 2.0, 3.0]
        assert crowdsourcing_utility(mae, 0, np.inf, False, s_random=4) == pytest.approx(3 / 2)
        # printed thesis formula: (3 - 2 * 0) / (2 * (4 - 0))
        assert crowdsourcing_utility(mae, 0, np.inf, False, s_random=4, formula="thesis") == pytest.approx(0.375)

    def test_single_participant_has_utility_one(self):
        assert crowdsourcing_utility([3.0], 1, 5) == 1.0
        # the printed formula gives (3/3 - 1) / (5 - 1) = 0, not 1
        assert crowdsourcing_utility([3.0], 1, 5, formula="thesis") == 0.0

    def test_utility_errors(self):
        with pytest.raises(ConfigError, match="`s_max` must be finite"):
            crowdsourcing_utility([1.0], 0, np.inf)
        with pytest.raises(InputError, match="every score equals the worst bound"):
            crowdsourcing_utility([0.0, 0.0], 0, 1)
        with pytest.raises(ConfigError, match="`formula` must be one of"):
            crowdsourcing_utility([0.5], 0, 1, formula="paper")

    def test_difficulty_per_judge(self):
        m = ms.ScoreMatrix.from_array(
            [[0.9, 0.30], [0.7, 0.10], [0.8, np.nan]], ["A", "B", "C"], ["acc", "mae"],
            higher_is_better={"mae": False},
        )
        d = difficulty(m, best_possible={"acc": 1.0, "mae": 0.0}, random_score={"acc": 0.5})
        np.testing.assert_allclose(d.best, [0.9, 0.1])
        np.testing.assert_allclose(d.intrinsic, [0.1, 0.1])
        np.testing.assert_allclose(d.modelling[:1], [0.4])
        assert np.isnan(d.modelling[1])
        assert json.loads(json.dumps(d.to_dict(), allow_nan=False))["rows"][1]["modelling_difficulty"] is None

    def test_difficulty_errors(self):
        with pytest.raises(ConfigError, match="`best_possible` names unknown judge 'ac'"):
            difficulty(matrix([[1.0]], names="A"), best_possible={"ac": 1})


# --------------------------------------------------------------------------- summary
def test_compare_methods_table():
    from metascore.analysis import compare_methods

    res = compare_methods(unanimous(4, 3), ["mean", "copeland"], n_trials=10, q=3, r=1,
                          axes={"winner_rank": "judges"})
    table = res.to_frame().set_index("method")
    assert table.loc["copeland", "condorcet"] and not table.loc["mean", "condorcet"]
    for col in ("winner_rank", "condorcet_rate", "generalization", "stability_judges", "stability_candidates"):
        assert table[col].tolist() == pytest.approx([1.0, 1.0])
    json.dumps(res.to_dict(), allow_nan=False)


@pytest.mark.parametrize("axes", [None, {"condorcet_rate": "both"}])
def test_compare_methods_equals_each_criterion_alone(axes):
    # winner rank and Condorcet rate share their draws when their axes agree
    from metascore.analysis import compare_methods, condorcet_rate, winner_rank_bootstrap

    m, names = random_matrix(5, missing=False), ["mean", "copeland", "schulze"]
    res = compare_methods(m, names, n_trials=15, q=3, r=1, axes=axes, run=ms.Execution(seed=4))
    axis = (axes or {}).get("condorcet_rate", "candidates")
    wr = winner_rank_bootstrap(m, names, n_trials=15, run=ms.Execution(seed=4))
    cr = condorcet_rate(m, names, n_trials=15, axis=axis, run=ms.Execution(seed=4))
    for name in names:
        np.testing.assert_array_equal(res.criteria["winner_rank"].values[name], wr.values[name])
        np.testing.assert_array_equal(res.criteria["condorcet_rate"].values[name], cr.values[name])


def test_analysis_refuses_an_invalid_parameter_value_before_any_work():
    m = ms.ScoreMatrix.from_array(np.eye(3), ["a", "b", "c"])
    with pytest.raises(ConfigError, match=r"method 'success_rate': `ties` must be one of"):
        E.setup(m, ["average_rank", "success_rate"], ms.Execution(params={"success_rate": {"ties": "third"}}, seed=1))


@pytest.mark.parametrize("call", ["stability", "stability_vs_judges"])
def test_a_stability_checks_its_arguments_once(monkeypatch, call):
    """The public stability functions check q, r and the concordance before their setup
    ranks anything, and their ``*_of`` step does not check them again (issue 44 item 6)."""
    import sys

    stab = sys.modules["metascore.analysis.stability"]  # the package's `stability` is the function
    checked: list[str] = []
    real = stab.positive_int

    def counted(value, name, *args):
        checked.append(name)
        return real(value, name, *args)

    monkeypatch.setattr(stab, "positive_int", counted)
    m = ms.ScoreMatrix.from_array([[3, 1, 2], [2, 2, 3], [1, 3, 1]], ["A", "B", "C"])
    getattr(stab, call)(m, "average_rank", q=3, r=2, **({"sizes": [2]} if call != "stability" else {}))
    assert [n for n in checked if n in ("q", "r")] == ["q", "r"]
    with pytest.raises(ConfigError, match="q"):
        getattr(stab, call)(m, "average_rank", q=1, r=2)
