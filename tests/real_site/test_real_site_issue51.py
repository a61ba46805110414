"""Issue 51 on the real Codabench: a participant re-weights the judges inside Codabench's page.

Opt-in like the other real-site tests (``METASCORE_SITE=1``, marker ``site``; hold
``flock /tmp/real_site.lock``). The template competition: participants submit in Development,
the Final phase starts and the scheduler migrates them, the meta phase opens and the
organizer runs the documented step (``codabench pull`` then ``codabench submit``). Then
participant bob, logged in, follows the "Final ranking" page's link to the whole ranking and,
in the frame where Codabench shows ``detailed_results.html``
(``competition-detailed-results``' ``<iframe src>``: the storage's signed address, no
``sandbox``, so the page's script runs), uses the weights panel from the keyboard: the
re-weighted table orders the candidates as ``metascore rank`` does on the pulled results
with those weights, and its link (the frame's own address with ``#weights=...``) opens the
same view. Screenshots stay in ``$CODABENCH_SITE_HOME/evidence/issue51/``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

import real_site as rs
import real_site_bundles as rb
import reweight_boards as boards
from real_site import cli, token_env
from requirements import require_chromium

pytestmark = rb.SITE_MARKS

ORGANIZER, BASELINE, META = "organizer51", "baseline", "Final ranking"
PASSWORD = "metascore-issue-51"  # the local site's test accounts only
WEIGHTS = {"datasets/housing_mae": 2.0, "datasets/churn_brier": 0.0}  # one judge 2, another 0


@dataclass
class Run:
    site: str = ""
    cid: int = 0
    meta_sub: dict = field(default_factory=dict)
    official: list = field(default_factory=list)    # metascore rank on the pulled folder
    expected: list = field(default_factory=list)    # the same with WEIGHTS on the final judges
    times: dict = field(default_factory=dict)


def run_competition(folder: Path) -> Run:
    run = Run()
    t = rs.Stopwatch()
    run.site = rs.site_up()[0]["site"]
    bundle, people, tokens, comp = rb.template_competition(folder, ORGANIZER, BASELINE, PASSWORD)
    run.cid = comp.id
    comp.through_final(bundle, people, BASELINE)
    t.lap("upload, Development + Final")
    common = ["--site", run.site, "--competition", str(comp.id)]
    config = bundle / "final_ranking" / "reference_data" / "metascore.yaml"
    comp.open_phase(META)
    pulled = folder / "pulled"
    with token_env(tokens[ORGANIZER]):
        cli("codabench", "pull", *common, "--config", str(config), "--baseline", BASELINE, "--out", str(pulled))
        cli("codabench", "submit", *common, "--phase", META, "--poll-interval", "2", str(pulled))
    (run.meta_sub,) = [s for s in comp.wait(META, 1) if s["owner"] == ORGANIZER]
    t.lap("organizer pull + submit (+ publish)")
    settings = dict(yaml.safe_load(config.read_text()), baselines=[BASELINE])
    settings["analysis"] = dict(boards.NO_ANALYSIS)
    run.official = boards.rank(settings, pulled, folder / "official")
    run.expected = boards.rank(boards.reweighted(settings, WEIGHTS), pulled, folder / "reweighted")
    run.times = t.times
    print(f"\n[issue51] competition {comp.id}; timings (s): {json.dumps(run.times)}")
    return run


@pytest.fixture(scope="module")
def site_run(tmp_path_factory) -> Run:
    return run_competition(tmp_path_factory.mktemp("issue51"))


@pytest.fixture(scope="module")
def browser(site_run):
    import real_site_browser as rbr

    require_chromium()
    with rbr.Browser(site_run.site, rbr.evidence("issue51")) as b:
        yield b
        assert all(url.startswith(rbr.EASYMDE_EXTRAS) for url in b.blocked), b.blocked
        assert b.errors == [], b.errors


def _rows(frame) -> list[str]:
    return frame.locator("#reweighted tbody tr").evaluate_all("rows => rows.map(r => r.dataset.candidate)")


def test_a_participant_reweights_the_judges_inside_codabenchs_page(browser, site_run):
    import real_site_browser as rbr

    page = browser.page("bob", PASSWORD)
    page.goto(f"{site_run.site}/competitions/{site_run.cid}/")
    page.wait_for_load_state("networkidle")
    page.click(".details-menu .item[data-tab=pages-tab]")
    page.click(f".pages-menu .item:has-text('{META}')")
    page.wait_for_timeout(500)
    frame = rbr.open_full_ranking(page, site_run.site)
    # how Codabench frames the page: a src (the storage's signed address), no srcdoc, no sandbox
    iframe = page.locator("competition-detailed-results iframe")
    assert iframe.get_attribute("sandbox") is None and iframe.get_attribute("srcdoc") is None
    assert iframe.get_attribute("src").startswith(("http://", "https://"))
    box = iframe.bounding_box()
    print(f"\n[issue51] the ranking's frame: {box['width']:.0f} x {box['height']:.0f} px in a "
          f"{page.viewport_size['width']} x {page.viewport_size['height']} window")

    frame.locator("#reweight.rw-live").wait_for()  # the script ran in Codabench's frame
    assert not frame.locator(".rw-needs-script").is_visible()
    assert _rows(frame) == site_run.official
    assert "finds the official ranking" in frame.locator(".rw-status").inner_text()
    frame.locator("#rw-j0").focus()
    frame.locator("#rw-j0").press("Tab")
    frame.locator("#rw-j1").fill("2")  # housing MAE: 1 -> 2
    frame.locator("#rw-j1").press("Tab")
    frame.locator("#rw-j2").press("ArrowDown")  # churn Brier: 1 -> 0
    frame.locator("#rw-j2").press("Enter")
    assert site_run.expected != site_run.official  # the weights move someone
    assert _rows(frame) == site_run.expected
    moves = frame.locator("#reweighted tbody td:last-child").all_inner_texts()
    assert any(m != "=" for m in moves), moves
    frame.locator("#reweight").scroll_into_view_if_needed()
    browser.shot(page, "reweighted_in_codabench_participant")
    link = frame.locator(".rw-url").input_value()
    assert link.endswith("#weights=datasets/housing_mae:2,datasets/churn_brier:0"), link
    assert link.split("#")[0] == iframe.get_attribute("src").split("#")[0]
    page.context.close()

    # the link: the page alone (as the frame's address opens in a tab), 1155 x 710
    tab = browser.page()
    tab.set_viewport_size({"width": 1155, "height": 710})
    tab.goto(link)
    tab.locator("#reweight.rw-live").wait_for()
    assert _rows(tab) == site_run.expected
    tab.locator("#reweight").scroll_into_view_if_needed()
    browser.shot(tab, "reweighted_link_1155x710")
    assert tab.evaluate("document.documentElement.scrollWidth") <= 1155
    tab.context.close()
