"""Exact small cases for the classical methods, computed by hand.

Matrices:
- the thesis appendix 10.2 counter-examples (tables 10.1-10.5);
- ``M3``: 3 candidates x 3 judges (one lower-is-better) with ties;
- ``M45``: 4 candidates x 5 judges with ties and one missing cell, for every missing policy.
Expected values are written as the arithmetic a person would do on paper.
"""

from __future__ import annotations

import numpy as np
import pytest

import metascore as ms
from metascore.errors import InputError

T101 = np.array([[1, 1, 0], [0.8, 0.8, 1], [0.6, 0.6, 0.6]])
T102 = np.array([[0.6, 0.6, 0], [0.4, 0.4, 1], [1, 0, 0.4]])
T105 = np.array([[0.6, 0.6, 0.4], [0.5, 0.4, 0.6], [0.5, 0.7, 0.5]])


def matrix(values, names="ABCDEFGH", **kw):
    values = np.asarray(values, dtype=float)
    return ms.ScoreMatrix.from_array(values, list(names[: len(values)]), **kw)


def with_clones(table: np.ndarray, k: int) -> ms.ScoreMatrix:
    """Table with candidate B (row 1) present k + 1 times."""
    rows = [table[0]] + [table[1]] * (k + 1) + [table[2]]
    names = ["A"] + [f"B{i}" for i in range(k + 1)] + ["C"]
    return ms.ScoreMatrix.from_array(np.array(rows), names)


# --------------------------------------------------------------------------- thesis 10.x
class TestThesisCounterExamples:
    def test_table_10_1_success_rate_fails_majority(self):
        """A is first for 2 of 3 judges, yet A and B tie at 2/3."""
        r = ms.rank(matrix(T101), "success_rate")
        np.testing.assert_allclose(r.scores, [2 / 3, 2 / 3, (1 / 3 + 0) / 2])  # C beats A on j3
        assert r.positions.tolist() == [1, 1, 3]

    def test_table_10_1_copeland_respects_majority(self):
        assert ms.rank(matrix(T101), "copeland").ranked_candidates()[0] == "A"

    def test_table_10_2_success_rate_fails_liia(self):
        """With A and B only, A wins; adding C makes all three tie."""
        two = ms.rank(matrix(T102[:2]), "success_rate")
        np.testing.assert_allclose(two.scores, [2 / 3, 1 / 3])
        three = ms.rank(matrix(T102), "success_rate")
        np.testing.assert_allclose(three.scores, [1 / 2, 1 / 2, 1 / 2])

    def test_table_10_2_relative_difference_on_ranks_fails_liia(self):
        # A, B: ranks (1,2), (1,2), (2,1): w(A,B) = (1/3 + 1/3 - 1/3)/3 = 1/9
        two = ms.rank(matrix(T102[:2]), "relative_difference", on="ranks")
        np.testing.assert_allclose(two.scores, [1 / 9, -1 / 9])
        three = ms.rank(matrix(T102), "relative_difference", on="ranks")
        np.testing.assert_allclose(three.scores, [0, 0, 0], atol=1e-12)

    def test_table_10_2_relative_difference_on_values_does_not(self):
        """On raw scores B beats A head to head: (0.2/1 + 0.2/1 - 1/1)/3 = -0.2 for A."""
        two = ms.rank(matrix(T102[:2]), "relative_difference")
        np.testing.assert_allclose(two.scores, [-0.2, 0.2])

    def test_table_10_3_and_10_5_success_rate_not_clone_proof(self):
        """Pairwise rates on table 10.5 (ties = 1/2): A vs B 2/3, A vs C 1/3, B vs C 1/2. C leads with one B; with k >= 3 extra copies of B, A passes C:
        A = (1/3 + (k+1) 2/3)/(k+2), C = (2/3 + (k+1)/2)/(k+2)."""
        for k in range(6):
            r = ms.rank(with_clones(T105, k), "success_rate", ties="half")
            a, c = r.score_of("A"), r.score_of("C")
            n_b = k + 1
            assert a == pytest.approx((1 / 3 + n_b * 2 / 3) / (n_b + 1))
            assert c == pytest.approx((2 / 3 + n_b * 0.5) / (n_b + 1))
            assert (a > c) == (n_b > 2)

    def test_table_10_5_relative_difference_on_ranks_not_clone_proof(self):
        base = ms.rank(with_clones(T105, 0), "relative_difference", on="ranks")
        assert base.score_of("C") > base.score_of("A")
        cloned = ms.rank(with_clones(T105, 3), "relative_difference", on="ranks")
        assert cloned.score_of("A") > cloned.score_of("C")

    def test_table_10_5_relative_difference_on_values_clones_never_lift_a(self):
        for k in range(10):
            r = ms.rank(with_clones(T105, k), "relative_difference")
            assert r.score_of("C") > r.score_of("A")


