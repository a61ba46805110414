"""Schulze and ranked pairs: published examples, tie-breaks, Condorcet consistency."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import metascore as ms
from metascore.methods.condorcet import widest_paths

# Schulze (2011), the 45-voter example also used on Wikipedia's "Schulze method" page.
SCHULZE_45 = [
    (5, "ACBED"), (5, "ADECB"), (8, "BEDAC"), (3, "CABED"),
    (7, "CAEBD"), (2, "CBADE"), (7, "DCEBA"), (8, "EBADC"),
]
# Strongest paths with winning votes N(a, b), as printed in the example.
SCHULZE_45_PATHS = np.array([
    [0, 28, 28, 30, 24],
    [25, 0, 28, 33, 24],
    [25, 29, 0, 29, 24],
    [25, 28, 28, 0, 24],
    [25, 28, 28, 31, 0],
], dtype=float)

# Tennessee capital example: 42% Memphis, 26% Nashville, 15% Chattanooga, 17% Knoxville.
TENNESSEE = [
    (42, ["Memphis", "Nashville", "Chattanooga", "Knoxville"]),
    (26, ["Nashville", "Chattanooga", "Knoxville", "Memphis"]),
    (15, ["Chattanooga", "Knoxville", "Nashville", "Memphis"]),
    (17, ["Knoxville", "Chattanooga", "Nashville", "Memphis"]),
]


def votes_of(profile):
    votes, weights = [], []
    for count, vote in profile:
        votes.append(list(vote))
        weights.append(float(count))
    labels = sorted({c for vote in votes for c in vote})
    return ms.PairwiseCounts.from_votes(votes, weights, candidates=labels)


def test_schulze_45_voter_example():
    counts = votes_of(SCHULZE_45)
    r = ms.rank(counts, "schulze")
    assert r.ranked_candidates() == ["E", "A", "C", "B", "D"]
    # On margins 2 N - 45 the path strengths are the same transform of the printed ones.
    expected = 2 * SCHULZE_45_PATHS - 45
    np.fill_diagonal(expected, 0)
    np.testing.assert_array_equal(r.details["path_strength"], expected)
    np.testing.assert_allclose(r.scores, [3 / 4, 1 / 4, 2 / 4, 0, 1])


def test_widest_paths_by_hand():
    margins = np.array([[0, 3, -1], [-3, 0, 5], [1, -5, 0]], dtype=float)
    # a->b 3, b->c 5, c->a 1; a->c via b: min(3, 5) = 3; b->a via c: min(5, 1) = 1.
    np.testing.assert_array_equal(
        widest_paths(margins), [[0, 3, 3], [1, 0, 5], [1, 1, 0]]
    )


def float_widest_paths(margins):
    """Reference: Floyd-Warshall on the float strengths, paths through every candidate."""
    n = len(margins)
    p = np.where(margins > 0, margins, 0.0)
    np.fill_diagonal(p, 0.0)
    for k in range(n):
        for a in range(n):
            for b in range(n):
                p[a, b] = max(p[a, b], min(p[a, k], p[k, b]))
    np.fill_diagonal(p, 0.0)
    return p


@pytest.mark.parametrize("distinct", [3, 200, 400])  # uint8, then uint16 strength ranks
def test_widest_paths_equal_float_floyd_warshall(distinct):
    rng = np.random.default_rng(distinct)
    for n in (1, 2, 7, 30):
        x = rng.integers(0, distinct, size=(n, n)) * 0.37 + rng.integers(0, 2, size=(n, n)) * 1e-9
        margins = x - x.T
        np.testing.assert_array_equal(widest_paths(margins), float_widest_paths(margins))
        whole = rng.integers(0, min(distinct, 300), size=(n, n)).astype(float)  # own codes < 256
        np.testing.assert_array_equal(widest_paths(whole - whole.T),
                                      float_widest_paths(whole - whole.T))


@pytest.mark.parametrize("method", ["schulze", "ranked_pairs"])
def test_tennessee(method):
    r = ms.rank(votes_of(TENNESSEE), method)
    assert r.ranked_candidates() == ["Nashville", "Chattanooga", "Knoxville", "Memphis"]


def test_ranked_pairs_locks_by_margin_and_skips_cycles():
    # Weights 5, 4, 2 on the three rotations: margins B>C 7, A>B 3, C>A 1.
    counts = votes_of([(5, "ABC"), (4, "BCA"), (2, "CAB")])
    np.testing.assert_array_equal(counts.margins(), [[0, 3, -1], [-3, 0, 7], [1, -7, 0]])
    r = ms.rank(counts, "ranked_pairs")
    assert r.ranked_candidates() == ["A", "B", "C"]  # C>A would close the cycle
    locked = r.details["locked"]
    assert locked[1, 2] and locked[0, 1] and not locked[2, 0]
    np.testing.assert_allclose(r.scores, [1, 0.5, 0])


def test_ranked_pairs_equal_margins_break_by_labels_not_input_order():
    cycle = [["A", "B", "C"], ["B", "C", "A"], ["C", "A", "B"]]  # every margin is 1
    for perm in itertools.permutations(["A", "B", "C"]):
        counts = ms.PairwiseCounts.from_votes(cycle, candidates=list(perm))
        r = ms.rank(counts, "ranked_pairs")
        # A>B (winner A first), then B>C, then C>A would close the cycle.
        assert r.ranked_candidates() == ["A", "B", "C"]
        assert len(set(r.positions.tolist())) == 3


def test_schulze_leaves_a_perfect_cycle_tied():
    cycle = [["A", "B", "C"], ["B", "C", "A"], ["C", "A", "B"]]
    r = ms.rank(ms.PairwiseCounts.from_votes(cycle), "schulze")
    np.testing.assert_array_equal(r.scores, [0, 0, 0])
    assert list(r.positions) == [1, 1, 1]


def test_condorcet_consistent_methods_agree_on_the_winner(rng):
    methods = ["kemeny_young", "schulze", "ranked_pairs", "copeland", "sco"]
    seen = 0
    for _ in range(40):
        n, m = rng.integers(3, 8), rng.integers(1, 9)
        values = rng.integers(0, 4, size=(n, m)).astype(float)
        matrix = ms.ScoreMatrix.from_array(values, [f"c{i}" for i in range(n)])
        winner = ms.condorcet_winner(matrix)
        if winner is None:
            continue
        seen += 1
        for method in methods:
            r = ms.rank(matrix, method)
            assert r.winner == winner, method
            assert list(r.positions).count(1) == 1, method
    assert seen >= 10


@pytest.mark.parametrize("kind", ["votes", "weights", "many strengths"])
def test_schulze_scores_and_relation_alone_equal_the_method(kind):
    """What the resamples use (the scores alone, the relation of the clones) is the
    registered method's, on coded strengths of every kind: unweighted judges (codes are
    the margins), decimal weights, and more than 255 distinct strengths (uint16 codes)."""
    from metascore.methods.condorcet import _schulze_relation, _schulze_scores

    rng = np.random.default_rng(len(kind))
    for n in (2, 3, 5, 9, 40):
        judges = 600 if kind == "many strengths" else 7
        values = rng.integers(0, 3, size=(n, judges)).astype(float)  # ties, zero margins
        weights = (np.ones(judges) if kind == "votes"
                   else rng.integers(1, 40, judges) / 10.0 if kind == "weights"
                   else rng.random(judges) + 1.0)
        counts = ms.PairwiseCounts.from_matrix(values, weights)
        method = ms.rank(counts, "schulze")
        np.testing.assert_array_equal(_schulze_scores(counts), method.scores)
        np.testing.assert_array_equal(_schulze_relation(counts, {}), method.details["beats"])
