"""A phase of the canonical long table: checks, its score matrix, deadlines and selection.

:func:`normalize_frame`, :func:`check_phases` and :func:`check_baselines` validate the
table against the config once; :func:`phase_matrix` turns one phase into a
:class:`~metascore.matrix.ScoreMatrix` (judges, baselines, participants, submission times);
:func:`select_phase` drops late submissions and applies participant selection.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..config import Config, JudgeConfig, judge_key
from ..directions import column_direction
from ..errors import InputError, MetascoreError, did_you_mean
from ..matrix import ScoreMatrix
from ..ranking import Ranking
from ..selection import Selection, select_candidates
from ..submission_order import Origin, places

_TRUE = {"true", "1", "yes", "y", "t"}


def phase_matrix(
    frame: pd.DataFrame,
    phase: str,
    judges: tuple[JudgeConfig, ...] | None,
    baselines: tuple[str, ...] = (),
    unscored: dict[str, str] | None = None,
    origins: Mapping[str, Origin] | None = None,
) -> ScoreMatrix:
    """The score matrix of every submission of ``phase`` in the canonical long table.

    Every submission of the phase is a candidate: one whose scores are all on columns
    that are not judges, or whose every run failed (``frame.attrs["unscored"]``, from a
    scoring-output tree), is kept with every judge's score missing, so the missing-data
    policy ranks it or leaves it out with a reason, as for empty cells; ``unscored``
    (when given) receives ``{candidate: why it has no judge score}``.

    Judges are the configured ones that apply to ``phase`` (each must have at least one
    score; scores named by a judge's column ``title`` count as its metric) or, without a
    config, every (task, metric) found (sorted by key). A judge without a configured
    direction takes its column's from the competition (``frame.attrs["directions"]``, see
    :mod:`metascore.directions`), else higher is
    better. A candidate
    is a baseline when its id or participant is listed in ``baselines`` or any of its rows
    is flagged ``is_baseline``. ``origins`` (:func:`~metascore.submission_order.phase_origins`)
    set each candidate's place for the ``submitted_at`` tie-break; without them a
    candidate is its own origin.
    """
    known = frame.attrs.get("directions") or {}
    rows, found = _judge_rows(frame, phase, judges)
    members = rows  # every submission of the phase, before the judges are chosen
    if judges is None:
        pairs = dict(zip(rows["judge"], zip(rows["task"], rows["metric"])))
        keys, weights = found, [1.0] * len(found)
        higher = [column_direction(*pairs[k], known) is not False for k in keys]
    else:
        mine = [j for j in judges if j.phase in (None, phase)]
        keys = [j.key for j in mine]
        higher = [_higher(j, known) for j in mine]
        weights = [j.weight for j in mine]
        rows = rows[rows["judge"].isin(keys)]
    values = pd.to_numeric(rows["value"], errors="coerce")
    scored = set(pd.unique(rows.loc[values.notna().to_numpy(), "judge"]))
    for key in keys:
        if key not in scored:
            task = rows.loc[rows["judge"] == key, "task"].iloc[0]
            raise InputError(
                f"task {task!r} (judge {key!r}) has no score for any candidate in phase {phase!r}."
            )

    rows, why = _every_submission(frame, members, rows, keys, phase)
    if unscored is not None:
        unscored.update(why)
    cand = rows["candidate"]
    participants = _per_candidate(rows, "participant", phase)
    times = _per_candidate(rows, "submitted_at", phase)
    listed = set(baselines)
    flagged = pd.Series(_map_distinct(rows["is_baseline"], _truthy), index=rows.index,
                        dtype=bool).groupby(cand, sort=False).any()
    base = [c for c, flag in flagged.items()
            if flag or c in listed or participants.get(c) in listed]
    try:
        matrix = ScoreMatrix.from_long(
            rows,
            higher_is_better=dict(zip(keys, higher)),
            weights=dict(zip(keys, weights)),
            participants={c: None if p is None else str(p) for c, p in participants.items()},
            submitted_at=times,
            baselines=base,
            submission_order=None if origins is None else _places(origins, pd.unique(cand)),
        )
    except InputError as exc:
        raise InputError(f"phase {phase!r}: {exc}") from None
    return matrix.subset(judges=keys)


def _places(origins: Mapping[str, Origin], candidates: Any) -> dict[str, float]:
    """Each candidate's place in submission order (unknown: last)."""
    keys = list(origins)
    placed = dict(zip(keys, places([origins[k] for k in keys])))
    return {str(c): placed.get(str(c), math.inf) for c in candidates}


