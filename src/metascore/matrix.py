"""The score matrix: candidates x judges, each judge with a direction and a weight.

A :class:`ScoreMatrix` is validated once, when it is built; everything downstream can rely
on it. Missing cells are ``NaN``. Directions are applied once, by :meth:`ScoreMatrix.oriented`
("higher is better" everywhere after that).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from .cells import MISSING_TOKENS, has_nan, has_strings, to_float_array
from .errors import InputError, did_you_mean
from .judge_groups import JudgeGroups, make_groups
from .sequences import IndexLabels, Repeated

__all__ = ["ScoreMatrix"]

def _labels(values: Iterable[Hashable], what: str) -> tuple[str, ...]:
    labels = tuple(map(str, values))
    if not isinstance(values, range) and len(set(labels)) != len(labels):
        seen: set[str] = set()
        for label in labels:
            if label in seen:
                raise InputError(
                    f"duplicate {what} label {label!r}; {what} labels must be unique."
                )
            seen.add(label)
    return labels


def _expand(spec: Any, labels: Sequence[str], what: str, default: Any, noun: str) -> list[Any]:
    """Expand a scalar, a sequence or a mapping keyed by label into one value per label.

    ``noun`` ("judge" or "candidate") names the labels in error messages.
    """
    if spec is None:
        return [default] * len(labels)
    if isinstance(spec, Mapping):
        known = labels if isinstance(labels, (IndexLabels, set, frozenset)) else set(labels)
        unknown = [k for k in spec if str(k) not in known]  # a set: linear in the judges
        if unknown:
            known = f"; {noun}s are {list(labels)}" if len(labels) <= 20 else ""
            raise InputError(
                f"{what} names unknown {noun} {unknown[0]!r}"
                f"{did_you_mean(unknown[0], labels)}{known}."
            )
        lookup = {str(k): v for k, v in spec.items()}
        return [lookup.get(label, default) for label in labels]
    if isinstance(spec, (str, bytes)) or not isinstance(spec, Iterable):
        return [spec] * len(labels)
    values = list(spec)
    if len(values) != len(labels):
        raise InputError(f"{what} has {len(values)} entries for {len(labels)} {noun}s.")
    return values


def _per_judge(spec: Any, judges: Sequence[str], what: str, default: Any) -> list[Any]:
    return _expand(spec, judges, what, default, "judge")


def _per_candidate(spec: Any, cands: Sequence[str], what: str, default: Any) -> list[Any]:
    return _expand(spec, cands, what, default, "candidate")


def _timestamp(value: Any, where: str) -> pd.Timestamp | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, str) and value.strip().lower() in MISSING_TOKENS:
        return None
    try:
        stamp = pd.Timestamp(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: submission time {value!r} is not a date/time.") from None
    if stamp is pd.NaT:
        return None
    if stamp.tzinfo is not None:
        stamp = stamp.tz_convert("UTC").tz_localize(None)
    return stamp


@dataclass(frozen=True, eq=False)
class ScoreMatrix:
    """Scores of ``n`` candidates on ``m`` judges (tasks, datasets, metrics, samples).

    Parameters
    ----------
    values : array of shape (n, m)
        Raw scores; ``NaN`` marks a missing cell.
    candidates, judges : sequences of str
        Unique labels.
    higher_is_better : sequence of bool
        Direction of each judge (a tuple; a :class:`Repeated` when they share one).
    weights : array of shape (m,)
        Weight of each judge, >= 0 (a larger weight is always a more important judge); a
        judge of weight 0 is shown, not counted: the missing-data policy and every method
        leave it out (:func:`metascore.missing.prepare`), the outputs show it.
    participants, submitted_at, is_baseline : tuples, one entry per candidate
        Candidate metadata used by tie-breaks, participant selection and baseline filtering.
    submission_order : tuple of float, one entry per candidate, or empty
        Each candidate's place in submission order (0 = earliest, ``inf`` = unknown) for
        the ``submitted_at`` tie-break, when the caller knows it (the leaderboard pipeline:
        :mod:`metascore.submission_order`); empty: from ``submitted_at``, then the number
        in a candidate id ``<owner>-<id>``.
    groups : JudgeGroups or None
        The judges' groups, for a ranking in two steps (:meth:`grouped`); None: one step.

    Use :meth:`from_array`, :meth:`from_frame` or :meth:`from_long` to build one; they
    validate the input and raise :class:`~metascore.errors.InputError` naming the
    offending candidate, judge and value.
    """

    values: np.ndarray
    candidates: tuple[str, ...]
    judges: tuple[str, ...]
    higher_is_better: Sequence[bool]
    weights: np.ndarray
    participants: tuple[str | None, ...] = field(default=())
    submitted_at: tuple[pd.Timestamp | None, ...] = field(default=())
    is_baseline: tuple[bool, ...] = field(default=())
    submission_order: tuple[float, ...] = field(default=())
    groups: JudgeGroups | None = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_array(
        cls,
        values: Any,
        candidates: Sequence[Hashable] | None = None,
        judges: Sequence[Hashable] | None = None,
        *,
        higher_is_better: bool | Sequence[bool] | Mapping[str, bool] = True,
        weights: float | Sequence[float] | Mapping[str, float] | None = None,
        participants: Mapping[str, str] | Sequence[str | None] | None = None,
        submitted_at: Mapping[str, Any] | Sequence[Any] | None = None,
        baselines: Collection[str] = (),
        allow_inf: bool | Collection[str] = False,
        submission_order: Mapping[str, float] | Sequence[float] | None = None,
    ) -> ScoreMatrix:
        """Build a matrix from a 2-D array-like (rows = candidates, columns = judges).

        A float64 numpy array is not copied: the matrix keeps a read-only view of it, so
        do not write into the array afterwards. Candidates and judges without labels are
        named ``"0", "1", ...`` (an :class:`IndexLabels`, built on demand).
        """
        raw = np.asarray(values, dtype=object if has_strings(values) else None)
        if raw.ndim != 2:
            raise InputError(
                f"a score matrix must be 2-D (candidates x judges); got {raw.ndim} dimension(s)."
            )
        n, m = raw.shape
        cands = IndexLabels(n) if candidates is None else _labels(candidates, "candidate")
        jdgs = IndexLabels(m) if judges is None else _labels(judges, "judge")
        if len(cands) != n or len(jdgs) != m:
            raise InputError(
                f"the score matrix has shape {raw.shape} but {len(cands)} candidate and "
                f"{len(jdgs)} judge labels were given."
            )
        if n == 0 or m == 0:
            raise InputError(
                f"the score matrix is empty ({n} candidates x {m} judges); nothing to rank."
            )
        if not isinstance(allow_inf, bool):
            spec = {j: True for j in allow_inf}
            allow_inf = np.array([bool(x) for x in _per_judge(spec, jdgs, "allow_inf", False)])
        # the labels' fields first: after the one pass over a large array, every small step
        # would miss the caches it flushed
        directions, signs = _directions(higher_is_better, jdgs)
        w = _weights(weights, jdgs)
        fields = dict(candidates=cands, judges=jdgs, higher_is_better=directions, weights=w,
                      **_candidate_fields(cands, participants, submitted_at, baselines, submission_order),
                      groups=None)
        array, complete, row_sums = to_float_array(raw, cands, jdgs, allow_inf)
        array.setflags(write=False)
        fields["values"] = array
        # Seed the cached properties with what validation already computed.
        fields["signs"] = signs
        if complete:
            fields["has_missing"] = False
        if row_sums is not None:
            row_sums.setflags(write=False)
            fields["row_sums"] = row_sums
        matrix = object.__new__(cls)  # every field validated above: the frozen __init__'s
        matrix.__dict__.update(fields)  # object.__setattr__ per field is not needed
        return matrix

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, **kwargs: Any) -> ScoreMatrix:
        """Build a matrix from a wide DataFrame: index = candidates, columns = judges.

        Keyword arguments are those of :meth:`from_array`.
        """
        if not isinstance(frame, pd.DataFrame):
            raise InputError(f"expected a pandas DataFrame; got {type(frame).__name__}.")
        numeric = all(isinstance(d, np.dtype) and d.kind in "fiu" for d in frame.dtypes)
        columns = frame.columns
        default = isinstance(columns, pd.RangeIndex) and columns.start == 0 and columns.step == 1
        return cls.from_array(
            frame.to_numpy(dtype=float if numeric else object),
            list(frame.index),
            None if default else list(columns),
            **kwargs,
        )

    @classmethod
    def from_long(
        cls,
        frame: pd.DataFrame,
        *,
        candidate: str = "candidate",
        judge: str = "judge",
        value: str = "value",
        **kwargs: Any,
    ) -> ScoreMatrix:
        """Build a matrix from a long DataFrame with one row per (candidate, judge) score.

        Candidates and judges keep their order of first appearance. A (candidate, judge)
        pair given twice is an error; a pair never given is missing.
        """
        for col in (candidate, judge, value):
            if col not in frame.columns:
                raise InputError(
                    f"the long table has no column {col!r}{did_you_mean(col, frame.columns)}; "
                    f"columns are {list(map(str, frame.columns))}."
                )
        ci, cands = _text_codes(frame[candidate])
        ji, jdgs = _text_codes(frame[judge])
        seen = np.zeros((len(cands), len(jdgs)), dtype=bool)
        seen[ci, ji] = True
        if int(np.count_nonzero(seen)) != len(ci):
            dup = pd.Series(ci.astype(np.int64) * len(jdgs) + ji).duplicated()
            row = int(np.flatnonzero(dup.to_numpy())[0])
            raise InputError(
                f"candidate {cands[ci[row]]!r} has more than one score for judge "
                f"{jdgs[ji[row]]!r}."
            )
        raw = frame[value].to_numpy()
        if raw.dtype.kind in "fiub" and raw.dtype.kind != "b":
            grid = np.full((len(cands), len(jdgs)), np.nan)
            grid[ci, ji] = raw
        else:  # text or objects: parsed cell by cell, with the cell named in errors
            grid = np.full((len(cands), len(jdgs)), None, dtype=object)
            grid[ci, ji] = frame[value].to_numpy(dtype=object)
        return cls.from_array(grid, cands, jdgs, **kwargs)

    def grouped(
        self,
        groups: Mapping[str, Sequence[str]] | None,
        weights: Mapping[str, float] | None = None,
        within: str | None = None,
        within_params: Mapping[str, Any] | None = None,
    ) -> ScoreMatrix:
        """This matrix with its judges in named groups, ranked in two steps by
        :func:`metascore.rank`: ``within`` (default: the ranking method) ranks the
        candidates inside each group, then the method ranks them across the groups, each
        group weighing ``weights[group]`` (default 1; 0: shown, not counted).

        ``groups`` maps each group to its judges; every judge is in exactly one group.
        ``None`` removes the groups. The judges' own weights count inside their group.
        """
        found = None if groups is None else make_groups(self.judges, groups, weights, within,
                                                        within_params)
        return dataclasses.replace(self, groups=found)

    # ------------------------------------------------------------------ views
    @property
    def shape(self) -> tuple[int, int]:
        return self.values.shape  # type: ignore[return-value]

    @property
    def n_candidates(self) -> int:
        return len(self.candidates)

    @property
    def n_judges(self) -> int:
        return len(self.judges)

    @cached_property
    def signs(self) -> np.ndarray:
        """+1 for higher-is-better judges, -1 for lower-is-better ones (read-only)."""
        signs = np.where(np.array(self.higher_is_better, dtype=bool), 1.0, -1.0)
        signs.setflags(write=False)
        return signs

    @cached_property
    def has_missing(self) -> bool:
        """Whether any cell is missing (computed once)."""
        return has_nan(self.values)

    @cached_property
    def row_sums(self) -> np.ndarray:
        """``values.sum(axis=1)``: each candidate's sum of raw scores, NaN when a cell is
        missing (read-only; computed once, by validation when it summed the rows)."""
        sums = self.values.sum(axis=1)
        sums.setflags(write=False)
        return sums

    @property
    def row_sums_known(self) -> bool:
        """Whether :attr:`row_sums` is already computed (no pass over the values to get it)."""
        return "row_sums" in self.__dict__

    def oriented(self) -> np.ndarray:
        """Scores with lower-is-better judges negated: higher is better everywhere.

        When every judge is higher-is-better this is the (read-only) values array itself.
        """
        signs = self.signs
        if (signs[0] if signs.strides == (0,) else signs.min()) > 0:  # all +1
            return self.values
        return self.values * self.signs

    def missing(self) -> np.ndarray:
        """Boolean mask of missing cells."""
        return np.isnan(self.values)

    def to_frame(self) -> pd.DataFrame:
        """Raw scores as a wide DataFrame (index = candidates, columns = judges)."""
        return pd.DataFrame(self.values, index=list(self.candidates), columns=list(self.judges))

    def index_of(self, candidate: str) -> int:
        try:
            return self.candidates.index(str(candidate))
        except ValueError:
            raise InputError(
                f"unknown candidate {candidate!r}{did_you_mean(candidate, self.candidates)}."
            ) from None

    def subset(
        self,
        candidates: Sequence[str] | np.ndarray | None = None,
        judges: Sequence[str] | np.ndarray | None = None,
    ) -> ScoreMatrix:
        """A matrix restricted to (and reordered by) the given candidates and judges.

        Labels or integer positions are accepted; positions may repeat (bootstrap
        resampling), in which case repeated labels get a ``#k`` suffix to stay unique.
        """
        ci = self._positions(candidates, self.candidates, "candidate")
        ji = self._positions(judges, self.judges, "judge")
        every = (judges is None or (len(ji) == self.n_judges
                                    and bool((ji == np.arange(self.n_judges)).all())))
        groups = self.groups
        if every:  # the same judges in the same order: keep their labels, share the weights
            values = self.values[ci]
            judge_labels: Sequence[str] = self.judges
            directions: Sequence[bool] = self.higher_is_better
            w = self.weights
        else:
            values = self.values[np.ix_(ci, ji)]
            judge_labels = _unique_labels([self.judges[j] for j in ji])
            directions = tuple(self.higher_is_better[j] for j in ji)
            w = self.weights[ji]
            w.setflags(write=False)
            groups = None if groups is None else groups.take(ji)
        values.setflags(write=False)
        return ScoreMatrix(
            values=values,
            candidates=_unique_labels([self.candidates[i] for i in ci]),
            judges=judge_labels,
            higher_is_better=directions,
            weights=w,
            participants=tuple(self.participants[i] for i in ci) if self.participants else (),
            submitted_at=tuple(self.submitted_at[i] for i in ci) if self.submitted_at else (),
            is_baseline=tuple(self.is_baseline[i] for i in ci) if self.is_baseline else (),
            submission_order=tuple(self.submission_order[i] for i in ci) if self.submission_order else (),
            groups=groups,
        )

    @staticmethod
    def _positions(sel: Any, labels: tuple[str, ...], what: str) -> np.ndarray:
        if sel is None:
            return np.arange(len(labels))
        arr = np.asarray(sel)
        if arr.dtype.kind in "iu":
            if arr.size and (arr.min() < -len(labels) or arr.max() >= len(labels)):
                raise InputError(f"{what} position out of range 0..{len(labels) - 1}.")
            return arr.astype(np.intp)
        lookup = {label: i for i, label in enumerate(labels)}
        out = []
        for label in map(str, sel):
            if label not in lookup:
                raise InputError(f"unknown {what} {label!r}{did_you_mean(label, labels)}.")
            out.append(lookup[label])
        return np.array(out, dtype=np.intp)

    def __repr__(self) -> str:
        groups = "" if self.groups is None else f", {len(self.groups.names)} groups"
        return (
            f"ScoreMatrix({self.n_candidates} candidates x {self.n_judges} judges, "
            f"{int(self.missing().sum())} missing{groups})"
        )


# ---------------------------------------------------------------------- helpers
def _text_codes(column: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Each cell's code and the distinct texts (``str`` of each value) in order of first
    appearance: one hash pass over the column, ``str`` once per distinct value."""
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    merged, texts = pd.factorize(np.asarray([str(u) for u in uniques], dtype=object))
    return merged[codes], list(texts)


