"""Issue 25: "the earlier submission" (the ``submitted_at`` tie-break) computed from what an
input holds: submission times when given, else the submission ids of Codabench's row keys
``<owner>-<id>`` compared as numbers; a later phase's submission takes the place of its
participant's submission in the earliest ranked phase (a migrated copy gets a new id)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import metascore as ms
from metascore.config import parse_config
from metascore.leaderboard import build_leaderboard
from metascore.leaderboard.selection import select_candidates
from metascore.readers.score_table import ScoreTable
from metascore.submission_order import (
    order_basis, phase_origins, places, split_submission_key, submission_number,
)


# ---------------------------------------------------------------------- parsing the ids
@pytest.mark.parametrize("key, parts", [
    ("zoe-10", ("zoe", 10)),
    ("jean-luc-521", ("jean-luc", 521)),        # the owner keeps its dashes: the id is after the last
    ("a-b-c-7", ("a-b-c", 7)),
    ("bob-007", ("bob", 7)),
    ("team--3", ("team-", 3)),
    ("bob-x", None),                            # not digits after the last dash
    ("bob-12a", None),
    ("bob-1-x", None),
    ("bob-", None),
    ("-5", None),                               # no owner
    ("7", None),
    ("bob-\u0663", None),                       # an Arabic-Indic digit is not an id
    ("alice__centroid", None),
])
def test_split_submission_key(key, parts):
    assert split_submission_key(key) == parts


def test_submission_number_reads_codabench_keys_and_codalab_pks():
    assert submission_number("jean-luc-521") == 521
    assert submission_number("4512") == 4512       # a CodaLab v1 submission_pk
    assert submission_number("alice__v2") is None
    assert submission_number("bob-x") is None


# ---------------------------------------------------------------------- one phase: ids as numbers
def tie(candidates, times=None):
    """Every candidate with the same score: the order is the tie-break's."""
    matrix = ms.ScoreMatrix.from_array([[1.0]] * len(candidates), candidates, ["j"], submitted_at=times)
    return ms.rank(matrix, "mean").ranked_candidates()


def test_ids_are_compared_as_numbers_not_as_text():
    # as text, carol-7 < zoe-10; as numbers, 7 < 10 and 9 < 10 (issue 25)
    assert tie(["zoe-10", "carol-7", "ann-9"]) == ["carol-7", "ann-9", "zoe-10"]
    assert tie(["ann-10", "jean-luc-9"]) == ["jean-luc-9", "ann-10"]


def test_ids_without_a_number_come_last_then_by_text():
    assert tie(["bob-x", "zoe-10", "alice-y", "carol-7"]) == ["carol-7", "zoe-10", "alice-y", "bob-x"]
    assert tie(["bob", "alice"]) == ["alice", "bob"]  # no number at all: the candidate id as text


def test_times_come_before_ids():
    times = ["2026-02-02T00:00:00", "2026-02-01T00:00:00", None]
    assert tie(["carol-7", "zoe-10", "bob-1"], times) == ["zoe-10", "carol-7", "bob-1"]


def test_the_tie_break_keys_still_choose():
    matrix = ms.ScoreMatrix.from_array([[1.0]] * 2, ["zoe-10", "carol-7"], ["j"])
    assert ms.rank(matrix, "mean", tie_break=["candidate"]).ranked_candidates() == ["carol-7", "zoe-10"]
    assert ms.rank(matrix, "mean", tie_break=["input_order"]).ranked_candidates() == ["zoe-10", "carol-7"]


def test_selection_last_takes_the_larger_id_as_a_number():
    matrix = ms.ScoreMatrix.from_array([[1.0], [2.0], [3.0]], ["zoe-9", "zoe-10", "bob-2"], ["j"],
                                       participants=["zoe", "zoe", "bob"])
    kept = select_candidates(matrix, "last", lambda m: ms.rank(m, "mean")).matrix.candidates
    assert kept == ("zoe-10", "bob-2")


def test_selection_best_among_equal_scores_takes_the_earlier_id():
    matrix = ms.ScoreMatrix.from_array([[1.0], [1.0], [0.0]], ["zoe-10", "zoe-9", "bob-2"], ["j"],
                                       participants=["zoe", "zoe", "bob"])
    kept = select_candidates(matrix, "best", lambda m: ms.rank(m, "mean")).matrix.candidates
    assert kept == ("zoe-9", "bob-2")


# ---------------------------------------------------------------------- across phases
def table(rows):
    """A score table: (phase, candidate, participant, value, submitted_at)."""
    return ScoreTable(pd.DataFrame([{"phase": p, "candidate": c, "participant": who, "task": "t",
                                     "metric": "m", "value": v, "submitted_at": at, "is_baseline": False}
                                    for p, c, who, v, at in rows]))


# the ids: development in submission order, the migrated final copies in the
# order the site happened to migrate them
SITE = [("Development", "zoe-1", "zoe", 3.0, None), ("Development", "bob-2", "bob", 2.0, None),
        ("Development", "carol-3", "carol", 1.0, None),
        ("Final", "carol-7", "carol", 1.0, None), ("Final", "zoe-10", "zoe", 1.0, None),
        ("Final", "bob-11", "bob", 1.0, None)]


def test_a_migrated_copy_takes_its_participants_development_place():
    origins = phase_origins(table(SITE), "Final", ["Development"])
    assert {c: o.candidate for c, o in origins.items()} == {
        "carol-7": "carol-3", "zoe-10": "zoe-1", "bob-11": "bob-2"}
    ordered = sorted(origins, key=lambda c: origins[c].key())
    assert ordered == ["zoe-10", "bob-11", "carol-7"]
    # without the earlier phase, each is its own origin: the final ids
    own = phase_origins(table(SITE), "Final")
    assert sorted(own, key=lambda c: own[c].key()) == ["carol-7", "zoe-10", "bob-11"]


def test_the_latest_development_submission_sets_the_place():
    rows = [("Development", "zoe-1", "zoe", 1.0, None), ("Development", "bob-2", "bob", 1.0, None),
            ("Development", "zoe-4", "zoe", 1.0, None),  # zoe's last one: the one Force_Last migrates
            ("Final", "zoe-7", "zoe", 1.0, None), ("Final", "bob-8", "bob", 1.0, None),
            ("Final", "ann-9", "ann", 1.0, None)]  # made to the final phase directly: its own id
    origins = phase_origins(table(rows), "Final", ["Development"])
    assert {c: (o.phase, o.candidate) for c, o in origins.items()} == {
        "zoe-7": ("Development", "zoe-4"), "bob-8": ("Development", "bob-2"), "ann-9": ("Final", "ann-9")}
    assert places([origins[c] for c in ("zoe-7", "bob-8", "ann-9")]) == (1.0, 0.0, 2.0)


def test_times_carry_too_a_migration_time_is_not_a_submission_time():
    """``codabench pull`` gives each submission its created_when: a migrated copy's is the
    migration's, in migration order; the development time decides."""
    rows = [("Development", "zoe-1", "zoe", 1.0, "2026-02-01T10:00:00Z"),
            ("Development", "carol-3", "carol", 1.0, "2026-02-03T10:00:00Z"),
            ("Final", "carol-7", "carol", 1.0, "2026-06-01T00:05:00Z"),
            ("Final", "zoe-10", "zoe", 1.0, "2026-06-01T00:05:03Z")]
    origins = phase_origins(table(rows), "Final", ["Development"])
    assert sorted(origins, key=lambda c: origins[c].key()) == ["zoe-10", "carol-7"]
    assert origins["zoe-10"].time == pd.Timestamp("2026-02-01T10:00:00")


def test_unknown_places_are_last():
    rows = [("Final", "bob", "bob", 1.0, None), ("Final", "zoe-3", "zoe", 1.0, None)]
    origins = phase_origins(table(rows), "Final", ["Development"])
    assert places([origins["bob"], origins["zoe-3"]]) == (math.inf, 0.0)


def test_order_basis_says_which_rule():
    assert order_basis(phase_origins(table(SITE), "Development"), "Development") == (
        "submission order from the submission ids of phase 'Development' (the number in "
        "<owner>-<id>, as a number)")
    final = order_basis(phase_origins(table(SITE), "Final", ["Development"]), "Final")
    assert final.startswith("submission order from the submission ids of phase 'Development' (")
    assert "3 of 3 candidates take the place of their participant's submission in an earlier phase" in final
    timed = [(p, c, who, v, "2026-02-01") for p, c, who, v, _ in SITE]
    assert order_basis(phase_origins(table(timed), "Development"), "Development") == (
        "submission times of phase 'Development'")
    plain = table([("Development", "alice", "alice", 1.0, None)])
    assert order_basis(phase_origins(plain, "Development"), "Development").startswith(
        "no submission time and no submission id")


CONFIG = {"phases": {"development": "Development", "final": "Final"}, "filter": {"rule": "none"},
          "analysis": {"bootstrap": 0, "stability": False}}


def test_the_leaderboard_breaks_a_final_tie_by_development_order_and_says_so():
    lb = build_leaderboard(table(SITE), parse_config(CONFIG))
    assert [r.candidate for r in lb.final.ranked] == ["zoe-10", "bob-11", "carol-7"]
    assert lb.final.ranked[0].position == lb.final.ranked[2].position == 1
    assert any("zoe-10 is listed first and is the winner by the tie-break: the earlier submission by submission number "
               "(zoe-1 before bob-2: their submissions in phase 'Development')" in m for m in lb.messages)
    order = lb.signature["submission_order"]
    assert order["Development"].startswith("submission order from the submission ids of phase 'Development'")
    assert order["Final"].startswith("submission order from the submission ids of phase 'Development'")
    other = parse_config({**CONFIG, "ranking": {"tie_break": ["candidate"]}})
    lb = build_leaderboard(table(SITE), other)
    assert [r.candidate for r in lb.final.ranked] == ["bob-11", "carol-7", "zoe-10"]
    assert lb.signature["submission_order"]["Final"] == "not used (ranking.tie_break has no submitted_at)"
