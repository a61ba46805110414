"""What some tests need from the machine: a container engine, bwrap or headless Chromium.

Outside CI a test whose need is not met is skipped with the reason. Under ``CI=true`` it
fails instead, so a green CI run means the Docker image, the Docker backend, the local
sandbox and the browser test really ran (``.ci/run`` installs the engine, bubblewrap and the
browser first).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import NoReturn

import pytest
from engine import engine_available


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
