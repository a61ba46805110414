"""The platform around the worker: which submission runs in which phase, and what is kept.

**Phases.** A submission is made to one phase (``Submission.phase``: the ``phase`` column
of the submissions manifest, or a ``<phase name>/`` sub-folder) and runs there; it reaches a
later phase only when that phase has ``auto_migrate_to_this_phase``, as on Codabench: the
previous phase's submissions the leaderboard holds (here: those with at least one finished
run, as a scores upload puts a submission on the leaderboard under the ``Force_*`` rules)
are re-run on all of the new phase's tasks. A submission without a phase (baselines,
solutions, a folder without manifest) is a code submission made to every phase that does
not migrate, or, when it is a **result submission** (no ``metadata`` and no ingestion
program to import it), to one phase only: the one its name names (``dev-submission`` ->
"Development Phase", ``final-submission`` -> the last ranked phase,
:func:`~metascore.bundle.site.submissions.phase_named_by`), else the first. Migration takes
every kind of submission, as Codabench's ``Competition.apply_phase_migration`` does (a new
submission with the same data in the next phase, then started): a results zip is scored
against the new phase's reference data, and the scoring program decides whether it fits
(it fails there, as any submission would, when it does not). Solutions run in the phases
that hold their tasks. A migrated copy is a new
submission of the new phase: under the ``Add`` rules no leaderboard holds it (the manifest's
``on_leaderboard`` marks a submission in the phase it was made to), so it is not exported.

**Jobs.** Each task of a multi-task phase is a separate job (as Codabench's child
submissions are), ``jobs`` at a time, each by :func:`~metascore.bundle.worker.job.run_job` on
folders the site prepares (bundle zips extracted once, ``meta_scoring_program/``
assembled, Codabench dataset keys replaced by the folders given with ``data``) in
``<out>/runs/<phase>/<candidate>/<task>/`` whose names are slugs (letters, digits,
``._-``; the real names are in the report). Of a finished job the worker keeps the scores
that have a leaderboard column (the others are a note); the site adds the computed columns
(``avg``, ``sum``, ``min``, ``max`` over the row's columns).

The finished scoring outputs of the submissions the site's results export would hold (the
leaderboard's ``submission_rule`` per phase, :mod:`~metascore.bundle.site.submission_rules`; or
every submission with ``feed="all"``) are collected into ``<out>/outputs/<phase>/
<owner>-<id>/<task>/scores.json`` with ``<out>/outputs/submissions.csv`` (phase, candidate,
participant, ``submitted_at``: the time the site would have created the submission,
:mod:`~metascore.bundle.site.submission_ids`, as ``codabench pull`` writes it, is_baseline) and
``<out>/outputs/codabench.json`` (the competition, when it was "pulled", each phase's dates,
tasks and leaderboard columns with their ``sorting``, the format ``metascore codabench pull``
writes, read by :mod:`metascore.readers.columns`: judges without a direction
take their column's, and the leaderboard's ``submission_rule``); a failed run of an exported
submission leaves ``error.txt`` with its status instead of ``scores.json``, and so does a
baseline whose every run failed, though no export would hold it (a knowing difference: the
meta phase then says that the baseline's run failed, and why); a run that finished after its
prediction step failed (flagged) leaves ``prediction_failed.txt`` next to its scores, so the
meta phase marks its rows (another knowing difference: the site's export holds only scores,
so there the meta phase ranks such a run without a mark); each decision and its reason is
in the report. A **meta phase** (every task's reference data holds
``metascore.yaml``, e.g. the template's "Final ranking") runs last, once: the outputs tree is
its result submission (what an organizer would upload on Codabench), scored by the
meta-scoring program like any other scoring job; its files are copied to ``<out>/final/``.
When no submission of any phase reaches it (e.g. every leaderboard under ``Add``), the meta
phase is not run: its job fails with the reason (the export is empty, and which rule made
it so).

The meta phase sees what the site's results export holds: each submission named
``<owner>-<id>`` with the id the site would give it (:mod:`~metascore.bundle.site.submission_ids`;
a migrated submission gets a new id in the later phase) and no submission time, so its
tie-break ("the earlier submission") reads the submission ids, as the meta-scoring program
does on Codabench (:mod:`metascore.submission_order`). The run report and
``run_summary.json`` keep the local names, with each one's export name (``export[].key``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ConfigError, InputError
from ...readers.columns import COLUMNS_FILE
from ...readers.tree import FAILURE_FILE, FLAG_FILE, MANIFEST, manifest_text
from ..archive import as_folder
from ..worker.backend import Backend
from ..schema.competition import UUID_PATTERN, Competition, Phase, Task
from ..files import copy_clean, copy_job_output, write_text
from ..trees import make_folders
from ..platform.meta_program import needs_meta_program
from ...signature.binding import COMPETITION_FILE, LOCAL_SITE, Binding, competition_token, token_text
from ...signature import OrganizerKey, organizer_key, sign_folder
from .export_tree import failure_text, phase_names, provenance, task_dirs, why_nothing
from .submission_rules import PhaseSubmission, export_decisions
from .submission_ids import SubmissionIds
from .submissions import Submission, is_result_submission, made_to, phase_named_by, safe_name, slug
from ..worker.job import Job, JobResult, run_job

__all__ = ["Site", "SiteRun", "MetaProgramFiller", "DEFAULT_QUEUE_LIMIT", "DEFAULT_FEED", "FEED_ALL", "FEEDS"]

DEFAULT_QUEUE_LIMIT = 600
#: What reaches the meta phase: the site's results export (the default), or every
#: submission that ran.
DEFAULT_FEED = "export"
FEED_ALL = "all"
FEEDS = (DEFAULT_FEED, FEED_ALL)
#: What fills a meta program placeholder: ``fill(folder, key)`` writes the meta-scoring
#: program into ``folder``, carrying the public half of the organizer's ``key`` (the runner
#: gives one: :mod:`metascore.bundle.meta` fills it, the site only says where and when).
MetaProgramFiller = Callable[[Path, OrganizerKey | None], object]
_ASSEMBLE_LOCK = threading.Lock()


@dataclass(kw_only=True)
class SiteRun:
    """What the site produced: every job's result, warnings, the meta-scoring job and files."""

    results: list[JobResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    meta: JobResult | None = None
    leaderboard: Path | None = None
    detailed_results: Path | None = None
    export: list[dict[str, Any]] = field(default_factory=list)  # phase, candidate, exported, reason
    empty_ranking: str | None = None  # the meta phase ranked nobody: why, and the ways out


class Site:
    """Run a parsed competition's phases on ``backend``, writing only inside ``out``."""

    def __init__(self, comp: Competition, out: Path, backend: Backend, *, image: str | None,
                 fill_meta_program: MetaProgramFiller, log: Callable[[str], None], jobs: int = 1,
                 feed: str = DEFAULT_FEED, data: dict[str, Path] | None = None) -> None:
        if feed not in FEEDS:
            raise ConfigError(f"feed {feed!r} is not one of {', '.join(FEEDS)}.")
        self.comp, self.out, self.backend, self.log, self.feed = comp, out, backend, log, feed
        self.jobs = max(1, int(jobs))
        self.result_phases: dict[str, str] = {}  # result submission -> the phase its name names
        self.image = image or comp.docker_image
        self.fill_meta_program = fill_meta_program
        self.data = dict(data or {})
        self.cache = out / "cache"
        self.columns = {c.key: c for c in comp.leaderboard.columns} if comp.leaderboard else {}
        self.run_dirs = _unique_slugs([p.name for p in comp.phases])
        self.ids = SubmissionIds()  # the <owner>-<id> names the site's export gives them
        self.omitted: dict[str, str] = {}  # scores.json keys the meta program left out, and why
        self.key: OrganizerKey | None = None  # the organizer's key, read when a run starts
        self.tokens: dict[str, str] = {}  # meta task reference data -> its competition token

    # ------------------------------------------------------------ inputs
    def source(self, ref: str | None, what: str = "item") -> Path | None:
        """A folder holding the bundle item ``ref`` (zips extracted, meta program assembled).

        Raises :class:`InputError` for a Codabench dataset key not given in ``data``.
        """
        if ref in self.data:
            return as_folder(self.data[ref], self.cache / "data" / slug(ref))
        if ref and UUID_PATTERN.match(ref):
            raise InputError(f"the {what} is the Codabench dataset key {ref!r}, which is not in the "
                             f"bundle; give its files with --data {ref}=PATH.")
        path = self.comp.path(ref)
        if path is None:
            return None
        if needs_meta_program(path):
            target = self.cache / "meta_scoring_program"
            with _ASSEMBLE_LOCK:
                if not target.exists():
                    self.log(f"[*] {ref}: filled with metascore's meta-scoring program")
                    self.fill_meta_program(target, self.key)
            return target
        if not path.exists():
            return None
        return as_folder(path, self.cache / "bundle_items" / safe_name(ref.rstrip("/")), bundle=self.comp.root)

    def submission_folder(self, sub: Submission) -> Path:
        """The submission's folder (a zip extracted within the job's --disk-limit; a sample
        submission of the bundle that a link leads out of it is refused)."""
        where = self.cache / "submissions" / (safe_name(sub.phase) if sub.phase else "_any_phase")
        return as_folder(sub.source, where / sub.candidate,
                         max_size=self.backend.limits.disk, bundle=self.comp.root)

    def pulled_at(self, meta_phases: list[Phase]) -> str | None:
        """When the organizer pulls the export, in the run's calendar: when the (first) meta
        phase opens (:meth:`SubmissionIds.pulled`)."""
        opens = [p.start for p in meta_phases if p.start is not None]
        return self.ids.pulled(min(opens) if opens else None)

    def meta_reference(self, task: Task) -> Path | None:
        """A meta task's reference data with its competition token: the bundle's own when it
        has one (a zip ``bundle zip`` wrote), else a copy with the run's token
        (:func:`_local_token`), as ``bundle zip`` writes one (:mod:`metascore.signature.binding`)."""
        ref = self.source(task.reference_data, f"reference data of task {task.name!r}")
        if ref is None or task.reference_data is None:
            return ref
        with _ASSEMBLE_LOCK:
            if (ref / COMPETITION_FILE).is_file():
                self.tokens[task.reference_data] = competition_token(ref)
                return ref
            copy = self.cache / "meta_reference" / slug(task.reference_data)
            if not copy.exists():
                make_folders(copy.parent)
                copy_clean(ref, copy)
                token = self.tokens.setdefault(task.reference_data, _local_token(self.comp.title, task.reference_data))
                write_text(copy / COMPETITION_FILE, token_text(token, self.comp.title))
            return copy

    def is_meta_task(self, task: Task) -> bool:
        try:
            ref = self.source(task.reference_data)
        except InputError:
            return False
        return ref is not None and (ref / "metascore.yaml").is_file()

    def is_meta_phase(self, phase: Phase) -> bool:
        """Every task of ``phase`` is a meta task (its reference data holds metascore.yaml)."""
        tasks = self.comp.phase_tasks(phase)
        return bool(tasks) and all(self.is_meta_task(t) for t in tasks)

    # ------------------------------------------------------------ one job
    def run_one(self, phase: Phase, sub: Submission, task: Task, task_dir: str) -> JobResult:
        """Prepare the folders of (phase, submission, task), run the job, add computed columns."""
        run_dir = self.out / "runs" / self.run_dirs[phase.name] / slug(sub.candidate) / task_dir
        try:
            job = Job(
                phase.name, sub.candidate, task.name, run_dir,
                submission=self.submission_folder(sub),
                scoring_program=self.source(task.scoring_program, f"scoring program of task {task.name!r}"),
                ingestion_program=self.source(task.ingestion_program, f"ingestion program of task {task.name!r}"),
                input_data=self.source(task.input_data, f"input data of task {task.name!r}"),
                reference_data=(self.meta_reference(task) if self.is_meta_task(task) else
                                self.source(task.reference_data, f"reference data of task {task.name!r}")),
                ingestion_only_during_scoring=task.ingestion_only_during_scoring,
                time_limit=phase.execution_time_limit, image=self.image, columns=tuple(self.columns),
            )
        except (InputError, ConfigError, OSError) as exc:
            return JobResult(phase.name, sub.candidate, task.name, status_details=str(exc),
                             reason=str(exc), run_dir=str(run_dir))
        result = run_job(job, self.backend)
        if result.finished:
            result.computed = self.computed_columns(result.scores)
        return result

    # ------------------------------------------------------------ scores
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

    # ------------------------------------------------------------ which submission runs where
    def is_result(self, sub: Submission, phase: Phase) -> bool:
        """A result submission in ``phase`` (:func:`~metascore.bundle.site.submissions.is_result_submission`)."""
        return is_result_submission(sub, self.comp, phase)

    def submitted_to(self, sub: Submission, phase: Phase, first: Phase) -> bool:
        """Whether ``sub`` was made to ``phase`` (:func:`~metascore.bundle.site.submissions.made_to`)."""
        loose = sub.phase is None and sub.tasks is None and self.is_result(sub, phase)
        return made_to(sub, phase, first,
                       result_phase=self.result_phases.get(sub.candidate, first.name) if loose else None)

    # ------------------------------------------------------------ the whole competition
    def run(self, submissions: list[Submission], report: SiteRun) -> None:
        """Every phase but the meta phases, the outputs tree, then the meta phases; into ``report``."""
        outputs = self.out / "outputs"
        manifest: list[dict[str, Any]] = []
        meta_phases = [p for p in self.comp.phases if self.is_meta_phase(p)]
        regular = [p for p in self.comp.phases if p not in meta_phases]
        self.key = organizer_key() if meta_phases else None  # a key that cannot be had stops us now
        held: list[Submission] = []  # the previous phase's submissions the leaderboard holds
        previous: Phase | None = None
        loose = [s for s in submissions if s.phase is None and s.tasks is None
                 and len(regular) > 1 and self.is_result(s, regular[0])]
        # a result submission without a phase runs in the phase its name names, else the first
        self.result_phases = {s.candidate: named for s in loose
                              if (named := phase_named_by(s.candidate, [p.name for p in regular]))}
        for phase in regular:
            entries = [s for s in submissions if self.submitted_to(s, phase, regular[0])]
            moved: list[Submission] = []
            if phase.auto_migrate and previous is not None and previous.index == phase.index - 1:
                moved = self.migrated(held, entries, phase)
            tasks = self.comp.phase_tasks(phase)
            self.ids.number(phase.name, previous.name if previous else None, moved, entries, {
                s.candidate: sum(s.tasks is None or t.index in s.tasks for t in tasks)
                for s in entries + moved}, opens=phase.start)
            held = self.run_phase(phase, entries + moved, outputs, manifest, report,
                                  migrated={s.candidate for s in moved})
            previous = phase
        if self.result_phases:
            report.warnings.append(
                "result submission(s) without a phase run in the phase their name names: "
                + ", ".join(f"{c} in {p!r}" for c, p in self.result_phases.items())
                + ". Give each its phase in the submissions manifest ('phase' column) or put "
                "it in a <phase name>/ sub-folder to choose otherwise.")
        unplaced = [s.candidate for s in loose if s.candidate not in self.result_phases]
        if unplaced:
            report.warnings.append(
                f"result submission(s) {', '.join(unplaced)} have no phase: made to {regular[0].name!r}, "
                "the first phase, and no other (a results zip is made for one phase's data; "
                "migration may take it further). Give each its phase in the submissions manifest "
                "('phase' column) or put it in a <phase name>/ sub-folder.")
        write_text(outputs / MANIFEST, manifest_text(
            (r["phase"], r["candidate"], r["participant"], r["submitted_at"], r["is_baseline"]) for r in manifest))
        write_text(outputs / COLUMNS_FILE, json.dumps(provenance(self.comp, meta_phases, self.pulled_at(meta_phases)), indent=2) + "\n")
        empty = self.empty_export(regular, manifest, report)
        for phase in meta_phases:
            if empty is not None:
                self.refuse_meta_phase(phase, empty, report)
                continue
            self.run_meta_phase(phase, outputs, report)
        if self.columns:
            written = {k for r in report.results for k in r.scores}
            for col in self.columns.values():
                if col.computation or col.dropped_computation:  # computed, or empty as said
                    continue
                if col.key not in written and any(r.finished for r in report.results):
                    why = self.omitted.get(col.key)
                    report.warnings.append(
                        f"leaderboard column {col.key!r}: " + (
                            f"the meta-scoring program left it out ({why}); it stays empty on Codabench, "
                            "and its detailed results say why." if why else
                            "no finished scoring run wrote this key; it stays empty on Codabench."))

    def export(self, phase: Phase, todo: list[tuple[Submission, Task]], results: list[JobResult],
               report: SiteRun, migrated: set[str] = frozenset()) -> set[str]:
        """The candidates of ``phase`` that reach the meta phase, each decision in ``report``.

        ``feed="export"``: what the site's results export would hold under the leaderboard's
        ``submission_rule`` (:func:`~metascore.bundle.site.submission_rules.export_decisions`);
        ``feed="all"``: every submission that ran (a failed one has no scores in the tree).
        ``migrated``: the candidates migrated into ``phase`` (new submissions there: the
        manifest's ``on_leaderboard`` does not carry over).
        """
        ran: dict[str, tuple[Submission, list[JobResult]]] = {}
        for (sub, _), res in zip(todo, results):
            ran.setdefault(sub.candidate, (sub, []))[1].append(res)
        if self.feed == FEED_ALL or self.comp.leaderboard is None:
            report.export.extend({"phase": phase.name, "candidate": c,
                                  "key": self.ids.key(phase.name, c), "exported": True,
                                  "reason": "--feed all: every submission that ran"} for c in ran)
            return set(ran)
        entries = []
        for sub, runs in ran.values():
            scores: dict[str, float] = {}
            for res in runs:
                if res.finished:  # a multi-task submission's scores add up, as the site's Sum
                    for key, value in {**res.scores, **res.computed}.items():
                        scores[key] = scores.get(key, 0.0) + value
            moved = sub.candidate in migrated
            entries.append(PhaseSubmission(sub.candidate, sub.participant, sub.submitted_at,
                                           any(r.finished for r in runs), scores,
                                           sub.on_leaderboard and not moved, moved))
        decisions = export_decisions(entries, self.comp.leaderboard)
        report.export.extend({"phase": phase.name, "candidate": d.candidate,
                              "key": self.ids.key(phase.name, d.candidate), "exported": d.exported,
                              "migrated": d.candidate in migrated, "reason": d.reason}
                             for d in decisions)
        return {d.candidate for d in decisions if d.exported}

    def migrated(self, held: list[Submission], entries: list[Submission], phase: Phase) -> list[Submission]:
        """The previous phase's held submissions that ``auto_migrate_to_this_phase`` brings
        into ``phase``, code and results alike (the new phase's scoring program decides
        whether a results zip fits its reference data)."""
        here = {s.candidate for s in entries}
        out, bound = [], []
        for sub in held:
            if sub.candidate in here:
                continue
            if sub.tasks is not None and not any(i in phase.tasks for i in sub.tasks):
                bound.append(f"{sub.candidate} (its task(s) {', '.join(map(str, sub.tasks))} are not "
                             "in this phase)")
                continue
            out.append(sub)
        if out or bound:
            self.log(f"[*] {phase.name}: {len(out)} submission(s) migrated from the previous phase"
                     + (f"; not migrated: {'; '.join(bound)}" if bound else ""))
        return out

    def run_phase(self, phase: Phase, entries: list[Submission], outputs: Path,
                  manifest: list[dict[str, Any]], report: SiteRun,
                  migrated: set[str] = frozenset()) -> list[Submission]:
        """Run ``entries`` on the phase's tasks (``migrated``: the candidates among them that
        migration brought); write what the export holds to the outputs tree; return the
        submissions the leaderboard holds (those that can migrate)."""
        tasks = self.comp.phase_tasks(phase)
        if phase.execution_time_limit > DEFAULT_QUEUE_LIMIT:
            report.warnings.append(
                f"phase {phase.name!r}: execution_time_limit {phase.execution_time_limit} s; on "
                f"Codabench's default queue the limit is capped at {DEFAULT_QUEUE_LIMIT} s.")
        dirs = task_dirs(tasks)
        todo = [(sub, task) for sub in entries for task in tasks
                if sub.tasks is None or task.index in sub.tasks]
        results = self.map_jobs(phase, todo, _unique_slugs([t.name for t in tasks], [t.index for t in tasks]))
        finished: dict[str, bool] = {}
        for (sub, task), res in zip(todo, results):
            report.results.append(res)
            finished[sub.candidate] = finished.get(sub.candidate, False) or res.finished
        exported = self.export(phase, todo, results, report, migrated)
        # a baseline whose every run failed is on no leaderboard, hence in no export; its
        # failure goes into the tree all the same, so the meta phase says why it has no
        # baseline (rather than that the baseline does not exist)
        failed_baselines = {sub.candidate for sub in entries if sub.is_baseline
                            and sub.candidate in finished and not finished[sub.candidate]}
        for sub in entries:
            if sub.candidate in failed_baselines:
                first = next(r for (s, _), r in zip(todo, results) if s.candidate == sub.candidate)
                report.warnings.append(
                    f"phase {phase.name!r}: baseline {sub.candidate!r} (participant "
                    f"{sub.participant!r}) failed ({failure_text(first).strip()}); a failed "
                    "submission is on no leaderboard, so on Codabench the export would not hold "
                    "it; its error.txt is left in the outputs tree so the meta phase can say why.")
        for (sub, task), res in zip(todo, results):
            if sub.candidate not in exported and sub.candidate not in failed_baselines:
                continue
            key = self.ids.key(phase.name, sub.candidate)  # the export's name: <owner>-<id>
            folder = outputs / safe_name(phase.name) / key / dirs[task.index]
            if res.finished:
                write_text(folder / "scores.json", json.dumps(res.scores, indent=2, allow_nan=False) + "\n")
                if res.flagged:  # the meta phase marks its row (the site's export cannot)
                    write_text(folder / FLAG_FILE, res.prediction_problems[0].splitlines()[0] + "\n")
            else:  # shown as a failed run, not as a missing score
                write_text(folder / FAILURE_FILE, failure_text(res))
        for sub in entries:
            if sub.candidate in exported or sub.candidate in failed_baselines:
                # what `codabench pull` writes: the export's name <owner>-<id> and the time
                # the site created the submission
                manifest.append({"phase": phase.name,
                                 "candidate": self.ids.key(phase.name, sub.candidate),
                                 "participant": sub.participant,
                                 "submitted_at": self.ids.created(phase.name, sub.candidate),
                                 "is_baseline": sub.is_baseline})
        # what migrates: the submissions the leaderboard holds (the export's, or every
        # finished one with feed="all")
        return [sub for sub in entries if finished.get(sub.candidate) and sub.candidate in exported]

    def empty_export(self, regular: list[Phase], manifest: list[dict[str, Any]],
                     report: SiteRun) -> str | None:
        """Why nothing reaches the meta phase (None when something does); the phases that
        send nothing while others do get one warning saying why."""
        rule = self.comp.leaderboard.submission_rule if self.comp.leaderboard else None
        sent = {row["phase"] for row in manifest}
        silent = [p.name for p in regular if p.name not in sent]
        if not silent:
            return None
        why = why_nothing(silent, report.export, rule, self.feed, self.comp.version)
        if manifest:
            report.warnings.append(f"no submission of {phase_names(silent)} reaches the meta phase: {why}")
            return None
        return ("the results export is empty: no submission of any phase reaches it"
                + (f" ({phase_names(silent)})" if len(silent) > 1 else f" (phase {silent[0]!r})") + f": {why}")

    def refuse_meta_phase(self, phase: Phase, why: str, report: SiteRun) -> None:
        """The meta phase has nothing to rank: a failed job per task, saying why, instead of
        a meta-scoring program that cannot read an empty tree."""
        for task in self.comp.phase_tasks(phase):
            res = JobResult(phase.name, "organizer_results", task.name,
                            status_details="the results export is empty", reason=why)
            report.results.append(res)
            report.meta = res
            self.log(_progress(res))

    def run_meta_phase(self, phase: Phase, outputs: Path, report: SiteRun) -> None:
        """Score the outputs tree with the meta phase's program(s); keep its files in ``final/``.
        The tree is signed first with the organizer's key on this machine, for the meta tasks'
        competition tokens, as ``metascore codabench submit`` signs the export on the site
        (:mod:`metascore.signature`)."""
        tasks = self.comp.phase_tasks(phase)
        tokens = tuple(dict.fromkeys(competition_token(ref) for t in tasks if (ref := self.meta_reference(t)) is not None))
        pulled = self.pulled_at([phase])
        sign_folder(outputs, self.key or organizer_key(),
                    Binding(LOCAL_SITE, None, phase.name, None, tokens, pulled_at=pulled), pulled or "")
        organizer = Submission("organizer_results", outputs, "organizer", None, False, None, "outputs tree")
        dirs = _unique_slugs([t.name for t in tasks], [t.index for t in tasks])
        for task, res in zip(tasks, self.map_jobs(phase, [(organizer, t) for t in tasks], dirs)):
            report.results.append(res)
            report.meta = res
            output = res.scoring_output
            if res.finished and output.is_dir():
                # a short, stable place for the final leaderboard files
                final = self.out / "final" if len(tasks) == 1 else self.out / "final" / safe_name(task.name)
                if final.exists():
                    shutil.rmtree(final)
                for left in copy_job_output(output, final):
                    res.warnings.append(f"meta-scoring output: {left} is not copied to {final}.")
                (final / "metadata").unlink(missing_ok=True)
                output = final
                board = _read_json(final / "leaderboard.json")
                self.omitted.update(_omitted_scores(board))
                message = (board.get("filter") or {}).get("message") if isinstance(board, dict) else None
                if message:
                    report.empty_ranking = str(message)
            for attr, name in (("leaderboard", "leaderboard.csv"), ("detailed_results", "detailed_results.html")):
                if (output / name).is_file():
                    setattr(report, attr, output / name)

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


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _omitted_scores(board: Any) -> dict[str, str]:
    """The ``scores.json`` keys the meta-scoring program left out, and why (its
    ``leaderboard.json`` messages "scores.json omits 'KEY': REASON.")."""
    messages = board.get("messages") if isinstance(board, dict) else None
    if not isinstance(messages, list):
        return {}
    out = {}
    for text in messages:
        head, _, why = str(text).partition("': ")
        if head.startswith(_OMITS) and why:
            out[head[len(_OMITS):]] = why.rstrip(".")
    return out


_OMITS = "scores.json omits '"


def _local_token(title: str, ref: str) -> str:
    """The competition token of a local run's meta task: derived from the bundle, so that two
    runs write the same files (``bundle zip`` draws a random one for each upload, which no
    local run's export can name)."""
    return hashlib.sha256(f"metascore local run\0{title}\0{ref}".encode("utf-8")).hexdigest()[:32]


def _unique_slugs(names: list[str], keys: list[Any] | None = None) -> dict[Any, str]:
    """``key -> slug(name)``, made unique with ``-<n>`` (keys: the names by default)."""
    out: dict[Any, str] = {}
    used: set[str] = set()
    for key, name in zip(keys if keys is not None else names, names):
        base = slug(name)
        folder, n = base, 2
        while folder in used:
            folder, n = f"{base}-{n}", n + 1
        used.add(folder)
        out[key] = folder
    return out


def _progress(res: JobResult) -> str:
    mark, detail = ("+", "") if res.finished else ("-", f": {res.status_details}")
    return f"[{mark}] {res.phase} / {res.candidate} / {res.task}: {res.status}{detail} ({res.elapsed:.1f} s)"


