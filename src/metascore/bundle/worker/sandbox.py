"""The local backend's sandbox: ``bwrap`` (bubblewrap) with the compute worker's ``/app`` layout.

:func:`bwrap_argv` wraps one program's command so that it sees what a worker container
shows it, and nothing of the host it does not need:

- **what it sees**: the system folders (``/usr``, ``/bin``, ``/sbin``, ``/lib*``, ``/etc``,
  ``/sys``) and the Python environment that runs ``python`` (its prefixes and ``sys.path``
  folders, :func:`interpreter_paths`), all read-only; the job's mounts at their
  ``/app/...`` paths; ``/app`` itself an empty folder of the run (so a placeholder for a
  folder that is not mounted in this step lands inside the run, as in the container's own
  layer) and ``/tmp`` a folder of the run; a fresh ``/proc``, a minimal ``/dev`` and a
  ``/dev/shm`` of its own (64 MiB, as Docker's default, or the memory limit if smaller).
  Home folders, ``/root``, ``/run`` (engine sockets), ``/var``, ``/opt``, the bundle and the
  rest of ``--out`` are not there;
- **who it runs as**: when the runner is root, the sandbox keeps only the capabilities to
  change user, and :mod:`metascore.bundle.worker.job_init` makes the job a user of its own
  (``user``: no capability, ``no_new_privs``, no supplementary group) before ``exec``:
  it can read only what any local user may read, and write only its own folders. Run by
  another user, bwrap makes an unprivileged user namespace where the job is ``nobody``
  (65534) with no capability and cannot make namespaces of its own;
- no network unless asked (``--unshare-net``); its own process tree (``--unshare-pid``: the
  job's processes die with its first one, ``--die-with-parent``), IPC namespace (its System
  V shared memory dies with it), host name, session; working directory ``/app/program``;
- a seccomp filter as Docker's default profile (no new namespaces, mounts or keyring calls:
  :mod:`metascore.bundle.worker.syscall_filter`), and from the local backend a control group of
  its own and a new session keyring (:mod:`metascore.bundle.worker.job_init`);
- a clean environment: ``PATH`` (with ``python`` and ``python3`` first, both running the
  chosen interpreter, see :func:`python_wrappers`), ``HOME=/tmp``, ``TMPDIR=/tmp``,
  ``LANG=C.UTF-8`` and the step's variables (``PYTHONUNBUFFERED=1``); none of the
  host's other variables (tokens, keys) reach the program.

The command itself is not changed: hard-coded ``/app/...`` paths and ``sys.path`` tricks work.
:func:`sandbox_available` runs the whole arrangement once per process to know whether it
works here (bwrap installed; as root, nothing more; as another user, unprivileged user
namespaces).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path, PurePosixPath

from .backend import Mount
from ..trees import chown_tree, make_folders

__all__ = [
    "bwrap_argv", "sandbox_available", "python_wrappers", "clean_env", "sandbox_env",
    "interpreter_paths", "visible_paths", "give_to", "probe_user", "SCRATCH_DIRS", "SYSTEM_DIRS", "SHM_SIZE", "JOB_INIT",
]

#: Folders of the run's scratch: ``app`` is ``/app``, ``tmp`` is ``/tmp``, ``bin`` holds the
#: ``python`` / ``python3`` wrappers and the job's first program.
SCRATCH_DIRS = ("app", "tmp", "bin")
#: The host's top-level folders every job sees, read-only (those that exist).
SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "sys")
#: The size of the job's own ``/dev/shm`` (Docker's default ``--shm-size``).
SHM_SIZE = 64 * 1024**2
#: The job's first program, run by the runner's Python (outside and inside the sandbox).
JOB_INIT = Path(__file__).with_name("job_init.py")
_BIN = "/.metascore/bin"
_NOBODY = 65534
_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_QUERY = ("import json, os, sys; print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix, "
          "sys.base_exec_prefix, os.path.dirname(os.path.realpath(sys.executable)), *sys.path]))")


def python_wrappers(folder: Path, interpreter: str) -> Path:
    """Write ``python`` and ``python3`` into ``folder`` (scripts that run ``interpreter``) and
    a copy of the job's first program (:data:`JOB_INIT`).

    Scripts rather than symlinks, so that a virtual environment's interpreter still finds
    its ``pyvenv.cfg`` (Python looks next to the path it was started by).
    """
    make_folders(folder)  # the modes are the runner's, whatever its umask
    for name in ("python", "python3"):
        path = folder / name
        path.write_text(f'#!/bin/sh\nexec "{interpreter}" "$@"\n')
        path.chmod(0o755)
    shutil.copyfile(JOB_INIT, folder / JOB_INIT.name)
    (folder / JOB_INIT.name).chmod(0o644)
    return folder


def clean_env(step_env: dict[str, str], *, path_first: str, home: str) -> dict[str, str]:
    """The job's whole environment: PATH (``path_first`` first), HOME, TMPDIR, LANG, the step's."""
    return {
        "PATH": f"{path_first}:{os.environ.get('PATH') or _DEFAULT_PATH}",
        "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8", **step_env,
    }


def sandbox_env(step_env: dict[str, str]) -> dict[str, str]:
    """The environment inside the sandbox."""
    return clean_env(step_env, path_first=_BIN, home="/tmp")


@functools.lru_cache(maxsize=16)
def interpreter_paths(interpreter: str) -> tuple[str, ...]:
    """The folders ``interpreter`` needs, outside the system folders: its prefixes, the folder
    of its executable and its ``sys.path`` (asked of the interpreter itself, without the
    caller's environment), each folder once and none inside another."""
    try:
        proc = subprocess.run([interpreter, "-E", "-c", _QUERY], capture_output=True, text=True,
                              timeout=60, cwd="/", env={"PATH": _DEFAULT_PATH}, stdin=subprocess.DEVNULL)
        found = json.loads(proc.stdout) if proc.returncode == 0 else []
    except (OSError, subprocess.TimeoutExpired, ValueError):
        found = []
    real = os.path.realpath(interpreter)
    found += [os.path.dirname(os.path.dirname(real))]  # at least the installation of the executable
    paths = set()
    for path in found:
        if not isinstance(path, str) or not os.path.isabs(path) or not os.path.exists(path):
            continue
        path = os.path.normpath(path)
        if os.path.isfile(path):  # a zipped sys.path entry
            path = os.path.dirname(path)
        parts = PurePosixPath(path).parts
        if len(parts) < 2 or parts[1] in SYSTEM_DIRS:
            continue
        paths.add(path)
    return tuple(sorted(p for p in paths if not any(p != q and p.startswith(q + "/") for q in paths)))


def visible_paths(*interpreters: str) -> tuple[str, ...]:
    """The folders of every interpreter (:func:`interpreter_paths`), none inside another."""
    paths = {p for interpreter in interpreters for p in interpreter_paths(interpreter)}
    return tuple(sorted(p for p in paths if not any(p.startswith(q + "/") for q in paths)))


def give_to(folders: list[Path], uid: int, gid: int) -> None:
    """Make the folders (and everything in them, links not followed, at any depth) belong
    to ``uid:gid``."""
    for folder in folders:
        chown_tree(folder, uid, gid)


def bwrap_argv(
    argv: list[str], mounts: tuple[Mount, ...], working_dir: str, env: dict[str, str],
    scratch: Path, *, network: bool = False, bwrap: str = "bwrap", visible: tuple[str, ...] = (),
    user: tuple[int, int] | None = None, shm_size: int = SHM_SIZE, seccomp_fd: int | None = None,
) -> list[str]:
    """The ``bwrap`` command line running ``argv`` unchanged in the worker's layout.

    ``visible``: host folders shown read-only at their own path (the interpreter's, see
    :func:`interpreter_paths`). ``user``: the ``(uid, gid)`` the job becomes (the runner is
    root); ``None``: an unprivileged user namespace where the job is ``nobody``.
    """
    args = [bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--new-session", "--hostname", "metascore-job"]
    if user is not None:  # only what job_init needs to become the job's user (and bwrap to
        # enter a working directory of the job's user whatever its mode)
        args += ["--cap-drop", "ALL"] + [arg for cap in ("SETUID", "SETGID", "SETPCAP", "DAC_READ_SEARCH")
                                         for arg in ("--cap-add", f"CAP_{cap}")]
    else:
        args += ["--unshare-user", "--uid", str(_NOBODY), "--gid", str(_NOBODY), "--disable-userns"]
    if not network:
        args.append("--unshare-net")
    for name in SYSTEM_DIRS:
        host = os.path.join("/", name)
        if os.path.islink(host):
            args += ["--symlink", os.readlink(host), host]
        elif os.path.isdir(host):
            args += ["--ro-bind", host, host]
    args += ["--proc", "/proc", "--dev", "/dev",
             "--perms", "1777", "--size", str(shm_size), "--tmpfs", "/dev/shm",
             "--bind", str(scratch / "app"), "/app",
             "--bind", str(scratch / "tmp"), "/tmp",
             "--perms", "0755", "--dir", "/.metascore",
             "--ro-bind", str(scratch / "bin"), _BIN]
    made: set[str] = set()
    for path in visible:  # after /tmp: an environment may live there; parents readable by
        for parent in reversed(PurePosixPath(path).parents[:-1]):  # anyone (not bwrap's 0700)
            if str(parent) not in made:
                made.add(str(parent))
                args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", path, path]
    for mount in sorted(mounts, key=lambda m: m.container_path.count("/")):
        args += ["--ro-bind" if mount.read_only else "--bind", str(mount.host_path), mount.container_path]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--chdir", working_dir, "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    if user is not None:
        argv = [sys.executable, "-S", "-I", f"{_BIN}/{JOB_INIT.name}", "--user", str(user[0]),
                str(user[1]), "--", *argv]
    return args + ["--", *argv]


def probe_user() -> tuple[int, int] | None:
    """The ``(uid, gid)`` the probe runs as: a user of its own when root, else ``None``."""
    return (_NOBODY, _NOBODY) if os.geteuid() == 0 else None


@functools.lru_cache(maxsize=1)
def sandbox_available() -> tuple[bool, str]:
    """``(True, "")`` when bwrap runs a program here as :func:`bwrap_argv` arranges it (its
    own user, the worker's layout), else ``(False, why)``; checked once per process."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False, "bwrap (bubblewrap) is not installed"
    user = probe_user()
    check = ("import os, sys; ok = os.access('/app/program', os.W_OK)"
             f" and os.getuid() == {user[0] if user else _NOBODY}; sys.exit(0 if ok else 3)")
    with tempfile.TemporaryDirectory(prefix="metascore-probe-") as tmp:
        scratch = Path(tmp)
        for sub in SCRATCH_DIRS + ("program",):
            (scratch / sub).mkdir()
        python_wrappers(scratch / "bin", sys.executable)
        if user is not None:
            give_to([scratch / "program", scratch / "app", scratch / "tmp"], *user)
        argv = bwrap_argv([sys.executable, "-S", "-I", "-c", check],
                          (Mount("/app/program", scratch / "program"),), "/app/program",
                          {"PATH": _DEFAULT_PATH}, scratch, bwrap=bwrap,
                          visible=visible_paths(sys.executable), user=user)
        try:
            proc = subprocess.run(argv, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"bwrap cannot run here ({exc})"
    if proc.returncode == 3:
        return False, "bwrap runs here, but the job would not run as its own user in the worker's layout"
    if proc.returncode != 0:
        why = proc.stderr.decode(errors="replace").strip().splitlines()
        hint = "" if user else "; unprivileged user namespaces may be disabled"
        return False, f"bwrap cannot run here ({why[-1] if why else f'exit code {proc.returncode}'}{hint})"
    return True, ""
