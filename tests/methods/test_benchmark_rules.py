"""The rules benchmark maintainers compare (Vote'n'Rank): exact small cases, computed by hand.

The registry-wide properties (permutations, unanimity, Pareto, Condorcet, determinism,
weights, missing data) are in ``test_methods_common.py``; the resampling shortcuts in
``test_method_shortcuts.py``; the published rankings of GLUE, SuperGLUE and VALUE in
``test_vote_and_rank.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import metascore as ms

# Four candidates, three judges of weights 2, 1, 1:
#   j1: A alone first, B and C share places 2-3, D last;
#   j2: B and C share the first place, then A, D;
#   j3: D, C, B, A.
VALUES = [[5, 2, 1], [3, 4, 2], [3, 4, 3], [1, 1, 9]]
WEIGHTS = [2, 1, 1]


def board(values=VALUES, weights=WEIGHTS, **kw) -> ms.ScoreMatrix:
    values = np.asarray(values, dtype=float)
    return ms.ScoreMatrix.from_array(values, list("ABCD")[:len(values)],
                                     [f"j{k + 1}" for k in range(values.shape[1])],
                                     weights=weights, **kw)


def test_plurality_counts_first_places_nobody_shares():
    r = ms.rank(board(), "plurality")
    # j1 (weight 2) for A, j3 (weight 1) for D; j2's shared first place goes to nobody
    np.testing.assert_allclose(r.scores, [2 / 4, 0, 0, 1 / 4])
    assert r.ranked_candidates()[:2] == ["A", "D"] and r.positions.tolist() == [1, 3, 3, 2]
    np.testing.assert_allclose(r.details["first_alone"], [0.5, 0, 0, 0.25])


def test_dowdall_shares_the_points_of_tied_positions_or_gives_the_best_ones():
    # j1: A 1, B and C (1/2 + 1/3)/2 = 5/12, D 1/4; j2: B and C (1 + 1/2)/2 = 3/4, A 1/3,
    # D 1/4; j3: D 1, C 1/2, B 1/3, A 1/4; weighted average over the weight 4
    r = ms.rank(board(), "dowdall")
    np.testing.assert_allclose(r.scores, np.array([31, 23, 25, 21]) / 48)
    assert r.ranked_candidates() == ["A", "C", "B", "D"]
    # Vote'n'Rank's convention: each tied candidate gets the best position's points
    r = ms.rank(board(), "dowdall", ties="min")
    np.testing.assert_allclose(r.scores, np.array([31, 28, 30, 21]) / 48)


def test_threshold_compares_last_places_then_second_to_last():
    # counts from the bottom (last, 2nd-to-last, 3rd, 4th) over the weight 4, ties split:
    # A (1, 1, 0, 2), B (0, 2, 1.5, .5), C (0, 1, 2.5, .5), D (3, 0, 0, 1)
    r = ms.rank(board(), "threshold")
    assert r.ranked_candidates() == ["C", "B", "A", "D"]
    np.testing.assert_allclose(r.scores, [1 / 3, 2 / 3, 1, 0])
    np.testing.assert_allclose(r.details["last_places"], [0.25, 0, 0, 0.75])
    # each tied candidate at the lowest place of the tie: B (0, 3, 1, 0), C (0, 2, 2, 0)
    assert ms.rank(board(), "threshold", ties="max").ranked_candidates() == ["C", "B", "A", "D"]


def test_threshold_ties_equal_counts():
    # C is last on both judges; A and B each have one second-to-last and one first place
    r = ms.rank(board([[1, 2], [2, 1], [0, 0]], [1, 1]), "threshold")
    np.testing.assert_allclose(r.scores, [0.5, 0.5, 0])
    assert r.winners == ("A", "B")


def test_geometric_mean_reads_lower_is_better_judges_as_inverses():
    m = ms.ScoreMatrix.from_array([[4.0, 2.0], [1.0, 1.0], [0.0, 1.0]], list("ABC"),
                                  ["acc", "err"], higher_is_better=[True, False], weights=[1, 3])
    r = ms.rank(m, "geometric_mean")
    # A: (4 * (1/2)^3)^(1/4) = 2^(-1/4); B: 1; C: a score of 0 makes it 0
    np.testing.assert_allclose(r.scores, [2 ** -0.25, 1.0, 0.0])
    assert r.ranked_candidates() == ["B", "A", "C"]


@pytest.mark.parametrize("values, higher, message", [
    ([[1.0, -0.5], [2.0, 1.0]], True, r"candidate 'A' has -0.5 on judge 'err', which is negative"),
    ([[1.0, 0.0], [2.0, 1.0]], [True, False],
     r"candidate 'A' has 0.0 on judge 'err', which is 0 on a lower-is-better judge"),
])
def test_geometric_mean_refuses_what_has_no_geometric_mean(values, higher, message):
    m = ms.ScoreMatrix.from_array(values, ["A", "B"], ["acc", "err"], higher_is_better=higher)
    with pytest.raises(ms.InputError, match=message):
        ms.rank(m, "geometric_mean")


def test_minimax_ranks_by_the_weakest_worst_defeat():
    # A > B 5-2, B > C 5-2, C > A 4-3: worst defeats A 4, B 5, C 5 of 7 votes
    votes = [list("ABC")] * 3 + [list("BCA")] * 2 + [list("CAB")] * 2
    r = ms.rank(ms.PairwiseCounts.from_votes(votes), "minimax")
    np.testing.assert_allclose(r.scores, -np.array([4, 5, 5]) / 7)
    assert r.winners == ("A",) and r.positions.tolist() == [1, 2, 2]
    np.testing.assert_allclose(r.details["worst_defeat"], np.array([4, 5, 5]) / 7)


def test_minimax_compares_missing_scores_pairwise_or_as_worst():
    m = ms.ScoreMatrix.from_array([[3, 1, np.nan], [2, 2, 1], [np.nan, 3, 2]], list("ABC"))
    # pairwise: A-B 1-1, C beats A 1-0 (j2 only), C beats B 2-0
    np.testing.assert_allclose(ms.rank(m, "minimax", missing="pairwise").scores,
                               [-1 / 3, -2 / 3, 0])
    # worst: C beats A and B 2-1, B beats A 2-1 (A is last on j3)
    np.testing.assert_allclose(ms.rank(m, "minimax").scores, [-2 / 3, -2 / 3, 0])


def test_baldwin_elects_the_condorcet_winner_that_borda_misses():
    # Borda (2, 1, 0 points): A 6, B 7, C 2; A beats B and C head to head
    votes = [list("ABC")] * 3 + [list("BCA")] * 2
    counts = ms.PairwiseCounts.from_votes(votes)
    assert ms.rank(counts, "average_rank").winner == "B"
    r = ms.rank(counts, "baldwin")
    # margin sums: A 2, B 4, C -6: C goes; then A 1, B -1: B goes
    np.testing.assert_allclose(r.scores, [1, 0.5, 0])
    assert r.details["dropped"] == [["C"], ["B"]]


def test_baldwin_drops_equal_lowest_together_and_lets_equals_share_first():
    cycle = ms.PairwiseCounts.from_votes([list("ABC"), list("BCA"), list("CAB")])
    r = ms.rank(cycle, "baldwin")
    assert r.winners == ("A", "B", "C") and r.details["dropped"] == []
    # D loses to all; A, B, C in a cycle above it: D goes, then the three share first
    # (each outlasted one of the three others)
    votes = [list("ABCD"), list("BCAD"), list("CABD")]
    r = ms.rank(ms.PairwiseCounts.from_votes(votes), "baldwin")
    np.testing.assert_allclose(r.scores, [1 / 3, 1 / 3, 1 / 3, 0])
    assert r.details["dropped"] == [["D"]]


def test_optimality_gap_is_the_mean_shortfall_below_the_target():
    m = ms.ScoreMatrix.from_array([[0.95, 0.3], [0.8, 0.05]], ["A", "B"], ["acc", "err"],
                                  higher_is_better=[True, False])
    # A: acc reaches 0.9, err 0.3 is 0.2 above 0.1: gap 0.1; B: 0.1 short on acc: 0.05
    r = ms.rank(m, "optimality_gap", gamma={"acc": 0.9, "err": 0.1})
    np.testing.assert_allclose(r.details["optimality_gap"], [0.1, 0.05])
    np.testing.assert_allclose(r.scores, [-0.1, -0.05])
    assert r.winner == "B"
    # one target for both: acc 0.9; err shortfall above 0.9 is none
    np.testing.assert_allclose(ms.rank(m, "optimality_gap", gamma=0.9).details["optimality_gap"],
                               [0.0, 0.05])
    # each judge's best score (0.95 and 0.05)
    np.testing.assert_allclose(ms.rank(m, "optimality_gap", gamma="best").details["optimality_gap"],
                               [0.125, 0.075])
    # the default: each judge's 90th percentile of the oriented scores (0.935; -0.075, an
    # error of 0.075): A is 0.225 above on err, B 0.135 short on acc
    np.testing.assert_allclose(ms.rank(m, "optimality_gap").details["optimality_gap"],
                               [0.1125, 0.0675])


def test_optimality_gap_at_its_default_is_a_rule_of_its_own():
    """To each judge's best score, the gap is the weighted mean's complement (the same
    order); to each judge's 90th percentile, scores past it all reach it, and the order
    differs from the mean's: a candidate is judged by how far it falls short."""
    rng = np.random.default_rng(4)
    for seed in range(5):
        m = ms.ScoreMatrix.from_array(rng.random((30, 8)), weights=rng.integers(1, 4, 8))
        mean = ms.rank(m, "mean")
        best = ms.rank(m, "optimality_gap", gamma="best")
        np.testing.assert_allclose(best.scores - mean.scores, best.scores[0] - mean.scores[0])
        assert list(ms.rank(m, "optimality_gap").order) != list(mean.order)
    # a specialist (best on half the judges, poor elsewhere) against a steady candidate
    x = np.array([[1.0, 1.0, 0.05, 0.05], [0.55, 0.55, 0.45, 0.45], [0.5, 0.5, 0.5, 0.5],
                  [0.2, 0.3, 0.4, 0.6]])
    m = ms.ScoreMatrix.from_array(x, ["special", "a", "steady", "b"])
    assert ms.rank(m, "mean").scores[0] > ms.rank(m, "mean").scores[2]
    gap = ms.rank(m, "optimality_gap")
    assert gap.scores[2] > gap.scores[0]  # steady falls short less than special


