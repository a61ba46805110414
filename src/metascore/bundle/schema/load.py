"""``competition.yaml`` (Codabench v2 and CodaLab v1) parsed and checked: the entry points.

:func:`check_schema` reads a bundle directory and returns a :class:`BundleReport`: the
parsed :class:`Competition` (or ``None``), the **errors** (what Codabench would refuse or
what makes the bundle unrunnable) and the **warnings** (what Codabench silently ignores or
gets wrong). :func:`load_competition` raises :class:`~metascore.errors.ConfigError` on the
first error. Every message starts with the key path, e.g.
``competition.yaml: leaderboards[0].columns[2].sorting: 'dsc' is not one of 'desc', 'asc'
(did you mean 'desc'?)``.

The model (:class:`Competition` and its parts) is :mod:`~metascore.bundle.schema.competition`; the
rules are :mod:`~metascore.bundle.schema.v2`, :mod:`~metascore.bundle.schema.v1` and
:mod:`~metascore.bundle.schema.program_checks` (metadata and commands), on the shared readers of
:mod:`~metascore.bundle.schema.base`.

Version detection follows Codabench (``competitions/tasks.py: unpack_competition``, on
``yaml.safe_load``'s value): ``version: 2`` is v2; ``1``, ``1.5`` or no version is v1,
mapped the way Codabench's v1 unpacker maps it: each phase becomes a phase with exactly
one task, ``label`` -> ``title``, ``sort`` -> ``sorting``, ``numeric_format`` ->
``precision``, columns ordered by ``rank``, and ``computed:`` columns dropped to plain
columns (with a warning).

Warnings (Codabench accepts these but the result is not what the organizer meant):
unknown keys; ``leaderboards`` beyond the first (only ``leaderboards[0]`` is attached, to
every phase); ``leaderboard:`` singular next to ``leaderboards:``; ``computation_indexes``
written as a string; no column at the primary index; column keys or titles longer than 36
characters; column keys that no file of any task's scoring program, ingestion program or
reference data mentions; v1 ``computed:`` columns and ``force_submission_to_leaderboard``
(ignored: the rule stays ``Add``); dataset UUID keys (not runnable offline); data whose
content sits under one top-level folder that no program names (Codabench does not flatten
it); and, in a ``command`` (:mod:`~metascore.bundle.schema.command_checks`), shell syntax (there
is no shell) and placeholders that do not work in the program's step
(:mod:`~metascore.bundle.platform.placeholders`), an ingestion program never given the submission,
a scoring program given ``$program`` for the predictions. A command whose script is not in
its program is an error.

Links are checked first (:mod:`~metascore.bundle.links`), before anything they name is
read: ``competition.yaml``, every bundle path it names (and all that a folder holds), and
``sample_submissions/`` with its manifest, must not lead out of the bundle, nor hold a link
to nothing, a FIFO or device, or (a zip) link members; each such problem is an error naming
the link and its target, and the check stops there. The same problem inside one entry of
``sample_submissions/`` is a warning: ``bundle run`` fails that submission only. So is a
file of ``competition.yaml`` or of a path it names whose data is shared with a file outside
the bundle (a hard link, :func:`~metascore.bundle.links.hard_links`), which ``bundle zip``
refuses unless told ``--allow-hardlinks``.
``competition.yaml`` is read within the bounds of
:func:`~metascore.readers.yaml_loader.read_yaml` (its size before it is read, then its
nodes, aliases expanded, and its depth before it is parsed).

Phase dates are the dates Codabench stores (:mod:`~metascore.bundle.schema.phase_dates`): an
unquoted YAML date-time keeps only its day, with a warning saying when the phase really
starts or ends, and phase order is checked on them. A phase that names no task or a task
index not in ``tasks:`` is an error (the unpacker fails on it).

Differences from Codabench, on purpose: a path that does not exist and is not a UUID is an
error here (Codabench would look it up as a dataset key and fail the unpack), and a
``meta_scoring_program/`` folder that is absent or holds only a README is a note (not an
error) in a folder, because ``metascore bundle run`` / ``bundle zip`` fill it with
metascore's meta-scoring program; with ``meta_program_available=False`` (a zip about to be
uploaded) it is an error.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Any

from ...errors import ConfigError, InputError
from ...readers.yaml_loader import read_yaml
from .competition import PATH_KEYS, SUBMISSION_MANIFESTS, UUID_PATTERN, BundleReport, Competition, bundle_path
from ..links import OUTSIDE_LINK_RULE, hard_links, link_problems, outside_link
from .program_checks import ProgramChecks
from .v1 import SchemaV1
from .v2 import SchemaV2

__all__ = [
    "check_schema",
    "load_competition",
    "path_references",
    "keyed_references",
    "reference_problems",
    "referenced_paths",
    "refuse_bundle_links",
]

#: The parser of each ``version:`` value.
_PARSERS = {"2": SchemaV2, "1": SchemaV1, "1.5": SchemaV1}


def load_competition(root: str | Path, *, meta_program_available: bool = True) -> Competition:
    """Parse and check ``<root>/competition.yaml``; raise on the first error.

    Raises
    ------
    ConfigError
        Naming the key, the bad value and the allowed values.
    """
    report = check_schema(root, meta_program_available=meta_program_available)
    if report.errors:
        more = len(report.errors) - 1
        tail = f" ({more} more problem(s): run `metascore bundle check {root}`)" if more else ""
        raise ConfigError(report.errors[0] + tail)
    assert report.competition is not None
    return report.competition


def check_schema(root: str | Path, *, meta_program_available: bool = True,
                 outside_links: bool = True) -> BundleReport:
    """Check a bundle directory: schema, referenced files, programs' metadata (the first part
    of :func:`metascore.bundle.check.full.check_bundle`).

    ``meta_program_available``: a ``meta_scoring_program/`` folder that is absent or holds
    only a README (filled from metascore's own meta-scoring program) is a note; ``False``:
    an error. ``outside_links``: the links of the bundle are checked first
    (:func:`reference_problems`; an entry of ``sample_submissions/`` with a problem is a
    warning); ``False`` for a view of a bundle made of links to its entries.
    """
    root = Path(root)
    report = BundleReport(root=root, competition=None)
    data = _read_competition_yaml(root, report, outside_links)
    if data is None:
        return report
    parser = _PARSERS.get(str(data.get("version", "1.5")))
    if parser is None:
        report.errors.append(
            f"competition.yaml: version: {data['version']!r} is not one of 2, 1.5 or 1."
        )
        return report
    competition = parser(root, report, meta_program_available).parse(data)
    if competition is not None:
        programs = ProgramChecks(root, report, meta_program_available)
        programs.check_programs(competition)
        programs.check_data_layout(competition)
        programs.check_column_keys(competition)
        if outside_links:
            report.warnings.extend(_outside_samples(root))
            report.warnings.extend(str(h) for h in hard_links(referenced_paths(root, data), root))
        report.competition = Competition(
            **{**competition.__dict__, "warnings": tuple(report.warnings)}
        )
    return report


def _read_competition_yaml(root: Path, report: BundleReport, outside_links: bool) -> dict | None:
    """The mapping of ``<root>/competition.yaml``, its links and those of every path it
    names checked first when ``outside_links``; None when it cannot be read, the reason in
    ``report.errors``."""
    yaml_path = root / "competition.yaml"
    if not root.is_dir():
        report.errors.append(f"{root}: not a bundle directory.")
        return None
    if outside_links and os.path.lexists(yaml_path):
        report.errors.extend(link_problems(yaml_path, root))
        if report.errors:
            return None
    if not yaml_path.is_file():
        nested = sorted(p.parent.name for p in root.glob("*/competition.yaml"))
        hint = (
            f" (found in {nested[0]}/: put its contents, not the folder, at the bundle root)"
            if nested else ""
        )
        report.errors.append(f"{root}: competition.yaml is missing from the bundle root{hint}.")
        return None
    try:
        # Codabench loads it with yaml.safe_load: a duplicate key is a warning, the last wins
        data = read_yaml(yaml_path, on_duplicate=report.warnings.append)
    except ConfigError as exc:
        report.errors.append(str(exc))
        return None
    if not isinstance(data, dict):
        report.errors.append("competition.yaml: expected a mapping of keys at the top level.")
        return None
    if outside_links:  # before anything a link names is read
        report.errors.extend(reference_problems(root, data))
        if report.errors:
            return None
    return data


def refuse_bundle_links(root: Path) -> None:
    """Raise :class:`~metascore.errors.InputError` with the first link problem of the bundle
    folder ``root`` that :func:`check_schema` would report first (``competition.yaml``, then
    every path it names), for a command that reads or writes the bundle before checking it."""
    yaml_path = root / "competition.yaml"
    problems = link_problems(yaml_path, root)
    if not problems and yaml_path.is_file():
        problems = reference_problems(root, read_yaml(yaml_path, on_duplicate=lambda _: None))
    if problems:
        raise InputError(problems[0])


def reference_problems(root: Path, data: Any) -> list[str]:
    """The link problems (:func:`~metascore.bundle.links.link_problems`) of every bundle path
    the parsed ``competition.yaml`` ``data`` names, each prefixed by its key path
    (``competition.yaml: tasks[0].reference_data: ref/leak.txt is a link to ...``), then of
    ``sample_submissions/`` and its manifest (read by every command). Paths that are not
    bundle paths (absolute, ``..``, dataset keys) are left to the schema's checks."""
    problems: list[str] = []
    for where, ref in _bundle_references(data):
        problems += [f"competition.yaml: {where}: {p}" for p in link_problems(bundle_path(root, ref), root)]
    samples = root / "sample_submissions"
    why = outside_link(samples, root)
    if why:
        return problems + [f"{why}; {OUTSIDE_LINK_RULE}."]
    for name in SUBMISSION_MANIFESTS:
        problems += link_problems(samples / name, root)
    return problems


def _bundle_references(data: Any) -> list[tuple[str, str]]:
    """``(key path, reference)`` of each bundle path the parsed ``competition.yaml`` names,
    once each (not absolute, no ``..``, not empty)."""
    found: dict[str, str] = {}
    for where, ref in keyed_references(data):
        clean = PurePosixPath(ref.rstrip("/"))
        if ref not in found and clean.parts and not clean.is_absolute() and ".." not in clean.parts:
            found[ref] = where
    return [(where, ref) for ref, where in found.items()]


def referenced_paths(root: Path, data: Any) -> list[Path]:
    """``competition.yaml`` and every bundle path the parsed ``data`` names (what ``bundle
    zip`` packs), as paths of the bundle folder ``root``."""
    return [root / "competition.yaml", *(bundle_path(root, ref.rstrip("/")) for _, ref in _bundle_references(data))]


def _outside_samples(root: Path) -> list[str]:
    """A warning for each entry of ``sample_submissions/`` with a link problem (``bundle
    run`` fails that submission)."""
    folder = root / "sample_submissions"
    if not folder.is_dir():
        return []
    return [f"sample_submissions/{entry.name}: `bundle run` fails this submission: {problem}"
            for entry in sorted(folder.iterdir()) if entry.name not in SUBMISSION_MANIFESTS
            and (entry.suffix == ".zip" or not entry.name.startswith(("_", ".")))  # what runs
            for problem in link_problems(entry, root)]


def path_references(data: Any) -> list[str]:
    """Every bundle path a parsed ``competition.yaml`` references (v2 or v1), in order."""
    return list(dict.fromkeys(ref for _, ref in keyed_references(data)))


def keyed_references(data: Any) -> list[tuple[str, str]]:
    """``(key path, bundle path)`` of every bundle path a parsed ``competition.yaml``
    references (v2 or v1), in order: ``("tasks[0].reference_data", "ref/")``."""
    refs: list[tuple[str, str]] = []
    todo: list[tuple[Any, str | None, str]] = [(data, None, "")]
    while todo:  # no recursion: the yaml's depth is bounded, but not by much
        node, key, where = todo.pop()
        if isinstance(node, dict):
            todo.extend((v, k if key != "html" else "file", f"{where}.{k}" if where else str(k))
                        for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            todo.extend((item, key, f"{where}[{i}]") for i, item in reversed(list(enumerate(node))))
        elif isinstance(node, str) and key in PATH_KEYS and not UUID_PATTERN.match(node):
            refs.append((where, node))
    return refs
