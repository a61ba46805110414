"""The leaderboard model: from the canonical long table and a config to the published result.

Pure computation (no files, no prints). :func:`build_leaderboard` runs the pipeline once:

1. judges: one per (task, metric) of the config (or every one found, higher is better);
2. per phase: the score matrix of every submission, participant selection
   (:mod:`metascore.selection`), and the ranking with the configured method;
3. the final-phase filter against the development ranking (:mod:`metascore.filtering`);
4. the final ranking of the qualified candidates only; baselines shown, flagged, without a
   position; excluded candidates shown with their reason;
5. the pairwise margin matrix and Condorcet winner of the final pool;
6. how much to trust the final ranking (:class:`Analysis`): rank intervals, P(first) and
   groups by bootstrap over the judges, the judges' agreement and the ranking's stability;
7. the statistics that ``scores.json`` publishes, the provenance signature and an input
   summary.

The result, a frozen :class:`Leaderboard`, is rendered by :mod:`metascore.io.writers` and
:mod:`metascore.io.report`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .analysis import (
    JudgeAgreement,
    RankUncertainty,
    StabilityResult,
    judge_agreement,
    rank_uncertainty,
    stability,
)
from .config import STABILITY_Q, STABILITY_R, STATISTICS, Config, JudgeConfig, judge_key
from .errors import InputError, MetascoreError, did_you_mean
from .filtering import BaselineScore, Decision, FilterResult, filter_final
from .matrix import ScoreMatrix
from .pairwise import PairwiseCounts, condorcet_winner
from .ranking import Ranking
from .registry import Prepared, _version, prepare, rank
from .selection import Selection, participant_key, select_candidates
from .stats import fractional_ranks, kendall_tau_b

__all__ = [
    "Row", "Board", "Margins", "Analysis", "Leaderboard", "build_leaderboard", "phase_matrix",
]

#: ``progress(what, done, total)``: called while the bootstrap analyses run.
Progress = Callable[[str, int, int], None] | None

_TRUE = {"true", "1", "yes", "y", "t"}


@dataclass(frozen=True)
class Row:
    """One candidate on a board.

    ``position``/``rank``/``score`` are None for candidates that are shown but not ranked
    (baselines and excluded candidates on the final board). ``qualified`` is None on the
    development board and for baselines. ``values`` are the raw per-judge scores (None =
    missing) and ``judge_ranks`` the fractional per-judge ranks inside the ranked pool.
    ``rank_low``/``rank_high`` (the bootstrap rank interval), ``p_first`` (probability of
    being first) and ``group`` (1 = top group of inseparable candidates) are set on ranked
    rows when the rank uncertainty is computed (:class:`Analysis`), None otherwise.
    """

    candidate: str
    participant: str | None
    is_baseline: bool
    position: int | None
    rank: float | None
    score: float | None
    qualified: bool | None
    reason: str
    submitted_at: str | None
    values: Mapping[str, float | None]
    judge_ranks: Mapping[str, float | None]
    details: Mapping[str, float] = field(default_factory=dict)
    dev_position: int | None = None
    dev_score: float | None = None
    rank_low: float | None = None
    rank_high: float | None = None
    p_first: float | None = None
    group: int | None = None


@dataclass(frozen=True)
class Board:
    """The leaderboard of one phase: rows best first, then unranked rows."""

    phase: str
    judges: tuple[str, ...]
    higher_is_better: tuple[bool, ...]
    weights: tuple[float, ...]
    rows: tuple[Row, ...]
    not_selected: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def ranked(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.position is not None)


@dataclass(frozen=True)
class Margins:
    """Pairwise margins ``N(a, b) - N(b, a)`` of the ranked final pool (ranking order)."""

    candidates: tuple[str, ...]
    margins: np.ndarray
    condorcet_winner: str | None


@dataclass(frozen=True)
class Analysis:
    """How much to trust the final ranking, computed on the ranked final pool (SPEC 4).

    Attributes
    ----------
    uncertainty : RankUncertainty or None
        Bootstrap over the judges (``analysis.bootstrap`` resamples, ``ranking.seed``):
        per candidate a rank interval, P(first) and a group (also copied onto the rows).
    agreement : JudgeAgreement or None
        Kendall's W between the judges (tie-corrected) and the mean Spearman rho.
    stability : StabilityResult or None
        Kendall's W of ``q`` rankings of judge-resampled matrices, ``r`` repetitions.
    settings : dict
        ``bootstrap``, ``level``, ``seed``, ``stability_q``, ``stability_r``.
    notes : tuple of str
        Why a part was not computed (disabled, too few candidates or judges, ...).
    """

    settings: Mapping[str, Any] = field(default_factory=dict)
    uncertainty: RankUncertainty | None = None
    agreement: JudgeAgreement | None = None
    stability: StabilityResult | None = None
    notes: tuple[str, ...] = ()

    @property
    def kendall_w(self) -> float | None:
        return None if self.agreement is None else self.agreement.w

    @property
    def stability_w(self) -> float | None:
        if self.stability is None:
            return None
        return self.stability.mean[self.stability.methods[0]]

    def why_missing(self, what: str) -> str:
        """The note explaining why ``what`` (``"rank uncertainty"``, ``"judge agreement"``,
        ``"stability"``) was not computed."""
        for note in self.notes:
            if what in note:
                return note.rstrip(".")
        return f"{what} was not computed"


@dataclass(frozen=True)
class Leaderboard:
    """Everything the meta-scoring program publishes.

    Attributes
    ----------
    final : Board
        The ranked board: the final phase, or the development phase when no final phase
        is configured.
    development : Board or None
        The development board used by the filter (None without a final phase).
    filter : FilterResult or None
    margins : Margins or None
        None when fewer than two candidates are ranked.
    statistics : dict
        Every statistic of :data:`metascore.config.STATISTICS`; None when undefined.
    scores : dict
        ``scores.json`` content: config key -> finite number (undefined ones omitted).
    signature, config, input_summary : dict
        Provenance: how the ranking was made, the effective configuration, what was read.
    messages : tuple of str
        Warnings an organizer must see (nobody qualified, omitted score keys, ...).
    analysis : Analysis
        Rank uncertainty, judge agreement and stability of the final ranking.
    """

    final: Board
    development: Board | None
    filter: FilterResult | None
    margins: Margins | None
    statistics: Mapping[str, float | None]
    scores: Mapping[str, float]
    signature: Mapping[str, Any]
    config: Mapping[str, Any]
    input_summary: Mapping[str, Any]
    messages: tuple[str, ...] = ()
    analysis: Analysis = field(default_factory=Analysis)

    @property
    def winner(self) -> str | None:
        ranked = self.final.ranked
        return ranked[0].candidate if ranked else None


# ---------------------------------------------------------------------- matrices
def phase_matrix(
    frame: pd.DataFrame,
    phase: str,
    judges: tuple[JudgeConfig, ...] | None,
    baselines: tuple[str, ...] = (),
) -> ScoreMatrix:
    """The score matrix of every submission of ``phase`` in the canonical long table.

    Judges are the configured ones that apply to ``phase`` (each must have at least one
    score) or, without a config, every (task, metric) found (sorted by key), higher is
    better. A candidate
    is a baseline when its id or participant is listed in ``baselines`` or any of its rows
    is flagged ``is_baseline``.
    """
    rows = frame[frame["phase"] == phase]
    if rows.empty:
        raise InputError(f"phase {phase!r} has no scores.")
    rows = rows.assign(judge=[judge_key(t, m) for t, m in zip(rows["task"], rows["metric"])])
    found = sorted(pd.unique(rows["judge"]))
    if judges is None:
        keys, higher, weights = found, [True] * len(found), [1.0] * len(found)
    else:
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
        keys = [j.key for j in mine]
        higher = [j.higher_is_better for j in mine]
        weights = [j.weight for j in mine]
        rows = rows[rows["judge"].isin(keys)]
    values = pd.to_numeric(rows["value"], errors="coerce")
    present = rows.loc[values.notna().to_numpy(), "judge"]
    for key in keys:
        if key not in set(present):
            task = rows.loc[rows["judge"] == key, "task"].iloc[0]
            raise InputError(
                f"task {task!r} (judge {key!r}) has no score for any candidate in phase {phase!r}."
            )

    participants, times, base = {}, {}, []
    listed = set(baselines)
    for cand, group in rows.groupby("candidate", sort=False):
        part = _unique_or_error(group["participant"], cand, "participant", phase)
        participants[cand] = part
        times[cand] = _unique_or_error(group["submitted_at"], cand, "submitted_at", phase)
        if cand in listed or part in listed or any(_truthy(v) for v in group["is_baseline"]):
            base.append(cand)
    try:
        matrix = ScoreMatrix.from_long(
            rows,
            higher_is_better=dict(zip(keys, higher)),
            weights=dict(zip(keys, weights)),
            participants=participants,
            submitted_at=times,
            baselines=base,
        )
    except InputError as exc:
        raise InputError(f"phase {phase!r}: {exc}") from None
    return matrix.subset(judges=keys)


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


# ---------------------------------------------------------------------- building
def build_leaderboard(
    frame: pd.DataFrame, config: Config, *, source: Mapping[str, Any] | None = None,
    progress: Progress = None,
) -> Leaderboard:
    """Run selection, ranking and filtering on the canonical long table (module docstring).

    ``progress(what, done, total)`` is called while the bootstrap analyses run.

    Raises :class:`~metascore.errors.MetascoreError` on unusable data (with one sentence
    naming the phase, task, candidate or key), including when nobody qualifies and
    ``filter.on_empty`` is ``error``.
    """
    frame = _normalize(frame)
    _check_phases(frame, config)
    _check_baselines(frame, config.baselines)
    rc = config.ranking
    rank_fn = functools.partial(
        rank, method=rc.method, missing=rc.missing, seed=rc.seed, tie_break=rc.tie_break,
        **dict(rc.params),
    )
    dev_name, final_name = config.phases.development, config.phases.final
    messages: list[str] = []

    dev_sel = _select(frame, dev_name, config, config.selection.development, rank_fn)
    if final_name is None:
        pool = dev_sel.matrix
        keep = [c for c, b in zip(pool.candidates, pool.is_baseline) if not b]
        board, ranking, prepared = _final_board(
            dev_name, pool, keep, {}, {}, dev_sel.dropped, rank_fn
        )
        development = filt = None
        dev_ranking = None
    else:
        dev_ranking = _in_phase(rank_fn, dev_name)(dev_sel.matrix)
        development = _dev_board(dev_name, dev_sel.matrix, dev_ranking, rc.missing, dev_sel.dropped)
        final_sel = _select(frame, final_name, config, config.selection.final, rank_fn)
        fc = config.filter
        filt = filter_final(
            dev_ranking, final_sel.matrix, rule=fc.rule, beat=fc.beat, k=fc.k,
            rank_fn=_in_phase(rank_fn, final_name), dev_phase=dev_name,
        )
        if filt.message:
            if fc.on_empty == "error":
                raise InputError(f"{filt.message.rstrip('.')} (filter.on_empty: error).")
            messages.append(filt.message)
        decisions = {d.candidate: d for d in filt.decisions}
        board, ranking, prepared = _final_board(
            final_name, final_sel.matrix, list(filt.qualified), decisions,
            _baseline_dev(final_sel.matrix, filt.baselines), final_sel.dropped, rank_fn,
        )
    margins = _margins(ranking, prepared)
    analysis = _analysis(config, ranking, len(board.ranked), final_name or dev_name, progress)
    if analysis.uncertainty is not None:
        board = _with_intervals(board, analysis.uncertainty)
    stats = _statistics(board, ranking, filt, margins, dev_ranking, analysis)
    scores = {}
    for key, stat in config.scores.items():
        value = stats[stat]
        if value is None:
            messages.append(f"scores.json omits {key!r}: statistic {stat!r} is undefined "
                            f"({_why_undefined(stat, board, filt, analysis)}).")
            continue
        if not math.isfinite(value):
            raise MetascoreError(
                f"scores.json key {key!r}: statistic {stat!r} is {value!r}, not a finite "
                "number; refusing to write it."
            )
        scores[key] = float(value)
    return Leaderboard(
        final=board,
        development=development,
        filter=filt,
        margins=margins,
        statistics=stats,
        scores=scores,
        signature=_signature(config, ranking),
        config=config.to_dict(),
        input_summary=_summary(frame, config, source, board, development),
        messages=tuple(messages) + board.notes,
        analysis=analysis,
    )


def _select(
    frame: pd.DataFrame, phase: str, config: Config, policy: str,
    rank_fn: Callable[[ScoreMatrix], Ranking],
) -> Selection:
    """The phase's matrix without late submissions, then participant selection."""
    matrix = phase_matrix(frame, phase, config.judges, config.baselines)
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
    sel = select_candidates(matrix, policy, _in_phase(rank_fn, phase))
    dropped = {**late, **sel.dropped}
    return Selection(sel.matrix, {c: dropped[c] for c in sorted(dropped)})


