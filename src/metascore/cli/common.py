"""What several command groups share: one phase of any score file as a score matrix
(``metascore rank`` in quick mode and ``metascore analyze`` read their inputs this way),
and the options that put its judges in groups for a ranking in two steps."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..config import judge_key
from ..readers.directions import column_direction, direction_warnings
from ..errors import InputError
from ..matrix import ScoreMatrix

__all__ = ["read_matrix_file", "add_group_options", "group_judges"]


def read_matrix_file(
    path: Path,
    *,
    format: str | None = None,
    phase: str | None = None,
    lower_is_better: Sequence[str] = (),
    weights: Sequence[tuple[str, float]] = (),
    judges: Sequence[str] = (),
    exclude: Sequence[str] = (),
    notes: list[str] | None = None,
    alerts: list[str] | None = None,
    parts: dict[str, tuple[Any, Any]] | None = None,
) -> ScoreMatrix:
    """One phase of any score file the readers know, as a score matrix.

    Judges are the (task, metric) pairs found in that phase, keyed ``task/metric`` (``task`` when the
    metric is empty, as in a wide CSV), or only those named in ``judges``, minus those in
    ``exclude``; a judge listed in ``lower_is_better`` is lower-is-better, another takes
    its column's direction from the competition when the input carries it (a tree's
    ``codabench.json``), else higher-is-better. What the reader left out on purpose is
    appended to ``notes``; a warning per judge whose name says lower is better but that
    is ranked higher-is-better by default, and per candidate with no score on any chosen
    judge (kept with every score missing), to ``alerts``. For the ``submitted_at``
    tie-break, a participant of a phase listed before ``phase`` in the file keeps the
    place of their submission there (:mod:`metascore.submission_order`). ``parts``
    receives each chosen judge's (task, metric).
    """
    from ..leaderboard.phases import keyed_matrix
    from ..readers.formats import read_score_table
    from ..submission_order import phase_origins

    table = read_score_table(path, format, format_option="--format")
    if notes is not None:
        notes.extend(table.notes)
    phases, phase = _phase(path, table.frame, phase)
    weight_map = dict(weights)
    pairs, keys = _judges(path, table.frame, phase,
                          [*lower_is_better, *weight_map, *judges, *exclude], judges, exclude)
    if parts is not None:
        parts.update(zip(keys, pairs))
    given = {key: False for key in lower_is_better}
    for (t, m), key in zip(pairs, keys):
        if key not in given and column_direction(t, m, table.directions) is not None:
            given[key] = bool(column_direction(t, m, table.directions))
    if alerts is not None:
        alerts.extend(direction_warnings(
            [(k, t, m) for (t, m), k in zip(pairs, keys) if k not in given], "give -l {key} (or --exclude {key} if it is not a score)"))
    unscored: dict[str, str] = {}
    # "the earlier submission": a participant of an earlier phase of the file keeps the
    # place of their submission there (a migrated copy has a new id)
    earlier = phases[:phases.index(phase)]
    origins = phase_origins(table, phase, earlier) if earlier else None
    matrix = keyed_matrix(table, phase, keys, [given.get(key, True) for key in keys],
                          [weight_map.get(key, 1.0) for key in keys], unscored=unscored, origins=origins)
    if alerts is not None:
        alerts.extend(f"candidate {c!r} has no score on any judge ({why}); it is ranked with "
                      "every score missing (--missing decides its place)." for c, why in unscored.items())
    return matrix


def _phase(path: Path, frame: pd.DataFrame, phase: str | None) -> tuple[list[Any], Any]:
    """The file's phases, and the one to read: ``phase``, or the only one."""
    from ..errors import did_you_mean

    phases = list(pd.unique(frame["phase"]))
    if phase is None:
        if len(phases) > 1:
            raise InputError(f"{path} holds phases {phases}; choose one with --phase.")
        phase = phases[0]
    elif phase not in phases:
        raise InputError(f"{path}: no phase {phase!r}{did_you_mean(phase, phases)}; phases are {phases}.")
    return phases, phase


