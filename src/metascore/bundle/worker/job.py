"""The compute worker emulated for one job: one (phase, submission, task), both worker jobs.

:func:`run_job` receives a :class:`Job` (folders on this machine, already chosen by the
site: :mod:`metascore.bundle.site.server`) and runs the two jobs of the v2 worker (Codabench's
``compute_worker/compute_worker.py``: a prediction job, then a scoring job), each in its
own sandbox ``<run_dir>/{prediction,scoring}/`` holding ``program/``,
``ingestion_program/``, ``input_data/``, ``input/ref``, ``input/res``, ``output/`` and
``shared/``:

1. **Prediction job**: the submission is ``program/``. With a ``metadata[.yaml]`` holding a
   ``command`` it runs; without metadata (a *result submission*) it is copied to
   ``output/``; metadata without ``command`` runs nothing (a code submission an ingestion
   program imports). The task's ingestion program runs at the same time, with the
   submission mounted at ``/app/ingested_program``. Exit codes are not checked (v2 goes on
   to scoring whatever happens), but the runner reports them (``prediction_problems``):
   a job that then finishes is *flagged* (its scores come from a scoring program that ran
   without the predictions), one whose scoring program then fails leads its reason with
   that first failure. A result submission (no metadata, no code) is not flagged when the
   ingestion program fails beside it: its files are the predictions, scored as given, as on
   Codabench (a note).
2. **Scoring job**: the scoring program is ``program/``, ``input/ref`` the reference data,
   ``input/res`` the prediction output (with the platform's ``metadata``). With
   ``ingestion_only_during_scoring`` the ingestion program runs here instead, next to the
   scoring program, with ``input/res`` as ``/app/ingested_program`` and ``/app/shared``
   between them.


Each program's ``command`` gets the worker's placeholder substitution
(:func:`~metascore.bundle.platform.placeholders.substitute`,
same order and values as ``replace_legacy_metadata_command``), runs in ``/app/program``
with ``PYTHONUNBUFFERED=1`` on a :class:`~metascore.bundle.worker.backend.Backend`, and both
programs of a job share one timer: the phase's ``execution_time_limit``; the backend's
other limits (memory, processes, disk: :mod:`metascore.bundle.worker.limits`) fail the job with
their own message. Their stdout/stderr are streamed (capped) to ``stdout.txt``,
``stderr.txt``, ``ingestion_stdout.txt``, ``ingestion_stderr.txt`` in the sandbox; what
a program writes outside its mounts (``/app/...`` folders the worker does not mount,
``/tmp``) goes to ``.scratch/`` there; the sandbox is closed to other users, and after each
step nothing the programs left there keeps a set-id bit, a device node or a file capability
(:func:`~metascore.bundle.worker.leftovers.scrub_notes`, with a note). The platform's ``metadata`` file (``exitCode``,
``elapsedTime``: the program's, else the ingestion's, ``ingestionExitCode``, ``ingestionElapsedTime``) is written into each
output; a program that wrote ``metadata`` itself fails the job, as on the worker.

Statuses are the worker's ``Finished`` / ``Failed`` with its messages
(``Execution Time Limit exceeded. Limit was N seconds``, ``Could not find scores file, did
the scoring program output it?``, ``program_rc=N``), plus the real reason (the exit code,
the last line of the program's stderr, or of its stdout when stderr is empty, then the
log's tail). Scores are read as the worker reads them and checked as the server would store
them (:mod:`metascore.bundle.worker.job_scores`); which keys the leaderboard keeps is the
site's business.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ...errors import ConfigError, InputError
from .backend import Backend, Mount, StepResult, StepSpec
from .job_scores import JobFailed, read_job_scores
from .leftovers import scrub_notes
from ..schema.competition import DEFAULT_TIME_LIMIT
from ..files import copy_job_output, write_text
from ..platform.placeholders import substitute, volumes
from ..schema.metadata import read_metadata
from ..trees import copy_tree, make_folders, remove_tree, walk

__all__ = [
    "Job", "JobResult", "run_job",
    "TIME_LIMIT_MESSAGE", "LAX_TIME_LIMIT_NOTE", "METADATA_EXISTS_MESSAGE", "MISSING_METADATA_MESSAGE",
]

TIME_LIMIT_MESSAGE = "Execution Time Limit exceeded. Limit was {limit} seconds"
#: What Codabench's worker (c7dbc756) really does with a job past its limit: its alarm fires
#: while it streams the container's logs, its own ``except Exception`` there catches it, and
#: it then waits for the container to exit (seen on the real site: 35 s against 10, Finished).
LAX_TIME_LIMIT_NOTE = ("On Codabench the worker does not stop a program whose logs it is "
                       "streaming: such a job usually runs to its end and keeps its scores; "
                       "count on neither, raise execution_time_limit or make the program faster.")
METADATA_EXISTS_MESSAGE = (
    "Error, the output directory already contains a metadata file. This file is used to "
    "store exitCode and other data, do not write to this file manually."
)
MISSING_METADATA_MESSAGE = "Program directory missing 'metadata.yaml/metadata'"
_TAIL_LINES = 15
_NOT_COPIED = frozenset({"__MACOSX", ".DS_Store", "__pycache__"})


@dataclass(frozen=True)
class Job:
    """One (phase, submission, task) as the worker receives it: folders on this machine.

    ``phase``, ``candidate`` and ``task`` label the result; ``run_dir`` is created (both
    sandboxes inside it); the program and data folders are only read (copied into the
    sandboxes). ``scoring_program`` is ``None`` when the task's program is not in the bundle.
    """

    phase: str
    candidate: str
    task: str
    run_dir: Path
    submission: Path
    scoring_program: Path | None
    ingestion_program: Path | None = None
    input_data: Path | None = None
    reference_data: Path | None = None
    ingestion_only_during_scoring: bool = False
    time_limit: int = DEFAULT_TIME_LIMIT
    image: str | None = None       # docker image (ignored by the local backend)
    columns: tuple[str, ...] = ()  # the leaderboard's column keys (the scores the server keeps)


@dataclass
class JobResult:
    """The outcome of one (phase, submission, task): both jobs, as the platform reports it."""

    phase: str
    candidate: str
    task: str
    status: str = "Failed"            # "Finished" | "Failed"
    status_details: str = ""          # the platform's message
    reason: str = ""                  # the real error text (stderr tail, bad value)
    scores: dict[str, float] = field(default_factory=dict)
    computed: dict[str, float] = field(default_factory=dict)
    elapsed: float = 0.0
    run_dir: str = ""
    warnings: list[str] = field(default_factory=list)
    #: failures of the programs that make the predictions (the submission, the ingestion
    #: program, in either step), which the worker does not check: first line the headline
    #: (exit code, last line of the log), then the log's tail
    prediction_problems: list[str] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.status == "Finished"

    @property
    def flagged(self) -> bool:
        """Finished although a program that makes the predictions failed: its scores come
        from a scoring program that ran without (all) predictions (e.g. a default 999)."""
        return self.finished and bool(self.prediction_problems)

    @property
    def scoring_output(self) -> Path:
        """The scoring job's ``output/`` (scores file, the meta-scoring program's files)."""
        return Path(self.run_dir) / "scoring" / "output"


def _mounts(sandbox: Path, kind: str, is_scoring: bool, ingestion_only: bool, input_data: bool) -> tuple[Mount, ...]:
    """The worker's volumes for one program, the folders of ``sandbox`` at their container
    paths (:func:`~metascore.bundle.platform.placeholders.volumes`)."""
    return tuple(Mount(path, sandbox / folder) for path, folder in volumes(kind, is_scoring, ingestion_only, input_data))


# ===================================================================== one job
def run_job(job: Job, backend: Backend) -> JobResult:
    """Run the prediction job then the scoring job of ``job``; never raises for a program's fault.

    The steps, as the worker takes them: :func:`_prepare` (the prediction sandbox),
    :func:`_predict`, :func:`_score` (the scoring sandbox from the predictions, then the
    scoring job), :func:`_collect` (the scores). The result is ``Finished`` with every score
    of the scores file, or ``Failed`` with the platform's message (``status_details``) and
    the real error text (``reason``).
    """
    result = JobResult(job.phase, job.candidate, job.task, run_dir=str(job.run_dir))
    try:
        prediction = _prepare(job)
        _predict(job, backend, prediction, result)
        scoring = _score(job, backend, prediction, result)
        _collect(job, scoring, result)
    except JobFailed as exc:
        result.status, result.status_details, result.reason = "Failed", exc.details, exc.reason
    except (InputError, ConfigError, OSError) as exc:
        result.status, result.status_details, result.reason = "Failed", str(exc), str(exc)
    return result


def _prepare(job: Job) -> Path:
    """Refuse a job that cannot run, and lay out the prediction sandbox: the submission as
    ``program/``, the input data, the ingestion program (unless it runs during scoring)."""
    if job.scoring_program is None:
        raise JobFailed("the task's scoring program is not in the bundle (a dataset or "
                        "task key cannot be run offline)")
    sandbox = _sandbox(job.run_dir / "prediction")
    _copy(job.submission, sandbox / "program", "the submission")
    if job.input_data is not None:
        _copy(job.input_data, sandbox / "input_data", "the input data")
    if job.ingestion_program is not None and not job.ingestion_only_during_scoring:
        _copy(job.ingestion_program, sandbox / "ingestion_program", "the ingestion program")
    return sandbox


def _predict(job: Job, backend: Backend, sandbox: Path, result: JobResult) -> None:
    """The prediction job: submission and ingestion program under one timer; their failures
    are noted (``prediction_problems``), not fatal: the worker goes on to scoring."""
    only_scoring = job.ingestion_only_during_scoring
    runs = _run_programs(backend, job.image, sandbox, is_scoring=False, ingestion_only=only_scoring,
                         limit=job.time_limit, has_input_data=job.input_data is not None,
                         with_ingestion=job.ingestion_program is not None and not only_scoring,
                         result=result)
    given = _result_files(sandbox)  # a result submission: its files are the predictions
    for kind, run in runs.items():
        if run.exit_code not in (0, None):
            label = "submission" if kind == "program" else "ingestion program"
            if kind == "ingestion" and given is not None:
                result.warnings.append(_scored_as_given(exited(label, run).splitlines()[0],
                                                        given, sandbox / "output"))
            else:
                result.prediction_problems.append(f"prediction step: {exited(label, run)}")


#: Files that make a submission without metadata code an ingestion program imports, not results.
_CODE_SUFFIXES = (".py", ".r", ".jl", ".sh", ".ipynb")


def _result_files(sandbox: Path) -> dict[str, int] | None:
    """A result submission's files (no metadata, so the worker copied them to the output,
    and no code for an ingestion program to import), by path and size; ``None`` otherwise."""
    folder = sandbox / "program"
    try:
        if read_metadata(folder)[0] is not None:
            return None
    except (InputError, ConfigError, OSError, ValueError):  # read when the step was laid out
        return None
    files = _sizes(folder)
    return None if any(name.lower().endswith(_CODE_SUFFIXES) for name in files) else files


def _sizes(folder: Path) -> dict[str, int]:
    """Each regular file of ``folder`` (any depth, no link followed) -> its size."""
    return {"/".join(e.parts): e.stat.st_size for e in walk(folder, on_error=lambda _: None)
            if stat.S_ISREG(e.stat.st_mode)}


def _scored_as_given(failure: str, given: dict[str, int], output: Path) -> str:
    """What happened to a result submission whose ingestion program failed beside it: its
    files were scored as they are, as on Codabench (the worker copies a result submission to
    the prediction output, runs the ingestion program beside it and checks no exit code of
    the prediction step)."""
    changed = sorted(name for name, size in _sizes(output).items()
                     if name != "metadata" and given.get(name) != size)
    what = ("as they are" if not changed else
            "with what the ingestion program wrote beside them before it failed "
            f"({', '.join(changed[:3])}{' ...' if len(changed) > 3 else ''})")
    return (f"prediction step: a result submission (no metadata file, no code): its files are the "
            f"predictions, scored {what}. Beside it, {failure[0].lower()}{failure[1:]}. As on "
            "Codabench, whose worker too runs the ingestion program beside a result submission and "
            "checks no exit code of the prediction step (the error is in the submission's ingestion "
            "log there).")


def _score(job: Job, backend: Backend, prediction: Path, result: JobResult) -> Path:
    """The scoring job: its sandbox laid out (:func:`_scoring_sandbox`), the scoring program
    (and, with ``ingestion_only_during_scoring``, the ingestion program) run under one timer;
    a scoring program that exits non-zero fails the job. Returns the scoring sandbox."""
    sandbox = _scoring_sandbox(job, prediction, result)
    only_scoring = job.ingestion_only_during_scoring
    runs = _run_programs(backend, job.image, sandbox, is_scoring=True, ingestion_only=only_scoring,
                         limit=job.time_limit, has_input_data=only_scoring and job.input_data is not None,
                         with_ingestion=only_scoring and job.ingestion_program is not None, result=result)
    program = runs.get("program")
    if "ingestion" in runs and runs["ingestion"].exit_code not in (0, None):
        result.prediction_problems.append(
            f"scoring step (the worker does not check it): {exited('ingestion program', runs['ingestion'])}")
    if program is not None and program.exit_code not in (0, None):
        scoring = exited("scoring program", program)
        if result.prediction_problems:  # the root cause first: no predictions were made
            first, *tail = result.prediction_problems[0].splitlines()
            raise JobFailed(f"program_rc={program.exit_code}", "\n".join(
                [f"{first} (then the scoring program failed)", *tail, f"then {scoring}"]))
        raise JobFailed(f"program_rc={program.exit_code}", scoring)
    return sandbox


def _scoring_sandbox(job: Job, prediction: Path, result: JobResult) -> Path:
    """The scoring sandbox: the scoring program as ``program/``, the reference data as
    ``input/ref``, the prediction output as ``input/res``, and with
    ``ingestion_only_during_scoring`` the input data and the ingestion program."""
    assert job.scoring_program is not None  # refused by _prepare
    sandbox = _sandbox(job.run_dir / "scoring")
    _copy(job.scoring_program, sandbox / "program", "the scoring program")
    if job.reference_data is not None:
        _copy(job.reference_data, sandbox / "input" / "ref", "the reference data")
    for left in copy_job_output(prediction / "output", sandbox / "input" / "res", "the prediction output"):
        result.warnings.append(f"prediction output: {left} is not passed to the scoring step "
                               "(only the output's own files are).")
    if job.ingestion_only_during_scoring:
        if job.input_data is not None:
            _copy(job.input_data, sandbox / "input_data", "the input data")
        if job.ingestion_program is not None:
            _copy(job.ingestion_program, sandbox / "ingestion_program", "the ingestion program")
    return sandbox


def _collect(job: Job, scoring: Path, result: JobResult) -> None:
    """The scores of the scoring output, as the worker reads and the server keeps them."""
    result.scores = read_job_scores(scoring / "output", result, job.columns)
    result.status, result.status_details = "Finished", ""


def _run_programs(
    backend: Backend, image: str | None, sandbox: Path, *, is_scoring: bool, ingestion_only: bool,
    limit: int, has_input_data: bool, with_ingestion: bool, result: JobResult,
) -> dict[str, StepResult]:
    """Run one worker job (prediction or scoring): program + ingestion under one timer; a
    time-out or another limit fails the job; the platform's ``metadata`` is written."""
    specs = _step_specs(image, sandbox, is_scoring=is_scoring, ingestion_only=ingestion_only,
                        limit=limit, has_input_data=has_input_data, with_ingestion=with_ingestion,
                        result=result)
    kinds = list(specs)
    try:
        runs = dict(zip(kinds, backend.run_many([specs[k] for k in kinds], float(limit)))) if kinds else {}
    finally:  # nothing the programs leave keeps a set-id bit, a device node or a capability
        result.warnings.extend(scrub_notes(sandbox, "scoring" if is_scoring else "prediction"))
    result.elapsed += max((r.elapsed for r in runs.values()), default=0.0)
    _check_limits(specs, runs, sandbox, is_scoring=is_scoring, limit=limit)
    _write_platform_metadata(sandbox, runs, "scoring" if is_scoring else "prediction")
    return runs


