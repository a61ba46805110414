"""Issue 31, items 8 to 14: what a local run, its checks and its meta phase say is true and
can be followed, on fixtures that did not come from the template (a code-submission bundle
with two phases and no starting kit, a one-phase competition, a run that finished after its
prediction step failed)."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from metascore.bundle.runner import format_report, run_bundle
from metascore.render.writers import render_outputs
from shared_competition import board as _board, config as _config
from test_site import BUNDLES, META, _code, meta_bundle

#: A scoring program that, like many, writes a stand-in score when the predictions are missing.
STAND_IN = """\
import json, os, sys
ref, res, out = os.path.join(sys.argv[1], "ref"), os.path.join(sys.argv[1], "res"), sys.argv[2]
truth = open(os.path.join(ref, "truth.txt")).read().split()
path = os.path.join(res, "predictions.txt")
if os.path.isfile(path) and os.path.getsize(path):
    pred = open(path).read().split()
    accuracy = sum(p == t for p, t in zip(pred, truth)) / len(truth)
else:
    accuracy = 999.0  # the stand-in: no predictions
json.dump({"accuracy": accuracy}, open(os.path.join(out, "scores.json"), "w"))
"""


def _rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(path.open()))


# ------------------------------------------------------------------ item 10
def test_one_ranked_candidate_has_no_heatmap_and_says_why():
    """Only dave qualifies (top_k 1): the page said "No ranked candidates, so no heatmap"
    next to "1 was ranked"."""
    lb = _board(_config(phases={"final": None}, filter={"rule": "top_k", "k": 1}))
    assert [r.candidate for r in lb.final.ranked] == ["dave-105"]
    page = render_outputs(lb)["detailed_results.html"]
    assert "No ranked candidates" not in page
    assert ("One candidate was ranked (dave-105, the only one to qualify: it wins by default): it "
            "has no rank on a judge among others, so there is no heatmap.") in page
    assert "they need at least 2 ranked candidates and 1 was ranked" in page
    assert "The best candidate of phase &#x27;Development&#x27; enters the final ranking." in page


# ------------------------------------------------------------------ item 12
def test_one_phase_page_names_the_phase_not_a_development_phase():
    lb = _board(_config(phases={"final": None}))
    page = render_outputs(lb)["detailed_results.html"]
    shown = page.split("<h2>Configuration and signature</h2>")[0]  # not the configuration's keys
    for role in ("development average rank", "development position", "development phase",
                 "Development average rank", "Development position", "Dev. "):
        assert role not in shown, role
    assert "<h3>Threshold: baselines in phase &#x27;Development&#x27;</h3>" in page
    assert ("its average rank in phase &#x27;Development&#x27; (the phase&#x27;s candidates and "
            "baselines ranked together) is strictly better than that of every baseline") in page
    # two phases keep the development wording
    two = render_outputs(_board(_config()))["detailed_results.html"]
    assert "<h3>Threshold: baselines in the development phase</h3>" in two


# ------------------------------------------------------------------ items 11 and 14
@pytest.fixture(scope="module")
def flagged_run(tmp_path_factory):
    """meta_bundle (Development, Final, a starting-kit baseline, a Final ranking phase)
    with a scoring program that writes 999 when the predictions are missing, and dan, whose
    submission crashes in both phases."""
    tmp_path = tmp_path_factory.mktemp("flagged")
    bundle, subs = meta_bundle(tmp_path, META)
    (bundle / "scoring_program" / "score.py").write_text(STAND_IN)
    _code(subs / "dan__broken", "broken")
    report = run_bundle(bundle, tmp_path / "out", submissions=subs)
    assert report.meta.status == "Finished", report.meta.reason
    return report


def test_a_flagged_run_is_marked_where_the_organizer_looks(flagged_run):
    report = flagged_run
    dan = [r for r in report.results if r.candidate == "dan__broken"]
    assert [r.flagged for r in dan] == [True, True] and dan[0].scores == {"accuracy": 999.0}
    keys = {(e["phase"], e["candidate"]): e["key"] for e in report.export}
    dev, final = keys[("Development Phase", "dan__broken")], keys[("Final Phase", "dan__broken")]
    crash = ("prediction step: the submission exited with code 1; last line of its stderr: "
             "ZeroDivisionError: division by zero")
    rows = _rows(report.leaderboard)
    # ranked first on its stand-in 999, and marked so, with both runs behind the row
    assert rows[0]["candidate"] == final and rows[0]["position"] == "1"
    assert rows[0]["prediction_failed"] == (
        f"'{final}' in 'Final Phase', task 'Final Task': {crash}; "
        f"'{dev}' in 'Development Phase', task 'Development Task': {crash}")
    assert all(r["prediction_failed"] == "" for r in rows[1:])
    assert list(rows[0]).index("prediction_failed") == list(rows[0]).index("reason") + 1
    doc = json.loads((report.leaderboard.parent / "leaderboard.json").read_text())
    (message,) = [m for m in doc["messages"] if "prediction step failed" in m]
    assert message.startswith("2 run(s) finished after their prediction step failed")
    assert "a Codabench results export holds only scores, so the meta phase on the site ranks such " \
           "runs without a mark" in message
    assert doc["final"]["rows"][0]["prediction_failed"] == rows[0]["prediction_failed"]
    assert [r["prediction_failed"] for r in doc["development"]["rows"] if r["candidate"] == dev] == [
        f"'{dev}' in 'Development Phase', task 'Development Task': {crash}"]
    assert doc["input"]["prediction_failed"][0]["candidate"] in (dev, final)
    page = report.detailed_results.read_text()
    assert page.count(">prediction failed</span>") == 2  # the final and the development board
    assert "A row marked prediction failed has scores from a run that finished after" in page


def test_without_a_flagged_run_the_files_keep_their_columns(tmp_path):
    """What the site's meta phase writes (it never knows a flag) is what it wrote before:
    no prediction_failed column, key or summary entry."""
    bundle, subs = meta_bundle(tmp_path, META)
    report = run_bundle(bundle, tmp_path / "out", submissions=subs)
    header = report.leaderboard.read_text().splitlines()[0].split(",")
    assert header[:10] == ["position", "rank", "score", "candidate", "participant", "is_baseline",
                           "qualified", "reason", "submitted_at", "dev_position"]
    doc = json.loads((report.leaderboard.parent / "leaderboard.json").read_text())
    assert "prediction_failed" not in json.dumps(doc)
    assert "prediction failed" not in report.detailed_results.read_text()


def test_one_name_for_the_baseline_across_the_run_table_rankings_and_reasons(flagged_run):
    """The baseline ran as 'baseline_submission', is baseline-1 in Development and a new id
    in Final: the run table gives each run the name the rankings use, and every reason cites
    the baseline by its row on the final board, with its development id."""
    report = flagged_run
    keys = {(e["phase"], e["candidate"]): e["key"] for e in report.export}
    dev = keys[("Development Phase", "baseline_submission")]
    final = keys[("Final Phase", "baseline_submission")]
    assert dev != final
    table = format_report(report)
    assert re.search(rf"Development Phase +baseline_submission \({dev}\) ", table)
    assert re.search(rf"Final Phase +baseline_submission \({final}\) ", table)
    assert re.search(rf"Final Phase +alice__right \({keys[('Final Phase', 'alice__right')]}\) ", table)
    rows = {r["candidate"]: r for r in _rows(report.leaderboard)}
    assert rows[final]["is_baseline"] == "true"
    # development accuracies: dan 999 (its stand-in), alice and bob 0.75, carol and the
    # baseline ('odd') 0.25: average ranks 1, 2.5, 2.5, 4.5, 4.5
    assert rows[final]["reason"] == ("baseline, shown for reference (not ranked); development "
                                     f"average rank 4.5 (as '{dev}' in 'Development Phase')")
    carol = keys[("Final Phase", "carol__odd")]
    assert rows[carol]["reason"] == (
        f"development average rank 4.5 (position 4) ties with baseline '{final}' (4.5 as '{dev}' in "
        "'Development Phase'); a tie does not qualify")
    others = [r["reason"] for r in rows.values() if r["is_baseline"] == "false"]
    assert len(others) == 4 and all(f"'{final}'" in r and f" as '{dev}' in 'Development Phase')" in r
                                    for r in others), others
    assert not any(f"'{dev}'," in r or f"'{dev}' (" in r for r in others)


# ------------------------------------------------------------------ item 9
def test_a_code_submission_without_command_is_said_to_run_through_the_ingestion_program(tmp_path):
    """A code submission whose metadata has no command (a description only), run by the
    ingestion program: the note said "nothing was run for it"."""
    bundle = tmp_path / "bundle"
    shutil.copytree(BUNDLES / "add_meta_v2", bundle)
    subs = bundle / "sample_submissions"
    (subs / "alice__exact" / "metadata.yaml").write_text("description: y = 2x + 1\n")
    report = run_bundle(bundle, tmp_path / "out")
    runs = [r for r in report.results if r.candidate == "alice__exact"]
    assert [r.status for r in runs] == ["Finished", "Finished"]
    assert runs[0].scores["mae"] == 0.0  # its model ran: exact predictions
    notes = [w for r in runs for w in r.warnings]
    assert notes == ["prediction step: the submission's metadata has no 'command', so it is not "
                     "run as a program; the ingestion program ran with it mounted at "
                     "/app/ingested_program (a code submission that the ingestion program "
                     "imports)."] * 2
    assert "nothing was run" not in format_report(report)


# ------------------------------------------------------------------ item 13
def test_python_env_without_a_module_is_blamed_not_the_image(tmp_path):
    """``bundle run --python-env VENV`` where VENV lacks scikit-learn: the hint blamed the
    environment built for the bundle's image (py37)."""
    import subprocess
    import sys

    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    report = run_bundle(BUNDLES / "sklearn_scoring", tmp_path / "out", python_env=venv)
    failed = [r for r in report.results if not r.finished]
    assert failed
    stderr = (Path(failed[0].run_dir) / "scoring" / "stderr.txt").read_text()
    python = venv / "bin" / "python"
    assert (f"metascore: the program needs the Python module 'sklearn', which {python} "
            f"(--python-env) does not have; install scikit-learn there (`{python} -m pip install "
            "scikit-learn`), or give --python-env an environment that has it.") in stderr
    assert "bundle env" not in stderr and "codalab-legacy" not in stderr


