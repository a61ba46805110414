"""The mock bundle runner: worker semantics, fixture bundles and failure paths."""

from __future__ import annotations

import csv
import json
import shutil
import sys
import zipfile

import pytest
import yaml

from bundle_backends import BACKENDS, SANDBOX_MODES, local_backend, options
from metascore.bundle.worker.backend import Mount, StepSpec
from metascore.bundle.worker.local import map_container_paths
from metascore.bundle.runner import format_report, run_bundle
from metascore.bundle.worker.backends import get_backend
from metascore.bundle.schema.load import load_competition
from metascore.bundle.site.submissions import collect_submissions
from metascore.bundle.platform.placeholders import substitute
from metascore.bundle.worker.job_scores import NO_SCORES_MESSAGE
from metascore.errors import ConfigError
from repo_paths import ROOT, TESTS

BUNDLES = TESTS / "data" / "bundles"


def by_candidate(report):
    return {(r.candidate, r.task): r for r in report.results}


# ------------------------------------------------------------------ substitution
@pytest.mark.parametrize(
    "command, kind, scoring, only, expected",
    [
        ("python $program/score.py $input $output", "program", True, False,
         "python /app/program/score.py /app/input /app/output"),
        # kind ingestion: $input is the input data
        ("python $ingestion_program/i.py $input $output $submission_program", "ingestion", False, False,
         "python /app/program/i.py /app/input_data /app/output /app/ingested_program"),
        ("x $hidden $shared $tmp", "program", True, False, "x /app/input/ref /app/shared /app/output"),
        # $predictions: input/res when scoring, the output otherwise
        ("x $predictions", "program", True, False, "x /app/input/res"),
        ("x $predictions", "program", False, False, "x /app/output"),
        # $program is /app/ingestion_program (never mounted) when ingesting during scoring
        ("x $program/a", "ingestion", True, True, "x /app/ingestion_program/a"),
        ("x $program/a", "program", True, True, "x /app/ingestion_program/a"),
        ("x $program/a", "ingestion", False, True, "x /app/program/a"),
    ],
)
def test_substitute_follows_the_worker_table(command, kind, scoring, only, expected):
    assert substitute(command, kind, scoring, only) == expected


def test_substitute_is_plain_replace_in_order():
    # "$input" is replaced first, so "$input_data" (not a placeholder) becomes "/app/input_data"
    # for a program and "/app/input_data_data" for an ingestion program: plain str.replace.
    assert substitute("$input_data", "program", True) == "/app/input_data"
    assert substitute("$input_data", "ingestion", False) == "/app/input_data_data"