def _directions(higher_is_better: bool | Sequence[bool] | Mapping[str, bool],
                judges: Sequence[str]) -> tuple[Sequence[bool], np.ndarray]:
    """Each judge's direction and sign (+1 higher is better, -1 lower; read-only)."""
    m = len(judges)
    if isinstance(higher_is_better, (bool, np.bool_)):
        return Repeated(bool(higher_is_better), m), _constant(1.0 if higher_is_better else -1.0, m)
    directions = tuple(
        bool(d) for d in _per_judge(higher_is_better, judges, "higher_is_better", True))
    signs = np.where(np.array(directions, dtype=bool), 1.0, -1.0)
    signs.setflags(write=False)
    return directions, signs


def _weights(weights: float | Sequence[float] | Mapping[str, float] | None,
             judges: Sequence[str]) -> np.ndarray:
    """Each judge's weight (read-only): one number for all of them, or one each; refused
    below 0, not finite, or 0 for every judge."""
    if weights is None or isinstance(weights, (int, float, np.number)):
        value = 1.0 if weights is None else float(weights)
        w = _constant(value, len(judges))
        bad: tuple[int, ...] | np.ndarray = () if math.isfinite(value) and value >= 0 else (0,)
    else:
        w = np.array([float(x) for x in _per_judge(weights, judges, "weights", 1.0)], dtype=float)
        bad = np.flatnonzero(~(np.isfinite(w) & (w >= 0)))
    if len(bad):
        j = bad[0]
        raise InputError(f"judge {judges[j]!r} has weight {float(w[j])!r}; weights must be "
                         ">= 0 (0: shown, not counted).")
    if not (w[0] if w.strides == (0,) else w.max()) > 0:
        raise InputError(f"every judge has weight 0 ({len(judges)} judges), so nothing would be "
                         "counted; give at least one judge a positive weight.")
    if w.flags.writeable:
        w.setflags(write=False)
    return w


