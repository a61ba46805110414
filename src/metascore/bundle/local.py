"""The local backend: run a step as a subprocess on this machine.

The compute worker runs each program in a container where the job's directories are
mounted at ``/app/...``. Here there is no container, so :class:`LocalBackend`:

- splits the command with :func:`shlex.split` and runs it **without a shell**, like the
  worker (docker-py splits a string command the same way);
- rewrites every ``/app/...`` path inside each argument to the host directory mounted
  there, longest container path first (``/app/input_data`` before ``/app/input``), also
  inside ``--flag=/app/...`` arguments;
- replaces a leading ``python3`` / ``python`` by :data:`sys.executable`, so the packages
  of the current environment (numpy, metascore, ...) are visible to the programs;
- runs in the host directory mounted at the working directory (``/app/program``), with the
  current environment plus the step's variables (``PYTHONUNBUFFERED=1``);
- kills the whole process group when the time limit shared by the job's steps is reached.

Known limits (use the Docker backend for these): code that hard-codes ``/app/...`` paths in
its own source (rather than receiving them on the command line) does not find them; there
is no isolation (no network or memory limit, read-only mounts are not enforced), and the
programs run with this machine's Python and packages instead of the competition image.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..errors import ConfigError
from .backend import Mount, StepResult, StepSpec

__all__ = ["LocalBackend", "map_container_paths"]

_PYTHONS = ("python", "python3")
_POLL = 0.02


def map_container_paths(text: str, mounts: tuple[Mount, ...]) -> str:
    """Replace each mounted container path in ``text`` by its host path.

    A container path matches at the start of ``text`` or after ``=``, ``:`` or ``,`` and
    must end there or continue with ``/``; longer container paths are tried first.

    >>> from pathlib import Path
    >>> m = (Mount("/app/input", Path("/tmp/run/input")), Mount("/app/input_data", Path("/d")))
    >>> map_container_paths("--data=/app/input_data/x.csv", m)
    '--data=/d/x.csv'
    >>> map_container_paths("/app/input/ref", m)
    '/tmp/run/input/ref'
    """
    ordered = sorted(mounts, key=lambda m: len(m.container_path), reverse=True)
    if not ordered:
        return text
    pattern = re.compile(
        r"(?:(?<=^)|(?<=[=:,]))("
        + "|".join(re.escape(m.container_path.rstrip("/")) for m in ordered)
        + r")(?=/|$|[,:;])"
    )
    hosts = {m.container_path.rstrip("/"): str(m.host_path) for m in ordered}
    return pattern.sub(lambda match: hosts[match.group(1)], text)


class LocalBackend:
    """Run steps as local subprocesses (see the module docstring for what differs)."""

    name = "local"

    def run(self, step: StepSpec) -> StepResult:
        return self.run_many([step], step.time_limit)[0]

    def run_many(self, steps: list[StepSpec], time_limit: float) -> list[StepResult]:
        """Start every step, then wait for all of them under one shared deadline."""
        with tempfile.TemporaryDirectory(prefix="metascore-local-") as tmp:
            jobs = [_Job.start(step, Path(tmp) / str(i)) for i, step in enumerate(steps)]
            deadline = time.monotonic() + time_limit
            while any(job.poll() for job in jobs) and time.monotonic() < deadline:
                time.sleep(_POLL)
            for job in jobs:
                if job.poll():
                    job.kill()
            return [job.result() for job in jobs]

    @staticmethod
    def argv(step: StepSpec) -> list[str]:
        try:
            tokens = shlex.split(step.command)
        except ValueError as exc:
            raise ConfigError(f"{step.name}: command {step.command!r} cannot be split ({exc}).") from None
        if not tokens:
            raise ConfigError(f"{step.name}: the command is empty.")
        tokens = [map_container_paths(t, step.mounts) for t in tokens]
        if tokens[0] in _PYTHONS:
            tokens[0] = sys.executable
        return tokens

    @staticmethod
    def cwd(step: StepSpec) -> str:
        mapped = map_container_paths(step.working_dir, step.mounts)
        if mapped == step.working_dir:
            raise ConfigError(f"{step.name}: working directory {step.working_dir} is not mounted.")
        return mapped


class _Job:
    """One started subprocess, its captured output files and its timings."""

    def __init__(self, step: StepSpec, proc: subprocess.Popen | None, out, err, start: float) -> None:
        self.step, self.proc, self.out, self.err = step, proc, out, err
        self.start, self.end = start, None
        self.killed = False

    @classmethod
    def start(cls, step: StepSpec, base: Path) -> _Job:
        out, err = open(f"{base}.out", "w+b"), open(f"{base}.err", "w+b")
        argv, cwd = LocalBackend.argv(step), LocalBackend.cwd(step)
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv, cwd=cwd, env={**os.environ, **step.env}, stdout=out, stderr=err,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )
        except OSError as exc:  # program not found or not executable
            err.write(f"cannot start {argv[0]!r}: {exc}\n".encode())
            proc = None
        return cls(step, proc, out, err, started)

    def poll(self) -> bool:
        """True while the process runs."""
        if self.proc is None or self.end is not None:
            return False
        if self.proc.poll() is None:
            return True
        self.end = time.monotonic()
        return False

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        self.end = time.monotonic()
        self.killed = True

    def result(self) -> StepResult:
        code = None if self.killed else (127 if self.proc is None else self.proc.returncode)
        return StepResult(
            exit_code=code, timed_out=self.killed, stdout=_read(self.out), stderr=_read(self.err),
            elapsed=(self.end or time.monotonic()) - self.start,
        )


def _read(handle) -> str:
    handle.flush()
    handle.seek(0)
    text = handle.read().decode("utf-8", errors="replace")
    handle.close()
    return text
