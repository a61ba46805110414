"""Bootstrap machinery shared by every analysis: draws, per-trial scores, ranks, concordance.

Every procedure draws its resample indices once per trial and applies them to every method
it compares (common random numbers). Scores of resampled matrices come from the ranking
method registry (:func:`metascore.rank`); for a few methods whose score is a weighted sum
of per-judge contributions an exactly equal fast path resamples the precomputed
contributions instead (see :func:`fast_path_reason`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as _st

from ..errors import ConfigError, InputError, did_you_mean
from ..matrix import ScoreMatrix
from ..ranking import Ranking, _jsonable, tie_groups
from ..registry import DEFAULT_SEED, _rng, get_ranking_method, prepare, rank, ranking_method_names
from ..stats import kendall_w

Progress = Callable[[int, int], None] | None

#: Methods with an exactly equal fast path under judge resampling.
FAST_METHODS = ("mean", "average_rank", "success_rate", "copeland")

#: Elements per block of the pairwise sign tensor (memory bound of the Copeland fast path).
_BLOCK = 4_000_000

__all__ = [
    "Setup",
    "setup",
    "generator",
    "judge_counts",
    "bootstrap_scores",
    "rank_codes",
    "fractional_ranks_rows",
    "concordance",
    "judge_ranks",
    "pairwise_tallies",
    "jsonable",
]

def jsonable(obj: Any) -> Any:
    """JSON-ready copy of ``obj``: numpy types to Python ones, NaN/inf to None (JSON has
    no NaN; an undefined value is null, never a silent number)."""
    obj = _jsonable(obj)
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [jsonable(v) for v in obj]
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj


# ---------------------------------------------------------------------- inputs
@dataclass(frozen=True, eq=False)
class Setup:
    """A validated analysis input: the matrix after the missing-data policy and the methods.

    ``full`` holds each method's ranking of the whole (prepared) matrix; computing it also
    validates the method parameters.
    """

    matrix: ScoreMatrix
    methods: tuple[str, ...]
    params: dict[str, dict[str, Any]]
    missing: str
    full: dict[str, Ranking]
    excluded_candidates: dict[str, str]
    excluded_judges: dict[str, str]
    filled_ranks: np.ndarray  # per-judge fractional ranks, n x m (NaN: not ranked)

    @property
    def n(self) -> int:
        return self.matrix.n_candidates

    @property
    def m(self) -> int:
        return self.matrix.n_judges


def _methods(methods: str | Sequence[str]) -> tuple[str, ...]:
    names = (methods,) if isinstance(methods, str) else tuple(methods)
    if not names:
        raise ConfigError("give at least one ranking method; valid methods are "
                          f"{ranking_method_names()}.")
    seen: set[str] = set()
    for name in names:
        get_ranking_method(name)  # unknown names raise with the valid ones
        if name in seen:
            raise ConfigError(f"ranking method {name!r} is listed twice; list each method once.")
        seen.add(name)
    return names


def _params(methods: tuple[str, ...], params: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Per-method parameters: ``{method: {param: value}}``.

    With a single method, a flat ``{param: value}`` mapping is accepted too.
    """
    if not params:
        return {name: {} for name in methods}
    params = dict(params)
    if len(methods) == 1 and not all(isinstance(v, Mapping) for v in params.values()):
        return {methods[0]: params}
    unknown = [k for k in params if k not in methods]
    if unknown:
        raise ConfigError(
            f"`params` names method {unknown[0]!r}{did_you_mean(unknown[0], methods)}, which is "
            f"not among the methods compared ({list(methods)})."
        )
    for key, value in params.items():
        if not isinstance(value, Mapping):
            raise ConfigError(
                f"`params[{key!r}]` must be a mapping of parameter names to values; got {value!r}."
            )
    return {name: dict(params.get(name, {})) for name in methods}


def generator(seed: int | np.random.Generator | None) -> tuple[np.random.Generator, int | None]:
    """The generator used for the draws and the seed to record (None for a Generator)."""
    return _rng(seed)


def judge_ranks(oriented: np.ndarray, missing: str) -> np.ndarray:
    """Per-judge fractional ranks (1 = best); a missing cell is tied last under ``worst``
    and NaN (not ranked) otherwise."""
    x = np.asarray(oriented, dtype=float)
    if np.isnan(x).any() and missing == "worst":
        x = np.where(np.isnan(x), -np.inf, x)
    if np.isnan(x).any():
        return _st.rankdata(-x, method="average", axis=0, nan_policy="omit")
    return _st.rankdata(-x, method="average", axis=0)


