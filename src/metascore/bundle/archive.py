"""Safe zip extraction and zipping, as Codabench's unpacker and worker read zips.

Extraction (:func:`safe_extract`) refuses what could write outside the target directory or
fill the disk: absolute member names, ``..`` components, drive letters, repeated members,
members under a link, symbolic links that lead outside the target (alone or through other
links), more than ``max_members`` members, and more than ``max_total_size`` uncompressed
bytes (checked on the declared sizes first, then on the bytes actually written, since
declared sizes can lie); a damaged member (bad CRC, truncated) is refused with its name, and
so are member names that are not UTF-8 though the zip says they are, and members deeper or
with longer paths than a job's tree may be (:data:`~metascore.bundle.trees.MAX_DEPTH`,
:data:`~metascore.bundle.trees.MAX_PATH`). A bundle zip (:func:`extract_bundle`) holds no
link member at all (Codabench's unpacker would make each a file holding the link's path),
and its ``competition.yaml`` is refused before anything is extracted when it declares more
than :data:`~metascore.readers.yaml_loader.MAX_YAML_BYTES` (and stopped there when it lies).
The noise that macOS adds to zips
(``__MACOSX/``, ``.DS_Store``, ``._*`` AppleDouble files) is skipped, as many real bundles
carry it.

Zipping (:func:`zip_directory`) follows what Codabench's unpacker expects: every program or
data directory zipped on its own with its files at the archive root (the platform does not
flatten a single top-level folder: codabench PR #1905 added it and was reverted); a whole
bundle zip is :mod:`metascore.bundle.bundle_zip`'s. A link that leaves the bundle is refused
before anything is read; a link inside it is stored as what it names, as the platform's
``ZipFile.extractall`` would not make it a link (:mod:`~metascore.bundle.links`).

:func:`as_folder` gives a folder for a bundle item or submission that may be a zip, extracting
each zip once into a cache (safe from several runner threads), within a size the caller
gives (a submission: the job's ``--disk-limit``); a path of a bundle that a link leads out
of the bundle, or that holds such a link, is refused (a cloned bundle could point at any
file of the machine), and a folder holding links inside the bundle is given as the
platform would get it, each link replaced by what it names.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import stat
import tempfile
import threading
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from ..errors import InputError
from ..readers.yaml_loader import MAX_YAML_BYTES
from .files import is_excluded, is_noise, new_folder
from .links import bundle_files, refuse_links
from ..atomic import SHARED_WRITE, replacing
from .trees import COPY_CHUNK, MAX_DEPTH, MAX_PATH, make_folders, remove_tree

__all__ = [
    "MAX_MEMBERS",
    "MAX_TOTAL_SIZE",
    "safe_extract",
    "extract_bundle",
    "as_folder",
    "zip_directory",
    "open_regular",
]

#: Default limits of :func:`safe_extract`: 20,000 members, 4 GiB uncompressed.
MAX_MEMBERS = 20_000
MAX_TOTAL_SIZE = 4 * 1024**3
_EXTRACT_LOCK = threading.Lock()
_OPEN_FOLDERS = 256  # folder descriptors an extraction keeps open at most


def safe_extract(
    archive: str | os.PathLike[str],
    dest: str | os.PathLike[str],
    *,
    max_members: int = MAX_MEMBERS,
    max_total_size: int = MAX_TOTAL_SIZE,
    size_name: str = "",
    links: bool = True,
    member_sizes: dict[str, int] | None = None,
) -> list[str]:
    """Extract the zip ``archive`` into ``dest`` (absent or an empty folder) and return the
    member names kept.

    Nothing is ever written outside ``dest``: the archive is extracted into a fresh folder
    beside it, every folder is entered without following links and every file created with
    ``O_EXCL | O_NOFOLLOW``; symbolic links are made last, and each must lead inside the
    finished tree (through the other links too); then the folder takes the name ``dest``.
    ``size_name`` names ``max_total_size`` in the messages (e.g. ``" (--disk-limit)"``).
    ``links=False``: a link member is refused (a bundle, :func:`extract_bundle`).
    ``member_sizes``: the most bytes a member of that name may hold (declared, then read).

    Raises
    ------
    InputError
        When the file is not a zip or a member cannot be read (a bad CRC, a truncated or
        encrypted member), a member name is absolute, contains ``..``, comes twice, is not
        UTF-8 or is too deep, a member lies under a link, a link leads outside the tree, or
        the archive exceeds
        ``max_members`` members or ``max_total_size`` uncompressed bytes. Nothing is left of a
        refused archive.
    """
    archive, dest = Path(archive), Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError(f"{dest}: not an empty folder; cannot extract {archive} into it.")
    with _open_zip(archive) as zf:
        infos = [i for i in zf.infolist() if not is_noise(i.filename)]
        _check_declared(archive, infos, max_members, max_total_size, size_name, links, member_sizes or {})
        members = _members(archive, infos)
        make_folders(dest.parent)
        with new_folder(dest, Path(tempfile.mkdtemp(prefix=".extract-", dir=dest.parent))) as tmp:
            os.chmod(tmp, 0o755)  # as a folder made with mkdir, not mkdtemp's 0700
            _Extraction(zf, archive, tmp, max_total_size, size_name, member_sizes or {}).run(members)
    return [i.filename for i in infos]


def _open_zip(archive: Path) -> zipfile.ZipFile:
    """The zip ``archive``, opened; an :class:`InputError` when it is not a readable zip."""
    try:
        return zipfile.ZipFile(archive)
    except UnicodeDecodeError:
        raise InputError(f"{archive}: a member name is not valid UTF-8, though the zip says its names "
                         "are; refusing to extract it.") from None
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise InputError(f"{archive}: not a readable zip file ({str(exc)[:120]}).") from None


def _check_declared(archive: Path, infos: list[zipfile.ZipInfo], max_members: int, max_total_size: int,
                    size_name: str, links: bool, member_sizes: Mapping[str, int]) -> None:
    """What the zip's directory declares is within the limits, before anything is extracted:
    the number of members, each member's size and kind, their total size."""
    if len(infos) > max_members:
        raise InputError(
            f"{archive}: {len(infos)} members, more than the limit of {max_members}; refusing "
            "to extract it."
        )
    for info in infos:
        limit = member_sizes.get(_clean(info.filename))
        if limit is not None and info.file_size > limit:
            raise InputError(_member_too_large(archive, info.filename, limit, info.file_size))
        if not links and _is_link(info):
            raise InputError(f"{archive}: member {info.filename!r} is a symbolic link; Codabench's "
                             "unpacker (ZipFile.extractall) would make it a file holding the link's "
                             "path, not the file it names: zip the file itself (`metascore bundle "
                             "zip` stores links as what they name).")
    declared = sum(i.file_size for i in infos)
    if declared > max_total_size:
        raise InputError(
            f"{archive}: {declared} bytes uncompressed, more than the limit of "
            f"{max_total_size}{size_name}; refusing to extract it."
        )


