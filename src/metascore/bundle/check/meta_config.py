"""The meta-ranking's ``metascore.yaml`` checked against the competition it ranks.

A task whose reference data holds ``metascore.yaml`` is a **meta task** (its phase is the
meta phase, e.g. the template's "Final ranking"). On Codabench that phase runs after the
competition has ended, so a typo found there is found too late. :func:`check_meta_configs`
finds each meta task's configuration and reports:

errors (the meta phase would fail, or rank something else than the organizer meant)
    the configuration itself (read and validated by :func:`metascore.config.load_config`:
    unknown keys, the ranking method and its parameters through the registry, directions
    ``higher | lower``, ...); ``phases.development`` / ``phases.final`` that are not phases
    of ``competition.yaml``; a judge whose task is not a task of its phase(s), whose metric
    is not a leaderboard column key, whose direction contradicts the column's ``sorting``
    (given, or the default ``higher`` when none is given and the input is a results export,
    which does not carry the sorting), or whose ``title`` is not the column's title; a ``beat_baseline`` filter with no baseline anywhere (starting kit,
    submissions manifest, ``baselines:``).
warnings (accepted, but not what was meant)
    an ``output.scores`` key with no leaderboard column (Codabench drops it); an
    ``output.scores`` statistic that needs a final phase (``n_qualified``, ...) while
    ``phases.final`` is null (it is undefined, so never written); a judge without direction
    whose column sorts the other way, when the input is a tree (which may carry the sorting
    in ``codabench.json``); no
    ``judges:`` while a leaderboard column is ``sorting: asc`` (every column would be ranked
    higher-is-better); a ``baselines:`` name that no local submission has (``bundle run``
    fails on it unless its ``--submissions`` hold one, which ``bundle check --submissions``
    checks; on Codabench it must be the account that submits the baseline); a judge
    without ``title`` whose column's title differs from its key, when the input is a site
    export (the export names columns by title).
"""

from __future__ import annotations

import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ...config import FINAL_PHASE_STATISTICS, Config, load_config
from ...errors import ConfigError, did_you_mean
from ...readers.formats import SITE_EXPORTS
from ...config import CONFIG_NAME
from ..schema.competition import Competition, Phase, Task
from .baselines import unknown_baseline_text
from ..site.submissions import Submission

__all__ = ["EXPORT_FORMATS", "MetaConfig", "find_meta_configs", "check_meta_configs"]

#: Input formats of a meta configuration that mean "a site export" (None = detect).
EXPORT_FORMATS = (None, *SITE_EXPORTS)


@dataclass(frozen=True)
class MetaConfig:
    """A meta task, where its configuration is, and the configuration (``None``: invalid)."""

    phase: Phase
    task: Task
    where: str
    config: Config | None
    error: str | None = None


def find_meta_configs(comp: Competition) -> list[MetaConfig]:
    """Every meta task of the competition with its validated configuration (or the error)."""
    found = []
    for phase in comp.phases:
        for task in comp.phase_tasks(phase):
            ref = comp.path(task.reference_data)
            if ref is None or not ref.exists():
                continue
            where = f"{task.reference_data.rstrip('/')}/{CONFIG_NAME}"
            try:
                config = _load(ref, where)
            except ConfigError as exc:
                found.append(MetaConfig(phase, task, where, None, str(exc)))
                continue
            if config is not None:
                found.append(MetaConfig(phase, task, where, config))
    return found


def _load(ref: Path, where: str) -> Config | None:
    """The configuration in a reference-data folder or zip, or ``None`` when it has none."""
    if ref.is_dir():
        path = ref / CONFIG_NAME
        return load_config(path, source=where) if path.is_file() else None
    if not zipfile.is_zipfile(ref):
        return None
    with zipfile.ZipFile(ref) as zf:
        if CONFIG_NAME not in zf.namelist():
            return None
        with tempfile.TemporaryDirectory(prefix="metascore-config-") as tmp:
            return load_config(zf.extract(CONFIG_NAME, tmp), source=where)


