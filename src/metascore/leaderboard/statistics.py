"""What the leaderboard publishes about its final ranking: statistics and analysis.

:func:`final_analysis` computes how much to trust the final ranking (rank uncertainty,
judge agreement, stability; :class:`~metascore.leaderboard.model.Analysis`) and, with
``analysis.compare``, how other methods would behave on the same pool
(:func:`method_comparison`); :func:`with_intervals` copies the rank intervals onto the
board; :func:`compute_statistics` gives every statistic of :data:`metascore.config.STATISTICS` and :func:`why_undefined` says
why one is undefined.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..analysis import (Execution, MethodComparison, RankUncertainty, Setup, compare_methods,
                        judge_agreement, rank_uncertainty, setup_of, stability)
from ..analysis.compare import MIN_COMPARED
from ..analysis.robustness import Robustness, robustness_of
from ..config import (COMPARE_R, FINAL_PHASE_STATISTICS, STABILITY_Q, STABILITY_R, STATISTICS,
                      AnalysisConfig)
from ..errors import MetascoreError
from .filtering import FilterResult
from .plan import Ranker
from ..ranking import Ranking
from ..registry import get_ranking_method, ranking_method_names
from ..stats import kendall_tau_b
from .model import Analysis, Board, Margins, Progress


def compute_statistics(
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
        # the baselines the filter compared with (none: no filter), else those on the final board
        "n_baselines": float(len(filt.baselines)) if filt is not None and filt.rule != "none"
        else float(sum(r.is_baseline for r in board.rows)),
        "n_judges": float(sum(w > 0 for w in board.weights)),  # weight 0: not counted
        # as people read the method's score: an average rank, not minus it (Display)
        "winner_score": None if winner is None else _shown(ranking, winner.score),
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


def _shown(ranking: Ranking | None, score: float) -> float:
    """``score`` as the ranking's method shows it (:class:`~metascore.method_spec.Display`)."""
    return score if ranking is None else get_ranking_method(ranking.method).display.value(score)


def why_undefined(
    stat: str, board: Board, filt: FilterResult | None, analysis: Analysis, *,
    one_phase: bool = False, rule: str = "beat_baseline",
) -> str:
    if stat in ("kendall_w", "stability"):
        return analysis.why_missing("judge agreement" if stat == "kendall_w" else "stability")
    if not board.ranked:
        return "nobody was ranked"
    if one_phase and stat == "dev_final_kendall_tau":
        return "there is one phase (phases.final is null)"
    if filt is None and one_phase and stat in FINAL_PHASE_STATISTICS:
        return ("filter rule is 'none'" if rule == "none" else
                "no filter applies: phases.final is null and the phase has no baseline")
    if filt is None and stat in FINAL_PHASE_STATISTICS:
        return "no final phase is configured"
    if stat == "threshold_score":
        return f"filter rule is {filt.rule!r}" if filt else "no filter"
    if stat == "k":
        return "filter rule is not top_k"
    if len(board.ranked) < 2:
        return "fewer than two candidates were ranked"
    return "the development or final scores are all equal"


def weights_robustness(ranking: Ranking | None, method: str, board: Board) -> Robustness:
    """How far the final phase's judges' weights may move before the winner, the second
    and the third place change (:mod:`metascore.analysis.robustness`), on the ranked pool as
    the filter left it (re-weighting the final judges does not re-run the filter); with
    fewer than two ranked, no place to compute."""
    if ranking is not None:
        return robustness_of(ranking)
    n_judges = sum(w > 0 for w in board.weights)
    return Robustness(method, (), len(board.ranked), n_judges,
                      note="fewer than two candidates are ranked")


# ---------------------------------------------------------------------- analysis
def final_analysis(
    ranking: Ranking | None, ranker: Ranker, settings: AnalysisConfig, n_ranked: int, phase: str,
    progress: Progress,
) -> Analysis:
    """Rank uncertainty, judge agreement and stability of the final ranking, and the
    comparison of the methods of ``analysis.compare`` (``settings``; :func:`method_comparison`).

    Computed on the matrix the final ranking used (the qualified pool after the
    missing-data policy: the ranking's inputs, not prepared again) with the ranking's
    method, missing policy and seed and its parameters as ``ranker`` was given them; the
    final ranking is the full-data ranking they resample. Every part reads one
    :class:`~metascore.analysis.shared.Setup` of the ranking, made once: its judges' ranks,
    full-data rankings and what the resampling shortcuts compute from the data are shared.
    A part that cannot or should not be computed leaves a note saying why.
    """
    pool = _Pool(ranking, ranker.params)
    analysis = _trust(pool, ranker, settings, n_ranked, phase, progress)
    if not settings.compare:
        return analysis
    comparison, note = method_comparison(pool, ranker.seed, settings, n_ranked, progress)
    return dataclasses.replace(analysis, comparison=comparison, comparison_note=note)