def _members(archive: Path, infos: list[zipfile.ZipInfo]) -> list[tuple[tuple[str, ...], zipfile.ZipInfo]]:
    """Each member's path components, checked: no absolute path, ``..``, drive, repeat, or
    member under a link member."""
    members, seen = [], set()
    for info in infos:
        _check_member_name(archive, info.filename)
        parts = PurePosixPath(info.filename.replace("\\", "/")).parts
        if not parts:
            continue
        if len(parts) > MAX_DEPTH or len(info.filename) > MAX_PATH:
            raise InputError(f"{archive}: member {info.filename[:80]!r}... is {len(parts) - 1} folders deep "
                             f"({len(info.filename)} characters), more than the {MAX_DEPTH} folders and "
                             f"{MAX_PATH} characters a job's tree may have; refusing to extract it.")
        if parts in seen:
            raise InputError(f"{archive}: member {info.filename!r} comes twice; refusing to extract it.")
        seen.add(parts)
        members.append((parts, info))
    links = {parts for parts, info in members if _is_link(info)}
    for parts, info in members:
        if any(parts[:k] in links for k in range(1, len(parts))):
            raise InputError(f"{archive}: member {info.filename!r} lies under a symbolic link of the "
                             "archive; refusing to extract it.")
    return members


def _clean(name: str) -> str:
    """A member name as the path it extracts to (``./a\\b`` -> ``a/b``)."""
    return "/".join(PurePosixPath(name.replace("\\", "/")).parts)


