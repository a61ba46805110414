"""What a meta-scoring program is in a bundle, and how it runs in the competition's image.

A task whose ``scoring_program`` is a folder named :data:`META_PROGRAM_NAME` that is absent
or holds only README files (the pointer the bundle template ships) is the **placeholder**
(:func:`needs_meta_program`) that ``bundle run`` and ``bundle zip`` fill with metascore's
meta-scoring program (:func:`default_scoring_program`; the filling is
:mod:`metascore.bundle.meta.program_folder`'s). An assembled program runs in one of two ways
(:data:`META_PYTHONS`, ``--meta-python`` or ``$METASCORE_META_PYTHON``):

``bundled``
    with its own Python in :data:`RUNTIME_DIR` (:mod:`metascore.bundle.runtime.store`), run
    through the image's dynamic loader :data:`LOADER`: any Linux x86_64 image with glibc >=
    2.17;
``image``
    with the image's ``python3``, which needs Python >= :data:`META_PROGRAM_PYTHON` and
    :data:`PROGRAM_MODULES`;

and ``auto`` (the default) decides by the image (:func:`meta_python_in`, from what
:mod:`~metascore.bundle.platform.images` knows of it). :func:`meta_python_of` reads which way
an assembled program runs; :func:`in_runtime` tells its own Python's files, which no check
reads.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import yaml

from ...config.model import CONFIG_NAME
from ...errors import ConfigError
from ..files import METADATA_FILES, is_noise
from .images import modules_of, python_of

__all__ = [
    "META_PROGRAM_NAME", "META_PYTHONS", "META_PROGRAM_PYTHON", "PROGRAM_MODULES", "LOADER",
    "RUNTIME_DIR", "default_scoring_program", "needs_meta_program", "meta_python_of", "in_runtime",
    "default_meta_python", "check_meta_python", "meta_python_in",
]

#: The directory name that marks a task's scoring program as metascore's meta-scoring program.
META_PROGRAM_NAME = "meta_scoring_program"
#: The values of ``--meta-python``.
META_PYTHONS = ("auto", "bundled", "image")
#: The oldest Python the meta-scoring program runs on (pyproject.toml's requires-python).
META_PROGRAM_PYTHON = (3, 10)
#: The modules the meta-scoring program needs beyond the standard library.
PROGRAM_MODULES = frozenset({"numpy", "scipy", "pandas", "yaml"})
#: The dynamic loader of x86_64 glibc systems (the ABI fixes its path).
LOADER = "/lib64/ld-linux-x86-64.so.2"
#: The runtime's folder inside the meta-scoring program (the last part of
#: :data:`metascore.bundle.runtime.build.MOUNT`).
RUNTIME_DIR = "runtime"


def default_scoring_program() -> Path:
    """The meta-scoring program (the repository's ``scoring_program/``).

    The package ships it as package data (``metascore/_programs/scoring_program``, a link
    to the repository folder in a source checkout), so it is found in every install.
    """
    import metascore

    path = Path(metascore.__file__).resolve().parent / "_programs" / "scoring_program"
    if not (path / "score.py").is_file():
        raise ConfigError(
            f"the meta-scoring program was not found at {path} (a damaged install?); give its "
            "folder with --scoring-program."
        )
    return path


def needs_meta_program(path: Path) -> bool:
    """True if ``path`` is a ``meta_scoring_program`` folder to fill from the repository.

    That is when the folder is named ``meta_scoring_program`` and is absent or holds only
    README files (the pointer the bundle template ships).
    """
    path = Path(path)
    if path.name.removesuffix(".zip") != META_PROGRAM_NAME:
        return False
    if not path.exists():
        return True
    return path.is_dir() and all(
        p.name.upper().startswith("README") or is_noise(p.name) for p in path.iterdir()
    )


def is_meta_reference(path: Path) -> bool:
    """True if ``path`` (a folder or zip) is a meta task's reference data: it holds
    ``metascore.yaml`` at its root."""
    path = Path(path)
    if path.is_dir():
        return (path / CONFIG_NAME).is_file()
    try:
        with zipfile.ZipFile(path) as zf:
            return CONFIG_NAME in zf.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def meta_python_of(program: Path) -> str | None:
    """How an assembled meta-scoring program (folder or zip) runs: ``"bundled"`` (its command
    starts with the loader and the program carries ``runtime/``), ``"image"`` (any other
    command), or ``None`` (no metadata or no command)."""
    program = Path(program)
    for name in METADATA_FILES:
        try:
            if program.is_dir():
                text = (program / name).read_text(encoding="utf-8")
                carries = (program / RUNTIME_DIR / "bin").is_dir()
            else:
                with zipfile.ZipFile(program) as zf:
                    text = zf.read(name).decode("utf-8")
                    carries = any(n.startswith(f"{RUNTIME_DIR}/bin/") for n in zf.namelist())
        except (OSError, KeyError, zipfile.BadZipFile, UnicodeDecodeError):
            continue
        try:
            command = (yaml.safe_load(text) or {}).get("command")
        except (yaml.YAMLError, AttributeError):
            return None
        if not isinstance(command, str):
            return None
        return "bundled" if command.split()[:1] == [LOADER] and carries else "image"
    return None


def in_runtime(parts: tuple[str, ...]) -> bool:
    """Whether a path (its parts) lies in a meta-scoring program's own Python
    (``runtime/bin``, ``runtime/lib``, ``runtime/pycache``): files no check needs to read."""
    return any(a == RUNTIME_DIR and b in ("bin", "lib", "pycache") for a, b in zip(parts, parts[1:]))


def default_meta_python() -> str:
    """``$METASCORE_META_PYTHON`` when set (checked), else ``"auto"``."""
    return check_meta_python(os.environ.get("METASCORE_META_PYTHON") or "auto")


def check_meta_python(value: str) -> str:
    """``value`` if it is one of :data:`META_PYTHONS`; else a ConfigError."""
    if value not in META_PYTHONS:
        raise ConfigError(f"--meta-python {value!r}: use one of {', '.join(META_PYTHONS)} "
                          "(METASCORE_META_PYTHON takes the same values).")
    return value


def meta_python_in(image: str | None, value: str | None = None, *, in_image: bool = True) -> str:
    """``"bundled"`` or ``"image"``: ``value`` (default :func:`default_meta_python`), with
    ``auto`` decided by ``image``: ``image`` when it is known to carry Python >=
    :data:`META_PROGRAM_PYTHON` and the program's modules
    (:data:`~metascore.bundle.platform.images.IMAGE_MODULES`), else ``bundled``.

    ``in_image=False``: the programs do not run in ``image`` (the local backend runs this
    machine's Python, :attr:`~metascore.bundle.worker.backend.Capabilities.runs_image`), so
    ``auto`` is ``image``: the program's ``python3`` command, no runtime to build.
    """
    value = default_meta_python() if value is None else check_meta_python(value)
    if value != "auto":
        return value
    if not in_image:
        return "image"
    python, modules = python_of(image), modules_of(image)
    runs = (python is not None and python >= META_PROGRAM_PYTHON and modules is not None
            and PROGRAM_MODULES <= modules)
    return "image" if runs else "bundled"