def _candidate_fields(
    cands: Sequence[str], participants: Mapping[str, str] | Sequence[str | None] | None,
    submitted_at: Mapping[str, Any] | Sequence[Any] | None, baselines: Collection[str],
    submission_order: Mapping[str, float] | Sequence[float] | None,
) -> dict[str, tuple]:
    """The matrix's fields about each candidate: its participant, submission time, whether
    it is a baseline, and its place in the submission order."""
    n = len(cands)
    parts = (None,) * n if participants is None else tuple(
        None if p is None else str(p)
        for p in _per_candidate(participants, cands, "participants", None))
    times = (None,) * n if submitted_at is None else tuple(
        _timestamp(t, f"candidate {c!r}")
        for c, t in zip(cands, _per_candidate(submitted_at, cands, "submitted_at", None)))
    order = () if submission_order is None else tuple(
        float(x) for x in _per_candidate(submission_order, cands, "submission_order", math.inf))
    base = set(map(str, baselines))
    unknown = sorted(base - set(cands)) if base else []
    if unknown:
        raise InputError(
            f"baseline {unknown[0]!r} is not a candidate{did_you_mean(unknown[0], cands)}."
        )
    return dict(participants=parts, submitted_at=times,
                is_baseline=tuple(c in base for c in cands) if base else (False,) * n,
                submission_order=order)


def _constant(value: float, m: int) -> np.ndarray:
    """``m`` copies of ``value`` as a read-only view of one number (no allocation)."""
    return np.ndarray((m,), dtype=np.float64, buffer=np.float64(value).tobytes(), strides=(0,))


def _unique_labels(labels: list[str]) -> tuple[str, ...]:
    if len(set(labels)) == len(labels):
        return tuple(labels)
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        k = seen.get(label, 0)
        seen[label] = k + 1
        out.append(label if k == 0 else f"{label}#{k}")
    return tuple(out)