class _Pool:
    """The ranked pool as every analysis of the final ranking reads it: one
    :class:`~metascore.analysis.shared.Setup` of the ranking (:func:`setup_of`: its own
    input and full-data ranking, with its parameters as configured), made on first use."""

    def __init__(self, ranking: Ranking | None, params: Mapping[str, Any]) -> None:
        self.ranking, self.params = ranking, dict(params)
        self.n = 0 if ranking is None else len(ranking.candidates)
        self.m = 0 if ranking is None else len(ranking.judges)

    @functools.cached_property
    def setup(self) -> Setup:
        assert self.ranking is not None
        method = self.ranking.method
        return setup_of(self.ranking, method, {method: self.params})

    def params_of(self, methods: tuple[str, ...]) -> dict[str, dict[str, Any]]:
        """The parameters of ``methods`` compared: the configured ones for the ranking's
        method, the defaults for the others."""
        method = self.ranking.method if self.ranking is not None else None
        return {method: self.params} if method in methods and self.params else {}


def method_comparison(
    pool: _Pool, seed: int, settings: AnalysisConfig, n_ranked: int, progress: Progress
) -> tuple[MethodComparison | None, str | None]:
    """The criteria table of the methods of ``analysis.compare`` on the ranked pool.

    The pool is the one the leaderboard was ranked from (the qualified final candidates,
    after the missing-data policy), so the table says how each method would have behaved on
    this competition's data. Trials: ``analysis.bootstrap`` for the winner rank, Condorcet
    rate and generalization (on the axes of ESANN 2021); :data:`STABILITY_Q` rankings x
    :data:`COMPARE_R` repetitions for each stability; seed and missing policy of the
    ranking; the configured parameters for the configured method, defaults for the others.
    Returns ``(comparison, None)``, or ``(None, why)`` when the pool is too small or the
    comparison fails on this data: the comparison is optional and never costs the scores.
    """
    n = n_ranked if pool.ranking is None else pool.n
    what = "the method comparison (analysis.compare) was not computed"
    if _pairs(n) > RESAMPLED_PAIRS_LIMIT:
        return None, (f"{what}: its criteria (the Condorcet rate, candidate resamples) compare "
                      f"every pair of candidates in each trial, and {_too_many(n)}.")
    if n < MIN_COMPARED:
        return None, (f"{what}: it needs at least {MIN_COMPARED} ranked candidates (with fewer "
                      "the criteria cannot tell the methods apart) and "
                      f"{n} {'was' if n == 1 else 'were'} ranked.")
    if pool.m < 2:
        return None, (f"{what}: it needs at least 2 judges (generalization tests on the judges "
                      "a resample leaves out) and the final ranking uses only 1.")

    def report(stage: str, done: int, total: int) -> None:
        if progress is not None:
            progress(f"method comparison, {stage}", done, total)

    try:
        comparison = compare_methods(
            pool.setup, settings.compare, n_trials=settings.bootstrap, q=STABILITY_Q,
            r=COMPARE_R, run=Execution(seed=seed, params=pool.params_of(settings.compare),
                                       progress=report))
    except MetascoreError as exc:
        return None, f"{what}: {str(exc).rstrip('.')}."
    return comparison, None