def _step_specs(
    image: str | None, sandbox: Path, *, is_scoring: bool, ingestion_only: bool, limit: int,
    has_input_data: bool, with_ingestion: bool, result: JobResult,
) -> dict[str, StepSpec]:
    """What runs in one worker job, by kind (``program``, ``ingestion``): each program's
    metadata read, its command substituted, its mounts; a result submission is copied to
    the output instead."""
    step = "scoring" if is_scoring else "prediction"
    specs: dict[str, StepSpec] = {}
    for kind, folder in (("program", sandbox / "program"), ("ingestion", sandbox / "ingestion_program")):
        if kind == "ingestion" and not with_ingestion:
            continue
        label = {"program": "scoring program" if is_scoring else "submission", "ingestion": "ingestion program"}
        meta, _ = read_metadata(folder, f"{step} step: the {label[kind]}'s ")
        command = None if meta is None else meta.get("command")
        if kind == "ingestion" and (meta is None or not command):
            raise JobFailed(MISSING_METADATA_MESSAGE,
                             f"{step} step: the ingestion program has no metadata.yaml/metadata with a command")
        if meta is None:  # a result submission (or a scoring program without metadata)
            for left in copy_job_output(folder, sandbox / "output", "the submission"):
                result.warnings.append(f"{step} step: {left} is not copied to the output.")
            continue
        if not command:
            result.warnings.append(_no_command_note(step, is_scoring, with_ingestion, ingestion_only))
            continue
        if not isinstance(command, str):
            raise JobFailed("'command' must be a string",
                             f"{step} step: metadata 'command' is {type(command).__name__} {command!r}; "
                             "Codabench v2 needs one string")
        mounts = _mounts(sandbox, kind, is_scoring, ingestion_only, has_input_data)
        final = substitute(command, kind, is_scoring, ingestion_only)
        mounted = {m.container_path for m in mounts}
        for path in set(re.findall(r"/app/\w+", final)):
            if path not in mounted and not any(path.startswith(m + "/") for m in mounted):
                result.warnings.append(f"{step} step: the {kind} command uses {path}, which the worker "
                                       "does not mount in this step (the program gets an empty "
                                       "folder there, as in the container's own layer).")
        prefix = "" if kind == "program" else "ingestion_"
        specs[kind] = StepSpec(name=f"{step}-{kind}", command=final, mounts=mounts,
                               time_limit=float(limit), image=image,
                               stdout_path=sandbox / f"{prefix}stdout.txt",
                               stderr_path=sandbox / f"{prefix}stderr.txt",
                               scratch=sandbox / ".scratch" / kind, sandbox=sandbox)
    return specs


