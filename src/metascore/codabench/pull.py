"""``metascore codabench pull``: a live competition's scores as a scoring-output tree.

What is written (``--out DIR``), so that ``metascore rank --config DIR/metascore.yaml
--input DIR`` and the meta-scoring program (DIR zipped and submitted as the result
submission) read it unchanged::

    DIR/<phase>/<owner>-<id>/<task>/scores.json   one per scored task of each leaderboard
                                                  submission; the keys are the leaderboard
                                                  column keys, as the task's scoring program
                                                  wrote them (a task without a score has none)
    DIR/submissions.csv       phase, candidate, participant, submitted_at, is_baseline
    DIR/metascore.yaml        the configuration to rank with: --config's (or the defaults)
                              with the judges and their directions taken from the columns'
                              ``sorting`` when it lists none
    DIR/codabench.json        provenance: site, competition, phases, tasks, columns,
                              baselines, judges, pull time
    DIR/<board> - <phase>(<id>).json   each phase's results export, as the site sent it

A candidate is the export's row key ``<owner>-<submission id>`` (the parent's id for a
multi-task submission; as a folder name, ``%``, ``/``, a backslash and a leading ``.`` are
percent-encoded, :func:`submission_folder`: an account an identity provider made may have any
character in its name, and one participant's name must not stop the pull); its time is the submission's ``created_when``. Hidden columns are
pulled but become judges only when the configuration lists them; computed columns are
never judges (they are per-row aggregates of the others).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..bundle.files import new_folder
from ..readers.columns import COLUMNS_FILE
from ..config import CONFIG_NAME, Config, FilterConfig, InputConfig, JudgeConfig, PhasesConfig, parse_config
from ..errors import InputError, did_you_mean
from ..readers.tree import MANIFEST, manifest_text
from ..readers.table import unicode_text
from ..readers.columns import Column
from .api import (
    CompetitionInfo, ExportRow, LeaderboardInfo, PhaseInfo, SubmissionInfo, parse_competition,
    parse_results, parse_submissions,
)
from .client import Client, PlatformError

__all__ = ["Pulled", "pull", "fetch_competition", "find_phase", "new_directory", "write", "submission_folder",
           "PROVENANCE_NAME", "task_folders", "scores_files", "manifest_csv", "phase_provenance"]

PROVENANCE_NAME = COLUMNS_FILE  # the competition's columns, read back by metascore.readers.columns
Log = Callable[[str], None]


@dataclass
class Pulled:
    """Everything a pull gathered: the files to write and the configuration to rank with."""

    competition: CompetitionInfo
    phases: list[PhaseInfo]
    config: Config
    files: dict[str, str] = field(default_factory=dict)


def fetch_competition(client: Client, competition_id: int) -> CompetitionInfo:
    """``GET /api/competitions/<id>/``, parsed; a 404 says what it means."""
    what = f"competition {competition_id}"
    try:
        data = client.get_json(f"/api/competitions/{competition_id}/", what=what)
    except PlatformError as exc:
        if exc.status != 404:
            raise
        raise PlatformError(f"{client.site} has no competition {competition_id} that this token "
                            "can see (check --competition: the number in the competition's "
                            "address; a private competition needs an organizer's token).", 404) from None
    return parse_competition(data, what)


def pull(
    client: Client,
    competition_id: int,
    *,
    phases: Sequence[str] = (),
    baselines: Sequence[str] = (),
    config: Config | None = None,
    log: Log = print,
) -> Pulled:
    """Download the chosen phases' exports and build the files :func:`write` puts in DIR.

    Phases: ``phases`` when given, else the configuration's development and final phases,
    else the competition's first two phases.
    """
    pulled_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")  # before any row is read
    comp = fetch_competition(client, competition_id)
    log(f"[*] competition {comp.id}: {comp.title!r}, phases {[p.name for p in comp.phases]}")
    chosen, why = _choose_phases(comp, phases, config)
    log(f"[*] pulling phases {[p.name for p in chosen]}: {why}")
    if not comp.leaderboards:
        raise PlatformError(
            f"competition {comp.id} shows no leaderboard to this token: its leaderboard is "
            "hidden (a blind phase), which only organizers and collaborators can read; use the "
            "API token of one of them."
        )
    got = _Gathered()
    for phase in chosen:
        got.add(phase, *_download(client, comp, phase), log=log)
    judges = _judges(got.found, got.boards)
    flagged = _baseline_flags(got.manifest, baselines)
    baseline_ids = sorted({c for (_, c, _, _), b in zip(got.manifest, flagged) if b})
    source = "the configuration" if config is not None and config.judges is not None \
        else "the columns' sorting"
    config = _complete_config(config, chosen, judges, any(flagged))
    log(f"[*] judges (from {source}): " + ", ".join(
        f"{j.key} {'higher' if j.higher_is_better else 'lower'}" + (f" [{j.phase}]" if j.phase else "")
        for j in config.judges or ()) + f"; baselines: {', '.join(baseline_ids) or 'none'}")
    files = got.files
    files[MANIFEST] = manifest_csv(got.manifest, flagged)
    files[CONFIG_NAME] = (f"# written by metascore codabench pull ({client.site}, competition "
                          f"{comp.id})\n" + yaml.safe_dump(config.to_dict(), sort_keys=False))
    files[PROVENANCE_NAME] = json.dumps({
        "site": client.site,
        "competition": {"id": comp.id, "title": comp.title},
        "pulled_at": pulled_at,
        "phases": got.provenance,
        "baselines": baseline_ids,
        "judges": config.to_dict()["judges"],
    }, indent=2) + "\n"
    return Pulled(comp, chosen, config, files)


@dataclass
class _Gathered:
    """What the pulled phases give, phase by phase: the files, the manifest's rows (phase,
    candidate, owner, time), the (task folder, column key) pairs scored and the columns of
    each phase, and each phase's provenance."""

    files: dict[str, str] = field(default_factory=dict)
    manifest: list[tuple[str, str, str, str | None]] = field(default_factory=list)
    found: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    boards: dict[str, dict[str, Column]] = field(default_factory=dict)
    provenance: list[dict[str, Any]] = field(default_factory=list)

    def add(self, phase: PhaseInfo, board: LeaderboardInfo, rows: list[ExportRow],
            subs: dict[int, SubmissionInfo], export: Any, *, log: Log) -> None:
        # a name that is not valid Unicode (a lone surrogate: no site stores one) cannot be
        # a file name: that submission is left out, the others are pulled
        bad = [r.key for r in rows if unicode_text(r.key) is not r.key]
        if bad:
            shown = ", ".join(unicode_text(k) for k in bad[:3]) + (", ..." if len(bad) > 3 else "")
            log(f"[!] phase {phase.name!r}: {len(bad)} submission(s) left out: their name is not "
                f"valid Unicode text (a lone surrogate) and cannot be a file name: {shown}")
            rows = [r for r in rows if unicode_text(r.key) is r.key]
        export_name = _check_name(f"{board.title} - {phase.name}({phase.id}).json", "leaderboard/phase")
        self.files[export_name] = json.dumps(export, indent=4) + "\n"
        folders = task_folders(phase)
        self.boards[phase.name] = {c.key: c for c in board.columns}
        order = {tid: n for n, tid in enumerate(folders)}  # the phase's task order
        scored = {(tid, key) for row in rows for tid, key in row.scores}
        self.found[phase.name] = [(folders[tid], key) for tid, key in sorted(
            scored, key=lambda tk: (order[tk[0]], self.boards[phase.name][tk[1]].index))]
        for row in rows:
            sub = subs.get(row.submission_id)
            self.manifest.append((phase.name, submission_folder(row.key), row.owner,
                                  sub.created_when if sub else None))
            self.files.update(scores_files(phase, row, board, folders))
        log(f"[*] phase {phase.name!r}: {len(rows)} submissions on leaderboard {board.title!r}"
            f"{' (hidden: a blind phase, read with organizer rights)' if board.hidden else ''}, "
            f"tasks {[t.name for t in phase.tasks]}")
        missing = [r.key for r in rows if r.submission_id not in subs]
        if missing:
            log(f"[!] phase {phase.name!r}: no submission time for {missing} (not in the "
                "submissions list)")
        self.provenance.append(phase_provenance(phase, board, folders, export_name, len(rows)))


