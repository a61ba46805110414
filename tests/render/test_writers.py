"""Output writers: score-file formats, all-or-nothing writes, publishing order, determinism.

SIGKILL during a write: tests/render/test_publish.py."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
import yaml
from hypothesis import given, strategies as st

from metascore.cli import main
from metascore.config import parse_config
from metascore.errors import MetascoreError
from metascore.render import publish, writers
from metascore.render.publish import write_files
from metascore.render.writers import decimal_literal, scores_json, scores_txt
from metascore.leaderboard import build_leaderboard
from metascore.readers.configured import load_scores

from shared_competition import CONFIG, FIXTURE


@pytest.fixture(scope="module")
def lb():
    config = parse_config(CONFIG)
    table = load_scores(config.input, FIXTURE, development=config.phases.development)
    return build_leaderboard(table, config)


def test_scores_files():
    scores = {"a": 2.0, "b": -1 / 3, "tiny": 1e-5, "big": 12345.5}
    assert json.loads(scores_json(scores)) == scores
    txt = scores_txt(scores)
    assert txt == "a: 2\nb: -0.3333333333333333\ntiny: 0.00001\nbig: 12345.5\n"
    assert yaml.safe_load(txt) == scores  # Codabench v2 (YAML) reads numbers, not strings
    assert {k: float(v) for k, v in (line.split(":") for line in txt.splitlines())} == scores


@pytest.mark.parametrize("value, message", [
    (math.nan, r"score 'k' is nan; scores must be finite"),
    (math.inf, r"score 'k' is inf"),
    (1e10, r"at most \|value\| < 1e10"),
    ("0.5", r"not a number"),
    (True, r"not a number"),
])
def test_bad_scores_are_errors(value, message):
    with pytest.raises(MetascoreError, match=message):
        scores_json({"k": value})
    with pytest.raises(MetascoreError, match=message):
        scores_txt({"k": value})


@given(st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False))
def test_decimal_literal_round_trips(x):
    text = decimal_literal(x)
    assert "e" not in text.lower() and float(text) == x
    assert yaml.safe_load(f"k: {text}")["k"] == x


def test_write_outputs(tmp_path, lb):
    paths = writers.write_outputs(tmp_path / "out", lb)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(writers.OUTPUT_FILES)
    assert [p.name for p in paths] == list(writers.OUTPUT_FILES)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out" / "leaderboard.csv").read_text())))
    assert [(r["position"], r["candidate"], r["qualified"], r["is_baseline"]) for r in rows] == [
        ("1", "dave-105", "true", "false"), ("2", "alice-101", "true", "false"),
        ("", "baseline_rf", "", "true"), ("", "baseline_knn", "", "true"),
        ("", "bob-103", "false", "false"), ("", "carol-104", "false", "false")]
    assert rows[0]["judge:wine/mae"] == "0.395" and rows[0]["judge_rank:digits/f1"] == "1.5"
    assert rows[-1]["judge:wine/mae"] == ""  # carol's failed task
    doc = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    assert doc["signature"]["method"] == "average_rank" and doc["signature"]["seed"] == 12345
    assert doc["winner"] == "dave-105"
    assert doc["filter"]["qualified"] == ["dave-105", "alice-101"]
    assert doc["filter"]["excluded"]["bob-103"].startswith("development average rank 4.5")
    assert doc["margins"]["condorcet_winner"] == "dave-105"
    assert doc["input"]["path"] == "long.csv" and doc["input"]["format"] == "long"


def test_outputs_are_deterministic(tmp_path, lb):
    config = parse_config(CONFIG)
    table = load_scores(config.input, FIXTURE, development=config.phases.development)
    again = build_leaderboard(table.with_frame(table.frame.iloc[::-1].reset_index(drop=True)), config)
    a, b = writers.render_outputs(lb), writers.render_outputs(again)
    assert a == b


NEW = {"scores.json": "{}", "scores.txt": "", "a.csv": "new a", "b.csv": "new b",
       "c.html": "new c"}


OLD = {"scores.json": '{"old": 1}', "scores.txt": "old: 1\n", "a.csv": "old a",
       "b.csv": "old b"}


@pytest.mark.parametrize("before", [
    {"scores.json": '{"old": 1}', "a.csv": "old a", "b.csv": "old b"}, OLD],
    ids=["no-scores.txt", "full"])
@pytest.mark.parametrize("fail_at", [1, 2, 4, 5])
def test_all_or_nothing(tmp_path, monkeypatch, fail_at, before):
    """A failure while publishing leaves every previous file as it was and no new one."""
    out = tmp_path / "out"
    out.mkdir()
    for name, text in before.items():
        (out / name).write_text(text)
    published = []
    real = publish.os.replace

    def flaky(src, dst):
        if Path(dst).parent == out and Path(src).parent != out:
            published.append(Path(dst).name)
            if len(published) == fail_at:
                raise OSError("disk full")
        real(src, dst)

    monkeypatch.setattr(publish.os, "replace", flaky)
    with pytest.raises(OSError, match="disk full"):
        write_files(out, NEW)
    assert {p.name: p.read_text() for p in out.iterdir()} == before  # nothing new, no temp


@pytest.mark.parametrize("fail_at", [1, 2])
def test_a_failed_withdrawal_restores_the_scores(tmp_path, monkeypatch, fail_at):
    out = tmp_path / "out"
    out.mkdir()
    for name, text in OLD.items():
        (out / name).write_text(text)
    withdrawn = []
    real = publish.os.replace

    def flaky(src, dst):
        if Path(src).parent == out:
            withdrawn.append(Path(src).name)
            if len(withdrawn) == fail_at:
                raise OSError("read-only")
        real(src, dst)

    monkeypatch.setattr(publish.os, "replace", flaky)
    with pytest.raises(OSError, match="read-only"):
        write_files(out, NEW)
    assert {p.name: p.read_text() for p in out.iterdir()} == OLD


def test_score_files_are_withdrawn_first_and_published_last(tmp_path, monkeypatch):
    """The old scores go before any new file lands; scores.txt, then scores.json come last."""
    out = tmp_path / "out"
    out.mkdir()
    for name, text in OLD.items():
        (out / name).write_text(text)
    moves = []
    real = publish.os.replace

    def record(src, dst):
        src, dst = Path(src), Path(dst)
        moves.append(("withdraw" if src.parent == out else "publish",
                      dst.name if dst.parent == out else src.name))
        real(src, dst)

    monkeypatch.setattr(publish.os, "replace", record)
    write_files(out, NEW)
    assert moves == [("withdraw", "scores.json"), ("withdraw", "scores.txt"),
                     ("publish", "a.csv"), ("publish", "b.csv"), ("publish", "c.html"),
                     ("publish", "scores.txt"), ("publish", "scores.json")]
    assert {p.name: p.read_text() for p in out.iterdir()} == NEW


def test_scores_json_is_published_last(tmp_path, monkeypatch):
    published = []
    real = publish.os.replace
    monkeypatch.setattr(publish.os, "replace",
                        lambda src, dst: (published.append(Path(dst).name), real(src, dst)))
    write_files(tmp_path / "out", NEW)
    assert published[-2:] == ["scores.txt", "scores.json"] and sorted(published) == sorted(NEW)
    assert {p.name: p.read_text() for p in (tmp_path / "out").iterdir()} == NEW


def test_files_of_others_are_left_alone(tmp_path):
    """Other files, and score files not in the new set, stay as they are."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "scores.json").write_text('{"theirs": 1}')
    (out / "program.log").write_text("theirs")
    write_files(out, {"analysis.json": "{}"})
    assert {p.name: p.read_text() for p in out.iterdir()} == {
        "scores.json": '{"theirs": 1}', "program.log": "theirs", "analysis.json": "{}"}


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", ".metascore-staging-x"])
def test_unsafe_names_are_refused(tmp_path, name):
    with pytest.raises(MetascoreError, match="refusing to write"):
        write_files(tmp_path, {name: "x"})
    assert list(tmp_path.iterdir()) == []


