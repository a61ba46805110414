"""The runner feeds the meta phase what the site's results export would hold: the
leaderboard's submission_rule per phase (one run per rule), or everything with feed="all".

alice submits three times (v1 scores 1.0, v2 scores 0.5, v3 fails: wrong number of
predictions); bob once (0.75). The manifest marks alice's v1 and v3 as put on the
leaderboard by hand (only read under Add)."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
import yaml

from metascore.bundle.runner import format_report, run_bundle
from metascore.cli import main

BUNDLES = Path(__file__).parent / "data" / "bundles"
PREDICTIONS = {"alice__v1": "1 0 1 1", "alice__v2": "1 1 1 0", "alice__v3": "1 0", "bob__v1": "1 1 1 1"}
MANIFEST = """\
- {file: alice__v1, submitted_at: "2026-02-01T10:00:00+00:00", on_leaderboard: true}
- {file: bob__v1, submitted_at: "2026-02-01T12:00:00+00:00"}
- {file: alice__v2, submitted_at: "2026-02-02T10:00:00+00:00"}
- {file: alice__v3, submitted_at: "2026-02-03T10:00:00+00:00", on_leaderboard: true}
"""


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
    assert in_tree == expected and sorted(manifest) == expected
    decisions = {e["candidate"]: e for e in report.export}
    assert sorted(c for c, e in decisions.items() if e["exported"]) == expected
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
    assert in_tree == ["alice__v1", "alice__v2", "alice__v3", "bob__v1"]
    assert manifest == ["alice__v1", "alice__v2", "alice__v3", "bob__v1"]
    assert all(e["exported"] for e in report.export)


def test_cli_feed_option(setup, tmp_path, capsys):
    bundle, subs = setup
    out = tmp_path / "out"
    assert main(["bundle", "run", str(bundle), "--out", str(out), "--submissions", str(subs),
                 "--quiet", "--feed", "all"]) == 0
    assert "export Feedback: 4 of 4 submission(s)" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["bundle", "run", str(bundle), "--feed", "some"])
