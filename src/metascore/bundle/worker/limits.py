"""The limits every job runs under, on every backend, and what a job killed by one is told.

A job (the programs of one prediction or scoring step) gets the phase's wall time and:

- ``memory``: the memory of all its processes together (their proportional set size, so
  pages shared after ``fork`` count once; default 2 GiB);
- ``processes``: how many of its processes may exist at once (default 256; a fork bomb is
  killed when it passes that);
- ``disk``: bytes written in every folder it can write (its output, its other mounts, its
  ``/app`` and ``/tmp``; bytes allocated, so a sparse file counts what it holds), with the
  files it deleted but still holds open; default 5 GiB; every single file is capped there
  too, at the size it claims (a sparse file of 1 TiB holds a few KB, but any tool that
  copies or archives ``--out`` without its holes writes a terabyte); and with it the files
  and folders it may make there, one per 4 KiB (:data:`FILE_COST`: 40,000 empty files
  exhaust a file system's inodes, not its bytes);
- ``log``: bytes kept of each of its stdout/stderr logs (default 10 MiB: the first and the
  last half, with a note of what was cut; see :mod:`metascore.bundle.worker.logs`).

The local backend enforces them with resource limits in the job's first process
(:func:`rlimit_values`, set by :mod:`metascore.bundle.worker.job_init`: the address space one
process may allocate, the size of one file, and as root the processes of the job's own
user) and by watching the job from the outside a few times a second (:class:`JobWatch`:
every descendant of its first process in ``/proc``, its ``/dev/shm``, the growth of every
folder it can write, the largest file there and the deleted files its processes hold
open); as root, a control group of the job's own also holds memory and processes
(:mod:`metascore.bundle.worker.cgroups`). The Docker backend gives memory and processes to
the engine and watches the writable folders the same way, with the container's own
writable layer (its ``/tmp`` and the rest): there the size of one file is capped by the
watch alone (no ``ulimit``, see :mod:`metascore.bundle.worker.docker_backend`), after the
job as while it runs.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...errors import ConfigError
from .job_init import descendants, process_table
from ..trees import Usage, tree_usage

__all__ = [
    "Limits", "parse_size", "format_size", "tree_size", "rlimit_values", "JobWatch",
    "LIMIT_MESSAGES", "limit_error", "add_limit_options", "limits_from_args", "FILE_COST",
    "WATCH_INTERVAL",
]

#: Seconds between two looks of a backend at a running job (:class:`JobWatch`: its
#: processes, the folders it can write).
WATCH_INTERVAL = 0.25
#: Each file or folder a job makes counts this much of ``--disk-limit`` towards its file
#: limit (a file system block).
FILE_COST = 4096

_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}

#: The platform-style message of a job killed by a limit (``{value}``: the limit, ``{option}``).
LIMIT_MESSAGES = {
    "memory": "Memory limit exceeded: the job used more than {value} of memory "
              "(change it with {option})",
    "processes": "Process limit exceeded: the job started more than {value} processes at once "
                 "(change it with {option})",
    "disk": "Disk limit exceeded: the job wrote more than {value} under its output "
            "(change it with {option})",
    "files": "File limit exceeded: the job made more than {value} files and folders under its "
             "output (one per 4 KiB of {option}; change it there)",
}
_OPTIONS = {"memory": "--memory", "processes": "--max-processes", "disk": "--disk-limit",
            "files": "--disk-limit"}
_ERRORS = {  # what a program prints when a limit refuses it something
    "memory": re.compile(r"^MemoryError|std::bad_alloc|Cannot allocate memory|out of memory",
                         re.MULTILINE | re.IGNORECASE),
    "disk": re.compile(r"File too large|\[Errno 27\]"),
    "processes": re.compile(r"BlockingIOError: \[Errno 11\]|fork: (retry: )?Resource temporarily "
                            r"unavailable|can't start new thread"),
}


def parse_size(text: str | int) -> int:
    """Bytes from ``"512m"``, ``"2g"``, ``"10MB"``, ``"1048576"`` (binary units).

    >>> parse_size("2g"), parse_size("512M"), parse_size("10mb"), parse_size(4096)
    (2147483648, 536870912, 10485760, 4096)
    """
    if isinstance(text, int):
        return text
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", str(text).lower())
    if not match:
        raise ValueError(f"{text!r} is not a size; write a number with k, m or g (e.g. 512m, 2g).")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def format_size(size: int) -> str:
    """``2147483648`` -> ``"2g"``; ``10485760`` -> ``"10m"``; other sizes in bytes."""
    for unit in ("t", "g", "m", "k"):
        if size >= _UNITS[unit] and size % _UNITS[unit] == 0:
            return f"{size // _UNITS[unit]}{unit}"
    return f"{size}b"


@dataclass(frozen=True)
class Limits:
    """Per-job limits (``None``: no limit). Sizes in bytes."""

    memory: int | None = 2 * 1024**3
    processes: int | None = 256
    disk: int | None = 5 * 1024**3
    log: int = 10 * 1024**2

    @property
    def files(self) -> int | None:
        """The files and folders a job may make: one per :data:`FILE_COST` of ``disk``."""
        return None if self.disk is None else max(self.disk // FILE_COST, 1)

    def message(self, kind: str) -> str:
        """The message of a job killed for ``kind`` (``memory``, ``processes``, ``disk``,
        ``files``)."""
        value = getattr(self, kind)
        shown = f"{value:,}" if kind == "files" else str(value) if kind == "processes" else format_size(value)
        return LIMIT_MESSAGES[kind].format(value=shown, option=_OPTIONS[kind])


def limit_error(stderr_tail: str, limits: Limits) -> str | None:
    """The limit (``memory``, ``disk``, ``processes``) a failed program's stderr shows it hit."""
    for kind, pattern in _ERRORS.items():
        if getattr(limits, kind) is not None and pattern.search(stderr_tail):
            return kind
    return None


