"""What one :func:`metascore.rank` call costs besides the method (issue 52): a caller
reading the scores alone sorts nothing; the positions, order and fractional ranks are
computed once, when first read, and are those an eager ranking has."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pytest

import metascore as ms
from metascore import ranking as ranking_module


def matrix(ties: bool = False) -> ms.ScoreMatrix:
    rng = np.random.default_rng(3)
    values = rng.integers(0, 3, size=(9, 4)).astype(float) if ties else rng.normal(size=(9, 4))
    return ms.ScoreMatrix.from_array(values, [f"c{i}" for i in range(9)],
                                     submitted_at=[f"2026-01-0{9 - i}" for i in range(9)])


def test_reading_the_scores_sorts_nothing(monkeypatch):
    sorted_ = []
    real = ranking_module.tie_groups
    monkeypatch.setattr(ranking_module, "tie_groups",
                        lambda scores: sorted_.append(1) or real(scores))
    r = ms.rank(matrix(), "mean")
    r.scores  # noqa: B018
    assert sorted_ == []
    r.positions, r.order, r.ranks  # noqa: B018
    r.positions, r.winner  # noqa: B018
    assert sorted_ == [1]  # once, when first read


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("tie_break", [("submitted_at", "candidate"), ("candidate",), ()])
def test_the_places_read_later_are_the_eager_ones(ties, tie_break):
    m = matrix(ties)
    r = ms.rank(m, "average_rank", tie_break=tie_break)
    positions, order, ranks = ranking_module.tie_places(r.scores, tie_break, r.candidates, r.matrix)
    np.testing.assert_array_equal(r.positions, positions)
    np.testing.assert_array_equal(r.order, order)
    np.testing.assert_array_equal(r.ranks, ranks)
    for other in (pickle.loads(pickle.dumps(ms.rank(m, "average_rank", tie_break=tie_break))),
                  copy.deepcopy(ms.rank(m, "average_rank", tie_break=tie_break)),
                  dataclasses.replace(ms.rank(m, "average_rank", tie_break=tie_break), notes=())):
        np.testing.assert_array_equal(other.order, order)
        assert other.to_dict() == r.to_dict()


def test_an_unknown_tie_break_key_is_refused_by_the_call():
    with pytest.raises(ms.ConfigError, match="unknown tie-break key 'age'"):
        ms.rank(matrix(), "mean", tie_break=("age",))
    with pytest.raises(AttributeError):
        ms.rank(matrix(), "mean").no_such_field  # noqa: B018


def test_a_large_matrix_is_validated_by_two_threads_with_the_same_bits():
    """Issue 52 item 4: the rows of a matrix of 10 MiB or more are summed by two threads (one
    pass is bound by the memory's speed); the sums, hence the mean, are the same bits."""
    from metascore.cells import THREADED_CELLS, row_sums

    rng = np.random.default_rng(3)
    values = rng.random((7, THREADED_CELLS // 7 + 1))
    assert np.array_equal(row_sums(values), values.sum(axis=1))
    m = ms.ScoreMatrix.from_array(values)
    assert np.array_equal(ms.rank(m, "mean").scores, values.mean(axis=1))
