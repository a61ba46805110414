"""How far the judges' weights may move before the winner (and the second and third
place) changes: the robustness of a ranking to its weights, in one figure a reader
understands.

**The measure.** Every counted judge's weight may move by a relative factor in either
direction, ``w_j -> w_j (1 + d_j)`` with ``|d_j| <= x``; the figure of a place is the
smallest ``x`` at which some such re-weighting puts another candidate there. "Every
weight may move by 12% in any direction and alice stays first" reads without knowing the
method, it does not depend on the scale of the weights (only relative weights matter to
every method), and a judge nobody counts (weight 0) stays at 0. The weights stay
positive, so ``x < 1``: a re-weighting that silences a judge is another question, and
when no ``x < 1`` changes the place the figure is None ("no re-weighting changes it").
Only the final ranking's judges move: the qualified pool is kept as it is (a filter's
verdicts are not recomputed).

**Places and ties.** A place's holder is the candidate the ranking lists there (inside a
tie, the one the tie-break puts first). It changes when another candidate is listed there:
a tie the re-weighting creates counts as a change only when the tie-break gives it to the
challenger. The figure is the infimum of the changing re-weightings: at exactly ``x`` the
two may tie, just past it the challenger is ahead.

**Exact, or a bound** (:class:`PlaceShift`'s ``kind``):

- A method linear in the weights (it declares its per-judge points,
  :attr:`~metascore.method_spec.Weighting.points`: mean, average rank, Dowdall, plurality, geometric mean, optimality gap, success rate, relative difference):
  two candidates ``a`` ahead of ``c``, scored by the same judges, compare by the sign of
  ``sum_j w_j (1 + d_j) D_j`` with ``D_j = p_aj - p_cj``; the smallest ``x`` that makes it
  0 is ``sum_j w_j D_j / sum_j w_j |D_j|`` (``d_j = -x sign(D_j)``), exact and without a
  linear program. A place changes only when a pair involving its holder swaps, so the
  smallest such ``x`` over the other candidates is a lower bound, and the ranking
  re-computed just past it (``x`` larger by a relative :data:`PAST`) settles it: the
  holder changed, and the figure is exact; another pair swapped in compensation, and it is
  a bound ("at least"). For the winner no compensation exists: always exact. Under
  ``missing: pairwise`` two candidates scored by different judges compare two weighted
  means with their own totals, ``N_a(w) / W_a(w)`` against ``N_c(w) / W_c(w)``:
  cross-multiplied, a difference of products of linear forms, so neither the closed form
  nor a linear program is exact. Their pair's figure is a lower bound (each mean pushed to
  its extreme separately, a relaxation); the re-weighting tried just past it (the
  relaxation's directions, then improved judge by judge) makes the place's figure exact
  when it changes the holder. "Exact" is to the ranking's tie tolerance
  (:data:`~metascore.ranking.SCORE_RTOL`, relative 1e-10): scores that close tie.
- A Condorcet method (Copeland, minimax, Baldwin, ranked pairs, Schulze, Kemeny-Young)
  whose winner is a Condorcet winner keeps it first while it beats every other candidate
  head to head; each weighted majority margin is linear in the weights, so the smallest
  ``x`` that makes one 0 is a lower bound of the winner's figure, exact when the ranking
  re-computed just past it (by the method, through the registry, up to
  :data:`RERANKED_CANDIDATES` candidates) has another winner. The second and third places
  depend on the sizes of the margins: not computed.
- Every other method, a winner who is not a Condorcet winner, grouped judges and votes:
  not computed, with the reason.

Pure: it reads the inputs a :class:`~metascore.Ranking` keeps and re-ranks through the
registry (:func:`~metascore.registry.rank_inputs`) only to check a bound.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..inputs import Inputs
from ..method_spec import RankingMethod
from ..missing import Prepared
from ..pairwise import WEIGHT_RTOL
from ..ranking import DEFAULT_TIE_BREAK, SCORE_RTOL, Ranking, positions_and_order, tie_groups
from ..registry import DEFAULT_METHOD, check_params, get_ranking_method, rank_inputs

__all__ = ["PlaceShift", "Robustness", "robustness_of", "weight_robustness", "PLACES",
           "RERANKED_CANDIDATES", "PAST"]

#: The places whose figure is computed: the winner, the second and the third.
PLACES = 3
#: A bound of a method outside the closed form is checked by ranking again (through the
#: registry) up to this many candidates; beyond, it stays a bound.
RERANKED_CANDIDATES = 200
#: The check of a figure ``x`` re-ranks at ``x (1 + PAST)`` (and far enough past it for
#: the swapped pair's scores to differ beyond the ranking's tie tolerance).
PAST = 1e-6
#: The note of a bound resting on two candidates scored by different judges.
RELAXED = ("the two candidates are scored by different judges (missing: pairwise), so each "
           "one's mean was pushed to its extreme separately: a larger shift may be needed")
#: A bound on two candidates scored by different judges is checked after a search of the
#: vertices judge by judge up to this many judges.
ASCENT_JUDGES = 2_000
#: Judges named in a place's ``raised`` and ``lowered`` (their counts are kept).
NAMED_JUDGES = 20


@dataclass(frozen=True)
class PlaceShift:
    """The figure of one place.

    Attributes
    ----------
    position : int
        1 for the winner, then 2, 3.
    holder : str
        The candidate the ranking lists there.
    kind : str
        ``"exact"``, ``"bound"`` (the holder stays for every smaller shift; a larger one
        may be needed) or ``"not computed"`` (``note`` says why).
    shift : float or None
        The smallest relative change ``x`` of the weights that changes the holder; None
        with ``exact``: no re-weighting keeping every weight positive changes it.
    challenger : str or None
        Who holds the place just past ``shift`` in the re-weighting found (None: none
        found, or a bound).
    raised, lowered : tuple of str
        The judges whose weight goes up (down) by ``shift`` in that re-weighting (at most
        :data:`NAMED_JUDGES` each; ``n_raised``, ``n_lowered`` count them all).
    note : str or None
        Why the place is not computed, or what its bound rests on.
    """

    position: int
    holder: str
    kind: str
    shift: float | None = None
    challenger: str | None = None
    raised: tuple[str, ...] = ()
    lowered: tuple[str, ...] = ()
    n_raised: int = 0
    n_lowered: int = 0
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self) | {"raised": list(self.raised),
                                           "lowered": list(self.lowered)}


@dataclass(frozen=True)
class Robustness:
    """How far the judges' weights may move before each of the first places changes
    (the module's docstring gives the measure); ``places`` best first, ``note`` why none
    is computed."""

    method: str
    places: tuple[PlaceShift, ...]
    n_candidates: int
    n_judges: int
    note: str | None = None

    @property
    def winner(self) -> PlaceShift | None:
        return self.places[0] if self.places else None

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method,
                "measure": "every counted judge's weight w_j may become w_j (1 + d_j) with "
                           "|d_j| <= shift (weights stay positive)",
                "n_candidates": self.n_candidates, "n_judges": self.n_judges,
                "note": self.note, "places": [p.to_dict() for p in self.places]}


def robustness_of(ranking: Ranking, places: int = PLACES) -> Robustness:
    """The robustness of ``ranking`` to its judges' weights (its inputs, method,
    parameters, seed and tie-break)."""
    order = np.asarray(ranking.order)
    if ranking.inputs is None:
        return _none(ranking.method, order, ranking.candidates, 0, places,
                     "the ranking does not keep its inputs")
    return _robustness(ranking.inputs, ranking.method, dict(ranking.params), ranking.seed,
                       tuple(ranking.tie_break), order, places)


def weight_robustness(inputs: Inputs, method: str = DEFAULT_METHOD, *, seed: int | None = None,
                      tie_break: Sequence[str] = DEFAULT_TIE_BREAK, places: int = PLACES,
                      **params: Any) -> Robustness:
    """The robustness of the ranking of ``inputs`` (:func:`~metascore.registry.prepare_inputs`)
    by ``method`` with ``params``, as :func:`~metascore.rank` ranks them."""
    full = check_params(method, params)
    ranking = rank_inputs(inputs, method, seed=seed, tie_break=tie_break, **full)
    return robustness_of(ranking, places)


# ---------------------------------------------------------------------- dispatch
def _robustness(inputs: Inputs, method: str, params: dict[str, Any], seed: int | None,
                tie_break: tuple[str, ...], order: np.ndarray, places: int) -> Robustness:
    spec = get_ranking_method(method)
    prepared = inputs.prepared
    n, m = len(inputs.candidates), len(inputs.judges)
    why = _not_computed(method, prepared)
    if why is not None:
        return _none(method, order, inputs.candidates, m, places, why)
    assert prepared is not None
    w = np.asarray(prepared.matrix.weights, dtype=float)
    listing = _Listing(inputs, tie_break)
    points = linear_points(spec, params, prepared)
    if points is not None:
        board = _Linear(points, w, listing)
        shifts = tuple(board.place(order, k) for k in range(1, min(places, n) + 1))
        return Robustness(method, shifts, n, m)
    if spec.weighting.per_pair:
        return _none(method, order, inputs.candidates, m, places,
                     f"under missing: pairwise each pair of candidates is compared on the "
                     f"judges scoring both, so {method}'s pairs have totals of their own")
    if spec.condorcet and not spec.stochastic:
        rerank = _Rerank(inputs, method, params, seed, tie_break)
        return _condorcet(prepared.filled(values_based=False), w, order, listing, rerank, places)
    return _none(method, order, inputs.candidates, m, places,
                 spec.weighting.why_not or f"{method} has no closed form in the weights")


def linear_points(spec: RankingMethod, params: Mapping[str, Any], prepared: Prepared
                  ) -> np.ndarray | None:
    """The per-judge points ``p_ij`` the method declares
    (:attr:`~metascore.method_spec.Weighting.points`) on the matrix it saw
    (:meth:`~metascore.missing.Prepared.filled`); None for a method without points, or for
    one whose score divides by each pair's compared weight when a pair of candidates is
    compared on judges of its own."""
    points = spec.weighting.points
    if points is None:
        return None
    x = prepared.filled(values_based=spec.input == "values" and not spec.order_only)
    if spec.weighting.per_pair and np.isnan(x).any():
        return None
    return points(x, prepared.matrix, dict(params))


def weighted_scores(points: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``sum_j w_j p_ij / sum_j w_j`` over the judges scoring each candidate: the score of
    a linear method, up to the method's increasing transform."""
    present = ~np.isnan(points)
    if present.all():
        return points @ weights / weights.sum()
    own = np.where(present, weights[None, :], 0.0).sum(axis=1)
    return np.where(present, points, 0.0) @ weights / own


