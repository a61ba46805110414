"""Publishing the set of output files in a folder a platform reads, all or nothing.

Every file is rendered in memory first, then written into a staging directory inside the
output directory and published there file by file (a platform reads
``/app/output/scores.json`` itself, so the set cannot be switched by renaming a folder).
``write_files`` takes these steps, in this order:

1. lock the output directory (``flock`` on the directory itself, no lock file: writers
   into one folder take turns; the lock dies with its process) and remove the staging
   folders (``.metascore-staging-*`` directories, nothing else) that a killed run left;
2. stage every file in a new ``.metascore-staging-*`` directory, each ``fsync``-ed;
3. withdraw the old score files, ``scores.json`` then ``scores.txt`` (moved into the
   staging directory, where they are kept for a rollback), ``fsync`` the directory;
4. move every other file in with ``os.replace`` (each atomic; a previous version is kept
   as a hard link, or a copy), ``fsync`` the directory;
5. move ``scores.txt`` in, ``fsync``, then ``scores.json``, ``fsync``;
6. remove the staging directory.

So whenever the process stops, even by SIGKILL (and after a machine crash, as far as the
file system keeps the order that the ``fsync`` calls impose), a reader finds the complete
old set, the complete new set, or no score file: ``scores.json`` present means every file
is there and from one run; ``scores.txt`` present means every file but ``scores.json`` is
there and from its run; without score files the other files may be old or new (each
whole, never truncated). The only leftover is a staging folder, which the next write
removes. A failure with an exception (disk full) undoes the steps taken, newest first, and
leaves the previous files as they were. Files of others in the folder (a scoring
program's own files, the platform's ``metadata``) are never touched, and score files not
in the new set are left alone. Each file gets the mode ``open()`` would give it (``0o666``
less the umask), not the temporary file's ``0o600``, and never the write bits of the group
and of others (under ``umask 000``, ``0o644``: what ``umask 022`` gives). Nothing here writes ``metadata``,
which the platform owns, and ``detailed_results.html`` is the only HTML file written.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: writers into one folder are not serialized
    fcntl = None  # type: ignore[assignment]

from ..atomic import file_mode
from ..errors import MetascoreError
from ..readers.scores_file import SCORE_FILES

__all__ = ["write_files", "STAGING_PREFIX"]

_FORBIDDEN = ("metadata",)
#: Name prefix of the staging directories inside the output directory.
STAGING_PREFIX = ".metascore-staging-"


def write_files(output_dir: str | Path, files: Mapping[str, str | bytes],
                withdraw: Iterable[str] = ()) -> list[Path]:
    """Write ``{name: text or bytes}`` into ``output_dir``, all or nothing (steps in the
    module doc); then remove the files named in ``withdraw`` that are not among ``files``
    (an output of an earlier run that this run does not produce, e.g. ``per_judge.csv.gz``).

    The score files among ``files`` (``scores.json``, ``scores.txt``) are withdrawn first
    and published last, ``scores.json`` last of all: the platform reads it as "the results
    are complete". If publishing fails half-way, the steps taken are undone newest first,
    so the directory holds the old set again; a killed process leaves the old set, the new
    one, or no score file, and a staging folder that the next call removes.
    """
    out = Path(output_dir)
    bad = [name for name in files if name in _FORBIDDEN or name in ("", ".", "..")
           or "/" in name or "\\" in name or name.startswith(STAGING_PREFIX)]
    if bad:
        raise MetascoreError(f"refusing to write {bad[0]!r} into the output directory.")
    out.mkdir(parents=True, exist_ok=True)
    mode = file_mode()
    with _locked(out) as dir_fd:
        _remove_stale_staging(out)
        stage = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out))
        try:
            new, old = stage / "new", stage / "old"
            new.mkdir()
            old.mkdir()
            for name, text in files.items():
                _write_synced(new / name, text, mode)
            _publish(new, old, out, list(files), dir_fd)
            for name in withdraw:
                if name not in files and name not in _FORBIDDEN and "/" not in name \
                        and os.path.isfile(out / name):
                    os.unlink(out / name)
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    return [out / name for name in files]


def _publish(new: Path, old: Path, out: Path, names: list[str], dir_fd: int | None) -> None:
    """Move ``new/name`` over ``out/name``: score files withdrawn first and published last.

    ``old`` receives what is replaced, so that a failure restores it.
    """
    # score files are withdrawn in SCORE_FILES' order and published in the reverse order,
    # after every other file (scores.json last of all)
    scores = [name for name in SCORE_FILES if name in names]  # withdrawal order
    others = sorted(name for name in names if name not in SCORE_FILES)
    done: list[tuple[str, str]] = []  # (what, name), undone newest first on failure
    try:
        for name in scores:  # from here on, a reader finds no result
            if os.path.lexists(out / name):
                done.append(("withdrawn", name))
                os.replace(out / name, old / name)
        if done:
            _sync(dir_fd)
        for name in others:
            if os.path.lexists(out / name):
                try:
                    os.link(out / name, old / name)
                except OSError:  # no hard links here: a copy keeps the old content too
                    shutil.copy2(out / name, old / name)
                done.append(("replaced", name))
            else:
                done.append(("added", name))
            os.replace(new / name, out / name)
        _sync(dir_fd)
        for name in reversed(scores):  # scores.txt, then scores.json
            done.append(("added", name))
            os.replace(new / name, out / name)
            _sync(dir_fd)
    except BaseException:
        for what, name in reversed(done):
            try:
                if what == "added":
                    if not (new / name).exists():  # it was published: withdraw it
                        (out / name).unlink(missing_ok=True)
                elif (old / name).exists():
                    os.replace(old / name, out / name)
            except OSError:
                pass  # restore what can be; the original error says what went wrong
        raise


def _write_synced(path: Path, text: str | bytes, mode: int) -> None:
    """Write ``text`` (UTF-8) or bytes to ``path`` and flush it to the disk, with ``mode``."""
    with (path.open("wb") if isinstance(text, bytes)
          else path.open("w", encoding="utf-8", newline="")) as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(path, mode)


@contextmanager
def _locked(out: Path) -> Iterator[int | None]:
    """Hold an exclusive ``flock`` on the directory ``out``; yield its descriptor.

    Yields ``None`` where a directory cannot be opened (Windows); where it cannot be
    locked (some network file systems) the writes go on unserialized.
    """
    try:
        fd: int | None = os.open(out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        fd = None
    try:
        if fd is not None and fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError:
                pass
        yield fd
    finally:
        if fd is not None:
            os.close(fd)  # and the lock with it


def _sync(dir_fd: int | None) -> None:
    """Make the renames in the directory durable (where a directory can be synced)."""
    if dir_fd is not None:
        try:
            os.fsync(dir_fd)
        except OSError:
            pass


def _remove_stale_staging(out: Path) -> None:
    """Remove the staging directories a killed run left in ``out`` (under the lock, no live
    writer has one); files and links named like them are not staging directories."""
    with os.scandir(out) as entries:
        stale = [entry.path for entry in entries
                 if entry.name.startswith(STAGING_PREFIX) and entry.is_dir(follow_symlinks=False)]
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)
