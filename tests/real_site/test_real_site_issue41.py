"""Issue 41 on the real Codabench: result submissions migrate, and a v1 file and its v2 form
are the same competition.

Opt-in like ``tests/real_site/test_real_site.py`` (``METASCORE_SITE=1``, marker ``site``). The
bundle is ``tests/data/bundles/v1_five_phases`` (built the way SemEval-2020 Task 4's is), with
what the site needs: the site's image stand-in (py312), registrations approved at once, phase
dates around today, and Evaluation Subtask A auto-migrating too, so that Practice's results
(trial ids) are migrated where they do not fit.

- **Migration** (item 1): alice, bob and carol submit their Practice results and put them on
  the leaderboard (the rule is Add); time passes and the site migrates them into Evaluation
  Subtask A (``do_phase_migrations``), where the scoring program fails them; then the four
  participants submit to Evaluation Subtask C, and the site migrates those into
  Post-Evaluation, which reuses the same reference data. Every submission's status and
  scores on the site, migrated copies included, are ``bundle run``'s.
- **v1 and its v2 form** (item 6): the v1 file as it is and the v2 file ``bundle add-meta
  --submission-rule Force_Last`` writes of it (without a meta phase) are uploaded; what the
  site stored of each (``site.py admin settings``: every field of the competition, its pages,
  phases, tasks with their datasets' MD5, the leaderboard and its columns) is the same, key
  by key, but for the leaderboard's submission rule.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
import yaml

import real_site as rs
import real_site_bundles as rb
from repo_paths import TESTS

pytestmark = rb.SITE_MARKS

FIVE = TESTS / "data" / "bundles" / "v1_five_phases"
ORGANIZER = "organizer"
PEOPLE = ("alice", "bob", "carol", "dave")
PRACTICE, EVAL_A, EVAL_B, EVAL_C, POST = ("Practice", "Evaluation Subtask A", "Evaluation Subtask B",
                                          "Evaluation Subtask C", "Post-Evaluation")
#: each phase's start, in days from today (Practice opened yesterday; the tests open the others)
STARTS = (-1, 10, 20, 30, 40)


def site_copy(dest: Path) -> Path:
    bundle = Path(shutil.copytree(FIVE, dest))
    path = bundle / "competition.yaml"
    data = yaml.safe_load(path.read_text())
    data["competition_docker_image"] = "codalab/codalab-legacy:py312"  # the site's stand-in
    data["has_registration"] = False
    data["phases"][2]["auto_migration"] = True  # Practice -> Evaluation Subtask A: does not fit
    today = dt.datetime.now(dt.timezone.utc).date()
    for number, days in zip(sorted(data["phases"]), STARTS):
        data["phases"][number]["start_date"] = today + dt.timedelta(days=days)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    for phase in (EVAL_A, EVAL_B):  # only what migration brings there
        shutil.rmtree(bundle / "sample_submissions" / phase)
    return bundle


def sample(bundle: Path, phase: str, person: str) -> bytes:
    folder = bundle / "sample_submissions" / phase
    (row,) = [r for r in yaml.safe_load((folder / "submissions.yaml").read_text()) if r["participant"] == person]
    return rs.zip_folder(folder / row["file"])


def _scores(scores: dict) -> dict[str, float]:
    return {k: round(float(v), 4) for k, v in scores.items()}


@pytest.fixture(scope="module")
def migration(tmp_path_factory):
    """(the site's submissions, ``bundle run``'s), each {(phase, participant): (status, scores)}."""
    from metascore.bundle import run_bundle

    tmp = tmp_path_factory.mktemp("migration")
    t = rs.Stopwatch()
    bundle = site_copy(tmp / "bundle")
    report = run_bundle(bundle, tmp / "local")
    owners = {(e["phase"], e["candidate"]): e["key"].rsplit("-", 1)[0] for e in report.export}
    local = {(r.phase, owners[(r.phase, r.candidate)]): (r.status, _scores(r.scores))
             for r in report.results if owners[(r.phase, r.candidate)] != "baseline"}
    zipped = rb.zip_bundle(bundle, tmp / "bundle.zip")
    t.lap("bundle run + bundle zip")

    state, _ = rs.site_up()
    tokens = rs.admin("users", {"users": [{"username": n} for n in (ORGANIZER, *PEOPLE)]})
    apis = {n: rs.Api(state["site"], tokens[n]) for n in tokens}
    comp = rs.Competition(apis, ORGANIZER, zipped)
    t.lap("upload + publish + register")

    def submit_all(phase: str, people: tuple[str, ...]) -> None:
        ids = {p: comp.submit(p, phase, sample(bundle, phase, p)) for p in people}
        comp.wait(phase, len(people))
        for person, sub_id in ids.items():  # the rule is Add: each puts theirs on the leaderboard
            comp.to_leaderboard(person, sub_id)

    submit_all(PRACTICE, PEOPLE[:3])
    t.lap("Practice: 3 submissions")
    comp.open_phase(EVAL_A)
    comp.migrate()
    comp.wait(EVAL_A, 3)
    t.lap("Evaluation Subtask A: 3 migrated")
    comp.open_phase(EVAL_B)
    comp.open_phase(EVAL_C)
    submit_all(EVAL_C, PEOPLE)
    t.lap("Evaluation Subtask C: 4 submissions")
    comp.open_phase(POST)
    comp.migrate()
    comp.wait(POST, 4)
    t.lap("Post-Evaluation: 4 migrated")
    snapshot = comp.snapshot()
    site = {(s["phase"], s["owner"]): (s["status"], _scores(s["scores"])) for s in snapshot["submissions"]
            if s["parent"] is None}
    moved = {(s["phase"], s["owner"]) for s in snapshot["submissions"] if s["created_by_migration"]}
    print(f"\n[issue 41 migration] competition {comp.id}; timings (s): {json.dumps(t.times)}")
    return site, local, moved


def test_the_site_migrates_result_submissions_into_the_next_phase(migration):
    _, _, moved = migration
    assert moved == {(EVAL_A, p) for p in PEOPLE[:3]} | {(POST, p) for p in PEOPLE}


def test_bundle_run_gives_the_sites_statuses_and_scores(migration):
    site, local, _ = migration
    assert site == local
    # Practice's answers do not fit Evaluation Subtask A's reference; C's fit Post-Evaluation's
    assert {site[(EVAL_A, p)][0] for p in PEOPLE[:3]} == {"Failed"}
    assert all(site[(POST, p)] == site[(EVAL_C, p)] and site[(POST, p)][0] == "Finished" for p in PEOPLE)


# ----------------------------------------------------------------------------- item 6
def _flat(value, path: str = "") -> dict[str, object]:
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _flat(item, f"{path}.{key}" if path else key).items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in _flat(item, f"{path}[{i}]").items()}
    return {path: value}


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """What the site stored of the v1 file and of its v2 form, field by field."""
    from metascore.bundle.schema.v1_to_v2 import v1_to_v2

    tmp = tmp_path_factory.mktemp("forms")
    v1 = Path(shutil.copytree(FIVE, tmp / "v1"))
    v2 = Path(shutil.copytree(FIVE, tmp / "v2"))
    text, computed = v1_to_v2(yaml.safe_load((v1 / "competition.yaml").read_text()), submission_rule="Force_Last")
    assert computed == []
    (v2 / "competition.yaml").write_text(text)
    state, _ = rs.site_up()
    org = rs.Api(state["site"], rs.admin("users", {"users": [{"username": ORGANIZER}]})[ORGANIZER])
    out = {}
    for name, folder in (("v1", v1), ("v2", v2)):
        cid, _ = rs.upload_bundle(org, rb.zip_bundle(folder, tmp / f"{name}.zip"))
        out[name] = rs.admin("settings", {"competition": cid})
    return out


def test_codabench_stores_the_v1_file_and_its_v2_form_alike_but_the_rule(stored):
    v1, v2 = (_flat(stored[k]) for k in ("v1", "v2"))
    assert set(v1) == set(v2)
    differ = {k: (v1[k], v2[k]) for k in v1 if v1[k] != v2[k]}
    assert differ == {"leaderboards[0].submission_rule": ("Add", "Force_Last")}
    # what it stored is the bundle's: five phases of one task each, the three columns
    assert [p["name"] for p in stored["v1"]["phases"]] == [PRACTICE, EVAL_A, EVAL_B, EVAL_C, POST]
    assert [c["key"] for c in stored["v1"]["leaderboards"][0]["columns"]] == ["A_Accuracy", "B_Accuracy", "C_BLEU"]
