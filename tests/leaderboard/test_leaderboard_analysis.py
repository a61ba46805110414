"""The analysis of the final ranking in the leaderboard outputs (SPEC 4, 7, 8).

Final pool of the shared fixture with ``filter: {rule: none}`` and ``selection.final:
best`` (4 candidates, 3 judges; carol's wine score is missing, ranked last)::

    per-judge ranks   iris  wine  digits   rank sum
    dave-105           1     1     1.5       3.5
    alice-101          2     2     1.5       5.5
    bob-103            3     3     3         9
    carol-104          4     4     4        12

Kendall's W with the tie correction (one pair tied on digits, sum t^3 - t = 6): the rank
sums deviate from their mean 7.5 by -4, -2, 1.5, 4.5, so S = 42.5 and
W = 12 S / (m^2 (n^3 - n) - m sum(t^3 - t)) = 510 / (540 - 18) = 85 / 87; the mean
Spearman is (m W - 1) / (m - 1) = 28 / 29. bob and carol are 3rd and 4th on every judge,
so on every resample of the judges: their intervals are [3, 3] and [4, 4]. dave is first
unless a resample draws digits three times (probability 1/27), when dave and alice tie
first: P(first) of dave is 1 - 1/54 in expectation.
"""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pandas as pd
import pytest

from metascore.config import parse_config
from metascore.errors import MetascoreError
from metascore.render import writers
from metascore.render.report import render_report
from metascore.leaderboard import build_leaderboard
from metascore.program import run
from metascore.readers.configured import load_scores
from metascore.readers.score_table import ScoreTable

from shared_competition import CONFIG as COMPETITION
from shared_competition import FIXTURE

CONFIG = {
    **COMPETITION,
    "filter": {"rule": "none"},
    "output": {"scores": {"n_qualified": "n_qualified", "agreement": "kendall_w",
                          "stability": "stability"}},
}


def _board(**over):
    config = parse_config({**CONFIG, **over})
    table = load_scores(config.input, FIXTURE, development=config.phases.development)
    return build_leaderboard(table, config)


def test_rows_carry_rank_intervals():
    lb = _board()
    rows = {r.candidate: r for r in lb.final.rows}
    for r in lb.final.ranked:
        assert r.rank_low <= r.rank <= r.rank_high
        assert 0 <= r.p_first <= 1
    assert (rows["bob-103"].rank_low, rows["bob-103"].rank_high) == (3, 3)
    assert (rows["carol-104"].rank_low, rows["carol-104"].rank_high) == (4, 4)
    assert rows["bob-103"].p_first == rows["carol-104"].p_first == 0
    assert rows["dave-105"].rank_low == 1
    assert rows["dave-105"].p_first == pytest.approx(1 - 1 / 54, abs=0.02)
    assert sum(r.p_first for r in lb.final.ranked) == pytest.approx(1)
    # dave's interval reaches alice's: one group; bob and carol are each on their own
    assert [r.group for r in lb.final.ranked] == [1, 1, 2, 3]
    for r in lb.final.rows:
        if r.position is None:  # baselines
            assert (r.rank_low, r.rank_high, r.p_first, r.group) == (None,) * 4
    u = lb.analysis.uncertainty
    assert (u.method, u.n_trials, u.level, u.seed) == ("average_rank", 200, 0.95, 12345)


def test_agreement_and_stability_statistics():
    lb = _board()
    assert lb.analysis.agreement.w == pytest.approx(85 / 87)
    assert lb.analysis.agreement.mean_spearman == pytest.approx(28 / 29)
    assert lb.statistics["kendall_w"] == pytest.approx(85 / 87)
    st = lb.analysis.stability
    assert (st.q, st.r, st.axis, st.concordance) == (50, 1, "judges", "kendall_w")
    assert 0.9 < lb.statistics["stability"] <= 1
    assert lb.scores == {"n_qualified": 4.0, "agreement": pytest.approx(85 / 87),
                         "stability": lb.statistics["stability"]}
    assert lb.analysis.notes == ()


