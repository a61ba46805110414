"""The ``submitted_at`` tie-break key, "the earlier submission", as one rule that every input
can answer, a Codabench results export (no submission times) included.

1. **Origin.** A candidate takes its place in submission order from its *origin*: itself
   when its phase is the earliest ranked phase (development, then final) in which its
   participant has a submission; otherwise its participant's submission in that earliest
   phase (the latest one when there are several there). Codabench gives a submission it
   migrates into the final phase a new id and a new creation time, in whatever order the
   site migrates them; the copy keeps the place of the development submission it copies
   (under ``Force_Last``, the participant's last one: the one the export holds).
2. **Order.** Origins are compared by submission time when the input gives one (a
   ``submissions.csv`` next to a scoring-output tree, a long or wide table; an unknown time
   comes after every known one), then by **submission number**: the ``<id>`` of a Codabench
   row key ``<owner>-<id>`` (the part after the last ``-``, when it is all digits; the
   owner may hold dashes) or a CodaLab v1 ``submission_pk`` (an id of digits only),
   compared as a number. Both platforms number submissions in the order they are made,
   across phases. A candidate id without a number comes after those with one.
3. Equal places leave the tie to the next ``ranking.tie_break`` key (the candidate id, as
   text, by default).

:func:`phase_origins` finds the origins of a phase's candidates in the score table,
:func:`places` turns origins into the sort key the ranking uses, :func:`order_basis` says in
words which rule decided (for the signature and the report).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

__all__ = ["EARLIER", "BY_NUMBER", "BY_TIME", "Origin", "Submissions", "split_submission_key",
           "submission_number", "phase_origins", "places",
           "own_places", "order_basis", "latest_first_key", "utc_time"]

#: The tie-break in words, one wording wherever it is said (the "Final ranking" page, the
#: leaderboard's messages, the README): the earlier submission, by submission number on a
#: Codabench results export and in ``bundle run``'s outputs tree (neither holds a submission
#: time), by submission time where the input has them.
EARLIER = "the earlier submission"
BY_NUMBER = "by submission number"
BY_TIME = "by submission time"

# "<owner>-<submission id>": the id is the part after the last "-", all ASCII digits.
_SUBMISSION_KEY = re.compile(r"(?P<owner>.+)-(?P<id>[0-9]+)", re.DOTALL)
_DIGITS = re.compile(r"[0-9]+")


def split_submission_key(key: str) -> tuple[str, int] | None:
    """``(owner, id)`` of a Codabench row key ``<owner>-<id>``, or None when ``key`` has no
    numeric part after its last ``-`` (or nothing before it).

    >>> split_submission_key("jean-luc-521"), split_submission_key("bob-x"), split_submission_key("7")
    (('jean-luc', 521), None, None)
    """
    match = _SUBMISSION_KEY.fullmatch(str(key))
    return (match.group("owner"), int(match.group("id"))) if match else None


def submission_number(key: str) -> int | None:
    """The submission id of a candidate id as a number: the ``<id>`` of a Codabench row
    key ``<owner>-<id>``, or the whole id when it is all digits (a CodaLab v1
    ``submission_pk``); else None.

    >>> submission_number("zoe-10"), submission_number("4512"), submission_number("alice__v2")
    (10, 4512, None)
    """
    key = str(key)
    if _DIGITS.fullmatch(key):
        return int(key)
    parts = split_submission_key(key)
    return None if parts is None else parts[1]


@dataclass(frozen=True)
class Origin:
    """The submission that sets a candidate's place: its phase, id, time and number."""

    phase: str
    candidate: str
    time: pd.Timestamp | None
    number: int | None

    def key(self) -> tuple[float, float]:
        """Earlier first; an unknown time or number after every known one."""
        return (math.inf if self.time is None else float(self.time.value),
                math.inf if self.number is None else float(self.number))

    def known(self) -> bool:
        return self.time is not None or self.number is not None

    def shown(self) -> str:
        """How the report names it: its time, else its id."""
        return self.time.isoformat() if self.time is not None else self.candidate

    def by(self, other: "Origin") -> str:
        """What decides between this origin and ``other``: :data:`BY_TIME` when both have a
        time that differs, else :data:`BY_NUMBER`."""
        timed = self.time is not None and other.time is not None and self.time != other.time
        return BY_TIME if timed else BY_NUMBER


