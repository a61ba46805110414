"""What a ``metascore.yaml`` is once validated: frozen dataclasses, one per section, with
their defaults, and the constants the rest of the package reads (the statistics
``scores.json`` may publish, the analysis' fixed sizes, the file's name).

:mod:`metascore.config.load` makes a :class:`Config` from the file; the package's docstring
shows the schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from ..readers.configured import InputConfig
from ..registry import DEFAULT_METHOD, DEFAULT_SEED

__all__ = [
    "Config", "PhasesConfig", "JudgeConfig", "GroupsConfig", "RankingConfig",
    "SelectionConfig", "FilterConfig", "AnalysisConfig", "STATISTICS", "FINAL_PHASE_STATISTICS",
    "SELECTION_POLICIES", "FILTER_RULES", "JUDGE_COLUMNS", "PER_JUDGE_CONTENTS", "CONFIG_NAME",
    "MAX_KEY_LENGTH", "STABILITY_Q", "STABILITY_R", "COMPARE_R", "judge_key",
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
