"""The mock bundle runner: run a whole competition locally, as Codabench's compute worker would.

For each phase, each submission and each task of the phase, :func:`run_bundle` runs the two
jobs of the v2 worker (research/codabench.md 1.1), each in its own sandbox
``<out>/runs/<phase>/<candidate>/<task>/{prediction,scoring}/`` holding ``program/``,
``ingestion_program/``, ``input_data/``, ``input/ref``, ``input/res``, ``output/`` and
``shared/``:

1. **Prediction job**: the submission is ``program/``. With a ``metadata[.yaml]`` holding a
   ``command`` it runs; without metadata (a *result submission*) it is copied to
   ``output/``; metadata without ``command`` runs nothing (a code submission an ingestion
   program imports). The task's ingestion program runs at the same time, with the
   submission mounted at ``/app/ingested_program``. Exit codes are not checked (v2 goes on
   to scoring whatever happens), but the runner reports them.
2. **Scoring job**: the scoring program is ``program/``, ``input/ref`` the reference data,
   ``input/res`` the prediction output (with the platform's ``metadata``). With
   ``ingestion_only_during_scoring`` the ingestion program runs here instead, next to the
   scoring program, with ``input/res`` as ``/app/ingested_program`` and ``/app/shared``
   between them.

Each program's ``command`` gets the worker's placeholder substitution (:func:`substitute`,
same order and values as ``replace_legacy_metadata_command``), runs in ``/app/program``
with ``PYTHONUNBUFFERED=1``, and both programs of a job share one timer: the phase's
``execution_time_limit``. Their stdout/stderr go to ``stdout.txt``, ``stderr.txt``,
``ingestion_stdout.txt``, ``ingestion_stderr.txt`` in the sandbox. The platform's
``metadata`` file (``exitCode``, ``elapsedTime``, ``ingestionExitCode``,
``ingestionElapsedTime``) is written into each output; a program that wrote ``metadata``
itself fails the job, as on the worker.

Statuses are the worker's ``Finished`` / ``Failed`` with its messages
(``Execution Time Limit exceeded. Limit was N seconds``, ``Could not find scores file, did
the scoring program output it?``, ``program_rc=N``), plus the real reason (the tail of the
program's stderr). Scores are read as the worker reads them (``scores.json``, else
``scores.txt`` parsed as YAML) and filtered against the leaderboard columns.

Every finished scoring output is collected into ``<out>/outputs/<phase>/<candidate>/<task>/
scores.json`` with ``<out>/outputs/submissions.csv`` (phase, candidate, participant,
submitted_at, is_baseline). A **meta phase** (every task's reference data holds
``metascore.yaml``, e.g. the template's "Final ranking") runs last, once: the outputs tree is
its result submission (what an organizer would upload on Codabench), scored by the
meta-scoring program like any other scoring job. The runner writes only inside ``out``.

Where this differs from the v2 worker, knowingly:

- Failures say why (stderr tail, the bad score value) where the platform often shows only a
  status; a ``scores.txt`` that is not a ``key: value`` mapping, a NaN/Infinity, a value
  Codabench's ``DecimalField`` cannot store (abs >= 1e10) or a non-numeric value fail the job
  here, while on the platform the submission shows ``Finished`` with lost scores.
- A phase's ``execution_time_limit`` is used as it is (as on a custom queue); the default
  queue caps it at 600 s (a warning says so).
- ``/app/data`` (a worker-host folder) is not mounted; there is no cache, no Docker image
  pull, no websocket, no ``detailed_results`` upload (the file stays in the output).
- Every submission runs in every phase (as if migrated automatically), and each task of a
  multi-task phase is a separate job (as Codabench's child submissions are).
- The local backend has no isolation (see :mod:`metascore.bundle.local`).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import re
import shutil
import tempfile
import threading
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError, InputError
from .archive import assemble_meta_program, needs_meta_program, safe_extract
from .backend import Backend, Mount, StepResult, StepSpec
from .schema import Competition, Phase, Task, load_competition, read_metadata

__all__ = [
    "Submission",
    "JobResult",
    "RunReport",
    "substitute",
    "get_backend",
    "collect_submissions",
    "run_bundle",
    "format_report",
    "BACKENDS",
    "TIME_LIMIT_MESSAGE",
    "NO_SCORES_MESSAGE",
]

BACKENDS = ("local", "docker")
TIME_LIMIT_MESSAGE = "Execution Time Limit exceeded. Limit was {limit} seconds"
NO_SCORES_MESSAGE = "Could not find scores file, did the scoring program output it?"
METADATA_EXISTS_MESSAGE = (
    "Error, the output directory already contains a metadata file. This file is used to "
    "store exitCode and other data, do not write to this file manually."
)
MISSING_METADATA_MESSAGE = "Program directory missing 'metadata.yaml/metadata'"
DEFAULT_QUEUE_LIMIT = 600
MANIFEST_COLUMNS = ("phase", "candidate", "participant", "submitted_at", "is_baseline")
_MAX_SCORE = Decimal(10) ** 10  # DecimalField(max_digits=20, decimal_places=10)
_TAIL_LINES = 15


# ===================================================================== data
@dataclass(frozen=True)
class Submission:
    """One submission to run: a folder or zip, who made it, when, and whether it is a baseline.

    ``tasks``: the task indexes it runs on (``None``: every task; solutions list theirs).
    """

    candidate: str
    source: Path
    participant: str
    submitted_at: str | None = None
    is_baseline: bool = False
    tasks: tuple[int, ...] | None = None
    origin: str = ""


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
    prediction_problems: list[str] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.status == "Finished"


@dataclass
class RunReport:
    """Everything a run produced: per-job results, warnings and the final ranking files."""

    out: Path
    backend: str
    results: list[JobResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    meta: JobResult | None = None
    leaderboard: Path | None = None
    detailed_results: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": str(self.out), "backend": self.backend,
            "results": [asdict(r) for r in self.results], "warnings": self.warnings,
            "meta": asdict(self.meta) if self.meta else None,
            "leaderboard": str(self.leaderboard) if self.leaderboard else None,
            "detailed_results": str(self.detailed_results) if self.detailed_results else None,
        }


# ===================================================================== worker semantics
def substitute(command: str, kind: str, is_scoring: bool, ingestion_only_during_scoring: bool = False) -> str:
    """The v2 worker's placeholder substitution: plain ``str.replace``, in this order.

    ``kind`` is ``"program"`` (submission or scoring program) or ``"ingestion"``.

    >>> substitute("python $program/score.py $input $output", "program", True)
    'python /app/program/score.py /app/input /app/output'
    >>> substitute("python $program/ingest.py $input $output $submission_program", "ingestion", False)
    'python /app/program/ingest.py /app/input_data /app/output /app/ingested_program'
    """
    pairs = (
        ("$input", "/app/input_data" if kind == "ingestion" else "/app/input"),
        ("$output", "/app/output"),
        ("$program", "/app/ingestion_program" if ingestion_only_during_scoring and is_scoring else "/app/program"),
        ("$ingestion_program", "/app/program"),
        ("$hidden", "/app/input/ref"),
        ("$shared", "/app/shared"),
        ("$submission_program", "/app/ingested_program"),
        ("$tmp", "/app/output"),
        ("$predictions", "/app/input/res" if is_scoring else "/app/output"),
    )
    for placeholder, value in pairs:
        command = command.replace(placeholder, value)
    return command


def _mounts(sandbox: Path, kind: str, is_scoring: bool, ingestion_only: bool, input_data: bool) -> tuple[Mount, ...]:
    """The worker's volumes for one program (research/codabench.md 1.1, mounts table)."""
    program = sandbox / ("program" if kind == "program" else "ingestion_program")
    mounts = [Mount("/app/program", program), Mount("/app/output", sandbox / "output")]
    if kind == "ingestion":
        ingested = sandbox / "input" / "res" if (is_scoring and ingestion_only) else sandbox / "program"
        mounts.append(Mount("/app/ingested_program", ingested))
    if is_scoring:
        mounts += [Mount("/app/input", sandbox / "input"), Mount("/app/shared", sandbox / "shared")]
    if input_data:
        mounts.append(Mount("/app/input_data", sandbox / "input_data"))
    return tuple(mounts)


