"""A phase of the canonical long table as integer codes, and its score matrix by indexing.

:func:`phase_rows` reads the rows of one phase as codes (candidate, judge) with the judge
keys computed once per distinct (task, metric); :func:`pivot` puts their scores into the
candidates x judges array by direct indexing and gathers each candidate's metadata
(participant, submission time, baseline flag) with array operations. No step loops over
rows in Python, and the per-row arrays are the table's own codes where they can be (a
phase of 20 candidates x 471,033 per-sample judges is 9.4 million rows: each int64 copy
of a column is 75 MB). :func:`metascore.leaderboard.phases.phase_matrix` says what the
matrix holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..config import JudgeConfig, judge_key
from ..errors import InputError, closest_choice, did_you_mean
from ..readers.rows import cell_truth
from ..readers.table import CHUNK, codes_of, first_index, last_index
from ..matrix import ScoreMatrix
from ..readers.score_table import ScoreTable, Unscored

__all__ = ["PhaseRows", "phase_rows", "phase_pairs", "table_pairs", "pivot", "judge_directions",
           "is_missing", "truthy"]


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
    """Whether an ``is_baseline`` cell says yes (:func:`~metascore.readers.rows.cell_truth`;
    a text it does not know says no, another value is true when it is nonzero)."""
    if is_missing(value):
        return False
    said = cell_truth(value)
    return (not isinstance(value, str) and bool(value)) if said is None else said


def _text_codes(series: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Codes of a column read as text (``str`` of each value: values with one text share a
    code; a missing cell reads ``str(nan)``, as ``astype(str)`` does). The column's own
    codes when its categories are distinct texts already."""
    codes, cats = codes_of(series)
    texts = [str(c) for c in cats]
    if len(set(texts)) == len(texts) and (not len(codes) or codes.min() >= 0):
        return codes, texts
    merged, names = pd.factorize(np.asarray(texts + [str(math.nan)], dtype=object))
    return merged.astype(np.int32)[codes], list(names)  # code -1 reads the appended "nan"


def _pairs(frame: pd.DataFrame, pos: np.ndarray | None) -> tuple[np.ndarray, list[tuple[Any, Any]]]:
    """Each row's (task, metric) pair as a code (rows ``pos`` of the table, or all), and the
    pairs' (task, metric) by code (a missing cell reads NaN). Codes follow the categories'
    order; the table's own task codes when they say it all (one metric: a wide file)."""
    task, tasks = codes_of(frame["task"])
    metric, metrics = codes_of(frame["metric"])
    if pos is not None:
        task, metric = task[pos], metric[pos]
    if len(metrics) == 1 and len(task) and task.min() >= 0 and metric.min() >= 0:
        combined, size = task, len(tasks)
        decode: Callable[[int], tuple[Any, Any]] = lambda c: (tasks[c], metrics[0])  # noqa: E731
    else:
        width = len(metrics) + 1
        combined = (task.astype(np.int64) + 1) * width + (metric.astype(np.int64) + 1)
        size = (len(tasks) + 1) * width

        def decode(c: int) -> tuple[Any, Any]:
            t, m = divmod(c, width)
            return (tasks[t - 1] if t > 0 else math.nan, metrics[m - 1] if m > 0 else math.nan)
    if size > 4 * len(combined) + (1 << 20):  # sparse codes: hash them
        pair, uniq = pd.factorize(combined)
        return pair, [decode(c) for c in uniq.tolist()]
    used = np.zeros(size, dtype=bool)
    used[combined] = True
    if used.all():
        return combined, [decode(c) for c in range(size)]
    remap = (np.cumsum(used) - 1).astype(np.int32)
    return remap[combined], [decode(c) for c in np.flatnonzero(used).tolist()]


def table_pairs(frame: pd.DataFrame) -> list[tuple[Any, Any]]:
    """The distinct (task, metric) pairs of the whole table."""
    return _pairs(frame, None)[1]


def phase_pairs(frame: pd.DataFrame, phase: str) -> list[tuple[Any, Any]]:
    """The distinct (task, metric) pairs of the rows of ``phase``."""
    mask = (frame["phase"] == phase).to_numpy(dtype=bool)
    return _pairs(frame, None if mask.all() else np.flatnonzero(mask))[1]


