"""The command line ranks in two steps (``--group-by``, ``--group``, ``--group-weight``,
``--within``) and ``metascore analyze`` compares the benchmark rules like the others."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from metascore.cli import main

#   cola/mcc sst/acc mrpc/acc mrpc/f1   task means: cola sst  mrpc
# A   60       90      80       85                  60   90   82.5
# B   55       95      82       86                  55   95   84
# C   58       93      84       80                  58   93   82
LONG = """candidate,task,metric,value
A,cola,mcc,60
A,sst,acc,90
A,mrpc,acc,80
A,mrpc,f1,85
B,cola,mcc,55
B,sst,acc,95
B,mrpc,acc,82
B,mrpc,f1,86
C,cola,mcc,58
C,sst,acc,93
C,mrpc,acc,84
C,mrpc,f1,80
"""
FAST = ["--trials", "20", "--q", "5", "--r", "2", "--quiet"]
RULES = ["plurality", "dowdall", "geometric_mean", "minimax", "baldwin", "threshold",
         "optimality_gap"]


@pytest.fixture
def scores(tmp_path) -> Path:
    path = tmp_path / "glue.csv"
    path.write_text(LONG)
    return path


def test_rank_in_two_steps_by_task(scores, capsys):
    # copeland across the task means, cola weighing 2: A beats C 3-1 (cola, mrpc against
    # sst), A ties B 2-2 (cola against sst and mrpc), B ties C 2-2 (sst and mrpc against cola)
    assert main(["rank", str(scores), "-m", "copeland", "--group-by", "task", "--within", "mean",
                 "--group-weight", "cola=2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = {r["candidate"]: r for r in doc["rows"]}
    assert rows["A"]["group_score:mrpc"] == pytest.approx(82.5)
    assert [r["candidate"] for r in doc["rows"]] == ["A", "B", "C"]
    assert doc["signature"]["groups"] == {"within": "mean", "within_params": {}, "groups": {
        "cola": {"weight": 2.0, "judges": 1}, "sst": {"weight": 1.0, "judges": 1},
        "mrpc": {"weight": 1.0, "judges": 2}}}


def test_rank_with_named_groups_and_a_rule_inside_with_parameters(scores, capsys):
    assert main(["rank", str(scores), "-m", "mean", "--group", "glue=cola/mcc,sst/acc",
                 "para=mrpc/acc,mrpc/f1", "--within", "optimality_gap",
                 "--within-param", "gamma=85", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # glue gaps below 85: A (25 + 0) / 2, B 15, C 13.5; para: A 2.5, B 1.5, C (1 + 5) / 2
    rows = {r["candidate"]: r for r in doc["rows"]}
    assert rows["A"]["group_score:glue"] == pytest.approx(-12.5)
    assert rows["C"]["score"] == pytest.approx(-(13.5 + 3) / 2)


@pytest.mark.parametrize("args, message", [
    (["--within", "mean"], "--within needs groups: give --group-by or --group"),
    (["--group-by", "task", "--group", "a=cola/mcc"], "give --group-by or --group, not both"),
    (["--group-by", "task", "--within-param", "gamma=1"], "--within-param needs --within"),
    (["--group-by", "task", "--group-weight", "cola=heavy"], "the weight must be a number"),
    (["--group", "a=cola/mcc,sst/acc"], r"judge 'mrpc/acc' is in no group"),
    (["--group-by", "task", "--group-weight", "glue=1"], r"group weights name group 'glue'"),
])
def test_bad_group_options_are_one_line_errors(scores, args, message, capsys):
    assert main(["rank", str(scores), *args]) == 1
    err = capsys.readouterr().err
    assert re.search(message, err) and len(err.strip().splitlines()) == 1


def test_config_mode_refuses_the_group_options(scores, tmp_path, capsys):
    config = tmp_path / "metascore.yaml"
    config.write_text("phases: {development: Dev, final: null}\n")
    with pytest.raises(SystemExit) as exc:
        main(["rank", "--config", str(config), "--input", str(tmp_path), "--output",
              str(tmp_path / "out"), "--group-by", "task"])
    assert exc.value.code == 2
    assert "--group-by (set ranking.groups.by)" in capsys.readouterr().err


def test_analyze_compares_the_benchmark_rules_with_their_properties(scores, tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["analyze", str(scores), "--methods", ",".join(RULES), "--out", str(out),
                 *FAST]) == 0
    text = capsys.readouterr().out
    assert "condorcet  pareto  order_only  unanimity" in text
    for name in RULES:
        assert re.search(rf"^{name}\s+\d\.\d{{3}} ± ", text, re.M), name
    rows = {r["method"]: r for r in json.loads((out / "analysis.json").read_text())["comparison"]["rows"]}
    assert (rows["minimax"]["condorcet"], rows["minimax"]["unanimity"]) == (True, False)
    assert (rows["geometric_mean"]["order_only"], rows["baldwin"]["condorcet"]) == (False, True)
    assert "<th title=\"a strict order every judge gives is the ranking, without ties\">" \
           "Unanimity</th>" in (out / "analysis.html").read_text()


def test_analyze_in_two_steps_records_the_groups(scores, tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["analyze", str(scores), "--methods", "copeland,dowdall", "--group-by", "task",
                 "--out", str(out), *FAST]) == 0
    settings = json.loads((out / "analysis.json").read_text())["settings"]
    assert settings["groups"]["groups"]["mrpc"] == {"weight": 1.0, "judges": 2}
    assert settings["notes"][0].startswith("the judges are in groups, so each method ranks in "
                                           "two steps")
