"""Issue 49, item 3 on the real Codabench: a participant's name is text on the pages metascore
writes, in the participants' own browser.

Opt-in like the other real-site tests (``METASCORE_SITE=1``, marker ``site``; hold the
site's ``flock``). The name the final ranking gives a participant is the owner of their rows
in the results export, ``results.json``'s ``<owner>-<id>``: the account's **username** (the
export ignores the display name, which only the site's own leaderboards show). The sign-up
form allows ``[a-z0-9_-]`` only, but the model does not check, and an account made by an
OIDC login takes the identity provider's nickname as it is
(``oidc_configurations/views.py``: ``User.objects.create(username=nickname)``). So four
accounts are made as that login makes them (through the ORM, as every account of these
tests), named in Markdown and HTML (:data:`NAMES`: a ``javascript:`` link, an image, a tag
with an ``onerror`` and a table cell break, a code span, emphasis, a formula and a
placeholder of the page renderer's own passes); a fifth has a plain name. (No slash or
backslash: ``codabench pull`` refuses a name it cannot make a folder of. A trailing
backslash, a URL and the rest are in the random names the page renderer is run on.)

The competition is ``tests/data/bundles/v2_two_phase_results`` (issue 50's shape: results
submissions, two phases, one accuracy column) with the site's image stand-in (py312),
registrations approved at once, ``add-meta --submission-rule Force_Last --baseline
base49markup`` (the account that submits the starting kit's predictions) and phase dates
around today. Everyone submits in Development and in Final (the baseline in Development);
the organizer runs ``codabench pull`` and ``codabench submit``, which publishes the "Final
ranking" page and the meta task's name; the link-named participant wins.

Then a participant and a logged-out visitor open, in Chromium (``tests/real_site_browser.py``),
the "Final ranking" page, the Results tab of the meta phase and the whole ranking
(``detailed_results.html`` in its iframe): no ``javascript:`` link, no image, no formula, no
element a name made, each name shown as its exact text, and no dialog opened. The page
renderer itself (``renderMarkdownWithLatex``: code and ``$`` passes, ``marked``, placeholders)
is also run in the page on the escaped form of random names. Screenshots are kept in
``$CODABENCH_SITE_HOME/evidence/issue49_markup/``.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import shutil
import string
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

import real_site as rs
import real_site_browser
import real_site_bundles as rb
from repo_paths import TESTS
from requirements import require_chromium

from metascore.render.ranking_record import RECORD_ID
from metascore.render.reweight import SCRIPT_ID

pytestmark = rb.SITE_MARKS

FIXTURE = TESTS / "data" / "bundles" / "v2_two_phase_results"
ORGANIZER, BASELINE, PLAIN = "org49markup", "base49markup", "carol49markup"
PASSWORD = "metascore-issue-49"  # the local site's test accounts only
META = "Final ranking"
#: username -> predictions: the fixture's bob (ranked first), alice, and two more who beat
#: the baseline; carol, with a plain name, does not qualify.
NAMES = {
    "[click me](javascript:alert(document.cookie))": "1 0 1 1 1 0 0 1",
    "![x](track.png)": "1 0 1 1 0 0 1 1",
    "<img src=x onerror=alert(1)> a|b": "1 0 1 1 0 0 1 0",
    "`code` *b* __u__ $x^2$ %%LATEX_BLOCK_0%%": "1 0 1 1 0 1 1 0",
}
CAROL = "0 1 0 1 1 1 0 1"


@dataclass
class Run:
    site: str = ""
    cid: int = 0
    tokens: dict = field(default_factory=dict)
    printed: str = ""
    organizer_sub: int = 0
    competition: dict = field(default_factory=dict)  # anonymous GET, after publishing
    board: dict = field(default_factory=dict)        # the meta submission's leaderboard.json
    times: dict = field(default_factory=dict)


def _site_copy(dest: Path) -> Path:
    """The fixture as the site needs it: its image stand-in, registrations approved at once,
    Development open since yesterday, Final in three days (no end: add-meta's --end)."""
    bundle = Path(shutil.copytree(FIXTURE, dest / "bundle"))
    today = dt.datetime.now(dt.timezone.utc).date()

    def change(data):
        data["docker_image"] = "codalab/codalab-legacy:py312"
        data["registration_auto_approve"] = True
        data["phases"][0]["start"], data["phases"][0]["end"] = str(today - dt.timedelta(days=1)), str(today + dt.timedelta(days=2))
        data["phases"][1]["start"] = str(today + dt.timedelta(days=3))

    rb.edit_yaml(bundle, change)
    rs.cli("bundle", "add-meta", str(bundle), "--end", str(today + dt.timedelta(days=4)),
           "--submission-rule", "Force_Last", "--baseline", BASELINE)
    return bundle


def _results(predictions: str) -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("predictions.txt", predictions + "\n")
    return buf.getvalue()


def run_competition(folder: Path, site: str) -> Run:
    run, t = Run(site=site), rs.Stopwatch()
    bundle = _site_copy(folder)
    zipped = rb.zip_bundle(bundle, folder / "bundle.zip")
    people = [ORGANIZER, BASELINE, PLAIN, *NAMES]
    run.tokens = rs.admin("users", {"users": [{"username": n, "password": PASSWORD} for n in people]})
    apis = {n: rs.Api(run.site, run.tokens[n]) for n in people}
    comp = rs.Competition(apis, ORGANIZER, zipped)
    run.cid = comp.id
    t.lap("bundle zip, accounts, upload")

    kit = (bundle / "starting_kit" / "sample_result_submission" / "predictions.txt").read_text().strip()
    entries = {BASELINE: kit, PLAIN: CAROL, **NAMES}
    for account, predictions in entries.items():
        comp.submit(account, "Development", _results(predictions), "results.zip")
    comp.wait("Development", len(entries))
    comp.open_phase("Final")
    for account, predictions in entries.items():
        if account != BASELINE:
            comp.submit(account, "Final", _results(predictions), "results.zip")
    comp.wait("Final", len(entries) - 1)
    comp.open_phase(META)
    t.lap("Development + Final")

    common = ["--site", run.site, "--competition", str(comp.id)]
    config = str(bundle / "final_ranking" / "reference_data" / "metascore.yaml")
    with rs.token_env(run.tokens[ORGANIZER]):
        rs.cli("codabench", "pull", *common, "--config", config, "--baseline", BASELINE, "--out", str(folder / "pulled"))
        run.printed = rs.cli("codabench", "submit", *common, "--phase", META, "--poll-interval", "2",
                             str(folder / "pulled"))
    (sub,) = [s for s in comp.wait(META, 1) if s["parent"] is None]
    assert sub["status"] == "Finished", sub
    run.organizer_sub = sub["id"]
    run.board = json.loads(rs.scoring_output(comp.org, sub["id"])["leaderboard.json"])
    run.competition = requests.get(f"{run.site}/api/competitions/{comp.id}/", timeout=60).json()
    t.lap("organizer: codabench pull + submit (+ publish)")
    run.times = t.times
    (_evidence() / "run.json").write_text(json.dumps({
        "competition": comp.id, "times": run.times, "printed": run.printed,
        "pages": run.competition.get("pages"), "phases": run.competition.get("phases")}, indent=1, default=str))
    print(f"\n[issue49 markup] competition {comp.id}; timings (s): {json.dumps(run.times)}")
    return run


def _evidence() -> Path:
    return real_site_browser.evidence("issue49_markup")


@pytest.fixture(scope="module")
def site() -> str:
    state, _ = rs.site_up()
    return state["site"]


@pytest.fixture(scope="module")
def browser(site):
    require_chromium()
    with real_site_browser.Browser(site, _evidence()) as b:
        yield b
        # nothing fetched from outside (EasyMDE's own extras only) and no script error
        assert all(url.startswith(real_site_browser.EASYMDE_EXTRAS) for url in b.blocked), b.blocked
        assert b.errors == [], b.errors


@pytest.fixture(scope="module")
def site_run(tmp_path_factory, site) -> Run:
    return run_competition(tmp_path_factory.mktemp("issue49_markup"), site)


def _ranked(run: Run) -> list[str]:
    return [r["participant"] for r in run.board["final"]["rows"] if r["position"] is not None]


# ----------------------------------------------------------------------------- the API

def test_the_usernames_reach_the_ranking_exact(site_run):
    names = list(NAMES)
    assert _ranked(site_run)[0] == names[0]  # the link-named participant wins
    assert sorted(_ranked(site_run)) == sorted(names)
    excluded = [r["participant"] for r in site_run.board["final"]["rows"] if r["position"] is None]
    assert excluded == [PLAIN]


def test_the_page_and_the_task_name_hold_the_names_only_as_text(site_run):
    from metascore.bundle.platform.page_text import page_text, plain_name

    (page,) = [p for p in site_run.competition["pages"] if p["title"] == META]
    content = page["content"]
    for name in _ranked(site_run):
        assert page_text(name) in content and name not in content, name
    assert f"## Result: {page_text(_ranked(site_run)[0])} wins" in content
    (phase,) = [p for p in site_run.competition["phases"] if p["name"] == META]
    (task,) = phase["tasks"]
    assert task["name"].startswith(f"Final ranking: {plain_name(_ranked(site_run)[0])} wins")
    assert "<" not in task["name"]


# ----------------------------------------------------------------------------- the browser

WHO = {"participant": PLAIN, "logged out": None}


def _open(browser, run: Run, who: str, dialogs: list[str], tab: str | None = None, item: str | None = None):
    """The competition's page as ``who`` (every dialog recorded), on its ``tab`` and the
    ``item`` there (a page's title in pages-tab, a phase's button in results-tab)."""
    user = WHO[who]
    page = browser.page(user, PASSWORD if user else None)
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{run.site}/competitions/{run.cid}/")
    page.wait_for_load_state("networkidle")
    if tab is not None:
        page.click(f".details-menu .item[data-tab={tab}]")
        page.click({"pages-tab": ".pages-menu .item", "results-tab": ".results-tab .button-container .button"}[tab]
                   + f":has-text('{item}')")
    return page


@pytest.mark.parametrize("who", list(WHO))
def test_the_final_ranking_page_shows_each_name_as_its_text(browser, site_run, who):
    dialogs: list[str] = []
    page = _open(browser, site_run, who, dialogs, "pages-tab", META)
    page.wait_for_timeout(500)
    browser.shot(page, f"final_ranking_page_{who.replace(' ', '_')}", full=True)
    tab = page.locator(".pages-tab")
    html = tab.inner_html()
    assert 'href="javascript:' not in html and "<img" not in html  # (text shows as &lt;img)
    assert tab.locator("a[href^='javascript:'], img, .katex, script, [onerror]").count() == 0
    ranked = _ranked(site_run)
    table = tab.locator("table").filter(has_text="participant").first
    cells = [c.strip() for c in table.locator("tbody tr td:nth-child(2)").all_inner_texts()]
    assert cells == ranked, cells  # each cell the exact name: no element, no lost character
    heading = tab.locator("h2").filter(has_text="Result:").first.inner_text()
    assert heading.strip() == f"Result: {ranked[0]} wins", heading
    # the whole ranking, in its iframe: the names as text there too
    frame = real_site_browser.open_full_ranking(page, site_run.site)
    browser.shot(page, f"detailed_results_{who.replace(' ', '_')}", full=True)
    assert frame.locator("a, img, iframe").count() == 0
    # the page's only scripts are its own: the data block (issue 53) and the weights panel (issue 51)
    assert sorted(frame.locator("script").evaluate_all("s => s.map(e => e.id)")) == sorted([RECORD_ID, SCRIPT_ID])
    body = frame.locator("body").inner_text()
    for name in [*ranked, PLAIN]:
        assert name in body, name
    assert frame.locator("h1").inner_text().strip() == f"Winner: {ranked[0]} ({site_run.board['winners'][0]})"
    assert dialogs == []
    page.context.close()


@pytest.mark.parametrize("who", list(WHO))
def test_the_results_tab_shows_the_winner_as_text(browser, site_run, who):
    from metascore.bundle.platform.page_text import plain_name

    dialogs: list[str] = []
    page = _open(browser, site_run, who, dialogs, "results-tab", META)
    page.wait_for_selector("#leaderboardTable tbody tr td")
    page.wait_for_load_state("networkidle")
    browser.shot(page, f"results_tab_{who.replace(' ', '_')}")
    (task,) = page.locator("#leaderboardTable thead tr.task-row th").all()[2:]
    assert task.locator("*").count() == 0  # the task's name is text: no element in its cell
    assert task.inner_text().startswith(f"Final ranking: {plain_name(_ranked(site_run)[0])} wins")
    assert dialogs == []
    page.context.close()


def _random_names(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + string.punctuation * 4 + "  \n\t\u00e9\u4e2d"
    return [name for name in ("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(n))
            if name.strip()]


def test_codabenchs_page_renderer_shows_escaped_names_as_their_text(browser, site_run):
    """Codabench's own ``renderMarkdownWithLatex`` (in the page, as it renders a competition
    page) on the escaped form of the hostile names and of 600 random ones, in a heading, a
    table cell, a list item and bold: only the elements the Markdown around them makes, and
    each name shown exactly (line breaks as spaces)."""
    from metascore.bundle.platform.page_text import page_text

    names = list(NAMES) + _random_names(600, 49)
    docs = [f"## Result: {page_text(n)} wins\n\n| a | b |\n|---|---|\n| {page_text(n)} | 1 |\n\n"
            f"- **Ranked**: {page_text(n)}; **{page_text(n)}**.\n" for n in names]
    dialogs: list[str] = []
    page = _open(browser, site_run, "logged out", dialogs)
    shown = page.evaluate("""(docs) => docs.map((doc) => {
        const box = document.createElement('div');
        box.append(...renderMarkdownWithLatex(doc));
        return {tags: [...box.querySelectorAll('*')].map((e) => e.tagName.toLowerCase()),
                h2: box.querySelector('h2')?.textContent, td: box.querySelector('td')?.textContent,
                li: box.querySelector('li')?.textContent, strong: [...box.querySelectorAll('li strong')].map((e) => e.textContent)};
    })""", docs)
    wrong = []
    for name, got in zip(names, shown):
        text = re.sub(r"[\x00-\x1f\x7f]", " ", name).strip()
        if (set(got["tags"]) - {"h2", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "strong"}
                or got["h2"] != f"Result: {text} wins" or got["td"] != text
                or got["li"] != f"Ranked: {text}; {text}." or got["strong"] != ["Ranked", text]):
            wrong.append((name, got))
    assert wrong == [], wrong[:5]
    assert dialogs == []
    page.context.close()
