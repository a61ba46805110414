"""``analysis.compare`` in the meta-scoring program: the comparison of ranking methods on the
ranked pool, in ``detailed_results.html`` and ``leaderboard.json`` (issue 10).

The fixture is the shared competition (``tests/shared_competition.py``), here with
``filter: {rule: top_k, k: 3}``: three of the four final candidates (dave-105, alice-101,
bob-103) qualify, over three judges; the baselines and the excluded candidate are not
ranked, so the comparison sees the three qualified ones only. With ``filter: {beat: any}``
only two qualify, too few to compare methods on (a note instead).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from metascore.analysis import Execution, compare_methods
from metascore.config import COMPARE_R, STABILITY_Q, parse_config
from metascore.render import writers
from metascore.leaderboard import build_leaderboard
from metascore.matrix import ScoreMatrix
from metascore.program import run
from metascore.readers.configured import load_scores

from shared_competition import CONFIG as COMPETITION
from shared_competition import FIXTURE

CONFIG = {**COMPETITION, "filter": {"rule": "top_k", "k": 3},
          "output": {"scores": {"n_qualified": "n_qualified", "winner_score": "winner_score",
                                "stability": "stability"}}}
METHODS = ["average_rank", "copeland", "success_rate"]
SECTION = "<h2>Comparison of ranking methods</h2>"


def _config(analysis=None, **over):
    return parse_config({**CONFIG, "analysis": {"bootstrap": 30, **(analysis or {})}, **over})


def _board(analysis=None, **over):
    config = _config(analysis, **over)
    table = load_scores(config.input, FIXTURE, development=config.phases.development)
    return build_leaderboard(table, config)


def test_program_adds_the_comparison_and_leaves_the_scores_alone(tmp_path):
    lines: list[str] = []
    plain = run(_config(), FIXTURE, tmp_path / "plain", log=lambda s: None)
    lb = run(_config({"compare": METHODS}), FIXTURE, tmp_path / "cmp", log=lines.append)
    for name in ("scores.json", "scores.txt", "leaderboard.csv"):
        assert (tmp_path / "cmp" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()
    assert plain.analysis.comparison is None and SECTION not in \
        (tmp_path / "plain" / "detailed_results.html").read_text()

    comp = lb.analysis.comparison
    assert comp is not None and lb.analysis.comparison_note is None
    assert comp.methods == tuple(METHODS)
    assert (comp.n_candidates, comp.n_judges) == (len(lb.filter.qualified), 3) == (3, 3)
    assert (comp.n_trials, comp.q, comp.r, comp.seed, comp.missing) == \
        (30, STABILITY_Q, COMPARE_R, 12345, "worst")
    assert "[*] method comparison: average_rank, copeland, success_rate (30 trials, " \
           "stabilities 50 x 5, seed 12345)" in lines

    page = (tmp_path / "cmp" / "detailed_results.html").read_text()
    section = page[page.index(SECTION):]
    section = section[:section.index("</section>")]
    assert "(3 candidates × 3 judges)" in section and "the leaderboard uses average_rank" in section
    for method in METHODS:
        assert f"{method}</td>" in section or f"{method}<span" in section
        assert f"<title>{method}: " in section  # its point on the error-bar plots
    assert section.count('class="current" title="the method that ranks this leaderboard">in use</span>') == 1
    assert 'average_rank<span class="current"' in section
    assert "30 resamples for the winner rank (candidates)" in section
    assert "50 rankings × 5 repetitions" in section and "Seed 12345" in section

    doc = json.loads((tmp_path / "cmp" / "leaderboard.json").read_text())
    cmp_doc = doc["analysis"]["comparison"]
    assert [r["method"] for r in cmp_doc["rows"]] == METHODS
    assert (cmp_doc["seed"], cmp_doc["n_trials"], cmp_doc["n_candidates"]) == (12345, 30, 3)
    assert doc["analysis"]["comparison_note"] is None
    assert doc["config"]["analysis"]["compare"] == METHODS


def test_the_comparison_describes_the_ranked_pool():
    """The same table as compare_methods on the matrix the final ranking used: the qualified
    candidates only (not the baselines nor the excluded one), with the program's settings."""
    lb = _board({"compare": METHODS})
    rows = {r.candidate: r for r in lb.final.rows}
    qualified = list(lb.filter.qualified)
    assert qualified == ["dave-105", "alice-101", "bob-103"] and len(rows) == 6  # + 2 baselines, 1 excluded
    board = lb.final
    values = [[np.nan if rows[c].values[j] is None else rows[c].values[j] for j in board.judges]
              for c in qualified]
    pool = ScoreMatrix.from_array(values, qualified, board.judges,
                                  higher_is_better=list(board.higher_is_better))
    direct = compare_methods(pool, METHODS, n_trials=30, q=STABILITY_Q, r=COMPARE_R,
                             run=Execution(seed=12345, missing="worst"))
    pd.testing.assert_frame_equal(lb.analysis.comparison.table, direct.table)
    other_seed = _board({"compare": METHODS}, ranking={"seed": 7}).analysis.comparison
    assert other_seed.seed == 7 and not other_seed.table.equals(direct.table)