def test_map_container_paths_longest_prefix_and_flags(tmp_path):
    mounts = (Mount("/app/input", tmp_path / "in"), Mount("/app/input_data", tmp_path / "data"))
    assert map_container_paths("/app/input_data/x", mounts) == f"{tmp_path}/data/x"
    assert map_container_paths("--ref=/app/input/ref", mounts) == f"--ref={tmp_path}/in/ref"
    assert map_container_paths("/app/inputs", mounts) == "/app/inputs"  # not a mount
    assert map_container_paths("/app/output/x", mounts) == "/app/output/x"  # unmounted: unchanged


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_local_backend_runs_without_shell_in_program_dir(mode, tmp_path):
    prog = tmp_path / "program"
    prog.mkdir()
    (prog / "p.py").write_text(
        "import os, sys\nprint(os.getcwd()); print(os.environ['PYTHONUNBUFFERED']); "
        "print(sys.argv[1:]); print(sys.executable)\n"
    )
    step = StepSpec("t", "python3 /app/program/p.py '&&' /app/program/x", (Mount("/app/program", prog),))
    result = local_backend(mode).run(step)
    lines = result.stdout.splitlines()
    assert result.exit_code == 0 and not result.timed_out
    # the sandbox runs the command unchanged; the rewrite mode maps /app paths to the host
    where = "/app/program" if mode == "bwrap" else str(prog)
    assert lines[0] == where and lines[1] == "1"
    assert lines[2] == repr(["&&", f"{where}/x"])  # no shell: '&&' is an argument
    assert lines[3] == sys.executable


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_local_backend_shared_timer_kills_process_group(mode, tmp_path):
    prog = tmp_path / "program"
    prog.mkdir()
    # the child spawns a grandchild; both must die at the deadline
    (prog / "slow.py").write_text(
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\n"
        "time.sleep(30)\n"
    )
    (prog / "fast.py").write_text("print('done')\n")
    mounts = (Mount("/app/program", prog),)
    slow = StepSpec("slow", "python3 slow.py", mounts)
    fast = StepSpec("fast", "python3 fast.py", mounts)
    results = local_backend(mode).run_many([slow, fast], time_limit=1.0)
    assert results[0].timed_out and results[0].exit_code is None
    assert 0.9 <= results[0].elapsed < 10
    assert results[1].exit_code == 0 and results[1].stdout == "done\n" and not results[1].timed_out


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_both_backends_split_commands_with_the_one_function(mode, tmp_path):
    from metascore.bundle.worker.backend import split_command

    mounts = (Mount("/app/program", tmp_path),)
    step = StepSpec("scoring", "python3 score.py 'two words' /app/input", mounts)
    assert split_command(step) == ["python3", "score.py", "two words", "/app/input"]
    backend = local_backend(mode)
    for command, message in (('python3 "x', r"^scoring: command 'python3 \"x' cannot be split \("),
                             ("  ", r"^scoring: the command is empty\.$")):
        bad = StepSpec("scoring", command, mounts)
        for split in (split_command, backend.argv):
            with pytest.raises(ConfigError, match=message):
                split(bad)


def test_bundle_command_line_defaults_are_the_library_defaults():
    """Each default is defined once: the options of ``bundle run`` and ``bundle add-meta``
    default to what run_bundle, the site, the local backend and metascore.yaml default to."""
    import argparse
    import inspect

    from metascore.bundle.meta.choices import MetaChoices
    from metascore.cli.bundle import add_bundle_commands
    from metascore.bundle.worker.local import LocalBackend
    from metascore.bundle.site.server import FEEDS, Site
    from metascore.config import RankingConfig

    parser = argparse.ArgumentParser()
    add_bundle_commands(parser.add_subparsers())
    run = parser.parse_args(["bundle", "run", "B"])
    defaults = {k: v.default for k, v in inspect.signature(run_bundle).parameters.items()}
    for option in ("out", "backend", "feed", "sandbox", "jobs"):
        assert getattr(run, option) == defaults[option], option
    assert inspect.signature(Site).parameters["feed"].default == defaults["feed"] == FEEDS[0]
    assert inspect.signature(LocalBackend).parameters["sandbox"].default == defaults["sandbox"]
    assert inspect.signature(get_backend).parameters["name"].default == defaults["backend"]
    for feed in FEEDS:
        assert parser.parse_args(["bundle", "run", "B", "--feed", feed]).feed == feed
    with pytest.raises(SystemExit):
        parser.parse_args(["bundle", "run", "B", "--feed", "every"])
    add_meta = parser.parse_args(["bundle", "add-meta", "B"])
    # no method given: the bundle's on a second run, else RankingConfig's (add-meta writes it)
    assert add_meta.method is None and MetaChoices().method is None and RankingConfig().method


def test_get_backend_names():
    assert get_backend("local").name == "local"
    with pytest.raises(ConfigError, match="unknown backend 'podman'; choose one of local, docker"):
        get_backend("podman")


