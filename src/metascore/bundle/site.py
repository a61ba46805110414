"""The platform around the worker: which submission runs in which phase, and what is kept.

A :class:`Site` runs every submission in every phase it applies to (as if migrated
automatically), each task of a multi-task phase as a separate job (as Codabench's child
submissions are), ``jobs`` at a time, each job by :func:`~metascore.bundle.worker.run_job`
on folders it prepares (bundle zips extracted once, ``meta_scoring_program/`` assembled).
Of a finished job it keeps, as the server stores them, the scores that have a leaderboard
column (the others are a warning) and adds the computed columns (``avg``, ``sum``,
``min``, ``max`` over the row's columns).

Every finished scoring output is collected into ``<out>/outputs/<phase>/<candidate>/<task>/
scores.json`` (``error.txt`` with the status for a failed run) with
``<out>/outputs/submissions.csv`` (phase, candidate, participant,
submitted_at, is_baseline) and ``<out>/outputs/codabench.json`` (each phase's tasks and
leaderboard columns with their ``sorting``, the format ``metascore codabench pull`` writes,
read by :mod:`metascore.io.columns`: judges without a direction take their column's). A **meta phase** (every task's reference data holds
``metascore.yaml``, e.g. the template's "Final ranking") runs last, once: the outputs tree is
its result submission (what an organizer would upload on Codabench), scored by the
meta-scoring program like any other scoring job; its files are copied to ``<out>/final/``.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError, InputError
from ..io.columns import COLUMNS_FILE
from ..io.tree import FAILURE_FILE
from .archive import as_folder
from .backend import Backend
from .files import write_text
from .meta_program import assemble_meta_program, needs_meta_program
from .model import Competition, Phase, Task
from .submissions import Submission, safe_name
from .worker import Job, JobResult, run_job, scores_file

__all__ = ["Site", "SiteRun", "DEFAULT_QUEUE_LIMIT", "MANIFEST_COLUMNS"]

DEFAULT_QUEUE_LIMIT = 600
MANIFEST_COLUMNS = ("phase", "candidate", "participant", "submitted_at", "is_baseline")
_ASSEMBLE_LOCK = threading.Lock()


@dataclass(kw_only=True)
class SiteRun:
    """What the site produced: every job's result, warnings, the meta-scoring job and files."""

    results: list[JobResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    meta: JobResult | None = None
    leaderboard: Path | None = None
    detailed_results: Path | None = None


class Site:
    """Run a parsed competition's phases on ``backend``, writing only inside ``out``."""

    def __init__(self, comp: Competition, out: Path, backend: Backend, *, image: str | None,
                 scoring_program: Path | None, log: Callable[[str], None], jobs: int = 1) -> None:
        self.comp, self.out, self.backend, self.log = comp, out, backend, log
        self.jobs = max(1, int(jobs))
        self.image = image or comp.docker_image
        self.scoring_program = scoring_program
        self.cache = out / "cache"
        self.columns = {c.key: c for c in comp.leaderboard.columns} if comp.leaderboard else {}

    # ------------------------------------------------------------ inputs
    def source(self, ref: str | None) -> Path | None:
        """A folder holding the bundle item ``ref`` (zips extracted, meta program assembled)."""
        path = self.comp.path(ref)
        if path is None:
            return None
        if needs_meta_program(path):
            target = self.cache / "meta_scoring_program"
            with _ASSEMBLE_LOCK:
                if not target.exists():
                    self.log(f"[*] {ref}: filled with metascore's meta-scoring program")
                    assemble_meta_program(target, self.scoring_program)
            return target
        if not path.exists():
            return None
        return as_folder(path, self.cache / "bundle_items" / safe_name(ref.rstrip("/")))

    def is_meta_task(self, task: Task) -> bool:
        ref = self.source(task.reference_data)
        return ref is not None and (ref / "metascore.yaml").is_file()

    def is_meta_phase(self, phase: Phase) -> bool:
        """Every task of ``phase`` is a meta task (its reference data holds metascore.yaml)."""
        tasks = self.comp.phase_tasks(phase)
        return bool(tasks) and all(self.is_meta_task(t) for t in tasks)

    # ------------------------------------------------------------ one job
    def run_one(self, phase: Phase, sub: Submission, task: Task, task_dir: str) -> JobResult:
        """Prepare the folders of (phase, submission, task), run the job, keep the columns."""
        run_dir = self.out / "runs" / safe_name(phase.name) / sub.candidate / task_dir
        try:
            job = Job(
                phase.name, sub.candidate, task.name, run_dir,
                submission=as_folder(sub.source, self.cache / "submissions" / sub.candidate),
                scoring_program=self.source(task.scoring_program),
                ingestion_program=self.source(task.ingestion_program),
                input_data=self.source(task.input_data),
                reference_data=self.source(task.reference_data),
                ingestion_only_during_scoring=task.ingestion_only_during_scoring,
                time_limit=phase.execution_time_limit, image=self.image,
            )
        except (InputError, ConfigError, OSError) as exc:
            return JobResult(phase.name, sub.candidate, task.name, status_details=str(exc),
                             reason=str(exc), run_dir=str(run_dir))
        result = run_job(job, self.backend)
        if result.finished:
            self.keep_columns(result)
        return result

    # ------------------------------------------------------------ scores
    def keep_columns(self, result: JobResult) -> None:
        """Keep the scores that have a leaderboard column (warn about the others), add the
        computed columns."""
        scores = result.scores
        name = scores_file(result.scoring_output)
        unknown = [k for k in scores if k not in self.columns]
        if unknown and self.columns:
            result.warnings.append(
                f"{name}: key(s) {', '.join(map(repr, unknown))} match no leaderboard column and are "
                f"ignored by Codabench (columns: {', '.join(self.columns)})."
            )
        kept = {k: v for k, v in scores.items() if k in self.columns or not self.columns}
        result.scores, result.computed = kept, self.computed_columns(kept)

    def computed_columns(self, scores: dict[str, float]) -> dict[str, float]:
        """Codabench's per-row ``computation`` (avg, sum, min, max over this row's columns)."""
        ops = {"avg": lambda v: sum(v) / len(v), "sum": sum, "min": min, "max": max}
        by_index = {c.index: c.key for c in self.columns.values()}
        out = {}
        for col in self.columns.values():
            if col.computation in ops:
                values = [scores[by_index[i]] for i in col.computation_indexes if by_index.get(i) in scores]
                if values:
                    out[col.key] = float(ops[col.computation](values))
        return out

    # ------------------------------------------------------------ the whole competition
    def run(self, submissions: list[Submission], report: SiteRun) -> None:
        """Every phase but the meta phases, the outputs tree, then the meta phases; into ``report``."""
        outputs = self.out / "outputs"
        manifest: list[dict[str, Any]] = []
        meta_phases = []
        for phase in self.comp.phases:
            tasks = self.comp.phase_tasks(phase)
            if self.is_meta_phase(phase):
                meta_phases.append(phase)
                continue
            if phase.execution_time_limit > DEFAULT_QUEUE_LIMIT:
                report.warnings.append(
                    f"phase {phase.name!r}: execution_time_limit {phase.execution_time_limit} s; on "
                    f"Codabench's default queue the limit is capped at {DEFAULT_QUEUE_LIMIT} s.")
            dirs = _task_dirs(tasks)
            todo = [(sub, task) for sub in submissions for task in tasks
                    if sub.tasks is None or task.index in sub.tasks]
            for (sub, task), res in zip(todo, self.map_jobs(phase, todo, dirs)):
                report.results.append(res)
                folder = outputs / safe_name(phase.name) / sub.candidate / dirs[task.index]
                if res.finished:
                    write_text(folder / "scores.json", json.dumps(res.scores, indent=2, allow_nan=False) + "\n")
                else:  # shown as a failed run, not as a missing score
                    why = " ".join(str(res.reason or res.status_details).split())
                    for problem in res.prediction_problems:  # the root cause, e.g. a crash
                        lines = problem.strip().splitlines()
                        head = lines[0].split(": Traceback")[0]
                        why += f"; {head}" + (f": {lines[-1].strip()}" if len(lines) > 1 else "")
                    write_text(folder / FAILURE_FILE, f"{res.status} ({res.status_details}): {why}\n")
            for sub in submissions:
                if any(s is sub for s, _ in todo):
                    manifest.append({"phase": phase.name, "candidate": sub.candidate,
                                     "participant": sub.participant, "submitted_at": sub.submitted_at or "",
                                     "is_baseline": "true" if sub.is_baseline else "false"})
        write_text(outputs / "submissions.csv", _csv(manifest))
        write_text(outputs / COLUMNS_FILE, json.dumps(self.columns_file(meta_phases), indent=2) + "\n")
        for phase in meta_phases:
            organizer = Submission("organizer_results", outputs, "organizer", None, False, None, "outputs tree")
            dirs = _task_dirs(self.comp.phase_tasks(phase))
            tasks = self.comp.phase_tasks(phase)
            for task, res in zip(tasks, self.map_jobs(phase, [(organizer, t) for t in tasks], dirs)):
                report.results.append(res)
                report.meta = res
                output = res.scoring_output
                if res.finished and output.is_dir():
                    # a short, stable place for the final leaderboard files
                    final = self.out / "final" if len(tasks) == 1 else self.out / "final" / safe_name(task.name)
                    if final.exists():
                        shutil.rmtree(final)
                    shutil.copytree(output, final, ignore=shutil.ignore_patterns("metadata"))
                    output = final
                for attr, name in (("leaderboard", "leaderboard.csv"), ("detailed_results", "detailed_results.html")):
                    if (output / name).is_file():
                        setattr(report, attr, output / name)
        if self.columns:
            written = {k for r in report.results for k in r.scores}
            for col in self.columns.values():
                if not col.computation and col.key not in written and any(r.finished for r in report.results):
                    report.warnings.append(f"leaderboard column {col.key!r}: no finished scoring run wrote "
                                           "this key; it stays empty on Codabench.")

    def columns_file(self, meta_phases: list[Phase]) -> dict[str, Any]:
        """``codabench.json`` for the outputs tree: the scored phases, their task folders
        and the leaderboard's columns (the meta phases are left out: nothing of theirs is
        in the tree)."""
        board = self.comp.leaderboard
        columns = [{"key": c.key, "title": c.title, "index": c.index, "sorting": c.sorting,
                    "hidden": c.hidden, "computation": c.computation}
                   for c in (board.columns if board else ())]
        phases = []
        for phase in self.comp.phases:
            if phase in meta_phases:
                continue
            tasks = self.comp.phase_tasks(phase)
            dirs = _task_dirs(tasks)
            phases.append({
                "id": phase.index, "name": phase.name,
                "tasks": [{"id": t.index, "name": t.name, "folder": dirs[t.index]} for t in tasks],
                "leaderboard": {"title": board.title if board else "", "columns": columns},
            })
        return {"source": "metascore bundle run", "competition": {"title": self.comp.title},
                "phases": phases}

    def map_jobs(self, phase: Phase, todo: list[tuple[Submission, Task]], dirs: dict[int, str]) -> list[JobResult]:
        """Run independent jobs, ``self.jobs`` at a time; results in the order of ``todo``."""

        def one(item: tuple[Submission, Task]) -> JobResult:
            res = self.run_one(phase, item[0], item[1], dirs[item[1].index])
            self.log(_progress(res))
            return res

        if self.jobs <= 1 or len(todo) <= 1:
            return [one(item) for item in todo]
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            return list(pool.map(one, todo))


def _task_dirs(tasks: list[Task]) -> dict[int, str]:
    names = [t.name for t in tasks]
    return {t.index: safe_name(t.name if names.count(t.name) == 1 else f"{t.name} ({t.index})") for t in tasks}


def _csv(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=MANIFEST_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def _progress(res: JobResult) -> str:
    mark = "+" if res.finished else "-"
    detail = "" if res.finished else f": {res.status_details}"
    return f"[{mark}] {res.phase} / {res.candidate} / {res.task}: {res.status}{detail} ({res.elapsed:.1f} s)"

