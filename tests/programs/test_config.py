"""Validation of metascore.yaml: defaults, accepted forms and pinned error messages."""

from __future__ import annotations

import pandas as pd
import yaml
import pytest

from metascore.cli import main
from metascore.config import Config, load_config, parse_config
from metascore.errors import ConfigError
from metascore.readers.score_table import ScoreTable


def test_defaults():
    c = parse_config({})
    assert c == Config()
    assert c.phases.development == "Development" and c.phases.final == "Final"
    assert c.ranking.method == "average_rank" and c.ranking.seed == 12345
    assert c.ranking.tie_break == ("submitted_at", "candidate")
    assert c.selection.development == "best" and c.selection.final == "last"
    assert c.filter.rule == "beat_baseline" and c.filter.beat == "all"
    assert c.judges is None and c.input.format is None and c.input.path == "."
    assert dict(c.scores) == {"n_qualified": "n_qualified", "winner_score": "winner_score"}
    assert c.analysis.bootstrap == 200 and c.analysis.level == 0.95 and c.analysis.stability


def test_full_config_round_trips():
    data = {
        "input": {"format": "codabench_json", "path": "exports/results.json"},
        "phases": {"development": "Feedback", "final": "Final",
                   "deadlines": {"Feedback": "2024-03-15T23:59:59+01:00"}},
        "judges": [{"task": "iris", "metric": "acc", "sorting": "desc", "weight": 2},
                   {"task": "wine", "direction": "lower", "phase": "Feedback"}],
        "ranking": {"method": "success_rate", "params": {"ties": "half"}, "missing": "pairwise",
                    "tie_break": ["candidate"], "seed": 7},
        "selection": {"development": "last", "final": "all"},
        "baselines": "starting_kit",
        "filter": {"rule": "top_k", "k": "auto", "on_empty": "error"},
        "analysis": {"bootstrap": 0, "level": 0.9, "stability": False},
        "output": {"scores": {"nq": "n_qualified", "tau": "dev_final_kendall_tau",
                              "w": "kendall_w", "stab": "stability"}},
    }
    c = parse_config(data)
    assert (c.analysis.bootstrap, c.analysis.level, c.analysis.stability) == (0, 0.9, False)
    assert c.judges[0].key == "iris/acc" and c.judges[0].weight == 2.0
    assert c.judges[1].key == "wine" and not c.judges[1].higher_is_better
    assert c.phases.deadlines["Feedback"] == pd.Timestamp("2024-03-15T22:59:59")
    assert c.baselines == ("starting_kit",)
    assert c.filter.k == "auto"
    assert parse_config(c.to_dict()) == c


def test_analysis_compare(tmp_path):
    assert Config().analysis.compare == ()
    c = parse_config({"analysis": {"compare": ["copeland", "average_rank"]}})
    assert c.analysis.compare == ("copeland", "average_rank")  # the order given
    assert c.to_dict()["analysis"]["compare"] == ["copeland", "average_rank"]
    assert parse_config(c.to_dict()) == c
    assert parse_config({"analysis": {"compare": "schulze"}}).analysis.compare == ("schulze",)
    for empty in ([], None):
        assert parse_config({"analysis": {"compare": empty}}).analysis.compare == ()
    path = tmp_path / "metascore.yaml"
    path.write_text("analysis:\n  bootstrap: 20\n  compare: [average_rank, epp]\n")
    assert load_config(path).analysis.compare == ("average_rank", "epp")


def test_load_config_file(tmp_path):
    path = tmp_path / "metascore.yaml"
    path.write_text("ranking:\n  method: copeland\nbaselines: [b1, b2]\n")
    c = load_config(path)
    assert c.ranking.method == "copeland" and c.baselines == ("b1", "b2")
    path.write_text("")
    assert load_config(path) == Config()


