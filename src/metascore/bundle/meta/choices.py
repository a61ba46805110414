"""The ``metascore.yaml`` that ``metascore bundle add-meta`` writes, decided from the bundle.

:func:`plan_config` reads a parsed competition (without its meta phase) and the organizer's
choices (:class:`MetaChoices`) and returns a :class:`ConfigPlan`: the file's text, with a
comment on each section, the leaderboard columns the meta-scoring program will write, and
one note per decision an organizer should know about:

- **phases**: the last two phases (development = the one before the last, final = the
  last); one phase: ``final: null``; ``--phases`` chooses; with more than two, a note shows
  each phase with its reference data, migration and the submissions a local run makes there
  (:func:`~metascore.bundle.site.submissions.phases_reached`), and the choice made;
- **judges**: every leaderboard column on every task of the ranked phases, with the
  direction of its ``sorting`` (``desc`` = higher is better; a column without ``sorting``
  sorts descending on Codabench, said), except computed columns, timing columns (a key or
  title like ``duration``, ``time``, ``elapsed``: a judge only with ``--judges``) and the
  meta phase's own output columns; judges carry a ``phase:`` when the two phases' task
  names differ (Codabench v1 names each phase's task ``"<phase> Task"``);
- **baseline**: the starting kit's submission (participant ``baseline`` in a local run),
  a submission flagged ``is_baseline`` in ``sample_submissions/`` (or the folder
  ``MetaChoices.submissions`` names, as ``bundle run --submissions``), else the first
  solution (participant ``organizer``); none: ``filter: none``, said; a ``--baseline`` that
  no local submission has is said with what ``bundle run`` then does;
- **filter**: ``beat_baseline`` with a baseline that runs in the development phase, else
  ``none`` (said, with where the baseline runs); ``--filter`` chooses (``beat_baseline``,
  ``top_k:K``, ``top_k:auto``, ``none``). With ``none`` the development phase plays no part:
  the final phase is ranked on its own (``phases: {development: null, final: FINAL}``), on
  its judges only. A baseline whose files are the development phase's reference answers
  scores the best possible there, so nobody would qualify: a note says so
  (:func:`~metascore.bundle.check.baselines.unbeatable_notes`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...config import RankingConfig
from ...errors import ConfigError, did_you_mean
from ...registry import DEFAULT_SEED, get_ranking_method
from ..schema.competition import Competition, Phase
from ...readers.columns import Column
from ...leaderboard.filtering import proposed_k
from ..check.baselines import Placed, unbeatable_notes, unknown_baseline_text
from ..site.submissions import Submission, kit_rule_text, phases_reached
from .baseline_files import GIVEN_BASELINE, SAMPLES, given_baselines
from .yaml_text import flow

__all__ = ["MetaChoices", "MetaColumn", "ConfigPlan", "plan_config", "is_timing_column", "FILTER_CHOICES"]

#: ``--filter`` values (``top_k:K`` with K a positive integer or ``auto``).
FILTER_CHOICES = ("beat_baseline", "top_k:K", "top_k:auto", "none")
#: Methods whose comparison costs milliseconds (docs/configuration.md, ``analysis``).
_CHEAP = ("average_rank", "copeland", "success_rate", "mean")
_TIMING = re.compile(r"(^|[^a-z])(duration|time|times|elapsed|runtime|seconds|secs?|walltime)"
                     r"($|[^a-z])", re.IGNORECASE)
#: The statistics the meta phase writes, and its leaderboard column titles.
_TITLES = {"n_qualified": "Qualified candidates", "n_candidates": "Ranked candidates"}


@dataclass(frozen=True)
class MetaChoices:
    """What the organizer decides (``None``: add-meta decides from the bundle)."""

    method: str | None = None                 # None: RankingConfig.method
    baselines: tuple[str, ...] | None = None  # () or ("none",): no baseline
    judges: tuple[str, ...] | None = None     # column keys (or titles)
    exclude: tuple[str, ...] = ()
    filter: str | None = None
    phases: tuple[str, ...] | None = None     # (development,) or (development, final)
    #: the submissions folder a local run will use (``bundle run --submissions``) instead
    #: of ``sample_submissions/``, to find the baselines (None: the bundle's)
    submissions: Path | None = None
    #: the leaderboards' eye icons (``--eye-icons``): "keep" them (Codabench's default) or
    #: "hide" them all (``show_detailed_results_in_leaderboard: false``)
    eye_icons: str = "keep"
    #: baseline submissions given as files (``--baseline FILE``: a zip or folder): copied to
    #: ``sample_submissions/<development phase>/`` and run there as participant ``baseline``
    baseline_files: tuple[Path, ...] = ()


@dataclass(frozen=True)
class MetaColumn:
    """A leaderboard column the meta-scoring program writes (``output.scores``)."""

    key: str
    statistic: str
    title: str


@dataclass
class ConfigPlan:
    """What :func:`plan_config` decided: the file, the columns, the notes."""

    text: str
    columns: list[MetaColumn]
    method: str
    development: str
    final: str | None
    judges: list[dict]
    baselines: list[str]
    filter_rule: str
    notes: list[str] = field(default_factory=list)
    #: where each ``--baseline FILE`` goes in the bundle (its path under
    #: ``sample_submissions/<development phase>/``) -> the submission a local run makes of it
    given: dict[str, Submission] = field(default_factory=dict)

    @property
    def summary(self) -> str:
        ranked = (f"{self.development!r} on its own" if self.final is None
                  else f"{self.final!r} (filter on {self.development!r})")
        columns = ", ".join(dict.fromkeys(j["metric"] for j in self.judges))
        base = f", baselines {', '.join(self.baselines)}" if self.baselines else ""
        return (f"ranks {ranked} by {self.method}, judges {columns} ({len(self.judges)} column-task "
                f"pairs; each phase is ranked on its own tasks), filter {self.filter_rule}{base}")


def is_timing_column(col: Column) -> bool:
    """A column that measures time (``duration``, ``train_time``, ``Elapsed (s)``, ...)."""
    return bool(_TIMING.search(col.key) or _TIMING.search(col.title))


def plan_config(
    comp: Competition, phases: Sequence[Phase], choices: MetaChoices, *,
    columns: Sequence[Column], unsorted: Sequence[str], submissions: Sequence[Submission],
    taken_keys: Sequence[str], program_ref: str,
) -> ConfigPlan:
    """Decide the meta-ranking's configuration.

    ``phases``: the competition's phases without the meta phase; ``columns``: the
    leaderboard's columns without the meta phase's; ``unsorted``: keys of the columns whose
    ``sorting`` is not written; ``submissions``: what a local run would submit (for the
    baseline); ``taken_keys``: column keys the new output columns must not reuse;
    ``program_ref``: the meta-scoring program's folder, named in the file's header.
    """
    method = get_ranking_method(choices.method or RankingConfig.method).name
    notes: list[str] = []
    dev, final = _phases(phases, choices, notes)
    given = given_baselines(choices.baseline_files, dev)
    submissions = [*submissions, *(s for s in given.values() if s.candidate not in
                                   {o.candidate for o in submissions if o.phase == dev})]
    placed = [(s, phases_reached(s, comp, phases)) for s in submissions]
    baselines = _baselines(choices, submissions, notes)
    if len(phases) > 2:
        notes.append(_overview(comp, phases, dev, final, placed, columns))
    rule, k = _filter(choices, baselines, final, notes, dev, _baseline_phases(baselines, placed),
                      _kits_text(comp))
    if rule == "top_k" and k != "auto":
        notes.append(_top_k_note(int(k), dev, placed, baselines))
    alone = rule == "none" and final is not None  # the development phase plays no part
    if alone:
        notes.append(f"filter none: the final ranking ranks {final!r} on its own (phases: "
                     f"{{development: null, final: {final!r}}}), on its judges only; {dev!r} plays "
                     "no part.")
        dev, final = final, None
    judges, judged = _judges(comp, phases, dev, final, choices, columns, unsorted, notes)
    if rule == "beat_baseline":
        notes.extend(unbeatable_notes(comp, phases, dev, baselines, placed))
    stat = "n_qualified" if final is not None and rule != "none" else "n_candidates"
    out = [MetaColumn(_free_key(stat, taken_keys), stat, _TITLES[stat]),
           MetaColumn(_free_key("winner_score", taken_keys), "winner_score",
                      f"Winner score ({method})"[:36])]
    if method == "relative_difference":
        notes.append("method relative_difference divides by u + v: a negative score (an R², a "
                     "log-likelihood) stops the meta phase; prefer average_rank for such columns.")
    if method not in _CHEAP:
        notes.append(f"method {method}: its rank intervals re-rank 200 resampled matrices; if the "
                     "meta phase nears its time limit, lower analysis.bootstrap in metascore.yaml.")
    text = _render(method, dev, final, judges, judged, baselines, rule, k, out, program_ref,
                   _left_out(columns, judged), title=comp.title or None, alone=alone)
    return ConfigPlan(text, out, method, dev, final, judges, baselines,
                      rule if rule != "top_k" else f"top_k (k: {k})", notes,
                      given)


# ---------------------------------------------------------------------- phases
def _phases(phases: Sequence[Phase], choices: MetaChoices, notes: list[str]) -> tuple[str, str | None]:
    names = [p.name for p in phases]
    if choices.phases:
        for name in choices.phases:
            if name not in names:
                raise ConfigError(f"--phases: {name!r} is not a phase of competition.yaml"
                                  f"{did_you_mean(name, names)} (phases: {', '.join(map(repr, names))}).")
        if len(choices.phases) > 2 or len(set(choices.phases)) != len(choices.phases):
            raise ConfigError(f"--phases: give DEVELOPMENT[,FINAL], two different phases at most; "
                              f"got {','.join(choices.phases)!r}.")
        if len(choices.phases) == 2 and names.index(choices.phases[0]) > names.index(choices.phases[1]):
            raise ConfigError(f"--phases: {choices.phases[0]!r} comes after {choices.phases[1]!r} in "
                              "competition.yaml; give the development phase first.")
        dev, final = choices.phases[0], (choices.phases[1] if len(choices.phases) == 2 else None)
    elif len(names) == 1:
        dev, final = names[0], None
    else:
        dev, final = names[-2], names[-1]
    if final is None:
        notes.append(f"one phase: phases.final is null, so phase {dev!r} is ranked on its own "
                     "(the baseline filter, when there is one, compares each candidate with the "
                     f"baseline in {dev!r}).")
    return dev, final


# ---------------------------------------------------------------------- judges
def _judges(
    comp: Competition, phases: Sequence[Phase], dev: str, final: str | None, choices: MetaChoices,
    columns: Sequence[Column], unsorted: Sequence[str], notes: list[str],
) -> tuple[list[dict], list[Column]]:
    by_name = {c.key: c for c in columns} | {c.title: c for c in columns}
    for name in (*(choices.judges or ()), *choices.exclude):
        if name not in by_name:
            keys = [c.key for c in columns]
            raise ConfigError(f"--judges/--exclude: {name!r} is not a leaderboard column"
                              f"{did_you_mean(name, keys + [c.title for c in columns])} "
                              f"(keys: {', '.join(keys)}).")
    excluded = {by_name[n].key for n in choices.exclude}
    if choices.judges:
        judged = [c for c in columns if c.key in {by_name[n].key for n in choices.judges}]
    else:
        computed = [c.key for c in columns if c.computation or c.dropped_computation]
        timing = [c.key for c in columns if c.key not in computed and is_timing_column(c)]
        judged = [c for c in columns if c.key not in computed and c.key not in timing]
        if computed:
            notes.append(f"not judges: computed column(s) {', '.join(computed)} (a sum, average or "
                         "rank of other columns, not a score of its own; a CodaLab v1 computed "
                         "column stays empty on Codabench, which does not compute it).")
        if timing:
            notes.append(f"not judges: timing column(s) {', '.join(timing)} (how long a run took, "
                         "not how good it is; --judges KEY,... to rank on them).")
    judged = [c for c in judged if c.key not in excluded]
    if not judged:
        raise ConfigError("no leaderboard column is left to judge by (every column is computed, a "
                          "timing column or excluded); name them with --judges KEY,....")
    blank = [c.key for c in judged if c.key in unsorted]
    if blank:
        notes.append(f"column(s) {', '.join(blank)} have no sorting: Codabench sorts them "
                     "descending, so they are judged higher-is-better; if lower is better, add "
                     "sorting: asc to the column (v1: sort: asc) and run add-meta again with --force.")
    ranked = [p for p in phases if p.name in (dev, final)]
    tasks = {p.name: [t.name for t in comp.phase_tasks(p)] for p in ranked}
    same = len({tuple(sorted(t)) for t in tasks.values()}) == 1
    judges: list[dict] = []
    for phase in ranked:
        for task in tasks[phase.name]:
            for col in judged:
                judge = {"task": task, "metric": col.key, "title": col.title,
                         "direction": "higher" if col.higher_is_better else "lower"}
                if not same:
                    judge["phase"] = phase.name
                if judge not in judges:
                    judges.append(judge)
        if same:
            break
    multi = [name for name, t in tasks.items() if len(t) > 1]
    if multi:
        notes.append(f"phase(s) {', '.join(map(repr, multi))} have several tasks: each column is a "
                     "judge on each task (a task that does not write a column leaves it empty, "
                     "ranked worst); remove the judges that do not apply from metascore.yaml.")
    if not same:
        notes.append("the ranked phases have different task names, so each judge names its phase "
                     f"(tasks: {'; '.join(f'{p}: ' + ', '.join(t) for p, t in tasks.items())}).")
    return judges, judged


def _left_out(columns: Sequence[Column], judged: Sequence[Column]) -> list[str]:
    keys = {c.key for c in judged}
    return [c.key for c in columns if c.key not in keys]


# ---------------------------------------------------------------------- baseline and filter
def _baselines(choices: MetaChoices, submissions: Sequence[Submission], notes: list[str]) -> list[str]:
    if choices.baselines is not None:
        names = [n for n in choices.baselines if n.lower() != "none"]
        if choices.baseline_files and GIVEN_BASELINE not in names:
            names.append(GIVEN_BASELINE)
        known = {s.participant for s in submissions}  # the meta phase sees <owner>-<id> names
        unknown = [n for n in names if n not in known]
        if unknown:
            notes.append(f"baseline(s) {', '.join(unknown)} (--baseline): "
                         + unknown_baseline_text(unknown[0], choices.submissions))
        return names
    flagged = [s for s in submissions if s.is_baseline]
    if flagged:
        names = list(dict.fromkeys(s.participant for s in flagged))
        where = ", ".join(dict.fromkeys(s.origin if s.origin in ("starting kit", "--baseline FILE")
                                        else f"{Path(s.origin).name}/" for s in flagged))
        notes.append(f"baseline: {', '.join(names)} (from the {where}: {', '.join(s.candidate for s in flagged)}); "
                     "on Codabench, submit it from one account and put that account's name under "
                     "`baselines:` in metascore.yaml (a results export does not flag baselines).")
        return names
    solutions = [s for s in submissions if s.origin == "solutions"]
    if solutions:
        name = solutions[0].participant
        notes.append(f"baseline: the solution {solutions[0].candidate!r} (participant {name!r} in a "
                     "local run); on Codabench, submit it from one account and put that account's "
                     "name under `baselines:` in metascore.yaml.")
        return [name]
    return []


def _filter(choices: MetaChoices, baselines: Sequence[str], final: str | None, notes: list[str],
            dev: str, where: Mapping[str, list[str]], kits: str = "") -> tuple[str, int | str | None]:
    """The filter rule (and k); ``where``: the phases each baseline runs in locally;
    ``kits``: where a starting kit's submission was looked for (:func:`_kits_text`)."""
    wanted = choices.filter
    away = {b: p for b, p in where.items() if p and dev not in p}
    if away and len(away) == len(where) and wanted in (None, "beat_baseline"):
        name, runs = next(iter(away.items()))
        text = (f"baseline {name!r} runs in {', '.join(map(repr, runs))} only in a local run, not in "
                f"{dev!r}, where beat_baseline compares: put its submission in "
                f"sample_submissions/{dev}/ (is_baseline: true in that folder's submissions.yaml), "
                f"choose phases with --phases, or --baseline NAME for an account that submits in {dev!r}")
        if wanted is None:
            notes.append(f"{text}; until then filter: none (every final candidate is ranked).")
            return "none", None
        notes.append(f"--filter beat_baseline: {text}; as it is, the meta phase fails for want of "
                     "a baseline there.")
    if wanted is None:
        if baselines:
            return "beat_baseline", None
        if choices.baselines is not None:
            notes.append("--baseline none: filter: none (every final candidate is ranked).")
            return "none", None
        notes.append(f"no baseline: no starting kit submission{kits}, no is_baseline submission "
                     "and no solution, so filter: none (every final candidate is ranked); with a "
                     "baseline (--baseline FILE, run as participant 'baseline', or --baseline NAME, "
                     "the account that submits it) the final ranking admits those who beat it.")
        return "none", None
    if wanted == "none":
        return "none", None
    if wanted == "beat_baseline":
        if not baselines:
            raise ConfigError("--filter beat_baseline needs a baseline, and the bundle has none (no "
                              "starting kit submission, no is_baseline submission, no solution): "
                              "give --baseline NAME, the account that submits it.")
        return "beat_baseline", None
    match = re.fullmatch(r"top_k:(auto|[1-9]\d*)", wanted)
    if match is None:
        raise ConfigError(f"--filter {wanted!r} is not one of {', '.join(FILTER_CHOICES)}"
                          f"{did_you_mean(wanted, FILTER_CHOICES)}.")
    if final is None:
        raise ConfigError(f"--filter {wanted}: top_k keeps the k best of the development phase for "
                          f"the final ranking, and the competition ranks one phase ({dev!r}); use "
                          "--filter beat_baseline or none.")
    k = match.group(1)
    return "top_k", (k if k == "auto" else int(k))


