"""Backends the bundle tests run on: ``local`` always, ``docker`` when it can run.

Tests that run bundles take ``backend`` from :data:`BACKENDS` so the same scenarios run on
both backends; ``docker`` is skipped (with the reason) when
``metascore.bundle.docker_backend`` is missing or no container engine answers. The docker
runs use the image named by ``METASCORE_TEST_IMAGE`` (default ``metascore``, built from the
repository's Dockerfile), since the fixtures' ``docker_image`` cannot be pulled offline.
"""

from __future__ import annotations

import functools
import importlib
import os

import pytest


@functools.lru_cache(maxsize=1)
def docker_unavailable() -> str | None:
    """``None`` when the docker backend can run, else why not."""
    try:
        importlib.import_module("metascore.bundle.docker_backend")
    except ImportError as exc:
        return f"metascore.bundle.docker_backend is not importable ({exc})"
    try:
        import docker

        docker.from_env(timeout=5).ping()
    except Exception as exc:  # noqa: BLE001 - any failure means "no engine"
        return f"no container engine reachable ({type(exc).__name__}: {exc})"
    return None


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
    image = os.environ.get("METASCORE_TEST_IMAGE", "metascore") if backend == "docker" else None
    return {"backend": backend, "image": image}
