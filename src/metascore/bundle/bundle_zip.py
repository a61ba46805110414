"""``metascore bundle zip``: a bundle folder zipped for upload, as Codabench's unpacker reads it.

:func:`build_bundle_zip` puts ``competition.yaml`` at the root of the bundle zip, rewritten so
that every folder it references (programs, data, starting kits, solutions) points to
``<folder>.zip``, a zip of that folder with its files at the root
(:func:`~metascore.bundle.archive.zip_directory`); a ``meta_scoring_program/`` placeholder is
filled with the meta-scoring program first (:mod:`metascore.bundle.meta.program_folder`, its
own Python from :mod:`metascore.bundle.meta.runtime`), the reference data of each meta task
gets a new competition token (:mod:`metascore.export_binding`), and the phase dates can be moved
(:func:`~metascore.bundle.schema.phase_dates.shift_dates`). A link that leaves the bundle is
refused before anything is read; a link inside it is stored as what it names
(:mod:`~metascore.bundle.links`); a file whose data is shared with a file outside the bundle
(a hard link) is refused unless the organizer allows it. The zip is writable by its user
alone, whatever the umask.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import yaml

from ..errors import ConfigError, InputError
from ..readers.yaml_loader import read_yaml
from ..export_binding import COMPETITION_FILE, new_token, token_text
from .archive import open_regular, safe_extract, zip_directory
from .links import bundle_files, hard_links
from .meta.program_folder import assemble_meta_program
from .meta.runtime import require_runtime, runtime_zip
from .platform.meta_program import is_meta_reference, meta_python_in, needs_meta_program
from .schema.competition import Competition, bundle_path
from .schema.load import check_schema, path_references, referenced_paths
from .schema.phase_dates import command_line_end, shift_dates
from .trees import COPY_CHUNK, make_folders

__all__ = ["build_bundle_zip"]


def build_bundle_zip(
    bundle: str | os.PathLike[str],
    dest_zip: str | os.PathLike[str],
    *,
    scoring_program: str | os.PathLike[str] | None = None,
    start: dt.date | None = None,
    log: Callable[[str], None] = lambda _: None,
    meta_python: str | None = None,
    allow_hardlinks: bool = False,
    compression: str = "lzma",
) -> Path:
    """Zip a bundle directory into an uploadable Codabench bundle.

    ``competition.yaml`` goes at the zip root, rewritten so that every directory it
    references (programs, data, starting kits, solutions) points to ``<dir>.zip``, a zip
    of that directory with its files at the root. Referenced files (pages, logo, terms,
    existing zips) are copied as they are. A ``meta_scoring_program/`` that is absent or
    holds only a README is filled by :func:`assemble_meta_program` first, with its own Python
    unless ``meta_python`` is ``"image"`` (:mod:`metascore.bundle.meta.runtime`). ``start``: every
    phase date is moved by the same number of days so that the first phase starts that day
    (:func:`~metascore.bundle.schema.phase_dates.shift_dates`; the folder is not changed). The
    bundle must pass :func:`~metascore.bundle.schema.load.check_schema` without errors, and
    hold no file whose data is shared with a file outside it
    (:func:`~metascore.bundle.links.hard_links`) unless ``allow_hardlinks``.
    ``compression``: how the own Python's members are compressed (``"lzma"`` or ``"deflate"``,
    :func:`~metascore.bundle.meta.runtime.runtime_zip`).
    """
    bundle, dest_zip = Path(bundle), Path(dest_zip)
    if not bundle.is_dir():
        raise InputError(f"{bundle}: not a bundle directory (zip a folder holding competition.yaml).")
    report = check_schema(bundle, meta_program_available=True)
    if report.errors:
        raise ConfigError(
            f"{bundle}: the bundle has {len(report.errors)} error(s); the first is: "
            f"{report.errors[0]} (run `metascore bundle check {bundle}`)."
        )
    data = read_yaml(bundle / "competition.yaml", on_duplicate=lambda _: None)  # warned by the check
    for shared in hard_links(referenced_paths(bundle, data), bundle):
        if not allow_hardlinks:
            raise InputError(f"{bundle}: {str(shared).rstrip('.')}; no zip written.")
        log(f"[*] {shared.path}: packed though it shares its data with a file outside the bundle "
            f"({shared.names} names, {shared.inside} in the bundle): --allow-hardlinks")
    if start is not None and report.competition is not None:
        text = (bundle / "competition.yaml").read_text(encoding="utf-8", errors="replace")
        for line in shift_dates(data, report.competition, start, keep_end=command_line_end(text)):
            log(f"[*] {line}")
    with tempfile.TemporaryDirectory(prefix="metascore-bundle-") as tmp:
        stage = Path(tmp) / "bundle"
        stage.mkdir()
        zipped: dict[str, str] = {}
        tokens = _meta_references(bundle, report.competition)
        for ref, token in tokens.items():
            log(f"[*] {ref.rstrip('/')}: with a new competition token ({COMPETITION_FILE}: the meta "
                f"phase ranks only an export signed for it, {token[:8]}...)")
        for ref in path_references(data):
            if ref in zipped:
                continue
            rel = ref.rstrip("/")
            src = bundle_path(bundle, rel)  # X.zip may be the folder X/ (a CodaLab repository)
            base, own = None, bundle  # own: the folder src's links may lead into
            if needs_meta_program(src):
                image = report.competition.docker_image if report.competition else None
                python = meta_python_in(image, meta_python)
                log(f"[*] {rel}: filled with the meta-scoring program and a vendored metascore"
                    + (", with its own Python" if python == "bundled" else ", run by the image's python3"))
                src = assemble_meta_program(Path(tmp) / "meta" / Path(rel).name, scoring_program,
                                            python=python, with_runtime=False)
                base = runtime_zip(require_runtime(log), compression, log) if python == "bundled" else None
                own = src
            extra = None
            if ref in tokens:
                title = report.competition.title if report.competition else None
                extra = {COMPETITION_FILE: token_text(tokens[ref], title).encode("utf-8")}
                if src.is_file():  # a zip already: its members, then the token
                    src = _extracted(src, Path(tmp) / "meta_reference" / Path(rel).name)
            if src.is_dir():
                name = rel if rel.lower().endswith(".zip") else f"{rel}.zip"
                if name == rel:
                    log(f"[*] {rel}: zipped from the folder {src.name}/")
                zip_directory(src, stage / name, base=base, bundle=own, extra=extra)
                zipped[ref] = name
            elif src.is_file():  # a link inside the bundle: the file it names
                make_folders((stage / rel).parent)
                with open_regular(bundle_files(src, bundle)[0][1]) as part, open(stage / rel, "xb") as out:
                    shutil.copyfileobj(part, out, COPY_CHUNK)
                zipped[ref] = rel
        _rewrite_references(data, zipped)
        header = f"# Generated by `metascore bundle zip` from {bundle.name}/; edit the source bundle.\n"
        (stage / "competition.yaml").write_text(
            header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8"
        )
        zip_directory(stage, dest_zip)
    return dest_zip


def _meta_references(bundle: Path, comp: Competition | None) -> dict[str, str]:
    """A new competition token for the reference data of each meta task (it holds
    ``metascore.yaml``): one per zip, hence
    one per competition made from it (:mod:`metascore.export_binding`)."""
    if comp is None:
        return {}
    refs = [t.reference_data for t in comp.tasks.values()
            if t.reference_data and is_meta_reference(bundle_path(bundle, t.reference_data.rstrip("/")))]
    return {ref: new_token() for ref in dict.fromkeys(refs)}


def _extracted(archive: Path, dest: Path) -> Path:
    safe_extract(archive, dest, links=False)
    return dest


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