def test_outputs_hold_the_analysis(tmp_path):
    lb = _board()
    files = writers.render_outputs(lb)
    rows = list(csv.DictReader(io.StringIO(files["leaderboard.csv"])))
    assert [(r["candidate"], r["rank_low"], r["rank_high"], r["p_first"], r["group"])
            for r in rows][2:] == [
        ("bob-103", "3.0", "3.0", "0.0", "2"),
        ("carol-104", "4.0", "4.0", "0.0", "3"),
        ("baseline_rf", "", "", "", ""),
        ("baseline_knn", "", "", "", ""),
    ]
    doc = json.loads(files["leaderboard.json"])
    a = doc["analysis"]
    assert a["judge_agreement"]["kendall_w"] == pytest.approx(85 / 87)
    assert a["judge_agreement"]["mean_spearman"] == pytest.approx(28 / 29)
    assert a["stability"]["kendall_w"] == doc["statistics"]["stability"]
    assert (a["stability"]["q"], a["stability"]["r"], a["stability"]["seed"]) == (50, 1, 12345)
    assert a["rank_uncertainty"] == {"method": "average_rank", "n_trials": 200, "level": 0.95,
                                     "seed": 12345, "missing": "worst", "resampled": "judges",
                                     "groups": 3}
    assert a["settings"] == {"bootstrap": 200, "level": 0.95, "seed": 12345,
                             "stability_q": 50, "stability_r": 1}
    assert doc["final"]["rows"][0]["rank_low"] == 1.0
    assert doc["config"]["analysis"] == {"bootstrap": 200, "level": 0.95, "stability": True,
                                         "compare": []}
    assert (a["comparison"], a["comparison_note"]) == (None, None)


def test_report_sections():
    page = render_report(_board())
    assert "<h2>Rank uncertainty</h2>" in page
    assert ("Bootstrap over the judges: 200 resamples of the 3 judges, drawn with replacement "
            "(seed 12345), each ranked again with average_rank") in page
    assert 'aria-label="Rank uncertainty: bootstrap rank intervals"' in page
    assert "3 groups: shaded bands" in page
    assert "<h2>Judge agreement and stability</h2>" in page
    assert '<td class="num">0.977</td>' in page  # 85/87
    assert "strong: the judges largely agree" in page
    assert "Stability: Kendall&#x27;s W of 50 rankings on resampled judges" in page
    assert "<th class=\"num\" title=\"bootstrap rank interval" in page


def test_bootstrap_zero_disables_the_intervals():
    lb = _board(analysis={"bootstrap": 0})
    assert lb.analysis.uncertainty is None
    assert all((r.rank_low, r.rank_high, r.p_first, r.group) == (None,) * 4
               for r in lb.final.rows)
    assert lb.analysis.notes == ("rank uncertainty is disabled (analysis.bootstrap: 0).",)
    assert lb.analysis.agreement is not None and lb.analysis.stability is not None
    files = writers.render_outputs(lb)
    rows = list(csv.DictReader(io.StringIO(files["leaderboard.csv"])))
    assert {r[c] for r in rows for c in ("rank_low", "rank_high", "p_first", "group")} == {""}
    doc = json.loads(files["leaderboard.json"])
    assert doc["analysis"]["rank_uncertainty"] is None
    assert doc["analysis"]["notes"] == ["rank uncertainty is disabled (analysis.bootstrap: 0)."]
    page = files["detailed_results.html"]
    assert "<h2>Rank uncertainty</h2>" not in page and "Rank interval" not in page
    assert "Note: rank uncertainty is disabled (analysis.bootstrap: 0)." in page


def test_stability_can_be_disabled():
    lb = _board(analysis={"stability": False})
    assert lb.analysis.stability is None and lb.analysis.uncertainty is not None
    assert "stability" not in lb.scores
    assert ("scores.json omits 'stability': statistic 'stability' is undefined (stability is "
            "disabled (analysis.stability: false)).") in lb.messages


def test_same_seed_same_bytes_other_seed_other_draws():
    a = writers.render_outputs(_board())
    b = writers.render_outputs(_board())
    assert a["leaderboard.json"] == b["leaderboard.json"]
    assert a["detailed_results.html"] == b["detailed_results.html"]
    assert a == b
    c = _board(ranking={"seed": 7})
    assert c.analysis.uncertainty.seed == 7 and c.analysis.stability.seed == 7
    assert writers.render_outputs(c)["leaderboard.json"] != a["leaderboard.json"]


