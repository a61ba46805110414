"""Issue 51: the ranking page's re-weighting panel in headless Chromium (Playwright's driver on
Debian's /usr/bin/chromium, as the real-site tests drive it).

For every method the page recomputes, the page opened with a link that sets one judge's
weight to 0 and another's to 2 lists its re-weighted rows (``#reweighted tr[data-candidate]``)
exactly in the order of ``metascore rank`` run with those weights, on the template's results
(the final phase's judges re-weighted, the development phase's filter as published) and on a
random board of 200 candidates x 20 judges with missing cells and ties (each method under
another missing-data policy); with the official weights it finds the official ranking. A
method the page cannot recompute says so. The panel works from the keyboard, keeps the
link in step, shows names as text, fits Codabench's 1155 x 710 frame and, without scripts,
says it needs them.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

import reweight_boards as rb
from metascore.missing import MISSING_POLICIES
from metascore.registry import ranking_method_names
from metascore.render.reweight import NOT_RECOMPUTED, RECOMPUTED

pytestmark = [pytest.mark.browser, pytest.mark.slow]

METHODS = sorted(RECOMPUTED)
#: Each method on the random board under one policy, every policy but `error` in turn.
POLICIES = [p for p in MISSING_POLICIES if p != "error"]


@pytest.fixture(scope="module")
def browser():
    with rb.chromium() as b:
        yield b


@pytest.fixture(scope="module")
def boards(tmp_path_factory):
    """The random board, with a candidate that has no score and without (for drop_judges,
    which that candidate would leave without a judge)."""
    folder = tmp_path_factory.mktemp("board")
    return {unscored: rb.random_board(folder, unscored=unscored) for unscored in (True, False)}


@pytest.fixture(scope="module")
def board(boards):
    return boards[True]


@pytest.mark.parametrize("method", METHODS)
def test_the_template_reweighted_in_the_page_is_metascore_rank_with_those_weights(browser, tmp_path, method):
    config = rb.template_config(method)
    official = rb.rank(config, rb.TEMPLATE_EXPORT, tmp_path / "page")
    expected = rb.rank(rb.reweighted(config, rb.TEMPLATE_WEIGHTS), rb.TEMPLATE_EXPORT, tmp_path / "cli")
    page = tmp_path / "page" / "detailed_results.html"
    order, status = rb.page_order(browser, page)
    assert order == official, status
    assert status.startswith("With the official weights the page finds the official ranking"), status
    order, status = rb.page_order(browser, page, rb.fragment(rb.TEMPLATE_WEIGHTS))
    assert order == expected, status


@pytest.mark.parametrize("method", METHODS)
def test_a_random_board_reweighted_in_the_page_is_metascore_rank_with_those_weights(browser, boards, tmp_path, method):
    policy = POLICIES[METHODS.index(method) % len(POLICIES)]
    path, base = boards[policy != "drop_judges"]
    config = dict(base, ranking={"method": method, "missing": policy})
    official = rb.rank(config, path, tmp_path / "page")
    expected = rb.rank(rb.reweighted(config, rb.RANDOM_WEIGHTS, final=None), path, tmp_path / "cli")
    page = tmp_path / "page" / "detailed_results.html"
    order, status = rb.page_order(browser, page)
    assert order == official, status
    order, status = rb.page_order(browser, page, rb.fragment(rb.RANDOM_WEIGHTS))
    assert order == expected and len(order) >= 150, status


#: The methods' parameters other than their defaults, each under a policy.
PARAMS = [("average_rank", {"ties": "dense"}, "worst"), ("average_rank", {"ties": "min"}, "pairwise"),
          ("success_rate", {"ties": "half"}, "pairwise"), ("relative_difference", {"on": "ranks"}, "pairwise"),
          ("dowdall", {"ties": "min"}, "pairwise"), ("threshold", {"ties": "max"}, "worst"),
          ("optimality_gap", {"gamma": "best"}, "worst"), ("optimality_gap", {"gamma": "q50"}, "pairwise"),
          ("optimality_gap", {"gamma": 0.5}, "worst"),
          ("optimality_gap", {"gamma": {f"t{t}/m{m}": 0.3 + 0.1 * m for t in range(4) for m in range(5)}},
           "drop_candidates")]


@pytest.mark.parametrize("method, params, policy", PARAMS, ids=[f"{m}-{json.dumps(p)[:20]}" for m, p, _ in PARAMS])
def test_each_parameter_of_a_method_reweighted_as_metascore_rank(browser, board, tmp_path, method, params, policy):
    path, base = board
    config = dict(base, ranking={"method": method, "missing": policy, "params": params})
    official = rb.rank(config, path, tmp_path / "page")
    expected = rb.rank(rb.reweighted(config, rb.RANDOM_WEIGHTS, final=None), path, tmp_path / "cli")
    page = tmp_path / "page" / "detailed_results.html"
    assert rb.page_order(browser, page)[0] == official
    order, status = rb.page_order(browser, page, rb.fragment(rb.RANDOM_WEIGHTS))
    assert order == expected, status


@pytest.mark.parametrize("method, within, policy", [("copeland", "average_rank", "worst"),
                                                    ("mean", "median", "pairwise"),
                                                    ("schulze", "dowdall", "drop_candidates")])
def test_grouped_judges_and_their_groups_reweighted(browser, board, tmp_path, method, within, policy):
    """Judges in groups (one per task): a judge's weight and a group's both count."""
    path, base = board
    groups = {"by": "task", "method": within, "weights": {"t0": 1, "t1": 2, "t2": 0.5, "t3": 1}}
    config = dict(base, ranking={"method": method, "missing": policy, "groups": groups})
    official = rb.rank(config, path, tmp_path / "page")
    weighted = rb.reweighted(config, rb.RANDOM_WEIGHTS, final=None)
    weighted["ranking"] = dict(weighted["ranking"], groups=dict(groups, weights={"t0": 1, "t1": 0, "t2": 3, "t3": 1}))
    expected = rb.rank(weighted, path, tmp_path / "cli")
    page = tmp_path / "page" / "detailed_results.html"
    assert rb.page_order(browser, page)[0] == official
    order, status = rb.page_order(browser, page, rb.fragment(rb.RANDOM_WEIGHTS, {"t1": 0, "t2": 3}))
    assert order == expected and order != official, status


def test_the_page_has_code_for_exactly_the_methods_it_says_it_recomputes(browser, tmp_path):
    assert set(RECOMPUTED) | set(NOT_RECOMPUTED) == set(ranking_method_names())
    assert not set(RECOMPUTED) & set(NOT_RECOMPUTED)
    rb.rank(rb.template_config("mean"), rb.TEMPLATE_EXPORT, tmp_path)
    tab = browser.new_page()
    tab.goto((tmp_path / "detailed_results.html").as_uri())
    assert sorted(tab.evaluate("MetascoreMethods.METHODS")) == METHODS
    tab.close()


@pytest.mark.parametrize("method", sorted(NOT_RECOMPUTED))
def test_a_method_the_page_cannot_recompute_says_so(browser, tmp_path, method):
    rb.rank(rb.template_config(method), rb.TEMPLATE_EXPORT, tmp_path)
    page = tmp_path / "detailed_results.html"
    assert 'id="metascore-reweight"' not in page.read_text()
    tab = browser.new_page()
    tab.goto(page.as_uri())
    text = tab.inner_text("#reweight")
    tab.close()
    assert f"The page cannot recompute a ranking by {method}: {NOT_RECOMPUTED[method]}." in text
    assert "reweighted" not in page.read_text().split('id="reweight"')[1].split("</section>")[0]


def _template_page(tmp_path, method="average_rank"):
    rb.rank(rb.template_config(method), rb.TEMPLATE_EXPORT, tmp_path)
    return tmp_path / "detailed_results.html"


def _rows(tab) -> list[str]:
    return tab.eval_on_selector_all("#reweighted tbody tr", "rows => rows.map(r => r.dataset.candidate)")


def test_the_panel_from_the_keyboard_and_the_link_it_keeps(browser, tmp_path):
    """Tab reaches the weights in order, arrows and Enter rank again, the address and the
    link field follow, Reset brings the official weights back, and the link opens the view."""
    page = _template_page(tmp_path)
    tab = browser.new_page(viewport={"width": 1155, "height": 710})
    tab.goto(page.as_uri())
    official = _rows(tab)
    tab.focus("#rw-j0")
    tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.id") == "rw-j1"
    tab.keyboard.press("Shift+Tab")
    tab.keyboard.press("ArrowDown")  # blobs accuracy: 1 -> 0
    assert tab.input_value("#rw-j0") == "0"
    tab.focus("#rw-j2")
    tab.fill("#rw-j2", "2")
    tab.keyboard.press("Enter")
    zero_two = _rows(tab)
    assert tab.evaluate("location.hash") == "#weights=datasets/blobs_accuracy:0,datasets/churn_brier:2"
    link = tab.input_value(".rw-url")
    assert link == page.as_uri() + "#weights=datasets/blobs_accuracy:0,datasets/churn_brier:2"
    tab.fill("#rw-j2", "0")  # the housing MAE alone
    tab.keyboard.press("Enter")
    assert _rows(tab) == ["carol-7", "bob-11", "zoe-10", "dave-8"]
    assert tab.inner_text(".rw-status").startswith("With these weights carol (carol-7) is first; officially zoe-10 is")
    assert tab.eval_on_selector_all("#reweighted tbody tr td:last-child", "c => c.map(x => x.textContent)") != ["="] * 4
    tab.click("button[data-reset]")
    assert _rows(tab) == official and tab.evaluate("location.hash") == ""
    tab.goto(link)  # the link opens the view it names
    assert _rows(tab) == zero_two and tab.input_value("#rw-j2") == "2"
    tab.close()


def test_what_a_link_or_an_input_gets_wrong_is_said(browser, tmp_path):
    page = _template_page(tmp_path)
    order, status = rb.page_order(browser, page, "#weights=nobody:3,datasets/housing_mae:-1")
    assert order == rb.page_order(browser, page)[0]
    assert "the link names judge 'nobody', which this ranking does not have" in status
    assert "the link gives judge 'datasets/housing_mae' the weight '-1', not a number >= 0" in status
    zero = "#weights=" + ",".join(f"datasets/{j}:0" for j in ("blobs_accuracy", "housing_mae", "churn_brier"))
    order, status = rb.page_order(browser, page, zero)
    assert order == [] and "The page cannot rank with these weights: every judge has weight 0" in status
    tab = browser.new_page()
    tab.goto(page.as_uri())
    tab.fill("#rw-j0", "-2")
    tab.keyboard.press("Enter")
    assert tab.get_attribute("#rw-j0", "aria-invalid") == "true"
    assert "A weight must be a number, 0 or more" in tab.inner_text(".rw-status")
    tab.close()


def test_a_weight_the_missing_data_policy_refuses_is_said_as_metascore_rank_says_it(browser, boards, tmp_path):
    """``missing: error`` with the judges that miss cells not counted: a link that counts one
    gets the sentence ``metascore rank`` fails with (naming a candidate without a score there;
    the page reads the candidates in the tie-break's order, so perhaps another), no table."""
    path, base = boards[False]
    gaps = {"t0/m3", "t1/m2", "t2/m2", "t3/m0"}  # the judges missing cells
    judges = [dict(j, weight=0.0) if f"{j['task']}/{j['metric']}" in gaps else j for j in base["judges"]]
    config = dict(base, judges=judges, ranking={"method": "mean", "missing": "error"})
    rb.rank(config, path, tmp_path / "page")
    with pytest.raises(AssertionError) as refused:
        rb.rank(rb.reweighted(config, {"t1/m2": 1.0}, final=None), path, tmp_path / "cli")
    order, status = rb.page_order(browser, tmp_path / "page" / "detailed_results.html", rb.fragment({"t1/m2": 1.0}))
    assert order == []
    sentence = r"candidate '([^']+)' has no score for judge 't1/m2' \(missing='error'\)"
    assert re.search(sentence, str(refused.value)), str(refused.value)
    named = re.search("The page cannot rank with these weights: " + sentence, status).group(1)
    rows = pd.read_csv(path)
    assert named in set(rows["candidate"]) and not ((rows["candidate"] == named) & (rows["task"] == "t1")
                                                    & (rows["metric"] == "m2")).any()


def test_names_in_the_reweighted_table_are_text(browser, tmp_path):
    """A participant named like markup shows as that text, in a cell with no element in it."""
    from hostile_fixtures import MARKUP

    path, config = rb.random_board(tmp_path, seed=7)
    text = path.read_text()
    for k, name in enumerate(MARKUP[:8]):
        text = text.replace(f"p{k:03d}-", f"{name.replace(',', ';')}-")
    path.write_text(text)
    rb.rank(config, path, tmp_path / "page")
    tab = browser.new_page()
    tab.goto((tmp_path / "page" / "detailed_results.html").as_uri() + rb.fragment(rb.RANDOM_WEIGHTS))
    cells = tab.eval_on_selector_all("#reweighted tbody td", "c => c.map(x => x.children.length)")
    names = tab.eval_on_selector_all("#reweighted tbody tr", "rows => rows.map(r => [r.dataset.candidate, r.cells[1].textContent])")
    tab.close()
    assert set(cells) == {0}
    shown = {candidate for candidate, _ in names}
    for name in MARKUP[:8]:
        assert any(c.startswith(name.replace(",", ";") + "-") for c in shown), name
    assert all(candidate == cell for candidate, cell in names)


def test_in_codabenchs_frame_and_without_scripts(browser, tmp_path):
    """1155 x 710: no sideways scroll, the weights and the table side by side on one screen;
    without scripts the official ranking stays and the panel says it needs them."""
    page = _template_page(tmp_path)
    tab = browser.new_page(viewport={"width": 1155, "height": 710})
    tab.goto(page.as_uri() + rb.fragment(rb.TEMPLATE_WEIGHTS))
    tab.locator("#reweight").scroll_into_view_if_needed()
    tab.evaluate("document.getElementById('reweight').scrollIntoView()")
    tab.screenshot(path=str(tmp_path / "panel_1155x710.png"))
    assert tab.evaluate("document.documentElement.scrollWidth") <= 1155
    form, table = (tab.locator(sel).bounding_box() for sel in (".rw-form", "#reweighted"))
    assert form["x"] + form["width"] <= table["x"] and table["x"] + table["width"] <= 1155
    assert form["y"] + 100 < 710 and table["y"] + 100 < 710
    assert not tab.is_visible(".rw-needs-script")
    tab.close()
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1155, "height": 710})
    tab = context.new_page()
    tab.goto(page.as_uri())
    assert tab.is_visible(".rw-needs-script") and not tab.is_visible(".rw-form")
    assert "This panel needs scripts" in tab.inner_text("#reweight")
    assert tab.locator("table.leaderboard").first.is_visible()
    context.close()


