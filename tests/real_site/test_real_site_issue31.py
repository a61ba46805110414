"""Issue 31 on the real Codabench: bundles that did not come from the template, through
``metascore bundle add-meta`` with its defaults, then what a participant and a logged-out
client get.

Opt-in like ``tests/real_site/test_real_site.py`` (``METASCORE_SITE=1``, marker ``site``). Two bundles
of tests/data/bundles/, each a competition of its own:

- ``site_results_v2``: a v2 result-submission bundle with Codabench's defaults for everything
  add-meta does not set (no ``registration_auto_approve``, no ``enable_detailed_results``,
  the rule Add, no image), two phases with their own tasks, AUC (higher) and log loss
  (lower), four participants and a ``baseline`` account;
- ``site_v1_repository``: a CodaLab v1 bundle as its repository keeps it (the yaml names
  ``scoring_program.zip`` and ``reference_data.zip``, the folders are there), one phase of
  result submissions, three scored columns and a computed ``< Rank >`` column, through the
  v1 unpacker.

The organizer approves the registrations when they wait (the v2 bundle; a submission before
that is refused, 403), the participants submit their results in each phase and put them on
the leaderboard (the rule is Add), the organizer submits what ``metascore codabench pull`` wrote,
signed, to the Final ranking phase and puts that on the leaderboard too. Then: a participant's own token and an
anonymous client both get the ranking page (``get_detail_result``: 200, the meta program's
``detailed_results.html`` byte for byte) and the Final ranking row with its link; neither can
download the meta submission's files, the export (``get_details``: 404 and 403); and the
site's final leaderboard is ``bundle run``'s, column for column but the ids and the times.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests
import yaml

import real_site as rs
import real_site_bundles as rb
import standin_images as standin
from repo_paths import TESTS

pytestmark = rb.SITE_MARKS

DATA = TESTS / "data" / "bundles"
ORGANIZER = "organizer"
META = "Final ranking"


@dataclass
class Run:
    """What one bundle gave on the site and locally."""

    name: str
    bundle: Path
    local: Path
    site: str = ""
    competition: int = 0
    phases: dict = field(default_factory=dict)
    refused_before_approval: str = ""
    registrations: set = field(default_factory=set)
    meta_id: int = 0
    meta: dict = field(default_factory=dict)
    meta_files: dict = field(default_factory=dict)
    times: dict = field(default_factory=dict)
    apis: dict = field(default_factory=dict)


def _dates(bundle: Path) -> None:
    """Phase dates around today (midnight UTC): the first phase opened yesterday and ends in
    two days, the next ones follow a day apart (v1: the phase starts yesterday and
    ``end_date``, its end, is in two days)."""
    today = dt.datetime.now(dt.timezone.utc).date()
    path = bundle / "competition.yaml"
    offsets = iter((-1, 2, 3, 4, 5, 6))
    fixed = {"start_date": -1, "end_date": 2}

    def moved(m: re.Match) -> str:
        key = m.group(2)
        days = fixed[key] if key in fixed else next(offsets)
        return f"{m.group(1)}{today + dt.timedelta(days=days)}"

    path.write_text(re.sub(r"(?m)^(\s*(start|end|start_date|end_date): )\d{4}-\d{2}-\d{2}$",
                           moved, path.read_text()))


def _participants(bundle: Path, phase: str | None) -> list[dict]:
    folder = bundle / "sample_submissions" / (phase or "")
    return yaml.safe_load((folder / "submissions.yaml").read_text())


def run_bundle_on_site(name: str, tmp: Path) -> Run:
    from metascore.bundle import run_bundle
    from metascore.bundle.meta.add import add_meta

    t = rs.Stopwatch()
    bundle = Path(shutil.copytree(DATA / name, tmp / "bundle"))
    _dates(bundle)
    add_meta(bundle)  # the defaults
    run = Run(name, bundle, tmp / "bundle_run")
    report = run_bundle(bundle, run.local)
    assert (run.local / "final" / "leaderboard.csv").is_file(), report.warnings
    zipped = rb.zip_bundle(bundle, tmp / "bundle.zip")
    t.lap("add-meta + bundle run + bundle zip")

    comp_yaml = yaml.safe_load((bundle / "competition.yaml").read_text())
    v1 = "phases" in comp_yaml and isinstance(comp_yaml["phases"], dict)
    phase_names = ([p["label"] for p in comp_yaml["phases"].values()] if v1
                   else [p["name"] for p in comp_yaml["phases"]])
    ranked = [p for p in phase_names if p != META]
    people = [r["participant"] for r in _participants(bundle, None if v1 else ranked[0])]
    state, _ = rs.site_up()
    run.site = state["site"]
    tokens = rs.admin("users", {"users": [{"username": n} for n in [ORGANIZER, *people]]})
    run.apis = {n: rs.Api(run.site, tokens[n]) for n in tokens}
    org = run.apis[ORGANIZER]
    run.competition, _ = rs.upload_bundle(org, zipped)
    cid = run.competition
    org.call("POST", f"/api/competitions/{cid}/toggle_publish/")
    run.phases = {p["name"]: p for p in rs.competition(org, cid)["phases"]}
    statuses = {}
    for person in people:
        statuses[person] = run.apis[person].call("POST", f"/api/competitions/{cid}/register/")["participant_status"]
    run.registrations = set(statuses.values())
    if run.registrations == {"pending"}:
        # item 4: a registration that waits for approval; its submissions are refused
        first = rb_sample(bundle, v1, ranked[0], people[0])
        try:
            rs.submit(run.apis[people[0]], cid, run.phases[ranked[0]], first)
        except rs.SiteError as exc:
            run.refused_before_approval = str(exc)
        waiting = org.call("GET", "/api/participants/", params={"competition": cid, "status": "pending"})
        for item in waiting:
            org.call("PATCH", f"/api/participants/{item['id']}/", json={"status": "approved"})
    t.lap("upload + unpack + publish + register (+ approve)")

    for n, phase in enumerate(ranked):
        if n:
            open_phase(cid, phase_names, phase)
        ids = {}
        for person in people:
            ids[person] = rs.submit(run.apis[person], cid, run.phases[phase], rb_sample(bundle, v1, phase, person))
        rs.wait_phase(org, run.phases[phase]["id"], len(people))
        for person, sub_id in ids.items():  # the rule is Add: each puts theirs on the leaderboard
            run.apis[person].call("POST", f"/api/submissions/{sub_id}/submission_leaderboard_connection/")
        t.lap(f"{phase}: submit + run + add to leaderboard")

    open_phase(cid, phase_names, META)
    # what the organizer submits: the pulled tree (each submission's time; issue 50 item 8), signed (issues 46, 49)
    config = next(bundle.rglob("metascore.yaml"))  # the one add-meta wrote in the meta task's reference data
    signed = rs.signed_zip(rs.pulled_export(org, cid, tmp / "pulled", "--config", str(config)), org, cid, META)
    run.meta_id = rs.submit(org, cid, run.phases[META], signed, "results.zip")
    (run.meta,) = [s for s in rs.wait_phase(org, run.phases[META]["id"], 1) if s["id"] == run.meta_id]
    org.call("POST", f"/api/submissions/{run.meta_id}/submission_leaderboard_connection/")
    run.meta_files = rs.scoring_output(org, run.meta_id)
    t.lap("Final ranking: export + submit + run + add to leaderboard")
    run.times = t.times
    print(f"\n[{name}] competition {cid}; timings (s): {json.dumps(run.times)}")
    return run


def rb_sample(bundle: Path, v1: bool, phase: str, person: str) -> bytes:
    """The zip of ``person``'s result submission of ``phase``."""
    folder = bundle / "sample_submissions" / ("" if v1 else phase)
    (row,) = [r for r in yaml.safe_load((folder / "submissions.yaml").read_text()) if r["participant"] == person]
    return rs.zip_folder(folder / row["file"])


