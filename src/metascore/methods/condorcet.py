"""Condorcet-consistent tournament methods on margins: Schulze and ranked pairs (Tideman).

Both read only the margin matrix ``delta(a, b) = N(a, b) - N(b, a)`` of
:class:`~metascore.pairwise.PairwiseCounts`, so score matrices and votes feed them alike.
Both rank a Condorcet winner, when one exists, first and alone.
"""

from __future__ import annotations

import numpy as np

from ..pairwise import PairwiseCounts
from ..method_spec import MethodOutput, ranking_method
from ..resampling import Shortcuts

__all__ = ["schulze", "ranked_pairs", "widest_paths"]


def widest_paths(margins: np.ndarray) -> np.ndarray:
    """Strength of the strongest (widest) beat path between every pair of candidates.

    A link ``a -> b`` exists when ``delta(a, b) > 0`` and has that strength; a path is as
    strong as its weakest link; ``p[a, b]`` is the strongest path from a to b (0 if none).
    Floyd-Warshall on the (max, min) semiring: one loop over the intermediate candidate,
    each step vectorized over all pairs. The diagonal is set to 0.

    Max and min commute with any increasing map, so the paths are computed on the ranks of
    the distinct link strengths (1 = weakest, 0 = no link), in the smallest unsigned
    integer type that holds them, and mapped back: exact for any margins, and several
    times faster than on floats (less memory traffic per step). Integer strengths below
    256 (unweighted judges) are their own codes.
    """
    return _strengths(*_widest_codes(margins))


def _widest_codes(margins: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`widest_paths` before the codes are mapped back: ``(p, strengths)``, ``p`` the
    coded path strengths (0: no path), ``strengths[code - 1]`` the strength of a code, or
    None when the codes are the strengths. Codes compare as the strengths do."""
    margins = np.asarray(margins, dtype=float)
    n = margins.shape[0]
    links = margins > 0
    np.fill_diagonal(links, False)
    values = margins[links]
    small_integers = values.size and values.max() < 2**8 and np.all(values == np.round(values))
    if small_integers:  # unweighted judges: the strengths are their own codes
        strengths, codes, dtype = None, values, np.uint8
    else:
        strengths, codes = np.unique(values, return_inverse=True)
        codes = codes + 1
        dtype = np.uint8 if strengths.size < 2**8 else np.uint16 if strengths.size < 2**16 else np.uint32
    p = np.zeros((n, n), dtype=dtype)
    p[links] = codes.astype(dtype)
    via = np.empty_like(p)
    for k in range(n):
        np.minimum(p[:, k, None], p[None, k, :], out=via)
        np.maximum(p, via, out=p)
    np.fill_diagonal(p, 0)
    return p, strengths


def _strengths(p: np.ndarray, strengths: np.ndarray | None) -> np.ndarray:
    """Coded path strengths (:func:`_widest_codes`) as the strengths (floats)."""
    return p.astype(float) if strengths is None else np.concatenate(([0.0], strengths))[p]


def _schulze_beats(counts: PairwiseCounts) -> np.ndarray:
    """The Schulze relation ``p[a, b] > p[b, a]``, read on the coded path strengths."""
    p, _ = _widest_codes(counts.margins())
    return p > p.T


def _schulze_scores(counts: PairwiseCounts) -> np.ndarray:
    """The scores of :func:`schulze` alone (what a resample needs): the share of the other
    candidates each one beats, without the path strengths as floats."""
    return _schulze_beats(counts).sum(axis=1) / (counts.n - 1)


def _schulze_relation(counts: PairwiseCounts, params: dict) -> np.ndarray:
    """The Schulze relation (``beats``) of the candidates of ``counts``. A beat path through
    a copy is one through its original and a copy ties with it, so on a multiset of drawn
    candidates the relation is that of the distinct ones, and the score the share of drawn
    opponents beaten: each drawn candidate is ranked once."""
    return _schulze_beats(counts)


@ranking_method(
    "schulze",
    input="pairwise",
    condorcet=True,
    resampling=Shortcuts(clone_beats=_schulze_relation, scores=_schulze_scores),
    description="Schulze beat-path method on margins: share of candidates beaten by strongest paths.",
)
def schulze(counts: PairwiseCounts) -> MethodOutput:
    """Schulze's beat-path method on the margins ``delta(a, b) = N(a, b) - N(b, a)``.

    ``p[a, b]`` is the strength of the strongest path from a to b in the graph of positive
    margins (a path is as strong as its weakest link). ``a`` beats ``b`` in the Schulze
    relation when ``p[a, b] > p[b, a]``; this relation is transitive (Schulze 2011). The
    score is the share of the other candidates that a beats,
    ``#{b: p[a, b] > p[b, a]} / (n - 1)``, so candidates the relation leaves unordered tie.
    The method is Condorcet-consistent and clone-independent.

    ``details``: ``path_strength`` (``p``) and ``beats`` (the boolean Schulze relation).
    """
    codes, strengths = _widest_codes(counts.margins())
    beats = codes > codes.T
    p = _strengths(codes, strengths)
    return MethodOutput(
        beats.sum(axis=1) / (counts.n - 1),
        details={"path_strength": p, "beats": beats},
    )


@ranking_method(
    "ranked_pairs",
    input="pairwise",
    condorcet=True,
    description="Tideman's ranked pairs: lock majorities by decreasing margin unless they close a cycle.",
)
def ranked_pairs(counts: PairwiseCounts) -> MethodOutput:
    """Tideman's ranked pairs on the margins ``delta(a, b) = N(a, b) - N(b, a)``.

    The pairs with a positive margin are taken by decreasing margin; each is locked in
    (``a`` above ``b``) unless ``b`` already reaches ``a`` through locked pairs, which would
    close a cycle. Pairs with equal margins are taken in a fixed order that does not depend
    on the input order: by the winner's label, then the loser's label (string order). Pairs
    with a zero margin are never locked.

    The score is the share of the other candidates below a in the transitive closure of the
    locked pairs, ``#{b: a reaches b} / (n - 1)``; it is 1 for a Condorcet winner.

    ``details``: ``locked`` (boolean matrix of the locked pairs) and ``reach`` (its
    transitive closure). Reachability is kept up to date with one vectorized outer product
    per locked pair, so the cost is polynomial (no enumeration of cycles).
    """
    margins = counts.margins()
    n = counts.n
    labels = np.array(counts.candidates, dtype=object)
    label_rank = np.empty(n, dtype=np.intp)
    label_rank[np.argsort(labels, kind="stable")] = np.arange(n)
    win, lose = np.nonzero(margins > 0)
    # lexsort: last key is primary: margin decreasing, then winner label, loser label.
    order = np.lexsort((label_rank[lose], label_rank[win], -margins[win, lose]))
    reach = np.eye(n, dtype=bool)  # reach[x, y]: x reaches y (reflexive here)
    locked = np.zeros((n, n), dtype=bool)
    for a, b in zip(win[order], lose[order]):
        if reach[b, a]:
            continue  # would close a cycle
        locked[a, b] = True
        if not reach[a, b]:
            reach |= np.outer(reach[:, a], reach[b, :])
    np.fill_diagonal(reach, False)
    return MethodOutput(reach.sum(axis=1) / (n - 1), details={"locked": locked, "reach": reach})
