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
import hashlib
import io
import re
import stat
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...errors import InputError, did_you_mean
from ...readers.yaml_loader import read_yaml
from ..archive import as_folder
from ..files import METADATA_FILES, is_noise
from ..schema.competition import SUBMISSION_MANIFESTS, Competition, Phase
from ..schema.metadata import read_metadata
from ..trees import walk

__all__ = ["Submission", "collect_submissions", "phase_named_by", "safe_name", "slug", "made_to",
           "phases_reached", "is_result_submission", "reference_copies", "kit_rule_text", "SUBMISSIONS_FOLDER",
           "beside_bundle", "kit_copies", "same_files"]


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
    no_kit: list[str] = []  # said when no other submission is a baseline either
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
            empty = [p for p in found if _empty_folder(p)]
            if empty:  # a non-recursive `zip *` keeps a folder's entry without its files
                found = [p for p in found if p not in empty]
                warnings.append(f"starting kit {phase.starting_kit}: {_listed(empty)} left out: an empty "
                                "folder is not a submission (a zip made without -r keeps only the "
                                "folder's entry).")
        if not found:
            no_kit.append(f"starting kit {phase.starting_kit}: {kit_rule_text(kit_dir)}; no baseline "
                          "will be run from it.")
        for path in found:
            sub = Submission(_stem(path), path, "baseline", when, True, None, "starting kit")
            # a result submission is made for one phase's data: the kit's own phase (the first
            # that names the kit), not a manifest's the organizer never wrote
            subs.append(replace(sub, phase=phase.name) if is_result_submission(sub, comp, phase) else sub)
    for sol in comp.solutions:
        path = comp.path(sol.path)
        if path is not None and path.exists():
            subs.append(Submission(f"solution_{sol.index}" if len(comp.solutions) > 1 else "solution",
                                   path, "organizer", when, False, sol.tasks, "solutions"))
    folder = submissions_dir
    if folder is None and (comp.root / "sample_submissions").is_dir():
        folder = comp.root / "sample_submissions"
    if folder is not None:
        found_subs, left = _folder_submissions(Path(folder), [p.name for p in comp.phases])
        subs.extend(found_subs)
        empty = [p for p in left if p.is_dir() and _empty_folder(p)]
        if empty:
            warnings.append(f"{folder}: {_listed(empty)} left out: an empty folder is not a submission.")
        bundles = [p.name for p in left if p not in empty]
        if bundles:
            warnings.append(f"{folder}: {', '.join(bundles)} left out: it holds a competition.yaml, "
                            "so it is a competition bundle, not a submission.")
    if not any(s.is_baseline for s in subs):
        warnings[:0] = no_kit
    if submissions_dir is not None:
        warnings.extend(kit_copies(subs))
    return _unique_ids(subs, _reach(comp)), warnings


def kit_rule_text(kit: Path) -> str:
    """Where a starting kit's submission was looked for, what the kit holds, and how to give
    one: ``no submission found in it (...)``."""
    held = sorted(p.name + ("/" if p.is_dir() else "") for p in kit.iterdir() if not is_noise(p.name))
    scripts = [name for name in held if name.endswith(".py")]
    shown = ", ".join(held[:6]) + (f" and {len(held) - 6} more" if len(held) > 6 else "")
    how = (f"run its script ({', '.join(scripts[:2])}) so that it writes one there, or give a "
           "submission zip or folder with `bundle add-meta --baseline FILE`" if scripts else
           "put one there, or give a submission zip or folder with `bundle add-meta --baseline FILE`")
    return (f"no submission found in it (looked for a folder or zip whose name contains "
            f"'submission', or a metadata file at its root; it holds {shown or 'nothing'}): {how}")


#: What the folder ``bundle run --submissions DIR`` holds, in one sentence.
SUBMISSIONS_FOLDER = (
    "DIR holds one zip or folder per submission, run as the participant its name gives "
    "(alice__v2.zip: alice; a name without __: itself) or a submissions.yaml there says (file, "
    "participant, phase, is_baseline, submitted_at), in every phase or, in a sub-folder "
    "DIR/<phase name>/, in that phase")


def beside_bundle(bundle: Path, kits: Sequence[Submission]) -> str:
    """The sample submissions kept beside the bundle (a zip or folder whose name contains
    "submission" next to the bundle folder or zip, as Codabench's example repositories ship
    them), which no run reads: those that hold a starting kit submission's files (``kits``),
    which runs as the baseline already, and how to run the others; ``""`` when there are none."""
    try:
        found = [p for p in sorted(bundle.absolute().parent.iterdir())
                 if "submission" in p.name.lower() and (p.suffix.lower() == ".zip" or p.is_dir())
                 and p.absolute() != bundle.absolute() and not _is_bundle(p)]
    except OSError:
        return ""
    copies = {p.name: k.candidate for p in found for k in kits if same_files(p, k.source)}
    others = [p.name for p in found if p.name not in copies]
    said = []
    if copies:
        said.append(f"{', '.join(copies)} hold files of the starting kit's "
                    f"{', '.join(dict.fromkeys(copies.values()))} only, which run as participant "
                    "'baseline' already: in DIR, as another participant, they would only tie with it")
    if others:
        said.append(f"{', '.join(others)}: no run reads them there; copy them into DIR, named as "
                    f"DIR says (alice__{others[0]})")
    return f"beside the bundle, {'; '.join(said)}" if said else ""


