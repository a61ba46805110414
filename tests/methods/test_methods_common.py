"""Registry-wide properties, parametrized over EVERY registered method.

A method registered later is tested here automatically. What a method declares about
itself (``order_only``, ``pareto``, ``condorcet``, ``stochastic``) decides which
properties apply; the declarations are checked too, so none can be forgotten.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import metascore as ms

METHODS = ms.ranking_method_names()
TOL = dict(rtol=1e-6, atol=1e-6)

#: Small settings for the slow methods: every property below holds for any setting, so a
#: short run checks the same thing (their defaults are exercised in their own test files).
QUICK = {"sco_fenchel_young": {"iterations": 1000}}


def rank(data, name, **kwargs):
    """``ms.rank`` with the method's quick test settings (explicit arguments win)."""
    return ms.rank(data, name, **{**QUICK.get(name, {}), **kwargs})


@st.composite
def score_matrices(draw, min_n=2, max_n=6, max_m=6):
    """Small positive matrices with many ties (values drawn from 1..5)."""
    n = draw(st.integers(min_n, max_n))
    m = draw(st.integers(1, max_m))
    values = draw(st.lists(st.integers(1, 5), min_size=n * m, max_size=n * m))
    return np.array(values, dtype=float).reshape(n, m)


def make(values, **kw) -> ms.ScoreMatrix:
    n, m = values.shape
    return ms.ScoreMatrix.from_array(
        values, [f"c{i}" for i in range(n)], [f"j{k}" for k in range(m)], **kw
    )


def test_registry_lists_the_required_methods():
    required = {
        "mean", "median", "average_rank", "success_rate", "relative_difference",
        "copeland", "random_dictator",
        # the rules benchmark maintainers compare (Vote'n'Rank)
        "plurality", "dowdall", "geometric_mean", "minimax", "baldwin", "threshold",
        "optimality_gap",
    }
    assert required <= set(METHODS)


@pytest.mark.parametrize("name", METHODS)
def test_declarations_are_consistent(name):
    spec = ms.get_ranking_method(name)
    assert spec.input in ("values", "pairwise")
    assert spec.description, f"{name} has no description"
    if spec.input == "pairwise":
        assert spec.order_only, "pairwise counts only see the order of scores"
    assert ("rng" in spec.func.__code__.co_varnames) == spec.stochastic


def test_unknown_method_lists_valid_names():
    with pytest.raises(ms.ConfigError, match=r"unknown ranking method 'copland' \(did you mean 'copeland'\?\); valid methods are \["):
        ms.rank(make(np.eye(3)), "copland")


def test_unknown_parameter_is_refused():
    with pytest.raises(ms.ConfigError, match="method 'success_rate' has no parameter 'tie'.*did you mean 'ties'"):
        ms.rank(make(np.eye(3)), "success_rate", tie="half")


@pytest.mark.parametrize("name", METHODS)
@given(values=score_matrices(), data=st.data())
def test_permuting_candidates_permutes_the_result(name, values, data):
    perm = np.array(data.draw(st.permutations(range(values.shape[0]))))
    m = make(values)
    r1 = rank(m, name, seed=3)
    r2 = rank(m.subset(candidates=perm), name, seed=3)
    np.testing.assert_allclose(r2.scores, r1.scores[perm], **TOL)
    np.testing.assert_allclose(r2.ranks, r1.ranks[perm])


@pytest.mark.parametrize("name", METHODS)
@given(values=score_matrices(), data=st.data())
def test_permuting_judges_changes_nothing(name, values, data):
    perm = np.array(data.draw(st.permutations(range(values.shape[1]))))
    m = make(values)
    r1 = rank(m, name, seed=3)
    r2 = rank(m.subset(judges=perm), name, seed=3)
    np.testing.assert_allclose(r2.scores, r1.scores, **TOL)


def unanimous(n: int, m: int, order: np.ndarray) -> np.ndarray:
    """Values of m judges giving the strict order ``order`` (best first), on other scales."""
    base = np.empty(n)
    base[order] = np.arange(n, 0, -1)  # order[0] is best
    return np.column_stack([base * (k + 1) for k in range(m)])


@pytest.mark.parametrize("name", METHODS)
@given(n=st.integers(2, 7), m=st.integers(1, 5), data=st.data())
def test_unanimous_judges_give_the_unanimous_order(name, n, m, data):
    """Strictly for a method declaring unanimity; otherwise the unanimous first is first
    alone and the order is never reversed (ties allowed)."""
    order = np.array(data.draw(st.permutations(range(n))))
    r = rank(make(unanimous(n, m, order)), name, seed=1)
    if ms.get_ranking_method(name).unanimity:
        assert r.ranked_candidates() == [f"c{i}" for i in order]
        assert len(set(r.positions.tolist())) == n, "a strict unanimous order has no ties"
        return
    assert r.winners == (f"c{order[0]}",)
    along = r.scores[order]
    assert (np.diff(along) <= 1e-12).all(), "the unanimous order is never reversed"


