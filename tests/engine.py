"""Container-engine helpers shared by the tests that need Docker or podman.

- :func:`engine_available` says whether an engine answers at ``DOCKER_HOST`` (and why not).
- :func:`build_image` builds the repository's ``Dockerfile`` at most once per source change:
  the image carries a label with a hash of everything that goes into it (Dockerfile,
  .dockerignore, requirements-docker.txt, pyproject.toml, setup.py, README.md, src/), and an
  image whose label matches is reused, in this session and the next ones; it is built with
  ``--build-arg VERSION=`` the package's version, as a release is (its labels say it).
- :func:`build_legacy_image` builds a stand-in of Codabench's default image
  ``codalab/codalab-legacy:py37`` (which cannot be pulled offline): the local base image plus
  the legacy image's Python packages in a virtual environment first on ``PATH``, so
  ``python`` and ``python3`` both run it; cached the same way, by a hash of its Dockerfile.

Build settings come from the environment, so one machine's quirks stay out of the code:

- ``METASCORE_BASE_IMAGE``: the ``BASE_IMAGE`` build argument (default: the Dockerfile's,
  ``python:3.12-slim``);
- ``METASCORE_BUILD_OPTS``: extra options for the build command, e.g.
  ``--network=host -v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro``;
- ``METASCORE_ENGINE_CLI``: ``docker`` or ``podman`` (default: podman when ``DOCKER_HOST``
  names a podman socket, else whichever is installed, docker first).

The test run is split between processes (pytest-xdist, README's test command): a build holds
a lock file, so the processes build each image once, one after the other, never twice at once.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HASH_LABEL = "org.metascore.source-hash"
_BUILT: dict[str, str] = {}


@functools.lru_cache(maxsize=1)
def engine_available() -> tuple[bool, str]:
    """``(True, "")`` when a Docker-compatible engine answers, else ``(False, reason)``."""
    from metascore.bundle.worker.docker_backend import connect
    from metascore.errors import MetascoreError

    try:
        connect()
    except MetascoreError as exc:
        return False, str(exc)
    return True, ""


def source_hash() -> str:
    """A hash of every file the image is built from (paths and contents)."""
    files = [REPO / name for name in ("Dockerfile", ".dockerignore", "requirements-docker.txt",
                                      "pyproject.toml", "setup.py", "README.md")]
    files += sorted(
        p for p in (REPO / "src").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not any(s.endswith(".egg-info") for s in p.parts)
    )
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(REPO)).encode() + b"\0")
        digest.update(path.read_bytes() if path.exists() else b"<missing>")
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def engine_cli() -> str:
    """The command-line tool that builds images for the engine at ``DOCKER_HOST``."""
    chosen = os.environ.get("METASCORE_ENGINE_CLI")
    if chosen:
        return chosen
    if "podman" in os.environ.get("DOCKER_HOST", "") and shutil.which("podman"):
        return "podman"
    for cli in ("docker", "podman"):
        if shutil.which(cli):
            return cli
    raise RuntimeError("neither docker nor podman is installed; cannot build the metascore image.")


def _current(tag: str):
    """The image tagged ``tag``, or None."""
    import docker.errors

    from metascore.bundle.worker.docker_backend import connect

    try:
        return connect().images.get(tag)
    except docker.errors.ImageNotFound:
        return None


def build_image(tag: str = "metascore:test") -> str:
    """Build the repository's image as ``tag`` unless an up-to-date one exists; return ``tag``.

    Raises
    ------
    RuntimeError
        When the build fails, with the end of the build log.
    """
    from metascore._version import __version__

    return _build(tag, source_hash(), REPO, {"VERSION": __version__})


#: The image the legacy stand-in replaces (Codabench's default ``docker_image``).
LEGACY_IMAGE = "codalab/codalab-legacy:py37"
_LEGACY_DOCKERFILE = """\
ARG BASE_IMAGE=python:3.11-slim-bookworm
FROM ${{BASE_IMAGE}}
RUN python3 -m venv /opt/legacy && /opt/legacy/bin/pip install --no-cache-dir {packages}
ENV PATH=/opt/legacy/bin:$PATH PYTHONUNBUFFERED=1
WORKDIR /app/program
"""


def legacy_packages() -> tuple[str, ...]:
    """The Python packages of :data:`LEGACY_IMAGE`: the list ``metascore bundle env`` ships."""
    try:
        from metascore.bundle.worker.pyenv import packages_for
    except ImportError:  # before the `bundle env` step is merged: the packages fixtures need
        return ("numpy", "scipy", "scikit-learn", "pandas", "pyyaml")
    return tuple(packages_for(LEGACY_IMAGE) or ())


def build_legacy_image(tag: str = "metascore-legacy:test") -> str:
    """Build the stand-in of :data:`LEGACY_IMAGE` as ``tag`` unless an up-to-date one exists."""
    text = _LEGACY_DOCKERFILE.format(packages=" ".join(shlex.quote(p) for p in legacy_packages()))
    wanted = hashlib.sha256((text + os.environ.get("METASCORE_BASE_IMAGE", "")).encode()).hexdigest()[:16]
    with tempfile.TemporaryDirectory(prefix="metascore-legacy-") as context:
        Path(context, "Dockerfile").write_text(text)
        return _build(tag, wanted, Path(context))


def _build(tag: str, wanted: str, context: Path, args: dict[str, str] | None = None) -> str:
    """Build ``context`` as ``tag`` labelled with ``wanted`` unless such an image exists
    (``args``: build arguments); one process at a time builds (the others then find it built)."""
    if _BUILT.get(tag) == wanted:
        return tag
    lock = Path(tempfile.gettempdir()) / "metascore-image-build.lock"
    with open(lock, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        return _build_unlocked(tag, wanted, context, args)


def _build_unlocked(tag: str, wanted: str, context: Path, args: dict[str, str] | None) -> str:
    old = _current(tag)
    if old is not None and (old.labels or {}).get(HASH_LABEL) == wanted:
        _BUILT[tag] = wanted
        return tag
    cmd = [engine_cli(), "build", "-t", tag, "--label", f"{HASH_LABEL}={wanted}"]
    if os.environ.get("METASCORE_BASE_IMAGE"):
        cmd += ["--build-arg", f"BASE_IMAGE={os.environ['METASCORE_BASE_IMAGE']}"]
    for name, value in (args or {}).items():
        cmd += ["--build-arg", f"{name}={value}"]
    cmd += shlex.split(os.environ.get("METASCORE_BUILD_OPTS", ""))
    cmd.append(str(context))
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        log = (proc.stdout + proc.stderr).strip().splitlines()
        raise RuntimeError(
            f"building the image {tag} failed ({shlex.join(cmd)}, exit {proc.returncode}); "
            "METASCORE_BASE_IMAGE and METASCORE_BUILD_OPTS set the base image and build options. "
            "Last lines:\n" + "\n".join(log[-25:])
        )
    _BUILT[tag] = wanted
    if old is not None:  # the outdated image, now untagged: free its space unless in use
        try:
            old.client.images.remove(old.id)
        except Exception:  # still used by a container or another tag: keep it
            pass
    return tag
