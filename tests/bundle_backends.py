"""Backends the bundle tests run on: the local sandbox, the local rewrite mode, ``docker``.

Tests that run bundles take ``backend`` from :data:`BACKENDS` so the same scenarios run on
every backend and mode: ``local`` (the bwrap sandbox with the worker's ``/app`` layout),
``rewrite`` (the local backend's fallback, command paths rewritten) and ``docker``. The
sandbox and ``docker`` are skipped (with the reason; under ``CI=true`` they fail) when bwrap,
the docker SDK or a container engine is missing (:mod:`requirements`). The docker runs use
the image built from the repository's Dockerfile (``tests/engine.py``, once per source
change), since the fixtures' ``docker_image`` cannot be pulled offline.
"""

from __future__ import annotations

import pytest
from engine import build_image
from requirements import require_bwrap, require_engine

from metascore.bundle.worker.local import LocalBackend

BACKENDS = [
    pytest.param("local", id="local"),
    pytest.param("rewrite", id="rewrite"),
    pytest.param("docker", id="docker", marks=pytest.mark.engine),
]
#: The local backend's two modes.
SANDBOX_MODES = [pytest.param("bwrap", id="bwrap"), pytest.param("rewrite", id="rewrite")]


def require(backend: str) -> str:
    """Return ``backend`` when it can run here; else skip (under CI fail) the calling test."""
    if backend == "docker":
        require_engine()
    elif backend in ("local", "bwrap"):
        require_bwrap()
    return backend


def options(backend: str) -> dict[str, str | None]:
    """Keyword arguments of :func:`~metascore.bundle.runner.run_bundle` for ``backend``."""
    require(backend)
    if backend == "docker":
        return {"backend": "docker", "image": build_image()}
    return {"backend": "local", "sandbox": "rewrite" if backend == "rewrite" else "bwrap"}


def local_backend(mode: str, **kwargs) -> LocalBackend:
    """The local backend in ``mode`` (``bwrap`` or ``rewrite``), when it can run here."""
    require(mode)
    return LocalBackend(sandbox=mode, **kwargs)