def get_backend(name: str = "local", *, image: str | None = None, network: bool = False, memory: str = "2g") -> Backend:
    """The backend called ``name``: ``local`` (default) or ``docker`` (imported lazily)."""
    if name == "local":
        from .local import LocalBackend

        return LocalBackend()
    if name == "docker":
        try:
            from .docker_backend import DockerBackend
        except ModuleNotFoundError as exc:
            raise ConfigError(f"the docker backend is not available ({exc}); install "
                              "metascore[docker] or use --backend local.") from None
        return DockerBackend(image=image, network=network, memory=memory)
    raise ConfigError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}.")


# ===================================================================== submissions
def collect_submissions(
    comp: Competition, submissions_dir: Path | None = None, *, cache: Path,
) -> tuple[list[Submission], list[str]]:
    """Submissions to run, and warnings.

    From the bundle: each phase's ``starting_kit`` (the kit itself when it has a
    ``metadata`` file at its root, else each sub-folder or zip whose name contains
    "submission"), flagged as baselines; each ``solutions`` entry (on its tasks); and the
    bundle's ``sample_submissions/`` folder unless ``submissions_dir`` is given. A
    submissions folder holds zips or folders; see :func:`_folder_submissions`.
    """
    subs: list[Submission] = []
    warnings: list[str] = []
    first_start = next((p.start for p in comp.phases if p.start), None)
    when = first_start.replace(tzinfo=dt.timezone.utc).isoformat() if first_start else None
    seen: set[str] = set()
    for phase in comp.phases:
        kit = comp.path(phase.starting_kit)
        if kit is None or phase.starting_kit in seen or not kit.exists():
            continue
        seen.add(phase.starting_kit)
        kit_dir = _as_dir(kit, cache / "starting_kits" / kit.name)
        if read_metadata(kit_dir)[0] is not None:
            found = [kit_dir]
        else:
            found = sorted(p for p in kit_dir.iterdir()
                           if "submission" in p.name.lower() and (p.is_dir() or p.suffix == ".zip"))
        if not found:
            warnings.append(f"starting kit {phase.starting_kit}: no submission found in it (a folder "
                            "or zip whose name contains 'submission'); no baseline will be run.")
        for path in found:
            subs.append(Submission(_stem(path), path, "baseline", when, True, None, "starting kit"))
    for sol in comp.solutions:
        path = comp.path(sol.path)
        if path is not None and path.exists():
            subs.append(Submission(f"solution_{sol.index}" if len(comp.solutions) > 1 else "solution",
                                   path, "organizer", when, False, sol.tasks, "solutions"))
    folder = submissions_dir
    if folder is None and (comp.root / "sample_submissions").is_dir():
        folder = comp.root / "sample_submissions"
    if folder is not None:
        subs.extend(_folder_submissions(Path(folder)))
    return _unique_ids(subs), warnings


