"""Issue 49 items 1 and 2 on the real Codabench: the published final ranking is the
organizer's current one, for this competition.

Opt-in like the other real-site tests (``METASCORE_SITE=1``, marker ``site``; hold
``flock /tmp/real_site.lock``). Two competitions made by one organizer from two zips of the
template (``bundle zip``: each zip carries its own competition token), with the same phase
names. In competition A participants submit in Development, the Final phase starts and the
scheduler migrates them; the organizer pulls once while Final is still open (a preview),
then the Final ends, the meta phase opens, and the organizer runs the documented step (``codabench
pull`` then ``codabench submit``, which publishes). Then participant mallory uploads to A's
meta phase:

- the organizer's export of A signed for competition B's meta phase (what the organizer's key
  signs for B: same phase names, B's ids and token): Failed, one line;
- the organizer's preview of A, pulled while Final was open, signed (as a key holder could
  sign it by hand): Failed, one line, stale;
- a replay of the organizer's own signed zip of A (``codabench sign``): it is valid, so it
  finishes, under mallory's name;

and the organizer publishes again: the page keeps the organizer's submission; naming
mallory's with ``--submission`` is refused. What an anonymous visitor and a participant read
through the API is checked too.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import real_site as rs
from real_site import cli, token_env
import real_site_bundles as rb

pytestmark = rb.SITE_MARKS

ORGANIZER, BASELINE, MALLORY, META = "organizer49", "baseline", "mallory", "Final ranking"


@dataclass
class Run:
    site: str = ""
    a: int = 0
    b: int = 0
    organizer_sub: dict = field(default_factory=dict)
    mallory: dict = field(default_factory=dict)        # what -> her meta submission
    mallory_logs: dict = field(default_factory=dict)   # what -> its scoring stderr
    submit_printed: str = ""
    publish_printed: str = ""
    refused: tuple[int, str] = (0, "")                 # publish --submission <mallory's>
    anonymous: dict = field(default_factory=dict)      # GET /api/competitions/<a>/
    participant: dict = field(default_factory=dict)    # the same, with bob's token
    meta_board: dict = field(default_factory=dict)     # anonymous get_leaderboard of A's meta phase
    times: dict = field(default_factory=dict)


def _zip_of(folder: Path, binding, key) -> bytes:
    """``folder`` zipped and signed for ``binding`` with ``key``, without the signing
    command's own checks (what a key holder can make by hand)."""
    from metascore.codabench.signing import now_iso, zip_signed
    from metascore.signature import folder_files

    return zip_signed(folder_files(folder), key, binding, now_iso())


def run_competitions(folder: Path) -> Run:
    import dataclasses

    from metascore.cli import main
    from metascore.codabench.client import Client
    from metascore.codabench.pull import fetch_competition, find_phase
    from metascore.codabench.signing import binding_for, site_tokens
    from metascore.signature import organizer_key

    run = Run()
    t = rs.Stopwatch()
    run.site = rs.site_up()[0]["site"]
    bundle = rb.copy_template(folder)
    zip_a, zip_b = (rb.zip_bundle(bundle, folder / f"{n}.zip") for n in "ab")
    people = rb.manifest_order(bundle)
    names = [ORGANIZER, BASELINE, MALLORY, *(p for p, _ in people)]
    tokens = rs.admin("users", {"users": [{"username": n} for n in names]})
    apis = {n: rs.Api(run.site, tokens[n]) for n in names}
    a, b = rs.Competition(apis, ORGANIZER, zip_a), rs.Competition(apis, ORGANIZER, zip_b)
    run.a, run.b = a.id, b.id
    t.lap("two zips of one bundle: upload + unpack")
    a.through_final(bundle, people, BASELINE)
    t.lap("A: Development + Final")
    common = ["--site", run.site, "--competition", str(a.id)]
    config = str(bundle / "final_ranking" / "reference_data" / "metascore.yaml")
    with token_env(tokens[ORGANIZER]):
        cli("codabench", "pull", *common, "--config", config, "--baseline", BASELINE, "--out", str(folder / "preview"))
        client = Client(run.site, tokens[ORGANIZER])
        comp_a = fetch_competition(client, a.id)
        preview = binding_for(run.site, comp_a, find_phase(comp_a, META), folder / "preview",
                              site_tokens(client, find_phase(comp_a, META)))
        a.open_phase(META)  # Final ends, the meta phase opens
        cli("codabench", "pull", *common, "--config", config, "--baseline", BASELINE, "--out", str(folder / "pulled"))
        run.submit_printed = cli("codabench", "submit", *common, "--phase", META, "--poll-interval", "2",
                                 str(folder / "pulled"))
        cli("codabench", "sign", *common, str(folder / "pulled"), "-o", str(folder / "replay.zip"))
        comp_b = fetch_competition(client, b.id)
        meta_b = find_phase(comp_b, META)
        for_b = dataclasses.replace(preview, competition=b.id, phase_id=meta_b.id, opened=meta_b.start,
                                    tokens=site_tokens(client, meta_b),
                                    pulled_at=json.loads((folder / "pulled" / "codabench.json").read_text())["pulled_at"],
                                    ends=())
    (run.organizer_sub,) = [s for s in a.wait(META, 1) if s["owner"] == ORGANIZER]
    t.lap("A: organizer pull + submit (+ publish)")

    key = organizer_key()
    uploads = {"signed for competition B": _zip_of(folder / "pulled", for_b, key),
               "pulled while Final was open": _zip_of(folder / "preview", preview, key),
               "a replay of the organizer's zip": (folder / "replay.zip").read_bytes()}
    ids = {what: a.submit(MALLORY, META, data, "results.zip") for what, data in uploads.items()}
    done = {s["id"]: s for s in a.wait(META, 1 + len(ids))}
    run.mallory = {what: done[sid] for what, sid in ids.items()}
    run.mallory_logs = {what: rs.logs(apis[ORGANIZER], sid).get("scoring_stderr", "") for what, sid in ids.items()}
    t.lap("mallory's three uploads")

    with token_env(tokens[ORGANIZER]):
        run.publish_printed = cli("codabench", "publish", *common)
        err = io.StringIO()
        import contextlib

        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = main(["codabench", "publish", *common, "--submission", str(ids["a replay of the organizer's zip"])])
        run.refused = (rc, err.getvalue())
    run.anonymous = _get(run.site, f"/api/competitions/{a.id}/")
    run.participant = _get(run.site, f"/api/competitions/{a.id}/", tokens["bob"])
    run.meta_board = _get(run.site, f"/api/phases/{a.phases[META]['id']}/get_leaderboard/")
    run.times = t.times
    print(f"\n[issue49] competitions {a.id} and {b.id}; timings (s): {json.dumps(run.times)}")
    return run


