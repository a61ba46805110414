"""A bundle's ``meta_scoring_program/`` folder: the placeholder found, and filled with
metascore's own meta-scoring program (the pipeline it runs is :mod:`metascore.program`).

A task whose ``scoring_program`` is a folder named ``meta_scoring_program`` that is absent or
holds only README files (the pointer the bundle template ships) is filled by
:func:`assemble_meta_program`: the repository's ``scoring_program/`` plus a vendored copy
of the ``metascore`` package next to ``score.py``, so it runs in a stock image (e.g.
``codalab/codalab-legacy:py312``) that does not have metascore installed. The schema
checks accept such a folder, and ``bundle run`` / ``bundle zip`` fill it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..errors import ConfigError
from .files import METADATA_FILES, copy_clean, is_noise

__all__ = [
    "META_PROGRAM_NAME",
    "default_scoring_program",
    "needs_meta_program",
    "assemble_meta_program",
]

#: The directory name that marks a task's scoring program as metascore's meta-scoring program.
META_PROGRAM_NAME = "meta_scoring_program"


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


def assemble_meta_program(dest: str | os.PathLike[str], source: str | os.PathLike[str] | None = None) -> Path:
    """Write the meta-scoring program into ``dest``: ``source`` (default: the repository's
    ``scoring_program/``) plus the ``metascore`` package copied next to ``score.py``."""
    import metascore

    dest = Path(dest)
    source = default_scoring_program() if source is None else Path(source)
    if not (source / "score.py").is_file():
        raise ConfigError(f"{source}: not a meta-scoring program folder (no score.py in it).")
    if not any((source / m).is_file() for m in METADATA_FILES):
        raise ConfigError(f"{source}: no metadata.yaml; the compute worker would not run it.")
    if dest.exists():
        shutil.rmtree(dest)
    copy_clean(source, dest)
    copy_clean(Path(metascore.__file__).resolve().parent, dest / "metascore")
    return dest
