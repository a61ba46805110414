"""``metascore analyze``: table, analysis.json, self-contained analysis.html, bad input."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from metascore.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
FAST = ["--trials", "30", "--q", "6", "--r", "2", "--quiet"]


def write_wide(path: Path, values: np.ndarray, names: list[str] | None = None) -> Path:
    names = names or [f"algo{i}" for i in range(len(values))]
    lines = ["candidate," + ",".join(f"task{j}" for j in range(values.shape[1]))]
    lines += [f"{c}," + ",".join(f"{v:.4f}" for v in row) for c, row in zip(names, values)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def scores(tmp_path) -> Path:
    rng = np.random.default_rng(0)
    v = np.arange(7, 0, -1.0)[:, None] * 0.3 + rng.normal(size=(7, 10))
    return write_wide(tmp_path / "dev.csv", v + 5)


def test_analyze_prints_the_table_and_writes_both_files(scores, tmp_path, capsys):
    out = tmp_path / "report"
    code = main(["analyze", str(scores), "--methods", "average_rank,copeland,kemeny_young,epp",
                 "--out", str(out), "--seed", "1", *FAST])
    assert code == 0
    text = capsys.readouterr().out
    assert "7 candidates x 10 judges, seed 1" in text and "Kendall's W of the judges" in text
    for name in ("average_rank", "copeland", "kemeny_young", "epp"):
        assert re.search(rf"^{name}\s+\d\.\d{{3}} ± \d\.\d{{3}}", text, re.M), name
    assert "axes: winner rank candidates, Condorcet rate candidates, generalization both" in text
    data = json.loads((out / "analysis.json").read_text())
    rows = {r["method"]: r for r in data["comparison"]["rows"]}
    assert rows["copeland"]["condorcet"] is True and rows["epp"]["condorcet"] is False
    assert data["settings"]["seed"] == 1 and data["settings"]["n_trials"] == 30
    assert set(data["rank_intervals"]) == set(rows) and data["top_k"] is None
    assert data["comparison"]["criteria"]["stability_candidates"]["concordance"] == "spearman"
    page = (out / "analysis.html").read_text()
    assert "<script" not in page.lower()
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}
    assert not re.findall(r"""(?:src|href)\s*=""", page, re.I)
    for title in ("Comparison of the ranking methods", "How many judges are enough?",
                  "Rank intervals per method", 'aria-label="Winner rank per method"'):
        assert title in page
    assert "Top-k rule" not in page


def test_two_jobs_write_the_same_files_as_one(scores, tmp_path):
    args = ["analyze", str(scores), "--methods", "median,schulze", *FAST]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b"), "--jobs", "2"]) == 0
    for name in ("analysis.json", "analysis.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_final_phase_adds_the_top_k_analysis(scores, tmp_path):
    rng = np.random.default_rng(1)
    final = write_wide(tmp_path / "final.csv", np.arange(6, 0, -1.0)[:, None] + rng.normal(size=(6, 8)),
                       [f"algo{i}" for i in range(1, 7)])
    out = tmp_path / "r"
    assert main(["analyze", str(scores), "--final", str(final), "--methods", "average_rank",
                 "--out", str(out), *FAST]) == 0
    data = json.loads((out / "analysis.json").read_text())
    curves = data["top_k"]["average_rank"]
    assert curves["n_candidates"] == 6 and len(curves["curves"]["meta_test"]) == 6
    assert data["settings"]["final"]["shared_candidates"] == 6
    assert "Top-k rule across the two phases" in (out / "analysis.html").read_text()


def test_resamples_without_a_usable_judge_are_skipped_and_noted(tmp_path, capsys):
    # A has no score on task1: a generalization resample (candidates, then judges) drawing
    # only A and only task1 has no usable judge; it crashed with an internal IndexError
    scores = tmp_path / "holes.csv"
    scores.write_text("candidate,task0,task1\nA,1,\nB,2,3\nC,3,1\n")
    args = ["analyze", str(scores), "--trials", "200", "--q", "5", "--r", "2", "--methods",
            "mean", "--seed", "1", "--quiet"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    data = json.loads((tmp_path / "a" / "analysis.json").read_text())
    notes = data["comparison"]["criteria"]["generalization"]["notes"]
    no_judge, no_oob = (int(re.match(r"(\d+) of 200 resamples", n).group(1)) for n in notes)
    assert "kept no usable judge" in notes[0] and "no out-of-bag judge" in notes[1]
    assert no_judge > 0 and data["settings"]["notes"] == [f"generalization: {n}" for n in notes]
    assert len(err) == 1 and err[0].startswith("metascore: note: skipped resamples without a "
                                               "usable judge"), err
    assert f"generalization {no_judge + no_oob} of 200;" in err[0]
    html = (tmp_path / "a" / "analysis.html").read_text()
    assert "<h2>Notes</h2><ul><li>generalization: " in html and "kept no usable judge" in html
    assert main([*args, "--out", str(tmp_path / "b"), "--jobs", "2"]) == 0
    assert capsys.readouterr().err.strip().splitlines() == err
    for name in ("analysis.json", "analysis.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


@pytest.mark.parametrize("case, message", [
    ("unknown_method", "unknown ranking method 'kemeny'"),
    ("one_candidate", "at least 2 candidates"),
    ("no_shared", "the two phases share 0 candidate(s)"),
    ("bad_param", "--param 'copeland.ties=half'"),
    ("generalization_axis", "must resample the judges"),
])
def test_bad_input_one_line_exit_1_nothing_written(scores, tmp_path, capsys, case, message):
    out = tmp_path / "out"
    args = ["analyze", str(scores), "--out", str(out), *FAST]
    if case == "unknown_method":
        args += ["--methods", "mean,kemeny"]
    elif case == "one_candidate":
        args[1] = str(write_wide(tmp_path / "one.csv", np.ones((1, 3))))
    elif case == "no_shared":
        other = write_wide(tmp_path / "other.csv", np.ones((3, 3)), ["x", "y", "z"])
        args += ["--final", str(other)]
    elif case == "bad_param":
        args += ["--methods", "mean", "--param", "copeland.ties=half"]
    else:
        args += ["--axis-generalization", "candidates"]
    assert main(args) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("metascore: error:") and len(err.splitlines()) == 1, err
    assert message in err
    assert not out.exists()


def test_help_lists_the_axes_and_jobs(capsys):
    with pytest.raises(SystemExit):
        main(["analyze", "--help"])
    text = capsys.readouterr().out
    for option in ("--axis-winner-rank", "--axis-condorcet-rate", "--axis-generalization",
                   "--jobs", "--backend", "--quiet", "--final"):
        assert option in text


def _chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--no-first-run",
         f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *args],
        capture_output=True, text=True, timeout=90,
    )


@pytest.mark.browser
def test_report_renders_in_chromium(scores, tmp_path):
    if CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail("headless Chromium is missing under CI")
        pytest.skip("headless Chromium is not installed")
    out = tmp_path / "report"
    assert main(["analyze", str(scores), "--methods", "average_rank,copeland",
                 "--out", str(out), *FAST]) == 0
    url = (out / "analysis.html").as_uri()
    dom = _chromium(["--dump-dom", url], tmp_path / "profile1")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "Comparison of the ranking methods" in dom.stdout and "<svg" in dom.stdout
    assert 'aria-label="rank intervals of copeland"' in dom.stdout
    shot = tmp_path / "analysis.png"
    run = _chromium([f"--screenshot={shot}", "--window-size=1280,2400", url], tmp_path / "profile2")
    assert run.returncode == 0, run.stderr[-2000:]
    assert shot.stat().st_size > 20_000  # a real page, not a blank image
    for log in (dom.stderr, run.stderr):
        assert "net::ERR" not in log
