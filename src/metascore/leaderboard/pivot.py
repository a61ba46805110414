"""A phase of the canonical long table as integer codes, and its score matrix by indexing.

:func:`phase_rows` reads the rows of one phase as codes (candidate, judge) with the judge
keys computed once per distinct (task, metric); :func:`pivot` puts their scores into the
candidates x judges array by direct indexing and gathers each candidate's metadata
(participant, submission time, baseline flag) with array operations. No step loops over
rows in Python: a phase of 20 candidates x 471,033 per-sample judges is 9.4 million rows.
:func:`metascore.leaderboard.phases.phase_matrix` says what the matrix holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..config import JudgeConfig, judge_key
from ..errors import InputError, did_you_mean
from ..io.table import codes_of, first_index
from ..matrix import ScoreMatrix

__all__ = ["PhaseRows", "phase_rows", "phase_pairs", "table_pairs", "pivot", "judge_directions", "is_missing", "truthy"]

_TRUE = {"true", "1", "yes", "y", "t"}


def is_missing(value: Any) -> bool:
    """Whether a metadata cell is empty (None, NaN, NaT or blank text)."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if value is pd.NaT:
        return True
    return isinstance(value, str) and value.strip() == ""


def truthy(value: Any) -> bool:
    """Whether an ``is_baseline`` cell says yes."""
    if is_missing(value):
        return False
    if isinstance(value, str):
        return value.strip().lower() in _TRUE
    return bool(value)


def _text_codes(series: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Codes of a column read as text (``str`` of each value: values with one text share a
    code; a missing cell reads ``str(nan)``, as ``astype(str)`` does)."""
    codes, cats = codes_of(series)
    texts = [str(c) for c in cats]
    merged, names = pd.factorize(np.asarray(texts + [str(math.nan)], dtype=object))
    return merged.astype(np.int32)[codes], list(names)  # code -1 reads the appended "nan"


def _pairs(frame: pd.DataFrame, pos: np.ndarray | None) -> tuple[np.ndarray, list[int], list[Any], list[Any]]:
    """Each row's (task, metric) pair as a code in order of first appearance (rows ``pos``
    of the table, or all), the pairs (``(task code + 1) * (len(metrics) + 1) + metric code
    + 1``, codes -1 for a missing cell) and the task and metric categories."""
    task, tasks = codes_of(frame["task"])
    metric, metrics = codes_of(frame["metric"])
    if pos is not None:
        task, metric = task[pos], metric[pos]
    width = len(metrics) + 1
    one_metric = len(metrics) == 1 and not (metric < 0).any()
    if one_metric:  # a wide file: the task says it all
        combined, size = task.astype(np.int64) + 1, len(tasks) + 1
    else:
        combined = (task.astype(np.int64) + 1) * width + (metric.astype(np.int64) + 1)
        size = (len(tasks) + 1) * width
    if size > 4 * len(combined) + (1 << 20):  # sparse codes: hash them
        pair, uniq_codes = pd.factorize(combined)
        uniq = uniq_codes.tolist()
    else:  # dense codes: order them by first appearance, no hashing
        first = first_index(combined, size)
        used = np.flatnonzero(first < len(combined))
        used = used[np.argsort(first[used], kind="stable")]
        remap = np.full(size, -1, dtype=np.int32)
        remap[used] = np.arange(len(used), dtype=np.int32)
        pair, uniq = remap[combined], used.tolist()
    if one_metric:
        uniq = [u * width + 1 for u in uniq]
    return pair, uniq, list(tasks), list(metrics)


def table_pairs(frame: pd.DataFrame) -> list[tuple[Any, Any]]:
    """The distinct (task, metric) pairs of the whole table, in order of appearance."""
    _, uniq, tasks, metrics = _pairs(frame, None)
    return [_pair(code, tasks, metrics) for code in uniq]


def phase_pairs(frame: pd.DataFrame, phase: str) -> list[tuple[Any, Any]]:
    """The distinct (task, metric) pairs of the rows of ``phase``, in order of appearance."""
    mask = (frame["phase"] == phase).to_numpy(dtype=bool)
    _, uniq, tasks, metrics = _pairs(frame, None if mask.all() else np.flatnonzero(mask))
    return [_pair(code, tasks, metrics) for code in uniq]


def _pair(code: int, tasks: list[Any], metrics: list[Any]) -> tuple[Any, Any]:
    """The (task, metric) of a pair code (a missing cell reads NaN)."""
    t_code, m_code = divmod(code, len(metrics) + 1)
    return (tasks[t_code - 1] if t_code > 0 else math.nan,
            metrics[m_code - 1] if m_code > 0 else math.nan)


@dataclass(frozen=True)
class PhaseRows:
    """The rows of one phase of the table, as codes.

    ``pos``: the rows' positions in the table (``None``: every row); ``cand``: each row's
    candidate code into ``candidates``; ``judge``: each row's judge code into ``keys`` (in
    order of first appearance); ``last_pair``/``first_task``: the (task, metric) of the last
    row of each judge and the task of its first; ``tasks``: the phase's tasks, sorted.
    """

    pos: np.ndarray | None
    cand: np.ndarray
    candidates: list[str]
    judge: np.ndarray
    keys: list[str]
    last_pair: list[tuple[Any, Any]]
    first_task: list[Any]
    tasks: list[Any]

    def take(self, series: pd.Series) -> Any:
        """The phase's rows of a column (its categorical or array values)."""
        values = series.array
        return values if self.pos is None else values.take(self.pos)

    def found(self) -> list[str]:
        return sorted(self.keys)


