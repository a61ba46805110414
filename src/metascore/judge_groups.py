"""Judges in named groups, for a ranking in two steps (docs/methods.md, "Grouped ranking").

A benchmark often groups its judges: the metrics of one task, or performance, efficiency
and fairness measures (Vote'n'Rank's case study weighs them 0.4/0.3/0.3). A
:class:`JudgeGroups` says which group each judge of a score matrix belongs to, each
group's weight, and the rule that ranks the candidates inside each group; the rule
across the groups is the ranking method. :meth:`metascore.ScoreMatrix.grouped` attaches
one to a matrix, :func:`metascore.rank` then ranks in two steps
(:mod:`metascore.grouped`), and every resample of the matrix keeps its groups.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import InputError, did_you_mean

__all__ = ["JudgeGroups", "make_groups"]


@dataclass(frozen=True)
class JudgeGroups:
    """The group of each judge of a matrix, the groups' weights and the rule inside them.

    Attributes
    ----------
    of : tuple of str
        The group of each judge, in the order of the matrix's judges.
    weights : mapping
        ``{group: weight}``, every weight >= 0 (0: the group is shown, not counted);
        a group not listed weighs 1.
    within : str or None
        The ranking method inside each group; None: the method that ranks across them.
    within_params : mapping
        Parameters of ``within``.
    """

    of: tuple[str, ...]
    weights: Mapping[str, float] = field(default_factory=dict)
    within: str | None = None
    within_params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        """The groups, in the order of their first judge."""
        return tuple(dict.fromkeys(self.of))

    def weight(self, group: str) -> float:
        return float(self.weights.get(group, 1.0))

    def members(self, group: str) -> np.ndarray:
        """Positions of the judges of ``group``."""
        return np.flatnonzero(np.asarray(self.of, dtype=object) == group)

    def take(self, judges: np.ndarray) -> JudgeGroups:
        """The groups of the judges at positions ``judges`` (a subset, possibly repeated)."""
        return JudgeGroups(tuple(self.of[j] for j in judges), self.weights, self.within,
                           self.within_params)

    def describe(self) -> dict[str, Any]:
        """A JSON-ready summary: the rule inside the groups, and each group's weight and
        number of judges."""
        sizes = {g: self.of.count(g) for g in self.names}
        return {"within": self.within, "within_params": dict(self.within_params),
                "groups": {g: {"weight": self.weight(g), "judges": sizes[g]} for g in self.names}}


def make_groups(
    judges: Sequence[str],
    groups: Mapping[str, Sequence[str]],
    weights: Mapping[str, float] | None = None,
    within: str | None = None,
    within_params: Mapping[str, Any] | None = None,
) -> JudgeGroups:
    """Validate ``{group: [judge, ...]}`` against the matrix's ``judges``: every judge in
    exactly one group, every group weight a number >= 0, one at least positive.

    Raises :class:`~metascore.errors.InputError` naming the judge or group at fault.
    """
    if not isinstance(groups, Mapping) or not groups:
        raise InputError(f"groups must map group names to lists of judges; got {groups!r}.")
    known = set(judges)
    group_of: dict[str, str] = {}
    for name, members in groups.items():
        if isinstance(members, str) or not isinstance(members, Sequence) or not members:
            raise InputError(f"group {name!r} must list its judges; got {members!r}.")
        for judge in members:
            if judge not in known:
                raise InputError(f"group {name!r} names judge {judge!r}, which is not a judge of "
                                 f"the matrix{did_you_mean(str(judge), list(judges))}.")
            if judge in group_of:
                raise InputError(f"judge {judge!r} is in two groups, {group_of[judge]!r} and "
                                 f"{name!r}; put each judge in one group.")
            group_of[judge] = str(name)
    alone = [j for j in judges if j not in group_of]
    if alone:
        raise InputError(f"judge {alone[0]!r} is in no group; put every judge in a group "
                         f"({len(alone)} judge(s) are in none).")
    weights = dict(weights or {})
    for name, w in weights.items():
        if name not in groups:
            raise InputError(f"group weights name group {name!r}, which is not a group"
                             f"{did_you_mean(str(name), list(groups))}; groups are {list(groups)}.")
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not (math.isfinite(w) and w >= 0):
            raise InputError(f"group {name!r} has weight {w!r}; group weights must be numbers >= 0 "
                             "(0: shown, not counted).")
    if all(float(weights.get(g, 1.0)) == 0 for g in groups):
        raise InputError("every group has weight 0, so nothing would be counted; give at least "
                         "one group a positive weight.")
    return JudgeGroups(tuple(group_of[j] for j in judges), {str(k): float(v) for k, v in weights.items()},
                       within, dict(within_params or {}))