# --------------------------------------------------------------------------- 3 x 3
# j1 accuracy (higher), j2 mae (lower), j3 f1 (higher); B and C tie on j1.
M3 = np.array([[0.9, 0.2, 0.6], [0.8, 0.1, 0.5], [0.8, 0.3, 0.7]])


@pytest.fixture
def m3() -> ms.ScoreMatrix:
    return ms.ScoreMatrix.from_array(
        M3, ["A", "B", "C"], ["acc", "mae", "f1"], higher_is_better={"mae": False}
    )


class TestThreeByThree:
    def test_mean(self, m3):
        r = ms.rank(m3, "mean")
        np.testing.assert_allclose(r.scores, [(0.9 - 0.2 + 0.6) / 3, (0.8 - 0.1 + 0.5) / 3, (0.8 - 0.3 + 0.7) / 3])
        assert r.positions.tolist() == [1, 2, 2]

    def test_weighted_mean(self, m3):
        m = ms.ScoreMatrix.from_array(M3, ["A", "B", "C"], ["acc", "mae", "f1"],
                                      higher_is_better={"mae": False}, weights={"f1": 2})
        r = ms.rank(m, "mean")
        np.testing.assert_allclose(r.scores[0], (0.9 - 0.2 + 2 * 0.6) / 4)

    def test_median(self, m3):
        np.testing.assert_allclose(ms.rank(m3, "median").scores, [0.6, 0.5, 0.7])

    def test_weighted_median(self):
        # weights 1, 1, 2: half of 4 is reached exactly after the two lowest -> average
        m = matrix([[1, 2, 3], [3, 2, 1]], weights=[1, 1, 2])
        np.testing.assert_allclose(ms.rank(m, "median").scores, [(2 + 3) / 2, (1 + 2) / 2])
        m = matrix([[1, 2, 3], [3, 2, 1]], weights=[1, 1, 3])
        np.testing.assert_allclose(ms.rank(m, "median").scores, [3, 1])

    def test_average_rank(self, m3):
        # acc: A 1, B 2.5, C 2.5; mae: B 1, A 2, C 3; f1: C 1, A 2, B 3
        r = ms.rank(m3, "average_rank")
        expected = [(1 + 2 + 2) / 3, (2.5 + 1 + 3) / 3, (2.5 + 3 + 1) / 3]
        np.testing.assert_allclose(r.details["average_rank"], expected)
        np.testing.assert_allclose(r.scores, -np.array(expected))
        assert r.positions.tolist() == [1, 2, 2]

    def test_weighted_average_rank_weight_is_importance_for_both_directions(self, m3):
        m = ms.ScoreMatrix.from_array(M3, ["A", "B", "C"], ["acc", "mae", "f1"],
                                      higher_is_better={"mae": False}, weights={"mae": 3})
        r = ms.rank(m, "average_rank")
        np.testing.assert_allclose(
            r.details["average_rank"], [(1 + 3 * 2 + 2) / 5, (2.5 + 3 * 1 + 3) / 5, (2.5 + 3 * 3 + 1) / 5]
        )
        assert r.winner == "B"  # the lower-is-better judge got MORE say, not less

    def test_success_rate(self, m3):
        # A-B 2:1, A-C 2:1, B-C 1:1 with one tie
        np.testing.assert_allclose(ms.rank(m3, "success_rate").scores, [2 / 3, 1 / 3, 1 / 3])
        np.testing.assert_allclose(
            ms.rank(m3, "success_rate", ties="half").scores,
            [2 / 3, (1 / 3 + 1.5 / 3) / 2, (1 / 3 + 1.5 / 3) / 2],
        )

    def test_copeland(self, m3):
        r = ms.rank(m3, "copeland")
        np.testing.assert_allclose(r.scores, [1.0, 0.25, 0.25])
        assert r.details["wins"].tolist() == [2, 0, 0]
        assert r.details["ties"].tolist() == [0, 1, 1]

    def test_relative_difference_sign_flip_for_lower_is_better(self, m3):
        w_ab = (0.1 / 1.7 - 0.1 / 0.3 + 0.1 / 1.1) / 3
        w_ac = (0.1 / 1.7 - (-0.1) / 0.5 + (-0.1) / 1.3) / 3
        w_bc = (0 - (-0.2) / 0.4 + (-0.2) / 1.2) / 3
        r = ms.rank(m3, "relative_difference")
        np.testing.assert_allclose(
            r.scores, [(w_ab + w_ac) / 2, (-w_ab + w_bc) / 2, (-w_ac - w_bc) / 2]
        )
        assert r.ranked_candidates() == ["B", "A", "C"]

    def test_relative_difference_zero_sum_term_is_zero(self):
        r = ms.rank(matrix([[0, 1], [0, 3]]), "relative_difference")
        np.testing.assert_allclose(r.scores, [(0 + (1 - 3) / 4) / 2, (0 + (3 - 1) / 4) / 2])

    def test_random_dictator_returns_the_drawn_judge_ranking(self, m3):
        r = ms.rank(m3, "random_dictator", seed=7)
        judge = r.details["dictator_judge"]
        expected = {"acc": [1, 2.5, 2.5], "mae": [2, 1, 3], "f1": [2, 3, 1]}[judge]
        np.testing.assert_allclose(-r.scores, expected)

    def test_random_dictator_draws_judges_by_weight(self):
        m = matrix([[1, 0, 0], [0, 1, 1]], weights=[2, 1, 1])
        draws = [ms.rank(m, "random_dictator", seed=s).details["dictator_judge"] for s in range(400)]
        share = draws.count("0") / len(draws)
        assert 0.42 < share < 0.58  # expected 1/2


