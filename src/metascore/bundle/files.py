"""File rules every bundle module shares: which files are noise, clean copies, atomic writes.

- :func:`is_noise`: what macOS adds to zips (``__MACOSX/``, ``.DS_Store``, ``._*``
  AppleDouble files), skipped on extraction and when looking at a program's root;
- :func:`is_excluded`: never copied into a zip or an assembled program (caches, VCS data,
  compiled Python, OS noise);
- :func:`copy_clean`: a folder copied without the excluded files;
- :func:`write_text`: a text file written under a temporary name, then renamed;
- :data:`METADATA_FILES`: the names of a program's metadata file, in the worker's order.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePosixPath

__all__ = ["METADATA_FILES", "EXCLUDED_NAMES", "is_noise", "is_excluded", "copy_clean", "write_text"]

#: A program's metadata file (``command``, ...): ``metadata.yaml`` first, as the worker reads it.
METADATA_FILES = ("metadata.yaml", "metadata")
#: Never put into a zip: caches, VCS data and OS noise.
EXCLUDED_NAMES = frozenset(
    {"__pycache__", ".git", ".hg", ".svn", ".pytest_cache", ".mypy_cache", ".DS_Store"}
)


def is_noise(name: str) -> bool:
    """True for macOS zip noise: ``__MACOSX/...``, ``.DS_Store`` and ``._*`` files."""
    parts = PurePosixPath(name.replace("\\", "/")).parts
    return bool(parts) and (
        parts[0] == "__MACOSX" or parts[-1] == ".DS_Store" or parts[-1].startswith("._")
    )


def is_excluded(path: Path) -> bool:
    """True for a file or folder never zipped or copied: caches, VCS data, ``*.pyc``, noise."""
    return path.name in EXCLUDED_NAMES or path.suffix in (".pyc", ".pyo") or is_noise(path.name)


def copy_clean(src: Path, dest: Path) -> None:
    """Copy the folder ``src`` into ``dest`` (merged), leaving out :func:`is_excluded` files."""
    shutil.copytree(
        src, dest, dirs_exist_ok=True,
        ignore=lambda d, names: [n for n in names if is_excluded(Path(d) / n)],
    )


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (parents created) under a temporary name, then rename it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