def _folder_submissions(folder: Path) -> list[Submission]:
    """Zips and folders in ``folder``; metadata from ``submissions.yaml`` / ``.csv`` if present.

    Manifest rows: ``file`` (required, the zip or folder name), ``participant``,
    ``submitted_at``, ``is_baseline``, ``candidate``. Without a row: the participant is the
    part of the name before ``__`` (``alice__v2.zip`` -> ``alice``), else the whole stem,
    and the submission time is the file's modification time.
    """
    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder of submissions.")
    manifest = _read_manifest(folder)
    entries = sorted(p for p in folder.iterdir() if (p.is_dir() and not p.name.startswith(("_", ".")))
                     or p.suffix == ".zip")
    names = {p.name for p in entries} | {p.stem for p in entries}
    for name in manifest:
        if name not in names:
            raise InputError(f"{folder}: the submissions manifest lists {name!r}, which is not in the folder.")
    subs = []
    for path in entries:
        row = manifest.get(path.name) or manifest.get(path.stem) or {}
        stem = _stem(path)
        participant = str(row.get("participant") or (stem.split("__", 1)[0] if "__" in stem else stem))
        when = row.get("submitted_at")
        if isinstance(when, (dt.datetime, dt.date)):
            when = when.isoformat()
        if when is None:
            when = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc).isoformat(timespec="seconds")
        baseline = str(row.get("is_baseline", False)).strip().lower() in ("true", "1", "yes")
        subs.append(Submission(str(row.get("candidate") or stem), path, participant, str(when),
                               baseline, None, str(folder)))
    return subs