def _not_computed(method: str, prepared: Any) -> str | None:
    if prepared is None:
        return "the ranking reads votes: it has no judges to re-weight"
    if prepared.matrix.groups is not None:
        return ("the judges are ranked in groups (two steps): a judge's weight moves its "
                "group's score, which the method ranks again")
    return None


def _none(method: str, order: np.ndarray, candidates: Sequence[str], m: int, places: int,
          why: str) -> Robustness:
    shifts = tuple(PlaceShift(k, candidates[int(order[k - 1])], "not computed", note=why)
                   for k in range(1, min(places, len(order)) + 1))
    return Robustness(method, shifts, len(candidates), m, note=why)


class _Listing:
    """How the ranking lists candidates: by score, and inside a tie by its tie-break, as
    the registry does (:func:`~metascore.ranking.positions_and_order`)."""

    def __init__(self, inputs: Inputs, tie_break: tuple[str, ...]) -> None:
        self.candidates, self.judges = inputs.candidates, inputs.judges
        self.matrix, self.tie_break = inputs.prepared.matrix, tie_break

    def holder(self, scores: np.ndarray, k: int) -> int:
        """The candidate the registry lists in place ``k`` by ``scores``: the tie-break
        applied to the groups of equal scores that reach the first ``k`` places only."""
        best_first, group = tie_groups(scores)
        last = group[best_first[k - 1]]
        idx = np.flatnonzero(group <= last)
        if last == k - 1 and len(idx) == k:  # no tie reaches place k
            return int(best_first[k - 1])
        meta = self.matrix
        part = [(tuple(seq[i] for i in idx) if len(seq) else ()) for seq in
                (meta.submitted_at, meta.participants, meta.submission_order)]
        listed = positions_and_order(np.zeros(len(idx)), self.tie_break,
                                     [self.candidates[i] for i in idx], part[0], part[1],
                                     np.zeros(len(idx), dtype=np.intp), part[2])[1]
        rank = np.empty(len(idx), dtype=np.intp)
        rank[listed] = np.arange(len(idx))
        return int(idx[np.lexsort((rank, group[idx]))[k - 1]])

    def shift(self, position: int, holder: int, kind: str, x: float | None,
              challenger: int | None = None, d: np.ndarray | None = None,
              note: str | None = None) -> PlaceShift:
        up = np.flatnonzero(d > 0) if d is not None else np.array([], dtype=np.intp)
        down = np.flatnonzero(d < 0) if d is not None else np.array([], dtype=np.intp)
        return PlaceShift(
            position, self.candidates[holder], kind, x,
            None if challenger is None else self.candidates[challenger],
            tuple(self.judges[j] for j in up[:NAMED_JUDGES]),
            tuple(self.judges[j] for j in down[:NAMED_JUDGES]), len(up), len(down), note)


