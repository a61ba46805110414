"""The mock bundle runner: run a whole competition locally, as Codabench's compute worker would.

:func:`run_bundle` checks the bundle (:func:`~metascore.bundle.schema.load.load_competition`),
collects its submissions (:mod:`~metascore.bundle.site.submissions`), and lets the site
(:mod:`~metascore.bundle.site.server`) run every phase x submission x task, then the meta phase;
each job is the worker's (:mod:`~metascore.bundle.worker.job`: sandbox, mounts, placeholders,
time limit, ``metadata`` file, scores file) on a backend (:mod:`~metascore.bundle.worker.backend`:
``local`` subprocesses or ``docker`` containers). :func:`format_report` prints the
:class:`RunReport`. The runner writes only inside ``out``:
``<out>/runs/<phase>/<candidate>/<task>/{prediction,scoring}/`` (each job's sandbox and
logs; folder names are slugs of the names), ``<out>/outputs/`` (the tree fed to the meta
phase), ``<out>/final/`` (the
meta-scoring files) and ``<out>/run_summary.json``.

Where this differs from the v2 worker, knowingly:

- Failures say why (stderr tail, the bad score value) where the platform often shows only a
  status; a ``scores.txt`` that is not a ``key: value`` mapping, a NaN/Infinity, a value
  Codabench's ``DecimalField`` cannot store (abs >= 1e10) or a non-numeric value fail the job
  here, while on the platform the submission shows ``Finished`` with lost scores.
- A phase's ``execution_time_limit`` is used as it is (as on a custom queue); the default
  queue caps it at 600 s (a warning says so). A job past it fails, as the platform
  documents, where the v2 worker (c7dbc756) lets it run to its end and keeps its scores
  when the limit expires while it streams the job's logs (its own ``except Exception``
  catches the alarm's exception): the failure's reason says so
  (:data:`~metascore.bundle.worker.job.LAX_TIME_LIMIT_NOTE`).
- ``/app/data`` (a worker-host folder) is not mounted; there is no cache, no Docker image
  pull, no websocket, no ``detailed_results`` upload (the file stays in the output).
- A run that finished after its prediction step failed (flagged) is marked by the local
  meta phase too (``prediction_failed.txt`` in the outputs tree: a ``prediction_failed``
  column, a badge, a message); the site's export holds only scores, so there the meta
  phase ranks it unmarked.
- A submission runs in the phase it was made for and reaches later phases through
  ``auto_migrate_to_this_phase``, where "on the leaderboard" means "a task finished";
  a submission without a phase is made to every phase that does not migrate, a result
  submission without a phase to the first phase only, and result submissions are never
  migrated (see :mod:`~metascore.bundle.site.server`); a migrated submission is a new one in its
  new phase, on no leaderboard under the ``Add`` rules (as on the site). Each task of a multi-task phase is a
  separate job (as Codabench's child submissions are). What reaches the meta phase follows the leaderboard's
  ``submission_rule`` per phase, applied to whole submissions: the loss of task scores of
  multi-task phases under ``Force_Last`` (codabench#2211) is not reproduced (``bundle check``
  warns about it).
- The meta phase gets the export's names ``<owner>-<id>``; the ids follow submission order
  and the migrated copies are numbered in the order of their development ids, where the
  site migrates in an order nothing fixes (PostgreSQL's row order,
  :mod:`~metascore.bundle.site.submission_ids`): a final id may differ from the site's, never the
  order of a tie (:mod:`metascore.submission_order`).
- The local backend runs each job in a bwrap sandbox with the worker's ``/app`` layout, or
  where bwrap cannot run, with rewritten command paths and hardly any isolation (see
  :mod:`metascore.bundle.worker.local`; run as root, it runs ``--submissions`` as a user of
  their own); its programs run with this Python or the environment ``metascore bundle env``
  built for the image, not the image itself.
- Nothing a job leaves keeps a set-id bit, a device node, a file capability or a write bit
  for the group or others (the worker zips its output as it is):
  :mod:`~metascore.bundle.worker.leftovers`; nothing the runner writes in ``--out`` is
  writable by others either, whatever the umask (:mod:`~metascore.bundle.trees`).
"""

