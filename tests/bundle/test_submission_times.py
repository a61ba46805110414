"""Issue 50 item 8: the mock site gives each submission the time the site would have created
it (what ``codabench pull`` writes as ``submitted_at``), in the order of the ids."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from metascore.bundle.site.submission_ids import SubmissionIds
from metascore.bundle.site.submissions import Submission

START = dt.datetime(2027, 6, 1)


def sub(name: str, when: str | None = None) -> Submission:
    return Submission(name, Path(name), name.split("__")[0], when)


def test_times_follow_the_ids_even_when_two_files_were_copied_together():
    """The trial of issue 50: two submissions of one folder copied in the same second got
    the same time, so the tie-break read "earlier by time (T before T)"."""
    ids = SubmissionIds()
    same = "2027-06-02T10:00:00"
    ids.number("Final", None, [], [sub("a__x", same), sub("b__y", same)], {}, opens=START)
    a, b = ids.created("Final", "a__x"), ids.created("Final", "b__y")
    assert (ids.key("Final", "a__x"), ids.key("Final", "b__y")) == ("a-1", "b-2")
    assert a == "2027-06-02T10:00:00.000000Z" and b == "2027-06-02T10:00:00.000001Z"


def test_a_migrated_copy_is_made_when_its_phase_starts_and_the_others_follow():
    ids = SubmissionIds()
    ids.number("Dev", None, [], [sub("a__x", "2027-02-01T10:00:00"), sub("b__y")], {},
               opens=dt.datetime(2027, 1, 1))
    assert ids.created("Dev", "b__y") < ids.created("Dev", "a__x")  # no time: first, at the start
    ids.number("Final", "Dev", [sub("a__x", "2027-02-01T10:00:00")], [sub("c__z")], {}, opens=START)
    assert ids.created("Final", "a__x") == "2027-06-01T00:00:00.000000Z"  # not the manifest's
    assert ids.created("Final", "c__z") == "2027-06-01T00:00:01.000000Z"


def test_a_bundle_without_dates_has_no_times_and_the_pull_follows_the_last_submission():
    """Every time comes from the bundle's and the manifest's dates, never from the clock: two
    runs of one bundle write the same files; without any date, the export has no time."""
    ids = SubmissionIds()
    ids.number("Dev", None, [], [sub("a__x"), sub("b__y")], {})
    assert (ids.created("Dev", "a__x"), ids.created("Dev", "b__y")) == ("", "")
    assert ids.pulled(None) is None
    ids.number("Final", "Dev", [], [sub("c__z")], {}, opens=START)
    assert ids.pulled(None) == "2027-06-01T00:00:01+00:00"  # a second after the last one
    assert ids.pulled(dt.datetime(2027, 7, 1)) == "2027-07-01T00:00:00+00:00"  # the meta phase opens
