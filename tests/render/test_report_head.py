"""Issue 46 item 5: the first screen of detailed_results.html answers "where am I, who won,
by what rule" (on Codabench it opens in a 1155 x 710 px frame that names nothing)."""

from __future__ import annotations

import re

from metascore.config import parse_config
from metascore.render.report import render_report
from shared_competition import CONFIG, board


def _page(**over) -> str:
    return render_report(board(parse_config({**CONFIG, **over})))


def _head(page: str) -> str:
    return page[page.index("<header>"):page.index("</header>")]


def test_the_head_names_the_competition_the_winner_and_the_rule():
    page = _page(output={"title": "Iris & friends <2026>"})
    head = _head(page)
    lb = board(parse_config(CONFIG))
    winner = next(r for r in lb.final.rows if r.candidate == lb.winner)
    assert "<title>Iris &amp; friends &lt;2026&gt;: final ranking</title>" in page
    assert re.search(r'<p class="where">Iris &amp; friends &lt;2026&gt; &middot; Final ranking of phase Final</p>', head)
    assert f"<h1>Winner: {winner.participant} ({winner.candidate})</h1>" in head
    rule = re.search(r'<p class="rule">(.*?)</p>', head).group(1)
    assert f"{len(lb.filter.qualified)} of the " in rule and "those who beat a baseline (organizers) in Development" in rule
    assert "by average_rank (average rank, lower is better) over 3 judges" in rule
    assert "a tie goes to the earlier submission by submission time" in rule  # the fixture has times
    # the head comes first: before the cards, the messages and the final board
    assert page.index("</header>") < page.index('<div class="cards">') < page.index("Final leaderboard")


def test_without_a_title_the_head_still_says_where_and_who():
    page = _page()
    head = _head(page)
    assert "<title>Meta-scoring results: Final</title>" in page
    assert '<p class="where">Final ranking of phase Final</p>' in head and "<h1>Winner: " in head


def test_nobody_ranked_and_a_shared_first_place_read_as_such():
    nobody = _head(_page(filter={"rule": "top_k", "k": 1}, selection={"final": "all"},
                         phases={"deadlines": {"Development": "2024-03-01T09:00:00"}}))
    assert "<h1>Nobody is ranked</h1>" in nobody
