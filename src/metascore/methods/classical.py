"""Classical ranking functions (thesis ch. 5): mean, median, average rank, success rate,
relative difference, Copeland and random dictator.

Every function here is pure and vectorized: value methods take the oriented matrix ``X``
(candidates x judges, higher is better; NaN only under the ``pairwise`` missing policy,
meaning "not present") and the judges' weights ``w``; pairwise methods take
:class:`~metascore.pairwise.PairwiseCounts`. The registry wrapper does the rest.

The pairwise family (thesis 5.1.2) scores ``f_i = 1/(n-1) sum_{j != i} w(c_i, c_j)``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..constraints import Options
from ..errors import InputError
from ..matrix import ScoreMatrix
from ..pairwise import PAIR_LOOP_JUDGES, PairwiseCounts, margin_tallies
from ..method_spec import Display, MethodOutput, Weighting, ranking_method
from ..stats import dense_ranks, fractional_ranks, ranks_along
from . import classical_shortcuts as shortcuts
from . import weight_points

__all__ = [
    "mean",
    "median",
    "average_rank",
    "success_rate",
    "relative_difference",
    "copeland",
    "random_dictator",
]


def _equal(w: np.ndarray) -> bool:
    """All judges weigh the same: a zero-stride (broadcast) array of one number, or two
    reductions without a temporary array."""
    return w.strides == (0,) or bool(w.min() == w.max())


def _present_weights(X: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(X), 0.0, w[None, :])


@ranking_method("mean", takes=("sums",), resampling=shortcuts.MEAN,
                weighting=Weighting(weight_points.oriented),
                description="Weighted mean of the oriented scores.")
def mean(X: np.ndarray, w: np.ndarray, *, sums: np.ndarray | None = None) -> np.ndarray:
    """Weighted mean of oriented scores: ``sum_k w_k x_ik / sum_k w_k``.

    Lower-is-better judges enter negated (orientation), so a smaller error raises the mean.
    ``sums`` are the row sums ``X.sum(axis=1)`` when already known (validation computes
    them, and no cell is missing): with equal weights the mean is then one division, no
    pass over ``X``.
    """
    # Equal weights: numpy's pairwise row sums (no BLAS call, whose threads stall on a busy
    # machine). A NaN cell makes its row NaN, so one pass both reduces and detects gaps.
    if _equal(w):
        if sums is not None:  # no cell missing
            return sums / X.shape[1]
        out = X.sum(axis=1) / X.shape[1]
    else:
        out = X @ (w / w.sum())
    if not np.isnan(out).any():
        return out
    pw = _present_weights(X, w)
    return np.nansum(X * pw, axis=1) / pw.sum(axis=1)


@ranking_method("median", takes=("sums",), resampling=shortcuts.MEDIAN,
                weighting=Weighting(why_not="the weighted median jumps from one judge's score "
                                    "to another's when a judge's weight crosses half of "
                                    "the total"),
                description="Median of the oriented scores (weighted when weights differ).")
def median(X: np.ndarray, w: np.ndarray, *, sums: np.ndarray | None = None) -> np.ndarray:
    """Median of oriented scores; the average of the two middle values when even.

    With unequal weights this is the weighted median: the value where the cumulative
    weight reaches half the total (the average of the two neighbours when it is exactly
    half), which is the plain median when all weights are equal. ``sums`` (the row sums
    validation computed) come only when no cell is missing.
    """
    if _equal(w):
        if sums is not None or not np.isnan(X).any():
            return _middle(X)
        out = np.median(X, axis=1)  # NaN in a row whenever a cell of it is NaN
        return np.nanmedian(X, axis=1) if np.isnan(out).any() else out
    order = np.argsort(X, axis=1, kind="stable")  # NaN sorts last
    xs = np.take_along_axis(X, order, axis=1)
    ws = np.where(np.isnan(xs), 0.0, w[order])
    cum = np.cumsum(ws, axis=1)
    half = cum[:, -1:] / 2.0
    tol = 1e-12 * np.maximum(1.0, half)
    k = np.argmax(cum >= half - tol, axis=1)
    rows = np.arange(X.shape[0])
    lower = xs[rows, k]
    exact = np.abs(cum[rows, k] - half[:, 0]) <= tol[:, 0]
    upper = xs[rows, np.minimum(k + 1, X.shape[1] - 1)]
    return np.where(exact & ~np.isnan(upper), (lower + upper) / 2.0, lower)


def _middle(X: np.ndarray) -> np.ndarray:
    """``np.median(X, axis=1)`` of rows without NaN, equal to it to the bit: the middle
    value of each row after one selection (``np.median`` also selects the largest value, to
    find a NaN, which costs as much again), and with an even count the mean of it and the
    largest value below it."""
    k = X.shape[1] // 2
    part = np.partition(X, k, axis=1)
    # as np.median's mean of the middle values: a sum from 0.0 (so -0.0 is 0.0), then / count
    if X.shape[1] % 2:
        return 0.0 + part[:, k]
    return ((0.0 + part[:, :k].max(axis=1)) + part[:, k]) / 2.0


def _ties(counts: PairwiseCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dense ``(N, C, T)`` with ``T = C - N - N.T`` the tied weight (zero diagonal)."""
    wins, comp = counts.dense()
    ties = comp - wins - wins.T
    np.fill_diagonal(ties, 0.0)
    return wins, comp, np.maximum(ties, 0.0)