def _is_link(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


class _Extraction:
    """One archive written into the fresh folder ``root`` through folder descriptors."""

    def __init__(self, zf: zipfile.ZipFile, archive: Path, root: Path, max_total_size: int,
                 size_name: str = "", member_sizes: dict[str, int] | None = None) -> None:
        self.zf, self.archive, self.root, self.max = zf, archive, root, max_total_size
        self.size_name = size_name
        self.member_sizes = member_sizes or {}
        self.written = 0
        self.fds: dict[tuple[str, ...], int] = {}

    def run(self, members: list[tuple[tuple[str, ...], zipfile.ZipInfo]]) -> None:
        self.fds[()] = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            links = []
            for parts, info in members:
                if _is_link(info):
                    links.append((parts, self.read(info).decode("utf-8", "replace")))
                elif info.is_dir():
                    self.folder(parts)
                else:
                    self.file(parts, info)
            for parts, target in links:  # last: no file is ever written through one
                if os.path.isabs(target):
                    raise InputError(f"{self.archive}: symbolic link {'/'.join(parts)!r} -> {target!r} "
                                     "points outside the archive.")
                try:
                    os.symlink(target, parts[-1], dir_fd=self.folder(parts[:-1]))
                except FileExistsError:
                    raise InputError(f"{self.archive}: member {'/'.join(parts)!r} comes twice; refusing "
                                     "to extract it.") from None
            top = os.path.realpath(self.root)
            for parts, target in links:  # through the other links of the finished tree
                real = os.path.realpath(os.path.join(self.root, *parts))
                if real != top and not real.startswith(top + os.sep):
                    raise InputError(f"{self.archive}: symbolic link {'/'.join(parts)!r} -> {target!r} "
                                     "points outside the archive.")
        finally:
            for fd in self.fds.values():
                os.close(fd)

    def folder(self, parts: tuple[str, ...]) -> int:
        """The descriptor of the folder ``parts`` (made as needed, one level at a time from
        the deepest one open; never through a link). At most :data:`_OPEN_FOLDERS` stay open."""
        if parts in self.fds:
            return self.fds[parts]
        if len(self.fds) >= _OPEN_FOLDERS:
            for key in [k for k in self.fds if k]:
                os.close(self.fds.pop(key))
        known = max(k for k in range(len(parts)) if parts[:k] in self.fds)
        for depth in range(known + 1, len(parts) + 1):
            parent = self.fds[parts[:depth - 1]]
            try:
                os.mkdir(parts[depth - 1], 0o755, dir_fd=parent)
            except FileExistsError:
                pass
            try:
                self.fds[parts[:depth]] = os.open(parts[depth - 1], os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                                                  dir_fd=parent)
            except OSError:
                raise InputError(f"{self.archive}: {'/'.join(parts[:depth])[:200]!r} is both a file and a "
                                 "folder in the archive; refusing to extract it.") from None
        return self.fds[parts]

    def file(self, parts: tuple[str, ...], info: zipfile.ZipInfo) -> None:
        mode = (((info.external_attr >> 16) & 0o777 or 0o644) | stat.S_IRUSR | stat.S_IWUSR) & ~SHARED_WRITE
        try:
            fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode,
                         dir_fd=self.folder(parts[:-1]))
        except FileExistsError:
            raise InputError(f"{self.archive}: member {info.filename!r} comes twice; refusing to "
                             "extract it.") from None
        with os.fdopen(fd, "wb") as out:
            for chunk in self.chunks(info):
                out.write(chunk)
            os.fchmod(out.fileno(), mode)

    def read(self, info: zipfile.ZipInfo) -> bytes:
        return b"".join(self.chunks(info))

    def chunks(self, info: zipfile.ZipInfo):
        """The member's bytes, counted against the size limits; a corrupt member is refused."""
        limit, read = self.member_sizes.get(_clean(info.filename)), 0
        try:
            with self.zf.open(info) as src:
                while chunk := src.read(COPY_CHUNK):
                    read += len(chunk)
                    if limit is not None and read > limit:
                        raise InputError(_member_too_large(self.archive, info.filename, limit))
                    self.written += len(chunk)
                    if self.written > self.max:
                        raise InputError(
                            f"{self.archive}: more than {self.max} bytes{self.size_name} once "
                            "uncompressed (the declared sizes are wrong); extraction stopped."
                        )
                    yield chunk
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
            raise InputError(f"{self.archive}: member {info.filename!r} cannot be read ({exc}); the "
                             "zip file is damaged or encrypted.") from None


