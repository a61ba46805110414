"""Safe zip extraction and Codabench-style bundle zipping.

Extraction (:func:`safe_extract`) refuses what could write outside the target directory or
fill the disk: absolute member names, ``..`` components, drive letters, symbolic links
that point outside the target, more than ``max_members`` members, and more than
``max_total_size`` uncompressed bytes (checked on the declared sizes first, then on the
bytes actually written, since declared sizes can lie). The noise that macOS adds to zips
(``__MACOSX/``, ``.DS_Store``, ``._*`` AppleDouble files) is skipped, as many real bundles
carry it.

Zipping (:func:`zip_directory`, :func:`build_bundle_zip`) follows what Codabench expects
(research/codabench.md section 6): ``competition.yaml`` at the root of the bundle zip, and
every program or data directory zipped on its own with its files at the archive root (the
platform does not flatten a single top-level folder).

:func:`as_folder` gives a folder for a bundle item or submission that may be a zip, extracting
each zip once into a cache (safe from several runner threads).

The meta-scoring program (:mod:`metascore.bundle.meta_program`) and the noise rules
(:mod:`metascore.bundle.files`) live in their own modules; their names are importable from
here too.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import yaml

from ..errors import ConfigError, InputError
from ..io.yaml_loader import read_yaml
from .files import is_excluded, is_noise
from .meta_program import (
    META_PROGRAM_NAME,
    assemble_meta_program,
    default_scoring_program,
    needs_meta_program,
)
from .schema import check_bundle, path_references

__all__ = [
    "MAX_MEMBERS",
    "MAX_TOTAL_SIZE",
    "META_PROGRAM_NAME",
    "is_noise",
    "safe_extract",
    "as_folder",
    "zip_directory",
    "default_scoring_program",
    "needs_meta_program",
    "assemble_meta_program",
    "build_bundle_zip",
]

#: Default limits of :func:`safe_extract`: 20,000 members, 4 GiB uncompressed.
MAX_MEMBERS = 20_000
MAX_TOTAL_SIZE = 4 * 1024**3
_CHUNK = 1 << 20
_EXTRACT_LOCK = threading.Lock()


def safe_extract(
    archive: str | os.PathLike[str],
    dest: str | os.PathLike[str],
    *,
    max_members: int = MAX_MEMBERS,
    max_total_size: int = MAX_TOTAL_SIZE,
) -> list[str]:
    """Extract the zip ``archive`` into ``dest`` (created) and return the member names kept.

    Raises
    ------
    InputError
        When the file is not a zip, a member name is absolute or contains ``..``, a symbolic
        link points outside ``dest``, or the archive exceeds ``max_members`` members or
        ``max_total_size`` uncompressed bytes. Nothing is written for a refused archive,
        except when the size limit is only discovered while writing (then ``dest`` may hold
        a partial extraction, which the caller owns).
    """
    archive, dest = Path(archive), Path(dest)
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(f"{archive}: not a readable zip file ({exc}).") from None
    with zf:
        infos = [i for i in zf.infolist() if not is_noise(i.filename)]
        if len(infos) > max_members:
            raise InputError(
                f"{archive}: {len(infos)} members, more than the limit of {max_members}; refusing "
                "to extract it."
            )
        declared = sum(i.file_size for i in infos)
        if declared > max_total_size:
            raise InputError(
                f"{archive}: {declared} bytes uncompressed, more than the limit of "
                f"{max_total_size}; refusing to extract it."
            )
        for info in infos:
            _check_member_name(archive, info.filename)
        dest.mkdir(parents=True, exist_ok=True)
        root = dest.resolve()
        written = 0
        for info in infos:
            name = info.filename.replace("\\", "/")
            target = root / name
            if not target.parent.resolve().is_relative_to(root):
                raise InputError(f"{archive}: member {name!r} would be written outside {dest}.")
            if stat.S_ISLNK(info.external_attr >> 16):
                link = zf.read(info).decode("utf-8", "replace")
                if os.path.isabs(link) or not (target.parent / link).resolve().is_relative_to(root):
                    raise InputError(
                        f"{archive}: symbolic link {name!r} -> {link!r} points outside the archive."
                    )
                target.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(link, target)
                continue
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as out:
                while chunk := src.read(_CHUNK):
                    written += len(chunk)
                    if written > max_total_size:
                        raise InputError(
                            f"{archive}: more than {max_total_size} bytes once uncompressed (the "
                            "declared sizes are wrong); extraction stopped."
                        )
                    out.write(chunk)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(target, mode | stat.S_IRUSR | stat.S_IWUSR)
    return [i.filename for i in infos]


def _check_member_name(archive: Path, name: str) -> None:
    clean = name.replace("\\", "/")
    parts = PurePosixPath(clean).parts
    if clean.startswith("/") or (len(clean) > 1 and clean[1] == ":") or ".." in parts:
        raise InputError(
            f"{archive}: member {name!r} has an absolute path or '..'; refusing to extract it."
        )


def as_folder(path: Path, cache: Path) -> Path:
    """A folder with the contents of ``path``: ``path`` itself, or the zip extracted once into
    ``cache`` (several threads may ask for the same zip; it is extracted once)."""
    if path.is_dir():
        return path
    with _EXTRACT_LOCK:
        if not cache.exists():
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".extract-", dir=cache.parent))
            safe_extract(path, tmp)
            os.replace(tmp, cache)
    return cache


def zip_directory(src: str | os.PathLike[str], dest_zip: str | os.PathLike[str]) -> Path:
    """Zip the contents of ``src`` with its files at the archive root (not under ``src/``).

    Caches (``__pycache__``, ``*.pyc``), VCS folders and macOS noise are left out; members are
    written in sorted order. The zip is written to a temporary name, then renamed.
    """
    src, dest_zip = Path(src), Path(dest_zip)
    if not src.is_dir():
        raise InputError(f"{src}: not a directory; cannot zip it.")
    dest_zip.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest_zip.with_name(dest_zip.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for dirpath, dirnames, filenames in os.walk(src):
            dirnames[:] = sorted(d for d in dirnames if not is_excluded(Path(d)))
            for fname in sorted(filenames):
                path = Path(dirpath) / fname
                if not is_excluded(path):
                    zf.write(path, path.relative_to(src).as_posix())
    os.replace(tmp, dest_zip)
    return dest_zip


# ---------------------------------------------------------------------- bundle zip
def build_bundle_zip(
    bundle: str | os.PathLike[str],
    dest_zip: str | os.PathLike[str],
    *,
    scoring_program: str | os.PathLike[str] | None = None,
    log: Callable[[str], None] = lambda _: None,
) -> Path:
    """Zip a bundle directory into an uploadable Codabench bundle.

    ``competition.yaml`` goes at the zip root, rewritten so that every directory it
    references (programs, data, starting kits, solutions) points to ``<dir>.zip``, a zip
    of that directory with its files at the root. Referenced files (pages, logo, terms,
    existing zips) are copied as they are. A ``meta_scoring_program/`` that is absent or
    holds only a README is filled by :func:`assemble_meta_program` first. The bundle must
    pass :func:`~metascore.bundle.schema.check_bundle` without errors.
    """
    bundle, dest_zip = Path(bundle), Path(dest_zip)
    if not bundle.is_dir():
        raise InputError(f"{bundle}: not a bundle directory (zip a folder holding competition.yaml).")
    report = check_bundle(bundle, meta_program_available=True)
    if report.errors:
        raise ConfigError(
            f"{bundle}: the bundle has {len(report.errors)} error(s); the first is: "
            f"{report.errors[0]} (run `metascore bundle check {bundle}`)."
        )
    data = read_yaml(bundle / "competition.yaml", on_duplicate=lambda _: None)  # warned by the check
    with tempfile.TemporaryDirectory(prefix="metascore-bundle-") as tmp:
        stage = Path(tmp) / "bundle"
        stage.mkdir()
        zipped: dict[str, str] = {}
        for ref in path_references(data):
            if ref in zipped:
                continue
            rel = ref.rstrip("/")
            src = bundle / rel
            if needs_meta_program(src):
                log(f"[*] {rel}: filled with the meta-scoring program and a vendored metascore")
                src = assemble_meta_program(Path(tmp) / "meta" / Path(rel).name, scoring_program)
            if src.is_dir():
                zip_directory(src, stage / f"{rel}.zip")
                zipped[ref] = f"{rel}.zip"
            elif src.is_file():
                (stage / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, stage / rel)
                zipped[ref] = rel
        _rewrite_references(data, zipped)
        header = f"# Generated by `metascore bundle zip` from {bundle.name}/; edit the source bundle.\n"
        (stage / "competition.yaml").write_text(
            header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8"
        )
        dest_zip.parent.mkdir(parents=True, exist_ok=True)
        zip_directory(stage, dest_zip)
    return dest_zip


def _rewrite_references(data: object, mapping: dict[str, str]) -> object:
    """Replace, anywhere in the parsed yaml, a string equal to a zipped reference."""
    if isinstance(data, dict):
        for key, value in data.items():
            data[key] = _rewrite_references(value, mapping)
    elif isinstance(data, list):
        data[:] = [_rewrite_references(item, mapping) for item in data]
    elif isinstance(data, str):
        return mapping.get(data, data)
    return data