@dataclass(frozen=True)
class PhaseRows:
    """The rows of one phase of the table, as codes.

    ``pos``: the rows' positions in the table (``None``: every row); ``cand``: each row's
    candidate code into ``candidates``; ``judge``: each row's judge code into ``keys``;
    ``last_pair``/``first_task``: the (task, metric) of the last row of each judge and the
    task of its first (two pairs may share a key: ``("a/b", "")`` and ``("a", "b")``);
    ``tasks``: the phase's tasks, sorted.
    """

    pos: np.ndarray | None
    cand: np.ndarray
    candidates: list[str]
    judge: np.ndarray
    keys: list[str]
    last_pair: list[tuple[Any, Any]]
    first_task: list[Any]
    tasks: list[Any]

    def take(self, column: np.ndarray) -> np.ndarray:
        """The phase's rows of a column (one entry per table row); a view when the phase is
        the whole table."""
        return column if self.pos is None else column[self.pos]

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
    pair, pairs = _pairs(frame, pos)
    aliases = [j for j in judges or () if j.title and j.title != j.metric and j.phase in (None, phase)]
    keys, raw_pairs, judge_of_pair = _judge_keys(pairs, aliases)
    judge, last_pair, first_task = _row_judges(pair, judge_of_pair, raw_pairs, len(keys), n)
    cand, candidates = _text_codes(frame["candidate"])
    rows = PhaseRows(
        pos=pos, cand=cand if pos is None else cand[pos], candidates=candidates, judge=judge,
        keys=keys, last_pair=last_pair, first_task=first_task,
        tasks=sorted({t for t, _ in raw_pairs}),
    )
    if judges is not None:
        _check_judges(rows, judges, phase, raw_pairs)
    return rows


def _judge_keys(pairs: list[tuple[Any, Any]], aliases: list[JudgeConfig],
                ) -> tuple[list[str], list[tuple[Any, Any]], np.ndarray]:
    """The judge keys of the (task, metric) ``pairs``, the pairs as the judges read them (a
    metric named by a judge's column title, in ``aliases``, read as its metric) and each
    pair's code into the keys."""
    texts = [str(t) for t, m in pairs] if not aliases and all(m == "" for _, m in pairs) else None
    if texts is not None and len(set(texts)) == len(texts):  # a wide file: the tasks are the keys
        return texts, pairs, np.arange(len(pairs), dtype=np.int32)
    index: dict[str, int] = {}
    judge_of_pair = np.empty(len(pairs), dtype=np.int32)
    raw_pairs = []
    for k, (t, raw) in enumerate(pairs):
        m = raw
        for j in aliases:  # each matches the column as read; the last one wins
            if t == j.task and raw == j.title:
                m = j.metric
        raw_pairs.append((t, m))
        judge_of_pair[k] = index.setdefault(judge_key(str(t), str(m)), len(index))
    return list(index), raw_pairs, judge_of_pair


def _row_judges(pair: np.ndarray, judge_of_pair: np.ndarray, raw_pairs: list[tuple[Any, Any]],
                n_keys: int, n: int) -> tuple[np.ndarray, list[tuple[Any, Any]], list[Any]]:
    """Each of the ``n`` rows' judge code (from its ``pair`` code), and each judge's
    (task, metric) of its last row and task of its first."""
    if n_keys == len(raw_pairs):  # one pair per key: the pairs are the judges
        judge = pair if (judge_of_pair == np.arange(len(raw_pairs))).all() else judge_of_pair[pair]
        return judge, raw_pairs, [t for t, _ in raw_pairs]
    # keys shared by pairs: the last row decides the pair, the first the task
    last, first = last_index(pair, len(raw_pairs)), first_index(pair, len(raw_pairs))
    last_pair: list[tuple[Any, Any]] = [("", "")] * n_keys
    first_task: list[Any] = [None] * n_keys
    last_row, first_row = [-1] * n_keys, [n] * n_keys
    for k, (p, j) in enumerate(zip(raw_pairs, judge_of_pair.tolist())):
        if last[k] > last_row[j]:
            last_row[j], last_pair[j] = int(last[k]), p
        if first[k] < first_row[j]:
            first_row[j], first_task[j] = int(first[k]), p[0]
    return judge_of_pair[pair], last_pair, first_task


def _check_judges(rows: PhaseRows, judges: tuple[JudgeConfig, ...], phase: str,
                  raw_pairs: list[tuple[Any, Any]]) -> None:
    """Some configured judge applies to ``phase``, and each that does has scores there."""
    mine = [j for j in judges if j.phase in (None, phase)]
    if not mine:
        raise InputError(f"no configured judge applies to phase {phase!r}.")
    known = set(rows.keys)
    for j in mine:
        if j.key not in known:
            found = rows.found()
            raise InputError(
                f"judge {j.key!r}: task {j.task!r}"
                + (f" with metric {j.metric!r}" if j.metric else "")
                + f" has no score in phase {phase!r}"
                f"{closest_judge(j, [(judge_key(str(t), str(m)), str(t), str(m)) for t, m in raw_pairs])}; "
                f"judges found are {found} (tasks {rows.tasks})."
            )


