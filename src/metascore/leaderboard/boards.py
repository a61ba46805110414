"""The boards of a leaderboard: development and final rows, and the final pool's margins.

:func:`dev_board` shows every development candidate in ranking order; :func:`final_board`
ranks the qualified candidates only and shows baselines and excluded candidates, unranked,
with their reason; :func:`pool_margins` is the pairwise margin matrix of the pool's
best-ranked candidates and its Condorcet winner. Each reads the matrix after the missing-data policy from the ranking
(``Ranking.inputs``), prepared once by the registry.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .filtering import BaselineScore, Decision, baseline_counterparts, phase_score_text
from ..matrix import ScoreMatrix
from ..pairwise import PairwiseCounts, values_condorcet_winner
from ..ranking import Ranking, positions_and_order
from ..method_spec import Display
from ..missing import Prepared
from ..stats import fractional_ranks
from ..submission_order import EARLIER, Origin, submission_number
from .model import MARGINS_KEPT, Board, JudgeIndex, JudgeValues, Margins, Row
from .plan import Ranker


def dev_board(
    phase: str, matrix: ScoreMatrix, ranking: Ranking, dropped: Mapping[str, str]
) -> Board:
    """The development board of ``matrix``, ranked by ``ranking``."""
    rows = _ranked_rows(matrix, ranking, qualified=None)
    ranked = set(ranking.candidates)
    rows += _unranked_rows(matrix, [c for c in matrix.candidates if c not in ranked],
                           {c: f"excluded by the missing-data policy: {why}"
                            for c, why in ranking.excluded_candidates.items()}, {}, {})
    return _board(phase, matrix, rows, dropped, _notes(ranking), ranking.winners)


def baseline_dev_scores(final: ScoreMatrix, baselines: Sequence[BaselineScore]) -> dict[str, BaselineScore]:
    """Each baseline's development score and id, in development order, keyed by its
    development id and by the final candidate it matches
    (:func:`~metascore.leaderboard.filtering.baseline_counterparts`)."""
    matched = baseline_counterparts(final, baselines)
    out: dict[str, BaselineScore] = {}
    for b in baselines:
        out.setdefault(b.candidate, b)
        for cand in matched.get(b.candidate, []):
            out.setdefault(cand, b)
    return out


def final_board(
    phase: str,
    matrix: ScoreMatrix,
    qualified: list[str],
    decisions: Mapping[str, Decision],
    baseline_dev: Mapping[str, BaselineScore],
    dropped: Mapping[str, str],
    ranker: Ranker,
    dev_phase: str | None = None,
) -> tuple[Board, Ranking | None]:
    """The final board: the qualified candidates ranked by ``ranker``, then the baselines
    (each with its development score, and its development id when that is another one) and
    the others; and the ranking of the qualified (None when fewer than 2 qualified).
    ``dev_phase``: the phase the filter ranked (None: ``phase`` itself, one phase)."""
    ranking = None
    notes: tuple[str, ...] = ()
    rows: list[Row] = []
    order: tuple[str, ...] = ()
    if len(qualified) >= 2:
        pool = matrix.subset(candidates=qualified)
        ranking = ranker.at(phase)(pool)
        order = tie_break_order(pool, ranker.tie_break)
        rows = _ranked_rows(pool, ranking, qualified=True, decisions=decisions)
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
        b = baseline_dev.get(c)
        reasons[c] = "baseline, shown for reference (not ranked)"
        if b is not None:
            reasons[c] += "; " + phase_score_text(ranker.display, b.score, dev_phase or phase,
                                                  dev_phase is None)
            if b.candidate != c:
                reasons[c] += f" (as {b.candidate!r} in {dev_phase or phase!r})"
    scores = {c: b.score for c, b in baseline_dev.items()}
    rows += _unranked_rows(matrix, base + rest, reasons, decisions, scores)
    winners = ranking.winners if ranking is not None else tuple(qualified[:1])
    return _board(phase, matrix, rows, dropped, notes, winners, order), ranking


def tie_break_order(pool: ScoreMatrix, tie_break: Sequence[str]) -> tuple[str, ...]:
    """The candidates of ``pool`` in the order ``tie_break`` alone puts them: the order of a
    ranking inside any group of equal scores (:func:`~metascore.ranking.positions_and_order`
    with every score equal)."""
    _, order = positions_and_order(np.zeros(len(pool.candidates)), tie_break, pool.candidates,
                                   pool.submitted_at, pool.participants, None,
                                   pool.submission_order)
    return tuple(pool.candidates[i] for i in order)


def _dev_pos(decision: Decision | None) -> float:
    return math.inf if decision is None or decision.dev_position is None else decision.dev_position


def _reason(decisions: Mapping[str, Decision], cand: str, default: str) -> str:
    d = decisions.get(cand)
    return d.reason if d is not None else default


def _ranked_rows(
    pool: ScoreMatrix, ranking: Ranking, *, qualified: bool | None,
    decisions: Mapping[str, Decision] | None = None,
) -> list[Row]:
    decisions = decisions or {}
    prepared = ranking.inputs.prepared  # ``pool`` after the missing-data policy
    jr = fractional_ranks(prepared.filled(values_based=False), axis=0)
    kept = prepared.matrix
    if kept.judges != pool.judges:  # judges the missing-data policy dropped have no rank
        col_of = {j: k for k, j in enumerate(kept.judges)}
        at = np.array([col_of.get(j, -1) for j in pool.judges], dtype=np.int64)
        full = np.full((jr.shape[0], len(pool.judges)), np.nan)
        full[:, at >= 0] = jr[:, at[at >= 0]]
        if prepared.uncounted:  # weight 0: shown (ranked like the others), not counted
            full[:, _uncounted_columns(pool, prepared, at)] = _uncounted_ranks(pool, prepared)
        jr = full
    jr.setflags(write=False)
    # numbers read once as Python values (a board may have 100,000 rows)
    details = {key: np.asarray(arr, dtype=float).tolist()
               for key, arr in ranking.per_candidate_details().items()
               if np.issubdtype(np.asarray(arr).dtype, np.number)}
    positions, ranks, scores = (np.asarray(a).tolist() for a in
                                (ranking.positions, ranking.ranks, ranking.scores))
    rows = []
    row_of = {c: k for k, c in enumerate(kept.candidates)}
    index_of = {c: k for k, c in enumerate(pool.candidates)}
    judges = JudgeIndex(pool.judges)
    for i in ranking.order.tolist():
        cand = ranking.candidates[i]
        at_pool = index_of[cand]
        reason = "baseline" if pool.is_baseline[at_pool] else ""
        rows.append(_row(
            pool, at_pool, position=int(positions[i]), rank=float(ranks[i]),
            score=float(scores[i]), qualified=qualified, reason=_reason(decisions, cand, reason),
            judge_ranks=JudgeValues(judges, jr[row_of[cand]]),
            details={key: values[i] for key, values in details.items()},
            decision=decisions.get(cand), judges=judges,
        ))
    return rows


def _uncounted_columns(pool: ScoreMatrix, prepared: Prepared, at: np.ndarray) -> np.ndarray:
    """Columns of ``pool`` holding the judges of weight 0 (shown, not counted)."""
    shown = set(prepared.uncounted)
    return np.array([k for k, j in enumerate(pool.judges) if at[k] < 0 and j in shown],
                    dtype=np.intp)


def _uncounted_ranks(pool: ScoreMatrix, prepared: Prepared) -> np.ndarray:
    """Each weight-0 judge's fractional ranks of the ranked candidates (rows in the order of
    ``prepared.matrix``), a missing score ranked as the policy ranks it on a counted judge:
    tied last under ``worst``, not ranked otherwise."""
    shown = pool.subset(candidates=list(prepared.matrix.candidates),
                        judges=list(prepared.uncounted))
    x = shown.oriented()
    if prepared.missing == "worst":
        x = np.where(np.isnan(x), -np.inf, x)
    return fractional_ranks(x, axis=0)


def _unranked_rows(
    matrix: ScoreMatrix, candidates: list[str], reasons: Mapping[str, str],
    decisions: Mapping[str, Decision], baseline_dev: Mapping[str, float],
) -> list[Row]:
    rows = []
    judges = JudgeIndex(matrix.judges)
    index_of = {c: k for k, c in enumerate(matrix.candidates)}
    for cand in candidates:
        i = index_of[cand]
        d = decisions.get(cand)
        is_base = bool(matrix.is_baseline and matrix.is_baseline[i])
        rows.append(_row(
            matrix, i, position=None, rank=None, score=None,
            qualified=None if is_base else (d.qualified if d is not None else False),
            reason=reasons.get(cand) or (d.reason if d is not None else ""),
            decision=d, dev_score=baseline_dev.get(cand), judges=judges,
        ))
    return rows


def _row(
    matrix: ScoreMatrix, i: int, *, position: int | None, rank: float | None,
    score: float | None, qualified: bool | None, reason: str,
    judge_ranks: JudgeValues | None = None,
    details: Mapping[str, float] | None = None, decision: Decision | None = None,
    dev_score: float | None = None, judges: JudgeIndex | None = None,
) -> Row:
    """One board row; its per-judge values and ranks are views of ``matrix.values[i]`` and
    of the pool's rank array (no per-judge objects)."""
    stamp = matrix.submitted_at[i] if matrix.submitted_at else None
    judges = judges or JudgeIndex(matrix.judges)
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
        values=JudgeValues(judges, matrix.values[i]),
        judge_ranks=judge_ranks if judge_ranks is not None else JudgeValues(judges),
        details=details or {},
        dev_position=decision.dev_position if decision else None,
        dev_score=decision.dev_score if decision and decision.dev_score is not None else dev_score,
    )