#: Tie conventions of ``average_rank``'s per-judge ranks.
AVERAGE_RANK_TIES = ("average", "dense", "min")


#: From this many candidates, average rank on a score matrix ranks each judge
#: (O(n m log n)) instead of counting pairwise wins (O(n^2 m)); below, or with many judges
#: (where the pairwise count runs pair by pair on contiguous rows), the counts are cheaper.
RANKS_FROM_CANDIDATES = 32
RANKS_FROM_CANDIDATES_MANY_JUDGES = 128


def _average_rank_of_matrix(X: np.ndarray, w: np.ndarray, *, ties: str = "average") -> MethodOutput:
    """:func:`average_rank` of an oriented score matrix, by per-judge ranks (fractional,
    lowest or dense, as ``ties`` says; below :data:`RANKS_FROM_CANDIDATES` candidates from
    the pairwise counts), never by n x n counts beyond.

    A NaN cell (``missing="pairwise"``) is not ranked: each judge ranks the candidates it
    scores, and a candidate's average is over the judges that score it.
    """
    n, m = X.shape
    limit = RANKS_FROM_CANDIDATES if m < PAIR_LOOP_JUDGES else RANKS_FROM_CANDIDATES_MANY_JUDGES
    if n < limit:
        return average_rank(PairwiseCounts.from_matrix(X, w), ties=ties, values=(X, w))
    if ties == "dense":
        avg = _dense_average_rank(X, w, n)
        return MethodOutput(-avg, details={"average_rank": avg}, per_candidate=("average_rank",))
    # "min": each judge's candidates strictly above (its lowest rank less one)
    ranks = fractional_ranks(X, axis=0) if ties == "average" else ranks_along(-X, "min", axis=0) - 1.0
    present = ~np.isnan(ranks)
    # einsum, not a BLAS product: BLAS threads stall on a busy machine
    own = np.einsum("ij,j->i", present.astype(float), w) if not present.all() else np.full(n, w.sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        total = np.einsum("ij,j->i", np.where(present, ranks, 0.0), w)
        avg = total / own if ties == "average" else 1.0 + total / own  # "min": as the counts give it
    avg = np.where(own > 0, avg, n)  # ranked by no judge: last
    return MethodOutput(-avg, details={"average_rank": avg},
                        per_candidate=("average_rank",) if ties == "min" else ())


def _dense_average_rank(X: np.ndarray, w: np.ndarray, n: int) -> np.ndarray:
    """The weighted average of the judges' dense ranks (``n``: a candidate no judge ranks)."""
    ranks = dense_ranks(X)
    pw = np.where(np.isnan(ranks), 0.0, w[None, :])
    own = pw.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = np.nansum(ranks * pw, axis=1) / own
    return np.where(own > 0, avg, n)  # ranked by no judge: last


@ranking_method(
    "average_rank",
    input="pairwise",
    sparse=True,
    values=_average_rank_of_matrix,
    takes=("values",),
    resampling=shortcuts.AVERAGE_RANK,
    weighting=Weighting(weight_points.minus_ranks),
    params={"ties": Options(*AVERAGE_RANK_TIES)},
    display=Display("average rank", -1.0),
    description="Weighted average of per-judge ranks (Borda); score = -average rank; "
    "ties='dense' reproduces CodaLab's <Rank>.",
)
def average_rank(
    counts: PairwiseCounts, *, ties: str = "average", values: tuple[np.ndarray, np.ndarray] | None = None
) -> MethodOutput:
    """Weighted average rank ``sum_j w_j rank_j(i) / sum_j w_j`` (Borda count).

    ``ties`` chooses the per-judge rank of tied candidates:

    - ``average`` (default, the fractional ranks every ranking reports; see
      ``docs/methods.md``, Conventions): ``1 + #{better} + 1/2 #{tied others}``
      (1, 2.5, 2.5, 4). Computed exactly from the pairwise counts: the weighted
      average over the judges ranking a candidate is ``1 + (sum_b N(b, i) + 1/2 sum_b
      T(i, b)) / C(i, i)``. It equals the optimal rank aggregation under Spearman distance.
    - ``min``: the best position of the tie, ``1 + #{better}`` (1, 2, 2, 4), also from the
      counts.
    - ``dense``: ``1 + #{distinct better values}`` (1, 2, 2, 3), CodaLab v1's per-column
      rank. With ``missing="worst"`` (the default) the candidates a judge does not score
      share the rank after its worst score, which is CodaLab's "missing = max rank + 1", so
      the average reproduces CodaLab's computed ``Avg`` column (its ``<Rank>``) exactly.
      Differences: CodaLab reads a NaN score as 0 where metascore treats it as missing,
      and with unequal weights CodaLab sums the weighted ranks without dividing by the total
      weight (same order, other scale). Dense ranks need the values, so votes (pairwise
      counts only) accept ``average`` and ``min`` only.

    Missing candidates are ranked by the missing-data policy; under ``pairwise`` each judge
    ranks only the candidates it scores. The score is minus the average rank;
    ``details["average_rank"]`` holds the positive one.
    """
    if ties == "dense":
        if values is None:
            raise InputError(
                "average_rank with ties='dense' needs the scores behind the ranks; votes give "
                "only pairwise counts (use ties='average' or 'min')."
            )
        avg = _dense_average_rank(*values, counts.n)
        return MethodOutput(-avg, details={"average_rank": avg}, per_candidate=("average_rank",))
    wins, comp = counts.wins, counts.compared
    if sp.issparse(wins):
        lost = np.asarray(wins.sum(axis=0)).ravel()
        won = np.asarray(wins.sum(axis=1)).ravel()
        compared = np.asarray(comp.sum(axis=1)).ravel()
        own = comp.diagonal()
    else:
        lost, won = wins.sum(axis=0), wins.sum(axis=1)
        own = np.diag(comp).copy()
        compared = comp.sum(axis=1)
    tied = compared - own - won - lost
    half = 0.5 if ties == "average" else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = 1.0 + (lost + half * tied) / own
    avg = np.where(own > 0, avg, counts.n)  # ranked by no judge: last
    return MethodOutput(-avg, details={"average_rank": avg}, per_candidate=("average_rank",))


@ranking_method(
    "success_rate",
    input="pairwise",
    resampling=shortcuts.SUCCESS_RATE,
    weighting=Weighting(weight_points.shares_below, per_pair=True),
    params={"ties": Options("zero", "half")},
    description="Average over opponents of the share of judges on which a candidate wins.",
)
def success_rate(counts: PairwiseCounts, *, ties: str = "zero") -> MethodOutput:
    """Pairwise success rate: ``w(u, v) = (1/m) sum_k 1[u_k > v_k]`` (weighted by judges).

    ``ties="zero"`` (default, thesis definition) counts a tie as no success for either;
    ``ties="half"`` counts it 1/2 for each. Under ``missing="pairwise"`` the share is over
    the judges scoring both; a pair no judge compares counts as a tie.

    Thesis table 10.1 shows it fails the majority criterion (A and B tie at 2/3), table 10.2
    that it fails LIIA, and table 10.3/10.5 that it is not clone-proof.
    """
    wins, comp, tied = _ties(counts)
    tie_value = 0.5 if ties == "half" else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(comp > 0, (wins + tie_value * tied) / comp, tie_value)
    np.fill_diagonal(rate, 0.0)
    return MethodOutput(rate.sum(axis=1) / (counts.n - 1), details={"pairwise_rate": rate})


def _check_relative_difference(matrix: ScoreMatrix, params: dict) -> None:
    if params["on"] != "values":
        return
    negative = matrix.values < 0
    if negative.any():
        i, j = np.argwhere(negative)[0]
        raise InputError(
            f"relative difference needs non-negative scores, but candidate "
            f"{matrix.candidates[i]!r} has {float(matrix.values[i, j])!r} on judge {matrix.judges[j]!r}; "
            "use on='ranks' or another method."
        )


@ranking_method(
    "relative_difference",
    dense=True,
    takes=("signs",),
    check=_check_relative_difference,
    resampling=shortcuts.RELATIVE_DIFFERENCE,
    weighting=Weighting(weight_points.relative_differences, per_pair=True),
    params={"on": Options("values", "ranks")},
    description="Average over opponents of the mean signed relative difference (u-v)/(u+v).",
)
def relative_difference(
    X: np.ndarray, w: np.ndarray, *, signs: np.ndarray, on: str = "values"
) -> MethodOutput:
    """Relative difference: ``w(u, v) = (1/m) sum_k s_k (u_k - v_k) / (u_k + v_k)``.

    ``s_k = +1`` for a higher-is-better judge and ``-1`` otherwise (the sign flip of thesis
    8.2.4 for MAE), on the raw, non-negative scores; a term with ``u_k + v_k = 0`` is 0.

    ``on="ranks"`` applies the formula to the per-judge fractional ranks (1 = best, so the
    sign is flipped), the variant the thesis' experiments computed. The thesis' counter
    examples for relative difference hold for this variant: on table 10.2, A beats B
    head to head but adding C makes them tie; on table 10.5, cloning B lifts A above C.
    On raw values they do not: on table 10.2 restricted to A and B, B wins, and cloning B
    in table 10.5 never lifts A above C.
    """
    if on == "ranks":
        ranks = fractional_ranks(X, axis=0)
        base, sgn = ranks, -np.ones(X.shape[1])
    else:
        base, sgn = X * signs[None, :], signs  # back to raw values
    n = X.shape[0]
    ws = w * sgn
    total = np.zeros((n, n))
    weight = np.full((n, n), w.sum())
    missing = np.isnan(base).any()
    present = ~np.isnan(base)
    # (u - v) / (u + v) = 2 u / (u + v) - 1: one division per cell. A 0/0 term (both zero)
    # and a missing cell give NaN, replaced by 1/2, which makes the term 0.
    # One candidate against all later ones per step (antisymmetry halves the work).
    for a in range(n - 1):
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = base[a] + base[a + 1:]
            np.divide(base[a], ratio, out=ratio)
        np.nan_to_num(ratio, copy=False, nan=0.5)
        s = 2.0 * (ratio @ ws) - ws.sum()
        total[a, a + 1:], total[a + 1:, a] = s, -s
        if missing:
            c = (present[a] & present[a + 1:]) @ w
            weight[a, a + 1:] = weight[a + 1:, a] = c
    with np.errstate(invalid="ignore", divide="ignore"):
        pair = np.where(weight > 0, total / weight, 0.0)
    return MethodOutput(pair.sum(axis=1) / (n - 1), details={"pairwise_difference": pair})


#: From this many candidates, Copeland on a score matrix tallies its duels by blocks of
#: candidates (:func:`~metascore.pairwise.margin_tallies`: memory n x m) instead of
#: building the n x n counts.
COPELAND_BLOCKS_FROM = 2_000


def _copeland_of_matrix(X: np.ndarray, w: np.ndarray) -> MethodOutput:
    """:func:`copeland` of an oriented score matrix."""
    n = X.shape[0]
    if n < COPELAND_BLOCKS_FROM:
        return copeland(PairwiseCounts.from_matrix(X, w))
    won, tied = margin_tallies(X, w)
    return _copeland_output(won, tied, n)


def _copeland_output(won: np.ndarray, tied: np.ndarray, n: int) -> MethodOutput:
    score = (won + 0.5 * tied) / (n - 1)
    return MethodOutput(score, details={"wins": won, "ties": tied, "losses": n - 1 - won - tied},
                        per_candidate=("wins", "ties", "losses"))


@ranking_method(
    "copeland",
    input="pairwise",
    values=_copeland_of_matrix,
    condorcet=True,
    resampling=shortcuts.COPELAND,
    description="Share of opponents beaten head to head (a pairwise tie counts 1/2).",
)
def copeland(counts: PairwiseCounts) -> MethodOutput:
    """Copeland: ``w(u, v) = 1`` if u beats v on more judges than v beats u, ``1/2`` if
    equally many, ``0`` otherwise (strict per-judge wins only)."""
    margins = counts.margins()
    np.fill_diagonal(margins, np.nan)
    return _copeland_output((margins > 0).sum(axis=1), (margins == 0).sum(axis=1), counts.n)


@ranking_method(
    "random_dictator",
    stochastic=True,
    display=Display("rank on the drawn judge", -1.0),
    order_only=True,
    weighting=Weighting(why_not="it is the ranking of one judge drawn with a probability "
                                "proportional to its weight, so any change of the weights "
                                "can change the draw"),
    description="The ranking of one judge drawn at random (weighted), with the seed.",
)
def random_dictator(X: np.ndarray, w: np.ndarray, *, rng: np.random.Generator) -> MethodOutput:
    """The ranking of one judge drawn with probability ``w_j / sum w``.

    The score is minus the candidate's fractional rank on that judge; a candidate the
    judge does not score (``missing="pairwise"``) is ranked last.
    ``details["dictator_judge_index"]`` records the judge drawn.
    """
    j = int(rng.choice(X.shape[1], p=w / w.sum()))
    col = X[:, j]
    ranks = fractional_ranks(col)
    missing = np.isnan(ranks)
    if missing.any():
        ranks = np.where(missing, X.shape[0] - (missing.sum() - 1) / 2.0, ranks)
    return MethodOutput(-ranks, details={"dictator_judge_index": j})