def phase_rows(frame: pd.DataFrame, phase: str, judges: tuple[JudgeConfig, ...] | None) -> PhaseRows:
    """The rows of ``phase`` as codes; an error when the phase has no scores or a configured
    judge of the phase has none. Scores named by a judge's column ``title`` (a Codabench
    export) count as its metric."""
    mask = (frame["phase"] == phase).to_numpy(dtype=bool)
    pos = None if mask.all() else np.flatnonzero(mask)
    n = len(frame) if pos is None else len(pos)
    if n == 0:
        raise InputError(f"phase {phase!r} has no scores.")
    pair, uniq, tasks, metrics = _pairs(frame, pos)
    aliases = [j for j in judges or () if j.title and j.title != j.metric and j.phase in (None, phase)]
    index: dict[str, int] = {}
    judge_of_pair = np.empty(len(uniq), dtype=np.int32)
    raw_pairs: list[tuple[Any, Any]] = []
    for k, code in enumerate(uniq):
        t, m = _pair(code, tasks, metrics)
        for j in aliases:  # in order, as each rewrote the column before
            if t == j.task and m == j.title:
                m = j.metric
        raw_pairs.append((t, m))
        judge_of_pair[k] = index.setdefault(judge_key(str(t), str(m)), len(index))
    keys = list(index)
    judge = judge_of_pair[pair]
    rows_at = np.arange(n)
    last = np.full(len(uniq), -1, dtype=np.int64)
    np.maximum.at(last, pair, rows_at)
    first = first_index(pair, len(uniq))
    last_pair: list[tuple[Any, Any]] = [("", "")] * len(keys)
    last_row = [-1] * len(keys)
    first_task: list[Any] = [None] * len(keys)
    first_row = [n] * len(keys)
    for k, (p, j) in enumerate(zip(raw_pairs, judge_of_pair.tolist())):
        if last[k] > last_row[j]:
            last_row[j], last_pair[j] = int(last[k]), p
        if first[k] < first_row[j]:
            first_row[j], first_task[j] = int(first[k]), p[0]
    cand, candidates = _text_codes(frame["candidate"])
    rows = PhaseRows(
        pos=pos, cand=cand if pos is None else cand[pos], candidates=candidates, judge=judge,
        keys=keys, last_pair=last_pair, first_task=first_task,
        tasks=sorted({t for t, _ in raw_pairs}),
    )
    if judges is None:
        return rows
    mine = [j for j in judges if j.phase in (None, phase)]
    if not mine:
        raise InputError(f"no configured judge applies to phase {phase!r}.")
    known = set(keys)
    found = None
    for j in mine:
        if j.key not in known:
            found = found or rows.found()
            raise InputError(
                f"judge {j.key!r}: task {j.task!r}"
                + (f" with metric {j.metric!r}" if j.metric else "")
                + f" has no score in phase {phase!r}{did_you_mean(j.key, found)}; "
                f"judges found are {found} (tasks {rows.tasks})."
            )
    return rows


