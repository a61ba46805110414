"""Who sees what on Codabench: the final ranking for every participant, its input for nobody.

The meta phase's leaderboard row is the organizer's submission; the ranking itself is that
submission's ``detailed_results.html``, and its input is the results export of the ranked
phases (every participant's scores). Measured on Codabench c7dbc756 (``api/views/submissions.py``):

- ``GET /api/submissions/<id>/get_detail_result/`` answers 404 "Detailed results are
  disabled for this competition!" unless the competition has ``enable_detailed_results``;
  with it, anyone may read a published competition's detailed results, logged in or not,
  and the leaderboard links them (``show_detailed_results_in_leaderboard``, default true);
- ``GET /api/submissions/<id>/get_details/`` gives signed links to a submission's input,
  predictions, scoring output and logs to anyone who can see the submission, and a logged-out
  client sees every submission on a leaderboard; a phase's ``hide_output: true`` keeps them
  for the organizers (403; 404 for a participant who does not own the submission), and
  ``get_detail_result`` does not look at it;
- without ``registration_auto_approve: true`` (v1: ``has_registration: false``) a registration
  waits for an organizer, and each submission until then is refused (403).

:func:`visibility_problems` says what a bundle with a meta phase gets wrong about these.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

from .meta_config import MetaConfig
from ..schema.competition import Competition

__all__ = ["visibility_problems", "registration_note", "silent_scoring_programs"]


def visibility_problems(comp: Competition, metas: Sequence[MetaConfig]) -> list[str]:
    """Warnings: a meta phase whose ranking participants cannot open, or whose input
    (the results export) anyone can download."""
    phases = list(dict.fromkeys(m.phase.name for m in metas))
    if not phases:
        return []
    named = ", ".join(map(repr, phases))
    key = "enable_detailed_results"
    warnings = []
    if not comp.enable_detailed_results:
        warnings.append(
            f"competition.yaml: {key} is not true, so participants cannot see the final ranking: "
            f"phase {named} shows them only its score columns, and its ranking page "
            "(detailed_results.html) answers 404 'Detailed results are disabled for this "
            f"competition!'. Set {key}: true (it opens the detailed results of every phase to "
            "whoever can see the leaderboard).")
    open_phases = [p.name for p in comp.phases if p.name in phases and not p.hide_output]
    if open_phases:
        warnings.append(
            f"competition.yaml: phase(s) {', '.join(map(repr, open_phases))} have no hide_output: "
            "true, so anyone, even logged out, can download the meta submission's files "
            "(get_details): its input is the results export, every participant's scores in "
            "every ranked phase. Set hide_output: true on the phase; the ranking page stays "
            "visible (detailed results do not depend on it).")
    return warnings


def registration_note(comp: Competition) -> str | None:
    """A note when registrations wait for an organizer's approval."""
    if comp.registration_auto_approve:
        return None
    key = "registration_auto_approve: true" if comp.version == 2 else "has_registration: false"
    return (f"competition.yaml: registrations wait for an organizer's approval (no {key}): each "
            "participant stays pending until approved on the competition's Participants page, "
            f"and Codabench refuses their submissions (403) until then. Set {key} to approve at once.")


def silent_scoring_programs(comp: Competition, is_meta: Callable[[str], bool]) -> list[str]:
    """The scoring programs (``is_meta`` ones aside) that write no ``detailed_results.html``:
    no file of theirs (folder or zip) names ``detailed_results``. Their rows' eye icons open an
    empty page when detailed results are on (Codabench stores an empty file for each
    submission, ``competitions/tasks.py``: ``_send_to_compute_worker``)."""
    out: list[str] = []
    for task in comp.tasks.values():
        ref = task.scoring_program
        if not ref or ref in out or is_meta(ref):
            continue
        path = comp.path(ref)
        if path is not None and path.exists() and not _mentions(path, b"detailed_results"):
            out.append(ref)
    return out


def _mentions(path: Path, needle: bytes, limit: int = 16 * 1024**2) -> bool:
    """Whether a file of the folder or zip ``path`` (each read up to ``limit`` bytes) holds ``needle``."""
    if path.is_dir():
        return any(f.is_file() and needle in _head(f, limit) for f in path.rglob("*"))
    try:
        with zipfile.ZipFile(path) as archive:
            return any(needle in archive.open(info).read(limit) for info in archive.infolist()
                       if not info.is_dir())
    except (OSError, zipfile.BadZipFile):
        return True  # unreadable: say nothing about it


def _head(path: Path, limit: int) -> bytes:
    with path.open("rb") as fh:
        return fh.read(limit)
