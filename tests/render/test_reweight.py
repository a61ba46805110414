"""Issue 51: when the ranking page's re-weighting panel cannot rank again, it says why and
carries no script (the browser tests are ``test_reweight_browser.py``)."""

from __future__ import annotations

import dataclasses
import html

import pytest

import metascore.render.ranking_record as ranking_record
import metascore.render.reweight as reweight
from metascore.config import parse_config
from metascore.render.report import render_report
from shared_competition import CONFIG, board


def _panel(lb) -> str:
    """The panel's section, its entities read (the script is not escaped)."""
    page = render_report(lb)
    return html.unescape(page[page.index('<section id="reweight"'):].split("</section>")[0])


@pytest.fixture(scope="module")
def lb():
    return board(parse_config(dict(CONFIG, analysis={"bootstrap": 0, "stability": False})))


def test_the_panel_ranks_the_qualified_again(lb):
    panel = _panel(lb)
    assert '<script id="metascore-reweight">' in panel and 'id="reweighted"' in panel
    assert len(lb.final.pool) == 2 and "ranks the same 2 candidates again" in panel
    assert [i.split('"')[0] for i in panel.split('data-judge="')[1:]] == ["iris/accuracy", "wine/mae", "digits/f1"]


def test_without_the_values_it_says_so(lb, monkeypatch):
    monkeypatch.setattr(ranking_record, "RECORD_VALUES", 10)
    panel = _panel(lb)
    assert "The page does not carry the judges' values" in panel and "<script" not in panel


def test_a_hidden_judge_counted_is_said_and_one_not_counted_keeps_its_weight(lb):
    hidden = dataclasses.replace(lb, input_summary=dataclasses.replace(lb.input_summary, hidden=frozenset({"mae"})))
    panel = _panel(hidden)
    assert "The ranking counts judge 'wine/mae', whose column the competition hides" in panel
    assert "<script" not in panel
    final = dataclasses.replace(lb.final, weights=(1.0, 0.0, 1.0))
    panel = _panel(dataclasses.replace(hidden, final=final))
    assert "<script" in panel and 'data-judge="wine/mae"' not in panel
    assert "The competition hides 1 judge(s) (wine/mae), not counted" in panel


def test_fewer_than_two_ranked_or_too_much_work_is_said(lb, monkeypatch):
    panel = _panel(dataclasses.replace(lb, final=dataclasses.replace(lb.final, pool=())))
    assert "Fewer than two candidates are ranked" in panel and "<script" not in panel
    monkeypatch.setattr(reweight, "WORK_LIMIT", 1)
    panel = _panel(lb)
    assert "would take the page too long" in panel and "<script" not in panel
