"""A control group per local step: memory and processes counted by the kernel, as Docker does.

The local backend's watcher sees a job's processes and folders. Some memory belongs to no
process's address space and lies in no folder: ``memfd`` files, System V shared memory,
a ``tmpfs``. A memory control group charges every page to the job that made it, whatever
holds it, so a job over ``--memory`` is stopped by the kernel's OOM killer (the job then
fails with the memory limit's message), and a ``pids`` group caps its processes and
threads together (``--max-processes``, as ``docker run --pids-limit``).

:func:`cgroup_support` finds the hierarchy where the runner can make groups: cgroup v2
(``/sys/fs/cgroup/cgroup.controllers`` listing ``memory`` and ``pids``; the groups go under
``/sys/fs/cgroup/metascore-<pid>/``, a group without processes of its own, as v2 wants) or
v1 (``/sys/fs/cgroup/memory`` and ``/sys/fs/cgroup/pids``; the groups go under the
runner's own group of each). Both need the right to make groups there: root, or a
delegated hierarchy. :class:`StepGroup` is one step's group: made with the step's limits,
joined by the step's first process before anything else runs (``job_init.py --cgroup``:
every process of the step is then in it), asked whether the OOM killer struck, and
removed when the step is over (its processes killed first).
"""

from __future__ import annotations

import functools
import itertools
import os
import signal
import time
from pathlib import Path

from .limits import Limits

__all__ = ["StepGroup", "cgroup_support", "CGROUP_ROOT", "SANDBOX_PROCESSES"]

#: Where the cgroup file systems are mounted.
CGROUP_ROOT = Path("/sys/fs/cgroup")
#: Processes of the sandbox itself in a step's group (bwrap and its init), beyond the job's.
SANDBOX_PROCESSES = 3
_COUNTER = itertools.count(1)


def _own_path(controller: str, proc_cgroup: str) -> str:
    """The runner's own group in the hierarchy of ``controller`` (``""``: cgroup v2), from
    the text of ``/proc/self/cgroup``."""
    for line in proc_cgroup.splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(",") or (controller == "" and controllers == ""):
            return path.lstrip("/")
    raise OSError(f"this process is in no {controller or 'cgroup v2'} group")


@functools.lru_cache(maxsize=1)
def cgroup_support(root: Path = CGROUP_ROOT) -> tuple[str | None, str]:
    """``("v2" | "v1", "")`` when the runner can make a group with memory and pids limits
    here (tried once, by making and removing one), else ``(None, why)``."""
    try:
        with open("/proc/self/cgroup") as handle:
            mine = handle.read()
    except OSError:
        return None, "there are no control groups here"
    kind = "v2" if (root / "cgroup.controllers").is_file() else "v1"
    try:
        probe = StepGroup(Limits(memory=64 << 20, processes=8, disk=None), root=root, proc_cgroup=mine, kind=kind)
        probe.remove()
    except OSError as exc:
        why = exc.strerror or str(exc)
        if kind == "v2":
            return None, f"no cgroup v2 group with memory and pids limits can be made here ({why})"
        return None, f"no cgroup v1 memory and pids groups can be made here ({why})"
    return kind, ""


class StepGroup:
    """The control group(s) of one step: ``memory`` and ``pids`` limits (see the module)."""

    def __init__(self, limits: Limits, *, root: Path = CGROUP_ROOT, proc_cgroup: str | None = None,
                 kind: str | None = None) -> None:
        if proc_cgroup is None:
            with open("/proc/self/cgroup") as handle:
                proc_cgroup = handle.read()
        self.kind = kind or ("v2" if (root / "cgroup.controllers").is_file() else "v1")
        name = f"metascore-{os.getpid()}-{next(_COUNTER)}"
        if self.kind == "v2":
            parent = root / f"metascore-{os.getpid()}"
            if not parent.is_dir():
                parent.mkdir(exist_ok=True)
                (parent / "cgroup.subtree_control").write_text("+memory +pids")
            self.folders = [parent / name]
        else:
            self.folders = [root / c / _own_path(c, proc_cgroup) / name for c in ("memory", "pids")]
        made: list[Path] = []
        try:
            for folder in self.folders:
                folder.mkdir()
                made.append(folder)
            self._limit(limits)
        except BaseException:
            for folder in reversed(made):
                folder.rmdir()
            raise

    def _limit(self, limits: Limits) -> None:
        processes = None if limits.processes is None else limits.processes + SANDBOX_PROCESSES
        if self.kind == "v2":
            group = self.folders[0]
            if limits.memory is not None:
                (group / "memory.max").write_text(str(limits.memory))
                if (group / "memory.swap.max").exists():
                    (group / "memory.swap.max").write_text("0")
            if processes is not None:
                (group / "pids.max").write_text(str(processes))
            return
        memory, pids = self.folders
        if limits.memory is not None:
            (memory / "memory.limit_in_bytes").write_text(str(limits.memory))
            if (memory / "memory.memsw.limit_in_bytes").exists():  # swap counted too
                (memory / "memory.memsw.limit_in_bytes").write_text(str(limits.memory))
        if processes is not None:
            (pids / "pids.max").write_text(str(processes))

    @property
    def procs_files(self) -> list[str]:
        """The ``cgroup.procs`` files the step's first process writes its pid into."""
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the step for its memory limit."""
        events = self.folders[0] / ("memory.events" if self.kind == "v2" else "memory.oom_control")
        try:
            for line in events.read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and int(value) > 0:
                    return True
        except (OSError, ValueError):
            pass
        return False

    def pids(self) -> list[int]:
        """The processes in the step's group."""
        try:
            return [int(p) for p in (self.folders[0] / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def remove(self, wait: float = 5.0) -> None:
        """Kill what is left in the group, then remove it (a group is removed only once
        empty; its killed processes may take a moment to go)."""
        deadline = time.monotonic() + wait
        for folder in reversed(self.folders):
            while True:
                for pid in self.pids() if folder == self.folders[0] else ():
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.02)
