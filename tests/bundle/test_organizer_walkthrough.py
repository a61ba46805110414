"""Issue 14: the organizer's path end to end, as a new organizer takes it: copy the template,
change it, check it (each planted mistake is caught), run it, zip it and run the zip.

One dataset is dropped and another column is added, the method becomes kemeny_young; on
the way, every typo the issue lists is planted once and `bundle check` must refuse it (or
warn, for a scoring key without a column) before the bundle is run."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
import yaml

from metascore.cli import main
from repo_paths import ROOT

TEMPLATE = ROOT / "bundle_template"
CONFIG = "final_ranking/reference_data/metascore.yaml"

pytestmark = pytest.mark.slow


def _edit(path: Path, change) -> None:
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _check(bundle: Path, capsys) -> tuple[int, str]:
    code = main(["bundle", "check", str(bundle)])
    return code, capsys.readouterr().out


def _order(path: Path) -> list[tuple[str, str, str]]:
    return [(r["position"], r["candidate"], r["qualified"]) for r in csv.DictReader(path.open())]


def test_copy_change_check_run_zip_and_run_the_zip(tmp_path, capsys):
    bundle = tmp_path / "my_competition"
    shutil.copytree(TEMPLATE, bundle)
    comp, config = bundle / "competition.yaml", bundle / CONFIG

    # drop the churn dataset: its column leaves the leaderboard, its judge the config
    def drop_churn(data):
        cols = data["leaderboards"][0]["columns"]
        data["leaderboards"][0]["columns"] = [c for c in cols if c["key"] != "churn_brier"]
        for i, c in enumerate(data["leaderboards"][0]["columns"]):
            c["index"] = i
    _edit(comp, drop_churn)
    # the forgotten judge of the removed column is the first mistake
    code, out = _check(bundle, capsys)
    assert code == 1 and "churn_brier" in out and "not ready to upload" in out
    _edit(config, lambda c: c.update(judges=[j for j in c["judges"] if j["metric"] != "churn_brier"]))
    assert _check(bundle, capsys)[0] == 0

    planted = [
        ("method typo", lambda c: c["ranking"].update(method="kemeny"), "did you mean 'kemeny_young'?"),
        ("direction typo", lambda c: c["judges"][1].update(direction="lowr"), "lowr"),
        ("direction against the column's sorting",
         lambda c: c["judges"][1].update(direction="higher"), "housing_mae"),
        ("judge for a task that is not there", lambda c: c["judges"][0].update(task="blobz"), "blobz"),
        ("invalid parameter value", lambda c: c["ranking"].update(params={"ties": "third"}), "ties"),
    ]
    original = config.read_text()
    for what, change, needle in planted:
        _edit(config, change)
        code, out = _check(bundle, capsys)
        assert code == 1, what
        assert needle in out, (what, out)
        config.write_text(original)

    # a scoring key with no leaderboard column is a warning, not an error
    _edit(config, lambda c: c["output"]["scores"].update(agreement="kendall_w"))
    code, out = _check(bundle, capsys)
    assert code == 0 and "warning" in out and "agreement" in out
    config.write_text(original)

    # the change itself: Kemeny-Young on the two remaining datasets; check, run, zip, rerun
    _edit(config, lambda c: c["ranking"].update(method="kemeny_young"))
    code, out = _check(bundle, capsys)
    assert code == 0 and "0 error(s)" in out
    runs = tmp_path / "runs"
    assert main(["bundle", "run", str(bundle), "--out", str(runs), "--quiet"]) == 0
    capsys.readouterr()
    board = runs / "final" / "leaderboard.csv"
    header = board.read_text().splitlines()[0]
    assert "churn_brier" not in header and "housing_mae" in header
    first = _order(board)

    archive = tmp_path / "my_competition.zip"
    assert main(["bundle", "zip", str(bundle), "-o", str(archive)]) == 0
    assert main(["bundle", "check", str(archive)]) == 0
    rerun = tmp_path / "rerun"
    assert main(["bundle", "run", str(archive), "--submissions", str(bundle / "sample_submissions"),
                 "--out", str(rerun), "--quiet"]) == 0
    capsys.readouterr()
    assert _order(rerun / "final" / "leaderboard.csv") == first
