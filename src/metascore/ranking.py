"""The result of a ranking method: scores, fractional ranks, positions and provenance."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .errors import ConfigError
from .jsonable import jsonable
from .submission_order import own_places

if TYPE_CHECKING:  # pragma: no cover
    from .matrix import ScoreMatrix
    from .inputs import Inputs

__all__ = ["Ranking", "tie_groups", "fractional_rank_of_scores", "tie_places", "TIE_BREAK_KEYS",
           "DEFAULT_TIE_BREAK"]

#: Keys accepted in ``tie_break`` (applied in order inside a group of equal scores).
TIE_BREAK_KEYS = ("submitted_at", "candidate", "participant", "input_order")
#: The tie-break used when none is given: the earlier submission, then the candidate id.
DEFAULT_TIE_BREAK = ("submitted_at", "candidate")

#: Relative tolerance under which two scores count as equal (float noise of sums).
SCORE_RTOL = 1e-10


def tie_groups(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort scores best first and label groups of equal scores.

    Returns ``(order, group)``: ``order`` sorts candidates by decreasing score (stable),
    ``group[i]`` is the group id (0 = best) of candidate ``i``. Two scores are equal when
    they differ by at most ``SCORE_RTOL`` relatively (sums of floats in another order).
    """
    scores = np.asarray(scores, dtype=float)
    order = np.argsort(-scores, kind="stable")
    s = scores[order]
    group = np.empty(len(s), dtype=np.intp)
    # Every step above the largest tolerance of any pair: no two scores equal (the
    # common case, one comparison instead of the per-pair tolerances); np.diff is each
    # step negated, exactly.
    if len(s) < 2 or -np.diff(s).max() > SCORE_RTOL * max(1.0, float(s[0]), -float(s[-1])):
        group[order] = np.arange(len(s))
        return order, group
    hi, lo = s[:-1], s[1:]  # hi >= lo, so max(|hi|, |lo|) = max(hi, -lo)
    gap = hi - lo > SCORE_RTOL * np.maximum(1.0, np.maximum(hi, -lo))
    group[order] = np.concatenate(([0], np.cumsum(gap)))
    return order, group


def fractional_rank_of_scores(scores: np.ndarray, group: np.ndarray | None = None) -> np.ndarray:
    """``rank(score)``: 1 = best, equal scores share the average of their positions.

    ``group`` is the second output of :func:`tie_groups` when already computed.
    """
    if group is None:
        _, group = tie_groups(scores)
    sizes = np.bincount(group)
    if len(sizes) == len(group):  # no two scores equal
        return group + 1.0
    first = np.concatenate([[1], 1 + np.cumsum(sizes)[:-1]])
    return first[group] + (sizes[group] - 1) / 2.0


