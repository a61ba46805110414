"""ScoreMatrix construction and validation: one clear sentence per problem."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

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
        (lambda: ms.ScoreMatrix.from_array([[1, 2], [3, 4]], weights=[0, 0]), r"every judge has weight 0 \(2 judges\)"),
        (lambda: ms.ScoreMatrix.from_array([[1, 2], [3, 4]], weights=[1, -2]), r"judge '1' has weight -2.0; weights must be >= 0 \(0: shown, not counted\)"),
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


def test_untied_scores_take_their_order_positions_and_ranks_from_the_sort():
    from metascore.ranking import fractional_rank_of_scores, positions_and_order

    scores = np.random.default_rng(3).permutation(50) / 7.0
    candidates = [f"c{k}" for k in range(50)][::-1]  # a tie-break by label would disagree
    positions, order = positions_and_order(scores, ("candidate",), candidates)
    np.testing.assert_array_equal(order, np.argsort(-scores))
    np.testing.assert_array_equal(positions, 50 - scipy.stats.rankdata(scores) + 1)
    assert positions.dtype.kind == "i"
    np.testing.assert_array_equal(fractional_rank_of_scores(scores), positions)
    with pytest.raises(ms.ConfigError, match="unknown tie-break key 'size'"):
        positions_and_order(scores, ("size",), candidates)  # checked even without ties


# ---------------------------------------------------------------- fast construction paths
def test_default_judge_labels_behave_like_the_tuple_of_strings():
    labels = ms.ScoreMatrix.from_array(np.zeros((2, 12))).judges
    plain = tuple(str(k) for k in range(12))
    assert labels == plain and plain == labels and list(labels) == list(plain)
    assert len(labels) == 12 and labels[0] == "0" and labels[-1] == "11" and labels[np.int64(3)] == "3"
    assert labels[2:5] == plain[2:5] and labels + ("x",) == plain + ("x",)
    assert "11" in labels and "12" not in labels and "01" not in labels and 3 not in labels
    assert labels.index("7") == 7 and hash(labels) == hash(plain)
    with pytest.raises(ValueError):
        labels.index("12")
    with pytest.raises(IndexError):
        labels[12]


def test_a_float_array_is_viewed_read_only_not_copied():
    values = np.random.default_rng(0).random((3, 4))
    m = ms.ScoreMatrix.from_array(values)
    assert np.shares_memory(m.values, values) and not m.values.flags.writeable
    assert values.flags.writeable  # the caller's array is left alone
    ints = ms.ScoreMatrix.from_array(np.arange(6).reshape(2, 3))
    assert ints.values.dtype == float and ints.values.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_one_pass_validation_agrees_with_cell_checks():
    big = np.full((2, 3), 1e308)  # finite cells whose sum overflows: still valid
    m = ms.ScoreMatrix.from_array(big)
    assert not m.has_missing and np.isfinite(m.values).all()
    gap = np.array([[1.0, np.nan], [2.0, 3.0]])
    assert ms.ScoreMatrix.from_array(gap).has_missing
    assert not ms.ScoreMatrix.from_array(np.ones((2, 2))).has_missing
    with pytest.raises(ms.InputError, match=r"candidate '1', judge '0': score -inf is infinite"):
        ms.ScoreMatrix.from_array(np.array([[1.0, np.nan], [-np.inf, 3.0]]))
    with pytest.raises(ms.InputError, match="unknown judge 'z'"):  # checked even when finite
        ms.ScoreMatrix.from_array(np.ones((2, 2)), judges=["x", "y"], allow_inf=["z"])


def test_numeric_frames_take_the_float_path_with_the_same_result():
    frame = pd.DataFrame(np.random.default_rng(1).random((3, 4)), index=list("abc"))
    fast = ms.ScoreMatrix.from_frame(frame)
    slow = ms.ScoreMatrix.from_array(frame.to_numpy(dtype=object), list("abc"), list(range(4)))
    np.testing.assert_array_equal(fast.values, slow.values)
    assert fast.judges == slow.judges == ("0", "1", "2", "3") and fast.candidates == ("a", "b", "c")


def test_orientation_reuses_the_values_only_when_every_judge_is_higher_is_better():
    values = np.array([[1.0, 2.0], [3.0, 4.0]])
    up = ms.ScoreMatrix.from_array(values)
    assert up.oriented() is up.values
    mixed = ms.ScoreMatrix.from_array(values, higher_is_better=[True, False])
    np.testing.assert_array_equal(mixed.oriented(), [[1.0, -2.0], [3.0, -4.0]])
    down = ms.ScoreMatrix.from_array(values, higher_is_better=False)
    np.testing.assert_array_equal(down.oriented(), -values)
    assert down.higher_is_better == (False, False) and down.weights.tolist() == [1.0, 1.0]


def test_long_rows_are_validated_by_their_row_sums():
    from metascore.cells import ROW_SUMS_FROM_JUDGES

    wide = np.random.default_rng(2).random((3, ROW_SUMS_FROM_JUDGES))
    m = ms.ScoreMatrix.from_array(wide)
    assert m.row_sums_known and not m.has_missing
    np.testing.assert_array_equal(m.row_sums, wide.sum(axis=1))
    assert not m.row_sums.flags.writeable
    short = ms.ScoreMatrix.from_array(wide[:, :10])  # short rows: one total sum validated it
    assert not short.row_sums_known
    np.testing.assert_array_equal(short.row_sums, wide[:, :10].sum(axis=1))
    assert short.row_sums_known  # computed once, on demand
    assert not ms.ScoreMatrix.from_array(np.asfortranarray(wide)).row_sums_known
    # the same verdicts as the total sum: missing cells, refused and allowed infinities
    gap = wide.copy()
    gap[1, 5] = np.nan
    m = ms.ScoreMatrix.from_array(gap)
    assert m.has_missing and np.isnan(m.row_sums[1]) and np.isfinite(m.row_sums[[0, 2]]).all()
    inf = wide.copy()
    inf[2, 7] = -np.inf
    with pytest.raises(ms.InputError, match=r"candidate '2', judge '7': score -inf is infinite"):
        ms.ScoreMatrix.from_array(inf)
    allowed = ms.ScoreMatrix.from_array(inf, allow_inf=["7"])
    assert not allowed.has_missing and allowed.row_sums[2] == -np.inf
    big = np.full((2, ROW_SUMS_FROM_JUDGES), 1e308)  # finite cells whose row sums overflow
    assert not ms.ScoreMatrix.from_array(big).has_missing


@pytest.mark.parametrize("weight", [-1.0, np.inf, np.nan])
def test_a_bad_constant_weight_names_the_first_judge(weight):
    with pytest.raises(ms.InputError, match=r"judge '0' has weight .*; weights must be >= 0"):
        ms.ScoreMatrix.from_array(np.ones((2, 3)), weights=weight)


def test_rank_takes_a_plain_numpy_array_as_candidates_by_judges():
    x = np.array([[0.2, 0.9, 0.4], [0.8, 0.7, 0.9], [0.1, 0.3, 0.2]])
    r = ms.rank(x, "average_rank")
    assert r.candidates == ("0", "1", "2") and r.judges == ("0", "1", "2")
    assert r.ranked_candidates() == ["1", "0", "2"]
    np.testing.assert_array_equal(r.scores, ms.rank(ms.ScoreMatrix.from_array(x), "average_rank").scores)
    assert ms.rank(np.array([[1, 5], [2, 0]]), "mean").ranked_candidates() == ["0", "1"]  # ints
    with pytest.raises(ms.InputError, match="must be 2-D .* got 1 dimension"):
        ms.rank(np.array([1.0, 2.0]), "mean")
    with pytest.raises(ms.InputError, match="candidate '1' has no score for judge '0'"):
        ms.rank(np.array([[1.0, 2.0], [np.nan, 1.0]]), "mean", missing="error")
    with pytest.raises(ms.InputError, match="cannot rank a list; give .* 2-D numpy array"):
        ms.rank([[1.0, 2.0], [2.0, 1.0]], "mean")


def test_a_constant_weight_of_0_counts_nothing_and_is_refused():
    with pytest.raises(ms.InputError, match=r"every judge has weight 0 \(3 judges\)"):
        ms.ScoreMatrix.from_array(np.ones((2, 3)), weights=0)