def _past(x: float, gap: float, scale: float) -> float:
    """Where to check a figure ``x``: a relative :data:`PAST` beyond it, and far enough for
    a pair whose score difference moves by ``gap`` per unit of ``x`` to differ by more than
    the ranking's tie tolerance relative to ``scale``; always below 1."""
    step = max(PAST * x, 1e-12, 1e-8 * max(1.0, scale) / gap if gap > 0 else 0.0)
    return min(x + step, (x + 1.0) / 2.0)


# ---------------------------------------------------------------------- linear methods
class _Linear:
    """A method whose score is a weighted mean of per-judge points (NaN: not scored)."""

    def __init__(self, points: np.ndarray, weights: np.ndarray, listing: _Listing) -> None:
        self.points, self.w, self.listing = points, weights, listing
        self.present = ~np.isnan(points)
        self.complete = bool(self.present.all())
        self.filled = points if self.complete else np.where(self.present, points, 0.0)
        self.scores = weighted_scores(points, weights)

    def place(self, order: np.ndarray, k: int) -> PlaceShift:
        h = int(order[k - 1])
        ahead = np.zeros(len(order), dtype=bool)
        ahead[order[:k - 1]] = True
        t = self._thresholds(h, ahead)
        c = int(np.argmin(t))
        x = float(t[c])
        if not np.isfinite(x):
            return self.listing.shift(k, h, "exact", None)
        front, back = (c, h) if ahead[c] else (h, c)
        x_past, d = self._witness(front, back, x)
        new = self.listing.holder(weighted_scores(self.points, self.w * (1.0 + d)), k)
        if new != h:
            return self.listing.shift(k, h, "exact", x, new, d)
        if not self._same(h)[c]:
            return self.listing.shift(k, h, "bound", x, note=RELAXED)
        return self.listing.shift(k, h, "bound", x, note=(
            "at that shift another pair of candidates swaps too, so the holder may keep "
            "the place: a larger shift may be needed"))

    def _thresholds(self, h: int, ahead: np.ndarray) -> np.ndarray:
        """Each other candidate's smallest shift swapping it with ``h`` (inf: none below
        1); for a pair scored by different judges a lower bound, computed only when it
        may be the smallest (inf otherwise)."""
        sign = np.where(ahead, -1.0, 1.0)[:, None]  # rows: front minus back
        same = self._same(h)
        D = (self.filled[h][None, :] - self.filled) * sign
        t = np.full(len(D), np.inf)
        gain, spread = D @ self.w, np.abs(D) @ self.w
        ok = same & (spread > 0)
        t[ok] = np.maximum(gain[ok], 0.0) / spread[ok]
        t[h] = np.inf
        other = np.flatnonzero(~same)
        if other.size:
            fronts = np.where(ahead[other], other, h)
            backs = np.where(ahead[other], h, other)
            s_f, s_b = self.scores[fronts], self.scores[backs]
            tied = np.abs(s_f - s_b) <= SCORE_RTOL * np.maximum(1.0, np.maximum(abs(s_f), abs(s_b)))
            t[other] = _relaxed(self.points, self.w, fronts, backs, tied, float(t.min()))
        t[t >= 1.0] = np.inf
        return t

    def _same(self, h: int) -> np.ndarray:
        """The candidates scored by the same judges as ``h``."""
        if self.complete:
            return np.ones(len(self.points), dtype=bool)
        return (self.present == self.present[h]).all(axis=1)

    def _witness(self, front: int, back: int, x: float) -> tuple[float, np.ndarray]:
        """The re-weighting that swaps ``front`` and ``back`` just past ``x``: each judge
        moved by the full shift against ``front``."""
        pf, pb = self.present[front], self.present[back]
        if (pf == pb).all():
            D = self.filled[front] - self.filled[back]
            gap = float(np.abs(D) @ self.w) / float(self.w.sum())
            scale = max(abs(self.scores[front]), abs(self.scores[back]))
            x_past = _past(x, gap, scale)
            return x_past, -x_past * np.sign(D)
        x_past = _past(x, 0.0, 0.0)
        grad = (_slope(self.points[front], self.w, x_past, lowest=True)
                - _slope(self.points[back], self.w, x_past, lowest=False))
        d = -x_past * np.sign(grad)
        if len(d) <= ASCENT_JUDGES:
            d = _ascend(self.points[front], self.points[back], self.w, d, x_past)
        return x_past, d


