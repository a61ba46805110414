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
(``metascore bundle zip --start``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ...errors import ConfigError
from .competition import Competition

__all__ = [
    "utc_now",
    "site_datetime",
    "time_dropped_message",
    "past_migration_warnings",
    "parse_start",
    "shift_dates",
]


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


def shift_dates(data: dict, comp: Competition, start: dt.date) -> list[str]:
    """Move every phase date of the parsed ``competition.yaml`` ``data`` (``comp`` parsed
    from it) by the same number of days, so that the first phase starts on ``start``.

    Each value keeps its form (a date, an unquoted date-time, a string) and its time of
    day. v2: ``phases[].start`` and ``end``; v1: ``phases.*.start_date`` and ``end_date``.
    Returns one line per phase, its dates before and after (as Codabench stores them).
    """
    first = comp.phases[0] if comp.phases else None
    if first is None or first.start is None:
        raise ConfigError("--start: the first phase has no start date to move.")
    delta = dt.timedelta(days=(start - first.start.date()).days)
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
            if node.get(key) is not None:
                node[key] = _shifted(node[key], delta)
    lines = []
    for phase in comp.phases:
        span = [f"{d + delta:%Y-%m-%d}" for d in (phase.start, phase.end) if d is not None]
        was = [f"{d:%Y-%m-%d}" for d in (phase.start, phase.end) if d is not None]
        lines.append(f"phase {phase.name!r}: {' to '.join(span)} (was {' to '.join(was)})")
    return [f"phase dates moved by {delta.days:+d} day(s) so that {first.name!r} starts on "
            f"{start:%Y-%m-%d}:"] + lines


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
