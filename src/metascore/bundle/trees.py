"""Folder trees a job could write, walked without recursion and never through a link.

A job owns the folders it writes: it can make them thousands of folders deep (deeper than a
path can name, and than Python's recursion limit), fill them with empty files, sparse files
and links. The runner reads, sizes, copies, chowns and removes such trees only here:

- :func:`walk`: every entry below a folder, depth-first in name order, each with its
  ``lstat`` and a descriptor of its folder. One folder descriptor is open at a time (the
  walk goes down by name with ``O_NOFOLLOW`` and up through ``..``, checked to be the
  folder it came from), the pending names are a list, not the call stack: any depth, any
  path length;
- :func:`tree_usage`: bytes allocated (not the files' sizes: a sparse file costs what it
  holds), the number of entries and the largest size a file claims;
- :func:`copy_tree`: a copy that writes only what the source holds: holes stay holes, and
  a file reached twice (hard links, or links to it) is written once and hard-linked; links
  are kept as links, or (a job's output) replaced by the file they name inside the tree;
  a tree deeper than :data:`MAX_DEPTH` folders or with a path longer than
  :data:`MAX_PATH` characters is refused (the platform's worker, which zips the output
  with ``os.walk``, cannot take one either);
- :func:`remove_tree`: removal at any depth (``shutil.rmtree`` recurses);
- :func:`chown_tree`: a tree given to the job's user;
- :func:`make_folders` and :func:`drop_shared_write`: what metascore makes for its user is
  writable by that user alone, whatever the umask: a folder at most ``rwxr-xr-x``
  (:data:`FOLDER_MODE`), a file at most ``rw-r--r--`` (:mod:`metascore.atomic`), what ``umask 022``
  gives (a stricter umask takes more away). Under ``umask 000`` a folder of ``--out`` left
  ``0777`` would let any local user put files into it, a ``0666`` file let them change it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from ..atomic import SHARED_WRITE
from ..errors import InputError

__all__ = ["Entry", "Usage", "walk", "tree_usage", "copy_tree", "remove_tree", "chown_tree", "make_folders",
           "drop_shared_write", "MAX_DEPTH", "MAX_PATH", "COPY_CHUNK", "FOLDER_MODE"]

#: A tree :func:`copy_tree` copies is at most this many folders deep ...
MAX_DEPTH = 100
#: ... and names nothing with a longer path (characters, below the tree's root).
MAX_PATH = 2000
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
#: Bytes a copy reads at a time (a tree's files, a zip's members, a bundle's files).
COPY_CHUNK = 1 << 20
#: A new folder's mode (less the umask): no file or folder metascore writes for its user has
#: the write bits of the group and of others (:data:`metascore.atomic.SHARED_WRITE`: what
#: ``umask 022`` takes away; a file: :data:`metascore.atomic.FILE_MODE`).
FOLDER_MODE = 0o755


class Entry(NamedTuple):
    """One entry of a tree: its names below the root, its ``lstat``, and a descriptor of
    the folder holding it (valid until the walk moves on)."""

    parts: tuple[str, ...]
    stat: os.stat_result
    dir_fd: int

    @property
    def name(self) -> str:
        return self.parts[-1]


def walk(root: str | os.PathLike[str], *, max_depth: int | None = None,
         on_error: Callable[[OSError], None] | None = None, follow_root: bool = False) -> Iterator[Entry]:
    """Every entry below ``root`` (a folder; a link there is followed only with
    ``follow_root``, no link below it ever), depth-first in name order, each folder's
    entries before those of its sub-folders.

    ``max_depth``: raise :class:`InputError` before entering a folder that many levels
    down. An entry that vanishes is skipped; an unreadable folder calls ``on_error``
    (default: raise). The tree changing under the walk (a folder moved away) raises
    :class:`OSError` rather than walking elsewhere.
    """
    fd = os.open(root, _DIR_FLAGS | (0 if follow_root else os.O_NOFOLLOW))
    parts: list[str] = []
    ids = [_identity(os.fstat(fd))]
    todo: list[list[str]] = []  # per level: the sub-folders still to walk
    entered = True
    try:
        while True:
            if entered:  # list the folder just entered
                folders = []
                for name in _names(fd, on_error):
                    try:
                        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    except FileNotFoundError:
                        continue
                    yield Entry((*parts, name), info, fd)
                    if stat.S_ISDIR(info.st_mode):
                        folders.append(name)
                todo.append(folders[::-1])
            while not todo[-1]:  # this folder is done: up until one has folders left
                todo.pop()
                if not parts:
                    return
                fd = _move(fd, "..", os.O_RDONLY)
                parts.pop()
                ids.pop()
                if _identity(os.fstat(fd)) != ids[-1]:
                    raise OSError(errno.ESTALE, f"{root}: the tree changed while it was read")
            name = todo[-1].pop()
            if max_depth is not None and len(parts) + 1 > max_depth:
                raise InputError(f"{'/'.join([*parts, name])[:60]}...: the tree is more than "
                                 f"{max_depth} folders deep")
            try:
                fd = _move(fd, name, os.O_NOFOLLOW)
            except OSError as exc:
                if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):  # else: vanished,
                    if on_error is None:                                        # or now a link
                        raise
                    on_error(exc)
                entered = False
                continue
            parts.append(name)
            ids.append(_identity(os.fstat(fd)))
            entered = True
    finally:
        os.close(fd)


def _names(fd: int, on_error: Callable[[OSError], None] | None) -> list[str]:
    try:
        return sorted(os.listdir(fd))
    except OSError as exc:
        if on_error is None:
            raise
        on_error(exc)
        return []


def _move(fd: int, name: str, flags: int) -> int:
    """A descriptor of the folder ``name`` seen from ``fd``, which is then closed (and
    stays open when ``name`` cannot be opened)."""
    new = os.open(name, _DIR_FLAGS | flags, dir_fd=fd)
    os.close(fd)
    return new


def _identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


class Usage(NamedTuple):
    """What a tree holds: ``size``, the bytes allocated on disk (a sparse file counts what it
    holds); ``entries``, its files, folders and links; ``largest``, the largest size a
    regular file claims (a sparse file's whole size)."""

    size: int
    entries: int
    largest: int


def tree_usage(paths: list[Path]) -> Usage:
    """The :class:`Usage` of the trees under ``paths`` (folders; links not followed; what
    cannot be read is not counted)."""
    size = entries = largest = 0
    for path in paths:
        try:
            for entry in walk(path, on_error=lambda _: None):
                entries += 1
                if not stat.S_ISDIR(entry.stat.st_mode):
                    size += _allocated(entry.stat)
                if stat.S_ISREG(entry.stat.st_mode):
                    largest = max(largest, entry.stat.st_size)
        except OSError:  # gone, or moved while read: what was seen is counted
            continue
    return Usage(size, entries, largest)


def _allocated(info: os.stat_result) -> int:
    return info.st_blocks * 512 if hasattr(info, "st_blocks") else info.st_size


def remove_tree(path: str | os.PathLike[str]) -> None:
    """Remove ``path`` and everything below it, at any depth, never through a link (a link
    is removed, not followed); nothing happens when it does not exist."""
    path = os.fspath(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(path)
        return
    fd = os.open(path, _DIR_FLAGS | os.O_NOFOLLOW)
    names: list[str] = []  # from the root down to the current folder
    ids = [_identity(os.fstat(fd))]
    todo = [_empty(fd)]    # per level: the sub-folders still to remove
    try:
        while True:
            if todo[-1]:  # down into the next sub-folder
                name = todo[-1].pop()
                try:
                    fd = _move(fd, name, os.O_NOFOLLOW)
                except PermissionError:  # a folder without permissions (the runner owns it)
                    os.chmod(name, 0o700, dir_fd=fd)
                    fd = _move(fd, name, os.O_NOFOLLOW)
                names.append(name)
                ids.append(_identity(os.fstat(fd)))
                todo.append(_empty(fd))
                continue
            todo.pop()
            if not names:
                break
            fd = _move(fd, "..", os.O_RDONLY)  # up: remove the folder just emptied
            ids.pop()
            if _identity(os.fstat(fd)) != ids[-1]:
                raise OSError(errno.ESTALE, f"{path}: the tree changed while it was removed")
            os.rmdir(names.pop(), dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(path)


def _empty(fd: int) -> list[str]:
    """Remove everything but the sub-folders from the folder ``fd``; return the sub-folders."""
    try:
        names = os.listdir(fd)
    except PermissionError:
        os.fchmod(fd, 0o700)
        names = os.listdir(fd)
    folders = []
    for name in names:
        try:
            if stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                folders.append(name)
                continue
            os.unlink(name, dir_fd=fd)
        except FileNotFoundError:
            continue
        except PermissionError:  # a folder the job made read-only
            os.fchmod(fd, 0o700)
            os.unlink(name, dir_fd=fd)
    return folders


def make_folders(path: str | os.PathLike[str]) -> Path:
    """``path`` and each missing folder above it made with :data:`FOLDER_MODE` (less the
    umask; ``Path.mkdir(parents=True)`` gives the folders above the umask's mode, ``0777``
    under ``umask 000``). Folders that exist are left as they are."""
    path = Path(os.path.abspath(path))
    missing = []
    while not path.is_dir():
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=FOLDER_MODE)
        except FileExistsError:  # made meanwhile (another thread), or a file: said below
            if not folder.is_dir():
                raise
    return missing[0] if missing else path


def drop_shared_write(path: str | os.PathLike[str]) -> None:
    """Clear the :data:`~metascore.atomic.SHARED_WRITE` bits of ``path`` (a folder) and of everything below it,
    links not followed: a tree metascore made (a copy, an extraction, a program folder), made
    writable by its user alone before it is put in place."""
    def drop(name: str | os.PathLike[str], info: os.stat_result, dir_fd: int | None = None) -> None:
        if info.st_mode & SHARED_WRITE and not stat.S_ISLNK(info.st_mode):
            os.chmod(name, stat.S_IMODE(info.st_mode) & ~SHARED_WRITE, dir_fd=dir_fd)

    drop(path, os.lstat(path))
    for entry in walk(path):
        drop(entry.name, entry.stat, entry.dir_fd)


def chown_tree(path: Path, uid: int, gid: int) -> None:
    """Make ``path`` and everything below it (links not followed) belong to ``uid:gid``."""
    os.chown(path, uid, gid, follow_symlinks=False)
    for entry in walk(path):
        os.chown(entry.name, uid, gid, dir_fd=entry.dir_fd, follow_symlinks=False)


def copy_tree(src: Path, dest: Path, *, keep_links: bool, skip: Callable[[str], bool] = lambda _: False,
              what: str = "the folder") -> list[str]:
    """Copy the folder ``src`` into ``dest`` (merged) without writing more than ``src`` holds.

    Regular files keep their permission bits (without set-id bits, and writable by their
    owner alone: :data:`~metascore.atomic.SHARED_WRITE` cleared) and their holes; folders are made with
    :data:`FOLDER_MODE`; a file reached twice is copied once and hard-linked. ``keep_links``: symbolic links are copied
    as links, and ``src`` may itself be a link to a folder (a bundle item); otherwise (a
    job's output) a link to a regular file inside ``src`` is copied as that file and any
    other link is left out. FIFOs, sockets and devices are left out.
    ``skip(name)``: entries (and folders with all they hold) not copied.

    Returns what was left out, as ``"path (why)"``. Raises :class:`InputError` (naming
    ``what``) for a tree deeper than :data:`MAX_DEPTH` or a path longer than :data:`MAX_PATH`.
    """
    src, dest = Path(src), Path(dest)
    root = os.path.realpath(src)
    copies: dict[tuple[int, int], Path] = {}  # source file -> its first copy
    skipped: list[str] = []
    make_folders(dest)
    left_out: set[tuple[str, ...]] = set()
    try:
        for entry in walk(src, max_depth=MAX_DEPTH, follow_root=keep_links):
            if any(entry.parts[:k] in left_out for k in range(1, len(entry.parts))):
                continue
            shown = "/".join(entry.parts)
            if len(shown) > MAX_PATH:
                raise InputError(f"{shown[:60]}...: a path longer than {MAX_PATH} characters")
            if skip(entry.name):
                left_out.add(entry.parts)
                continue
            target = dest.joinpath(*entry.parts)
            mode = entry.stat.st_mode
            if stat.S_ISDIR(mode):
                target.mkdir(mode=FOLDER_MODE, exist_ok=True)
            elif stat.S_ISREG(mode):
                _copy_file(entry, target, copies)
            elif stat.S_ISLNK(mode) and keep_links:
                if os.path.lexists(target):
                    os.unlink(target)
                os.symlink(os.readlink(entry.name, dir_fd=entry.dir_fd), target)
            elif stat.S_ISLNK(mode):
                why = _copy_link_target(src, root, entry, target, copies)
                if why:
                    skipped.append(f"{shown} ({why})")
            else:
                skipped.append(f"{shown} (not a regular file)")
    except InputError as exc:
        raise InputError(f"{what}: {exc}; refusing to copy it.") from None
    return skipped


def _copy_link_target(src: Path, root: str, entry: Entry, target: Path,
                      copies: dict[tuple[int, int], Path]) -> str:
    """Copy the regular file a link of a job's output names inside ``src``; else why not."""
    link = os.readlink(entry.name, dir_fd=entry.dir_fd)
    real = os.path.realpath(src.joinpath(*entry.parts))
    if real != root and not real.startswith(root + os.sep):
        return f"a link to {link[:200]}, outside the folder"
    if os.path.isdir(real):
        return "a link to a folder"
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return "a link to nothing readable"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "a link to nothing readable"
        _write_copy(fd, info, target, copies)
    finally:
        os.close(fd)
    return ""


def _copy_file(entry: Entry, target: Path, copies: dict[tuple[int, int], Path]) -> None:
    fd = os.open(entry.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=entry.dir_fd)
    try:
        _write_copy(fd, os.fstat(fd), target, copies)
    finally:
        os.close(fd)


def _write_copy(fd: int, info: os.stat_result, target: Path, copies: dict[tuple[int, int], Path]) -> None:
    """``target`` as a copy of the open file ``fd``: a hard link to its first copy, or its
    data segments written at their offsets (the holes left as holes)."""
    if os.path.lexists(target):  # a merged copy: the new file replaces the old
        os.unlink(target)
    first = copies.get(_identity(info))
    if first is not None:
        try:
            os.link(first, target)
            return
        except OSError:  # no hard links here: a second copy
            pass
    mode = ((info.st_mode & 0o777) | 0o600) & ~SHARED_WRITE
    out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        for start, end in _segments(fd, info.st_size):
            offset = start
            while offset < end:
                chunk = os.pread(fd, min(COPY_CHUNK, end - offset), offset)
                if not chunk:
                    break
                os.pwrite(out, chunk, offset)
                offset += len(chunk)
        os.ftruncate(out, info.st_size)
        os.fchmod(out, mode)
    finally:
        os.close(out)
    copies[_identity(info)] = target


def _segments(fd: int, size: int) -> Iterator[tuple[int, int]]:
    """The ``(start, end)`` byte ranges of the file that hold data (all of it where the
    file system cannot say where its holes are)."""
    offset = 0
    while offset < size:
        try:
            start = os.lseek(fd, offset, os.SEEK_DATA)
            end = os.lseek(fd, start, os.SEEK_HOLE)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # nothing but a hole up to the end
                return
            yield offset, size
            return
        yield start, min(end, size)
        offset = end
