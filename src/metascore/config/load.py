"""Reading ``metascore.yaml`` and validating it into a :class:`~metascore.config.model.Config`.

The file is read with :func:`metascore.readers.yaml_loader.read_yaml` (safe, duplicate keys
refused) and every value is checked once, here; an error names the key, the allowed values
and what was found, and an unknown key gets a did-you-mean ("unknown key 'rankng' in
metascore.yaml (did you mean 'ranking'?)").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import pandas as pd

from ..errors import ConfigError, did_you_mean
from ..missing import MISSING_POLICIES
from ..ranking import TIE_BREAK_KEYS
from ..readers.configured import InputConfig
from ..readers.yaml_loader import read_yaml
from ..registry import get_ranking_method, ranking_method_names
from .model import (FILTER_RULES, MAX_KEY_LENGTH, PER_JUDGE_CONTENTS,
                    SELECTION_POLICIES, STATISTICS, AnalysisConfig, Config, FilterConfig,
                    GroupsConfig, JudgeConfig, PhasesConfig, RankingConfig, SelectionConfig)

__all__ = ["load_config", "parse_config"]

_DIRECTIONS = {"higher": True, "lower": False, "desc": True, "asc": False}
#: The defaults, written once: the model's (a key the file leaves out takes its value here).
_D = Config()


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
    input_ = _input(v, inp)
    dev, final, named_final = _phases(v, phases)
    if final == dev:
        raise v.error("phases.final", f"must differ from phases.development; both are {dev!r}")
    method, params = _method(v, rank_)
    tie_break = _tie_break(v, rank_)
    rule, k = _filter_rule(v, filt, final)
    judges = _judges(v, top.get("judges"))
    return Config(
        input=input_,
        phases=PhasesConfig(dev, final, _deadlines(v, phases.get("deadlines", {}))),
        judges=judges,
        ranking=RankingConfig(
            method=method,
            params=dict(params),
            missing=v.choice(rank_.get("missing", _D.ranking.missing), "ranking.missing", MISSING_POLICIES),
            tie_break=tuple(tie_break),
            seed=v.seed(rank_.get("seed", _D.ranking.seed), "ranking.seed"),
            groups=_groups(v, rank_.get("groups"), judges),
        ),
        selection=_selection(v, sel, named_final),
        baselines=_baselines(v, top.get("baselines", [])),
        filter=FilterConfig(
            rule=rule,
            beat=v.choice(filt.get("beat", _D.filter.beat), "filter.beat", ("all", "any")),
            k=k,
            on_empty=v.choice(filt.get("on_empty", _D.filter.on_empty), "filter.on_empty", ("warn", "error")),
        ),
        analysis=_analysis(v, analysis),
        scores=_scores(v, out.get("scores", dict(_D.scores))),
        judge_columns=v.count(out.get("judge_columns", _D.judge_columns), "output.judge_columns"),
        per_judge=v.choice(out.get("per_judge", _D.per_judge), "output.per_judge", PER_JUDGE_CONTENTS),
        title=None if out.get("title") is None else v.string(out["title"], "output.title"),
    )


def _input(v: _Validator, inp: Mapping[str, Any]) -> InputConfig:
    """``input``: the format (``auto``: detect) and the path, one or one per phase."""
    fmt = v.string(inp.get("format", "auto"), "input.format")
    path = inp.get("path", _D.input.path)
    if isinstance(path, Mapping):
        path = {v.string(ph, "input.path"): v.relative_path(p, f"input.path.{ph}")
                for ph, p in path.items()}
    else:
        path = v.relative_path(path, "input.path")
    return InputConfig(None if fmt == "auto" else fmt, path)


def _method(v: _Validator, rank_: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``ranking.method`` (a registered name) and its ``ranking.params``."""
    method = v.string(rank_.get("method", _D.ranking.method), "ranking.method")
    v.choice(method, "ranking.method", ranking_method_names())
    return method, v.params(get_ranking_method(method), rank_.get("params", {}), "ranking.params")


def _tie_break(v: _Validator, rank_: Mapping[str, Any]) -> list[str]:
    """``ranking.tie_break``: a list of keys (one key alone is a list)."""
    tie_break = rank_.get("tie_break", list(_D.ranking.tie_break))
    tie_break = [tie_break] if isinstance(tie_break, str) else tie_break
    if not isinstance(tie_break, list):
        raise v.error("ranking.tie_break", f"must be a list of keys; got {tie_break!r}")
    for key in tie_break:
        v.choice(key, "ranking.tie_break", TIE_BREAK_KEYS)
    return tie_break


def _filter_rule(v: _Validator, filt: Mapping[str, Any], final: str | None) -> tuple[str, Any]:
    """``filter.rule`` and ``filter.k`` (required by top_k; ``auto`` needs a final phase)."""
    rule = v.choice(filt.get("rule", _D.filter.rule), "filter.rule", FILTER_RULES)
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
    return rule, k


def _selection(v: _Validator, sel: Mapping[str, Any], named_final: bool) -> SelectionConfig:
    """``selection``: the development phase's policy and the final phase's."""
    def final() -> str:
        return v.choice(sel.get("final", _D.selection.final), "selection.final", SELECTION_POLICIES)

    # the one phase ranked, when the file names it final, is picked as a final phase is
    development = final() if named_final else v.choice(
        sel.get("development", _D.selection.development), "selection.development", SELECTION_POLICIES)
    return SelectionConfig(development, final())


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
    by = v.choice(g.get("by", GroupsConfig().by), "ranking.groups.by", ("judges", "task", "metric"))
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
    bootstrap = data.get("bootstrap", _D.analysis.bootstrap)
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 0 \
            or bootstrap == 1:
        raise v.error("analysis.bootstrap",
                      f"must be 0 (disabled) or an integer >= 2; got {bootstrap!r}")
    level = data.get("level", _D.analysis.level)
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise v.error("analysis.level",
                      f"must be a number strictly between 0 and 1 (e.g. 0.95); got {level!r}")
    stability = data.get("stability", _D.analysis.stability)
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


def _phases(v: _Validator, phases: Mapping[str, Any]) -> tuple[str, str | None, bool]:
    """``(development, final, named final)``: ``final`` None ranks one phase alone, which
    either key may name: ``{development: X, final: null}``, or ``{development: null, final:
    X}`` (named final: X is then picked by ``selection.final``)."""
    final = phases.get("final", _D.phases.final)
    if "development" in phases and phases["development"] is None:  # no development phase
        if final is None or "final" not in phases:
            raise v.error("phases.development", "is null (no development phase), so phases.final "
                          "must name the phase ranked on its own")
        return v.string(final, "phases.final"), None, True
    dev = v.string(phases.get("development", _D.phases.development), "phases.development")
    return dev, None if final is None else v.string(final, "phases.final"), False


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
