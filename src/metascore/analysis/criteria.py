"""Empirical criteria to choose a ranking method (thesis 5.3, ESANN 2021).

- :func:`winner_rank`: how well the winner of one ranking ranks on average over the judges;
- :func:`winner_rank_bootstrap`: the same, estimated over resampled matrices;
- :func:`condorcet_rate`: how often a method ranks the Condorcet winner first;
- :func:`generalization`: how well a ranking on some judges predicts unseen judges;
- :func:`judge_agreement`: Kendall's W between the judges and the mean Spearman rho.

Every bootstrap criterion takes the resampling ``axis`` (``"judges"``, ``"candidates"`` or
``"both"``). The ESANN 2021 experiments resampled the candidates for the winner rank and
the Condorcet rate, and the candidates then the judges for the generalization (the
out-of-bag judges are the test set): :data:`PAPER_AXES`, the defaults. Each procedure draws
its resamples once per trial and applies them to every method compared (common random
numbers), so differences between methods are not noise from different draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..jsonable import jsonable
from ..errors import ConfigError, InputError
from ..matrix import ScoreMatrix
from ..ranking import Ranking
from ..registry import prepare_inputs, rank
from ..stats import kendall_w, mean_spearman_from_w
from .execution import Execution, Progress
from .trial_stats import generalization_stats, top_share, winner_stats
from .shared import judge_ranks, method_params, resolve, resolve_methods, Setup
from .bootstrap import run_trials, Then
from .draws import check_axis, DrawPlan, plan_draws, skip_note

__all__ = [
    "PAPER_AXES",
    "winner_rank",
    "winner_rank_bootstrap",
    "winner_rank_from",
    "condorcet_rate",
    "condorcet_rate_from",
    "resample",
    "Resampled",
    "generalization",
    "judge_agreement",
    "CriterionResult",
    "JudgeAgreement",
]

#: The resampling axis of each criterion in the ESANN 2021 experiments (the defaults).
PAPER_AXES = {"winner_rank": "candidates", "condorcet_rate": "candidates",
              "generalization": "both"}


def positive_int(value: Any, name: str, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum``; a ConfigError naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ConfigError(f"`{name}` must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def spread(x: np.ndarray) -> float:
    """Standard deviation (ddof=1) of the finite values; 0 for one value, NaN for none (an
    undefined criterion has no spread either)."""
    x = x[np.isfinite(x)]
    if x.size == 0:
        return float("nan")
    return float(np.std(x, ddof=1)) if x.size > 1 else 0.0


def finite_mean(x: np.ndarray) -> float:
    """Mean of the finite values; NaN when there is none."""
    x = x[np.isfinite(x)]
    return float(np.mean(x)) if x.size else float("nan")


def _weighted_average_ranks(ranks: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted average over judges of per-judge ranks (NaN = not ranked: skipped)."""
    present = ~np.isnan(ranks)
    pw = np.where(present, w[None, :], 0.0)
    return np.where(present, ranks, 0.0) @ w / pw.sum(axis=1)


# ---------------------------------------------------------------------- results
class PerMethodSummary:
    """Mean and spread of each method's values, for results holding ``methods`` and
    ``values`` (``{method: array}``)."""

    methods: tuple[str, ...]
    values: dict[str, np.ndarray]

    @property
    def mean(self) -> dict[str, float]:
        return {m: finite_mean(self.values[m]) for m in self.methods}

    @property
    def std(self) -> dict[str, float]:
        return {m: spread(self.values[m]) for m in self.methods}