# ------------------------------------------------------------------ submissions
def test_folder_submissions_manifest_and_names(tmp_path):
    comp = load_competition(BUNDLES / "v2_results")
    folder = tmp_path / "subs"
    shutil.copytree(BUNDLES / "v2_results" / "sample_submissions", folder)
    (folder / "submissions.csv").write_text(
        "file,participant,submitted_at,is_baseline\nbob__half,Bob B.,2026-03-01T00:00:00,true\n"
    )
    subs, _ = collect_submissions(comp, folder, cache=tmp_path / "cache")
    got = {s.candidate: (s.participant, s.submitted_at, s.is_baseline) for s in subs}
    assert got["bob__half"] == ("Bob B.", "2026-03-01T00:00:00", True)
    assert got["alice__good"][0] == "alice" and got["alice__good"][2] is False  # from the name


# ------------------------------------------------------------------ fixture bundles
@pytest.mark.parametrize("backend", BACKENDS)
def test_v2_result_submissions_multi_task(tmp_path, backend):
    # feed="all": the fixture's rule is Add (nothing would reach the export); see test_export.py
    report = run_bundle(BUNDLES / "v2_results", tmp_path / "out", feed="all", **options(backend))
    res = by_candidate(report)
    assert res[("alice__good", "task_a")].scores == {"accuracy": 1.0}
    assert res[("alice__good", "task_b")].scores == {"accuracy": 0.5}
    assert res[("bob__half", "task_a")].scores == {"accuracy": 0.75}
    assert res[("bob__half", "task_b")].scores == {"accuracy": 0.25}
    # unknown keys are ignored, with a warning; computed columns are per row
    assert "'unknown_key' match no leaderboard column" in res[("bob__half", "task_b")].warnings[0]
    assert res[("bob__half", "task_b")].computed == {"mean_acc": 0.25}
    # a result submission is copied to the prediction output, with the platform metadata
    pred = tmp_path / "out/runs/Feedback/alice__good/task_a/prediction/output"
    assert (pred / "predictions.txt").is_file()
    meta = yaml.safe_load((pred / "metadata").read_text())
    assert meta == {"exitCode": None, "elapsedTime": None, "ingestionExitCode": None,
                    "ingestionElapsedTime": None}
    scored = yaml.safe_load((tmp_path / "out/runs/Feedback/alice__good/task_a/scoring/output/metadata").read_text())
    assert scored["exitCode"] == 0 and scored["elapsedTime"] >= 0
    # outputs tree + manifest
    tree = tmp_path / "out" / "outputs"
    # named as the export names them, <owner>-<id>; in a two-task phase each submission also
    # takes one id per task (Codabench's child submissions)
    keys = {e["candidate"]: e["key"] for e in report.export}
    assert sorted(keys.values()) in (["alice-1", "bob-4"], ["alice-4", "bob-1"])
    assert json.loads((tree / "Feedback" / keys["bob__half"] / "task_a/scores.json").read_text()) == {"accuracy": 0.75}
    rows = list(csv.DictReader((tree / "submissions.csv").open()))
    assert [r["candidate"] for r in rows] == [keys["alice__good"], keys["bob__half"]]
    assert rows[0]["participant"] == "alice" and rows[0]["is_baseline"] == "false"


@pytest.mark.parametrize("backend", BACKENDS)
def test_ingestion_during_scoring_shared_handshake(tmp_path, backend):
    report = run_bundle(BUNDLES / "v2_shared", tmp_path / "out", **options(backend))
    (result,) = report.results
    assert result.status == "Finished", result.reason
    assert result.scores == {"error": pytest.approx(0.5)}  # predict 2x + 0.5
    sandbox = tmp_path / "out/runs/Only/carol/doubling/scoring"
    assert (sandbox / "shared" / "predictions.txt").is_file()
    assert "handed over" in (sandbox / "ingestion_stdout.txt").read_text()
    # the submission reached the scoring job through input/res (no metadata: copied)
    assert (sandbox / "input" / "res" / "model.py").is_file()


