"""The images Codabench bundles run in: what each common one carries, as facts.

Codabench runs every program of a competition in its one ``docker_image`` (without one,
``codalab/codalab-legacy:py37``). For the common images, :data:`IMAGE_PYTHON` holds their
Python version and :data:`IMAGE_MODULES` the modules beyond the standard library they carry
(where that is known exactly) and :data:`IMAGE_CARRIES` the modules each is known to carry
(all of them for py312; for the Anaconda images py37 and py39, the ones competition programs
import, not every one); :func:`image_key` names an image as these tables do (``docker.io/``
and ``library/`` dropped, ``:latest`` added). The schema, the checks, the local backend's
environments (:mod:`~metascore.bundle.worker.pyenv`) and the choice of the meta-scoring
program's Python (:mod:`~metascore.bundle.platform.meta_program`) read them.
"""

from __future__ import annotations

__all__ = ["IMAGE_PYTHON", "IMAGE_MODULES", "IMAGE_CARRIES", "image_key", "python_of", "modules_of",
           "carried_by"]

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
#: not listed in full, so not checked; :data:`IMAGE_CARRIES` has those known to be there).
IMAGE_MODULES: dict[str, frozenset[str]] = {
    "codalab/codalab-legacy:py312": frozenset({
        "Cython", "cython", "pyximport", "numpy", "scipy", "sklearn", "joblib", "threadpoolctl",
        "pandas", "dateutil", "six", "pytz", "tzdata", "yaml", "_yaml", "imutils", "numba",
        "llvmlite", "cloudpickle", "matplotlib", "mpl_toolkits", "pylab", "contourpy", "cycler",
        "fontTools", "kiwisolver", "packaging", "PIL", "pyparsing", "psutil", "pip",
        "setuptools", "pkg_resources", "_distutils_hack", "distutils", "wheel",
    }),
}

# What the Anaconda installers of codalab-legacy:py37 (Anaconda3 2019.07, Python 3.7) and
# codalab-legacy:py39 (Anaconda3 2022.05, Python 3.9) both carry, among the modules
# competition programs import: the scientific stack, data formats, plotting, the web and
# test tools. Source: codalab/codalab-dockers, Dockerfiles/Dockerfile-py37 and
# Dockerfile-py39 (Anaconda first on PATH, so `python3` and `pip3` are Anaconda's), and
# Anaconda's package lists of those two releases.
_ANACONDA = frozenset({
    "numpy", "scipy", "sklearn", "pandas", "matplotlib", "mpl_toolkits", "pylab", "seaborn",
    "statsmodels", "patsy", "networkx", "sympy", "mpmath", "skimage", "imageio", "pywt", "PIL",
    "h5py", "tables", "numba", "llvmlite", "numexpr", "bottleneck", "joblib", "dask", "bokeh",
    "cloudpickle", "toolz", "cytoolz", "astropy", "nltk", "bs4", "lxml", "requests", "urllib3",
    "idna", "yaml", "xlrd", "openpyxl", "xlsxwriter", "sqlalchemy", "six", "dateutil", "pytz",
    "click", "flask", "jinja2", "markupsafe", "werkzeug", "psutil", "tqdm", "cffi", "packaging",
    "pyparsing", "cycler", "kiwisolver", "tornado", "zmq", "msgpack", "pygments", "docutils",
    "attr", "jsonschema", "decorator", "sortedcontainers", "IPython", "pytest", "Cython",
    "cython", "pyximport", "setuptools", "pkg_resources", "pip", "wheel",
})
#: The top-level modules beyond the standard library that an image is known to carry: every
#: one for the images of :data:`IMAGE_MODULES`; for the Anaconda images, those of
#: ``_ANACONDA`` and of their Dockerfile's pip list (py37: theano, Cython, imutils and
#: tensorflow from conda-forge; py39: theano, imutils, numba, tensorflow 2.9.1, and
#: scikit-learn 1.1's threadpoolctl, matplotlib 3.5's fontTools).
IMAGE_CARRIES: dict[str, frozenset[str]] = {
    **IMAGE_MODULES,
    "codalab/codalab-legacy:py37": _ANACONDA | {"theano", "imutils", "tensorflow"},
    "codalab/codalab-legacy:py39": _ANACONDA | {"theano", "imutils", "tensorflow", "threadpoolctl",
                                                "fontTools"},
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


def carried_by(image: str | None) -> frozenset[str] | None:
    """The non-standard modules ``image`` is known to carry (:data:`IMAGE_CARRIES`: every
    one for py312, the common ones for py37 and py39), or ``None``."""
    return IMAGE_CARRIES.get(image_key(image)) if image else None
