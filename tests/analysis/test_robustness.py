"""Issue 51 item 4: how far the judges' weights may move before the winner (and the second
and third places) changes, exact where the method is linear in the weights, else a bound.

Hand-computed cases for every method the figure covers, then a brute-force search of
weight vectors on small random boards (missing cells, ties): no re-weighting strictly
inside a figure changes the place (ranked by ``ms.rank``, the method itself), and for an
exact figure one just past it does.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import zlib

import numpy as np
import pytest

import metascore as ms
from metascore.analysis.robustness import robustness_of, weight_robustness
from metascore.registry import prepare_inputs, rank_inputs

# three judges of weights 1, 2, 1; higher is better
RANKED = {"a": [3, 1, 3], "b": [2, 3, 1], "c": [1, 2, 2]}        # ranks a (1,3,1) b (2,1,3) c (3,2,2)
VALUED = {"a": [0.9, 0.2, 0.9], "b": [0.5, 0.8, 0.3], "c": [0.1, 0.6, 0.5]}
WEIGHTS = [1.0, 2.0, 1.0]


def matrix(rows, weights=WEIGHTS, **kw):
    return ms.ScoreMatrix.from_array([rows[c] for c in rows], list(rows),
                                     ["j1", "j2", "j3"][:len(weights)], weights=weights, **kw)


def winner(data, method, **params):
    return robustness_of(ms.rank(data, method, **params)).places[0]


@pytest.mark.parametrize("method, rows, params, figure", [
    # b - a per judge: -rank (-1, 2, -2): 1/7 of the weighted spread; b - c: 1/2
    ("average_rank", RANKED, {}, 1 / 7),
    ("success_rate", RANKED, {}, 1 / 7),            # share below: (-1/2, 1, -1): 0.5 / 3.5
    ("dowdall", RANKED, {}, 1 / 15),                 # 1/position: (-1/2, 2/3, -2/3): (1/6) / (5/2)
    ("mean", VALUED, {}, 1 / 11),                    # (-0.4, 0.6, -0.6): 0.2 / 2.2
    ("optimality_gap", VALUED, {}, 1 / 7),           # q90 targets .82 .76 .82: 0.28 / 1.96
    ("optimality_gap", VALUED, {"gamma": "best"}, 1 / 11),  # the mean's order
    ("geometric_mean", VALUED, {}, math.log(80 / 27) / math.log(432 / 5)),  # logs of ratios
    ("relative_difference", VALUED, {}, 607 / 2489),  # fractions worked out by hand
])
def test_the_winner_s_figure_of_each_linear_method_by_hand(method, rows, params, figure):
    place = winner(matrix(rows), method, **params)
    assert (place.holder, place.kind, place.challenger) == ("b", "exact", "a")
    assert place.shift == pytest.approx(figure, rel=1e-12)
    # a beats b on j1 and j3: their weights go up, j2's down
    assert (place.raised, place.lowered) == (("j1", "j3"), ("j2",))


def test_the_second_and_third_places_by_hand():
    places = robustness_of(ms.rank(matrix(RANKED), "average_rank")).places
    second, third = places[1], places[2]
    # a (second) passes b at 1/7, before c passes it at 1/5
    assert (second.holder, second.kind, second.challenger) == ("a", "exact", "b")
    assert second.shift == pytest.approx(1 / 7)
    # c (third) passes a at 1/5 (a - c: (2, -1, 1): 1 / 5), b at 1/2
    assert (third.holder, third.kind, third.challenger) == ("c", "exact", "a")
    assert third.shift == pytest.approx(1 / 5)


def test_a_shared_first_place_changes_with_the_slightest_shift():
    # plurality: a first alone on j1 and j3 (weight 2), b on j2 (weight 2): tied, a listed
    # first by its id; any shift favouring j2 puts b first
    place = winner(matrix(RANKED), "plurality")
    assert (place.holder, place.kind, place.shift, place.challenger) == ("a", "exact", 0.0, "b")
    assert place.raised == ("j2",)


def test_identical_candidates_never_swap_and_a_dominant_winner_never_moves():
    rows = {"a": [3, 3, 3], "b": [1, 2, 2], "c": [1, 2, 2]}
    places = robustness_of(ms.rank(matrix(rows), "mean")).places
    assert places[0].kind == "exact" and places[0].shift is None  # a is best on every judge
    assert places[1].holder == "b" and places[1].shift is None    # c is b, judge by judge
    one = robustness_of(ms.rank(matrix({"a": [2], "b": [1], "c": [0]}, weights=[1.0]), "mean"))
    assert [p.shift for p in one.places] == [None, None, None] and one.n_judges == 1


def test_a_condorcet_winner_s_bound_is_checked_by_ranking_again():
    # a beats b on j1, j2 (2 to 1) and c everywhere: b beats a once j3 outweighs j1 + j2,
    # at x = 1/3, and then b is the Condorcet winner
    rows = {"a": [3, 3, 2], "b": [2, 1, 3], "c": [1, 2, 1]}
    for method in ("copeland", "minimax", "schulze", "ranked_pairs", "kemeny_young", "baldwin"):
        rob = robustness_of(ms.rank(matrix(rows, weights=[1, 1, 1]), method))
        first = rob.places[0]
        assert (first.holder, first.kind, first.challenger) == ("a", "exact", "b"), method
        assert first.shift == pytest.approx(1 / 3) and first.raised == ("j3",)
        assert [p.kind for p in rob.places[1:]] == ["not computed", "not computed"]


def test_what_is_not_computed_says_why():
    cycle = {"a": [3, 1, 2], "b": [2, 3, 1], "c": [1, 2, 3]}
    first = winner(matrix(cycle, weights=[1, 1, 1]), "copeland")
    assert first.kind == "not computed" and "no Condorcet winner" in first.note
    for method, words in (("median", "half of the total"), ("threshold", "last places"),
                          ("epp", "fitted"), ("random_dictator", "drawn")):
        rob = robustness_of(ms.rank(matrix(VALUED), method))
        assert rob.places[0].kind == "not computed" and words in rob.note, method
    grouped = matrix(VALUED).grouped({"g": ["j1", "j2"], "h": ["j3"]})
    assert "groups" in robustness_of(ms.rank(grouped, "mean")).note
    votes = ms.PairwiseCounts.from_votes([["a", "b", "c"], ["b", "a", "c"]])
    assert "votes" in robustness_of(ms.rank(votes, "copeland")).note
    gaps = matrix({"a": [0.9, np.nan, 0.5], "b": [0.5, 0.8, np.nan], "c": [0.1, 0.6, 0.5]})
    pairs = robustness_of(ms.rank(gaps, "success_rate", missing="pairwise"))
    assert pairs.places[0].kind == "not computed" and "totals of their own" in pairs.note


def test_every_method_declares_how_the_weights_move_it():
    """A registered method has per-judge points, the Condorcet route (deterministic and
    Condorcet-consistent), or one clause saying why neither; points only on the oriented
    values of a matrix (a method on votes has no judges to re-weight)."""
    from metascore.registry import get_ranking_method

    for name in ms.ranking_method_names():
        spec = get_ranking_method(name)
        weighting = spec.weighting
        routes = [weighting.points is not None, spec.condorcet and not spec.stochastic,
                  bool(weighting.why_not)]
        assert sum(routes) == 1, f"{name}: {routes}"
        assert not weighting.per_pair or weighting.points is not None, name


def test_missing_pairwise_two_candidates_on_different_judges():
    # b has one judge: its mean is 0.6 whatever the weights; a's (1, 0.4) falls to 0.6 at
    # weights (1 - x, 1 + x) with x = 1/3: the relaxation's bound is the figure
    rows = {"a": [1.0, 0.4, np.nan], "b": [np.nan, 0.6, np.nan], "c": [0.0, 0.0, 0.5]}
    place = winner(matrix(rows, weights=[1, 1, 1]), "mean", missing="pairwise")
    assert (place.holder, place.kind, place.challenger) == ("a", "exact", "b")
    assert place.shift == pytest.approx(1 / 3, abs=1e-12)


def test_weight_robustness_ranks_the_inputs_as_rank_does():
    inputs = prepare_inputs(matrix(VALUED), "worst")
    rob = weight_robustness(inputs, "optimality_gap", gamma="best")
    assert rob.method == "optimality_gap" and rob.places[0].shift == pytest.approx(1 / 11)


# ---------------------------------------------------------------------- brute force
LINEAR = ["mean", "geometric_mean", "optimality_gap", "dowdall", "plurality", "average_rank",
          "success_rate", "relative_difference"]
CONDORCET = ["copeland", "minimax", "schulze", "ranked_pairs", "baldwin", "kemeny_young"]


def random_board(rng: np.random.Generator) -> ms.ScoreMatrix:
    """4-6 candidates x 3-4 judges: few distinct values (ties), missing cells, unequal
    weights, mixed directions."""
    n, m = int(rng.integers(4, 7)), int(rng.integers(3, 5))
    x = rng.integers(1, 5, size=(n, m)) / 4.0
    x[rng.random((n, m)) < 0.15] = np.nan
    x[0, np.isnan(x).all(axis=0)] = 0.5
    return ms.ScoreMatrix.from_array(
        x, [f"c{i}" for i in range(n)], [f"j{j}" for j in range(m)],
        higher_is_better=list(rng.random(m) < 0.7), weights=list(rng.choice([0.5, 1.0, 2.0], m)))


def reranked(ranking, d: np.ndarray):
    """``ranking``'s method on its inputs with the weights ``w (1 + d)``."""
    inputs = ranking.inputs
    w = np.asarray(inputs.prepared.matrix.weights, dtype=float)
    m = dataclasses.replace(inputs.prepared.matrix, weights=w * (1 + d))
    moved = dataclasses.replace(inputs, prepared=dataclasses.replace(inputs.prepared, matrix=m))
    return rank_inputs(moved, ranking.method, seed=ranking.seed, tie_break=ranking.tie_break,
                       **ranking.params)