def setup(
    matrix: ScoreMatrix,
    methods: str | Sequence[str],
    params: Mapping[str, Any] | None,
    missing: str,
    seed: int | np.random.Generator | None,
) -> Setup:
    """Validate the input once: missing policy, method names and parameters."""
    if not isinstance(matrix, ScoreMatrix):
        raise InputError(f"expected a ScoreMatrix; got {type(matrix).__name__}.")
    names = _methods(methods)
    per_method = _params(names, params)
    prepared = prepare(matrix, missing)
    kept = prepared.matrix
    if kept.n_candidates < 2:
        raise InputError(
            f"the analysis needs at least 2 candidates; {kept.n_candidates} remain after "
            f"missing={missing!r}."
        )
    # The full-data rankings use a fixed integer seed, never the caller's Generator: the
    # bootstrap draws must not depend on which (stochastic) methods are compared.
    full_seed = seed if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) else DEFAULT_SEED
    full = {
        name: rank(kept, name, missing=missing, seed=full_seed, **per_method[name]) for name in names
    }
    return Setup(
        matrix=kept,
        methods=names,
        params=per_method,
        missing=missing,
        full=full,
        excluded_candidates=dict(prepared.excluded_candidates),
        excluded_judges=dict(prepared.excluded_judges),
        filled_ranks=judge_ranks(prepared.oriented, missing),
    )


# ---------------------------------------------------------------------- draws
def judge_counts(rng: np.random.Generator, m: int, size: int, trials: int) -> np.ndarray:
    """Bootstrap draws of ``size`` judges out of ``m`` (with replacement), as multiplicities.

    Returns an integer array ``(trials, m)``: how many times each judge was drawn.
    """
    idx = rng.integers(0, m, size=(trials, size))
    flat = idx + (np.arange(trials) * m)[:, None]
    return np.bincount(flat.ravel(), minlength=trials * m).reshape(trials, m)


# ---------------------------------------------------------------------- fast paths
def _integer_valued(x: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(x)) and np.all(x == np.round(x)))


def fast_path_reason(s: Setup, name: str) -> str | None:
    """None when ``name`` can use its fast path on ``s``, else why not.

    A fast path applies under judge resampling when the score of a resampled matrix is a
    weighted sum of per-judge contributions computed once on the full matrix: this holds
    for ``mean``, ``average_rank`` and ``success_rate`` (their contributions are the
    oriented values, the per-judge ranks and the per-judge numbers of beaten opponents)
    and for ``copeland`` (the pairwise margins are sums of per-judge signs). It needs every
    candidate ranked by every judge (no missing cell, or ``missing="worst"``), and
    integer-valued weights for ``copeland``, so that margins are exact integers and a zero
    margin is exactly zero, as in the registry.
    """
    if name not in FAST_METHODS:
        return "no fast path for this method"
    if name == "average_rank" and s.params[name].get("ties", "average") != "average":
        return "average_rank's fast path uses fractional ranks (ties='average')"
    if np.isnan(s.matrix.values).any() and s.missing != "worst":
        return f"missing cells under missing={s.missing!r}"
    if name == "copeland" and not _integer_valued(np.asarray(s.matrix.weights)):
        return "non-integer judge weights"
    return None


