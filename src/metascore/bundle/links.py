"""Links in a bundle: the one rule ``bundle check``, ``zip``, ``run`` and ``add-meta`` apply.

A bundle is often a cloned repository or a downloaded archive, and a link in it can name
any file of this machine (``ref/leak.txt -> ../../secret/secret.txt``,
``scoring_program/shadow.txt -> /etc/shadow``, a folder link to ``/etc``): followed, that
file would be read as the user running metascore, zipped for upload and given to the
jobs, or written over. So a link that leaves the bundle, by itself, through a parent folder
or through a chain of links, is refused before anything behind it is read or written:

- :func:`link_problems`: what is wrong at a bundle path and below it, one sentence each
  naming the link and its target: a link that leaves the bundle, a link to nothing (or a
  loop of links), a folder link to a folder that holds it, a FIFO, socket or device (which
  no zip can hold), a zip whose members are links. ``bundle check`` reports them
  (:mod:`~metascore.bundle.schema.load`); ``run`` refuses the path (:func:`refuse_links`,
  through :func:`~metascore.bundle.archive.as_folder`);
- :func:`bundle_files`: the files of a bundle folder as the platform will get them, for
  ``bundle zip`` and for ``run``'s copy of a folder that holds links (refused on the first
  problem);
- :func:`refuse_writes`: ``bundle add-meta`` writes no file through a link that leaves the
  bundle (every path it writes, and the existing files there, checked before anything is
  written);
- :func:`outside_link`: a path that leaves the bundle by itself or through a parent folder;
  :data:`OUTSIDE_LINK_RULE`: what every message says to do;
- :func:`hard_links`: the files whose data is shared with a file outside the bundle (a hard
  link: more names than the bundle has for it), which no symbolic-link rule sees: a hard link
  to the organizer's 0600 file reads as an ordinary file. ``bundle check`` warns of each
  (:mod:`~metascore.bundle.schema.load`), ``bundle zip`` refuses them unless the organizer
  passes ``--allow-hardlinks`` (:data:`HARD_LINK_RULE`).

Links that stay inside the bundle are stored as what they name: a file link as the file's
bytes, a folder link as the folder's files. That is what the platform makes of a bundle:
Codabench unpacks the bundle zip (``competitions/tasks.py``: ``unpack_competition``) and
each program or dataset zip on the worker (``compute_worker.py``: ``_get_bundle``) with
Python's ``ZipFile.extractall``, which makes no symbolic link: a link member becomes a
regular file holding the link's target path as text (``ref/train.csv`` would hold
``../data/train.csv``, not the data). For the same reason a zip holding link members is
refused in a bundle (:func:`zip_links`; :func:`~metascore.bundle.archive.safe_extract`
with ``links=False``).
"""

from __future__ import annotations

import errno
import os
import stat
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from ..errors import InputError
from .trees import MAX_DEPTH, walk

__all__ = [
    "OUTSIDE_LINK_RULE", "HARD_LINK_RULE", "MAX_LINKED_FILES", "HardLink", "outside_link", "link_problems",
    "refuse_links", "bundle_files", "zip_links", "refuse_writes", "hard_links",
]

#: What every message about a link that leaves a bundle says.
OUTSIDE_LINK_RULE = ("metascore follows no link out of a bundle (a cloned or downloaded bundle could "
                     "name any file of this machine, to be read as your user, zipped for upload or "
                     "given to the jobs): put the file or folder itself in the bundle")
#: What every message about a file whose data is shared with one outside the bundle says.
HARD_LINK_RULE = ("`bundle zip` would pack that file's bytes, whoever's they are (a hard link gives a bundle "
                  "any file its maker could read, a 0600 file of yours too), and refuses it unless you pass "
                  "--allow-hardlinks: give the bundle a copy of its own (cp FILE FILE.copy && mv FILE.copy FILE), "
                  "or pass --allow-hardlinks when the file is meant to be published")
#: The most files and folders that links to folders may repeat under one bundle path (those
#: of a folder reached a second time: n folders each holding two links to the next would
#: repeat the last one 2^n times).
MAX_LINKED_FILES = 20_000


def _inside(real: str, top: str) -> bool:
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _leads(link: str, target: str, real: str) -> str:
    """``"ref is a link to ../x"`` and, when it does not say so itself, where it leads."""
    return f"{link} is a link to {target}" + ("" if target == real else f", which leads to {real}")


def outside_link(path: Path, bundle: Path) -> str | None:
    """``"ref is a link to /etc, outside the bundle"`` when ``path``, written inside
    ``bundle``, leads out of it through a link (its own or a parent folder's); else ``None``
    (also for a path written elsewhere)."""
    path, bundle = Path(os.path.abspath(path)), Path(os.path.abspath(bundle))
    if not path.is_relative_to(bundle):
        return None
    real, top = os.path.realpath(path), os.path.realpath(bundle)
    if _inside(real, top):
        return None
    rel = path.relative_to(bundle)
    for k in range(1, len(rel.parts) + 1):
        link = bundle.joinpath(*rel.parts[:k])
        if link.is_symlink() and not _inside(os.path.realpath(link), top):
            return f"{_leads(link.relative_to(bundle).as_posix(), os.readlink(link), os.path.realpath(link))}, " \
                   "outside the bundle"
    return f"{rel} leads to {real}, outside the bundle"


