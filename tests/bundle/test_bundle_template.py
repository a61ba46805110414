"""The bundle template, end to end: run it as the README says, zip it, check the zip.

Expected final leaderboard, derived by hand from the per-dataset scores of the committed data
(also asserted below, so a change in the data or the submissions shows up here first). Each
phase is one task, ``datasets``, whose scoring program writes one column per dataset
(``blobs_accuracy``, ``housing_mae``, ``churn_brier``); dave's model raises on housing, so
his runs finish without a ``housing_mae`` column (missing = worst).

Development phase, 6 candidates (rank 1 = best; ties share the average rank):

=================  ================  ===============  ================  ============
candidate          blobs accuracy    housing mae      churn brier       average rank
=================  ================  ===============  ================  ============
bob__knn           0.911111 (1)      1.254407 (2)     0.240889 (3)      6/3 = 2
carol__linear      0.844444 (4)      0.465837 (1)     0.201851 (1)      6/3 = 2
alice__centroid    0.888889 (2.5)    1.813962 (3)     0.201911 (2)      7.5/3 = 2.5
dave__crashes      0.888889 (2.5)    failed (6)       0.247432 (4)      12.5/3 = 4.1667
baseline           0.333333 (5)      4.057597 (4)     0.251852 (5)      14/3 = 4.6667
erin__sign_error   0.044444 (6)      11.662933 (5)    0.401111 (6)      17/3 = 5.6667
=================  ================  ===============  ================  ============

beat_baseline (strictly better average rank than 4.6667): bob, carol, alice, dave qualify;
erin does not. Final phase, ranked among the 4 qualified only:

=================  ================  ===============  ================  ============
alice__centroid    0.755556 (1)      1.659381 (3)     0.190260 (1)      5/3
carol__linear      0.733333 (2)      0.424253 (1)     0.190658 (2)      5/3
bob__knn           0.688889 (3)      1.277517 (2)     0.217333 (3)      8/3
dave__crashes      0.644444 (4)      failed (4)       0.226889 (4)      12/3 = 4
=================  ================  ===============  ================  ============

alice and carol tie (position 1 for both); alice submitted first, so she is listed first.

The meta phase gets what the site's results export holds (issue 25): submissions named
``<owner>-<id>`` with the ids the site gives them (development in submission order: the
baseline at the phase's start, then alice to erin by their manifest times: baseline-1,
alice-2, bob-3, carol-4, dave-5, erin-6; the migrated final copies after them: baseline-7,
alice-8, bob-9, carol-10, dave-11, erin-12) and no submission time. "Alice submitted
first" is read from the development ids: alice-2 before carol-4.
"""

from __future__ import annotations

import csv
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from metascore.bundle.schema.load import check_schema
from metascore.cli import main
from repo_paths import ROOT

TEMPLATE = ROOT / "bundle_template"

DEV = {
    "baseline_submission": {"blobs_accuracy": 0.333333, "housing_mae": 4.057597, "churn_brier": 0.251852},
    "alice__centroid": {"blobs_accuracy": 0.888889, "housing_mae": 1.813962, "churn_brier": 0.201911},
    "bob__knn": {"blobs_accuracy": 0.911111, "housing_mae": 1.254407, "churn_brier": 0.240889},
    "carol__linear": {"blobs_accuracy": 0.844444, "housing_mae": 0.465837, "churn_brier": 0.201851},
    "dave__crashes": {"blobs_accuracy": 0.888889, "churn_brier": 0.247432},
    "erin__sign_error": {"blobs_accuracy": 0.044444, "housing_mae": 11.662933, "churn_brier": 0.401111},
}
FINAL = {
    "alice__centroid": {"blobs_accuracy": 0.755556, "housing_mae": 1.659381, "churn_brier": 0.19026},
    "carol__linear": {"blobs_accuracy": 0.733333, "housing_mae": 0.424253, "churn_brier": 0.190658},
    "bob__knn": {"blobs_accuracy": 0.688889, "housing_mae": 1.277517, "churn_brier": 0.217333},
    "dave__crashes": {"blobs_accuracy": 0.644444, "churn_brier": 0.226889},
}


