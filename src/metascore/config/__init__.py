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

Two modules: :mod:`.model` (what the configuration is: the frozen dataclasses, their
defaults and the constants other modules read) and :mod:`.load` (reading and validating
the file: :func:`load_config`, :func:`parse_config`). ``input`` is the readers'
:class:`~metascore.readers.configured.InputConfig` (what :func:`~metascore.readers.configured.load_scores`
reads).
"""

from __future__ import annotations

from ..readers.configured import InputConfig
from .load import load_config, parse_config
from .model import (COMPARE_R, CONFIG_NAME, FILTER_RULES, FINAL_PHASE_STATISTICS, JUDGE_COLUMNS,
                    MAX_KEY_LENGTH, PER_JUDGE_CONTENTS, SELECTION_POLICIES, STABILITY_Q,
                    STABILITY_R, STATISTICS, AnalysisConfig, Config, FilterConfig, GroupsConfig,
                    JudgeConfig, PhasesConfig, RankingConfig, SelectionConfig, judge_key)

__all__ = [
    "Config", "InputConfig", "PhasesConfig", "JudgeConfig", "GroupsConfig", "RankingConfig",
    "SelectionConfig", "FilterConfig", "AnalysisConfig", "STATISTICS", "FINAL_PHASE_STATISTICS",
    "SELECTION_POLICIES", "FILTER_RULES", "JUDGE_COLUMNS", "PER_JUDGE_CONTENTS", "CONFIG_NAME",
    "MAX_KEY_LENGTH", "STABILITY_Q", "STABILITY_R", "COMPARE_R", "judge_key", "load_config",
    "parse_config",
]