@pytest.mark.parametrize("data, message", [
    ({"rankng": {}}, r"^unknown key 'rankng' in metascore\.yaml \(did you mean 'ranking'\?\)\.$"),
    ({"zzz": 1}, r"unknown key 'zzz' in metascore\.yaml; valid keys are \['input'"),
    ({"ranking": {"metod": "mean"}}, r"unknown key 'ranking\.metod' .*did you mean 'method'"),
    ({"ranking": {"method": "kemeny"}}, r"`ranking\.method` must be one of \[.*'mean'.*\]; got 'kemeny'"),
    ({"ranking": {"method": "mean", "params": {"ties": "half"}}},
     r"unknown parameter 'ranking\.params\.ties' in metascore\.yaml; valid parameters are \[\]"),
    ({"ranking": {"seed": -1}}, r"`ranking\.seed` must be a non-negative integer; got -1"),
    ({"ranking": {"seed": True}}, r"`ranking\.seed` must be a non-negative integer; got True"),
    ({"ranking": {"tie_break": ["time"]}}, r"`ranking\.tie_break` must be one of .*got 'time'"),
    ({"selection": {"final": "first"}}, r"`selection\.final` must be one of \['best', 'last', 'all'\]; got 'first'"),
    ({"filter": {"rule": "top_k"}}, r"`filter\.k` is required with rule top_k"),
    ({"filter": {"k": 0}}, r"`filter\.k` must be a positive integer or 'auto'; got 0"),
    ({"filter": {"beat": "most"}}, r"`filter\.beat` must be one of \['all', 'any'\]; got 'most'"),
    ({"filter": {"on_empty": "ignore"}}, r"`filter\.on_empty` must be one of \['warn', 'error'\]"),
    ({"judges": []}, r"`judges` must be a non-empty list"),
    ({"judges": [{"metric": "acc"}]}, r"`judges\[0\]\.task` is required"),
    ({"judges": [{"task": "a", "direction": "up"}]},
     r"`judges\[0\]\.direction` must be one of \['higher', 'lower'\]; got 'up'"),
    ({"judges": [{"task": "a", "sorting": "dsc"}]},
     r"`judges\[0\]\.sorting` must be one of \['desc', 'asc'\]; got 'dsc' \(did you mean 'desc'\?\)"),
    ({"judges": [{"task": "a", "weight": -1}]},
     r"`judges\[0\]\.weight` must be a number >= 0 \(0: shown, not counted\); got -1"),
    ({"judges": [{"task": "a", "weight": 0}, {"task": "b", "weight": 0.0}]},
     r"`judges` all have weight 0, so nothing would be counted"),
    ({"judges": [{"task": "a"}, {"task": "a"}]}, r"judge 'a' is listed twice"),
    ({"judges": [{"task": "a", "taks": "b"}]}, r"unknown key 'judges\[0\]\.taks'.*did you mean 'task'"),
    ({"input": {"path": "/etc/passwd"}}, r"`input\.path` must be a relative path inside"),
    ({"input": {"path": "a/../../b"}}, r"`input\.path` must be a relative path inside"),
    ({"input": {"path": {"Final": "../x.csv"}}}, r"`input\.path\.Final` must be a relative path"),
    ({"phases": {"development": "P", "final": "P"}}, r"`phases\.final` must differ"),
    ({"phases": {"deadlines": {"Final": "soon"}}}, r"`phases\.deadlines\.Final` must be an ISO date"),
    ({"output": {"scores": {"x" * 37: "k"}}}, r"keys must be 1 to 36 characters"),
    ({"output": {"scores": {"a": "winner"}}}, r"`output\.scores\.a` must be one of .*got 'winner'"),
    ({"baselines": {"a": 1}}, r"`baselines` must be a list"),
    ({"analysis": {"bootsrap": 100}},
     r"^unknown key 'analysis\.bootsrap' in metascore\.yaml \(did you mean 'bootstrap'\?\)\.$"),
    ({"analysis": {"seed": 1}}, r"unknown key 'analysis\.seed' in metascore\.yaml; valid keys are "
                                r"\['bootstrap', 'level', 'stability', 'compare'\]"),
    ({"analysys": {}}, r"unknown key 'analysys' .*did you mean 'analysis'"),
    ({"analysis": [200]}, r"`analysis` must be a mapping; got \[200\]"),
    ({"analysis": {"bootstrap": 1}},
     r"`analysis\.bootstrap` must be 0 \(disabled\) or an integer >= 2; got 1\.$"),
    ({"analysis": {"bootstrap": -5}}, r"`analysis\.bootstrap` must be 0 .*; got -5"),
    ({"analysis": {"bootstrap": 100.5}}, r"`analysis\.bootstrap` must be 0 .*; got 100\.5"),
    ({"analysis": {"bootstrap": True}}, r"`analysis\.bootstrap` must be 0 .*; got True"),
    ({"analysis": {"level": 95}},
     r"`analysis\.level` must be a number strictly between 0 and 1 \(e\.g\. 0\.95\); got 95"),
    ({"analysis": {"level": 0}}, r"`analysis\.level` must be a number strictly .*; got 0"),
    ({"analysis": {"level": "high"}}, r"`analysis\.level` must be a number .*; got 'high'"),
    ({"analysis": {"stability": "yes"}}, r"`analysis\.stability` must be true or false; got 'yes'"),
    ({"analysis": {"compare": ["average_rank", "copland"]}},
     r"^metascore\.yaml: `analysis\.compare` must be one of \['average_rank', 'baldwin', 'copeland', .*\]; "
     r"got 'copland' \(did you mean 'copeland'\?\)\.$"),
    ({"analysis": {"compare": ["copeland", "schulze", "copeland"]}},
     r"^metascore\.yaml: `analysis\.compare` lists 'copeland' twice; list each method once\.$"),
    ({"analysis": {"compare": "average_rank, copeland"}},
     r"`analysis\.compare` must be a YAML list, one method per item \(e\.g\. \[average_rank, "
     r"copeland\]\); got 'average_rank, copeland'\.$"),
    ({"analysis": {"compare": {"copeland": 1}}},
     r"`analysis\.compare` must be a list of ranking methods; got \{'copeland': 1\}\.$"),
    ({"analysis": {"compare": [3]}}, r"`analysis\.compare` must be one of .*; got 3\.$"),
    ({"analysis": {"compare": ["copeland"], "bootstrap": 0}},
     r"`analysis\.compare` needs resamples: its criteria use analysis\.bootstrap trials, and "
     r"analysis\.bootstrap is 0\.$"),
    ({"output": {"scores": {"w": "kendal_w"}}},
     r"`output\.scores\.w` must be one of .*'kendall_w', 'stability'\]; got 'kendal_w' "
     r"\(did you mean 'kendall_w'\?\)"),
    ([1, 2], r"the top level must be a mapping"),
])
def test_errors(data, message):
    with pytest.raises(ConfigError, match=message):
        parse_config(data)


