"""Pairwise counts N(a, b): the one input every pairwise method and Condorcet tool needs.

``N(a, b)`` is the total weight of judges (or votes) that strictly prefer ``a`` to ``b``;
``C(a, b)`` is the total weight of judges that rank both ``a`` and ``b`` (so the tied
weight is ``C - N - N.T``), and ``C(a, a)`` the weight of judges that rank ``a`` at all.
Both a score matrix and a set of votes (orderings with ties, partial, weighted) give one;
large sparse vote sets stay sparse (``scipy.sparse``), they are never densified into a
candidates x judges matrix.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .errors import InputError

__all__ = [
    "DENSE_BYTES_LIMIT",
    "dense_bytes",
    "PairwiseCounts",
    "pairwise_counts",
    "condorcet_winner",
    "values_condorcet_winner",
    "margin_tallies",
    "weak_condorcet_winners",
    "margin_matrix",
    "smith_set",
]

#: Above this many candidates, dense n x n matrices are refused (memory) unless asked for.
DENSE_LIMIT = 20_000
#: From this many judges (all of one weight), pairwise wins are counted pair by pair.
PAIR_LOOP_JUDGES = 20_000

#: The memory the pairwise counts of a score matrix may take: a method that needs them as
#: n x n arrays (:func:`dense_bytes`) beyond this is refused before any is made.
DENSE_BYTES_LIMIT = 8_000_000_000


def dense_bytes(n: int) -> int:
    """Bytes of the n x n arrays a method on dense pairwise counts holds at least: the
    counts (``N`` and ``C``, float64) and one array of its own work (margins, paths)."""
    return 3 * 8 * n * n


#: Margins closer than this share of the total weight are equal: only relative weights
#: matter, and a margin of 0.1 + 0.2 - 0.3 (float noise) is a tie.
WEIGHT_RTOL = 1e-12


def snap_margins(margins: np.ndarray, total_weight: float) -> np.ndarray:
    """Round margins to a grid of about ``WEIGHT_RTOL * total_weight``.

    The grid step is a power of two, at most 1 when the total weight is below 10^12, so
    integer-weight margins are unchanged, and margins that are equal in exact arithmetic
    but differ by float noise (decimal weights summed in another order) become equal.
    """
    step = 2.0 ** math.floor(math.log2(WEIGHT_RTOL * max(total_weight, 1e-300)))
    return np.round(margins / step) * step


@dataclass(frozen=True, eq=False)
class PairwiseCounts:
    """Pairwise preference counts over ``candidates``.

    Attributes
    ----------
    candidates : tuple of str
    wins : ndarray or scipy sparse array, shape (n, n)
        ``N(a, b)``: weight of judges strictly preferring a to b (zero diagonal).
    compared : ndarray or scipy sparse array, shape (n, n)
        ``C(a, b)``: weight of judges ranking both a and b; ``C(a, a)``: weight of judges
        ranking a.
    total_weight : float
        Total weight of all judges or votes.
    """

    candidates: tuple[str, ...]
    wins: np.ndarray | sp.csr_array
    compared: np.ndarray | sp.csr_array
    total_weight: float

    @property
    def n(self) -> int:
        return len(self.candidates)

    @property
    def is_sparse(self) -> bool:
        return sp.issparse(self.wins)

    def dense(self) -> tuple[np.ndarray, np.ndarray]:
        """``(N, C)`` as dense arrays; refuses more than ``DENSE_LIMIT`` candidates."""
        if not self.is_sparse:
            return self.wins, self.compared  # type: ignore[return-value]
        if self.n > DENSE_LIMIT:
            raise InputError(
                f"{self.n} candidates are too many for a dense pairwise matrix "
                f"(limit {DENSE_LIMIT}); use a sparse-capable method such as 'sco' or 'epp'."
            )
        return self.wins.toarray(), self.compared.toarray()  # type: ignore[union-attr]

    def margins(self) -> np.ndarray:
        """``N(a, b) - N(b, a)`` (dense), float noise removed by :func:`snap_margins`.

        Every comparison of margins (signs, equal margins) goes through this method.
        """
        wins, _ = self.dense()
        return snap_margins(wins - wins.T, self.total_weight)

    def pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Unordered compared pairs ``(a, b, N(a, b), N(b, a))`` with ``a < b``.

        Only pairs ranked together by at least one judge appear; works on sparse counts.
        """
        if self.is_sparse:
            comp = sp.triu(sp.csr_array(self.compared), k=1).tocoo()
            a, b = comp.row.astype(np.intp), comp.col.astype(np.intp)
            wins = sp.csr_array(self.wins)
            n_ab = np.asarray(wins[a, b]).ravel()
            n_ba = np.asarray(wins[b, a]).ravel()
        else:  # row-major order, as the sparse route gives; flat indices are cheaper
            n = self.n
            upper = np.flatnonzero(np.triu(np.asarray(self.compared) != 0, k=1))
            a, b = np.divmod(upper, n)
            flat = np.asarray(self.wins).ravel()
            n_ab, n_ba = flat[upper], flat[b * n + a]
        return a, b, np.asarray(n_ab, dtype=float), np.asarray(n_ba, dtype=float)

    def subset(self, index: Sequence[int]) -> PairwiseCounts:
        """Counts restricted to the candidates at positions ``index``."""
        idx = np.asarray(index, dtype=np.intp)
        if self.is_sparse:
            wins = sp.csr_array(self.wins)[idx][:, idx]
            comp = sp.csr_array(self.compared)[idx][:, idx]
        else:
            wins = self.wins[np.ix_(idx, idx)]
            comp = self.compared[np.ix_(idx, idx)]
        return PairwiseCounts(
            tuple(self.candidates[i] for i in idx), wins, comp, self.total_weight
        )

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_matrix(cls, values: np.ndarray, weights: np.ndarray | None = None,
                    candidates: Sequence[str] | None = None) -> PairwiseCounts:
        """Counts from an oriented score matrix (higher is better; NaN = not ranked)."""
        values = np.asarray(values, dtype=float)
        n, m = values.shape
        w = np.ones(m) if weights is None else np.asarray(weights, dtype=float)
        wins = _weighted_wins(values, w)
        present = ~np.isnan(values)
        if present.all():
            compared = np.full((n, n), float(w.sum()))
        else:
            pw = present * w
            compared = pw @ present.T.astype(float)
        labels = tuple(candidates) if candidates is not None else tuple(map(str, range(n)))
        return cls(labels, wins, compared, float(w.sum()))

    @classmethod
    def from_votes(
        cls,
        votes: Iterable[Sequence[Hashable | Sequence[Hashable]]],
        weights: Sequence[float] | None = None,
        candidates: Sequence[Hashable] | None = None,
        *,
        sparse: bool | None = None,
    ) -> PairwiseCounts:
        """Counts from votes: each vote lists candidates best first.

        An element of a vote is a candidate or a group (list/tuple/set) of tied candidates.
        Candidates a vote leaves out are not compared by that vote. ``sparse`` defaults to
        True above 2,000 candidates. Strict votes of equal length may come as a (votes x k)
        integer array (labels ``str(value)``), which is read without a Python loop.

        >>> pc = PairwiseCounts.from_votes([["A", "B", "C"]] * 2 + [["C", "A", "B"]] * 3)
        >>> pc.wins.tolist()
        [[0.0, 5.0, 2.0], [0.0, 0.0, 2.0], [3.0, 3.0, 0.0]]
        """
        if isinstance(votes, np.ndarray) and votes.ndim == 2 and votes.dtype.kind in "iu":
            w = _vote_weights(weights, len(votes))
            cand, tier, lengths, index = _array_votes(votes, candidates)
        else:
            votes = list(votes)
            w = _vote_weights(weights, len(votes))
            cand, tier, lengths, index = _listed_votes(votes, candidates)
        n = len(index)
        if n == 0:
            raise InputError("the votes name no candidate; nothing to rank.")
        wins, comp = _vote_counts(cand, tier, lengths, w, n)
        use_sparse = n > 2000 if sparse is None else sparse
        labels = tuple(index)
        if use_sparse:
            return cls(labels, wins, comp, float(w.sum()))
        return cls(labels, wins.toarray(), comp.toarray(), float(w.sum()))