from __future__ import annotations

import csv
import json
import os
import re
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, InputError
from ..signature import OrganizerKey
from .archive import extract_bundle
from .worker.backend import Backend
from .schema.competition import Competition
from .files import write_text
from .check.image_checks import local_run_note
from .check.meta_config import find_meta_configs
from .worker.image_probe import LOCAL_NOTICE, probe_image
from .worker.machine_setup import install_bubblewrap
from .worker.pyenv import build_env, packages_for
from .worker.limits import Limits
from .worker.local import DEFAULT_SANDBOX
from .worker.backends import DEFAULT_BACKEND, get_backend
from .meta.program_folder import assemble_meta_program
from .platform.commands import name_bundle
from .platform.meta_program import meta_python_in, needs_meta_program
from .schema.load import load_competition
from .site.server import DEFAULT_FEED, MetaProgramFiller, Site, SiteRun
from .site.submissions import SUBMISSIONS_FOLDER, Submission, beside_bundle, collect_submissions
from .trees import make_folders, remove_tree
from .worker.job import JobResult

__all__ = ["RunReport", "run_bundle", "meta_image_report", "format_report", "default_jobs", "DEFAULT_OUT",
           "JOBS_CAP"]

#: The output folder of ``bundle run``.
DEFAULT_OUT = "runs"
#: The default number of jobs at a time: the number of CPUs, at most this.
JOBS_CAP = 4


@dataclass(kw_only=True)
class RunReport(SiteRun):
    """Everything a run produced: per-job results, warnings and the final ranking files."""

    out: Path
    backend: str
    #: the bundle as given (a folder or zip), which the commands the report proposes name
    bundle: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": str(self.out), "backend": self.backend,
            "results": [asdict(r) for r in self.results], "warnings": self.warnings,
            "meta": asdict(self.meta) if self.meta else None,
            "leaderboard": str(self.leaderboard) if self.leaderboard else None,
            "detailed_results": str(self.detailed_results) if self.detailed_results else None,
            "export": self.export, "empty_ranking": self.empty_ranking,
            "failed_phases": self.failed_phases(),
            "flagged": [f"{r.phase} / {r.candidate} / {r.task}" for r in self.results if r.flagged],
        }

    def failed_phases(self) -> list[str]:
        """The phases that ran at least one job and finished none, in run order."""
        phases = dict.fromkeys(r.phase for r in self.results)
        return [p for p in phases if not any(r.finished for r in self.results if r.phase == p)]


def default_jobs() -> int:
    """How many jobs run at the same time without ``--jobs``: the CPUs, at most :data:`JOBS_CAP`."""
    return min(JOBS_CAP, os.cpu_count() or 1)