def open_phase(cid: int, names: list[str], phase: str) -> None:
    """Time passes: ``phase`` starts a minute ago and the one before it ends then."""
    start = (dt.datetime.now(dt.timezone.utc).replace(microsecond=0) - dt.timedelta(minutes=1)).isoformat()
    before = names[names.index(phase) - 1]
    rs.admin("phase_dates", {"competition": cid, "phases": {phase: {"start": start}, before: {"end": start}}})


@pytest.fixture(scope="module", params=["site_results_v2", "site_v1_repository"])
def site_run(request, tmp_path_factory) -> Run:
    """Both bundles keep Codabench's default image, py37, whose stand-in here is an old
    Debian whose Python is too old for metascore (``tests/standin_images.py``): add-meta
    leaves the image, and ``bundle zip`` with its default (``--meta-python auto``) gives the
    meta program its own Python (built once on this machine)."""
    standin.build_py37()
    old = os.environ.get("METASCORE_META_PYTHON")
    os.environ["METASCORE_META_PYTHON"] = "auto"  # the organizer's default; the tests' is image
    try:
        return run_bundle_on_site(request.param, tmp_path_factory.mktemp(request.param))
    finally:
        os.environ.pop("METASCORE_META_PYTHON") if old is None else os.environ.update(METASCORE_META_PYTHON=old)


