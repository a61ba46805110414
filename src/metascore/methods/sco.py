"""Soft Condorcet Optimization (SCO; Lanctot et al., AAMAS 2025).

SCO gives each candidate a rating ``theta_a`` in ``[theta_min, theta_max]`` and minimizes a
smooth version of the total Kendall tau distance to the votes (the Kemeny objective),
the *sigmoid loss* (paper eq. 6, written with pairwise counts in eq. 8):

    L(theta) = sum_{a, b} N(a, b) * sigmoid((theta_b - theta_a) / tau).

Each term is a soft count of the judges whose preference ``a > b`` the ratings contradict.
A vote ranking k candidates contributes its ``k (k - 1) / 2`` pairs to ``N``, so working
on ``N`` is exactly the paper's loss. Theorem 5: the loss decreases with the rating of a
Condorcet winner, so at a global minimum the Condorcet winner has ``theta_max``.

The loss is not convex, so neither solver of :func:`sco` is guaranteed to reach the global
minimum; Theorem 5 holds for the exact minimizer. The method is declared
Condorcet-consistent because the default solver, started from the symmetric middle point
where the Condorcet winner's gradient pushes it up against every opponent, ranked the
Condorcet winner alone on top in every random profile tested (``tests/methods/test_sco.py``;
``"auto"`` never stops early when there is a Condorcet winner); ``sgd`` or a small explicit
``max_iter`` may not.

The iteration budget of ``lbfgs`` (``max_iter``). The sigmoid loss overfits noisy sparse
data (the paper's Section 4.4 saw the same on Diplomacy): on 50,000 agents in 30,000
seven-player Plackett-Luce contests the loss keeps falling for hundreds of iterations while
the Kendall tau to the true skills falls too, from 0.567 after 3 iterations to 0.551 after
10 and 0.543 after 100, as agents that won their few contests are pushed against the box.
On the paper's nearly noiseless tournaments (``benchmarks/sco_tournament.py``) the
converged ratings are the best: 3 iterations double the Kendall tau distance of
skill-matched ones (18.3 against 7.1 at 50 contests). Sparsity alone does not tell the two
apart; noise does. ``"auto"`` (default): up to 100 iterations (to convergence) when every
pair of candidates is compared (every score matrix without missing cells) or a Condorcet
winner exists, so Theorem 5 and the Kemeny approximation are kept; otherwise, after 3
iterations, it measures the share of the pairwise majorities (weighted by margin) that the
ratings order the wrong way, and stops there (early stopping) when it is above 15%, else
goes on to 100. Noisy Plackett-Luce contests measure 19-22% with 200 to 50,000 agents
(12-18% with 20 to 50); the paper's tournaments at most 13.5% (600 runs, none stopped, so
their results are unchanged). Measured figures and commands: ``docs/methods.md``. An
integer ``max_iter`` is exactly that budget.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from ..constraints import Constraint, Interval, Options
from ..errors import ConfigError
from ..pairwise import PairwiseCounts, snap_margins
from ..method_spec import MethodOutput, Weighting, ranking_method

__all__ = ["sco", "sco_fenchel_young", "sigmoid_loss", "sigmoid_objective", "box_lbfgs"]

SCO_SOLVERS = ("lbfgs", "sgd")
POSITIVE = Interval(0.0, None, closed="neither")
COUNT = Interval(1, None, integer=True)

#: ``max_iter="auto"``: the full budget, the iteration of the noise check and its threshold
#: (the share of margin-weighted pairwise majorities the ratings contradict); see :func:`sco`.
FULL_BUDGET, CHECK_AT, NOISY = 100, 3, 0.15


@dataclass(frozen=True)
class AutoOr(Constraint):
    """The string ``"auto"`` or a value that ``other`` allows."""

    other: Constraint

    def problem(self, value) -> str | None:
        if isinstance(value, str) and value == "auto":
            return None
        problem = self.other.problem(value)
        return None if problem is None else problem.replace("must be ", "must be 'auto' or ", 1)


def _directed_units(counts: PairwiseCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(winner, loser, N(winner, loser))`` for every ordered pair with ``N > 0``."""
    a, b, n_ab, n_ba = counts.pairs()
    win = np.concatenate([a, b])
    lose = np.concatenate([b, a])
    weight = np.concatenate([n_ab, n_ba])
    keep = weight > 0
    return win[keep], lose[keep], weight[keep]