# ------------------------------------------------------------------ item 8
def test_a_baseline_of_the_run_submissions_is_found_by_check_and_add_meta(tmp_path, capsys, monkeypatch):
    """``--baseline kit`` names the participant of a submission in the folder `bundle run
    --submissions` gets: check said "`bundle run` fails on it" and add-meta "cannot find
    it", while the run ranked with it. Without --submissions they now say when the run finds
    it; with it they look where the run looks."""
    from metascore.cli import main

    monkeypatch.setenv("METASCORE_META_PYTHON", "auto")  # the organizer's default (issue 36)
    bundle = tmp_path / "bundle"
    shutil.copytree(BUNDLES / "add_meta_v2", bundle)
    subs = tmp_path / "subs"
    shutil.copytree(bundle / "sample_submissions", subs)
    shutil.copytree(bundle / "solution", subs / "kit__plain")  # y = 2x, by participant kit
    manifest = yaml.safe_load((subs / "submissions.yaml").read_text())
    (subs / "submissions.yaml").write_text(yaml.safe_dump(manifest + [
        {"file": "kit__plain", "participant": "kit", "submitted_at": "2026-01-15T10:00:00+00:00"}]))
    add = ["bundle", "add-meta", str(bundle), "--end", "2026-12-31", "--submission-rule",
           "Force_Last", "--baseline", "kit"]
    fresh = tmp_path / "fresh"
    shutil.copytree(bundle, fresh)
    assert main(add) == 0
    said = capsys.readouterr().out
    assert "cannot find it" not in said
    assert ("`bundle run` finds it when --submissions DIR holds one of its submissions "
            "(participant 'kit' in the manifest, or a name kit__...), and fails on it otherwise") in said
    assert main(["bundle", "check", str(bundle)]) == 0
    checked = capsys.readouterr().out
    assert "is not a candidate or participant" not in checked
    assert "baseline 'kit' (`baselines:`): no submission of the starting kit, the solutions or " \
           "sample_submissions/ is by participant 'kit': `bundle run` finds it when" in checked
    # given the run's submissions, both look there, and have nothing to say
    assert main(["bundle", "check", str(bundle), "--submissions", str(subs)]) == 0
    assert "baseline 'kit'" not in capsys.readouterr().out
    assert main([*add[:2], str(fresh), *add[3:], "--submissions", str(subs)]) == 0
    assert "baseline(s) kit" not in capsys.readouterr().out
    # the folder the run will use, without kit: the run fails on it, said as such
    assert main(["bundle", "check", str(bundle), "--submissions", str(bundle / "sample_submissions")]) == 0
    assert (f"no submission of the starting kit, the solutions or --submissions "
            f"{bundle / 'sample_submissions'} is by participant 'kit', so `bundle run` with these "
            "submissions fails on it") in capsys.readouterr().out
    # and the run, as it did, ranks against kit
    report = run_bundle(bundle, tmp_path / "out", submissions=subs)
    assert report.meta.status == "Finished", report.meta.reason
    reasons = [r["reason"] for r in _rows(report.leaderboard) if r["is_baseline"] == "false"]
    assert reasons and all(re.search(r"baseline[^']*'kit-\d+'", r) for r in reasons), reasons