def test_the_record_gives_the_panel_the_pool_in_the_tie_breaks_order(tmp_path):
    """The final board's pool: the ranked candidates (those the missing-data policy drops too),
    listed as the tie-break alone orders them; each judge's direction and weight."""
    page = _template_page(tmp_path)
    record = json.loads(re.search(r'id="metascore-ranking">(.*?)</script>', page.read_text(), re.S).group(1))
    final = record["boards"]["final"]
    assert [final["rows"][k][0] for k in final["pool"]] == ["zoe-10", "bob-11", "carol-7", "dave-8"]
    assert final["higher_is_better"] == [True, False, False] and final["weights"] == [1.0, 1.0, 1.0]
    assert final["groups"] is None and final["hidden_weights"] == {}
    path, config = rb.random_board(tmp_path)
    rb.rank(dict(config, ranking={"missing": "drop_candidates"}), path, tmp_path / "drop")
    record = json.loads(re.search(r'id="metascore-ranking">(.*?)</script>',
                                  (tmp_path / "drop" / "detailed_results.html").read_text(), re.S).group(1))
    final = record["boards"]["final"]
    pool = [final["rows"][k] for k in final["pool"]]
    assert len(pool) == 200 and sum(r[5] is None for r in pool) == 46
    numbers = [int(r[0].rsplit("-", 1)[1]) for r in pool]
    assert numbers == sorted(numbers)  # the earlier submission first