def _member_too_large(archive: Path, name: str, limit: int, size: int | None = None) -> str:
    """``size``: the declared size; ``None``: more than the limit was read (the declared size
    is wrong)."""
    held = f"{size:,} bytes" if size is not None else f"more than {limit:,} bytes (not its declared size)"
    return (f"{archive}: {name} holds {held} once uncompressed, more than the {limit / 2**20:g} MiB a "
            f"{PurePosixPath(name).name} may have; " + ("nothing was extracted." if size is not None
                                                         else "extraction stopped."))


def extract_bundle(archive: str | os.PathLike[str], dest: str | os.PathLike[str]) -> list[str]:
    """Extract a bundle zip into ``dest`` as :func:`safe_extract` does, refusing first a link
    member and a ``competition.yaml`` of more than
    :data:`~metascore.readers.yaml_loader.MAX_YAML_BYTES` (declared, then read)."""
    return safe_extract(archive, dest, links=False, member_sizes={"competition.yaml": MAX_YAML_BYTES})


def _check_member_name(archive: Path, name: str) -> None:
    clean = name.replace("\\", "/")
    parts = PurePosixPath(clean).parts
    if clean.startswith("/") or (len(clean) > 1 and clean[1] == ":") or ".." in parts:
        raise InputError(
            f"{archive}: member {name!r} has an absolute path or '..'; refusing to extract it."
        )


def as_folder(path: Path, cache: Path, *, max_size: int | None = None, bundle: Path | None = None) -> Path:
    """A folder with the contents of ``path``: ``path`` itself, or the zip extracted once into
    ``cache`` (several threads may ask for the same zip; it is extracted once).

    ``max_size``: the most bytes the zip may hold once extracted, the job's ``--disk-limit``
    (default :data:`MAX_TOTAL_SIZE`). ``bundle``: when ``path`` is a path of this bundle, it is
    refused (:class:`InputError`) when it leads out of the bundle or holds anything
    :func:`~metascore.bundle.links.link_problems` names; a folder holding links (inside the
    bundle) is copied once into ``cache`` with each link replaced by what it names, as the
    platform gets it from the zip ``bundle zip`` writes.
    """
    if bundle is not None and not Path(os.path.abspath(path)).is_relative_to(os.path.abspath(bundle)):
        bundle = None  # e.g. a submission of --submissions DIR: not the bundle's
    linked = refuse_links(path, bundle) if bundle is not None else False
    if path.is_dir() and not linked:
        return path
    with _EXTRACT_LOCK:
        if not cache.exists():
            if path.is_dir():
                _copy_files(bundle_files(path, bundle, skip=_excluded), cache)
            elif max_size is None:
                safe_extract(path, cache, links=bundle is None)
            else:
                safe_extract(path, cache, max_total_size=max_size, size_name=" (--disk-limit)",
                             links=bundle is None)
    return cache