def check_meta_configs(
    comp: Competition, metas: Sequence[MetaConfig], submissions: Sequence[Submission] = (),
    folder: Path | None = None,
) -> tuple[list[str], list[str]]:
    """Errors and warnings of each meta task's configuration against ``comp``.

    ``submissions``: what a local run would submit (starting-kit baselines, solutions,
    ``sample_submissions/`` or the folder ``folder`` given as ``--submissions``:
    :func:`~metascore.bundle.site.submissions.collect_submissions`), to tell whether the
    baselines exist.
    """
    errors: list[str] = []
    warnings: list[str] = []
    for meta in metas:
        if meta.config is None:  # the message names the file (and the key)
            errors.append(str(meta.error))
            continue
        check = _Check(comp, meta, errors, warnings)
        phases = check.phases()
        check.judges(phases)
        check.scores()
        check.baselines(submissions, folder)
    return errors, warnings


class _Check:
    def __init__(self, comp: Competition, meta: MetaConfig, errors: list[str], warnings: list[str]) -> None:
        self.comp, self.meta, self.config = comp, meta, meta.config
        self.errors, self.warnings = errors, warnings
        board = comp.leaderboard
        self.columns = {c.key: c for c in board.columns} if board is not None else {}

    def error(self, text: str) -> None:
        self.errors.append(f"{self.meta.where}: {text}")

    def warn(self, text: str) -> None:
        self.warnings.append(f"{self.meta.where}: {text}")

    def phases(self) -> dict[str, Phase]:
        """The phases the configuration ranks, by name (the ones that exist)."""
        names = [p.name for p in self.comp.phases if p is not self.meta.phase]
        wanted = {"phases.development": self.config.phases.development,
                  "phases.final": self.config.phases.final}
        found = {}
        for key, name in wanted.items():
            if name is None:
                continue
            phase = next((p for p in self.comp.phases if p.name == name and p is not self.meta.phase), None)
            if phase is None:
                self.error(f"`{key}` {name!r} is not a phase of competition.yaml"
                           f"{did_you_mean(name, names)} (phases: {', '.join(map(repr, names))}).")
            else:
                found[name] = phase
        return found

    def judges(self, phases: dict[str, Phase]) -> None:
        judges = self.config.judges
        data_columns = [c for c in self.columns.values() if c.key not in self.config.scores]
        if judges is None:
            asc = [c.key for c in data_columns if c.sorting == "asc"]
            if asc:
                self.warn(f"no `judges:`, so every (task, column) found is ranked higher-is-better, "
                          f"but column(s) {', '.join(map(repr, asc))} have sorting: asc; list the "
                          "judges with their directions.")
            return
        for i, judge in enumerate(judges):
            head = f"judges[{i}] ({judge.key!r})"
            scope = [judge.phase] if judge.phase else list(phases)
            for name in scope:
                phase = phases.get(name)
                if phase is None:
                    if judge.phase:
                        self.error(f"{head}: phase {name!r} is not a ranked phase "
                                   f"({', '.join(map(repr, phases)) or 'none'}).")
                    continue
                tasks = [t.name for t in self.comp.phase_tasks(phase)]
                if judge.task not in tasks:
                    self.error(f"{head}: task {judge.task!r} is not a task of phase {name!r}"
                               f"{did_you_mean(judge.task, tasks)} (its tasks: "
                               f"{', '.join(map(repr, tasks))}).")
            if not judge.metric or not self.columns:
                continue
            column = self.columns.get(judge.metric)
            if column is None:
                keys = [c.key for c in data_columns]
                self.error(f"{head}: metric {judge.metric!r} is not a leaderboard column key"
                           f"{did_you_mean(judge.metric, keys)} (keys: {', '.join(map(repr, keys))}).")
                continue
            if column.dropped_computation:
                self.error(f"{head}: leaderboard column {column.key!r} is a CodaLab v1 computed column "
                           f"({column.dropped_computation} of other columns): Codabench does not compute "
                           "it and no scoring program writes it, so it has no score to rank by; remove "
                           "this judge.")
                continue
            if column.higher_is_better != judge.higher_is_better and not judge.direction_set:
                # an export has no sorting: the default applies; a tree may carry codabench.json
                report = self.error if self.config.input.format in EXPORT_FORMATS else self.warn
                report(f"{head}: no direction given, so the default, higher is better, applies "
                       "wherever the input does not carry the columns' sorting (a Codabench results "
                       f"export does not), but leaderboard column {column.key!r} has sorting: "
                       f"{column.sorting}; add direction: "
                       f"{'higher' if column.higher_is_better else 'lower'} to this judge.")
            elif column.higher_is_better != judge.higher_is_better:
                said = "higher" if judge.higher_is_better else "lower"
                self.error(f"{head}: direction {said}, but leaderboard column {column.key!r} has "
                           f"sorting: {column.sorting} ({'higher' if column.higher_is_better else 'lower'}"
                           " is better); make them agree.")
            if judge.title is not None and judge.title != column.title:
                self.error(f"{head}: title {judge.title!r}, but leaderboard column {column.key!r} "
                           f"has title {column.title!r}; a results export names the column by "
                           "its title, so they must be equal.")
            elif (judge.title is None and column.title != column.key
                  and self.config.input.format in EXPORT_FORMATS):
                self.warn(f"{head}: a Codabench results export names column {column.key!r} by "
                          f"its title ({judge.task}(<task id>)-{column.title}), so this judge "
                          f"finds no score there; add title: {column.title!r} to it.")

    def scores(self) -> None:
        if self.config.phases.final is None:  # one phase: the filter applies within it
            for key, stat in self.config.scores.items():
                if stat == "dev_final_kendall_tau" or (stat in FINAL_PHASE_STATISTICS
                                                       and self.config.filter.rule == "none"):
                    why = ("compares two phases" if stat == "dev_final_kendall_tau"
                           else "is the filter's, and the filter rule is 'none'")
                    self.warn(f"`output.scores` key {key!r} ({stat}): `phases.final` is null and "
                              f"{stat} {why}, so it is undefined: scores.json omits it and its "
                              "leaderboard column stays empty. Remove the key, or name the final "
                              "phase in `phases.final`.")
        if not self.columns:
            return
        for key, stat in self.config.scores.items():
            if key not in self.columns:
                self.warn(f"`output.scores` key {key!r} ({stat}) has no leaderboard column"
                          f"{did_you_mean(key, self.columns)}; Codabench drops it. Add a column "
                          f"with key: {key} or remove it.")

    def baselines(self, submissions: Sequence[Submission], folder: Path | None) -> None:
        participants = {s.participant for s in submissions}
        for name in self.config.baselines:
            if name in participants:
                continue
            local = [s.participant for s in submissions if s.candidate == name]
            if local:  # the export, and bundle run's meta phase, name it <owner>-<id>
                self.warn(f"baseline {name!r} (`baselines:`) is the name of a local submission, "
                          "which the meta phase never sees: Codabench's results export (and "
                          "`bundle run`'s meta phase) names each submission <owner>-<id>; list its "
                          f"participant {local[0]!r} (the account that submits it) instead.")
                continue
            self.warn(f"baseline {name!r} (`baselines:`): {unknown_baseline_text(name, folder)}")
        flagged = any(s.is_baseline for s in submissions)
        if self.config.filter.rule == "beat_baseline" and not (self.config.baselines or flagged):
            self.error("filter rule beat_baseline needs a baseline, and there is none: no "
                       "starting-kit submission, no is_baseline in the submissions manifest, no "
                       "`baselines:` (list the account that submits the baseline).")
