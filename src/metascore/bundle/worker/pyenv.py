"""The competition image's Python packages on this machine: one cached virtual environment.

Codabench runs every program in the competition's ``docker_image``; most bundles use
CodaLab's legacy images, whose Python carries numpy, scipy, scikit-learn, pandas and more.
``metascore bundle env BUNDLE`` (:func:`build_env`) builds a virtual environment with those
packages once, under ``<cache>/envs/<hash>/``, and records it for the image; the local
backend then runs ``python``/``python3`` with it (:func:`interpreter_for`). The cache
(:func:`cache_root`) is ``$METASCORE_CACHE``, else ``$XDG_CACHE_HOME/metascore``, else
``~/.cache/metascore``; ``bundle env --list`` (:func:`list_envs`) shows the environments
with their images and sizes, ``bundle env --remove IMAGE|all`` (:func:`remove_envs`)
deletes them.

:data:`IMAGE_PACKAGES` lists, for the common images, their Python packages as their
Dockerfiles (``codalab/codalab-dockers:Dockerfiles/``) install them, with versions that
install on this machine's Python (3.10 to 3.12) where the image's own pins do not
(py37's numpy 1.17 or py39's numpy 1.22 have no wheels for Python 3.11). Left out: the
deep-learning frameworks (tensorflow, theano: large, and no wheels for these Pythons) and
the R and Mono runtimes; use ``--requirements FILE`` to add what a bundle needs. What the
images themselves carry (their Python, their modules) is :mod:`metascore.bundle.platform.images`.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...errors import ConfigError, MetascoreError
from ..platform.images import image_key, modules_of

__all__ = [
    "IMAGE_PACKAGES", "cache_root", "packages_for", "package_for", "build_env", "interpreter_for",
    "missing_module_hint", "read_requirements", "EnvInfo", "list_envs", "remove_envs",
]

_PY37 = ("numpy>=1.23,<2", "scipy>=1.9,<1.12", "scikit-learn>=1.1,<1.4", "pandas>=1.5,<2.1",
         "matplotlib>=3.6,<3.9", "pyyaml>=6", "seaborn", "pillow", "networkx", "imutils==0.5.3")
#: Python packages of the common Codabench/CodaLab images (see the module docstring).
IMAGE_PACKAGES: dict[str, tuple[str, ...]] = {
    # Anaconda3 2019.07 (Python 3.7) first on PATH, plus the Dockerfile's pip list
    "codalab/codalab-legacy:py37": _PY37,
    # Anaconda3 2022.05 plus the Dockerfile's pins (numpy 1.22.4, scipy 1.8.1, sklearn 1.1.1,
    # pandas 1.4.2, numba 0.55.2): the nearest versions with wheels for Python 3.11
    "codalab/codalab-legacy:py39": ("numpy>=1.23,<1.27", "scipy>=1.9,<1.12", "scikit-learn==1.1.3",
                                    "pandas==1.5.3", "matplotlib>=3.6,<3.9", "pyyaml>=6", "imutils==0.5.4",
                                    "numba>=0.57,<0.60", "pillow"),
    # python:3.12-slim with the Dockerfile's pins (all have wheels for Python 3.10-3.12)
    "codalab/codalab-legacy:py312": ("Cython==3.0.12", "numpy==1.26.4", "scipy==1.11.4",
                                     "scikit-learn==1.5.1", "pandas==2.2.3", "pyyaml==6.0.2",
                                     "imutils==0.5.4", "numba==0.61.2", "threadpoolctl==3.6.0",
                                     "matplotlib==3.8.4", "psutil==7.0.0"),
}
# a module a program imports -> the package that provides it, for the hints
_PROVIDERS = {"sklearn": "scikit-learn", "yaml": "pyyaml", "PIL": "pillow", "cv2": "opencv-python",
              "skimage": "scikit-image", "dateutil": "python-dateutil", "fontTools": "fonttools",
              "mpl_toolkits": "matplotlib", "pylab": "matplotlib", "bs4": "beautifulsoup4"}
_ENV_COMPLETE = ".metascore-complete"
_MISSING_MODULE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '([\w.]+)'")


def cache_root() -> Path:
    """``$METASCORE_CACHE``, else ``$XDG_CACHE_HOME/metascore``, else ``~/.cache/metascore``."""
    if os.environ.get("METASCORE_CACHE"):
        return Path(os.environ["METASCORE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "metascore"


def packages_for(image: str | None) -> tuple[str, ...] | None:
    """The shipped package list of ``image``, or ``None`` when there is none."""
    return IMAGE_PACKAGES.get(image_key(image)) if image else None


def package_for(module: str) -> str:
    """The pip package that provides the top-level ``module`` (``sklearn`` -> ``scikit-learn``)."""
    return _PROVIDERS.get(module, module)


def read_requirements(path: str | os.PathLike[str]) -> tuple[str, ...]:
    """The requirement lines of a pip requirements file (comments and blanks dropped)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--requirements {path}: {exc.strerror or exc}.") from None
    lines = tuple(line.split("#", 1)[0].strip() for line in text.splitlines())
    return tuple(line for line in lines if line)