def sigmoid_loss(theta: np.ndarray, a: np.ndarray, b: np.ndarray, n_ab: np.ndarray,
                 n_ba: np.ndarray, tau: float = 1.0) -> tuple[float, np.ndarray]:
    """SCO sigmoid loss (paper eq. 8) over the compared pairs ``a < b``, and its gradient.

    ``L = sum_pairs [N_ab s(-d) + N_ba s(d)] = sum_pairs [N_ab + (N_ba - N_ab) s(d)]`` with
    ``d = (theta_a - theta_b) / tau`` and ``s`` the logistic function, so
    ``dL/dtheta_a = (N_ba - N_ab) s(d) (1 - s(d)) / tau = -dL/dtheta_b``.
    """
    return sigmoid_objective(a, b, n_ab, n_ba, tau, theta.size)(theta)


def sigmoid_objective(a: np.ndarray, b: np.ndarray, n_ab: np.ndarray, n_ba: np.ndarray,
                      tau: float, n: int, scale: float = 1.0):
    """``theta -> (L / scale, grad / scale)`` for :func:`sigmoid_loss`, for repeated calls.

    The per-pair constants are computed once and the pair-sized work reuses two buffers,
    so a call makes a few passes over the pairs and allocates only the gradient.
    """
    const = float(n_ab.sum()) / scale
    diff = (n_ba - n_ab) / scale
    coef = diff / tau
    d, t = np.empty(a.size), np.empty(a.size)

    def fun(theta: np.ndarray) -> tuple[float, np.ndarray]:
        np.take(theta, a, out=d)
        np.take(theta, b, out=t)
        np.subtract(d, t, out=d)
        if tau != 1.0:
            np.divide(d, tau, out=d)
        expit(d, out=d)  # s
        value = const + _dot(diff, d)
        np.subtract(1.0, d, out=t)
        np.multiply(d, t, out=d)
        np.multiply(d, coef, out=d)  # the gradient of each pair with respect to theta_a
        grad = np.bincount(a, d, minlength=n)
        grad -= np.bincount(b, d, minlength=n)
        return value, grad

    return fun


def _check_box(theta_min: float, theta_max: float, tau: float) -> None:
    if not (np.isfinite(theta_min) and np.isfinite(theta_max) and theta_min < theta_max):
        raise ConfigError(
            f"`theta_min` must be below `theta_max` (both finite); got {theta_min!r} and {theta_max!r}."
        )
    if not (np.isfinite(tau) and tau > 0):
        raise ConfigError(f"`tau` must be a positive number; got {tau!r}.")


