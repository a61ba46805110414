"""CodaLab compatibility: ``average_rank`` with ``ties="dense"`` reproduces CodaLab v1's
computed ``<Rank>`` column (average of dense per-column ranks), and a CodaLab export is
read without its own aggregate columns (issue 14)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import metascore as ms
from metascore.cli import main
from metascore.cli.common import read_matrix_file
from metascore.stats import dense_ranks
from repo_paths import TESTS

EXPORT = TESTS / "data" / "codalab" / "automl_final.csv"
CELL = re.compile(r"(?P<value>[-\d.]+) \((?P<rank>\d+)\)")


def _column(label: str) -> dict[str, tuple[float, int]]:
    """``{user: (value, rank)}`` of one column of the export, parsed here independently."""
    lines = EXPORT.read_text().splitlines()
    header = lines[0].split(",")
    i = header.index(label)
    out = {}
    for line in lines[1:]:
        cells = line.split(",")
        m = CELL.fullmatch(cells[i])
        if m:
            out[cells[1]] = (float(m["value"]), int(m["rank"]))
    return out


def _users() -> dict[str, str]:
    return {line.split(",")[0]: line.split(",")[1] for line in EXPORT.read_text().splitlines()[1:]}


def test_dense_average_rank_reproduces_codalab_rank_column():
    notes: list[str] = []
    m = read_matrix_file(EXPORT, exclude=["Duration"], notes=notes)
    assert m.judges == ("set1", "set2", "set3")  # <Rank> left out, Duration excluded
    assert any("'<Rank>'" in n for n in notes)
    r = ms.rank(m, "average_rank", ties="dense")
    expected = _column("<Rank>")
    users = _users()
    got = {users[c]: float(v) for c, v in zip(r.candidates, r.details["average_rank"])}
    assert set(got) == set(expected)
    for user, (value, _) in expected.items():
        assert round(got[user], 4) == value, user  # the export prints 4 decimals
    # CodaLab then dense-ranks the computed column (sort: asc): the number in brackets
    our_dense = dense_ranks(-np.array([got[u] for u in expected]))
    assert our_dense.astype(int).tolist() == [rank for _, rank in expected.values()]
    # and leaderboard positions follow the same groups
    pos = {users[c]: int(p) for c, p in zip(r.candidates, r.positions)}
    assert pos == {"alice": 1, "bob": 1, "dave": 3, "frank": 3, "carol": 5, "erin": 5}


def test_per_column_dense_ranks_match_the_cells():
    m = read_matrix_file(EXPORT, exclude=["Duration"])
    filled = np.where(np.isnan(m.values), -np.inf, m.values)
    ranks = dense_ranks(filled)
    users = _users()
    for j, judge in enumerate(m.judges):
        cells = _column(judge)
        for i, cand in enumerate(m.candidates):
            user = users[cand]
            if user in cells:
                assert ranks[i, j] == cells[user][1], (judge, user)
            else:
                assert ranks[i, j] == ranks[:, j][np.isfinite(filled[:, j])].max() + 1  # missing: max + 1


def test_default_fractional_ties_differ_from_codalab():
    m = read_matrix_file(EXPORT, exclude=["Duration"])
    users = _users()
    r = ms.rank(m, "average_rank")
    avg = {users[c]: v for c, v in zip(r.candidates, r.details["average_rank"])}
    assert avg["carol"] == pytest.approx(13 / 3) and avg["erin"] == pytest.approx(14 / 3)
    r_min = ms.rank(m, "average_rank", ties="min")
    low = {users[c]: v for c, v in zip(r_min.candidates, r_min.details["average_rank"])}
    # min ranks: set1 alice 1, set2 alice 1, set3 alice 3 (bob and dave tie first)
    assert low["alice"] == pytest.approx((1 + 1 + 3) / 3)


def test_ties_parameter_is_validated_and_dense_needs_values():
    m = read_matrix_file(EXPORT, exclude=["Duration"])
    with pytest.raises(ms.ConfigError, match="`ties` must be one of"):
        ms.rank(m, "average_rank", ties="first")
    votes = ms.PairwiseCounts.from_votes([["A", "B", "C"], ["B", "A", "C"]])
    with pytest.raises(ms.InputError, match="needs the scores"):
        ms.rank(votes, "average_rank", ties="dense")
    assert ms.rank(votes, "average_rank", ties="min").details["average_rank"].tolist() == [1.5, 1.5, 3.0]


def test_dense_under_pairwise_missing_ranks_present_candidates_only():
    m = ms.ScoreMatrix.from_array([[1.0, np.nan], [0.5, 2.0], [0.5, 1.0]], ["A", "B", "C"])
    r = ms.rank(m, "average_rank", ties="dense", missing="pairwise")
    np.testing.assert_allclose(r.details["average_rank"], [1.0, (2 + 1) / 2, (2 + 2) / 2])


def test_quick_mode_judges_and_exclude(capsys):
    assert main(["rank", str(EXPORT), "-p", "ties=dense", "--exclude", "Duration", "--json"]) == 0
    out = capsys.readouterr()
    assert "'<Rank>'" in out.err and "note:" in out.err
    assert main(["rank", str(EXPORT), "--judges", "set1", "set2", "--json"]) == 0
    assert '"set3"' not in capsys.readouterr().out
    assert main(["rank", str(EXPORT), "--exclude", "nope"]) == 1
    assert "no judge 'nope'" in capsys.readouterr().err


def test_bootstrap_fast_path_is_only_for_fractional_ties():
    """The judge-resampling fast path sums precomputed fractional ranks: with dense or min
    ties it would be wrong, so those go through the registry."""
    from metascore.analysis import shared as E
    from metascore.analysis import bootstrap as B

    m = read_matrix_file(EXPORT, exclude=["Duration"])
    assert B.fast_path_reason(E.setup(m, ("average_rank",), ms.Execution(seed=1)), "average_rank") is None
    dense = E.setup(m, ("average_rank",), ms.Execution(params={"ties": "dense"}, seed=1))
    assert "ties='average'" in B.fast_path_reason(dense, "average_rank")
    u = ms.rank_uncertainty(m, n_trials=50, run=ms.Execution(params={"ties": "dense"}))
    assert len(u.to_frame()) == 6
