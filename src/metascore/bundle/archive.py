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

The meta-scoring program of a bundle (a task's ``scoring_program: meta_scoring_program/``)
is assembled by :func:`assemble_meta_program` from the repository's ``scoring_program/``
plus a vendored copy of the ``metascore`` package next to ``score.py``, so it runs in a
stock image (e.g. ``codalab/codalab-legacy:py312``) that does not have metascore installed.
"""

from __future__ import annotations

import os
import shutil
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from ..errors import ConfigError, InputError

__all__ = [
    "MAX_MEMBERS",
    "MAX_TOTAL_SIZE",
    "META_PROGRAM_NAME",
    "is_noise",
    "safe_extract",
    "zip_directory",
    "default_scoring_program",
    "needs_meta_program",
    "assemble_meta_program",
    "build_bundle_zip",
]

#: Default limits of :func:`safe_extract`: 20,000 members, 4 GiB uncompressed.
MAX_MEMBERS = 20_000
MAX_TOTAL_SIZE = 4 * 1024**3
#: The directory name that marks a task's scoring program as metascore's meta-scoring program.
META_PROGRAM_NAME = "meta_scoring_program"
#: Never put into a zip: caches, VCS data and OS noise.
_EXCLUDED_NAMES = {"__pycache__", ".git", ".hg", ".svn", ".pytest_cache", ".mypy_cache", ".DS_Store"}
_CHUNK = 1 << 20


def is_noise(name: str) -> bool:
    """True for macOS zip noise: ``__MACOSX/...``, ``.DS_Store`` and ``._*`` files."""
    parts = PurePosixPath(name.replace("\\", "/")).parts
    return bool(parts) and (
        parts[0] == "__MACOSX" or parts[-1] == ".DS_Store" or parts[-1].startswith("._")
    )


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


def _excluded(path: Path) -> bool:
    return path.name in _EXCLUDED_NAMES or path.suffix in (".pyc", ".pyo") or is_noise(path.name)


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
            dirnames[:] = sorted(d for d in dirnames if not _excluded(Path(d)))
            for fname in sorted(filenames):
                path = Path(dirpath) / fname
                if not _excluded(path):
                    zf.write(path, path.relative_to(src).as_posix())
    os.replace(tmp, dest_zip)
    return dest_zip


def _copytree(src: Path, dest: Path) -> None:
    shutil.copytree(
        src, dest, dirs_exist_ok=True,
        ignore=lambda d, names: [n for n in names if _excluded(Path(d) / n)],
    )


# ---------------------------------------------------------------- meta-scoring program
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
    if not any((source / m).is_file() for m in ("metadata.yaml", "metadata")):
        raise ConfigError(f"{source}: no metadata.yaml; the compute worker would not run it.")
    if dest.exists():
        shutil.rmtree(dest)
    _copytree(source, dest)
    _copytree(Path(metascore.__file__).resolve().parent, dest / "metascore")
    return dest


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
    import tempfile

    import yaml

    from .schema import check_bundle, path_references

    bundle, dest_zip = Path(bundle), Path(dest_zip)
    if not bundle.is_dir():
        raise InputError(f"{bundle}: not a bundle directory (zip a folder holding competition.yaml).")
    report = check_bundle(bundle, meta_program_available=True)
    if report.errors:
        raise ConfigError(
            f"{bundle}: the bundle has {len(report.errors)} error(s); the first is: "
            f"{report.errors[0]} (run `metascore bundle check {bundle}`)."
        )
    data = yaml.safe_load((bundle / "competition.yaml").read_text(encoding="utf-8"))
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