# ---------------------------------------------------------------------- a path and what it holds
class _Walk:
    """The regular files at and below one bundle path, links inside the bundle followed;
    each problem handed to ``problem`` (and the entry left out)."""

    def __init__(self, bundle: Path, problem: Callable[[str], None], skip: Callable[[str], bool]) -> None:
        self.bundle = Path(os.path.abspath(bundle))
        self.top = os.path.realpath(bundle)
        self.problem, self.skip = problem, skip
        self.links = 0          # links met (followed or not)
        self.repeated = 0       # files under a folder reached a second time
        self.seen: set[tuple[int, int]] = set()  # the folders walked

    def files(self, path: Path) -> list[tuple[str, str]]:
        """``(name below path, real path)`` of each regular file (``path`` itself: name ``""``)."""
        path = Path(os.path.abspath(path))
        shown = path.relative_to(self.bundle).as_posix() if path.is_relative_to(self.bundle) else str(path)
        why = outside_link(path.parent, self.bundle)
        if why:
            self.problem(f"{why}; {OUTSIDE_LINK_RULE}.")
            return []
        found = self.entry(str(path), shown, frozenset())
        if found is None:
            return []
        kind, real, ident = found
        if kind == "file":
            return [("", real)]
        out: list[tuple[str, str]] = []
        todo = [(real, "", shown, frozenset({ident}), ident, False)]
        while todo:
            folder, rel, where, ancestors, ident, again = todo.pop()
            again = again or ident in self.seen  # a folder walked before, through another link
            self.seen.add(ident)
            try:
                names = sorted(os.listdir(folder))
            except OSError as exc:
                self.problem(f"{where}: cannot be read ({exc.strerror}).")
                continue
            folders = []
            for name in names:
                if self.skip(name):
                    continue
                here, name_rel = f"{where}/{name}", f"{rel}{name}"
                found = self.entry(os.path.join(folder, name), here, ancestors)
                if found is None:
                    continue
                kind, real, child = found
                self.repeated += again
                if self.repeated > MAX_LINKED_FILES:
                    self.problem(f"{shown}: links to folders repeat more than {MAX_LINKED_FILES:,} files "
                                 "and folders in it; link a folder once, or copy it in.")
                    return out
                if kind == "file":
                    out.append((name_rel, real))
                elif len(ancestors) >= MAX_DEPTH:
                    self.problem(f"{here}: more than {MAX_DEPTH} folders deep (links followed).")
                else:
                    folders.append((real, f"{name_rel}/", here, ancestors | {child}, child, again))
            todo.extend(reversed(folders))
        return out

    def entry(self, path: str, shown: str, ancestors: frozenset) -> tuple[str, str, tuple[int, int]] | None:
        """``(kind, real path, identity)`` of a file or folder, its link followed when it
        stays in the bundle; ``None`` (said) for anything else."""
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            self.problem(f"{shown} does not exist.")
            return None
        real = path
        if stat.S_ISLNK(info.st_mode):
            self.links += 1
            target, real = os.readlink(path), os.path.realpath(path)
            if not _inside(real, self.top):
                self.problem(f"{_leads(shown, target, real)}, outside the bundle; {OUTSIDE_LINK_RULE}.")
                return None
            try:
                info = os.stat(path)
            except OSError as exc:
                what = "a loop of links" if exc.errno == errno.ELOOP else "nothing"
                self.problem(f"{shown} is a link to {target}, which names {what}; no zip can hold it "
                             "(remove the link, or put the file itself there).")
                return None
        ident = (info.st_dev, info.st_ino)
        if stat.S_ISDIR(info.st_mode):
            if ident in ancestors:
                link = f"a link to {os.readlink(path)}" if real != path else "a folder"
                self.problem(f"{shown} is {link}, a folder that holds it: its files would repeat "
                             "without end; remove the link.")
                return None
            return "dir", real, ident
        if stat.S_ISREG(info.st_mode):
            return "file", real, ident
        self.problem(f"{shown} is {_kind(info.st_mode)}, not a regular file: no zip can hold it and "
                     "Codabench would not get it; remove it from the bundle.")
        return None


def _kind(mode: int) -> str:
    return ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a special file")


def link_problems(path: Path, bundle: Path) -> list[str]:
    """Every problem at the bundle path ``path`` and below it (see the module's docstring),
    one sentence each naming the link and its target; ``[]`` for a path that does not exist."""
    return _problems(path, bundle)[0]


def refuse_links(path: Path, bundle: Path) -> bool:
    """Raise :class:`~metascore.errors.InputError` with the first of :func:`link_problems`;
    else return whether ``path`` holds links (all inside the bundle)."""
    problems, links = _problems(path, bundle)
    if problems:
        raise InputError(problems[0])
    return links > 0


