"""A judge of weight 0 is shown, not counted; a shared first place is said to be shared.

Library, metascore.yaml and every output file (leaderboard.csv, leaderboard.json,
detailed_results.html).
"""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pandas as pd
import pytest

import metascore as ms
from metascore.config import parse_config
from metascore.leaderboard import build_leaderboard
from metascore.readers.score_table import ScoreTable
from metascore.render.writers import render_outputs

VALUES = [[0.9, 0.2, 10.0], [0.8, 0.9, 50.0], [0.1, 0.5, np.nan]]


def test_a_weight_0_judge_is_set_aside_before_the_policy_and_every_method():
    m = ms.ScoreMatrix.from_array(VALUES, list("ABC"), ["acc", "f1", "diag"], weights=[1, 1, 0])
    same = ms.ScoreMatrix.from_array(np.array(VALUES)[:, :2], list("ABC"), ["acc", "f1"])
    for name in ms.ranking_method_names():
        # C misses only the weight-0 judge: drop_candidates keeps it
        r = ms.rank(m, name, missing="drop_candidates", seed=1)
        assert r.candidates == ("A", "B", "C") and r.judges == ("acc", "f1")
        np.testing.assert_allclose(r.scores, ms.rank(same, name, seed=1).scores)
        assert r.uncounted_judges == ("diag",)
        assert "judge 'diag' has weight 0: shown, not counted." in r.notes
        assert r.signature()["uncounted_judges"] == ["diag"]


def test_weights_must_not_be_negative_nor_all_0():
    with pytest.raises(ms.InputError, match=r"judge 'f1' has weight -1.0; weights must be >= 0"):
        ms.ScoreMatrix.from_array(VALUES, list("ABC"), ["acc", "f1", "diag"], weights=[1, -1, 0])
    with pytest.raises(ms.InputError, match=r"every judge has weight 0 \(3 judges\)"):
        ms.ScoreMatrix.from_array(VALUES, list("ABC"), ["acc", "f1", "diag"], weights=[0, 0, 0])


def table(values=VALUES, judges=("acc", "f1", "diag"), candidates="ABC") -> ScoreTable:
    return ScoreTable(pd.DataFrame([dict(phase="Dev", candidate=c, task=j, metric="", value=v)
                         for c, row in zip(candidates, values) for j, v in zip(judges, row)
                         if not np.isnan(v)]))


def outputs(values=VALUES, weights=(1, 1, 0), method="mean", judges=("acc", "f1", "diag"),
            candidates="ABC"):
    config = parse_config({
        "phases": {"development": "Dev", "final": None}, "filter": {"rule": "none"},
        "judges": [{"task": j, "weight": w} for j, w in zip(judges, weights)],
        "ranking": {"method": method}, "analysis": {"bootstrap": 0, "stability": False}})
    lb = build_leaderboard(table(values, judges, candidates), config)
    return lb, render_outputs(lb)


def test_every_output_shows_a_weight_0_judge_and_counts_it_nowhere():
    lb, files = outputs()
    # ranked on acc and f1 only: B (0.85), A (0.55), C (0.3)
    assert [r.candidate for r in lb.final.ranked] == ["B", "A", "C"]
    rows = list(csv.DictReader(io.StringIO(files["leaderboard.csv"])))
    assert [r["judge:diag"] for r in rows] == ["50.0", "10.0", ""]
    assert [r["judge_rank:diag"] for r in rows] == ["1.0", "2.0", "3.0"]  # missing: tied last
    doc = json.loads(files["leaderboard.json"])
    assert doc["final"]["judges"][2] == {"key": "diag", "higher_is_better": True, "weight": 0.0}
    assert doc["final"]["rows"][0]["judges"]["diag"] == 50.0
    assert doc["signature"]["uncounted_judges"] == ["diag"] and doc["signature"]["n_judges"] == 2
    assert "judge 'diag' has weight 0: shown, not counted." in doc["messages"]
    page = files["detailed_results.html"]
    assert "weight 0: shown, not counted" in page and '<span class="sub">not counted</span>' in page
    assert doc["config"]["judges"][2]["weight"] == 0.0
    assert doc["statistics"]["n_judges"] == 2.0 and "over 2 judges (acc and f1; 1 more shown, not counted)" in page
    assert '<div class="label">Judges</div><div class="value long">2 (+ 1 not counted)</div>' in page


