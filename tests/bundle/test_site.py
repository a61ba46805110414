"""The site side of the mock runner: phases, migration, score keys, run folders, dataset keys,
v1 mapping and exit codes (issues 9 and 15), on fixtures with the traits of real bundles."""

from __future__ import annotations

import csv
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest
import yaml

from bundle_backends import BACKENDS, options, require
from engine import build_legacy_image
from metascore.bundle.runner import format_report, run_bundle
from metascore.bundle.schema.load import check_schema, load_competition
from metascore.bundle.site.submissions import collect_submissions, phase_named_by, slug
from metascore.cli import main
from metascore.errors import InputError
from repo_paths import TESTS

BUNDLES = TESTS / "data" / "bundles"
DATASET_KEY = "8a1c5e2b-4d6f-4a8b-9c0d-1e2f3a4b5c6d"


def scores(report):
    return {(r.phase, r.candidate): r.scores for r in report.results}


# ------------------------------------------------------------------ phases and migration
@pytest.mark.parametrize("backend", BACKENDS)
def test_submissions_run_in_their_phase_and_migrate(tmp_path, backend):
    report = run_bundle(BUNDLES / "phases", tmp_path / "out", **options(backend))
    # each submission runs in the phase it was made for; auto_migrate_to_this_phase brings
    # the development phase's leaderboard submissions into Final, code and results alike,
    # as Codabench's apply_phase_migration does (issue 41): the results folder is scored
    # against Final's reference data, and the scoring program decides (here: 3 of 4 right)
    assert scores(report) == {
        ("Development Phase", "dev_results"): {"accuracy": 1.0},
        ("Development Phase", "coder"): {"accuracy": 0.75},
        ("Final Phase", "dev_results"): {"accuracy": 0.75},
        ("Final Phase", "final_results"): {"accuracy": 1.0},
        ("Final Phase", "coder"): {"accuracy": 0.5},
    }
    assert not any("not migrated" in w for w in report.warnings)
    rows = list(csv.DictReader((tmp_path / "out/outputs/submissions.csv").open()))
    # the tree names them as the site's export does, <owner>-<id>, from one sequence of ids
    assert sorted((r["phase"], r["candidate"].rsplit("-", 1)[0], r["participant"]) for r in rows) == [
        ("Development Phase", "carol", "carol"), ("Development Phase", "dev_results", "dev_results"),
        ("Final Phase", "carol", "carol"), ("Final Phase", "dev_results", "dev_results"),
        ("Final Phase", "final_results", "final_results")]
    keys = {(e["phase"], e["candidate"]): e["key"] for e in report.export}
    # development: in submission order (file times here); the migrated copies are numbered
    # when the Final phase starts, in the order of their ids, before the submissions made to it
    dev = sorted((keys[("Development Phase", c)] for c in ("dev_results", "coder")), key=lambda k: k[-1])
    assert set(dev) in ({"dev_results-1", "carol-2"}, {"dev_results-2", "carol-1"})
    moved = [keys[("Final Phase", "dev_results" if k.startswith("dev") else "coder")] for k in dev]
    assert [k.rsplit("-", 1)[1] for k in moved] == ["3", "4"]
    assert keys[("Final Phase", "final_results")] == "final_results-5"
    # nested, string and list values of keys that are not columns are ignored, with a note
    (run,) = [r for r in report.results if r.candidate == "final_results"]
    assert "'details', 'note', 'labels' match no leaderboard column" in run.warnings[0]
    assert (Path(run.run_dir) / "scoring/output/detailed_results.html").is_file()


