"""A bundle's ``meta_scoring_program/`` folder filled with metascore's own meta-scoring
program (the pipeline it runs is :mod:`metascore.program`).

A task whose ``scoring_program`` is the placeholder (a folder named ``meta_scoring_program``
that is absent or holds only README files:
:func:`~metascore.bundle.platform.meta_program.needs_meta_program`) is filled by
:func:`assemble_meta_program`: the repository's ``scoring_program/`` plus a vendored copy
of the ``metascore`` package next to ``score.py``, and, with ``--meta-python bundled`` (the
default), the program's own Python in ``runtime/`` and a ``metadata.yaml`` whose command runs
it (:mod:`metascore.bundle.runtime.store`): then it runs in any Linux x86_64 image with glibc >=
2.17; with ``image``, the image's ``python3`` runs it. The schema checks accept such a
folder, and ``bundle run`` / ``bundle zip`` fill it;
:func:`~metascore.bundle.platform.meta_program.meta_python_of` tells which way an assembled
program runs.

The filled program also carries the organizer's public key (``organizer_key.pub``, from the key
on this machine, :mod:`metascore.signature`) and python-ecdsa with ``six`` (pure Python) next to
the vendored package: it ranks only a results export signed with that key.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

import yaml

from ...errors import ConfigError
from ..files import METADATA_FILES, copy_clean, write_text
from ..platform.meta_program import RUNTIME_DIR, default_scoring_program, meta_python_in
from ..trees import drop_shared_write, make_folders
from ...signature import PUBLIC_KEY_NAME, OrganizerKey, organizer_key, public_key_text
from ..runtime.store import bundled_command, require_runtime

__all__ = ["assemble_meta_program"]


def assemble_meta_program(
    dest: str | os.PathLike[str], source: str | os.PathLike[str] | None = None, *,
    python: str | None = None, with_runtime: bool = True, log: Callable[[str], None] = lambda _: None,
    key: OrganizerKey | None = None,
) -> Path:
    """Write the meta-scoring program into ``dest``: ``source`` (default: the repository's
    ``scoring_program/``) plus the ``metascore`` package copied next to ``score.py``.

    ``key``: the organizer's key whose public half the program carries (default: the key on
    this machine, :func:`~metascore.signature.organizer_key`, made on first use).
    ``python``: ``"bundled"`` (default: ``$METASCORE_META_PYTHON``, else bundled) also
    writes the command that runs the program's own Python and, unless ``with_runtime`` is
    false (a zip adds the cached ``runtime.zip`` instead), copies that Python into
    ``runtime/``, built first if the cache has none; ``"image"`` keeps the command that runs
    the image's ``python3``. Nothing in ``dest`` is writable by others, whatever the umask.
    """
    import metascore

    python = meta_python_in(None, python)  # auto: no image known, so bundled
    dest = Path(dest)
    source = default_scoring_program() if source is None else Path(source)
    if not (source / "score.py").is_file():
        raise ConfigError(f"{source}: not a meta-scoring program folder (no score.py in it).")
    metadata = next((source / m for m in METADATA_FILES if (source / m).is_file()), None)
    if metadata is None:
        raise ConfigError(f"{source}: no metadata.yaml; the compute worker would not run it.")
    runtime = require_runtime(log) if python == "bundled" and with_runtime else None
    key = organizer_key() if key is None else key
    if dest.exists():
        shutil.rmtree(dest)
    make_folders(dest.parent)
    copy_clean(source, dest)
    copy_clean(Path(metascore.__file__).resolve().parent, dest / "metascore")
    _vendor_signature_library(dest)
    (dest / PUBLIC_KEY_NAME).write_text(public_key_text(key.public), encoding="ascii")
    if python == "bundled":
        (dest / metadata.name).write_text(_bundled_metadata(metadata), encoding="utf-8")
        if runtime is not None:
            shutil.copytree(runtime.tree, dest / RUNTIME_DIR, ignore=shutil.ignore_patterns("__pycache__"))
            log(f"[*] {dest.name}: with its own Python ({runtime.folder}: Python "
                f"{runtime.manifest.get('python')}, for glibc >= {runtime.manifest.get('glibc')})")
    drop_shared_write(dest)  # copied and written under the umask, which may be 000
    return dest


def _vendor_signature_library(dest: Path) -> None:
    """python-ecdsa (its tests left out) and ``six`` next to ``score.py``, with their MIT
    licences, for the signature check in an image whose Python has neither (both are pure
    Python)."""
    import importlib.metadata

    import ecdsa
    import six

    package = Path(ecdsa.__file__).resolve().parent
    shutil.copytree(package, dest / "ecdsa", ignore=lambda d, names: [
        n for n in names if n.startswith("test_") or n == "__pycache__" or n.endswith((".pyc", ".pyo"))])
    shutil.copy2(Path(six.__file__).resolve(), dest / "six.py")
    for name in ("ecdsa", "six"):
        dist = importlib.metadata.distribution(name)
        licence = next((f for f in dist.files or () if "LICEN" in f.name.upper()), None)
        if licence is not None:
            write_text(dest / "LICENSES" / f"{name}.txt", licence.read_text(encoding="utf-8"))


def _bundled_metadata(path: Path) -> str:
    """The program's metadata with its ``python``/``python3`` command run by the bundled
    Python instead (the same script and arguments)."""
    try:
        meta = yaml.safe_load(path.read_text(encoding="utf-8"))
        tokens = shlex.split(meta["command"])
    except (yaml.YAMLError, TypeError, KeyError, ValueError, AttributeError):
        raise ConfigError(f"{path}: no readable `command:` string.") from None
    if not tokens or Path(tokens[0]).name not in ("python", "python3") or len(tokens) < 2:
        raise ConfigError(f"{path}: command {meta['command']!r} does not run `python3 SCRIPT ...`, "
                          "so the bundled Python cannot replace its interpreter; use --meta-python image.")
    script = tokens[1] if tokens[1].startswith("/") else f"/app/program/{tokens[1]}"
    ours = shlex.split(bundled_command())
    meta["command"] = shlex.join(ours[:ours.index("/app/program/score.py")] + [script, *tokens[2:]])
    return ("# Codabench runs this string as-is (no shell) with working directory /app/program.\n"
            "# The program carries its own Python (runtime/, for any Linux x86_64 image with\n"
            "# glibc >= 2.17); the image's loader runs it, since the worker's unzip keeps no x bits.\n"
            + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=200))
