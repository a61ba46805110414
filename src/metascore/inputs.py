"""What a ranking method is handed: the validated input of a ranking, prepared once.

:func:`metascore.registry.prepare_inputs` makes an :class:`Inputs` from a score matrix
(after the missing-data policy, :mod:`metascore.missing`) or from pairwise counts (votes);
every method takes what it needs of it (:func:`metascore.registry.compute`), and a
:class:`~metascore.Ranking` keeps the inputs it was computed from (``Ranking.inputs``), so
that the boards and the analyses of a ranking start from them instead of preparing the
matrix again. Here, below the registry and the ranking, both can name it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .matrix import ScoreMatrix
from .missing import Prepared
from .pairwise import PairwiseCounts
from .sequences import IndexLabels

__all__ = ["Inputs"]


@dataclass(frozen=True)
class Inputs:
    """The validated input of a ranking, prepared once for any method; each method takes
    what it needs (:func:`~metascore.registry.compute`).

    Exactly one of ``prepared`` (a score matrix after the missing-data policy) and
    ``counts`` (pairwise counts from votes) is set. A :class:`~metascore.Ranking` keeps the
    inputs it was computed from (``Ranking.inputs``).
    """

    candidates: Sequence[str]
    judges: tuple[str, ...]
    prepared: Prepared | None
    counts: PairwiseCounts | None

    @property
    def missing(self) -> str:
        """The missing-data policy applied (``"votes"`` for pairwise counts)."""
        return "votes" if self.prepared is None else self.prepared.missing

    def take(self, rows: np.ndarray, cols: np.ndarray) -> Inputs:
        """The inputs of a resample of a prepared matrix without missing cells: its rows
        ``rows`` and columns ``cols`` (positions, repeats allowed), which the missing-data
        policy leaves as they are. What a method reads only: the judges keep their labels,
        the rows are labelled by their place in the resample (``"0", "1", ...``)."""
        prepared = self.prepared
        assert prepared is not None and not prepared.matrix.has_missing
        matrix, at = prepared.matrix, np.ix_(rows, cols)
        sub = ScoreMatrix(values=matrix.values[at], candidates=IndexLabels(len(rows)),
                          judges=tuple(matrix.judges[j] for j in cols),
                          higher_is_better=tuple((matrix.signs[cols] > 0).tolist()),
                          weights=matrix.weights[cols])
        return Inputs(sub.candidates, sub.judges,
                      Prepared(sub, prepared.oriented[at], {}, {}, prepared.missing), None)
