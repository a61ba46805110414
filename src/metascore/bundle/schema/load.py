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
(:mod:`~metascore.bundle.worker.placeholders`), an ingestion program never given the submission,
a scoring program given ``$program`` for the predictions. A command whose script is not in
its program is an error.

A bundle path (an item of ``competition.yaml``) that a link leads out of the bundle is an
error, an entry of ``sample_submissions/`` that does a warning: ``bundle run`` follows no
such link (:func:`~metascore.bundle.files.outside_link`).

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

from pathlib import Path
from typing import Any

from ...errors import ConfigError
from ...readers.yaml_loader import read_yaml
from .competition import PATH_KEYS, UUID_PATTERN, BundleReport, Competition
from ..files import OUTSIDE_LINK_RULE, outside_link
from .program_checks import ProgramChecks
from .v1 import SchemaV1
from .v2 import SchemaV2

__all__ = [
    "check_schema",
    "load_competition",
    "path_references",
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
    an error. ``outside_links``: a path that a link leads out of the bundle is an error (an
    item of ``competition.yaml``) or a warning (an entry of ``sample_submissions/``);
    ``False`` for a view of a bundle made of links to its entries.
    """
    root = Path(root)
    report = BundleReport(root=root, competition=None)
    yaml_path = root / "competition.yaml"
    if not root.is_dir():
        report.errors.append(f"{root}: not a bundle directory.")
        return report
    if not yaml_path.is_file():
        nested = sorted(p.parent.name for p in root.glob("*/competition.yaml"))
        hint = (
            f" (found in {nested[0]}/: put its contents, not the folder, at the bundle root)"
            if nested else ""
        )
        report.errors.append(f"{root}: competition.yaml is missing from the bundle root{hint}.")
        return report
    try:
        # Codabench loads it with yaml.safe_load: a duplicate key is a warning, the last wins
        data = read_yaml(yaml_path, on_duplicate=report.warnings.append)
    except ConfigError as exc:
        report.errors.append(str(exc))
        return report
    if not isinstance(data, dict):
        report.errors.append("competition.yaml: expected a mapping of keys at the top level.")
        return report
    parser = _PARSERS.get(str(data.get("version", "1.5")))
    if parser is None:
        report.errors.append(
            f"competition.yaml: version: {data['version']!r} is not one of 2, 1.5 or 1."
        )
        return report
    competition = parser(root, report, meta_program_available, outside_links).parse(data)
    if competition is not None:
        programs = ProgramChecks(root, report, meta_program_available)
        programs.check_programs(competition)
        programs.check_data_layout(competition)
        programs.check_column_keys(competition)
        if outside_links:
            report.warnings.extend(_outside_samples(root))
        report.competition = Competition(
            **{**competition.__dict__, "warnings": tuple(report.warnings)}
        )
    return report


def _outside_samples(root: Path) -> list[str]:
    """A warning for each entry of ``sample_submissions/`` that a link leads out of the
    bundle (``bundle run`` fails that submission)."""
    folder = root / "sample_submissions"
    if not folder.is_dir() or outside_link(folder, root):
        return [f"sample_submissions: {why}; `bundle run` runs none of its submissions ({OUTSIDE_LINK_RULE})."
                for why in [outside_link(folder, root)] if why]
    return [f"sample_submissions/{entry.name}: {why}; `bundle run` fails this submission "
            f"({OUTSIDE_LINK_RULE})."
            for entry in sorted(folder.iterdir()) if (why := outside_link(entry, root))]


def path_references(data: Any) -> list[str]:
    """Every bundle path a parsed ``competition.yaml`` references (v2 or v1), in order."""
    refs: list[str] = []

    def walk(node: Any, key: str | None = None) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k if key != "html" else "file")
        elif isinstance(node, list):
            for item in node:
                walk(item, key)
        elif isinstance(node, str) and key in PATH_KEYS and not UUID_PATTERN.match(node):
            if node not in refs:
                refs.append(node)

    walk(data)
    return refs
