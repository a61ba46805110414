"""Format ``tree``: a directory of scoring outputs, plus its ``submissions.csv`` manifest.

Layout ``<root>/<phase>/<candidate>/<task>/scores.json`` (or ``scores.txt``, read by
:mod:`metascore.readers.scores_file`); without the phase level,
``<root>/<candidate>/<task>/scores.json``; a task folder with ``error.txt`` instead
is a failed run (its first line is the reason); one with scores and
``prediction_failed.txt`` is a run that finished after its prediction step failed (its
first line is what failed: the scores come from a scoring program that ran without the
predictions), marked on the leaderboard. The optional ``<root>/submissions.csv`` gives
each candidate's ``participant``, ``submitted_at`` and ``is_baseline`` (per ``phase`` when
it has that column). The optional ``<root>/codabench.json`` (:mod:`metascore.readers.columns`)
gives the leaderboard columns' directions. Links leaving the root are refused.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import InputError, did_you_mean
from .rows import Rows, cell_at, check_inside, column_index, csv_header, csv_rows, flag_cell, load_json
from .rows import optional_text_cell, require_columns, text_cell, time_cell
from .columns import COLUMNS_FILE, read_directions
from .input_format import InputFormat
from .score_table import Failure, Flag, Unscored
from .scores_file import SCORE_FILES, read_scores_file
from .spreadsheet import spreadsheet_text

__all__ = ["FAILURE_FILE", "FLAG_FILE", "TREE_FORMAT", "MANIFEST", "MANIFEST_COLUMNS", "read_tree",
           "tree_score_files", "manifest_text"]

MANIFEST = "submissions.csv"
#: The columns ``submissions.csv`` is written with (``codabench pull``, the mock runner).
MANIFEST_COLUMNS = ("phase", "candidate", "participant", "submitted_at", "is_baseline")
#: In a task folder without scores: why the run failed (its first line), written by the
#: mock runner, so reports show a failed run rather than a missing score.
FAILURE_FILE = "error.txt"
#: Next to the scores of a run that finished after its prediction step failed: what failed
#: (its first line), written by the mock runner (the site's export cannot say it).
FLAG_FILE = "prediction_failed.txt"


def _subdirs(root: Path, folder: Path) -> list[Path]:
    """Sorted sub-directories of ``folder``, refusing links that leave ``root``."""
    out = []
    for child in sorted(folder.iterdir(), key=lambda c: c.name):
        if child.name.startswith(".") or child.name == "__MACOSX":
            continue
        check_inside(root, child, shown=str(child.relative_to(root)))
        if child.is_dir():
            out.append(child)
    return out


def _scores_file(root: Path, folder: Path) -> Path | None:
    for name in SCORE_FILES:
        candidate = folder / name
        if candidate.is_symlink() or candidate.exists():
            check_inside(root, candidate, shown=str(candidate.relative_to(root)))
            if candidate.is_file():
                return candidate
    return None


def tree_score_files(root: Path) -> tuple[list[Path], list[Path]]:
    """The score files of ``root`` at ``<phase>/<candidate>/<task>/`` and at ``<candidate>/<task>/``."""
    deep = [f for name in SCORE_FILES for f in root.glob(f"*/*/*/{name}")]
    shallow = [f for name in SCORE_FILES for f in root.glob(f"*/*/{name}")]
    return deep, shallow


def read_tree(root: Path, phase: str | None, rows: Rows) -> None:
    """Add the scores of a scoring-output tree to ``rows`` (``phase`` as in ``read_scores``).

    A submission without scores for a task, or listed in the manifest without any
    output, goes to ``rows.failed``; one without any score also to ``rows.unscored``.
    """
    deep, shallow = tree_score_files(root)
    if deep and shallow:
        raise InputError(
            f"{root} mixes <phase>/<candidate>/<task>/scores.json (e.g. "
            f"{deep[0].relative_to(root)}) and <candidate>/<task>/scores.json (e.g. "
            f"{shallow[0].relative_to(root)}); use one layout."
        )
    manifest = _read_manifest(root)
    if not deep and not shallow:
        raise InputError(f"no scores found in {root} (expected <phase>/<candidate>/<task>/"
                         f"scores.json or scores.txt){_why_empty(root, manifest)}.")
    rows.directions = read_directions(root)
    if deep:
        phases = _subdirs(root, root)
        if phase is not None:
            names = [d.name for d in phases]
            if str(phase) not in names:
                raise InputError(
                    f"phase {phase!r} is not in {root}{did_you_mean(phase, names)}; it holds "
                    f"phase(s) {names}."
                )
            phases = [d for d in phases if d.name == str(phase)]
        labels = [d.name for d in phases]
        for phase_dir in phases:
            _read_phase_dir(root, phase_dir, phase_dir.name, manifest, rows)
    else:
        labels = ["" if phase is None else str(phase)]
        _read_phase_dir(root, root, labels[0], manifest, rows)
    # a manifest entry (for one phase, or for all when it names none) with no output
    seen = set(zip(rows.columns["phase"], rows.columns["candidate"]))
    seen |= {(f.phase, f.candidate) for f in rows.failed}
    for (m_phase, candidate), (n, _) in manifest.items():
        for label in [m_phase] if m_phase else labels:
            if label in labels and (label, candidate) not in seen:
                rows.failed.append(Failure(
                    label, candidate, "", f"listed in {MANIFEST} (line {n}) but has no scoring output"))
                rows.unscored.append(_member(label, candidate, manifest[(m_phase, candidate)][1]))


def _read_phase_dir(
    root: Path, folder: Path, phase: str, manifest: dict[tuple[str, str], tuple[int, dict[str, Any]]], rows: Rows
) -> None:
    for cand_dir in _subdirs(root, folder):
        candidate = cand_dir.name
        _, meta = manifest.get((phase, candidate)) or manifest.get(("", candidate)) or (0, {})
        participant = meta.get("participant") or candidate
        tasks = _subdirs(root, cand_dir)
        before = len(rows.where)
        if not tasks:
            rows.failed.append(Failure(phase, candidate, "", "no task directories"))
        for task_dir in tasks:
            scores_path = _scores_file(root, task_dir)
            if scores_path is None:
                rows.failed.append(Failure(phase, candidate, task_dir.name, _failure(root, task_dir)))
                continue
            scores = read_scores_file(scores_path)
            if not scores:
                rows.failed.append(Failure(phase, candidate, task_dir.name,
                                           f"{scores_path.name} holds no scores"))
            flag = _first_line(root, task_dir / FLAG_FILE)
            if flag is not None:
                rows.flagged.append(Flag(phase, candidate, task_dir.name,
                                         flag or "the prediction step failed"))
            for metric, value in scores.items():
                rows.add(
                    str(scores_path),
                    phase,
                    candidate,
                    participant,
                    task_dir.name,
                    metric,
                    value,
                    meta.get("submitted_at"),
                    bool(meta.get("is_baseline", False)),
                )
        if len(rows.where) == before:  # every run failed: still a submission of the phase
            rows.unscored.append(_member(phase, candidate, {**meta, "participant": participant}))


def _member(phase: str, candidate: str, meta: dict[str, Any]) -> Unscored:
    """A submission without any score, with what the manifest says of it."""
    return Unscored(phase, candidate, meta.get("participant") or candidate,
                    meta.get("submitted_at"), bool(meta.get("is_baseline", False)))


def _why_empty(root: Path, manifest: dict[tuple[str, str], tuple[int, dict[str, Any]]]) -> str:
    """Why a tree with a manifest holds no scores: the export that fed it was empty (with
    the leaderboard's ``submission_rule`` when ``codabench.json`` records it)."""
    if manifest or not (root / MANIFEST).is_file():
        return ""
    rules = set()
    try:
        phases = load_json(check_inside(root, root / COLUMNS_FILE, shown=COLUMNS_FILE)).get("phases", [])
        rules = {p["leaderboard"].get("submission_rule") for p in phases
                 if isinstance(p, dict) and isinstance(p.get("leaderboard"), dict)} - {None}
    except (InputError, OSError, AttributeError):
        pass
    why = (f": its {MANIFEST} lists no submission, so the results export that fed it was empty "
           "(no submission was on the leaderboard")
    manual = rules & {"Add", "Add_And_Delete", "Add_And_Delete_Multiple"}
    if manual:
        rule = sorted(manual)[0]
        return (f"{why}: under the leaderboard's submission_rule {rule!r} nothing reaches it "
                "without a click; set submission_rule: Force_Last in competition.yaml, or put "
                "the submissions on the leaderboard)")
    return f"{why}: every submission failed, or none was made)"


def _failure(root: Path, task_dir: Path) -> str:
    """Why a task folder has no scores: the first line of its ``error.txt``, if any."""
    return _first_line(root, task_dir / FAILURE_FILE) or "no scores.json or scores.txt"


def _first_line(root: Path, path: Path) -> str | None:
    """The first line of a note file (at most 1000 characters; ``""`` when empty), or
    ``None`` when there is no such file."""
    if not (path.is_file() or path.is_symlink()):
        return None
    check_inside(root, path, shown=str(path.relative_to(root)))
    lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return lines[0][:1000] if lines else ""


def _read_manifest(root: Path) -> dict[tuple[str, str], tuple[int, dict[str, Any]]]:
    """``<root>/submissions.csv``: ``(phase, candidate) -> (line, metadata)``."""
    path = root / MANIFEST
    if not (path.exists() or path.is_symlink()):
        return {}
    path = check_inside(root, path, shown=MANIFEST)
    lines = csv_rows(path)
    _, header = csv_header(path, lines)
    try:
        cols = column_index(header, ("phase", "candidate", "participant", "submitted_at", "is_baseline"))
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    require_columns(cols, ("candidate",), path, header)
    manifest: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
    for n, row in lines:
        at = f"{path}, line {n}"
        key = (text_cell(cell_at(row, cols.get("phase"))), text_cell(cell_at(row, cols["candidate"])))
        if not key[1]:
            raise InputError(f"{at}: the candidate is empty.")
        if key in manifest:
            raise InputError(
                f"{at}: candidate {key[1]!r} is listed twice (first at line {manifest[key][0]})."
            )
        manifest[key] = (
            n,
            {
                "participant": optional_text_cell(cell_at(row, cols.get("participant"))),
                "submitted_at": time_cell(cell_at(row, cols.get("submitted_at")), f"{at}, column 'submitted_at'"),
                "is_baseline": flag_cell(cell_at(row, cols.get("is_baseline")), f"{at}, column 'is_baseline'"),
            },
        )
    return manifest


#: The record of format ``tree`` (:mod:`.input_format`): any directory.
TREE_FORMAT = InputFormat("tree", lambda s, rows: read_tree(s.path, s.phase, rows),
                          by_path=Path.is_dir, directory=True)


def manifest_text(rows: Iterable[tuple[str, str, str, str | None, bool]]) -> str:
    """The text of ``submissions.csv`` for ``(phase, candidate, participant, submitted_at,
    is_baseline)`` rows: names as text a spreadsheet does not run (this module's reader takes
    the quote back off)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(MANIFEST_COLUMNS)
    for phase, candidate, participant, when, baseline in rows:
        writer.writerow([spreadsheet_text(phase), spreadsheet_text(candidate), spreadsheet_text(participant),
                         when or "", "true" if baseline else "false"])
    return buf.getvalue()
