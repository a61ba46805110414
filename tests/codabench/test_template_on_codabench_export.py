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
import io
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from metascore.cli import main
from metascore.readers.formats import read_score_table, read_scores
from metascore.program import score_main
from repo_paths import ROOT, TESTS

EXPORT = TESTS / "data" / "exports" / "template_results.json"
#: Issue 25: the template with alice renamed zoe (same submissions, same order) as the real
#: site exported it: development ids in submission order (zoe-1, bob-2, carol-3, dave-4,
#: erin-5, baseline-6), the migrated final copies numbered in the order the site happened
#: to migrate them (carol-7, dave-8, erin-9, zoe-10, bob-11, baseline-12).
SITE_EXPORT = EXPORT.parent / "template_results_site_ids.json"
TEMPLATE = ROOT / "bundle_template"
CONFIG = TEMPLATE / "final_ranking" / "reference_data" / "metascore.yaml"


def per_phase_csvs(folder: Path, export: Path = EXPORT) -> None:
    """The same export as the site's results.zip gives it: one CSV per phase."""
    for title, board in json.loads(export.read_text()).items():
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
        "n_qualified": 4, "winner_score": pytest.approx(5 / 3)}  # the average rank


def test_one_export_of_both_phases_keeps_one_task_name(tmp_path):
    frame = read_scores(EXPORT)
    assert sorted(set(frame["task"])) == ["datasets"]  # not datasets(87) and datasets(88)
    assert sorted(set(frame["phase"])) == ["Development", "Final"]
    assert sorted(set(frame["metric"])) == ["Accuracy (blobs)", "Brier (churn)", "MAE (housing)"]


def test_a_folder_of_exports_is_read_file_by_file(tmp_path):
    per_phase_csvs(tmp_path)
    table = read_score_table(tmp_path)
    frame = table.frame
    assert table.format == "codabench_csv"
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


# ---------------------------------------------------------------------- issue 25: the tie for first
def run_program(tmp_path: Path, export: Path, layout: str = "results.json") -> Path:
    res, ref, out = tmp_path / "input" / "res", tmp_path / "input" / "ref", tmp_path / "output"
    res.mkdir(parents=True)
    ref.mkdir()
    shutil.copy(CONFIG, ref / "metascore.yaml")
    if layout == "results.json":
        shutil.copy(export, res / "results.json")
    else:
        per_phase_csvs(res, export)
    assert score_main(tmp_path / "input", out) == 0
    return out


@pytest.mark.parametrize("layout", ["results.json", "per-phase CSVs"])
def test_the_site_export_breaks_the_tie_by_development_order(tmp_path, layout):
    """zoe and carol tie for first. The export has no submission time; as text carol-7 comes
    before zoe-10 (what the site crowned). By the documented rule zoe's submission is the
    earlier one: her development submission zoe-1 came before carol-3, and her final copy
    takes its place."""
    out = run_program(tmp_path, SITE_EXPORT, layout)
    rows = list(csv.DictReader((out / "leaderboard.csv").open()))
    assert [(r["position"], r["candidate"], r["qualified"]) for r in rows] == [
        ("1", "zoe-10", "true"), ("1", "carol-7", "true"), ("3", "bob-11", "true"),
        ("4", "dave-8", "true"), ("", "baseline-12", ""), ("", "erin-9", "false")]
    board = json.loads((out / "leaderboard.json").read_text())
    assert any("zoe-10 is listed first and is the winner by the tie-break: the earlier submission by submission number "
               "(zoe-1 before carol-3: their submissions in phase 'Development')" in m
               for m in board["messages"])
    order = board["signature"]["submission_order"]
    assert order["Final"].startswith("submission order from the submission ids of phase 'Development'")
    # the report says which rule decided
    assert "submission order from the submission ids of phase" in (out / "detailed_results.html").read_text()


def test_the_shipped_templates_export_says_the_same_rule(tmp_path):
    out = run_program(tmp_path, EXPORT)
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["winner"] == "alice-1302"
    assert any("(alice-1202 before carol-1204: their submissions in phase 'Development')" in m
               for m in board["messages"])


def renamed_template(root: Path) -> Path:
    """bundle_template with its participant alice renamed zoe: same submission, same time."""
    bundle = root / "template_zoe"
    shutil.copytree(TEMPLATE, bundle, ignore=shutil.ignore_patterns("__pycache__"))
    subs = bundle / "sample_submissions"
    (subs / "alice__centroid").rename(subs / "zoe__centroid")
    manifest = subs / "submissions.yaml"
    text = manifest.read_text()
    assert "{file: alice__centroid, participant: alice," in text
    manifest.write_text(text.replace("{file: alice__centroid, participant: alice,",
                                     "{file: zoe__centroid, participant: zoe,"))
    return bundle


def without_times(text: str) -> list[dict[str, str]]:
    """A leaderboard's rows without the ``submitted_at`` column."""
    return [{k: v for k, v in r.items() if k != "submitted_at"} for r in csv.DictReader(io.StringIO(text))]


def without_ids(text: str) -> str:
    """Leaderboard text with every submission name <owner>-<id> replaced by its owner: the
    site's ids depend on who submitted when and on its migration order."""
    return re.sub(r"\b(zoe|alice|bob|carol|dave|erin|baseline)-\d+\b", r"\1", text)


@pytest.mark.slow
def test_bundle_run_of_the_renamed_template_equals_the_site(tmp_path):
    """Issue 25 (a): `bundle run` feeds its meta phase the export's names (<owner>-<id>),
    so the renamed template's final leaderboard is the one the meta-scoring program computes
    on the real site's export, column for column (but for the ids and the submission times,
    which `codabench pull` adds and so, since issue 50 item 8, does `bundle run`), with the
    same winner as the shipped template (zoe in alice's place)."""
    out = tmp_path / "runs"
    assert main(["bundle", "run", str(renamed_template(tmp_path)), "--out", str(out), "--quiet"]) == 0
    local = (out / "final" / "leaderboard.csv").read_text()
    site = (run_program(tmp_path / "site", SITE_EXPORT) / "leaderboard.csv").read_text()
    assert without_times(without_ids(local)) == without_times(without_ids(site))
    rows = list(csv.DictReader(io.StringIO(local)))
    assert [(r["position"], r["participant"]) for r in rows[:2]] == [("1", "zoe"), ("1", "carol")]
    tree = list(csv.DictReader((out / "outputs" / "submissions.csv").open()))
    assert all(r["submitted_at"] for r in tree)  # as `codabench pull` writes them
    # ids in submission order (the manifest's times; the baseline at the phase's start),
    # the migrated copies after them
    assert {(r["phase"], r["candidate"]) for r in tree} == {
        ("Development", k) for k in ("baseline-1", "zoe-2", "bob-3", "carol-4", "dave-5", "erin-6")} | {
        ("Final", k) for k in ("baseline-7", "zoe-8", "bob-9", "carol-10", "dave-11", "erin-12")}