def kit_copies(subs: Sequence[Submission]) -> list[str]:
    """A submission of a submissions folder that holds only files of a starting kit
    submission: it runs as another participant and scores as the baseline does, a tie."""
    kits = [s for s in subs if s.origin == "starting kit"]
    out = []
    for sub in subs:
        if sub.origin in ("starting kit", "solutions") or sub.is_baseline:
            continue
        kit = next((k for k in kits if same_files(sub.source, k.source)), None)
        if kit is not None:
            out.append(f"{sub.source} holds files of the starting kit's {kit.candidate} only, which runs "
                       f"as participant 'baseline': as participant {sub.participant!r} it scores as the "
                       "baseline does and ties with it (a baseline filter admits it nowhere).")
    return out


def same_files(a: Path, b: Path) -> bool:
    """Whether every file of the submission ``a`` is a file of ``b`` (zips or folders), by the
    same name, byte for byte: ``a`` is ``b`` or a part of it (names and sizes compared first,
    contents only when those agree)."""
    sizes_a, sizes_b = _sizes(a), _sizes(b)
    if not sizes_a or any(sizes_b.get(name) != size for name, size in sizes_a.items()):
        return False
    digests_b = _digests(b)
    return all(digests_b.get(name) == digest for name, digest in _digests(a).items())


def _sizes(path: Path) -> dict[str, int]:
    """name -> size of each file of a folder or zip (noise left out); {} when unreadable."""
    try:
        if path.is_dir():  # any depth, no link followed (a participant's folder)
            return {"/".join(e.parts): e.stat.st_size for e in walk(path, on_error=lambda _: None)
                    if stat.S_ISREG(e.stat.st_mode) and not is_noise("/".join(e.parts))}
        with zipfile.ZipFile(path) as z:
            return {i.filename: i.file_size for i in z.infolist() if not i.is_dir() and not is_noise(i.filename)}
    except (OSError, zipfile.BadZipFile, ValueError):
        return {}


def _empty_folder(path: Path) -> bool:
    return path.is_dir() and not any(p.is_file() for p in path.rglob("*"))


def _is_bundle(path: Path) -> bool:
    """A competition bundle (``competition.yaml`` at its root), folder or zip."""
    if path.is_dir():
        return (path / "competition.yaml").is_file()
    try:
        with zipfile.ZipFile(path) as z:
            return "competition.yaml" in z.namelist()
    except (OSError, zipfile.BadZipFile, ValueError):  # a name that is no text, ...: the job says why
        return False


def _listed(paths: Sequence[Path]) -> str:
    names = [f"{p.name}/" for p in paths]
    return (f"empty folder {names[0]}" if len(names) == 1
            else f"{len(names)} empty folders ({', '.join(names)}) are")


def _reach(comp: Competition) -> dict[str | None, frozenset[str]]:
    """The phases a submission made to each phase can run in: its own and those that
    migrate from it, one after the other (``None``, no phase given: any)."""
    names = [p.name for p in comp.phases]
    out: dict[str | None, frozenset[str]] = {None: frozenset(names)}
    for i, phase in enumerate(comp.phases):
        reach = [phase.name]
        for later in comp.phases[i + 1:]:
            if not later.auto_migrate:
                break
            reach.append(later.name)
        out[phase.name] = frozenset(reach)
    return out