def _download(
    client: Client, comp: CompetitionInfo, phase: PhaseInfo
) -> tuple[LeaderboardInfo, list[ExportRow], dict[int, SubmissionInfo], Any]:
    """A phase's leaderboard, its export rows with a score, its submissions, the raw export."""
    what = f"results export of phase {phase.name!r} (id {phase.id})"
    export = client.get_json(f"/api/competitions/{comp.id}/results.json", {"phase": phase.id}, what=what)
    board, rows = parse_results(export, what, phase, comp.leaderboards)
    rows = [r for r in rows if r.scores]
    if not rows:
        raise PlatformError(
            f"phase {phase.name!r} (id {phase.id}): the results export is empty: no "
            "submission of this phase is on the leaderboard with a score (has the phase "
            "run? with submission_rule Add, participants add their submissions by hand)."
        )
    what = f"submissions of phase {phase.name!r} (id {phase.id})"
    subs = parse_submissions(client.get_json("/api/submissions/", {"phase": phase.id}, what=what), what)
    return board, rows, subs, export


def scores_files(phase: PhaseInfo, row: ExportRow, board: LeaderboardInfo,
                  folders: dict[int, str], folder: str | None = None) -> dict[str, str]:
    """``<phase>/<candidate>/<task>/scores.json`` for each task the row has scores for;
    ``folder``: the candidate's folder (default: :func:`submission_folder` of the row's key)."""
    folder = submission_folder(row.key) if folder is None else folder
    files = {}
    for task in phase.tasks:
        scores = {c.key: row.scores[(task.id, c.key)] for c in board.columns
                  if (task.id, c.key) in row.scores}
        if scores:
            path = f"{_check_name(phase.name, 'phase')}/{folder}/" \
                   f"{folders[task.id]}/scores.json"
            files[path] = json.dumps(scores, indent=2) + "\n"
    return files


