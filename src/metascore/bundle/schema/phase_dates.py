"""Phase dates as Codabench stores them, and the traps of its calendar.

Codabench's unpacker (``competitions/unpackers/utils.py``, ``get_datetime``) makes every
phase date a datetime in UTC:

- an unquoted YAML date-time (``end: 2026-05-31 23:59:00``) is loaded as a ``datetime``,
  which is also a ``date``, and the unpacker keeps only its day: 2026-05-31 00:00 UTC, so the
  phase ends almost a day early;
- a date (``end: 2026-05-31``) is that day at 00:00 UTC;
- a string (quoted, ``end: "2026-05-31 23:59:00"``, or a form YAML does not read as a
  date-time) is parsed by dateutil: its time is kept and its time zone replaced by UTC
  (not converted).

:func:`site_datetime` gives the stored value (the model's ``Phase.start``/``end`` hold it)
and :func:`time_dropped_message` the warning for a time the unpacker drops.

Every 5 minutes the site's scheduler (``competitions/tasks.py``, ``do_phase_migrations``)
migrates into each phase with ``auto_migrate_to_this_phase`` whose start is past and that
was not migrated yet the previous phase's finished leaderboard submissions, then marks the
phase migrated. A phase whose start is already past when the bundle is uploaded is thus
migrated at once, with what the previous phase holds then (nothing, on a new competition):
:func:`past_migration_warnings`. :func:`shift_dates` moves every phase date of a parsed
``competition.yaml`` by whole days so that the first phase starts on a given day
(``metascore bundle zip --start``), but for a date the organizer gave on the command line:
the last phase's end given to ``bundle add-meta --end``, which add-meta marks with
:func:`end_mark` (:func:`command_line_end` finds it), stays where it was put, and so does the
Final ranking phase's start, the day after; a shift that would move a phase past it is refused.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import Any

from ...errors import ConfigError
from .competition import Competition, Phase

__all__ = [
    "utc_now",
    "site_datetime",
    "time_dropped_message",
    "past_migration_warnings",
    "parse_start",
    "shift_dates",
    "end_mark",
    "command_line_end",
    "proposed_end",
    "start_advice",
    "parse_date",
    "date_text",
]

_MARK = "(a date given on the command line: `bundle zip --start` keeps it)"


def utc_now() -> dt.datetime:
    """Now, in UTC without time zone (as the model's dates). Tests replace this function."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def site_datetime(value: Any) -> tuple[dt.datetime, bool]:
    """The datetime (UTC, no time zone) Codabench stores for a phase date as YAML loads it,
    and whether the unpacker dropped a time of day from it.

    Raises ``ValueError`` (or ``OverflowError``) when the value is not a date.
    """
    if isinstance(value, dt.datetime):  # get_datetime: a datetime is a date, combined with 00:00
        return dt.datetime.combine(value.date(), dt.time()), value.time() != dt.time()
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day), False
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a date")
    from dateutil import parser as dateparser

    return dateparser.parse(value).replace(tzinfo=None), False


def parse_date(text: str, what: str = "--end") -> dt.datetime:
    """A date as Codabench's unpacker reads one (dateutil; the time zone dropped)."""
    from dateutil import parser as dateparser

    try:
        return dateparser.parse(str(text)).replace(tzinfo=None)
    except (ValueError, OverflowError):
        raise ConfigError(f"{what} {text!r} is not a date (e.g. 2027-06-30 or 2027-06-30 "
                          "23:59:00).") from None


def date_text(when: dt.datetime) -> str:
    """``2027-06-30`` at midnight, else ``"2027-06-30 23:59:00"``: quoted, since Codabench's
    unpacker keeps only the day of an unquoted date-time (a YAML value for competition.yaml)."""
    return when.strftime("%Y-%m-%d") if when.time() == dt.time() else when.strftime('"%Y-%m-%d %H:%M:%S"')


def time_dropped_message(value: dt.datetime, stored: dt.datetime, key: str) -> str:
    """What the unpacker does to the unquoted date-time ``value`` of ``key`` and the fix."""
    verb = "starts" if "start" in key else "ends"
    early = _duration(value.replace(tzinfo=None) - stored)
    return (f"{value} is an unquoted date-time, of which Codabench's unpacker keeps only the "
            f"day: the phase really {verb} at {stored:%Y-%m-%d %H:%M} UTC, {early} earlier than "
            f"written; quote the value ({key}: \"{value}\") to keep its time, or write the day "
            "alone.")