def _folder_submissions(folder: Path, phases: Sequence[str],
                        phase: str | None = None) -> tuple[list[Submission], list[Path]]:
    """Zips and folders in ``folder``, and those left out (empty folders, competition
    bundles); metadata from ``submissions.yaml`` / ``.csv`` if present.

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
    subs: list[Submission] = []
    entries, left = [], []
    for p in sorted(folder.iterdir()):
        if phase is None and p.is_dir() and p.name in by_folder and read_metadata(p)[0] is None:
            inner, inner_left = _folder_submissions(p, phases, by_folder[p.name])
            subs.extend(inner)
            left.extend(inner_left)
        elif (p.is_dir() and not p.name.startswith(("_", "."))) or p.suffix == ".zip":
            is_left = p.name not in manifest and (_empty_folder(p) or _is_bundle(p))
            (left if is_left else entries).append(p)
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
    return subs, left


def made_to(sub: Submission, phase: Phase, first: Phase, *, result_phase: str | None) -> bool:
    """Whether ``sub`` was made to ``phase``: the phase its manifest or folder gives; a
    solution's tasks; a result submission without a phase, ``result_phase`` (the phase its
    name names, else the first); any other submission without a phase, the first phase and
    every phase that does not migrate (a migrating one gets it by migration)."""
    if sub.phase is not None:
        return sub.phase == phase.name
    if sub.tasks is not None:
        return any(i in phase.tasks for i in sub.tasks)
    if result_phase is not None:
        return phase.name == result_phase
    return phase is first or not phase.auto_migrate


def is_result_submission(sub: Submission, comp: Competition, phase: Phase) -> bool:
    """A result submission in ``phase``: no ``metadata`` file and no ingestion program to
    import it as code, so its files are the predictions."""
    if any(t.ingestion_program for t in comp.phase_tasks(phase)):
        return False
    try:
        return read_metadata(sub.source)[0] is None
    except (InputError, OSError, ValueError, zipfile.BadZipFile):  # the job fails, and says why
        return False


def phases_reached(sub: Submission, comp: Competition, phases: Sequence[Phase]) -> list[str]:
    """The phases of ``phases`` (in order, no meta phase) a local run runs ``sub`` in: those it
    was made to (:func:`made_to`), and those that migrate from a phase it ran in (when it
    finishes there and a leaderboard holds it)."""
    if not phases:
        return []
    names = [p.name for p in phases]
    result_phase = None
    if sub.phase is None and sub.tasks is None and is_result_submission(sub, comp, phases[0]):
        result_phase = (phase_named_by(sub.candidate, names) if len(names) > 1 else None) or names[0]
    out: list[str] = []
    for i, phase in enumerate(phases):
        migrated = (phase.auto_migrate and i > 0 and names[i - 1] in out
                    and (sub.tasks is None or any(t in phase.tasks for t in sub.tasks)))
        if migrated or made_to(sub, phase, phases[0], result_phase=result_phase):
            out.append(phase.name)
    return out


#: The largest file compared by :func:`reference_copies` (a bigger one is not read).
_COMPARED_SIZE = 64 * 1024 * 1024


def reference_copies(sub: Submission, references: Sequence[Path | None]) -> list[str]:
    """``["answers.csv = ref/gold.csv", ...]`` when every file of the submission (a folder
    or zip; its metadata aside) is, byte for byte, a file of one of the ``references``
    (reference data folders or zips): a result submission that holds the answers, and so
    the best possible score. Empty otherwise."""
    mine = _digests(sub.source, skip_metadata=True)
    if not mine:
        return []
    known: dict[str, str] = {}
    for ref in references:
        if ref is not None and ref.exists():
            for name, digest in _digests(ref).items():
                known.setdefault(digest, f"{ref.name}/{name}")
    if not all(d in known for d in mine.values()):
        return []
    return [f"{name} = {known[d]}" for name, d in sorted(mine.items())]


def _digests(path: Path, skip_metadata: bool = False) -> dict[str, str]:
    """name -> SHA-256 of each file of a folder or zip (noise, and metadata when asked, left
    out); {} when one is too big to compare or the zip cannot be read."""
    out: dict[str, str] = {}
    try:
        if path.is_dir():
            items = [(f.relative_to(path).as_posix(), f) for f in sorted(path.rglob("*")) if f.is_file()]
            for name, f in items:
                if is_noise(name) or (skip_metadata and name in METADATA_FILES):
                    continue
                if f.stat().st_size > _COMPARED_SIZE:
                    return {}
                out[name] = hashlib.sha256(f.read_bytes()).hexdigest()
        elif zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                for info in z.infolist():
                    name = info.filename
                    if info.is_dir() or is_noise(name) or (skip_metadata and name in METADATA_FILES):
                        continue
                    if info.file_size > _COMPARED_SIZE:
                        return {}
                    out[name] = hashlib.sha256(z.read(info)).hexdigest()
    except (OSError, zipfile.BadZipFile, ValueError):
        return {}
    return out


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


def _unique_ids(subs: list[Submission], reach: dict[str | None, frozenset[str]]) -> list[Submission]:
    """Candidate names made safe, and unique among the submissions that can meet in a phase
    (``reach``: where a submission made to each phase can run): the same file name in two
    phase folders that never meet keeps its name in both."""
    out: list[Submission] = []
    used: dict[str, list[frozenset[str]]] = {}  # name -> the phases of each submission named so
    for sub in subs:
        where = reach.get(sub.phase, reach[None])
        if sub.tasks is not None:  # a solution runs where its tasks are: it may meet anyone
            where = reach[None]
        base = safe_name(sub.candidate)
        cid, n = base, 2
        while any(where & other for other in used.get(cid, ())):
            cid, n = f"{base}-{n}", n + 1
        used.setdefault(cid, []).append(where)
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