# --------------------------------------------------------------------------- 4 x 5 + missing
# t1..t4 higher is better, t5 lower is better; B has no score on t3.
M45 = np.array(
    [
        [0.9, 0.7, 0.6, 0.8, 10],
        [0.8, 0.7, np.nan, 0.9, 12],
        [0.6, 0.9, 0.5, 0.8, 11],
        [0.5, 0.4, 0.4, 0.6, 15],
    ]
)


@pytest.fixture
def m45() -> ms.ScoreMatrix:
    return ms.ScoreMatrix.from_array(
        M45, list("ABCD"), ["t1", "t2", "t3", "t4", "t5"], higher_is_better={"t5": False}
    )


class TestMissingPolicies:
    def test_error_names_candidate_and_judge(self, m45):
        with pytest.raises(ms.InputError, match=r"candidate 'B' has no score for judge 't3'"):
            ms.rank(m45, "mean", missing="error")

    def test_worst_mean_uses_worst_observed_value(self, m45):
        r = ms.rank(m45, "mean", missing="worst")
        np.testing.assert_allclose(
            r.scores,
            [(0.9 + 0.7 + 0.6 + 0.8 - 10) / 5, (0.8 + 0.7 + 0.4 + 0.9 - 12) / 5,
             (0.6 + 0.9 + 0.5 + 0.8 - 11) / 5, (0.5 + 0.4 + 0.4 + 0.6 - 15) / 5],
        )

    def test_worst_average_rank_puts_missing_last(self, m45):
        # t1: A1 B2 C3 D4 | t2: C1 A2.5 B2.5 D4 | t3: A1 C2 D3 B4 | t4: B1 A2.5 C2.5 D4 | t5: A1 C2 B3 D4
        r = ms.rank(m45, "average_rank", missing="worst")
        np.testing.assert_allclose(r.details["average_rank"], [8 / 5, 12.5 / 5, 10.5 / 5, 19 / 5])

    def test_worst_median(self, m45):
        np.testing.assert_allclose(ms.rank(m45, "median").scores, [0.7, 0.7, 0.6, 0.4])

    def test_worst_copeland(self, m45):
        # A beats all; C beats B (t2, t3 by default, t5) 3:2; B beats D 4:1
        np.testing.assert_allclose(ms.rank(m45, "copeland").scores, [1, 1 / 3, 2 / 3, 0])

    def test_worst_success_rate(self, m45):
        np.testing.assert_allclose(
            ms.rank(m45, "success_rate").scores,
            [(3 / 5 + 3 / 5 + 5 / 5) / 3, (1 / 5 + 2 / 5 + 4 / 5) / 3,
             (1 / 5 + 3 / 5 + 5 / 5) / 3, (0 + 1 / 5 + 0) / 3],
        )

    def test_pairwise_policy(self, m45):
        r = ms.rank(m45, "average_rank", missing="pairwise")
        # t3 ranks A, C, D only; B averages its 4 ranks
        np.testing.assert_allclose(r.details["average_rank"], [8 / 5, 8.5 / 4, 10.5 / 5, 19 / 5])
        mean = ms.rank(m45, "mean", missing="pairwise")
        assert mean.scores[1] == pytest.approx((0.8 + 0.7 + 0.9 - 12) / 4)
        assert any("averages over the judges" in note for note in mean.notes)
        # B-C compared on 4 judges: 2:2, a tie
        np.testing.assert_allclose(
            ms.rank(m45, "copeland", missing="pairwise").scores, [1, 0.5, 0.5, 0]
        )
        median = ms.rank(m45, "median", missing="pairwise")
        assert median.scores[1] == pytest.approx((0.7 + 0.8) / 2)

    def test_drop_candidates(self, m45):
        r = ms.rank(m45, "average_rank", missing="drop_candidates")
        assert r.candidates == ("A", "C", "D")
        assert r.excluded_candidates == {"B": "missing score for judge 't3'"}
        np.testing.assert_allclose(r.details["average_rank"], [6.5 / 5, 8.5 / 5, 15 / 5])

    def test_drop_judges(self, m45):
        r = ms.rank(m45, "average_rank", missing="drop_judges")
        assert r.judges == ("t1", "t2", "t4", "t5")
        assert r.excluded_judges == {"t3": "no score for candidate 'B'"}
        np.testing.assert_allclose(r.details["average_rank"], [7 / 4, 8.5 / 4, 8.5 / 4, 16 / 4])
        mean = ms.rank(m45, "mean", missing="drop_judges")
        np.testing.assert_allclose(
            mean.scores,
            [(0.9 + 0.7 + 0.8 - 10) / 4, (0.8 + 0.7 + 0.9 - 12) / 4,
             (0.6 + 0.9 + 0.8 - 11) / 4, (0.5 + 0.4 + 0.6 - 15) / 4],
        )

    def test_judge_missing_for_everyone(self):
        m = ms.ScoreMatrix.from_array([[1, np.nan], [2, np.nan]], ["A", "B"], ["t1", "t2"])
        with pytest.raises(ms.InputError, match="judge 't2' has no score for any candidate"):
            ms.rank(m, "mean")
        assert ms.rank(m, "mean", missing="drop_judges").judges == ("t1",)

    def test_zero_is_a_real_score(self):
        r = ms.rank(matrix([[0.0, 0.0], [np.nan, np.nan], [0.1, 0.1]]), "mean", missing="drop_candidates")
        assert r.candidates == ("A", "C") and r.scores[0] == 0.0