def _read_manifest(folder: Path) -> dict[str, dict[str, Any]]:
    for name in ("submissions.yaml", "submissions.yml", "submissions.csv"):
        path = folder / name
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".csv":
            rows = list(csv.DictReader(io.StringIO(text)))
        else:
            try:
                data = yaml.safe_load(text) or []
            except yaml.YAMLError as exc:
                raise InputError(f"{path}: not valid YAML ({exc}).") from None
            rows = data if isinstance(data, list) else [{"file": k, **(v or {})} for k, v in data.items()]
        out = {}
        for i, row in enumerate(rows, 1):
            if not isinstance(row, dict) or not row.get("file"):
                raise InputError(f"{path}: entry {i} has no 'file' (the submission's zip or folder name).")
            out[str(row["file"])] = row
        return out
    return {}


def _stem(path: Path) -> str:
    return path.name[:-4] if path.name.endswith(".zip") else path.name


def _unique_ids(subs: list[Submission]) -> list[Submission]:
    out, used = [], set()
    for sub in subs:
        cid, n = _safe_name(sub.candidate), 2
        while cid in used:
            cid, n = f"{_safe_name(sub.candidate)}-{n}", n + 1
        used.add(cid)
        out.append(Submission(cid, sub.source, sub.participant, sub.submitted_at, sub.is_baseline,
                              sub.tasks, sub.origin))
    return out


def _safe_name(name: str) -> str:
    """A folder name for a phase, candidate or task (no separators, no leading dot)."""
    clean = re.sub(r"[/\\\x00]", "_", str(name)).strip() or "_"
    return "_" + clean if clean.startswith(".") else clean


_EXTRACT_LOCK = threading.Lock()


def _as_dir(path: Path, cache: Path) -> Path:
    """A folder with the contents of ``path`` (a folder, or a zip extracted once into ``cache``)."""
    if path.is_dir():
        return path
    with _EXTRACT_LOCK:  # jobs run in threads; extract each zip once
        if not cache.exists():
            tmp = Path(tempfile.mkdtemp(prefix=".extract-", dir=_mkdir(cache.parent)))
            safe_extract(path, tmp)
            os.replace(tmp, cache)
    return cache


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