#: Parameters under which a method declaring no unanimity ties a strict unanimous order.
TIES_UNANIMOUS = {"optimality_gap": {"gamma": 2}}


@pytest.mark.parametrize("name", [n for n in METHODS if not ms.get_ranking_method(n).unanimity])
def test_no_unanimity_is_declared_only_by_methods_that_tie_a_unanimous_order(name):
    """The declaration is not idle: 4 judges ordering 4 candidates alike leave a tie."""
    r = rank(make(unanimous(4, 4, np.arange(4))), name, seed=1, **TIES_UNANIMOUS.get(name, {}))
    assert len(set(r.positions.tolist())) < 4


@pytest.mark.parametrize("name", [n for n in METHODS if ms.get_ranking_method(n).pareto])
@given(values=score_matrices(min_n=2), data=st.data())
def test_pareto_dominating_candidate_is_never_below(name, values, data):
    a = data.draw(st.integers(0, values.shape[0] - 1))
    b = (a + 1) % values.shape[0]
    values = values.copy()
    values[a] = np.maximum(values[a], values[b])
    values[a, data.draw(st.integers(0, values.shape[1] - 1))] = values[b].max() + 1
    r = rank(make(values), name, seed=5)
    assert r.scores[a] >= r.scores[b] - 1e-9


#: Methods of positive scores only: a negated column is refused; each has its own test.
POSITIVE_ONLY = ("relative_difference", "geometric_mean")


@pytest.mark.parametrize("name", [n for n in METHODS if n not in POSITIVE_ONLY])
@given(values=score_matrices(), data=st.data())
def test_flipping_a_direction_equals_negating_the_column(name, values, data):
    k = data.draw(st.integers(0, values.shape[1] - 1))
    flipped = values.copy()
    flipped[:, k] = -flipped[:, k]
    r1 = rank(make(values), name, seed=2)
    r2 = rank(make(flipped, higher_is_better={f"j{k}": False}), name, seed=2)
    np.testing.assert_allclose(r2.scores, r1.scores, **TOL)


def test_relative_difference_direction_flips_the_sign_of_its_terms():
    """Negating a column is not allowed (negative scores); the sign flip is checked instead."""
    values = np.array([[2.0, 1.0], [1.0, 3.0]])
    up = ms.rank(make(values), "relative_difference")
    down = ms.rank(make(values, higher_is_better={"j1": False}), "relative_difference")
    w_up = ((2 - 1) / 3 + (1 - 3) / 4) / 2
    w_down = ((2 - 1) / 3 - (1 - 3) / 4) / 2
    np.testing.assert_allclose(up.scores, [w_up, -w_up])
    np.testing.assert_allclose(down.scores, [w_down, -w_down])


@given(values=score_matrices(), data=st.data())
def test_geometric_mean_reads_a_lower_is_better_judge_as_its_inverse(values, data):
    """Negating is not allowed (negative scores); 1/x on a lower-is-better judge is."""
    k = data.draw(st.integers(0, values.shape[1] - 1))
    inverted = values.copy()
    inverted[:, k] = 1.0 / inverted[:, k]
    r1 = ms.rank(make(values), "geometric_mean")
    r2 = ms.rank(make(inverted, higher_is_better={f"j{k}": False}), "geometric_mean")
    np.testing.assert_allclose(r2.scores, r1.scores, **TOL)


@pytest.mark.parametrize("name", METHODS)
@given(values=score_matrices())
def test_same_seed_same_output(name, values):
    m = make(values)
    r1, r2 = rank(m, name, seed=11), rank(m, name, seed=11)
    np.testing.assert_array_equal(r1.scores, r2.scores)
    assert r1.signature() == r2.signature()


@pytest.mark.parametrize("name", [n for n in METHODS if ms.get_ranking_method(n).order_only])
@given(values=score_matrices(), data=st.data())
def test_order_only_methods_ignore_increasing_transforms(name, values, data):
    k = data.draw(st.integers(0, values.shape[1] - 1))
    warped = values.copy()
    warped[:, k] = np.exp(warped[:, k]) * 10 + warped[:, k] ** 3
    r1 = rank(make(values), name, seed=4)
    r2 = rank(make(warped), name, seed=4)
    np.testing.assert_allclose(r2.scores, r1.scores, **TOL)