def _normalize(frame: pd.DataFrame) -> pd.DataFrame:
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
    out["metric"] = out["metric"].map(lambda m: "" if _is_missing(m) else str(m)) \
        if "metric" in out.columns else ""
    for col in ("phase", "candidate", "task"):
        out[col] = out[col].astype(str)
    out["participant"] = out["participant"].map(lambda p: None if _is_missing(p) else str(p))
    return out


def _check_phases(frame: pd.DataFrame, config: Config) -> None:
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


def _check_baselines(frame: pd.DataFrame, baselines: tuple[str, ...]) -> None:
    names = set(frame["candidate"]) | {p for p in frame["participant"] if p is not None}
    for b in baselines:
        if b not in names:
            raise InputError(
                f"baseline {b!r} (from `baselines`) is neither a candidate nor a participant in "
                f"the scores{did_you_mean(b, sorted(names))}."
            )


def _in_phase(rank_fn: Callable[[ScoreMatrix], Ranking], phase: str) -> Callable[[ScoreMatrix], Ranking]:
    """``rank_fn`` whose errors name the phase."""
    def ranked(matrix: ScoreMatrix) -> Ranking:
        try:
            return rank_fn(matrix)
        except MetascoreError as exc:
            raise type(exc)(f"phase {phase!r}: {exc}") from None
    return ranked