class _Extremes:
    """Each row's smallest (``lowest``) or largest weighted mean over the judges scoring it
    when every weight may move by ``x``: the extreme is a vertex whose raised weights are
    those of the smallest (largest) values, so the best of the ``m + 1`` splits of the
    sorted row (the row sorted once, each ``x`` one pass)."""

    def __init__(self, rows: np.ndarray, w: np.ndarray, lowest: bool) -> None:
        present = ~np.isnan(rows)
        key = np.where(present, rows, np.inf if lowest else -np.inf)
        idx = np.argsort(key if lowest else -key, axis=1, kind="stable")
        v = np.take_along_axis(np.where(present, rows, 0.0), idx, axis=1)
        u = np.take_along_axis(np.where(present, w[None, :], 0.0), idx, axis=1)
        zero = np.zeros((len(v), 1))
        self.A = np.concatenate([zero, np.cumsum(u * v, axis=1)], axis=1)
        self.B = np.concatenate([zero, np.cumsum(u, axis=1)], axis=1)
        self.lowest = lowest

    def at(self, x: float, rows: np.ndarray) -> np.ndarray:
        A, B = self.A[rows], self.B[rows]
        means = ((1 - x) * A[:, -1:] + 2 * x * A) / ((1 - x) * B[:, -1:] + 2 * x * B)
        return means.min(axis=1) if self.lowest else means.max(axis=1)