@dataclass(frozen=True)
class CriterionResult(PerMethodSummary):
    """A bootstrap estimate of one criterion for several methods.

    Attributes
    ----------
    criterion : str
    methods : tuple of str
    values : dict
        ``{method: array of per-trial values}`` (NaN for a trial where the criterion is
        undefined, e.g. no Condorcet winner, or that was skipped).
    n_trials : int
        Trials drawn; ``n_valid`` trials where the criterion is defined (for every method).
    seed : int or None
    missing : str
    params : dict
        Method parameters used.
    notes : tuple of str
        What was skipped or is undefined, and why.
    axis : str
        What each trial resampled.
    skipped : int
        Trials skipped because their resample kept no usable judge (every drawn judge
        lacks a score for every drawn candidate: :func:`~.bootstrap.usable_trials`) or,
        for the generalization, no out-of-bag judge; counted in ``notes``, NaN in
        ``values``. When every trial is skipped the criterion is undefined (NaN mean).
    """

    criterion: str
    methods: tuple[str, ...]
    values: dict[str, np.ndarray]
    n_trials: int
    n_valid: int
    seed: int | None
    missing: str
    params: dict[str, dict[str, Any]]
    notes: tuple[str, ...] = ()
    axis: str = "judges"
    skipped: int = 0

    def to_frame(self) -> pd.DataFrame:
        """One row per method: mean, std, number of valid trials."""
        return pd.DataFrame(
            {
                "method": list(self.methods),
                self.criterion: [self.mean[m] for m in self.methods],
                "std": [self.std[m] for m in self.methods],
                "n_valid": [int(np.isfinite(self.values[m]).sum()) for m in self.methods],
            }
        )

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "criterion": self.criterion,
                "axis": self.axis,
                "methods": list(self.methods),
                "mean": self.mean,
                "std": self.std,
                "n_trials": self.n_trials,
                "n_valid": self.n_valid,
                "seed": self.seed,
                "missing": self.missing,
                "params": self.params,
                "notes": list(self.notes),
            }
        )


@dataclass(frozen=True)
class JudgeAgreement:
    """Agreement between the judges of a matrix.

    ``w`` is Kendall's W with the tie correction; ``mean_spearman`` the mean Spearman rho
    over all pairs of judges, ``(m W - 1) / (m - 1)`` (Kendall & Gibbons).
    """

    w: float
    mean_spearman: float
    n_candidates: int
    n_judges: int
    missing: str
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return jsonable(self.__dict__ | {"notes": list(self.notes)})


# ---------------------------------------------------------------------- shared bootstrap
@dataclass(frozen=True)
class Resampled:
    """A criterion's validated input, draws, per-trial scores of every method and
    per-trial statistics (:mod:`.trial_stats`)."""

    s: Setup
    plan: DrawPlan
    scores: dict[str, np.ndarray]
    usable: np.ndarray     # trials with a usable judge (the others are skipped)
    extra: dict[str, np.ndarray]


def resample(s: Setup, run: Execution, *, axis: str, n_trials: int, then: Then,
             progress: Progress = None) -> Resampled:
    """Draw ``n_trials`` resamples of ``s`` along ``axis`` (``run.seed``), score every
    method on them and compute ``then`` (:func:`.bootstrap.run_trials`)."""
    check_axis(axis)
    n_trials = positive_int(n_trials, "n_trials")
    plan = plan_draws(run.seed, n_trials, axis, s.n, s.m)
    trials = run_trials(s, plan, run, then=then, progress=progress)
    return Resampled(s, plan, trials.scores, trials.usable, trials.extra)


def skipped_notes(b: Resampled) -> tuple[int, tuple[str, ...]]:
    """The number of trials ``b`` skips for lack of a usable judge, and the note saying so
    (none when nothing was skipped)."""
    skipped = int((~b.usable).sum())
    return skipped, (skip_note(skipped, b.plan.trials),) if skipped else ()


def all_skipped(what: str) -> str:
    return f"every resample was skipped; {what} is undefined."