def _dev_board(
    phase: str, matrix: ScoreMatrix, ranking: Ranking, missing: str, dropped: Mapping[str, str]
) -> Board:
    prepared = prepare(matrix, missing)
    rows = _ranked_rows(matrix, ranking, prepared, qualified=None)
    rows += _unranked_rows(matrix, [c for c in matrix.candidates if c not in ranking.candidates],
                           {c: f"excluded by the missing-data policy: {why}"
                            for c, why in ranking.excluded_candidates.items()}, {}, {})
    return _board(phase, matrix, rows, dropped, _notes(ranking))


def _baseline_dev(final: ScoreMatrix, baselines: Sequence[BaselineScore]) -> dict[str, float]:
    """Development score of each baseline, in development order, keyed by its development
    id and by the final candidate it matches: the same id or, as the filter matches
    candidates, the same participant when that participant has one baseline (Codabench gives
    a migrated final-phase submission a new id)."""
    by_part: dict[str, list[BaselineScore]] = {}
    for b in baselines:
        by_part.setdefault(b.participant or b.candidate, []).append(b)
    ids = {b.candidate for b in baselines}
    matched: dict[str, list[str]] = {}
    for i, cand in enumerate(final.candidates):
        if cand in ids or not (final.is_baseline and final.is_baseline[i]):
            continue
        same = by_part.get(participant_key(final, i), [])
        if len(same) == 1:
            matched.setdefault(same[0].candidate, []).append(cand)
    out: dict[str, float] = {}
    for b in baselines:
        out.setdefault(b.candidate, b.score)
        for cand in matched.get(b.candidate, []):
            out.setdefault(cand, b.score)
    return out