# ===================================================================== entry point
def run_bundle(
    bundle: str | os.PathLike[str],
    out: str | os.PathLike[str] = DEFAULT_OUT,
    *,
    backend: str = DEFAULT_BACKEND,
    image: str | None = None,
    submissions: str | os.PathLike[str] | None = None,
    scoring_program: str | os.PathLike[str] | None = None,
    network: bool = False,
    jobs: int | None = None,
    feed: str = DEFAULT_FEED,
    data: Mapping[str, str | os.PathLike[str]] | None = None,
    log: Callable[[str], None] = lambda _: None,
    sandbox: str = DEFAULT_SANDBOX,
    python_env: str | os.PathLike[str] | None = None,
    limits: Limits | None = None,
    meta_python: str | None = None,
    setup: bool = False,
) -> RunReport:
    """Run every phase x submission x task of a bundle (folder or zip), then the meta phase.

    Parameters
    ----------
    bundle : a bundle folder or zip (``competition.yaml`` at its root).
    out : output folder; the runner writes only inside it (``runs/``, ``outputs/``,
        ``cache/``, ``bundle/`` for a zipped bundle, ``final/`` (a copy of the
        meta-scoring outputs: leaderboard files and detailed_results.html),
        ``run_summary.json``).
    backend : ``"local"`` (subprocesses) or ``"docker"``.
    image : container image for the docker backend (default: the bundle's ``docker_image``).
    submissions : a folder of submission zips/folders (replaces the bundle's
        ``sample_submissions/``; starting-kit baselines and solutions still run).
    scoring_program : the meta-scoring program folder used to fill
        ``meta_scoring_program/`` (default: the repository's ``scoring_program/``).
    network : let the jobs use the network (off by default on both backends; the local
        backend's rewrite mode cannot block it).
    jobs : how many (submission, task) jobs run at the same time (default: the number of
        CPUs, at most 4); each job still runs its programs under its own timer.
    feed : what reaches the meta phase: ``"export"`` (default), what the site's results
        export would hold under the leaderboard's ``submission_rule`` (Force_Last: each
        participant's last finished submission; Force_Best: each participant's best;
        Force_Latest_Multiple: every finished one; Add: those marked ``on_leaderboard`` in
        the submissions manifest); ``"all"``: every submission that ran.
    data : Codabench dataset keys the bundle refers to instead of files (``input_data``,
        ``reference_data``, programs), each with the zip or folder that replaces it; a job
        that needs a key not given here fails with a message naming it.
    log : called with one progress line per job.
    sandbox : local backend: ``"auto"`` (bwrap where it runs), ``"bwrap"`` or ``"rewrite"``.
    python_env : local backend: the virtual environment (or interpreter) that runs
        ``python``/``python3``; by default the one ``metascore bundle env`` built for the
        bundle's image, else this Python.
    limits : per-job memory, process, disk and log limits (default
        :class:`~metascore.bundle.worker.limits.Limits`).
    meta_python : how ``meta_scoring_program/`` is filled: ``"bundled"`` (its own Python;
        default ``$METASCORE_META_PYTHON``, else bundled) or ``"image"`` (the image's python3).
    setup : local backend: install what a first run lacks, once (bubblewrap,
        :func:`~metascore.bundle.worker.machine_setup.install_bubblewrap`; the image's
        packages, as ``bundle env`` builds them, when the programs need them:
        :func:`_local_packages`); without it, a run that lacks them says so first.
    """
    bundle, out, given_bundle = Path(bundle), Path(out).absolute(), os.fspath(bundle)
    given = _given_data(bundle, data)
    if setup and backend == "local" and sandbox != "rewrite":
        install_bubblewrap(log)
    engine = get_backend(backend, image=image, network=network, sandbox=sandbox,
                         python_env=python_env, limits=limits, foreign=submissions is not None)
    _refuse_unisolated(engine, submissions)
    bundle, comp, zipped = _fresh_out(bundle, out)
    image = image or comp.docker_image
    engine.check_run(out, image)  # e.g. its jobs' own user must reach --out
    fill = _meta_filler(Path(scoring_program) if scoring_program else None, meta_python, engine, image, log)
    site = Site(comp, out, engine, image=image, fill_meta_program=fill, log=log,
                jobs=jobs if jobs is not None else default_jobs(), feed=feed, data=given)
    report = RunReport(out=out, backend=backend, warnings=list(comp.warnings), bundle=given_bundle)
    if not engine.capabilities.runs_image and python_env is None:
        report.warnings.extend(_local_packages(comp, setup, log))
    if zipped:
        report.warnings.extend(_zipped_placeholders(comp))
    subs = _submissions(comp, site, engine, report, submissions, zipped, Path(given_bundle), out, log)
    log(f"[*] {comp.title}: {len(comp.phases)} phase(s), {len(subs)} submission(s), backend {backend}")
    log(f"[*] {engine.describe(image)}")
    report.warnings.extend(meta_image_report(site, engine, image, log))
    site.run(subs, report)
    write_text(out / "run_summary.json", json.dumps(report.to_dict(), indent=2, allow_nan=False) + "\n")
    return report