def past_migration_warnings(comp: Competition, now: dt.datetime) -> list[str]:
    """One warning per auto-migrating phase whose start (as stored) is not after ``now``."""
    by_index = {p.index: p for p in comp.phases}
    start_key, flag = ("start", "auto_migrate_to_this_phase") if comp.version == 2 else (
        "start_date", "auto_migration")
    warnings = []
    for phase in comp.phases:
        before = by_index.get(phase.index - 1)
        if not phase.auto_migrate or before is None or phase.start is None or phase.start > now:
            continue
        warnings.append(
            f"competition.yaml: {phase.yaml_key}.{start_key}: {phase.start:%Y-%m-%d %H:%M} UTC is "
            f"already past (now: {now:%Y-%m-%d %H:%M} UTC) and phase {phase.name!r} has {flag}, so "
            f"within 5 minutes of the upload Codabench migrates {before.name!r} into it with what "
            f"{before.name!r} holds then (nothing, on a new competition), marks {phase.name!r} "
            "migrated, and no later submission reaches it without a manual migration; move the "
            f"dates so that {phase.name!r} starts after {before.name!r} has its submissions, e.g. "
            "`metascore bundle zip --start today` (every phase moved so that the first starts "
            "today).")
    return warnings


def parse_start(text: str) -> dt.date:
    """``--start``: ``today`` (UTC) or a date such as ``2027-01-04``."""
    if text.strip().lower() == "today":
        return utc_now().date()
    try:
        value = dt.date.fromisoformat(text.strip())
    except ValueError:
        raise ConfigError(f"--start {text!r}: expected 'today' or a date such as 2027-01-04.") from None
    return value


def proposed_end(phases: Sequence[Phase], now: dt.datetime) -> tuple[dt.date, str]:
    """An end date to propose for the last of ``phases``, which has none, and why: as long
    as the phase before it (30 days without one), from its start, or from today when that
    is past (a competition already running)."""
    last, before = phases[-1], (phases[-2] if len(phases) > 1 else None)
    days, like = 30, ""
    if before is not None and before.start is not None and before.end is not None and before.end > before.start:
        days = max(1, (before.end.date() - before.start.date()).days)
        like = f", as long as {before.name!r}"
    if last.start is not None and (last.start.date() + dt.timedelta(days=days)) > now.date():
        return last.start.date() + dt.timedelta(days=days), f"{days} days after its start{like}"
    since = f": {last.name!r} opened {last.start:%Y-%m-%d}, before today" if last.start is not None else ""
    return now.date() + dt.timedelta(days=days), f"{days} days from today{like}{since}"


def start_advice(comp: Competition, ranked: Sequence[Phase], keep_end: dt.datetime | None,
                 now: dt.datetime) -> tuple[str, bool] | None:
    """Whether ``bundle zip --start today`` suits ``comp`` (``ranked``: its phases before the
    meta phase), said in one line, and whether to propose it: None when the first phase
    opens today or later; a running competition keeps its dates; one whose phases all ended
    opens again today, where no phase would pass the end given to ``--end`` (``keep_end``)."""
    first, last = ranked[0], ranked[-1]
    if first.start is None or first.start.date() >= now.date():
        return None
    delta = dt.timedelta(days=(now.date() - first.start.date()).days)
    try:
        _check_kept(comp, delta, keep_end, now.date())
        fits = True
    except ConfigError:
        fits = False
    refused = ("; --start today would move a phase past the end given to `bundle add-meta --end`, "
               "and is refused")
    if last.end is not None and last.end.date() < now.date():
        return ((f"dates: every phase ended ({last.name!r} on {last.end:%Y-%m-%d}): --start today "
                 f"opens {first.name!r} today, every phase keeping its length", True) if fits else
                (f"dates: every phase ended ({last.name!r} on {last.end:%Y-%m-%d}){refused}: keep "
                 f"the dates, or move that end to {(keep_end or last.end) + delta:%Y-%m-%d} in "
                 "competition.yaml first", False))
    return (f"dates: kept as they are, no --start (the competition is running: {first.name!r} opened "
            f"{first.start:%Y-%m-%d}, before today)" + (
                f"; --start today suits a trial copy only, {first.name!r} opening today" if fits else refused),
            False)


def end_mark(when: dt.datetime) -> str:
    """The comment add-meta writes next to an end given with ``--end``."""
    shown = f"{when:%Y-%m-%d}" if when.time() == dt.time() else f"{when:%Y-%m-%d %H:%M:%S}"
    return f"--end {shown} {_MARK}"


def command_line_end(text: str) -> dt.datetime | None:
    """The end given to ``bundle add-meta --end``, from the mark it left in the text of
    ``competition.yaml`` (or from the comment over the end it wrote, in a v2 file of an
    earlier metascore); None when there is none."""
    found = re.search(r"--end (\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2}:\d{2})?) " + re.escape(_MARK), text)
    if found is None:
        found = re.search(r"# metascore add-meta: --end: [^\n]*\n\s*end: *['\"]?(\d{4}-\d{2}-\d{2}"
                          r"(?:[ T]\d{2}:\d{2}:\d{2})?)", text)
    if found is None:
        return None
    return site_datetime(found.group(1).replace("T", " "))[0]


