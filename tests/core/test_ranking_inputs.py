"""A Ranking keeps the registry's Inputs it was computed from (issue 35, "one prepared
input"): the boards, the analyses and other methods start from them instead of applying
the missing-data policy again."""

from __future__ import annotations

import numpy as np
import pytest

import metascore as ms
from metascore.analysis import shared as E
from metascore.registry import prepare_inputs, rank_inputs

#: quick settings of the slow methods (their scores do not matter here, only that the two
#: ways of ranking give the same ones)
QUICK = {"sco_fenchel_young": {"iterations": 1000}}

#   t1   t2   t3   t4 (weight 0)
VALUES = [[0.9, 0.2, 0.5, 0.1],
          [0.7, np.nan, 0.6, 0.9],
          [0.8, 0.4, 0.3, 0.2],
          [0.6, 0.1, 0.9, 0.5]]


def holes() -> ms.ScoreMatrix:
    return ms.ScoreMatrix.from_array(VALUES, list("ABCD"), ["t1", "t2", "t3", "t4"],
                                     weights=[1, 2, 1, 0])


@pytest.mark.parametrize("missing", ["worst", "drop_candidates", "drop_judges", "pairwise"])
def test_a_ranking_keeps_the_matrix_it_ranked_after_the_policy(missing):
    r = ms.rank(holes(), "average_rank", missing=missing)
    prepared = r.inputs.prepared
    assert prepared.missing == r.missing == missing and r.inputs.counts is None
    assert prepared.matrix is r.matrix  # the matrix ranked, not a copy prepared again
    assert tuple(r.inputs.candidates) == r.candidates and tuple(r.inputs.judges) == r.judges
    assert prepared.uncounted == r.uncounted_judges == ("t4",)
    assert prepared.excluded_candidates == r.excluded_candidates
    assert prepared.excluded_judges == r.excluded_judges
    expected = {"drop_candidates": ("ACD", "t1 t2 t3"), "drop_judges": ("ABCD", "t1 t3")}
    cands, judges = expected.get(missing, ("ABCD", "t1 t2 t3"))
    assert r.candidates == tuple(cands) and r.judges == tuple(judges.split())
    np.testing.assert_array_equal(prepared.oriented, r.matrix.oriented())


def test_a_ranking_of_votes_keeps_the_counts():
    counts = ms.pairwise_counts(ms.ScoreMatrix.from_array([[3, 1], [2, 3], [1, 2]], list("ABC")))
    r = ms.rank(counts, "schulze")
    assert r.inputs.counts is counts and r.inputs.prepared is None
    assert r.inputs.missing == r.missing == "votes" and r.matrix is None


def test_a_ranking_in_two_steps_keeps_the_whole_matrix():
    """The groups' own rankings and the ranking across them use matrices of their own; the
    two-step ranking keeps the whole matrix after the policy (every judge of every group),
    which its board shows."""
    m = holes().grouped({"g1": ["t1", "t2"], "g2": ["t3", "t4"]})
    r = ms.rank(m, "average_rank", missing="drop_candidates")
    prepared = r.inputs.prepared
    assert prepared.matrix is r.matrix and r.judges == ("t1", "t2", "t3")
    assert prepared.matrix.candidates == r.candidates == ("A", "C", "D")
    assert prepared.uncounted == ("t4",) and r.excluded_candidates == {"B": "missing score for judge 't2'"}


@pytest.mark.parametrize("name", ms.ranking_method_names())
def test_another_method_ranks_the_kept_inputs_as_it_ranks_the_matrix(name):
    """:func:`rank_inputs` on a ranking's inputs is :func:`rank` on its matrix, for every
    registered method: the same scores, positions, notes and outputs."""
    m = holes()
    first = ms.rank(m, "mean", missing="worst")
    params = QUICK.get(name, {})
    again = rank_inputs(first.inputs, name, seed=7, **params)
    direct = ms.rank(m, name, seed=7, **params)
    assert again.to_dict() == direct.to_dict()
    np.testing.assert_array_equal(again.scores, direct.scores)
    assert again.inputs is first.inputs  # nothing prepared again


def test_a_method_refuses_kept_inputs_it_cannot_rank():
    votes = ms.rank(ms.pairwise_counts(ms.ScoreMatrix.from_array([[2, 1], [1, 2]])), "schulze")
    with pytest.raises(ms.InputError, match="method 'mean' needs a score matrix"):
        rank_inputs(votes.inputs, "mean")
    one = prepare_inputs(ms.ScoreMatrix.from_array([[1.0, 2.0]], ["solo"]), "worst")
    with pytest.raises(ms.InputError, match=r"ranking needs at least 2 candidates; got 1 \('solo'\)"):
        rank_inputs(one, "mean")


def test_the_analysis_of_a_ranking_starts_from_its_inputs_and_ranking():
    m = holes()
    r = ms.rank(m, "copeland", missing="drop_judges", seed=3)
    s = E.setup_of(r, "copeland", None)
    assert s.inputs is r.inputs and s.full["copeland"] is r  # neither prepared nor ranked again
    assert s.matrix is r.matrix and s.missing == "drop_judges"
    assert s.excluded_judges == r.excluded_judges == {"t2": "no score for candidate 'B'"}
    # the same analysis as the one of the matrix the ranking used
    fresh = E.setup(r.matrix, "copeland", ms.Execution(missing="drop_judges", seed=3))
    np.testing.assert_array_equal(s.filled_ranks, fresh.filled_ranks)
    kw = dict(n_trials=50, level=0.9, run=ms.Execution(seed=3))
    assert ms.rank_uncertainty(s, "copeland", **kw).to_frame().equals(
        ms.rank_uncertainty(fresh, "copeland", **kw).to_frame())
    kw = dict(axis="judges", q=5, r=2, concordance="kendall_w", run=ms.Execution(seed=3))
    assert ms.stability(s, **kw).to_dict() == ms.stability(fresh, **kw).to_dict()


def test_the_analysis_ranks_again_what_its_own_full_ranking_would_differ_in():
    """The analyses' full-data rankings use the default tie-break and the given parameters:
    a ranking made otherwise is not reused, its inputs are."""
    m = holes()
    r = ms.rank(m, "average_rank", tie_break=("candidate",))
    s = E.setup_of(r, ["average_rank", "mean"], None)
    assert s.inputs is r.inputs and s.full["average_rank"] is not r
    assert s.full["average_rank"].tie_break == ("submitted_at", "candidate")
    np.testing.assert_array_equal(s.full["average_rank"].scores, r.scores)
    assert s.full["mean"].to_dict() == ms.rank(m, "mean").to_dict()
    dense = E.setup_of(ms.rank(m, "average_rank"), "average_rank", {"ties": "dense"})
    assert dense.full["average_rank"].params == {"ties": "dense"}
