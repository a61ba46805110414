"""The parsed competition: what a ``competition.yaml`` (v2, or v1 mapped to v2) describes.

Plain frozen dataclasses, as Codabench's models hold them after unpacking: a
:class:`Competition` has tasks (programs and data), phases (dates, time limit, task
indexes), the one :class:`LeaderboardSpec` Codabench attaches to every phase and its
:class:`Column` s, and the organizer's :class:`Solution` s. :class:`BundleReport` is what
:func:`~metascore.bundle.schema.load.check_schema` returns (and
:func:`~metascore.bundle.check.full.check_bundle` completes). The rules that build them live in
:mod:`~metascore.bundle.schema.v2`, :mod:`~metascore.bundle.schema.v1` and
:mod:`~metascore.bundle.schema.program_checks`.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path

from ...readers.columns import Column

__all__ = [
    "LeaderboardSpec",
    "Task",
    "Phase",
    "Solution",
    "Competition",
    "BundleReport",
    "SORTINGS",
    "COMPUTATIONS",
    "COMPETITION_TYPES",
    "PATH_KEYS",
    "DEFAULT_IMAGE",
    "DEFAULT_TIME_LIMIT",
    "UUID_PATTERN",
    "SUBMISSION_MANIFESTS",
    "bundle_path",
]

SORTINGS = ("desc", "asc")
COMPUTATIONS = ("avg", "sum", "min", "max", "avg_rank")
COMPETITION_TYPES = ("competition", "benchmark")
#: Keys whose value is a path inside the bundle (v2 and v1).
PATH_KEYS = (
    "image", "terms", "file", "path", "scoring_program", "ingestion_program", "input_data",
    "reference_data", "starting_kit", "public_data",
)
DEFAULT_IMAGE = "codalab/codalab-legacy:py37"
DEFAULT_TIME_LIMIT = 600
#: The manifest of a folder of submissions (participant, time, phase of each), first found first.
SUBMISSION_MANIFESTS = ("submissions.yaml", "submissions.yml", "submissions.csv")
#: A dataset or task key of an existing Codabench object (not a path in the bundle).
UUID_PATTERN = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


@dataclass(frozen=True)
class LeaderboardSpec:
    """``leaderboards[0]``: the one leaderboard Codabench attaches to every phase, as
    ``competition.yaml`` declares it (its columns and rule; the ranking metascore computes
    is :class:`metascore.leaderboard.Leaderboard`)."""

    title: str
    key: str
    columns: tuple[Column, ...]
    primary_index: int = 0
    submission_rule: str = "Add"

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.columns)


@dataclass(frozen=True)
class Task:
    """A task: paths are as written in the yaml (relative to the bundle root), or ``None``."""

    index: int
    name: str
    scoring_program: str | None = None
    ingestion_program: str | None = None
    input_data: str | None = None
    reference_data: str | None = None
    ingestion_only_during_scoring: bool = False
    key: str | None = None  # an existing Codabench task (not runnable offline)


@dataclass(frozen=True)
class Phase:
    """A phase; ``auto_migrate``: ``auto_migrate_to_this_phase`` (v1: ``auto_migration``).

    ``start`` and ``end`` are the dates as Codabench stores them (UTC, no time zone; an
    unquoted YAML date-time keeps only its day: :mod:`~metascore.bundle.schema.phase_dates`).
    ``yaml_key``: where the phase is in ``competition.yaml`` (``phases[1]``; v1: ``phases.2``).
    """

    index: int
    name: str
    tasks: tuple[int, ...]
    execution_time_limit: int = DEFAULT_TIME_LIMIT
    starting_kit: str | None = None
    public_data: str | None = None
    start: dt.datetime | None = None
    end: dt.datetime | None = None
    #: ``auto_migrate_to_this_phase`` (v1 ``auto_migration``): the previous phase's finished
    #: submissions are re-run here.
    auto_migrate: bool = False
    yaml_key: str = ""
    #: ``hide_output``: only the organizers may download a submission's files
    #: (``get_details``: its input, predictions, scoring output and logs)
    hide_output: bool = False


@dataclass(frozen=True)
class Solution:
    index: int
    tasks: tuple[int, ...]
    path: str | None = None


@dataclass(frozen=True)
class Competition:
    """A parsed bundle, v1 bundles mapped to the v2 model as Codabench maps them."""

    root: Path
    version: int
    title: str
    docker_image: str
    tasks: dict[int, Task]
    phases: tuple[Phase, ...]
    leaderboard: LeaderboardSpec | None
    solutions: tuple[Solution, ...] = ()
    pages: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    #: False when competition.yaml sets no image (``docker_image`` is Codabench's default)
    image_given: bool = True
    #: ``enable_detailed_results``: anyone who may see the leaderboard may open a
    #: submission's ``detailed_results.html`` (off: the site answers 404)
    enable_detailed_results: bool = False
    #: ``registration_auto_approve`` (v1: ``has_registration: false``): registrations are
    #: approved at once (off: each waits for the organizer, and its submissions are refused)
    registration_auto_approve: bool = False

    def path(self, ref: str | None) -> Path | None:
        """The bundle file or folder ``ref`` points to (a ``.zip`` or a folder), or ``None``
        (:func:`bundle_path`)."""
        if not ref or UUID_PATTERN.match(ref):
            return None
        return bundle_path(self.root, ref)

    def phase_tasks(self, phase: Phase) -> list[Task]:
        return [self.tasks[i] for i in phase.tasks]


def bundle_path(root: Path, ref: str) -> Path:
    """``root / ref``; for a ``X.zip`` that is not there while the folder ``X/`` is, the
    folder: CodaLab repositories keep their programs and data as folders that a script
    zips at release, and ``metascore bundle zip`` writes ``X.zip`` from it."""
    target = root / ref.rstrip("/")
    if target.suffix.lower() == ".zip" and not target.exists():
        folder = target.with_suffix("")
        if folder.is_dir():
            return folder
    return target


@dataclass
class BundleReport:
    """What :func:`~metascore.bundle.schema.load.check_schema` and
    :func:`~metascore.bundle.check.full.check_bundle` found.

    ``notes``: what is fine as it is but must not be uploaded so (e.g. the meta-scoring
    program placeholder that ``metascore bundle zip`` fills); neither errors nor warnings.
    """

    root: Path
    competition: Competition | None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors
