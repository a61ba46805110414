"""The outputs tree the mock site feeds its meta phase, in the shape ``metascore codabench
pull`` writes: ``submissions.csv`` (:func:`~metascore.readers.tree.manifest_text`, with each
submission's time as the site would have created it), ``codabench.json`` (:func:`provenance`), a failed run's
``error.txt`` (:func:`failure_text`), and why nothing of a phase reaches it
(:func:`why_nothing`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ...signature.binding import LOCAL_SITE
from ..platform.leaderboard_rules import MANUAL_RULES, force_last_fix
from ..schema.competition import Competition, Phase, Task
from ..worker.job import JobResult
from .submissions import safe_name

__all__ = ["provenance", "task_dirs", "failure_text", "why_nothing",
           "phase_names"]

def provenance(comp: Competition, meta_phases: list[Phase], pulled_at: str | None) -> dict[str, Any]:
    """``codabench.json`` for the outputs tree: the scored phases, their task folders
    and the leaderboard's columns (the meta phases are left out: nothing of theirs is
    in the tree)."""
    board = comp.leaderboard
    columns = [{"key": c.key, "title": c.title, "index": c.index, "sorting": c.sorting,
                "hidden": c.hidden, "computation": c.computation}
               for c in (board.columns if board else ())]
    phases = []
    for phase in comp.phases:
        if phase in meta_phases:
            continue
        tasks = comp.phase_tasks(phase)
        dirs = task_dirs(tasks)
        phases.append({
            "id": phase.index, "name": phase.name, "start": _iso(phase.start), "end": _iso(phase.end),
            "tasks": [{"id": t.index, "name": t.name, "folder": dirs[t.index]} for t in tasks],
            "leaderboard": {"title": board.title if board else "", "columns": columns,
                            "submission_rule": board.submission_rule if board else None},
        })
    return {"source": "metascore bundle run", "site": LOCAL_SITE,
            "competition": {"id": None, "title": comp.title},
            "pulled_at": pulled_at,
            "phases": phases}



def _iso(when: dt.datetime | None) -> str | None:
    """A bundle date (UTC, naive) as the site sends it."""
    return None if when is None else when.strftime("%Y-%m-%dT%H:%M:%SZ")


def task_dirs(tasks: list[Task]) -> dict[int, str]:
    names = [t.name for t in tasks]
    return {t.index: safe_name(t.name if names.count(t.name) == 1 else f"{t.name} ({t.index})") for t in tasks}


def phase_names(phases: list[str]) -> str:
    return ("phase " if len(phases) == 1 else "phases ") + ", ".join(map(repr, phases))


def why_nothing(phases: list[str], export: list[dict[str, Any]], rule: str | None, feed: str,
                 version: int = 2) -> str:
    """Why no submission of ``phases`` reaches the meta phase: one short paragraph, each
    cause once with its phases, then the fix once."""
    causes: dict[str, list[str]] = {}
    moved = []  # phases whose finished submissions were migrated there
    for phase in phases:
        mine = [e for e in export if e["phase"] == phase]
        finished = [e for e in mine if not e["reason"].startswith("failed")]
        if not mine:
            cause = "nobody submitted there and nothing migrated there"
        elif finished and rule in MANUAL_RULES and feed == "export":
            cause = (f"the finished submissions are on no leaderboard under the rule {rule!r}, "
                     "which puts one there only by a click")
            if any(e.get("migrated") for e in finished):
                moved.append(phase)
        else:
            cause = "every submission failed"
        causes.setdefault(cause, []).append(phase)
    text = next(iter(causes)) if len(causes) == 1 else "; ".join(
        f"{phase_names(names)}: {cause}" for cause, names in causes.items())
    if moved:
        text += (f" (a submission migrated into {phase_names(moved)} is a new one there, which nobody "
                 "added)")
    if any(rule in MANUAL_RULES and feed == "export" and cause.startswith("the finished")
           for cause in causes):
        text += (f". A submission reaches the results export when a leaderboard holds it: "
                 f"{force_last_fix(version, explain=False)}, mark submissions on_leaderboard in the submissions "
                 "manifest, or run with --feed all")
    return text + "."


def failure_text(res: JobResult) -> str:
    """What ``error.txt`` says of a failed run, in one line: its status and the reason's
    headline (the root cause first: a failed prediction step leads the reason)."""
    lines = str(res.reason or res.status_details).strip().splitlines() or [res.status_details]
    return f"{res.status} ({res.status_details}): {' '.join(lines[0].split())}\n"
