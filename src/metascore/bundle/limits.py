"""The limits every job runs under, on every backend, and what a job killed by one is told.

A job (the programs of one prediction or scoring step) gets the phase's wall time and:

- ``memory``: the memory of all its processes together (their proportional set size, so
  pages shared after ``fork`` count once; default 2 GiB);
- ``processes``: how many of its processes may exist at once (default 256; a fork bomb is
  killed when it passes that);
- ``disk``: bytes written under its output and scratch folders (default 5 GiB; every
  single file is capped there too);
- ``log``: bytes kept of each of its stdout/stderr logs (default 10 MiB: the first and the
  last half, with a note of what was cut; see :mod:`metascore.bundle.logs`).

The local backend enforces them with resource limits in the job's first process
(:func:`apply_rlimits`: the address space one process may allocate, the size of one file)
and by watching the job from the outside a few times a second (:class:`JobWatch`: the
processes of the job's session in ``/proc``, the size of its folders); the Docker backend
gives memory and processes to the engine and watches the output folder the same way.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError

__all__ = [
    "Limits", "parse_size", "format_size", "tree_size", "apply_rlimits", "JobWatch",
    "LIMIT_MESSAGES", "limit_error", "add_limit_options", "limits_from_args",
]

_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}

#: The platform-style message of a job killed by a limit (``{value}``: the limit, ``{option}``).
LIMIT_MESSAGES = {
    "memory": "Memory limit exceeded: the job used more than {value} of memory "
              "(change it with {option})",
    "processes": "Process limit exceeded: the job started more than {value} processes at once "
                 "(change it with {option})",
    "disk": "Disk limit exceeded: the job wrote more than {value} under its output "
            "(change it with {option})",
}
_OPTIONS = {"memory": "--memory", "processes": "--max-processes", "disk": "--disk-limit"}
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

    def message(self, kind: str) -> str:
        """The message of a job killed for ``kind`` (``memory``, ``processes``, ``disk``)."""
        value = getattr(self, kind)
        shown = str(value) if kind == "processes" else format_size(value)
        return LIMIT_MESSAGES[kind].format(value=shown, option=_OPTIONS[kind])


def limit_error(stderr_tail: str, limits: Limits) -> str | None:
    """The limit (``memory``, ``disk``, ``processes``) a failed program's stderr shows it hit."""
    for kind, pattern in _ERRORS.items():
        if getattr(limits, kind) is not None and pattern.search(stderr_tail):
            return kind
    return None


def tree_size(paths: list[Path]) -> int:
    """Bytes allocated on disk by the files under ``paths`` (symlinks not followed)."""
    total, stack = 0, [str(p) for p in paths]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:  # vanished or unreadable: nothing to count
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    stat = entry.stat(follow_symlinks=False)
                    total += max(stat.st_blocks * 512, 0) if hasattr(stat, "st_blocks") else stat.st_size
            except OSError:
                continue
    return total


def apply_rlimits(limits: Limits) -> None:
    """In the job's first process (before ``exec``): cap what one process may allocate and
    the size of one file, and forbid core dumps. Children inherit the limits."""
    import resource

    def cap(which: int, value: int) -> None:
        soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value))

    if limits.memory is not None:
        cap(resource.RLIMIT_DATA, limits.memory)
    if limits.disk is not None:
        cap(resource.RLIMIT_FSIZE, limits.disk)
    cap(resource.RLIMIT_CORE, 0)


class JobWatch:
    """Watches one job from the outside: its processes (all those of the session ``sid``) and
    the size of its writable folders; :meth:`check` says which limit it broke, if any."""

    def __init__(self, sid: int | None, folders: list[Path], limits: Limits) -> None:
        self.sid, self.folders, self.limits = sid, folders, limits
        self.page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

    def processes(self) -> list[tuple[int, int]]:
        """``(pid, resident bytes)`` of every process of the session (Linux ``/proc``)."""
        found = []
        if self.sid is None or not os.path.isdir("/proc/self"):
            return found
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            # after "pid (comm)": state ppid pgrp session ... rss is field 24 (index 21 here)
            if len(fields) > 21 and int(fields[3]) == self.sid:
                found.append((int(name), int(fields[21]) * self.page))
        return found

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

    def disk_exceeded(self) -> bool:
        """The folders hold more than the disk cap (checked once more when the job ends)."""
        return self.limits.disk is not None and bool(self.folders) and tree_size(self.folders) > self.limits.disk

    def check(self) -> str | None:
        """``"memory"``, ``"processes"``, ``"disk"`` or ``None``."""
        limits = self.limits
        if limits.memory is not None or limits.processes is not None:
            procs = self.processes()
            if limits.processes is not None and len(procs) > limits.processes:
                return "processes"
            if limits.memory is not None and sum(rss for _, rss in procs) > limits.memory \
                    and sum(self.memory(pid, rss) for pid, rss in procs) > limits.memory:
                return "memory"
        return "disk" if self.disk_exceeded() else None


def add_limit_options(parser) -> None:
    """``--memory``, ``--max-processes``, ``--disk-limit``, ``--log-limit`` on a command line."""
    default = Limits()
    parser.add_argument("--memory", default=format_size(default.memory), metavar="SIZE",
                        help="memory of each job, all its processes together (default: %(default)s; 0: none)")
    parser.add_argument("--max-processes", type=int, default=default.processes, metavar="N",
                        help="processes of each job at once (default: %(default)s; 0: none)")
    parser.add_argument("--disk-limit", default=format_size(default.disk), metavar="SIZE",
                        help="bytes each job may write under its output (default: %(default)s; 0: none)")
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