@pytest.mark.parametrize("backend", BACKENDS)
def test_v1_bundle_with_computed_column(tmp_path, backend):
    report = run_bundle(BUNDLES / "v1_computed", tmp_path / "out", **options(backend))
    (result,) = report.results
    assert result.phase == "Development" and result.task == "Development Task"  # as Codabench names it
    assert result.scores == {"set1_score": 1.0, "set2_score": 0.0}
    assert any("computed" in w and "dropped by Codabench's v1 unpacker" in w for w in report.warnings)
    # said once, by the schema: not again as a column no run wrote
    assert not any("'ave_score': no finished scoring run wrote this key" in w for w in report.warnings)


@pytest.mark.parametrize("backend", BACKENDS)
def test_failure_paths_give_worker_statuses_and_real_reasons(tmp_path, backend):
    report = run_bundle(BUNDLES / "failures", tmp_path / "out", feed="all", **options(backend))
    res = {r.candidate: r for r in report.results}
    assert len(res) == 7
    assert res["good"].status == "Finished" and res["good"].scores == {"score": 1.0}

    crash = res["crash"]  # the prediction failure is reported, and scoring still runs (v2)
    assert crash.status == "Failed" and crash.status_details == "program_rc=1"
    assert "no output.txt" in crash.reason
    assert "RuntimeError: boom: this submission crashes on purpose" in crash.prediction_problems[0]

    slow = res["slow"]
    assert slow.status == "Failed"
    assert slow.status_details == "Execution Time Limit exceeded. Limit was 2 seconds"
    assert 1.9 <= slow.elapsed < 15
    # the platform's worker does not enforce the limit while it streams the logs (seen on
    # the real site, tests/real_site/test_real_site.py): the reason says so
    assert "On Codabench the worker does not stop a program whose logs it is streaming" in slow.reason
    assert "Execution Time Limit exceeded" in (tmp_path / "out/runs/Stress/slow/echo/prediction/stderr.txt").read_text()
    assert not (tmp_path / "out/runs/Stress/slow/echo/scoring").exists()  # no scoring job

    assert res["none"].status_details == NO_SCORES_MESSAGE
    assert "not a finite number" in res["nan"].reason and "nan" in res["nan"].status_details
    assert "space after the colon" in res["nospace"].reason
    assert "do not write to this file manually" in res["selfmeta"].status_details

    # only the finished run has scores in the outputs tree, a failed one its status in
    # error.txt (shown as failed, not as a missing score); every candidate is in the manifest
    tree = tmp_path / "out" / "outputs" / "Stress"
    keys = {e["candidate"]: e["key"] for e in report.export}  # the tree names them <owner>-<id>
    local = {key: cand for cand, key in keys.items()}
    assert [local[p.parent.parent.name] for p in tree.glob("*/*/scores.json")] == ["good"]
    failed = sorted(local[p.parent.parent.name] for p in tree.glob("*/*/error.txt"))
    assert failed == sorted(set(res) - {"good"})
    assert (tree / keys["slow"] / "echo/error.txt").read_text().startswith(
        "Failed (Execution Time Limit exceeded. Limit was 2 seconds)")
    assert len(list(csv.DictReader((tmp_path / "out/outputs/submissions.csv").open()))) == 7
    text = format_report(report)
    assert "1 of 7 runs finished" in text and "FAILED Stress / slow / echo" in text


def test_program_that_is_not_found_fails_with_reason(tmp_path):
    bundle = tmp_path / "b"
    shutil.copytree(BUNDLES / "failures", bundle)
    (bundle / "scoring_program" / "metadata.yaml").write_text("command: python3 /app/program/nope.py\n")
    subs = tmp_path / "subs"
    shutil.copytree(BUNDLES / "failures/sample_submissions/good", subs / "good")
    with pytest.raises(ConfigError, match=r"runs '/app/program/nope\.py', but scoring_program has no nope\.py"):
        run_bundle(bundle, tmp_path / "out", submissions=subs)  # the check sees it: nothing runs
    # a script outside the program, which the check cannot see, fails at run time with the reason
    (bundle / "scoring_program" / "metadata.yaml").write_text("command: python3 /app/output/nope.py\n")
    report = run_bundle(bundle, tmp_path / "out", submissions=subs)
    (result,) = report.results
    assert result.status_details == "program_rc=2" and "nope.py" in result.reason


