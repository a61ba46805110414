"""A phase of the canonical long table: checks and its score matrix.

:func:`normalize_frame`, :func:`check_phases`, :func:`check_judges` and
:func:`check_baselines` validate the table against the configuration once (the phase plan,
:mod:`.plan`, calls them); :func:`phase_matrix` turns one phase into a
:class:`~metascore.matrix.ScoreMatrix` (judges, baselines, participants, submission times),
with integer codes and array indexing (:mod:`.pivot`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from ..config import GroupsConfig, JudgeConfig
from ..readers.directions import column_direction
from ..errors import InputError, did_you_mean
from ..readers.table import codes_of, constant, recode
from ..matrix import ScoreMatrix
from ..readers.score_table import ScoreTable
from .pivot import is_missing, judge_directions, phase_rows, pivot
from ..submission_order import Origin, places


def phase_matrix(
    table: ScoreTable,
    phase: str,
    judges: tuple[JudgeConfig, ...] | None,
    baselines: tuple[str, ...] = (),
    unscored: dict[str, str] | None = None,
    origins: Mapping[str, Origin] | None = None,
    groups: GroupsConfig | None = None,
) -> ScoreMatrix:
    """The score matrix of every submission of ``phase`` in the score table.

    Every submission of the phase is a candidate: one whose scores are all on columns
    that are not judges, or whose every run failed (``table.unscored``, from a
    scoring-output tree), is kept with every judge's score missing, so the missing-data
    policy ranks it or leaves it out with a reason, as for empty cells; ``unscored``
    (when given) receives ``{candidate: why it has no judge score}``.

    Judges are the configured ones that apply to ``phase`` (each must have at least one
    score; scores named by a judge's column ``title`` count as its metric) or, without a
    config, every (task, metric) found (sorted by key). A judge without a configured
    direction takes its column's from the competition (``table.directions``, see
    :mod:`metascore.readers.directions`), else higher is
    better. A candidate
    is a baseline when its id or participant is listed in ``baselines`` or any of its rows
    is flagged ``is_baseline``. ``origins`` (:func:`~metascore.submission_order.phase_origins`)
    set each candidate's place for the ``submitted_at`` tie-break; without them a
    candidate is its own origin. ``groups`` (``ranking.groups``) puts the judges in groups
    (:meth:`~metascore.ScoreMatrix.grouped`): by their configured ``group``, task or metric.
    """
    known = table.directions
    rows = phase_rows(table.frame, phase, judges)
    if judges is None:
        keys = rows.found()
        directions = judge_directions(rows, known, column_direction)
        higher = [directions[k] for k in keys]
        weights = [1.0] * len(keys)
    else:
        mine = [j for j in judges if j.phase in (None, phase)]
        keys = [j.key for j in mine]
        higher = [_higher(j, known) for j in mine]
        weights = [j.weight for j in mine]
    matrix, why = pivot(table, rows, phase, keys, higher, weights, baselines, _places(origins))
    if unscored is not None:
        unscored.update(why)
    if groups is None:
        return matrix
    if judges is None:
        parts = dict(zip(rows.keys, ((t, m, None) for t, m in rows.last_pair)))
    else:
        parts = {j.key: (j.task, j.metric, j.group) for j in mine}
    return grouped_by(matrix, groups, parts)


def grouped_by(matrix: ScoreMatrix, groups: GroupsConfig,
               parts: Mapping[str, tuple[Any, Any, str | None]]) -> ScoreMatrix:
    """``matrix`` with its judges grouped as ``groups`` says (``by``: the configured
    ``group``, the task or the metric; ``parts``: each judge's (task, metric, group))."""
    members: dict[str, list[str]] = {}
    for key in matrix.judges:
        task, metric, group = parts[key]
        name = {"judges": group, "task": task, "metric": metric or key}[groups.by]
        members.setdefault(str(name), []).append(key)
    return matrix.grouped(members, groups.weights, groups.method, groups.params)


def keyed_matrix(
    table: ScoreTable, phase: str, keys: list[str], higher: list[bool], weights: list[float],
    unscored: dict[str, str] | None = None, origins: Mapping[str, Origin] | None = None,
) -> ScoreMatrix:
    """:func:`phase_matrix` on the judges ``keys`` (each found in the phase) with the given
    directions and weights, as the command line chooses them (no configuration)."""
    rows = phase_rows(table.frame, phase, None)
    missing = sorted(set(keys) - set(rows.keys))
    if missing:
        raise InputError(f"phase {phase!r} has no judge {missing[0]!r}.")
    matrix, why = pivot(table, rows, phase, keys, higher, weights, (), _places(origins))
    if unscored is not None:
        unscored.update(why)
    return matrix


def _places(origins: Mapping[str, Origin] | None) -> dict[str, float] | None:
    """Each submission's place in submission order (a candidate not listed: last)."""
    if origins is None:
        return None
    keys = list(origins)
    return dict(zip(keys, places([origins[k] for k in keys])))


def check_judges(frame: pd.DataFrame, phases: Sequence[str],
                 judges: tuple[JudgeConfig, ...] | None) -> None:
    """Every configured judge has scores in each of ``phases`` it applies to: checked
    before any ranking, so a misspelt judge of the final phase fails at once."""
    if judges is None:
        return
    for phase in phases:
        phase_rows(frame, phase, judges)


def _higher(judge: JudgeConfig, known: Mapping[str, bool]) -> bool:
    """The configured direction, else the competition's column sorting, else higher."""
    column = None if judge.direction_set else column_direction(judge.task, judge.metric, known)
    return judge.higher_is_better if column is None else column


def normalize_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The table with its text columns as categoricals of strings (``metric`` ``""`` and
    ``participant`` missing when empty), as every reader gives it; a table a reader made
    is only checked."""
    required = ("phase", "candidate", "task", "value")
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise InputError(
            f"the score table has no column {missing[0]!r}; columns are {list(frame.columns)}."
        )
    if frame.empty:
        raise InputError("the input holds no scores; nothing to rank.")
    out = frame.copy(deep=False)
    for col in ("participant", "submitted_at", "is_baseline"):
        if col not in out.columns:
            out[col] = None
    if "metric" not in out.columns:
        out["metric"] = constant("", len(out))
    for col, text in (("phase", str), ("candidate", str), ("task", str),
                      ("metric", lambda m: "" if is_missing(m) else str(m)),
                      ("participant", lambda p: None if is_missing(p) else str(p))):
        out[col] = _as_text(out[col], text)
    return out


def _as_text(series: pd.Series, text: Callable[[Any], Any]) -> pd.Categorical:
    """``text`` of every cell, called once per distinct value, as a categorical."""
    codes, values = codes_of(series)
    return recode(codes, values, lambda _, v: text(math.nan if v is None else v))


def check_phases(frame: pd.DataFrame, phases: Sequence[str], deadlines: Mapping[str, Any]) -> None:
    """The configured phases (``phases``: development, then final) and those of the
    deadlines are in the table."""
    found = list(pd.unique(frame["phase"]))
    for name in deadlines:
        if name not in found:
            raise InputError(f"phases.deadlines names phase {name!r}, which is not in the "
                             f"scores{did_you_mean(name, found)}; phases found are {found}.")
    for key, name in zip(("development", "final"), phases):
        if name not in found:
            raise InputError(f"phase {name!r} (phases.{key}) has no scores in the input"
                             f"{did_you_mean(name, found)}: {_empty_phase_text(frame, name, found)}")


def _empty_phase_text(frame: pd.DataFrame, name: str, found: list[str]) -> str:
    """Why a configured phase may hold no scores, and which phases do (with their
    submissions), in the order of the input."""
    counts = frame.groupby("phase", observed=True)["candidate"].nunique()
    held = ", ".join(f"{p!r} ({int(counts[p])} submission(s))" for p in found)
    return (f"no submission of it reached the results export. A phase's submissions are in the "
            f"export when its leaderboard holds them, so either nobody submitted to {name!r}, "
            "or nothing migrated into it (auto_migrate_to_this_phase moves the previous phase's "
            "leaderboard submissions when it starts), or its leaderboard's submission_rule kept "
            "them off (under Add only a participant's click puts one there, and a migrated "
            f"submission is a new one that nobody added). Phases with scores: {held}; to rank "
            "one of them instead: phases.final: NAME, or phases.final: null to rank "
            "phases.development on its own.")


def check_baselines(table: ScoreTable, baselines: tuple[str, ...]) -> None:
    """Each listed baseline names a candidate or a participant (one whose every run failed
    counts: the phase that needs its scores says why it has none)."""
    frame = table.frame
    names = set(pd.unique(frame["candidate"])) | {
        p for p in pd.unique(frame["participant"]) if not is_missing(p)}
    for member in table.unscored:
        names |= {str(member.candidate), str(member.participant or member.candidate)}
    for b in baselines:
        if b not in names:
            raise InputError(
                f"baseline {b!r} (from `baselines`) is neither a candidate nor a participant in "
                f"the scores{did_you_mean(b, sorted(names))}."
            )