def _final_board(
    phase: str,
    matrix: ScoreMatrix,
    qualified: list[str],
    decisions: Mapping[str, Decision],
    baseline_dev: Mapping[str, float],
    dropped: Mapping[str, str],
    rank_fn: Callable[[ScoreMatrix], Ranking],
) -> tuple[Board, Ranking | None, Prepared | None]:
    ranking = prepared = None
    notes: tuple[str, ...] = ()
    rows: list[Row] = []
    if len(qualified) >= 2:
        pool = matrix.subset(candidates=qualified)
        ranking = _in_phase(rank_fn, phase)(pool)
        prepared = prepare(pool, ranking.missing)
        rows = _ranked_rows(pool, ranking, prepared, qualified=True, decisions=decisions)
        notes = _notes(ranking)
    elif len(qualified) == 1:
        i = matrix.candidates.index(qualified[0])
        rows = [_row(matrix, i, position=1, rank=1.0, score=None, qualified=True,
                     reason=_reason(decisions, qualified[0], "only candidate; wins by default"),
                     decision=decisions.get(qualified[0]))]
        notes = (f"only one candidate qualified ({qualified[0]!r}): it wins by default and "
                 "has no ranking score.",)
    reasons = {c: f"excluded by the missing-data policy: {why}"
               for c, why in (ranking.excluded_candidates.items() if ranking else ())}
    shown = {r.candidate for r in rows}
    base = [c for c, b in zip(matrix.candidates, matrix.is_baseline) if b and c not in shown]
    dev_order = {c: k for k, c in enumerate(baseline_dev)}  # development order
    base.sort(key=lambda c: (dev_order.get(c, math.inf), c))
    rest = sorted((c for c in matrix.candidates if c not in shown and c not in base),
                  key=lambda c: (c in reasons, _dev_pos(decisions.get(c)), c))
    for c in base:
        dev = baseline_dev.get(c)
        reasons[c] = "baseline, shown for reference (not ranked)" + (
            f"; development score {dev:.6g}" if dev is not None else "")
    rows += _unranked_rows(matrix, base + rest, reasons, decisions, baseline_dev)
    return _board(phase, matrix, rows, dropped, notes), ranking, prepared