# ---------------------------------------------------------------- fast paths equal slow paths
@pytest.mark.parametrize("method", ["mean", "median"])
def test_constant_weights_and_explicit_equal_weights_give_identical_scores(method, rng):
    values = rng.random((6, 9))
    fast = ms.rank(ms.ScoreMatrix.from_array(values), method).scores  # broadcast weights
    explicit = ms.rank(ms.ScoreMatrix.from_array(values, weights=[1.0] * 9), method).scores
    np.testing.assert_array_equal(fast, explicit)
    reference = values.mean(axis=1) if method == "mean" else np.median(values, axis=1)
    np.testing.assert_allclose(fast, reference, rtol=1e-15)


def test_mean_of_validated_row_sums_equals_the_mean_on_every_path(rng):
    from metascore.cells import ROW_SUMS_FROM_JUDGES
    from metascore.methods import classical

    values = rng.random((5, ROW_SUMS_FROM_JUDGES + 3))
    plain = ms.ScoreMatrix.from_array(values)
    assert plain.row_sums_known  # the mean below reuses them
    np.testing.assert_array_equal(ms.rank(plain, "mean").scores, values.mean(axis=1))
    w = np.ones(values.shape[1])
    np.testing.assert_array_equal(classical.mean(values, w), classical.mean(values, w, sums=values.sum(axis=1)))
    # directions, weights and missing cells: the validated sums are not the oriented,
    # weighted or filled ones, and the result is still the reference
    signs = np.where(np.arange(values.shape[1]) % 4 == 3, -1.0, 1.0)
    mixed = ms.ScoreMatrix.from_array(values, higher_is_better=signs > 0)
    np.testing.assert_allclose(ms.rank(mixed, "mean").scores, (values * signs).mean(axis=1), rtol=1e-12)
    weights = rng.uniform(0.5, 2.0, size=values.shape[1])
    weighted = ms.ScoreMatrix.from_array(values, weights=weights)
    np.testing.assert_allclose(ms.rank(weighted, "mean").scores, values @ weights / weights.sum(), rtol=1e-12)
    gaps = values.copy()
    gaps[1, 3] = gaps[4, 0] = np.nan
    holed = ms.ScoreMatrix.from_array(gaps)
    np.testing.assert_allclose(ms.rank(holed, "mean", missing="pairwise").scores, np.nanmean(gaps, axis=1), rtol=1e-12)
    worst = np.where(np.isnan(gaps), np.nanmin(gaps, axis=0), gaps)
    np.testing.assert_allclose(ms.rank(holed, "mean").scores, worst.mean(axis=1), rtol=1e-12)
    dropped = ms.rank(holed, "mean", missing="drop_candidates")
    np.testing.assert_allclose(dropped.scores, values[[0, 2, 3]].mean(axis=1), rtol=1e-12)