def _problems(path: Path, bundle: Path) -> tuple[list[str], int]:
    """:func:`link_problems`, and the number of links met."""
    if not os.path.lexists(path):
        return [], 0
    problems: list[str] = []
    walk = _Walk(bundle, problems.append, lambda _: False)
    files = walk.files(Path(path))
    if not problems and len(files) == 1 and files[0][0] == "" and zipfile.is_zipfile(files[0][1]):
        shown = os.path.relpath(os.path.abspath(path), walk.bundle)
        problems += [_zip_link_problem(shown, name, target) for name, target in zip_links(Path(files[0][1]))]
    return problems, walk.links


def _zip_link_problem(archive: str, name: str, target: str) -> str:
    return (f"{archive}: member {name!r} is a symbolic link (to {target[:200]!r}); Codabench's "
            "unpacker (ZipFile.extractall) makes it a file holding that path, not the file it names: "
            "zip the file itself (`metascore bundle zip` stores links as what they name).")


def bundle_files(folder: Path, bundle: Path, skip: Callable[[str], bool] = lambda _: False) -> list[tuple[str, str]]:
    """``(name below folder, real path)`` of every regular file of the bundle folder
    ``folder``, in sorted order (a folder's files before its sub-folders'), links inside
    ``bundle`` followed (stored as what they name), names for which ``skip`` is true left
    out. Raises :class:`~metascore.errors.InputError` with the first problem of
    :func:`link_problems`: nothing is read before the whole folder is known to be safe."""
    problems: list[str] = []
    files = _Walk(bundle, problems.append, skip).files(Path(folder))
    if problems:
        raise InputError(problems[0])
    return files


def zip_links(archive: Path) -> list[tuple[str, str]]:
    """``(member, target)`` of every symbolic link member of the zip ``archive``."""
    try:
        with zipfile.ZipFile(archive) as zf:
            return [(info.filename, zf.read(info)[:1024].decode("utf-8", "replace"))
                    for info in zf.infolist() if stat.S_ISLNK(info.external_attr >> 16)]
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError, NotImplementedError):
        return []  # an unreadable zip: its reader says so


# ---------------------------------------------------------------------- writing into a bundle
def refuse_writes(bundle: Path, paths: Iterable[str], what: str) -> None:
    """Raise :class:`~metascore.errors.InputError` when one of ``paths`` (relative to
    ``bundle``), or a folder on its way, is a link that leads out of the bundle: ``what``
    (the command) writes nothing then. Call it before writing or reading any of them."""
    bundle = Path(os.path.abspath(bundle))
    top = os.path.realpath(bundle)
    for rel in paths:
        parts = PurePosixPath(rel).parts
        for k in range(1, len(parts) + 1):
            here = bundle.joinpath(*parts[:k])
            if here.is_symlink() and not _inside(os.path.realpath(here), top):
                shown = "/".join(parts[:k])
                raise InputError(f"{_leads(shown, os.readlink(here), os.path.realpath(here))}, outside "
                                 f"the bundle, and {what} would write {rel} through it; nothing was "
                                 f"written; {OUTSIDE_LINK_RULE}.")


# ---------------------------------------------------------------------- hard links
class HardLink(NamedTuple):
    """A file of the bundle whose data is shared with a file outside it: its path in the
    bundle, its link count and how many of those names are in the bundle."""

    path: str
    names: int
    inside: int

    def __str__(self) -> str:
        return (f"{self.path} shares its data with a file outside the bundle (a hard link: {self.names} "
                f"names, {self.inside} of them in the bundle); {HARD_LINK_RULE}.")


def hard_links(paths: Iterable[Path], bundle: Path) -> list[HardLink]:
    """The regular files at and below the bundle ``paths`` (links inside the bundle followed,
    each file once) whose link count is above the number of names the bundle has for them:
    their data is also a file outside the bundle, which the bundle's maker may have linked
    in (an organizer's 0600 file). Paths that do not exist, and what
    :func:`link_problems` names, are left out."""
    found: dict[tuple[int, int], tuple[str, int]] = {}
    top = os.path.realpath(bundle)
    for path in paths:
        if not os.path.lexists(path):
            continue
        for _, real in _Walk(bundle, lambda _: None, lambda _: False).files(Path(path)):
            try:
                info = os.stat(real)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                found.setdefault((info.st_dev, info.st_ino), (os.path.relpath(real, top), info.st_nlink))
    if not found:
        return []
    inside = dict.fromkeys(found, 0)
    for entry in walk(top, on_error=lambda _: None):  # every name the bundle has for them
        ident = (entry.stat.st_dev, entry.stat.st_ino)
        if ident in inside and stat.S_ISREG(entry.stat.st_mode):
            inside[ident] += 1
    return [HardLink(path, names, inside[ident]) for ident, (path, names) in found.items()
            if inside[ident] < names]
