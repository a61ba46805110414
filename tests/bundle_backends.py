"""Backends the bundle tests run on: ``local`` always, ``docker`` when it can run.

Tests that run bundles take ``backend`` from :data:`BACKENDS` so the same scenarios run on
both backends; ``docker`` is skipped (with the reason) when
``metascore.bundle.docker_backend`` is missing or no container engine answers. The docker
runs use the image built from the repository's Dockerfile (``tests/engine.py``, once per
source change), since the fixtures' ``docker_image`` cannot be pulled offline.
"""

from __future__ import annotations

import functools

import pytest
from engine import build_image, engine_available


@functools.lru_cache(maxsize=1)
def docker_unavailable() -> str | None:
    """``None`` when the docker backend can run, else why not."""
    ok, why = engine_available()
    return None if ok else why


BACKENDS = [
    pytest.param("local", id="local"),
    pytest.param("docker", id="docker", marks=pytest.mark.engine),
]


def require(backend: str) -> str:
    """Skip the calling test when ``backend`` cannot run here; return it otherwise."""
    if backend == "docker" and (why := docker_unavailable()) is not None:
        pytest.skip(why)
    return backend


def options(backend: str) -> dict[str, str | None]:
    """Keyword arguments of :func:`~metascore.bundle.runner.run_bundle` for ``backend``."""
    require(backend)
    image = build_image() if backend == "docker" else None
    return {"backend": backend, "image": image}