@pytest.mark.parametrize("name", [n for n in METHODS if ms.get_ranking_method(n).condorcet])
@given(values=score_matrices(min_n=3, max_m=7))
def test_condorcet_methods_rank_the_condorcet_winner_first(name, values):
    m = make(values)
    winner = ms.condorcet_winner(m)
    if winner is None:
        return
    r = rank(m, name)
    best = r.positions[r.candidates.index(winner)]
    assert best == 1 and list(r.positions).count(1) == 1


@pytest.mark.parametrize("name", METHODS)
def test_missing_cells_work_under_every_policy(name):
    values = np.array([[3, 1, 2], [2, np.nan, 3], [1, 2, 1], [2, 3, np.nan]], dtype=float)
    m = make(values)
    for policy in ("worst", "pairwise", "drop_candidates", "drop_judges"):
        r = rank(m, name, missing=policy)
        assert np.isfinite(r.scores).all()


@pytest.mark.parametrize("name", [n for n in METHODS if ms.get_ranking_method(n).input == "pairwise"])
def test_pairwise_methods_accept_votes(name):
    votes = [["A", "B", "C"]] * 2 + [["C", "A", "B"]] * 3
    r = rank(ms.PairwiseCounts.from_votes(votes), name)
    assert sorted(r.candidates) == ["A", "B", "C"]
    assert r.missing == "votes"


@pytest.mark.parametrize("name", [n for n in METHODS if ms.get_ranking_method(n).input == "values"])
def test_value_methods_refuse_votes(name):
    with pytest.raises(ms.InputError, match="needs a score matrix"):
        rank(ms.PairwiseCounts.from_votes([["A", "B"]]), name)


class _Copies:  # hypothesis' data.draw stand-in for the explicit example
    def draw(self, strategy):
        return [1, 2, 3]


@pytest.mark.parametrize("name", [n for n in METHODS if n != "random_dictator"])
@given(values=score_matrices(max_m=4), data=st.data())
@example(values=np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]), data=_Copies())
def test_an_integer_weight_k_equals_k_copies_of_the_judge(name, values, data):
    """Only relative weights matter: weight k, weight k/10 and k copies give one ranking.

    The first example is the exact tie 0.1 + 0.2 = 0.3 that float sums break.

    ``random_dictator`` draws a judge's index, so copies change the draw (not its law).
    The Bradley-Terry fits (``epp``, ``elo``) count judge weight as games against a ridge
    prior worth ``ridge`` games, so only integer weights are compared for them.
    """
    copies = np.array(data.draw(st.lists(st.integers(1, 3), min_size=values.shape[1],
                                         max_size=values.shape[1])))
    repeated = make(np.repeat(values, copies, axis=1))
    expected = rank(repeated, name)
    # L-BFGS stops where the loss is flat to its tolerance; float noise moves that point,
    # so sco's ratings agree to that tolerance and equal ratings may split by ~1e-8.
    iterative = name == "sco"
    for scale in (1,) if name in ("epp", "elo") else (1, 10):
        r = rank(make(values, weights=copies / scale), name)
        if iterative:
            np.testing.assert_allclose(r.scores, expected.scores, rtol=1e-4, atol=1e-2)
            continue
        np.testing.assert_allclose(r.scores, expected.scores, **TOL)
        assert r.positions.tolist() == expected.positions.tolist(), scale


@pytest.mark.parametrize("name", METHODS)
def test_every_parameter_declares_its_allowed_values(name):
    """Declared in the registry, so config, CLI and analysis refuse a bad value up front."""
    spec = ms.get_ranking_method(name)
    assert set(spec.constraints) == set(spec.defaults)
    for param, default in spec.defaults.items():
        assert spec.constraints[param].problem(default) is None
        for bad in ("not-a-valid-value", [1, 2], -1, float("nan")):
            if spec.constraints[param].problem(bad) is None:
                continue  # e.g. -1 is a valid theta_min
            with pytest.raises(ms.ConfigError, match=rf"method '{name}': `{param}` must be"):
                ms.rank(make(np.eye(3)), name, **{param: bad})


@pytest.mark.parametrize("name", METHODS)
def test_pairwise_policy_ranks_a_candidate_with_no_score_at_all(name):
    """missing='pairwise' has no judge to average over for it: it is treated as 'worst'."""
    values = np.array([[1, 2], [3, 4], [np.nan, np.nan]], dtype=float)
    r = rank(make(values), name, missing="pairwise", seed=1)
    worst = rank(make(values), name, missing="worst", seed=1)
    assert np.isfinite(r.scores).all()
    assert r.positions[2] == r.positions.max()  # last (value methods: tied with c0's worsts)
    assert r.positions.tolist() == worst.positions.tolist()
    assert any("'c2' has no score on any judge" in note for note in r.notes)
