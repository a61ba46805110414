"""A ranking in two steps: a registered rule inside each group of judges, then a
registered rule across the groups (Vote'n'Rank's two-step ranking; docs/methods.md,
"Grouped ranking").

:func:`rank_in_groups` is what :func:`metascore.rank` does with a matrix whose judges are
in groups (:meth:`metascore.ScoreMatrix.grouped`), once the registry has applied the
missing-data policy to the whole matrix (judges of weight 0 set aside): it ranks each
group's judges with the rule inside the groups, puts each group's scores in a column of a new matrix (one judge
per group, weighing the group's weight; a candidate that no judge of a group scores has no
score there), and ranks that matrix with the method. Both steps are calls of the registry
(``rank_one``): the two-step ranking is built from registered methods, nothing else.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .errors import InputError
from .matrix import ScoreMatrix
from .missing import Prepared
from .ranking import Ranking

__all__ = ["rank_in_groups", "GROUP_PREFIX"]

#: Per-candidate details holding each group's score: ``group_score:<name>``.
GROUP_PREFIX = "group_score:"


def rank_in_groups(
    prepared: Prepared,
    method: str,
    params: dict[str, Any],
    *,
    seed: Any,
    tie_break: Sequence[str],
    rank_one: Callable[..., Ranking],
) -> Ranking:
    """Rank a matrix whose ``groups`` are set, after the missing-data policy
    (``prepared``), in two steps with ``rank_one`` (the registry's :func:`~metascore.rank`
    on a matrix without groups).

    The result is the ranking across the groups, with the matrix's judges, the policy's
    exclusions, each group's score per candidate (details ``group_score:<name>``, shown even for
    a group of weight 0), ``details["groups"]`` (each group's judges, weight and rule) and
    the notes of both steps (a group's prefixed with its name).
    """
    kept, missing = prepared.matrix, prepared.missing
    groups = kept.groups  # the policy keeps each judge's group, the weights and the rule
    assert groups is not None
    inner, inner_params = (groups.within, dict(groups.within_params)) if groups.within \
        else (method, dict(params))
    present = groups.names
    if not present:
        raise InputError("no group has a counted judge left to rank.")
    columns, members, notes = _rank_each_group(prepared, inner, inner_params, rank_one, seed=seed,
                                               tie_break=tie_break)
    counted = [g for g in present if groups.weight(g) > 0]
    if not counted:
        raise InputError("every group with a counted judge has weight 0, so nothing would be "
                         "counted; give one of them a positive weight.")
    notes += [f"group {g!r} has weight 0: shown, not counted." for g in present if g not in counted]
    across = _across(kept, columns, counted)
    # every candidate is in ``across``: a policy that drops was applied before
    out = rank_one(across, method, missing=missing, seed=seed, tie_break=tie_break, **params)
    keys = tuple(GROUP_PREFIX + g for g in present)
    details = {**out.details, **{GROUP_PREFIX + g: columns[g] for g in present},
               "groups": {g: {"judges": members[g], "weight": groups.weight(g), "method": inner,
                              "params": inner_params} for g in present}}
    return dataclasses.replace(
        out,
        judges=tuple(kept.judges),
        uncounted_judges=prepared.uncounted,
        excluded_candidates={**prepared.excluded_candidates, **out.excluded_candidates},
        excluded_judges=dict(prepared.excluded_judges),
        notes=tuple(f"judge {j!r} has weight 0: shown, not counted." for j in prepared.uncounted)
        + tuple(notes) + tuple(out.notes),
        details=details,
        per_candidate=tuple(out.per_candidate) + keys,
        matrix=kept,
    )


def _rank_each_group(prepared: Prepared, inner: str, inner_params: dict[str, Any],
                     rank_one: Callable[..., Ranking], *, seed: Any, tie_break: Sequence[str],
                     ) -> tuple[dict[str, np.ndarray], dict[str, list[str]], list[str]]:
    """Each group's judges ranked by the rule inside the groups: each group's scores (NaN
    for a candidate no judge of the group scores), its judges, and the notes, each prefixed
    with its group's name."""
    kept, groups = prepared.matrix, prepared.matrix.groups
    assert groups is not None
    columns: dict[str, np.ndarray] = {}
    members: dict[str, list[str]] = {}
    notes: list[str] = []
    for g in groups.names:
        idx = groups.members(g)
        sub = dataclasses.replace(kept.subset(judges=idx), groups=None)
        r = rank_one(sub, inner, missing=prepared.missing, seed=seed, tie_break=tie_break, **inner_params)
        scores = np.asarray(r.scores, dtype=float).copy()
        scores[np.isnan(sub.values).all(axis=1)] = np.nan  # nothing to say for this group
        columns[g] = scores
        members[g] = list(sub.judges)
        notes += [f"group {g!r}: {note}" for note in r.notes]
    return columns, members, notes


def _across(kept: ScoreMatrix, columns: dict[str, np.ndarray], counted: list[str]) -> ScoreMatrix:
    """The matrix of the ``counted`` groups' scores, one judge per group weighing the
    group's weight, with the candidates' metadata of ``kept``."""
    groups = kept.groups
    assert groups is not None
    across = ScoreMatrix.from_array(
        np.column_stack([columns[g] for g in counted]), list(kept.candidates), counted,
        weights=[groups.weight(g) for g in counted])
    return dataclasses.replace(
        across, participants=kept.participants, submitted_at=kept.submitted_at,
        is_baseline=kept.is_baseline, submission_order=kept.submission_order)
