"""Which submissions of a phase the site's results export holds: the leaderboard's
``submission_rule``, as Codabench applies it (its ``leaderboards/strategies.py``).

The results export (and phase migration) sees only submissions that are **on the
leaderboard**, and what is on it depends on the rule (their names:
:mod:`~metascore.bundle.platform.leaderboard_rules`):

- ``Force_Last``: when a submission's scores arrive, every other submission of its owner in
  the phase leaves the leaderboard: each participant's **last finished** submission stays.
- ``Force_Best``: the owner's submissions are sorted by the primary column (its
  ``sorting``), then by every other column in index order (each with its own sorting), then
  by submission time (earlier first); the first stays. The platform sorts in SQL, where a
  missing score (NULL) comes **first** under ``desc`` and last under ``asc`` (PostgreSQL's
  default), and so it does here.
- ``Force_Latest_Multiple``: every finished submission.
- ``Add``, ``Add_And_Delete``, ``Add_And_Delete_Multiple``: nothing is added
  automatically; only the submissions a participant (or the organizer, for a baseline)
  put there by hand, which a local run reads from the submissions manifest's
  ``on_leaderboard`` flag. A submission migrated into a phase is a new submission there
  (``Competition.apply_phase_migration`` creates it without a leaderboard), so under these
  rules it is on no leaderboard, and in no export, until someone adds it by hand in that
  phase; the real site's Final export of such a competition is empty.

A failed submission sends no scores, so it is never put on the leaderboard.
:func:`export_decisions` is pure: it takes the phase's submissions and the leaderboard and
returns one decision per submission, with the reason in one sentence.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...errors import ConfigError
from ..platform.leaderboard_rules import MANUAL_RULES, SUBMISSION_RULES
from ..schema.competition import LeaderboardSpec
from ...readers.columns import Column

__all__ = ["PhaseSubmission", "ExportDecision", "export_decisions"]


@dataclass(frozen=True)
class PhaseSubmission:
    """One submission of a phase as the site sees it.

    ``scores``: leaderboard column key -> value (for a multi-task submission, the sum over
    its tasks, as the platform's ``Sum`` does); ``on_leaderboard``: put on the leaderboard
    by hand in this phase (only read under the ``Add`` rules); ``migrated``: brought into
    this phase by ``auto_migrate_to_this_phase`` (a new submission, off the leaderboard
    under the ``Add`` rules unless added).
    """

    candidate: str
    participant: str
    submitted_at: str | None = None
    finished: bool = True
    scores: Mapping[str, float] = field(default_factory=dict)
    on_leaderboard: bool = False
    migrated: bool = False


@dataclass(frozen=True)
class ExportDecision:
    """Whether ``candidate`` is in the results export, and why (one sentence)."""

    candidate: str
    participant: str
    exported: bool
    reason: str


def export_decisions(
    submissions: Sequence[PhaseSubmission], leaderboard: LeaderboardSpec
) -> list[ExportDecision]:
    """One decision per submission (same order): is it on the leaderboard, hence exported?

    Raises
    ------
    ConfigError
        When the leaderboard's ``submission_rule`` is not one of Codabench's rules.
    """
    rule = leaderboard.submission_rule
    if rule not in SUBMISSION_RULES:
        raise ConfigError(f"submission_rule {rule!r} is not one of {', '.join(SUBMISSION_RULES)}.")
    order = sorted(range(len(submissions)), key=lambda i: (_when(submissions[i].submitted_at), i))
    rank = {i: n for n, i in enumerate(order)}  # submission order: time, then input order
    kept: dict[str, int] = {}  # participant -> the index that stays (Force_Last / Force_Best)
    if rule in ("Force_Last", "Force_Best"):
        by_owner: dict[str, list[int]] = {}
        for i, sub in enumerate(submissions):
            if sub.finished:
                by_owner.setdefault(sub.participant, []).append(i)
        for owner, indexes in by_owner.items():
            if rule == "Force_Last":
                kept[owner] = max(indexes, key=rank.__getitem__)
            else:
                key = _best_key(leaderboard)
                kept[owner] = min(indexes, key=lambda i: (key(submissions[i].scores), rank[i]))
    return [_decide(i, sub, rule, kept, submissions, leaderboard) for i, sub in enumerate(submissions)]


def _decide(
    i: int, sub: PhaseSubmission, rule: str, kept: dict[str, int],
    submissions: Sequence[PhaseSubmission], leaderboard: LeaderboardSpec,
) -> ExportDecision:
    def decision(exported: bool, reason: str) -> ExportDecision:
        return ExportDecision(sub.candidate, sub.participant, exported, reason)

    if not sub.finished:
        return decision(False, "failed: a failed submission sends no scores and is never on the "
                               "leaderboard")
    if rule == "Force_Latest_Multiple":
        return decision(True, "Force_Latest_Multiple: every finished submission is on the leaderboard")
    if rule in MANUAL_RULES:
        if sub.on_leaderboard:
            return decision(True, f"{rule}: put on the leaderboard by hand (on_leaderboard in the "
                                  "submissions manifest)")
        if sub.migrated:
            return decision(False, f"{rule}: migrated into this phase, where it is a new submission "
                                   "that no leaderboard holds until someone adds it by hand on the "
                                   "site (the manifest's on_leaderboard marks it in the phase it "
                                   "was made to)")
        return decision(False, f"{rule}: nothing reaches the leaderboard without a click, and the "
                               "submissions manifest does not mark it on_leaderboard")
    winner = submissions[kept[sub.participant]].candidate
    if rule == "Force_Last":
        if kept[sub.participant] == i:
            return decision(True, f"Force_Last: {sub.participant}'s last finished submission")
        return decision(False, f"Force_Last: {sub.participant}'s later submission {winner!r} "
                               "replaced it on the leaderboard")
    how = _best_rule_text(leaderboard)
    if kept[sub.participant] == i:
        return decision(True, f"Force_Best: {sub.participant}'s best finished submission ({how})")
    return decision(False, f"Force_Best: {sub.participant}'s submission {winner!r} is better "
                           f"({how}) and took its place")


def _best_key(leaderboard: LeaderboardSpec):
    """Sort key of Force_Best: primary column, then the others by index; NULL as PostgreSQL."""
    columns = _best_columns(leaderboard)

    def key(scores: Mapping[str, float]) -> tuple:
        parts = []
        for col in columns:
            value = scores.get(col.key)
            if value is None:  # NULLS FIRST under DESC, NULLS LAST under ASC
                parts.append((0, 0.0) if col.sorting == "desc" else (1, 0.0))
            else:
                parts.append((1, -value) if col.sorting == "desc" else (0, value))
        return tuple(parts)

    return key


def _best_columns(leaderboard: LeaderboardSpec) -> list[Column]:
    primary = [c for c in leaderboard.columns if c.index == leaderboard.primary_index]
    others = sorted((c for c in leaderboard.columns if c.index != leaderboard.primary_index),
                    key=lambda c: c.index)
    return primary + others


def _best_rule_text(leaderboard: LeaderboardSpec) -> str:
    columns = _best_columns(leaderboard)
    if not columns:
        return "no columns: the earliest"
    first = columns[0]
    return (f"by {first.key} ({'higher' if first.sorting == 'desc' else 'lower'} is better), "
            "then the other columns, then the earlier")


def _when(text: str | None) -> dt.datetime:
    """A comparable time: unknown or unreadable times come first; naive times are UTC."""
    if not text:
        return dt.datetime.min.replace(tzinfo=dt.timezone.utc)
    try:
        stamp = dt.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return dt.datetime.min.replace(tzinfo=dt.timezone.utc)
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.timezone.utc)