def _given_data(bundle: Path, data: Mapping[str, str | os.PathLike[str]] | None) -> dict[str, Path]:
    """The bundle checked to exist, and the ``--data`` replacements, each an existing path."""
    if bundle.is_file() and not zipfile.is_zipfile(bundle):
        raise InputError(f"{bundle}: not a bundle folder or zip file.")
    if not bundle.exists():
        raise InputError(f"{bundle}: no such bundle folder or zip file.")
    given = {str(key): Path(path).absolute() for key, path in (data or {}).items()}
    for key, path in given.items():
        if not path.exists():
            raise InputError(f"--data {key}={path}: no such file or folder.")
    return given


def _refuse_unisolated(engine: Backend, submissions: str | os.PathLike[str] | None) -> None:
    """Participants' submissions (``--submissions``) never run without the sandbox unless the
    organizer says so (``--sandbox rewrite``)."""
    missing = engine.capabilities.sandbox_missing  # e.g. the local rewrite mode taken for lack of bwrap
    if submissions is not None and missing:
        raise ConfigError(
            f"--submissions: the local sandbox cannot run here ({missing}), and without it "
            "these submissions would run unisolated, as your user; install bubblewrap (apt-get "
            "install bubblewrap, or --setup does) or use --backend docker, or give --sandbox "
            "rewrite to run them so.")


def _fresh_out(bundle: Path, out: Path) -> tuple[Path, Competition, bool]:
    """``out`` made ready (the runner's folders of an earlier run removed) and the bundle read:
    ``(bundle folder, competition, whether it came zipped)``. A folder is checked (its links
    first) before anything is written; a zip's link members and ``competition.yaml`` are
    refused before it is extracted (into ``out/bundle``)."""
    zipped = bundle.is_file()
    comp = None if zipped else load_competition(bundle)
    make_folders(out)  # rwxr-xr-x at most, whatever the umask (and left as it is when it exists)
    for name in ("runs", "outputs", "cache", "bundle", "final"):
        if (out / name).exists():
            if bundle.resolve().is_relative_to((out / name).resolve()):
                raise InputError(f"{bundle} is inside {out / name}, which the runner rewrites; "
                                 "choose another --out.")
            remove_tree(out / name)  # any depth: a job's output can be deeper than rmtree goes
    if zipped:
        extract_bundle(bundle, out / "bundle")
        bundle = out / "bundle"
        comp = load_competition(bundle)
    if comp.leaderboard is None:
        raise ConfigError(f"{bundle}: the competition has no leaderboard.")
    return bundle, comp, zipped


def _submissions(comp: Competition, site: Site, engine: Backend, report: RunReport,
                 submissions: str | os.PathLike[str] | None, zipped: bool, given_bundle: Path, out: Path,
                 log: Callable[[str], None]) -> list[Submission]:
    """The submissions the run makes (the bundle's, or ``--submissions``), what they warn of
    in ``report``, and what the backend says once."""
    subs, warnings = collect_submissions(comp, Path(submissions) if submissions else None, cache=out / "cache")
    report.warnings.extend(warnings)
    if engine.notice:  # e.g. what the local backend's rewrite mode cannot do, said once
        report.warnings.append(engine.notice)
        log(f"[!] {engine.notice}")
    if submissions is None and subs and all(s.is_baseline for s in subs):
        _only_baselines(comp, site, subs, zipped, given_bundle, log)
    if not subs:
        report.warnings.append("no submissions to run: add a starting kit, solutions, "
                               "sample_submissions/ or --submissions.")
    return subs


def _local_packages(comp: Competition, setup: bool, log: Callable[[str], None]) -> list[str]:
    """A local run whose programs import modules the image carries and this Python lacks
    (:func:`~metascore.bundle.check.image_checks.local_run_note`): with ``setup``, the
    image's packages built as ``bundle env`` builds them; else the note, said before any job
    runs (each would fail on them)."""
    note = local_run_note(comp, find_meta_configs(comp))
    if note is None:
        return []
    if not setup:
        log(f"[!] {note}")
        return [note]
    packages = packages_for(comp.docker_image)
    if packages is None:  # a note is only said for an image with a package list
        return []
    log(f"[*] --setup: building the packages of {comp.docker_image} (once; minutes), as "
        "`metascore bundle env` does")
    build_env(comp.docker_image, packages, log=log)
    return []


