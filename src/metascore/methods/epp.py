"""Elo-based Predictive Power (EPP): Bradley-Terry ratings fitted to pairwise wins.

EPP (Gosiewska, Woźnica, Biecek, "Interpretable meta-score for model performance") fits
the logistic model ``logit p(i beats j) = beta_i - beta_j`` by maximum likelihood to the
outcomes of all head-to-head comparisons ("matches") over the judges ("rounds"), with
``sum beta = 0``. Here the outcomes are aggregated per pair: ``i`` won
``W(i, j) = N(i, j) + T(i, j) / 2`` of the ``C(i, j)`` comparisons it shared with ``j``
(a tie counts 1/2 to each side, ``T = C - N - N^T``), all weighted by the judges' weights.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.special import expit, ndtri

from ..constraints import Interval
from ..errors import ConfigError
from ..pairwise import PairwiseCounts
from ..method_spec import MethodOutput, Weighting, ranking_method
from ..resampling import Shortcuts

__all__ = ["epp", "elo", "fit_bradley_terry", "bradley_terry_strengths", "bradley_terry_loss",
           "BradleyTerryFit", "SCORES_ONLY"]

#: Default ridge penalty ``lambda`` (a N(0, 1/lambda) = N(0, 10^2) prior on each beta).
DEFAULT_RIDGE = 0.01
#: Up to this many candidates the Newton steps use a dense Cholesky solve and standard
#: errors are computed; above, conjugate gradients and no standard errors.
DENSE_SOLVE_LIMIT = 3000
#: Elo points per unit of beta: 400 / ln 10.
ELO_SCALE = 400.0 / np.log(10.0)
#: Allowed parameter values of ``epp`` and ``elo``.
PARAMS = {
    "level": Interval(0.0, 1.0, closed="neither", what="a confidence level"),
    "ridge": Interval(0.0, None, closed="neither"),
}


@dataclass(frozen=True)
class BradleyTerryFit:
    """The penalized maximum-likelihood Bradley-Terry fit (see :func:`fit_bradley_terry`)."""

    beta: np.ndarray
    se: np.ndarray | None
    deviance: float
    df: int
    iterations: int
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # a, b, W(a, b), C(a, b)

    @property
    def standardized_deviance(self) -> float:
        """``(D - df) / sqrt(2 df)`` (EPP paper, Property 3.9; ``df = m (m - 2)`` there)."""
        return float((self.deviance - self.df) / np.sqrt(2.0 * self.df)) if self.df > 0 else 0.0


@functools.lru_cache(maxsize=8)
def _all_pairs(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every pair ``a < b`` of n candidates (``triu_indices`` order) and the flat positions
    of ``(a, b)`` and ``(b, a)`` in an n x n matrix (read-only: shared by every fit; the
    fits get copies of ``a`` and ``b``, which their results hold)."""
    a, b = np.triu_indices(n, 1)
    out = (a, b, a * n + b, b * n + a)
    for x in out:
        x.flags.writeable = False
    return out