def _env_dir(packages: tuple[str, ...], system_site_packages: bool, python: str,
             parent_sites: tuple[str, ...]) -> Path:
    version = subprocess.run([python, "-c", "import sys;print(sys.version)"], capture_output=True,
                             text=True, check=False).stdout.strip()
    key = "\n".join([python, version, str(system_site_packages), *sorted(packages), *parent_sites])
    return cache_root() / "envs" / hashlib.sha256(key.encode()).hexdigest()[:16]


def _virtual_env_sites(python: str) -> tuple[str, ...]:
    """The site-packages folders of ``python`` when it runs in a virtual environment, else ().

    ``python -m venv --system-site-packages`` run from a virtual environment gives the new
    one the *base* interpreter's packages (a venv's home is the base interpreter), so these
    folders are added to the new environment explicitly.
    """
    probe = ("import site, sys\nif sys.prefix != sys.base_prefix:\n"
             "    print('\\n'.join(site.getsitepackages()))")
    proc = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=False)
    return tuple(line for line in proc.stdout.splitlines() if line.strip())


def _record(image: str) -> Path:
    return cache_root() / "envs" / "images" / re.sub(r"[^\w.-]", "_", image_key(image))


def build_env(
    image: str, packages: tuple[str, ...], *, system_site_packages: bool = False,
    python: str = sys.executable, log: Callable[[str], None] = lambda _: None,
) -> Path:
    """Build (or reuse) the virtual environment with ``packages`` and record it for ``image``.

    Returns the environment folder. A half-built environment (interrupted) is never used: it is built again.
    ``system_site_packages``: the environment also sees the packages ``python`` sees: those of
    its virtual environment when it runs in one, and the base interpreter's.
    """
    parent_sites = _virtual_env_sites(python) if system_site_packages else ()
    target = _env_dir(packages, system_site_packages, python, parent_sites)
    done = target / _ENV_COMPLETE
    if not done.is_file():  # absent or half-built (interrupted): build it from scratch
        shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        log(f"[*] building {target} for {image}: {' '.join(packages) or '(no packages)'}")
        venv = [python, "-m", "venv", str(target)] + (["--system-site-packages"] if system_site_packages else [])
        _call(venv, "cannot create a virtual environment")
        if parent_sites:  # the packages of the virtual environment ``python`` runs in
            _link_sites(target, parent_sites)
        (target / "requirements.txt").write_text("\n".join(packages) + "\n", encoding="utf-8")
        if packages:
            _call([str(target / "bin" / "python"), "-m", "pip", "install", "--quiet",
                   "-r", str(target / "requirements.txt")], "pip could not install the packages")
        done.write_text(image + "\n", encoding="utf-8")
    record = _record(image)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(str(target) + "\n", encoding="utf-8")
    return target


@dataclass(frozen=True)
class EnvInfo:
    """An environment of the cache: its folder, the images recorded for it, its size."""

    path: Path
    images: tuple[str, ...]
    size: int
    complete: bool


def list_envs() -> list[EnvInfo]:
    """The environments ``bundle env`` built in this cache (half-built ones too), largest first."""
    root = cache_root() / "envs"
    if not root.is_dir():
        return []
    records: dict[Path, list[str]] = {}
    for record in sorted((root / "images").glob("*")) if (root / "images").is_dir() else ():
        try:
            target = Path(record.read_text(encoding="utf-8").strip())
        except OSError:
            continue
        records.setdefault(target, []).append(_recorded_image(record))
    out = []
    for env in sorted(p for p in root.iterdir() if p.is_dir() and p.name != "images"):
        size = sum(f.stat().st_size for f in env.rglob("*") if f.is_file() and not f.is_symlink())
        out.append(EnvInfo(env, tuple(records.get(env, ())), size, (env / _ENV_COMPLETE).is_file()))
    return sorted(out, key=lambda e: -e.size)