def test_without_migration_a_phase_gets_only_its_own_submissions(tmp_path):
    bundle = tmp_path / "b"
    shutil.copytree(BUNDLES / "phases", bundle)
    data = yaml.safe_load((bundle / "competition.yaml").read_text())
    del data["phases"][1]["auto_migrate_to_this_phase"]
    (bundle / "competition.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    report = run_bundle(bundle, tmp_path / "out")
    assert sorted(scores(report)) == [("Development Phase", "coder"), ("Development Phase", "dev_results"),
                                      ("Final Phase", "final_results")]


def test_failed_submission_is_not_migrated(tmp_path):
    bundle = tmp_path / "b"
    shutil.copytree(BUNDLES / "phases", bundle)
    (bundle / "dev_input" / "x.txt").write_text("2\nnot-a-number\n")
    report = run_bundle(bundle, tmp_path / "out")
    assert [(r.phase, r.candidate, r.status) for r in report.results if r.candidate == "coder"] == [
        ("Development Phase", "coder", "Failed")]


def test_unplaced_result_submissions_run_in_the_first_phase_only(tmp_path):
    subs = tmp_path / "subs"
    shutil.copytree(BUNDLES / "phases/sample_submissions/Final Phase/final_results", subs / "my_results")
    shutil.copytree(BUNDLES / "phases/sample_submissions/coder", subs / "coder")
    report = run_bundle(BUNDLES / "phases", tmp_path / "out", submissions=subs)
    # without a phase, both are made to the first phase and migrate to Final (the results
    # folder too, as on Codabench: Final's scoring program scores it against its own truth)
    assert sorted(scores(report)) == [("Development Phase", "coder"), ("Development Phase", "my_results"),
                                      ("Final Phase", "coder"), ("Final Phase", "my_results")]
    assert any("my_results have no phase: made to 'Development Phase', the first phase, and no other" in w for w in report.warnings)


def test_result_submissions_run_in_the_phase_their_name_names(tmp_path):
    """As Codabench's public wheat_seeds results bundle ships them (``dev-submission.zip``,
    ``final-submission.zip`` in the starting kit, no manifest): each runs in its phase."""
    subs = tmp_path / "subs"
    final = BUNDLES / "phases/sample_submissions/Final Phase/final_results"
    shutil.copytree(final, subs / "final-submission")
    shutil.copytree(BUNDLES / "phases/sample_submissions/coder", subs / "coder")
    report = run_bundle(BUNDLES / "phases", tmp_path / "out", submissions=subs)
    assert sorted(scores(report)) == [("Development Phase", "coder"), ("Final Phase", "coder"),
                                      ("Final Phase", "final-submission")]
    assert scores(report)[("Final Phase", "final-submission")] == {"accuracy": 1.0}
    assert any("run in the phase their name names: final-submission in 'Final Phase'" in w
               for w in report.warnings)
    assert not any("have no phase" in w for w in report.warnings)


@pytest.mark.parametrize("name, phase", [
    ("dev-submission", "Development Phase"), ("final-submission", "Testing Phase"),
    ("DEV_results", "Development Phase"), ("test_preds", "Testing Phase"),
    ("testing-phase-results", "Testing Phase"), ("private", "Testing Phase"),
    ("feedback", "Development Phase"), ("my_model", None), ("dev_and_final", None),
    ("phase-submission", None), ("de", None),
])
def test_phase_named_by(name, phase):
    assert phase_named_by(name, ["Development Phase", "Testing Phase"]) == phase


def test_phase_named_by_prefers_a_phase_that_its_name_names():
    phases = ["Feedback", "Final test", "Post-challenge"]
    assert phase_named_by("final-submission", phases) == "Final test"
    assert phase_named_by("post_results", phases) == "Post-challenge"
    assert phase_named_by("test", phases) == "Final test"
    assert phase_named_by("results", ["Only phase"]) is None


def test_phase_column_and_zipped_noise(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    with zipfile.ZipFile(subs / "final_results.zip", "w") as zf:  # as a Mac's Finder zips it
        zf.write(BUNDLES / "phases/sample_submissions/Final Phase/final_results/predictions.txt",
                 "predictions.txt")
        zf.writestr("__MACOSX/._predictions.txt", b"\x00\x05\x16\x07")
        zf.writestr(".DS_Store", b"\x00\x00\x00\x01Bud1")
    (subs / "submissions.csv").write_text("file,participant,phase\nfinal_results.zip,dan,Final Phase\n")
    report = run_bundle(BUNDLES / "phases", tmp_path / "out", submissions=subs)
    assert scores(report) == {("Final Phase", "final_results"): {"accuracy": 1.0}}
    sandbox = Path(report.results[0].run_dir) / "scoring/input/res"
    assert sorted(p.name for p in sandbox.iterdir()) == ["metadata", "predictions.txt"]


def test_unknown_phase_in_manifest_names_the_phases(tmp_path):
    subs = tmp_path / "subs"
    shutil.copytree(BUNDLES / "phases/sample_submissions/coder", subs / "coder")
    (subs / "submissions.csv").write_text("file,phase\ncoder,Final\n")
    comp = load_competition(BUNDLES / "phases")
    with pytest.raises(InputError, match=r"phase 'Final', which the competition does not have \(did you "
                                         r"mean 'Final Phase'\?\)"):
        collect_submissions(comp, subs, cache=tmp_path / "cache")


# ------------------------------------------------------------------ run folders
def test_run_folders_are_slugs_and_names_stay_in_the_summary(tmp_path):
    run_bundle(BUNDLES / "phases", tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out/runs").iterdir()) == ["Development_Phase", "Final_Phase"]
    assert (tmp_path / "out/runs/Final_Phase/coder/Final_Task/scoring/output/scores.json").is_file()
    summary = json.loads((tmp_path / "out/run_summary.json").read_text())
    run = summary["results"][-1]
    assert (run["phase"], run["task"]) == ("Final Phase", "Final Task")
    assert run["run_dir"].endswith("runs/Final_Phase/coder/Final_Task")
    # the outputs tree keeps the phase and task names (they are the judges' names) and
    # names each submission as the export does
    carol = next(e["key"] for e in summary["export"] if e["phase"] == "Final Phase" and e["candidate"] == "coder")
    assert (tmp_path / f"out/outputs/Final Phase/{carol}/Final Task/scores.json").is_file()
    assert slug("a/b c..d") == "a_b_c..d" and slug(".x y") == "_.x_y" and slug("  ") == "_"


# ------------------------------------------------------------------ v1: parallel phases, metadata, dataset keys
def test_v1_parallel_parent_dropped_elapsed_time_and_dataset_key(tmp_path):
    report = run_bundle(BUNDLES / "v1_parallel", tmp_path / "out")
    assert [(r.phase, r.task) for r in report.results] == [("Track A", "Track A Task"),
                                                           ("Track B", "Track B Task")]
    track_a, track_b = report.results
    # the ingestion ran the code: elapsedTime is its time, as the worker writes it
    assert track_a.status == "Finished", track_a.reason
    assert track_a.scores["correct"] == 0.75 and track_a.scores["Duration"] > 0
    meta = yaml.safe_load((Path(track_a.run_dir) / "prediction/output/metadata").read_text())
    assert meta["exitCode"] is None and meta["elapsedTime"] == meta["ingestionElapsedTime"] > 0
    # reference data given by dataset key: the job fails naming it, and says how to supply it
    assert track_b.status == "Failed"
    assert f"dataset key '{DATASET_KEY}'" in track_b.reason and f"--data {DATASET_KEY}=PATH" in track_b.reason
    supplied = run_bundle(BUNDLES / "v1_parallel", tmp_path / "out2",
                          data={DATASET_KEY: BUNDLES / "v1_parallel/reference_data"})
    assert [r.status for r in supplied.results] == ["Finished", "Finished"]


def test_v1_check_image_task_names_and_datasets(tmp_path):
    report = check_schema(BUNDLES / "v1_parallel")
    assert report.ok, report.errors
    assert [t.name for t in report.competition.tasks.values()] == ["Track A Task", "Track B Task"]
    assert [p.name for p in report.competition.phases] == ["Track A", "Track B"]
    assert not any("datasets" in w and "offline" in w for w in report.warnings)
    assert any("datasets: links shown on CodaLab's data page" in w for w in report.warnings)
    root = tmp_path / "v1"
    shutil.copytree(BUNDLES / "v1_parallel", root)
    data = yaml.safe_load((root / "competition.yaml").read_text())
    del data["image"]
    (root / "competition.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    assert any("image: this key is required" in e for e in check_schema(root).errors)


def test_v1_auto_migration_maps_to_migration(tmp_path):
    root = tmp_path / "v1"
    shutil.copytree(BUNDLES / "v1_parallel", root)
    data = yaml.safe_load((root / "competition.yaml").read_text())
    data["phases"][3]["auto_migration"] = True
    (root / "competition.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    assert [p.auto_migrate for p in load_competition(root).phases] == [False, True]


# ------------------------------------------------------------------ exit codes
def test_bundle_run_exit_codes(tmp_path, capsys):
    # a phase whose every run failed: exit 1, naming the phase
    assert main(["bundle", "run", str(BUNDLES / "v1_parallel"), "--out", str(tmp_path / "a"), "-q"]) == 1
    assert "every run of phase(s) 'Track B' failed" in capsys.readouterr().err
    ref = BUNDLES / "v1_parallel/reference_data"
    assert main(["bundle", "run", str(BUNDLES / "v1_parallel"), "--out", str(tmp_path / "b"), "-q",
                 "--data", f"{DATASET_KEY}={ref}"]) == 0
    # some runs failed, none of the phases entirely: 0, or 1 with --strict
    bundle = tmp_path / "bundle"
    shutil.copytree(BUNDLES / "phases", bundle)
    (bundle / "sample_submissions/coder/predict.py").write_text("raise SystemExit('broken')\n")
    assert main(["bundle", "run", str(bundle), "--out", str(tmp_path / "c"), "-q"]) == 0
    assert main(["bundle", "run", str(bundle), "--out", str(tmp_path / "d"), "-q", "--strict"]) == 1
    assert "1 of 4 runs failed (--strict)" in capsys.readouterr().err  # dev_results migrated too
    with pytest.raises(SystemExit) as exc:
        main(["bundle", "run", str(bundle), "--data", "no-equals-sign"])
    assert exc.value.code == 2


# ------------------------------------------------------------------ rank an outputs tree by phase
def test_rank_outputs_tree_takes_judges_from_the_chosen_phase(tmp_path, capsys):
    run_bundle(BUNDLES / "phases", tmp_path / "out")
    tree = tmp_path / "out" / "outputs"
    assert main(["rank", str(tree), "--phase", "Final Phase", "-m", "mean", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [(r["candidate"].rsplit("-", 1)[0], r["score"]) for r in rows] == [
        ("final_results", 1.0), ("dev_results", 0.75), ("carol", 0.5)]


# ------------------------------------------------------------------ realistic fixtures on the legacy stand-in image
def test_scoring_program_with_scikit_learn(tmp_path):
    # the Docker backend on the legacy stand-in: test_local_and_legacy_image_give_identical_scores
    report = run_bundle(BUNDLES / "sklearn_scoring", tmp_path / "out")
    assert scores(report) == {("Development", "rules"): {"f1": 0.666667, "accuracy": 0.666667},
                              ("Development", "tree_model"): {"f1": 1.0, "accuracy": 1.0}}
    assert "'confusion' match no leaderboard column" in report.results[0].warnings[0]


@pytest.mark.engine
def test_local_and_legacy_image_give_identical_scores(tmp_path):
    require("docker")
    image = build_legacy_image()
    data = {DATASET_KEY: BUNDLES / "v1_parallel/reference_data"}
    for name in ("phases", "v1_parallel", "sklearn_scoring"):
        runs = [run_bundle(BUNDLES / name, tmp_path / f"{name}-{backend}", backend=backend, data=data,
                           image=image if backend == "docker" else None) for backend in ("local", "docker")]
        for report in runs:
            assert all(r.finished for r in report.results), [(r.candidate, r.reason) for r in report.results]
        local, docker = (scores(r) for r in runs)
        for key in local:  # durations differ; every other score is the same
            local[key].pop("Duration", None)
            docker[key].pop("Duration", None)
        assert local == docker, name


def test_migration_counts_what_runs(tmp_path):
    """Issue 24: a solution bound to the development task is held by the development
    leaderboard but has no task in the final phase: it is not counted as migrated."""
    bundle = tmp_path / "b"
    shutil.copytree(BUNDLES / "phases", bundle)
    data = yaml.safe_load((bundle / "competition.yaml").read_text())
    data["solutions"] = [{"index": 0, "tasks": [0], "path": "sample_submissions/coder/"}]
    (bundle / "competition.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    lines: list[str] = []
    report = run_bundle(bundle, tmp_path / "out", log=lines.append)
    assert sorted((r.phase, r.candidate) for r in report.results if r.phase == "Final Phase") == [
        ("Final Phase", "coder"), ("Final Phase", "dev_results"), ("Final Phase", "final_results")]
    assert ("[*] Final Phase: 2 submission(s) migrated from the previous phase; not migrated: "
            "solution (its task(s) 0 are not in this phase)") in lines
    # solutions run as the participant "organizer" (named organizer-<id> in the tree)
    rows = list(csv.DictReader((tmp_path / "out/outputs/submissions.csv").open()))
    assert ("Development Phase", "organizer", "organizer") in [
        (r["phase"], r["candidate"].rsplit("-", 1)[0], r["participant"]) for r in rows]


# ------------------------------------------------------------------ a meta phase that has nothing, or no baseline
PARITY = {"right": "'even' if x % 2 == 0 else 'odd'", "even": "'even'", "odd": "'odd'",
          "broken": "1 / 0", "final_breaks": "('even' if x % 2 == 0 else 'odd') if x < 6 else 1 / 0"}


def _code(folder, mode):
    folder.mkdir(parents=True)
    (folder / "metadata.yaml").write_text("command: python3 predict.py /app/input_data /app/output\n")
    (folder / "predict.py").write_text(
        "import os, sys\n"
        "xs = [int(v) for v in open(os.path.join(sys.argv[1], 'x.txt')).read().split()]\n"
        f"open(os.path.join(sys.argv[2], 'predictions.txt'), 'w').write("
        f"'\\n'.join(str({PARITY[mode]}) for x in xs) + '\\n')\n")


def meta_bundle(tmp_path, config, *, rule="Force_Last", kit="odd", one_phase=False):
    """The 'phases' fixture (Development, Final with auto-migration) plus a starting-kit
    baseline, a 'Final ranking' meta phase whose metascore.yaml is ``config``, and three
    code submissions (alice right, bob always 'even', carol always 'odd'); returns the
    bundle and the submissions folder. ``one_phase``: without the Final phase."""
    bundle = tmp_path / "bundle"
    shutil.copytree(BUNDLES / "phases", bundle)
    shutil.rmtree(bundle / "sample_submissions")
    _code(bundle / "starting_kit" / "baseline_submission", kit)
    (bundle / "meta_ref").mkdir()
    (bundle / "meta_ref" / "metascore.yaml").write_text(yaml.safe_dump(config))
    data = yaml.safe_load((bundle / "competition.yaml").read_text())
    data["tasks"].append({"index": 2, "name": "meta", "reference_data": "meta_ref/",
                          "scoring_program": "meta_scoring_program/"})
    data["phases"][0]["starting_kit"] = "starting_kit/"
    data["phases"][1]["end"] = "2026-02-28"
    if one_phase:
        data["phases"] = data["phases"][:1]
    data["phases"].append({"index": 2, "name": "Final ranking", "start": "2026-03-01",
                           "execution_time_limit": 120, "tasks": [2]})
    board = data["leaderboards"][0]
    board["submission_rule"] = rule
    board["columns"].append({"title": "Qualified", "key": "n_qualified", "index": 1, "sorting": "desc"})
    (bundle / "competition.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    subs = tmp_path / "subs"
    for name, mode in (("alice__right", "right"), ("bob__even", "even"), ("carol__odd", "odd")):
        _code(subs / name, mode)
    return bundle, subs


META = {"phases": {"development": "Development Phase", "final": "Final Phase"},
        "baselines": ["baseline"], "analysis": {"bootstrap": 0, "stability": False},
        "output": {"scores": {"n_qualified": "n_qualified"}}}


def test_a_failed_baseline_is_named_by_the_meta_phase(tmp_path):
    """Issue 24: the baseline's run failed; the meta phase says so and why, instead of
    "baseline ... is neither a candidate nor a participant"."""
    bundle, subs = meta_bundle(tmp_path, META, kit="broken")
    report = run_bundle(bundle, tmp_path / "out", submissions=subs)
    assert any(w.startswith("phase 'Development Phase': baseline 'baseline_submission' (participant "
                            "'baseline') failed (Failed (program_rc=1): prediction step: the submission "
                            "exited with code 1; last line of its stderr: ZeroDivisionError")
               for w in report.warnings)
    meta = report.meta
    assert meta.status == "Failed"
    # the meta phase names it as the export would: baseline-<id>
    assert re.search(r"baseline 'baseline-\d+' has no score in phase 'Development Phase' \(every run "
                     r"failed: task 'Development Task': Failed \(program_rc=1\): prediction step: the "
                     r"submission exited with code 1", meta.reason)
    assert "neither a candidate nor a participant" not in meta.reason


def test_an_empty_export_says_so_and_names_the_rule(tmp_path):
    """Issue 24: under Add nothing reaches the meta phase; it used to fail with "cannot tell
    the format of .../codabench.json"."""
    bundle, subs = meta_bundle(tmp_path, META, rule="Add")
    report = run_bundle(bundle, tmp_path / "out", submissions=subs)
    meta = report.meta
    assert meta.status == "Failed" and meta.status_details == "the results export is empty"
    # one short paragraph: the phases, the cause, the fix once (issue 41, item 8)
    assert meta.reason == (
        "the results export is empty: no submission of any phase reaches it (phases "
        "'Development Phase', 'Final Phase'): phase 'Development Phase': the finished submissions "
        "are on no leaderboard under the rule 'Add', which puts one there only by a click; phase "
        "'Final Phase': nobody submitted there and nothing migrated there. A submission reaches "
        "the results export when a leaderboard holds it: `metascore bundle add-meta BUNDLE "
        "--submission-rule Force_Last`, mark submissions on_leaderboard in the submissions "
        "manifest, or run with --feed all.")
    assert len(meta.reason) < 600 and meta.reason.count("Force_Last") == 1
    text = format_report(report)
    assert f"`metascore bundle add-meta {bundle} --submission-rule Force_Last`" in text  # named
    assert "cannot tell the format" not in text and "logs: \n" not in text
    # the same reason for four submissions: said once, naming them
    assert text.count("nothing reaches the leaderboard without a click, and the submissions") == 1
    assert "    not baseline_submission, alice__right, bob__even, carol__odd: Add: nothing" in text
    assert main(["bundle", "run", str(bundle), "--out", str(tmp_path / "o2"), "-q",
                 "--submissions", str(subs)]) == 1
    # the meta-scoring program, given that tree, says the same in its own words
    from metascore.config import parse_config
    from metascore.readers.configured import load_scores

    with pytest.raises(InputError, match=r"its submissions.csv lists no submission, so the results "
                       r"export that fed it was empty .*submission_rule 'Add' nothing reaches it"):
        load_scores(parse_config(META).input, tmp_path / "out" / "outputs")


def test_one_phase_competition_filters_within_the_phase(tmp_path):
    """Issue 24: phases.final: null used to skip the beat-the-baseline filter silently."""
    config = {**META, "phases": {"development": "Development Phase", "final": None}}
    bundle, subs = meta_bundle(tmp_path, config, one_phase=True)
    report = run_bundle(bundle, tmp_path / "out", submissions=subs)
    assert report.meta.status == "Finished", report.meta.reason
    rows = {r["participant"]: r for r in csv.DictReader(report.leaderboard.open())}
    # dev accuracies: alice 0.75, bob 0.75, carol 0.25, the baseline ('odd') 0.25
    assert (rows["alice"]["qualified"], rows["bob"]["qualified"]) == ("true", "true")
    assert rows["carol"]["qualified"] == "false" and rows["carol"]["position"] == ""
    assert re.search(r"ties with baseline 'baseline-\d+'", rows["carol"]["reason"])
    assert report.meta.scores == {"n_qualified": 2.0}


def test_a_finalist_whose_final_run_failed_is_on_the_final_leaderboard(tmp_path):
    """Issue 24: a participant that qualifies but whose every final run failed used to vanish
    from the final leaderboard; it is ranked last (missing: worst), with the reason."""
    bundle, subs = meta_bundle(tmp_path, META)
    _code(subs / "dan__final_breaks", "final_breaks")
    report = run_bundle(bundle, tmp_path / "out", submissions=subs, feed="all")
    assert report.meta.status == "Finished", report.meta.reason
    rows = list(csv.DictReader(report.leaderboard.open()))
    ranked = [r["participant"] for r in rows if r["position"]]
    assert ranked[-1] == "dan" and rows[len(ranked) - 1]["qualified"] == "true"
    dan = {(e["phase"], e["candidate"]): e["key"] for e in report.export}[("Final Phase", "dan__final_breaks")]
    board = json.loads((report.leaderboard.parent / "leaderboard.json").read_text())
    assert any(m.startswith(f"phase 'Final Phase': candidate '{dan}' has no score on any "
                            "judge (every run failed: task 'Final Task': Failed (program_rc=1): "
                            "prediction step: the submission exited with code 1; last line of its "
                            "stderr: ZeroDivisionError") for m in board["messages"])
    page = (report.detailed_results).read_text()
    assert dan in page


def test_under_add_the_migrated_submissions_are_not_exported(tmp_path):
    """What the real Codabench did (tests/real_site/test_real_site.py, rule Add): the submissions
    marked on the Development leaderboard migrate into Final as new submissions that no
    leaderboard holds, so the Final export is empty; the meta phase gets Development's."""
    bundle, subs = meta_bundle(tmp_path, META, rule="Add")
    (subs / "submissions.yaml").write_text(yaml.safe_dump([
        {"file": "alice__right", "participant": "alice", "on_leaderboard": True},
        {"file": "bob__even", "participant": "bob", "on_leaderboard": True},
        {"file": "carol__odd", "participant": "carol"}]))
    report = run_bundle(bundle, tmp_path / "out", submissions=subs)
    ran = {(r.phase, r.candidate) for r in report.results if r.finished}
    assert {("Final Phase", "alice__right"), ("Final Phase", "bob__even")} <= ran  # they migrated
    exported = {(e["phase"], e["candidate"]) for e in report.export if e["exported"]}
    assert exported == {("Development Phase", "alice__right"), ("Development Phase", "bob__even")}
    final = {e["candidate"]: e for e in report.export if e["phase"] == "Final Phase"}
    assert final["alice__right"]["migrated"] and "migrated into this phase" in final["alice__right"]["reason"]
    rows = list(csv.DictReader((tmp_path / "out" / "outputs" / "submissions.csv").open()))
    assert {r["phase"] for r in rows} == {"Development Phase"}
    assert any(w.startswith("no submission of phase 'Final Phase' reaches the meta phase: the "
                            "finished submissions are on no leaderboard under the rule 'Add', which "
                            "puts one there only by a click (a submission migrated into phase "
                            "'Final Phase' is a new one there, which nobody added)")
               for w in report.warnings), report.warnings