def latest_first_key(time: pd.Timestamp | None, candidate: str) -> tuple[float, float, str]:
    """A sort key whose smallest value is the latest submission: by time, then by
    submission number (an unknown one counts as the earliest), then by the id as text."""
    number = submission_number(candidate)
    return (-math.inf if time is None else -float(time.value),
            -math.inf if number is None else -float(number), candidate)


def utc_time(value: Any) -> pd.Timestamp | None:
    """A submission time as a naive UTC timestamp; None when missing or not a time."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NaT:
        return None
    if isinstance(value, str) and not value.strip():
        return None
    try:
        stamp = pd.Timestamp(value)
    except (TypeError, ValueError):
        return None
    if stamp is pd.NaT:
        return None
    return stamp.tz_convert("UTC").tz_localize(None) if stamp.tzinfo is not None else stamp


class Submissions(Protocol):
    """What :func:`phase_origins` reads of a score table (a
    :class:`~metascore.readers.score_table.ScoreTable` answers it): each submission of a
    phase, ``candidate -> (participant key, submission time or None)``."""

    def submissions(self, phase: str) -> Mapping[str, tuple[str, pd.Timestamp | None]]: ...


def phase_origins(table: Submissions, phase: str, earlier: Iterable[str] = ()) -> dict[str, Origin]:
    """The origin of each submission of ``phase`` in the score table.

    ``earlier``: the ranked phases before ``phase``, earliest first; a participant with a
    submission in one of them takes the place of their latest submission in the first
    such phase (module docstring). A submission without a participant is its own.
    """
    first_seen: dict[str, Origin] = {}
    for before in earlier:
        if before == phase:
            continue
        latest: dict[str, tuple[tuple[float, float, str], Origin]] = {}
        for cand, (part, when) in table.submissions(before).items():
            key = latest_first_key(when, cand)
            if part not in latest or key < latest[part][0]:
                latest[part] = (key, Origin(before, cand, when, submission_number(cand)))
        for part, (_, origin) in latest.items():
            first_seen.setdefault(part, origin)
    return {cand: first_seen.get(part) or Origin(phase, cand, when, submission_number(cand))
            for cand, (part, when) in table.submissions(phase).items()}


def places(origins: Sequence[Origin]) -> tuple[float, ...]:
    """Each origin's place in submission order (0 = earliest; equal origins share it;
    ``inf`` when neither its time nor its number is known)."""
    keys = [o.key() for o in origins]
    rank = {k: float(n) for n, k in enumerate(sorted(set(keys)))}
    return tuple(rank[k] if o.known() else math.inf for k, o in zip(keys, origins))


def own_places(candidates: Sequence[str], times: Sequence[Any]) -> np.ndarray:
    """:func:`places` of candidates that are their own origins (one phase, no earlier
    phase known): their times when given, then their submission numbers."""
    stamps = list(times) if len(times) else [None] * len(candidates)
    return np.array(places([Origin("", c, utc_time(t), submission_number(c))
                            for c, t in zip(candidates, stamps)]), dtype=float)


def order_basis(origins: Mapping[str, Origin], phase: str) -> str:
    """In words, what the ``submitted_at`` key compares in ``phase``: submission times or
    submission ids, of which phase(s)."""
    n = len(origins)
    timed = sum(o.time is not None for o in origins.values())
    numbered = sum(o.number is not None for o in origins.values())
    if not timed and not numbered:
        return ("no submission time and no submission id (<owner>-<number>) in phase "
                f"{phase!r}: the next tie-break key decides")
    sources: dict[str, int] = {}
    for o in origins.values():
        sources[o.phase] = sources.get(o.phase, 0) + 1
    where = " and ".join(repr(p) for p in sorted(sources, key=lambda p: p == phase))
    if timed == n:
        what = f"submission times of phase {where}"
    elif timed:
        what = (f"submission times of phase {where} ({n - timed} of {n} candidates have none"
                + ("; then the submission ids" if numbered else "") + ")")
    else:
        what = (f"submission order from the submission ids of phase {where} (the number in "
                "<owner>-<id>, as a number"
                + (f"; {n - numbered} of {n} candidate ids have none" if numbered < n else "") + ")")
    carried = n - sources.get(phase, 0)
    if carried:
        what += (f"; {carried} of {n} candidates take the place of their participant's "
                 f"submission in an earlier phase (its order there, whether the submission in "
                 f"{phase!r} was migrated from it, with a new id and time, or made again)")
    return what