def _dev_pos(decision: Decision | None) -> float:
    return math.inf if decision is None or decision.dev_position is None else decision.dev_position


def _reason(decisions: Mapping[str, Decision], cand: str, default: str) -> str:
    d = decisions.get(cand)
    return d.reason if d is not None else default


def _ranked_rows(
    pool: ScoreMatrix, ranking: Ranking, prepared: Prepared, *, qualified: bool | None,
    decisions: Mapping[str, Decision] | None = None,
) -> list[Row]:
    decisions = decisions or {}
    jr = fractional_ranks(prepared.filled(values_based=False), axis=0)
    kept = prepared.matrix
    details = ranking.per_candidate_details()
    rows = []
    for i in ranking.order:
        cand = ranking.candidates[i]
        k = kept.candidates.index(cand)
        ranks = {j: _num(jr[k, kept.judges.index(j)]) if j in kept.judges else None
                 for j in pool.judges}
        reason = "baseline" if pool.is_baseline[pool.candidates.index(cand)] else ""
        rows.append(_row(
            pool, pool.candidates.index(cand), position=int(ranking.positions[i]),
            rank=float(ranking.ranks[i]), score=float(ranking.scores[i]),
            qualified=qualified, reason=_reason(decisions, cand, reason), judge_ranks=ranks,
            details={key: float(arr[i]) for key, arr in details.items()
                     if np.issubdtype(np.asarray(arr).dtype, np.number)},
            decision=decisions.get(cand),
        ))
    return rows


def _unranked_rows(
    matrix: ScoreMatrix, candidates: list[str], reasons: Mapping[str, str],
    decisions: Mapping[str, Decision], baseline_dev: Mapping[str, float],
) -> list[Row]:
    rows = []
    for cand in candidates:
        i = matrix.candidates.index(cand)
        d = decisions.get(cand)
        is_base = bool(matrix.is_baseline and matrix.is_baseline[i])
        rows.append(_row(
            matrix, i, position=None, rank=None, score=None,
            qualified=None if is_base else (d.qualified if d is not None else False),
            reason=reasons.get(cand) or (d.reason if d is not None else ""),
            decision=d, dev_score=baseline_dev.get(cand),
        ))
    return rows


def _row(
    matrix: ScoreMatrix, i: int, *, position: int | None, rank: float | None,
    score: float | None, qualified: bool | None, reason: str,
    judge_ranks: Mapping[str, float | None] | None = None,
    details: Mapping[str, float] | None = None, decision: Decision | None = None,
    dev_score: float | None = None,
) -> Row:
    stamp = matrix.submitted_at[i] if matrix.submitted_at else None
    return Row(
        candidate=matrix.candidates[i],
        participant=matrix.participants[i] if matrix.participants else None,
        is_baseline=bool(matrix.is_baseline and matrix.is_baseline[i]),
        position=position,
        rank=rank,
        score=score,
        qualified=qualified,
        reason=reason,
        submitted_at=None if stamp is None else pd.Timestamp(stamp).isoformat(),
        values={j: _num(matrix.values[i, k]) for k, j in enumerate(matrix.judges)},
        judge_ranks=judge_ranks or {j: None for j in matrix.judges},
        details=details or {},
        dev_position=decision.dev_position if decision else None,
        dev_score=decision.dev_score if decision and decision.dev_score is not None else dev_score,
    )