def _no_command_note(step: str, is_scoring: bool, with_ingestion: bool, ingestion_only: bool) -> str:
    """What happens to a program folder whose metadata has no ``command``, in words."""
    if is_scoring:
        return f"{step} step: the scoring program's metadata has no 'command'; nothing was run for it."
    if with_ingestion:  # the usual code submission: the ingestion program imports it
        return (f"{step} step: the submission's metadata has no 'command', so it is not run as a "
                "program; the ingestion program ran with it mounted at /app/ingested_program "
                "(a code submission that the ingestion program imports).")
    if ingestion_only:
        return (f"{step} step: the submission's metadata has no 'command', so nothing runs in this "
                "step (ingestion_only_during_scoring: the task's ingestion program, if any, runs in "
                "the scoring step).")
    return (f"{step} step: the submission's metadata has no 'command' and the task has no ingestion "
            "program to import it; nothing was run for it.")


def _check_limits(specs: dict[str, StepSpec], runs: dict[str, StepResult], sandbox: Path, *,
                  is_scoring: bool, limit: int) -> None:
    """Fail the job when a program ran out of time or hit another limit (memory, processes,
    disk: what a program that filled the disk wrote is not kept, as the worker keeps no
    failed output)."""
    step = "scoring" if is_scoring else "prediction"
    label = {"program": "scoring program" if is_scoring else "submission", "ingestion": "ingestion program"}
    for kind, run in runs.items():
        if run.timed_out:
            _append(specs[kind].stderr_path, TIME_LIMIT_MESSAGE.format(limit=limit))
    if any(r.timed_out for r in runs.values()):
        slow = ", ".join(label[k] for k, r in runs.items() if r.timed_out)
        raise JobFailed(TIME_LIMIT_MESSAGE.format(limit=limit),
                         f"{step} step: killed after {limit} s ({slow} still running). "
                         f"{LAX_TIME_LIMIT_NOTE}")
    for kind, run in runs.items():
        if run.killed:  # a memory, process or disk limit
            if run.killed in ("disk", "files"):
                for folder in (sandbox / "output", sandbox / ".scratch"):
                    remove_tree(folder)
                make_folders(sandbox / "output")
            raise JobFailed(run.message, f"{step} step: the {label[kind]} was stopped: {run.message}\n"
                                         f"{_tail(run.stderr if run.stderr.strip() else run.stdout)}")


