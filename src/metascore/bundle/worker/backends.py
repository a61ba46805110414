"""The backends a run can use, by their ``--backend`` name: one entry each in :data:`BACKENDS`.

An entry makes the backend from the run's options, taking those that apply to it (the
local backend runs this machine's Python, not the image; only it has a sandbox); what a
backend can do is then read from the backend itself
(:class:`~metascore.bundle.worker.backend.Capabilities`), never from its name. ``local``
(:mod:`~metascore.bundle.worker.local`) is the default; ``docker``
(:mod:`~metascore.bundle.worker.docker_backend`) is imported when it is asked for, since it
needs the optional ``docker`` SDK.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ...errors import ConfigError
from .backend import Backend
from .limits import Limits
from .local import DEFAULT_SANDBOX, LocalBackend

__all__ = ["BACKENDS", "DEFAULT_BACKEND", "get_backend"]

DEFAULT_BACKEND = "local"


def _local(*, network: bool, sandbox: str, python_env: str | os.PathLike[str] | None,
           limits: Limits | None, foreign: bool, **_: object) -> Backend:
    return LocalBackend(sandbox=sandbox, python=python_env, network=network, limits=limits, foreign=foreign)


def _docker(*, image: str | None, network: bool, limits: Limits | None, **_: object) -> Backend:
    try:
        from .docker_backend import DockerBackend
    except ModuleNotFoundError as exc:
        raise ConfigError(f"the docker backend is not available ({exc}); install "
                          "metascore[docker] or use --backend local.") from None
    return DockerBackend(image=image, network=network, limits=limits or Limits())


#: The backends by ``--backend`` name, each with the function that makes it.
BACKENDS: dict[str, Callable[..., Backend]] = {DEFAULT_BACKEND: _local, "docker": _docker}


def get_backend(name: str = DEFAULT_BACKEND, *, image: str | None = None, network: bool = False,
                sandbox: str = DEFAULT_SANDBOX, python_env: str | os.PathLike[str] | None = None,
                limits: Limits | None = None, foreign: bool = False) -> Backend:
    """The backend called ``name`` (:data:`BACKENDS`): ``local`` (default) or ``docker``.

    ``sandbox``, ``python_env`` and ``foreign`` (submissions the bundle does not carry) apply
    to the local backend (:mod:`metascore.bundle.worker.local`); ``limits`` to both (default
    :class:`~metascore.bundle.worker.limits.Limits`).
    """
    if name not in BACKENDS:
        raise ConfigError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}.")
    return BACKENDS[name](image=image, network=network, sandbox=sandbox, python_env=python_env,
                          limits=limits, foreign=foreign)