def _num(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def _board(
    phase: str, matrix: ScoreMatrix, rows: list[Row], dropped: Mapping[str, str],
    notes: tuple[str, ...],
) -> Board:
    return Board(
        phase=phase,
        judges=matrix.judges,
        higher_is_better=matrix.higher_is_better,
        weights=tuple(float(w) for w in matrix.weights),
        rows=tuple(rows),
        not_selected=dict(dropped),
        notes=notes,
    )


def _notes(ranking: Ranking) -> tuple[str, ...]:
    return tuple(ranking.notes) + tuple(
        f"judge {j!r} excluded by the missing-data policy: {why}"
        for j, why in ranking.excluded_judges.items()
    )


def _margins(ranking: Ranking | None, prepared: Prepared | None) -> Margins | None:
    if ranking is None or prepared is None:
        return None
    kept = prepared.matrix
    counts = PairwiseCounts.from_matrix(
        prepared.filled(values_based=False), np.asarray(kept.weights), kept.candidates
    )
    idx = [kept.candidates.index(ranking.candidates[i]) for i in ranking.order
           if ranking.candidates[i] in kept.candidates]
    counts = counts.subset(idx)
    return Margins(counts.candidates, counts.margins(), condorcet_winner(counts))


# ---------------------------------------------------------------------- statistics
def _statistics(
    board: Board, ranking: Ranking | None, filt: FilterResult | None,
    margins: Margins | None, dev: Ranking | None, analysis: Analysis,
) -> dict[str, float | None]:
    ranked = board.ranked
    winner = ranked[0] if ranked else None
    tau = None
    if filt is not None and ranking is not None:
        pairs = [(r.dev_score, r.score) for r in ranked if r.dev_score is not None]
        if len(pairs) >= 2:
            x, y = np.array(pairs, dtype=float).T
            if np.ptp(x) > 0 and np.ptp(y) > 0:
                tau = kendall_tau_b(x, y)
    stats: dict[str, float | None] = {
        "n_candidates": float(sum(not r.is_baseline for r in board.rows)),
        "n_qualified": None if filt is None else float(len(filt.qualified)),
        "n_excluded": None if filt is None else float(len(filt.excluded)),
        "n_baselines": float(len(filt.baselines)) if filt is not None
        else float(sum(r.is_baseline for r in board.rows)),
        "n_judges": float(len(board.judges)),
        "winner_score": None if winner is None else winner.score,
        "winner_dev_position": None if winner is None or winner.dev_position is None
        else float(winner.dev_position),
        "winner_is_condorcet": None if margins is None or winner is None
        else float(margins.condorcet_winner == winner.candidate),
        "threshold_score": None if filt is None else filt.threshold,
        "k": None if filt is None or filt.k is None else float(filt.k),
        "dev_final_kendall_tau": tau,
        "kendall_w": analysis.kendall_w,
        "stability": analysis.stability_w,
    }
    assert set(stats) == set(STATISTICS)
    return stats


def _why_undefined(
    stat: str, board: Board, filt: FilterResult | None, analysis: Analysis
) -> str:
    if stat in ("kendall_w", "stability"):
        return analysis.why_missing("judge agreement" if stat == "kendall_w" else "stability")
    if not board.ranked:
        return "nobody was ranked"
    if filt is None and stat in ("n_qualified", "n_excluded", "threshold_score", "k",
                                 "winner_dev_position", "dev_final_kendall_tau"):
        return "no final phase is configured"
    if stat == "threshold_score":
        return f"filter rule is {filt.rule!r}" if filt else "no filter"
    if stat == "k":
        return "filter rule is not top_k"
    if len(board.ranked) < 2:
        return "fewer than two candidates were ranked"
    return "the development or final scores are all equal"


# ---------------------------------------------------------------------- analysis
def _analysis(
    config: Config, ranking: Ranking | None, n_ranked: int, phase: str, progress: Progress
) -> Analysis:
    """Rank uncertainty, judge agreement and stability of the final ranking.

    Computed on the matrix the final ranking used (the qualified pool after the
    missing-data policy) with the configured method, parameters, missing policy and seed.
    A part that cannot or should not be computed leaves a note saying why.
    """
    ac, rc = config.analysis, config.ranking
    settings = {"bootstrap": ac.bootstrap, "level": ac.level, "seed": rc.seed,
                "stability_q": STABILITY_Q if ac.stability else None,
                "stability_r": STABILITY_R if ac.stability else None}
    n = n_ranked if ranking is None else len(ranking.candidates)
    m = 0 if ranking is None else len(ranking.judges)
    what = "rank uncertainty, judge agreement and stability were not computed"
    if n < 2:
        return Analysis(settings, notes=(
            f"{what}: they need at least 2 ranked candidates and {n} "
            f"{'was' if n == 1 else 'were'} ranked.",))
    if m < 2:
        return Analysis(settings, notes=(
            f"{what}: they resample the judges and the final ranking uses only 1 judge.",))
    pool = ranking.matrix  # the qualified pool after the missing-data policy
    kw = dict(seed=rc.seed, missing=rc.missing)
    params = dict(rc.params)

    def report(name: str) -> Callable[[int, int], None] | None:
        return None if progress is None else functools.partial(progress, name)

    notes: list[str] = []
    uncertainty = agreement = stab = None
    try:
        if ac.bootstrap:
            uncertainty = rank_uncertainty(
                pool, rc.method, n_trials=ac.bootstrap, level=ac.level,
                progress=report("rank uncertainty"), **kw, **params,
            )
        else:
            notes.append("rank uncertainty is disabled (analysis.bootstrap: 0).")
        if rc.missing == "pairwise":
            notes.append("judge agreement is not computed under missing: pairwise (Kendall's W "
                         "needs every judge to rank every candidate).")
        else:
            agreement = judge_agreement(pool, missing=rc.missing)
        if ac.stability:
            stab = stability(
                pool, rc.method, axis="judges", q=STABILITY_Q, r=STABILITY_R,
                concordance="kendall_w", params=params, progress=report("stability"), **kw,
            )
        else:
            notes.append("stability is disabled (analysis.stability: false).")
    except MetascoreError as exc:
        raise type(exc)(f"phase {phase!r}: analysis of the final ranking: {exc}") from None
    return Analysis(settings, uncertainty, agreement, stab, tuple(notes))


def _with_intervals(board: Board, u: RankUncertainty) -> Board:
    """The board with each ranked row's rank interval, P(first) and group."""
    at = {c: i for i, c in enumerate(u.candidates)}
    rows = []
    for r in board.rows:
        i = at.get(r.candidate) if r.position is not None else None
        if i is not None:
            r = dataclasses.replace(
                r, rank_low=float(u.lower[i]), rank_high=float(u.upper[i]),
                p_first=float(u.p_first[i]), group=int(u.group[i]),
            )
        rows.append(r)
    return dataclasses.replace(board, rows=tuple(rows))


def _signature(config: Config, ranking: Ranking | None) -> dict[str, Any]:
    rc = config.ranking
    sig = ranking.signature() if ranking is not None else {
        "method": rc.method, "params": dict(rc.params), "missing": rc.missing, "seed": rc.seed,
        "tie_break": list(rc.tie_break), "n_candidates": 0, "n_judges": 0, "version": _version(),
    }
    sig = dict(sig)
    sig["phases"] = {"development": config.phases.development, "final": config.phases.final}
    sig["selection"] = {"development": config.selection.development,
                        "final": config.selection.final}
    sig["filter"] = {"rule": config.filter.rule, "beat": config.filter.beat, "k": config.filter.k}
    return sig


def _summary(
    frame: pd.DataFrame, config: Config, source: Mapping[str, Any] | None, board: Board,
    development: Board | None,
) -> dict[str, Any]:
    phases = {}
    for b in (development, board):
        if b is not None:
            phases[b.phase] = {
                "candidates": len(b.rows),
                "baselines": sum(r.is_baseline for r in b.rows),
                "not_selected": len(b.not_selected),
                "judges": list(b.judges),
            }
    return {
        **dict(source or {}),
        "rows": int(len(frame)),
        "phases_found": sorted(str(p) for p in pd.unique(frame["phase"])),
        "phases": phases,
    }
