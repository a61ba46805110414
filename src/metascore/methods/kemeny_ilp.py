"""Exact Kemeny-Young on large cycles: the integer program over the pairwise order, with its
3-cycle (transitivity) constraints added only when a solution violates them.

A cycle of k candidates (indices in label order) with pairwise counts ``W`` has a binary
variable ``x_ab`` per pair ``a < b`` (1: a above b). An order's agreement is
``const + sum_{a<b} g_ab x_ab`` with ``g_ab = W[a, b] - W[b, a]`` and
``const = sum_{a<b} W[b, a]``. The x of an order are exactly the 0/1 vectors without a
3-cycle: for every triple ``a < b < c``, ``x_ab + x_bc - x_ac <= 1`` (no a > b > c > a)
and ``>= 0`` (no a > c > b > a). There are ``k (k-1) (k-2) / 6`` triples (161,700 at
k = 100, 1.3 million at 200), but an optimum is fixed by the few that its relaxations
violate (the cutting-plane method of Groetschel, Juenger & Reinelt 1984, used for Kemeny
by Conitzer, Davenport & Kalagnanam 2006):

1. the linear relaxation (``0 <= x <= 1``) with the constraints found so far, solved again
   (HiGHS, :func:`scipy.optimize.linprog`) after adding every triple its solution violates,
   until it violates none. Its value bounds the agreement of every order from above; on
   near-transitive profiles its solution is usually integral, and then it is the optimum;
2. otherwise the integer program with those constraints (:func:`scipy.optimize.milp`),
   again adding the triples its solution violates, until the solution is an order: the
   optimum, since it is optimal for a relaxation of the whole program.

The tie-break among optimal orders (the fewest label inversions: pairs ``a < b`` with b
above a) is part of the first program when the counts are multiples of a common step
``1/s`` (whole judges, half weights...): the objective adds ``x_ab / (s (P + 1))`` per
pair, less than the smallest difference between two agreements, so the optimum is the
optimal order with the fewest inversions. Otherwise a second program keeps the optimal
agreement and minimizes the inversions. Uniqueness: a move of one candidate that keeps
the agreement proves another optimum; failing that, a last program maximizes the number
of pairs in which an optimal order differs from the one found (a relaxation short of one
pair proves it unique), given at most four times the time the optimum took.

Every solver call gets what remains of the time budget. When it runs out, the best order
found so far (each relaxation's solution made an order and improved by moving single
candidates) is returned with the best bound proven, ``optimal=False``: the caller says so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["IlpResult", "solve_cycle", "improve_order", "move_gains"]

#: A relaxation's value is integral when every variable is within this of 0 or 1.
INTEGRAL = 1e-6


@dataclass(frozen=True)
class IlpResult:
    """The outcome on one cycle: ``order`` (local indices best first) and its
    ``agreement``; ``bound``, an upper bound on the agreement of every order (equal to it
    when ``optimal``); ``unique``: whether no other order is optimal (None: not
    established within the time budget, or the optimum itself was not)."""

    order: np.ndarray
    agreement: float
    bound: float
    optimal: bool
    unique: bool | None


class _OutOfTime(Exception):
    """The time budget ran out inside a solver call."""


def move_gains(W: np.ndarray, order: np.ndarray) -> np.ndarray:
    """``gain[i, p]``: what the agreement gains when the candidate at position i of
    ``order`` moves to position p (the others keep their order)."""
    k = order.size
    d = (W - W.T)[np.ix_(order, order)]  # d[i, j]: what order[i] gains above order[j]
    c = np.cumsum(d, axis=1)  # c[i, p] = sum of d[i, :p + 1]
    diag = c[np.arange(k), np.arange(k)]
    down = diag[:, None] - c  # to p > i: below order[i+1..p]
    left = np.concatenate([np.zeros((k, 1)), c[:, :-1]], axis=1)  # sum of d[i, :p]
    up = diag[:, None] - left  # to p < i: above order[p..i-1] (d[i, i] = 0)
    gain = np.where(np.arange(k)[None, :] > np.arange(k)[:, None], down, up)
    np.fill_diagonal(gain, -np.inf)
    return gain


def improve_order(W: np.ndarray, order: np.ndarray, tol: float,
                  deadline: float = np.inf) -> np.ndarray:
    """``order`` improved by moving one candidate at a time to the place that raises the
    agreement most, until no move raises it by more than ``tol`` (a local optimum), or
    ``deadline`` (:func:`time.monotonic`) passes."""
    order = np.asarray(order, dtype=np.intp).copy()
    for _ in range(10 * order.size):
        if time.monotonic() > deadline:
            break
        gain = move_gains(W, order)
        i, p = np.unravel_index(int(np.argmax(gain)), gain.shape)
        if gain[i, p] <= tol:
            break
        order = np.insert(np.delete(order, i), p, order[i])
    return order


def step(W: np.ndarray) -> float | None:
    """The step ``1/s`` every count is a multiple of (s among 1, 2, 4, 5, 8, 10), or None."""
    for s in (1, 2, 4, 5, 8, 10):
        scaled = W * s
        if np.all(np.abs(scaled - np.rint(scaled)) <= 1e-9 * np.maximum(1.0, np.abs(scaled))):
            return 1.0 / s
    return None


class _Program:
    """The pairwise-order program of one cycle and the 3-cycle constraints found so far."""

    def __init__(self, W: np.ndarray, tol: float, deadline: float) -> None:
        k = W.shape[0]
        self.W, self.k, self.tol, self.deadline = W, k, tol, deadline
        self.a, self.b = np.triu_indices(k, 1)
        self.pair = np.full((k, k), -1, dtype=np.intp)
        self.pair[self.a, self.b] = np.arange(self.a.size)
        self.gain = W[self.a, self.b] - W[self.b, self.a]
        self.objective = -self.gain  # what is minimized: minus the agreement (+ tie-break)
        self.const = float(W[self.b, self.a].sum())
        self.cuts = np.zeros((0, 4), dtype=np.intp)  # rows (a, b, c, kind), a < b < c
        self.best = np.argsort(-(W - W.T).sum(axis=1), kind="stable")  # by net wins
        self.best = improve_order(W, self.best, tol, deadline)
        self.bound = self.const + float(np.maximum(self.gain, 0.0).sum())  # each pair its way

    # ------------------------------------------------------------------ orders
    def agreement(self, order: np.ndarray) -> float:
        pos = np.empty(self.k, dtype=np.intp)
        pos[order] = np.arange(self.k)
        return float(self.W[pos[:, None] < pos[None, :]].sum())

    def x_of(self, order: np.ndarray) -> np.ndarray:
        pos = np.empty(self.k, dtype=np.intp)
        pos[order] = np.arange(self.k)
        return (pos[self.a] < pos[self.b]).astype(float)

    def order_of(self, x: np.ndarray) -> np.ndarray:
        """The order of a solution (for a fractional or cyclic one, by how much of every
        other candidate is above each)."""
        above = np.zeros((self.k, self.k))
        above[self.a, self.b] = x
        above[self.b, self.a] = 1.0 - x
        return np.argsort(above.sum(axis=0), kind="stable")

    def offer(self, x: np.ndarray) -> None:
        """Keep the order of ``x``, improved, if it beats the best order so far."""
        order = improve_order(self.W, self.order_of(x), self.tol, self.deadline)
        if self.agreement(order) > self.agreement(self.best) + self.tol:
            self.best = order

    # ------------------------------------------------------------------ constraints
    def violated(self, x: np.ndarray) -> np.ndarray:
        """The triples ``x`` violates, as rows (a, b, c, kind): kind 1 for
        ``x_ab + x_bc - x_ac > 1``, -1 for ``< 0``."""
        k = self.k
        above = np.zeros((k, k))
        above[self.a, self.b] = x
        found = []
        for a in range(k - 2):
            rest = np.arange(a + 1, k)
            v = above[a, rest][:, None] + above[np.ix_(rest, rest)] - above[a, rest][None, :]
            upper = np.triu(v > 1.0 + INTEGRAL, 1)
            lower = np.triu(v < -INTEGRAL, 1)
            for mask, kind in ((upper, 1), (lower, -1)):
                b, c = np.nonzero(mask)
                if b.size:
                    found.append(np.column_stack([np.full(b.size, a), rest[b], rest[c],
                                                  np.full(b.size, kind)]))
        return np.vstack(found) if found else np.zeros((0, 4), dtype=np.intp)

    def rows(self) -> tuple[sp.csr_array, np.ndarray]:
        """The constraints found so far as ``A x <= ub``."""
        a, b, c, kind = self.cuts.T
        n = len(self.cuts)
        cols = np.column_stack([self.pair[a, b], self.pair[b, c], self.pair[a, c]]).ravel()
        sign = np.where(kind > 0, 1.0, -1.0)
        vals = (np.array([1.0, 1.0, -1.0])[None, :] * sign[:, None]).ravel()
        A = sp.csr_array((vals, (np.repeat(np.arange(n), 3), cols)), shape=(n, self.a.size))
        return A, np.where(kind > 0, 1.0, 0.0)

    def remaining(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _OutOfTime
        return left

    # ------------------------------------------------------------------ solves
    def relax(self, c: np.ndarray, extra: list[tuple[np.ndarray, float]]) -> tuple[np.ndarray, float] | None:
        """Minimize ``c x`` over the linear relaxation with lazy 3-cycle constraints and
        ``extra`` rows ``(row, ub)``: ``(x, value)``, None when infeasible."""
        from scipy.optimize import linprog  # here: slow to import, rarely needed

        while True:
            A, ub = self.rows()
            if extra:
                A = sp.vstack([A, sp.csr_array(np.array([r for r, _ in extra]))])
                ub = np.concatenate([ub, [u for _, u in extra]])
            res = linprog(c, A_ub=A if A.shape[0] else None, b_ub=ub if A.shape[0] else None,
                          bounds=(0.0, 1.0), method="highs",
                          options={"time_limit": self.remaining()})
            if res.status == 2:
                return None
            if res.status != 0:
                self.remaining()  # out of time: raises; anything else is a solver failure
                raise RuntimeError(f"the Kemeny linear relaxation failed: {res.message}")
            new = self.violated(res.x)
            if not len(new):
                return res.x, float(res.fun)
            self.cuts = np.vstack([self.cuts, new])

    def integer(self, c: np.ndarray, extra: list[tuple[np.ndarray, float]]
                ) -> tuple[np.ndarray, float] | None:
        """:meth:`relax` with x integral: a transitive order's x and ``c x``, None when
        infeasible. On timeout, records the solver's bound (for the agreement objective)."""
        from scipy.optimize import Bounds, LinearConstraint, milp  # here: slow to import

        while True:
            A, ub = self.rows()
            constraints = [LinearConstraint(A, -np.inf, ub)] if A.shape[0] else []
            if extra:
                constraints.append(LinearConstraint(np.array([r for r, _ in extra]), -np.inf,
                                                    np.array([u for _, u in extra])))
            res = milp(c, constraints=constraints, integrality=np.ones(self.a.size),
                       bounds=Bounds(0.0, 1.0),
                       options={"time_limit": self.remaining(), "mip_rel_gap": 0.0})
            if res.status == 2:
                return None
            if res.status != 0:
                if res.x is not None:
                    self.offer(np.round(res.x))
                if c is self.objective and not extra and res.mip_dual_bound is not None:
                    self.bound = min(self.bound, self.const - float(res.mip_dual_bound))
                self.remaining()
                raise RuntimeError(f"the Kemeny integer program failed: {res.message}")
            x = np.round(res.x)
            new = self.violated(x)
            if not len(new):
                return x, float(c @ x)
            self.offer(x)
            self.cuts = np.vstack([self.cuts, new])

    def solve(self, c: np.ndarray, extra: list[tuple[np.ndarray, float]] = (),
              below: float = np.inf) -> np.ndarray | None:
        """The x of an order minimizing ``c x`` under the ``extra`` rows ``(row, ub)``: the
        relaxation first, then the integer program; None when infeasible or when the
        relaxation's value is above ``below`` (no order reaches it)."""
        relaxed = self.relax(c, extra)
        if relaxed is None or relaxed[1] > below:
            return None
        x, value = relaxed
        if c is self.objective and not extra:
            self.bound = min(self.bound, self.const - value)
        if np.all(np.abs(x - np.round(x)) <= INTEGRAL):
            return np.round(x)
        self.offer(x)
        found = self.integer(c, extra)
        return None if found is None else found[0]


