"""The local backend's sandbox: ``bwrap`` (bubblewrap) with the compute worker's ``/app`` layout.

:func:`bwrap_argv` wraps one program's command so that it sees what a worker container
shows it:

- the job's mounts at their ``/app/...`` paths (read-write unless the mount says otherwise),
  ``/app`` itself an empty folder of the run (so a placeholder for a folder that is not
  mounted in this step lands inside the run, as in the container's own layer), ``/tmp`` a
  folder of the run;
- the rest of the host read-only: each top-level folder bound on its own onto bwrap's
  empty root (``--ro-bind / /`` would leave a read-only root where ``/app`` cannot be made),
  except ``/tmp``, ``/run`` (engine sockets) and ``/proc`` and ``/dev`` (fresh ones);
- no network unless asked (``--unshare-net``), its own process tree (``--unshare-pid``; the
  job's processes die with it, ``--die-with-parent``), working directory ``/app/program``;
- a clean environment: ``PATH`` (with ``python`` and ``python3`` first, both running the
  chosen interpreter, see :func:`python_wrappers`), ``HOME=/tmp``, ``TMPDIR=/tmp``,
  ``LANG=C.UTF-8`` and the step's variables (``PYTHONUNBUFFERED=1``); none of the
  host's other variables (tokens, keys) reach the program.

The command itself is not changed: hard-coded ``/app/...`` paths and ``sys.path`` tricks work.
:func:`sandbox_available` runs ``bwrap`` once per process to know whether it works here (it
needs unprivileged user namespaces, or root).
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from .backend import Mount

__all__ = ["bwrap_argv", "sandbox_available", "python_wrappers", "clean_env", "SCRATCH_DIRS"]

#: Folders of the run's scratch: ``app`` is ``/app``, ``tmp`` is ``/tmp``, ``bin`` holds the
#: ``python`` / ``python3`` wrappers.
SCRATCH_DIRS = ("app", "tmp", "bin")
_SKIP = frozenset({"proc", "dev", "tmp", "run", "app", "lost+found"})
_BIN = "/.metascore/bin"
_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def python_wrappers(folder: Path, interpreter: str) -> Path:
    """Write ``python`` and ``python3`` into ``folder``: scripts that run ``interpreter``.

    Scripts rather than symlinks, so that a virtual environment's interpreter still finds
    its ``pyvenv.cfg`` (Python looks next to the path it was started by).
    """
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("python", "python3"):
        path = folder / name
        path.write_text(f'#!/bin/sh\nexec "{interpreter}" "$@"\n')
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return folder


def clean_env(step_env: dict[str, str], *, path_first: str, home: str) -> dict[str, str]:
    """The job's whole environment: PATH (``path_first`` first), HOME, TMPDIR, LANG, the step's."""
    return {
        "PATH": f"{path_first}:{os.environ.get('PATH') or _DEFAULT_PATH}",
        "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8", **step_env,
    }


def bwrap_argv(
    argv: list[str], mounts: tuple[Mount, ...], working_dir: str, env: dict[str, str],
    scratch: Path, *, network: bool = False, bwrap: str = "bwrap", interpreter: str | None = None,
) -> list[str]:
    """The ``bwrap`` command line running ``argv`` unchanged in the worker's layout.

    ``interpreter``: the Python that ``python`` runs; its environment is made visible
    (read-only) when it lives where the sandbox shows the run's folders (``/tmp``).
    """
    args = [bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--hostname", "metascore-job"]
    if not network:
        args.append("--unshare-net")
    for name in sorted(os.listdir("/")):
        if name in _SKIP or name.startswith(".metascore"):
            continue
        host = os.path.join("/", name)
        if os.path.islink(host):
            args += ["--symlink", os.readlink(host), host]
        else:
            args += ["--ro-bind", host, host]
    args += ["--proc", "/proc", "--dev", "/dev",
             "--bind", str(scratch / "app"), "/app",
             "--bind", str(scratch / "tmp"), "/tmp",
             "--ro-bind", str(scratch / "bin"), _BIN]
    if interpreter is not None and Path(interpreter).parts[1:2] and Path(interpreter).parts[1] in _SKIP:
        root = Path(interpreter).parent
        root = root.parent if (root.parent / "pyvenv.cfg").is_file() else root
        args += ["--ro-bind", str(root), str(root)]
    for mount in sorted(mounts, key=lambda m: m.container_path.count("/")):
        args += ["--ro-bind" if mount.read_only else "--bind", str(mount.host_path), mount.container_path]
    args += ["--chdir", working_dir, "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args + ["--", *argv]


def sandbox_env(step_env: dict[str, str]) -> dict[str, str]:
    """The environment inside the sandbox."""
    return clean_env(step_env, path_first=_BIN, home="/tmp")


@functools.lru_cache(maxsize=1)
def sandbox_available() -> tuple[bool, str]:
    """``(True, "")`` when bwrap runs a program in the worker's layout here, else
    ``(False, why)``; checked once per process."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False, "bwrap (bubblewrap) is not installed"
    with tempfile.TemporaryDirectory(prefix="metascore-probe-") as tmp:
        scratch = Path(tmp)
        for sub in SCRATCH_DIRS + ("program",):
            (scratch / sub).mkdir()
        argv = bwrap_argv(["/bin/sh", "-c", "test -d /app/program"], (Mount("/app/program", scratch / "program"),),
                          "/app/program", {"PATH": _DEFAULT_PATH}, scratch, bwrap=bwrap)
        try:
            proc = subprocess.run(argv, capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"bwrap cannot run here ({exc})"
    if proc.returncode != 0:
        why = proc.stderr.decode(errors="replace").strip().splitlines()
        return False, f"bwrap cannot run here ({why[-1] if why else f'exit code {proc.returncode}'}; " \
                      "unprivileged user namespaces may be disabled)"
    return True, ""