def test_yaml_errors(tmp_path):
    path = tmp_path / "metascore.yaml"
    path.write_text("ranking: [\n")
    with pytest.raises(ConfigError, match=r"metascore\.yaml: not valid YAML at line \d+"):
        load_config(path)
    path.write_text("!!python/object:os.system {}\n")  # safe_load refuses
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(path)
    with pytest.raises(ConfigError, match="configuration file not found"):
        load_config(tmp_path / "missing.yaml")


def test_validate_config_command(tmp_path, capsys):
    path = tmp_path / "metascore.yaml"
    path.write_text("ranking: {method: copeland}\nbaselines: [b]\n")
    assert main(["validate-config", str(path)]) == 0
    assert "metascore.yaml: OK: method copeland, phases Development -> Final" in capsys.readouterr().out
    path.write_text("rankng: {}\n")
    assert main(["validate-config", str(path)]) == 1
    err = capsys.readouterr().err
    assert err == "metascore: error: unknown key 'rankng' in metascore.yaml (did you mean 'ranking'?).\n"


@pytest.mark.parametrize(("ranking", "message"), [
    ({"method": "success_rate", "params": {"ties": "third"}},
     r"metascore\.yaml: `ranking\.params\.ties` must be one of \['zero', 'half'\]; got 'third'\."),
    ({"method": "sco", "params": {"tau": -1, "solver": "newton"}},
     r"`ranking\.params\.tau` must be a positive number; got -1\."),
    ({"method": "kemeny_young", "params": {"solver": [1, 2]}},
     r"`ranking\.params\.solver` must be one of \['auto', 'dp', 'ilp'\]; got \[1, 2\]\."),
    ({"method": "epp", "params": {"level": 95}},
     r"`ranking\.params\.level` must be a confidence level in \(0, 1\); got 95\."),
    ({"method": "sco", "params": {"iterations": True}},
     r"`ranking\.params\.iterations` must be a positive integer; got True\."),
])
def test_invalid_parameter_values_are_refused_by_validate_config(tmp_path, capsys, ranking, message):
    with pytest.raises(ConfigError, match=message):
        parse_config({"ranking": ranking})
    path = tmp_path / "metascore.yaml"
    path.write_text(yaml.safe_dump({"ranking": ranking}))
    assert main(["validate-config", str(path)]) == 1
    assert "OK" not in capsys.readouterr().out


