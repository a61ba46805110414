"""The template on the real Codabench, compared with ``metascore bundle run``.

Opt-in (it takes minutes and needs root, apt, podman and a Codabench checkout):

    METASCORE_SITE=1 CODABENCH_SRC=/path/to/codabench.git python -m pytest -m site tests/real_site/test_real_site.py

``tools/codabench_site/site.py up`` stands the site up (idempotent; README.md beside it says
what runs and what stands in for S3, image pulls and e-mail). For each variant (the
template as shipped, and the template with participant alice renamed zoe: same submissions,
same order), one competition is run through the site's API, as its organizer and
participants would: the ``bundle zip`` is uploaded and unpacked by the real unpacker; each
sample submission is submitted by its own account, then the starting kit's baseline by the
``baseline`` account; the Final phase starts and the beat scheduler's
``do_phase_migrations`` migrates Development into it; the organizer downloads the results
export of both phases (``results.json?phase=``), zips it and submits it to "Final ranking";
then ``metascore codabench pull``, ``rank`` and ``submit`` run against the site. Each test
compares one thing with ``metascore bundle run`` of the same bundle folder.

Dates: the test's copy of the template gets dates around today (midnight, as the unpacker
stores them), so the scheduler does not migrate the empty Development phase before the
submissions (issue 25 item 3); "time passing" (the Final phase starting, then the meta
phase) is a change of the phases' dates through the ORM.

Issue 25 item 1 is fixed: one tie-break rule ("the earlier submission": a participant's
submission order taken from the earliest phase that lists them, ids compared as numbers,
``metascore.submission_order``), and ``bundle run`` feeds its meta phase what the export
holds (``<owner>-<id>``; since issue 50 item 8 with each submission's time, as ``codabench
pull`` writes it), so the winner, the positions, the scores and every column of the final
leaderboard are compared exactly; only the ids are read as ``<owner>-<number>`` (the site
numbers the migrated Final copies in PostgreSQL's row order) and the times as times.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import real_site as rs
from real_site import cli, token_env
import real_site_bundles as rb
from repo_paths import ROOT

pytestmark = rb.SITE_MARKS

REPO = ROOT
ORGANIZER = "organizer"
BASELINE = "baseline"
META_PHASE = "Final ranking"

# ----------------------------------------------------------------------------- the run

@dataclass
class SiteRun:
    """Everything one variant produced on the site and locally (the tests' evidence)."""

    variant: str
    folder: Path
    competition: int = 0
    phases: dict = field(default_factory=dict)          # name -> phase payload
    submissions: dict = field(default_factory=dict)     # phase name -> top-level submissions
    exports: dict = field(default_factory=dict)         # phase name -> results.json payload
    meta: dict = field(default_factory=dict)            # the organizer's meta submission
    meta_files: dict = field(default_factory=dict)      # its scoring output
    cli_submit: dict = field(default_factory=dict)      # `codabench submit`'s submission
    cli_submit_files: dict = field(default_factory=dict)
    cli_submit_printed: str = ""                        # what `codabench submit` printed
    times: dict = field(default_factory=dict)
    snapshot: dict = field(default_factory=dict)        # site.py admin competition

    @property
    def bundle_run(self) -> Path:
        return self.folder / "bundle_run"

    @property
    def ranked(self) -> Path:
        return self.folder / "ranked"


def run_variant(variant: str, folder: Path) -> SiteRun:
    from metascore.bundle import run_bundle

    run = SiteRun(variant, folder)
    t = rs.Stopwatch()
    state, took = rs.site_up()
    run.times["site up (site.py up)"] = round(took, 1)
    site = state["site"]
    t.lap("-")

    bundle = rb.copy_template(folder)
    if variant == "renamed":
        rb.rename_participant(bundle, "alice", "zoe")
    rb.zip_bundle(bundle, folder / "bundle.zip")
    report = run_bundle(bundle, run.bundle_run)
    assert (run.bundle_run / "final" / "leaderboard.csv").is_file(), report
    t.lap("bundle zip + bundle run (local)")

    people = rb.manifest_order(bundle)
    names = [ORGANIZER, BASELINE, *(p for p, _ in people)]
    tokens = rs.admin("users", {"users": [{"username": n} for n in names]})
    api = {n: rs.Api(site, tokens[n]) for n in names}
    org = api[ORGANIZER]
    t.lap("accounts and tokens (ORM)")

    run.competition, _ = rs.upload_bundle(org, (folder / "bundle.zip").read_bytes())
    cid = run.competition
    org.call("POST", f"/api/competitions/{cid}/toggle_publish/")
    for name in names[1:]:  # the organizer is a participant of the competitions it creates
        api[name].call("POST", f"/api/competitions/{cid}/register/")
    comp = rs.competition(org, cid)
    run.phases = {p["name"]: p for p in comp["phases"]}
    t.lap("upload + unpack + publish + register")

    dev = run.phases["Development"]
    for person, sample in people:
        rs.submit(api[person], cid, dev, rs.zip_folder(bundle / "sample_submissions" / sample))
    rs.submit(api[BASELINE], cid, dev, rs.zip_folder(bundle / "starting_kit" / "baseline_submission"))
    run.submissions["Development"] = rs.wait_phase(org, dev["id"], len(people) + 1)
    t.lap("Development: submit + run")

    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    rs.admin("phase_dates", {"competition": cid, "phases": {
        "Development": {"end": (now - dt.timedelta(minutes=1)).isoformat()},
        "Final": {"start": (now - dt.timedelta(minutes=1)).isoformat()}}})
    rs.admin("run_task", {"task": "do_phase_migrations"})
    final = run.phases["Final"]
    run.submissions["Final"] = rs.wait_phase(org, final["id"], len(people) + 1)
    t.lap("Final: migration + run")

    for phase in ("Development", "Final"):
        run.exports[phase] = rs.results_json(org, cid, run.phases[phase]["id"])
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    rs.admin("phase_dates", {"competition": cid, "phases": {
        "Final": {"end": (now - dt.timedelta(seconds=30)).isoformat()},
        META_PHASE: {"start": (now - dt.timedelta(seconds=30)).isoformat()}}})
    export = {k: v for payload in run.exports.values() for k, v in payload.items()}
    meta = run.phases[META_PHASE]
    sid = rs.submit(org, cid, meta, rs.signed_zip({"results.json": json.dumps(export, indent=1).encode()}, org, cid, META_PHASE),
                    "results.zip")
    done = rs.wait_phase(org, meta["id"], 1)
    run.meta = next(s for s in done if s["id"] == sid)
    if run.meta["status"] == "Finished":
        run.meta_files = rs.scoring_output(org, sid)
    run.submissions[META_PHASE] = done
    t.lap("Final ranking: export + submit + run")

    config = str(bundle / "final_ranking" / "reference_data" / "metascore.yaml")
    common = ["--site", site, "--competition", str(cid)]
    with token_env(tokens[ORGANIZER]):
        cli("codabench", "pull", *common, "--config", config, "--baseline", BASELINE, "--out", str(folder / "pulled"))
        t.lap("codabench pull")
        cli("codabench", "rank", *common, "--config", config, "--baseline", BASELINE, "--out", str(run.ranked))
        t.lap("codabench rank")
        run.cli_submit_printed = cli("codabench", "submit", *common, "--phase", META_PHASE,
                                     "--poll-interval", "2", str(folder / "pulled"))
    subs = rs.wait_phase(org, meta["id"], 2)
    run.cli_submit = max((s for s in subs if s["parent"] is None), key=lambda s: s["id"])
    if run.cli_submit["status"] == "Finished":
        run.cli_submit_files = rs.scoring_output(org, run.cli_submit["id"])
    t.lap("codabench submit")
    run.snapshot = rs.admin("competition", {"competition": cid})
    run.times.update(t.times)
    run.times.pop("-", None)
    save_evidence(run)
    return run


def save_evidence(run: SiteRun) -> None:
    """The run's payloads and timings, next to the site's logs (``evidence/<variant>/``)."""
    out = rs.site_home() / "evidence" / run.variant
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    (out / "run.json").write_text(json.dumps({
        "competition": run.competition, "times": run.times, "exports": run.exports,
        "submissions": run.submissions, "meta": run.meta, "cli_submit": run.cli_submit,
        "cli_submit_printed": run.cli_submit_printed,
        "snapshot": run.snapshot}, indent=1, default=str))
    for name, files in (("site_meta", run.meta_files), ("cli_submit", run.cli_submit_files)):
        for fname in ("leaderboard.csv", "scores.json"):
            if fname in files:
                (out / f"{name}_{fname}").write_bytes(files[fname])
    for src, name in ((run.bundle_run / "final" / "leaderboard.csv", "bundle_run_leaderboard.csv"),
                      (run.ranked / "leaderboard.csv", "codabench_rank_leaderboard.csv")):
        if src.is_file():
            shutil.copy(src, out / name)
    print(f"\n[{run.variant}] competition {run.competition}; timings (s): {json.dumps(run.times)}; "
          f"evidence in {out}")


@pytest.fixture(scope="module", params=["template", "renamed"])
def site_run(request, tmp_path_factory) -> SiteRun:
    return run_variant(request.param, tmp_path_factory.mktemp(f"site-{request.param}"))


# ----------------------------------------------------------------------------- reading

def participants(summary: dict) -> dict[tuple[str, str], str]:
    """bundle run: (phase, local candidate) -> participant, the owner of its export name
    ``<owner>-<id>`` (run_summary.json's ``export[].key``)."""
    return {(e["phase"], e["candidate"]): e["key"].rsplit("-", 1)[0] for e in summary["export"]}


def bundle_results(run: SiteRun) -> dict[tuple[str, str], tuple[str, dict[str, float]]]:
    """(phase, participant) -> (status, scores) of bundle run."""
    summary = json.loads((run.bundle_run / "run_summary.json").read_text())
    who = participants(summary)
    out = {}
    for r in summary["results"]:
        person = ORGANIZER if r["phase"] == META_PHASE else who[(r["phase"], r["candidate"])]
        out[(r["phase"], person)] = (r["status"], {k: float(v) for k, v in r["scores"].items()})
    return out


def site_results(run: SiteRun) -> dict[tuple[str, str], tuple[str, dict[str, float]]]:
    out = {}
    for phase, subs in run.submissions.items():
        for s in subs:
            if s["parent"] is None:
                key = (phase, s["owner"])
                assert key not in out, f"two top-level submissions of {s['owner']} in {phase}"
                out[key] = (s["status"], {c["column_key"]: float(c["score"]) for c in s["scores"]})
    return out


def winner(rows: list[dict[str, str]]) -> str:
    return rows[0]["participant"]


def site_board(run: SiteRun) -> list[dict[str, str]]:
    assert run.meta["status"] == "Finished", run.meta
    return rs.board(run.meta_files["leaderboard.csv"])


# ----------------------------------------------------------------------------- the tests

def test_the_unpacker_accepts_the_bundle_zip(site_run):
    comp = site_run.snapshot
    assert [p["name"] for p in comp["phases"]] == ["Development", "Final", META_PHASE]
    assert [len(p["tasks"]) for p in comp["phases"]] == [1, 1, 1]
    assert [p["auto_migrate_to_this_phase"] for p in comp["phases"]] == [False, True, False]
    assert comp["phases"][1]["has_been_migrated"] is True


def test_statuses_and_scores_per_phase_and_participant_equal_bundle_run(site_run):
    local, site = bundle_results(site_run), site_results(site_run)
    assert sorted(site) == sorted(local)
    for key in sorted(local):
        (s_status, s_scores), (l_status, l_scores) = site[key], local[key]
        assert s_status == l_status, (key, site[key], local[key])
        assert sorted(s_scores) == sorted(l_scores), (key, s_scores, l_scores)
        for metric in l_scores:  # the site stores Decimal(20, 10)
            assert s_scores[metric] == pytest.approx(l_scores[metric], abs=1e-9), (key, metric)


def test_the_export_holds_the_submissions_bundle_run_feeds_the_meta_phase(site_run):
    summary = json.loads((site_run.bundle_run / "run_summary.json").read_text())
    who = participants(summary)
    fed: dict[str, list[str]] = {}
    for item in summary["export"]:
        if item["exported"]:
            fed.setdefault(item["phase"], []).append(who[(item["phase"], item["candidate"])])
    fed = {phase: sorted(names) for phase, names in fed.items()}
    exported = {}
    for phase, payload in site_run.exports.items():
        (rows,) = payload.values()
        exported[phase] = sorted(key.rsplit("-", 1)[0] for key in rows)
    assert exported == fed


def test_the_final_leaderboard_has_the_order_and_values_of_bundle_run(site_run):
    site = rs.normalized(site_board(site_run))
    local = rs.normalized(rs.board((site_run.bundle_run / "final" / "leaderboard.csv").read_text()))
    assert [r["participant"] for r in site] == [r["participant"] for r in local]
    assert site == local


def test_the_final_leaderboard_equals_bundle_run_column_for_column(site_run):
    """Item 1's second half, and issue 50 item 8: ``bundle run`` feeds its meta phase what
    ``codabench pull`` writes (candidates ``<owner>-<id>``, each submission's time), so the
    leaderboard the organizer publishes with ``codabench submit`` and bundle run's agree
    column for column: every column and value exactly, the ids read as ``<owner>-<number>``
    (the site's ids come from its database sequence, and the order in which it numbers the
    migrated Final copies follows PostgreSQL's row order, which nothing fixes) and the times
    as times (the site's are when its submissions were made, bundle run's when the phase
    opened plus one second per submission)."""
    assert site_run.cli_submit["status"] == "Finished", site_run.cli_submit
    site = rs.board(site_run.cli_submit_files["leaderboard.csv"])
    local = rs.board((site_run.bundle_run / "final" / "leaderboard.csv").read_text())
    rs.same_board(site, local)


def test_codabench_rank_ranks_as_the_sites_meta_phase(site_run):
    ranked = rs.normalized(rs.board((site_run.ranked / "leaderboard.csv").read_text()))
    site = rs.normalized(site_board(site_run))
    assert [r["participant"] for r in ranked] == [r["participant"] for r in site]
    assert ranked == site


def test_one_winner_from_bundle_run_the_sites_meta_phase_and_codabench_rank(site_run):
    winners = {
        "bundle run": winner(rs.board((site_run.bundle_run / "final" / "leaderboard.csv").read_text())),
        "site meta phase": winner(site_board(site_run)),
        "codabench rank": winner(rs.board((site_run.ranked / "leaderboard.csv").read_text())),
    }
    print(f"\n[{site_run.variant}] winners: {winners}")
    assert len(set(winners.values())) == 1, winners
    # the template's tie for first (alice, or zoe in the renamed variant, with carol) goes to
    # the earlier submission: the participant whose development id is the smaller one
    first = "zoe" if site_run.variant == "renamed" else "alice"
    assert set(winners.values()) == {first}, winners


def test_codabench_submit_finishes_with_the_meta_phase_scores(site_run):
    assert site_run.cli_submit["status"] == "Finished", site_run.cli_submit
    assert site_run.cli_submit["id"] != site_run.meta["id"]
    got = {c["column_key"]: float(c["score"]) for c in site_run.cli_submit["scores"]}
    want = {c["column_key"]: float(c["score"]) for c in site_run.meta["scores"]}
    assert got == pytest.approx(want, abs=1e-9)
    # the same pulled tree, ranked on the site and by `codabench rank`: the same leaderboard
    on_site = rs.normalized(rs.board(site_run.cli_submit_files["leaderboard.csv"]))
    assert on_site == rs.normalized(rs.board((site_run.ranked / "leaderboard.csv").read_text()))


def test_codabench_submit_prints_every_score_the_submission_gets(site_run):
    """`codabench submit` prints the scores once the submission is Finished; the worker
    sets Finished before it posts the scores (about 50 ms before, here), so the client
    reads them again until every column the meta program writes is there."""
    (line,) = [x for x in site_run.cli_submit_printed.splitlines() if " Finished: scores " in x]
    printed = dict(item.split("=", 1) for item in line.split(" Finished: scores ", 1)[1].split(", ")
                   if "=" in item)
    final = {c["column_key"]: float(c["score"]) for c in site_run.cli_submit["scores"]}
    assert set(printed) == set(final) == {"n_qualified", "winner_score"}, (line, final)
    assert {k: float(v) for k, v in printed.items()} == pytest.approx(final, rel=1e-5)


# ----------------------------------------------------------------------------- beyond the template
# What a replay of exports cannot show: how the real code treats multi-task phases, the
# other submission rules, and a meta phase that fails. Each scenario is its own competition.

def accounts(names: list[str]) -> dict[str, rs.Api]:
    state, _ = rs.site_up()
    tokens = rs.admin("users", {"users": [{"username": n} for n in names]})
    return {n: rs.Api(state["site"], tokens[n]) for n in names}


def submit_samples(comp: rs.Competition, bundle: Path, phase: str) -> dict[str, list[int]]:
    """Each sample submission by its participant, in manifest order: participant -> ids."""
    ids: dict[str, list[int]] = {}
    for person, sample in rb.manifest_order(bundle):
        ids.setdefault(person, []).append(
            comp.submit(person, phase, rs.zip_folder(bundle / "sample_submissions" / sample)))
    return ids


def local_exports(out: Path) -> dict[str, dict[str, dict[str, float]]]:
    """bundle run: phase -> participant -> the scores of its exported submission(s)."""
    summary = json.loads((out / "run_summary.json").read_text())
    who = participants(summary)
    scores: dict[tuple[str, str], dict[str, float]] = {}
    for r in summary["results"]:
        scores.setdefault((r["phase"], r["candidate"]), {}).update(r["scores"])
    fed: dict[str, dict[str, dict[str, float]]] = {}
    for item in summary["export"]:
        if item["exported"]:
            person = who[(item["phase"], item["candidate"])]
            fed.setdefault(item["phase"], {})[person] = scores[(item["phase"], item["candidate"])]
    return fed


def site_export(comp: rs.Competition, phase: str, titles: dict[str, str]) -> dict[str, dict[str, float]]:
    """The site's results export of ``phase``: participant -> column key -> score."""
    out: dict[str, dict[str, float]] = {}
    for key, row in comp.export(phase).items():
        person = key.rsplit("-", 1)[0]
        assert person not in out, f"{person} has two rows in the {phase} export"
        out[person] = {titles[col.split(")-", 1)[1]]: float(v) for col, v in row.items()
                       if ")-" in col and v not in ("", None)}
    return out


TITLES = {"Accuracy (blobs)": "blobs_accuracy", "MAE (housing)": "housing_mae", "Brier (churn)": "churn_brier",
          "Qualified finalists": "n_qualified", "Winner average rank score": "winner_score"}


def test_multi_task_phases_keep_one_task_per_participant_and_never_migrate(tmp_path):
    """codabench #2211 and #2247 on the real code: with one task per dataset under
    Force_Last, each child's score upload takes its siblings off the leaderboard, so the
    export holds one task's scores per participant; and a multi-task parent is never on the
    leaderboard, so the auto-migration brings nothing into the Final phase. bundle run
    knowingly keeps every task and migrates (README "How faithful"), and `bundle check`
    warns about both."""
    from metascore.bundle import check_bundle, run_bundle

    bundle = rb.copy_template(tmp_path)
    rb.one_task_per_dataset(bundle)
    rb.submissions(bundle, [{"file": "alice__centroid", "participant": "alice"},
                            {"file": "bob__knn", "participant": "bob"}])
    warnings = " ".join(check_bundle(bundle).warnings)
    assert "#2211" in warnings and "#2247" in warnings

    api = accounts([ORGANIZER, "alice", "bob"])
    comp = rs.Competition(api, ORGANIZER, rb.zip_bundle(bundle, tmp_path / "bundle.zip"))
    submit_samples(comp, bundle, "Development")
    subs = comp.wait("Development", 2)
    parents = [s for s in subs if s["parent"] is None]
    children = [s for s in subs if s["parent"] is not None]
    assert [s["status"] for s in parents] == ["Finished", "Finished"]
    assert len(children) == 6 and {s["status"] for s in children} == {"Finished"}
    export = comp.export("Development")
    tasks_with_scores = {}
    for key, row in export.items():
        tasks = {col.split("-", 1)[0] for col, v in row.items() if ")-" in col and v not in ("", None)}
        tasks_with_scores[key.rsplit("-", 1)[0]] = len(tasks)
    assert tasks_with_scores == {"alice": 1, "bob": 1}, export  # #2211

    comp.open_phase("Final")
    comp.migrate()
    snapshot = comp.snapshot()
    final = next(p for p in snapshot["phases"] if p["name"] == "Final")
    assert final["has_been_migrated"] is True
    assert [s for s in snapshot["submissions"] if s["phase"] == "Final"] == []  # #2247

    local = local_exports(Path(run_bundle(bundle, tmp_path / "bundle_run").out))
    assert {p: len(v) for p, v in local["Development"].items()} == {"alice": 3, "bob": 3, BASELINE: 3}
    assert set(local["Final"]) == {"alice", "bob", BASELINE}


@pytest.mark.parametrize("rule", ["Force_Best", "Add"])
def test_the_export_holds_what_bundle_run_predicts_under_the_rule(tmp_path, rule):
    """Force_Best: alice's better first submission stays over her later one; dave's second
    submission crashes on blobs (the primary column, `desc`), and a missing score sorts
    first in PostgreSQL, so it becomes his "best". Add: only what the participant put on
    the leaderboard is exported; the baseline account adds its own."""
    from metascore.bundle import run_bundle

    bundle = rb.copy_template(tmp_path)
    rb.set_rule(bundle, rule)
    if rule == "Force_Best":
        rows = [{"file": "bob__knn", "participant": "alice"}, {"file": "alice__centroid", "participant": "alice"},
                {"file": "dave__crashes", "participant": "dave"}, {"file": "NO_CLASSIFICATION", "participant": "dave"},
                {"file": "carol__linear", "participant": "carol"}]
    else:
        rows = [{"file": "alice__centroid", "participant": "alice", "on_leaderboard": True},
                {"file": "bob__knn", "participant": "alice", "on_leaderboard": False},
                {"file": "carol__linear", "participant": "carol", "on_leaderboard": False}]
    rb.submissions(bundle, rows)
    people = sorted({r["participant"] for r in rows})
    api = accounts([ORGANIZER, BASELINE, *people])
    comp = rs.Competition(api, ORGANIZER, rb.zip_bundle(bundle, tmp_path / "bundle.zip"))
    ids = submit_samples(comp, bundle, "Development")
    ids.setdefault(BASELINE, []).append(comp.submit(
        BASELINE, "Development", rs.zip_folder(bundle / "starting_kit" / "baseline_submission")))
    subs = comp.wait("Development", len(rows) + 1)
    if rule == "Add":
        for person, sub_id in (("alice", ids["alice"][0]), (BASELINE, ids[BASELINE][0])):
            comp.to_leaderboard(person, sub_id)
    site = site_export(comp, "Development", TITLES)
    local = local_exports(Path(run_bundle(bundle, tmp_path / "bundle_run").out))
    if rule == "Add":
        # locally the starting kit has no manifest line to mark: it is not exported
        site.pop(BASELINE, None)
    shown = {s["id"]: (s["owner"], s["status"], {c["column_key"]: c["score"] for c in s["scores"]}) for s in subs}
    assert sorted(site) == sorted(local["Development"]), (site, local["Development"], shown)
    for person, scores in local["Development"].items():
        assert site[person] == pytest.approx(scores, abs=1e-9), (person, site[person], scores, shown)
    if rule == "Force_Best":
        assert site["alice"]["blobs_accuracy"] > 0.9  # her first (knn), not her later centroid
        assert "blobs_accuracy" not in site["dave"]  # his blobs crash: NULL sorts first

    # the migration copies what is on the leaderboard; then the rule applies in Final
    on_board = len(comp.export("Development"))
    comp.open_phase("Final")
    comp.migrate()
    final_subs = comp.wait("Final", on_board)
    final = site_export(comp, "Final", TITLES)
    if rule == "Add":
        final.pop(BASELINE, None)
    shown = {s["id"]: (s["owner"], s["status"]) for s in final_subs}
    local_final = local.get("Final", {})
    if rule == "Add":
        # the migrated copies are new submissions, on no leaderboard until added: the
        # Final export is empty on the site and in bundle run
        assert comp.export("Final") == {} and local_final == {}, (final, local_final, shown)
        assert len(final_subs) == on_board  # they did migrate and run
    assert sorted(final) == sorted(local_final), (final, local_final, shown)
    for person, scores in local_final.items():
        assert final[person] == pytest.approx(scores, abs=1e-9), (person, final[person], scores)


@pytest.mark.parametrize("how", ["crash", "timeout"])
def test_a_failing_meta_phase_on_the_site_and_in_bundle_run(tmp_path, how):
    """A meta-scoring program that exits non-zero: Failed on the site (with no scores) and in
    bundle run. One that runs past the phase's time limit (10 s: it prints, sleeps 25 s
    more, then writes its scores): bundle run fails it, as the platform documents; the
    compute worker at c7dbc756 lets it finish and keeps its scores. Its SIGALRM fires while
    ``_run_container_engine_cmd`` streams the container's logs, the
    ``ExecutionTimeLimitExceeded`` it raises is caught there by ``except Exception`` (an
    empty "There was an error while starting the container and getting the logs: " in the
    worker's log), and the worker then waits for the container, with no timeout. bundle run
    knowingly stays strict, and its reason says what the platform does."""
    from metascore.bundle import run_bundle

    bundle = rb.copy_template(tmp_path)
    rb.failing_meta_program(bundle, how, limit=10, overrun=25)
    api = accounts([ORGANIZER])
    comp = rs.Competition(api, ORGANIZER, rb.zip_bundle(bundle, tmp_path / "bundle.zip"))
    comp.open_phase(META_PHASE)
    sub_id = comp.submit(ORGANIZER, META_PHASE, rb.template_export_zip(comp, META_PHASE), "results.zip")
    (sub,) = comp.wait(META_PHASE, 1, timeout=300)
    details = next(s for s in comp.snapshot()["submissions"] if s["id"] == sub_id)["status_details"]
    logs = rs.logs(api[ORGANIZER], sub_id)
    report = run_bundle(bundle, tmp_path / "bundle_run")
    (meta,) = [r for r in report.results if r.phase == META_PHASE]
    assert meta.status == "Failed" and not meta.scores, meta
    assert sub["id"] == sub_id
    if how == "crash":
        assert sub["status"] == "Failed" and sub["scores"] == [], sub
        assert "the meta-scoring program failed on purpose" in logs.get("scoring_stderr", ""), (details, logs)
        return
    assert meta.status_details == "Execution Time Limit exceeded. Limit was 10 seconds", meta
    assert "On Codabench the worker does not stop a program whose logs it is streaming" in meta.reason
    # the site: the program ran its 35 s to the end, and its scores were kept
    assert sub["status"] == "Finished", (sub, details)
    assert {c["column_key"]: float(c["score"]) for c in sub["scores"]} == {"n_qualified": 1.0, "winner_score": 0.0}
    assert "wrote scores.json" in logs.get("scoring_stdout", ""), logs
    assert "Execution Time Limit exceeded" not in f"{details} {logs.get('scoring_stderr', '')}", (details, logs)