def holders(ranking, shifts: np.ndarray, k: int) -> set[str]:
    """Who ``ranking``'s method puts in place ``k`` under each re-weighting ``w (1 + d)``."""
    return {reranked(ranking, d).ranked_candidates()[k - 1] for d in shifts}


def directions(m: int, rng: np.random.Generator) -> np.ndarray:
    """The vertices of the unit cube (enough for a linear form) and random inner points
    (for the ratios of missing: pairwise and the Condorcet methods)."""
    vertices = np.array(list(itertools.product([-1.0, 1.0], repeat=m)))
    return np.concatenate([vertices, rng.uniform(-1, 1, size=(24, m))])


@pytest.mark.parametrize("missing", ["worst", "pairwise"])
@pytest.mark.parametrize("method", LINEAR + CONDORCET)
def test_no_reweighting_inside_a_figure_changes_the_place(method, missing):
    rng = np.random.default_rng(zlib.crc32(f"{method} {missing}".encode()))
    checked = 0
    for _ in range(6):
        ranking = ms.rank(random_board(rng), method, missing=missing)
        cube = directions(len(ranking.judges), rng)
        for place in robustness_of(ranking).places:
            if place.kind == "not computed":
                continue
            checked += 1
            k, x = place.position, place.shift
            if method in LINEAR and missing == "worst" and k == 1:
                assert place.kind == "exact"  # nothing compensates for the winner
            inside = 0.999 if x is None else x * (1 - 1e-4) - 1e-9
            if inside > 0:
                assert holders(ranking, inside * cube, k) == {place.holder}, (place, ranking)
            if place.kind == "exact" and x is not None:
                past = min(x * (1 + 1e-4) + 1e-6, 0.9999)
                assert holders(ranking, past * cube, k) != {place.holder}, (place, ranking)
    assert checked