@pytest.mark.parametrize(("text", "message"), [
    ("ranking: {method: mean}\nbaselines: [b]\nranking: {method: copeland}\n",
     r"metascore\.yaml: key 'ranking' appears twice \(lines 1 and 3\); keep one\."),
    ("judges:\n  - task: iris\n    weight: 1\n    weight: 2\n",
     r"metascore\.yaml: key 'weight' appears twice \(lines 3 and 4\); keep one\."),
])
def test_duplicate_yaml_keys_are_refused_with_their_lines(tmp_path, text, message):
    path = tmp_path / "metascore.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(path)


# ---------------------------------------------------------------- judges against the scores
def _two_phases() -> ScoreTable:
    rows = []
    for phase in ("Development", "Final"):
        for i, cand in enumerate(("a", "b", "c")):
            for metric, value in (("test_MAE", 0.3 + i / 10), ("test_R2", 0.7 - i / 10)):
                rows.append({"phase": phase, "candidate": cand, "participant": cand,
                             "task": "gdp", "metric": metric, "value": value,
                             "submitted_at": None, "is_baseline": False})
    return ScoreTable(pd.DataFrame(rows))


def test_did_you_mean_prefers_the_same_name_in_another_case():
    from metascore.errors import did_you_mean

    assert did_you_mean("test_mae", ["test_R2", "test_MAE"]) == " (did you mean 'test_MAE'?)"
    assert did_you_mean("gdp/test_mae", ["gdp/test_R2", "gdp/test_MAE"]) == \
        " (did you mean 'gdp/test_MAE'?)"
    assert did_you_mean("Accuracy", ["accuracy", "f1"]) == " (did you mean 'accuracy'?)"
    assert did_you_mean("rankng", ["ranking", "input"]) == " (did you mean 'ranking'?)"
    assert did_you_mean("zzz", ["ranking"]) == ""


def test_a_judge_metric_in_the_wrong_case_suggests_the_right_one():
    from metascore.errors import InputError
    from metascore.leaderboard import build_leaderboard

    config = parse_config({"judges": [{"task": "gdp", "metric": "test_mae", "direction": "lower"}],
                           "filter": {"rule": "none"}})
    with pytest.raises(InputError, match=r"judge 'gdp/test_mae'.*\(did you mean 'gdp/test_MAE'\?\)"):
        build_leaderboard(_two_phases(), config)


def test_a_judge_missing_from_the_final_phase_fails_before_any_ranking(monkeypatch):
    """A judge of the final phase only, misspelt: the error comes before the development
    phase is ranked (no ranking work is wasted, no progress is logged)."""
    from metascore.errors import InputError
    from metascore.leaderboard import build_leaderboard, plan

    calls: list[str] = []
    real = plan.rank

    def counted(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(plan, "rank", counted)
    config = parse_config({"judges": [{"task": "gdp", "metric": "test_MAE", "direction": "lower"},
                                      {"task": "gdp", "metric": "test_r2", "phase": "Final"}],
                           "filter": {"rule": "none"}})
    with pytest.raises(InputError, match=r"judge 'gdp/test_r2'.*phase 'Final' \(did you mean 'gdp/test_R2'\?\)"):
        build_leaderboard(_two_phases(), config)
    assert calls == []
