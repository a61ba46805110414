"""The competition configuration, ``metascore.yaml``, validated into frozen dataclasses.

The file is read with :func:`metascore.readers.yaml_loader.read_yaml` (safe, duplicate keys
refused) and every value is checked once, here; an error names the key, the allowed values
and what was found, and an unknown key gets a did-you-mean ("unknown key 'rankng' in
metascore.yaml (did you mean 'ranking'?)").

Schema (every section optional; the values shown are the defaults)::

    input: {format: auto, path: .}       # path relative to the input directory, inside it;
                                          # or one path per phase: {Development: dev.csv, ...}
    phases: {development: Development, final: Final,   # final: null ranks development only,
                                          # filtered within it when it has baselines
             deadlines: {}}               # {phase: ISO time}: later submissions are left out
    judges:                               # default: every (task, metric) found
      - {task: iris, metric: accuracy, direction: higher, weight: 1}   # weight 0: shown only
      # direction: higher | lower (or Codabench's sorting: desc | asc); optional phase: <name>;
      # optional title: the column's title, by which a Codabench results export names it
      # no direction: the competition's column sorting (codabench.json in the input), else higher
    ranking: {method: average_rank, params: {}, missing: worst, seed: 12345,
              tie_break: [submitted_at, candidate], groups: null}   # groups: two steps,
              # {by: judges (their `group` key) | task | metric, weights: {}, method, params}
    selection: {development: best, final: last}       # best | last | all
    baselines: []                         # candidate ids or participant names
    filter: {rule: beat_baseline, beat: all, k: null, on_empty: warn}   # one phase: within it
    analysis: {bootstrap: 200, level: 0.95, stability: true, compare: []}
                                          # bootstrap: judge resamples for the rank intervals
                                          # (0 disables them); level: interval coverage;
                                          # stability: Kendall W of 50 judge-resampled rankings
                                          # (false disables it); compare: methods whose
                                          # criteria table goes into detailed_results.html
                                          # (bootstrap trials, 50 x 5 for stabilities);
                                          # the seed is ranking.seed
    output: {scores: {n_qualified: n_qualified, winner_score: winner_score},
             judge_columns: 200,          # per-judge columns in leaderboard.csv/.json up to
                                          # this many judges; beyond, per_judge.csv.gz holds
             per_judge: ranks,            # ranks | values_and_ranks | none
             title: null}                 # the competition's title, atop detailed_results.html
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import pandas as pd

from .errors import ConfigError, did_you_mean
from .readers.yaml_loader import read_yaml
from .ranking import TIE_BREAK_KEYS
from .registry import DEFAULT_METHOD, DEFAULT_SEED, get_ranking_method, ranking_method_names
from .missing import MISSING_POLICIES

__all__ = [
    "Config", "InputConfig", "PhasesConfig", "JudgeConfig", "GroupsConfig", "RankingConfig",
    "SelectionConfig", "FilterConfig", "AnalysisConfig", "STATISTICS", "FINAL_PHASE_STATISTICS",
    "SELECTION_POLICIES", "FILTER_RULES", "JUDGE_COLUMNS", "PER_JUDGE_CONTENTS", "load_config",
    "parse_config",
]

#: The configuration file's name in the meta phase's reference data (and a pulled folder).
CONFIG_NAME = "metascore.yaml"
#: Which submission represents a participant in a phase.
SELECTION_POLICIES = ("best", "last", "all")
#: Final-phase filter rules (``filter.rule``; docs/configuration.md, ``filter``).
FILTER_RULES = ("beat_baseline", "top_k", "none")
#: Statistics that ``output.scores`` may map to ``scores.json`` keys.
STATISTICS = {
    "n_candidates": "number of final-phase candidates (baselines excluded)",
    "n_qualified": "number of final-phase candidates that passed the filter",
    "n_excluded": "number of final-phase candidates the filter excluded",
    "n_baselines": "number of baselines in the development phase",
    "n_judges": "number of judges of the final ranking (weight 0: not counted)",
    "winner_score": "score of the winner under the ranking method",
    "winner_dev_position": "development-phase position of the winner",
    "winner_is_condorcet": "1 if the winner is the Condorcet winner of the final pool, else 0",
    "threshold_score": "development score a candidate had to beat (beat_baseline rule)",
    "k": "number of development candidates admitted by the top_k rule",
    "dev_final_kendall_tau": "Kendall tau-b between development and final scores (qualified)",
    "kendall_w": "Kendall's W between the judges of the final ranking (agreement, 0 to 1)",
    "stability": "Kendall's W of the rankings of judge-resampled matrices (stability, 0 to 1)",
}
#: Statistics that need a final phase (``phases.final``): the filter's outcome, or a
#: comparison of the development and final phases; without one they are undefined.
FINAL_PHASE_STATISTICS = frozenset({"n_qualified", "n_excluded", "threshold_score", "k",
                                    "winner_dev_position", "dev_final_kendall_tau"})
#: ``leaderboard.csv`` and ``leaderboard.json`` hold per-judge columns (each judge's value
#: and rank) up to this many judges (``output.judge_columns``); beyond, ``per_judge.csv.gz``
#: holds them (``output.per_judge``), so that per-sample judges (hundreds of thousands)
#: leave files a platform can carry.
JUDGE_COLUMNS = 200
#: What ``per_judge.csv.gz`` holds when the judges are more than ``output.judge_columns``:
#: each judge's rank of every candidate (the values are the input's), the values too
#: (larger: about 10 MB per 2 million scores), or no file.
PER_JUDGE_CONTENTS = ("ranks", "values_and_ranks", "none")
#: Codabench leaderboard column keys are at most 36 characters.
MAX_KEY_LENGTH = 36
_DIRECTIONS = {"higher": True, "lower": False, "desc": True, "asc": False}


@dataclass(frozen=True)
class InputConfig:
    """Where the scores are: ``format`` (``None`` = detect) and ``path`` inside the input.

    ``path`` is one file or directory holding every phase, or a mapping
    ``{phase: path}`` for exports that hold one phase per file.
    """

    format: str | None = None
    path: str | Mapping[str, str] = "."


@dataclass(frozen=True)
class PhasesConfig:
    """Phase names as they appear in the data; ``final=None`` ranks development only."""

    development: str = "Development"
    final: str | None = "Final"
    deadlines: Mapping[str, pd.Timestamp] = field(default_factory=dict)


@dataclass(frozen=True)
class JudgeConfig:
    """One judge: a (task, metric) column with a direction and a weight.

    ``phase`` restricts the judge to one phase (``None``: every phase). ``title``: the
    leaderboard column's title; a Codabench results export names the column by it
    (``<task>(<id>)-<title>``), and scores under that name count as ``metric``.
    ``direction_set`` is False when the file gave no direction: then the competition's
    column ``sorting`` decides where known (:mod:`metascore.readers.directions`), else higher.
    """

    task: str
    metric: str = ""
    higher_is_better: bool = True
    weight: float = 1.0
    phase: str | None = None
    title: str | None = None
    direction_set: bool = True
    group: str | None = None

    @property
    def key(self) -> str:
        """``"task/metric"``, or ``"task"`` when the metric is empty."""
        return judge_key(self.task, self.metric)


@dataclass(frozen=True)
class GroupsConfig:
    """A ranking in two steps (docs/methods.md, "Grouped ranking"): the judges' groups
    (``by``: each judge's ``group`` key, its task or its metric), each group's weight
    (default 1; 0: shown, not counted) and the rule inside the groups (``method``, None:
    ``ranking.method``; ``params``); ``ranking.method`` ranks across the groups."""

    by: str = "judges"
    weights: Mapping[str, float] = field(default_factory=dict)
    method: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RankingConfig:
    """The ranking method, its parameters and the conventions every method shares (missing
    data, tie-break, seed; docs/methods.md, "Conventions"); ``groups``: judges in groups,
    ranked in two steps."""

    method: str = DEFAULT_METHOD
    params: Mapping[str, Any] = field(default_factory=dict)
    missing: str = "worst"
    tie_break: tuple[str, ...] = ("submitted_at", "candidate")
    seed: int = DEFAULT_SEED
    groups: GroupsConfig | None = None


@dataclass(frozen=True)
class SelectionConfig:
    """Which submission represents a participant, per phase (``best``, ``last``, ``all``)."""

    development: str = "best"
    final: str = "last"


@dataclass(frozen=True)
class FilterConfig:
    """Who enters the final ranking (:mod:`metascore.leaderboard.filtering`); with one phase
    (``phases.final: null``), within it.

    ``rule``: ``beat_baseline`` | ``top_k`` | ``none``; ``beat``: ``all`` | ``any``
    baselines; ``k``: an int or ``"auto"`` (top_k only); ``on_empty``: ``warn`` | ``error``
    when nobody qualifies.
    """

    rule: str = "beat_baseline"
    beat: str = "all"
    k: int | str | None = None
    on_empty: str = "warn"


@dataclass(frozen=True)
class AnalysisConfig:
    """How much to trust the final ranking (:mod:`metascore.analysis`), computed on the
    final pool.

    ``bootstrap``: number of judge resamples behind the rank intervals, P(first) and the
    groups of inseparable candidates (0 disables them); ``level``: coverage of the rank
    intervals; ``stability``: estimate the judge-axis stability (Kendall's W of
    :data:`STABILITY_Q` rankings of judge-resampled matrices); ``compare``: ranking methods
    to compare on the ranked pool (:func:`metascore.analysis.compare_methods` with
    ``bootstrap`` trials and :data:`STABILITY_Q` x :data:`COMPARE_R` stability rankings;
    empty: no comparison). The seed is ``ranking.seed``.
    """

    bootstrap: int = 200
    level: float = 0.95
    stability: bool = True
    compare: tuple[str, ...] = ()


#: Judge-resampled rankings behind the stability estimate, and repetitions: small enough
#: for a scoring step under the platform's time limit (the thesis uses q = 100, r = 10).
STABILITY_Q = 50
STABILITY_R = 1
#: Repetitions of each stability in the method comparison (``analysis.compare``): the
#: table shows their spread, which one repetition cannot give.
COMPARE_R = 5


@dataclass(frozen=True)
class Config:
    """A validated ``metascore.yaml``."""

    input: InputConfig = field(default_factory=InputConfig)
    phases: PhasesConfig = field(default_factory=PhasesConfig)
    judges: tuple[JudgeConfig, ...] | None = None
    ranking: RankingConfig = field(default_factory=RankingConfig)
    selection: SelectionConfig = field(default_factory=SelectionConfig)
    baselines: tuple[str, ...] = ()
    filter: FilterConfig = field(default_factory=FilterConfig)
    analysis: AnalysisConfig = field(default_factory=AnalysisConfig)
    scores: Mapping[str, str] = field(
        default_factory=lambda: {"n_qualified": "n_qualified", "winner_score": "winner_score"}
    )
    judge_columns: int = JUDGE_COLUMNS
    per_judge: str = "ranks"
    #: The competition's title (``output.title``): the ranking page says where it is.
    title: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The effective configuration, in the file's schema (JSON/YAML ready)."""
        d = asdict(self)
        d["input"]["format"] = self.input.format or "auto"
        d["input"]["path"] = self.input.path if isinstance(self.input.path, str) \
            else dict(self.input.path)
        d["phases"]["deadlines"] = {k: t.isoformat() for k, t in self.phases.deadlines.items()}
        d["judges"] = None if self.judges is None else [
            {"task": j.task, "metric": j.metric,
             **({"direction": "higher" if j.higher_is_better else "lower"} if j.direction_set else {}),
             "weight": j.weight, **({"phase": j.phase} if j.phase else {}),
             **({"title": j.title} if j.title else {}), **({"group": j.group} if j.group else {})}
            for j in self.judges
        ]
        d["ranking"]["params"] = dict(self.ranking.params)
        g = self.ranking.groups
        d["ranking"]["groups"] = None if g is None else {
            "by": g.by, "weights": dict(g.weights), "method": g.method, "params": dict(g.params)}
        d["ranking"]["tie_break"] = list(self.ranking.tie_break)
        d["baselines"] = list(self.baselines)
        d["analysis"]["compare"] = list(self.analysis.compare)
        d["output"] = {"scores": dict(d.pop("scores")), "judge_columns": d.pop("judge_columns"),
                       "per_judge": d.pop("per_judge")}
        if (title := d.pop("title")) is not None:  # absent when not set, as before it existed
            d["output"]["title"] = title
        return d


def judge_key(task: str, metric: str = "") -> str:
    """The key of the judge ``(task, metric)``: ``"task/metric"``, ``"task"`` without a
    metric, ``"metric"`` without a task (a CodaLab column)."""
    if not task:
        return str(metric)
    return f"{task}/{metric}" if metric else str(task)


# ---------------------------------------------------------------------- loading
def load_config(path: str | Path, *, source: str | None = None) -> Config:
    """Read and validate a ``metascore.yaml`` file.

    ``source``: the name errors give the file (default: its file name).
    """
    path = Path(path)
    name = source or path.name
    if not path.is_file():
        raise ConfigError(f"{path}: configuration file not found.")
    data = read_yaml(path, name)
    return parse_config({} if data is None else data, source=name)


def parse_config(data: Any, *, source: str = "metascore.yaml") -> Config:
    """Validate a mapping (the parsed YAML) into a :class:`Config`."""
    v = _Validator(source)
    top = v.mapping(data, "", ("input", "phases", "judges", "ranking", "selection",
                                "baselines", "filter", "analysis", "output"))
    inp = v.mapping(top.get("input", {}), "input", ("format", "path"))
    phases = v.mapping(top.get("phases", {}), "phases", ("development", "final", "deadlines"))
    rank_ = v.mapping(top.get("ranking", {}), "ranking",
                      ("method", "params", "missing", "tie_break", "seed", "groups"))
    sel = v.mapping(top.get("selection", {}), "selection", ("development", "final"))
    filt = v.mapping(top.get("filter", {}), "filter", ("rule", "beat", "k", "on_empty"))
    analysis = v.mapping(top.get("analysis", {}), "analysis", ("bootstrap", "level", "stability",
                                                                    "compare"))
    out = v.mapping(top.get("output", {}), "output", ("scores", "judge_columns", "per_judge", "title"))

    fmt = v.string(inp.get("format", "auto"), "input.format")
    path = inp.get("path", ".")
    if isinstance(path, Mapping):
        path = {v.string(ph, "input.path"): v.relative_path(p, f"input.path.{ph}")
                for ph, p in path.items()}
    else:
        path = v.relative_path(path, "input.path")
    dev = v.string(phases.get("development", "Development"), "phases.development")
    final = phases.get("final", "Final")
    final = None if final is None else v.string(final, "phases.final")
    if final == dev:
        raise v.error("phases.final", f"must differ from phases.development; both are {dev!r}")

    method = v.string(rank_.get("method", DEFAULT_METHOD), "ranking.method")
    v.choice(method, "ranking.method", ranking_method_names())
    spec = get_ranking_method(method)
    params = v.params(spec, rank_.get("params", {}), "ranking.params")
    tie_break = rank_.get("tie_break", ["submitted_at", "candidate"])
    tie_break = [tie_break] if isinstance(tie_break, str) else tie_break
    if not isinstance(tie_break, list):
        raise v.error("ranking.tie_break", f"must be a list of keys; got {tie_break!r}")
    for key in tie_break:
        v.choice(key, "ranking.tie_break", TIE_BREAK_KEYS)

    rule = v.choice(filt.get("rule", "beat_baseline"), "filter.rule", FILTER_RULES)
    k = filt.get("k")
    if k is not None and k != "auto" and not (
        isinstance(k, int) and not isinstance(k, bool) and k >= 1
    ):
        raise v.error("filter.k", f"must be a positive integer or 'auto'; got {k!r}")
    if rule == "top_k" and k is None:
        raise v.error("filter.k", "is required with rule top_k (a positive integer or 'auto')")
    if rule == "top_k" and k == "auto" and final is None:
        raise v.error("filter.k", "'auto' compares the development and final rankings, and "
                      "phases.final is null (one phase); give k as a positive integer")

    judges = _judges(v, top.get("judges"))
    return Config(
        input=InputConfig(None if fmt == "auto" else fmt, path),
        phases=PhasesConfig(dev, final, _deadlines(v, phases.get("deadlines", {}))),
        judges=judges,
        ranking=RankingConfig(
            method=method,
            params=dict(params),
            missing=v.choice(rank_.get("missing", "worst"), "ranking.missing", MISSING_POLICIES),
            tie_break=tuple(tie_break),
            seed=v.seed(rank_.get("seed", DEFAULT_SEED), "ranking.seed"),
            groups=_groups(v, rank_.get("groups"), judges),
        ),
        selection=SelectionConfig(
            v.choice(sel.get("development", "best"), "selection.development", SELECTION_POLICIES),
            v.choice(sel.get("final", "last"), "selection.final", SELECTION_POLICIES),
        ),
        baselines=_baselines(v, top.get("baselines", [])),
        filter=FilterConfig(
            rule=rule,
            beat=v.choice(filt.get("beat", "all"), "filter.beat", ("all", "any")),
            k=k,
            on_empty=v.choice(filt.get("on_empty", "warn"), "filter.on_empty", ("warn", "error")),
        ),
        analysis=_analysis(v, analysis),
        scores=_scores(v, out.get("scores", {"n_qualified": "n_qualified",
                                              "winner_score": "winner_score"})),
        judge_columns=v.count(out.get("judge_columns", JUDGE_COLUMNS), "output.judge_columns"),
        per_judge=v.choice(out.get("per_judge", "ranks"), "output.per_judge", PER_JUDGE_CONTENTS),
        title=None if out.get("title") is None else v.string(out["title"], "output.title"),
    )


def _judges(v: _Validator, data: Any) -> tuple[JudgeConfig, ...] | None:
    if data is None:
        return None
    if not isinstance(data, list) or not data:
        raise v.error("judges", f"must be a non-empty list of judges; got {data!r}")
    judges: list[JudgeConfig] = []
    seen: set[tuple[str, str | None]] = set()
    for i, item in enumerate(data):
        where = f"judges[{i}]"
        entry = v.mapping(item, where, ("task", "metric", "direction", "sorting", "weight", "phase",
                                        "title", "group"))
        if "task" not in entry:
            raise v.error(f"{where}.task", "is required")
        task = v.string(entry["task"], f"{where}.task")
        metric = entry.get("metric")
        metric = "" if metric in (None, "") else v.string(metric, f"{where}.metric")
        if "direction" in entry and "sorting" in entry:
            raise v.error(where, "give either direction or sorting, not both")
        if "sorting" in entry:
            higher = _DIRECTIONS[v.choice(entry["sorting"], f"{where}.sorting", ("desc", "asc"))]
        else:
            higher = _DIRECTIONS[
                v.choice(entry.get("direction", "higher"), f"{where}.direction", ("higher", "lower"))
            ]
        weight = v.weight(entry.get("weight", 1), f"{where}.weight")
        phase, title, group = (None if entry.get(k) is None else v.string(entry[k], f"{where}.{k}")
                               for k in ("phase", "title", "group"))
        judge = JudgeConfig(task, metric, higher, float(weight), phase, title,
                            direction_set="direction" in entry or "sorting" in entry, group=group)
        if (judge.key, phase) in seen:
            raise v.error(where, f"judge {judge.key!r} is listed twice")
        seen.add((judge.key, phase))
        judges.append(judge)
    if all(j.weight == 0 for j in judges):
        raise v.error("judges", "all have weight 0, so nothing would be counted; give at least "
                      "one judge a positive weight")
    return tuple(judges)


def _groups(v: _Validator, data: Any, judges: tuple[JudgeConfig, ...] | None) -> GroupsConfig | None:
    """``ranking.groups``; judges with a ``group`` key and no section group by them."""
    keyed = [j for j in judges or () if j.group is not None]
    if data is None:
        return GroupsConfig() if keyed else None
    g = v.mapping(data, "ranking.groups", tuple(GroupsConfig.__dataclass_fields__))
    by = v.choice(g.get("by", "judges"), "ranking.groups.by", ("judges", "task", "metric"))
    bare = [j.key for j in judges or () if j.group is None] or ["(no judge is listed)"]
    if by == "judges" and (not keyed or len(keyed) < len(judges or ())):
        raise v.error("ranking.groups", f"groups the judges by their `group` key, and judge "
                      f"{bare[0]!r} has none; give every judge a group, or use by: task or metric")
    if by != "judges" and keyed:
        raise v.error("ranking.groups.by", f"is {by!r}, and judges give a `group` key; use one")
    names = sorted({j.group for j in keyed}) if by == "judges" else list(g.get("weights") or {})
    weights = v.mapping(g.get("weights", {}), "ranking.groups.weights", tuple(names), what="group")
    weights = {str(k): v.weight(w, f"ranking.groups.weights.{k}") for k, w in weights.items()}
    method = g.get("method")
    params: dict[str, Any] = {}
    if method is not None:
        v.choice(v.string(method, "ranking.groups.method"), "ranking.groups.method",
                 ranking_method_names())
        params = v.params(get_ranking_method(method), g.get("params", {}), "ranking.groups.params")
    elif g.get("params"):
        raise v.error("ranking.groups.params", "are the parameters of ranking.groups.method, "
                      "which is not given (ranking.params serve the one method)")
    return GroupsConfig(by, weights, method, params)


def _analysis(v: _Validator, data: dict) -> AnalysisConfig:
    bootstrap = data.get("bootstrap", 200)
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 0 \
            or bootstrap == 1:
        raise v.error("analysis.bootstrap",
                      f"must be 0 (disabled) or an integer >= 2; got {bootstrap!r}")
    level = data.get("level", 0.95)
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise v.error("analysis.level",
                      f"must be a number strictly between 0 and 1 (e.g. 0.95); got {level!r}")
    stability = data.get("stability", True)
    if not isinstance(stability, bool):
        raise v.error("analysis.stability", f"must be true or false; got {stability!r}")
    compare = _compare(v, data.get("compare"))
    if compare and not bootstrap:
        raise v.error("analysis.compare", "needs resamples: its criteria use analysis.bootstrap "
                      "trials, and analysis.bootstrap is 0")
    return AnalysisConfig(bootstrap, float(level), stability, compare)


def _compare(v: _Validator, data: Any) -> tuple[str, ...]:
    """``analysis.compare``: registered method names, each once (one name alone is a list)."""
    items = [data] if isinstance(data, str) else [] if data is None else data
    if not isinstance(items, list):
        raise v.error("analysis.compare", f"must be a list of ranking methods; got {data!r}")
    seen: list[str] = []
    for name in items:
        if isinstance(name, str) and "," in name:
            raise v.error("analysis.compare", f"must be a YAML list, one method per item "
                          f"(e.g. [average_rank, copeland]); got {name!r}")
        v.choice(name, "analysis.compare", ranking_method_names())
        if name in seen:
            raise v.error("analysis.compare", f"lists {name!r} twice; list each method once")
        seen.append(name)
    return tuple(seen)


def _deadlines(v: _Validator, data: Any) -> dict[str, pd.Timestamp]:
    if not isinstance(data, Mapping):
        raise v.error("phases.deadlines", f"must map phase names to dates; got {data!r}")
    out = {}
    for phase, when in data.items():
        try:
            stamp = pd.Timestamp(str(when))
        except (TypeError, ValueError):
            stamp = pd.NaT
        if stamp is pd.NaT:
            raise v.error(f"phases.deadlines.{phase}", f"must be an ISO date/time; got {when!r}")
        if stamp.tzinfo is not None:
            stamp = stamp.tz_convert("UTC").tz_localize(None)
        out[str(phase)] = stamp
    return out


def _baselines(v: _Validator, data: Any) -> tuple[str, ...]:
    items = [data] if isinstance(data, str) else data
    if items is None:
        return ()
    if not isinstance(items, list) or not all(isinstance(b, (str, int)) for b in items):
        raise v.error("baselines", f"must be a list of candidate ids or participant names; got {data!r}")
    return tuple(str(b) for b in items)


def _scores(v: _Validator, data: Any) -> dict[str, str]:
    if not isinstance(data, Mapping) or not data:
        raise v.error("output.scores", f"must map scores.json keys to statistics; got {data!r}")
    out: dict[str, str] = {}
    for key, stat in data.items():
        if not isinstance(key, str) or not key or len(key) > MAX_KEY_LENGTH:
            raise v.error("output.scores", f"keys must be 1 to {MAX_KEY_LENGTH} characters "
                          f"(Codabench column keys); got {key!r}")
        out[key] = v.choice(stat, f"output.scores.{key}", tuple(STATISTICS))
    return out


class _Validator:
    """Small helpers that raise :class:`ConfigError` naming the file and the key."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, key: str, text: str) -> ConfigError:
        return ConfigError(f"{self.source}: `{key}` {text}.")

    def mapping(self, data: Any, key: str, allowed: tuple[str, ...], what: str = "key") -> dict:
        if not isinstance(data, Mapping):
            name = f"`{key}`" if key else "the top level"
            raise ConfigError(f"{self.source}: {name} must be a mapping; got {data!r}.")
        for name in data:
            if name not in allowed:
                full = f"{key}.{name}" if key else str(name)
                hint = did_you_mean(str(name), allowed)
                valid = f"; valid {what}s are {list(allowed)}" if not hint else ""
                raise ConfigError(
                    f"unknown {what} {full!r} in {self.source}{hint}{valid}."
                )
        return dict(data)

    def string(self, value: Any, key: str) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)) or value == "":
            raise self.error(key, f"must be a non-empty string; got {value!r}")
        return str(value)

    def choice(self, value: Any, key: str, allowed: Any) -> str:
        allowed = list(allowed)
        if value not in allowed:
            raise self.error(
                key, f"must be one of {allowed}; got {value!r}{did_you_mean(str(value), allowed)}"
            )
        return value

    def params(self, spec: Any, data: Any, key: str) -> dict[str, Any]:
        """A method's parameters: known names, allowed values."""
        params = self.mapping(data, key, tuple(spec.defaults), what="parameter")
        for name, value in params.items():
            problem = spec.constraints[name].problem(value)
            if problem is not None:
                raise self.error(f"{key}.{name}", problem)
        return params

    def weight(self, value: Any, key: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                math.isfinite(value) and value >= 0):
            raise self.error(key, f"must be a number >= 0 (0: shown, not counted); got {value!r}")
        return float(value)

    def seed(self, value: Any, key: str) -> int:
        return self.count(value, key)

    def count(self, value: Any, key: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.error(key, f"must be a non-negative integer; got {value!r}")
        return value

    def relative_path(self, value: Any, key: str) -> str:
        text = self.string(value, key)
        pure = PurePosixPath(text.replace("\\", "/"))
        if pure.is_absolute() or ".." in pure.parts or ":" in text.split("/")[0]:
            raise self.error(
                key, f"must be a relative path inside the input directory; got {text!r}"
            )
        return text