def _vote_counts(cand: np.ndarray, tier: np.ndarray, lengths: np.ndarray, w: np.ndarray,
                 n: int) -> tuple[sp.csr_array, sp.csr_array]:
    """The weighted wins and comparisons of the votes, ``n`` x ``n`` sparse: the votes
    flattened (each entry's candidate code and tier), each vote's length and weight."""
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    rows_w, cols_w, vals_w = [], [], []
    rows_c, cols_c, vals_c = [], [], []
    # Group votes by length so each group is a rectangular array: a loop over the few
    # distinct lengths, vectorized over votes and pairs.
    for length in np.unique(lengths):
        sel = np.flatnonzero(lengths == length)
        if length == 0:
            continue
        pos = starts[sel][:, None] + np.arange(length)[None, :]
        c_arr, t_arr, w_arr = cand[pos], tier[pos], w[sel]
        rows_c.append(c_arr.ravel())
        cols_c.append(c_arr.ravel())
        vals_c.append(np.repeat(w_arr, length))
        if length < 2:
            continue
        i, j = np.triu_indices(length, k=1)
        a, b = c_arr[:, i], c_arr[:, j]
        ta, tb = t_arr[:, i], t_arr[:, j]
        ww = np.broadcast_to(w_arr[:, None], a.shape)
        rows_c += [a.ravel(), b.ravel()]
        cols_c += [b.ravel(), a.ravel()]
        vals_c += [ww.ravel(), ww.ravel()]
        better, worse = ta < tb, tb < ta
        rows_w += [a[better], b[worse]]
        cols_w += [b[better], a[worse]]
        vals_w += [ww[better], ww[worse]]
    return _summed(vals_w, rows_w, cols_w, n), _summed(vals_c, rows_c, cols_c, n)


