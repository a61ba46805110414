"""Exact Kemeny-Young rank aggregation.

The Kemeny ranking R maximizes the agreement ``sum_{a above b in R} N(a, b)``, which is the
same as minimizing the total Kendall tau distance to the judges,
``sum_k K(R, r_k) = sum_{a above b in R} N(b, a)`` (a judge's ties cost nothing). It is the
maximum likelihood ranking of Condorcet's noise model (Young 1988) and is NP-hard, so it is
solved exactly in three steps:

1. **Decomposition** (extended Condorcet criterion, Truchon 1998): the strongly connected
   components of the "is not beaten by" graph (``delta(a, b) >= 0``) are totally ordered,
   and every candidate of an upper component beats every candidate of a lower one by a
   strict majority. Moving the upper set above the lower one without changing any other
   relative order strictly increases the agreement, so every optimum respects this order
   and each component is solved on its own.
2. **Subset dynamic programming** for components of at most ``DP_LIMIT`` candidates:
   ``f(S) = max_{c in S} [N(c, S \\ {c}) + f(S \\ {c})]`` (c placed first among S), one
   vectorized step per subset size, ``O(2^k k)`` time; it also counts the optimal orders.
   Components of at most ``ENUMERATE_LIMIT`` candidates (most cycles of competition data)
   score all k! orders at once instead, with the same tie-break and count: 10 to 20 times
   faster there than the steps of the program.
3. **Integer program** for larger components (:mod:`.kemeny_ilp`): a binary variable per
   pair (a above b or not), the transitivity constraints of the triples added only when a
   relaxation violates them (HiGHS through scipy), which certifies the optimum (its
   agreement equals the proven bound) and decides uniqueness, within a time budget; past
   it, the best order found and its gap to the bound, said in the notes.
"""

from __future__ import annotations

import itertools
import time
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ..constraints import Interval, Options
from ..errors import ConfigError, InputError
from ..pairwise import PairwiseCounts
from ..method_spec import MethodOutput, ranking_method
from .kemeny_ilp import solve_cycle

__all__ = ["kemeny_young", "kemeny_order", "KemenyOrder", "DP_LIMIT", "EXACT_LIMIT"]

#: Components up to this size are solved by subset dynamic programming.
DP_LIMIT = 16
#: Components up to this size are solved by scoring every order (k! of them).
ENUMERATE_LIMIT = 7
#: Largest component the integer program takes (k (k - 1) / 2 variables); larger ones are
#: refused. Near-transitive profiles solve fast (100 candidates in 30 judges in a second);
#: independent random judges, the hardest profiles, reach the time budget from about 60.
EXACT_LIMIT = 1000
#: Default time budget (seconds) of the integer programs of one ranking.
DEFAULT_KEMENY_TIME_LIMIT = 60.0

KEMENY_SOLVERS = ("auto", "dp", "ilp")


def _components(margins: np.ndarray) -> list[np.ndarray]:
    """Strong components of ``delta >= 0``, best first, each sorted by index."""
    not_beaten = margins >= 0
    np.fill_diagonal(not_beaten, False)
    _, labels = connected_components(sp.csr_array(not_beaten), directed=True, connection="strong")
    # Between components every pair has a strict margin in one direction and the
    # condensation is a transitive tournament: order by how many candidates a member beats.
    comp_ids, first = np.unique(labels, return_index=True)
    beaten = (margins > 0).sum(axis=1)
    order = np.argsort(-beaten[first], kind="stable")
    return [np.flatnonzero(labels == comp_ids[c]) for c in order]


