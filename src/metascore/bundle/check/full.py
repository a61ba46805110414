"""``metascore bundle check``: the whole check of a bundle folder.

:func:`check_bundle` is :func:`metascore.bundle.schema.load.check_schema` (``competition.yaml``,
the files it references, the programs' metadata), then, on the parsed competition:

- each meta task's ``metascore.yaml`` against the competition
  (:mod:`~metascore.bundle.check.meta_config`), with the submissions a local run would use
  (:func:`~metascore.bundle.site.submissions.collect_submissions`) to find the baselines,
  and a baseline that holds the development phase's reference answers, which nobody can
  beat (:func:`~metascore.bundle.check.baselines.unbeatable_notes`);
- the traps of Codabench as it runs today (:mod:`~metascore.bundle.check.platform_traps`), and an
  auto-migrating phase whose start is already past, which the site migrates at once with
  nothing in it (:func:`~metascore.bundle.schema.phase_dates.past_migration_warnings`);
- the competition's image against the meta phase and the programs' imports
  (:mod:`~metascore.bundle.check.image_checks`);
- whether participants can see the final ranking and nobody but the organizers its input,
  and whether registrations wait for an approval (:mod:`~metascore.bundle.check.visibility`);
- whether a local ``bundle run`` needs ``bundle env`` first (the programs import what the
  image carries and this Python lacks: :func:`~metascore.bundle.check.image_checks.local_run_note`).

Their errors and warnings are added to the same :class:`~metascore.bundle.schema.competition.BundleReport`.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

from ...errors import MetascoreError
from ..schema import phase_dates
from .meta_config import MetaConfig, check_meta_configs, find_meta_configs
from .baselines import unbeatable_notes
from ..schema.competition import BundleReport, Competition
from .image_checks import image_problems, local_run_note
from .platform_traps import platform_traps
from ..schema.load import check_schema
from ..site.submissions import SUBMISSIONS_FOLDER, Submission, beside_bundle, collect_submissions, phases_reached
from .visibility import registration_note, visibility_problems

__all__ = ["check_bundle"]


def check_bundle(root: str | Path, *, meta_program_available: bool = True,
                 now: dt.datetime | None = None, submissions: Path | None = None,
                 outside_links: bool = True, meta_python: str | None = None,
                 given: Path | None = None) -> BundleReport:
    """Check a bundle directory: the schema, then the meta-ranking and the platform's traps.

    ``meta_program_available``: a ``meta_scoring_program/`` folder that is absent or holds
    only a README (filled by ``bundle zip`` / ``bundle run`` from metascore's own meta-scoring
    program) is a note; ``False`` (a zip about to be uploaded): an error.
    ``now``: the upload time the phase dates are compared with (UTC; default: now).
    ``submissions``: the folder a local run will use instead of ``sample_submissions/``
    (``bundle run --submissions``), where the baselines are looked for.
    ``outside_links``: check that no path of the bundle leads out of it through a link
    (``False``: a view of a bundle made of links to its entries).
    ``meta_python``: how a placeholder meta program will be filled (``bundled`` or ``image``;
    default ``$METASCORE_META_PYTHON``, else bundled), for the image check.
    ``given``: the bundle folder or zip as the organizer gave it, beside which sample
    submissions are looked for when the bundle has none.
    """
    report = check_schema(root, meta_program_available=meta_program_available, outside_links=outside_links)
    comp = report.competition
    if comp is None:
        return report
    metas = find_meta_configs(comp)
    with tempfile.TemporaryDirectory(prefix="metascore-check-") as tmp:
        try:
            subs, _ = collect_submissions(comp, submissions, cache=Path(tmp))
        except MetascoreError as exc:  # e.g. a broken sample_submissions/ manifest
            report.errors.append(str(exc))
            subs = []
        report.warnings.extend(_unbeatable(comp, metas, subs))  # reads the kits in tmp
        if (metas and submissions is None and not (comp.root / "sample_submissions").is_dir()
                and all(s.is_baseline or s.origin == "solutions" for s in subs)):
            report.notes.append(_no_participants(subs, given))
    errors, warnings = check_meta_configs(comp, metas, subs, submissions)
    image_errors, image_warnings = image_problems(comp, metas, meta_python=meta_python)
    report.errors.extend(errors + image_errors)
    report.warnings.extend(warnings + platform_traps(comp, metas) + image_warnings
                           + visibility_problems(comp, metas))
    registration = registration_note(comp)
    if registration is not None:
        report.notes.append(registration)
    local = local_run_note(comp, metas)
    if local is not None:
        report.notes.append(local)
    report.warnings.extend(phase_dates.past_migration_warnings(comp, now or phase_dates.utc_now()))
    report.competition = Competition(**{**comp.__dict__, "warnings": tuple(report.warnings)})
    return report


def _no_participants(subs: list[Submission], given: Path | None) -> str:
    """The bundle has no participant submission for a local run: what `--submissions DIR`
    holds, and the submissions kept beside the bundle (``given``: where it is)."""
    beside = beside_bundle(given, [s for s in subs if s.origin == "starting kit"]) if given else ""
    return ("a local `metascore bundle run` has no participant to rank: the bundle has no "
            f"sample_submissions/; give it (and this check) --submissions DIR: {SUBMISSIONS_FOLDER}"
            + (f"; {beside}." if beside else "."))


def _unbeatable(comp: Competition, metas: list[MetaConfig], subs: list[Submission]) -> list[str]:
    """A beat_baseline filter whose baseline holds the development phase's reference answers:
    nobody can qualify, so the final ranking will be empty."""
    out = []
    meta_phases = {m.phase.name for m in metas}
    phases = [p for p in comp.phases if p.name not in meta_phases]
    for meta in metas:
        config = meta.config
        if config is None or config.filter.rule != "beat_baseline":
            continue
        names = set(config.baselines) | {s.participant for s in subs if s.is_baseline}
        placed = [(s, phases_reached(s, comp, phases)) for s in subs]
        out += [f"{meta.where}: {text}" for text in unbeatable_notes(
            comp, phases, config.phases.development, sorted(names), placed)]
    return out
