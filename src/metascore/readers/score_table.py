"""What a score reader returns: the canonical long table and what it found besides the scores.

:class:`ScoreTable` holds the table (``frame``, its columns in :mod:`.formats`) with the
reader's other findings as typed fields: the format and path read, the runs that produced
no score (:class:`Failure`), the submissions with none at all (:class:`Unscored`), the runs
whose prediction step failed (:class:`Flag`), the notes and the competition's column
sortings and titles. :func:`concat_scores` joins the tables of several files (one per phase,
or the files of an unzipped export).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import pandas as pd

from ..submission_order import utc_time
from .table import concat_frames

__all__ = ["Failure", "Flag", "Unscored", "ScoreTable", "concat_scores"]


class Failure(NamedTuple):
    """A run of a scoring-output tree that produced no score for a task (``task`` empty:
    for none of its tasks), and why."""

    phase: str
    candidate: str
    task: str
    reason: str


class Flag(NamedTuple):
    """A run that finished after its prediction step failed, and what failed (``metascore
    bundle run`` marks them; :mod:`metascore.leaderboard.flags`)."""

    phase: str
    candidate: str
    task: str
    reason: str


class Unscored(NamedTuple):
    """A submission of a tree with no score at all (every run failed), with what the
    tree's manifest says of it (``participant`` None: unknown, its own), so that it stays
    accounted for."""

    phase: str
    candidate: str
    participant: str | None
    submitted_at: Any = None
    is_baseline: bool = False


@dataclass(frozen=True, eq=False)
class ScoreTable:
    """The canonical long table read from a score input, and what the reader found with it."""

    #: One row per (phase, candidate, task, metric) score, columns ``CANONICAL_COLUMNS``.
    frame: pd.DataFrame
    #: The input format (``FORMATS``); several files' formats joined by commas.
    format: str = ""
    #: The path read; several files' paths joined by commas.
    source: str = ""
    #: The runs of a scoring-output tree that produced no score for a task (their rows are
    #: absent, so the score is missing downstream).
    failed: tuple[Failure, ...] = ()
    #: The submissions of a tree with no score at all (every run failed).
    unscored: tuple[Unscored, ...] = ()
    #: The runs that finished after their prediction step failed (trees written by the
    #: mock runner only).
    flagged: tuple[Flag, ...] = ()
    #: What a reader left out on purpose, each said once.
    notes: tuple[str, ...] = ()
    #: The competition's column sortings, ``{column: higher_is_better}`` (a tree's or a
    #: pulled folder's ``codabench.json``).
    directions: Mapping[str, bool] = field(default_factory=dict)
    #: The competition's column titles, ``{key: title}`` (``codabench.json``), which the
    #: report shows as labels.
    titles: Mapping[str, str] = field(default_factory=dict)
    #: The keys of the competition's hidden leaderboard columns (``codabench.json``), whose
    #: values the ranking page's record does not publish.
    hidden: frozenset[str] = frozenset()
    #: Where the configuration's ``input.path`` pointed, as the outputs publish it (relative
    #: to the input folder: a path, or one per phase); None when the table was not read
    #: through a configuration (:func:`~metascore.readers.configured.load_scores`).
    input_path: str | Mapping[str, str] | None = None
    #: The organizer's signature the meta-scoring program checked on this input: who signed it,
    #: when, and what for (:meth:`metascore.signature.SignedExport.provenance`); None when the
    #: input was not a signed results export.
    export: Mapping[str, object] | None = None

    def with_frame(self, frame: pd.DataFrame) -> ScoreTable:
        """The same findings with another table (the rows of this one, recoded or relabelled)."""
        return dataclasses.replace(self, frame=frame)

    def submissions(self, phase: str) -> dict[str, tuple[str, pd.Timestamp | None]]:
        """``candidate -> (participant key, submission time)`` of every submission of
        ``phase`` the table lists: with a score, or with none (:attr:`unscored`). A
        submission without a participant is its own; times in UTC without a zone."""
        frame = self.frame
        rows = frame[frame["phase"] == phase]
        out: dict[str, tuple[str, pd.Timestamp | None]] = {}
        if len(rows):
            first = rows.groupby("candidate", sort=False, observed=True)[["participant", "submitted_at"]].first()
            for cand, part, when in zip(first.index, first["participant"], first["submitted_at"]):
                cand = str(cand)
                missing = part is None or (isinstance(part, float) and math.isnan(part))
                out[cand] = (cand if missing else str(part), utc_time(when))
        for member in self.unscored:
            cand = str(member.candidate)
            if member.phase == phase and cand not in out:
                out[cand] = (str(member.participant or cand), utc_time(member.submitted_at))
        return out


def concat_scores(tables: Sequence[ScoreTable]) -> ScoreTable:
    """Several score tables as one (text columns stay categoricals, their categories
    joined); the formats, paths and every finding are joined, in order."""
    def flat(name: str) -> tuple[Any, ...]:
        return tuple(x for t in tables for x in getattr(t, name))

    return ScoreTable(
        frame=concat_frames([t.frame for t in tables]),
        format=",".join(dict.fromkeys(t.format for t in tables)),
        source=",".join(t.source for t in tables),
        failed=flat("failed"),
        unscored=flat("unscored"),
        flagged=flat("flagged"),
        notes=tuple(dict.fromkeys(flat("notes"))),
        directions={k: v for t in tables for k, v in t.directions.items()},
    )
