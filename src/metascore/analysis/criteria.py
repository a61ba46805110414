"""Empirical criteria to choose a ranking method (thesis 5.3, ESANN 2021).

- :func:`winner_rank`: how well the winner ranks on average over the judges;
- :func:`condorcet_rate`: how often a method ranks the Condorcet winner first;
- :func:`generalization`: how well a ranking on some judges predicts unseen judges;
- :func:`stability`: how much rankings agree under judge or candidate resampling;
- :func:`stability_vs_judges`: stability as a function of the number of judges
  (thesis fig. 5.5: how many tasks an organizer needs);
- :func:`judge_agreement`: Kendall's W between the judges and the mean Spearman rho.

Every bootstrap procedure draws its indices once per trial and applies them to every
method compared (common random numbers), so differences between methods are not noise
from different draws.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ConfigError, InputError
from ..matrix import ScoreMatrix
from ..ranking import Ranking
from ..registry import rank
from ..stats import kendall_w, mean_spearman_from_w
from ..jsonable import jsonable
from . import _engine as E

__all__ = [
    "winner_rank",
    "condorcet_rate",
    "generalization",
    "stability",
    "stability_vs_judges",
    "judge_agreement",
    "compare_methods",
    "MethodComparison",
    "CriterionResult",
    "StabilityResult",
    "StabilityCurve",
    "JudgeAgreement",
]

AXES = ("judges", "candidates")
CONCORDANCES = ("kendall_w", "spearman")


def _positive_int(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ConfigError(f"`{name}` must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def _choice(value: str, name: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ConfigError(
            f"`{name}` must be one of {list(allowed)}; got {value!r}"
            f"{E.did_you_mean(str(value), allowed)}."
        )
    return value


def _std(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(np.std(x, ddof=1)) if x.size > 1 else 0.0


def _mean(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(np.mean(x)) if x.size else float("nan")


def _weighted_average_ranks(ranks: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted average over judges of per-judge ranks (NaN = not ranked: skipped)."""
    present = ~np.isnan(ranks)
    pw = np.where(present, w[None, :], 0.0)
    return np.where(present, ranks, 0.0) @ w / pw.sum(axis=1)


def _top_credit(codes: np.ndarray) -> np.ndarray:
    """Share of first place of each candidate in each trial: 1/t for each of the t
    candidates tied first, 0 otherwise (T x n)."""
    top = codes == np.nanmax(codes, axis=1, keepdims=True)
    return top / top.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------------- results