def _relaxed(points: np.ndarray, w: np.ndarray, fronts: np.ndarray, backs: np.ndarray,
             tied: np.ndarray, below: float) -> np.ndarray:
    """A lower bound of the shift swapping each pair ``fronts[i]`` ahead of ``backs[i]``
    scored by different judges, for the pairs whose bound is the smallest of all and
    below ``below`` (inf for the others): the smallest ``x`` at which the back's largest
    mean reaches the front's smallest, each pushed to its extreme separately (a
    relaxation: a judge both share may move one way for one and the other way for the
    other). Both extremes are monotone in ``x``, so a bisection on the smallest, to
    1e-13, dropping the pairs that do not reach a shift some other pair reaches. A pair
    ``tied`` now (the front listed first by the tie-break) swaps only when the back gets
    strictly ahead."""
    low, high = _Extremes(points[fronts], w, lowest=True), _Extremes(points[backs], w, lowest=False)

    def reached(x: float, rows: np.ndarray) -> np.ndarray:
        f, b = low.at(x, rows), high.at(x, rows)
        apart = SCORE_RTOL * np.maximum(1.0, np.maximum(abs(f), abs(b)))
        return np.where(tied[rows], b > f + apart, b >= f)

    out = np.full(len(fronts), np.inf)
    hi = min(below, 1.0 - 1e-12)
    active = np.flatnonzero(reached(hi, np.arange(len(fronts))))
    if not active.size:
        return out
    lo = 0.0
    now = reached(0.0, active)
    if now.any():
        out[active[now]] = 0.0
        return out
    while hi - lo > 1e-13:
        mid = (lo + hi) / 2.0
        yes = reached(mid, active)
        if yes.any():
            hi, active = mid, active[yes]
        else:
            lo = mid
    out[active] = hi
    return out