def _pair_data(counts: PairwiseCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Compared pairs ``a < b`` with ``W(a, b)`` (wins, ties half) and games ``C(a, b)``.

    Dense counts where every pair is compared (no missing cell: each fit of a resample)
    take every pair in :meth:`PairwiseCounts.pairs`'s order without looking for them."""
    if not counts.is_sparse:
        n = counts.n
        compared = np.asarray(counts.compared)
        if np.count_nonzero(compared) - np.count_nonzero(np.diagonal(compared)) == n * (n - 1):
            a, b, upper, lower = _all_pairs(n)
            flat = np.asarray(counts.wins).ravel()
            n_ab, n_ba = np.asarray(flat[upper], dtype=float), np.asarray(flat[lower], dtype=float)
            games = np.asarray(compared.ravel()[upper], dtype=float)
            return a.copy(), b.copy(), n_ab + np.maximum(games - n_ab - n_ba, 0.0) / 2.0, games
    a, b, n_ab, n_ba = counts.pairs()
    if counts.is_sparse:
        games = np.asarray(sp.csr_array(counts.compared)[a, b], dtype=float).ravel()
    else:
        games = np.asarray(counts.compared, dtype=float).ravel()[a * counts.n + b]
    ties = np.maximum(games - n_ab - n_ba, 0.0)
    keep = games > 0
    return a[keep], b[keep], (n_ab + ties / 2.0)[keep], games[keep]


def bradley_terry_loss(
    beta: np.ndarray, a: np.ndarray, b: np.ndarray, wins: np.ndarray, games: np.ndarray,
    ridge: float,
) -> tuple[float, np.ndarray]:
    """Penalized negative log-likelihood and its gradient.

    ``L(beta) = sum_{pairs} [W_ab log(1 + e^{-d}) + (C_ab - W_ab) log(1 + e^{d})]
    + ridge / 2 * sum beta^2`` with ``d = beta_a - beta_b``;
    ``dL/dbeta_a = -sum_b (W_ab - C_ab p_ab) + ridge beta_a``, ``p_ab = expit(d)``.
    """
    value, grad, _ = _loss(beta, a, b, wins, games, ridge)
    return value, grad


def _loss(
    beta: np.ndarray, a: np.ndarray, b: np.ndarray, wins: np.ndarray, games: np.ndarray,
    ridge: float | np.ndarray, upper: np.ndarray | None = None,
) -> tuple[float, np.ndarray, np.ndarray]:
    """:func:`bradley_terry_loss` and the win probabilities ``p_ab`` it computed (the
    Newton step reuses them for the Fisher information). ``upper``, the flat positions
    ``a * n + b`` of the pairs in an n x n matrix, sums the gradient as the column minus
    the row sums of that matrix (faster than two bincounts)."""
    d = beta[a] - beta[b]
    # log(1 + e^{-d}) = log1p(e^{-|d|}) + max(-d, 0), and log(1 + e^{d}) likewise; with
    # e = e^{-|d|}, expit(d) is 1 / (1 + e) for d >= 0 and e / (1 + e) below: one
    # exponential per pair for the loss and the probabilities, stable for any d.
    e = np.exp(-np.abs(d))
    value = games @ np.log1p(e) + wins @ np.maximum(-d, 0.0) + (games - wins) @ np.maximum(d, 0.0)
    value += 0.5 * np.sum(ridge * beta * beta)
    q = 1.0 / (1.0 + e)
    p = e * q
    np.copyto(p, q, where=d >= 0)
    resid = wins - games * p
    n = beta.size
    if upper is None:
        grad = np.bincount(b, resid, minlength=n) - np.bincount(a, resid, minlength=n)
    else:
        cells = np.zeros(n * n)
        cells[upper] = resid
        cells = cells.reshape(n, n)
        grad = cells.sum(axis=0) - cells.sum(axis=1)
    return float(value), grad + ridge * beta, p


def _laplacian(a: np.ndarray, b: np.ndarray, h: np.ndarray, n: int, ridge: float | np.ndarray,
               dense: bool, cells: tuple[np.ndarray, np.ndarray] | None = None
               ) -> np.ndarray | sp.csr_array:
    """``sum_pairs h (e_a - e_b)(e_a - e_b)^T + ridge I``: the penalized Fisher information.
    ``cells``: the flat positions ``a * n + b`` and ``b * n + a`` when already known."""
    if dense:
        H = np.zeros((n, n))
        flat = H.ravel()  # a view: flat indices are cheaper than pairs of indices
        upper, lower = (a * n + b, b * n + a) if cells is None else cells
        flat[upper] = -h
        flat[lower] = -h
        flat[:: n + 1] = ridge - H.sum(axis=1)  # the diagonal cells are still 0 here
        return H
    diag = np.bincount(a, h, minlength=n) + np.bincount(b, h, minlength=n) + ridge
    off = sp.coo_array((np.concatenate([-h, -h]), (np.concatenate([a, b]), np.concatenate([b, a]))),
                       shape=(n, n))
    return (off + sp.diags_array(diag)).tocsr()


def _newton(a: np.ndarray, b: np.ndarray, wins: np.ndarray, games: np.ndarray, n: int,
            penalty: float | np.ndarray, beta: np.ndarray, tol: float, max_iter: int
            ) -> tuple[np.ndarray, int]:
    """Newton's method with backtracking from ``beta``; the strengths and the iterations."""
    dense = n <= DENSE_SOLVE_LIMIT
    cells = (a * n + b, b * n + a) if dense else None
    upper = None if cells is None else cells[0]
    value, grad, p = _loss(beta, a, b, wins, games, penalty, upper)
    it = 0
    for it in range(1, max_iter + 1):
        H = _laplacian(a, b, games * p * (1.0 - p), n, penalty, dense, cells)
        if dense:
            factor = scipy.linalg.cho_factor(H, overwrite_a=True, check_finite=False)
            step = scipy.linalg.cho_solve(factor, grad, check_finite=False)
        else:
            jacobi = sp.diags_array(1.0 / H.diagonal())
            step, _ = spla.cg(H, grad, rtol=1e-10, maxiter=1000, M=jacobi)
        decrease = float(grad @ step)  # the Newton decrement squared
        # Below the rounding of the loss (relative 1e-12, about 10^4 ulps) a decrease cannot
        # be seen: the full step, safe that close to the optimum, is taken without a test.
        visible = decrease > 1e-12 * max(1.0, abs(value))
        t = 1.0
        while True:  # backtracking (Armijo) line search
            new_beta = beta - t * step
            new_value, new_grad, new_p = _loss(new_beta, a, b, wins, games, penalty, upper)
            if not visible or new_value <= value - 1e-4 * t * decrease or t < 1e-10:
                break
            t /= 2.0
        beta, value, grad, p = new_beta, new_value, new_grad, new_p
        if np.max(np.abs(t * step)) < tol:
            break
    return beta, it


def _start(n: int, start: np.ndarray | None, copies: np.ndarray | None) -> np.ndarray:
    if start is None:
        return np.zeros(n)
    x = np.asarray(start, dtype=float)
    return x - (np.mean(x) if copies is None else np.average(x, weights=copies))


def _check_ridge(ridge: float) -> None:
    if not (np.isfinite(ridge) and ridge > 0):
        raise ConfigError(f"`ridge` must be a positive number; got {ridge!r}.")


def fit_bradley_terry(
    counts: PairwiseCounts, ridge: float = DEFAULT_RIDGE, *, tol: float = 1e-9,
    max_iter: int = 100, standard_errors: bool = True, start: np.ndarray | None = None,
    multiplicity: np.ndarray | None = None,
) -> BradleyTerryFit:
    """Penalized maximum-likelihood Bradley-Terry strengths by Newton's method.

    Minimizes :func:`bradley_terry_loss`. The loss is strictly convex (the ridge makes it
    so), so Newton steps with backtracking converge from ``beta = 0``, or from ``start``
    (centered; e.g. the strengths of the full data when fitting a resample: fewer steps to
    the same optimum, reached to the same tolerance). ``multiplicity`` says candidate u stands
    for ``m_u`` identical copies (a resample that drew it ``m_u`` times), the counts being
    the copies' totals ``m_u m_v N(u, v)``: the ridge then counts every copy and the fit is
    that of the expanded counts, whose unique optimum gives copies equal strengths (no
    standard errors then). The ridge keeps every
    estimate finite when a candidate wins or loses all its comparisons and when the
    comparison graph is disconnected; since the likelihood only depends on differences,
    its minimizer has ``sum beta = 0`` exactly. Dense Cholesky solves up to
    ``DENSE_SOLVE_LIMIT`` candidates, sparse conjugate gradients (Jacobi preconditioned)
    above, using only the compared pairs. Newton stops when a step moves no strength by
    ``tol`` or more.

    Standard errors (dense case, unless ``standard_errors=False``) are the square roots of
    the diagonal of ``P H^{-1} P``, with ``H`` the penalized Fisher information at the optimum and ``P = I - 11^T/n`` the
    projection on ``sum beta = 0``.

    The deviance follows the EPP paper (Property 3.7): twice the log-likelihood ratio of
    the saturated model over the fitted one, with each pair counted in both orientations
    ``(i, j)`` and ``(j, i)`` as in the paper's logistic regression, i.e. twice the binomial
    deviance over unordered pairs. Its degrees of freedom are ``2 P - n`` for ``P``
    compared pairs, which is the paper's ``m (m - 2)`` when every pair is compared.
    """
    _check_ridge(ridge)
    a, b, wins, games = _pair_data(counts)
    n = counts.n
    copies = None if multiplicity is None else np.asarray(multiplicity, dtype=float)
    penalty = ridge if copies is None else ridge * copies  # the ridge counts every copy
    beta, it = _newton(a, b, wins, games, n, penalty, _start(n, start, copies), tol, max_iter)
    beta = beta - (np.mean(beta) if copies is None else np.average(beta, weights=copies))

    se = None
    if n <= DENSE_SOLVE_LIMIT and standard_errors and copies is None:
        p = expit(beta[a] - beta[b])
        H = _laplacian(a, b, games * p * (1.0 - p), n, ridge, True)
        # H is symmetric positive definite: Cholesky is several times cheaper than a
        # general inverse (at 10 candidates as at 300)
        factor = scipy.linalg.cho_factor(H, overwrite_a=True, check_finite=False)
        cov = scipy.linalg.cho_solve(factor, np.eye(n), check_finite=False)
        cov -= cov.mean(axis=0, keepdims=True)
        cov -= cov.mean(axis=1, keepdims=True)
        se = np.sqrt(np.clip(np.diag(cov), 0.0, None))

    p = expit(beta[a] - beta[b])
    losses = games - wins
    with np.errstate(divide="ignore", invalid="ignore"):
        term_w = np.where(wins > 0, wins * np.log(wins / (games * p)), 0.0)
        term_l = np.where(losses > 0, losses * np.log(losses / (games * (1.0 - p))), 0.0)
    deviance = float(2.0 * 2.0 * (term_w + term_l).sum())
    return BradleyTerryFit(beta, se, deviance, max(0, int(2 * a.size - n)), it, (a, b, wins, games))


def bradley_terry_strengths(
    counts: PairwiseCounts, ridge: float = DEFAULT_RIDGE, *, tol: float = 1e-9,
    max_iter: int = 100, start: np.ndarray | None = None,
    multiplicity: np.ndarray | None = None,
) -> np.ndarray:
    """The strengths ``beta`` of :func:`fit_bradley_terry` alone: the same Newton fit,
    without standard errors and deviance (what a bootstrap needs on each resample)."""
    _check_ridge(ridge)
    a, b, wins, games = _pair_data(counts)
    n = counts.n
    copies = None if multiplicity is None else np.asarray(multiplicity, dtype=float)
    penalty = ridge if copies is None else ridge * copies
    beta, _ = _newton(a, b, wins, games, n, penalty, _start(n, start, copies), tol, max_iter)
    return beta - (np.mean(beta) if copies is None else np.average(beta, weights=copies))


def _output(counts: PairwiseCounts, ridge: float, level: float, scale: float,
            offset: float, name: str) -> MethodOutput:
    fit = fit_bradley_terry(counts, ridge)
    score = offset + scale * fit.beta
    details: dict = {
        "beta": fit.beta,
        "p_vs_average": expit(fit.beta),
        "deviance": fit.deviance,
        "deviance_df": fit.df,
        "standardized_deviance": fit.standardized_deviance,
        "ridge": ridge,
        "iterations": fit.iterations,
    }
    notes: list[str] = []
    if fit.se is not None:
        z = ndtri(0.5 + level / 2.0)  # the standard normal quantile
        details.update(se=scale * fit.se, ci_low=score - z * scale * fit.se,
                       ci_high=score + z * scale * fit.se, level=level)
    else:
        notes.append(
            f"{name}: standard errors and confidence intervals are not computed above "
            f"{DENSE_SOLVE_LIMIT} candidates."
        )
    if not counts.is_sparse:
        details["p"] = expit(fit.beta[:, None] - fit.beta[None, :])
    a, b = fit.pairs[0], fit.pairs[1]
    graph = sp.coo_array((np.ones(a.size), (a, b)), shape=(counts.n, counts.n))
    n_comp, _ = sp.csgraph.connected_components(graph, directed=False)
    if n_comp > 1:
        notes.append(
            f"{name}: the comparison graph has {n_comp} disconnected parts; ratings of "
            "different parts are only related through the ridge prior."
        )
    per_candidate = tuple(k for k in ("beta", "p_vs_average", "se", "ci_low", "ci_high") if k in details)
    return MethodOutput(score, details=details, notes=tuple(notes), per_candidate=per_candidate)


def _scores_only(scale: float, offset: float):
    def scores(counts: PairwiseCounts, *, level: float = 0.95, ridge: float = DEFAULT_RIDGE,
               start: np.ndarray | None = None, multiplicity: np.ndarray | None = None
               ) -> np.ndarray:
        return offset + scale * bradley_terry_strengths(counts, ridge, start=start,
                                                        multiplicity=multiplicity)
    return scores


def _full_strengths(ranking) -> np.ndarray:
    """Newton's start on a resample: the full data's strengths ``beta``."""
    return ranking.details["beta"]


#: The scores of ``epp`` and ``elo`` alone, equal to the registered methods' scores (the
#: same fit) without standard errors, deviance or win probabilities: what the bootstrap
#: analyses need on each resample.
SCORES_ONLY = {"epp": _scores_only(1.0, 0.0), "elo": _scores_only(ELO_SCALE, 1500.0)}
#: Their resampling shortcuts: the scores alone, warm-started from the full data's fit.
SHORTCUTS = {name: Shortcuts(scores=func, warm_start=_full_strengths)
             for name, func in SCORES_ONLY.items()}
#: How the weights move their strengths: through the fit only.
FITTED = Weighting(why_not="its strengths are fitted to the weighted comparisons, without a "
                           "closed form")


def _strengths_method(name: str, description: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The registration of a method scoring the penalized Bradley-Terry strengths (``epp``
    and ``elo``, one fit on two scales): pairwise counts, sparse ones too, the fit's
    parameters and the method's resampling shortcuts."""
    return ranking_method(name, input="pairwise", sparse=True, params=PARAMS,
                          resampling=SHORTCUTS[name], weighting=FITTED,
                          description=description)


@_strengths_method(
    "epp", "Elo-based Predictive Power: Bradley-Terry logit strengths fitted to pairwise wins.")
def epp(counts: PairwiseCounts, *, level: float = 0.95, ridge: float = DEFAULT_RIDGE) -> MethodOutput:
    """Elo-based Predictive Power (EPP): ``logit p(i beats j) = beta_i - beta_j``.

    The strengths ``beta`` (``sum beta = 0``) maximize the Bradley-Terry likelihood of the
    aggregated outcomes: ``i`` won ``W(i, j) = N(i, j) + T(i, j) / 2`` of its ``C(i, j)``
    comparisons with ``j`` (ties count 1/2 to each side). The score is ``beta``.

    The fit adds the penalty ``ridge / 2 * sum beta^2`` (default ``ridge = 0.01``, i.e. an
    independent N(0, 10^2) prior on each beta, in units of judge weight): negligible when
    there is data, it keeps the estimates finite when a candidate wins or loses every
    comparison and when the comparison graph is disconnected.

    Parameters
    ----------
    level : float
        Level of the Wald confidence intervals ``beta +- z se`` (EPP Property 3.6).
    ridge : float
        Penalty weight ``lambda`` (> 0).

    ``details``: ``beta``; ``se`` (from the inverse penalized Fisher information projected
    on ``sum beta = 0``), ``ci_low``, ``ci_high`` (up to ``DENSE_SOLVE_LIMIT`` candidates);
    ``p`` (``p[i, j] = p(i beats j)``, dense input only); ``p_vs_average`` (Property 3.4);
    ``deviance`` (Property 3.7), ``deviance_df`` and ``standardized_deviance``
    ``(D - df) / sqrt(2 df)`` (Property 3.9).
    """
    return _output(counts, ridge, level, 1.0, 0.0, "epp")


@_strengths_method(
    "elo", "EPP Bradley-Terry strengths on the Elo scale: 1500 + beta * 400 / ln 10.")
def elo(counts: PairwiseCounts, *, level: float = 0.95, ridge: float = DEFAULT_RIDGE) -> MethodOutput:
    """EPP ratings on the Elo scale: ``1500 + beta * 400 / ln 10``.

    The same penalized Bradley-Terry fit as :func:`epp` (see there for the model, the ridge
    and the details); the score, ``se``, ``ci_low`` and ``ci_high`` are on the Elo scale, so
    a 400-point gap means 10:1 odds of winning a comparison. ``beta`` is kept in details.
    """
    return _output(counts, ridge, level, ELO_SCALE, 1500.0, "elo")
