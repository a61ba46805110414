"""What a job leaves behind, made harmless before anything else reads it.

- :func:`scrub`, after every step on every backend, over the job's whole sandbox (its
  program, input, output and scratch folders, at any depth, never through a link): a
  set-user-ID or set-group-ID bit is cleared (a file with other names, which could be
  another's, is removed instead), a device node is removed, and so is the file capability
  of an executable file (the ``security.capability`` attribute, which only ``exec`` reads).
  A job may set such bits on files it owns (a copy of a shell, mode 4755): where its
  folders are mounted ``nosuid`` and it runs with ``no_new_privs`` they give it nothing,
  but a local user running the file left in ``--out`` would run it as the file's owner
  (root, when the runner is root). The write bits of the group and of others are cleared
  too (:data:`~metascore.atomic.SHARED_WRITE`: a ``0777`` folder, a ``0666``
  ``scores.json``, a ``2777`` folder once its set-group-ID bit is gone), so that what a job
  leaves in ``--out`` has the modes a worker's ``umask 022`` gives and no other local user
  can change it; a file with other names that is not its folder owner's is removed instead
  (the bits are another's to change).
- :func:`end_user`, after a job of the local backend's rewrite mode run as root under a
  user of its own (:mod:`metascore.bundle.worker.local`): every process of that user is
  killed, what it left in the folders every user may write (``/tmp``, ``/var/tmp``,
  ``/dev/shm``, ``/dev/mqueue``: their entries and those of their world-writable
  sub-folders) is removed, and so are its System V IPC objects (shared memory,
  semaphores, message queues). The user is the job's alone, so all of it is the job's.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
from pathlib import Path

from ...atomic import SHARED_WRITE
from ..trees import remove_tree, walk
from .job_init import kill_until_gone

__all__ = ["scrub", "scrub_notes", "end_user", "user_processes", "SHARED_DIRS", "SET_ID"]

#: The set-user-ID and set-group-ID bits.
SET_ID = stat.S_ISUID | stat.S_ISGID
#: The folders every local user may write, cleaned of what a job's own user left there.
SHARED_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue")
_CAPABILITY = "security.capability"
_IPC = (("shm", "shmctl"), ("sem", "semctl"), ("msg", "msgctl"))
_IPC_RMID = 0
_NAMED = 10  # paths a note names
_NOTES = {"set-id": "file(s) with a set-id bit ({names}): the bits were cleared",
          "device": "device node(s) ({names}): removed",
          "capability": "file(s) with a file capability ({names}): the capabilities were removed",
          "shared": "file(s) others may write, with other names that may be another's ({names}): removed"}


def scrub(folders: list[Path]) -> dict[str, list[str]]:
    """Clear set-id bits, remove device nodes and file capabilities under ``folders``.

    Returns what was changed, by kind (``"set-id"``, ``"device"``, ``"capability"``,
    ``"shared"``: the removed files others may write): the paths below the folder that holds
    them. A folder its job closed to its owner is opened to it (``u+rwx``) so that nothing in
    it is missed; the write bits of the group and others are cleared without a word.
    """
    found: dict[str, list[str]] = {"set-id": [], "device": [], "capability": [], "shared": []}
    for folder in folders:
        try:
            for entry in walk(folder, on_error=lambda _: None):
                _scrub_entry(entry, found)
        except OSError:  # gone, or moved while read: what was seen is done
            continue
    return found


def scrub_notes(sandbox: Path, step: str) -> list[str]:
    """:func:`scrub` the job's ``sandbox`` after its ``step``; one note per kind of change."""
    notes = []
    for kind, paths in scrub([sandbox]).items():
        if paths:
            names = ", ".join(repr(p[:80]) for p in paths[:_NAMED]) + (" ..." if len(paths) > _NAMED else "")
            notes.append(f"{step} step: the programs left {len(paths)} {_NOTES[kind].format(names=names)}; "
                         "nothing a job leaves keeps one.")
    return notes


