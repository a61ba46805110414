"""The template's meta-ranking on what Codabench really gives the organizer: the results
export of the Development and Final phases, submitted as a zip to the Final ranking phase.

tests/data/exports/template_results.json is written with the traits of a real
``results.json`` export (research/codabench.md section 4): every phase in one file, keyed
``"<leaderboard> - <phase>(<phase id>)"``; rows ``"<owner>-<submission id>"`` (the Final
phase holds the migrated copies, with new ids); columns ``"<task>(<task id>)-<column
title>"`` (the two phases' tasks share the name ``datasets`` but not the id); 10-decimal
strings; ``""`` for a missing score (dave's model fails on housing) and for the columns only
the meta phase writes. The scores are those of the template's own run (test_bundle_template).
"""

from __future__ import annotations

import csv
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from metascore.cli import main
from metascore.io.readers import read_scores
from metascore.program import score_main

EXPORT = Path(__file__).parent / "data" / "exports" / "template_results.json"
CONFIG = Path(__file__).parents[1] / "bundle_template" / "final_ranking" / "reference_data" / "metascore.yaml"


def per_phase_csvs(folder: Path) -> None:
    """The same export as the site's results.zip gives it: one CSV per phase."""
    for title, board in json.loads(EXPORT.read_text()).items():
        columns = list(next(iter(board.values())))
        with open(folder / f"{title}.csv", "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["Username", "fact_sheet_answers", *columns])
            for key, row in board.items():
                writer.writerow([key, "", *row.values()])


def final_board(out: Path) -> list[tuple[str, str, str]]:
    rows = list(csv.DictReader((out / "leaderboard.csv").open()))
    return [(r["position"], r["participant"], r["qualified"]) for r in rows]


EXPECTED = [("1", "alice", "true"), ("1", "carol", "true"), ("3", "bob", "true"),
            ("4", "dave", "true"), ("", "baseline", ""), ("", "erin", "false")]


@pytest.mark.parametrize("layout", ["results.json", "per-phase CSVs"])
def test_the_meta_scoring_program_ranks_the_export_as_the_local_run(tmp_path, layout):
    """The submitted zip is unzipped into input/res; metascore.yaml is the reference data."""
    res, ref, out = tmp_path / "input" / "res", tmp_path / "input" / "ref", tmp_path / "output"
    res.mkdir(parents=True)
    ref.mkdir()
    shutil.copy(CONFIG, ref / "metascore.yaml")
    if layout == "results.json":
        shutil.copy(EXPORT, res / "results.json")
    else:
        per_phase_csvs(res)
    assert score_main(tmp_path / "input", out) == 0
    assert final_board(out) == EXPECTED  # same finalists and order as test_bundle_template
    assert json.loads((out / "scores.json").read_text()) == {
        "n_qualified": 4, "winner_score": pytest.approx(-5 / 3)}


def test_one_export_of_both_phases_keeps_one_task_name(tmp_path):
    frame = read_scores(EXPORT)
    assert sorted(set(frame["task"])) == ["datasets"]  # not datasets(87) and datasets(88)
    assert sorted(set(frame["phase"])) == ["Development", "Final"]
    assert sorted(set(frame["metric"])) == ["Accuracy (blobs)", "Brier (churn)", "MAE (housing)"]


def test_a_folder_of_exports_is_read_file_by_file(tmp_path):
    per_phase_csvs(tmp_path)
    frame = read_scores(tmp_path)
    assert frame.attrs["format"] == "codabench_csv"
    assert sorted(set(frame["phase"])) == ["Development", "Final"]
    assert len(frame) == 2 * 6 * 3  # the empty meta columns are dropped


def test_a_folder_with_neither_outputs_nor_exports_is_still_an_error(tmp_path):
    (tmp_path / "notes").mkdir()
    with pytest.raises(ValueError, match="no scores found"):
        read_scores(tmp_path)


def test_without_titles_the_judges_miss_the_export(tmp_path):
    text = CONFIG.read_text()
    for title in ("Accuracy (blobs)", "MAE (housing)", "Brier (churn)"):
        text = text.replace(f" title: {title},", "")
    (tmp_path / "metascore.yaml").write_text(text)
    code = main(["rank", "--config", str(tmp_path / "metascore.yaml"), "--input", str(EXPORT),
                 "--output", str(tmp_path / "out")])
    assert code == 1  # and `bundle check` warns about it (test_bundle_check_platform)


def test_the_zip_an_organizer_uploads(tmp_path):
    """What `bundle run` cannot show: the zip of the export, as Codabench unpacks it."""
    zipped = tmp_path / "results.zip"
    with zipfile.ZipFile(zipped, "w") as zf:
        zf.write(EXPORT, "results.json")
    res = tmp_path / "input" / "res"
    zipfile.ZipFile(zipped).extractall(res)
    (tmp_path / "input" / "ref").mkdir()
    shutil.copy(CONFIG, tmp_path / "input" / "ref" / "metascore.yaml")
    assert score_main(tmp_path / "input", tmp_path / "output") == 0
    assert final_board(tmp_path / "output")[:4] == EXPECTED[:4]
