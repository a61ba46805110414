"""Which submissions a bundle run uses, and where each comes from.

:func:`collect_submissions` gathers, in this order: each phase's starting-kit submissions
(baselines), the competition's ``solutions`` (each on its own tasks), and a folder of
submissions (the bundle's ``sample_submissions/`` or the one given), with their
participant, submission time and phase from a ``submissions.yaml`` / ``.csv`` manifest, a
``<phase name>/`` sub-folder, or the file names. Candidate names are made unique and safe
as folder names (:func:`safe_name`); :func:`slug` makes names safe in a run folder path.
Which phases a submission then runs in is the site's business (:mod:`~metascore.bundle.site.server`).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...errors import InputError, did_you_mean
from ...readers.yaml_loader import read_yaml
from ..archive import as_folder
from ..schema.competition import SUBMISSION_MANIFESTS, Competition
from ..schema.metadata import read_metadata

__all__ = ["Submission", "collect_submissions", "phase_named_by", "safe_name", "slug"]


@dataclass(frozen=True)
class Submission:
    """One submission to run: a folder or zip, who made it, when, and whether it is a baseline.

    ``tasks``: the task indexes it runs on (``None``: every task; solutions list theirs).
    ``on_leaderboard``: put on the leaderboard by hand (read only under the ``Add`` rules;
    see :mod:`~metascore.bundle.site.submission_rules`).
    ``phase``: the name of the phase it was submitted to (``None``: not given).
    """

    candidate: str
    source: Path
    participant: str
    submitted_at: str | None = None
    is_baseline: bool = False
    tasks: tuple[int, ...] | None = None
    origin: str = ""
    on_leaderboard: bool = False
    phase: str | None = None


def collect_submissions(
    comp: Competition, submissions_dir: Path | None = None, *, cache: Path,
) -> tuple[list[Submission], list[str]]:
    """Submissions to run, and warnings.

    From the bundle: each phase's ``starting_kit`` (the kit itself when it has a
    ``metadata`` file at its root, else each sub-folder or zip whose name contains
    "submission"), flagged as baselines; each ``solutions`` entry (on its tasks); and the
    bundle's ``sample_submissions/`` folder unless ``submissions_dir`` is given. A
    submissions folder holds zips or folders; see :func:`_folder_submissions`.
    """
    subs: list[Submission] = []
    warnings: list[str] = []
    first_start = next((p.start for p in comp.phases if p.start), None)
    when = first_start.replace(tzinfo=dt.timezone.utc).isoformat() if first_start else None
    seen: set[str] = set()
    for phase in comp.phases:
        kit = comp.path(phase.starting_kit)
        if kit is None or phase.starting_kit in seen or not kit.exists():
            continue
        seen.add(phase.starting_kit)
        kit_dir = as_folder(kit, cache / "starting_kits" / kit.name)
        if read_metadata(kit_dir)[0] is not None:
            found = [kit_dir]
        else:
            found = sorted(p for p in kit_dir.iterdir()
                           if "submission" in p.name.lower() and (p.is_dir() or p.suffix == ".zip"))
        if not found:
            warnings.append(f"starting kit {phase.starting_kit}: no submission found in it (a folder "
                            "or zip whose name contains 'submission'); no baseline will be run.")
        for path in found:
            subs.append(Submission(_stem(path), path, "baseline", when, True, None, "starting kit"))
    for sol in comp.solutions:
        path = comp.path(sol.path)
        if path is not None and path.exists():
            subs.append(Submission(f"solution_{sol.index}" if len(comp.solutions) > 1 else "solution",
                                   path, "organizer", when, False, sol.tasks, "solutions"))
    folder = submissions_dir
    if folder is None and (comp.root / "sample_submissions").is_dir():
        folder = comp.root / "sample_submissions"
    if folder is not None:
        subs.extend(_folder_submissions(Path(folder), [p.name for p in comp.phases]))
    return _unique_ids(subs), warnings


def _folder_submissions(folder: Path, phases: Sequence[str], phase: str | None = None) -> list[Submission]:
    """Zips and folders in ``folder``; metadata from ``submissions.yaml`` / ``.csv`` if present.

    Manifest rows: ``file`` (required, the zip or folder name), ``participant``,
    ``submitted_at``, ``is_baseline``, ``candidate``, ``phase`` (a phase name of
    ``phases``), ``on_leaderboard`` (put on the leaderboard by hand, for the ``Add`` rules). Without a row: the participant is the part of the name before ``__``
    (``alice__v2.zip`` -> ``alice``), else the whole stem, and the submission time is the
    file's modification time. A sub-folder named like a phase (or its :func:`safe_name`)
    that has no ``metadata`` file holds that phase's submissions, read the same way.
    """
    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder of submissions.")
    manifest = read_manifest(folder)
    by_folder = {safe_name(name): name for name in phases} | {name: name for name in phases}
    subs = []
    entries = []
    for p in sorted(folder.iterdir()):
        if phase is None and p.is_dir() and p.name in by_folder and read_metadata(p)[0] is None:
            subs.extend(_folder_submissions(p, phases, by_folder[p.name]))
        elif (p.is_dir() and not p.name.startswith(("_", "."))) or p.suffix == ".zip":
            entries.append(p)
    names = {p.name for p in entries} | {p.stem for p in entries}
    for name in manifest:
        if name not in names:
            raise InputError(f"{folder}: the submissions manifest lists {name!r}, which is not in the folder.")
    for path in entries:
        row = manifest.get(path.name) or manifest.get(path.stem) or {}
        chosen = str(row["phase"]).strip() if row.get("phase") not in (None, "") else phase
        if chosen is not None and chosen not in phases:
            raise InputError(f"{folder}: submission {path.name!r} is for phase {chosen!r}, which the "
                             f"competition does not have{did_you_mean(chosen, list(phases))}; phases are "
                             f"{list(phases)}.")
        stem = _stem(path)
        participant = str(row.get("participant") or (stem.split("__", 1)[0] if "__" in stem else stem))
        when = row.get("submitted_at")
        if isinstance(when, (dt.datetime, dt.date)):
            when = when.isoformat()
        if when is None:
            when = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc).isoformat(timespec="seconds")
        subs.append(Submission(str(row.get("candidate") or stem), path, participant, str(when),
                               _flag(row, "is_baseline"), None, str(folder), _flag(row, "on_leaderboard"),
                               phase=chosen))
    return subs


def read_manifest(folder: Path) -> dict[str, dict[str, Any]]:
    for name in SUBMISSION_MANIFESTS:
        path = folder / name
        if not path.is_file():
            continue
        if path.suffix == ".csv":
            rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
        else:
            data = read_yaml(path, str(path)) or []
            rows = data if isinstance(data, list) else [{"file": k, **(v or {})} for k, v in data.items()]
        out = {}
        for i, row in enumerate(rows, 1):
            if not isinstance(row, dict) or not row.get("file"):
                raise InputError(f"{path}: entry {i} has no 'file' (the submission's zip or folder name).")
            out[str(row["file"])] = row
        return out
    return {}


def _flag(row: dict[str, Any], key: str) -> bool:
    return str(row.get(key, False)).strip().lower() in ("true", "1", "yes")


def _stem(path: Path) -> str:
    return path.name[:-4] if path.name.endswith(".zip") else path.name


def _unique_ids(subs: list[Submission]) -> list[Submission]:
    out, used = [], set()
    for sub in subs:
        cid, n = safe_name(sub.candidate), 2
        while cid in used:
            cid, n = f"{safe_name(sub.candidate)}-{n}", n + 1
        used.add(cid)
        out.append(replace(sub, candidate=cid))
    return out


def safe_name(name: str) -> str:
    """A folder name for a phase, candidate or task (no separators, no leading dot)."""
    clean = re.sub(r"[/\\\x00]", "_", str(name)).strip() or "_"
    return "_" + clean if clean.startswith(".") else clean


def slug(name: str) -> str:
    """A folder name a program can put in a command line unquoted: letters, digits, ``._-``.

    >>> slug("Single Phase with Multiple Task")
    'Single_Phase_with_Multiple_Task'
    """
    clean = re.sub(r"[^A-Za-z0-9._-]+", "_", str(name)).strip("_") or "_"
    return "_" + clean if clean.startswith(".") else clean


#: Words of a name that say nothing about a phase.
_FILLER = {"phase", "submission", "submissions", "sub", "result", "results", "the", "of", "for"}
#: Words that name the first phase, or the last ranked phase, without naming it.
_FIRST_WORDS = {"dev", "development", "public", "feedback", "val", "valid", "validation", "practice"}
_LAST_WORDS = {"final", "test", "testing", "private", "eval", "evaluation"}


def _words(name: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", name.lower()) if w and w not in _FILLER}


def phase_named_by(name: str, phases: Sequence[str]) -> str | None:
    """The phase (of ``phases``, in order) a submission's name says it was made for, or None.

    Each word of at least 3 letters names the phases with a word it begins or that begins
    it (``dev`` -> "Development Phase"); a word that names none but says first
    (``public``, ``feedback``, ``validation``, ...) or last (``final``, ``test``,
    ``private``, ...) names the first or the last phase. The name must name exactly one. Codabench's public bundles ship such per-phase result
    zips (``dev-submission.zip``, ``final-submission.zip``).

    >>> phase_named_by("final-submission", ["Development Phase", "Testing Phase"])
    'Testing Phase'
    >>> phase_named_by("dev-submission", ["Development Phase", "Testing Phase"])
    'Development Phase'
    >>> phase_named_by("my_model", ["Development Phase", "Testing Phase"]) is None
    True
    """
    if len(phases) < 2:
        return None
    found: set[str] = set()
    for word in (w for w in _words(name) if len(w) >= 3):
        direct = {p for p in phases
                  if any(word.startswith(b) or b.startswith(word) for b in _words(p) if len(b) >= 3)}
        if direct:
            found |= direct
        elif word in _FIRST_WORDS:
            found.add(phases[0])
        elif word in _LAST_WORDS:
            found.add(phases[-1])
    return found.pop() if len(found) == 1 else None