def _scrub_entry(entry, found: dict[str, list[str]]) -> None:
    mode, shown = entry.stat.st_mode, "/".join(entry.parts)
    try:
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
            os.unlink(entry.name, dir_fd=entry.dir_fd)
            found["device"].append(shown)
            return
        if stat.S_ISLNK(mode):
            return
        closed = stat.S_ISDIR(mode) and mode & 0o700 != 0o700 and os.geteuid() != 0
        if mode & (SET_ID | SHARED_WRITE) or closed:
            kind = "set-id" if mode & SET_ID else "shared"
            if not stat.S_ISDIR(mode) and entry.stat.st_nlink > 1 and (kind == "set-id" or not _owned(entry)):
                os.unlink(entry.name, dir_fd=entry.dir_fd)  # another name may be outside
                found[kind].append(shown)
                return
            _chmod(entry, (mode & 0o7777 & ~SET_ID & ~SHARED_WRITE) | (0o700 if closed else 0))
            if mode & SET_ID:
                found["set-id"].append(shown)
        if stat.S_ISREG(mode) and mode & 0o111 and _drop_capability(entry):  # applies only on exec
            found["capability"].append(shown)
    except FileNotFoundError:  # removed meanwhile
        return


def _owned(entry) -> bool:
    """Whether the entry belongs to the owner of the folder holding it (the job's user)."""
    return entry.stat.st_uid == os.fstat(entry.dir_fd).st_uid


def _chmod(entry, mode: int) -> None:
    """``chmod`` the entry itself (never what a link there would name)."""
    fd = os.open(entry.name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=entry.dir_fd)
    try:
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) == (entry.stat.st_dev, entry.stat.st_ino):
            os.chmod(f"/proc/self/fd/{fd}", mode)
    finally:
        os.close(fd)


def _drop_capability(entry) -> bool:
    """Remove the file capability of a regular file; whether it had one."""
    path = f"/proc/self/fd/{entry.dir_fd}/{entry.name}"
    try:
        os.getxattr(path, _CAPABILITY, follow_symlinks=False)
    except OSError as exc:
        if exc.errno in (errno.ENODATA, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOENT):
            return False
        raise
    os.removexattr(path, _CAPABILITY, follow_symlinks=False)
    return True


# ----------------------------------------------------------------------------- a job's user
def user_processes(uid: int) -> list[int]:
    """The processes any of whose user ids (real, effective, saved, file system) is ``uid``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", "rb") as handle:
                for line in handle:
                    if line.startswith(b"Uid:"):
                        if uid in map(int, line.split()[1:]):
                            found.append(int(name))
                        break
        except (OSError, ValueError):
            continue
    return found


def end_user(uid: int) -> None:
    """Kill every process of ``uid``, then remove its files in :data:`SHARED_DIRS` and its
    System V IPC objects (see the module)."""
    kill_until_gone(lambda: user_processes(uid))
    for folder in SHARED_DIRS:
        for path in _owned_in(Path(folder), uid):
            try:
                remove_tree(path)
            except OSError:  # gone meanwhile, or a mount point
                pass
    _remove_ipc(uid)


def _owned_in(folder: Path, uid: int, depth: int = 2) -> list[Path]:
    """The entries of ``folder`` that belong to ``uid``, and those of its sub-folders that
    every user may write (``/tmp/.X11-unix``), ``depth`` levels down."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found = []
    for name in names:
        path = folder / name
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if info.st_uid == uid:
            found.append(path)
        elif depth > 1 and stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_IWOTH:
            found += _owned_in(path, uid, depth - 1)
    return found


def _remove_ipc(uid: int) -> None:
    """Remove the System V shared memory, semaphores and message queues of ``uid``."""
    libc = None
    for kind, call in _IPC:
        try:
            with open(f"/proc/sysvipc/{kind}") as handle:
                header, *rows = handle.read().splitlines()
        except OSError:
            continue
        columns = header.split()
        for row in rows:
            fields = dict(zip(columns, row.split()))
            if fields.get("uid") != str(uid):
                continue
            libc = libc or ctypes.CDLL(None, use_errno=True)
            ident = int(fields[next(c for c in columns if c.endswith("id"))])
            if call == "semctl":
                libc.semctl(ident, 0, _IPC_RMID)
            else:
                getattr(libc, call)(ident, _IPC_RMID, None)
