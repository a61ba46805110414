"""Exact Kemeny-Young: brute force agreement, ties, partial votes, tie-breaks, size guard."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import metascore as ms
from metascore.methods import kemeny as K
from metascore.methods import kemeny_ilp


def brute_force(wins: np.ndarray) -> tuple[float, list[tuple[int, ...]]]:
    """Best agreement over all n! orders and every order reaching it."""
    n = wins.shape[0]
    best, optima = -np.inf, []
    for perm in itertools.permutations(range(n)):
        pos = np.empty(n, dtype=int)
        pos[list(perm)] = np.arange(n)
        value = wins[pos[:, None] < pos[None, :]].sum()
        if value > best + 1e-9:
            best, optima = value, [perm]
        elif value >= best - 1e-9:
            optima.append(perm)
    return best, optima


def agreement(wins: np.ndarray, order: np.ndarray) -> float:
    pos = np.empty(len(order), dtype=int)
    pos[order] = np.arange(len(order))
    return float(wins[pos[:, None] < pos[None, :]].sum())


@st.composite
def profiles(draw, max_n=7):
    """Random judges with many ties (values 0..2), some missing (NaN), random weights."""
    n = draw(st.integers(2, max_n))
    m = draw(st.integers(1, 6))
    cells = draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, np.nan]), min_size=n * m, max_size=n * m))
    weights = draw(st.lists(st.sampled_from([1.0, 2.0, 0.5]), min_size=m, max_size=m))
    return np.array(cells).reshape(n, m), np.array(weights)


@pytest.mark.parametrize("solver", ["dp", "ilp"])
@given(data=profiles())
def test_matches_brute_force(solver, data):
    values, weights = data
    counts = ms.PairwiseCounts.from_matrix(values, weights)
    wins = counts.wins
    best, optima = brute_force(wins)
    res = K.kemeny_order(wins, solver)
    assert agreement(wins, res.order) == pytest.approx(best) == pytest.approx(res.agreement)
    assert res.optimal and res.bound == pytest.approx(best)
    assert res.unique == (len(optima) == 1)
    if solver == "dp":
        assert res.optimal_orders == len(optima)
    if res.unique:
        assert tuple(res.order) == optima[0]


@pytest.mark.parametrize("k", range(2, K.ENUMERATE_LIMIT + 1))
def test_enumeration_equals_the_subset_program(k):
    # small cycles score every order; the subset program must give the same order and count
    rng = np.random.default_rng(k)
    for _ in range(100):
        W = rng.integers(0, 4, size=(k, k)).astype(float)  # many ties among the optima
        np.fill_diagonal(W, 0.0)
        order, count = K._kemeny_enumerate(W, 1e-9)
        dp_order, dp_count = K._kemeny_dp(W, 1e-9)
        np.testing.assert_array_equal(order, dp_order)
        assert count == dp_count


def test_dp_and_ilp_agree_on_larger_random_profiles(rng):
    for _ in range(3):
        values = rng.normal(size=(12, 9)) + np.linspace(1, 0, 12)[:, None]
        wins = ms.PairwiseCounts.from_matrix(values).wins
        o_dp, u_dp = K.kemeny_order(wins, "dp")[:2]
        o_ilp, u_ilp = K.kemeny_order(wins, "ilp")[:2]
        assert agreement(wins, o_dp) == pytest.approx(agreement(wins, o_ilp))
        assert u_dp == u_ilp
        if u_dp:
            np.testing.assert_array_equal(o_dp, o_ilp)


def test_warmup_profile_objective_and_details():
    votes = [["A", "B", "C"]] * 2 + [["C", "A", "B"]] * 3
    r = ms.rank(ms.PairwiseCounts.from_votes(votes), "kemeny_young")
    assert r.ranked_candidates() == ["C", "A", "B"]
    # C>A>B: each A>B>C vote disagrees on (A,C) and (B,C): 2 * 2 = 4; the others agree.
    assert r.details["kendall_distance"] == 4.0
    assert r.details["agreement"] == 11.0  # N(C,A) + N(C,B) + N(A,B) = 3 + 3 + 5
    assert r.details["unique"] is True
    np.testing.assert_array_equal(r.scores, [1.0, 0.0, 2.0])  # n - position


def test_condorcet_cycle_is_not_unique_and_tie_break_uses_labels():
    # A>B>C, B>C>A, C>A>B: the three rotations are optimal (distance 4 each).
    votes = [["A", "B", "C"], ["B", "C", "A"], ["C", "A", "B"]]
    r = ms.rank(ms.PairwiseCounts.from_votes(votes), "kemeny_young")
    assert r.details["unique"] is False
    assert r.details["optimal_orders"] == 3
    assert r.details["kendall_distance"] == 4.0
    # Fewest label inversions: A>B>C (0) beats B>C>A and C>A>B (2 each).
    assert r.ranked_candidates() == ["A", "B", "C"]
    assert any("not unique (3 optimal orders)" in note for note in r.notes)
    relabelled = [[{"A": "Z", "B": "Y", "C": "X"}[c] for c in v] for v in votes]
    r2 = ms.rank(ms.PairwiseCounts.from_votes(relabelled), "kemeny_young")
    assert r2.ranked_candidates() == ["X", "Z", "Y"]  # fewest inversions of X<Y<Z


def test_permuting_input_rows_permutes_the_result_when_optimum_is_not_unique():
    values = np.array([[3, 1, 2], [2, 3, 1], [1, 2, 3], [0, 0, 0]], dtype=float)
    labels = ["a", "b", "c", "d"]
    m = ms.ScoreMatrix.from_array(values, labels)
    base = ms.rank(m, "kemeny_young")
    assert base.details["unique"] is False
    for perm in itertools.permutations(range(4)):
        r = ms.rank(m.subset(candidates=list(perm)), "kemeny_young")
        assert r.ranked_candidates() == base.ranked_candidates()


def test_ties_within_judges_cost_nothing():
    # Judge 1: A = B > C; judge 2: C > A = B. Every order puts C one way: distance 2 * 1.
    values = np.array([[1, 0], [1, 0], [0, 1]], dtype=float)
    r = ms.rank(ms.ScoreMatrix.from_array(values, ["A", "B", "C"]), "kemeny_young")
    assert r.details["kendall_distance"] == 2.0
    assert r.details["unique"] is False


def test_partial_votes():
    # B is only compared once (B > C); A beats C twice; A and B never meet.
    votes = [["A", "C"], ["A", "C"], ["B", "C"]]
    r = ms.rank(ms.PairwiseCounts.from_votes(votes), "kemeny_young")
    assert r.details["kendall_distance"] == 0.0
    assert r.ranked_candidates()[-1] == "C"
    assert r.details["optimal_orders"] == 2  # A and B in either order


def test_components_are_solved_independently():
    # Two 3-cycles, the first beating the second entirely.
    top = [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    votes = [t + [x.upper() for x in t] for t in top]
    r = ms.rank(ms.PairwiseCounts.from_votes(votes), "kemeny_young")
    assert r.details["components"] == [3, 3]
    assert set(r.ranked_candidates()[:3]) == {"a", "b", "c"}
    assert r.details["optimal_orders"] == 9


def test_size_guard_points_to_sco(monkeypatch):
    monkeypatch.setattr(K, "EXACT_LIMIT", 4)
    votes = [["a", "b", "c", "d", "e"], ["e", "d", "c", "b", "a"]]
    with pytest.raises(ms.InputError, match=r"exact Kemeny-Young is limited to 4 .*use method 'sco'"):
        ms.rank(ms.PairwiseCounts.from_votes(votes), "kemeny_young")


def test_unknown_solver_is_refused():
    with pytest.raises(ms.ConfigError, match=r"`solver` must be one of \['auto', 'dp', 'ilp'\]; got 'exact'"):
        ms.rank(ms.PairwiseCounts.from_votes([["a", "b"]]), "kemeny_young", solver="exact")


def test_only_per_candidate_details_become_columns():
    """`order` and `components` are global details: never per-candidate columns, never
    re-sorted with the rows (issue 14)."""
    votes = [["A", "B", "C"]] * 2 + [["C", "A", "B"]] * 3
    r = ms.rank(ms.PairwiseCounts.from_votes(votes), "kemeny_young")
    frame = r.to_frame()
    assert list(frame.columns) == ["position", "rank", "score", "candidate"]
    assert frame["candidate"].tolist() == ["C", "A", "B"]
    assert r.details["order"] == ["C", "A", "B"]  # labels best first, untouched
    assert r.per_candidate_details() == {}
    assert r.to_dict()["details"]["order"] == ["C", "A", "B"]
    # a value-based leaderboard: kemeny's details stay out of the rows and the CSV
    m = ms.ScoreMatrix.from_array([[3, 1, 2], [1, 3, 2], [2, 2, 1]], ["A", "B", "C"])
    lb = ms.rank(m, "kemeny_young")
    assert "order" not in lb.to_frame().columns and "components" not in lb.to_frame().columns


def test_declared_per_candidate_details_follow_the_candidates():
    m = ms.ScoreMatrix.from_array([[3, 1], [1, 3], [2, 2]], ["B", "A", "C"])
    r = ms.rank(m, "copeland")
    frame = r.to_frame().set_index("candidate")
    for cand in "ABC":
        i = r.candidates.index(cand)
        assert frame.loc[cand, "wins"] == r.details["wins"][i]
    with pytest.raises(ValueError, match="not in details"):
        ms.MethodOutput(np.zeros(2), details={}, per_candidate=("x",))


def inversions(order: np.ndarray) -> int:
    """Pairs of the order whose larger index is above the smaller."""
    pos = np.empty(len(order), dtype=int)
    pos[order] = np.arange(len(order))
    return int((pos[:, None] > pos[None, :])[np.triu_indices(len(order), 1)].sum())


@pytest.mark.parametrize("judges", [9, 10])
def test_the_lazy_integer_program_matches_dynamic_programming_on_whole_cycles(judges):
    # 18 candidates of close quality: one cycle; the subset program is exact and counts
    # the optima, the integer program must find the same agreement, uniqueness and
    # tie-break (the fewest label inversions)
    rng = np.random.default_rng(judges)
    for _ in range(4):
        values = np.linspace(1, 0, 18)[:, None] + rng.normal(size=(18, judges))
        wins = ms.PairwiseCounts.from_matrix(values).wins
        dp, ilp = K.kemeny_order(wins, "dp"), K.kemeny_order(wins, "ilp")
        assert ilp.optimal and ilp.bound == pytest.approx(ilp.agreement)
        assert ilp.agreement == pytest.approx(dp.agreement)
        assert ilp.unique == dp.unique == (dp.optimal_orders == 1)
        assert inversions(ilp.order) == inversions(dp.order)


def near_transitive(n: int, noise: float, judges: int = 30, seed: int = 0) -> ms.ScoreMatrix:
    rng = np.random.default_rng(seed)
    return ms.ScoreMatrix.from_array(np.linspace(3, 0, n)[:, None]
                                     + rng.normal(scale=noise, size=(n, judges)))


def test_a_hundred_near_transitive_candidates_are_solved_with_a_certificate():
    # noise 1.0: 99 of the 100 candidates in one cycle (the old solver refused it)
    r = ms.rank(near_transitive(100, 1.0), "kemeny_young")
    assert max(r.details["components"]) == 99 and r.details["solver"] == "ilp"
    assert r.details["optimal"] is True
    assert r.details["kendall_distance"] == r.details["lower_bound"]
    counts = ms.PairwiseCounts.from_matrix(near_transitive(100, 1.0).values)
    order = np.array([r.candidates.index(c) for c in r.details["order"]])
    assert agreement(counts.wins, order) == r.details["agreement"]
    assert kemeny_ilp.move_gains(counts.wins, order).max() <= 1e-9  # no single move improves it
    assert r.details["unique"] is False  # 30 judges: tied majorities, several optima
    assert any("not unique" in note for note in r.notes)


def test_past_the_time_budget_the_best_order_and_its_gap_are_said():
    values = np.random.default_rng(3).normal(size=(120, 30))  # independent judges: hard
    r = ms.rank(ms.ScoreMatrix.from_array(values), "kemeny_young", time_limit=0.5)
    d = r.details
    assert d["optimal"] is False and d["unique"] is None
    assert 0 < d["lower_bound"] < d["kendall_distance"]
    note = r.notes[0]
    assert note.startswith("Kemeny optimum not proven: the time budget (0.5 s) ran out")
    assert f"{d['kendall_distance']:g}" in note and f"{d['lower_bound']:g}" in note
    # the order is still a proper ranking: scores n - position
    assert sorted(r.scores) == list(range(120))


@pytest.mark.parametrize("bad", [0, -1.0, "10", float("inf"), True])
def test_the_time_budget_must_be_a_positive_number(bad):
    with pytest.raises(ms.ConfigError, match=r"`time_limit` must be a positive number"):
        ms.rank(ms.PairwiseCounts.from_votes([["a", "b"]]), "kemeny_young", time_limit=bad)


def test_decimal_weights_take_the_two_stage_tie_break():
    # weights with no common step: the tie-break is a second program, same answer as dp
    rng = np.random.default_rng(5)
    values = np.linspace(1, 0, 18)[:, None] + rng.normal(size=(18, 8))
    weights = rng.random(8) + 0.5
    wins = ms.PairwiseCounts.from_matrix(values, weights).wins
    assert kemeny_ilp.step(wins) is None
    dp, ilp = K.kemeny_order(wins, "dp"), K.kemeny_order(wins, "ilp")
    assert ilp.agreement == pytest.approx(dp.agreement) and ilp.unique == dp.unique
    assert inversions(ilp.order) == inversions(dp.order)
