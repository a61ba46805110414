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
    page = (out / "analysis.html").read_text()
    assert "Top-k rule across the two phases" in page
    chart = page[page.index('aria-label="normalized rank of the winner"'):]
    chart = chart[:chart.index("</svg>")]  # a proportion: its axis spans [0, 1]
    assert re.findall(r'text-anchor="end">([-\d.]+)</text>', chart) == ["0", "0.25", "0.5", "0.75", "1"]


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


def test_default_methods_leave_out_one_the_data_rules_out(tmp_path, capsys):
    """Negative R²: relative_difference (a default method) cannot rank it. Without
    --methods it is left out with a note and the others are compared; named in --methods it
    is an error."""
    rng = np.random.default_rng(3)
    r2 = write_wide(tmp_path / "r2.csv", rng.uniform(-0.5, 0.9, size=(5, 4)))
    out = tmp_path / "a"
    assert main(["analyze", str(r2), "--out", str(out), *FAST]) == 0
    captured = capsys.readouterr()
    note = ("metascore: note: default method relative_difference left out: relative difference "
            "needs non-negative scores, but candidate ")
    assert captured.err.startswith(note), captured.err
    assert "relative_difference" not in captured.out
    data = json.loads((out / "analysis.json").read_text())
    assert data["settings"]["methods"] == ["mean", "median", "average_rank", "success_rate", "copeland"]
    assert list(data["settings"]["methods_left_out"]) == ["relative_difference"]
    assert data["settings"]["notes"][0].startswith("default method relative_difference left out")
    assert "<h2>Notes</h2><ul><li>default method relative_difference left out: " in \
        (out / "analysis.html").read_text()
    assert main(["analyze", str(r2), "--out", str(tmp_path / "b"), "--methods",
                 "mean,relative_difference", *FAST]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("metascore: error: relative difference needs non-negative scores")
    assert len(err.splitlines()) == 1 and not (tmp_path / "b").exists()


def test_fewer_than_three_candidates_skip_the_comparison(tmp_path, capsys):
    """Two candidates: no criteria table (nothing highlighted as best), a sentence saying
    why, and the other parts of the analysis."""
    two = write_wide(tmp_path / "two.csv", np.array([[0.9, 0.8, 0.7], [0.5, 0.85, 0.6]]))
    out = tmp_path / "a"
    assert main(["analyze", str(two), "--methods", "mean,copeland", "--out", str(out), *FAST]) == 0
    why = ("the comparison of ranking methods needs at least 3 candidates and there are 2: with "
           "fewer, the criteria measure the order of a single pair and cannot tell the methods "
           "apart.")
    text = capsys.readouterr().out
    assert f"no comparison table: {why}" in text and "winner_rank" not in text
    data = json.loads((out / "analysis.json").read_text())
    assert data["comparison"] is None and data["settings"]["comparison_note"] == why
    assert set(data["rank_intervals"]) == {"mean", "copeland"}
    page = (out / "analysis.html").read_text()
    assert f"<p>Not computed: {why}</p>" in page
    assert 'class="num best"' not in page and "favours" not in page


def _comparison(tmp_path) -> "MethodComparison":  # noqa: F821
    from metascore import ScoreMatrix
    from metascore.analysis import compare_methods

    rng = np.random.default_rng(0)
    matrix = ScoreMatrix.from_array(rng.normal(size=(6, 5)), [f"c{i}" for i in range(6)])
    return compare_methods(matrix, ["mean", "average_rank", "copeland"], n_trials=20, q=5, r=2)


def _with_table(comp, rows):
    """``comp`` whose criteria table holds ``rows``: {method: [(mean, std) per criterion]}."""
    import dataclasses

    from metascore.analysis.compare import CRITERIA

    table = comp.table.copy()
    for i, method in enumerate(comp.methods):
        for k, (mean, std) in zip(CRITERIA, rows[method]):
            table.loc[i, k], table.loc[i, f"{k}_std"] = mean, std
    return dataclasses.replace(comp, table=table)


def test_the_comparison_says_which_method_it_favours_and_why(tmp_path):
    from metascore.render.comparison_html import render_comparison, verdict

    comp = _comparison(tmp_path)
    clear = _with_table(comp, {
        "mean": [(0.8, 0.05), (0.5, 0.1), (0.3, 0.1), (0.6, 0.1), (0.7, 0.1)],
        "average_rank": [(0.7, 0.05), (0.6, 0.1), (0.2, 0.1), (0.7, 0.1), (0.6, 0.1)],
        "copeland": [(0.9, 0.05), (0.9, 0.1), (0.25, 0.1), (0.9, 0.1), (0.7, 0.1)],
    })
    text = verdict(clear)
    assert text.startswith("The table favours copeland: it is best on winner rank, Condorcet "
                           "rate, stability (judges) and stability (candidates) (4 of the 5 "
                           "criteria that separate the methods).")
    assert ("Its lead exceeds the spread of the resamples on winner rank, Condorcet rate and "
            "stability (judges) and is within the spread on stability (candidates)") in text
    assert "On generalization, mean does better (0.300 against 0.250, within the spread)." in text
    assert "copeland also satisfies the Condorcet criterion and Pareto by construction" in text
    tied = _with_table(comp, {m: [(0.5, 0.1)] * 5 for m in comp.methods})
    assert verdict(tied).startswith("The table favours no method: the methods tie on every criterion")
    assert 'class="num best"' not in render_comparison(tied)  # a tie picks no method
    assert render_comparison(clear).count('class="num best"') == 6  # copeland 4, mean 2 (one tied)
    split = _with_table(comp, {
        "mean": [(0.9, 0.1), (0.5, 0.1), (0.5, 0.1), (0.5, 0.1), (0.5, 0.1)],
        "average_rank": [(0.5, 0.1), (0.9, 0.1), (0.5, 0.1), (0.5, 0.1), (0.5, 0.1)],
        "copeland": [(0.5, 0.1)] * 5,
    })
    assert verdict(split).startswith("The table favours no single method: mean and average_rank "
                                     "are each best on 1 of the 2 criteria")


def test_the_page_defines_each_criterion_and_keeps_proportions_in_0_1(tmp_path):
    from metascore.render.comparison_html import render_comparison

    comp = _with_table(_comparison(tmp_path), {  # error bars that reach below 0
        m: [(0.1, 0.3), (0.05, 0.2), (-0.2, 0.3), (0.1, 0.3), (0.1, 0.3)] for m in ("mean", "average_rank", "copeland")})
    page = render_comparison(comp)
    for term in ("Winner rank", "Condorcet rate", "Generalization", "Stability (judges)",
                 "Stability (candidates)", "Condorcet, Pareto, Order only"):
        assert f"<dt>{term}</dt><dd>" in page, term
    assert "Kendall&#x27;s W (0 to 1) between 5 rankings, each on a resample of the judges" in page

    def ticks(label):
        chart = page[page.index(f'aria-label="{label} per method"'):]
        chart = chart[:chart.index("</svg>")]
        return re.findall(r'text-anchor="middle">(-?[\d.]+)</text>', chart)

    for proportion in ("Winner rank", "Condorcet rate", "Stability (judges)"):  # Kendall's W
        assert ticks(proportion) == ["0", "0.25", "0.5", "0.75", "1"], proportion
    for correlation in ("Generalization", "Stability (candidates)"):  # Spearman: may be < 0
        assert ticks(correlation) == ["-1", "-0.5", "0", "0.5", "1"], correlation


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


def test_topk_on_one_file_cut_into_three_phases(tmp_path, capsys):
    """--topk [disjoint|paper]: the top-k analysis on one matrix cut into three phases in
    every trial (METAGEN 2022's published k* and d/n are the paper's split's), printed with
    its band and d/n and written to both files; an unknown split is a usage error."""
    rng = np.random.default_rng(5)
    path = write_wide(tmp_path / "s.csv", np.linspace(1, 0, 9)[:, None] + rng.normal(size=(9, 24)))
    for split, args in (("disjoint", ["--topk"]), ("paper", ["--topk", "paper"])):
        out = tmp_path / split
        assert main(["analyze", str(path), "--methods", "mean,average_rank", *args,
                     "--out", str(out), *FAST]) == 0
        printed = capsys.readouterr().out
        line = re.search(r"^top-k: mean k\* = [\d.]+ \(best k (\d+), band (\d+)-(\d+); "
                         r"d/n ([\d.]+)\), average_rank k\* = ", printed, re.M)
        assert line, printed
        data = json.loads((out / "analysis.json").read_text())
        curves = data["top_k"]["mean"]
        assert data["settings"]["topk_split"] == split and curves["split"] == split
        assert curves["mode"] == "split_all" and curves["n_trials"] == 30
        assert int(line[1]) == curves["k_best"] and [int(line[2]), int(line[3])] == curves["k_band"]
        assert float(line[4]) == pytest.approx(curves["d_over_n"], abs=0.005)
        assert "Top-k rule across three phases cut from the judges" in (out / "analysis.html").read_text()
    with pytest.raises(SystemExit) as exc:
        main(["analyze", str(path), "--topk", "thirds", "--out", str(tmp_path / "x")])
    assert exc.value.code == 2
