"""The missing-data policy: what happens to the missing cells of a score matrix before a
ranking method sees it (docs/methods.md, "Conventions").

:func:`prepare` first sets aside the judges of weight 0 (shown, not counted: no method and
no policy sees them), then drops candidates or judges, refuses missing cells, or keeps
them (NaN) for :meth:`Prepared.filled` to fill for the ``worst`` policy. The registry
calls it once per matrix (:func:`metascore.registry.prepare_inputs`); the
:class:`~metascore.Ranking` keeps the result (``Ranking.inputs``), which the boards and the
analyses read instead of preparing the matrix again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ConfigError, InputError, did_you_mean
from .matrix import ScoreMatrix

__all__ = ["MISSING_POLICIES", "Prepared", "prepare"]

#: Missing-data policies (``ranking.missing``), the default first.
MISSING_POLICIES = ("worst", "drop_candidates", "drop_judges", "pairwise", "error")


@dataclass(frozen=True)
class Prepared:
    """A score matrix after the missing-data policy, ready for any method."""

    matrix: ScoreMatrix            # kept candidates and judges, raw values, NaN kept
    oriented: np.ndarray           # oriented values, NaN kept
    excluded_candidates: dict[str, str]
    excluded_judges: dict[str, str]
    missing: str
    uncounted: tuple[str, ...] = ()  # judges of weight 0, set aside before the policy

    @property
    def unscored(self) -> np.ndarray:
        """Candidates with no score on any judge (boolean mask)."""
        return np.isnan(self.oriented).all(axis=1)

    def filled(self, values_based: bool) -> np.ndarray:
        """Oriented values with missing cells filled for the ``worst`` policy.

        Value-based methods get the judge's worst observed value; order-based ones get
        ``-inf``: below every present candidate and tied with the other missing ones.
        Under ``pairwise``, a candidate with no score at all has nothing to average over:
        its row is filled the same way (as ``worst`` would).
        """
        x = self.oriented
        if self.missing not in ("worst", "pairwise") or not self.matrix.has_missing:
            return x
        cells = np.isnan(x)
        if self.missing == "pairwise":
            cells &= self.unscored[:, None]
            if not cells.any():
                return x
        fill = np.nanmin(x, axis=0) if values_based else np.full(x.shape[1], -np.inf)
        return np.where(cells, fill[None, :], x)


def prepare(matrix: ScoreMatrix, missing: str = "worst") -> Prepared:
    """Apply the missing-data policy ``missing`` to a score matrix."""
    if missing not in MISSING_POLICIES:
        raise ConfigError(
            f"unknown missing-data policy {missing!r}{did_you_mean(missing, MISSING_POLICIES)}; "
            f"allowed policies are {list(MISSING_POLICIES)}."
        )
    excluded_c: dict[str, str] = {}
    excluded_j: dict[str, str] = {}
    matrix, uncounted = _counted(matrix)
    if not matrix.has_missing:  # nothing for the policy to do
        return Prepared(matrix, matrix.oriented(), excluded_c, excluded_j, missing, uncounted)
    mask = matrix.missing()
    empty = np.flatnonzero(mask.all(axis=0))
    if empty.size and missing != "drop_judges":
        raise InputError(
            f"judge {matrix.judges[empty[0]]!r} has no score for any candidate; remove it or "
            "use missing='drop_judges'."
        )
    if mask.any():
        if missing == "error":
            i, j = np.argwhere(mask)[0]
            raise InputError(
                f"candidate {matrix.candidates[i]!r} has no score for judge "
                f"{matrix.judges[j]!r} (missing='error')."
            )
        if missing == "drop_candidates":
            rows = mask.any(axis=1)
            for i in np.flatnonzero(rows):
                first = matrix.judges[np.flatnonzero(mask[i])[0]]
                excluded_c[matrix.candidates[i]] = f"missing score for judge {first!r}"
            matrix = matrix.subset(candidates=np.flatnonzero(~rows))
        elif missing == "drop_judges":
            cols = mask.any(axis=0)
            for j in np.flatnonzero(cols):
                first = matrix.candidates[np.flatnonzero(mask[:, j])[0]]
                excluded_j[matrix.judges[j]] = f"no score for candidate {first!r}"
            if cols.all():
                raise InputError(
                    "every judge has a missing score, so missing='drop_judges' leaves nothing "
                    "to rank."
                )
            matrix = matrix.subset(judges=np.flatnonzero(~cols))
    return Prepared(matrix, matrix.oriented(), excluded_c, excluded_j, missing, uncounted)


def _counted(matrix: ScoreMatrix) -> tuple[ScoreMatrix, tuple[str, ...]]:
    """The matrix without its judges of weight 0, and their labels (shown, not counted)."""
    w = matrix.weights
    if w.strides == (0,) or bool(w.min() > 0):
        return matrix, ()
    zero = w == 0
    return (matrix.subset(judges=np.flatnonzero(~zero)),
            tuple(matrix.judges[j] for j in np.flatnonzero(zero)))