def _meta_filler(scoring_program: Path | None, meta_python: str | None, engine: Backend, image: str,
                 log: Callable[[str], None]) -> MetaProgramFiller:
    """How this run fills a meta program placeholder: the meta-scoring program
    (:func:`~metascore.bundle.meta.program_folder.assemble_meta_program`) run as
    ``--meta-python`` says, ``auto`` deciding by the image where the backend runs it
    (:attr:`~metascore.bundle.worker.backend.Capabilities.runs_image`), else with this
    machine's Python; decided when a placeholder is filled."""

    def fill(target: Path, key: OrganizerKey | None) -> None:
        python = meta_python_in(image, meta_python, in_image=engine.capabilities.runs_image)
        assemble_meta_program(target, scoring_program, python=python, log=log, key=key)

    return fill


def meta_image_report(site: Site, backend: Backend, image: str, log: Callable[[str], None]) -> list[str]:
    """Before a run: a backend that runs the programs in the image
    (:attr:`~metascore.bundle.worker.backend.Capabilities.runs_image`) probes ``image`` with
    each meta phase's program, as the run fills it (:func:`~metascore.bundle.worker.image_probe.probe_image`),
    and logs the answer; another logs :data:`~metascore.bundle.worker.image_probe.LOCAL_NOTICE`.
    Returns the warnings (a probe that failed: the meta phase will fail the same way)."""
    comp = site.comp
    tasks = {id(t): t for p in comp.phases if site.is_meta_phase(p) for t in comp.phase_tasks(p)}
    if not tasks:
        return []
    if not backend.capabilities.runs_image:
        log(f"[*] note: {LOCAL_NOTICE.format(image=image)}")
        return []
    warnings, seen = [], set()
    for task in tasks.values():
        program = site.source(task.scoring_program)
        if program is None or program in seen:
            continue
        seen.add(program)
        probe = probe_image(backend, image, program)
        log(("[*] " if probe.ok else "[!] ") + probe.line())
        if not probe.ok:
            warnings.append(probe.line())
    return warnings


def _zipped_placeholders(comp: Competition) -> list[str]:
    """A zip whose ``meta_scoring_program/`` is the placeholder (absent or only a README):
    this run fills it, but on Codabench the worker would find no program there."""
    out = []
    for task in comp.tasks.values():
        path = comp.path(task.scoring_program)
        if path is not None and needs_meta_program(path):
            phases = ", ".join(repr(p.name) for p in comp.phases if task.index in p.tasks)
            out.append(f"the zip's {task.scoring_program!r} (task {task.name!r}) is the placeholder "
                       "that `metascore bundle zip` fills: this run fills it with the meta-scoring "
                       "program, but uploaded as it is, the worker finds no program there and the "
                       f"submissions of phase(s) {phases} fail on Codabench ('Execution Time Limit "
                       "exceeded'); upload the zip that `metascore bundle zip` makes.")
    return out


def _only_baselines(comp: Competition, site: Site, subs: list[Submission], zipped: bool, bundle: Path,
                    log: Callable[[str], None]) -> None:
    """Without --submissions, only baselines: say so now, what a submissions folder holds,
    and the submissions beside the bundle; refuse when a meta phase would have nobody to rank
    (it would fail after every other job ran)."""
    where = ("a zipped bundle carries no sample submissions (metascore bundle zip leaves "
             "sample_submissions/ out)") if zipped else "the bundle has no sample_submissions/"
    names = ", ".join(s.candidate for s in subs)
    beside = beside_bundle(bundle, [s for s in subs if s.origin == "starting kit"])
    how = f"give --submissions DIR: {SUBMISSIONS_FOLDER}" + (f". {beside[0].upper()}{beside[1:]}" if beside else "")
    meta = [p.name for p in comp.phases if site.is_meta_phase(p)]
    if meta:
        raise InputError(
            f"only the baseline(s) {names} would run: {where}, so the meta-ranking phase "
            f"{meta[0]!r} would have no participant to rank; {how}.")
    log(f"[!] only the baseline(s) {names} will run: {where}; to run participants' submissions "
        f"too, {how}.")


