"""EPP / Elo: Bradley-Terry fit, gradient, confidence intervals, deviance, edge cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import check_grad
from scipy.special import expit

import metascore as ms
from metascore.methods import epp as E


def bt_counts(beta: np.ndarray, games: int, rng: np.random.Generator) -> ms.PairwiseCounts:
    """Every pair plays ``games`` independent Bradley-Terry games (no ties)."""
    n = beta.size
    p = expit(beta[:, None] - beta[None, :])
    upper = np.triu(rng.binomial(games, p), 1).astype(float)
    wins = upper + np.triu(games - upper, 1).T
    compared = np.full((n, n), float(games))
    return ms.PairwiseCounts(tuple(f"m{i}" for i in range(n)), wins, compared, float(games))


def test_gradient_matches_finite_differences(rng):
    counts = bt_counts(rng.normal(size=6), 7, rng)
    a, b, wins, games = E._pair_data(counts)
    for _ in range(3):
        beta = rng.normal(size=6)
        err = check_grad(
            lambda x: E.bradley_terry_loss(x, a, b, wins, games, 0.01)[0],
            lambda x: E.bradley_terry_loss(x, a, b, wins, games, 0.01)[1],
            beta,
        )
        assert err < 1e-5


def test_fit_solves_the_score_equations_with_zero_sum(rng):
    counts = bt_counts(rng.normal(size=5), 20, rng)
    fit = E.fit_bradley_terry(counts)
    a, b, wins, games = fit.pairs
    _, grad = E.bradley_terry_loss(fit.beta, a, b, wins, games, E.DEFAULT_RIDGE)
    assert np.abs(grad).max() < 1e-7
    assert abs(fit.beta.sum()) < 1e-12


def test_recovers_known_strengths_within_the_confidence_intervals():
    rng = np.random.default_rng(7)
    truth = np.array([1.2, 0.6, 0.1, -0.3, -0.6, -1.0])
    truth -= truth.mean()
    covered, total = 0, 0
    for _ in range(40):
        r = ms.rank(bt_counts(truth, 300, rng), "epp")
        covered += int(((r.details["ci_low"] <= truth) & (truth <= r.details["ci_high"])).sum())
        total += truth.size
    assert 0.90 <= covered / total <= 0.99  # nominal 0.95


def test_confidence_intervals_shrink_as_judges_grow(rng):
    truth = np.array([0.5, 0.0, -0.5])
    widths = []
    for games in (20, 200, 2000):
        r = ms.rank(bt_counts(truth, games, rng), "epp", level=0.9)
        widths.append(float(np.mean(r.details["ci_high"] - r.details["ci_low"])))
    assert widths[0] > widths[1] > widths[2]
    assert widths[0] / widths[2] == pytest.approx(10, rel=0.3)  # 1 / sqrt(games)


def test_ties_count_half_to_each_side():
    # One judge ties a and b, another prefers a: a won 1.5 of 2, so p = 0.75 (up to ridge).
    values = np.array([[1.0, 2.0], [1.0, 1.0]])
    r = ms.rank(ms.ScoreMatrix.from_array(values, ["a", "b"]), "epp", ridge=1e-8)
    assert r.details["p"][0, 1] == pytest.approx(0.75, abs=1e-6)
    assert r.details["beta"][0] == pytest.approx(np.log(3) / 2, abs=1e-6)
    assert r.details["deviance"] == pytest.approx(0.0, abs=1e-8)  # 2 players: saturated


def test_deviance_follows_the_paper(rng):
    counts = bt_counts(np.array([0.8, 0.0, -0.3, -0.5]), 15, rng)
    r = ms.rank(counts, "epp")
    p, (wins, games) = r.details["p"], (counts.wins, counts.compared)
    off = ~np.eye(4, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(wins > 0, wins * np.log(wins / (games * p)), 0.0)
    # Binomial deviance over unordered pairs is 2 * sum over ordered pairs; the paper's
    # regression has one row per ordered pair (i, j) and (j, i), which doubles it.
    deviance = 2 * (2 * terms[off].sum())
    assert r.details["deviance"] == pytest.approx(deviance)
    assert r.details["deviance_df"] == 4 * (4 - 2)
    assert r.details["standardized_deviance"] == pytest.approx((deviance - 8) / np.sqrt(16))


def test_all_wins_and_all_losses_stay_finite():
    values = np.array([[9, 9, 9], [5, 6, 4], [1, 1, 1]], dtype=float)  # a beats all, c loses all
    r = ms.rank(ms.ScoreMatrix.from_array(values, ["a", "b", "c"]), "epp")
    assert np.isfinite(r.scores).all() and np.isfinite(r.details["se"]).all()
    assert r.ranked_candidates() == ["a", "b", "c"]
    assert 2 < r.scores[0] < 20


def test_disconnected_comparison_graph_stays_finite_and_is_noted():
    votes = [["a", "b"]] * 3 + [["b", "a"]] + [["c", "d"]] * 2
    r = ms.rank(ms.PairwiseCounts.from_votes(votes), "epp")
    assert np.isfinite(r.scores).all() and np.isfinite(r.details["se"]).all()
    assert any("2 disconnected parts" in note for note in r.notes)
    assert r.scores[0] > r.scores[1] and r.scores[2] > r.scores[3]


def test_elo_is_the_epp_fit_on_the_elo_scale(rng):
    counts = bt_counts(np.array([0.4, 0.0, -0.4]), 30, rng)
    e, o = ms.rank(counts, "epp"), ms.rank(counts, "elo")
    np.testing.assert_allclose(o.scores, 1500 + e.scores * 400 / np.log(10))
    np.testing.assert_allclose(o.details["se"], e.details["se"] * 400 / np.log(10))
    np.testing.assert_allclose(o.details["ci_low"], 1500 + e.details["ci_low"] * 400 / np.log(10))


def test_sparse_solver_matches_dense(rng, monkeypatch):
    counts = bt_counts(rng.normal(size=8), 10, rng)
    dense = E.fit_bradley_terry(counts)
    monkeypatch.setattr(E, "DENSE_SOLVE_LIMIT", 0)
    sparse = E.fit_bradley_terry(counts)
    np.testing.assert_allclose(sparse.beta, dense.beta, atol=1e-7)
    assert sparse.se is None


def test_sparse_votes_are_accepted():
    votes = [["a", "b", "c"], ["b", "c", "a"], ["a", "c", "b"], ["c", "a", "b"]]
    dense = ms.rank(ms.PairwiseCounts.from_votes(votes), "epp")
    sparse = ms.rank(ms.PairwiseCounts.from_votes(votes, sparse=True), "epp")
    np.testing.assert_allclose(sparse.scores, dense.scores, atol=1e-10)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan")])
def test_bad_ridge_is_refused(bad):
    with pytest.raises(ms.ConfigError, match="`ridge` must be a positive number"):
        ms.rank(ms.PairwiseCounts.from_votes([["a", "b"]]), "epp", ridge=bad)


def test_bad_level_is_refused():
    with pytest.raises(ms.ConfigError, match=r"`level` must be a confidence level in \(0, 1\); got 95"):
        ms.rank(ms.PairwiseCounts.from_votes([["a", "b"]]), "elo", level=95)


def test_fit_with_multiplicities_equals_the_fit_of_the_copies():
    # a resample drawing candidates (0, 0, 1, 2, 2, 2, 3): copies tie with each other
    rng = np.random.default_rng(8)
    v = rng.integers(0, 5, size=(4, 9)).astype(float)
    drawn = np.array([0, 0, 1, 2, 2, 2, 3])
    expanded = ms.PairwiseCounts.from_matrix(v[drawn])
    fit = E.fit_bradley_terry(expanded, 0.5)
    mult = np.array([2, 1, 3, 1])
    once = ms.PairwiseCounts.from_matrix(v)
    both = np.outer(mult, mult).astype(float)
    reduced = ms.PairwiseCounts(once.candidates, once.wins * both, once.compared * both,
                                once.total_weight * 9)
    small = E.fit_bradley_terry(reduced, 0.5, multiplicity=mult, standard_errors=False,
                              start=np.arange(4.0))
    np.testing.assert_allclose(small.beta[np.unique(drawn, return_inverse=True)[1]], fit.beta,
                               atol=1e-8)
    assert small.se is None


def test_strengths_alone_equal_the_fit(rng):
    counts = bt_counts(rng.normal(size=7), 9, rng)
    np.testing.assert_array_equal(E.bradley_terry_strengths(counts, 0.3),
                                  E.fit_bradley_terry(counts, 0.3).beta)
    start, mult = rng.normal(size=7), np.array([1, 2, 1, 3, 1, 1, 2])
    np.testing.assert_array_equal(
        E.bradley_terry_strengths(counts, 0.3, start=start, multiplicity=mult),
        E.fit_bradley_terry(counts, 0.3, start=start, multiplicity=mult).beta)
    with pytest.raises(ms.ConfigError, match="ridge"):
        E.bradley_terry_strengths(counts, 0.0)


def test_gradient_by_flat_cells_equals_the_bincount_gradient(rng):
    counts = bt_counts(rng.normal(size=8), 5, rng)
    a, b, wins, games = E._pair_data(counts)
    beta = rng.normal(size=8)
    value, grad, p = E._loss(beta, a, b, wins, games, 0.2)
    value2, grad2, p2 = E._loss(beta, a, b, wins, games, 0.2, a * 8 + b)
    assert value == value2
    np.testing.assert_allclose(grad2, grad, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(p2, p)
    np.testing.assert_allclose(p, expit(beta[a] - beta[b]), rtol=1e-15)


@pytest.mark.parametrize("n, games, seed", [(20, 10**6, 0), (40, 10**9, 1), (6, 10**6, 0)])
def test_newton_converges_when_the_loss_is_too_large_to_see_the_last_steps(n, games, seed,
                                                                           monkeypatch):
    # Millions of games per pair: the loss cannot resolve the decrease of the final steps.
    # They are taken in full (one loss per step) rather than halved until the line search
    # gives up (these cases took 16 to 26 losses for 7 to 9 steps).
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n)
    counts = bt_counts(truth, games, rng)
    calls = []
    loss = E._loss
    monkeypatch.setattr(E, "_loss", lambda *args: calls.append(1) or loss(*args))
    fit = E.fit_bradley_terry(counts, standard_errors=False)
    assert len(calls) == fit.iterations + 1 and fit.iterations < 10
    a, b, wins, games_ab = fit.pairs
    _, grad = E.bradley_terry_loss(fit.beta, a, b, wins, games_ab, E.DEFAULT_RIDGE)
    assert np.abs(grad).max() < 1e-9 * games
    np.testing.assert_allclose(fit.beta, truth - truth.mean(), atol=0.01)


def test_pair_data_of_every_pair_compared_is_the_pairs_of_the_counts(rng):
    """Counts where every pair is compared take every pair without looking for them: the
    same pairs, wins and games as those :meth:`PairwiseCounts.pairs` lists."""
    seen = set()
    for n, missing in ((1, False), (2, False), (6, False), (6, True), (30, False)):
        values = rng.integers(0, 3, size=(n, 9)).astype(float)  # ties
        counts = ms.PairwiseCounts.from_matrix(values, rng.integers(1, 4, size=9).astype(float))
        if missing:  # candidates 0 and 1 never compared
            wins, compared = counts.wins.copy(), counts.compared.copy()
            wins[0, 1] = wins[1, 0] = compared[0, 1] = compared[1, 0] = 0.0
            counts = ms.PairwiseCounts(counts.candidates, wins, compared, counts.total_weight)
        a, b, n_ab, n_ba = counts.pairs()
        games = np.asarray(counts.compared, dtype=float).ravel()[a * n + b]
        keep = games > 0
        expected = (a[keep], b[keep], (n_ab + np.maximum(games - n_ab - n_ba, 0) / 2)[keep],
                    games[keep])
        for got, want in zip(E._pair_data(counts), expected):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
        seen.add(a.size == n * (n - 1) // 2)  # every pair compared, or not
    assert seen == {True, False}