def _judges(path: Path, frame: pd.DataFrame, phase: Any, named: Sequence[str],
            judges: Sequence[str], exclude: Sequence[str]) -> tuple[list[tuple[Any, Any]], list[str]]:
    """The (task, metric) pairs of the phase and their keys, sorted, restricted to
    ``judges`` (all when empty) minus ``exclude``; every judge ``named`` must exist."""
    from ..errors import did_you_mean
    from ..leaderboard.pivot import phase_pairs

    # judges come from the chosen phase only; keys computed once per (task, metric)
    pairs = sorted(phase_pairs(frame, phase), key=lambda tm: judge_key(*tm))
    keys = [judge_key(t, m) for t, m in pairs]
    known_keys = set(keys)
    for name in named:
        if name not in known_keys:
            raise InputError(f"{path}: no judge {name!r}{did_you_mean(name, keys)}; judges are {keys}.")
    wanted, left_out = set(judges), set(exclude)
    chosen = [k for k in keys if (not wanted or k in wanted) and k not in left_out]
    if not chosen:
        raise InputError(f"{path}: --judges/--exclude leave no judge (judges are {keys}).")
    if len(chosen) < len(keys):
        chosen_set = set(chosen)
        pairs = [p for p, k in zip(pairs, keys) if k in chosen_set]
    return pairs, chosen


def _assignment(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    return key.strip(), value.strip()


def add_group_options(p: argparse.ArgumentParser) -> None:
    """The options that rank in two steps (``ranking.groups`` of metascore.yaml)."""
    g = p.add_argument_group("judges in groups (two steps: a rule inside each group, then the "
                             "method across the groups)")
    g.add_argument("--group-by", choices=("task", "metric"),
                   help="one group per task, or per metric")
    g.add_argument("--group", nargs="+", type=_assignment, default=[], metavar="NAME=J1,J2",
                   help="a named group and its judges (every judge in one group)")
    g.add_argument("--group-weight", nargs="+", type=_assignment, default=[], metavar="NAME=W",
                   help="group weights (default 1; 0: shown, not counted)")
    g.add_argument("--within", metavar="METHOD",
                   help="the rule inside the groups (default: the method across them)")
    g.add_argument("--within-param", nargs="+", type=_assignment, default=[],
                   metavar="NAME=VALUE", help="parameters of --within")


def group_judges(matrix: ScoreMatrix, args: argparse.Namespace,
                 parts: dict[str, tuple[Any, Any]]) -> ScoreMatrix:
    """``matrix`` with its judges grouped as the options say (unchanged without them)."""
    from ..config import GroupsConfig
    from ..leaderboard.phases import grouped_by

    grouping = args.group_by or args.group
    others = [f for f, v in (("--group-weight", args.group_weight), ("--within", args.within),
                             ("--within-param", args.within_param)) if v]
    if not grouping:
        if others:
            raise InputError(f"{others[0]} needs groups: give --group-by or --group.")
        return matrix
    if args.group_by and args.group:
        raise InputError("give --group-by or --group, not both.")
    if args.within_param and not args.within:
        raise InputError("--within-param needs --within (the rule the parameters belong to).")
    weights = {}
    for name, text in args.group_weight:
        try:
            weights[name] = float(text)
        except ValueError:
            raise InputError(f"--group-weight {name}={text}: the weight must be a number.") from None
    params = {name: _value(text) for name, text in args.within_param}
    if args.group_by:
        return grouped_by(matrix, GroupsConfig(args.group_by, weights, args.within, params),
                          {k: (t, m, None) for k, (t, m) in parts.items()})
    members = {name: [j.strip() for j in text.split(",") if j.strip()] for name, text in args.group}
    return matrix.grouped(members, weights, args.within, params)


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