def _top_k_note(k: int, dev: str, placed: Placed, baselines: Sequence[str]) -> str:
    """What ``top_k:k`` admits: the k best of ``dev`` that are not baselines; against the
    participants a local run ranks there, with a k proposed from them when k admits all."""
    n = len({s.participant for s, where in placed if dev in where and s.participant not in baselines})
    text = (f"filter top_k:{k}: the best {k} of {dev!r} enter the final ranking; k counts the "
            "candidates that are not baselines (a baseline is never admitted nor counted)")
    if n and k >= n:
        return (f"{text}; a local run ranks {n} there, so all of them enter; proposed: --filter "
                f"top_k:{proposed_k(n)} (the better half).")
    return text + (f"; a local run ranks {n} there." if n else ".")


def _kits_text(comp: Competition) -> str:
    """`` (starting kit K/: no submission found in it (looked for ...; it holds ...): how to
    give one)`` for each starting kit folder of the competition, or ``""``."""
    said, kits = [], set()
    for ref in dict.fromkeys(p.starting_kit for p in comp.phases if p.starting_kit):
        path = comp.path(ref)
        if path is not None and path.is_dir():
            said.append(f"starting kit {ref}: {kit_rule_text(path)}")
            kits.add(path.resolve())
    loose = sorted(p.name + ("/" if p.is_dir() else "") for p in _root_entries(comp.root)
                   if "submission" in p.name.lower() and p.name != SAMPLES
                   and (p.is_dir() or p.suffix == ".zip") and p.resolve() not in kits)
    if loose:
        said.append(f"{', '.join(loose)} at the bundle's root: no phase names "
                    f"{'it' if len(loose) == 1 else 'them'} as its starting_kit, so no run makes "
                    f"{'it' if len(loose) == 1 else 'them'}; `--baseline "
                    f"{comp.root / loose[0].rstrip('/')}` runs it as the baseline")
    return f" ({'; '.join(said)})" if said else ""


