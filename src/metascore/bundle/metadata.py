"""A program's metadata file: ``metadata.yaml`` (preferred) or ``metadata`` at its root.

:func:`read_metadata` reads it from a program folder or zip as the compute worker does
(PyYAML: a key written twice keeps its last value). The runner, the site and the checks
(:mod:`~metascore.bundle.program_checks`) share it.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..readers.yaml_loader import load_yaml
from .files import METADATA_FILES

__all__ = ["read_metadata"]


def read_metadata(program: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The parsed ``metadata.yaml`` (preferred) or ``metadata`` of a program folder or zip.

    Returns ``(metadata, file name)``, or ``(None, None)`` when there is none. Raises
    :class:`ConfigError` when it is not a YAML mapping.
    """
    for name in METADATA_FILES:
        text = _member_text(program, name)
        if text is None:
            continue
        # the worker reads it with yaml.load: a duplicate key keeps its last value there too
        meta = load_yaml(text, f"{program}/{name}", on_duplicate=lambda _: None)
        if meta is None:
            meta = {}
        if not isinstance(meta, dict):
            raise ConfigError(f"{program}/{name}: expected a mapping such as 'command: ...'.")
        return meta, name
    return None, None


def _member_text(program: Path, name: str) -> str | None:
    if program.is_dir():
        path = program / name
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
    if zipfile.is_zipfile(program):
        with zipfile.ZipFile(program) as zf:
            try:
                return zf.read(name).decode("utf-8", "replace")
            except KeyError:
                return None
    return None