def test_metascore_yaml_accepts_weight_0_and_refuses_all_0():
    assert parse_config({"judges": [{"task": "a", "weight": 0}, {"task": "b"}]}).judges[0].weight == 0
    with pytest.raises(ms.ConfigError, match=r"`judges` all have weight 0"):
        parse_config({"judges": [{"task": "a", "weight": 0}]})


# ---------------------------------------------------------------------- shared first place
def test_winners_names_everyone_in_a_shared_first_place():
    m = ms.ScoreMatrix.from_array([[1, 0], [0, 1], [0, 0]], list("ABC"))
    r = ms.rank(m, "mean", tie_break=["candidate"])
    assert r.winners == ("A", "B") and r.winner == "A"
    assert ms.rank(m, "plurality").winners == ("A", "B")
    assert ms.rank(ms.ScoreMatrix.from_array([[2, 1], [1, 0]], list("AB")), "mean").winners == ("A",)


def test_kemeny_young_names_every_candidate_first_in_an_optimal_order():
    # a Condorcet cycle: the three rotations are the optimal orders
    counts = ms.PairwiseCounts.from_votes([list("ABC"), list("BCA"), list("CAB")])
    r = ms.rank(counts, "kemeny_young")
    assert r.details["optimal_orders"] == 3 and r.winners == ("A", "B", "C")
    assert r.positions.tolist() == [1, 2, 3]  # one optimal order, chosen by label
    assert ("Kemeny optimum not unique (3 optimal orders): 3 candidates are first in one of "
            "them (A, B, C), so the first place is shared") in r.notes[0]
    # D is beaten by all and never first; A and B tie, C below them
    votes = [list("ABCD")] * 2 + [list("BACD")] * 2
    r = ms.rank(ms.PairwiseCounts.from_votes(votes), "kemeny_young")
    assert r.winners == ("A", "B") and r.details["winners"] == ["A", "B"]
    # a unique optimum: no winners detail
    r = ms.rank(ms.PairwiseCounts.from_votes([list("ABC")]), "kemeny_young")
    assert r.winners == ("A",) and "winners" not in r.details


def test_the_outputs_show_a_shared_first_place_as_shared():
    values = [[0.9, 0.1, 1.0], [0.1, 0.9, 1.0], [0.0, 0.0, 1.0]]
    lb, files = outputs(values, weights=(1, 1, 1))
    assert lb.winners == ("A", "B") and lb.winner == "A"
    doc = json.loads(files["leaderboard.json"])
    assert doc["winners"] == ["A", "B"] and doc["winner"] == "A"
    rows = list(csv.DictReader(io.StringIO(files["leaderboard.csv"])))
    assert [r["position"] for r in rows] == ["1", "1", "3"]
    page = files["detailed_results.html"]
    assert "Winners (shared first place)" in page and "A, B" in page
    assert page.count('<span class="badge b-win">shared first</span>') == 2
    assert any("A and B share first place" in m for m in doc["messages"])
    # one winner: the card and badge say so
    _, files = outputs([[0.9, 0.8, 1.0], [0.1, 0.9, 1.0], [0.0, 0.0, 1.0]], weights=(1, 1, 1))
    page = files["detailed_results.html"]
    assert "Winners (shared first place)" not in page
    assert page.count('<span class="badge b-win">winner</span>') == 1
    assert json.loads(files["leaderboard.json"])["winners"] == ["A"]