def _judge_rows(
    frame: pd.DataFrame, phase: str, judges: tuple[JudgeConfig, ...] | None
) -> tuple[pd.DataFrame, list[str]]:
    """The rows of ``phase`` with their ``judge`` key, and the judge keys found; an error
    when the phase has no scores or a configured judge of the phase has none."""
    rows = frame[frame["phase"] == phase]
    if rows.empty:
        raise InputError(f"phase {phase!r} has no scores.")
    rows = _titles_as_metrics(rows, judges, phase)
    pairs = pd.MultiIndex.from_arrays([rows["task"].astype(str), rows["metric"].astype(str)])
    codes, uniq = pairs.factorize()
    rows = rows.assign(judge=np.array([judge_key(t, m) for t, m in uniq], dtype=object)[codes])
    found = sorted(pd.unique(rows["judge"]))
    if judges is None:
        return rows, found
    mine = [j for j in judges if j.phase in (None, phase)]
    if not mine:
        raise InputError(f"no configured judge applies to phase {phase!r}.")
    for j in mine:
        if j.key not in found:
            tasks = sorted(set(rows["task"]))
            raise InputError(
                f"judge {j.key!r}: task {j.task!r}"
                + (f" with metric {j.metric!r}" if j.metric else "")
                + f" has no score in phase {phase!r}{did_you_mean(j.key, found)}; "
                f"judges found are {found} (tasks {tasks})."
            )
    return rows, found


def check_judges(frame: pd.DataFrame, config: Config) -> None:
    """Every configured judge has scores in each configured phase it applies to: checked
    before any ranking, so a misspelt judge of the final phase fails at once."""
    if config.judges is None:
        return
    for phase in (config.phases.development, config.phases.final):
        if phase is not None:
            _judge_rows(frame, phase, config.judges)


def _every_submission(
    frame: pd.DataFrame, members: pd.DataFrame, rows: pd.DataFrame, keys: list[str], phase: str,
) -> tuple[pd.DataFrame, dict[str, str]]:
    """``rows`` (the judges' scores) plus one missing score on the first judge for each
    submission of the phase that has none on any judge, and why each has none."""
    present = set(rows["candidate"])
    absent = members[~members["candidate"].isin(present)]
    why: dict[str, str] = {}
    extra: list[dict[str, Any]] = []
    first = {"judge": keys[0], "value": np.nan}
    for cand, own in absent.groupby("candidate", sort=False):
        columns = list(dict.fromkeys(own["judge"]))
        shown = ", ".join(columns[:3]) + (f" and {len(columns) - 3} more" if len(columns) > 3 else "")
        why[str(cand)] = (f"its scores are for {shown}, "
                          f"{'which is not a judge' if len(columns) == 1 else 'none of which is a judge'}")
        extra.append({**own.iloc[0].to_dict(), **first})
    failures: dict[str, list[str]] = {}
    for p, c, task, reason in frame.attrs.get("failed") or ():
        if p == phase:
            failures.setdefault(c, []).append(f"task {task!r}: {reason}" if task else reason)
    for member in frame.attrs.get("unscored") or ():
        cand = str(member["candidate"])
        if member["phase"] != phase or cand in present or cand in why:
            continue
        runs = failures.get(cand) or ["no scores"]
        more = f" (and {len(runs) - 1} more)" if len(runs) > 1 else ""
        why[cand] = f"every run failed: {runs[0]}{more}"
        extra.append({"phase": phase, "candidate": cand, "participant": member.get("participant"),
                      "task": "", "metric": "", "submitted_at": member.get("submitted_at"),
                      "is_baseline": bool(member.get("is_baseline")), **first})
    if not extra:
        return rows, why
    return pd.concat([rows, pd.DataFrame(extra, columns=rows.columns)], ignore_index=True), why


def _per_candidate(rows: pd.DataFrame, what: str, phase: str) -> dict[str, Any]:
    """Each candidate's one non-missing ``what`` value (None when it has none), vectorized;
    two different values for one candidate are an error."""
    col = rows[what]
    given = ~pd.Series(_map_distinct(col, _is_missing), index=col.index, dtype=bool)
    text = col[given].astype(str)
    cand = rows["candidate"][given]
    distinct = text.groupby(cand, sort=False).nunique()
    if (distinct > 1).any():
        bad = distinct.index[(distinct > 1).to_numpy()][0]
        _unique_or_error(col[(rows["candidate"] == bad).to_numpy()], bad, what, phase)
    first = col[given].groupby(cand, sort=False).first()
    return {c: first.get(c) for c in pd.unique(rows["candidate"])}


def _titles_as_metrics(
    rows: pd.DataFrame, judges: tuple[JudgeConfig, ...] | None, phase: str
) -> pd.DataFrame:
    """Scores named by a judge's column ``title`` (a Codabench export) count as its metric."""
    aliases = [j for j in judges or () if j.title and j.title != j.metric and j.phase in (None, phase)]
    if not aliases:
        return rows
    metric = rows["metric"].copy()
    for j in aliases:
        metric[(rows["task"] == j.task) & (rows["metric"] == j.title)] = j.metric
    return rows.assign(metric=metric)


def _higher(judge: JudgeConfig, known: dict[str, bool]) -> bool:
    """The configured direction, else the competition's column sorting, else higher."""
    column = None if judge.direction_set else column_direction(judge.task, judge.metric, known)
    return judge.higher_is_better if column is None else column