def test_optimality_gap_needs_a_target_for_every_judge():
    m = ms.ScoreMatrix.from_array([[1, 2], [2, 1]], ["A", "B"], ["acc", "f1"])
    with pytest.raises(ms.InputError, match=r"`gamma` gives no target for judge 'f1' "
                                            r"\(did you mean 'f_1'\?\)"):
        ms.rank(m, "optimality_gap", gamma={"acc": 1, "f_1": 2})
    for bad in ("worst", "q101", "qx"):
        with pytest.raises(ms.ConfigError, match=r"`gamma` must be 'qP' \(each judge's P-th "
                                                 r"percentile, 0 <= P <= 100, e.g. 'q90'\), "
                                                 r"'best', a finite number, or a mapping"):
            ms.rank(m, "optimality_gap", gamma=bad)


def test_the_positional_rules_place_only_scored_candidates_under_the_pairwise_policy():
    m = board([[3, np.nan], [2, 2], [1, 1]], [1, 1])
    # j2 scores B and C only: B is first alone there; A's share is over j1 alone
    np.testing.assert_allclose(ms.rank(m, "plurality", missing="pairwise").scores, [1, 0.5, 0])
    # Dowdall: A 1 (j1 only); B (1/2 + 1)/2; C (1/3 + 1/2)/2
    np.testing.assert_allclose(ms.rank(m, "dowdall", missing="pairwise").scores,
                               [1, 0.75, 5 / 12])
    # threshold: j2 places 2 candidates, C is its last; A has no last place on j1
    assert ms.rank(m, "threshold", missing="pairwise").ranked_candidates() == ["A", "B", "C"]


def test_a_weight_0_judge_changes_no_rule():
    zero = board(np.column_stack([VALUES, [9, 1, 5, 3]]), WEIGHTS + [0])
    for name in ("plurality", "dowdall", "geometric_mean", "minimax", "baldwin", "threshold",
                 "optimality_gap"):
        np.testing.assert_array_equal(ms.rank(zero, name).scores, ms.rank(board(), name).scores)


def test_a_target_per_judge_reaches_the_analyses():
    """A parameter whose value is a mapping is a parameter, not a method's parameters."""
    m = board()
    gamma = {"j1": 4, "j2": 3, "j3": 5}
    u = ms.rank_uncertainty(m, "optimality_gap", n_trials=10, run=ms.Execution(seed=1, params={"gamma": gamma}))
    assert u.params == {"gamma": gamma}
    with pytest.raises(ms.ConfigError, match="method 'optimality_gap' has no parameter 'gama'"):
        ms.rank_uncertainty(m, "optimality_gap", n_trials=10, run=ms.Execution(params={"gama": 4}))