def _kemeny_dp(W: np.ndarray, tol: float) -> tuple[np.ndarray, int]:
    """Optimal order of ``W`` (indices in label order) and the number of optimal orders.

    Among optimal orders it returns the one with the fewest label inversions (pairs where
    the larger index is above the smaller), then the lexicographically smallest.
    """
    k = W.shape[0]
    size = 1 << k
    masks = np.arange(size, dtype=np.int64)
    bits = np.int64(1) << np.arange(k, dtype=np.int64)
    popcount = np.zeros(size, dtype=np.int64)
    for b in range(k):
        popcount += (masks >> b) & 1
    f = np.full(size, -np.inf)
    inv = np.zeros(size, dtype=np.int64)   # fewest label inversions among optimal orders
    cnt = np.zeros(size, dtype=np.int64)   # number of optimal orders
    f[0], cnt[0] = 0.0, 1
    by_size = np.argsort(popcount, kind="stable")
    starts = np.concatenate([[0], np.cumsum(np.bincount(popcount, minlength=k + 1))])
    for s in range(1, k + 1):
        S = by_size[starts[s]:starts[s + 1]]
        member = (S[:, None] & bits[None, :]) != 0
        prev = S[:, None] ^ bits[None, :]
        gain = member.astype(float) @ W.T          # gain[S, c] = N(c, S \ {c})
        vals = np.where(member, f[np.where(member, prev, 0)] + gain, -np.inf)
        best = vals.max(axis=1)
        near = vals >= best[:, None] - tol
        below = popcount[S[:, None] & (bits[None, :] - 1)]  # smaller labels left below c
        inv_vals = np.where(near, inv[np.where(member, prev, 0)] + below, np.iinfo(np.int64).max)
        f[S], inv[S] = best, inv_vals.min(axis=1)
        cnt[S] = np.where(near, cnt[np.where(member, prev, 0)], 0).sum(axis=1)
    order = []
    S = size - 1
    while S:
        c = np.flatnonzero((S & bits) != 0)
        prev = S ^ bits[c]
        vals = f[prev] + W[c][:, c].sum(axis=1)
        below = popcount[S & (bits[c] - 1)]
        ok = (vals >= f[S] - tol) & (inv[prev] + below == inv[S])
        pick = int(c[np.flatnonzero(ok)[0]])
        order.append(pick)
        S ^= int(bits[pick])
    return np.array(order, dtype=np.intp), int(cnt[size - 1])