# ---------------------------------------------------------------------- winner rank
def winner_rank(
    data: ScoreMatrix | Setup,
    ranking: Ranking | str,
    *,
    run: Execution | None = None,
) -> float:
    """Normalized average rank of the winner over the judges (thesis 5.3.1).

    ``1 - (r - 1) / (n - 1)``, where ``r`` is the weighted average over the judges of the
    winner's fractional rank on each judge and ``n`` the number of candidates (the papers
    print ``m - 1``; ranks span 1..n, so ``n - 1`` maps the range onto [0, 1]). 1 means the
    winner is first on every judge. When several candidates tie for first, the value is
    their mean.

    Parameters
    ----------
    data : ScoreMatrix or Setup
        The matrix (a setup's: its matrix after the missing-data policy).
    ranking : Ranking or str
        A ranking of (a subset of) the matrix' candidates, or a method name to rank with
        (a setup's own ranking by it; on a matrix, :func:`metascore.rank` with the
        ``missing``, ``seed`` and ``params`` of ``run``).

    Examples
    --------
    >>> import metascore as ms
    >>> m = ms.ScoreMatrix.from_array([[3, 1], [2, 3], [1, 2]], ["A", "B", "C"])
    >>> winner_rank(m, "average_rank")  # B: ranks 2 and 1, average 1.5
    0.75
    """
    matrix = data.matrix if isinstance(data, Setup) else data
    if isinstance(ranking, str):
        ranking = _ranking(data, ranking, run)
    if not isinstance(ranking, Ranking):
        raise InputError(f"`ranking` must be a Ranking or a method name; got {type(ranking).__name__}.")
    judges = None
    if not ranking.judges == matrix.judges:  # a ranking of some of the judges
        known = set(matrix.judges)
        judges = [j for j in ranking.judges if j in known] or None
    sub = matrix.subset(candidates=list(ranking.candidates), judges=judges)
    n = sub.n_candidates
    if n < 2:
        raise InputError(f"the winner rank needs at least 2 candidates; got {n}.")
    ranks = judge_ranks(sub.oriented(), ranking.missing)
    avg = _weighted_average_ranks(ranks, np.asarray(sub.weights, dtype=float))
    winners = np.flatnonzero(ranking.positions == 1)
    return float(np.mean(1.0 - (avg[winners] - 1.0) / (n - 1)))


def _ranking(data: ScoreMatrix | Setup, method: str, run: Execution | None) -> Ranking:
    """The ranking of ``data`` by ``method``: a setup's own (ranked on its input when it
    holds another method), or :func:`metascore.rank` of a matrix under ``run``."""
    if isinstance(data, Setup):
        s, _ = resolve(data, None if method in data.methods else method, run)
        return s.full[method]
    run = Execution(seed=None) if run is None else run
    specs = resolve_methods(method)
    return rank(data, specs[method], missing=run.policy, seed=run.seed,
                **method_params(specs, run.params)[method])


def winner_rank_bootstrap(
    data: ScoreMatrix | Setup,
    methods: str | Sequence[str] | None = None,
    *,
    axis: str = PAPER_AXES["winner_rank"],
    n_trials: int = 1000,
    run: Execution | None = None,
) -> CriterionResult:
    """The winner rank of each method over bootstrap resamples (ESANN 2021).

    Each trial resamples the matrix along ``axis`` (default ``"candidates"``, as the paper:
    n rows drawn with replacement, a drawn copy ties with its original); each method ranks
    the resampled matrix and the trial's value is :func:`winner_rank` on it: the winner's
    average rank over the (resampled) judges among the drawn rows, mapped to [0, 1] by
    ``1 - (r - 1)/(n - 1)``. When the method ties several distinct candidates first, their
    values are averaged. A trial whose resample keeps no usable judge (every drawn judge
    lacks a score for every drawn candidate) is skipped: NaN in ``values``, counted in
    ``skipped`` and ``notes``. Under ``missing="pairwise"`` a winner without a score on the
    drawn judges has no average rank: the trial is undefined for that method (noted).

    Examples
    --------
    >>> import metascore as ms
    >>> m = ms.ScoreMatrix.from_array([[3, 3, 3], [2, 2, 2], [1, 1, 1]], ["A", "B", "C"])
    >>> winner_rank_bootstrap(m, ["mean", "copeland"], n_trials=20).mean
    {'mean': 0.825, 'copeland': 0.825}
    """
    s, run = resolve(data, methods, run)
    return winner_rank_from(resample(s, run, axis=axis, n_trials=n_trials, then=winner_stats,
                                     progress=run.stage("winner rank")))