def pivot(
    frame: pd.DataFrame, rows: PhaseRows, phase: str, keys: Sequence[str], higher: Sequence[bool],
    weights: Sequence[float], baselines: Sequence[str],
) -> tuple[ScoreMatrix, dict[str, str]]:
    """The matrix of the phase on the judges ``keys`` (every key is one of ``rows.keys``),
    and why each candidate without a score on them has none (see ``phase_matrix``)."""
    col_of = np.full(len(rows.keys), -1, dtype=np.int32)
    where = {k: i for i, k in enumerate(rows.keys)}
    for c, key in enumerate(keys):
        col_of[where[key]] = c
    col = col_of[rows.judge]
    chosen = col >= 0
    sel = None if chosen.all() else np.flatnonzero(chosen)

    def pick(values: Any) -> Any:
        return values if sel is None else values[sel]

    col = pick(col)
    cand = pick(rows.cand)
    values = pick(np.asarray(rows.take(frame["value"])))
    numeric = values.dtype.kind in "fiu"
    if numeric:
        values = values.astype(float, copy=False)
        scored_rows = ~np.isnan(values)
    else:
        scored_rows = pd.to_numeric(pd.Series(values), errors="coerce").notna().to_numpy()
    scored = np.bincount(col[scored_rows], minlength=len(keys)) > 0
    if not scored.all():
        key = keys[int(np.flatnonzero(~scored)[0])]
        task = rows.first_task[where[key]]
        raise InputError(
            f"task {task!r} (judge {key!r}) has no score for any candidate in phase {phase!r}."
        )

    # candidates: those with a score row, in order of first appearance, then the phase's
    # other submissions (rows on other columns only, then runs that all failed)
    n_codes = len(rows.candidates)
    first = first_index(cand, n_codes)
    present = np.flatnonzero(first < len(cand))
    present = present[np.argsort(first[present], kind="stable")]
    why, extra_codes, extra_rows, members = _every_submission(frame, rows, present, phase, keys)
    row_of = np.full(n_codes, -1, dtype=np.int32)
    row_of[present] = np.arange(len(present))
    row_of[extra_codes] = np.arange(len(present), len(present) + len(extra_codes))
    names = [rows.candidates[c] for c in present.tolist() + extra_codes] + [str(m["candidate"]) for m in members]
    ci = row_of[cand]
    n, m = len(names), len(keys)
    try:
        seen = np.zeros((n, m), dtype=bool)
        seen[ci, col] = True
        if int(np.count_nonzero(seen)) != len(ci):
            linear = ci.astype(np.int64) * m + col
            row = int(np.flatnonzero(pd.Series(linear).duplicated().to_numpy())[0])
            raise InputError(f"candidate {names[ci[row]]!r} has more than one score for judge "
                             f"{keys[col[row]]!r}.")
        if numeric:
            grid = np.full((n, m), np.nan)
        else:
            grid = np.full((n, m), None, dtype=object)
            grid[len(present):, 0] = np.nan
        grid[ci, col] = values
        # each candidate's metadata: its score rows, or the first row of a submission
        # without any (as that row's own values), or the manifest entry of a failed run
        def gather(column: np.ndarray) -> np.ndarray:
            """``column`` (one entry per table row) at the rows that give the candidates'
            metadata: the score rows, then the first row of each submission without any."""
            phase_rows = column if rows.pos is None else column[rows.pos]
            return np.concatenate([pick(phase_rows), column[np.asarray(extra_rows, dtype=np.int64)]])

        meta_cand = np.concatenate([ci, np.arange(len(present), len(present) + len(extra_codes),
                                                  dtype=ci.dtype)])
        participants = _per_candidate(frame, gather, meta_cand, members, n, "participant", phase, names)
        times = _per_candidate(frame, gather, meta_cand, members, n, "submitted_at", phase, names)
        flagged = _flags(frame, gather, meta_cand, members, n)
        listed = set(baselines)
        base = [c for c, flag, p in zip(names, flagged, participants)
                if flag or c in listed or p in listed]
        matrix = ScoreMatrix.from_array(
            grid, names, list(keys), higher_is_better=list(higher), weights=list(weights),
            participants=[None if p is None else str(p) for p in participants],
            submitted_at=times, baselines=base,
        )
    except InputError as exc:
        raise InputError(f"phase {phase!r}: {exc}") from None
    return matrix, why


