"""Assembly of the leaderboard: :func:`build_leaderboard` runs the pipeline once.

The steps are listed in :mod:`metascore.leaderboard`; each lives in its own module
(:mod:`.phases`, :mod:`.boards`, :mod:`.statistics`). Here: the order of the steps, the
``scores.json`` values, the provenance signature and the input summary.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from .._version import __version__
from ..config import Config
from ..errors import InputError, MetascoreError
from .filtering import filter_final
from ..ranking import Ranking
from ..readers.score_table import ScoreTable
from ..registry import get_ranking_method, rank
from ..submission_order import Origin, order_basis, phase_origins
from .boards import baseline_dev_scores, dev_board, final_board, first_place_note, pool_margins
from .flags import flag_board, flag_message
from .model import Board, Leaderboard, Progress
from .notices import (check_accounted, check_scored_baselines, direction_messages, one_phase_filter,
                      unscored_messages)
from .phases import check_baselines, check_judges, check_phases, in_phase, normalize_frame, select_phase
from .statistics import compute_statistics, final_analysis, why_undefined, with_intervals


def build_leaderboard(
    table: ScoreTable, config: Config, *, source: Mapping[str, Any] | None = None,
    progress: Progress = None,
) -> Leaderboard:
    """Run selection, ranking and filtering on a score table (the canonical long table and
    the reader's findings; see :mod:`metascore.leaderboard`).

    ``progress(what, done, total)`` is called while the bootstrap analyses run.

    Raises :class:`~metascore.errors.MetascoreError` on unusable data (with one sentence
    naming the phase, task, candidate or key), including when nobody qualifies and
    ``filter.on_empty`` is ``error``.
    """
    table = table.with_frame(normalize_frame(table.frame))
    frame = table.frame
    check_phases(frame, config)
    check_judges(frame, config)  # every configuration error before any ranking work
    check_baselines(table, config.baselines)
    rc = config.ranking
    rank_fn = functools.partial(
        rank, method=rc.method, missing=rc.missing, seed=rc.seed, tie_break=rc.tie_break,
        **dict(rc.params),
    )
    dev_name, final_name = config.phases.development, config.phases.final
    shown = get_ranking_method(rc.method).display
    messages: list[str] = []

    messages.extend(direction_messages(table, config))
    # "the earlier submission": a participant's development submission sets the place of
    # their final-phase submissions (a migrated copy has a new id and time)
    origins = {dev_name: phase_origins(table, dev_name)}
    if final_name is not None:
        origins[final_name] = phase_origins(table, final_name, [dev_name])
    unscored: dict[str, str] = {}
    dev_sel = select_phase(table, dev_name, config, config.selection.development, rank_fn, unscored,
                           origins[dev_name])
    messages.extend(unscored_messages(dev_name, unscored, rc.missing))
    fc = config.filter
    development = filt = dev_ranking = None
    counterparts: dict[str, tuple[str, str]] = {}
    if final_name is None and not one_phase_filter(dev_sel.matrix, fc.rule):
        pool = dev_sel.matrix
        if fc.rule == "beat_baseline":
            messages.append(
                f"no filter applies: phase {dev_name!r} (the only phase: phases.final is null) has "
                "no baseline, so filter rule 'beat_baseline' has nothing to beat and every "
                "candidate is ranked; list the baselines under `baselines` (or flag them "
                "is_baseline), or set filter.rule: none to say no filter is wanted.")
        keep = [c for c, b in zip(pool.candidates, pool.is_baseline) if not b]
        board, ranking = final_board(
            dev_name, pool, keep, {}, {}, dev_sel.dropped, rank_fn, shown
        )
    else:
        if fc.rule == "beat_baseline":
            check_scored_baselines(dev_sel.matrix, unscored, dev_name)
        dev_ranking = in_phase(rank_fn, dev_name)(dev_sel.matrix)
        if final_name is None:  # one phase: candidates beat the baseline within it
            final_phase, final_sel = dev_name, dev_sel
        else:
            development = dev_board(dev_name, dev_sel.matrix, dev_ranking, dev_sel.dropped)
            final_phase, unscored = final_name, {}
            final_sel = select_phase(table, final_name, config, config.selection.final, rank_fn, unscored,
                                     origins[final_name])
            messages.extend(unscored_messages(final_name, unscored, rc.missing))
        filt = filter_final(
            dev_ranking, final_sel.matrix, rule=fc.rule, beat=fc.beat, k=fc.k,
            rank_fn=in_phase(rank_fn, final_phase), dev_phase=dev_name, same_phase=final_name is None,
            dropped_baselines={
                c: why for c, why in dev_ranking.excluded_candidates.items()
                if dev_sel.matrix.is_baseline and dev_sel.matrix.is_baseline[dev_sel.matrix.index_of(c)]
            },
        )
        if filt.message:
            if fc.on_empty == "error":
                raise InputError(f"{filt.message.rstrip('.')} (filter.on_empty: error).")
            messages.append(filt.message)
        decisions = {d.candidate: d for d in filt.decisions}
        base_dev = baseline_dev_scores(final_sel.matrix, filt.baselines)
        board, ranking = final_board(
            final_phase, final_sel.matrix, list(filt.qualified), decisions,
            base_dev, final_sel.dropped, rank_fn, shown,
            dev_phase=None if final_name is None else dev_name,
        )
        # the development submission whose score decided each final row
        counterparts = {**{c: (dev_name, b.candidate) for c, b in base_dev.items()},
                        **{d.candidate: (dev_name, d.dev_candidate) for d in filt.decisions
                           if d.dev_candidate is not None}}
    for checked in (development, board):
        if checked is not None:
            check_accounted(table, checked)
    # runs that finished after a failed prediction step, of the submissions on the boards
    shown_runs = {(b.phase, r.candidate) for b in (development, board) if b is not None for r in b.rows}
    flagged = [f for f in table.flagged if (f[0], f[1]) in shown_runs]
    if flagged:
        messages.append(flag_message(flagged))
        board = flag_board(board, flagged, counterparts if final_name is not None else None)
        if development is not None:
            development = flag_board(development, flagged)
    tie = first_place_note(board, tuple(rc.tie_break), shown, origins.get(board.phase, {}))
    if tie is not None:
        messages.append(tie)
    margins = pool_margins(ranking)
    analysis = final_analysis(config, ranking, len(board.ranked), final_name or dev_name, progress)
    if analysis.uncertainty is not None:
        board = with_intervals(board, analysis.uncertainty)
    stats = compute_statistics(board, ranking, filt, margins, dev_ranking, analysis)
    if final_name is None:  # one phase: no development-to-final comparison
        stats["dev_final_kendall_tau"] = None
    scores = {}
    for key, stat in config.scores.items():
        value = stats[stat]
        if value is None:
            why = why_undefined(stat, board, filt, analysis, one_phase=final_name is None, rule=fc.rule)
            messages.append(f"scores.json omits {key!r}: statistic {stat!r} is undefined ({why}).")
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
        signature=_signature(config, ranking, origins),
        config=config.to_dict(),
        input_summary=_summary(frame, config, source, board, development),
        messages=tuple(messages) + board.notes,
        analysis=analysis,
    )


def _signature(config: Config, ranking: Ranking | None,
               origins: Mapping[str, Mapping[str, Origin]]) -> dict[str, Any]:
    rc = config.ranking
    sig = ranking.signature() if ranking is not None else {
        "method": rc.method, "params": dict(rc.params), "missing": rc.missing, "seed": rc.seed,
        "tie_break": list(rc.tie_break), "n_candidates": 0, "n_judges": 0, "version": __version__,
    }
    sig = dict(sig)
    sig["phases"] = {"development": config.phases.development, "final": config.phases.final}
    sig["selection"] = {"development": config.selection.development,
                        "final": config.selection.final}
    sig["filter"] = {"rule": config.filter.rule, "beat": config.filter.beat, "k": config.filter.k}
    # which rule "the earlier submission" followed in each phase (times or submission ids)
    sig["submission_order"] = {
        phase: order_basis(found, phase) if "submitted_at" in rc.tie_break
        else "not used (ranking.tie_break has no submitted_at)"
        for phase, found in origins.items()}
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
                # beyond output.judge_columns the judges are listed in per_judge.csv.gz
                **({"judges": list(b.judges)} if len(b.judges) <= config.judge_columns
                   else {"judges": None, "n_judges": len(b.judges)}),
            }
    return {
        **dict(source or {}),
        "rows": int(len(frame)),
        "phases_found": sorted(str(p) for p in pd.unique(frame["phase"])),
        "phases": phases,
    }