@lru_cache(maxsize=None)
def _orders(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every order of k labels in lexicographic order, the flat cells ``(above, below)``
    of its pairs in a k x k matrix, and its number of label inversions."""
    orders = np.array(list(itertools.permutations(range(k))), dtype=np.intp)
    i, j = np.triu_indices(k, 1)
    above, below = orders[:, i], orders[:, j]
    return orders, above * k + below, (above > below).sum(axis=1)


def _kemeny_enumerate(W: np.ndarray, tol: float) -> tuple[np.ndarray, int]:
    """:func:`_kemeny_dp` by scoring all k! orders (small k): the optimal order with the
    fewest label inversions, then the lexicographically smallest, and the number of
    optimal orders."""
    orders, cells, inversions = _orders(W.shape[0])
    agreement = W.ravel()[cells].sum(axis=1)
    near = agreement >= agreement.max() - tol
    pick = np.flatnonzero(near & (inversions == inversions[near].min()))[0]
    return orders[pick].copy(), int(near.sum())


class KemenyOrder(NamedTuple):
    """What :func:`kemeny_order` found.

    ``order`` (indices best first); ``unique``: no other order is optimal (None: not
    established within the time budget); ``optimal_orders``: their number when only
    dynamic programming ran, else None; ``solver`` used; ``agreement`` of the order and
    ``bound``, an upper bound on the agreement of every order (equal when ``optimal``);
    ``timed_out``: the sizes of the cycles where the time budget ran out first.
    """

    order: np.ndarray
    unique: bool | None
    optimal_orders: int | None
    solver: str
    agreement: float
    bound: float
    optimal: bool
    timed_out: tuple[int, ...] = ()


def _and(a: bool | None, b: bool | None) -> bool | None:
    """Three-valued and: False wins, then None (unknown)."""
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def kemeny_order(
    wins: np.ndarray, solver: str = "auto", margins: np.ndarray | None = None,
    components: list[np.ndarray] | None = None, time_limit: float = DEFAULT_KEMENY_TIME_LIMIT,
) -> KemenyOrder:
    """Exact Kemeny order of the dense counts ``wins`` (indices assumed in label order).

    ``margins`` defaults to ``wins - wins.T``; pass :meth:`PairwiseCounts.margins` (in
    the same order) so that float noise of decimal weights does not split a cycle.
    ``components``: the strong components of the margins, if the caller has them.
    ``time_limit``: seconds for the integer programs of all the cycles together; past it,
    a cycle keeps the best order found and the result says so (``optimal=False``).
    """
    margins = wins - wins.T if margins is None else margins
    tol = 1e-9 * max(1.0, float(np.abs(wins).sum()))
    deadline = time.monotonic() + time_limit
    order: list[np.ndarray] = []
    unique: bool | None = True
    count: int | None = 1
    used: set[str] = set()
    slack = 0.0  # sum over the cycles of (bound - agreement)
    timed_out: list[int] = []
    for comp in _components(margins) if components is None else components:
        k = comp.size
        if k == 1:
            order.append(comp)
            continue
        if k > EXACT_LIMIT:
            raise InputError(
                f"exact Kemeny-Young is limited to {EXACT_LIMIT} candidates that beat each other "
                f"in a cycle, but {k} of the {wins.shape[0]} candidates do; use method 'sco' "
                "(soft Condorcet optimization), which approximates the Kemeny ranking at any size."
            )
        W = wins[np.ix_(comp, comp)]
        use_dp = solver == "dp" or (solver == "auto" and k <= DP_LIMIT)
        if use_dp and k > 20:
            raise ConfigError(f"solver='dp' is limited to 20 candidates per cycle; got {k}.")
        if use_dp:
            local, n_opt = (_kemeny_enumerate if k <= ENUMERATE_LIMIT else _kemeny_dp)(W, tol)
            count = None if count is None else count * n_opt
            unique = _and(unique, n_opt == 1)
            used.add("dp")
        else:
            res = solve_cycle(W, tol, deadline)
            local, count = res.order, None
            unique = _and(unique, res.unique)
            slack += res.bound - res.agreement
            if not res.optimal:
                timed_out.append(k)
            used.add("ilp")
        order.append(comp[local])
    full = np.concatenate(order)
    pos = np.empty(full.size, dtype=np.intp)
    pos[full] = np.arange(full.size)
    agreement = float(wins[pos[:, None] < pos[None, :]].sum())
    return KemenyOrder(full, unique, count, "+".join(sorted(used)) or "decomposition",
                       agreement, agreement + slack, not timed_out, tuple(timed_out))


def _notes(result: KemenyOrder, distance: float, bound: float, time_limit: float,
           firsts: list[str] | None, top: int) -> tuple[str, ...]:
    """The ranking's notes: the optimum not proven in time, its uniqueness unknown, or
    several optima (``firsts``: the candidates first in one of them, None when the top
    cycle of ``top`` candidates was not searched)."""
    if result.timed_out:
        gap = distance - bound
        cycles = ", ".join(map(str, result.timed_out))
        return (
            f"Kemeny optimum not proven: the time budget ({time_limit:g} s) ran out on a cycle "
            f"of {cycles} candidates; this is the best order found, its Kendall distance "
            f"{distance:g} is within {gap:g} ({gap / max(distance, 1e-300):.2%}) of the lower "
            f"bound {bound:g}. Raise time_limit for the exact optimum.",
        )
    if result.unique is None:
        return (
            "Kemeny optimum found (its distance equals the proven bound), but whether it is "
            "the only optimal order was not established within the time budget; if several "
            "are optimal, this one need not be the one the label tie-break would choose.",
        )
    if result.unique is False:
        how_many = f" ({result.optimal_orders} optimal orders)" if result.optimal_orders else ""
        if firsts is None:
            who = (f"the first place among them was not searched (a cycle of {top} "
                   f"candidates at the top, more than {DP_LIMIT})")
        elif len(firsts) > 1:
            who = (f"{len(firsts)} candidates are first in one of them ({', '.join(firsts)}), "
                   "so the first place is shared")
        else:
            who = "every one of them puts the same candidate first"
        then = (", then the smallest by label on the cycles solved by dynamic programming"
                if "ilp" in result.solver else ", then the smallest by label")
        return (
            f"Kemeny optimum not unique{how_many}: {who}; the positions follow one optimal "
            f"order, chosen by label (the fewest label inversions{then}).",
        )
    return ()


@ranking_method(
    "kemeny_young",
    input="pairwise",
    condorcet=True,
    params={"solver": Options(*KEMENY_SOLVERS),
            "time_limit": Interval(0, None, closed="neither")},
    description="Exact Kemeny-Young ranking: the order with the least total Kendall tau distance to the judges.",
)
def kemeny_young(counts: PairwiseCounts, *, solver: str = "auto",
                 time_limit: float = DEFAULT_KEMENY_TIME_LIMIT) -> MethodOutput:
    """Exact Kemeny-Young ranking.

    The ranking R maximizing ``sum_{a above b in R} N(a, b)``, equivalently minimizing the
    total Kendall tau distance to the judges ``sum_k K(R, r_k) = sum_{a above b in R} N(b, a)``
    (pairs a judge ties cost nothing). The score is ``n - position`` (position 1 = best).

    Parameters
    ----------
    solver : {"auto", "dp", "ilp"}
        ``auto`` solves each cycle (strong component of the majority graph, see the module
        docstring) of at most ``DP_LIMIT`` candidates by subset dynamic programming and
        larger ones (up to ``EXACT_LIMIT``) by the integer program.
    time_limit : float
        Seconds the integer programs may take in all (default 60). Past it, each cycle
        keeps the best order found: ``details["optimal"]`` is False and a note gives the
        gap between its Kendall distance and the proven lower bound.

    Ties among optimal orders are broken by the candidates' labels, never by input order:
    the optimum with the fewest label inversions (pairs whose label order it reverses),
    then (dynamic programming) the lexicographically smallest by label. A note says when
    the optimum is not unique, and when its uniqueness was not established in time.

    ``details``: ``kendall_distance`` (the objective of the order), ``lower_bound`` (no
    order has a smaller distance; equal to it when ``optimal``), ``optimal``,
    ``agreement`` (``sum N`` over the order's pairs), ``unique`` (None: not established),
    ``optimal_orders`` (their number when only dynamic programming was used, else None),
    ``order`` (labels best first), ``solver``, ``components`` (sizes of the cycles), and
    ``winners`` when several candidates are first in an optimal order (searched when the
    top cycle has at most ``DP_LIMIT`` candidates).
    """
    wins, _ = counts.dense()
    labels = counts.candidates
    by_label = np.array(sorted(range(counts.n), key=labels.__getitem__), dtype=np.intp)
    W = wins[np.ix_(by_label, by_label)]
    margins = counts.margins()[np.ix_(by_label, by_label)]
    components = _components(margins)
    result = kemeny_order(W, solver, margins, components, time_limit)
    order = by_label[result.order]
    n = counts.n
    position = np.empty(n, dtype=np.intp)
    position[order] = np.arange(1, n + 1)
    details = _order_details(wins, position, result)
    details.update(order=[labels[i] for i in order], solver=result.solver,
                   components=[int(c.size) for c in components])
    firsts = _first_places(W, components[0]) if result.unique is False else None
    if firsts is not None and firsts.size > 1:  # Ranking.winners lists them all
        details["winners"] = [labels[i] for i in by_label[firsts]]
    who = None if firsts is None else [labels[i] for i in by_label[firsts]]
    notes = _notes(result, details["kendall_distance"], details["lower_bound"], time_limit,
                   who, components[0].size)
    return MethodOutput((n - position).astype(float), details=details, notes=notes)


def _order_details(wins: np.ndarray, position: np.ndarray, result: KemenyOrder) -> dict:
    """The order's Kendall distance to the judges, the proven lower bound of any order's
    (the distance itself when optimal), its agreement, and what the solver says of its
    optimality and uniqueness."""
    above = position[:, None] < position[None, :]
    agreement = float(wins[above].sum())
    distance = float(wins.T[above].sum())
    compared = float(wins.sum())  # agreement + distance of every order
    return {
        "kendall_distance": distance,
        "lower_bound": distance if result.optimal else max(0.0, compared - result.bound),
        "optimal": result.optimal,
        "agreement": agreement,
        "unique": result.unique,
        "optimal_orders": result.optimal_orders,
    }


def _first_places(W: np.ndarray, top: np.ndarray) -> np.ndarray | None:
    """The candidates of ``top`` (the first strong component, whose members every optimal
    order puts first) that are first in some optimal Kemeny order, sorted; None when the
    component is larger than ``DP_LIMIT`` (not searched).

    Candidate c can be first when ``N(c, top \\ {c})`` plus the optimum of the others equals
    the optimum of ``top``: one exact solve of k - 1 candidates per member.
    """
    k = top.size
    if k == 1:
        return top
    if k > DP_LIMIT:
        return None
    sub = W[np.ix_(top, top)]
    tol = 1e-9 * max(1.0, float(np.abs(W).sum()))

    def best(idx: np.ndarray) -> float:
        w = sub[np.ix_(idx, idx)]
        order = (_kemeny_enumerate if idx.size <= ENUMERATE_LIMIT else _kemeny_dp)(w, tol)[0]
        pos = np.empty(idx.size, dtype=np.intp)
        pos[order] = np.arange(idx.size)
        return float(w[pos[:, None] < pos[None, :]].sum())

    everyone = np.arange(k)
    value = [sub[c].sum() - sub[c, c] + best(np.delete(everyone, c)) for c in everyone]
    return top[np.flatnonzero(np.array(value) >= best(everyone) - tol)]
