"""What the v2 and v1 schema rules share: where messages go, and the typed readers.

A :class:`SchemaChecker` records errors and warnings into a
:class:`~metascore.bundle.schema.competition.BundleReport`, every message prefixed by
``competition.yaml:`` and the key path. Its readers check one key each and return a default
after recording the problem, so that one pass reports every problem: :meth:`~SchemaChecker.get`
(type), :meth:`~SchemaChecker.choice` (allowed values, with a "did you mean"),
:meth:`~SchemaChecker.unknown_keys`, :meth:`~SchemaChecker.mappings` (the mappings of a
list), :meth:`~SchemaChecker.path` (a file or folder inside
the bundle), :meth:`~SchemaChecker.date` and :meth:`~SchemaChecker.check_columns` (unique
keys and indexes, computed columns over existing ones).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from ...errors import did_you_mean
from .competition import UUID_PATTERN, BundleReport, bundle_path
from ...readers.columns import Column
from ..platform.meta_program import needs_meta_program
from .phase_dates import site_datetime, time_dropped_message

__all__ = ["SchemaChecker"]


class SchemaChecker:
    """Records problems of one ``competition.yaml`` into ``report``.

    ``meta_program_available``: a ``meta_scoring_program/`` folder that is absent or holds
    only a README is accepted (``bundle run`` / ``bundle zip`` fill it). Links that leave
    the bundle are refused before this runs (:mod:`~metascore.bundle.links`).
    """

    def __init__(self, root: Path, report: BundleReport, meta_program_available: bool) -> None:
        self.root = root
        self.report = report
        self.meta_ok = meta_program_available
        #: the date keys (``phases[0].end``) whose time of day Codabench's unpacker drops
        self.dropped_times: set[str] = set()

    def error(self, where: str, msg: str) -> None:
        self.report.errors.append(f"competition.yaml: {where}: {msg}")

    def warn(self, where: str, msg: str) -> None:
        self.report.warnings.append(f"competition.yaml: {where}: {msg}")

    def note(self, where: str, msg: str) -> None:
        self.report.notes.append(f"competition.yaml: {where}: {msg}")

    # ------------------------------------------------------------ typed getters
    def get(
        self, node: dict, key: str, where: str, kind: type | tuple[type, ...], *,
        required: bool = False, default: Any = None,
    ) -> Any:
        here = f"{where}.{key}" if where else key
        if key not in node or node[key] is None:
            if required:
                self.error(here, "this key is required.")
            return default
        value = node[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if bool in kinds and isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if isinstance(value, bool) and bool not in kinds:
            ok = False
        else:
            ok = isinstance(value, kinds) or (float in kinds and isinstance(value, int))
        if not ok:
            names = " or ".join({int: "an integer", str: "a string", list: "a list",
                                 dict: "a mapping", bool: "true/false", float: "a number"}[k]
                                for k in kinds)
            self.error(here, f"expected {names}; got {value!r}.")
            return default
        return value

    def choice(self, node: dict, key: str, where: str, choices: tuple[str, ...], default: Any) -> Any:
        value = node.get(key)
        if value is None:
            return default
        if value not in choices:
            allowed = ", ".join(repr(c) for c in choices)
            self.error(
                f"{where}.{key}",
                f"{value!r} is not one of {allowed}{did_you_mean(str(value), choices)}.",
            )
            return default
        return value

    def unknown_keys(self, node: dict, known: set[str], where: str) -> None:
        for key in node:
            if key not in known:
                label = f"{where}.{key}" if where else str(key)
                self.warn(
                    label,
                    f"unknown key{did_you_mean(str(key), sorted(known))}; Codabench ignores it.",
                )

    def mappings(
        self, nodes: list, where: str, expected: str = "a mapping",
    ) -> Iterator[tuple[int, str, dict]]:
        """``(i, "where[i]", node)`` for each node of the list that is a mapping; the others
        are errors."""
        for i, node in enumerate(nodes):
            here = f"{where}[{i}]"
            if not isinstance(node, dict):
                self.error(here, f"expected {expected}; got {node!r}.")
                continue
            yield i, here, node

    def path(self, node: dict, key: str, where: str, *, required: bool = False) -> str | None:
        value = self.get(node, key, where, str, required=required)
        if value is None:
            return None
        here = f"{where}.{key}" if where else key
        if UUID_PATTERN.match(value):
            self.warn(here, f"{value!r} is the key of an existing Codabench dataset; `bundle run` "
                      f"needs its files: --data {value}=PATH.")
            return value
        clean = PurePosixPath(value.rstrip("/"))
        if clean.is_absolute() or ".." in clean.parts:
            self.error(here, f"{value!r} must be a path inside the bundle (no '/' start, no '..').")
            return None
        target = self.root / clean
        folder = bundle_path(self.root, value)
        if folder != target:
            if not self.meta_ok:  # a zip about to be uploaded: Codabench needs the zip itself
                self.error(here, f"{value!r} is not in the bundle, only the folder {folder.name + '/'!r}; "
                           "Codabench's unpacker would look it up as a dataset key and fail. Zip the "
                           "bundle folder with `metascore bundle zip`, which writes "
                           f"{value!r} from the folder.")
                return None
            self.note(here, f"{value!r} is the folder {folder.name + '/'!r} here (a CodaLab repository "
                      f"keeps folders); `bundle run` uses the folder and `metascore bundle zip` writes "
                      f"{value!r} from it.")
            target = folder
        elif not target.exists():
            if needs_meta_program(target) and (self.meta_ok or key == "scoring_program"):
                # the meta-scoring program's placeholder: ProgramChecks says what to do
                return value
            siblings = [p.name for p in target.parent.iterdir()] if target.parent.is_dir() else []
            self.error(
                here,
                f"{value!r} does not exist in the bundle{did_you_mean(clean.name, siblings)} "
                "(Codabench would look it up as a dataset key and fail).",
            )
            return None
        return value

    def date(self, node: dict, key: str, where: str, *, required: bool) -> dt.datetime | None:
        """The date of ``node[key]`` as Codabench stores it (UTC); a time of day that its
        unpacker drops is a warning (:mod:`~metascore.bundle.schema.phase_dates`)."""
        here = f"{where}.{key}" if where else key
        if node.get(key) is None:
            if required:
                self.error(here, "this key is required (every phase but the last needs an end).")
            return None
        try:
            stored, dropped = site_datetime(node[key])
        except (ValueError, OverflowError):
            self.error(here, f"{node[key]!r} is not a date (e.g. 2026-01-31 or \"2026-01-31 23:59:00\").")
            return None
        if dropped:
            self.dropped_times.add(here)
            self.warn(here, time_dropped_message(node[key], stored, key))
        return stored

    def check_columns(self, raw: list[tuple[str, Column]]) -> tuple[Column, ...]:
        seen_keys: dict[str, str] = {}
        seen_index: dict[int, str] = {}
        for here, col in raw:
            if col.key in seen_keys:
                self.error(f"{here}.key", f"{col.key!r} is already the key of {seen_keys[col.key]}; keys must be unique.")
            seen_keys.setdefault(col.key, here)
            if col.index in seen_index:
                self.error(f"{here}.index", f"{col.index} is already the index of {seen_index[col.index]}; indexes must be unique.")
            seen_index.setdefault(col.index, here)
        for here, col in raw:
            if col.computation and not col.computation_indexes:
                self.error(f"{here}.computation_indexes", f"required with computation: {col.computation}.")
            for i in col.computation_indexes:
                if i == col.index:
                    self.error(f"{here}.computation_indexes", f"{i} is the column itself.")
                elif i not in seen_index:
                    self.error(f"{here}.computation_indexes", f"no column has index {i} (indexes: {sorted(seen_index)}).")
            if col.computation_indexes and not col.computation:
                self.warn(f"{here}.computation_indexes", "given without 'computation'; ignored.")
        return tuple(sorted((c for _, c in raw), key=lambda c: c.index))
