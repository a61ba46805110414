"""Issue 50, item 1: the pages participants read name the judges that rank and, apart,
what decides who is ranked.

The fixture is built like the issue's bundle (``tests/data/bundles/v2_two_phase_results``):
two phases with one task each, results submissions, one accuracy column, a code starting
kit, a py39 image and a Final phase without an end date. ``add-meta`` gives it one judge per
phase (``phase: Development``, ``phase: Final``): the final ranking uses the Final one only
(``n_judges: 1``), the Development one only decides who qualifies. On it, alice scores 7/8
then 3/8 and bob 5/8 then 5/8: an average of both phases, which the old page suggested,
ties them; the ranking gives bob first. The page ``add-meta`` writes, the section
``metascore codabench publish`` writes and ``detailed_results.html`` must say so.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from metascore.bundle.meta.add import add_meta
from metascore.bundle.runner import run_bundle
from metascore.codabench.publish import outcome_of, page_section
from repo_paths import TESTS

FIXTURE = TESTS / "data" / "bundles" / "v2_two_phase_results"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The fixture with its meta phase (the Final phase ends on --end), run locally."""
    folder = tmp_path_factory.mktemp("issue50")
    bundle = shutil.copytree(FIXTURE, folder / "bundle")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("METASCORE_META_PYTHON", "auto")  # as an organizer runs add-meta
        add_meta(bundle, end="2026-12-31")
        run_bundle(bundle, folder / "out", feed="all")
    board = json.loads((folder / "out" / "final" / "leaderboard.json").read_text())
    return bundle, folder / "out", board


def test_the_fixture_ranks_the_final_phase_on_its_one_judge(run):
    _, _, board = run
    assert [j["key"] for j in board["final"]["judges"]] == ["Final Task/accuracy"]
    assert [j["key"] for j in board["development"]["judges"]] == ["Development Task/accuracy"]
    assert board["winners"] == ["bob-6"] and board["filter"]["qualified"] == ["alice-5", "bob-6"]
    # what the old page suggested (both phases' accuracy together) would tie alice and bob
    dev = {r["participant"]: r["judges"]["Development Task/accuracy"] for r in board["development"]["rows"]}
    final = {r["participant"]: r["judges"]["Final Task/accuracy"] for r in board["final"]["rows"]}
    assert dev["alice"] + final["alice"] == dev["bob"] + final["bob"]


def _table_after(page: str, heading: str) -> list[str]:
    """The rows of the Markdown table that follows the line ``heading``."""
    rest = page.split(heading + "\n\n", 1)[1]
    return [line for line in rest.split("\n\n", 1)[0].splitlines()[2:]]


def test_the_add_meta_page_names_the_judges_that_rank_and_apart_those_that_qualify(run):
    bundle, _, _ = run
    page = (bundle / "pages" / "final_ranking.md").read_text()
    assert "Each participant is compared on these" not in page
    ranking = "The ranking compares the participants on these judges (tasks and leaderboard columns) of phase **Final** only:"
    assert _table_after(page, ranking) == ["| Final Task | Accuracy | higher | 1 |"]
    qualifying = "Who is ranked is decided on these judges of phase **Development**:"
    assert _table_after(page, qualifying) == ["| Development Task | Accuracy | higher | 1 |"]
    assert page.index(ranking) < page.index(qualifying)
    assert "Phase **Development** decides who is ranked, not the order" in page


def test_the_published_section_names_the_judges_that_rank_and_apart_those_that_qualify(run):
    _, _, board = run
    section = page_section(outcome_of(board), "https://site/competitions/1/detailed_results/9/", 9, "now")
    assert "## Result: bob wins" in section
    ranked = next(line for line in section.splitlines() if line.startswith("- **Ranked**"))
    assert ranked == ("- **Ranked**: 2 participant(s), by average rank on 1 judge \\(Accuracy on Final "
                      "Task\\) of phase Final only.")
    who = next(line for line in section.splitlines() if line.startswith("- **Who is ranked**"))
    assert "Development Task" in who and "Final Task" not in who
    assert re.sub(r"\\(.)", r"\1", who) == (
        "- **Who is ranked**: only those who beat every baseline (baseline) in phase Development, on its "
        "1 judge (Accuracy on Development Task), are ranked.")


def test_the_ranking_page_head_names_the_judges_that_rank_and_apart_those_that_qualify(run):
    _, out, _ = run
    html = (out / "final" / "detailed_results.html").read_text()
    rule = re.search(r'<p class="rule">(.*?)</p>', html).group(1)
    assert ("those who beat every baseline (baseline) in Development, on its 1 judge (Accuracy on "
            "Development Task);") in rule
    assert "over 1 judge (Accuracy on Final Task) of phase Final only;" in rule