def shift_dates(data: dict, comp: Competition, start: dt.date, *,
                keep_end: dt.datetime | None = None) -> list[str]:
    """Move every phase date of the parsed ``competition.yaml`` ``data`` (``comp`` parsed
    from it) by the same number of days, so that the first phase starts on ``start``.

    Each value keeps its form (a date, an unquoted date-time, a string) and its time of
    day. v2: ``phases[].start`` and ``end``; v1: ``phases.*.start_date`` and ``end_date``.
    ``keep_end``: the end given on add-meta's command line (:func:`command_line_end`): an end
    equal to it and a start the day after it stay. Returns one line per phase, its dates
    before and after (as Codabench stores them).

    Raises :class:`ConfigError` when a moved phase would start after that kept end.
    """
    first = comp.phases[0] if comp.phases else None
    if first is None or first.start is None:
        raise ConfigError("--start: the first phase has no start date to move.")
    delta = dt.timedelta(days=(start - first.start.date()).days)
    kept = _kept_dates(keep_end)
    _check_kept(comp, delta, keep_end, start)
    if comp.version == 2:
        nodes = [n for n in data.get("phases") or [] if isinstance(n, dict)]
        keys = ("start", "end")
    else:
        nodes = [n for n in (data.get("phases") or {}).values() if isinstance(n, dict)]
        keys = ("start_date",)
        if data.get("end_date") not in (None, "", "null"):
            data["end_date"] = _shifted(data["end_date"], delta)
    for node in nodes:
        for key in keys:
            if node.get(key) is not None and _stored(node[key]) not in kept:
                node[key] = _shifted(node[key], delta)
    lines = []
    for phase in comp.phases:
        dates = [d for d in (phase.start, phase.end) if d is not None]
        span = [f"{d if d in kept else d + delta:%Y-%m-%d}" for d in dates]
        was = [f"{d:%Y-%m-%d}" for d in dates]
        stays = " (kept: the end given to `bundle add-meta --end`, and the day after it)" \
            if any(d in kept for d in dates) else ""
        lines.append(f"phase {phase.name!r}: {' to '.join(span)} (was {' to '.join(was)}){stays}")
    return [f"phase dates moved by {delta.days:+d} day(s) so that {first.name!r} starts on "
            f"{start:%Y-%m-%d}:"] + lines


def _kept_dates(end: dt.datetime | None) -> set[dt.datetime]:
    """The stored dates a shift leaves: the end given on the command line and the start of
    the Final ranking phase, the day after it."""
    if end is None:
        return set()
    return {end, dt.datetime.combine(end.date() + dt.timedelta(days=1), dt.time())}


def _check_kept(comp: Competition, delta: dt.timedelta, end: dt.datetime | None, start: dt.date) -> None:
    """Refuse a shift that moves a phase's start to the kept end or after it."""
    if end is None:
        return
    kept = _kept_dates(end)
    for phase in comp.phases:
        if phase.start is None or phase.start in kept or phase.start > end:
            continue
        moved = phase.start + delta
        if moved >= end:
            raise ConfigError(
                f"--start {start:%Y-%m-%d}: phase {phase.name!r} would start on {moved:%Y-%m-%d} "
                f"(every phase moved by {delta.days:+d} day(s)), not before {end:%Y-%m-%d}, the end "
                "given to `bundle add-meta --end`, which `bundle zip --start` keeps where it was "
                "put; give an earlier --start, or another end (`bundle add-meta --force --end DATE`, "
                "or edit competition.yaml).")


def _stored(value: Any) -> dt.datetime | None:
    try:
        return site_datetime(value)[0]
    except (ValueError, OverflowError):
        return None


def _shifted(value: Any, delta: dt.timedelta) -> Any:
    """``value`` moved by ``delta``, in the same form (a string stays a string)."""
    if isinstance(value, (dt.datetime, dt.date)):
        return value + delta
    if not isinstance(value, str):
        return value
    from dateutil import parser as dateparser

    moved = dateparser.parse(value) + delta  # the check parsed it already
    return moved.isoformat(sep=" ") if ":" in value else f"{moved:%Y-%m-%d}"


def _duration(delta: dt.timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    hours, minutes = divmod(minutes, 60)
    if hours and minutes:
        return f"{hours} h {minutes} min"
    return f"{hours} h" if hours else f"{minutes} min" if minutes else f"{int(delta.total_seconds())} s"
