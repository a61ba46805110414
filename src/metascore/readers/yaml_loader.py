"""The one YAML loader of metascore: ``metascore.yaml``, ``competition.yaml``, metadata and
submission manifests are all read here.

It is ``yaml.safe_load`` (no Python objects) that also refuses a key written twice in one
mapping, which plain YAML loaders silently resolve to the last value: two ``ranking:``
sections, or ``weight`` twice in a judge, are an error naming both lines. Every problem is
a :class:`~metascore.errors.ConfigError` naming the file and the line.

Files the platform reads itself (``competition.yaml``, program ``metadata``) must load as
Codabench loads them, where the last value wins (real bundles have such keys, e.g. two
``solutions:`` in Codabench's own mini-automl example): their callers pass
``on_duplicate`` to hear of each duplicate (a warning) instead of an error.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError

__all__ = ["load_yaml", "read_yaml", "load_plain_yaml", "MAX_YAML_DEPTH"]


class _UniqueKeyLoader(yaml.SafeLoader):
    """``SafeLoader`` that refuses duplicate keys in a mapping (or reports them to
    ``on_duplicate`` and keeps the last value)."""

    on_duplicate: Callable[[Any, int, int], None] | None = None

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *anchor` merges; its keys may be overridden on purpose
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                if key in seen:
                    if self.on_duplicate is None:
                        raise _Duplicate(key, seen[key], line)
                    self.on_duplicate(key, seen[key], line)
                seen[key] = line
            except TypeError:  # an unhashable key: the base class reports it
                break
        return super().construct_mapping(node, deep=deep)


class _Duplicate(Exception):
    def __init__(self, key: Any, first: int, second: int) -> None:
        super().__init__(key, first, second)
        self.key, self.first, self.second = key, first, second


def _duplicate_message(source: str, key: Any, first: int, second: int) -> str:
    lines = f"lines {first} and {second}" if first != second else f"line {first}"
    return f"{source}: key {_short(key)} appears twice ({lines})"


def _short(value: Any, size: int = 80) -> str:
    """``repr(value)``, cut to about ``size`` characters."""
    text = repr(value)
    return text if len(text) <= size else text[:size] + "..."


def load_yaml(text: str, source: str, on_duplicate: Callable[[str], None] | None = None) -> Any:
    """Parse YAML ``text`` safely; ``source`` names the file in error messages.

    A key written twice in one mapping is an error, unless ``on_duplicate`` is given: it is
    then called with a message naming both lines, and the last value wins (as in
    ``yaml.safe_load``).
    """
    loader = _UniqueKeyLoader(text)
    if on_duplicate is not None:
        loader.on_duplicate = lambda key, first, second: on_duplicate(
            _duplicate_message(source, key, first, second) + "; the last one is used.")
    try:
        return loader.get_single_data()
    except _Duplicate as dup:
        raise ConfigError(_duplicate_message(source, dup.key, dup.first, dup.second) + "; keep one.") from None
    except yaml.YAMLError as exc:
        raise _invalid(source, exc) from None
    finally:
        loader.dispose()


def _invalid(source: str, exc: yaml.YAMLError) -> ConfigError:
    """``<source>: not valid YAML at line N (<the parser's problem>).``"""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}" if mark is not None else ""
    problem = str(getattr(exc, "problem", None) or str(exc).splitlines()[0])[:200]
    return ConfigError(f"{source}: not valid YAML{where} ({problem}).")


def read_yaml(path: str | Path, source: str | None = None,
              on_duplicate: Callable[[str], None] | None = None) -> Any:
    """Read and parse a UTF-8 YAML file (see :func:`load_yaml`); ``source`` defaults to
    the file's name."""
    path = Path(path)
    name = source or path.name
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{name}: not a UTF-8 text file.") from None
    return load_yaml(text, name, on_duplicate)


#: How deep :func:`load_plain_yaml` lets a document nest.
MAX_YAML_DEPTH = 100


def load_plain_yaml(text: str, source: str, on_duplicate: Callable[[str], None] | None = None,
                    max_depth: int = MAX_YAML_DEPTH) -> Any:
    """Parse YAML that someone else wrote and a machine reads (a program's ``metadata``, a
    job's ``scores.txt``) as :func:`load_yaml` does, refusing first, on the parser's events
    (read without recursion), what would cost far more than the text: an alias (a
    kilobyte of aliases expands to gigabytes: "billion laughs") and nesting deeper than
    ``max_depth`` levels (the loader recurses once per level). The messages quote nothing
    of the document.
    """
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                raise ConfigError(f"{source}: uses a YAML alias (*{str(event.anchor)[:40]}) at line "
                                  f"{event.start_mark.line + 1}; write the values out instead (aliases "
                                  "can expand a small file into gigabytes).")
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > max_depth:
                    raise ConfigError(f"{source}: nested more than {max_depth} levels deep (line "
                                      f"{event.start_mark.line + 1}); a flat 'key: value' file is expected.")
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError as exc:
        raise _invalid(source, exc) from None
    try:
        return load_yaml(text, source, on_duplicate)
    except ConfigError:
        raise
    except ValueError as exc:  # int() refuses a number of more than 4,300 digits
        raise ConfigError(f"{source}: holds a value that cannot be read ({str(exc)[:80]}).") from None