def test_skipped_with_a_reason():
    # one qualified candidate: nothing to analyse
    deadline = "2024-03-15T23:59:59+00:00"
    lb = _board(filter={"rule": "beat_baseline"}, selection={"final": "last"},
                phases={"deadlines": {"Development": deadline, "Final": deadline}})
    assert len(lb.final.ranked) == 1
    assert lb.analysis.uncertainty is lb.analysis.agreement is lb.analysis.stability is None
    assert lb.analysis.notes == (
        "rank uncertainty, judge agreement and stability were not computed: they need at "
        "least 2 ranked candidates and 1 was ranked.",)
    assert "scores.json omits 'agreement': statistic 'kendall_w' is undefined (rank " \
           "uncertainty, judge agreement and stability were not computed" in lb.messages[0]
    assert "<h2>Rank uncertainty</h2>" not in render_report(lb)
    # one judge: resampling the judges is meaningless
    lb = _board(judges=[{"task": "iris", "metric": "accuracy"}])
    assert lb.analysis.uncertainty is None
    assert lb.analysis.notes == (
        "rank uncertainty, judge agreement and stability were not computed: they resample "
        "the judges and the final ranking uses only 1 judge.",)
    # agreement needs complete rankings
    lb = _board(ranking={"missing": "pairwise"})
    assert lb.analysis.agreement is None and lb.analysis.uncertainty is not None
    assert lb.analysis.notes[0].startswith("judge agreement is not computed under missing: "
                                           "pairwise")


def test_drop_candidates_analyses_the_ranked_pool():
    """carol has a missing score: ``drop_candidates`` ranks and analyses the other three."""
    lb = _board(ranking={"missing": "drop_candidates"})
    assert lb.analysis.uncertainty.candidates == ("dave-105", "alice-101", "bob-103")
    rows = {r.candidate: r for r in lb.final.rows}
    assert rows["carol-104"].position is None and rows["carol-104"].rank_low is None
    assert (rows["bob-103"].rank_low, rows["bob-103"].rank_high) == (3, 3)


def test_undefined_agreement_is_an_error():
    """Every judge ties the two candidates: W is 0/0, which scores.json refuses."""
    frame = pd.DataFrame({
        "phase": "Development", "candidate": np.repeat(["a", "b"], 2),
        "participant": None, "task": ["t1", "t2"] * 2, "metric": "", "value": 0.5,
    })
    config = parse_config({"phases": {"final": None},
                           "output": {"scores": {"w": "kendall_w"}}})
    with pytest.raises(MetascoreError,
                       match=r"scores\.json key 'w': statistic 'kendall_w' is nan, not a finite"):
        build_leaderboard(ScoreTable(frame), config)


def test_program_logs_the_analysis(tmp_path):
    config = parse_config({**CONFIG, "analysis": {"bootstrap": 0}})
    lines: list[str] = []
    run(config, FIXTURE, tmp_path / "out", log=lines.append)
    assert "[*] analysis: 0 judge resamples for rank intervals (level 0.95), stability on, " \
           "seed 12345" in lines
    assert "[*] rank uncertainty is disabled (analysis.bootstrap: 0)." in lines
    scores = json.loads((tmp_path / "out" / "scores.json").read_text())
    assert scores["agreement"] == pytest.approx(85 / 87)


def test_progress_is_reported_for_slow_methods():
    """Methods without a fast path rank every resample: progress reaches the total."""
    config = parse_config({**CONFIG, "ranking": {"method": "schulze"},
                           "analysis": {"bootstrap": 20}})
    table = load_scores(config.input, FIXTURE, development=config.phases.development)
    seen: dict[str, tuple[int, int]] = {}
    build_leaderboard(table, config, progress=lambda what, d, t: seen.__setitem__(what, (d, t)))
    assert seen == {"rank uncertainty": (20, 20), "stability": (50, 50)}