def _board(
    phase: str, matrix: ScoreMatrix, rows: list[Row], dropped: Mapping[str, str],
    notes: tuple[str, ...], winners: tuple[str, ...] = (), pool: tuple[str, ...] = (),
) -> Board:
    return Board(
        phase=phase,
        judges=matrix.judges,
        higher_is_better=matrix.higher_is_better,
        weights=tuple(float(w) for w in matrix.weights),
        rows=tuple(rows),
        not_selected=dict(dropped),
        notes=notes,
        winners=tuple(winners),
        groups=matrix.groups,
        pool=pool,
    )


def _notes(ranking: Ranking) -> tuple[str, ...]:
    return tuple(ranking.notes) + tuple(
        f"judge {j!r} excluded by the missing-data policy: {why}"
        for j, why in ranking.excluded_judges.items()
    )


def pool_margins(ranking: Ranking | None, kept: int = MARGINS_KEPT) -> Margins | None:
    """The pairwise margins of the ``kept`` best-ranked candidates of the ranked pool, best
    first, and the pool's Condorcet winner (None: nobody ranked). Memory and time grow with
    the pool times the judges (and ``kept`` squared), never with the pool squared."""
    if ranking is None:
        return None
    prepared = ranking.inputs.prepared
    pool = prepared.matrix
    row_of = {c: k for k, c in enumerate(pool.candidates)}
    idx = [row_of[ranking.candidates[i]] for i in ranking.order if ranking.candidates[i] in row_of]
    values = prepared.filled(values_based=False)[idx]
    weights = np.asarray(pool.weights)
    names = [pool.candidates[i] for i in idx]
    top = PairwiseCounts.from_matrix(values[:kept], weights, names[:kept])
    return Margins(top.candidates, top.margins(), values_condorcet_winner(values, weights, names),
                   len(idx))