def tree_size(paths: list[Path]) -> int:
    """Bytes allocated on disk by the files under ``paths`` (symlinks not followed; any depth)."""
    return tree_usage(paths)[0]


def held_deleted(pids: list[int]) -> int:
    """Bytes allocated by the deleted files that the processes ``pids`` still hold open
    (each file once; ``memfd`` files and ``/dev/shm`` are memory, counted there)."""
    seen: dict[tuple[int, int], int] = {}
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            path = f"/proc/{pid}/fd/{fd}"
            try:
                target = os.readlink(path)
                if not target.endswith(" (deleted)") or target.startswith(("/memfd:", "/dev/shm/")):
                    continue
                info = os.stat(path)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_nlink == 0:
                seen[(info.st_dev, info.st_ino)] = info.st_blocks * 512
    return sum(seen.values())


def rlimit_values(limits: Limits, *, processes: bool) -> list[int]:
    """The ``--rlimits DATA FSIZE NPROC`` of :mod:`metascore.bundle.worker.job_init` (-1: unchanged):
    the address space one process may allocate, the size of one file and, with
    ``processes`` (the job runs as a user of its own), how many processes that user may have."""
    nproc = limits.processes if processes and limits.processes is not None else -1
    return [limits.memory if limits.memory is not None else -1,
            limits.disk if limits.disk is not None else -1, nproc]