def closest_judge(judge: JudgeConfig, found: Sequence[tuple[str, str, str]]) -> str:
    """The "did you mean" of a judge with no score, among ``found`` (key, task, metric): a
    metric of its own task when that task has scores (``Final Task/ave_score`` is not
    ``Final Task/bac_selection`` for sharing the task), else the closest key."""
    same_task = {str(m): key for key, t, m in found if t == judge.task}
    if same_task and judge.metric:
        close = closest_choice(judge.metric, same_task)
        return "" if close is None else f" (did you mean {same_task[close]!r}?)"
    return did_you_mean(judge.key, [key for key, _, _ in found])


def _mapped(codes: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``table[codes]``, or ``codes`` itself when ``table`` maps every code to itself."""
    if len(table) and (table == np.arange(len(table))).all():
        return codes
    return table[codes]


def pivot(
    table: ScoreTable, rows: PhaseRows, phase: str, keys: Sequence[str], higher: Sequence[bool],
    weights: Sequence[float], baselines: Sequence[str], order: Mapping[str, float] | None = None,
) -> tuple[ScoreMatrix, dict[str, str]]:
    """The matrix of the phase on the judges ``keys`` (every key is one of ``rows.keys``),
    and why each candidate without a score on them has none (see ``phase_matrix``);
    ``order``: each candidate's place in submission order, when known (unlisted: last)."""
    frame = table.frame
    where = {k: i for i, k in enumerate(rows.keys)}
    col, sel = _columns(rows, where, keys)

    def pick(values: np.ndarray) -> np.ndarray:
        return values if sel is None else values[sel]

    col = pick(col)
    cand = pick(rows.cand)
    values = pick(rows.take(frame["value"].to_numpy()))
    numeric = values.dtype.kind in "fiu"
    if numeric:
        values = values.astype(float, copy=False)
    _check_scored(values, col, keys, lambda key: rows.first_task[where[key]], phase)

    # candidates: those with a score row, in order of first appearance, then the phase's
    # other submissions (rows on other columns only, then runs that all failed)
    present = _by_first_row(cand, len(rows.candidates))
    why, extra_codes, extra_rows, members = _every_submission(table, rows, present, phase)
    row_of = np.full(len(rows.candidates), -1, dtype=np.int32)
    row_of[present] = np.arange(len(present))
    row_of[extra_codes] = np.arange(len(present), len(present) + len(extra_codes))
    names = [rows.candidates[c] for c in present.tolist() + extra_codes] + [str(m.candidate) for m in members]
    ci = _mapped(cand, row_of)
    n, m = len(names), len(keys)
    meta = _Meta(frame, rows, pick, ci, np.asarray(extra_rows, dtype=np.int64), members, n, names, phase)
    participants = meta.values("participant")
    times = meta.values("submitted_at")
    flagged = meta.flags()
    listed = set(baselines)
    base = [c for c, flag, p in zip(names, flagged, participants)
            if flag or c in listed or p in listed]
    try:
        _check_once(ci, col, n, m, names, keys)
        matrix = ScoreMatrix.from_array(
            _grid(ci, col, values, (n, m), len(present)), names, list(keys),
            higher_is_better=list(higher), weights=list(weights),
            participants=[None if p is None else str(p) for p in participants],
            submitted_at=times, baselines=base,
            submission_order=None if order is None else [order.get(c, math.inf) for c in names],
        )
    except InputError as exc:
        raise InputError(f"phase {phase!r}: {exc}") from None
    return matrix, why


def _columns(rows: PhaseRows, where: Mapping[str, int], keys: Sequence[str],
             ) -> tuple[np.ndarray, np.ndarray | None]:
    """Each phase row's column among ``keys`` (-1: not a judge), and the positions of the
    rows on a judge (None: every row)."""
    col_of = np.full(len(rows.keys), -1, dtype=np.int32)
    for c, key in enumerate(keys):
        col_of[where[key]] = c
    col = _mapped(rows.judge, col_of)
    return col, None if (col_of >= 0).all() else np.flatnonzero(col >= 0)


def _check_scored(values: np.ndarray, col: np.ndarray, keys: Sequence[str],
                  first_task: Callable[[str], Any], phase: str) -> None:
    """Every judge has a score for some candidate (the error names the first without, and
    the task of its first row)."""
    if values.dtype.kind == "f":
        scored_rows = ~np.isnan(values)
    else:
        scored_rows = pd.to_numeric(pd.Series(values), errors="coerce").notna().to_numpy()
    scored = np.zeros(len(keys), dtype=bool)
    scored[col[scored_rows]] = True
    if not scored.all():
        key = keys[int(np.flatnonzero(~scored)[0])]
        raise InputError(
            f"task {first_task(key)!r} (judge {key!r}) has no score for any candidate in phase {phase!r}."
        )


def _by_first_row(cand: np.ndarray, n_codes: int) -> np.ndarray:
    """The candidate codes that have a row, in order of their first row."""
    first = first_index(cand, n_codes)
    present = np.flatnonzero(first < len(cand))
    return present[np.argsort(first[present], kind="stable")]


def _grid(ci: np.ndarray, col: np.ndarray, values: np.ndarray, shape: tuple[int, int],
          n_present: int) -> np.ndarray:
    """The candidates x judges array of ``values`` at (``ci``, ``col``), empty cells NaN (the
    candidates after the first ``n_present`` have no score)."""
    numeric = values.dtype.kind == "f"
    grid = np.full(shape, np.nan) if numeric else np.full(shape, None, dtype=object)
    if not numeric:
        grid[n_present:, 0] = np.nan
    for a in range(0, len(ci), CHUNK):
        grid[ci[a:a + CHUNK], col[a:a + CHUNK]] = values[a:a + CHUNK]
    return grid


def _check_once(ci: np.ndarray, col: np.ndarray, n: int, m: int, names: list[str],
                keys: Sequence[str]) -> None:
    """One score per (candidate, judge); the error names the first one given twice."""
    seen = np.zeros((n, m), dtype=bool)
    for a in range(0, len(ci), CHUNK):
        seen[ci[a:a + CHUNK], col[a:a + CHUNK]] = True
    if int(np.count_nonzero(seen)) == len(ci):
        return
    linear = ci.astype(np.int64) * m + col
    row = int(np.flatnonzero(pd.Series(linear).duplicated().to_numpy())[0])
    raise InputError(f"candidate {names[ci[row]]!r} has more than one score for judge "
                     f"{keys[col[row]]!r}.")


def _every_submission(
    table: ScoreTable, rows: PhaseRows, present: np.ndarray, phase: str,
) -> tuple[dict[str, str], list[int], list[int], list[Unscored]]:
    """The submissions of the phase with no score on a judge: why each has none, the codes
    of those with rows on other columns and the position of each one's first row (in order
    of first appearance), and the manifest entries of those whose every run failed."""
    has = np.zeros(len(rows.candidates), dtype=bool)
    has[present] = True
    why: dict[str, str] = {}
    codes: list[int] = []
    firsts: list[int] = []
    if not has.all():
        absent = np.flatnonzero(~has[rows.cand])  # phase rows of candidates without a score
        own = rows.cand[absent]
        order = np.argsort(own, kind="stable")
        own, at = own[order], absent[order]
        starts = np.flatnonzero(np.r_[True, own[1:] != own[:-1]]) if len(own) else np.empty(0, int)
        stops = np.r_[starts[1:], len(own)].astype(int)
        for first_at, code, start, stop in sorted(zip(at[starts].tolist(), own[starts].tolist(),
                                                      starts.tolist(), stops.tolist())):
            columns = [rows.keys[j] for j in pd.unique(rows.judge[at[start:stop]])]
            shown = ", ".join(columns[:3]) + (f" and {len(columns) - 3} more" if len(columns) > 3 else "")
            why[rows.candidates[code]] = (
                f"its scores are for {shown}, "
                f"{'which is not a judge' if len(columns) == 1 else 'none of which is a judge'}")
            codes.append(code)
            firsts.append(first_at if rows.pos is None else int(rows.pos[first_at]))
    failures: dict[str, list[str]] = {}
    for f in table.failed:
        if f.phase == phase:
            failures.setdefault(f.candidate, []).append(f"task {f.task!r}: {f.reason}" if f.task else f.reason)
    names = {rows.candidates[c] for c in present.tolist()}
    members: list[Unscored] = []
    for member in table.unscored:
        cand = str(member.candidate)
        if member.phase != phase or cand in names or cand in why:
            continue
        runs = failures.get(cand) or ["no scores"]
        more = f" (and {len(runs) - 1} more)" if len(runs) > 1 else ""
        why[cand] = f"every run failed: {runs[0]}{more}"
        members.append(member)
    return why, codes, firsts, members


class _Meta:
    """Each candidate's metadata, from its rows: the score rows (``pick`` of the phase's
    rows, candidate ``ci``), the first row of each submission without a score
    (``extra_rows`` of the table, candidates after the scored ones), then the manifest
    entries of the runs that all failed (the last candidates)."""

    def __init__(self, frame: pd.DataFrame, rows: PhaseRows, pick: Callable[[np.ndarray], np.ndarray],
                 ci: np.ndarray, extra_rows: np.ndarray, members: list[Unscored], n: int,
                 names: list[str], phase: str) -> None:
        self.frame, self.rows, self.pick, self.ci = frame, rows, pick, ci
        self.extra_rows, self.members, self.n, self.names, self.phase = extra_rows, members, n, names, phase
        self.first_extra = n - len(members) - len(extra_rows)

    def _column(self, column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A table column at the score rows (a view when it can be) and at the extra rows."""
        return self.pick(self.rows.take(column)), column[self.extra_rows]

    def values(self, what: str) -> list[Any]:
        """Each candidate's one non-missing ``what`` (None when it has none); two different
        values for one candidate are an error."""
        codes, cats = codes_of(self.frame[what])
        values = list(cats) + [getattr(m, what) for m in self.members]
        missing = np.array([is_missing(v) for v in values] + [True], dtype=bool)
        out: list[Any] = [None] * self.n
        if missing.all():
            return out
        text = np.asarray(pd.factorize(np.asarray([str(v) for v in values] + ["\0"], dtype=object))[0])
        main, extra = self._column(codes)
        size = len(values)
        parts_cand, parts_code = [], []
        for cand, code in ((self.ci, main), (np.arange(self.first_extra, self.first_extra + len(extra)), extra),
                           (np.arange(self.n - len(self.members), self.n), np.arange(len(cats), size))):
            code = np.where(code < 0, size, code) if code.size and code.min() < 0 else code
            given = ~missing[code]
            if given.all():
                parts_cand.append(cand)
                parts_code.append(code)
            elif given.any():
                parts_cand.append(cand[given])
                parts_code.append(code[given])
        if not parts_cand:
            return out
        g_cand = np.concatenate(parts_cand) if len(parts_cand) > 1 else parts_cand[0]
        g_code = np.concatenate(parts_code) if len(parts_code) > 1 else parts_code[0]
        first = first_index(g_cand, self.n)
        has = np.flatnonzero(first < len(g_cand))
        first_code = np.zeros(self.n, dtype=g_code.dtype)
        first_code[has] = g_code[first[has]]
        other = np.flatnonzero(g_code != first_code[g_cand])  # equal codes are equal texts
        differs = other[text[g_code[other]] != text[first_code[g_cand[other]]]]
        if differs.size:
            bad_cands = np.unique(g_cand[differs])
            bad = int(bad_cands[np.argmin(first[bad_cands])])
            shown = [values[k] for k in g_code[g_cand == bad].tolist()]
            distinct = list(dict.fromkeys(str(v) for v in shown))
            raise InputError(
                f"phase {self.phase!r}: candidate {self.names[bad]!r} has several {what} values "
                f"{distinct}; candidate ids must be unique within a phase."
            )
        for c in has.tolist():
            out[c] = values[first_code[c]]
        return out

    def flags(self) -> list[bool]:
        """Whether any row of each candidate (or its manifest entry) flags it a baseline."""
        column = self.frame["is_baseline"]
        if column.dtype == bool:
            flags = column.to_numpy()
        else:
            codes, cats = codes_of(column)
            flags = np.array([truthy(v) for v in cats] + [False], dtype=bool)[codes]
        out = np.zeros(self.n, dtype=bool)
        if flags.any():
            main, extra = self._column(flags)
            out[self.ci[main]] = True
            out[np.arange(self.first_extra, self.first_extra + len(extra))[extra]] = True
        for k, member in enumerate(self.members):
            out[self.n - len(self.members) + k] = bool(member.is_baseline)
        return out.tolist()


def judge_directions(rows: PhaseRows, known: Mapping[str, bool],
                     direction: Callable[[Any, Any, Mapping[str, bool]], bool | None]) -> dict[str, bool]:
    """Each found judge's direction when no configuration gives one: its column's in the
    competition (of the judge's last row), else higher is better."""
    if not known:  # the competition says nothing: higher is better
        return dict.fromkeys(rows.keys, True)
    return {key: direction(*rows.last_pair[k], known) is not False for k, key in enumerate(rows.keys)}
