"""What some tests need from the machine: a container engine, bwrap, headless Chromium, or a
Python any user may run (to run the runner as ``nobody``, or the rewrite mode's own users).

Outside CI a test whose need is not met is skipped with the reason. Under ``CI=true`` it
fails instead, so a green CI run means the Docker image, the Docker backend, the local
sandbox and the browser test really ran (``.ci/run`` installs the engine, bubblewrap and the
browser first).
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import NoReturn

import pytest
from engine import engine_available
from repo_paths import ROOT


def unavailable(reason: str) -> NoReturn:
    """Skip the calling test with ``reason``; under ``CI=true`` fail it instead."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: this test must run, not skip)", pytrace=False)
    pytest.skip(reason)


def require_engine() -> None:
    """Return when a Docker-compatible engine answers at ``DOCKER_HOST``; else :func:`unavailable`."""
    ok, reason = engine_available()
    if not ok:
        unavailable(reason)


def require_bwrap() -> None:
    """Return when the local backend's bwrap sandbox runs here; else :func:`unavailable`."""
    from metascore.bundle.worker.sandbox import sandbox_available

    ok, reason = sandbox_available()
    if not ok:
        unavailable(f"the local sandbox cannot run: {reason}")


#: An ordinary user tests run the runner as, and a Python every user may run (Debian's, with
#: metascore's dependencies from Debian's packages: ``.ci/run`` installs them).
NOBODY, PUBLIC_PYTHON = 65534, "/usr/bin/python3"


def require_public_python() -> str:
    """:data:`PUBLIC_PYTHON` when ``nobody`` can run it with numpy, scipy, pandas, yaml and
    ecdsa (becoming ``nobody`` with ``setpriv``); else :func:`unavailable`."""
    if not shutil.which("setpriv") or not os.access(PUBLIC_PYTHON, os.X_OK):
        unavailable(f"needs setpriv (util-linux) and {PUBLIC_PYTHON} to run as another user")
    proc = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                           PUBLIC_PYTHON, "-c", "import numpy, scipy, pandas, yaml, ecdsa"], capture_output=True,
                          text=True, cwd="/", timeout=120)
    if proc.returncode != 0:
        unavailable(f"{PUBLIC_PYTHON} cannot import numpy, scipy, pandas, yaml and ecdsa as nobody (apt-get "
                    f"install python3-numpy python3-scipy python3-pandas python3-yaml python3-ecdsa): {proc.stderr.strip()[-200:]}")
    return PUBLIC_PYTHON


_SOURCE_FOR_OTHERS: list[Path] = []


def source_for_others() -> Path:
    """A folder holding the ``metascore`` package that any user can read, for a test that runs
    it as another user (``PYTHONPATH``): the checkout's ``src`` when every folder above it lets
    others through (a clone under a 0700 ``mktemp -d`` does not), else a copy made once per
    session in ``/var/tmp``, removed at exit."""
    src = ROOT / "src"
    if all(p.stat().st_mode & stat.S_IXOTH for p in (src, *src.parents)):
        return src
    if not _SOURCE_FOR_OTHERS:
        copy = Path(tempfile.mkdtemp(prefix="metascore-src-", dir="/var/tmp"))
        atexit.register(shutil.rmtree, copy, ignore_errors=True)
        shutil.copytree(src / "metascore", copy / "metascore", ignore=shutil.ignore_patterns("__pycache__"))
        for path in [copy, *copy.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        _SOURCE_FOR_OTHERS.append(copy)
    return _SOURCE_FOR_OTHERS[0]


def find_chromium() -> str | None:
    """The headless Chromium executable, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)


def require_chromium() -> str:
    """The headless Chromium executable; else :func:`unavailable`."""
    found = find_chromium()
    if found is None:
        unavailable("headless Chromium is not installed")
    return found