def _trust(
    pool: _Pool, ranker: Ranker, settings: AnalysisConfig, n_ranked: int, phase: str,
    progress: Progress,
) -> Analysis:
    """Rank uncertainty, judge agreement and stability (see :func:`final_analysis`)."""
    ac, method, seed = settings, ranker.method, ranker.seed
    settings_out = {"bootstrap": ac.bootstrap, "level": ac.level, "seed": seed,
                    "stability_q": STABILITY_Q if ac.stability else None,
                    "stability_r": STABILITY_R if ac.stability else None}
    n = n_ranked if pool.ranking is None else pool.n
    what = "rank uncertainty, judge agreement and stability were not computed"
    if n < 2:
        return Analysis(settings_out, notes=(
            f"{what}: they need at least 2 ranked candidates and {n} "
            f"{'was' if n == 1 else 'were'} ranked.",))
    if pool.m < 2:
        return Analysis(settings_out, notes=(
            f"{what}: they resample the judges and the final ranking uses only 1 judge.",))

    def report(name: str) -> Execution:
        """The run of a part, its progress reported as ``name``."""
        return Execution(seed=seed, progress=None if progress is None else (
            lambda _stage, done, total: progress(name, done, total)))

    notes: list[str] = []
    bootstrap, stable = ac.bootstrap, ac.stability
    if (bootstrap or stable) and _pairs(n) > RESAMPLED_PAIRS_LIMIT and _resamples_pairs(method):
        resamples = bootstrap + (STABILITY_Q * STABILITY_R if stable else 0)
        notes.append(
            f"rank uncertainty and stability were not computed: {method} compares every pair "
            f"of candidates in each of their {resamples} resamples, and {_too_many(n)}; rank with "
            f"a method whose resamples need no pairs ({', '.join(_pairless())}), or set "
            "analysis.bootstrap: 0 and analysis.stability: false to say they are not wanted.")
        bootstrap, stable = 0, False
    uncertainty = agreement = stab = None
    try:
        if bootstrap:
            uncertainty = rank_uncertainty(pool.setup, method, n_trials=bootstrap,
                                           level=ac.level, run=report("rank uncertainty"))
        elif not notes:
            notes.append("rank uncertainty is disabled (analysis.bootstrap: 0).")
        if ranker.missing == "pairwise":
            notes.append("judge agreement is not computed under missing: pairwise (Kendall's W "
                         "needs every judge to rank every candidate).")
        else:
            agreement = judge_agreement(pool.setup)
        if stable:
            stab = stability(pool.setup, axis="judges", q=STABILITY_Q, r=STABILITY_R,
                             concordance="kendall_w", run=report("stability"))
        elif ac.stability is False:
            notes.append("stability is disabled (analysis.stability: false).")
    except MetascoreError as exc:
        raise type(exc)(f"phase {phase!r}: analysis of the final ranking: {exc}") from None
    return Analysis(settings_out, uncertainty, agreement, stab, tuple(notes))


#: The most pairs of candidates the analyses compare in each resample (those of 6,325
#: candidates): beyond, a method whose resamples compare pairs (or the method
#: comparison, whose criteria do) is not resampled, with a note saying why.
RESAMPLED_PAIRS_LIMIT = 20_000_000


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def _too_many(n: int) -> str:
    return (f"the {n:,} ranked candidates make {_pairs(n):,} pairs, more than the "
            f"{RESAMPLED_PAIRS_LIMIT:,} a resample may compare")


def _resamples_pairs(method: str) -> bool:
    """Whether the resamples of ``method`` compare every pair of candidates: through its
    judges shortcut's margins, or ranked in full on n x n counts."""
    spec = get_ranking_method(method)
    hooks = spec.resampling
    if hooks is None or hooks.judges is None:
        return spec.needs_dense
    return bool(hooks.margins)


def _pairless() -> list[str]:
    """The methods whose ranking and resamples compare no pair of candidates."""
    return [name for name in ranking_method_names()
            if not get_ranking_method(name).needs_dense and not _resamples_pairs(name)]


def with_intervals(board: Board, u: RankUncertainty) -> Board:
    """The board with each ranked row's rank interval, P(first) and group."""
    at = {c: i for i, c in enumerate(u.candidates)}
    low, high, first, group = u.lower.tolist(), u.upper.tolist(), u.p_first.tolist(), u.group.tolist()
    rows = []
    for r in board.rows:
        i = at.get(r.candidate) if r.position is not None else None
        if i is not None:
            r = r.with_fields(rank_low=float(low[i]), rank_high=float(high[i]),
                              p_first=float(first[i]), group=int(group[i]))
        rows.append(r)
    return dataclasses.replace(board, rows=tuple(rows))