def _summed(vals: list[np.ndarray], rows: list[np.ndarray], cols: list[np.ndarray],
            n: int) -> sp.csr_array:
    """The ``n`` x ``n`` sparse array of the (row, column, value) parts, repeats summed."""
    def cat(xs: list[np.ndarray], dt: type) -> np.ndarray:
        return np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt)

    out = sp.coo_array((cat(vals, float), (cat(rows, np.intp), cat(cols, np.intp))), shape=(n, n)).tocsr()
    out.sum_duplicates()
    return out


def _vote_weights(weights: Sequence[float] | None, count: int) -> np.ndarray:
    w = np.ones(count) if weights is None else np.asarray(weights, dtype=float)
    if len(w) != count:
        raise InputError(f"{len(w)} vote weights were given for {count} votes.")
    if np.any(~np.isfinite(w) | (w <= 0)):
        k = int(np.flatnonzero(~np.isfinite(w) | (w <= 0))[0])
        raise InputError(f"vote {k + 1} has weight {float(w[k])!r}; weights must be > 0.")
    return w


def _listed_votes(votes: list, candidates: Sequence[Hashable] | None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, int]]:
    """Flatten votes given as sequences: (candidate, tier) per entry, lengths, label index."""
    index: dict[str, int] = {}
    if candidates is not None:
        for c in candidates:
            index.setdefault(str(c), len(index))
    flat_cand: list[int] = []
    flat_tier: list[int] = []
    lengths = np.zeros(len(votes), dtype=np.intp)
    for v, vote in enumerate(votes):
        seen: set[int] = set()
        for tier, item in enumerate(vote):
            group = item if isinstance(item, (list, tuple, set, frozenset)) else [item]
            for c in group:
                key = str(c)
                if key not in index:
                    if candidates is not None:
                        raise InputError(f"vote {v + 1} names unknown candidate {key!r}.")
                    index[key] = len(index)
                ci = index[key]
                if ci in seen:
                    raise InputError(f"vote {v + 1} lists candidate {key!r} twice.")
                seen.add(ci)
                flat_cand.append(ci)
                flat_tier.append(tier)
        lengths[v] = len(seen)
    return (np.asarray(flat_cand, dtype=np.intp), np.asarray(flat_tier, dtype=np.intp),
            lengths, index)