class JobWatch:
    """Watches one program of a job from the outside: its processes (every descendant of its
    first process ``root``: a process that leaves its session stays one, since the sandbox's
    PID namespace or the rewrite mode's supervisor adopts orphans; ``own`` of them are the
    sandbox's and not counted), their memory with what they hold in the job's own
    ``/dev/shm``, and what they wrote in every folder they can write (growth since the
    start; ``elsewhere``: the bytes it holds where no folder shows them, e.g. a container's
    writable layer as its engine reports it); :meth:`check` says which limit it broke, if any."""

    def __init__(self, root: int | None, folders: list[Path], limits: Limits, *, shm: bool = False,
                 own: int = 0, elsewhere: Callable[[], int] | None = None) -> None:
        self.root, self.folders, self.limits, self.shm, self.own = root, folders, limits, shm, own
        self.elsewhere = elsewhere
        self.page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
        self.base = tree_usage(folders) if limits.disk is not None else Usage(0, 0, 0)
        self.base_elsewhere = elsewhere() if elsewhere is not None and limits.disk is not None else 0
        self._next_disk, self._disk_cost = 0.0, 0.0

    def processes(self) -> list[tuple[int, int]]:
        """``(pid, resident bytes)`` of every process of the program but its first."""
        if self.root is None:
            return []
        table = process_table()
        return [(pid, table[pid][1] * self.page) for pid in descendants(self.root, table) if pid in table]

    @staticmethod
    def memory(pid: int, rss: int) -> int:
        """The process's proportional share of memory (pages shared after ``fork`` counted
        once across the processes), from ``smaps_rollup``; its resident size if unreadable."""
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
                for line in handle:
                    if line.startswith(b"Pss:"):
                        return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            pass
        return rss

    @staticmethod
    def shm_used(pids: list[int]) -> int:
        """Bytes the job holds in its own ``/dev/shm`` (seen through one of its processes)."""
        for pid in pids:
            try:
                fs = os.statvfs(f"/proc/{pid}/root/dev/shm")
            except OSError:
                continue
            return (fs.f_blocks - fs.f_bfree) * fs.f_frsize
        return 0

    def written(self) -> Usage:
        """Bytes and entries added to the job's writable folders since the watch began
        (the bytes with the deleted files its processes still hold open), and the largest
        size a file there claims now."""
        size, entries, largest = tree_usage(self.folders)
        pids = [self.root, *descendants(self.root)] if self.root is not None else []
        if self.elsewhere is not None:
            size += self.elsewhere() - self.base_elsewhere
        return Usage(size - self.base.size + held_deleted(pids), entries - self.base.entries, largest)

    def disk_exceeded(self, *, now: bool = True) -> str | None:
        """``"disk"`` when the folders grew by more than the disk cap or a file there claims
        more (a larger one than was there when the watch began: the local backend's limit on
        the size of one file, for every backend), ``"files"`` when the job made more files and
        folders than it may, else ``None`` (``now=False``: only when a look is due; a large
        tree is looked at less often, so that watching costs at most a tenth of a core)."""
        if self.limits.disk is None or not (self.folders or self.elsewhere):
            return None
        if not now and time.monotonic() < self._next_disk:
            return None
        started = time.monotonic()
        size, entries, largest = self.written()
        self._disk_cost = time.monotonic() - started
        self._next_disk = time.monotonic() + 10 * self._disk_cost
        if size > self.limits.disk or largest > max(self.limits.disk, self.base.largest):
            return "disk"
        return "files" if entries > self.limits.files else None

    def check(self) -> str | None:
        """``"memory"``, ``"processes"``, ``"disk"``, ``"files"`` or ``None``."""
        limits = self.limits
        if limits.memory is not None or limits.processes is not None:
            procs = self.processes()
            if limits.processes is not None and len(procs) - self.own > limits.processes:
                return "processes"
            if limits.memory is not None:
                shm = self.shm_used([pid for pid, _ in procs]) if self.shm else 0
                if sum(rss for _, rss in procs) + shm > limits.memory \
                        and sum(self.memory(pid, rss) for pid, rss in procs) + shm > limits.memory:
                    return "memory"
        return self.disk_exceeded(now=False)


def add_limit_options(parser) -> None:
    """``--memory``, ``--max-processes``, ``--disk-limit``, ``--log-limit`` on a command line."""
    default = Limits()
    parser.add_argument("--memory", default=format_size(default.memory), metavar="SIZE",
                        help="memory of each job, all its processes together (default: %(default)s; 0: none)")
    parser.add_argument("--max-processes", type=int, default=default.processes, metavar="N",
                        help="processes of each job at once (default: %(default)s; 0: none)")
    parser.add_argument("--disk-limit", default=format_size(default.disk), metavar="SIZE",
                        help="bytes each job may write under its output (no one file may claim more, "
                        "a sparse one included), and one file or folder per "
                        "4 KiB of it (default: %(default)s; 0: none)")
    parser.add_argument("--log-limit", default=format_size(default.log), metavar="SIZE",
                        help="bytes kept of each job log: its first and last halves (default: %(default)s)")


def limits_from_args(args) -> Limits:
    """The :class:`Limits` of parsed :func:`add_limit_options` arguments."""
    def size(value: str, option: str) -> int | None:
        try:
            return parse_size(value) or None
        except ValueError as exc:
            raise ConfigError(f"{option}: {exc}") from None

    return Limits(memory=size(args.memory, "--memory"), processes=args.max_processes or None,
                  disk=size(args.disk_limit, "--disk-limit"), log=size(args.log_limit, "--log-limit") or 0)