def winner_rank_from(b: Resampled) -> CriterionResult:
    """:func:`winner_rank_bootstrap` on resampled scores (shared with other criteria):
    the mean over a trial's winners (its first tie group) of their ``norm``
    (:func:`.trial_stats.winner_stats`)."""
    n_trials, missing = b.plan.trials, b.s.missing
    norm = b.extra["norm"]
    values = {}
    for name in b.s.methods:
        share = top_share(b.scores[name])
        value = np.where(share > 0, share * norm, 0.0).sum(axis=1)  # NaN: a winner without one
        values[name] = np.where(b.usable, value, np.nan)
    skipped, notes = skipped_notes(b)
    if skipped == n_trials:
        notes += (all_skipped("the winner rank"),)
    usable = int(b.usable.sum())
    for name in b.s.methods:
        undefined = usable - int(np.isfinite(values[name]).sum())
        if undefined:
            notes += (f"{name}: in {undefined} of {n_trials} resamples a winner has no score "
                      "on the drawn judges (missing='pairwise'); its winner rank is undefined "
                      "there.",)
    n_valid = int(np.isfinite(np.vstack([values[m] for m in b.s.methods])).all(axis=0).sum())
    return CriterionResult("winner_rank", b.s.methods, values, n_trials, n_valid, b.plan.seed,
                           missing, b.s.params, notes, b.plan.axis, skipped)


# ---------------------------------------------------------------------- Condorcet rate
def condorcet_rate(
    data: ScoreMatrix | Setup,
    methods: str | Sequence[str] | None = None,
    *,
    axis: str = PAPER_AXES["condorcet_rate"],
    n_trials: int = 1000,
    run: Execution | None = None,
) -> CriterionResult:
    """Rate of ranking the Condorcet winner first, over bootstrap resamples.

    Each trial resamples the matrix along ``axis`` (default ``"candidates"``, as ESANN
    2021); among trials whose resampled matrix has a (strong) Condorcet winner, the rate is
    the mean share of first place the method gives it: 1 when it is the method's only
    winner, ``1/t`` when t distinct candidates tie for first, 0 otherwise. A candidate drawn twice
    ties with its copy, so it cannot be the Condorcet winner. Head-to-head margins follow
    the missing-data policy (under ``worst`` a missing score loses to every present one).
    Trials without a Condorcet winner are NaN in ``values`` and not counted; so are trials
    whose resample keeps no usable judge (every drawn judge lacks a score for every drawn
    candidate), which are skipped and counted in ``skipped`` and ``notes``.

    Examples
    --------
    >>> import metascore as ms
    >>> m = ms.ScoreMatrix.from_array([[3, 3, 1], [2, 2, 3], [1, 1, 2]], ["A", "B", "C"])
    >>> condorcet_rate(m, ["copeland", "mean"], axis="judges", n_trials=50).mean["copeland"]
    1.0
    """
    s, run = resolve(data, methods, run)
    return condorcet_rate_from(resample(s, run, axis=axis, n_trials=n_trials, then=winner_stats,
                                        progress=run.stage("Condorcet rate")))


def condorcet_rate_from(b: Resampled) -> CriterionResult:
    """:func:`condorcet_rate` on resampled scores (shared with other criteria)."""
    n_trials, missing = b.plan.trials, b.s.missing
    winner = b.extra["condorcet"]
    has = (winner >= 0) & b.usable
    found = int(has.sum())
    trials = np.arange(n_trials)
    values = {name: np.where(has, top_share(b.scores[name])[trials, np.maximum(winner, 0)],
                             np.nan) for name in b.s.methods}
    skipped, notes = skipped_notes(b)
    if skipped == n_trials:
        notes += (all_skipped("the rate"),)
    elif not found:
        notes += ("no resample had a Condorcet winner; the rate is undefined.",)
    return CriterionResult("condorcet_rate", b.s.methods, values, n_trials, found,
                           b.plan.seed, missing, b.s.params, notes, b.plan.axis, skipped)


