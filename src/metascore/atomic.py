"""A file written whole or not at all, never writable by others: the one write-then-rename.

Every file metascore writes for its user (an output folder's files, a zip, a signature, a
pulled folder, the meta program's own Python) is made under a fresh temporary name beside
its place, filled, then renamed over it (:func:`replacing`, :func:`write_bytes`): a reader
finds the old file or the new one, never a part, and a failure leaves the old one. Its mode
is what ``open()`` would give it less the write bits of the group and of others
(:func:`file_mode`: under ``umask 000``, ``0o644``, what ``umask 022`` gives).

Standard library only, at the bottom of the package: the meta-scoring program carries it.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

__all__ = ["SHARED_WRITE", "FILE_MODE", "umask", "file_mode", "replacing", "write_bytes"]

#: The write bits of the group and of others: nothing metascore writes has them.
SHARED_WRITE = 0o022
#: A new file's mode before the umask: ``rw-r--r--``.
FILE_MODE = 0o644


def umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux's
    ``/proc``: other threads may be creating files); elsewhere set and put back."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode ``open()`` gives a new file (``0o666`` less the umask), without the write bits
    of the group and of others."""
    return 0o666 & ~(umask() | SHARED_WRITE)


@contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A new file, open for reading and writing, that the ``with`` block fills and that then
    replaces ``path`` (its folder must exist). It is made under a fresh temporary name with
    ``O_EXCL`` (never through a link planted there) and :data:`FILE_MODE` (less the umask:
    never writable by others); when the block raises, it is removed and ``path`` left as it was."""
    path = Path(path)
    fd, tmp = _new_file(path)
    try:
        with os.fdopen(fd, "w+b") as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` (its folder must exist) as :func:`replacing` does."""
    with replacing(path) as handle:
        handle.write(data)


def _new_file(path: Path) -> tuple[int, str]:
    """A descriptor and the name of a new empty file beside ``path``, its name unused before."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = os.path.join(path.parent, f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, flags, FILE_MODE), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"{path.parent}: no temporary name left for {path.name}")