def _array_votes(votes: np.ndarray, candidates: Sequence[Hashable] | None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, int]]:
    """The same for strict votes given as a (votes x k) integer array, vectorized.

    Labels are ``str(value)``; without ``candidates`` they are indexed in order of first
    appearance, as for listed votes.
    """
    count, k = votes.shape
    flat = votes.ravel()
    uniq, first = np.unique(flat, return_index=True)
    if isinstance(candidates, range) and candidates.start == 0 and candidates.step == 1:
        index = {str(c): c for c in candidates}  # labels "0".."n-1": a value is its position
        outside = np.flatnonzero((uniq < 0) | (uniq >= len(candidates)))
        if outside.size:
            u = int(outside[0])
            raise InputError(f"vote {int(first[u]) // k + 1} names unknown candidate {str(uniq[u])!r}.")
        position = uniq.astype(np.intp)
    elif candidates is not None:
        index = {}
        for c in candidates:
            index.setdefault(str(c), len(index))
        position = np.empty(uniq.size, dtype=np.intp)
        for u, value in enumerate(uniq.tolist()):
            if str(value) not in index:
                raise InputError(
                    f"vote {int(first[u]) // k + 1} names unknown candidate {str(value)!r}."
                )
            position[u] = index[str(value)]
    else:
        appearance = np.argsort(first, kind="stable")
        index = {str(v): i for i, v in enumerate(uniq[appearance].tolist())}
        position = np.empty(uniq.size, dtype=np.intp)
        position[appearance] = np.arange(uniq.size)
    cand = position[np.searchsorted(uniq, flat)]
    srt = np.sort(votes, axis=1)
    twice = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))
    if twice.size:
        v = int(twice[0])
        dup = srt[v, 1:][srt[v, 1:] == srt[v, :-1]][0]
        raise InputError(f"vote {v + 1} lists candidate {str(dup)!r} twice.")
    tier = np.tile(np.arange(k, dtype=np.intp), count)
    return cand.astype(np.intp), tier, np.full(count, k, dtype=np.intp), index