def _root_entries(root: Path) -> list[Path]:
    try:
        return list(root.iterdir())
    except OSError:
        return []


def _free_key(key: str, taken: Sequence[str]) -> str:
    while key in taken:
        key = "meta_" + key
    return key


# ---------------------------------------------------------------------- the file
def _render(
    method: str, dev: str, final: str | None, judges: list[dict], judged: Sequence[Column],
    baselines: Sequence[str], rule: str, k: int | str | None, out: Sequence[MetaColumn],
    program_ref: str, left_out: Sequence[str], title: str | None = None, alone: bool = False,
) -> str:
    """The file's text; ``alone``: the final phase ``dev`` is ranked on its own (no
    development phase), written as such."""
    spec = get_ranking_method(method)
    ranked = f"phase {dev!r}" if final is None else f"phases {dev!r} and {final!r}"
    compare = list(dict.fromkeys(([method] if method in _CHEAP else [])
                                 + ["average_rank", "copeland", "success_rate"]))
    phases = {"development": None, "final": dev} if alone else {"development": dev, "final": final}
    roles = (["# development: null, no development phase, so nobody is filtered on an earlier one;",
              "# final: the phase ranked, on its own (each participant's submission as selection.final says)."]
             if alone else
             ["# development: the phase whose ranking decides who enters the final ranking (the filter);",
              "# final: the phase ranked in the end (null: the development phase is ranked on its own)."])
    lines = [
        "# metascore.yaml: the configuration of the \"Final ranking\" phase, whose scoring program",
        f"# is metascore's meta-scoring program ({program_ref}). Written by `metascore bundle",
        "# add-meta` from competition.yaml; edit it freely (docs/configuration.md of metascore).",
        "# Its input is the per-task scores of every submission: on Codabench the organizer",
        f"# submits the results export of {ranked} to the Final ranking phase (a",
        "# result submission); `metascore bundle run` feeds it the outputs tree. `path: .` reads either.",
        "input: {format: auto, path: .}",
        *roles,
        f"phases: {flow(phases)}",
        "# The judges: one leaderboard column on one task each; task = the task's name, metric =",
        "# the column key (a local run's outputs tree names scores by key), title = the column",
        "# title (a Codabench results export names them by title), direction from the column's",
        "# sorting (desc, or no sorting: higher is better; asc: lower is better).",
        "judges:",
        *(f"  - {flow(j)}" for j in judges),
    ]
    if left_out:
        lines.append(f"# Leaderboard columns that are not judges: {', '.join(left_out)}.")
    lines += [
        "ranking:",
        *([f"  # {spec.description.splitlines()[0]}"] if spec.description else []),
        f"  method: {method}",
        "  missing: worst             # a failed task (empty cell) ranks below every score",
        f"  seed: {DEFAULT_SEED}",
        "selection: {development: best, final: last}   # which submission stands for a participant",
        f"baselines: {flow(list(baselines))}"
        + ("   # on Codabench: the account that submits the baseline" if baselines else ""),
    ]
    if rule == "beat_baseline":
        lines += ["filter:",
                  "  rule: beat_baseline         # enter the final ranking only by beating the baseline ...",
                  f"  beat: all                   # ... (every baseline) in phase {dev!r}, strictly",
                  "  on_empty: warn"]
    elif rule == "top_k":
        lines += [f"filter: {{rule: top_k, k: {k}}}   # the {k} best of phase {dev!r} enter the final ranking"]
    else:
        lines += ["filter: {rule: none}          # every final candidate is ranked"]
    lines += [
        "analysis:",
        "  bootstrap: 200              # judge resamples: rank intervals, P(first), groups (0: off)",
        "  level: 0.95",
        "  stability: true             # Kendall's W of 50 rankings of resampled judges",
        f"  compare: {flow(compare)}   # how these methods behave on the ranked pool",
        "output:   # scores.json keys -> the Final ranking phase's leaderboard columns",
        f"  scores: {flow({c.key: c.statistic for c in out})}",
    ]
    if title:  # the ranking page opens in a frame of Codabench's page that does not name it
        lines.append(f"  title: {flow(title)}   # competition.yaml's title, atop the ranking page")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- where things run


