"""A program's metadata file: ``metadata.yaml`` (preferred) or ``metadata`` at its root.

:func:`read_metadata` reads it from a program folder or zip as the compute worker does
(PyYAML: a key written twice keeps its last value). The runner, the site and the checks
(:mod:`~metascore.bundle.schema.program_checks`) share it. A participant writes it: it is read
only up to :data:`MAX_METADATA_SIZE` and parsed without aliases or deep nesting
(:func:`~metascore.readers.yaml_loader.load_plain_yaml`), so that no metadata file costs the
runner more than its size; every problem is one :class:`~metascore.errors.ConfigError`.
"""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from ...readers.yaml_loader import load_plain_yaml
from ..files import METADATA_FILES

__all__ = ["read_metadata", "MAX_METADATA_SIZE"]

#: The largest metadata file read (a real one is a few lines).
MAX_METADATA_SIZE = 64 * 1024


def read_metadata(program: Path, shown: str | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """The parsed ``metadata.yaml`` (preferred) or ``metadata`` of a program folder or zip.

    Returns ``(metadata, file name)``, or ``(None, None)`` when there is none. Raises
    :class:`ConfigError` (naming the file as ``<shown><name>``, ``shown`` by default the
    program's path and a ``/``) when it is not a YAML mapping, or larger than :data:`MAX_METADATA_SIZE`, or uses
    aliases or deep nesting.
    """
    for name in METADATA_FILES:
        data = _member_bytes(program, name)
        if data is None:
            continue
        where = f"{shown or f'{program}/'}{name}"
        if len(data) > MAX_METADATA_SIZE:
            raise ConfigError(f"{where}: larger than {MAX_METADATA_SIZE // 1024} KiB; a metadata file holds "
                              "a 'command' and a few keys.")
        # the worker reads it with yaml.load: a duplicate key keeps its last value there too
        meta = load_plain_yaml(data.decode("utf-8", "replace"), where, on_duplicate=lambda _: None)
        if meta is None:
            meta = {}
        if not isinstance(meta, dict):
            raise ConfigError(f"{where}: expected a mapping such as 'command: ...'.")
        return meta, name
    return None, None


def _member_bytes(program: Path, name: str) -> bytes | None:
    """At most one byte more than :data:`MAX_METADATA_SIZE` of the file ``name`` of a folder
    or zip (``None``: no such regular file)."""
    if program.is_dir():
        path, root = program / name, os.path.realpath(program)
        if os.path.islink(path) and not os.path.realpath(path).startswith(root + os.sep):
            raise ConfigError(f"{path}: a link to a file outside the program; the runner does not "
                              "read it.")
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as handle:
            return handle.read(MAX_METADATA_SIZE + 1) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    if zipfile.is_zipfile(program):
        try:
            with zipfile.ZipFile(program) as zf, zf.open(name) as member:
                return member.read(MAX_METADATA_SIZE + 1)
        except KeyError:
            return None
        except (zipfile.BadZipFile, UnicodeDecodeError, OSError, RuntimeError, EOFError) as exc:
            raise ConfigError(f"{program}: not a readable zip file ({str(exc)[:120]}).") from None
    return None