@pytest.mark.parametrize("method", ["mean", "median"])
def test_missing_cells_take_the_nan_aware_path(method, rng):
    values = rng.random((5, 8))
    values[1, 3] = values[4, 0] = np.nan
    r = ms.rank(ms.ScoreMatrix.from_array(values), method, missing="pairwise")
    reference = np.nanmean(values, axis=1) if method == "mean" else np.nanmedian(values, axis=1)
    np.testing.assert_allclose(r.scores, reference, rtol=1e-12)


@pytest.mark.parametrize("missing", ["worst", "pairwise", "error"])
def test_average_rank_by_ranks_equals_average_rank_by_pairwise_counts(missing, monkeypatch, rng):
    from metascore.methods import classical

    values = rng.integers(0, 5, size=(40, 30)).astype(float)  # ties on every judge
    values[:, 3] = 1.0
    if missing != "error":  # "error": a complete matrix
        values[rng.random(values.shape) < 0.05] = np.nan
        values[7] = np.nan  # a candidate no judge scores
    w = rng.uniform(0.5, 2.0, size=30)
    m = ms.ScoreMatrix.from_array(values, weights=w, higher_is_better=[True] * 29 + [False])
    monkeypatch.setattr(classical, "RANKS_FROM_CANDIDATES", 2)
    by_ranks = ms.rank(m, "average_rank", missing=missing)
    monkeypatch.setattr(classical, "RANKS_FROM_CANDIDATES", 10**9)
    by_counts = ms.rank(m, "average_rank", missing=missing)
    np.testing.assert_allclose(by_ranks.scores, by_counts.scores, rtol=1e-12)
    assert by_ranks.ranked_candidates() == by_counts.ranked_candidates()


