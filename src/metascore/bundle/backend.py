"""The contract between the mock bundle runner and its execution backends.

The worker emulation (:mod:`metascore.bundle.worker`) prepares, for each program it runs, a
:class:`StepSpec`: the command as the compute worker would run it (placeholders already
replaced by ``/app/...`` paths), the host directories mounted at the worker's container
paths, the working directory, the environment and the time limit. A backend runs it and returns a :class:`StepResult`.

- ``local`` (:mod:`metascore.bundle.local`): a subprocess on this machine, ``/app/...``
  paths in the command rewritten to the mounted host directories.
- ``docker`` (:mod:`metascore.bundle.docker_backend`): a container through the ``docker``
  SDK with the same mounts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

__all__ = ["Mount", "StepSpec", "StepResult", "Backend"]


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
    time_limit: float = 600.0      # seconds
    image: str | None = None       # docker image (ignored by the local backend)


@dataclass(frozen=True)
class StepResult:
    exit_code: int | None          # None when killed on time-out
    timed_out: bool
    stdout: str
    stderr: str
    elapsed: float                 # seconds


class Backend(Protocol):
    name: str

    def run(self, step: StepSpec) -> StepResult:  # pragma: no cover - protocol
        ...

    def run_many(self, steps: list[StepSpec], time_limit: float) -> list[StepResult]:  # pragma: no cover
        """Run steps concurrently under one shared timer (ingestion + program of a job)."""
        ...
