"""The contract between the mock bundle runner and its execution backends.

The worker emulation (:mod:`metascore.bundle.worker.job`) prepares, for each program it runs, a
:class:`StepSpec`: the command as the compute worker would run it (placeholders already
replaced by ``/app/...`` paths), the host directories mounted at the worker's container
paths, the working directory, the environment and the time limit. A backend runs it and returns a :class:`StepResult`.

- ``local`` (:mod:`metascore.bundle.worker.local`): a ``bwrap`` sandbox on this machine with the
  mounts at ``/app/...`` (:mod:`metascore.bundle.worker.sandbox`), or, where bwrap cannot run, a
  subprocess with the ``/app/...`` paths of its command rewritten to the host folders.
- ``docker`` (:mod:`metascore.bundle.worker.docker_backend`): a container through the ``docker``
  SDK with the same mounts.

Both run the command split by :func:`split_command` and without a shell, as the worker does.
Each declares what it can do (:class:`Capabilities`) and refuses a run it could not do
(``check_run``); the runner and the site read these, never a backend's name or type, and
:mod:`metascore.bundle.worker.backends` makes each by its ``--backend`` name.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ...errors import ConfigError
from ..schema.competition import DEFAULT_TIME_LIMIT
from .limits import Limits

__all__ = ["Mount", "StepSpec", "StepResult", "Capabilities", "Backend", "split_command"]


@dataclass(frozen=True)
class Mount:
    """A host directory visible at ``container_path`` (e.g. ``/app/input``)."""

    container_path: str
    host_path: Path
    read_only: bool = False


@dataclass(frozen=True)
class StepSpec:
    """One program run (ingestion, submission or scoring program)."""

    name: str                      # e.g. "scoring", "ingestion", "submission"
    command: str                   # placeholders substituted, e.g. "python3 /app/program/score.py /app/input /app/output"
    mounts: tuple[Mount, ...]
    working_dir: str = "/app/program"
    env: dict[str, str] = field(default_factory=lambda: {"PYTHONUNBUFFERED": "1"})
    time_limit: float = float(DEFAULT_TIME_LIMIT)  # seconds
    image: str | None = None       # docker image (ignored by the local backend)
    stdout_path: Path | None = None  # where the capped logs go (a temporary file if None)
    stderr_path: Path | None = None
    scratch: Path | None = None    # a folder in the run for what the job writes elsewhere
    #                                (``/app`` outside the mounts, ``/tmp``); local backend
    sandbox: Path | None = None    # the folder holding all of the above, closed to other users
    #                                (the local rewrite mode opens it to a job's own user)


@dataclass(frozen=True)
class StepResult:
    exit_code: int | None          # None when killed (time-out or a limit)
    timed_out: bool
    stdout: str                    # the end of the log (at most 64 KiB), for messages
    stderr: str
    elapsed: float                 # seconds
    killed: str | None = None      # "time", "memory", "processes", "disk" or None
    message: str = ""              # why, when a limit stopped the step


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do, as it declares it: the runner and the site read these, never
    the backend's name or type.

    ``runs_image``: the programs run in containers of the competition's image (the docker
    backend), so the runner asks a container of it whether the meta-scoring program runs
    there, and ``--meta-python auto`` decides by the image; ``False``: they run on this
    machine with its Python (the local backend), so the image is not tried, and ``auto``
    runs the meta-scoring program with that Python, no runtime needed.
    ``sandbox_missing``: why the jobs run without the isolation this backend would give them,
    though nobody declined it (the local backend's ``--sandbox auto`` where bwrap cannot run);
    ``""`` when they run isolated, or unisolated on request. The runner then refuses
    submissions the bundle does not carry (``--submissions``).
    """

    runs_image: bool
    sandbox_missing: str = ""


class Backend(Protocol):
    """Runs steps; enforces its :class:`~metascore.bundle.worker.limits.Limits` on each of them.

    ``name`` is the ``--backend`` value; ``notice`` what this backend cannot do that the
    worker does, said once by the runner (``""``: nothing to say); ``limits`` the per-job
    limits (the site extracts a submission zip within ``limits.disk``); ``capabilities``
    what it can do (:class:`Capabilities`).
    """

    name: str
    notice: str
    limits: Limits
    capabilities: Capabilities

    def describe(self, image: str | None) -> str:  # pragma: no cover - protocol
        """One line for the run's log: where and with what the programs run for ``image``."""
        ...

    def check_run(self, out: Path, image: str | None) -> None:  # pragma: no cover - protocol
        """Refuse (:class:`~metascore.errors.ConfigError`, naming what to change), before
        anything runs, a run whose jobs this backend could not run: writing under ``out``,
        with the programs of ``image``."""
        ...

    def run(self, step: StepSpec) -> StepResult:  # pragma: no cover - protocol
        ...

    def run_many(self, steps: list[StepSpec], time_limit: float) -> list[StepResult]:  # pragma: no cover
        """Run steps concurrently under one shared timer (ingestion + program of a job)."""
        ...


def split_command(step: StepSpec) -> list[str]:
    """The step's command as the worker runs it: split with :func:`shlex.split` (docker-py
    splits a string command the same way), run without a shell.

    Raises
    ------
    ConfigError
        When the command cannot be split (an unclosed quote) or is empty.
    """
    try:
        tokens = shlex.split(step.command)
    except ValueError as exc:
        raise ConfigError(f"{step.name}: command {step.command!r} cannot be split ({exc}).") from None
    if not tokens:
        raise ConfigError(f"{step.name}: the command is empty.")
    return tokens
