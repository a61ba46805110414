"""What reaches the results export (hence the meta phase) under each leaderboard
submission_rule: one test per rule, with a participant who submitted several times and
whose last submission failed."""

from __future__ import annotations

import pytest

from metascore.bundle.schema.competition import LeaderboardSpec
from metascore.readers.columns import Column
from metascore.bundle.site.submission_rules import PhaseSubmission, export_decisions
from metascore.errors import ConfigError

COLUMNS = (Column("acc", "Accuracy", 0, "desc"), Column("mae", "MAE", 1, "asc"))


def board(rule: str, primary_index: int = 0) -> LeaderboardSpec:
    return LeaderboardSpec("Results", "main", COLUMNS, primary_index, rule)


# alice: three submissions, the last one failed; bob: one; carol: two, marked by hand
SUBS = [
    PhaseSubmission("alice_v1", "alice", "2026-02-01T10:00:00+00:00", True, {"acc": 0.9, "mae": 2.0}),
    PhaseSubmission("bob_v1", "bob", "2026-02-01T11:00:00+00:00", True, {"acc": 0.7, "mae": 1.0}),
    PhaseSubmission("alice_v2", "alice", "2026-02-02T10:00:00+00:00", True, {"acc": 0.8, "mae": 1.0},
                    on_leaderboard=True),
    PhaseSubmission("carol_v1", "carol", "2026-02-03T10:00:00+00:00", True, {"acc": 0.6, "mae": 3.0},
                    on_leaderboard=True),
    PhaseSubmission("alice_v3", "alice", "2026-02-04T10:00:00+00:00", False, {}, on_leaderboard=True),
    PhaseSubmission("carol_v2", "carol", "2026-02-05T10:00:00+00:00", True, {"acc": 0.65, "mae": 2.5}),
]


def exported(rule: str, subs=SUBS, **kw) -> list[str]:
    return [d.candidate for d in export_decisions(subs, board(rule, **kw)) if d.exported]


def reasons(rule: str) -> dict[str, str]:
    return {d.candidate: d.reason for d in export_decisions(SUBS, board(rule))}


def test_force_last_keeps_the_last_finished_submission_of_each_participant():
    assert exported("Force_Last") == ["bob_v1", "alice_v2", "carol_v2"]
    why = reasons("Force_Last")
    assert why["alice_v3"].startswith("failed: ")
    assert why["alice_v1"] == "Force_Last: alice's later submission 'alice_v2' replaced it on the leaderboard"
    assert why["alice_v2"] == "Force_Last: alice's last finished submission"


def test_force_last_orders_by_submission_time_not_by_input_order():
    subs = [SUBS[2], SUBS[0]]  # alice_v2 (later) listed first
    assert exported("Force_Last", subs) == ["alice_v2"]


def test_force_best_uses_the_primary_column_then_the_others_then_the_earlier():
    assert exported("Force_Best") == ["alice_v1", "bob_v1", "carol_v2"]  # acc 0.9 > 0.8
    assert "better (by acc (higher is better)" in reasons("Force_Best")["alice_v2"]
    # primary = mae (asc): alice_v2 (1.0) beats alice_v1 (2.0)
    assert exported("Force_Best", primary_index=1) == ["bob_v1", "alice_v2", "carol_v2"]
    # equal primary: the next column decides (mae, lower is better) ...
    tie = [PhaseSubmission("d1", "dan", "2026-01-01", True, {"acc": 0.5, "mae": 2.0}),
           PhaseSubmission("d2", "dan", "2026-01-02", True, {"acc": 0.5, "mae": 1.0})]
    assert exported("Force_Best", tie) == ["d2"]
    # ... and on a full tie the earlier submission stays
    same = [PhaseSubmission("e2", "erin", "2026-01-02", True, {"acc": 0.5, "mae": 1.0}),
            PhaseSubmission("e1", "erin", "2026-01-01", True, {"acc": 0.5, "mae": 1.0})]
    assert exported("Force_Best", same) == ["e1"]


def test_force_best_sorts_a_missing_primary_score_first_under_desc_as_postgresql_does():
    subs = [PhaseSubmission("f1", "fay", "2026-01-01", True, {"acc": 0.9, "mae": 1.0}),
            PhaseSubmission("f2", "fay", "2026-01-02", True, {"mae": 5.0})]
    assert exported("Force_Best", subs) == ["f2"]
    assert exported("Force_Best", subs, primary_index=1) == ["f1"]  # asc: NULLS LAST


def test_force_latest_multiple_keeps_every_finished_submission():
    assert exported("Force_Latest_Multiple") == [s.candidate for s in SUBS if s.finished]


@pytest.mark.parametrize("rule", ["Add", "Add_And_Delete", "Add_And_Delete_Multiple"])
def test_add_keeps_only_what_was_put_on_the_leaderboard_by_hand(rule):
    assert exported(rule) == ["alice_v2", "carol_v1"]  # alice_v3 is marked but failed
    why = reasons(rule)
    assert "without a click" in why["bob_v1"] and why["alice_v3"].startswith("failed: ")


def test_unknown_rule_is_a_config_error():
    with pytest.raises(ConfigError, match="submission_rule 'Force_First' is not one of"):
        export_decisions(SUBS, board("Force_First"))


@pytest.mark.parametrize("rule", ["Add", "Add_And_Delete", "Add_And_Delete_Multiple"])
def test_add_a_migrated_submission_is_on_no_leaderboard_until_added(rule):
    """Migration makes a new submission in the later phase, without a leaderboard: under the
    Add rules nothing puts it there (the real site's Final export was empty); under the
    Force_* rules its scores do."""
    moved = [
        PhaseSubmission("alice-7", "alice", None, True, {"acc": 0.9, "mae": 2.0}, migrated=True),
        PhaseSubmission("bob-8", "bob", None, True, {"acc": 0.7, "mae": 1.0}, on_leaderboard=True,
                        migrated=True),
    ]
    assert exported(rule, moved) == ["bob-8"]  # added by hand in this phase
    (alice, _) = export_decisions(moved, board(rule))
    assert alice.reason.startswith(f"{rule}: migrated into this phase, where it is a new submission "
                                   "that no leaderboard holds until someone adds it by hand")
    assert exported("Force_Last", moved) == ["alice-7", "bob-8"]