def pairwise_tallies(ranks: np.ndarray, cw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Head-to-head wins and ties of every candidate in every trial.

    ``ranks`` are per-judge ranks (n x m, lower is better, NaN = not ranked: not compared),
    ``cw`` the weight of each judge in each trial (T x m: judge weight times multiplicity).
    The margin of (a, b) in trial t is ``sum_j cw[t, j] sign(rank_bj - rank_aj)``; returns
    ``(won, tied)``, each T x n: the number of opponents each candidate beats (margin > 0)
    and ties (margin = 0). Blocks of candidate rows keep the sign tensor under ``_BLOCK``
    elements; the sums are one matrix product per block, in float32 when every sum is an
    exact integer below 2**24, else in float64.
    """
    n, m = ranks.shape
    trials = cw.shape[0]
    exact32 = _integer_valued(cw) and float(np.abs(cw).sum(axis=1).max(initial=0)) < 2**24
    dtype = np.float32 if exact32 else np.float64
    weights = np.ascontiguousarray(cw.T, dtype=dtype)
    # Ranks are multiples of 1/2 below 2**23, hence exact in float32 as well.
    r = np.asarray(ranks, dtype=dtype)
    has_nan = bool(np.isnan(r).any())
    won = np.zeros((n, trials))
    tied = np.zeros((n, trials))
    rows = max(1, _BLOCK // max(1, n * m))
    for a0 in range(0, n - 1, rows):
        a1 = min(n - 1, a0 + rows)
        nb, nc = a1 - a0, n - a0 - 1
        signs = np.subtract(r[None, a0 + 1:, :], r[a0:a1, None, :])
        np.sign(signs, out=signs)
        if has_nan:
            signs[np.isnan(signs)] = 0.0
        margin = (signs.reshape(nb * nc, m) @ weights).reshape(nb, nc, trials)
        upper = (np.arange(nc)[None, :] >= np.arange(nb)[:, None])[:, :, None]  # b > a
        pos, neg, zero = (margin > 0) & upper, (margin < 0) & upper, (margin == 0) & upper
        won[a0:a1] += pos.sum(axis=1)
        won[a0 + 1:] += neg.sum(axis=0)
        tied[a0:a1] += zero.sum(axis=1)
        tied[a0 + 1:] += zero.sum(axis=0)
    return won.T, tied.T


def _fast_scores(
    s: Setup, name: str, cw: np.ndarray, tallies: tuple[np.ndarray, np.ndarray] | None = None
) -> np.ndarray:
    """Scores (T x n) of ``name`` on resampled judges with per-trial judge weights ``cw``
    (``tallies``: the :func:`pairwise_tallies` of ``cw`` if already computed)."""
    ranks = s.filled_ranks
    total = cw.sum(axis=1)[:, None]
    n = s.n
    if name == "average_rank":
        return -(cw @ ranks.T) / total
    if name == "mean":
        prepared = prepare(s.matrix, s.missing)
        values = prepared.filled(values_based=True)
        return (cw @ values.T) / total
    if name == "success_rate":
        ties = s.params[name].get("ties", "zero")
        if ties == "half":
            beaten = n - ranks  # worse + 1/2 (tied others)
        else:
            worse = n - _st.rankdata(ranks, method="max", axis=0)
            beaten = worse
        return (cw @ beaten.T) / (total * (n - 1))
    if name == "copeland":
        won, tied = pairwise_tallies(ranks, cw) if tallies is None else tallies
        return (won + 0.5 * tied) / (n - 1)
    raise AssertionError(name)  # pragma: no cover


# ---------------------------------------------------------------------- per-trial scores
def bootstrap_scores(
    s: Setup,
    *,
    counts: np.ndarray | None = None,
    candidates: np.ndarray | None = None,
    seeds: np.ndarray,
    progress: Progress = None,
    done: int = 0,
    total: int | None = None,
    fast: bool = True,
    tallies: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Scores of every method on every trial's resampled matrix.

    Parameters
    ----------
    counts : int array (T, m), optional
        Multiplicity of each judge in each trial (None: all judges once).
    candidates : int array (T, k), optional
        Candidate indices drawn in each trial (None: all candidates once). Copies of a
        candidate are ranked as clones; the score kept is that of its first copy.
    seeds : int array (T,)
        Seed handed to every method in each trial (the same for all methods).
    fast : bool
        Use the exactly equal fast paths where they apply.
    tallies : (won, tied), optional
        :func:`pairwise_tallies` of these counts, when the caller already has them.

    Returns
    -------
    dict
        ``{method: array (T, n)}``, NaN for a candidate absent from a trial.
    """
    trials = len(seeds)
    total = trials if total is None else total
    out: dict[str, np.ndarray] = {}
    weights = np.asarray(s.matrix.weights, dtype=float)
    general = []
    for name in s.methods:
        if fast and candidates is None and fast_path_reason(s, name) is None:
            cw = (np.ones((trials, s.m)) if counts is None else counts) * weights[None, :]
            out[name] = _fast_scores(s, name, cw, tallies)
        else:
            general.append(name)
            out[name] = np.full((trials, s.n), np.nan)
    if general:
        for t in range(trials):
            judges = None if counts is None else np.repeat(np.arange(s.m), counts[t])
            cand = None if candidates is None else np.asarray(candidates[t], dtype=np.intp)
            sub = s.matrix.subset(candidates=cand, judges=judges)
            if cand is not None:
                empty = np.isnan(sub.values).all(axis=0)
                if empty.any():  # a judge that scores none of the drawn candidates
                    sub = sub.subset(judges=np.flatnonzero(~empty))
            for name in general:
                r = rank(sub, name, missing=s.missing, seed=int(seeds[t]), **s.params[name])
                if cand is None:
                    out[name][t] = r.scores
                else:
                    _, first = np.unique(cand, return_index=True)
                    out[name][t, cand[first]] = r.scores[first]
            if progress is not None:
                progress(done + t + 1, total)
    elif progress is not None:
        progress(done + trials, total)
    return out


# ---------------------------------------------------------------------- ranks
def rank_codes(scores: np.ndarray) -> np.ndarray:
    """Exact tie codes of score rows: ``-group`` (0 = best group), NaN for absent.

    Scores equal within the registry's tolerance (``tie_groups``) get the same code, so
    ranks computed from codes match :class:`~metascore.Ranking` ranks exactly.
    """
    scores = np.atleast_2d(np.asarray(scores, dtype=float))
    codes = np.full(scores.shape, np.nan)
    for t, row in enumerate(scores):
        present = ~np.isnan(row)
        if present.any():
            _, group = tie_groups(row[present])
            codes[t, present] = -group
    return codes


def fractional_ranks_rows(codes: np.ndarray) -> np.ndarray:
    """Fractional ranks (1 = best) of each row of codes among its present entries."""
    codes = np.atleast_2d(codes)
    if np.isnan(codes).any():
        return _st.rankdata(-codes, method="average", axis=1, nan_policy="omit")
    return _st.rankdata(-codes, method="average", axis=1)


def _pearson_rows(x: np.ndarray, y: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Pearson correlation of x and y along the last axis over ``mask``.

    Undefined correlations follow the concordance convention: 1 when both vectors are
    constant (identical rankings: all tied), 0 when only one is (no association), NaN when
    fewer than 2 entries are shared.
    """
    k = mask.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = np.where(mask, x, 0).sum(-1) / k
        my = np.where(mask, y, 0).sum(-1) / k
        dx = np.where(mask, x - mx[..., None], 0)
        dy = np.where(mask, y - my[..., None], 0)
        sxx, syy = (dx * dx).sum(-1), (dy * dy).sum(-1)
        r = (dx * dy).sum(-1) / np.sqrt(sxx * syy)
    flat_x, flat_y = sxx <= 1e-12, syy <= 1e-12
    r = np.where(flat_x & flat_y, 1.0, np.where(flat_x | flat_y, 0.0, r))
    return np.where(k >= 2, r, np.nan)


def _mean_pairwise_spearman(codes: np.ndarray) -> float:
    """Mean Spearman rho over the q(q-1)/2 pairs of rows, each pair restricted to the
    candidates both rows rank (ranks recomputed within that shared set)."""
    q, n = codes.shape
    present = ~np.isnan(codes)
    iu = np.triu_indices(q, k=1)
    if present.all():
        ranks = fractional_ranks_rows(codes)
        rho = _pearson_rows(ranks[iu[0]], ranks[iu[1]], np.ones((len(iu[0]), n), bool))
        return float(np.nanmean(rho)) if np.isfinite(rho).any() else float("nan")
    # within[i, j] = ranks of row i restricted to the candidates rows i and j share
    within = np.full((q, q, n), np.nan)
    filled = np.where(present, codes, -np.inf)
    for i in range(q):
        shared = present & present[i][None, :]                     # (q, n)
        better = (filled[i][None, :] > filled[i][:, None]).astype(float)   # [a, b]: b beats a
        equal = (filled[i][None, :] == filled[i][:, None]).astype(float)
        sh = shared.astype(float)
        rk = 1.0 + sh @ better.T + 0.5 * (sh @ equal.T - 1.0)
        within[i] = np.where(shared, rk, np.nan)
    mask = present[iu[0]] & present[iu[1]]
    x, y = within[iu[0], iu[1]], within[iu[1], iu[0]]
    rho = _pearson_rows(np.nan_to_num(x), np.nan_to_num(y), mask)
    return float(np.nanmean(rho)) if np.isfinite(rho).any() else float("nan")


def concordance(codes: np.ndarray, kind: str) -> float:
    """Concordance of q rankings (rows of tie codes, NaN = candidate absent).

    ``kind="spearman"``: mean Spearman rho over all pairs of rankings, each pair restricted
    to the candidates both contain. ``kind="kendall_w"``: Kendall's W with the tie
    correction when every ranking holds every candidate; otherwise (candidate resampling)
    the W that corresponds to the mean pairwise Spearman by Kendall's identity
    ``W = (1 + (q - 1) rho_mean) / q``, exact for complete untied rankings. Identical
    rankings have concordance 1 (even when all tied).
    """
    codes = np.atleast_2d(codes)
    q = codes.shape[0]
    if q < 2:
        raise InputError(f"concordance needs at least 2 rankings; got {q}.")
    complete = not np.isnan(codes).any()
    if complete and (codes == codes[0]).all():
        return 1.0
    if kind == "kendall_w":
        if complete:
            return float(kendall_w(codes.T))
        return (1.0 + (q - 1) * _mean_pairwise_spearman(codes)) / q
    if kind == "spearman":
        return _mean_pairwise_spearman(codes)
    raise ConfigError(
        f"unknown concordance {kind!r}{did_you_mean(kind, ('kendall_w', 'spearman'))}; "
        "allowed values are ['kendall_w', 'spearman']."
    )
