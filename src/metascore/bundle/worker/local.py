"""The local backend: run a step on this machine, in a sandbox where one can be made.

Two modes (:class:`LocalBackend` ``sandbox=``):

- ``bwrap`` (the default wherever bubblewrap runs): the command runs **unchanged** in the
  worker's ``/app`` layout as a user of its own, seeing only the system folders, its Python
  and its own folders, with no network (:mod:`metascore.bundle.worker.sandbox`); hard-coded
  ``/app/...`` paths work;
- ``rewrite`` (the fallback: macOS, Windows' WSL without user namespaces, locked-down
  containers): a plain subprocess whose command has every ``/app/...`` path rewritten to the
  host folder mounted there (:func:`map_container_paths`; a path under a folder that is not
  mounted in this step goes to the run's scratch folder), run in the host folder of
  ``/app/program``. It **isolates almost nothing**: the program sees the host; paths
  hard-coded in a program's source are not rewritten, the network is not blocked and
  read-only mounts are not enforced. Its environment is clean and its processes cannot
  outlive it (:mod:`metascore.bundle.worker.job_init` supervises them). It runs as the
  runner's user, except when the runner is root and runs submissions the bundle does not
  carry (``foreign``, ``--submissions``): then each job runs as a user of its own (no
  capability, ``no_new_privs``; its supervisor stays root), all its processes in its own
  control group, and when it ends every process of that user is killed and what it left
  in the folders every user may write and in System V IPC is removed
  (:func:`~metascore.bundle.worker.leftovers.end_user`); the run is refused up front when
  that user could not run the interpreter or reach ``--out`` (:meth:`LocalBackend.check_run`).
  The backend says what the mode does and does not isolate once (:attr:`LocalBackend.notice`);
  the runner refuses to take this mode by itself for submissions the bundle does not carry
  (:attr:`LocalBackend.capabilities`' ``sandbox_missing``).

In both modes the command is split as the docker backend splits it
(:func:`~metascore.bundle.worker.backend.split_command`) and run **without a shell**; ``python``
and ``python3`` run the chosen environment's interpreter (``--python-env``, else the
environment ``metascore bundle env`` built for the step's image, else this Python;
:mod:`metascore.bundle.worker.pyenv`); the environment is clean (``PATH``, ``HOME``, ``TMPDIR``,
``LANG`` and the step's ``PYTHONUNBUFFERED=1``); stdout and stderr are streamed into capped
logs (:mod:`metascore.bundle.worker.logs`); the job runs under its limits
(:mod:`metascore.bundle.worker.limits`: wall time shared by the job's steps, memory, processes,
disk) and every process of the job is killed when its first process ends or a limit is
reached.
"""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ...errors import ConfigError
from ..trees import make_folders
from .backend import Capabilities, Mount, StepResult, StepSpec, split_command
from .cgroups import StepGroup, cgroup_support
from .job_init import descendants
from .leftovers import end_user
from .limits import WATCH_INTERVAL, JobWatch, Limits, limit_error, rlimit_values
from .logs import CappedLog, tail
from .pyenv import interpreter_for, missing_module_hint
from .sandbox import (
    JOB_INIT,
    SCRATCH_DIRS,
    SHM_SIZE,
    bwrap_argv,
    clean_env,
    give_to,
    python_wrappers,
    sandbox_available,
    sandbox_env,
    visible_paths,
)
from .syscall_filter import filter_support, job_filter

__all__ = ["LocalBackend", "map_container_paths", "kernel_notice", "DEFAULT_SANDBOX", "SANDBOX_MODES",
           "REWRITE_NOTICE", "REWRITE_USER_NOTICE", "KERNEL_NOTICE"]