def _baseline_phases(baselines: Sequence[str], placed: Placed) -> dict[str, list[str]]:
    """Each baseline (a participant name) -> the phases its local submissions run in."""
    out: dict[str, list[str]] = {}
    for name in baselines:
        runs = [p for s, where in placed if s.participant == name for p in where]
        if any(s.participant == name for s, _ in placed):
            out[name] = list(dict.fromkeys(runs))
    return out


def _overview(comp: Competition, phases: Sequence[Phase], dev: str, final: str | None,
              placed: Placed, columns: Sequence[Column]) -> str:
    """More than two phases: each one's reference data, migration and local submissions,
    and the pair chosen, so that the organizer sees whether it works."""
    chosen = f"{final!r} after {dev!r}" if final is not None else f"{dev!r}"
    lines = [f"phases: {len(phases)} phases; the final ranking is made of {chosen} (--phases "
             "DEVELOPMENT,FINAL chooses). Every phase has the leaderboard's columns "
             f"({', '.join(c.key for c in columns)}); a local run makes these submissions:"]
    refs: dict[str, str] = {}
    for i, phase in enumerate(phases):
        tasks = comp.phase_tasks(phase)
        data = ", ".join(dict.fromkeys(t.reference_data or "none" for t in tasks))
        shared = [refs[d] for d in dict.fromkeys(t.reference_data for t in tasks) if d in refs]
        for t in tasks:
            refs.setdefault(t.reference_data, phase.name)
        names = [s.candidate + (" (baseline)" if s.is_baseline else "")
                 for s, where in placed if phase.name in where]
        role = (" (final)" if phase.name == final else " (ranked)" if final is None and phase.name == dev
                else " (development)" if phase.name == dev else "")
        moved = f"; migrates from {phases[i - 1].name!r}" if phase.auto_migrate and i else ""
        same = f" (as {shared[0]!r})" if shared else ""
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        lines.append(f"    {phase.name!r}{role}: reference data {data}{same}{moved}; "
                     f"{len(names)} submission(s){': ' + shown if names else ''}")
    return "\n".join(lines)