def _choose_phases(
    comp: CompetitionInfo, names: Sequence[str], config: Config | None
) -> tuple[list[PhaseInfo], str]:
    """The phases to pull and why those: ``--phase``, else the configuration's development
    and final phases, else the competition's first two phases."""
    why = "named by --phase"
    if not names and config is not None:
        names = [n for n in (config.phases.development, config.phases.final) if n is not None]
        why = "the configuration's phases.development and phases.final (--phase to choose others)"
    if not names:
        first = sorted(comp.phases, key=lambda p: p.index)[:2]
        return first, (f"no --phase and no configuration, so the competition's first "
                       f"{'two phases' if len(first) == 2 else 'phase'}; choose others with "
                       "--phase (`metascore codabench phases` lists them)")
    return [find_phase(comp, name) for name in dict.fromkeys(names)], why


def find_phase(comp: CompetitionInfo, name: str) -> PhaseInfo:
    """The phase called ``name``; an unknown name is an error listing the phases."""
    phase = comp.phase(name)
    if phase is None:
        known = [p.name for p in comp.phases]
        raise PlatformError(f"competition {comp.id} has no phase {name!r}"
                            f"{did_you_mean(name, known)}; its phases are {known}.")
    return phase


def task_folders(phase: PhaseInfo) -> dict[int, str]:
    """Task id -> folder: the task's name, or ``name(id)`` when two tasks share it."""
    names = [t.name for t in phase.tasks]
    return {t.id: _check_name(t.name if names.count(t.name) == 1 else f"{t.name}({t.id})", "task")
            for t in phase.tasks}


def submission_folder(key: str) -> str:
    """The folder (and candidate) name of a submission's row key ``<owner>-<id>``: the key, with
    ``%``, ``/`` and ``\\`` percent-encoded, and a leading ``.`` (a participant's username may
    hold any of them; the participant's own name stays in ``submissions.csv``)."""
    text = key.replace("%", "%25").replace("/", "%2F").replace("\\", "%5C").replace("\0", "%00")
    return "%2E" + text[1:] if text.startswith(".") else text


def _check_name(name: str, what: str) -> str:
    if not name.strip() or name.startswith(".") or "/" in name or "\\" in name or "\0" in name:
        raise PlatformError(f"{what} name {name!r} cannot be a folder name (it is empty, starts "
                            "with a dot or holds a slash); rename it on the platform.")
    if unicode_text(name) is not name:
        raise PlatformError(f"{what} name {name!r} is not valid Unicode text (it holds a lone "
                            "surrogate); rename it on the platform.")
    return name