pytestmark = pytest.mark.slow  # one whole-competition run (about 15 s), shared by the tests


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("template") / "runs"
    code = main(["bundle", "run", str(TEMPLATE), "--out", str(out), "--quiet"])
    return code, out


def test_run_exits_zero_and_prints_where_results_are(run, capsys):
    code, out = run
    assert code == 0
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["leaderboard"] == str(out / "final" / "leaderboard.csv")
    assert not (out / "final" / "metadata").exists()
    assert Path(summary["detailed_results"]).is_file()


def test_per_dataset_scores(run):
    _, out = run
    results = json.loads((out / "run_summary.json").read_text())["results"]
    got = {(r["phase"], r["candidate"], r["task"]): r for r in results}
    for phase, table in (("Development", DEV), ("Final", FINAL)):
        for cand, scores in table.items():
            r = got[(phase, cand, "datasets")]
            assert r["status"] == "Finished" and r["scores"] == scores


def test_a_crash_on_one_dataset_keeps_the_others(run):
    _, out = run
    results = json.loads((out / "run_summary.json").read_text())["results"]
    dave = next(r for r in results if (r["phase"], r["candidate"]) == ("Development", "dave__crashes"))
    assert sorted(dave["scores"]) == ["blobs_accuracy", "churn_brier"]  # housing_mae: no column
    scoring = Path(dave["run_dir"]) / "scoring"
    assert ("housing: the model failed: NotImplementedError: dave's model does not handle "
            "regression yet (column housing_mae left empty)") in (scoring / "stderr.txt").read_text()
    assert "no score: the model failed" in (scoring / "output" / "detailed_results.html").read_text()
    prediction = Path(dave["run_dir"]) / "prediction"
    assert "Traceback" in (prediction / "ingestion_stderr.txt").read_text()
    assert (prediction / "output" / "blobs" / "predictions.csv").is_file()


def test_outputs_tree_and_manifest(run):
    _, out = run
    tree = out / "outputs"
    # named as the site's export names them (issue 25)
    assert json.loads((tree / "Final/bob-9/datasets/scores.json").read_text()) == FINAL["bob__knn"]
    assert "housing_mae" not in json.loads((tree / "Development/dave-5/datasets/scores.json").read_text())
    rows = list(csv.DictReader((tree / "submissions.csv").open()))
    # issue 50 item 8: the times `codabench pull` writes (the submissions' created_when): the
    # manifest's in Development, the migration's (the phase's start, in id order) in Final
    assert len(rows) == 12
    assert [(r["candidate"], r["submitted_at"]) for r in rows if r["phase"] == "Final"] == [
        (f"{who}-{n}", f"2027-06-01T00:00:{n - 7:02d}.000000Z")
        for n, who in enumerate(["baseline", "alice", "bob", "carol", "dave", "erin"], start=7)]
    assert [r["submitted_at"] for r in rows if r["phase"] == "Development"] == [
        "2027-01-01T00:00:00.000000Z", *(f"2027-02-0{d}T10:00:00.000000Z" for d in range(1, 6))]
    provenance = json.loads((tree / "codabench.json").read_text())
    assert provenance["site"] == "local run" and provenance["pulled_at"]
    assert [(p["name"], p["start"], p["end"]) for p in provenance["phases"]] == [
        ("Development", "2027-01-01T00:00:00Z", "2027-05-31T23:59:00Z"),
        ("Final", "2027-06-01T00:00:00Z", "2027-06-30T23:59:00Z")]
    base = [r for r in rows if r["is_baseline"] == "true"]
    assert {(r["phase"], r["candidate"], r["participant"]) for r in base} == {
        ("Development", "baseline-1", "baseline"), ("Final", "baseline-7", "baseline")}


