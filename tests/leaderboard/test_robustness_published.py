"""Issue 51 item 4, published: leaderboard.json's ``robustness`` section, computed when the
leaderboard is built, on the final phase's qualified candidates and judges.

The final pool {alice, bob, carol} on judges j1, j2, j3 of weights 1, 2, 1 (higher is
better), per-judge ranks alice (1, 3, 1), bob (2, 1, 3), carol (3, 2, 2): average ranks
2, 1.75, 2.25, so bob wins. bob - alice per judge, in minus ranks: (-1, 2, -2): alice
passes bob when every weight moves by 1/7 (j1 and j3 up, j2 down). zed, best on every
final judge, did not beat the baseline in development: the figure re-weights the final
judges of the qualified pool, never the filter.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from metascore.config import parse_config
from metascore.leaderboard import build_leaderboard
from metascore.readers.score_table import ScoreTable
from metascore.render.writers import leaderboard_json

FINAL = {"alice": [3, 1, 3], "bob": [2, 3, 1], "carol": [1, 2, 2], "zed": [9, 9, 9],
         "base": [0, 0, 0]}
DEVELOPMENT = {"alice": [5, 5, 5], "bob": [4, 4, 4], "carol": [3, 3, 3], "zed": [1, 1, 1],
               "base": [2, 2, 2]}
CONFIG = {"judges": [{"task": "j1", "metric": "m", "weight": 1},
                     {"task": "j2", "metric": "m", "weight": 2},
                     {"task": "j3", "metric": "m", "weight": 1}],
          "baselines": ["base"], "filter": {"beat": "any"},
          "analysis": {"bootstrap": 0, "stability": False}}


def table(final=FINAL, development=DEVELOPMENT) -> ScoreTable:
    rows = [{"phase": phase, "candidate": f"{who}-{k}", "participant": who, "task": f"j{j + 1}",
             "metric": "m", "value": float(v)}
            for phase, board in (("Development", development), ("Final", final))
            for k, (who, values) in enumerate(board.items()) for j, v in enumerate(values)]
    return ScoreTable(pd.DataFrame(rows))


def published(config=CONFIG, **kw) -> dict:
    lb = build_leaderboard(table(**kw), parse_config(config))
    return json.loads(leaderboard_json(lb))["robustness"]


def test_leaderboard_json_publishes_the_figures_of_the_first_three_places():
    rob = published()
    assert (rob["method"], rob["n_candidates"], rob["n_judges"], rob["note"]) == ("average_rank", 3, 3, None)
    first, second, third = rob["places"]
    assert (first["position"], first["holder"], first["kind"], first["challenger"]) == (1, "bob-1", "exact", "alice-0")
    assert first["shift"] == pytest.approx(1 / 7)
    assert (first["raised"], first["lowered"], first["n_raised"]) == (["j1/m", "j3/m"], ["j2/m"], 1 + 1)
    assert (second["holder"], second["challenger"], second["shift"]) == ("alice-0", "bob-1", pytest.approx(1 / 7))
    assert (third["holder"], third["challenger"], third["shift"]) == ("carol-2", "alice-0", pytest.approx(1 / 5))
    assert "zed-3" not in json.dumps(rob)  # excluded by the filter: never a challenger
    # 1/7 = 14.29%: whole percents from 10%, rounded down then up; 1/5 falls on the grid
    assert rob["sentence"] == (
        "Every judge's weight may move by up to 14% in any direction and bob stays first; "
        "a 15% shift (more weight on m on j1 and m on j3, less on m on j2) puts alice first. "
        "Second place (alice) holds under shifts up to 14%; third place (carol) holds under "
        "shifts up to 19.9%.")


def test_a_method_without_a_figure_says_why_and_nobody_ranked_publishes_no_place():
    rob = published({**CONFIG, "ranking": {"method": "median"}})
    assert [p["kind"] for p in rob["places"]] == ["not computed"] * 3
    assert "median" in rob["sentence"] and "half of the total" in rob["note"]
    nobody = published({**CONFIG, "filter": {"rule": "top_k", "k": 1}},
                       development={**DEVELOPMENT, "zed": [9, 9, 9]})
    assert nobody["places"] == [] and nobody["n_candidates"] == 1
    assert nobody["sentence"] == ("zed is the only candidate ranked: no re-weighting of the "
                                  "judges changes the winner.")
