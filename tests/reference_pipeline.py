"""The score matrix of a phase as metascore built it before it coded the canonical table.

A reference for the tests of :mod:`metascore.leaderboard.pivot` and the readers: the old
``phase_matrix`` (a pandas pivot on object columns, row by row where it had to be), its
helpers, the old ``normalize_frame`` and the old ``ScoreMatrix.from_long``, copied from
the commit before the change (fd36288) with their names unchanged, and the wide and long
CSV readers of that commit (one row at a time). Slow on purpose; only small inputs go
through it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from metascore.config import JudgeConfig, judge_key
from metascore.readers.directions import column_direction
from metascore.errors import InputError
from metascore.leaderboard.pivot import closest_judge
from metascore.readers.long import _add_long, _read_long_table
from metascore.readers.rows import CANONICAL_COLUMNS, Rows, cell_at, column_index, csv_header, csv_rows
from metascore.readers.rows import csv_table, flag_cell, optional_text_cell, read_text, require_columns
from metascore.readers.rows import score_cell, text_cell, time_cell
from metascore.readers.score_table import ScoreTable
from metascore.matrix import ScoreMatrix

_TRUE = {"true", "1", "yes", "y", "t"}


def from_long(frame: pd.DataFrame, *, candidate: str = "candidate", judge: str = "judge",
              value: str = "value", **kwargs: Any) -> ScoreMatrix:
    """``ScoreMatrix.from_long`` before the change."""
    cands = pd.unique(frame[candidate].astype(str))
    jdgs = pd.unique(frame[judge].astype(str))
    ci = pd.Index(cands).get_indexer(frame[candidate].astype(str))
    ji = pd.Index(jdgs).get_indexer(frame[judge].astype(str))
    dup = pd.Series(ci * len(jdgs) + ji).duplicated()
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError(
            f"candidate {cands[ci[row]]!r} has more than one score for judge "
            f"{jdgs[ji[row]]!r}."
        )
    grid = np.full((len(cands), len(jdgs)), None, dtype=object)
    grid[ci, ji] = frame[value].to_numpy(dtype=object)
    return ScoreMatrix.from_array(grid, list(cands), list(jdgs), **kwargs)


def phase_matrix(
    frame: pd.DataFrame,
    phase: str,
    judges: tuple[JudgeConfig, ...] | None,
    baselines: tuple[str, ...] = (),
    unscored: dict[str, str] | None = None,
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
    :mod:`metascore.readers.directions`), else higher is
    better. A candidate
    is a baseline when its id or participant is listed in ``baselines`` or any of its rows
    is flagged ``is_baseline``.
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
        matrix = from_long(
            rows,
            higher_is_better=dict(zip(keys, higher)),
            weights=dict(zip(keys, weights)),
            participants={c: None if p is None else str(p) for c, p in participants.items()},
            submitted_at=times,
            baselines=base,
        )
    except InputError as exc:
        raise InputError(f"phase {phase!r}: {exc}") from None
    return matrix.subset(judges=keys)


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
                + f" has no score in phase {phase!r}"
                f"{closest_judge(j, [(judge_key(t, m), t, m) for t, m in uniq])}; "
                f"judges found are {found} (tasks {tasks})."
            )
    return rows, found


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


# ---------------------------------------------------------------------- readers
# The wide reader and the long CSV reader before the change (one ``Rows.add`` per cell),
# feeding today's ``Rows``: the table they give is the reference for the column readers.
def read_wide(path: Path, rows: Rows) -> None:
    """Add the rows of a wide CSV to ``rows``: one row per candidate, one column per judge."""
    text = read_text(path)
    first = next((line for line in text.splitlines() if line.strip()), "")
    if "," not in text and len(first.split()) > 1:
        _read_matrix(path, text, rows)
        return
    lines = csv_rows(path)
    _, header = csv_header(path, lines)
    try:
        meta = column_index(header, ("candidate", "participant", "submitted_at", "is_baseline"))
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    cand = meta.get("candidate", 0)
    judges = [(i, h) for i, h in enumerate(header) if i != cand and i not in meta.values()]
    if not judges:
        raise InputError(f"no scores found in {path} (no judge columns besides the candidate).")
    seen: set[str] = set()
    for i, h in judges:
        if not h:
            raise InputError(f"{path}: column {i + 1} of the header has no name.")
        if h in seen:
            raise InputError(f"{path}: column {h!r} appears twice in the header.")
        seen.add(h)
    for n, row in lines:
        at = f"{path}, line {n}"
        if len(row) > len(header) and any(c.strip() for c in row[len(header):]):
            raise InputError(f"{at}: the row has {len(row)} cells but the header has {len(header)}.")
        participant = optional_text_cell(cell_at(row, meta.get("participant")))
        submitted = time_cell(cell_at(row, meta.get("submitted_at")), f"{at}, column 'submitted_at'")
        baseline = flag_cell(cell_at(row, meta.get("is_baseline")), f"{at}, column 'is_baseline'")
        candidate = text_cell(cell_at(row, cand))
        for i, judge in judges:
            value = score_cell(cell_at(row, i), lambda: f"{at}, column {judge!r}")
            rows.add(at, "", candidate, participant, judge, "", value, submitted, baseline)


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _read_matrix(path: Path, text: str, rows: Rows) -> None:
    """A whitespace-separated matrix (see the module docstring for the names)."""
    lines = [(n, line.split()) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    header: list[str] | None = None
    if not all(_is_number(c) for c in lines[0][1][1:]):
        header = lines[0][1]
        lines = lines[1:]
    if not lines:
        raise InputError(f"no scores found in {path} (a header line and no data).")
    named = all(not _is_number(cells[0]) for _, cells in lines)
    width = len(lines[0][1]) - named
    if header is not None:
        if len(header) == width + 1 and named:
            header = header[1:]  # a label above the names column
        if len(header) != width:
            raise InputError(f"{path}: the header has {len(header)} names for {width} score columns.")
    judges = header or [f"j{k}" for k in range(1, width + 1)]
    if len(set(judges)) != len(judges):
        raise InputError(f"{path}: a column name appears twice in the header {judges}.")
    for k, (n, cells) in enumerate(lines, start=1):
        at = f"{path}, line {n}"
        if len(cells) != width + named:
            raise InputError(f"{at}: the row has {len(cells)} cells; the first row has {width + named}.")
        candidate = cells[0] if named else f"c{k}"
        for judge, cell in zip(judges, cells[named:]):
            rows.add(at, "", candidate, None, judge, "", score_cell(cell, lambda: f"{at}, column {judge!r}"))


def read_long_csv(path: Path, rows: Rows) -> None:
    """``read_long_csv`` before the change (its two readers are still the fallbacks)."""
    table = csv_table(path)
    if table is not None:
        _read_long_table(path, rows, *table)
        return
    lines = csv_rows(path)
    _, header = csv_header(path, lines)
    try:
        cols = column_index(header, CANONICAL_COLUMNS)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    require_columns(cols, ("candidate", "value"), path, header)
    for n, row in lines:
        record = {name: cell_at(row, i) for name, i in cols.items()}
        _add_long(rows, record, lambda col: f"{path}, line {n}, column {col!r}", f"{path}, line {n}")


def read_scores(path: Path, fmt: str) -> ScoreTable:
    """The score table of a wide or long CSV by the readers before the change."""
    rows = Rows()
    (read_wide if fmt == "wide" else read_long_csv)(path, rows)
    return rows.score_table(path, fmt, None)


def long_csv(frame: pd.DataFrame, columns: list[str]) -> str:
    """``metascore.render.writers.long_csv`` before the change (one record at a time)."""
    import csv
    import io

    from metascore.render.writers import _cell, _plain

    cols = list(columns)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(cols)
    for rec in frame.to_dict(orient="records"):
        writer.writerow([_cell(_plain(rec.get(c))) for c in cols])
    return buf.getvalue()
