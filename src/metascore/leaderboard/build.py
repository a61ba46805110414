"""Assembly of the leaderboard: :func:`build_leaderboard` runs the pipeline once.

The steps are listed in :mod:`metascore.leaderboard`; each lives in its own module
(:mod:`.plan`, :mod:`.phases`, :mod:`.boards`, :mod:`.statistics`). Here: the order of the
steps, the ranking of the phases (:class:`Ranked`), the ``scores.json`` values and the
provenance signature.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ..config import Config
from ..errors import InputError, MetascoreError
from ..ranking import Ranking
from ..readers.score_table import ScoreTable
from ..submission_order import Origin
from .boards import baseline_dev_scores, dev_board, final_board, first_place_note, pool_margins
from .filtering import FilterResult, filter_final
from .flags import flag_board, flag_message
from .model import Analysis, Board, InputSummary, Leaderboard, Progress
from .notices import (check_accounted, check_scored_baselines, direction_messages, one_phase_filter,
                      unscored_messages)
from .plan import PhasePlan
from .selection import Selection
from .statistics import (compute_statistics, final_analysis, weights_robustness, why_undefined,
                         with_intervals)


def build_leaderboard(table: ScoreTable, config: Config, *, progress: Progress = None) -> Leaderboard:
    """Run selection, ranking and filtering on a score table (the canonical long table and
    the reader's findings; see :mod:`metascore.leaderboard`).

    ``progress(what, done, total)`` is called while the bootstrap analyses run.

    Raises :class:`~metascore.errors.MetascoreError` on unusable data (with one sentence
    naming the phase, task, candidate or key), including when nobody qualifies and
    ``filter.on_empty`` is ``error``.
    """
    plan = PhasePlan.of(config)
    table = plan.check(table)  # every configuration error before any ranking work
    origins = plan.origins(table)
    ranked = _flagged(table, rank_phases(table, plan, origins))
    messages = [*direction_messages(table, plan.judges), *ranked.messages]
    tie = first_place_note(ranked.board, plan.ranker.tie_break, plan.ranker.display,
                           origins.get(ranked.board.phase, {}))
    if tie is not None:
        messages.append(tie)
    margins = pool_margins(ranked.final)
    analysis = final_analysis(ranked.final, plan.ranker, config.analysis, len(ranked.board.ranked),
                              plan.final or plan.development, progress)
    board = ranked.board if analysis.uncertainty is None else with_intervals(ranked.board,
                                                                             analysis.uncertainty)
    stats = compute_statistics(board, ranked.final, ranked.filter, margins, ranked.dev_ranking,
                               analysis)
    robust = weights_robustness(ranked.final, plan.ranker.method, board)
    if plan.final is None:  # one phase: no development-to-final comparison
        stats["dev_final_kendall_tau"] = None
    scores, omitted = _published(config.scores, stats, board, ranked.filter, analysis, plan)
    boards = [b for b in (ranked.development, board) if b is not None]
    return Leaderboard(
        final=board,
        development=ranked.development,
        filter=ranked.filter,
        margins=margins,
        statistics=stats,
        scores=scores,
        signature={**(ranked.final.signature() if ranked.final is not None
                      else plan.ranker.signature()), **plan.signature(origins)},
        config=config.to_dict(),
        input_summary=InputSummary.of(table, boards, config.judge_columns),
        messages=(*messages, *omitted, *board.notes),
        analysis=analysis,
        robustness=robust,
    )


@dataclass(frozen=True)
class Ranked:
    """The phases ranked: the final board and its ranking (None: fewer than 2 ranked), the
    development board and ranking when a development phase came before (the filter's), the
    filter's result, the development submission whose score decided each final row, and
    the messages about them an organizer must see."""

    board: Board
    final: Ranking | None
    development: Board | None = None
    dev_ranking: Ranking | None = None
    filter: FilterResult | None = None
    counterparts: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    messages: tuple[str, ...] = ()


def rank_phases(table: ScoreTable, plan: PhasePlan,
                origins: Mapping[str, Mapping[str, Origin]]) -> Ranked:
    """Select and rank the development phase, filter the final phase against it (with one
    phase, within it, when it has baselines) and rank the qualified."""
    dev_name = plan.development
    dev = plan.select(table, dev_name, origins[dev_name])
    messages = unscored_messages(dev_name, dev.unscored, plan.ranker.missing)
    if plan.final is None and not one_phase_filter(dev.matrix, plan.filter.rule):
        return _unfiltered(plan, dev, messages)
    if plan.filter.rule == "beat_baseline":
        check_scored_baselines(dev.matrix, dev.unscored, dev_name)
    dev_ranking = plan.ranker.at(dev_name)(dev.matrix)
    development = None
    if plan.final is None:  # one phase: candidates beat the baseline within it
        final_phase, final = dev_name, dev
    else:
        development = dev_board(dev_name, dev.matrix, dev_ranking, dev.dropped)
        final_phase = plan.final
        final = plan.select(table, final_phase, origins[final_phase])
        messages.extend(unscored_messages(final_phase, final.unscored, plan.ranker.missing))
    fc = plan.filter
    is_baseline = dev.matrix.is_baseline
    filt = filter_final(
        dev_ranking, final.matrix, rule=fc.rule, beat=fc.beat, k=fc.k,
        rank_fn=plan.ranker.at(final_phase), dev_phase=dev_name, same_phase=plan.final is None,
        dropped_baselines={c: why for c, why in dev_ranking.excluded_candidates.items()
                           if is_baseline and is_baseline[dev.matrix.index_of(c)]},
    )
    if filt.message:
        if fc.on_empty == "error":
            raise InputError(f"{filt.message.rstrip('.')} (filter.on_empty: error).")
        messages.append(filt.message)
    base_dev = baseline_dev_scores(final.matrix, filt.baselines)
    board, ranking = final_board(
        final_phase, final.matrix, list(filt.qualified), {d.candidate: d for d in filt.decisions},
        base_dev, final.dropped, plan.ranker, dev_phase=None if plan.final is None else dev_name,
    )
    counterparts = {**{c: (dev_name, b.candidate) for c, b in base_dev.items()},
                    **{d.candidate: (dev_name, d.dev_candidate) for d in filt.decisions
                       if d.dev_candidate is not None}}
    return Ranked(board, ranking, development, dev_ranking, filt, counterparts, tuple(messages))


def _unfiltered(plan: PhasePlan, dev: Selection, messages: list[str]) -> Ranked:
    """One phase without a filter: every candidate but the baselines is ranked."""
    pool = dev.matrix
    if plan.filter.rule == "beat_baseline":
        messages.append(
            f"no filter applies: phase {plan.development!r} (the only phase: phases.final is "
            "null) has no baseline, so filter rule 'beat_baseline' has nothing to beat and "
            "every candidate is ranked; list the baselines under `baselines` (or flag them "
            "is_baseline), or set filter.rule: none to say no filter is wanted.")
    keep = [c for c, b in zip(pool.candidates, pool.is_baseline) if not b]
    board, ranking = final_board(plan.development, pool, keep, {}, {}, dev.dropped, plan.ranker)
    return Ranked(board, ranking, messages=tuple(messages))


def _flagged(table: ScoreTable, ranked: Ranked) -> Ranked:
    """Every submission of the table is on a board; the runs that finished after a failed
    prediction step, of the submissions on the boards, marked on their rows."""
    boards = [b for b in (ranked.development, ranked.board) if b is not None]
    for board in boards:
        check_accounted(table, board)
    shown_runs = {(b.phase, r.candidate) for b in boards for r in b.rows}
    flagged = [f for f in table.flagged if (f.phase, f.candidate) in shown_runs]
    if not flagged:
        return ranked
    two_phases = ranked.development is not None
    return replace(
        ranked, messages=(*ranked.messages, flag_message(flagged)), board=flag_board(ranked.board, flagged, ranked.counterparts if two_phases else None),
        development=flag_board(ranked.development, flagged) if two_phases else None)


def _published(keys: Mapping[str, str], stats: Mapping[str, float | None], board: Board,
               filt: FilterResult | None, analysis: Analysis,
               plan: PhasePlan) -> tuple[dict[str, float], list[str]]:
    """``scores.json``: each configured key's statistic, and why each undefined one is
    omitted; a non-finite one is refused."""
    scores: dict[str, float] = {}
    messages: list[str] = []
    for key, stat in keys.items():
        value = stats[stat]
        if value is None:
            why = why_undefined(stat, board, filt, analysis, one_phase=plan.final is None,
                                rule=plan.filter.rule)
            messages.append(f"scores.json omits {key!r}: statistic {stat!r} is undefined ({why}).")
            continue
        if not math.isfinite(value):
            raise MetascoreError(
                f"scores.json key {key!r}: statistic {stat!r} is {value!r}, not a finite "
                "number; refusing to write it."
            )
        scores[key] = float(value)
    return scores, messages
