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

A file is read within bounds far above any real one (a real ``competition.yaml`` is a few KB
to a few hundred KB, a few thousand nodes), checked before it costs anything:
:data:`MAX_YAML_BYTES` before a byte is read, then :data:`MAX_YAML_NODES` (aliases expanded:
a kilobyte of aliases names gigabytes of nodes) and :data:`MAX_YAML_DEPTH` levels on the
parser's events before it is loaded (with libyaml's parser where PyYAML has it: about 40
times faster than loading). A bundle from elsewhere or a downloaded configuration is then
refused in a second or so with one line naming the file and the bound, where a 26 MB
``competition.yaml`` took minutes and gigabytes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError, short_text

__all__ = ["load_yaml", "read_yaml", "load_plain_yaml", "check_yaml_size", "too_large", "MAX_YAML_DEPTH",
           "MAX_YAML_BYTES", "MAX_YAML_NODES"]


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
    return f"{source}: key {short_text(key)} appears twice ({lines})"


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
    """Read and parse a UTF-8 YAML file (see :func:`load_yaml`) within the bounds of
    :func:`check_yaml_size`; ``source`` defaults to the file's name."""
    path = Path(path)
    name = source or path.name
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO does not block
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{name}: not a regular file.")
        data = handle.read(MAX_YAML_BYTES + 1) if info.st_size <= MAX_YAML_BYTES else b""
    if info.st_size > MAX_YAML_BYTES or len(data) > MAX_YAML_BYTES:
        raise ConfigError(too_large(name, max(info.st_size, len(data))))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{name}: not a UTF-8 text file.") from None
    check_yaml_size(text, name)
    return load_yaml(text, name, on_duplicate)


#: The largest YAML file :func:`read_yaml` reads, in bytes (4 MiB) ...
MAX_YAML_BYTES = 4 << 20
#: ... and the most nodes it may hold, aliases expanded.
MAX_YAML_NODES = 200_000


def too_large(name: str, size: int) -> str:
    """The message for a YAML file of ``size`` bytes over :data:`MAX_YAML_BYTES`."""
    return (f"{name}: {size:,} bytes, more than the {MAX_YAML_BYTES >> 20} MiB a YAML file read by "
            "metascore may have (real ones have a few KB); nothing of it was parsed.")


def check_yaml_size(text: str, source: str, max_nodes: int = MAX_YAML_NODES) -> None:
    """Raise :class:`ConfigError` when the YAML ``text`` holds more than ``max_nodes`` nodes
    (each alias counted as the nodes it names) or nests deeper than :data:`MAX_YAML_DEPTH`,
    on the parser's events, before anything is built. A text the parser refuses is left to
    the loader, which says why."""
    fast = getattr(yaml, "CSafeLoader", None)
    for loader in ([fast] if fast is not None else []) + [yaml.SafeLoader]:
        try:
            _count_nodes(yaml.parse(text, Loader=loader), source, max_nodes)
            return
        except yaml.YAMLError:  # libyaml may refuse what PyYAML reads: PyYAML decides
            continue


def _count_nodes(events: Iterable[yaml.Event], source: str, max_nodes: int) -> None:
    sizes: dict[str, int] = {}  # anchor -> nodes it names
    open_nodes: list[list] = []  # per open collection: [nodes so far, anchor]
    total = 0
    for event in events:
        if isinstance(event, yaml.CollectionEndEvent):
            size, anchor = open_nodes.pop()
            if anchor is not None:
                sizes[anchor] = size
            if open_nodes:
                open_nodes[-1][0] += size
            continue
        if isinstance(event, yaml.AliasEvent):
            size = sizes.get(event.anchor, 1)
        elif isinstance(event, (yaml.ScalarEvent, yaml.CollectionStartEvent)):
            size = 1
            if isinstance(event, yaml.ScalarEvent) and event.anchor is not None:
                sizes[event.anchor] = 1
        else:
            continue
        total += size
        if total > max_nodes:
            raise ConfigError(f"{source}: more than {max_nodes:,} YAML nodes (aliases expanded) by line "
                              f"{event.start_mark.line + 1}, more than a YAML file read by metascore may "
                              "hold (real ones hold a few thousand); nothing was loaded.")
        if isinstance(event, yaml.CollectionStartEvent):
            open_nodes.append([1, event.anchor])
            if len(open_nodes) > MAX_YAML_DEPTH:
                raise ConfigError(f"{source}: nested more than {MAX_YAML_DEPTH} levels deep (line "
                                  f"{event.start_mark.line + 1}); nothing was loaded.")
        elif open_nodes:
            open_nodes[-1][0] += size


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