def _unique_or_error(series: pd.Series, cand: str, what: str, phase: str) -> Any:
    values = [v for v in series if not _is_missing(v)]
    distinct = list(dict.fromkeys(str(v) for v in values))
    if len(distinct) > 1:
        raise InputError(
            f"phase {phase!r}: candidate {cand!r} has several {what} values {distinct}; "
            "candidate ids must be unique within a phase."
        )
    if not values:
        return None
    return str(values[0]) if what == "participant" else values[0]


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if value is pd.NaT:
        return True
    return isinstance(value, str) and value.strip() == ""


def _truthy(value: Any) -> bool:
    if _is_missing(value):
        return False
    if isinstance(value, str):
        return value.strip().lower() in _TRUE
    return bool(value)


def select_phase(
    frame: pd.DataFrame, phase: str, config: Config, policy: str,
    rank_fn: Callable[[ScoreMatrix], Ranking], unscored: dict[str, str] | None = None,
    origins: Mapping[str, Origin] | None = None,
) -> Selection:
    """The phase's matrix without late submissions, then participant selection
    (``unscored``, ``origins``: as in :func:`phase_matrix`)."""
    matrix = phase_matrix(frame, phase, config.judges, config.baselines, unscored, origins)
    late: dict[str, str] = {}
    deadline = config.phases.deadlines.get(phase)
    if deadline is not None and matrix.submitted_at:
        for cand, t in zip(matrix.candidates, matrix.submitted_at):
            if t is not None and t > deadline:
                late[cand] = (f"submitted at {t.isoformat()}, after the {phase!r} deadline "
                              f"{deadline.isoformat()}")
        if len(late) == matrix.n_candidates:
            raise InputError(f"every submission of phase {phase!r} is after its deadline "
                             f"{deadline.isoformat()}.")
        if late:
            matrix = matrix.subset(
                candidates=[c for c in matrix.candidates if c not in late])
    sel = select_candidates(matrix, policy, in_phase(rank_fn, phase))
    dropped = {**late, **sel.dropped}
    return Selection(sel.matrix, {c: dropped[c] for c in sorted(dropped)})


def normalize_frame(frame: pd.DataFrame) -> pd.DataFrame:
    required = ("phase", "candidate", "task", "value")
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise InputError(
            f"the score table has no column {missing[0]!r}; columns are {list(frame.columns)}."
        )
    if frame.empty:
        raise InputError("the input holds no scores; nothing to rank.")
    out = frame.copy()
    for col in ("participant", "submitted_at", "is_baseline"):
        if col not in out.columns:
            out[col] = None
    out["metric"] = _map_distinct(out["metric"], lambda m: "" if _is_missing(m) else str(m)) \
        if "metric" in out.columns else ""
    for col in ("phase", "candidate", "task"):
        out[col] = out[col].astype(str)
    out["participant"] = _map_distinct(out["participant"],
                                       lambda p: None if _is_missing(p) else str(p))
    out.attrs = dict(frame.attrs)  # format, source, failed, notes, directions
    return out


def _map_distinct(series: pd.Series, fn: Callable[[Any], Any]) -> np.ndarray:
    """``fn`` of every cell, called once per distinct value (columns repeat a few values)."""
    codes, distinct = pd.factorize(series, use_na_sentinel=False)
    out = np.empty(len(distinct), dtype=object)
    out[:] = [fn(v) for v in distinct]
    return out[codes]


def check_phases(frame: pd.DataFrame, config: Config) -> None:
    found = list(pd.unique(frame["phase"]))
    for name in config.phases.deadlines:
        if name not in found:
            raise InputError(f"phases.deadlines names phase {name!r}, which is not in the "
                             f"scores{did_you_mean(name, found)}; phases found are {found}.")
    for key, name in (("development", config.phases.development), ("final", config.phases.final)):
        if name is not None and name not in found:
            hint = " (set phases.final: null to rank the development phase only)" \
                if key == "final" else ""
            raise InputError(
                f"phase {name!r} (phases.{key}) is not in the scores{did_you_mean(name, found)}; "
                f"phases found are {found}{hint}."
            )


def check_baselines(frame: pd.DataFrame, baselines: tuple[str, ...]) -> None:
    """Each listed baseline names a candidate or a participant (one whose every run failed
    counts: the phase that needs its scores says why it has none)."""
    names = set(pd.unique(frame["candidate"])) | {
        p for p in pd.unique(frame["participant"]) if p is not None}
    for member in frame.attrs.get("unscored") or ():
        names |= {str(member["candidate"]), str(member.get("participant") or member["candidate"])}
    for b in baselines:
        if b not in names:
            raise InputError(
                f"baseline {b!r} (from `baselines`) is neither a candidate nor a participant in "
                f"the scores{did_you_mean(b, sorted(names))}."
            )


def in_phase(rank_fn: Callable[[ScoreMatrix], Ranking], phase: str) -> Callable[[ScoreMatrix], Ranking]:
    """``rank_fn`` whose errors name the phase."""
    def ranked(matrix: ScoreMatrix) -> Ranking:
        try:
            return rank_fn(matrix)
        except MetascoreError as exc:
            raise type(exc)(f"phase {phase!r}: {exc}") from None
    return ranked