def test_the_platform_metadata_file_is_never_written(tmp_path):
    with pytest.raises(MetascoreError, match="refusing to write 'metadata'"):
        write_files(tmp_path, {"metadata": "x"})


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600), (0o000, 0o644),
                                        (0o002, 0o644)],
                         ids=["umask022", "umask027", "umask077", "umask000", "umask002"])
def test_output_files_get_the_umask_mode(tmp_path, umask, mask, mode):
    # like open(): 0666 less the umask, not the temporary file's 0600; never writable by the
    # group or others (issue 49, 4: under umask 000 any local user could change the ranking)
    umask(mask)
    cfg = tmp_path / "metascore.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG))
    assert main(["rank", "--config", str(cfg), "--input", str(FIXTURE), "--output",
                 str(tmp_path / "out")]) == 0
    written = sorted((tmp_path / "out").iterdir())
    assert [p.name for p in written] == sorted(writers.OUTPUT_FILES)
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in written} == {
        p.name: oct(mode) for p in written}
    write_files(tmp_path / "out", {"scores.txt": "a: 1\n"})  # replacing keeps the rule
    assert (tmp_path / "out" / "scores.txt").stat().st_mode & 0o777 == mode


def test_file_mode_without_proc(tmp_path, umask, monkeypatch):
    # where /proc/self/status is missing (macOS), the umask is read by setting it back
    umask(0o027)

    def no_proc(*args, **kwargs):
        raise FileNotFoundError("/proc/self/status")

    monkeypatch.setattr(writers, "open", no_proc, raising=False)
    write_files(tmp_path, {"scores.txt": "a: 1\n"})
    assert (tmp_path / "scores.txt").stat().st_mode & 0o777 == 0o640
    assert publish.os.umask(0o027) == 0o027  # and left unchanged


