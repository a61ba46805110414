"""The runner feeds the meta phase what the site's results export would hold: the
leaderboard's submission_rule per phase (one run per rule), or everything with feed="all".

alice submits three times (v1 scores 1.0, v2 scores 0.5, v3 fails: wrong number of
predictions); bob once (0.75). The manifest marks alice's v1 and v3 as put on the
leaderboard by hand (only read under Add)."""

from __future__ import annotations

import csv
import shutil

import pytest
import yaml

from metascore.bundle.runner import format_report, run_bundle
from metascore.cli import main
from repo_paths import ROOT, TESTS

BUNDLES = TESTS / "data" / "bundles"
PREDICTIONS = {"alice__v1": "1 0 1 1", "alice__v2": "1 1 1 0", "alice__v3": "1 0", "bob__v1": "1 1 1 1"}
MANIFEST = """\
- {file: alice__v1, submitted_at: "2026-02-01T10:00:00+00:00", on_leaderboard: true}
- {file: bob__v1, submitted_at: "2026-02-01T12:00:00+00:00"}
- {file: alice__v2, submitted_at: "2026-02-02T10:00:00+00:00"}
- {file: alice__v3, submitted_at: "2026-02-03T10:00:00+00:00", on_leaderboard: true}
"""


#: The ids the site gives them: one sequence, in submission order (bob's comes second).
KEYS = {"alice__v1": "alice-1", "bob__v1": "bob-2", "alice__v2": "alice-3", "alice__v3": "alice-4"}


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A one-task copy of the v2_results fixture, and the four submissions."""
    root = tmp_path_factory.mktemp("export")
    bundle = root / "bundle"
    shutil.copytree(BUNDLES / "v2_results", bundle)
    shutil.rmtree(bundle / "sample_submissions")
    data = yaml.safe_load((bundle / "competition.yaml").read_text())
    data["phases"][0]["tasks"] = [0]
    (bundle / "competition.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    subs = root / "subs"
    for name, text in PREDICTIONS.items():
        (subs / name).mkdir(parents=True)
        (subs / name / "predictions.txt").write_text(text + "\n")
    (subs / "submissions.yaml").write_text(MANIFEST)
    return bundle, subs


def run(setup, tmp_path, rule, **kw):
    bundle, subs = setup
    data = yaml.safe_load((bundle / "competition.yaml").read_text())
    data["leaderboards"][0]["submission_rule"] = rule
    copy = tmp_path / "bundle"
    shutil.copytree(bundle, copy)
    (copy / "competition.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    report = run_bundle(copy, tmp_path / "out", submissions=subs, jobs=1, **kw)
    tree = tmp_path / "out" / "outputs"
    in_tree = sorted(p.name for p in (tree / "Feedback").iterdir()) if (tree / "Feedback").is_dir() else []
    manifest = [r["candidate"] for r in csv.DictReader((tree / "submissions.csv").open())]
    return report, in_tree, manifest


@pytest.mark.parametrize("rule, expected", [
    ("Force_Last", ["alice__v2", "bob__v1"]),             # alice's last finished (v3 failed)
    ("Force_Best", ["alice__v1", "bob__v1"]),             # alice's best: 1.0 > 0.5
    ("Force_Latest_Multiple", ["alice__v1", "alice__v2", "bob__v1"]),
    ("Add", ["alice__v1"]),                               # marked by hand and finished
])
def test_each_rule_feeds_the_meta_phase_what_the_export_holds(setup, tmp_path, rule, expected):
    report, in_tree, manifest = run(setup, tmp_path, rule)
    assert {r.candidate: r.status for r in report.results} == {
        "alice__v1": "Finished", "alice__v2": "Finished", "alice__v3": "Failed", "bob__v1": "Finished"}
    # the tree names each submission as the export does: <owner>-<id>
    assert in_tree == sorted(KEYS[c] for c in expected) == sorted(manifest)
    decisions = {e["candidate"]: e for e in report.export}
    assert sorted(c for c, e in decisions.items() if e["exported"]) == expected
    assert {c: e["key"] for c, e in decisions.items()} == KEYS
    assert decisions["alice__v3"]["reason"].startswith("failed: ")
    text = format_report(report)
    assert f"export Feedback: {len(expected)} of 4 submission(s) reach the meta phase" in text
    assert "    not alice__v3: failed: " in text


def test_force_last_says_which_later_submission_replaced_an_earlier_one(setup, tmp_path):
    report, _, _ = run(setup, tmp_path, "Force_Last")
    reason = {e["candidate"]: e["reason"] for e in report.export}["alice__v1"]
    assert reason == "Force_Last: alice's later submission 'alice__v2' replaced it on the leaderboard"


def test_feed_all_keeps_every_submission_that_ran(setup, tmp_path):
    report, in_tree, manifest = run(setup, tmp_path, "Add", feed="all")
    # the failed one is there with the runner's error.txt, not with scores
    assert in_tree == ["alice-1", "alice-3", "alice-4", "bob-2"]
    assert manifest == ["alice-1", "alice-3", "alice-4", "bob-2"]  # in the order the runs are listed
    assert all(e["exported"] for e in report.export)


def test_the_meta_phase_gets_export_names_and_pulled_times(setup, tmp_path):
    """Issue 25: the names carry the order (ids as the site gives them); issue 50 item 8: the
    tree the mock feeds its meta phase is what `codabench pull` writes, with each submission's
    time (the manifest's here), in the order of the ids."""
    report, _, _ = run(setup, tmp_path, "Force_Latest_Multiple")
    rows = list(csv.DictReader((tmp_path / "out/outputs/submissions.csv").open()))
    assert [(r["candidate"], r["participant"]) for r in rows] == [("alice-1", "alice"), ("alice-3", "alice"), ("bob-2", "bob")]
    times = {r["candidate"]: r["submitted_at"] for r in rows}
    assert all(times.values()) and times["alice-1"] < times["bob-2"] < times["alice-3"], times
    assert "alice__v1 (alice-1), alice__v2 (alice-3), bob__v1 (bob-2)" in format_report(report)


def test_cli_feed_option(setup, tmp_path, capsys):
    bundle, subs = setup
    out = tmp_path / "out"
    assert main(["bundle", "run", str(bundle), "--out", str(out), "--submissions", str(subs),
                 "--quiet", "--feed", "all"]) == 0
    assert "export Feedback: 4 of 4 submission(s)" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["bundle", "run", str(bundle), "--feed", "some"])


TEMPLATE = ROOT / "bundle_template"


def test_check_warns_about_a_baseline_named_by_its_local_submission(tmp_path):
    """The meta phase sees <owner>-<id> names (the export's, and bundle run's since issue
    25): a baseline listed by its local submission name is found by neither, its
    participant by both."""
    from metascore.bundle.check.full import check_bundle

    bundle = tmp_path / "bundle"
    shutil.copytree(TEMPLATE, bundle, ignore=shutil.ignore_patterns("__pycache__"))
    config = bundle / "final_ranking" / "reference_data" / "metascore.yaml"
    assert not [w for w in check_bundle(bundle).warnings if "baseline" in w]
    config.write_text(config.read_text().replace("baselines: [baseline]", "baselines: [baseline_submission]"))
    warned = [w for w in check_bundle(bundle).warnings if "baseline_submission" in w]
    assert len(warned) == 1 and "is the name of a local submission" in warned[0]
    assert "list its participant 'baseline'" in warned[0]