def test_the_tree_reader_keeps_the_scores_of_a_flagged_run_and_lists_it(tmp_path):
    from metascore.readers import read_score_table
    from metascore.readers.tree import FLAG_FILE

    for cand, value in (("alice-1", 0.5), ("bob-2", 999.0)):
        (tmp_path / "Dev" / cand / "t").mkdir(parents=True)
        (tmp_path / "Dev" / cand / "t" / "scores.json").write_text(json.dumps({"acc": value}))
    (tmp_path / "Dev" / "bob-2" / "t" / FLAG_FILE).write_text("prediction step: exited 1\nlog tail\n")
    table = read_score_table(tmp_path)
    assert sorted(table.frame["value"]) == [0.5, 999.0]
    assert table.flagged == (("Dev", "bob-2", "t", "prediction step: exited 1"),)
    assert read_score_table(tmp_path, phase="Dev").flagged == table.flagged
    (tmp_path / "Dev" / "bob-2" / "t" / FLAG_FILE).unlink()
    assert read_score_table(tmp_path).flagged == ()  # a site export's tree: none


# ------------------------------------------------------------------ item 15
def test_bundle_env_environments_can_be_listed_moved_and_removed(tmp_path, monkeypatch, capsys):
    """`bundle env` leaves hundreds of MB in metascore's cache: --help says where and how to
    move it, --list shows each environment with its image and size, --remove deletes one
    (by image) or all."""
    from metascore.bundle.worker.pyenv import build_env, cache_root
    from metascore.cli import main

    monkeypatch.setenv("METASCORE_CACHE", str(tmp_path / "cache"))
    with pytest.raises(SystemExit):
        main(["bundle", "env", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "$METASCORE_CACHE, else $XDG_CACHE_HOME/metascore, else ~/.cache/metascore" in said
    assert "--list" in said and "--remove" in said
    monkeypatch.delenv("METASCORE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "metascore"
    monkeypatch.setenv("METASCORE_CACHE", str(tmp_path / "cache"))

    a = build_env("example/a:1", ())  # no packages: a bare virtual environment
    b = build_env("example/b:2", (), system_site_packages=True)
    assert main(["bundle", "env", "--list"]) == 0
    out = capsys.readouterr().out
    assert "example/a:1: " in out and str(a) in out and "example/b:2: " in out and str(b) in out
    assert "2 environment(s)" in out and str(tmp_path / "cache" / "envs") in out
    assert main(["bundle", "env", "--remove", "example/a:1"]) == 0
    assert f"removed {a} (example/a:1" in capsys.readouterr().out
    assert not a.exists() and b.exists()
    assert main(["bundle", "env", "--remove", "example/a:1"]) == 1
    assert "no environment is built for 'example/a:1'; built for: example/b:2." in capsys.readouterr().err
    assert main(["bundle", "env", "--remove", "all"]) == 0
    assert not b.exists()
    assert main(["bundle", "env", "--list"]) == 0 and "0 environment(s)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        main(["bundle", "env", "--list", "bundle_template"])
    assert exit_.value.code == 2