def test_configured_parameters_go_to_the_configured_method_only():
    lb = _board({"compare": ["copeland", "success_rate"]}, filter={"rule": "none"},
                ranking={"method": "success_rate", "params": {"ties": "half"}})
    comp = lb.analysis.comparison
    assert comp.params == {"copeland": {}, "success_rate": {"ties": "half"}}
    assert comp.n_candidates == 4
    doc = json.loads(writers.render_outputs(lb)["leaderboard.json"])
    assert doc["analysis"]["comparison"]["params"]["success_rate"] == {"ties": "half"}
    page = writers.render_outputs(lb)["detailed_results.html"]
    assert 'success_rate<span class="current" title="the method that ranks this leaderboard">in use</span>' in page


DEADLINE = "2024-03-15T23:59:59+00:00"  # leaves one qualified final candidate


@pytest.mark.parametrize("over, why", [
    ({"filter": {"rule": "beat_baseline"}, "selection": {"final": "last"},
      "phases": {"deadlines": {"Development": DEADLINE, "Final": DEADLINE}}},
     "the method comparison (analysis.compare) was not computed: it needs at least 3 ranked "
     "candidates (with fewer the criteria cannot tell the methods apart) and 1 was ranked."),
    ({"filter": {"beat": "any"}},  # two qualify: a comparison would only order one pair
     "the method comparison (analysis.compare) was not computed: it needs at least 3 ranked "
     "candidates (with fewer the criteria cannot tell the methods apart) and 2 were ranked."),
    ({"judges": [{"task": "iris", "metric": "accuracy"}]},
     "the method comparison (analysis.compare) was not computed: it needs at least 2 judges "
     "(generalization tests on the judges a resample leaves out) and the final ranking uses "
     "only 1."),
])
def test_too_small_a_pool_leaves_a_note_and_every_output(tmp_path, over, why):
    lines: list[str] = []
    lb = run(_config({"compare": METHODS}, **over), FIXTURE, tmp_path / "cmp", log=lines.append)
    run(_config(**over), FIXTURE, tmp_path / "plain", log=lambda s: None)
    assert lb.analysis.comparison is None and lb.analysis.comparison_note == why
    assert f"[!] {why}" in lines
    for name in writers.OUTPUT_FILES:
        assert (tmp_path / "cmp" / name).is_file()
    assert (tmp_path / "cmp" / "scores.json").read_bytes() == \
        (tmp_path / "plain" / "scores.json").read_bytes()
    page = (tmp_path / "cmp" / "detailed_results.html").read_text()
    assert f'{SECTION}<p class="note">{why}</p></section>' in page
    assert "ms-an" not in page  # no table, no plots
    doc = json.loads((tmp_path / "cmp" / "leaderboard.json").read_text())
    assert doc["analysis"]["comparison"] is None and doc["analysis"]["comparison_note"] == why


def test_a_comparison_that_fails_on_the_data_does_not_fail_the_run(tmp_path, monkeypatch):
    from metascore.errors import InputError
    from metascore.leaderboard import statistics

    def fail(*args, **kwargs):
        raise InputError("every trial drew the same candidate.")

    monkeypatch.setattr(statistics, "compare_methods", fail)
    lines: list[str] = []
    lb = run(_config({"compare": METHODS}), FIXTURE, tmp_path, log=lines.append)
    why = ("the method comparison (analysis.compare) was not computed: every trial drew the "
           "same candidate.")
    assert lb.analysis.comparison_note == why and f"[!] {why}" in lines
    assert json.loads((tmp_path / "scores.json").read_text())["n_qualified"] == 3


def test_same_seed_same_report():
    a = writers.render_outputs(_board({"compare": METHODS}))
    b = writers.render_outputs(_board({"compare": METHODS}))
    assert a == b
