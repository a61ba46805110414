"""Issue 46 on the real Codabench, through its own pages in headless Chromium: only the
organizer can make a final ranking, and the outcome reads right where participants look.

Opt-in like the other real-site tests (``METASCORE_SITE=1``, marker ``site``; hold
``flock /tmp/metascore-site.lock``). One competition: the template with the remedy
``add-meta --eye-icons hide`` writes (``show_detailed_results_in_leaderboard: false``, since
its scoring program writes no detailed_results.html), zipped by ``bundle zip`` (the meta
program carries the organizer's public key). Participants submit in Development, the Final
phase starts and the scheduler migrates them. Then, in the Final ranking phase:

- participant alice uploads a results export she wrote herself (the organizer's export with
  her scores made the best), unsigned, and the same signed with a key of her own: both end
  Failed, the meta program's log says why in one line, and neither is on any leaderboard;
- the organizer runs the documented step, ``metascore codabench pull`` then ``metascore
  codabench submit``: it ranks as ``bundle run`` does (the same final board), then writes the
  outcome on the "Final ranking" page and into the meta task's name.

Then a participant, a logged-out visitor and the organizer open the competition's pages in
Chromium (Codabench's front end built from the pinned commit, its CDN files from npm, nothing
fetched from outside: ``tests/real_site_browser.py``); screenshots are kept in
``$CODABENCH_SITE_HOME/evidence/issue46/``.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import real_site as rs
from real_site import cli, token_env
import real_site_bundles as rb
from requirements import require_chromium

pytestmark = rb.SITE_MARKS

ORGANIZER, BASELINE, META = "organizer", "baseline", "Final ranking"
PASSWORD = "metascore-issue-46"  # the local site's test accounts only
TITLE = "Three-dataset prediction challenge (metascore template)"


@dataclass
class Run:
    folder: Path
    site: str = ""
    cid: int = 0
    phases: dict = field(default_factory=dict)
    tokens: dict = field(default_factory=dict)
    forged: dict = field(default_factory=dict)          # what -> alice's meta submission
    forged_logs: dict = field(default_factory=dict)     # what -> scoring stderr
    alice_click: int = 0                                # her "add to leaderboard" answer
    organizer_sub: dict = field(default_factory=dict)
    organizer_files: dict = field(default_factory=dict)
    printed: str = ""
    competition: dict = field(default_factory=dict)     # anonymous GET, after publishing
    meta_board: dict = field(default_factory=dict)      # anonymous get_leaderboard
    boards: dict = field(default_factory=dict)          # phase -> anonymous get_leaderboard
    times: dict = field(default_factory=dict)

    @property
    def bundle_run(self) -> Path:
        return self.folder / "bundle_run"


def forged_export(export: dict, who: str) -> dict:
    """The export with ``who``'s scores the best of every column (what a participant would
    write to rank first; the format is public)."""
    forged = json.loads(json.dumps(export))
    for board in forged.values():
        rows = list(board.values())
        for key, row in board.items():
            if key.rsplit("-", 1)[0] != who:
                continue
            for col, cell in row.items():
                values = [float(r[col]) for r in rows if isinstance(r.get(col), str) and r[col]]
                if values and col != "fact_sheet_answers":
                    low = "mae" in col.lower() or "brier" in col.lower()
                    row[col] = f"{(min(values) if low else max(values)):.10f}"
    return forged


def run_competition(folder: Path) -> Run:
    from metascore.bundle import run_bundle
    from metascore.signature.binding import Binding, new_token
    from metascore.signature import organizer_key, signature_file

    run = Run(folder)
    t = rs.Stopwatch()
    state, _ = rs.site_up()
    run.site = state["site"]
    bundle = rb.copy_template(folder)

    def hide_eye_icons(data):  # what `add-meta --eye-icons hide` writes
        data["show_detailed_results_in_leaderboard"] = False

    rb.edit_yaml(bundle, hide_eye_icons)
    zipped = rb.zip_bundle(bundle, folder / "bundle.zip")
    report = run_bundle(bundle, run.bundle_run)
    assert (run.bundle_run / "final" / "leaderboard.csv").is_file(), report
    t.lap("bundle zip + bundle run")

    people = rb.manifest_order(bundle)
    names = [ORGANIZER, BASELINE, *(p for p, _ in people)]
    run.tokens = rs.admin("users", {"users": [{"username": n, "password": PASSWORD} for n in names]})
    api = {n: rs.Api(run.site, run.tokens[n]) for n in names}
    org = api[ORGANIZER]
    run.cid, _ = rs.upload_bundle(org, zipped)
    cid = run.cid
    org.call("POST", f"/api/competitions/{cid}/toggle_publish/")
    for name in names[1:]:
        api[name].call("POST", f"/api/competitions/{cid}/register/")
    run.phases = {p["name"]: p for p in rs.competition(org, cid)["phases"]}
    dev, final, meta = (run.phases[p] for p in ("Development", "Final", META))
    for person, sample in people:
        rs.submit(api[person], cid, dev, rs.zip_folder(bundle / "sample_submissions" / sample))
    rs.submit(api[BASELINE], cid, dev, rs.zip_folder(bundle / "starting_kit" / "baseline_submission"))
    rs.wait_phase(org, dev["id"], len(people) + 1)
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    rs.admin("phase_dates", {"competition": cid, "phases": {
        "Development": {"end": (now - dt.timedelta(minutes=1)).isoformat()},
        "Final": {"start": (now - dt.timedelta(minutes=1)).isoformat()}}})
    rs.admin("run_task", {"task": "do_phase_migrations"})
    rs.wait_phase(org, final["id"], len(people) + 1)
    t.lap("Development + Final")
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    rs.admin("phase_dates", {"competition": cid, "phases": {
        "Final": {"end": (now - dt.timedelta(seconds=30)).isoformat()},
        META: {"start": (now - dt.timedelta(seconds=30)).isoformat()}}})

    # alice's own "final ranking": unsigned, then signed with a key of her own
    export = {k: v for p in (dev, final) for k, v in rs.results_json(org, cid, p["id"]).items()}
    text = json.dumps(forged_export(export, "alice"), indent=1).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("results.json", text)
    unsigned = buf.getvalue()
    hers = organizer_key(folder / "alice_key")
    # signed for this competition's meta phase with her own key (the key is checked first,
    # whatever token she names)
    binding = Binding(run.site, cid, META, meta["id"], (new_token(),),
                      dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("results.json", text)
        archive.writestr("metascore.sig", signature_file({"results.json": text}, hers, binding, binding.pulled_at))
    ids = {"unsigned": rs.submit(api["alice"], cid, meta, unsigned, "results.zip"),
           "her own key": rs.submit(api["alice"], cid, meta, buf.getvalue(), "results.zip")}
    done = {s["id"]: s for s in rs.wait_phase(org, meta["id"], 2)}
    run.forged = {what: done[sid] for what, sid in ids.items()}
    run.forged_logs = {what: rs.logs(org, sid).get("scoring_stderr", "") for what, sid in ids.items()}
    click = api["alice"].session.post(f"{run.site}/api/submissions/{ids['unsigned']}/submission_leaderboard_connection/",
                                      headers={"Authorization": f"Token {run.tokens['alice']}"}, timeout=60)
    run.alice_click = click.status_code
    t.lap("alice's two exports")

    common = ["--site", run.site, "--competition", str(cid)]
    config = str(bundle / "final_ranking" / "reference_data" / "metascore.yaml")
    with token_env(run.tokens[ORGANIZER]):
        cli("codabench", "pull", *common, "--config", config, "--baseline", BASELINE, "--out", str(folder / "pulled"))
        run.printed = cli("codabench", "submit", *common, "--phase", META, "--poll-interval", "2",
                          str(folder / "pulled"))
    subs = rs.wait_phase(org, meta["id"], 3)
    run.organizer_sub = max((s for s in subs if s["owner"] == ORGANIZER), key=lambda s: s["id"])
    run.organizer_files = rs.scoring_output(org, run.organizer_sub["id"])
    t.lap("organizer: codabench pull + submit (+ publish)")

    run.competition = _anonymous(run, f"/api/competitions/{cid}/")
    run.boards = {name: _anonymous(run, f"/api/phases/{p['id']}/get_leaderboard/") for name, p in run.phases.items()}
    run.meta_board = run.boards[META]
    run.times = t.times
    out = rb_evidence()
    (out / "run.json").write_text(json.dumps({
        "competition": cid, "times": run.times, "forged": run.forged, "forged_logs": run.forged_logs,
        "alice_click": run.alice_click, "organizer_sub": run.organizer_sub, "printed": run.printed,
        "pages": run.competition.get("pages"), "boards": run.boards}, indent=1, default=str))
    print(f"\n[issue46] competition {cid}; timings (s): {json.dumps(run.times)}; evidence in {out}")
    return run


def _anonymous(run: Run, path: str) -> dict:
    import requests

    r = requests.get(run.site + path, headers={"Accept": "application/json"}, timeout=60)
    assert r.status_code == 200, (path, r.status_code, r.text[:300])
    return r.json()


def rb_evidence() -> Path:
    import real_site_browser as browser

    return browser.evidence("issue46")


@pytest.fixture(scope="module")
def site_run(tmp_path_factory) -> Run:
    return run_competition(tmp_path_factory.mktemp("issue46"))


def local_final(run: Run) -> list[dict[str, str]]:
    return rs.board((run.bundle_run / "final" / "leaderboard.csv").read_text())


def headline(run: Run) -> tuple[str, list[str]]:
    """``bundle run``'s first place: the participants in it and the page's headline."""
    top = [r["participant"] for r in local_final(run) if r["position"] == "1"]
    text = top[0] + " wins" if len(top) == 1 else ", ".join(top[:-1]) + f" and {top[-1]} share first place"
    return text, top


# ----------------------------------------------------------------------------- the API

def test_a_participants_own_export_ends_failed_with_one_line_and_on_no_leaderboard(site_run):
    for what, sub in site_run.forged.items():
        assert sub["status"] == "Failed", (what, sub)
        errors = [line for line in site_run.forged_logs[what].splitlines() if line.startswith("metascore: error:")]
        assert len(errors) == 1, (what, site_run.forged_logs[what])
        assert "only the organizer's `metascore codabench submit` makes a final ranking" in errors[0]
    assert "not signed by the organizer" in site_run.forged_logs["unsigned"]
    assert "signed by key" in site_run.forged_logs["her own key"]
    assert site_run.alice_click == 403  # Force_Last: participants cannot put anything on a leaderboard
    forged = {s["id"] for s in site_run.forged.values()}
    for phase, board in site_run.boards.items():
        shown = {d["id"] for r in board["submissions"] for d in r["detailed_results"]} | {
            r["id"] for r in board["submissions"]}
        assert not forged & shown, (phase, board["submissions"])
    assert [r["owner"] for r in site_run.meta_board["submissions"]] == [ORGANIZER]


def test_the_organizers_export_ranks_as_bundle_run(site_run):
    assert site_run.organizer_sub["status"] == "Finished", site_run.organizer_sub
    assert "signed with the organizer key" in site_run.printed
    site = rs.board(site_run.organizer_files["leaderboard.csv"])
    local = local_final(site_run)
    # the pulled folder carries the submissions' times (bundle run's export has none): every
    # column but submitted_at is the same, candidates read by participant
    assert list(site[0]) == list(local[0])
    assert rs.normalized(site) == rs.normalized(local)


def test_the_final_ranking_page_and_the_task_name_carry_the_outcome(site_run):
    text, top = headline(site_run)
    (page,) = [p for p in site_run.competition["pages"] if p["title"] == META]
    assert f"## Result: {text}" in page["content"], page["content"][:800]
    assert f"/competitions/{site_run.cid}/detailed_results/{site_run.organizer_sub['id']}/" in page["content"]
    assert "How participants are compared" in page["content"]  # add-meta's text stays below
    assert "eye icon" not in page["content"].split("<!-- metascore: end")[0]  # they are hidden here
    (phase,) = [p for p in site_run.competition["phases"] if p["name"] == META]
    assert [t["name"] for t in phase["tasks"]] == [f"Final ranking: {text} ({len([r for r in local_final(site_run) if r['position']])} ranked by average rank; see the 'Final ranking' page)"]


def test_counts_show_as_codabench_rounds_them(site_run):
    """Item 4: the site sends ``str(round(float(score), precision))``, so a count with
    ``precision: 0`` reads ``4.0``; the integer is on the Final ranking page."""
    (row,) = site_run.meta_board["submissions"]
    counts = [s["score"] for s in row["scores"] if s["column_key"] == "n_qualified"]
    assert counts and re.fullmatch(r"\d+\.0", counts[0]), row["scores"]


# ----------------------------------------------------------------------------- the pages

@pytest.fixture(scope="module")
def browser(site_run):
    import real_site_browser as rbr

    require_chromium()
    with rbr.Browser(site_run.site, rb_evidence()) as b:
        yield b
        # nothing fetched from outside: every CDN file the template names is served locally,
        # and what else was asked for was refused (EasyMDE's own extras only)
        assert all(url.startswith(rbr.EASYMDE_EXTRAS) for url in b.blocked), b.blocked
        assert b.errors == [], b.errors


WHO = {"participant": "bob", "logged out": None, "organizer": ORGANIZER}


def _open(browser, site_run, who: str):
    user = WHO[who]
    page = browser.page(user, PASSWORD if user else None)
    page.goto(f"{site_run.site}/competitions/{site_run.cid}/")
    page.wait_for_load_state("networkidle")
    return page


@pytest.mark.parametrize("who", list(WHO))
def test_the_results_tab_names_the_winner(browser, site_run, who):
    text, _ = headline(site_run)
    page = _open(browser, site_run, who)
    page.click(".details-menu .item[data-tab=results-tab]")
    page.click(f".results-tab .button-container .button:has-text('{META}')")
    page.wait_for_selector("#leaderboardTable tbody tr td")
    page.wait_for_load_state("networkidle")
    browser.shot(page, f"results_tab_{who.replace(' ', '_')}")
    header = page.inner_text("#leaderboardTable thead")
    assert f"Final ranking: {text}" in header, header
    # no eye icon anywhere (the organizer's choice: --eye-icons hide), so no blank page
    for phase in ("Development", "Final", META):
        page.click(f".results-tab .button-container .button:has-text('{phase}')")
        page.wait_for_load_state("networkidle")
        assert page.locator("#leaderboardTable .eye-icon").count() == 0, phase
    page.context.close()


@pytest.mark.parametrize("who", list(WHO))
def test_the_final_ranking_page_names_the_winner_and_links_the_ranking(browser, site_run, who):
    text, _ = headline(site_run)
    page = _open(browser, site_run, who)
    page.click(".details-menu .item[data-tab=pages-tab]")
    page.click(f".pages-menu .item:has-text('{META}')")
    page.wait_for_timeout(500)
    browser.shot(page, f"final_ranking_page_{who.replace(' ', '_')}")
    shown = page.inner_text(".pages-tab")
    assert f"Result: {text}" in shown, shown[:1000]
    import real_site_browser as rbr

    frame = rbr.open_full_ranking(page, site_run.site)
    browser.shot(page, f"ranking_page_{who.replace(' ', '_')}")
    head = frame.locator("header").inner_text().upper()  # the where-line is shown in capitals
    assert f"{TITLE} · Final ranking of phase Final".upper() in head, head
    page.context.close()


def test_the_ranking_pages_first_710_px_answer_who_where_and_how(browser, site_run):
    """Item 5: Codabench frames the page at about 1155 x 710 px."""
    text, top = headline(site_run)
    page = browser.page()
    page.set_viewport_size({"width": 1155, "height": 710})
    url = _anonymous(site_run, f"/api/submissions/{site_run.organizer_sub['id']}/get_detail_result/")
    page.goto(url)
    page.wait_for_load_state("networkidle")
    browser.shot(page, "ranking_page_1155x710")
    for needle in (TITLE, *top, "average rank", "beat every baseline", "ranked"):
        box = page.get_by_text(needle, exact=False).first.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 710, (needle, box)
    page.context.close()