def test_runner_writes_only_inside_out(tmp_path):
    bundle = tmp_path / "bundle"
    shutil.copytree(BUNDLES / "v2_results", bundle)
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    run_bundle(bundle, tmp_path / "out")
    after = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")
                   if not p.is_relative_to(tmp_path / "out"))
    assert after == before


def test_zipped_bundle_runs(tmp_path):
    from metascore.bundle.archive import zip_directory

    zipped = zip_directory(BUNDLES / "v2_shared", tmp_path / "b.zip")
    report = run_bundle(zipped, tmp_path / "out")
    assert [r.status for r in report.results] == ["Finished"]
    assert (tmp_path / "out" / "bundle" / "competition.yaml").is_file()


def test_solutions_run_on_their_tasks_and_zipped_submissions(tmp_path):
    from metascore.bundle.archive import zip_directory

    bundle = tmp_path / "b"
    shutil.copytree(BUNDLES / "v2_results", bundle)
    data = yaml.safe_load((bundle / "competition.yaml").read_text())
    data["solutions"] = [{"index": 0, "tasks": [1], "path": "sample_submissions/alice__good/"}]
    (bundle / "competition.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    subs = tmp_path / "subs"
    zip_directory(BUNDLES / "v2_results/sample_submissions/bob__half", subs / "zed__zipped.zip")
    report = run_bundle(bundle, tmp_path / "out", submissions=subs, feed="all")
    got = {(r.candidate, r.task): r.scores for r in report.results}
    # the solution runs on task index 1 only; --submissions replaces sample_submissions/
    assert got == {("solution", "task_b"): {"accuracy": 0.5},
                   ("zed__zipped", "task_a"): {"accuracy": 0.75},
                   ("zed__zipped", "task_b"): {"accuracy": 0.25}}
    rows = list(csv.DictReader((tmp_path / "out/outputs/submissions.csv").open()))
    keys = {e["candidate"]: e["key"] for e in report.export}  # the tree names them <owner>-<id>
    assert keys["solution"].startswith("organizer-") and keys["zed__zipped"].startswith("zed-")
    assert [(r["candidate"], r["participant"]) for r in rows] == [(keys["solution"], "organizer"),
                                                                  (keys["zed__zipped"], "zed")]


def test_bundle_zip_of_fixture_runs_with_parallel_jobs(tmp_path):
    from metascore.bundle.bundle_zip import build_bundle_zip

    zipped = build_bundle_zip(BUNDLES / "v2_results", tmp_path / "bundle.zip")
    # programs and data are zips now, shared by the tasks of concurrent jobs
    assert "scoring_program.zip" in zipfile.ZipFile(zipped).namelist()
    subs = tmp_path / "subs"
    shutil.copytree(BUNDLES / "v2_results" / "sample_submissions", subs)
    report = run_bundle(zipped, tmp_path / "out", submissions=subs, jobs=4)
    assert [r.status for r in report.results] == ["Finished"] * 4
    assert [r.scores["accuracy"] for r in report.results] == [1.0, 0.5, 0.75, 0.25]


@pytest.mark.slow
def test_a_hand_zipped_template_runs_but_says_it_fails_on_codabench(tmp_path):
    """Zipped without `bundle zip`, meta_scoring_program/ holds only its README (issue 25,
    item 4): the local run fills it, as for a folder, and warns that uploaded as it is, the
    Final ranking phase fails on Codabench."""
    from metascore.bundle.archive import zip_directory

    template = ROOT / "bundle_template"
    hand = zip_directory(template, tmp_path / "hand.zip")
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copytree(template / "sample_submissions" / "alice__centroid", subs / "alice__centroid")
    report = run_bundle(hand, tmp_path / "out", submissions=subs)
    assert report.meta is not None and report.meta.finished
    assert ("the zip's 'meta_scoring_program/' (task 'meta-ranking') is the placeholder that "
            "`metascore bundle zip` fills: this run fills it with the meta-scoring program, but "
            "uploaded as it is, the worker finds no program there and the submissions of phase(s) "
            "'Final ranking' fail on Codabench ('Execution Time Limit exceeded'); upload the zip that "
            "`metascore bundle zip` makes.") in report.warnings


# ------------------------------------------------------------------ failures the summary must not hide
def _echo_bundle(tmp_path, score, ingestion=None):
    """The failures fixture with ``score`` as its scoring program (and ``ingestion`` as an
    ingestion program), without sample submissions; its time limit is generous (these runs
    are about messages, not time: 2 s fails on a loaded machine)."""
    bundle = tmp_path / "bundle"
    shutil.copytree(BUNDLES / "failures", bundle)
    shutil.rmtree(bundle / "sample_submissions")
    (bundle / "scoring_program" / "score.py").write_text(score)
    data = yaml.safe_load((bundle / "competition.yaml").read_text())
    data["phases"][0]["execution_time_limit"] = 120
    if ingestion is not None:
        (bundle / "ingestion_program").mkdir()
        (bundle / "ingestion_program" / "ingest.py").write_text(ingestion)
        (bundle / "ingestion_program" / "metadata.yaml").write_text(
            "command: python3 /app/program/ingest.py /app/input_data /app/output /app/ingested_program\n")
        data["tasks"][0]["ingestion_program"] = "ingestion_program/"
    (bundle / "competition.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return bundle


def _submissions(tmp_path, **modes):
    subs = tmp_path / "subs"
    for name, mode in modes.items():
        shutil.copytree(BUNDLES / "failures/sample_submissions/good", subs / name)
        (subs / name / "metadata.yaml").write_text(f"command: python3 /app/program/run.py /app/output {mode}\n")
    return subs


DEFAULT_999 = """\
import json, os, sys
found = os.path.exists(os.path.join(sys.argv[1], "res", "output.txt"))
json.dump({"score": 1.0 if found else 999}, open(os.path.join(sys.argv[2], "scores.json"), "w"))
"""


def test_finished_after_a_failed_prediction_is_flagged(tmp_path, capsys):
    """Issue 24, "Finished score=999": the submission crashes, the scoring program writes a
    default score; the summary flags the job with the exit code and the log's last line."""
    bundle = _echo_bundle(tmp_path, DEFAULT_999)
    report = run_bundle(bundle, tmp_path / "out", submissions=_submissions(tmp_path, crash="crash"))
    (res,) = report.results
    assert res.status == "Finished" and res.scores == {"score": 999.0} and res.flagged
    assert res.prediction_problems[0].splitlines()[0] == (
        "prediction step: the submission exited with code 1; last line of its stderr: "
        "RuntimeError: boom: this submission crashes on purpose")
    text = format_report(report)
    assert "Finished (prediction failed)  score=999" in text
    assert ("FLAGGED Stress / crash / echo: finished, but prediction step: the submission exited "
            "with code 1; last line of its stderr: RuntimeError: boom: this submission crashes on "
            "purpose; its scores come from a scoring program that ran without the predictions") in text
    assert "1 of 1 runs finished (1 flagged: finished after a failed prediction step; check its scores)" in text
    summary = json.loads((tmp_path / "out/run_summary.json").read_text())
    assert summary["flagged"] == ["Stress / crash / echo"]
    # --strict counts a flagged run as a failure
    from metascore.cli import main

    args = ["bundle", "run", str(bundle), "--out", str(tmp_path / "out2"), "-q",
            "--submissions", str(tmp_path / "subs")]
    assert main(args) == 0 and main([*args, "--strict"]) == 1
    assert "0 of 1 runs failed, 1 finished after a failed prediction step (--strict)" in capsys.readouterr().err


INGEST_STDOUT = """\
import sys, traceback
try:
    raise ValueError("the model has no fit method")
except ValueError:
    traceback.print_exc(file=sys.stdout)  # the traceback goes to stdout, stderr stays empty
    sys.exit(1)
"""
NEEDS_PREDICTIONS = """\
import os, sys
open(os.path.join(sys.argv[1], "res", "test_predictions.csv"))
"""


def test_a_failed_ingestion_leads_the_reason_and_its_stdout_is_read(tmp_path):
    """Issue 24: the ingestion program fails (traceback on stdout), then the scoring program
    cannot find the predictions: the reason leads with the ingestion's failure and quotes
    its stdout, not "no output on stderr"."""
    bundle = _echo_bundle(tmp_path, NEEDS_PREDICTIONS, INGEST_STDOUT)
    subs = tmp_path / "subs"
    (subs / "bob").mkdir(parents=True)
    (subs / "bob" / "model.py").write_text("class Model: pass\n")
    report = run_bundle(bundle, tmp_path / "out", submissions=subs, feed="all")
    (res,) = report.results
    assert res.status == "Failed" and res.status_details == "program_rc=1"
    lines = res.reason.splitlines()
    assert lines[0] == ("prediction step: the ingestion program exited with code 1; last line of "
                        "its stdout: ValueError: the model has no fit method (then the scoring "
                        "program failed)")
    assert any(line.startswith("then the scoring program exited with code 1; last line of its "
                               "stderr: FileNotFoundError") for line in lines)
    error = (tmp_path / "out/outputs/Stress/bob-1/echo/error.txt").read_text()  # named as the export would
    assert error.startswith("Failed (program_rc=1): prediction step: the ingestion program exited "
                            "with code 1; last line of its stdout: ValueError")
    text = format_report(report)
    assert f"FAILED Stress / bob / echo: program_rc=1\n    {lines[0]}\n" in text
    assert "no output on stderr" not in text


def test_a_note_repeated_over_runs_is_said_once_with_a_count(tmp_path):
    extra_key = ("import json, os, sys\njson.dump({'score': 1.0, 'extra': 2}, "
                 "open(os.path.join(sys.argv[2], 'scores.json'), 'w'))\n")
    bundle = _echo_bundle(tmp_path, extra_key)
    subs = _submissions(tmp_path, **{f"s{i}": "good" for i in range(8)})
    text = format_report(run_bundle(bundle, tmp_path / "out", submissions=subs))
    assert text.count("match no leaderboard column") == 1
    assert ("note   (8 runs) scores.json: key(s) 'extra' match no leaderboard column and are ignored "
            "by Codabench (columns: score).") in text
    assert "    runs: Stress / s0 / echo; Stress / s1 / echo; Stress / s2 / echo; Stress / s3 / echo; " \
           "Stress / s4 / echo; Stress / s5 / echo and 2 more" in text


def test_the_headline_quotes_the_programs_last_line_not_the_hint():
    from metascore.bundle.worker.backend import StepResult
    from metascore.bundle.worker.job import exited

    run = StepResult(exit_code=1, timed_out=False, stdout="", elapsed=0.1, stderr=(
        "Traceback (most recent call last):\nModuleNotFoundError: No module named 'xgboost'\n"
        "metascore: the program needs the Python module 'xgboost', ..."))
    first, *tail = exited("submission", run).splitlines()
    assert first == ("the submission exited with code 1; last line of its stderr: "
                     "ModuleNotFoundError: No module named 'xgboost'")
    assert tail[-1].startswith("metascore: the program needs")  # the hint stays in the tail
    quiet = StepResult(exit_code=2, timed_out=False, stdout="", stderr="", elapsed=0.1)
    assert exited("ingestion program", quiet) == ("the ingestion program exited with code 2 and "
                                                  "wrote nothing on stdout or stderr")
