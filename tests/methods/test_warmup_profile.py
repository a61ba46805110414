"""The SCO paper's warm-up profile (Section 4.1, eq. 11): 2 votes A>B>C, 3 votes C>A>B.

C is the Condorcet winner (3 of 5 voters prefer C to A and to B), but A has the higher win
rate (7/15 against 6/15), so the Condorcet methods rank C first and the Elo-type ratings A.
"""

from __future__ import annotations

import pytest

import metascore as ms

VOTES = [["A", "B", "C"]] * 2 + [["C", "A", "B"]] * 3


@pytest.fixture(scope="module")
def counts() -> ms.PairwiseCounts:
    return ms.PairwiseCounts.from_votes(VOTES)


def test_c_is_the_condorcet_winner(counts):
    assert ms.condorcet_winner(counts) == "C"


@pytest.mark.parametrize("method", ["kemeny_young", "sco", "copeland", "schulze", "ranked_pairs"])
def test_condorcet_methods_rank_c_first(counts, method):
    r = ms.rank(counts, method)
    assert r.ranked_candidates() == ["C", "A", "B"]
    assert r.positions[r.candidates.index("C")] == 1
    assert list(r.positions).count(1) == 1


def test_sco_paper_solver_also_ranks_c_first(counts):
    r = ms.rank(counts, "sco", solver="sgd", learning_rate=0.1, batch_size=2)
    assert r.ranked_candidates() == ["C", "A", "B"]


@pytest.mark.parametrize("method", ["epp", "elo", "sco_fenchel_young"])
def test_win_rate_methods_rank_a_first(counts, method):
    r = ms.rank(counts, method)
    assert r.ranked_candidates()[0] == "A"


def test_same_result_from_a_score_matrix():
    # The same profile as 5 judges scoring the candidates (higher is better).
    values = [[3, 3, 2, 2, 2], [2, 2, 1, 1, 1], [1, 1, 3, 3, 3]]
    m = ms.ScoreMatrix.from_array(values, ["A", "B", "C"])
    assert ms.rank(m, "kemeny_young").winner == "C"
    assert ms.rank(m, "epp").winner == "A"
