"""Issue 53 on the real Codabench: anyone can check the published winner.

Opt-in like the other real-site tests (``METASCORE_SITE=1``, marker ``site``; hold
``flock /tmp/real_site.lock``). The template competition: participants submit in Development,
the Final phase starts and the scheduler migrates them, the meta phase opens, and the
organizer runs the documented step (``codabench pull`` then ``codabench submit``, which
publishes). Then ``metascore codabench verify``, with no token and with a participant's, says
the published ranking matches what the public leaderboards give. Then the organizer changes
the site after the fact, as its own pages let them: bob's final submission deleted (the
trash icon of the organizer's submission manager, ``DELETE /api/submissions/<id>/``: under
the rule Force_Last only a superuser may take a submission off the leaderboard without
deleting it) and one of carol's final scores edited (``PATCH /api/submission_scores/<id>/``,
what ``SubmissionScoreViewSet.update`` lets organizers do); ``verify`` names both rows.
The offline ``metascore verify`` of the page against the organizer's pulled folder matches.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

import real_site as rs
from real_site import cli, token_env
import real_site_bundles as rb

pytestmark = rb.SITE_MARKS

ORGANIZER, BASELINE, META = "organizer53", "baseline", "Final ranking"


@dataclass
class Run:
    site: str = ""
    cid: int = 0
    meta_sub: dict = field(default_factory=dict)
    anonymous: tuple[int, str] = (0, "")     # verify with no token: exit code, output
    participant: tuple[int, str] = (0, "")   # verify with bob's token
    offline: tuple[int, str] = (0, "")       # metascore verify PAGE --input pulled/
    after: tuple[int, str] = (0, "")         # verify with no token once the site changed
    bob_final: int = 0                       # the deleted submission
    carol_final: int = 0                     # the one whose score was edited
    edited: tuple[str, float, float] = ("", 0.0, 0.0)  # column key, old, new
    requests: list = field(default_factory=list)  # what the anonymous verify asked
    times: dict = field(default_factory=dict)


def _verify(*args: str, token: str | None = None) -> tuple[int, str]:
    """``metascore ARGS`` with ``token`` (None: no token at all): exit code and output."""
    from metascore.cli import main

    out = io.StringIO()
    saved = os.environ.pop("CODABENCH_TOKEN", None)
    try:
        with contextlib.ExitStack() as stack:
            if token is not None:
                stack.enter_context(token_env(token))
            stack.enter_context(contextlib.redirect_stdout(out))
            stack.enter_context(contextlib.redirect_stderr(out))
            rc = main(list(args))
    finally:
        if saved is not None:
            os.environ["CODABENCH_TOKEN"] = saved
    return rc, out.getvalue()


@contextlib.contextmanager
def _recorded(run: Run):
    """Record the method, path and whether credentials were sent of every request made."""
    original = requests.Session.request

    def request(self, method, url, *args, **kwargs):
        headers = {**(self.headers or {}), **(kwargs.get("headers") or {})}
        run.requests.append((method, url.split("?")[0], "Authorization" in headers))
        return original(self, method, url, *args, **kwargs)

    requests.Session.request = request
    try:
        yield
    finally:
        requests.Session.request = original


def run_competition(folder: Path) -> Run:
    run = Run()
    t = rs.Stopwatch()
    run.site = rs.site_up()[0]["site"]
    bundle = rb.copy_template(folder)
    zipped = rb.zip_bundle(bundle, folder / "bundle.zip")
    people = rb.manifest_order(bundle)
    names = [ORGANIZER, BASELINE, *(p for p, _ in people)]
    tokens = rs.admin("users", {"users": [{"username": n} for n in names]})
    apis = {n: rs.Api(run.site, tokens[n]) for n in names}
    comp = rs.Competition(apis, ORGANIZER, zipped)
    run.cid = comp.id
    t.lap("upload + unpack + publish + register")
    final = comp.through_final(bundle, people, BASELINE)
    t.lap("Development + Final")
    common = ["--site", run.site, "--competition", str(comp.id)]
    config = str(bundle / "final_ranking" / "reference_data" / "metascore.yaml")
    comp.open_phase(META)
    with token_env(tokens[ORGANIZER]):
        cli("codabench", "pull", *common, "--config", config, "--baseline", BASELINE, "--out", str(folder / "pulled"))
        cli("codabench", "submit", *common, "--phase", META, "--poll-interval", "2", str(folder / "pulled"))
    (run.meta_sub,) = [s for s in comp.wait(META, 1) if s["owner"] == ORGANIZER]
    t.lap("organizer pull + submit (+ publish)")

    with _recorded(run):
        run.anonymous = _verify("codabench", "verify", *common)
    t.lap("verify, no token")
    run.participant = _verify("codabench", "verify", *common, token=tokens["bob"])
    t.lap("verify, bob's token")
    page = folder / "detailed_results.html"
    page.write_text(requests.get(apis["bob"].call("GET", f"/api/submissions/{run.meta_sub['id']}/get_detail_result/"),
                                 timeout=60).text)
    run.offline = _verify("verify", str(page), "--input", str(folder / "pulled"))
    t.lap("verify offline")

    org = apis[ORGANIZER]
    (bob,) = [s for s in final if s["owner"] == "bob" and s["parent"] is None]
    run.bob_final = bob["id"]
    org.call("DELETE", f"/api/submissions/{bob['id']}/", ok=(204,))
    (carol,) = [s for s in final if s["owner"] == "carol" and s["parent"] is None]
    run.carol_final = carol["id"]
    score = next(s for s in carol["scores"] if s["column_key"] == "blobs_accuracy")
    old, new = float(score["score"]), round(float(score["score"]) - 0.25, 4)
    org.call("PATCH", f"/api/submission_scores/{score['id']}/", json={"score": f"{new:.10f}"})
    run.edited = ("blobs_accuracy", old, new)
    t.lap("the organizer deletes bob's final submission and edits one of carol's scores")
    run.after = _verify("codabench", "verify", *common)
    t.lap("verify again, no token")
    run.times = t.times
    print(f"\n[issue53] competition {comp.id}; timings (s): {json.dumps(run.times)}")
    print(f"[issue53] verify, no token:\n{run.anonymous[1]}[issue53] verify after the changes:\n{run.after[1]}")
    return run


@pytest.fixture(scope="module")
def site_run(tmp_path_factory) -> Run:
    return run_competition(tmp_path_factory.mktemp("issue53"))


def _last(output: str) -> str:
    return output.strip().splitlines()[-1]


def test_an_anonymous_visitor_finds_the_published_ranking_matches(site_run):
    rc, out = site_run.anonymous
    assert rc == 0, out
    assert _last(out).startswith("match: the published ranking of phase 'Final' (4 ranked, winner alice"), out
    assert _last(out).endswith("is what its published configuration gives on the public leaderboard")


def test_the_anonymous_check_reads_only_public_pages_without_credentials(site_run):
    asked = {(method, url.replace(site_run.site, "")) for method, url, _ in site_run.requests
             if url.startswith(site_run.site)}
    cid, sub = site_run.cid, site_run.meta_sub["id"]
    assert {("GET", f"/api/competitions/{cid}/"), ("GET", f"/api/submissions/{sub}/get_detail_result/")} <= asked
    assert all(method == "GET" for method, _ in asked)
    others = {path for _, path in asked} - {f"/api/competitions/{cid}/", f"/api/submissions/{sub}/get_detail_result/"}
    assert others and all(path.startswith("/api/phases/") and path.endswith("/get_leaderboard/") for path in others), asked
    assert not any(credentials for _, _, credentials in site_run.requests)


def test_a_participant_finds_the_same(site_run):
    rc, out = site_run.participant
    assert rc == 0 and _last(out) == _last(site_run.anonymous[1]), out


def test_the_organizers_pulled_folder_matches_the_page_offline(site_run):
    rc, out = site_run.offline
    assert rc == 0 and out.startswith("match: the published ranking of phase 'Final'"), out


def test_changes_on_the_site_after_the_ranking_are_named(site_run):
    rc, out = site_run.after
    assert rc == 1, out
    lines = out.strip().splitlines()
    assert any(line.startswith("MISMATCH: the published ranking of phase 'Final'") for line in lines), out
    bob, carol = site_run.bob_final, site_run.carol_final
    assert (f"  - bob-{bob} (bob, submission {bob}): on the page's board of phase 'Final', but no longer in "
            "the public leaderboard of that phase") in lines, out
    key, old, new = site_run.edited
    assert any(line.startswith(f"  - carol-{carol} (carol, submission {carol}): judge 'datasets/{key}' in phase "
                               f"'Final' was {old:.10g} when the ranking was made; the public leaderboard now "
                               f"says {new:.10g}") for line in lines), out