@pytest.mark.parametrize("method", LINEAR)
def test_the_holders_are_the_ranking_s_places(method):
    rng = np.random.default_rng(7)
    for _ in range(5):
        ranking = ms.rank(random_board(rng), method, missing="pairwise")
        rob = robustness_of(ranking, places=ranking.n)
        assert [p.holder for p in rob.places] == ranking.ranked_candidates()


@pytest.mark.parametrize("method, missing", [
    (method, missing) for method in LINEAR for missing in ("worst", "pairwise")
    if not (missing == "pairwise" and method in ("success_rate", "relative_difference"))])
def test_the_closed_form_lists_every_place_as_the_method_does(method, missing):
    """The per-judge points and the tie-break the figure re-ranks with, against the method
    itself under random re-weightings (the scores tie often: few distinct values)."""
    from metascore.analysis.robustness import _Listing, linear_points, weighted_scores
    from metascore.registry import get_ranking_method

    rng = np.random.default_rng(zlib.crc32(f"{method} {missing} listing".encode()))
    compared = 0
    for _ in range(12):
        ranking = ms.rank(random_board(rng), method, missing=missing)
        points = linear_points(get_ranking_method(method), ranking.params, ranking.inputs.prepared)
        listing = _Listing(ranking.inputs, ranking.tie_break)
        w = np.asarray(ranking.inputs.prepared.matrix.weights, dtype=float)
        for d in [np.zeros(len(w)), *rng.choice([-0.5, 0.0, 0.5], size=(4, len(w)))]:
            scores = weighted_scores(points, w * (1 + d))
            order = [ranking.candidates[i] for i in
                     (listing.holder(scores, k) for k in range(1, ranking.n + 1))]
            assert order == reranked(ranking, d).ranked_candidates()
            compared += 1
    assert compared