#: ``auto``: bwrap where it runs, else rewrite.
DEFAULT_SANDBOX = "auto"
SANDBOX_MODES = (DEFAULT_SANDBOX, "bwrap", "rewrite")
REWRITE_NOTICE = (
    "local backend in rewrite mode ({why}): the programs run unisolated, as your user, and can "
    "read and write what you can; only /app/... paths on the command line are rewritten, so "
    "a program that opens a hard-coded /app/... path in its own code fails; the network is not "
    "blocked and read-only mounts are not enforced. Install bubblewrap (apt-get install "
    "bubblewrap) or use --backend docker for the worker's real layout and isolation."
)
#: The rewrite mode as root with submissions the bundle does not carry.
REWRITE_USER_NOTICE = (
    "local backend in rewrite mode ({why}), run as root: each job runs as a user of its own, "
    "with no capability and no way back to root, {contained}; when it ends, every process of "
    "that user is killed and what it left in /tmp, /var/tmp, /dev/shm and System V shared "
    "memory is removed. It is not isolated otherwise: it can read every file any local user may "
    "read (the bundle and its reference data too, unless other users are closed out of them), "
    "write where any local user may, and use the network; read-only mounts are not enforced and "
    "only /app/... paths on the command line are rewritten, so a program that opens a hard-coded "
    "/app/... path in its own code fails. Install bubblewrap (apt-get install bubblewrap) or use "
    "--backend docker for the worker's real layout and isolation."
)
APP_PATH_HINT = (
    "metascore: this program opened a hard-coded /app/... path, which the rewrite mode "
    "cannot serve (it only rewrites paths on the command line). Run it in the sandbox "
    "(install bubblewrap, --sandbox bwrap) or with --backend docker, or pass the folders "
    "on the command line ($input, $output, $program, ...)."
)
KERNEL_NOTICE = (
    "local backend: {why}, so {missing}; --backend docker holds them (or run as root where "
    "cgroups and seccomp work)."
)
_PYTHONS = ("python", "python3")
_SELECT = 0.05      # seconds between looks at the pipes
_PIPE_READ = 1 << 16  # bytes read from a pipe at a time
_DRAIN = 5.0        # seconds to read what is left in the pipes once the job's processes are gone
_APP_MISSING = re.compile(r"(No such file or directory|FileNotFoundError|can't open file).*'/app/")
_MODULE = re.compile(r"No module named '([\w.]+)'")
#: The users jobs run as when the runner is root: ``_UID_BASE + 1000 * (pid mod 100,000) +
#: slot``, one per job running at a time, unknown to the system and to other runners.
_UID_BASE = 1_000_000_000
_SLOTS = 1000


class _Users:
    """A user of its own for each job running at the same time (the runner is root)."""

    def __init__(self) -> None:
        self._lock, self._used = threading.Lock(), set()

    def take(self) -> int:
        with self._lock:
            slot = next(i for i in range(_SLOTS) if i not in self._used)
            self._used.add(slot)
        return _UID_BASE + _SLOTS * (os.getpid() % 100_000) + slot

    def give_back(self, uid: int) -> None:
        with self._lock:
            self._used.discard((uid - _UID_BASE) % _SLOTS)


