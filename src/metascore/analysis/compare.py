"""All the criteria of several methods in one table (thesis table 5.3, ESANN 2021 table 2).

:func:`compare_methods` is pure: it returns a :class:`MethodComparison` holding the table
and every criterion's full result, which the command line, the JSON/HTML report writer
(:mod:`metascore.render.analysis_report`) and the meta-scoring program can embed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ..jsonable import jsonable
from ..errors import ConfigError, InputError, did_you_mean
from ..inputs import Inputs
from ..matrix import ScoreMatrix
from ..registry import check_params, prepare_inputs
from .criteria import (
    PAPER_AXES,
    CriterionResult,
    JudgeAgreement,
    condorcet_rate_from,
    generalization,
    judge_agreement,
    resample,
    winner_rank,
    winner_rank_from,
)
from .execution import Execution
from .stability import PAPER_CONCORDANCE, StabilityResult, stability
from .trial_stats import winner_stats
from .shared import resolve, resolve_methods, Setup
from .bootstrap import check_jobs, single_threaded_blas
from .draws import check_axis

__all__ = ["compare_methods", "MethodComparison", "CRITERIA", "MIN_COMPARED",
           "too_few_to_compare", "unusable_methods", "check_axes"]

#: The table's criteria, in order.
CRITERIA = ("winner_rank", "condorcet_rate", "generalization", "stability_judges",
            "stability_candidates")

#: The fewest candidates a comparison of methods is made on: with two, the criteria measure
#: the order of one pair, so they tie or differ by chance and no method can be told best.
MIN_COMPARED = 3

@dataclass(frozen=True)
class MethodComparison:
    """Empirical and declared properties of several methods (thesis table 5.3).

    Attributes
    ----------
    table : DataFrame
        One row per method: each criterion's mean and its spread (``<criterion>_std``: the
        standard deviation over trials, or over the r repetitions for stabilities),
        ``winner_rank_full`` (the winner rank of the ranking of the whole matrix), then the
        declared properties ``condorcet``, ``pareto``, ``order_only`` and ``unanimity``.
    criteria : dict
        The full result of each criterion (:class:`CriterionResult` or
        :class:`StabilityResult`), keyed as the table's columns.
    agreement : JudgeAgreement or None
        Kendall's W of the judges (None under ``missing="pairwise"``).
    axes, concordance : dict
        The resampling axis of each bootstrap criterion and the concordance of each
        stability.
    """

    table: pd.DataFrame
    criteria: dict[str, CriterionResult | StabilityResult]
    agreement: JudgeAgreement | None
    axes: dict[str, str]
    concordance: dict[str, str]
    seed: int | None
    n_trials: int
    q: int
    r: int
    missing: str
    params: dict[str, dict[str, Any]]
    n_candidates: int
    n_judges: int

    @property
    def methods(self) -> tuple[str, ...]:
        return tuple(self.table["method"])

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "rows": self.table.to_dict(orient="records"),
                "criteria": {k: v.to_dict() for k, v in self.criteria.items()},
                "judge_agreement": None if self.agreement is None else self.agreement.to_dict(),
                "axes": self.axes,
                "concordance": self.concordance,
                "seed": self.seed,
                "n_trials": self.n_trials,
                "q": self.q,
                "r": self.r,
                "missing": self.missing,
                "params": self.params,
                "n_candidates": self.n_candidates,
                "n_judges": self.n_judges,
            }
        )


def too_few_to_compare(n_candidates: int) -> str | None:
    """Why a comparison of methods on ``n_candidates`` candidates is not made, or None."""
    if n_candidates >= MIN_COMPARED:
        return None
    return (f"the comparison of ranking methods needs at least {MIN_COMPARED} candidates and "
            f"there {'is' if n_candidates == 1 else 'are'} {n_candidates}: with fewer, the "
            "criteria measure the order of a single pair and cannot tell the methods apart.")


def unusable_methods(
    data: ScoreMatrix | Inputs, methods: Sequence[str], *, run: Execution | None = None,
) -> dict[str, str]:
    """``{method: why}`` for the methods of ``methods`` that cannot rank ``data`` (a matrix
    after the missing-data policy ``run.missing``, or the inputs the registry prepared),
    e.g. ``relative_difference`` on negative scores: the method's own check of the data,
    without ranking anything."""
    run = Execution() if run is None else run
    inputs = data if isinstance(data, Inputs) else prepare_inputs(data, run.policy)
    specs = resolve_methods(methods)
    params = run.params or {}
    out: dict[str, str] = {}
    for name, spec in specs.items():
        if spec.check is None:
            continue
        try:
            spec.check(inputs.prepared.matrix, check_params(spec, dict(params.get(name, {}))))
        except InputError as exc:
            out[name] = str(exc).rstrip(".")
    return out


def check_axes(axes: Mapping[str, str] | None) -> dict[str, str]:
    """Each bootstrap criterion's resampling axis: :data:`PAPER_AXES` updated by ``axes``."""
    out = dict(PAPER_AXES)
    for key, value in (axes or {}).items():
        if key not in PAPER_AXES:
            raise ConfigError(f"`axes` names unknown criterion {key!r}"
                              f"{did_you_mean(key, PAPER_AXES)}; criteria are {list(PAPER_AXES)}.")
        out[key] = check_axis(value, f"axes[{key!r}]")
    if out["generalization"] == "candidates":
        raise ConfigError("generalization tests on out-of-bag judges, so it must resample the "
                          "judges: use 'judges' or 'both', not 'candidates'.")
    return out