def _write_platform_metadata(sandbox: Path, runs: dict[str, StepResult], step: str) -> None:
    """The platform's ``output/metadata`` (exit codes and times); one a program wrote
    itself fails the job, as on the worker."""
    metadata = sandbox / "output" / "metadata"
    if os.path.lexists(metadata):
        raise JobFailed(METADATA_EXISTS_MESSAGE,
                         f"{step} step: a program wrote output/metadata, which the platform owns")
    program, ingestion = runs.get("program"), runs.get("ingestion")
    program_time = round(program.elapsed, 3) if program else None
    ingestion_time = round(ingestion.elapsed, 3) if ingestion else None
    write_text(metadata, yaml.dump({
        "exitCode": program.exit_code if program else None,
        # as the worker (v1.5 compatibility): the ingestion's time when no program ran
        "elapsedTime": program_time or ingestion_time,
        "ingestionExitCode": ingestion.exit_code if ingestion else None,
        "ingestionElapsedTime": ingestion_time,
    }))


def _sandbox(path: Path) -> Path:
    """A new sandbox only its owner may enter (the backends mount its folders); the folders
    above it and in it writable by that owner alone, whatever the umask."""
    remove_tree(path)
    make_folders(path.parent)
    path.mkdir(mode=0o700)
    for sub in ("program", "output", "input/ref", "input/res", "shared"):
        make_folders(path / sub)
    return path