# ---------------------------------------------------------------------- generalization
def generalization(
    data: ScoreMatrix | Setup,
    methods: str | Sequence[str] | None = None,
    *,
    axis: str = PAPER_AXES["generalization"],
    n_trials: int = 1000,
    run: Execution | None = None,
) -> CriterionResult:
    """Meta-generalization to unseen judges (thesis 5.3.1).

    Each trial draws the judges with replacement (in-bag), and with ``axis="both"`` (the
    default, as ESANN 2021) first the candidates; each method ranks the drawn rows on the
    in-bag judges, and the trial's value is the weighted mean (judge weights) over the
    out-of-bag judges (never drawn) of the Spearman rho between that ranking and the
    judge's ranking of the same rows. A judge that ties all rows carries no information and
    is skipped; a method ranking all rows equal has rho 0. Trials without an informative
    out-of-bag judge are NaN in ``values``. A trial whose in-bag judges are not usable
    (none scores any drawn row) or that leaves no judge out of the bag is skipped: NaN in
    ``values``, counted in ``skipped`` and ``notes``. ``axis="candidates"`` is refused:
    without resampled judges there is no out-of-bag judge to test on.
    """
    if axis == "candidates":
        raise ConfigError("generalization tests on out-of-bag judges, so it must resample "
                          "the judges: use axis='judges' or 'both', not 'candidates'.")
    s, run = resolve(data, methods, run)
    if s.m < 2:
        raise InputError(f"generalization needs at least 2 judges; got {s.m}.")
    b = resample(s, run, axis=axis, n_trials=n_trials, then=generalization_stats,
                 progress=run.stage("generalization"))
    n_trials = b.plan.trials
    values = {name: b.extra[name] for name in s.methods}
    no_oob = int(b.extra["no_oob"].sum())
    n_valid = int(np.isfinite(values[s.methods[0]]).sum())  # the same for every method
    skipped, notes = skipped_notes(b)
    if no_oob:
        notes += (f"{no_oob} of {n_trials} resamples drew every judge, leaving no "
                  "out-of-bag judge to test on, and were skipped.",)
    if skipped + no_oob == n_trials:
        notes += (all_skipped("the generalization"),)
    elif not n_valid:
        notes += ("no resample had an informative out-of-bag judge; the generalization is "
                  "undefined.",)
    return CriterionResult("generalization", s.methods, values, n_trials, n_valid,
                           b.plan.seed, s.missing, s.params, notes, axis, skipped + no_oob)


# ---------------------------------------------------------------------- agreement
def judge_agreement(data: ScoreMatrix | Setup, *, run: Execution | None = None) -> JudgeAgreement:
    """Kendall's W between the judges (tie-corrected) and the mean pairwise Spearman rho.

    Missing cells follow ``run.missing`` (a setup's policy: its judges' ranks are read,
    nothing is prepared again; ``worst``: tied last on that judge; ``pairwise`` is not
    supported since W needs complete rankings). Judge weights are not used.

    Examples
    --------
    >>> import metascore as ms
    >>> m = ms.ScoreMatrix.from_array([[3, 2], [2, 3], [1, 1]], ["A", "B", "C"])
    >>> a = judge_agreement(m)
    >>> round(a.w, 4), round(a.mean_spearman, 4)
    (0.75, 0.5)
    """
    if isinstance(data, Setup):
        s, _ = resolve(data, None, run)
        _complete_rankings(s.missing)
        return _agreement(s.filled_ranks, s.missing)
    missing = (Execution() if run is None else run).policy
    _complete_rankings(missing)
    prepared = prepare_inputs(data, missing).prepared
    return _agreement(judge_ranks(prepared.oriented, missing), missing)


def _complete_rankings(missing: str) -> None:
    if missing == "pairwise":
        raise ConfigError(
            "judge_agreement needs complete rankings; use missing='worst', 'drop_candidates' "
            "or 'drop_judges' instead of 'pairwise'."
        )


def _agreement(ranks: np.ndarray, missing: str) -> JudgeAgreement:
    """Kendall's W and the mean Spearman rho of per-judge ranks (n x m)."""
    n, m = ranks.shape
    w = float(kendall_w(-ranks)) if m >= 1 else float("nan")
    notes = ()
    if not np.isfinite(w):
        notes = ("every judge ties all candidates; W is undefined.",)
    return JudgeAgreement(w, mean_spearman_from_w(w, m), n, m, missing, notes)