@dataclass(frozen=True)
class CriterionResult:
    """A bootstrap estimate of one criterion for several methods.

    Attributes
    ----------
    criterion : str
    methods : tuple of str
    values : dict
        ``{method: array of per-trial values}`` (NaN for a trial where the criterion is
        undefined, e.g. no Condorcet winner).
    n_trials : int
        Trials drawn; ``n_valid`` trials where the criterion is defined.
    seed : int or None
    missing : str
    params : dict
        Method parameters used.
    notes : tuple of str
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

    @property
    def mean(self) -> dict[str, float]:
        return {m: _mean(self.values[m]) for m in self.methods}

    @property
    def std(self) -> dict[str, float]:
        return {m: _std(self.values[m]) for m in self.methods}

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
class StabilityResult:
    """Stability of several methods (thesis 5.3.1): concordance of q rankings of q
    resampled matrices, repeated r times.

    Attributes
    ----------
    values : dict
        ``{method: array (r,)}``: the concordance of each repetition.
    mean, std : dict
        Over the r repetitions (std with ddof=1; 0 when r = 1).
    """

    methods: tuple[str, ...]
    axis: str
    concordance: str
    q: int
    r: int
    values: dict[str, np.ndarray]
    seed: int | None
    missing: str
    params: dict[str, dict[str, Any]]

    @property
    def mean(self) -> dict[str, float]:
        return {m: _mean(self.values[m]) for m in self.methods}

    @property
    def std(self) -> dict[str, float]:
        return {m: _std(self.values[m]) for m in self.methods}

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "method": list(self.methods),
                "stability": [self.mean[m] for m in self.methods],
                "std": [self.std[m] for m in self.methods],
            }
        )

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "criterion": "stability",
                "axis": self.axis,
                "concordance": self.concordance,
                "q": self.q,
                "r": self.r,
                "methods": list(self.methods),
                "mean": self.mean,
                "std": self.std,
                "values": {m: self.values[m] for m in self.methods},
                "seed": self.seed,
                "missing": self.missing,
                "params": self.params,
            }
        )


@dataclass(frozen=True)
class StabilityCurve:
    """Stability versus the number of judges drawn (thesis fig. 5.5).

    ``mean[method]`` and ``std[method]`` are arrays aligned with ``sizes``.
    """

    methods: tuple[str, ...]
    sizes: np.ndarray
    mean: dict[str, np.ndarray]
    std: dict[str, np.ndarray]
    concordance: str
    q: int
    r: int
    seed: int | None
    missing: str
    params: dict[str, dict[str, Any]]
    n_judges: int

    def judges_needed(self, target: float = 0.9) -> dict[str, int | None]:
        """Smallest size whose mean stability reaches ``target`` (None if none does)."""
        out: dict[str, int | None] = {}
        for m in self.methods:
            hit = np.flatnonzero(self.mean[m] >= target)
            out[m] = int(self.sizes[hit[0]]) if hit.size else None
        return out

    def to_frame(self) -> pd.DataFrame:
        """Long table: one row per (method, size)."""
        rows = [
            {"method": m, "n_judges": int(k), "stability": float(mu), "std": float(sd)}
            for m in self.methods
            for k, mu, sd in zip(self.sizes, self.mean[m], self.std[m])
        ]
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "criterion": "stability_vs_judges",
                "methods": list(self.methods),
                "sizes": self.sizes,
                "mean": self.mean,
                "std": self.std,
                "concordance": self.concordance,
                "q": self.q,
                "r": self.r,
                "seed": self.seed,
                "missing": self.missing,
                "params": self.params,
                "n_judges": self.n_judges,
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


# ---------------------------------------------------------------------- winner rank
def winner_rank(
    matrix: ScoreMatrix,
    ranking: Ranking | str,
    *,
    missing: str = "worst",
    seed: int | np.random.Generator | None = None,
    **params: Any,
) -> float:
    """Normalized average rank of the winner over the judges (thesis 5.3.1).

    ``1 - (r - 1) / (n - 1)``, where ``r`` is the weighted average over the judges of the
    winner's fractional rank on each judge and ``n`` the number of candidates (the papers
    print ``m - 1``; ranks span 1..n, so ``n - 1`` maps the range onto [0, 1]). 1 means the
    winner is first on every judge. When several candidates tie for first, the value is
    their mean.

    Parameters
    ----------
    matrix : ScoreMatrix
    ranking : Ranking or str
        A ranking of (a subset of) the matrix' candidates, or a method name to rank with
        (then ``missing``, ``seed`` and ``params`` are passed to :func:`metascore.rank`).

    Examples
    --------
    >>> import metascore as ms
    >>> m = ms.ScoreMatrix.from_array([[3, 1], [2, 3], [1, 2]], ["A", "B", "C"])
    >>> winner_rank(m, "average_rank")  # B: ranks 2 and 1, average 1.5
    0.75
    """
    if isinstance(ranking, str):
        ranking = rank(matrix, ranking, missing=missing, seed=seed, **params)
    if not isinstance(ranking, Ranking):
        raise InputError(f"`ranking` must be a Ranking or a method name; got {type(ranking).__name__}.")
    sub = matrix.subset(
        candidates=list(ranking.candidates),
        judges=[j for j in ranking.judges if j in matrix.judges] or None,
    )
    n = sub.n_candidates
    if n < 2:
        raise InputError(f"the winner rank needs at least 2 candidates; got {n}.")
    ranks = E.judge_ranks(sub.oriented(), ranking.missing)
    avg = _weighted_average_ranks(ranks, np.asarray(sub.weights, dtype=float))
    winners = np.flatnonzero(ranking.positions == 1)
    return float(np.mean(1.0 - (avg[winners] - 1.0) / (n - 1)))


# ---------------------------------------------------------------------- Condorcet rate
def condorcet_rate(
    matrix: ScoreMatrix,
    methods: str | Sequence[str],
    *,
    n_trials: int = 1000,
    seed: int | np.random.Generator | None = 12345,
    missing: str = "worst",
    params: Mapping[str, Any] | None = None,
    progress: E.Progress = None,
) -> CriterionResult:
    """Rate of ranking the Condorcet winner first, over bootstrap resamples of the judges.

    Each trial draws m judges with replacement; among trials whose resampled matrix has a
    (strong) Condorcet winner, the rate is the mean share of first place the method gives
    it: 1 when it is the method's only winner, ``1/t`` when t candidates tie for first, 0
    otherwise. Head-to-head margins follow the missing-data policy (under ``worst`` a
    missing score loses to every present one). Trials without a Condorcet winner are NaN
    in ``values`` and not counted.

    Examples
    --------
    >>> import metascore as ms
    >>> m = ms.ScoreMatrix.from_array([[3, 3, 1], [2, 2, 3], [1, 1, 2]], ["A", "B", "C"])
    >>> condorcet_rate(m, ["copeland", "mean"], n_trials=50).mean["copeland"]
    1.0
    """
    n_trials = _positive_int(n_trials, "n_trials")
    s = E.setup(matrix, methods, params, missing, seed)
    rng, seed_used = E.generator(seed)
    counts = E.judge_counts(rng, s.m, s.m, n_trials)
    seeds = rng.integers(0, 2**31 - 1, size=n_trials)
    cw = counts * np.asarray(s.matrix.weights, dtype=float)[None, :]
    tallies = E.pairwise_tallies(s.filled_ranks, cw)  # margins for the Condorcet winners
    scores = E.bootstrap_scores(s, counts=counts, seeds=seeds, progress=progress, tallies=tallies)
    won = tallies[0]
    has_cw = (won == s.n - 1).any(axis=1)
    cw_index = np.argmax(won == s.n - 1, axis=1)
    values = {}
    for name in s.methods:
        credit = _top_credit(E.rank_codes(scores[name]))
        hit = credit[np.arange(n_trials), cw_index]
        values[name] = np.where(has_cw, hit, np.nan)
    notes = () if has_cw.any() else ("no resample had a Condorcet winner; the rate is undefined.",)
    return CriterionResult(
        "condorcet_rate", s.methods, values, n_trials, int(has_cw.sum()), seed_used, missing,
        s.params, notes,
    )


# ---------------------------------------------------------------------- generalization
def generalization(
    matrix: ScoreMatrix,
    methods: str | Sequence[str],
    *,
    n_trials: int = 1000,
    seed: int | np.random.Generator | None = 12345,
    missing: str = "worst",
    params: Mapping[str, Any] | None = None,
    progress: E.Progress = None,
) -> CriterionResult:
    """Meta-generalization to unseen judges (thesis 5.3.1).

    Each trial draws m judges with replacement (in-bag), ranks the candidates on them with
    each method and computes the Spearman rho between that ranking and the ranking of each
    out-of-bag judge (never drawn); the trial's value is the weighted mean over the
    out-of-bag judges (judge weights). A judge that ties all candidates carries no
    information and is skipped; a method ranking all candidates equal has rho 0. Trials
    without an out-of-bag judge are NaN in ``values``.
    """
    n_trials = _positive_int(n_trials, "n_trials")
    s = E.setup(matrix, methods, params, missing, seed)
    if s.m < 2:
        raise InputError(f"generalization needs at least 2 judges; got {s.m}.")
    rng, seed_used = E.generator(seed)
    counts = E.judge_counts(rng, s.m, s.m, n_trials)
    seeds = rng.integers(0, 2**31 - 1, size=n_trials)
    scores = E.bootstrap_scores(s, counts=counts, seeds=seeds, progress=progress)
    w = np.asarray(s.matrix.weights, dtype=float)
    judge = s.filled_ranks                                # n x m, NaN = not ranked
    oob = counts == 0
    complete = ~np.isnan(judge).any(axis=0)
    jc = judge - np.nanmean(judge, axis=0)
    norm = np.sqrt(np.nansum(jc**2, axis=0))
    informative = norm > 1e-12
    values = {}
    for name in s.methods:
        ranks = E.fractional_ranks_rows(E.rank_codes(scores[name]))   # T x n
        rc = ranks - ranks.mean(axis=1, keepdims=True)
        rnorm = np.sqrt((rc**2).sum(axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):
            rho = (rc @ np.where(complete, jc, 0.0)) / (rnorm[:, None] * norm[None, :])
        for j in np.flatnonzero(~complete & informative):           # missing='pairwise' only
            keep = ~np.isnan(judge[:, j])
            rho[:, j] = [
                E.pearson_rows(
                    E.fractional_ranks_rows(E.rank_codes(r[keep]))[0], judge[keep, j],
                    np.ones(keep.sum(), bool),
                )
                for r in ranks
            ]
        rho = np.where(rnorm[:, None] > 1e-12, rho, 0.0)
        use = oob & informative[None, :]
        wt = np.where(use, w[None, :], 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            values[name] = np.where(
                wt.sum(axis=1) > 0, (np.where(use, rho, 0.0) * wt).sum(axis=1) / wt.sum(axis=1), np.nan
            )
    n_valid = int((oob & informative[None, :]).any(axis=1).sum())
    return CriterionResult(
        "generalization", s.methods, values, n_trials, n_valid, seed_used, missing, s.params
    )


# ---------------------------------------------------------------------- stability
def _stability_values(
    s: E.Setup,
    rng: np.random.Generator,
    *,
    axis: str,
    size: int,
    q: int,
    r: int,
    concordance: str,
    progress: E.Progress,
    done: int,
    total: int,
    fast: bool,
) -> dict[str, np.ndarray]:
    """Concordance of each of r repetitions of q resampled rankings, per method.

    All q * r draws are made first (judges: multiplicities; candidates: indices), then
    every method ranks the same resampled matrices.
    """
    trials = q * r
    if axis == "judges":
        counts, cands = E.judge_counts(rng, s.m, size, trials), None
    else:
        counts, cands = None, rng.integers(0, s.n, size=(trials, size))
    seeds = rng.integers(0, 2**31 - 1, size=trials)
    scores = E.bootstrap_scores(
        s, counts=counts, candidates=cands, seeds=seeds, progress=progress, done=done,
        total=total, fast=fast,
    )
    out = {}
    for name in s.methods:
        codes = E.rank_codes(scores[name]).reshape(r, q, s.n)
        out[name] = np.array([E.concordance(block, concordance) for block in codes])
    return out


def stability(
    matrix: ScoreMatrix,
    methods: str | Sequence[str],
    *,
    axis: str = "judges",
    q: int = 100,
    r: int = 10,
    concordance: str = "kendall_w",
    seed: int | np.random.Generator | None = 12345,
    missing: str = "worst",
    params: Mapping[str, Any] | None = None,
    progress: E.Progress = None,
    _fast: bool = True,
) -> StabilityResult:
    """Stability of ranking methods under judge or candidate resampling (thesis 5.3.1).

    ``q`` bootstrap matrices (judges drawn with replacement for ``axis="judges"``,
    candidates for ``axis="candidates"``; drawn candidates are ranked with their copies,
    which act as clones) give q rankings per method; their concordance is Kendall's W
    (``concordance="kendall_w"``) or the mean Spearman rho over all pairs of rankings
    (``"spearman"``), each pair restricted to the candidates both rankings hold. On the
    candidate axis, rankings rarely share every candidate, so Kendall's W is obtained from
    the mean pairwise Spearman by ``W = (1 + (q - 1) rho) / q``. The procedure is repeated
    ``r`` times; the result holds the r values, their mean and std.

    Examples
    --------
    >>> import metascore as ms
    >>> m = ms.ScoreMatrix.from_array([[3, 3, 3], [2, 2, 2], [1, 1, 1]], ["A", "B", "C"])
    >>> stability(m, ["average_rank", "copeland"], q=5, r=2).mean
    {'average_rank': 1.0, 'copeland': 1.0}
    """
    _choice(axis, "axis", AXES)
    _choice(concordance, "concordance", CONCORDANCES)
    q = _positive_int(q, "q", 2)
    r = _positive_int(r, "r")
    s = E.setup(matrix, methods, params, missing, seed)
    rng, seed_used = E.generator(seed)
    size = s.m if axis == "judges" else s.n
    values = _stability_values(
        s, rng, axis=axis, size=size, q=q, r=r, concordance=concordance, progress=progress,
        done=0, total=q * r, fast=_fast,
    )
    return StabilityResult(s.methods, axis, concordance, q, r, values, seed_used, missing, s.params)


def stability_vs_judges(
    matrix: ScoreMatrix,
    methods: str | Sequence[str],
    sizes: Sequence[int] | None = None,
    *,
    q: int = 100,
    r: int = 10,
    concordance: str = "kendall_w",
    seed: int | np.random.Generator | None = 12345,
    missing: str = "worst",
    params: Mapping[str, Any] | None = None,
    progress: E.Progress = None,
) -> StabilityCurve:
    """Judge-axis stability as a function of the number of judges (thesis fig. 5.5).

    For each size k, each of the q rankings is computed on k judges drawn with replacement
    from the m judges, and the concordance of the q rankings is averaged over r
    repetitions. It answers "how many tasks does my benchmark need for a stable ranking?"
    (see :meth:`StabilityCurve.judges_needed`). Sizes above m extrapolate by resampling.
    ``sizes`` defaults to up to 10 sizes evenly spread over 2..m.
    """
    _choice(concordance, "concordance", CONCORDANCES)
    q = _positive_int(q, "q", 2)
    r = _positive_int(r, "r")
    s = E.setup(matrix, methods, params, missing, seed)
    if sizes is None:
        sizes = np.unique(np.linspace(min(2, s.m), s.m, num=min(10, s.m)).round().astype(int))
    sizes = np.asarray([_positive_int(k, "sizes") for k in sizes], dtype=int)
    rng, seed_used = E.generator(seed)
    mean = {m: np.zeros(len(sizes)) for m in s.methods}
    std = {m: np.zeros(len(sizes)) for m in s.methods}
    total = len(sizes) * q * r
    for i, k in enumerate(sizes):
        vals = _stability_values(
            s, rng, axis="judges", size=int(k), q=q, r=r, concordance=concordance,
            progress=progress, done=i * q * r, total=total, fast=True,
        )
        for m in s.methods:
            mean[m][i], std[m][i] = _mean(vals[m]), _std(vals[m])
    return StabilityCurve(
        s.methods, sizes, mean, std, concordance, q, r, seed_used, missing, s.params, s.m
    )


# ---------------------------------------------------------------------- agreement
def judge_agreement(matrix: ScoreMatrix, *, missing: str = "worst") -> JudgeAgreement:
    """Kendall's W between the judges (tie-corrected) and the mean pairwise Spearman rho.

    Missing cells follow ``missing`` (``worst``: tied last on that judge; ``pairwise`` is
    not supported since W needs complete rankings). Judge weights are not used.

    Examples
    --------
    >>> import metascore as ms
    >>> m = ms.ScoreMatrix.from_array([[3, 2], [2, 3], [1, 1]], ["A", "B", "C"])
    >>> a = judge_agreement(m)
    >>> round(a.w, 4), round(a.mean_spearman, 4)
    (0.75, 0.5)
    """
    if missing == "pairwise":
        raise ConfigError(
            "judge_agreement needs complete rankings; use missing='worst', 'drop_candidates' "
            "or 'drop_judges' instead of 'pairwise'."
        )
    from ..registry import prepare

    prepared = prepare(matrix, missing)
    ranks = E.judge_ranks(prepared.oriented, missing)
    n, m = ranks.shape
    w = float(kendall_w(-ranks)) if m >= 1 else float("nan")
    notes = ()
    if not np.isfinite(w):
        notes = ("every judge ties all candidates; W is undefined.",)
    return JudgeAgreement(w, mean_spearman_from_w(w, m), n, m, missing, notes)


# ---------------------------------------------------------------------- summary table
@dataclass(frozen=True)
class MethodComparison:
    """Empirical and theoretical properties of several methods (thesis table 5.3)."""

    table: pd.DataFrame
    seed: int | None
    n_trials: int
    q: int
    r: int
    missing: str
    params: dict[str, dict[str, Any]]

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "rows": self.table.to_dict(orient="records"),
                "seed": self.seed,
                "n_trials": self.n_trials,
                "q": self.q,
                "r": self.r,
                "missing": self.missing,
                "params": self.params,
            }
        )


def compare_methods(
    matrix: ScoreMatrix,
    methods: str | Sequence[str],
    *,
    n_trials: int = 1000,
    q: int = 100,
    r: int = 10,
    seed: int | np.random.Generator | None = 12345,
    missing: str = "worst",
    params: Mapping[str, Any] | None = None,
) -> MethodComparison:
    """One row per method: the empirical criteria and the registry's theoretical flags.

    Columns: ``winner_rank`` (on the full matrix), ``condorcet_rate`` and
    ``generalization`` (``n_trials`` judge resamples), ``stability_judges`` and
    ``stability_candidates`` (Kendall's W, ``q`` x ``r`` resamples), then the declared
    properties ``condorcet``, ``pareto`` and ``order_only``. Every criterion uses the same
    draws for all methods (the same seed is given to each criterion).
    """
    if isinstance(seed, np.random.Generator):
        seed = int(seed.integers(0, 2**31 - 1))
    s = E.setup(matrix, methods, params, missing, seed)
    kw = dict(seed=seed, missing=missing, params=s.params)
    cond = condorcet_rate(matrix, s.methods, n_trials=n_trials, **kw)
    gen = generalization(matrix, s.methods, n_trials=n_trials, **kw)
    stab_j = stability(matrix, s.methods, axis="judges", q=q, r=r, **kw)
    stab_c = stability(matrix, s.methods, axis="candidates", q=q, r=r, **kw)
    rows = []
    for name in s.methods:
        spec = E.get_ranking_method(name)
        rows.append(
            {
                "method": name,
                "winner_rank": winner_rank(s.matrix, s.full[name]),
                "condorcet_rate": cond.mean[name],
                "generalization": gen.mean[name],
                "stability_judges": stab_j.mean[name],
                "stability_candidates": stab_c.mean[name],
                "condorcet": spec.condorcet,
                "pareto": spec.pareto,
                "order_only": spec.order_only,
            }
        )
    return MethodComparison(pd.DataFrame(rows), seed, n_trials, q, r, missing, s.params)
