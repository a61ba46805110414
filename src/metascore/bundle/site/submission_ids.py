"""Submission ids as Codabench assigns them, so the mock's meta phase reads the names a
results export holds: ``<owner>-<submission id>``.

Codabench numbers every submission from one sequence (the ``Submission`` table's primary
key), in the order they are created, across phases and competitions; the export names a
row ``<owner>-<id>`` (the parent's id for a multi-task submission) and holds no time. The
mock numbers from 1, phase by phase in phase order:

1. the submissions migrated into the phase (``auto_migrate_to_this_phase``) first: the site
   migrates when the phase starts, before anyone can submit to it; in the order of their
   ids in the previous phase. Codabench's ``Competition.apply_phase_migration`` iterates a
   queryset without ``order_by`` (and ``Submission`` has no default ordering), so the real
   order is PostgreSQL's physical row order, which follows each row's update history: on
   the real site (issue 25), development submissions zoe-1, bob-2, carol-3, dave-4, erin-5,
   baseline-6 were migrated as carol-7, dave-8, erin-9, zoe-10, bob-11, baseline-12. No
   rule reproduces that; the
   tie-break does not depend on it (:mod:`metascore.submission_order`: a migrated copy takes
   the place of its participant's development submission), only the final ids shown do;
2. then the submissions made to the phase, by submission time (the manifest's
   ``submitted_at``; baselines and solutions at the first phase's start), then in the order
   they were collected.

A submission that runs on several tasks of a phase also takes one id per task after its
own (Codabench's child submissions, created when it starts; on the real site the children
of submissions started together may interleave).

Each submission also gets the time the site would have created it (what ``codabench pull``
writes as ``submitted_at`` from the submissions' ``created_when``): the manifest's
``submitted_at`` when it gives one (not for a migrated copy, which the site makes when the
phase starts; a microsecond after the one numbered before it when they would be equal, as
two files copied together give), else one second after the submission numbered before it
and no earlier than its phase's start, so that the times follow the ids, as the site's do;
none while no date is known (a bundle without phase dates). The organizer's pull comes when
the meta phase opens (:meth:`SubmissionIds.pulled`). Every time comes from the bundle's and
the manifest's dates, never from the clock: two runs of one bundle write the same files.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence

from ...submission_order import submission_number, utc_time
from .submissions import Submission, safe_name

__all__ = ["SubmissionIds"]


class SubmissionIds:
    """The ids the site gives the submissions of each phase, and their export names."""

    def __init__(self, first: int = 1) -> None:
        self.next = first
        self.keys: dict[tuple[str, str], str] = {}  # (phase, candidate) -> "<owner>-<id>"
        self.times: dict[tuple[str, str], str] = {}  # (phase, candidate) -> created_when ("": unknown)
        self.clock: dt.datetime | None = None  # the last time given

    def number(self, phase: str, previous: str | None, migrated: Sequence[Submission],
               direct: Sequence[Submission], tasks: dict[str, int], opens: dt.datetime | None = None) -> None:
        """Give ids to ``migrated`` (from phase ``previous``) then ``direct`` submissions of
        ``phase``; ``tasks``: how many tasks each candidate runs on in the phase; ``opens``:
        the phase's start (UTC, naive), the earliest time a submission made there gets."""
        def was(sub: Submission) -> float:
            number = submission_number(self.keys.get((previous or "", sub.candidate), ""))
            return math.inf if number is None else float(number)

        def when(item: tuple[int, Submission]) -> tuple[float, int]:
            stamp = utc_time(item[1].submitted_at)
            return (-math.inf if stamp is None else float(stamp.value), item[0])

        moved = {s.candidate for s in migrated}
        ordered = sorted(migrated, key=was) + [s for _, s in sorted(enumerate(direct), key=when)]
        for sub in ordered:
            if (phase, sub.candidate) in self.keys:
                continue
            self.keys[(phase, sub.candidate)] = f"{safe_name(sub.participant)}-{self.next}"
            self.times[(phase, sub.candidate)] = self._created(None if sub.candidate in moved else sub, opens)
            n = tasks.get(sub.candidate, 1)
            self.next += 1 + (n if n > 1 else 0)

    def _created(self, sub: Submission | None, opens: dt.datetime | None) -> str:
        """The manifest's time of ``sub``, else the next second (``None``: a copy the site
        makes when it migrates a submission, at the phase's start); ``""`` while no date is
        known (a bundle without phase dates: the run has no calendar)."""
        given = utc_time(sub.submitted_at) if sub is not None else None
        if given is not None:  # no two at the same instant (two files copied together), as on the site
            when = given.to_pydatetime()
            when = when if self.clock is None else max(when, self.clock + dt.timedelta(microseconds=1))
        elif opens is None and self.clock is None:
            return ""
        else:
            when = opens or self.clock
            when = when if self.clock is None else max(when, self.clock + dt.timedelta(seconds=1))
        self.clock = when
        return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def pulled(self, opens: dt.datetime | None) -> str | None:
        """When the organizer pulls the leaderboards, in the run's calendar: when the meta
        phase opens (``opens``), else a second after the last submission; None without a date."""
        when = opens or (self.clock + dt.timedelta(seconds=1) if self.clock is not None else None)
        return None if when is None else when.strftime("%Y-%m-%dT%H:%M:%S+00:00")

    def created(self, phase: str, candidate: str) -> str:
        """When the site would have created ``candidate``'s submission of ``phase`` (ISO 8601,
        UTC, as Codabench's ``created_when``)."""
        return self.times[(phase, candidate)]

    def key(self, phase: str, candidate: str) -> str:
        """The export's name of ``candidate`` in ``phase``: ``<owner>-<id>``."""
        return self.keys[(phase, candidate)]