def format_report(report: RunReport) -> str:
    """The summary table (phase, submission with the name the rankings give it, task,
    status, scores, elapsed), each failed or flagged job with its reason, the notes (one per
    distinct text, with the runs it is about), what reached the meta phase, and the file
    paths."""
    # the export's name <owner>-<id>, which the meta phase's rankings and reasons use
    keys = {(e["phase"], e["candidate"]): e["key"] for e in report.export if e.get("key")}
    rows = [("phase", "submission (ranked as)", "task", "status", "scores", "elapsed")]
    for r in report.results:
        shown = {**r.scores, **r.computed}
        scores = ", ".join(f"{k}={v:.6g}" for k, v in shown.items()) or "-"
        status = f"{r.status} (prediction failed)" if r.flagged else r.status
        key = keys.get((r.phase, r.candidate))
        name = f"{r.candidate} ({key})" if key else r.candidate
        rows.append((r.phase, name, r.task, status, scores, f"{r.elapsed:.1f}s"))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row[:5], widths)) + "  " + row[5] for row in rows]
    lines.extend(_problem_lines(report.results))
    lines.extend(_export_lines(report))
    if report.warnings:
        lines.append("")
        lines.extend(f"warning: {w}" for w in report.warnings)
    lines.append("")
    n_ok = sum(r.finished for r in report.results)
    flagged = sum(r.flagged for r in report.results)
    lines.append(f"{n_ok} of {len(report.results)} runs finished"
                 + (f" ({flagged} flagged: finished after a failed prediction step; check "
                    f"{'its' if flagged == 1 else 'their'} scores)" if flagged else "")
                 + f"; outputs tree: {report.out / 'outputs'}")
    if report.meta is not None:
        lines.append(f"meta-scoring: {report.meta.status}"
                     + (f" ({report.meta.status_details})" if not report.meta.finished else ""))
    if report.empty_ranking:
        lines.append(report.empty_ranking)
    lines.extend(_failed_not_absent(report))
    if report.leaderboard:
        lines.append(f"final leaderboard: {report.leaderboard}")
    if report.detailed_results:
        lines.append(f"detailed results: {report.detailed_results}")
    return name_bundle("\n".join(lines), report.bundle)


#: How many runs a note or a failure repeated over several runs names.
_NOTE_RUNS = 6


def _problem_lines(results: list[JobResult]) -> list[str]:
    """FAILED and FLAGGED jobs, those that failed with the same words in one block (how many
    runs, which ones, the reason once, the first run's logs), then each distinct note once,
    with how many runs and which ones it is about."""
    blocks: list[tuple[str, ...] | list[str]] = []  # a failure's words, or a flagged run's lines
    failed: dict[tuple[str, ...], list[JobResult]] = {}  # the words of a failure -> its runs
    notes: dict[str, list[str]] = {}
    for r in results:
        extra = list(r.prediction_problems)
        if not r.finished:
            if extra and extra[0].splitlines()[0] in r.reason:
                extra = extra[1:]  # already the reason's headline
            words = (r.status_details, r.reason, *extra)
            if words not in failed:
                blocks.append(words)
            failed.setdefault(words, []).append(r)
        elif r.flagged:
            blocks.append(_flagged_block(r, extra))
        for note in r.warnings:
            notes.setdefault(note, []).append(_head(r))
    lines: list[str] = []
    for block in blocks:
        lines.extend(block if isinstance(block, list) else _failed_block(block[0], block[1:], failed[block]))
    for note, heads in notes.items():
        first, *rest = note.splitlines()
        if len(heads) == 1:
            lines.append(f"note   {heads[0]}: {first}")
        else:
            lines.append(f"note   ({len(heads)} runs) {first}")
            lines.append(f"    runs: {_runs_text(heads)}")
        lines.extend("    " + line for line in rest)
    return [""] + lines if lines else []