def remove_envs(image: str) -> list[EnvInfo]:
    """Remove the environment recorded for ``image`` (``"all"``: every environment), with
    its records; return what was removed. An image with no environment is an error."""
    envs = list_envs()
    gone = envs if image == "all" else [e for e in envs if image_key(image) in map(image_key, e.images)]
    if not gone and image != "all":
        known = sorted({i for e in envs for i in e.images})
        raise ConfigError(f"no environment is built for {image!r}"
                          + (f"; built for: {', '.join(known)}." if known else " (the cache has none)."))
    for env in gone:
        shutil.rmtree(env.path, ignore_errors=True)
    images = cache_root() / "envs" / "images"
    for record in sorted(images.glob("*")) if images.is_dir() else ():
        try:
            target = Path(record.read_text(encoding="utf-8").strip())
        except OSError:
            continue
        if any(target == env.path for env in gone):
            record.unlink()
    return gone


def _recorded_image(record: Path) -> str:
    """The image a record names: the one its environment was built for, else the file name."""
    try:
        target = Path(record.read_text(encoding="utf-8").strip())
        built = (target / _ENV_COMPLETE).read_text(encoding="utf-8").strip()
    except OSError:
        built = ""
    return built if built and _record(built) == record else record.name


def _link_sites(target: Path, sites: tuple[str, ...]) -> None:
    """Make ``target`` see ``sites`` after its own packages: a ``.pth`` file whose lines call
    ``site.addsitedir`` (so the ``.pth`` files there, e.g. editable installs, work too)."""
    proc = subprocess.run([str(target / "bin" / "python"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=False)
    purelib = Path(proc.stdout.strip())
    if proc.returncode != 0 or not purelib.is_dir():
        raise MetascoreError(f"cannot find the site-packages folder of {target}: {proc.stderr.strip()}")
    lines = [f"import site; site.addsitedir({site!r})" for site in sites]
    (purelib / "_metascore_parent_env.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _call(argv: list[str], what: str) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-5:]
        raise MetascoreError(f"{what} ({' '.join(argv[:4])} ...): " + " / ".join(last))


def interpreter_for(image: str | None) -> str | None:
    """The interpreter of the environment built for ``image``, or ``None``."""
    if not image:
        return None
    try:
        target = Path(_record(image).read_text(encoding="utf-8").strip())
    except OSError:
        return None
    interpreter = target / "bin" / "python"
    return str(interpreter) if (target / _ENV_COMPLETE).is_file() and interpreter.is_file() else None


def missing_module_hint(output: str, interpreter: str, image: str | None, *,
                        python_env: bool = False) -> str:
    """A one-paragraph fix when ``output`` (the program's stderr and stdout: some programs
    print their traceback on stdout) shows a missing Python module, else ``""``.
    ``python_env``: ``interpreter`` is the one ``--python-env`` gave, so that environment,
    not the image's, lacks the module. A module that an image whose content is known exactly
    (py312) lacks too is no package to install: the import fails on Codabench as well, unless
    a submission brings it (Codabench's iris example imports a code submission's ``model``)."""
    found = _MISSING_MODULE.findall(output)
    if not found:
        return ""
    module = found[-1].split(".")[0]
    package = package_for(module)
    if python_env:
        return (f"metascore: the program needs the Python module '{module}', which {interpreter} "
                f"(--python-env) does not have; install {package} there (`{interpreter} -m pip "
                f"install {package}`), or give --python-env an environment that has it.")
    where = f"the bundle's image {image}" if image else "the competition image"
    known = modules_of(image)
    if known is not None and module not in known:  # the image lacks it too: no package to add here
        return (f"metascore: the program needs the Python module '{module}', which neither "
                f"{interpreter} nor the image {image} has, so the import fails on Codabench too, "
                f"unless a submission brings it (a code submission's {module}.py, which an ingestion "
                "program imports from /app/ingested_program); a package installed here would make "
                "this run differ from the site's.")
    if interpreter_for(image):
        fix = (f"the environment built for {image} lacks it: list {package} in a requirements "
               f"file and run `metascore bundle env BUNDLE --requirements FILE`")
    elif packages_for(image):
        fix = ("run `metascore bundle env BUNDLE` once (or `bundle run --setup`) to build the packages of "
               + where)
    else:
        fix = (f"there is no package list for {where}: run `metascore bundle env BUNDLE "
               f"--requirements FILE` with a file listing {package}")
    return (f"metascore: the program needs the Python module '{module}', which {interpreter} "
            f"does not have; {fix} (or pass --python-env PATH).")