@dataclass(frozen=True, eq=False)
class Ranking:
    """A ranking of candidates by one method.

    Attributes
    ----------
    method : str
        Registered method name.
    params : dict
        Method parameters actually used (defaults filled in).
    candidates : tuple of str
        Ranked candidates, in input order.
    scores : ndarray
        One score per candidate, higher is better.
    ranks : ndarray
        Fractional ranks of the scores (1 = best, ties share the average).
    positions : ndarray of int
        Leaderboard positions: equal scores share a position (1, 2, 2, 4).
    order : ndarray of int
        Candidate indices best first; inside a tie, by the tie-break keys.
    judges : tuple of str
        Judges used (after the missing-data policy).
    uncounted_judges : tuple of str
        Judges of weight 0: shown in the outputs, not counted by the method.
    seed : int or None
        Seed of the random generator (None when a Generator was passed in).
    missing : str
        Missing-data policy applied.
    excluded_candidates, excluded_judges : dict
        What the missing-data policy removed, with the reason.
    notes : tuple of str
        Anything a reader should know (non-unique optimum, averaging over present judges...).
    details : dict
        Method-specific outputs: per-candidate arrays (e.g. ``average_rank``, ``se``) and
        global values (e.g. ``kendall_distance``, ``order``).
    per_candidate : tuple of str
        The keys of ``details`` that the method declared per-candidate (one value per
        candidate, in ``candidates`` order); only those become table columns.
    version : str
        metascore version that produced it.
    matrix : ScoreMatrix or None
        The score matrix ranked (after the missing-data policy, before filling).
    inputs : inputs.Inputs or None
        The validated input it was computed from (:func:`metascore.registry.prepare_inputs`):
        what an analysis of this ranking starts from, and other methods rank
        (:func:`metascore.registry.rank_inputs`). Not part of the outputs.
    """

    method: str
    params: dict[str, Any]
    candidates: tuple[str, ...]
    scores: np.ndarray
    ranks: np.ndarray
    positions: np.ndarray
    order: np.ndarray
    judges: tuple[str, ...] = ()
    uncounted_judges: tuple[str, ...] = ()
    seed: int | None = None
    missing: str = "worst"
    tie_break: tuple[str, ...] = DEFAULT_TIE_BREAK
    excluded_candidates: dict[str, str] = field(default_factory=dict)
    excluded_judges: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    per_candidate: tuple[str, ...] = ()
    version: str = ""
    matrix: ScoreMatrix | None = None
    inputs: Inputs | None = field(default=None, repr=False)

    @classmethod
    def of(cls, **fields: Any) -> Ranking:
        """A ranking of ``fields`` (every field, by name, but ``positions``, ``order`` and
        ``ranks`` when the tie-break keys are known: those are computed from the scores,
        the tie-break and the matrix when first read), made without the generated
        ``__init__``, which sets each of a frozen dataclass's twenty fields through
        ``object.__setattr__``: the registry's one construction of a ranking, on every
        call of :func:`metascore.rank` (a caller reading the scores alone sorts nothing)."""
        ranking = object.__new__(cls)
        ranking.__dict__.update(fields)
        return ranking

    def __getattr__(self, name: str) -> Any:
        """``positions``, ``order`` and ``ranks`` of a ranking made by :meth:`of` without
        them, computed once when first read (:func:`tie_places`)."""
        if name not in _PLACES or "scores" not in self.__dict__:
            raise AttributeError(name)
        found = dict(zip(_PLACES, tie_places(self.scores, self.tie_break, self.candidates,
                                          self.matrix)))
        self.__dict__.update(found)
        return found[name]

    @property
    def winner(self) -> str:
        """The candidate listed first: one of :attr:`winners`, chosen by the tie-break when
        the first place is shared."""
        return self.candidates[int(self.order[0])]

    @property
    def winners(self) -> tuple[str, ...]:
        """Every candidate the method puts first, in listing order: all those at position
        1 (equal best scores), and for a method whose best outcome is not unique, every
        candidate first in one of its optimal outcomes (``details["winners"]``: Kemeny-Young
        lists those of its equally optimal orders). One name when the first place is not
        shared."""
        tied = [self.candidates[i] for i in self.order if self.positions[i] == 1]
        more = [c for c in self.details.get("winners") or () if c not in tied]
        if more:
            at = {c: k for k, c in enumerate(self.ranked_candidates())}
            more.sort(key=at.__getitem__)
        return tuple(tied + more)

    @property
    def n(self) -> int:
        return len(self.candidates)

    def ranked_candidates(self) -> list[str]:
        """Candidates best first (ties in tie-break order)."""
        return [self.candidates[i] for i in self.order]

    def score_of(self, candidate: str) -> float:
        return float(self.scores[self.candidates.index(candidate)])

    def signature(self) -> dict[str, Any]:
        """Provenance record: how this ranking was made (sacrebleu-style signature)."""
        return {
            "method": self.method,
            "params": jsonable(self.params),
            "missing": self.missing,
            "seed": self.seed,
            "tie_break": list(self.tie_break),
            "n_candidates": self.n,
            "n_judges": len(self.judges),
            **({"uncounted_judges": list(self.uncounted_judges)} if self.uncounted_judges else {}),
            **({"groups": self.matrix.groups.describe()}
               if self.matrix is not None and self.matrix.groups is not None else {}),
            "version": self.version,
        }

    def per_candidate_details(self) -> dict[str, np.ndarray]:
        """The details the method declared per-candidate (shown as extra columns)."""
        return {key: np.asarray(self.details[key]) for key in self.per_candidate}

    def to_frame(self) -> pd.DataFrame:
        """Leaderboard table, best first: position, rank, score, candidate and details."""
        idx = self.order
        data: dict[str, Any] = {
            "position": self.positions[idx],
            "rank": self.ranks[idx],
            "score": self.scores[idx],
            "candidate": [self.candidates[i] for i in idx],
        }
        for key, arr in self.per_candidate_details().items():
            data[key] = arr[idx]
        return pd.DataFrame(data)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary (rows best first, plus the signature and notes)."""
        rows = self.to_frame().to_dict(orient="records")
        return {
            "signature": self.signature(),
            "rows": jsonable(rows),
            "excluded_candidates": dict(self.excluded_candidates),
            "excluded_judges": dict(self.excluded_judges),
            "notes": list(self.notes),
            "details": jsonable(
                {k: v for k, v in self.details.items() if k not in self.per_candidate_details()}
            ),
        }

    def __repr__(self) -> str:
        head = ", ".join(
            f"{self.positions[i]}. {self.candidates[i]} ({self.scores[i]:.4g})"
            for i in self.order[:5]
        )
        more = ", ..." if self.n > 5 else ""
        return f"Ranking(method={self.method!r}: {head}{more})"


#: The fields :meth:`Ranking.of` may leave to be computed when first read.
_PLACES = ("positions", "order", "ranks")


def tie_places(scores: np.ndarray, tie_break: Sequence[str], candidates: Sequence[str],
           matrix: ScoreMatrix | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions (shared by equal scores), the order best first (inside a tie, by
    ``tie_break``, from ``matrix``'s submission times, places and participants) and the
    fractional ranks of ``scores``."""
    best_first, group = tie_groups(scores)
    if group[best_first[-1]] == len(group) - 1 and all(k in TIE_BREAK_KEYS for k in tie_break):
        return group + 1, best_first, group + 1.0  # no two scores equal: nothing to break
    positions, order = positions_and_order(
        scores,
        tie_break,
        candidates,
        matrix.submitted_at if matrix is not None else (),
        matrix.participants if matrix is not None else (),
        group,
        matrix.submission_order if matrix is not None else (),
    )
    return positions, order, fractional_rank_of_scores(scores, group)