def test_the_runner_signs_the_export_as_the_organizer_does(run):
    """Issue 46: the meta program ranks only an export signed with the key it carries; the
    runner signs the outputs tree with the organizer's key on this machine, as `codabench
    submit` signs the export it uploads."""
    from metascore.signature.binding import COMPETITION_FILE, competition_token
    from metascore.signature import organizer_key

    _, out = run
    assert (out / "outputs" / "metascore.sig").is_file()
    results = json.loads((out / "run_summary.json").read_text())["results"]
    (meta,) = [r for r in results if r["phase"] == "Final ranking"]
    log = (Path(meta["run_dir"]) / "scoring" / "stdout.txt").read_text()
    assert f"[*] signed by the organizer (key {organizer_key().fingerprint}) for phase 'Final ranking' of a local run" in log
    # issue 49: for the token the run put into the meta task's reference data
    ref = Path(meta["run_dir"]) / "scoring" / "input" / "ref"
    board = json.loads((out / "final" / "leaderboard.json").read_text())
    assert board["input"]["export"]["tokens"] == [competition_token(ref)]
    assert not (ROOT / "bundle_template" / "final_ranking" / "reference_data" / COMPETITION_FILE).exists()


def test_final_leaderboard_matches_hand_derivation(run):
    _, out = run
    meta_out = out / "runs" / "Final_ranking" / "organizer_results" / "meta-ranking" / "scoring" / "output"
    rows = list(csv.DictReader((meta_out / "leaderboard.csv").open()))
    ranked = [(r["position"], r["candidate"]) for r in rows if r["qualified"] == "true"]
    assert ranked == [("1", "alice-8"), ("1", "carol-10"), ("3", "bob-9"), ("4", "dave-11")]
    by = {r["candidate"]: r for r in rows}
    assert float(by["alice-8"]["average_rank"]) == pytest.approx(5 / 3)
    assert float(by["dave-11"]["average_rank"]) == pytest.approx(4.0)
    assert by["erin-12"]["qualified"] == "false"
    assert by["baseline-7"]["is_baseline"] == "true" and by["baseline-7"]["position"] == ""
    scores = json.loads((meta_out / "scores.json").read_text())
    assert scores == {"n_qualified": 4, "winner_score": pytest.approx(5 / 3)}  # the average rank
    assert (meta_out / "detailed_results.html").stat().st_size > 1000


def test_zip_passes_check_after_unzipping(tmp_path, capsys):
    dest = tmp_path / "bundle.zip"
    assert main(["bundle", "zip", str(TEMPLATE), "-o", str(dest)]) == 0
    names = zipfile.ZipFile(dest).namelist()
    assert "competition.yaml" in names
    assert "meta_scoring_program.zip" in names and "scoring_program.zip" in names
    assert "dev_phase/input_data.zip" in names and "logo.png" in names
    meta = zipfile.ZipFile(zipfile.ZipFile(dest).open("meta_scoring_program.zip"))
    inner = meta.namelist()
    assert "metadata.yaml" in inner and "score.py" in inner and "metascore/__init__.py" in inner
    assert not any("__pycache__" in n for n in inner)
    unzipped = tmp_path / "unzipped"
    zipfile.ZipFile(dest).extractall(unzipped)
    report = check_schema(unzipped, meta_program_available=False)
    assert report.errors == [] and report.warnings == []
    assert main(["bundle", "check", str(dest)]) == 0
    assert "0 error(s), 0 warning(s): OK." in capsys.readouterr().out


def test_make_data_reproduces_committed_files(tmp_path):
    import runpy

    script = runpy.run_path(str(TEMPLATE / "utilities" / "make_data.py"))
    script["main"](tmp_path)
    generated = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert len(generated) == 30
    for rel in generated:
        assert (tmp_path / rel).read_bytes() == (TEMPLATE / rel).read_bytes(), rel


