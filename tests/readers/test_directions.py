"""Directions from the competition where known, warnings where a name says lower is better
(issue 14): the leaderboard columns' ``sorting`` in ``codabench.json`` next to a tree."""

from __future__ import annotations

import json
import shutil

import pytest

from metascore.cli import main
from metascore.cli.common import read_matrix_file
from metascore.config import parse_config
from metascore.readers.directions import direction_warnings, looks_lower_is_better
from metascore.errors import InputError
from metascore.readers.columns import COLUMNS_FILE, read_directions
from metascore.leaderboard import build_leaderboard
from metascore.program import run
from metascore.readers.configured import load_scores
from repo_paths import TESTS

TREE = TESTS / "data" / "competition" / "tree"
JUDGES = [{"task": "iris", "metric": "accuracy"}, {"task": "wine", "metric": "mae", "direction": "lower"},
          {"task": "digits", "metric": "f1"}]
NO_ANALYSIS = {"bootstrap": 0, "stability": False}


def _columns(sortings: dict[str, str], **extra) -> dict:
    cols = [{"key": k, "title": k.upper(), "index": i, "sorting": s, "hidden": False, "computation": None}
            for i, (k, s) in enumerate(sortings.items())]
    cols += [{"key": k, "title": k, "index": 9, "sorting": "desc", **v} for k, v in extra.items()]
    return {"phases": [{"name": p, "tasks": [{"name": t, "folder": t} for t in ("iris", "wine", "digits")],
                        "leaderboard": {"title": "Results", "columns": cols}}
                       for p in ("Development", "Final")]}


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(TREE, root)
    (root / COLUMNS_FILE).write_text(json.dumps(_columns(
        {"accuracy": "desc", "mae": "asc", "f1": "desc"}, avg={"computation": "avg", "sorting": "asc"})))
    return root


def _rows(config, root):
    table = load_scores(config.input, root, development=config.phases.development)
    lb = build_leaderboard(table, config)
    return [(r.candidate, r.position, r.qualified) for r in lb.final.rows]


def test_read_directions_keys_titles_and_skips_computed(tree):
    d = read_directions(tree)
    assert d == {"accuracy": True, "ACCURACY": True, "mae": False, "MAE": False, "f1": True, "F1": True}
    assert read_directions(tree.parent) == {}


def test_conflicting_sortings_are_an_error(tree):
    data = json.loads(json.dumps(_columns({"mae": "asc"})))  # two phases, two lists
    data["phases"][1]["leaderboard"]["columns"][0]["sorting"] = "desc"
    (tree / COLUMNS_FILE).write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"column 'mae' sorts 'desc'.*one direction in every phase"):
        read_directions(tree)


def test_config_without_judges_takes_the_columns_directions(tree):
    base = {"baselines": ["organizers"], "analysis": NO_ANALYSIS}
    explicit = _rows(parse_config({**base, "judges": JUDGES}), tree)
    assert _rows(parse_config(base), tree) == explicit  # mae lower, from the columns
    (tree / COLUMNS_FILE).unlink()
    assert _rows(parse_config(base), tree) != explicit  # mae read higher-is-better


def test_judge_without_direction_takes_its_column(tree):
    undirected = [{k: v for k, v in j.items() if k != "direction"} for j in JUDGES]
    config = parse_config({"judges": undirected, "baselines": ["organizers"], "analysis": NO_ANALYSIS})
    assert config.to_dict()["judges"][1] == {"task": "wine", "metric": "mae", "weight": 1.0}
    explicit = _rows(parse_config({"judges": JUDGES, "baselines": ["organizers"], "analysis": NO_ANALYSIS}), tree)
    assert _rows(config, tree) == explicit
    # a direction given in the configuration wins over the column
    wrong = [dict(j, direction="higher") if j["metric"] == "mae" else j for j in undirected]
    config = parse_config({"judges": wrong, "baselines": ["organizers"], "analysis": NO_ANALYSIS})
    assert _rows(config, tree) != explicit
    lines: list[str] = []
    run(config, tree, tree.parent / "out", log=lines.append)
    assert ("[!] judge 'wine/mae': the configuration says higher is better, but the competition's "
            "column sorts asc; the configuration wins.") in lines


def test_config_mode_warns_about_lower_is_better_names_without_direction(tmp_path):
    lines: list[str] = []
    config = parse_config({"baselines": ["organizers"], "analysis": NO_ANALYSIS})
    run(config, TREE, tmp_path / "out", log=lines.append)
    warned = [line for line in lines if line.startswith("[!] judge")]
    warning = ("judge 'wine/mae' is ranked as higher-is-better, but its name says lower is better; "
               "if it is, give its `direction: lower` in the configuration's judges.")
    assert warned == [f"[!] {warning}"]
    # issue 24: the warning reaches the files an organizer reads, not only the console
    assert warning in json.loads((tmp_path / "out" / "leaderboard.json").read_text())["messages"]
    page = (tmp_path / "out" / "detailed_results.html").read_text()
    assert "judge &#x27;wine/mae&#x27; is ranked as higher-is-better" in page


def test_quick_mode_uses_the_columns_and_warns_otherwise(tree, capsys):
    alerts: list[str] = []
    m = read_matrix_file(tree, phase="Final", alerts=alerts)
    assert dict(zip(m.judges, m.higher_is_better)) == {"digits/f1": True, "iris/accuracy": True, "wine/mae": False}
    assert alerts == []
    assert main(["rank", str(TREE), "--phase", "Final"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == ["metascore: warning: judge 'wine/mae' is ranked as higher-is-better, but its name "
                   "says lower is better; if it is, give -l wine/mae (or --exclude wine/mae if it is "
                   "not a score)."]
    assert main(["rank", str(TREE), "--phase", "Final", "-l", "wine/mae"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("name, lower", [
    ("mae", True), ("RMSE", True), ("val_logLoss", True), ("error_rate", True), ("Duration", True),
    ("training time", True), ("accuracy", False), ("f1", False), ("auc", False), ("timeliness", False),
])
def test_lower_is_better_names(name, lower):
    assert looks_lower_is_better(name) is lower
    assert bool(direction_warnings([(name, "", name)], "x")) is lower