def _get(site: str, path: str, token: str | None = None) -> dict:
    import requests

    headers = {"Accept": "application/json", **({"Authorization": f"Token {token}"} if token else {})}
    r = requests.get(site + path, headers=headers, timeout=60)
    assert r.status_code == 200, (path, r.status_code, r.text[:300])
    return r.json()


@pytest.fixture(scope="module")
def site_run(tmp_path_factory) -> Run:
    return run_competitions(tmp_path_factory.mktemp("issue49"))


def _one_error(log: str) -> str:
    errors = [line for line in log.splitlines() if line.startswith("metascore: error:")]
    assert len(errors) == 1 and "Traceback" not in log, log
    return errors[0]


def test_an_export_signed_for_another_competition_ends_failed_with_one_line(site_run):
    what = "signed for competition B"
    assert site_run.mallory[what]["status"] == "Failed", site_run.mallory[what]
    error = _one_error(site_run.mallory_logs[what])
    assert f"was signed for competition {site_run.b}'s phase 'Final ranking'" in error, error
    assert "not for this competition's meta phase" in error


def test_an_export_pulled_before_the_phases_closed_ends_failed_with_one_line(site_run):
    what = "pulled while Final was open"
    assert site_run.mallory[what]["status"] == "Failed", site_run.mallory[what]
    error = _one_error(site_run.mallory_logs[what])
    assert "this results export is stale: its leaderboards were pulled at" in error, error
    assert "before phase 'Final' ended" in error


def test_the_organizers_export_finishes_and_is_published(site_run):
    assert site_run.organizer_sub["status"] == "Finished", site_run.organizer_sub
    assert f"signed for competition {site_run.a}'s phase 'Final ranking'" in site_run.submit_printed


def test_publish_after_a_participants_finished_upload_keeps_the_organizers_result(site_run):
    """mallory's replay of a valid signed export finishes (the program cannot know it is not
    the organizer's), but `publish` takes only an organizer's submission: the page, as an
    anonymous visitor and a participant read it, still links the organizer's."""
    replay = site_run.mallory["a replay of the organizer's zip"]
    assert replay["status"] == "Finished", replay
    assert "Finished submission(s) of phase 'Final ranking' made by participants are not published" in site_run.publish_printed
    for view in (site_run.anonymous, site_run.participant):
        (page,) = [p for p in view["pages"] if p["title"] == META]
        link = f"/competitions/{site_run.a}/detailed_results/{site_run.organizer_sub['id']}/"
        assert link in page["content"], page["content"][:1000]
        assert f"/detailed_results/{replay['id']}/" not in page["content"]
    rc, err = site_run.refused
    assert rc == 1 and err.count("\n") == 1, err
    assert f"submission {replay['id']} was made by '{MALLORY}', not by an organizer" in err
