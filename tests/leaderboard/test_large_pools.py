"""Pools of thousands of candidates (issue 42, item 6): what the leaderboard keeps and computes
pairwise is bounded, and the outputs say so.

- the margins are those of the 200 best-ranked candidates; the Condorcet winner is sought
  among every one of them, without the n x n counts;
- the report's tables and rank-interval chart show the top of the board and say where the
  rest is;
- a method whose resamples compare every pair is not resampled beyond 20 million pairs,
  with a note saying why (the rest of the leaderboard is written).
"""

from __future__ import annotations

import json
from html import unescape

import numpy as np
import pandas as pd
import pytest

from metascore.config import parse_config
from metascore.leaderboard import build_leaderboard
from metascore.pairwise import PairwiseCounts, condorcet_winner
from metascore.readers.score_table import ScoreTable
from metascore.render.writers import render_outputs

ONE_PHASE = {"phases": {"final": None}, "filter": {"rule": "none"}}


def _table(n: int, m: int, seed: int = 0, winner: int | None = None) -> ScoreTable:
    """One phase: ``n`` submissions of ``n`` participants x ``m`` tasks (integer scores:
    ties), candidate ``winner`` (if any) best on every task."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 20, size=(n, m)).astype(float)
    if winner is not None:
        x[winner] = 30.0
    cands = np.repeat([f"c{i:05d}" for i in range(n)], m)
    return ScoreTable(pd.DataFrame({
        "phase": "Development", "candidate": cands, "participant": cands,
        "task": np.tile([f"t{j}" for j in range(m)], n), "metric": "score", "value": x.ravel()}))


@pytest.mark.parametrize("winner", [None, 250])
def test_the_margins_keep_the_200_best_and_the_condorcet_winner_is_found_among_all(winner):
    table = _table(300, 3, winner=winner)
    config = parse_config({**ONE_PHASE, "ranking": {"method": "copeland"},
                           "analysis": {"bootstrap": 0, "stability": False}})
    lb = build_leaderboard(table, config)
    m = lb.margins
    assert m.n_candidates == 300 and len(m.candidates) == 200 and m.margins.shape == (200, 200)
    ranked = [r.candidate for r in lb.final.ranked]
    assert list(m.candidates) == ranked[:200]
    # the same margins and winner as the counts of the whole pool
    x = np.array([[r.values.get(j) for j in lb.final.judges] for r in lb.final.ranked])
    full = PairwiseCounts.from_matrix(x, None, ranked)
    np.testing.assert_array_equal(m.margins, full.margins()[:200, :200])
    assert m.condorcet_winner == condorcet_winner(full) == (None if winner is None else "c00250")
    doc = json.loads(render_outputs(lb)["leaderboard.json"])["margins"]
    assert doc["n_candidates"] == 300 and len(doc["candidates"]) == 200
    assert doc["condorcet_winner"] == m.condorcet_winner


def test_the_report_shows_the_top_of_a_large_board_and_says_where_the_rest_is():
    table = _table(1_500, 3)
    lb = build_leaderboard(table, parse_config({**ONE_PHASE, "analysis": {"bootstrap": 20,
                                                                          "stability": False}}))
    page = render_outputs(lb)["detailed_results.html"]
    html = unescape(page)
    board = html.split("<h2>Final leaderboard", 1)[1].split("</section>", 1)[0]
    assert board.count("<tr class=") == 1_000
    assert ("The first 1000 of the 1500 rows are shown (and the baselines); leaderboard.csv and "
            "leaderboard.json list every one.") in board
    assert ("The 200 best-ranked of the 1500 candidates are drawn; leaderboard.csv holds every "
            "candidate's interval, P(first) and group.") in html
    assert ("The 30 best-ranked of the 1500 candidates are shown (leaderboard.json holds the 200 "
            "best-ranked; the Condorcet winner is looked for among all 1500).") in html
    assert len(page) < 3_000_000


def test_resamples_of_every_pair_beyond_the_bound_are_left_out_with_a_note(monkeypatch):
    """Copeland's resamples compare every pair: beyond RESAMPLED_PAIRS_LIMIT (20 million
    pairs: 6,325 candidates) the intervals and the stability are not computed, and the note
    says why and what to do; judge agreement is still computed."""
    from metascore.leaderboard import statistics

    monkeypatch.setattr(statistics, "RESAMPLED_PAIRS_LIMIT", 40)  # the pairs of 9 candidates
    config = parse_config({**ONE_PHASE, "ranking": {"method": "copeland"}})
    lb = build_leaderboard(_table(10, 3), config)
    a = lb.analysis
    assert a.uncertainty is None and a.stability is None and a.agreement is not None
    assert a.notes == (
        "rank uncertainty and stability were not computed: copeland compares every pair of "
        "candidates in each of their 250 resamples, and the 10 ranked candidates make 45 pairs, "
        "more than the 40 a resample may compare; rank with a method whose resamples need no "
        "pairs (average_rank, dowdall, geometric_mean, mean, median, optimality_gap, plurality, "
        "random_dictator, threshold), or set analysis.bootstrap: 0 and "
        "analysis.stability: false to say they are not wanted.",)
    assert "stability" not in lb.scores
    # average rank's resamples need no pair: computed at any size
    lb = build_leaderboard(_table(10, 3), parse_config(ONE_PHASE))
    assert lb.analysis.uncertainty is not None and lb.analysis.stability is not None
