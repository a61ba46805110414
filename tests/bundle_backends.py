"""Backends the bundle tests run on: ``local`` always, ``docker`` when it can run.

Tests that run bundles take ``backend`` from :data:`BACKENDS` so the same scenarios run on
both backends; ``docker`` is skipped (with the reason; under ``CI=true`` it fails) when
the docker SDK is missing or no container engine answers (:mod:`requirements`). The docker
runs use the image built from the repository's Dockerfile (``tests/engine.py``, once per
source change), since the fixtures' ``docker_image`` cannot be pulled offline.
"""

from __future__ import annotations

import pytest
from engine import build_image
from requirements import require_engine


BACKENDS = [
    pytest.param("local", id="local"),
    pytest.param("docker", id="docker", marks=pytest.mark.engine),
]


def require(backend: str) -> str:
    """Return ``backend`` when it can run here; else skip (under CI fail) the calling test."""
    if backend == "docker":
        require_engine()
    return backend


def options(backend: str) -> dict[str, str | None]:
    """Keyword arguments of :func:`~metascore.bundle.runner.run_bundle` for ``backend``."""
    require(backend)
    image = build_image() if backend == "docker" else None
    return {"backend": backend, "image": image}