def _weighted_wins(values: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``N[a, b] = sum_k w_k [x_ak > x_bk]`` (NaN compares False), vectorized by blocks.

    The loop runs over blocks of candidates; each step compares a block against all
    candidates on all judges at once. Judges sharing a weight are counted together with
    ``count_nonzero``, which is several times faster than a float product.
    """
    n, m = values.shape
    wins = np.zeros((n, n))
    uniq, inverse = np.unique(w, return_inverse=True)
    if len(uniq) == 1 and m >= PAIR_LOOP_JUDGES:
        # Many judges: one pass per unordered pair on contiguous rows, counting both
        # directions from one difference (for floats, x - y > 0 exactly when x > y; a NaN
        # or inf - inf compares False both ways, as x > y does).
        diff = np.empty(m)
        with np.errstate(invalid="ignore"):  # -inf - -inf is NaN: a tie, as it should be
            for a in range(n - 1):
                for b in range(a + 1, n):
                    np.subtract(values[a], values[b], out=diff)
                    wins[a, b] = np.count_nonzero(diff > 0)
                    wins[b, a] = np.count_nonzero(diff < 0)
        return wins * uniq[0]
    groups = [np.flatnonzero(inverse == g) for g in range(len(uniq))] if len(uniq) <= 8 else None
    block = max(1, int(4_000_000 // max(1, n * m)))
    cols = None if groups is None or len(groups) == 1 else [values[:, g] for g in groups]
    for start in range(0, n, block):
        stop = min(n, start + block)
        if groups is None:
            gt = values[start:stop, None, :] > values[None, :, :]
            wins[start:stop] = gt @ w
        elif cols is None:
            gt = values[start:stop, None, :] > values[None, :, :]
            wins[start:stop] = np.count_nonzero(gt, axis=2) * uniq[0]
        else:
            for weight, sub in zip(uniq, cols):
                gt = sub[start:stop, None, :] > sub[None, :, :]
                wins[start:stop] += np.count_nonzero(gt, axis=2) * weight
    return wins


class _Duels:
    """Who beats whom head to head, by blocks of candidates of an oriented score matrix
    (higher is better; NaN = not ranked): the signs of :meth:`PairwiseCounts.margins`
    without the n x n counts.

    Each judge's scores become small integer codes in its order (2 bytes a candidate
    below 32,767 candidates); a block's margins add, judge by judge, the signs of the
    codes' differences (0 where a score is missing: NaN compares False both ways, as in
    :func:`_weighted_wins`), the judges of one weight counted together then scaled, and are
    snapped as :meth:`PairwiseCounts.margins` snaps them (with one weight, the sign of the
    count is the margin's).
    """

    def __init__(self, values: np.ndarray, weights: np.ndarray | None = None) -> None:
        values = np.asarray(values, dtype=float)
        self.n, self.m = n, m = values.shape
        self.w = np.ones(m) if weights is None else np.asarray(weights, dtype=float)
        self.total = float(self.w.sum())
        uniq, inverse = np.unique(self.w, return_inverse=True)
        # judges of one weight together (as _weighted_wins counts them), else one by one
        self.groups = ([(float(u), np.flatnonzero(inverse == g)) for g, u in enumerate(uniq)]
                       if len(uniq) <= 8 else [(float(x), np.array([k])) for k, x in enumerate(self.w)])
        self.codes = np.zeros((m, n), dtype=np.int16 if n < 2**15 - 1 else np.int32)
        self.present: dict[int, np.ndarray] = {}  # the judges that miss some score
        for k in range(m):
            col = values[:, k]
            ok = ~np.isnan(col)
            if ok.all():
                _, self.codes[k] = np.unique(col, return_inverse=True)
            else:
                _, self.codes[k, ok] = np.unique(col[ok], return_inverse=True)
                self.present[k] = ok

    def signs(self, rows: slice, cols: slice) -> np.ndarray:
        """The signs (-1, 0, 1) of the margins of the candidates ``rows`` over the candidates
        ``cols`` (len(rows) x len(cols)). Judges of one weight: the sign of their count."""
        a, b = self.codes[:, rows], self.codes[:, cols]
        shape = (a.shape[1], b.shape[1])
        sign = np.empty(shape, dtype=self.codes.dtype)
        margin = None
        for weight, judges in self.groups:
            count = np.zeros(shape, dtype=np.int16 if len(judges) < 2**15 - 1 else np.int32)
            for k in judges:
                np.subtract(a[k, :, None], b[k, None, :], out=sign)
                np.sign(sign, out=sign)
                if k in self.present:
                    sign *= self.present[k][rows, None] & self.present[k][None, cols]
                count += sign
            if len(self.groups) == 1:  # a positive weight times the count: its sign
                return np.sign(count)
            margin = count * weight if margin is None else margin + count * weight
        return np.sign(snap_margins(margin, self.total)) if margin is not None else np.zeros(shape)


def margin_tallies(values: np.ndarray, weights: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """For each candidate of an oriented score matrix (higher is better; NaN = not ranked),
    how many others it beats head to head (margin above 0) and ties with (margin 0), the
    margins being those of :meth:`PairwiseCounts.margins`, without the n x n counts: the
    candidates by blocks, memory growing with n x m (the judges)."""
    duels = _Duels(values, weights)
    n = duels.n
    won, tied = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    block = max(1, 1_000_000 // max(1, n))
    for start in range(0, n, block):
        rows = slice(start, min(n, start + block))
        sign = duels.signs(rows, slice(0, n))
        won[rows] = np.count_nonzero(sign > 0, axis=1)
        tied[rows] = np.count_nonzero(sign == 0, axis=1) - 1  # not itself
    return won, tied


def values_condorcet_winner(values: np.ndarray, weights: np.ndarray | None = None,
                            candidates: Sequence[str] | None = None) -> str | None:
    """The strong Condorcet winner of an oriented score matrix (higher is better; NaN = not
    ranked), as :func:`condorcet_winner` finds it on its counts, without the n x n counts:
    memory grows with n x m (the judges), not with n x n.

    One sweep keeps a champion: a candidate it does not beat strictly replaces it (neither
    can then be the winner, but the challenger may still be). The champion meets the next
    candidates by blocks that double while it holds; where it falls, the 64 candidates
    from its challenger on meet each other at once, and the sweep walks through their
    results. The last champion is the winner if it also beats those before it. Listing the
    likely winner first (the ranking's order) makes the check one pass.
    """
    duels = _Duels(values, weights)
    n = duels.n
    labels = tuple(candidates) if candidates is not None else tuple(map(str, range(n)))
    if n == 0:
        return None

    def beaten(c: int, start: int, stop: int) -> np.ndarray:
        return duels.signs(slice(c, c + 1), slice(start, stop))[0] > 0

    largest = max(64, 1_000_000 // max(1, duels.m))  # compared at once
    champion, at, size = 0, 1, 64
    while at < n:
        stop = min(n, at + size)
        held = beaten(champion, at, stop)
        if held.all():  # the champion holds: read further at once
            at, size = stop, min(2 * size, largest)
            continue
        first = at + int(np.argmin(held))  # the first it does not beat: the new champion
        at = min(n, first + 64)
        inner = duels.signs(slice(first, at), slice(first, at)) > 0
        k = 0
        for j in range(1, at - first):
            if not inner[k, j]:
                k = j
        champion, size = first + k, 64
    for start in range(0, champion, largest):
        if not beaten(champion, start, min(champion, start + largest)).all():
            return None
    return labels[champion]


def pairwise_counts(data: object) -> PairwiseCounts:
    """Pairwise counts of a :class:`~metascore.ScoreMatrix` (missing = not compared) or
    pass a :class:`PairwiseCounts` through."""
    from .matrix import ScoreMatrix

    if isinstance(data, PairwiseCounts):
        return data
    if isinstance(data, ScoreMatrix):
        return PairwiseCounts.from_matrix(data.oriented(), data.weights, data.candidates)
    raise InputError(
        f"expected a ScoreMatrix or PairwiseCounts; got {type(data).__name__}."
    )


# ---------------------------------------------------------------------- Condorcet tools
def margin_matrix(data: object) -> np.ndarray:
    """``N(a, b) - N(b, a)`` for a score matrix or pairwise counts."""
    return pairwise_counts(data).margins()


def condorcet_winner(data: object) -> str | None:
    """The strong Condorcet winner (beats every other candidate head to head), or None.

    >>> condorcet_winner(PairwiseCounts.from_votes([["A", "B", "C"]] * 2 + [["C", "A", "B"]] * 3))
    'C'
    """
    counts = pairwise_counts(data)
    margins = counts.margins()
    np.fill_diagonal(margins, 1.0)
    winners = np.flatnonzero((margins > 0).all(axis=1))
    return counts.candidates[winners[0]] if winners.size else None


def weak_condorcet_winners(data: object) -> list[str]:
    """Candidates that no other candidate beats head to head (possibly several, or none)."""
    counts = pairwise_counts(data)
    margins = counts.margins()
    return [counts.candidates[i] for i in np.flatnonzero((margins >= 0).all(axis=1))]


def smith_set(data: object) -> list[str]:
    """The smallest non-empty set of candidates that each beat every candidate outside it.

    It is the top strongly connected component of the "is not beaten by" relation.
    """
    counts = pairwise_counts(data)
    margins = counts.margins()
    not_beaten = margins >= 0
    np.fill_diagonal(not_beaten, False)
    _, labels = connected_components(sp.csr_array(not_beaten), directed=True, connection="strong")
    # A component is the top one when no outside candidate beats any of its members.
    beaten_by_outside = (margins < 0) & (labels[:, None] != labels[None, :])
    bad = np.unique(labels[beaten_by_outside.any(axis=1)])
    top = np.setdiff1d(np.unique(labels), bad)
    members = np.flatnonzero(np.isin(labels, top))
    return [counts.candidates[i] for i in members]
