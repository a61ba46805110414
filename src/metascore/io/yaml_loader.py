"""The one YAML loader of metascore: ``metascore.yaml``, ``competition.yaml``, metadata and
submission manifests are all read here.

It is ``yaml.safe_load`` (no Python objects) that also refuses a key written twice in one
mapping, which plain YAML loaders silently resolve to the last value: two ``ranking:``
sections, or ``weight`` twice in a judge, are an error naming both lines. Every problem is
a :class:`~metascore.errors.ConfigError` naming the file and the line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError

__all__ = ["load_yaml", "read_yaml"]


class _UniqueKeyLoader(yaml.SafeLoader):
    """``SafeLoader`` that refuses duplicate keys in a mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *anchor` merges; its keys may be overridden on purpose
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                if key in seen:
                    raise _Duplicate(key, seen[key], line)
                seen[key] = line
            except TypeError:  # an unhashable key: the base class reports it
                break
        return super().construct_mapping(node, deep=deep)


class _Duplicate(Exception):
    def __init__(self, key: Any, first: int, second: int) -> None:
        super().__init__(key, first, second)
        self.key, self.first, self.second = key, first, second


def load_yaml(text: str, source: str) -> Any:
    """Parse YAML ``text`` safely; ``source`` names the file in error messages."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader)
    except _Duplicate as dup:
        lines = f"lines {dup.first} and {dup.second}" if dup.first != dup.second \
            else f"line {dup.first}"
        raise ConfigError(
            f"{source}: key {dup.key!r} appears twice ({lines}); keep one."
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{source}: not valid YAML{where} ({problem}).") from None


def read_yaml(path: str | Path, source: str | None = None) -> Any:
    """Read and parse a UTF-8 YAML file (see :func:`load_yaml`); ``source`` defaults to
    the file's name."""
    path = Path(path)
    name = source or path.name
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{name}: not a UTF-8 text file.") from None
    return load_yaml(text, name)
