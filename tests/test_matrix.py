"""ScoreMatrix construction and validation: one clear sentence per problem."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metascore as ms


def test_from_frame_with_directions_weights_and_metadata():
    df = pd.DataFrame({"acc": [0.9, 0.8], "mae": [0.2, 0.1]}, index=["A", "B"])
    m = ms.ScoreMatrix.from_frame(
        df, higher_is_better={"mae": False}, weights={"acc": 2},
        participants={"A": "alice"}, submitted_at={"B": "2026-01-02T10:00:00Z"}, baselines=["B"],
    )
    assert m.candidates == ("A", "B") and m.judges == ("acc", "mae")
    assert m.higher_is_better == (True, False)
    assert m.weights.tolist() == [2.0, 1.0]
    assert m.participants == ("alice", None)
    assert m.submitted_at[1] == pd.Timestamp("2026-01-02 10:00:00")
    assert m.is_baseline == (False, True)
    np.testing.assert_allclose(m.oriented(), [[0.9, -0.2], [0.8, -0.1]])


def test_from_long_keeps_first_appearance_order_and_marks_missing():
    df = pd.DataFrame({"candidate": ["B", "A", "B"], "judge": ["t1", "t1", "t2"], "value": [1, 2, "n/a"]})
    m = ms.ScoreMatrix.from_long(df)
    assert m.candidates == ("B", "A") and m.judges == ("t1", "t2")
    assert np.isnan(m.values[0, 1]) and np.isnan(m.values[1, 1])


@pytest.mark.parametrize("token", ["", "NaN", "n/a", "null", "None", " NA "])
def test_missing_tokens(token):
    m = ms.ScoreMatrix.from_array([[token, 1], [2, 3]], ["A", "B"], ["x", "y"])
    assert np.isnan(m.values[0, 0])


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: ms.ScoreMatrix.from_array([[1, 2], [3, 4]], ["A", "A"]), "duplicate candidate label 'A'"),
        (lambda: ms.ScoreMatrix.from_array([[1, 2], [3, 4]], ["A", "B"], ["t", "t"]), "duplicate judge label 't'"),
        (lambda: ms.ScoreMatrix.from_array([[1, np.inf], [3, 4]], ["A", "B"], ["t", "u"]),
         r"candidate 'A', judge 'u': score inf is infinite"),
        (lambda: ms.ScoreMatrix.from_array([["1", "-inf"], [3, 4]], ["A", "B"], ["t", "u"]),
         r"candidate 'A', judge 'u': score -inf is infinite"),
        (lambda: ms.ScoreMatrix.from_array([["abc", 1], [3, 4]], ["A", "B"], ["t", "u"]),
         r"candidate 'A', judge 't': score 'abc' is not a number"),
        (lambda: ms.ScoreMatrix.from_array([[1, 2], [3, 4]], weights=[1, 0]), r"judge '1' has weight 0.0; weights must be > 0"),
        (lambda: ms.ScoreMatrix.from_array([[1, 2], [3, 4]], weights=[1, -2]), "weights must be > 0"),
        (lambda: ms.ScoreMatrix.from_array([1, 2, 3]), "must be 2-D"),
        (lambda: ms.ScoreMatrix.from_array(np.zeros((0, 3))), "empty"),
        (lambda: ms.ScoreMatrix.from_array([[1, 2], [3, 4]], ["A", "B"], ["acc", "mae"], higher_is_better={"mea": False}),
         r"unknown judge 'mea' \(did you mean 'mae'\?\)"),
        (lambda: ms.ScoreMatrix.from_array([[1, 2], [3, 4]], ["A", "B"], baselines=["C"]), "baseline 'C' is not a candidate"),
        (lambda: ms.ScoreMatrix.from_array([[1, 2], [3, 4]], ["A", "B"], submitted_at=["yesterday-ish", None]),
         "candidate 'A': submission time 'yesterday-ish' is not a date/time"),
    ],
)
def test_validation_errors(build, message):
    with pytest.raises(ms.InputError, match=message):
        build()


def test_inf_allowed_per_judge():
    m = ms.ScoreMatrix.from_array([[1, np.inf], [3, 4]], ["A", "B"], ["t", "u"], allow_inf=["u"])
    assert np.isinf(m.values[0, 1])


def test_rank_errors():
    one = ms.ScoreMatrix.from_array([[1, 2]], ["solo"])
    with pytest.raises(ms.InputError, match=r"ranking needs at least 2 candidates; got 1 \('solo'\)"):
        ms.rank(one, "mean")
    neg = ms.ScoreMatrix.from_array([[1, -2], [3, 4]], ["A", "B"], ["t", "u"])
    with pytest.raises(ms.InputError, match=r"relative difference needs non-negative scores, but candidate 'A' has -2.0 on judge 'u'"):
        ms.rank(neg, "relative_difference")
    assert ms.rank(neg, "relative_difference", on="ranks").winner == "B"
    with pytest.raises(ms.ConfigError, match="unknown missing-data policy 'drop'"):
        ms.rank(neg, "mean", missing="drop")
    with pytest.raises(ms.ConfigError, match="`seed` must be a non-negative integer"):
        ms.rank(neg, "mean", seed=-1)
    with pytest.raises(ms.ConfigError, match="unknown tie-break key 'time'"):
        ms.rank(neg, "mean", tie_break=["time"])


def test_subset_and_bootstrap_labels():
    m = ms.ScoreMatrix.from_array(np.arange(6.0).reshape(3, 2), ["A", "B", "C"], ["x", "y"])
    s = m.subset(candidates=["C", "A"], judges=[1, 1])
    assert s.candidates == ("C", "A") and s.judges == ("y", "y#1")
    np.testing.assert_array_equal(s.values, [[5, 5], [1, 1]])
    with pytest.raises(ms.InputError, match=r"unknown candidate 'D'"):
        m.subset(candidates=["D"])


def test_values_are_read_only():
    m = ms.ScoreMatrix.from_array([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError):
        m.values[0, 0] = 5


def test_tie_break_by_submission_time_then_id():
    m = ms.ScoreMatrix.from_array(
        [[1.0], [1.0], [1.0], [0.0]], ["c", "b", "a", "z"],
        submitted_at=["2026-01-01", "2026-01-03", "2026-01-03", "2026-01-01"],
    )
    r = ms.rank(m, "mean")
    assert r.positions.tolist() == [1, 1, 1, 4]
    assert r.ranked_candidates() == ["c", "a", "b", "z"]
    np.testing.assert_allclose(r.ranks, [2, 2, 2, 4])
    r = ms.rank(m, "mean", tie_break=["candidate"])
    assert r.ranked_candidates() == ["a", "b", "c", "z"]