def test_rank_with_config_matches_the_program(tmp_path, capsys):
    cfg = tmp_path / "metascore.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG))
    assert main(["rank", "--config", str(cfg), "--input", str(FIXTURE), "--output",
                 str(tmp_path / "a")]) == 0
    assert main(["rank", "--config", str(cfg), "--input", str(FIXTURE / "long.csv"),
                 "--output", str(tmp_path / "b")]) == 0
    for name in writers.OUTPUT_FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert "[*] winner: dave-105" in capsys.readouterr().out
    assert main(["rank", "--config", str(cfg), "--input", str(FIXTURE), "--output",
                 str(tmp_path / "c"), "--seed", "7"]) == 0
    doc = json.loads((tmp_path / "c" / "leaderboard.json").read_text())
    assert doc["signature"]["seed"] == 7
    assert main(["rank", "--config", str(cfg)]) == 1
    assert "--config needs --input" in capsys.readouterr().err


def test_judges_named_like_output_columns_get_their_own_namespace(tmp_path):
    """Judges 'score', 'rank', 'reason' never overwrite the published columns."""
    values = {"A": (1, 9, 2), "B": (3, 1, 1), "C": (2, 2, 2)}  # means 4, 5/3, 2
    lines = ["phase,candidate,task,metric,value"] + [
        f"Development,{c},{task},,{v}" for c, row in values.items()
        for task, v in zip(("score", "rank", "reason"), row)]
    (tmp_path / "l.csv").write_text("\n".join(lines) + "\n")
    config = parse_config({"input": {"path": "l.csv"}, "phases": {"final": None},
                           "ranking": {"method": "mean"}, "analysis": {"bootstrap": 0}})
    table = load_scores(config.input, tmp_path, development=config.phases.development)
    files = writers.render_outputs(build_leaderboard(table, config))
    header = next(csv.reader(io.StringIO(files["leaderboard.csv"])))
    assert len(header) == len(set(header))
    rows = list(csv.DictReader(io.StringIO(files["leaderboard.csv"])))
    assert [(r["candidate"], float(r["score"]), r["judge:score"]) for r in rows] == [
        ("A", 4.0, "1.0"), ("C", 2.0, "2.0"), ("B", pytest.approx(5 / 3), "3.0")]
    assert rows[0]["judge_rank:rank"] == "1.0" and rows[0]["rank"] == "1.0"
    doc = json.loads(files["leaderboard.json"])
    row = doc["final"]["rows"][0]
    assert row["score"] == 4.0 and row["judges"] == {"score": 1.0, "rank": 9.0, "reason": 2.0}
    assert row["judge_ranks"]["rank"] == 1.0


def test_margins_and_heatmap_of_a_large_pool_are_capped(lb, monkeypatch):
    """The margin matrix grows with the square of the pool, the heatmap with pool x judges:
    the outputs keep the best-ranked candidates and the first judges."""
    from metascore.render import report

    monkeypatch.setattr(writers, "MARGINS_LIMIT", 1)
    monkeypatch.setattr(report, "MARGINS_SHOWN", 1)
    monkeypatch.setattr(report, "REPORT_JUDGES", 1)
    files = writers.render_outputs(lb)
    assert "The first 1 of the 3 judges are shown" in files["detailed_results.html"]
    margins = json.loads(files["leaderboard.json"])["margins"]
    assert margins["candidates"] == [lb.final.ranked[0].candidate] and margins["margins"] == [[0.0]]
    assert margins["n_candidates"] == len(lb.margins.candidates) == 2
    assert "The 1 best-ranked of the 2 candidates are shown" in files["detailed_results.html"]