# ---------------------------------------------------------------- issue 42: large pools
def test_copeland_by_blocks_equals_copeland_on_the_counts(monkeypatch, rng):
    """From :data:`COPELAND_BLOCKS_FROM` candidates Copeland tallies its duels by blocks;
    scores, wins, ties and losses are those of the counts (ties, missing, weights)."""
    import metascore.methods.classical as classical

    for trial in range(30):
        n, m = int(rng.integers(2, 80)), int(rng.integers(1, 7))
        x = rng.integers(0, 3, size=(n, m)).astype(float)
        x[rng.random((n, m)) < 0.1] = np.nan
        w = rng.integers(1, 4, m).astype(float) if trial % 2 else np.round(rng.random(m), 1) + 0.1
        sm = ms.ScoreMatrix.from_array(x, weights=w)
        for missing in ("worst", "pairwise"):
            monkeypatch.setattr(classical, "COPELAND_BLOCKS_FROM", 10**9)
            counts = ms.rank(sm, "copeland", missing=missing)
            monkeypatch.setattr(classical, "COPELAND_BLOCKS_FROM", 2)
            blocks = ms.rank(sm, "copeland", missing=missing)
            np.testing.assert_array_equal(blocks.scores, counts.scores)
            for key in ("wins", "ties", "losses"):
                np.testing.assert_array_equal(blocks.details[key], counts.details[key])


@pytest.mark.parametrize("ties", ["min", "dense"])
def test_average_rank_min_and_dense_from_the_ranks_equal_the_counts(monkeypatch, rng, ties):
    """Beyond :data:`RANKS_FROM_CANDIDATES`, ``ties="min"``/``"dense"`` no longer build the
    n x n counts (100,000 candidates would take 160 GB): the same scores and details."""
    import metascore.methods.classical as classical

    for _ in range(20):
        n, m = int(rng.integers(40, 200)), int(rng.integers(1, 6))
        x = rng.integers(0, 4, size=(n, m)).astype(float)
        x[rng.random((n, m)) < 0.1] = np.nan
        sm = ms.ScoreMatrix.from_array(x, weights=rng.integers(1, 4, m).astype(float))
        for missing in ("worst", "pairwise"):
            ranks = ms.rank(sm, "average_rank", ties=ties, missing=missing)
            monkeypatch.setattr(classical, "RANKS_FROM_CANDIDATES", 10**9)
            counts = ms.rank(sm, "average_rank", ties=ties, missing=missing)
            monkeypatch.setattr(classical, "RANKS_FROM_CANDIDATES", 32)
            np.testing.assert_array_equal(ranks.scores, counts.scores)
            np.testing.assert_array_equal(ranks.positions, counts.positions)
            assert ranks.per_candidate == counts.per_candidate


@pytest.mark.parametrize("method", ["schulze", "kemeny_young", "relative_difference"])
def test_a_method_that_holds_n_by_n_arrays_is_refused_before_it_runs(method):
    """Issue 42: 20,000 candidates need 9.6 GB of n x n arrays; refused at once, naming the
    size and the methods that need none."""
    x = np.random.default_rng(0).random((20_000, 3)) + 1.0
    with pytest.raises(InputError, match=rf"^method '{method}' compares every pair of the 20,000 "
                       r"candidates in 20,000 x 20,000 matrices: about 9\.6 GB, over the 8\.0 GB "
                       r"metascore allows; rank them with a method that reads the scores directly "
                       r"\(average_rank, copeland, .*\)\.$"):
        ms.rank(ms.ScoreMatrix.from_array(x), method)


@pytest.mark.parametrize("ties", ["min", "dense"])
def test_average_rank_min_and_dense_on_60000_candidates(ties):
    """No n x n counts for the other tie conventions either (60,000 candidates: 29 GB each)."""
    x = np.random.default_rng(1).integers(0, 50, size=(60_000, 3)).astype(float)
    r = ms.rank(ms.ScoreMatrix.from_array(x), "average_rank", ties=ties)
    assert r.ranks.shape == (60_000,) and np.isfinite(r.scores).all()
