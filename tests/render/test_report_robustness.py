"""Issue 51 item 4: atop detailed_results.html, one sentence on how far the judges' weights
may move before the winner changes, true in every case (a tie, a method without a figure,
one judge, nobody ranked), with the participants' names escaped."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from metascore.config import parse_config
from metascore.leaderboard import build_leaderboard
from metascore.readers.score_table import ScoreTable
from metascore.render.report import render_report
from metascore.render.report_robustness import percents
from shared_competition import CONFIG, board

JUDGES = [{"task": "j1", "metric": "m", "weight": 1}, {"task": "j2", "metric": "m", "weight": 2},
          {"task": "j3", "metric": "m", "weight": 1}]
# per-judge ranks alice (1, 3, 1), bob (2, 1, 3), carol (3, 2, 2): bob first by 1/7
BOARD = {"alice": [3, 1, 3], "bob": [2, 3, 1], "carol": [1, 2, 2]}


def page(board=BOARD, judges=JUDGES, **over) -> str:
    rows = [{"phase": "Development", "candidate": f"{who}-{k}", "participant": who,
             "task": f"j{j + 1}", "metric": "m", "value": float(v)}
            for k, (who, values) in enumerate(board.items()) for j, v in enumerate(values)]
    config = parse_config({"judges": judges, "phases": {"final": None}, "filter": {"rule": "none"},
                           "analysis": {"bootstrap": 0, "stability": False}, **over})
    return render_report(build_leaderboard(ScoreTable(pd.DataFrame(rows)), config))


def sentence(html: str) -> str:
    head = html[html.index("<header>"):html.index("</header>")]
    found = re.findall(r'<p class="robustness">(.*?)</p>', head)
    assert len(found) == 1, "one sentence, in the page's head"
    return found[0]


def test_the_head_says_how_far_the_weights_may_move_before_the_winner_changes():
    html = page()
    assert sentence(html) == (
        "Every judge&#x27;s weight may move by up to 14% in any direction and bob stays first; "
        "a 15% shift (more weight on m on j1 and m on j3, less on m on j2) puts alice first. "
        "Second place (alice) holds under shifts up to 14%; third place (carol) holds under "
        "shifts up to 19.9%.")
    head = html[html.index("<header>"):html.index("</header>")]
    assert head.index('class="rule"') < head.index('class="robustness"')  # after the rule


def test_participant_names_are_escaped():
    board = {"<b>eve</b>": [3, 3, 3], "bob & co": [2, 2, 2], "carol": [1, 1, 1]}
    text = sentence(page(board))
    assert "<b>" not in text and "&lt;b&gt;eve&lt;/b&gt;" in text
    assert text == ("No re-weighting of the judges (every weight kept above 0) puts anyone but "
                    "&lt;b&gt;eve&lt;/b&gt; first. Second place (bob &amp; co) holds under any "
                    "re-weighting; third place (carol) holds under any re-weighting.")


def test_a_shared_first_place_reads_as_shared():
    # plurality: alice first alone on j1 and j3 (weight 2), bob on j2 (weight 2): tied
    text = sentence(page(ranking={"method": "plurality"}))
    assert text.startswith("alice and bob share the first place (the tie-break lists alice "
                           "first): the slightest shift of the judges&#x27; weights (more "
                           "weight on m on j2, less on m on j1 and m on j3) puts bob first.")


def test_a_method_without_a_figure_one_judge_and_nobody_ranked():
    assert sentence(page(ranking={"method": "epp"})).startswith(
        "How far the judges&#x27; weights may move before the winner changes is not computed "
        "for epp: its strengths are fitted to the weighted comparisons")
    one = sentence(page({"alice": [2], "bob": [1]}, judges=JUDGES[:1]))
    assert one == ("Only one judge counts: no re-weighting of the judges (every weight kept "
                   "above 0) puts anyone but alice first. Second place (bob) holds under any "
                   "re-weighting.")
    alone = sentence(page({"alice": [1, 1, 1]}))
    assert alone == ("alice is the only candidate ranked: no re-weighting of the judges "
                     "changes the winner.")
    nobody = sentence(render_report(board(parse_config({
        **CONFIG, "filter": {"rule": "top_k", "k": 1}, "selection": {"final": "all"},
        "phases": {"deadlines": {"Development": "2024-03-01T09:00:00"}}}))))
    assert nobody == ("Nobody is ranked: there is no winner for a re-weighting of the judges "
                      "to change.")


@pytest.mark.parametrize("x, low, high", [
    (1 / 7, "14%", "15%"), (0.2, "19.9%", "20.1%"), (0.0123, "1.2%", "1.3%"),
    (0.05, "4.99%", "5.01%"), (0.6, "59.9%", "60.1%"),
])
def test_percentages_stay_below_and_above_the_figure(x, low, high):
    assert percents(x) == (low, high)
