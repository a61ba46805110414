"""Soft Condorcet Optimization: loss and gradient, solvers, Theorem 5 in practice, sparsity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import check_grad
from scipy.special import expit

import metascore as ms
from metascore.methods.sco import sigmoid_loss

WARMUP = [["A", "B", "C"]] * 2 + [["C", "A", "B"]] * 3


def test_sigmoid_loss_is_the_paper_double_sum(rng):
    counts = ms.PairwiseCounts.from_matrix(rng.integers(0, 4, size=(5, 6)).astype(float))
    theta = rng.uniform(0, 5, size=5)
    tau = 0.7
    N = counts.wins
    direct = (N * expit((theta[None, :] - theta[:, None]) / tau)).sum()  # N(a,b) s((θb-θa)/τ)
    value, _ = sigmoid_loss(theta, *counts.pairs(), tau=tau)
    assert value == pytest.approx(direct)


def test_sigmoid_loss_gradient_matches_finite_differences(rng):
    counts = ms.PairwiseCounts.from_matrix(rng.normal(size=(6, 4)))
    pairs = counts.pairs()
    theta = rng.uniform(0, 3, size=6)
    err = check_grad(lambda t: sigmoid_loss(t, *pairs, tau=1.3)[0],
                     lambda t: sigmoid_loss(t, *pairs, tau=1.3)[1], theta)
    assert err < 1e-6


def test_warmup_ratings_match_the_paper_example():
    r = ms.rank(ms.PairwiseCounts.from_votes(WARMUP), "sco")
    assert r.ranked_candidates() == ["C", "A", "B"]
    assert r.details["loss"] == pytest.approx(4.0, abs=1e-6)  # the Kemeny distance, smoothed
    assert r.details["converged"] is True
    assert r.details["regime"] == "complete" and r.details["early_stopping"] is False
    assert ((0 <= r.scores) & (r.scores <= 100)).all()


def test_box_and_temperature_are_respected():
    counts = ms.PairwiseCounts.from_votes(WARMUP)
    r = ms.rank(counts, "sco", theta_min=-1.0, theta_max=1.0, tau=0.1)
    assert ((-1 <= r.scores) & (r.scores <= 1)).all()
    assert r.ranked_candidates() == ["C", "A", "B"]


def test_sgd_is_seeded():
    counts = ms.PairwiseCounts.from_votes(WARMUP)
    kw = dict(solver="sgd", iterations=300, learning_rate=0.5)
    r1, r2 = ms.rank(counts, "sco", seed=1, **kw), ms.rank(counts, "sco", seed=1, **kw)
    r3 = ms.rank(counts, "sco", seed=2, **kw)
    np.testing.assert_array_equal(r1.scores, r2.scores)
    assert not np.array_equal(r1.scores, r3.scores)
    assert r1.seed == 1


def test_fenchel_young_ranks_by_win_rate_and_is_seeded():
    counts = ms.PairwiseCounts.from_votes(WARMUP)
    r1 = ms.rank(counts, "sco_fenchel_young", seed=4)
    r2 = ms.rank(counts, "sco_fenchel_young", seed=4)
    np.testing.assert_array_equal(r1.scores, r2.scores)
    assert r1.ranked_candidates() == ["A", "C", "B"]  # paper Section 4.1


def test_sparse_counts_give_the_dense_result(rng):
    votes = [list(rng.permutation(list("abcdefg"))[:4]) for _ in range(30)]
    dense = ms.rank(ms.PairwiseCounts.from_votes(votes), "sco")
    sparse = ms.rank(ms.PairwiseCounts.from_votes(votes, sparse=True), "sco")
    np.testing.assert_allclose(sparse.scores, dense.scores, atol=1e-8)


def test_uncompared_candidate_stays_in_the_middle():
    counts = ms.PairwiseCounts.from_votes([["a", "b"], ["c"]])
    r = ms.rank(counts, "sco")
    assert r.score_of("c") == 50.0
    assert r.score_of("a") > 50.0 > r.score_of("b")


@settings(max_examples=150)
@given(values=st.lists(st.integers(0, 3), min_size=4, max_size=70), n=st.integers(3, 7))
def test_condorcet_winner_is_rated_first_by_sco_and_kemeny(values, n):
    """Theorem 5 in practice: whenever a Condorcet winner exists, it is alone on top."""
    m = len(values) // n
    if m == 0:
        return
    x = np.array(values[: n * m], dtype=float).reshape(n, m)
    matrix = ms.ScoreMatrix.from_array(x, [f"c{i}" for i in range(n)])
    winner = ms.condorcet_winner(matrix)
    if winner is None:
        return
    for method in ("sco", "kemeny_young"):
        r = ms.rank(matrix, method)
        assert r.winner == winner and list(r.positions).count(1) == 1, method


def test_sco_approximates_kemeny(rng):
    """Paper Table 2: small normalized Kendall tau distance to the Kemeny ranking."""
    distances = []
    for _ in range(20):
        values = rng.normal(size=(8, 7)) + rng.normal(size=8)[:, None]
        matrix = ms.ScoreMatrix.from_array(values, [f"c{i}" for i in range(8)])
        kem, sco = ms.rank(matrix, "kemeny_young"), ms.rank(matrix, "sco")
        distances.append(ms.stats.kendall_tau_distance(kem.scores, sco.scores))
    assert np.mean(distances) < 0.05


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (dict(theta_min=5.0, theta_max=5.0), "`theta_min` must be below `theta_max`"),
        (dict(tau=0.0), "`tau` must be a positive number; got 0.0"),
        (dict(solver="adam"), r"`solver` must be one of \['lbfgs', 'sgd'\]; got 'adam'"),
        (dict(solver="sgd", batch_size=0), "`batch_size` must be a positive integer; got 0"),
        (dict(max_iter=1.5), "`max_iter` must be 'auto' or a positive integer; got 1.5"),
        (dict(max_iter="fast"), "`max_iter` must be 'auto' or a positive integer; got 'fast'"),
    ],
)
def test_bad_parameters_are_refused(params, message):
    with pytest.raises(ms.ConfigError, match=message):
        ms.rank(ms.PairwiseCounts.from_votes(WARMUP), "sco", **params)


def test_box_lbfgs_reaches_the_scipy_l_bfgs_b_minimum(rng):
    from scipy.optimize import minimize

    from metascore.methods.sco import box_lbfgs

    counts = ms.PairwiseCounts.from_matrix(rng.normal(size=(9, 6)) + rng.normal(size=(9, 1)))
    pairs = counts.pairs()
    fun = lambda th: sigmoid_loss(th, *pairs, tau=2.0)  # noqa: E731
    x, nit, converged = box_lbfgs(fun, np.full(9, 2.0), 0.0, 4.0, max_iter=200)
    ref = minimize(fun, np.full(9, 2.0), jac=True, method="L-BFGS-B", bounds=[(0.0, 4.0)] * 9,
                   options={"ftol": 1e-14, "gtol": 1e-12, "maxiter": 500})
    assert converged and nit < 200 and ((0 <= x) & (x <= 4)).all()
    assert fun(x)[0] == pytest.approx(ref.fun, rel=1e-7)
    # a box-constrained quadratic with a known solution: clip of the free minimum
    target = np.array([-3.0, 0.5, 7.0])
    x, _, converged = box_lbfgs(lambda t: (((t - target) ** 2).sum(), 2 * (t - target)),
                                np.zeros(3), 0.0, 1.0, max_iter=50)
    assert converged
    np.testing.assert_allclose(x, [0.0, 0.5, 1.0], atol=1e-8)


def contests(rng, n: int, count: int, k: int, noise: float) -> ms.PairwiseCounts:
    """``count`` contests of ``k`` distinct candidates ordered by skill + Gumbel ``noise``."""
    skill = np.linspace(0.0, 3.0, n)
    votes = []
    for _ in range(count):
        agents = rng.choice(n, k, replace=False)
        perf = skill[agents] + noise * rng.gumbel(size=k)
        votes.append([f"c{i:03d}" for i in agents[np.argsort(-perf)]])
    return ms.PairwiseCounts.from_votes(votes, candidates=[f"c{i:03d}" for i in range(n)])


def test_auto_budget_stops_early_on_noisy_sparse_contests(rng):
    counts = contests(rng, 300, 150, 7, noise=1.0)  # every agent in ~3.5 contests, upsets common
    assert counts.pairs()[0].size < 300 * 299 // 2
    r = ms.rank(counts, "sco")
    d = r.details
    assert d["regime"] == "sparse_noisy" and d["early_stopping"] is True
    assert d["iterations"] == 3 and d["converged"] is False and d["contradicted"] > 0.15
    # the stop is exactly the explicit budget of the check's iteration count
    np.testing.assert_array_equal(r.scores, ms.rank(counts, "sco", max_iter=3).scores)
    assert ms.rank(counts, "sco", seed=99).scores.tolist() == r.scores.tolist()  # deterministic


def test_auto_budget_converges_on_consistent_sparse_contests(rng):
    counts = contests(rng, 300, 150, 7, noise=0.01)  # almost no upsets
    assert counts.pairs()[0].size < 300 * 299 // 2
    d = ms.rank(counts, "sco").details
    assert d["regime"] == "sparse_consistent" and d["early_stopping"] is False
    assert d["iterations"] > 3 and d["contradicted"] <= 0.15


def test_complete_comparisons_get_the_full_budget(rng):
    # noisy judges, but every pair is compared (a score matrix without missing cells)
    matrix = ms.ScoreMatrix.from_array(rng.normal(size=(30, 4)), [f"c{i}" for i in range(30)])
    auto, full = ms.rank(matrix, "sco"), ms.rank(matrix, "sco", max_iter=100)
    assert auto.details["regime"] == "complete" and auto.details["early_stopping"] is False
    assert auto.details["iterations"] > 3 and "contradicted" not in auto.details
    np.testing.assert_array_equal(auto.scores, full.scores)


def test_explicit_budget_is_honoured(rng):
    counts = contests(rng, 300, 150, 7, noise=1.0)
    for budget in (1, 7, 40):
        d = ms.rank(counts, "sco", max_iter=budget).details
        assert d["regime"] == "explicit" and d["early_stopping"] is False
        assert d["iterations"] == budget and "contradicted" not in d
    explicit = ms.rank(counts, "sco", max_iter=100)
    assert explicit.details["iterations"] > 3
    assert explicit.details["loss"] < ms.rank(counts, "sco").details["loss"]


def test_condorcet_winner_in_incomplete_comparisons_gets_the_full_budget():
    # "w" beats everyone head to head, once each; "x0" wins many more pairs (over x1..x3)
    # and the rest meet in cycles, never all pairwise: the comparison graph is incomplete.
    others = [f"x{i}" for i in range(8)]
    votes = [["w", o] for o in others] + [["x0", "x1", "x2", "x3"]] * 6
    for i in range(1, 8):
        a, b, c = others[i], others[i % 7 + 1], others[(i + 2) % 7 + 1]
        votes += [[a, b, c], [b, c, a], [c, a, b]]
    counts = ms.PairwiseCounts.from_votes(votes)
    assert counts.pairs()[0].size < 9 * 8 // 2 and ms.condorcet_winner(counts) == "w"
    assert ms.rank(counts, "sco", max_iter=3).winner == "x0"  # stopping early would lose it
    r = ms.rank(counts, "sco")
    assert r.details["regime"] == "condorcet_winner" and r.details["early_stopping"] is False
    assert r.details["converged"] is True
    assert r.winner == "w" and list(r.positions).count(1) == 1


def test_contradicted_share_weights_majorities_by_margin():
    from metascore.methods.sco import contradicted_share

    a, b = np.array([0, 0, 1]), np.array([1, 2, 2])
    margin = np.array([3.0, -1.0, 2.0])  # 0 > 1 by 3, 2 > 0 by 1, 1 > 2 by 2
    assert contradicted_share(np.array([3.0, 2.0, 1.0]), a, b, margin) == pytest.approx(1 / 6)
    assert contradicted_share(np.array([1.0, 1.0, 1.0]), a, b, margin) == pytest.approx(0.5)
    assert contradicted_share(np.array([2.0, 1.0, 3.0]), a, b, margin) == pytest.approx(2 / 6)
