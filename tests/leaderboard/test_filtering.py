"""Baseline filtering (SPEC 5) and participant selection on small hand-made matrices."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from metascore import ScoreMatrix, rank
from metascore.errors import InputError
from metascore.leaderboard.filtering import filter_final
from metascore.leaderboard.selection import select_candidates


def _dev(values, cands, baselines=(), participants=None, method="mean"):
    m = ScoreMatrix.from_array(values, cands, ["t1", "t2"], baselines=baselines,
                               participants=participants)
    return rank(m, method)


def _final(cands, participants=None, baselines=()):
    values = np.arange(2 * len(cands), dtype=float).reshape(len(cands), 2)
    return ScoreMatrix.from_array(values, cands, ["t1", "t2"], participants=participants,
                                  baselines=baselines)


# mean scores: A 0.9, B 0.6 = baseline B1 0.6, C 0.5, baseline B2 0.4
DEV = _dev([[0.9, 0.9], [0.6, 0.6], [0.6, 0.6], [0.5, 0.5], [0.4, 0.4]],
           ["A", "B", "B1", "C", "B2"], baselines=["B1", "B2"])


def test_beat_all_is_strict():
    res = filter_final(DEV, _final(["A", "B", "C", "E"]), rule="beat_baseline", beat="all")
    assert res.qualified == ("A",)
    assert res.threshold == pytest.approx(0.6)
    assert [(b.candidate, b.position) for b in res.baselines] == [("B1", 2), ("B2", 5)]
    excl = res.excluded
    assert excl["B"] == "development score 0.6 (position 2) ties with baseline 'B1' (0.6); " \
                       "a tie does not qualify"
    assert excl["C"] == "development score 0.5 (position 4) does not beat baseline 'B1' (0.6)"
    assert excl["E"] == "absent from the 'development' phase (no development submission for " \
                        "candidate 'E')"


def test_beat_any():
    res = filter_final(DEV, _final(["A", "B", "C"]), rule="beat_baseline", beat="any")
    assert res.qualified == ("A", "B", "C")
    assert res.threshold == pytest.approx(0.4)
    assert res.decisions[2].reason == "development score 0.5 (position 4) beats baseline " \
                                      "'B2' (0.4)"


def test_match_by_participant_then_candidate_id():
    dev = _dev([[0.9, 0.9], [0.1, 0.1], [0.5, 0.5]], ["a-1", "b-1", "base"],
               baselines=["base"], participants=["alice", "bob", "org"])
    final = _final(["a-2", "b-1", "x"], participants=["alice", None, "xavier"])
    res = filter_final(dev, final, rule="beat_baseline")
    d = {x.candidate: x for x in res.decisions}
    assert d["a-2"].qualified and d["a-2"].dev_candidate == "a-1"
    assert not d["b-1"].qualified and d["b-1"].dev_candidate == "b-1"  # by candidate id
    assert d["x"].reason.endswith("(no development submission for participant 'xavier')")


def test_top_k_and_none():
    res = filter_final(DEV, _final(["A", "B", "C"]), rule="top_k", k=2)
    assert res.qualified == ("A", "B")  # baselines take no slot
    # the position top_k counts is among the non-baseline candidates (issue 41, item 10):
    # C is third of them, fourth with the baseline above it
    assert res.excluded == {"C": "development position 3 among the non-baseline candidates (4 "
                                 "with the baselines) is outside the top 2"}
    res = filter_final(DEV, _final(["A", "C", "Z"]), rule="none")
    assert res.qualified == ("A", "C")  # rule none still needs a development submission
    assert res.decisions[0].reason == "no filter (rule 'none')"
    assert res.excluded["Z"].startswith("absent from the 'development' phase")


def test_top_k_auto_uses_k_star():
    """Development order A > B > C > D; final order reversed: d = 6 discordant pairs of
    n = 4 common candidates, k* = 1 + 6/4 = 2.5, so 3 candidates enter."""
    dev = _dev([[4, 4], [3, 3], [2, 2], [1, 1]], list("ABCD"))
    final = ScoreMatrix.from_array([[1, 1], [2, 2], [3, 3], [4, 4]], list("ABCD"), ["t1", "t2"])
    res = filter_final(dev, final, rule="top_k", k="auto", rank_fn=lambda m: rank(m, "mean"))
    assert res.kendall_distance == 6 and res.k_estimate == pytest.approx(2.5) and res.k == 3
    assert res.qualified == ("A", "B", "C")
    same = filter_final(dev, dev.matrix, rule="top_k", k="auto", rank_fn=lambda m: rank(m, "mean"))
    assert same.k == 1 and same.qualified == ("A",)


def test_nobody_and_no_baseline():
    res = filter_final(DEV, _final(["C"]), rule="beat_baseline")
    assert res.qualified == ()
    assert res.message == (
        "the final ranking is empty: no final-phase candidate qualified: none beat every "
        "baseline in the 'development' phase (the best: 'B1' (development score 0.6)); way out: "
        "`metascore bundle add-meta BUNDLE --filter top_k:1` (metascore.yaml: `filter: {rule: "
        "top_k, k: 1}`), which admits the best 1 of the 1 candidates of 'development' that are "
        "not baselines.")


def test_an_unbeatable_baseline_is_said_with_the_ways_out():
    """Issue 41, item 3: a baseline with the best development score on every judge (a
    starting kit holding the gold answers) qualifies nobody; the message says so in one
    sentence, with the ways out."""
    dev = _dev([[1.0, 1.0], [0.9, 1.0], [0.5, 0.2]], ["kit", "A", "B"], baselines=["kit"])
    res = filter_final(dev, _final(["A", "B"]), rule="beat_baseline")
    assert res.qualified == ()
    assert "(the best: 'kit' (development score 1)); it holds the best score of the 'development' " \
           "phase on every judge, so nobody can beat it; way out: `metascore bundle add-meta BUNDLE " \
           "--filter top_k:1`" in res.message
    assert "\n" not in res.message
    # best on one judge only: beatable, not said so
    dev = _dev([[1.0, 0.1], [0.9, 1.0], [0.5, 0.2]], ["kit", "A", "B"], baselines=["kit"])
    res = filter_final(dev, _final(["B"]), rule="beat_baseline")
    assert res.qualified == () and "nobody can beat it" not in res.message
    dev = _dev([[1, 1], [0, 0]], ["A", "B"])
    with pytest.raises(InputError, match=r"'beat_baseline' needs at least one baseline"):
        filter_final(dev, _final(["A"]), rule="beat_baseline")


@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=3, max_size=8), st.integers(0, 2))
def test_qualified_iff_strictly_above_every_baseline(scores, nb):
    n = len(scores)
    cands = [f"c{i}" for i in range(n)]
    base = cands[:nb + 1] if nb + 1 < n else cands[:1]
    dev = _dev(np.column_stack([scores, scores]), cands, baselines=base)
    others = [c for c in cands if c not in base]
    res = filter_final(dev, _final(others), rule="beat_baseline", beat="all")
    best = max(dev.score_of(b) for b in base)
    for c in others:
        assert (c in res.qualified) == (dev.score_of(c) > best and
                                        not math.isclose(dev.score_of(c), best, rel_tol=1e-10))


# ---------------------------------------------------------------------- selection
def test_selection_best_last_all():
    m = ScoreMatrix.from_array(
        [[0.5, 0.5], [0.9, 0.9], [0.9, 0.9], [0.7, 0.7], [0.2, 0.2]],
        ["a1", "a2", "a3", "b1", "base"], ["t1", "t2"],
        participants=["alice", "alice", "alice", "bob", "alice"],
        submitted_at=["2024-01-03", "2024-01-02", "2024-01-01", "2024-01-01", "2024-01-09"],
        baselines=["base"],
    )
    rank_fn = lambda x: rank(x, "mean")  # noqa: E731
    best = select_candidates(m, "best", rank_fn)
    assert best.matrix.candidates == ("a3", "b1", "base")  # a2 = a3, a3 is earlier
    assert best.dropped["a2"].startswith("participant 'alice' is represented by 'a3'")
    last = select_candidates(m, "last", rank_fn)
    assert last.matrix.candidates == ("a1", "b1", "base")  # the baseline is never merged
    assert set(last.dropped) == {"a2", "a3"}
    assert select_candidates(m, "all", rank_fn).matrix.candidates == m.candidates


def test_auto_k_counts_scores_tied_within_tolerance_as_ties_like_the_analysis():
    """0.1 + 0.2 and 0.3 are one score: k='auto' and analysis.k_star agree on d."""
    from metascore.analysis import k_star

    dev = _dev([[0.1 + 0.2, 0.1 + 0.2], [0.3, 0.3], [0.1, 0.1]], list("ABC"))
    final = ScoreMatrix.from_array([[1, 1], [2, 2], [0, 0]], list("ABC"), ["t1", "t2"])
    res = filter_final(dev, final, rule="top_k", k="auto", rank_fn=lambda m: rank(m, "mean"))
    expected = k_star(dev, rank(final, "mean"))
    assert res.kendall_distance == expected.d == 0
    assert res.k == expected.k == 1