def positions_and_order(
    scores: np.ndarray,
    tie_break: Sequence[str],
    candidates: Sequence[str],
    submitted_at: Sequence[Any] = (),
    participants: Sequence[Any] = (),
    group: np.ndarray | None = None,
    submission_order: Sequence[float] = (),
) -> tuple[np.ndarray, np.ndarray]:
    """Display positions (1, 2, 2, 4) and the best-first order with tie-breaks applied.

    ``group`` is the second output of :func:`tie_groups` when already computed. The
    ``submitted_at`` key ("the earlier submission") compares ``submission_order`` when
    given (each candidate's place, :mod:`metascore.submission_order`), else the times, then
    the submission number of candidate ids ``<owner>-<id>``; unknown places last.
    """
    unknown = [k for k in tie_break if k not in TIE_BREAK_KEYS]
    if unknown:
        raise ConfigError(
            f"unknown tie-break key {unknown[0]!r}; allowed keys are {list(TIE_BREAK_KEYS)}."
        )
    n = len(scores)
    if group is None:
        _, group = tie_groups(scores)
    sizes = np.bincount(group)
    if len(sizes) == n:  # no two scores equal: nothing to break, positions are the groups
        order = np.empty(n, dtype=np.intp)
        order[group] = np.arange(n)
        return (group + 1).astype(int), order
    keys: list[np.ndarray] = []
    for key in tie_break:
        if key == "submitted_at":  # earlier first; unknown places last
            keys.append(np.asarray(submission_order, dtype=float) if len(submission_order)
                        else own_places(list(candidates), submitted_at))
        elif key == "candidate":
            keys.append(_sort_positions(list(candidates)))
        elif key == "participant" and participants:
            keys.append(_sort_positions(["\uffff" if p is None else str(p) for p in participants]))
    keys.append(np.arange(n))  # input order as the last resort: always total
    # np.lexsort sorts by the last key first
    order = np.lexsort(tuple(reversed(keys)) + (group,))
    first = np.concatenate([[1], 1 + np.cumsum(sizes)[:-1]])
    positions = first[group].astype(int)
    return positions, order


def _sort_positions(labels: list[str]) -> np.ndarray:
    """Rank of each label among the sorted distinct labels (equal labels share it)."""
    rank = {label: k for k, label in enumerate(sorted(set(labels)))}
    return np.array([rank[label] for label in labels], dtype=np.intp)

