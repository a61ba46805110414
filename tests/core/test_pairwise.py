"""Pairwise counts from score matrices and votes, and the Condorcet tools."""

from __future__ import annotations

import numpy as np
import pytest

import metascore as ms
from metascore.pairwise import PairwiseCounts

WARMUP = [["A", "B", "C"]] * 2 + [["C", "A", "B"]] * 3  # SCO paper warm-up profile


def test_counts_from_matrix_with_weights_ties_and_missing():
    x = np.array([[3, 1, 2], [2, np.nan, 2], [1, 2, 2]], dtype=float)
    pc = PairwiseCounts.from_matrix(x, np.array([1.0, 2.0, 0.5]), ["A", "B", "C"])
    # A>B on j1 (1); A>C on j1 (1); C>A on j2 (2); B>C on j1 (1); j3 all tied
    np.testing.assert_array_equal(pc.wins, [[0, 1, 1], [0, 0, 1], [2, 0, 0]])
    # compared: B is missing on j2 (weight 2)
    np.testing.assert_array_equal(pc.compared, [[3.5, 1.5, 3.5], [1.5, 1.5, 1.5], [3.5, 1.5, 3.5]])


def test_counts_from_votes_with_ties_partial_and_weights():
    pc = PairwiseCounts.from_votes([["A", ["B", "C"]], ["C", "A"]], weights=[2, 1])
    assert pc.candidates == ("A", "B", "C")
    np.testing.assert_array_equal(pc.wins, [[0, 2, 2], [0, 0, 0], [1, 0, 0]])
    np.testing.assert_array_equal(pc.compared, [[3, 2, 3], [2, 2, 2], [3, 2, 3]])
    sparse = PairwiseCounts.from_votes([["A", ["B", "C"]], ["C", "A"]], weights=[2, 1], sparse=True)
    assert sparse.is_sparse
    np.testing.assert_array_equal(sparse.dense()[0], pc.wins)


def test_vote_errors():
    with pytest.raises(ms.InputError, match="vote 1 lists candidate 'A' twice"):
        PairwiseCounts.from_votes([["A", "B", "A"]])
    with pytest.raises(ms.InputError, match="vote 2 has weight 0"):
        PairwiseCounts.from_votes([["A", "B"], ["B", "A"]], weights=[1, 0])
    with pytest.raises(ms.InputError, match="vote 1 names unknown candidate 'D'"):
        PairwiseCounts.from_votes([["A", "D"]], candidates=["A", "B"])


def test_matrix_and_votes_give_the_same_counts():
    x = np.array([[3, 1], [2, 3], [1, 2]], dtype=float)
    from_matrix = PairwiseCounts.from_matrix(x, None, ["A", "B", "C"])
    from_votes = PairwiseCounts.from_votes([["A", "B", "C"], ["B", "C", "A"]])
    np.testing.assert_array_equal(from_matrix.wins, from_votes.wins)
    np.testing.assert_array_equal(from_matrix.compared, from_votes.compared)


def test_condorcet_tools_on_the_warmup_profile():
    pc = PairwiseCounts.from_votes(WARMUP)
    assert ms.condorcet_winner(pc) == "C"
    assert ms.weak_condorcet_winners(pc) == ["C"]
    assert ms.smith_set(pc) == ["C"]
    np.testing.assert_array_equal(ms.margin_matrix(pc), [[0, 5, -1], [-5, 0, -1], [1, 1, 0]])


def test_condorcet_cycle_has_no_winner_and_a_full_smith_set():
    pc = PairwiseCounts.from_votes([["A", "B", "C"], ["B", "C", "A"], ["C", "A", "B"], ["A", "B", "C", "D"]])
    assert ms.condorcet_winner(pc) is None
    assert ms.smith_set(pc) == ["A", "B", "C"]


def test_weak_condorcet_winners_with_a_tie():
    m = ms.ScoreMatrix.from_array([[2, 1], [1, 2], [0, 0]], ["A", "B", "C"])
    assert ms.condorcet_winner(m) is None
    assert ms.weak_condorcet_winners(m) == ["A", "B"]
    assert ms.smith_set(m) == ["A", "B"]


def test_average_rank_from_votes_is_borda_on_partial_votes():
    r = ms.rank(PairwiseCounts.from_votes([["A", "B", "C"], ["B", "A"]]), "average_rank")
    # A: ranks 1 and 2; B: 2 and 1; C: 3 (only in vote 1)
    np.testing.assert_allclose(r.details["average_rank"], [1.5, 1.5, 3.0])


# ---------------------------------------------------------------- fast paths equal slow paths
@pytest.mark.parametrize("candidates", [None, range(12), [str(k) for k in reversed(range(12))]])
def test_votes_as_an_integer_array_equal_votes_as_lists(candidates, rng):
    votes = np.array([rng.permutation(12)[:4] for _ in range(40)])
    weights = rng.uniform(0.5, 2.0, size=40)
    fast = PairwiseCounts.from_votes(votes, weights, candidates=candidates)
    slow = PairwiseCounts.from_votes(votes.tolist(), weights, candidates=candidates)
    assert fast.candidates == slow.candidates
    np.testing.assert_array_equal(fast.wins, slow.wins)
    np.testing.assert_array_equal(fast.compared, slow.compared)