# ===================================================================== the runner
class _Runner:
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
            with _EXTRACT_LOCK:
                if not target.exists():
                    self.log(f"[*] {ref}: filled with metascore's meta-scoring program")
                    assemble_meta_program(target, self.scoring_program)
            return target
        if not path.exists():
            return None
        return _as_dir(path, self.cache / "bundle_items" / _safe_name(ref.rstrip("/")))

    def is_meta_task(self, task: Task) -> bool:
        ref = self.source(task.reference_data)
        return ref is not None and (ref / "metascore.yaml").is_file()

    # ------------------------------------------------------------ one job
    def run_job(self, phase: Phase, sub: Submission, task: Task, task_dir: str) -> JobResult:
        base = self.out / "runs" / _safe_name(phase.name) / sub.candidate / task_dir
        result = JobResult(phase.name, sub.candidate, task.name, run_dir=str(base))
        limit = phase.execution_time_limit
        try:
            submission = _as_dir(sub.source, self.cache / "submissions" / sub.candidate)
            scoring_program = self.source(task.scoring_program)
            ingestion = self.source(task.ingestion_program)
            input_data = self.source(task.input_data)
            reference = self.source(task.reference_data)
            if task.key is not None or scoring_program is None:
                raise _JobFailed("the task's scoring program is not in the bundle (a dataset or "
                                 "task key cannot be run offline)")
            # ---- prediction job
            pred = _sandbox(base / "prediction")
            _copy(submission, pred / "program")
            only_scoring = task.ingestion_only_during_scoring
            if input_data is not None:
                _copy(input_data, pred / "input_data")
            if ingestion is not None and not only_scoring:
                _copy(ingestion, pred / "ingestion_program")
            runs = self.job(pred, is_scoring=False, ingestion_only=only_scoring, limit=limit,
                            has_input_data=input_data is not None,
                            with_ingestion=ingestion is not None and not only_scoring, result=result)
            for kind, run in runs.items():
                if run.exit_code not in (0, None):
                    label = "submission" if kind == "program" else "ingestion program"
                    result.prediction_problems.append(
                        f"prediction step: the {label} exited with code {run.exit_code}: {_tail(run.stderr)}"
                    )
            # ---- scoring job
            score = _sandbox(base / "scoring")
            _copy(scoring_program, score / "program")
            if reference is not None:
                _copy(reference, score / "input" / "ref")
            _copy(pred / "output", score / "input" / "res")
            if only_scoring:
                if input_data is not None:
                    _copy(input_data, score / "input_data")
                if ingestion is not None:
                    _copy(ingestion, score / "ingestion_program")
            runs = self.job(score, is_scoring=True, ingestion_only=only_scoring, limit=limit,
                            has_input_data=only_scoring and input_data is not None,
                            with_ingestion=only_scoring and ingestion is not None, result=result)
            program = runs.get("program")
            if "ingestion" in runs and runs["ingestion"].exit_code not in (0, None):
                result.warnings.append(
                    f"scoring step: the ingestion program exited with code "
                    f"{runs['ingestion'].exit_code} (the worker does not check it): {_tail(runs['ingestion'].stderr)}"
                )
            if program is not None and program.exit_code not in (0, None):
                raise _JobFailed(f"program_rc={program.exit_code}",
                                 f"the scoring program exited with code {program.exit_code}: {_tail(program.stderr)}")
            result.scores, result.computed = self.read_scores(score / "output", result)
            result.status, result.status_details = "Finished", ""
        except _JobFailed as exc:
            result.status, result.status_details, result.reason = "Failed", exc.details, exc.reason
        except (InputError, ConfigError, OSError) as exc:
            result.status, result.status_details, result.reason = "Failed", str(exc), str(exc)
        return result

    def job(self, sandbox: Path, *, is_scoring: bool, ingestion_only: bool, limit: int,
            has_input_data: bool, with_ingestion: bool, result: JobResult) -> dict[str, StepResult]:
        """Run one worker job (prediction or scoring): program + ingestion under one timer."""
        step = "scoring" if is_scoring else "prediction"
        specs: dict[str, StepSpec] = {}
        for kind, folder in (("program", sandbox / "program"), ("ingestion", sandbox / "ingestion_program")):
            if kind == "ingestion" and not with_ingestion:
                continue
            meta, _ = read_metadata(folder)
            command = None if meta is None else meta.get("command")
            if kind == "ingestion" and (meta is None or not command):
                raise _JobFailed(MISSING_METADATA_MESSAGE,
                                 f"{step} step: the ingestion program has no metadata.yaml/metadata with a command")
            if meta is None:  # a result submission (or a scoring program without metadata)
                shutil.copytree(folder, sandbox / "output", dirs_exist_ok=True)
                continue
            if not command:
                result.warnings.append(f"{step} step: {'submission' if not is_scoring else 'scoring program'} "
                                       "metadata has no 'command'; nothing was run for it.")
                continue
            if not isinstance(command, str):
                raise _JobFailed("'command' must be a string",
                                 f"{step} step: metadata 'command' is {type(command).__name__} {command!r}; "
                                 "Codabench v2 needs one string")
            mounts = _mounts(sandbox, kind, is_scoring, ingestion_only, has_input_data)
            final = substitute(command, kind, is_scoring, ingestion_only)
            mounted = {m.container_path for m in mounts}
            for path in set(re.findall(r"/app/\w+", final)):
                if path not in mounted and not any(path.startswith(m + "/") for m in mounted):
                    result.warnings.append(f"{step} step: the {kind} command uses {path}, which the worker "
                                           "does not mount in this step.")
            specs[kind] = StepSpec(name=f"{step}-{kind}", command=final, mounts=mounts,
                                   time_limit=float(limit), image=self.image)
        kinds = list(specs)
        runs = dict(zip(kinds, self.backend.run_many([specs[k] for k in kinds], float(limit)))) if kinds else {}
        result.elapsed += max((r.elapsed for r in runs.values()), default=0.0)
        for kind, run in runs.items():
            prefix = "" if kind == "program" else "ingestion_"
            stderr = run.stderr
            if run.timed_out:
                stderr += f"\n{TIME_LIMIT_MESSAGE.format(limit=limit)}\n"
            _write(sandbox / f"{prefix}stdout.txt", run.stdout)
            _write(sandbox / f"{prefix}stderr.txt", stderr)
        if any(r.timed_out for r in runs.values()):
            slow = ", ".join("submission" if k == "program" and not is_scoring else
                             "scoring program" if k == "program" else "ingestion program"
                             for k, r in runs.items() if r.timed_out)
            raise _JobFailed(TIME_LIMIT_MESSAGE.format(limit=limit),
                             f"{step} step: killed after {limit} s ({slow} still running)")
        metadata = sandbox / "output" / "metadata"
        if metadata.exists():
            raise _JobFailed(METADATA_EXISTS_MESSAGE,
                             f"{step} step: a program wrote output/metadata, which the platform owns")
        program, ingestion = runs.get("program"), runs.get("ingestion")
        _write(metadata, yaml.dump({
            "exitCode": program.exit_code if program else None,
            "elapsedTime": round(program.elapsed, 3) if program else None,
            "ingestionExitCode": ingestion.exit_code if ingestion else None,
            "ingestionElapsedTime": round(ingestion.elapsed, 3) if ingestion else None,
        }))
        return runs

    # ------------------------------------------------------------ scores
    def read_scores(self, output: Path, result: JobResult) -> tuple[dict[str, float], dict[str, float]]:
        """Read the scores as the worker does, then check them as the server would store them."""
        json_path, txt_path = output / "scores.json", output / "scores.txt"
        if json_path.is_file():
            name = "scores.json"
            try:
                raw = json.loads(json_path.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise _JobFailed("scores.json is not valid JSON", f"scores.json: {exc}") from None
        elif txt_path.is_file():
            name = "scores.txt"
            text = txt_path.read_text(encoding="utf-8", errors="replace")
            try:
                raw = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                raise _JobFailed("scores.txt is not valid YAML", f"scores.txt: {exc}") from None
            if not isinstance(raw, dict):
                hint = (" Write 'key: value' with a space after the colon; 'key:value' is one string "
                        "to a YAML parser" if re.search(r"^\s*[^:\s]+:\S", text, re.M) else "")
                raise _JobFailed("scores.txt is not a mapping (Codabench would lose these scores)",
                                 f"scores.txt parses as {raw!r}, not as key: value pairs.{hint}")
        else:
            raise _JobFailed(NO_SCORES_MESSAGE, f"no scores.json or scores.txt in {output.name}/")
        if not isinstance(raw, dict):
            raise _JobFailed(f"{name} is not a flat object", f"{name} holds {type(raw).__name__} {raw!r}")
        scores: dict[str, float] = {}
        for key, value in raw.items():
            scores[str(key)] = _score_value(name, key, value, result)
        unknown = [k for k in scores if k not in self.columns]
        if unknown and self.columns:
            result.warnings.append(
                f"{name}: key(s) {', '.join(map(repr, unknown))} match no leaderboard column and are "
                f"ignored by Codabench (columns: {', '.join(self.columns)})."
            )
        kept = {k: v for k, v in scores.items() if k in self.columns or not self.columns}
        return kept, self.computed_columns(kept)

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
    def run(self, submissions: list[Submission], report: RunReport) -> None:
        outputs = self.out / "outputs"
        manifest: list[dict[str, Any]] = []
        meta_phases = []
        for phase in self.comp.phases:
            tasks = self.comp.phase_tasks(phase)
            if tasks and all(self.is_meta_task(t) for t in tasks):
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
                if res.finished:
                    _write(outputs / _safe_name(phase.name) / sub.candidate / dirs[task.index] / "scores.json",
                           json.dumps(res.scores, indent=2, allow_nan=False) + "\n")
            for sub in submissions:
                if any(s is sub for s, _ in todo):
                    manifest.append({"phase": phase.name, "candidate": sub.candidate,
                                     "participant": sub.participant, "submitted_at": sub.submitted_at or "",
                                     "is_baseline": "true" if sub.is_baseline else "false"})
        _write(outputs / "submissions.csv", _csv(manifest))
        for phase in meta_phases:
            organizer = Submission("organizer_results", outputs, "organizer", None, False, None, "outputs tree")
            dirs = _task_dirs(self.comp.phase_tasks(phase))
            tasks = self.comp.phase_tasks(phase)
            for task, res in zip(tasks, self.map_jobs(phase, [(organizer, t) for t in tasks], dirs)):
                report.results.append(res)
                report.meta = res
                output = Path(res.run_dir) / "scoring" / "output"
                if res.finished and output.is_dir():
                    # a short, stable place for the final leaderboard files
                    final = self.out / "final" if len(tasks) == 1 else self.out / "final" / _safe_name(task.name)
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


    def map_jobs(self, phase: Phase, todo: list[tuple[Submission, Task]], dirs: dict[int, str]) -> list[JobResult]:
        """Run independent jobs, ``self.jobs`` at a time; results in the order of ``todo``."""

        def one(item: tuple[Submission, Task]) -> JobResult:
            res = self.run_job(phase, item[0], item[1], dirs[item[1].index])
            self.log(_progress(res))
            return res

        if self.jobs <= 1 or len(todo) <= 1:
            return [one(item) for item in todo]
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            return list(pool.map(one, todo))


class _JobFailed(Exception):
    def __init__(self, details: str, reason: str = "") -> None:
        super().__init__(details)
        self.details, self.reason = details, reason or details


def _score_value(name: str, key: Any, value: Any, result: JobResult) -> float:
    where = f"{name}: key {key!r}"
    if isinstance(value, bool):
        result.warnings.append(f"{where}: {value!r} is stored as {int(value)} by Codabench.")
        return float(value)
    if isinstance(value, (dict, list)):
        raise _JobFailed(f"{name} must be a flat object of numbers",
                         f"{where}: {value!r} is not a number (nested values are not supported)")
    try:
        number = Decimal(str(value).strip()) if isinstance(value, str) else Decimal(repr(float(value)))
    except (InvalidOperation, ValueError, TypeError):
        raise _JobFailed(f"{name}: {key!r} is not a number",
                         f"{where}: {value!r} is not a number") from None
    if not number.is_finite():
        raise _JobFailed(
            f"{name}: {key!r} is {value!r}",
            f"{where}: {value!r} is not a finite number; the worker cannot send NaN or Infinity and "
            "the platform would lose every score of this submission (write a finite value or leave "
            "the key out)")
    if abs(number) >= _MAX_SCORE:
        raise _JobFailed(f"{name}: {key!r} is too large",
                         f"{where}: {value!r} does not fit Codabench's score field (abs < 1e10)")
    return float(number)


def _task_dirs(tasks: list[Task]) -> dict[int, str]:
    names = [t.name for t in tasks]
    return {t.index: _safe_name(t.name if names.count(t.name) == 1 else f"{t.name} ({t.index})") for t in tasks}


def _sandbox(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    for sub in ("program", "output", "input/ref", "input/res", "shared"):
        (path / sub).mkdir(parents=True)
    return path


def _copy(src: Path, dest: Path) -> None:
    shutil.copytree(src, dest, dirs_exist_ok=True, symlinks=True,
                    ignore=shutil.ignore_patterns("__MACOSX", ".DS_Store", "__pycache__"))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _csv(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=MANIFEST_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def _tail(text: str, lines: int = _TAIL_LINES) -> str:
    kept = [line for line in text.strip().splitlines() if line.strip()][-lines:]
    return "\n".join(kept) if kept else "(no output on stderr)"


def _progress(res: JobResult) -> str:
    mark = "+" if res.finished else "-"
    detail = "" if res.finished else f": {res.status_details}"
    return f"[{mark}] {res.phase} / {res.candidate} / {res.task}: {res.status}{detail} ({res.elapsed:.1f} s)"


# ===================================================================== entry point
def run_bundle(
    bundle: str | os.PathLike[str],
    out: str | os.PathLike[str] = "runs",
    *,
    backend: str = "local",
    image: str | None = None,
    submissions: str | os.PathLike[str] | None = None,
    scoring_program: str | os.PathLike[str] | None = None,
    network: bool = False,
    jobs: int | None = None,
    log: Callable[[str], None] = lambda _: None,
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
    network : let docker containers use the network (the local backend cannot block it).
    jobs : how many (submission, task) jobs run at the same time (default: the number of
        CPUs, at most 4); each job still runs its programs under its own timer.
    log : called with one progress line per job.
    """
    bundle, out = Path(bundle), Path(out).absolute()
    if bundle.is_file() and not zipfile.is_zipfile(bundle):
        raise InputError(f"{bundle}: not a bundle folder or zip file.")
    if not bundle.exists():
        raise InputError(f"{bundle}: no such bundle folder or zip file.")
    engine = get_backend(backend, image=image, network=network)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("runs", "outputs", "cache", "bundle", "final"):
        if (out / name).exists():
            if bundle.resolve().is_relative_to((out / name).resolve()):
                raise InputError(f"{bundle} is inside {out / name}, which the runner rewrites; "
                                 "choose another --out.")
            shutil.rmtree(out / name)
    if bundle.is_file():
        safe_extract(bundle, out / "bundle")
        bundle = out / "bundle"
    comp = load_competition(bundle)
    if comp.leaderboard is None:
        raise ConfigError(f"{bundle}: the competition has no leaderboard.")
    runner = _Runner(comp, out, engine, image=image,
                     scoring_program=Path(scoring_program) if scoring_program else None, log=log,
                     jobs=jobs if jobs is not None else min(4, os.cpu_count() or 1))
    report = RunReport(out=out, backend=backend, warnings=list(comp.warnings))
    subs, warnings = collect_submissions(comp, Path(submissions) if submissions else None, cache=out / "cache")
    report.warnings.extend(warnings)
    if not subs:
        report.warnings.append("no submissions to run: add a starting kit, solutions, "
                               "sample_submissions/ or --submissions.")
    log(f"[*] {comp.title}: {len(comp.phases)} phase(s), {len(subs)} submission(s), backend {backend}")
    runner.run(subs, report)
    _write(out / "run_summary.json", json.dumps(report.to_dict(), indent=2, allow_nan=False) + "\n")
    return report


def format_report(report: RunReport) -> str:
    """The summary table (phase, submission, task, status, scores, elapsed) and file paths."""
    rows = [("phase", "submission", "task", "status", "scores", "elapsed")]
    for r in report.results:
        shown = {**r.scores, **r.computed}
        scores = ", ".join(f"{k}={v:.6g}" for k, v in shown.items()) or "-"
        rows.append((r.phase, r.candidate, r.task, r.status, scores, f"{r.elapsed:.1f}s"))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row[:5], widths)) + "  " + row[5] for row in rows]
    problems = [r for r in report.results if not r.finished or r.prediction_problems or r.warnings]
    if problems:
        lines.append("")
        for r in problems:
            head = f"{r.phase} / {r.candidate} / {r.task}"
            if not r.finished:
                lines.append(f"FAILED {head}: {r.status_details}")
                lines.extend("    " + line for line in r.reason.splitlines())
            for note in r.prediction_problems + r.warnings:
                first, *rest = note.splitlines()
                lines.append(f"note   {head}: {first}")
                lines.extend("    " + line for line in rest)
            lines.append(f"    logs: {r.run_dir}")
    if report.warnings:
        lines.append("")
        lines.extend(f"warning: {w}" for w in report.warnings)
    lines.append("")
    n_ok = sum(r.finished for r in report.results)
    lines.append(f"{n_ok} of {len(report.results)} runs finished; outputs tree: {report.out / 'outputs'}")
    if report.meta is not None:
        lines.append(f"meta-scoring: {report.meta.status}"
                     + (f" ({report.meta.status_details})" if not report.meta.finished else ""))
    if report.leaderboard:
        lines.append(f"final leaderboard: {report.leaderboard}")
    if report.detailed_results:
        lines.append(f"detailed results: {report.detailed_results}")
    return "\n".join(lines)