def anonymous(run: Run, path: str) -> requests.Response:
    return requests.get(run.site + path, headers={"Accept": "application/json"}, timeout=60)


def as_user(run: Run, user: str, path: str) -> requests.Response:
    return requests.get(run.site + path, headers={"Accept": "application/json",
                                                  "Authorization": f"Token {run.apis[user].token}"},
                        timeout=60)


def participant(run: Run) -> str:
    return next(n for n in run.apis if n not in (ORGANIZER, "baseline"))


# ----------------------------------------------------------------------------- the tests

def test_the_image_is_left_as_it_was(site_run):
    data = yaml.safe_load((site_run.bundle / "competition.yaml").read_text())
    assert "docker_image" not in data and "competition_docker_image" not in data  # Codabench's default


def test_the_meta_phase_finishes(site_run):
    assert site_run.meta["status"] == "Finished", site_run.meta
    assert "leaderboard.csv" in site_run.meta_files and "detailed_results.html" in site_run.meta_files


def test_a_participant_and_an_anonymous_client_get_the_ranking_page(site_run):
    page = site_run.meta_files["detailed_results.html"]
    for who, response in (("participant", as_user(site_run, participant(site_run),
                                                  f"/api/submissions/{site_run.meta_id}/get_detail_result/")),
                          ("anonymous", anonymous(site_run, f"/api/submissions/{site_run.meta_id}/get_detail_result/"))):
        assert response.status_code == 200, (who, response.status_code, response.text[:300])
        shown = requests.get(response.json(), timeout=60)
        assert shown.status_code == 200 and shown.content == page, who


def test_the_final_ranking_row_and_its_link_are_on_the_leaderboard_they_see(site_run):
    meta = site_run.phases[META]["id"]
    for who, response in (("participant", as_user(site_run, participant(site_run), f"/api/phases/{meta}/get_leaderboard/")),
                          ("anonymous", anonymous(site_run, f"/api/phases/{meta}/get_leaderboard/"))):
        assert response.status_code == 200, (who, response.text[:300])
        rows = response.json()["submissions"]
        assert [r["owner"] for r in rows] == [ORGANIZER], (who, rows)
        assert [d["id"] for d in rows[0]["detailed_results"]] == [site_run.meta_id], (who, rows)


def test_neither_can_download_the_export(site_run):
    path = f"/api/submissions/{site_run.meta_id}/get_details/"
    assert as_user(site_run, participant(site_run), path).status_code == 404
    assert anonymous(site_run, path).status_code == 403
    # the organizer still can
    assert site_run.apis[ORGANIZER].call("GET", path)["scoring_result"]


def test_the_sites_final_leaderboard_is_bundle_runs(site_run):
    site = rs.board(site_run.meta_files["leaderboard.csv"])
    local = rs.board((site_run.local / "final" / "leaderboard.csv").read_text())
    rs.same_board(site, local)


def test_registrations_wait_for_approval_as_check_and_add_meta_say(site_run):
    from metascore.bundle import check_bundle

    said = [n for n in check_bundle(site_run.bundle).notes if "registrations wait" in n]
    if site_run.name == "site_results_v2":  # no registration_auto_approve: Codabench's default
        assert site_run.registrations == {"pending"} and said
        assert "403" in site_run.refused_before_approval, site_run.refused_before_approval
    else:  # v1 has_registration: False
        assert site_run.registrations == {"approved"} and not said