def _ascend(front: np.ndarray, back: np.ndarray, w: np.ndarray, d: np.ndarray, x: float
            ) -> np.ndarray:
    """The vertex shift ``d`` improved judge by judge: each judge's move reversed when that
    raises the back's mean against the front's (two means with totals of their own, so
    the relaxation's directions may disagree on a judge both share), until no reversal
    helps (at most 20 passes)."""
    d = d.copy()
    d[d == 0] = x
    pf, pb = ~np.isnan(front), ~np.isnan(back)
    vf, vb = np.where(pf, front, 0.0), np.where(pb, back, 0.0)
    u = w * (1.0 + d)
    sums = [float(u @ (vf * pf)), float(u @ pf), float(u @ (vb * pb)), float(u @ pb)]

    def gap(n_f: float, w_f: float, n_b: float, w_b: float) -> float:
        return n_b / w_b - n_f / w_f

    for _ in range(20):
        moved = False
        for j in range(len(d)):
            step = -2.0 * d[j] * w[j]  # the change of u_j when d_j is reversed
            new = [sums[0] + step * vf[j] * pf[j], sums[1] + step * pf[j],
                   sums[2] + step * vb[j] * pb[j], sums[3] + step * pb[j]]
            if gap(*new) > gap(*sums) + 1e-15:
                d[j], sums, moved = -d[j], new, True
        if not moved:
            break
    return d


def _slope(row: np.ndarray, w: np.ndarray, x: float, lowest: bool) -> np.ndarray:
    """How raising each judge's weight moves the row's mean at its extreme vertex for
    ``x`` (zero for a judge not scoring it)."""
    present = ~np.isnan(row)
    mu = float(_Extremes(row[None, :], w, lowest).at(x, np.array([0]))[0])
    total = float(np.where(present, w, 0.0).sum())
    return np.where(present, (np.where(present, row, 0.0) - mu) / total, 0.0) * w


# ---------------------------------------------------------------------- Condorcet methods
@dataclass(frozen=True)
class _Rerank:
    """The ranking's method, ranked again through the registry with other weights."""

    inputs: Inputs
    method: str
    params: Mapping[str, Any]
    seed: int | None
    tie_break: tuple[str, ...]

    def order(self, weights: np.ndarray) -> np.ndarray:
        prepared = self.inputs.prepared
        matrix = dataclasses.replace(prepared.matrix, weights=weights)
        inputs = dataclasses.replace(self.inputs, prepared=dataclasses.replace(prepared, matrix=matrix))
        return rank_inputs(inputs, self.method, seed=self.seed, tie_break=self.tie_break,
                           **dict(self.params)).order


def _condorcet(x: np.ndarray, w: np.ndarray, order: np.ndarray, listing: _Listing,
               rerank: _Rerank, places: int) -> Robustness:
    """The winner's bound while it stays a Condorcet winner; the other places not computed."""
    n = len(order)
    h = int(order[0])
    with np.errstate(invalid="ignore"):
        sgn = np.nan_to_num(np.sign(x[h][None, :] - x), nan=0.0)  # NaN: not both scored
    margin, spread = sgn @ w, np.abs(sgn) @ w
    others = np.arange(n) != h
    later = "the places after the first depend on the sizes of the margins"
    rest = tuple(listing.shift(k, int(order[k - 1]), "not computed", None, note=later)
                 for k in range(2, min(places, n) + 1))
    if (margin[others] <= WEIGHT_RTOL * w.sum()).any():
        why = (f"the winner, {listing.candidates[h]}, does not beat every other candidate "
               f"head to head (no Condorcet winner), and for {rerank.method} only a Condorcet "
               "winner's place has a bound")
        first = listing.shift(1, h, "not computed", None, note=why)
        return Robustness(rerank.method, (first, *rest), n, len(w), note=why)
    t = np.where(others, margin / np.where(spread > 0, spread, 1.0), np.inf)
    c = int(np.argmin(t))
    note = "a bound: the winner stays a Condorcet winner below it"
    if t[c] >= 1.0:
        first = listing.shift(1, h, "exact", None)
    elif n > RERANKED_CANDIDATES:
        first = listing.shift(1, h, "bound", float(t[c]), note=note)
    else:
        x_past = _past(float(t[c]), 0.0, 0.0)
        d = -x_past * sgn[c]
        new = int(rerank.order(w * (1.0 + d))[0])
        first = (listing.shift(1, h, "exact", float(t[c]), new, d) if new != h
                 else listing.shift(1, h, "bound", float(t[c]), note=note))
    return Robustness(rerank.method, (first, *rest), n, len(w))