def _every_submission(
    frame: pd.DataFrame, rows: PhaseRows, present: np.ndarray, phase: str, keys: Sequence[str],
) -> tuple[dict[str, str], list[int], list[int], list[Mapping[str, Any]]]:
    """The submissions of the phase with no score on a judge: why each has none, the codes
    of those with rows on other columns and the position of each one's first row (in order
    of first appearance), and the manifest entries of those whose every run failed."""
    has = np.zeros(len(rows.candidates), dtype=bool)
    has[present] = True
    absent = np.flatnonzero(~has[rows.cand])  # phase rows of candidates without a score
    why: dict[str, str] = {}
    codes: list[int] = []
    firsts: list[int] = []
    if absent.size:
        own = rows.cand[absent]
        order = np.argsort(own, kind="stable")
        own, at = own[order], absent[order]
        starts = np.flatnonzero(np.r_[True, own[1:] != own[:-1]])
        groups = sorted(zip(at[starts].tolist(), own[starts].tolist(), np.r_[starts[1:], len(own)].tolist(),
                            starts.tolist()))
        for first_at, code, stop, start in groups:
            columns = [rows.keys[j] for j in pd.unique(rows.judge[at[start:stop]])]
            shown = ", ".join(columns[:3]) + (f" and {len(columns) - 3} more" if len(columns) > 3 else "")
            why[rows.candidates[code]] = (
                f"its scores are for {shown}, "
                f"{'which is not a judge' if len(columns) == 1 else 'none of which is a judge'}")
            codes.append(code)
            firsts.append(first_at if rows.pos is None else int(rows.pos[first_at]))
    failures: dict[str, list[str]] = {}
    for p, c, task, reason in frame.attrs.get("failed") or ():
        if p == phase:
            failures.setdefault(c, []).append(f"task {task!r}: {reason}" if task else reason)
    names = {rows.candidates[c] for c in present.tolist()}
    members: list[Mapping[str, Any]] = []
    for member in frame.attrs.get("unscored") or ():
        cand = str(member["candidate"])
        if member["phase"] != phase or cand in names or cand in why:
            continue
        runs = failures.get(cand) or ["no scores"]
        more = f" (and {len(runs) - 1} more)" if len(runs) > 1 else ""
        why[cand] = f"every run failed: {runs[0]}{more}"
        members.append(member)
    return why, codes, firsts, members


def _per_candidate(
    frame: pd.DataFrame, gather: Callable[[np.ndarray], np.ndarray], meta_cand: np.ndarray,
    members: list[Mapping[str, Any]], n: int, what: str, phase: str, names: list[str],
) -> list[Any]:
    """Each candidate's one non-missing ``what`` (None when it has none), from its rows
    (``gather``-ed, of candidates ``meta_cand``) then the manifest ``members``; two
    different values for one candidate are an error."""
    codes, cats = codes_of(frame[what])
    codes = gather(codes).astype(np.int64)
    values = list(cats) + [m.get(what) for m in members] + [None]
    codes = np.concatenate([codes, np.arange(len(cats), len(cats) + len(members))])
    codes[codes < 0] = len(values) - 1  # a missing cell reads None
    cand = np.concatenate([meta_cand, np.arange(n - len(members), n)])
    missing = np.array([is_missing(v) for v in values], dtype=bool)
    text, _ = pd.factorize(np.asarray([str(v) for v in values], dtype=object))
    given = ~missing[codes]
    g_cand, g_codes = cand[given], codes[given]
    out: list[Any] = [None] * n
    if not g_cand.size:
        return out
    pairs = pd.unique(g_cand.astype(np.int64) * (len(values) + 1) + text[g_codes])
    counts = np.bincount(pairs // (len(values) + 1), minlength=n)
    if (counts > 1).any():
        first_given = first_index(g_cand, n)
        bad = int(min(np.flatnonzero(counts > 1), key=lambda c: first_given[c]))
        shown = [values[k] for k in g_codes[g_cand == bad]]
        distinct = list(dict.fromkeys(str(v) for v in shown))
        raise InputError(
            f"phase {phase!r}: candidate {names[bad]!r} has several {what} values {distinct}; "
            "candidate ids must be unique within a phase."
        )
    first = first_index(g_cand, n)
    for c in np.flatnonzero(first < len(g_cand)).tolist():
        out[c] = values[g_codes[first[c]]]
    return out


def _flags(
    frame: pd.DataFrame, gather: Callable[[np.ndarray], np.ndarray], meta_cand: np.ndarray,
    members: list[Mapping[str, Any]], n: int,
) -> list[bool]:
    """Whether any row of each candidate (or its manifest entry) flags it a baseline."""
    column = frame["is_baseline"]
    if column.dtype == bool:
        flags = gather(column.to_numpy())
    else:
        codes, cats = codes_of(column)
        table = np.array([truthy(v) for v in cats] + [False], dtype=bool)
        flags = table[gather(codes)]
    out = np.bincount(meta_cand[flags], minlength=n) > 0
    for k, member in enumerate(members):
        out[n - len(members) + k] = bool(member.get("is_baseline"))
    return out.tolist()


def judge_directions(rows: PhaseRows, known: Mapping[str, bool],
                     direction: Callable[[Any, Any, Mapping[str, bool]], bool | None]) -> dict[str, bool]:
    """Each found judge's direction when no configuration gives one: its column's in the
    competition (of the judge's last row), else higher is better."""
    return {key: direction(*rows.last_pair[k], known) is not False for k, key in enumerate(rows.keys)}