_USERS = _Users()


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
    """Run steps on this machine (see the module docstring).

    Parameters
    ----------
    sandbox : ``"auto"`` (bwrap where it runs, else rewrite), ``"bwrap"`` (fail where it
        cannot run) or ``"rewrite"``.
    python : a virtual environment folder or an interpreter for ``python``/``python3``;
        by default the environment built for the step's image, else this Python.
    network : let the sandboxed programs use the network.
    limits : the per-job limits (default :class:`~metascore.bundle.worker.limits.Limits`).
    foreign : the jobs run submissions the bundle does not carry (``--submissions``): in
        rewrite mode, a root runner runs each job as a user of its own.
    """

    name = "local"

    def __init__(self, sandbox: str = DEFAULT_SANDBOX, python: str | os.PathLike[str] | None = None,
                 network: bool = False, limits: Limits | None = None, foreign: bool = False) -> None:
        if sandbox not in SANDBOX_MODES:
            raise ConfigError(f"unknown sandbox mode {sandbox!r}; choose one of {', '.join(SANDBOX_MODES)}.")
        ok, why = sandbox_available() if sandbox != "rewrite" else (False, "--sandbox rewrite")
        if sandbox == "bwrap" and not ok:
            raise ConfigError(f"--sandbox bwrap: {why}; install bubblewrap or use --sandbox rewrite.")
        self.mode = "bwrap" if ok else "rewrite"
        #: the mode was asked for (``--sandbox bwrap`` or ``rewrite``), not chosen for lack of bwrap
        self.chosen = sandbox != DEFAULT_SANDBOX
        #: why bwrap is not used ("" in the sandbox)
        self.why = why
        #: the programs run on this machine, not in the image; a sandbox that cannot run
        #: though nobody declined it is said (:class:`~metascore.bundle.worker.backend.Capabilities`)
        self.capabilities = Capabilities(runs_image=False,
                                         sandbox_missing="" if ok or self.chosen else why)
        #: what this mode cannot do, said once by the runner ("" in the sandbox)
        self.notice = "" if ok else REWRITE_NOTICE.format(why=why)
        self.python = _interpreter(python) if python is not None else None
        self.network = network
        self.limits = limits or Limits()
        #: the control groups each step gets ("v1", "v2"), else None
        self.cgroups, no_cgroups = cgroup_support() if os.name == "posix" else (None, "not Linux")
        #: the seccomp filter the sandbox installs (bytes), else None
        no_filter = filter_support() if ok else ""
        self.filter = job_filter() if ok and not no_filter else None
        if ok and (no_cgroups or no_filter):
            self.notice = kernel_notice(no_cgroups, no_filter)
        #: each job runs as a user of its own (the runner is root; in rewrite mode, for foreign submissions)
        self.own_users = os.name == "posix" and os.geteuid() == 0 and (ok or foreign)
        if not ok and self.own_users:
            contained = ("all its processes in a control group of its own that they cannot leave"
                         if self.cgroups else "its processes found by its user")
            self.notice = REWRITE_USER_NOTICE.format(why=why, contained=contained)

    def interpreter(self, step: StepSpec) -> str:
        """The interpreter ``python``/``python3`` run for ``step``."""
        return self.python or interpreter_for(step.image) or sys.executable

    def describe(self, image: str | None) -> str:
        """One line: the mode and what ``python`` runs for ``image``."""
        interpreter = self.interpreter(StepSpec("", "", (), image=image))
        if self.python:
            origin = "--python-env"
        elif interpreter_for(image):
            origin = f"the environment built for {image}"
        else:
            origin = "this Python; `metascore bundle env BUNDLE` builds the image's packages"
        return f"local backend ({self.mode} mode): python runs {interpreter} ({origin})"

    def run(self, step: StepSpec) -> StepResult:
        return self.run_many([step], step.time_limit)[0]

    def run_many(self, steps: list[StepSpec], time_limit: float) -> list[StepResult]:
        """Start every step, then stream their logs and watch their limits until all end or
        the shared deadline passes. As root, the steps (one job) run as a user of their own
        (:attr:`own_users`); in rewrite mode, what that user left is removed afterwards."""
        uid = _USERS.take() if self.own_users else None
        try:
            with tempfile.TemporaryDirectory(prefix="metascore-local-") as tmp:
                return self._run_all(steps, time_limit, Path(tmp), uid)
        finally:
            if uid is not None:
                if self.mode == "rewrite":
                    end_user(uid)
                _USERS.give_back(uid)

    def check_run(self, out: Path, image: str | None) -> None:
        """Refuse a run whose jobs would run as a user of their own outside the sandbox
        (rewrite mode as root, :attr:`own_users`) that cannot start the interpreter of
        ``image`` or enter ``out``, with what to do instead.

        Raises
        ------
        ConfigError
            Naming the interpreter or the folder.
        """
        if self.mode != "rewrite" or not self.own_users:
            return
        interpreter = self.interpreter(StepSpec("", "", (), image=image))
        check = "import os, sys; sys.exit(0 if os.access(sys.argv[1], os.X_OK) else 3)"
        uid = _USERS.take()
        try:
            proc = subprocess.run([sys.executable, "-S", "-I", str(JOB_INIT), "--user", str(uid), str(uid), "--",
                                   interpreter, "-I", "-c", check, str(out)], capture_output=True, cwd="/",
                                  env={"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"},
                                  stdin=subprocess.DEVNULL, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ConfigError(f"--sandbox rewrite: cannot try the jobs' user ({exc}).") from None
        finally:
            end_user(uid)
            _USERS.give_back(uid)
        head = ("--sandbox rewrite as root runs the submissions as a user of their own (no capability), "
                "which cannot ")
        if proc.returncode == 3:
            raise ConfigError(f"{head}enter {out} (a folder above it is closed to other users); choose an "
                              "--out every user may enter (e.g. under /var/tmp), or use the sandbox "
                              "(install bubblewrap) or --backend docker.")
        if proc.returncode != 0:
            raise ConfigError(f"{head}run {interpreter} (it, or a folder on the way to it, is closed to other "
                              "users); give --python-env an environment every user may run, or use the sandbox "
                              "(install bubblewrap) or --backend docker.")

    def _run_all(self, steps: list[StepSpec], time_limit: float, tmp: Path, uid: int | None) -> list[StepResult]:
        procs: list[_Proc] = []
        try:
            for i, step in enumerate(steps):
                procs.append(_Proc.start(self, step, tmp / str(i), uid))
        except (ConfigError, OSError):  # a bad command, no control group: stop the steps started
            for proc in procs:
                proc.kill_rest()
                proc.release()
            raise
        selector = selectors.DefaultSelector()
        for proc in procs:
            for stream, log in proc.streams():
                selector.register(stream, selectors.EVENT_READ, (proc, log))
        deadline = time.monotonic() + time_limit
        next_watch = time.monotonic() + WATCH_INTERVAL
        try:
            while any(p.running() for p in procs) and time.monotonic() < deadline:
                _pump(selector, _SELECT)
                if time.monotonic() >= next_watch:
                    for proc in procs:
                        proc.watch()
                    next_watch = time.monotonic() + WATCH_INTERVAL
            for proc in procs:
                if proc.running():
                    proc.kill("time")
                proc.kill_rest()
            # what is left in the pipes; a process that left the session may hold one open
            drained = time.monotonic() + _DRAIN
            while selector.get_map() and time.monotonic() < drained:
                _pump(selector, _SELECT)
        finally:
            for key in list(selector.get_map().values()):
                key.fileobj.close()
            selector.close()
            for proc in procs:
                proc.kill_rest()
            for proc in procs:
                proc.release()
        return [proc.result() for proc in procs]

    # -- the command --------------------------------------------------------------------------
    def argv(self, step: StepSpec, scratch: Path | None = None) -> list[str]:
        """The command as it runs: split, and in rewrite mode with host paths."""
        tokens = split_command(step)
        if self.mode == "rewrite":
            mounts = step.mounts + ((Mount("/app", scratch / "app"),) if scratch is not None else ())
            tokens = [map_container_paths(t, mounts) for t in tokens]
            if tokens[0] in _PYTHONS:
                tokens[0] = self.interpreter(step)
        return tokens

    @staticmethod
    def cwd(step: StepSpec) -> str:
        mapped = map_container_paths(step.working_dir, step.mounts)
        if mapped == step.working_dir:
            raise ConfigError(f"{step.name}: working directory {step.working_dir} is not mounted.")
        return mapped


def kernel_notice(no_cgroups: str, no_filter: str) -> str:
    """The one line saying what the sandbox lacks without control groups (``no_cgroups``:
    why) or without its seccomp filter (``no_filter``: why)."""
    missing = []
    if no_cgroups:
        missing.append("memory a job holds outside its processes (memfd files, shared memory, "
                       "a tmpfs) is not counted in --memory")
    if no_filter:
        missing.append("a job may make namespaces of its own and use the kernel keyring")
    return KERNEL_NOTICE.format(why="; ".join(w for w in (no_cgroups, no_filter) if w),
                                missing=" and ".join(missing))


def _open_to(folder: Path, gid: int | None) -> None:
    """Let the group ``gid`` (a job's own user's) enter ``folder``, which the runner keeps;
    ``None``: close it again to everyone but its owner."""
    os.chown(folder, -1, 0 if gid is None else gid, follow_symlinks=False)
    os.chmod(folder, 0o700 if gid is None else 0o710)


def _interpreter(path: str | os.PathLike[str]) -> str:
    """A venv folder or an interpreter file -> the interpreter."""
    path = Path(path).expanduser().absolute()
    for candidate in (path / "bin" / "python", path / "Scripts" / "python.exe", path):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    raise ConfigError(f"--python-env {path}: neither a Python interpreter nor a virtual environment folder.")


def _pump(selector: selectors.BaseSelector, timeout: float) -> None:
    """Move what the pipes hold into the logs; unregister the pipes that closed."""
    if not selector.get_map():
        time.sleep(timeout)
        return
    for key, _ in selector.select(timeout):
        data = os.read(key.fd, _PIPE_READ)
        if data:
            key.data[1].write(data)
        else:
            selector.unregister(key.fileobj)
            key.fileobj.close()


class _Proc:
    """One started step: its process, capped logs, watcher and outcome."""

    def __init__(self, backend: LocalBackend, step: StepSpec, proc: subprocess.Popen | None,
                 logs: tuple[CappedLog, CappedLog], writable: list[Path], group: StepGroup | None = None,
                 opened: Path | None = None) -> None:
        self.backend, self.step, self.proc, self.logs, self.group = backend, step, proc, logs, group
        self.opened = opened  # the sandbox the job's own user may enter while it runs
        self.start_time, self.end = time.monotonic(), None
        self.killed: str | None = None
        self.oom = False  # the kernel killed a process of the step for its memory
        sandboxed = backend.mode == "bwrap"  # bwrap's own init process is the first descendant
        self.watcher = JobWatch(proc.pid if proc else None, writable, backend.limits, shm=sandboxed,
                                own=int(sandboxed))
        if proc is None:
            self.end = self.start_time

    @classmethod
    def start(cls, backend: LocalBackend, step: StepSpec, base: Path, uid: int | None = None) -> _Proc:
        limits = backend.limits
        # outside the sandbox, the job's own user is contained by its group whatever the limits
        contain = uid is not None and backend.mode == "rewrite"
        group = StepGroup(limits) if backend.cgroups and (limits.memory or limits.processes or contain) else None
        try:
            return cls._start(backend, step, base, uid, group)
        except BaseException:
            if group is not None:
                group.remove()
            raise

    @classmethod
    def _start(cls, backend: LocalBackend, step: StepSpec, base: Path, uid: int | None,
               group: StepGroup | None) -> _Proc:
        scratch = step.scratch or base.with_suffix(".scratch")
        for sub in SCRATCH_DIRS:  # 0755 whatever the runner's umask (0777 under umask 000)
            make_folders(scratch / sub)
        interpreter = backend.interpreter(step)
        python_wrappers(scratch / "bin", interpreter)
        logs = (CappedLog(step.stdout_path or Path(f"{base}.out"), backend.limits.log),
                CappedLog(step.stderr_path or Path(f"{base}.err"), backend.limits.log))
        command = backend.argv(step, scratch)
        writable = [m.host_path for m in step.mounts if not m.read_only] + [scratch / "app", scratch / "tmp"]
        limits = backend.limits
        joins = [arg for path in group.procs_files for arg in ("--cgroup", path)] if group else []
        seccomp, opened = None, None
        if backend.mode == "bwrap" and backend.filter is not None:
            base.with_suffix(".bpf").write_bytes(backend.filter)
            seccomp = os.open(base.with_suffix(".bpf"), os.O_RDONLY)
        if backend.mode == "bwrap":
            user = (uid, uid) if uid is not None else None
            if user is not None:
                give_to(writable, *user)
            shm = min(SHM_SIZE, limits.memory) if limits.memory is not None else SHM_SIZE
            argv = bwrap_argv(command, step.mounts, step.working_dir, sandbox_env(dict(step.env)), scratch,
                              network=backend.network, visible=visible_paths(interpreter, sys.executable),
                              user=user, shm_size=shm, seccomp_fd=seccomp)
            cwd, outer_env = str(scratch), {"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"}
            init = ["--rlimits", *map(str, rlimit_values(limits, processes=user is not None))]
        else:
            argv, cwd = command, LocalBackend.cwd(step)
            outer_env = clean_env(dict(step.env), path_first=str(scratch / "bin"), home=str(scratch / "tmp"))
            init = ["--rlimits", *map(str, rlimit_values(backend.limits, processes=uid is not None)), "--supervise"]
            if uid is not None:  # the job's own user; its supervisor stays root
                give_to(writable, uid, uid)
                opened = step.sandbox
                if opened is not None:
                    _open_to(opened, uid)
                init += ["--user", str(uid), str(uid)]
        argv = [sys.executable, "-S", "-I", str(JOB_INIT), *joins, "--new-keyring", *init, "--", *argv]
        try:
            proc = subprocess.Popen(argv, cwd=cwd, env=outer_env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                    start_new_session=True, pass_fds=(seccomp,) if seccomp is not None else ())
        except OSError as exc:
            logs[1].write(f"cannot start {argv[0]!r}: {exc}\n".encode())
            proc = None
        finally:
            if seccomp is not None:
                os.close(seccomp)
        return cls(backend, step, proc, logs, writable, group, opened)

    def streams(self):
        if self.proc is None:
            return []
        return [(self.proc.stdout, self.logs[0]), (self.proc.stderr, self.logs[1])]

    def running(self) -> bool:
        if self.proc is None or self.end is not None:
            return False
        if self.proc.poll() is None:
            return True
        self.end = time.monotonic()
        self.kill_rest()  # the worker's container ends with its first process
        return False

    def watch(self) -> None:
        if self.running():
            broken = "memory" if self.group and self.group.oom_killed() else self.watcher.check()
            if broken:
                self.kill(broken)

    def kill(self, why: str) -> None:
        self.killed = why
        self.kill_rest()
        self.proc.wait()
        self.end = self.end or time.monotonic()

    def kill_rest(self) -> None:
        """SIGKILL every process of the step: its descendants (again until none is left, so
        that none forks away), then its first process."""
        if self.proc is None:
            return
        for _ in range(100):
            rest = descendants(self.proc.pid)
            if not rest:
                break
            for pid in rest:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def release(self) -> None:
        """Once every process of the step is gone: note whether the OOM killer struck,
        remove the step's control group, and close the sandbox a job's own user could enter."""
        if self.group is not None:
            self.oom = self.oom or self.group.oom_killed()
            self.group.remove()
            self.group = None
        if self.opened is not None:
            _open_to(self.opened, None)
            self.opened = None

    def result(self) -> StepResult:
        for log in self.logs:
            log.close()
        stderr = tail(self.logs[1].path)
        code = None if self.killed else (127 if self.proc is None else _exit_code(self.proc.returncode))
        killed, message = self.killed, ""
        limits: Limits = self.backend.limits
        if killed is None and self.oom:  # the kernel killed a process for the memory limit
            killed = "memory"
        if killed is None and code not in (0, None):
            killed = limit_error(stderr, limits)
        if killed is None:  # filled between two looks
            killed = self.watcher.disk_exceeded()
        if killed not in (None, "time"):
            message = limits.message(killed)
            if self.killed:
                self.logs[1].append(f"metascore: killed: {message}")
        stdout = tail(self.logs[0].path)
        # a program may print its traceback on stdout: read both for the hint
        hint = self._hint(f"{stderr}\n{stdout}") if code not in (0, None) else ""
        if hint:
            self.logs[1].append(hint)
        return StepResult(
            exit_code=code, timed_out=killed == "time", stdout=stdout,
            stderr=tail(self.logs[1].path), elapsed=(self.end or time.monotonic()) - self.start_time,
            killed=killed, message=message,
        )

    def _hint(self, output: str) -> str:
        """A fix for what the program's output (stderr and stdout) shows, else ``""``."""
        if self.backend.mode == "rewrite" and (_APP_MISSING.search(output) or self._mounted_module(output)):
            return APP_PATH_HINT
        return missing_module_hint(output, self.backend.interpreter(self.step), self.step.image,
                                   python_env=self.backend.python is not None)

    def _mounted_module(self, stderr: str) -> bool:
        """A "missing" module that is in a mounted folder: imported through an /app path."""
        names = _MODULE.findall(stderr)
        return bool(names) and any((m.host_path / f"{names[-1].split('.')[0]}.py").is_file()
                                   or (m.host_path / names[-1].split(".")[0]).is_dir()
                                   for m in self.step.mounts)


def _exit_code(returncode: int) -> int:
    """A signal death as a shell reports it (128 + N), like a container's exit code."""
    return 128 - returncode if returncode < 0 else returncode
