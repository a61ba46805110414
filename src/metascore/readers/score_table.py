"""What a score reader returns: the canonical long table and what it found besides the scores.

:class:`ScoreTable` holds the table (``frame``, its columns in :mod:`.formats`) with the
reader's other findings as typed fields: the format and path read, the runs that produced
no score, the submissions with none at all, the runs whose prediction step failed, the
notes and the competition's column sortings and titles. :func:`concat_scores` joins the
tables of several files (one per phase, or the files of an unzipped export).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .table import concat_frames

__all__ = ["Failure", "Flag", "ScoreTable", "concat_scores"]

#: A run of a scoring-output tree that produced no score for a task:
#: ``(phase, candidate, task, reason)``.
Failure = tuple[str, str, str, str]
#: A run that finished after its prediction step failed: ``(phase, candidate, task, what
#: failed)`` (``metascore bundle run`` marks them; :mod:`metascore.leaderboard.flags`).
Flag = tuple[str, str, str, str]


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
    #: The submissions of a tree with no score at all (every run failed), each a mapping
    #: with ``phase``, ``candidate``, ``participant``, ``submitted_at`` and ``is_baseline``,
    #: so that they stay accounted for.
    unscored: tuple[Mapping[str, Any], ...] = ()
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

    def with_frame(self, frame: pd.DataFrame) -> ScoreTable:
        """The same findings with another table (the rows of this one, recoded or relabelled)."""
        return dataclasses.replace(self, frame=frame)


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