def compare_methods(
    data: ScoreMatrix | Setup,
    methods: str | Sequence[str] | None = None,
    *,
    n_trials: int = 1000,
    q: int = 100,
    r: int = 10,
    axes: Mapping[str, str] | None = None,
    concordance: Mapping[str, str] | None = None,
    run: Execution | None = None,
) -> MethodComparison:
    """One row per method: the empirical criteria and the registry's declared properties.

    ``winner_rank``, ``condorcet_rate`` and ``generalization`` are estimated on
    ``n_trials`` resamples along ``axes`` (default :data:`PAPER_AXES`: candidates,
    candidates, both, as ESANN 2021); ``stability_judges`` and ``stability_candidates`` on
    ``q`` x ``r`` resamples with the ``concordance`` of each axis (default
    :data:`PAPER_CONCORDANCE`: Kendall's W on judges, mean Spearman on candidates). Every
    criterion gets the same seed, so criteria on the same axis see the same resamples, and
    every method sees the same resamples. A prepared setup (:func:`~.shared.setup`) is
    compared as it is, or with ``methods`` (:func:`~.shared.resolve`).
    """
    if not isinstance(data, Setup):
        run = _integer_seed(Execution() if run is None else run)
    check_jobs((data.run if run is None else run).jobs)
    ax = check_axes(axes)
    s, run = resolve(data, methods, run)
    conc = _concordances(concordance)
    run = _integer_seed(run)  # a setup's run may hold a Generator
    with single_threaded_blas():  # many small BLAS calls: see bootstrap
        results = _criteria(s, run, n_trials, q, r, ax, conc)
    return MethodComparison(
        _table(s, results), results, None if s.missing == "pairwise" else judge_agreement(s),
        ax, conc, results["winner_rank"].seed, int(n_trials), int(q), int(r), s.missing,
        s.params, s.n, s.m,
    )


def _integer_seed(run: Execution) -> Execution:
    """``run`` whose Generator seed is replaced by one integer drawn from it, so that every
    criterion draws from the same seed."""
    if isinstance(run.seed, np.random.Generator):
        return replace(run, seed=int(run.seed.integers(0, 2**31 - 1)))
    return run


def _concordances(concordance: Mapping[str, str] | None) -> dict[str, str]:
    """The concordance of each stability: :data:`PAPER_CONCORDANCE` updated by ``concordance``."""
    conc = {"judges": PAPER_CONCORDANCE["judges"], "candidates": PAPER_CONCORDANCE["candidates"]}
    for key, value in (concordance or {}).items():
        if key not in conc:
            raise ConfigError(f"`concordance` names unknown axis {key!r}; axes are {list(conc)}.")
        conc[key] = value
    return conc


def _criteria(s: Setup, run: Execution, n_trials: int, q: int, r: int, ax: dict[str, str],
              conc: dict[str, str]) -> dict[str, CriterionResult | StabilityResult]:
    """Every criterion of the table, in order (criteria drawing alike share the draws)."""
    if ax["winner_rank"] == ax["condorcet_rate"]:  # the same draws: score them once
        b = resample(s, run, axis=ax["winner_rank"], n_trials=n_trials, then=winner_stats,
                     progress=run.stage("winner rank and Condorcet rate"))
        first = {"winner_rank": winner_rank_from(b), "condorcet_rate": condorcet_rate_from(b)}
    else:
        first = {
            "winner_rank": winner_rank_from(resample(
                s, run, axis=ax["winner_rank"], n_trials=n_trials, then=winner_stats,
                progress=run.stage("winner rank"))),
            "condorcet_rate": condorcet_rate_from(resample(
                s, run, axis=ax["condorcet_rate"], n_trials=n_trials, then=winner_stats,
                progress=run.stage("Condorcet rate"))),
        }
    return {
        **first,
        "generalization": generalization(s, axis=ax["generalization"], n_trials=n_trials, run=run),
        "stability_judges": stability(s, axis="judges", q=q, r=r, concordance=conc["judges"],
                                      run=run),
        "stability_candidates": stability(s, axis="candidates", q=q, r=r,
                                          concordance=conc["candidates"], run=run),
    }


def _table(s: Setup, results: Mapping[str, CriterionResult | StabilityResult]) -> pd.DataFrame:
    """One row per method: each criterion's mean and spread, then the declared properties."""
    rows = []
    for name in s.methods:
        spec = s.specs[name]
        row: dict[str, Any] = {"method": name}
        for key in CRITERIA:
            row[key] = results[key].mean[name]
            row[f"{key}_std"] = results[key].std[name]
        row["winner_rank_full"] = winner_rank(s.matrix, s.full[name])
        row.update(condorcet=spec.condorcet, pareto=spec.pareto, order_only=spec.order_only,
                   unanimity=spec.unanimity)
        rows.append(row)
    return pd.DataFrame(rows)
