"""The aggregation rules benchmark maintainers compare side by side (Vote'n'Rank: Rofin et
al., EACL 2023): plurality, Dowdall, geometric mean, minimax, Baldwin, threshold and the
optimality gap.

Value rules take the oriented matrix ``X`` (candidates x judges, higher is better; NaN only
under the ``pairwise`` missing policy: the judge does not score that candidate) and the
judges' weights ``w``; minimax and Baldwin read the pairwise counts only, so votes feed
them too. The registry does the rest (missing data, weight-0 judges, ties, positions).

The positional rules (plurality, Dowdall, threshold) read each judge's positions: a
candidate's position on a judge is one plus the number of candidates it scores better, and
candidates with equal values share the positions they span (``lo`` to ``hi``). Under the
``pairwise`` policy a judge places only the candidates it scores, and a candidate's score
is over the judges that score it (the registry says so in a note).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from ..constraints import Options, Target
from ..errors import InputError, did_you_mean
from ..matrix import ScoreMatrix
from ..method_spec import Display, MethodOutput, Weighting, ranking_method
from ..pairwise import WEIGHT_RTOL, PairwiseCounts, snap_margins
from . import benchmark_rules_shortcuts as shortcuts
from . import weight_points
from .positional import (DEFAULT_GAMMA, dowdall_points, first_alone, judge_target, over_present,
                         position_spans, targets)

__all__ = ["plurality", "dowdall", "geometric_mean", "minimax", "baldwin", "threshold",
           "optimality_gap", "DOWDALL_TIES", "THRESHOLD_TIES"]


@ranking_method(
    "plurality",
    order_only=True,
    unanimity=False,
    resampling=shortcuts.PLURALITY,
    weighting=Weighting(weight_points.first_places),
    display=Display("share of judges won"),
    description="Weighted share of the judges on which a candidate is first alone (a shared "
    "first place counts for nobody).",
)
def plurality(X: np.ndarray, w: np.ndarray) -> MethodOutput:
    """Plurality: ``sum_j w_j [i is first alone on j] / sum_j w_j``.

    A judge's vote goes to the candidate it ranks strictly above every other; a judge
    whose first place is shared gives its vote to nobody (Vote'n'Rank's convention), so
    the scores need not sum to one. Only first places count: a strict order every judge
    gives separates the first candidate from the others, who tie (``unanimity=False``).
    """
    share = over_present(first_alone(*position_spans(X)), w)
    return MethodOutput(share, details={"first_alone": share}, per_candidate=("first_alone",))


#: Tie conventions of the positional rules: ``average`` shares the points of the tied
#: positions (the textbook convention, as average rank does); ``min``/``max`` give each
#: tied candidate those of the best/worst position of the tie (Vote'n'Rank's).
DOWDALL_TIES = ("average", "min")
THRESHOLD_TIES = ("average", "max")


@ranking_method(
    "dowdall",
    order_only=True,
    params={"ties": Options(*DOWDALL_TIES)},
    resampling=shortcuts.DOWDALL,
    weighting=Weighting(weight_points.dowdall_shares),
    display=Display("Dowdall points"),
    description="Weighted average over the judges of 1 / position (Nauru's Dowdall count: "
    "top-heavy Borda).",
)
def dowdall(X: np.ndarray, w: np.ndarray, *, ties: str = "average") -> MethodOutput:
    """Dowdall count: ``sum_j w_j / position_j(i)``, divided by the total weight.

    ``ties="average"`` (default): candidates tied over positions ``lo..hi`` share their
    points, each getting ``mean(1/lo, ..., 1/hi)``; ``ties="min"``: each gets ``1/lo``, the
    points of the best position of the tie (Vote'n'Rank's, which hands out more points
    when judges tie).
    """
    lo, hi = position_spans(X)
    return MethodOutput(over_present(dowdall_points(lo, hi, ties), w))


def _check_geometric_mean(matrix: ScoreMatrix, params: dict) -> None:
    raw = matrix.values
    higher = np.asarray(matrix.higher_is_better, dtype=bool)[None, :]
    bad = (raw < 0) | ((raw == 0) & ~higher)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        why = "is negative" if raw[i, j] < 0 else "is 0 on a lower-is-better judge (its inverse is infinite)"
        raise InputError(
            f"geometric_mean needs positive scores, but candidate {matrix.candidates[i]!r} has "
            f"{float(raw[i, j])!r} on judge {matrix.judges[j]!r}, which {why}; use another "
            "method (mean, optimality_gap) or shift the scores."
        )


@ranking_method(
    "geometric_mean",
    takes=("signs",),
    check=_check_geometric_mean,
    resampling=shortcuts.GEOMETRIC_MEAN,
    weighting=Weighting(weight_points.log_values),
    display=Display("geometric mean"),
    description="Weighted geometric mean of the scores (of 1/score on lower-is-better judges); "
    "positive scores only.",
)
def geometric_mean(X: np.ndarray, w: np.ndarray, *, signs: np.ndarray) -> MethodOutput:
    """Weighted geometric mean ``exp(sum_j w_j log x_ij / sum_j w_j)`` of the raw scores.

    A lower-is-better judge enters as ``1 / x`` (the geometric mean of ``1/x`` is ``1 /`` that
    of ``x``), so the direction is kept without making a score negative. A score of 0 on a
    higher-is-better judge makes the geometric mean 0 (every such candidate ties, last); a
    negative score, or 0 on a lower-is-better judge, is refused before ranking.
    """
    raw = X * signs[None, :]  # back to the raw, positive scores
    with np.errstate(divide="ignore"):
        logs = np.log(raw) * signs[None, :]
    finite = np.where(np.isneginf(logs), 0.0, logs)
    out = np.exp(over_present(finite, w))
    zero = np.isneginf(logs).any(axis=1)
    return MethodOutput(np.where(zero, 0.0, out))


@ranking_method(
    "minimax",
    input="pairwise",
    condorcet=True,
    unanimity=False,
    resampling=shortcuts.MINIMAX,
    display=Display("worst defeat", -1.0),
    description="Rank by the weakest worst head-to-head defeat (winning votes, as a share of "
    "the judges' weight).",
)
def minimax(counts: PairwiseCounts) -> MethodOutput:
    """Minimax (Simpson-Kramer), winning votes: ``-max_b D(a, b)`` with ``D(a, b) = N(b, a)``
    when b beats a head to head (``N(b, a) > N(a, b)``), else 0.

    The defeat is divided by the judges' total weight (a share of the judges), so only
    relative weights matter. A Condorcet winner has no defeat and is first alone; every
    other candidate is beaten at least once. Missing scores count pairwise (only the
    judges scoring both). The candidates below the first often tie: a strict order every
    judge gives is a defeat by every judge for all but the first (``unanimity=False``).
    """
    wins, _ = counts.dense()
    beaten = counts.margins() < 0  # beaten[a, b]: b beats a
    defeat = np.where(beaten, snap_margins(wins.T, counts.total_weight), 0.0)
    worst = defeat.max(axis=1) / counts.total_weight
    return MethodOutput(-worst, details={"worst_defeat": worst}, per_candidate=("worst_defeat",))


@ranking_method(
    "baldwin",
    input="pairwise",
    condorcet=True,
    display=Display("share of candidates outlasted"),
    description="Drop the lowest Borda candidate and recount until one is left (Condorcet "
    "consistent); the score is the share of candidates dropped before.",
)
def baldwin(counts: PairwiseCounts) -> MethodOutput:
    """Baldwin's method: Borda counts among the remaining candidates, the lowest dropped,
    repeated until one candidate (or a tie) is left.

    The Borda count among the remaining candidates S is taken from the margins,
    ``sum_{b in S} (N(a, b) - N(b, a))``: on complete data it orders S as the Borda count
    with shared positions for ties does. Candidates sharing the lowest count are dropped
    together, and candidates left all equal share the first place. A Condorcet winner's
    count is positive while the lowest is at most 0, so it is never dropped.

    The score is the share of the other candidates dropped before (1 for a single winner);
    ``details["dropped"]`` lists the rounds, each the labels dropped together.
    """
    margins = counts.margins()
    n = counts.n
    left = np.ones(n, dtype=bool)
    before = np.zeros(n)
    dropped: list[list[str]] = []
    # sums of margins equal in exact arithmetic differ by float noise of decimal weights
    tol = n * WEIGHT_RTOL * counts.total_weight
    while left.sum() > 1:
        total = margins[:, left].sum(axis=1)
        low = left & (total <= total[left].min() + tol)
        if low.sum() == left.sum():
            break  # the candidates left are all equal: they share the first place
        before[left] = n - left.sum()
        left &= ~low
        dropped.append([counts.candidates[i] for i in np.flatnonzero(low)])
    before[left] = n - left.sum()
    return MethodOutput(before / (n - 1), details={"dropped": dropped})


@ranking_method(
    "threshold",
    order_only=True,
    params={"ties": Options(*THRESHOLD_TIES)},
    weighting=Weighting(why_not="it compares counts of last places one after the other, not "
                                "one weighted sum"),
    display=Display("share of candidates outranked"),
    description="Fewest last places wins, then fewest second-to-last places, and so on "
    "(weighted judges).",
)
def threshold(X: np.ndarray, w: np.ndarray, *, ties: str = "average") -> MethodOutput:
    """Threshold rule (Aleskerov et al.): compare the candidates' weighted counts of last
    places, then of second-to-last places, and so on; fewer is better.

    Places are counted from the bottom of each judge (the last of the candidates it scores
    is place 1). ``ties="average"`` (default): candidates tied over several places share
    the judge's weight equally among those places; ``ties="max"``: each counts at the
    lowest place of the tie, with the judge's whole weight (Vote'n'Rank's). The counts are
    shares of the weight of the judges scoring the candidate.

    The score is the share of the other candidates whose counts compare worse;
    ``details["last_places"]`` holds each candidate's share of last places.
    """
    n = X.shape[0]
    lo, hi = position_spans(X)
    scored = (~np.isnan(X)).sum(axis=0, keepdims=True)  # candidates each judge places
    present = ~np.isnan(lo)
    low = np.where(present, scored - hi, 0).astype(np.intp)   # 0 = last place
    top = np.where(present, scored - lo, 0).astype(np.intp)
    if ties == "max":
        top = low
    # each judge's weight spread evenly over the places low..top: +share at low, -share
    # after top, summed by bincount, then a running sum over the places
    rows = np.broadcast_to(np.arange(n)[:, None] * (n + 1), X.shape)[present]
    share = (w[None, :] / (top - low + 1))[present]
    spread = np.bincount(np.concatenate([rows + low[present], rows + top[present] + 1]),
                         np.concatenate([share, -share]), minlength=n * (n + 1))
    places = np.cumsum(spread.reshape(n, n + 1), axis=1)[:, :n]
    own = np.where(present, w[None, :], 0.0).sum(axis=1, keepdims=True)
    places = np.round(places / own, 12)  # shares; float noise does not split equal counts
    order = np.lexsort(places.T[::-1])   # fewest last places first
    ranked = places[order]
    new = np.r_[True, (ranked[1:] != ranked[:-1]).any(axis=1)]
    group = np.cumsum(new) - 1
    size = np.bincount(group)
    worse = n - np.cumsum(size)  # candidates in later (worse) groups
    score = np.empty(n)
    score[order] = worse[group] / (n - 1)
    return MethodOutput(score, details={"last_places": places[:, 0]}, per_candidate=("last_places",))


def _check_optimality_gap(matrix: ScoreMatrix, params: dict) -> None:
    """A target per judge names every judge (a key naming no judge is allowed: a resample
    may leave judges out; a misspelt key leaves its judge without a target)."""
    gamma = params["gamma"]
    if not isinstance(gamma, Mapping):
        return
    for judge in matrix.judges:
        if judge_target(gamma, judge) is None:
            raise InputError(
                f"optimality_gap: `gamma` gives no target for judge {judge!r}"
                f"{did_you_mean(judge, list(gamma))}; give one per judge, or one number for all."
            )


@ranking_method(
    "optimality_gap",
    takes=("signs", "judges"),
    check=_check_optimality_gap,
    unanimity=False,
    params={"gamma": Target()},
    resampling=shortcuts.OPTIMALITY_GAP,
    weighting=Weighting(weight_points.shortfall),
    display=Display("optimality gap", -1.0),
    description="Mean shortfall below a target gamma, gamma - mean(min(x, gamma)) (lower is "
    "better; gamma per judge allowed, default each judge's 90th percentile).",
)
def optimality_gap(X: np.ndarray, w: np.ndarray, *, signs: np.ndarray,
                   judges: Sequence[str] | None = None, gamma: Any = DEFAULT_GAMMA) -> MethodOutput:
    """Optimality gap: ``sum_j w_j (gamma_j - min(x_ij, gamma_j)) / sum_j w_j``, the mean
    shortfall below the target (scores above it count as reaching it); the score is minus
    the gap.

    ``gamma``: one target for every judge (Vote'n'Rank: 95 on 0-100 scores), ``{judge:
    target}``, ``"qP"`` (each judge's P-th percentile of the candidates' scores; default
    ``"q90"``: the top tenth of every judge reaches its target, so a candidate is judged by
    how far it falls short elsewhere), or ``"best"`` (each judge's best score, which orders
    exactly as the weighted mean: the gap to a fixed best is the mean's complement). On a
    lower-is-better judge the shortfall is ``max(x, gamma) - gamma`` (an error above the
    target; ``"qP"`` takes the percentile of the oriented scores, the best tenth for
    ``q90``). Scores past the target all reach it, so candidates that a strict common order
    separates can tie (``unanimity=False``). ``details["optimality_gap"]`` holds the gap.
    """
    g = targets(gamma, judges, X, signs)
    gap = over_present(g[None, :] - np.minimum(X, g[None, :]), w)
    return MethodOutput(-gap, details={"optimality_gap": gap}, per_candidate=("optimality_gap",))
