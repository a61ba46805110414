"""The images Codabench bundles run in: what each common one carries, as facts.

Codabench runs every program of a competition in its one ``docker_image`` (without one,
``codalab/codalab-legacy:py37``). For the common images, :data:`IMAGE_PYTHON` holds their
Python version and :data:`IMAGE_MODULES` the modules beyond the standard library they carry
(where that is known exactly); :func:`image_key` names an image as these tables do
(``docker.io/`` and ``library/`` dropped, ``:latest`` added). The schema, the checks, the
local backend's environments (:mod:`~metascore.bundle.worker.pyenv`) and the choice of the
meta-scoring program's Python (:mod:`~metascore.bundle.platform.meta_program`) read them.
"""

from __future__ import annotations

__all__ = ["IMAGE_PYTHON", "IMAGE_MODULES", "image_key", "python_of", "modules_of"]

#: The Python version of the common images (their Dockerfiles: Anaconda3 2019.07 is 3.7,
#: Anaconda3 2022.05 is 3.9, python:3.12-slim is 3.12).
IMAGE_PYTHON: dict[str, tuple[int, int]] = {
    "codalab/codalab-legacy:py37": (3, 7),
    "codalab/codalab-legacy:py39": (3, 9),
    "codalab/codalab-legacy:py312": (3, 12),
}
#: The top-level modules beyond the standard library that an image carries, for the images
#: whose content is known exactly: py312 is python:3.12-slim plus the pip list of its
#: Dockerfile and their dependencies (py37 and py39 are Anaconda, hundreds of packages:
#: not listed, so not checked).
IMAGE_MODULES: dict[str, frozenset[str]] = {
    "codalab/codalab-legacy:py312": frozenset({
        "Cython", "cython", "pyximport", "numpy", "scipy", "sklearn", "joblib", "threadpoolctl",
        "pandas", "dateutil", "six", "pytz", "tzdata", "yaml", "_yaml", "imutils", "numba",
        "llvmlite", "cloudpickle", "matplotlib", "mpl_toolkits", "pylab", "contourpy", "cycler",
        "fontTools", "kiwisolver", "packaging", "PIL", "pyparsing", "psutil", "pip",
        "setuptools", "pkg_resources", "_distutils_hack", "distutils", "wheel",
    }),
}


def image_key(image: str) -> str:
    """``docker.io/codalab/codalab-legacy:py37`` -> ``codalab/codalab-legacy:py37``."""
    image = image.strip()
    for prefix in ("docker.io/", "index.docker.io/"):
        if image.startswith(prefix):
            image = image[len(prefix):]
    if image.startswith("library/"):
        image = image[len("library/"):]
    return image if ":" in image.rsplit("/", 1)[-1] else image + ":latest"


def python_of(image: str | None) -> tuple[int, int] | None:
    """The Python version of ``image`` (:data:`IMAGE_PYTHON`), or ``None`` when unknown."""
    return IMAGE_PYTHON.get(image_key(image)) if image else None


def modules_of(image: str | None) -> frozenset[str] | None:
    """The non-standard modules ``image`` carries (:data:`IMAGE_MODULES`), or ``None``."""
    return IMAGE_MODULES.get(image_key(image)) if image else None