def _excluded(name: str) -> bool:
    return is_excluded(Path(name))


def _copy_files(files: list[tuple[str, str]], dest: Path) -> None:
    """``dest``: a new folder holding each ``(name, real path)`` of ``files``, written under
    a temporary name, then renamed."""
    tmp = dest.with_name(f".{dest.name}.copy-tmp")
    remove_tree(tmp)
    make_folders(tmp)
    with new_folder(dest, tmp):
        for name, real in files:
            target = tmp / name
            make_folders(target.parent)
            with open_regular(real) as src, open(target, "xb") as out:
                shutil.copyfileobj(src, out, COPY_CHUNK)
                os.fchmod(out.fileno(), ((os.fstat(src.fileno()).st_mode & 0o777) | 0o600) & ~SHARED_WRITE)


def open_regular(path: str):
    """The regular file ``path`` open for reading (never a link, a FIFO or a device: the
    bundle may have changed since it was checked)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError(f"{path}: no longer a regular file; it changed while the bundle was read.")
    return os.fdopen(fd, "rb")


def zip_directory(src: str | os.PathLike[str], dest_zip: str | os.PathLike[str], *,
                  base: str | os.PathLike[str] | None = None,
                  bundle: str | os.PathLike[str] | None = None,
                  extra: Mapping[str, bytes] | None = None) -> Path:
    """Zip the contents of ``src`` with its files at the archive root (not under ``src/``).

    Caches (``__pycache__``, ``*.pyc``), VCS folders and macOS noise are left out; members are
    written in sorted order (zips stored, not compressed again). ``bundle``: the folder
    ``src`` belongs to (default ``src``): a link that leads out of it is refused before
    anything is written, a link inside it is stored as what it names
    (:func:`~metascore.bundle.links.bundle_files`). ``base``: a zip whose members come first,
    copied as they are (not compressed again: the meta-scoring program's cached
    ``runtime.zip``). ``extra``: members written last, in place of files of the same name
    (the meta task's competition token). The zip is written to a temporary name, then renamed
    (:func:`~metascore.bundle.files.replacing`: writable by its user alone, whatever the umask).
    """
    src, dest_zip = Path(src), Path(dest_zip)
    extra = dict(extra or {})
    if not src.is_dir():
        raise InputError(f"{src}: not a directory; cannot zip it.")
    files = bundle_files(src, Path(bundle) if bundle is not None else src, skip=_excluded)
    make_folders(dest_zip.parent)
    with replacing(dest_zip) as out:
        if base is not None:
            with open(base, "rb") as first:
                shutil.copyfileobj(first, out, COPY_CHUNK)
            out.seek(0)
        with zipfile.ZipFile(out, "a" if base is not None else "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for name, real in files:
                if name not in extra:
                    _zip_file(zf, name, real)
            for name, data in sorted(extra.items()):
                zf.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
    return dest_zip


def _zip_file(zf: zipfile.ZipFile, name: str, real: str) -> None:
    """The regular file ``real`` as the member ``name`` (a zip stored: compressed already)."""
    with open_regular(real) as src:
        info = os.fstat(src.fileno())
        when = max(dt.datetime.fromtimestamp(info.st_mtime), dt.datetime(1980, 1, 1))
        member = zipfile.ZipInfo(name, when.timetuple()[:6])
        member.external_attr = (info.st_mode & 0xFFFF) << 16
        member.compress_type = zipfile.ZIP_STORED if name.endswith(".zip") else zipfile.ZIP_DEFLATED
        member.file_size = info.st_size
        with zf.open(member, "w") as out:
            shutil.copyfileobj(src, out, COPY_CHUNK)