def _origin(row: Row, phase: str, origins: Mapping[str, Origin] | None) -> Origin:
    found = (origins or {}).get(row.candidate)
    if found is not None:
        return found
    stamp = None if row.submitted_at is None else pd.Timestamp(row.submitted_at)
    if stamp is not None and stamp.tzinfo is not None:
        stamp = stamp.tz_convert("UTC").tz_localize(None)
    return Origin(phase, row.candidate, stamp, submission_number(row.candidate))


def _before(mine: Origin, theirs: Origin, phase: str) -> str:
    """"zoe-1 before carol-3", with the phase of submissions that are not of ``phase``."""
    later = theirs.shown() if theirs.known() else "unknown"
    if mine.phase == theirs.phase:
        where = "" if mine.phase == phase else f": their submissions in phase {mine.phase!r}"
        return f"{mine.shown()} before {later}{where}"

    def named(o: Origin, text: str) -> str:
        return text if o.phase == phase else f"{text} in phase {o.phase!r}"
    return f"{named(mine, mine.shown())} before {named(theirs, later)}"


#: How a person reads each tie-break key.
_TIE_BREAK_WORDS = {
    "submitted_at": EARLIER,
    "candidate": "the candidate id, alphabetically",
    "participant": "the participant name, alphabetically",
    "input_order": "the order of the input",
}


def first_place_note(board: Board, tie_break: tuple[str, ...], shown: Display,
                     origins: Mapping[str, Origin] | None = None) -> str | None:
    """When several candidates share position 1: who they are, and which tie-break key
    put the winner first (None when the first place is not shared). ``origins``: the
    submissions that set each candidate's place for ``submitted_at``
    (:func:`~metascore.submission_order.phase_origins`; without them, their own)."""
    top = [r for r in board.ranked if r.position == 1]
    if len(top) < 2 or top[0].score is None:
        return None
    names = ", ".join(r.candidate for r in top[:-1]) + " and " + top[-1].candidate
    winner, second = top[0], top[1]
    how = _TIE_BREAK_WORDS["input_order"]
    for key in tie_break:
        if key == "input_order":
            break
        if key == "submitted_at":
            mine, theirs = (_origin(r, board.phase, origins) for r in (winner, second))
            if mine.known() and mine.key() != theirs.key():
                how = f"{_TIE_BREAK_WORDS[key]} {mine.by(theirs)} ({_before(mine, theirs, board.phase)})"
                break
            continue
        mine, theirs = getattr(winner, key), getattr(second, key)
        if mine is not None and mine != theirs:
            how = _TIE_BREAK_WORDS[key]
            break
    return (f"{names} share first place ({shown.text(winner.score)} each); {winner.candidate} "
            f"is listed first and is the winner by the tie-break: {how} "
            f"(ranking.tie_break: {list(tie_break)}).")