def _copy(src: Path, dest: Path, what: str) -> None:
    """Copy a program or data folder into a sandbox (links kept as links, macOS noise and
    caches left out; nothing written twice, any depth up to the copy's limit)."""
    copy_tree(src, dest, keep_links=True, skip=_NOT_COPIED.__contains__, what=what)


def _append(path: Path | None, line: str) -> None:
    if path is not None:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"\n{line}\n")


def _tail(text: str, lines: int = _TAIL_LINES) -> str:
    kept = [line for line in text.strip().splitlines() if line.strip()][-lines:]
    return "\n".join(kept) if kept else "(no output on stdout or stderr)"


def exited(label: str, run: StepResult, lines: int = _TAIL_LINES) -> str:
    """``the <label> exited with code N; last line of its stderr: ...`` then the log's tail
    (stdout when stderr is empty: some programs print their traceback there)."""
    for name, text in (("stderr", run.stderr), ("stdout", run.stdout)):
        kept = [line for line in text.strip().splitlines() if line.strip()][-lines:]
        if kept:  # the program's own last line, not a hint the backend appended
            own = [line for line in kept if not line.startswith("metascore: ")] or kept
            return (f"the {label} exited with code {run.exit_code}; last line of its {name}: "
                    f"{own[-1].strip()}\n" + "\n".join(kept))
    return f"the {label} exited with code {run.exit_code} and wrote nothing on stdout or stderr"