def _judges(found: dict[str, list[tuple[str, str]]], columns: dict[str, dict[str, Column]]) -> list[JudgeConfig]:
    """(task, column) pairs with a score, visible and not computed; ``phase`` set when a
    pair is scored in some pulled phases only."""
    per_phase = {
        phase: [(t, k) for (t, k) in pairs if not columns[phase][k].hidden
                and not columns[phase][k].computation]
        for phase, pairs in found.items()
    }
    everywhere = set.intersection(*(set(p) for p in per_phase.values())) if per_phase else set()
    judges: dict[tuple[str, str, str | None], JudgeConfig] = {}
    for phase, pairs in per_phase.items():
        for task, key in pairs:
            only = None if (task, key) in everywhere else phase
            higher = columns[phase][key].higher_is_better
            judges.setdefault((task, key, only), JudgeConfig(task, key, higher, 1.0, only))
    return list(judges.values())


def _complete_config(config: Config | None, phases: list[PhaseInfo], judges: list[JudgeConfig],
                     has_baselines: bool) -> Config:
    """The configuration to rank the pulled tree with (checked by :func:`parse_config`).

    Without ``config``: the defaults, the pulled phases (development, final) and filter
    ``beat_baseline`` when baselines were flagged, else ``none``.
    """
    if config is None:
        config = Config(
            phases=PhasesConfig(phases[0].name, phases[1].name if len(phases) > 1 else None),
            filter=FilterConfig(rule="beat_baseline" if has_baselines else "none"),
        )
    directions = {(j.task, j.metric): j.higher_is_better for j in judges}
    if config.judges is None:
        if not judges:
            raise PlatformError("no leaderboard column has a score in the pulled phases, so "
                                "there is nothing to rank on.")
        config = dataclasses.replace(config, judges=tuple(judges))
    else:
        for j in config.judges:
            higher = directions.get((j.task, j.metric))
            if higher is not None and higher != j.higher_is_better:
                raise InputError(
                    f"judge {j.key!r}: the configuration says {'higher' if j.higher_is_better else 'lower'}"
                    f" is better, but the competition's column {j.metric!r} sorts "
                    f"{'desc' if higher else 'asc'}; fix the judge's direction (or drop the "
                    "judges to take them from the competition)."
                )
    config = dataclasses.replace(config, input=InputConfig("tree", "."))
    return parse_config(config.to_dict(), source="the pulled configuration")


def _baseline_flags(manifest: list[tuple[str, str, str, str | None]], baselines: Sequence[str]) -> list[bool]:
    names = {c for _, c, _, _ in manifest} | {o for _, _, o, _ in manifest}
    for name in baselines:
        if name not in names:
            raise InputError(f"--baseline {name!r} is neither a submission ('<owner>-<id>') nor an "
                             f"owner in the pulled phases{did_you_mean(name, sorted(names))}.")
    wanted = set(baselines)
    return [c in wanted or o in wanted for _, c, o, _ in manifest]


def manifest_csv(manifest: list[tuple[str, str, str, str | None]], flags: list[bool]) -> str:
    """``submissions.csv`` of the pulled rows, each flagged as a baseline or not."""
    return manifest_text((*row, flag) for row, flag in zip(manifest, flags))


def phase_provenance(phase: PhaseInfo, board: LeaderboardInfo, folders: dict[int, str],
                      export: str, n: int) -> dict[str, Any]:
    return {
        "id": phase.id, "name": phase.name, "start": phase.start, "end": phase.end,
        "export": export, "submissions": n,
        "tasks": [{"id": t.id, "name": t.name, "folder": folders[t.id]} for t in phase.tasks],
        "leaderboard": {"id": board.id, "title": board.title, "hidden": board.hidden, "columns": [
            {"key": c.key, "title": c.title, "index": c.index, "sorting": c.sorting,
             "hidden": c.hidden, "computation": c.computation} for c in board.columns]},
    }


# ---------------------------------------------------------------------- writing
@contextmanager
def new_directory(out: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a staging folder that becomes ``out`` only if the block succeeds.

    ``out`` must not exist or be an empty folder; on any error nothing is left behind.
    """
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(f"{out} already exists and is not an empty folder; give a new --out.")
    out.parent.mkdir(parents=True, exist_ok=True)
    with new_folder(out, Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))) as stage:
        yield stage


def write(files: dict[str, str], folder: Path) -> None:
    """Write ``{relative path: text}`` under ``folder`` (a staging folder)."""
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