def test_zip_without_submissions_says_so_up_front(tmp_path, capsys):
    """A zipped bundle carries no sample submissions: `bundle run bundle.zip` alone would run
    only the baseline and then fail in the meta phase; it stops first and names
    --submissions (issue 14)."""
    dest = tmp_path / "bundle.zip"
    assert main(["bundle", "zip", str(TEMPLATE), "-o", str(dest)]) == 0
    capsys.readouterr()
    out = tmp_path / "runs"
    assert main(["bundle", "run", str(dest), "--out", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "only the baseline(s) baseline_submission would run" in err
    assert "give --submissions DIR" in err
    assert not (out / "runs").exists()  # nothing ran


def test_directions_come_from_the_competition_without_judges(run, tmp_path):
    """Without `judges:` the meta phase takes housing_mae's and churn_brier's `sorting: asc` from the
    leaderboard columns the runner writes next to the outputs tree (issue 14): the same
    final leaderboard as the template's explicit judges."""
    _, out = run
    columns = json.loads((out / "outputs" / "codabench.json").read_text())
    sortings = {c["key"]: c["sorting"] for c in columns["phases"][0]["leaderboard"]["columns"]}
    assert sortings["housing_mae"] == "asc" and sortings["churn_brier"] == "asc"
    assert sortings["blobs_accuracy"] == "desc"
    assert [t["folder"] for t in columns["phases"][0]["tasks"]] == ["datasets"]
    bundle = tmp_path / "bundle"
    shutil.copytree(TEMPLATE, bundle)
    config = bundle / "final_ranking" / "reference_data" / "metascore.yaml"
    text = config.read_text()
    start, end = text.index("\njudges:") + 1, text.index("\nranking:") + 1
    config.write_text(text[:start] + text[end:])
    assert "\njudges:" not in config.read_text()
    out2 = tmp_path / "runs"
    assert main(["bundle", "run", str(bundle), "--out", str(out2), "--quiet"]) == 0
    def rows(path):  # judges come in key order without `judges:`, so compare by column;
        # the bootstrap draws judges by index, so its columns differ with the order
        drawn = ("rank_low", "rank_high", "p_first", "group")
        return [{k: v for k, v in r.items() if k not in drawn} for r in csv.DictReader(path.open())]
    assert rows(out2 / "final" / "leaderboard.csv") == rows(out / "final" / "leaderboard.csv")


def test_report_reads_naturally(run):
    """Issue 14: the shared first place says how it was broken, the average rank is shown as itself (lower is better), and the raw
    JSON is folded."""
    _, out = run
    page = (out / "final" / "detailed_results.html").read_text()
    doc = json.loads((out / "final" / "leaderboard.json").read_text())
    tie = [m for m in doc["messages"] if "share first place" in m]
    assert tie == ["alice-8 and carol-10 share first place (average rank 1.67 each); alice-8 is "
                   "listed first and is the winner by the tie-break: the earlier submission by submission time "
                   "(2027-02-01T10:00:00 before 2027-02-03T10:00:00: their submissions in phase 'Development') "
                   "(ranking.tie_break: ['submitted_at', 'candidate'])."]
    assert "share first place" in page
    # which rule "the earlier submission" followed: the times `codabench pull` writes, as the
    # site's meta phase reads them (issue 50 item 8)
    assert doc["signature"]["submission_order"]["Final"].startswith("submission times of phase 'Development'")
    assert "submission times of phase &#x27;Development&#x27;" in page
    # dave's crash on housing is recorded by the ingestion program and his other datasets
    # are scored: a missing column, not a failed run (test_leaderboard covers failed runs)
    assert 'class="num failed"' not in page
    assert "Average rank &#8595;" in page and "Winner&#x27;s average rank" in page
    assert "<td class=\"num\">-1.6667</td>" not in page and "development score" not in page
    assert "development average rank 2.5 (position 3) beats the baseline" in page
    head, _, tail = page.partition("Configuration and signature")
    assert tail.count("<details>") == 2 and "<pre>" not in head
    # analysis.compare: the template compares three methods on the 4 qualified candidates
    assert "<h2>Comparison of ranking methods</h2>" in page and 'average_rank<span class="current"' in page
    comparison = doc["analysis"]["comparison"]
    assert [r["method"] for r in comparison["rows"]] == ["average_rank", "copeland", "success_rate"]
    assert (comparison["n_candidates"], comparison["n_judges"], comparison["n_trials"]) == (4, 3, 200)
    final = {r["candidate"]: r for r in csv.DictReader((out / "final" / "leaderboard.csv").open())}
    assert final["alice-8"]["reason"].startswith("development average rank 2.5 (position 3)")