def test_integer_array_vote_errors():
    with pytest.raises(ms.InputError, match="vote 2 lists candidate '3' twice"):
        PairwiseCounts.from_votes(np.array([[0, 1, 2], [3, 1, 3]]))
    with pytest.raises(ms.InputError, match="vote 2 names unknown candidate '5'"):
        PairwiseCounts.from_votes(np.array([[0, 1], [5, 1]]), candidates=range(3))
    with pytest.raises(ms.InputError, match="vote 1 names unknown candidate '9'"):
        PairwiseCounts.from_votes(np.array([[9, 1]]), candidates=["1", "0"])


def test_pair_by_pair_wins_equal_the_block_count(monkeypatch, rng):
    import metascore.pairwise as pairwise

    values = rng.integers(0, 3, size=(7, 50)).astype(float)  # many ties
    values[2, 4] = np.nan
    values[3, :3] = -np.inf
    values[5, :3] = -np.inf
    w = np.ones(50)
    monkeypatch.setattr(pairwise, "PAIR_LOOP_JUDGES", 1)
    looped = pairwise.PairwiseCounts.from_matrix(values, w).wins
    monkeypatch.setattr(pairwise, "PAIR_LOOP_JUDGES", 10**9)
    blocks = pairwise.PairwiseCounts.from_matrix(values, w).wins
    np.testing.assert_array_equal(looped, blocks)


@pytest.mark.parametrize("weights", [[0.1, 0.2, 0.3], [1, 2, 3], [10, 20, 30], [1e-6, 2e-6, 3e-6]])
def test_decimal_weights_tie_exactly_like_integer_weights(weights):
    """0.1 + 0.2 is not 0.3 in floats; an exact tie must stay a tie at every scale."""
    m = ms.ScoreMatrix.from_array([[1, 1, 0], [0, 0, 1]], ["A", "B"], ["j1", "j2", "j3"],
                                  weights=weights)
    np.testing.assert_array_equal(ms.margin_matrix(m), [[0, 0], [0, 0]])
    assert ms.condorcet_winner(m) is None
    assert ms.smith_set(m) == ["A", "B"]
    for method in ("copeland", "schulze", "ranked_pairs", "success_rate"):
        r = ms.rank(m, method)
        assert r.positions.tolist() == [1, 1], method
    assert ms.rank(m, "kemeny_young").details["unique"] is False


def test_decimal_vote_weights_tie_exactly():
    pc = PairwiseCounts.from_votes([["A", "B"], ["A", "B"], ["B", "A"]], weights=[0.1, 0.2, 0.3])
    np.testing.assert_array_equal(pc.margins(), [[0, 0], [0, 0]])


# ---------------------------------------------------------------- issue 42: no n x n counts
def _random_profile(rng, n: int, m: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Scores with ties, missing cells, -inf cells and weights of every kind."""
    x = rng.integers(0, 3, size=(n, m)).astype(float)
    if rng.random() < 0.3:
        x[rng.random((n, m)) < 0.2] = np.nan
    if rng.random() < 0.3:
        x[rng.random((n, m)) < 0.2] = -np.inf
    kind = rng.integers(0, 4)
    w = [None, rng.integers(1, 4, m).astype(float), rng.random(m) + 0.1,
         np.round(rng.random(m) * 3, 1) + 0.1][kind]
    if rng.random() < 0.2:  # a planted winner
        x[rng.integers(n)] = 5.0
    return x, w


def test_margin_tallies_and_the_condorcet_winner_without_counts_equal_the_counts(rng):
    """``margin_tallies`` and ``values_condorcet_winner`` (blocks, no n x n counts) against
    :meth:`PairwiseCounts.margins` on random profiles: ties, missing cells, weights (more
    than 8 distinct ones too), up to 300 candidates (several blocks of the sweep)."""
    from metascore.pairwise import condorcet_winner, margin_tallies, values_condorcet_winner

    winners = 0
    for trial in range(400):
        n = int(rng.integers(1, 300 if trial % 8 == 0 else 12))
        x, w = _random_profile(rng, n, int(rng.integers(1, 12)))
        counts = PairwiseCounts.from_matrix(x, w, [f"c{i}" for i in range(n)])
        margins = counts.margins()
        np.fill_diagonal(margins, np.nan)
        won, tied = margin_tallies(x, w)
        np.testing.assert_array_equal(won, (margins > 0).sum(axis=1))
        np.testing.assert_array_equal(tied, (margins == 0).sum(axis=1))
        expected = condorcet_winner(counts)
        assert values_condorcet_winner(x, w, counts.candidates) == expected
        winners += expected is not None
    assert 50 < winners < 400  # both outcomes are exercised


def test_the_condorcet_winner_of_100000_candidates_needs_no_square(rng):
    """A planted winner among 100,000 candidates x 20 judges (the counts would take 80 GB),
    found after it is listed late, and none when everyone ties."""
    from metascore.pairwise import values_condorcet_winner

    x = rng.normal(size=(100_000, 20))
    x[70_000] = 10.0
    assert values_condorcet_winner(x) == "70000"
    assert values_condorcet_winner(np.zeros((100_000, 20))) is None