def _head(r: JobResult) -> str:
    return f"{r.phase} / {r.candidate} / {r.task}"


def _runs_text(heads: list[str]) -> str:
    more = f" and {len(heads) - _NOTE_RUNS} more" if len(heads) > _NOTE_RUNS else ""
    return "; ".join(heads[:_NOTE_RUNS]) + more


def _flagged_block(r: JobResult, problems: list[str]) -> list[str]:
    """A run that finished after its prediction step failed: what failed, its logs."""
    first, *rest = problems[0].splitlines()
    lines = [f"FLAGGED {_head(r)}: finished, but {first}; its scores come from a scoring "
             "program that ran without the predictions", *("    " + line for line in rest)]
    for problem in problems[1:]:
        lines.extend("    " + line for line in problem.splitlines())
    return lines + ([f"    logs: {r.run_dir}"] if r.run_dir else [])


def _failed_block(details: str, texts: Sequence[str], runs: list[JobResult]) -> list[str]:
    """One failure said once: ``FAILED <run>: <details>`` or, for several runs that failed
    with the same words, ``FAILED (n runs) <details>`` and which runs; then its reason and
    the logs (of the first run, the others beside it)."""
    if len(runs) == 1:
        lines = [f"FAILED {_head(runs[0])}: {details}"]
    else:
        lines = [f"FAILED ({len(runs)} runs) {details}", f"    runs: {_runs_text([_head(r) for r in runs])}"]
    for text in texts:
        lines.extend("    " + line for line in text.splitlines())
    logs = [str(r.run_dir) for r in runs if r.run_dir]  # a job refused before it ran has none
    if len(logs) > 1:
        lines.append(f"    logs: {logs[0]} (each run's in its folder under {os.path.commonpath(logs)})")
    elif logs:
        lines.append(f"    logs: {logs[0]}")
    return lines


#: How the final leaderboard's reason says a candidate had no development submission.
_ABSENT = re.compile(r"absent from the '(?P<phase>.+)' phase")


def _failed_not_absent(report: RunReport) -> list[str]:
    """The final leaderboard's candidates "absent from" a phase where this run knows their
    submission failed: what the meta phase cannot know (the results export leaves failed
    submissions out, on Codabench too), said with the run's reason."""
    if report.leaderboard is None or not Path(report.leaderboard).is_file():
        return []
    owner = {(e["phase"], e["candidate"]): str(e["key"]).rsplit("-", 1)[0]
             for e in report.export if e.get("key")}
    lines = []
    with open(report.leaderboard, encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            found = _ABSENT.match(row.get("reason") or "")
            if not found:
                continue
            failed = [r for r in report.results if r.phase == found["phase"] and not r.finished
                      and owner.get((r.phase, r.candidate)) == row.get("participant")]
            if failed:
                lines.append(f"note: {row['candidate']} is \"absent from the {found['phase']!r} phase\" "
                             f"on the final leaderboard: its submission there failed in this run "
                             f"({failed[0].candidate}: {failed[0].status_details}), and a failed "
                             "submission is not in the results export the meta phase reads.")
    return lines


def _export_lines(report: RunReport) -> list[str]:
    """Per phase, the submissions the meta phase gets, and why each other one does not."""
    lines: list[str] = []
    for phase in dict.fromkeys(e["phase"] for e in report.export):
        entries = [e for e in report.export if e["phase"] == phase]
        kept = [f"{e['candidate']} ({e['key']})" if e.get("key") else e["candidate"]
                for e in entries if e["exported"]]
        lines.append(f"export {phase}: {len(kept)} of {len(entries)} submission(s) reach the meta "
                     f"phase: {', '.join(kept) or 'none'}")
        left: dict[str, list[str]] = {}  # one line per reason, naming its submissions
        for e in entries:
            if not e["exported"]:
                left.setdefault(e["reason"], []).append(e["candidate"])
        lines.extend(f"    not {', '.join(names)}: {reason}" for reason, names in left.items())
    return [""] + lines if lines else []
