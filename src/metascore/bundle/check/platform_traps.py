"""Traps of Codabench as it runs today: bundles it accepts that then lose scores.

:func:`platform_traps` returns one warning per trap, each naming the upstream issue (or
the platform code: ``leaderboards/strategies.py``,
``competitions/models.py: apply_phase_migration``) and the fix:

- a phase with several tasks under ``Force_Last`` or ``Force_Latest_Multiple``: each
  task's score upload clears its siblings' leaderboard membership, so the leaderboard and
  the results export keep one task's scores per participant (codabench#2211);
- ``auto_migrate_to_this_phase`` into or out of a multi-task phase: migration copies only
  finished submissions that are on the leaderboard and have no parent, and a multi-task
  submission's parent is never on the leaderboard, so nothing migrates out of such a phase
  (codabench#2247), and what migrates into one becomes a multi-task submission that cannot
  migrate further and loses task scores under #2211;
- a meta phase fed by a results export while the rule is ``Add`` (or ``Add_And_Delete*``):
  the export holds only leaderboard submissions, and nothing reaches the leaderboard
  without a click;
- a baseline the organizer must put on the leaderboard by hand (``Add`` rules), or that
  the export cannot flag (no ``baselines:`` in the meta configuration: a results export has
  no "is baseline" column).

The fix they share: one task per phase whose ingestion and scoring programs cover every
dataset and write one leaderboard column per dataset (Codabench's mini-automl example and
metascore's ``bundle_template``), with ``Force_Last``.
"""

from __future__ import annotations

from collections.abc import Sequence

from .meta_config import EXPORT_FORMATS, MetaConfig
from ..schema.competition import Competition, Phase
from ..platform.leaderboard_rules import MANUAL_RULES, force_last_fix

__all__ = ["platform_traps"]
_SINGLE_TASK_FIX = ("use one task per phase whose ingestion and scoring programs cover every "
                    "dataset and write one leaderboard column per dataset (Codabench's "
                    "mini-automl example; metascore's bundle_template)")


def platform_traps(comp: Competition, metas: Sequence[MetaConfig] = ()) -> list[str]:
    """One warning per platform trap of ``comp`` (``metas``: its meta tasks' configurations)."""
    if comp.leaderboard is None:
        return []
    rule = comp.leaderboard.submission_rule
    meta_phases = {id(m.phase) for m in metas}
    warnings: list[str] = []
    for phase in comp.phases:
        n = len(phase.tasks)
        if n > 1 and rule in ("Force_Last", "Force_Latest_Multiple"):
            warnings.append(
                f"competition.yaml: phase {phase.name!r} has {n} tasks and the leaderboard's submission_rule is "
                f"{rule}: Codabench keeps only the last-scored task of each submission on the "
                "leaderboard, so the other tasks' columns are empty on the leaderboard and in the "
                f"results export (codabench issue #2211). Fix: {_SINGLE_TASK_FIX}.")
    for before, phase in _migrations(comp):
        if len(before.tasks) > 1:
            warnings.append(
                f"competition.yaml: phase {phase.name!r} migrates submissions automatically from phase "
                f"{before.name!r}, which has {len(before.tasks)} tasks: Codabench migrates only "
                "submissions on the leaderboard without a parent, and a multi-task submission's "
                "parent is never on the leaderboard, so nothing migrates (codabench issue #2247). "
                f"Fix: {_SINGLE_TASK_FIX}.")
        if len(phase.tasks) > 1:
            warnings.append(
                f"competition.yaml: phase {phase.name!r} has {len(phase.tasks)} tasks and receives migrated "
                "submissions: they become multi-task submissions, which lose task scores under "
                "Force_Last (codabench issue #2211) and never migrate further (codabench issue "
                f"#2247). Fix: {_SINGLE_TASK_FIX}.")
    exported = [m for m in metas if m.config is not None and m.config.input.format in EXPORT_FORMATS]
    if rule in MANUAL_RULES and exported:
        names = ", ".join(sorted({repr(m.phase.name) for m in exported}))
        warnings.append(
            f"competition.yaml: the leaderboard's submission_rule is {rule} and meta phase {names} reads a results "
            "export: the export holds only submissions on the leaderboard, and under "
            f"{rule} nothing reaches the leaderboard until a participant clicks 'add to "
            "leaderboard' (Codabench leaderboards/strategies.py). Fix: "
            f"{force_last_fix(comp.version)}: each participant's last finished submission goes "
            "there by itself.")
    for meta in exported:
        config = meta.config
        if config.filter.rule != "beat_baseline" and not config.baselines:
            continue
        ranked = [p.name for p in comp.phases if p.name in (config.phases.development, config.phases.final)
                  and id(p) not in meta_phases]
        if rule in MANUAL_RULES:
            warnings.append(
                f"{meta.where}: the baseline reaches the results export only if the organizer "
                f"submits it to phase(s) {', '.join(map(repr, ranked))} and adds it to the "
                f"leaderboard by hand (submission_rule {rule}). Fix: the same --submission-rule "
                "Force_Last, and submit the baseline last from its own account.")
        if not config.baselines:
            warnings.append(
                f"{meta.where}: a results export does not say which row is the baseline, and "
                "`baselines:` is empty, so the beat_baseline filter finds none on Codabench. Fix: "
                "submit the starting kit's baseline from one account and list that account under "
                "`baselines:`.")
    return warnings


def _migrations(comp: Competition) -> list[tuple[Phase, Phase]]:
    """(previous phase, phase) for each phase with ``auto_migrate_to_this_phase``."""
    by_index = {p.index: p for p in comp.phases}
    return [(by_index[p.index - 1], p) for p in comp.phases
            if p.auto_migrate and p.index - 1 in by_index]