def solve_cycle(W: np.ndarray, tol: float, deadline: float) -> IlpResult:
    """Optimal order of the cycle ``W`` (indices in label order) by the lazy integer
    program, within ``deadline`` (:func:`time.monotonic`); see the module docstring."""
    start = time.monotonic()
    p = _Program(W, tol, deadline)
    unit = step(W)
    pairs = p.a.size
    tie_break = 0.0 if unit is None else unit / (pairs + 1)  # per pair a above b
    folded = tie_break >= 1e-6  # above HiGHS' tolerances: the tie-break in the objective
    if folded:
        p.objective = -(p.gain + tie_break)
    try:
        x = p.solve(p.objective)
    except _OutOfTime:
        order = p.best
        value = p.agreement(order)
        return IlpResult(order, value, max(p.bound, value), p.bound <= value + tol, None)
    opt = p.bound = p.const + float(p.gain @ x)
    keep = (-p.gain, p.const - opt + tol)  # rows of the optimal orders: agreement >= opt - tol
    try:
        if not folded:  # the fewest label inversions (the most x_ab = 1) among the optima
            first = p.solve(-np.ones(pairs), [keep])
            if first is not None and not np.array_equal(first, x):
                return IlpResult(p.order_of(first), opt, opt, True, False)
        order = p.order_of(x)
        if (move_gains(W, order) >= -tol).any():  # a move keeps the agreement: not unique
            return IlpResult(order, opt, opt, True, False)
        # another optimal order farther from this one? (farthest . y = ones - differences)
        p.deadline = min(p.deadline, time.monotonic() + 4.0 * (time.monotonic() - start) + 1.0)
        farthest = np.where(x == 1.0, 1.0, -1.0)
        other = p.solve(farthest, [keep], below=float(x.sum()) - 0.5)
        return IlpResult(order, opt, opt, True, other is None or np.array_equal(other, x))
    except _OutOfTime:
        return IlpResult(p.order_of(x), opt, opt, True, None)