def _check_count(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ConfigError(f"`{name}` must be a positive integer; got {value!r}.")


def _check_sgd(learning_rate: float, iterations: int, batch_size: int) -> None:
    if not (np.isfinite(learning_rate) and learning_rate > 0):
        raise ConfigError(f"`learning_rate` must be a positive number; got {learning_rate!r}.")
    _check_count("iterations", iterations)
    _check_count("batch_size", batch_size)


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    # Element-wise product and sum instead of a BLAS call: BLAS threads stall when the
    # machine's cores are busy, and these vectors are short enough for one pass.
    return float(np.multiply(a, b).sum())


def box_lbfgs(fun, x0: np.ndarray, lower: float, upper: float, *, max_iter: int,
              memory: int = 10, ftol: float = 1e-12, gtol: float = 1e-10,
              callback=None) -> tuple[np.ndarray, int, bool]:
    """Minimize ``fun`` (returning value and gradient) over the box ``[lower, upper]^n``.

    Projected L-BFGS: the quasi-Newton direction is computed on the free variables (those
    not held at a bound by a gradient pointing outwards), the step backtracks along the
    projected path until the Armijo condition holds, and the first step has unit length
    as in L-BFGS-B. It stops when the projected gradient is below ``gtol`` or the relative
    decrease of ``fun`` below ``ftol`` (L-BFGS-B's tests), or after ``max_iter`` steps.
    ``callback(x, iterations)``, called after each step, stops the run by returning True.
    Pure numpy, no BLAS. Returns ``(x, iterations, converged)``.
    """
    x = np.clip(x0, lower, upper)
    f, g = fun(x)
    pairs: deque[tuple[np.ndarray, np.ndarray, float]] = deque(maxlen=memory)
    for it in range(max_iter):
        if np.abs(x - np.clip(x - g, lower, upper)).max() <= gtol:
            return x, it, True
        free = ~(((x <= lower) & (g > 0)) | ((x >= upper) & (g < 0)))
        q = np.where(free, g, 0.0)
        alphas = []
        for s, y, rho in reversed(pairs):  # two-loop recursion
            a = rho * _dot(s, q)
            q -= a * y
            alphas.append(a)
        if pairs:
            s, y, rho = pairs[-1]
            q *= 1.0 / (rho * _dot(y, y))
        for (s, y, rho), a in zip(pairs, reversed(alphas)):
            q += (a - rho * _dot(y, q)) * s
        d = np.where(free, -q, 0.0)
        slope = _dot(g, d)
        if slope >= 0:  # not a descent direction: restart from steepest descent
            pairs.clear()
            d, slope = np.where(free, -g, 0.0), -_dot(g, np.where(free, g, 0.0))
        step = 1.0 if pairs else 1.0 / max(np.sqrt(_dot(d, d)), 1e-300)
        while True:
            x_new = np.clip(x + step * d, lower, upper)
            f_new, g_new = fun(x_new)
            if f_new <= f + 1e-4 * _dot(g, x_new - x) or step < 1e-20:
                break
            step *= 0.5
        s, y = x_new - x, g_new - g
        sy = _dot(s, y)
        if sy > 1e-10 * _dot(y, y):
            pairs.append((s, y, 1.0 / sy))
        decrease = f - f_new
        x, f, g = x_new, f_new, g_new
        if callback is not None and callback(x, it + 1):
            return x, it + 1, False
        if decrease <= ftol * max(abs(f), abs(f + decrease), 1.0):
            return x, it + 1, True
    return x, max_iter, False


def contradicted_share(theta: np.ndarray, a: np.ndarray, b: np.ndarray, margin: np.ndarray) -> float:
    """Share of the pairwise majorities, weighted by their margins ``N(a, b) - N(b, a)``, that
    ``theta`` orders the wrong way (a tie in ``theta`` counts half): how far the ratings are
    from every majority they could satisfy, 0 when they satisfy all of them."""
    weight = np.abs(margin)
    side = np.sign(theta[a] - theta[b]) * np.sign(margin)
    total = float(weight.sum())
    return float((weight * ((side < 0) + 0.5 * (side == 0))).sum()) / total if total else 0.0


def _auto_regime(n: int, a: np.ndarray, b: np.ndarray, margin: np.ndarray) -> str:
    """``complete`` (every pair compared), ``condorcet_winner`` (one candidate beats every
    other by a majority) or ``sparse``, for the compared pairs ``a < b`` and their margins."""
    if a.size == n * (n - 1) // 2:
        return "complete"
    won = margin != 0
    beats = np.bincount(np.where(margin > 0, a, b)[won], minlength=n)
    return "condorcet_winner" if n > 1 and (beats == n - 1).any() else "sparse"


def _sample_units(weight: np.ndarray, shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """Indices of pair units drawn with probability proportional to ``weight``."""
    cum = np.cumsum(weight)
    return np.minimum(np.searchsorted(cum, rng.random(shape) * cum[-1], side="right"),
                      weight.size - 1)


def _projected_sgd(n: int, win: np.ndarray, lose: np.ndarray, weight: np.ndarray,
                   gradient, theta_min: float, theta_max: float, learning_rate: float,
                   iterations: int, batch_size: int, rng: np.random.Generator) -> np.ndarray:
    """Algorithm 1: ``theta <- clip(theta - alpha * mean batch gradient)`` from the middle.

    ``gradient(theta, w, l, t)`` returns, for the batch of units ``w > l`` at step ``t``,
    each unit's gradient ``g`` with respect to its winner's rating; the loser's is ``-g``.
    Indices are drawn all at once; the loop runs over iterations only.
    """
    theta = np.full(n, (theta_min + theta_max) / 2.0)
    if weight.size == 0:
        return theta
    units = _sample_units(weight, (iterations, batch_size), rng)
    wins, losses = win[units], lose[units]
    both = np.concatenate([wins, losses], axis=1)
    step = learning_rate / batch_size
    small = n <= 4096  # dense bincount update; above, scatter into the touched entries only
    for t in range(iterations):
        w, l = wins[t], losses[t]
        g = step * gradient(theta, w, l, t)
        if small:
            theta -= np.bincount(both[t], np.concatenate([g, -g]), minlength=n)
            np.minimum(theta, theta_max, out=theta)
            np.maximum(theta, theta_min, out=theta)
        else:
            np.subtract.at(theta, w, g)
            np.add.at(theta, l, g)
            theta[both[t]] = np.clip(theta[both[t]], theta_min, theta_max)
    return theta


#: How the weights move the ratings: through a seeded solver only.
SOLVED = Weighting(why_not="its ratings are fitted to the weighted comparisons by a seeded "
                           "solver, without a closed form")


@ranking_method(
    "sco",
    input="pairwise",
    stochastic=True,
    sparse=True,
    condorcet=True,
    params={
        "solver": Options(*SCO_SOLVERS), "theta_min": Interval(), "theta_max": Interval(),
        "tau": POSITIVE, "learning_rate": POSITIVE, "iterations": COUNT,
        "batch_size": COUNT, "max_iter": AutoOr(COUNT),
    },
    weighting=SOLVED,
    description="Soft Condorcet Optimization: bounded ratings minimizing a smooth Kendall tau distance to the judges.",
)
def sco(
    counts: PairwiseCounts,
    *,
    solver: str = "lbfgs",
    theta_min: float = 0.0,
    theta_max: float = 100.0,
    tau: float = 1.0,
    learning_rate: float = 0.01,
    iterations: int = 10_000,
    batch_size: int = 32,
    max_iter: int | str = "auto",
    rng: np.random.Generator,
) -> MethodOutput:
    """Soft Condorcet Optimization ratings (paper eq. 6/8).

    Ratings ``theta`` in ``[theta_min, theta_max]`` minimizing the sigmoid loss
    ``L(theta) = sum_{a,b} N(a, b) sigmoid((theta_b - theta_a) / tau)``, a smooth count of
    the judges' pairwise preferences that the ratings contradict. The score is ``theta``.

    Parameters
    ----------
    solver : {"lbfgs", "sgd"}
        ``lbfgs`` (default, deterministic): projected L-BFGS (:func:`box_lbfgs`, pure numpy:
        no BLAS call to stall on a busy machine) from the middle of the box, on the exact
        loss and gradient over the compared pairs (sparse counts never densified). ``sgd``:
        the paper's Algorithm 1, projected SGD from the middle of the box, ``iterations``
        steps of ``batch_size`` pair units drawn in proportion to ``N(a, b)``.
    theta_min, theta_max, tau : float
        The rating box (paper default [0, 100]) and the temperature of the sigmoid.
    learning_rate, iterations, batch_size, rng
        Algorithm 1 settings (``sgd`` only; the paper uses batch 32, 10^4 to 10^5 steps,
        learning rate 0.01 to 0.1) and its random generator.
    max_iter : "auto" or int
        Iteration budget of ``lbfgs`` (``"auto"``: to convergence when every pair is
        compared or a Condorcet winner exists, else early stopping on noisy data; the
        module's docstring says why, what was measured, and why the method is declared
        Condorcet-consistent though neither solver is sure to reach the global minimum).

    ``details``: ``loss`` (final sigmoid loss), ``solver``, ``iterations``; for ``lbfgs``
    also ``converged`` (stopped by its tolerance rather than by the budget),
    ``early_stopping`` (``"auto"`` stopped at the noise check), ``regime`` (``explicit``,
    ``complete``, ``condorcet_winner``, ``sparse_noisy`` or ``sparse_consistent``) and, when
    the check ran, ``contradicted`` (the share it measured).
    """
    if solver not in SCO_SOLVERS:
        raise ConfigError(f"`solver` must be one of {list(SCO_SOLVERS)}; got {solver!r}.")
    _check_box(theta_min, theta_max, tau)
    details: dict = {"solver": solver}
    a, b, n_ab, n_ba = counts.pairs()
    if solver == "lbfgs":
        theta, found = _lbfgs_ratings((a, b, n_ab, n_ba), counts.n, counts.total_weight,
                                      theta_min, theta_max, tau, max_iter)
    else:
        _check_sgd(learning_rate, iterations, batch_size)
        theta = _sgd_ratings(counts, theta_min, theta_max, tau, learning_rate, iterations,
                             batch_size, rng)
        found = {"iterations": iterations}
    details.update(found)
    details["loss"], _ = sigmoid_loss(theta, a, b, n_ab, n_ba, tau)
    return MethodOutput(theta, details=details)


def _lbfgs_ratings(pairs: tuple[np.ndarray, ...], n: int, total_weight: float,
                   theta_min: float, theta_max: float, tau: float, max_iter: int | str
                   ) -> tuple[np.ndarray, dict]:
    """The ratings of ``n`` candidates compared in ``pairs`` (``a, b, N(a, b), N(b, a)``) by
    projected L-BFGS from the middle of the box, and the details of the fit (iterations,
    convergence, the regime of ``max_iter="auto"`` and its noise check)."""
    if max_iter != "auto":
        _check_count("max_iter", max_iter)
    a, b, n_ab, n_ba = pairs
    margin = snap_margins(n_ab - n_ba, total_weight)
    regime = "explicit" if max_iter != "auto" else _auto_regime(n, a, b, margin)
    active = margin != 0  # pairs with a zero margin only add a constant
    aa, bb, xa, xb, ma = a[active], b[active], n_ab[active], n_ba[active], margin[active]
    scale = float(np.abs(ma).sum()) or 1.0  # relative weights only
    check: dict = {}

    def stop_if_noisy(theta: np.ndarray, done: int) -> bool:
        if regime != "sparse" or done != CHECK_AT:
            return False
        check["contradicted"] = contradicted_share(theta, aa, bb, ma)
        return check["contradicted"] > NOISY

    theta, nit, converged = box_lbfgs(
        sigmoid_objective(aa, bb, xa, xb, tau, n, scale),
        np.full(n, (theta_min + theta_max) / 2.0), theta_min, theta_max,
        max_iter=FULL_BUDGET if max_iter == "auto" else max_iter, callback=stop_if_noisy,
    )
    early = check.get("contradicted", 0.0) > NOISY
    if regime == "sparse":
        regime = "sparse_noisy" if early else "sparse_consistent"
    return theta, dict(iterations=nit, converged=converged, early_stopping=early,
                       regime=regime, **check)


def _sgd_ratings(counts: PairwiseCounts, theta_min: float, theta_max: float, tau: float,
                 learning_rate: float, iterations: int, batch_size: int,
                 rng: np.random.Generator) -> np.ndarray:
    """The ratings by the paper's Algorithm 1 (projected SGD from the middle of the box)."""
    win, lose, weight = _directed_units(counts)

    def gradient(theta, w, l, t):  # d sigmoid((theta_l - theta_w) / tau) / d theta_w
        s = expit((theta[l] - theta[w]) / tau)
        return -s * (1.0 - s) / tau

    return _projected_sgd(counts.n, win, lose, weight, gradient, theta_min, theta_max,
                          learning_rate, iterations, batch_size, rng)


@ranking_method(
    "sco_fenchel_young",
    input="pairwise",
    stochastic=True,
    sparse=True,
    pareto=False,
    params={
        "theta_min": Interval(), "theta_max": Interval(), "noise": POSITIVE,
        "learning_rate": POSITIVE, "iterations": COUNT, "batch_size": COUNT,
    },
    weighting=SOLVED,
    description="SCO ratings by projected SGD on the Fenchel-Young perturbed-ranking gradient (Gumbel noise).",
)
def sco_fenchel_young(
    counts: PairwiseCounts,
    *,
    theta_min: float = 0.0,
    theta_max: float = 100.0,
    noise: float = 10.0,
    learning_rate: float = 0.1,
    iterations: int = 10_000,
    batch_size: int = 32,
    rng: np.random.Generator,
) -> MethodOutput:
    """SCO with the Fenchel-Young perturbed gradient (paper eq. 9), by Algorithm 1.

    For a vote ``v``, the ratings of its candidates are perturbed with Gumbel noise,
    ``theta_v + noise * G``; the gradient is the difference between the vote's positions
    and the positions in the perturbed order (with the sign that raises an under-rated
    candidate). With pairwise counts only, each unit of ``N(a, b)`` is treated as a
    two-candidate vote ``a > b``: its gradient is ``(-1, +1)`` on ``(theta_a, theta_b)``
    when the perturbed ratings put ``b`` above ``a``, else 0. Its expectation is the
    Bradley-Terry (logistic) gradient with scale ``noise``, so the ratings approach
    ``noise`` times Bradley-Terry strengths clipped to the box. This is what makes the
    method differ from the sigmoid loss: on the paper's warm-up profile it top-ranks A,
    not the Condorcet winner C (paper Section 4.1).

    Projected SGD as in :func:`sco` (``solver="sgd"``): start at the middle of
    ``[theta_min, theta_max]``, ``iterations`` steps of ``batch_size`` units drawn with
    probability proportional to ``N``, batch-averaged gradient times ``learning_rate``,
    clipping to the box. ``rng`` draws the batches and the Gumbel noise.
    Not Pareto-consistent in general (it follows win rates, like Elo).
    """
    _check_box(theta_min, theta_max, 1.0)
    if not (np.isfinite(noise) and noise > 0):
        raise ConfigError(f"`noise` must be a positive number; got {noise!r}.")
    _check_sgd(learning_rate, iterations, batch_size)
    win, lose, weight = _directed_units(counts)
    gumbel = rng.gumbel(size=(2, iterations, batch_size)) * noise if weight.size else None
    threshold = gumbel[1] - gumbel[0] if weight.size else None

    def gradient(theta, w, l, t):
        # Perturbed order puts the loser above: winner's gradient -1 (rating up), loser's +1.
        return -((theta[w] - theta[l]) < threshold[t]).astype(float)

    theta = _projected_sgd(counts.n, win, lose, weight, gradient, theta_min, theta_max,
                           learning_rate, iterations, batch_size, rng)
    return MethodOutput(theta, details={"noise": noise})
