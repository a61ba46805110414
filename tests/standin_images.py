"""Stand-ins for the images competitions run in, made here from Debian's and PyPI's packages.

Codabench runs the meta phase in the competition's one ``docker_image``; these images stand
in for old and bare ones (Docker Hub cannot be reached here):

- :data:`BULLSEYE_PYTHON`: Debian 11 (glibc 2.31) with Debian's own ``python3`` (3.9) and
  ``python3-numpy`` (1.19), ``python3-scipy`` (1.6), ``python3-pandas`` (1.1), ``python3-yaml``:
  an old image whose Python is too old for metascore's package;
- :data:`BULLSEYE_BARE`: Debian 11 with no Python at all;
- :data:`PY37`: :data:`BULLSEYE_PYTHON` with ``python`` as well as ``python3`` (CodaLab
  programs run ``python``), under the name of Codabench's default image,
  ``docker.io/codalab/codalab-legacy:py37``, for the real site's worker: like the real one
  (Debian 10, glibc 2.28, Python 3.7, numpy 1.17, pandas 0.25), an old Debian whose Python is
  too old for the meta-scoring program;
- :data:`PY312`: ``localhost/python-base:bookworm`` (the engine's base image, Debian 12's
  Python 3.11) with the packages of ``codalab/codalab-legacy:py312`` in a virtual environment
  first on ``PATH``: a new image that runs the meta-scoring program with its own Python.

The two bullseye images are made with ``debootstrap --variant=minbase`` and ``podman import``
(about 2 and 4 minutes the first time), from the Debian archive the runtime's build uses
(``$METASCORE_DEBIAN_MIRROR``, else the one of this machine's apt configuration, else
debootstrap's own default); each carries a label with a hash of its recipe and is reused while
the recipe is unchanged. ``python tests/standin_images.py`` makes all three and
prints their names (root, podman, debootstrap; for the py312 one ``METASCORE_BASE_IMAGE``
and ``METASCORE_BUILD_OPTS`` as for the tests, see ``tests/engine.py``).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine import _LEGACY_DOCKERFILE, HASH_LABEL, _build  # noqa: E402

BULLSEYE_PYTHON = "localhost/metascore-standin:bullseye-python"
BULLSEYE_BARE = "localhost/metascore-standin:bullseye-bare"
PY312 = "localhost/metascore-standin:py312"
PY37 = "docker.io/codalab/codalab-legacy:py37"
#: the Debian packages added to bullseye's minimal system, per image
BULLSEYE_PACKAGES = {
    BULLSEYE_PYTHON: ("python3", "python3-numpy", "python3-scipy", "python3-pandas", "python3-yaml"),
    BULLSEYE_BARE: (),
}


def _podman(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=check)


def _label(tag: str) -> str | None:
    proc = _podman("image", "inspect", "--format", "{{ index .Labels \"%s\" }}" % HASH_LABEL, tag,
                   check=False)
    return proc.stdout.strip() if proc.returncode == 0 else None


def build_bullseye(tag: str) -> str:
    """Make ``tag`` (:data:`BULLSEYE_PYTHON` or :data:`BULLSEYE_BARE`) unless an image with
    the same recipe exists; return ``tag``."""
    from metascore.bundle.runtime.debian import MIRROR_VARIABLE, find_debian_archive

    packages = BULLSEYE_PACKAGES[tag]
    mirror = (os.environ.get(MIRROR_VARIABLE) or find_debian_archive() or "").rstrip("/")
    recipe = f"debootstrap --variant=minbase bullseye {mirror or 'default'} {' '.join(packages)}"
    wanted = hashlib.sha256(recipe.encode()).hexdigest()[:16]
    if _label(tag) == wanted:
        return tag
    for tool in ("debootstrap", "podman"):
        if shutil.which(tool) is None:
            raise RuntimeError(f"{tool} is not installed; it makes the stand-in image {tag}.")
    with tempfile.TemporaryDirectory(prefix="metascore-bullseye-", dir="/var/tmp") as tmp:
        root = Path(tmp) / "root"
        cmd = ["debootstrap", "--variant=minbase"]
        if packages:
            cmd.append("--include=" + ",".join(packages))
        cmd += ["bullseye", str(root)] + ([mirror] if mirror else [])
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{shlex.join(cmd)} failed:\n{(proc.stdout + proc.stderr)[-3000:]}")
        shutil.rmtree(root / "var/cache/apt/archives", ignore_errors=True)
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        proc = subprocess.run(["podman", "import", "--change", f"LABEL {HASH_LABEL}={wanted}",
                               "--change", "WORKDIR /app/program", "-", tag],
                              stdin=tar.stdout, capture_output=True, text=True)
        tar.wait()
        if proc.returncode != 0 or tar.returncode != 0:
            raise RuntimeError(f"podman import of {tag} failed: {proc.stderr.strip()}")
    return tag


def build_py312() -> str:
    """Make :data:`PY312` unless an up-to-date one exists; return its name."""
    from metascore.bundle.worker.pyenv import packages_for

    packages = packages_for("codalab/codalab-legacy:py312") or ()
    text = _LEGACY_DOCKERFILE.format(packages=" ".join(shlex.quote(p) for p in packages))
    wanted = hashlib.sha256((text + os.environ.get("METASCORE_BASE_IMAGE", "")).encode()).hexdigest()[:16]
    with tempfile.TemporaryDirectory(prefix="metascore-py312-") as context:
        Path(context, "Dockerfile").write_text(text)
        return _build(PY312, wanted, Path(context))


def build_py37() -> str:
    """Make :data:`PY37` (from :data:`BULLSEYE_PYTHON`) unless an up-to-date one exists."""
    base = build_bullseye(BULLSEYE_PYTHON)
    text = (f"FROM {base}\nRUN ln -s python3 /usr/bin/python\n"
            'LABEL org.metascore.stand-in-for="codalab/codalab-legacy:py37"\n')
    wanted = hashlib.sha256((text + (_label(base) or "")).encode()).hexdigest()[:16]
    with tempfile.TemporaryDirectory(prefix="metascore-py37-") as context:
        Path(context, "Dockerfile").write_text(text)
        return _build(PY37, wanted, Path(context))


if __name__ == "__main__":
    for name in (build_bullseye(BULLSEYE_BARE), build_bullseye(BULLSEYE_PYTHON), build_py312(), build_py37()):
        print(name)
