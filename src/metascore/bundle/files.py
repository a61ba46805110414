"""File rules every bundle module shares: which files are noise, clean copies, atomic writes.

- :func:`is_noise`: what macOS adds to zips (``__MACOSX/``, ``.DS_Store``, ``._*``
  AppleDouble files), skipped on extraction and when looking at a program's root;
- :func:`is_excluded`: never copied into a zip or an assembled program (caches, VCS data,
  compiled Python, OS noise);
- :func:`copy_clean`: a folder copied without the excluded files;
- :func:`write_text`: a text file written under a fresh temporary name, then renamed
  (:mod:`metascore.atomic`, the one write-then-rename, for any file);
  :func:`new_folder`: a folder filled under a temporary name, then renamed (removed when
  filling it fails or is interrupted);
  each writable by its user alone, whatever the umask (at most ``rw-r--r--`` and
  ``rwxr-xr-x``, the modes of :mod:`~metascore.bundle.trees`: what ``umask 022`` gives);
- :func:`read_job_file` and :func:`copy_job_output`: a file or a tree that a job wrote, read
  or copied without following what the job may have planted there (a symbolic link to a
  host file, a FIFO that would block): links that stay inside the tree are copied as the
  files they name, anything else is left out and named; the tree at any depth, each file
  written once with its holes (:mod:`~metascore.bundle.trees`);
- :data:`METADATA_FILES`: the names of a program's metadata file, in the worker's order.

The runner is often root and the jobs are not to be trusted: every folder a job could write
is read through these functions, and a file the runner writes into one is created under a
name that cannot exist yet (``O_EXCL``), then renamed over the name it replaces.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from ..atomic import write_bytes
from .trees import copy_tree, drop_shared_write, make_folders

__all__ = [
    "METADATA_FILES", "EXCLUDED_NAMES", "is_noise", "is_excluded", "copy_clean", "write_text",
    "new_folder", "read_job_file", "copy_job_output",
]

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
    """Copy the folder ``src`` into ``dest`` (merged), leaving out :func:`is_excluded` files;
    what it holds then is writable by its user alone, whatever the umask."""
    shutil.copytree(
        src, dest, dirs_exist_ok=True,
        ignore=lambda d, names: [n for n in names if is_excluded(Path(d) / n)],
    )
    drop_shared_write(dest)


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (parents created) as :func:`metascore.atomic.write_bytes` does."""
    make_folders(path.parent)
    write_bytes(path, text.encode("utf-8"))


@contextmanager
def new_folder(dest: Path, tmp: Path) -> Iterator[Path]:
    """``tmp``, the folder the ``with`` block fills, then made writable by its user alone
    (:func:`~metascore.bundle.trees.drop_shared_write`: what was copied or made there under
    ``umask 000``) and put in the place of ``dest`` (absent or an empty folder). When the
    block raises (an interrupt too), ``tmp`` is removed and ``dest`` left as it was."""
    try:
        yield tmp
        drop_shared_write(tmp)
        if dest.exists():
            dest.rmdir()
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def read_job_file(path: Path, limit: int = 64 * 1024**2) -> bytes | None:
    """The bytes of the regular file ``path`` in a folder a job wrote (at most ``limit``);
    ``None`` when it is absent, a symbolic link, a FIFO or anything but a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return handle.read(limit)


def copy_job_output(src: Path, dest: Path, what: str = "the output") -> list[str]:
    """Copy the folder a job wrote into ``dest`` (merged) with regular files and folders only.

    A symbolic link is copied as the file it names when that lies inside ``src`` (the
    platform zips the output and keeps the file a link names); a link that leaves ``src``
    (``pred.txt -> /app/input/ref/truth.txt``), a link to a folder, a FIFO, a socket or a
    device is not copied. Nothing is written twice and holes stay holes
    (:func:`~metascore.bundle.trees.copy_tree`): the copy takes no more room than the job's
    own files. Returns what was left out, as ``"path (why)"``; raises
    :class:`~metascore.errors.InputError` naming ``what`` for a tree too deep to copy.
    """
    return copy_tree(src, dest, keep_links=False, what=what)
