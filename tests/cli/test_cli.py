"""The command line: tables, JSON, one-line errors and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from metascore.cli import main
from repo_paths import ROOT, TESTS

WIDE = "candidate,acc,mae\nA,0.9,0.2\nB,0.8,0.1\nC,0.7,0.3\n"
LONG = "candidate,task,metric,value\nA,t1,acc,0.9\nA,t2,mae,0.2\nB,t1,acc,0.8\nB,t2,mae,0.1\n"


@pytest.fixture
def wide(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text(WIDE)
    return path


def test_rank_table(wide, capsys):
    assert main(["rank", str(wide), "--method", "average_rank", "--lower-is-better", "mae"]) == 0
    out = capsys.readouterr().out
    assert "average_rank" in out and "signature:" in out
    lines = [line.split() for line in out.splitlines()[1:4]]
    # A and B both average rank 1.5: they share position 1, ordered by candidate id
    # the average rank is shown as itself, not as its negative score
    assert out.splitlines()[0].split() == ["position", "rank", "candidate", "average_rank"]
    assert [(line[0], line[2], line[3]) for line in lines] == [("1", "A", "1.5"), ("1", "B", "1.5"), ("3", "C", "3")]


def test_rank_json(wide, capsys):
    assert main(["rank", str(wide), "-m", "copeland", "-l", "mae", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["signature"]["method"] == "copeland"
    assert payload["signature"]["seed"] == 12345
    assert [row["candidate"] for row in payload["rows"]][2] == "C"


def test_rank_long_csv_with_params_and_weights(tmp_path, capsys):
    path = tmp_path / "long.csv"
    path.write_text(LONG)
    assert main(["rank", str(path), "-m", "success_rate", "-p", "ties=half", "-l", "t2/mae", "-w", "t2/mae=2", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["signature"]["params"] == {"ties": "half"}


@pytest.mark.parametrize(
    "args, message",
    [
        (["rank", "missing.csv"], "missing.csv does not exist"),
        (["rank", "{wide}", "-l", "maee"], r"no judge 'maee' \(did you mean 'mae'\?\)"),
        (["rank", "{wide}", "-p", "foo=1"], "method 'average_rank' has no parameter 'foo'"),
        (["rank", "{wide}", "-m", "relative_difference", "-w", "acc=-1"], "weights must be >= 0"),
        (["rank", "{single}"], "ranking needs at least 2 candidates"),
        (["rank", "{dup}"], r"candidate 'A' has two scores .*dup.csv, line 2 and .*dup.csv, line 3"),
        (["rank", "{inf}"], r"inf.csv, line 2, column 'acc': score 'inf' is infinite"),
        (["rank", "{long}"], r"holds phases \['dev', 'final'\]; choose one with --phase"),
        (["rank", "{long}", "--phase", "fnal"], r"no phase 'fnal' \(did you mean 'final'\?\)"),
        (["rank", "{neg}", "-m", "relative_difference"], "relative difference needs non-negative scores"),
    ],
)
def test_errors_are_one_line_with_exit_1(tmp_path, wide, capsys, args, message):
    files = {
        "wide": wide,
        "single": "candidate,acc\nA,1\n",
        "dup": "candidate,acc\nA,1\nA,2\n",
        "inf": "candidate,acc\nA,inf\nB,2\n",
        "neg": "candidate,acc\nA,-1\nB,2\n",
        "long": "phase,candidate,task,metric,value\ndev,A,t,acc,1\ndev,B,t,acc,2\nfinal,A,t,acc,1\n",
    }
    paths = {}
    for key, content in files.items():
        if isinstance(content, str):
            paths[key] = tmp_path / f"{key}.csv"
            paths[key].write_text(content)
        else:
            paths[key] = content
    argv = [a.format(**paths) if a.startswith("{") else a for a in args]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("metascore: error: ")
    import re

    assert re.search(message, err)


def test_unknown_method_is_a_usage_error(wide, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["rank", str(wide), "-m", "borda"])
    assert exc.value.code == 2
    assert "invalid choice: 'borda'" in capsys.readouterr().err


def test_rank_one_phase_of_an_export(capsys):
    from pathlib import Path

    export = TESTS / "data" / "competition" / "results.json"
    assert main(["rank", str(export), "--phase", "Final", "-m", "copeland",
                 "-l", "wine/mae", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert len(rows) == 7


def test_rank_preflib_votes(tmp_path, capsys):
    votes = tmp_path / "votes.soc"
    votes.write_text(
        "# FILE NAME: votes.soc\n# DATA TYPE: soc\n# NUMBER ALTERNATIVES: 3\n"
        "# NUMBER VOTERS: 5\n# NUMBER UNIQUE ORDERS: 2\n"
        "# ALTERNATIVE NAME 1: A\n# ALTERNATIVE NAME 2: B\n# ALTERNATIVE NAME 3: C\n"
        "2: 1,2,3\n3: 3,1,2\n"
    )
    assert main(["rank", str(votes), "-m", "copeland", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert rows[0]["candidate"] == "C"  # the SCO warm-up profile's Condorcet winner


def test_rank_preflib_zero_count_orders_one_note(tmp_path, capsys):
    """Orders with count 0 (PrefLib's Netflix files) are skipped, with one note on stderr."""
    source = TESTS / "data" / "readers" / "zero_counts.soc"
    assert main(["rank", str(source), "-m", "copeland", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        f"metascore: note: {source}: ignored 3 order(s) with vote count 0 (line 15 and 2 more); "
        "they carry no vote."
    ]
    rows = json.loads(out)["rows"]
    assert rows[0]["candidate"] == "Alien"
    # the same ranking as the file without those lines
    kept = [line for line in source.read_text().splitlines() if not line.startswith("0:")]
    clean = tmp_path / "clean.soc"
    clean.write_text("\n".join(kept).replace("UNIQUE ORDERS: 7", "UNIQUE ORDERS: 4") + "\n")
    assert main(["rank", str(clean), "-m", "copeland", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert json.loads(out)["rows"] == rows


def test_rank_preflib_negative_count_is_one_line_error(tmp_path, capsys):
    votes = tmp_path / "neg.soc"
    votes.write_text("# NUMBER ALTERNATIVES: 2\n3: 1,2\n-1: 2,1\n")
    assert main(["rank", str(votes), "-m", "copeland"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"metascore: error: {votes}, line 3: vote count '-1' must be a whole number >= 0 (the "
        "number of voters who cast this order)."
    ]


def test_methods_lists_the_registry(capsys):
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    assert "copeland" in out and "success_rate" in out and "ties='zero'" in out


def test_python_dash_m_entry_point(wide):
    proc = subprocess.run(
        [sys.executable, "-m", "metascore", "rank", str(wide), "-m", "mean"],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "candidate" in proc.stdout


def test_a_bug_gets_a_readable_line_before_the_traceback(wide, capsys, monkeypatch):
    from metascore.cli import rank as rank_commands

    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(rank_commands, "rank", broken)
    assert main(["rank", str(wide)]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[0] == (
        "metascore: internal error: ZeroDivisionError: boom (a bug in metascore; please report "
        "it with the traceback below)"
    )
    assert "Traceback" in err


@pytest.mark.parametrize("weight", ["acc=abc", "acc=true", "acc=null", "acc=[1]", "acc=nan", "acc"])
def test_a_weight_that_is_not_a_number_is_a_usage_error(wide, capsys, weight):
    with pytest.raises(SystemExit) as exc:
        main(["rank", str(wide), "-w", weight])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "argument --weight/-w" in err and "Traceback" not in err


def test_decimal_cli_weights_are_used(wide, capsys):
    assert main(["rank", str(wide), "-w", "acc=0.5", "--json"]) == 0


def test_closed_pipe_ends_quietly(tmp_path):
    """`metascore rank big.csv | head`: no "Broken pipe" error line when the reader stops."""
    big = tmp_path / "big.csv"
    lines = ["candidate,a,b"] + [f"c{i:05d},{i % 97},{i % 89}" for i in range(3000)]
    big.write_text("\n".join(lines) + "\n")
    src = str(ROOT / "src")
    proc = subprocess.Popen(
        [sys.executable, "-m", "metascore", "rank", str(big), "-m", "mean"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env={**__import__("os").environ, "PYTHONPATH": src},
    )
    first = proc.stdout.readline()
    proc.stdout.close()  # what `head -1` does
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert first.split()[:2] == [b"position", b"rank"]
    assert "Broken pipe" not in err and "Traceback" not in err, err
    assert err == ""


@pytest.mark.parametrize("flags, named", [
    (["-m", "copeland"], "-m/--method (set ranking.method)"),
    (["--missing", "worst"], "--missing (set ranking.missing)"),
    (["--format", "long"], "--format (set input.format)"),
    (["--phase", "Final"], "--phase"),
    (["-p", "ties=half"], "-p/--param (set ranking.params)"),
    (["-w", "a=2"], "-w/--weight"),
    (["-l", "mae"], "-l/--lower-is-better"),
    (["--json"], "--json"),
    (["--exclude", "x"], "--exclude"),
])
def test_config_mode_refuses_quick_mode_flags(tmp_path, capsys, flags, named):
    config = tmp_path / "metascore.yaml"
    config.write_text("phases: {final: null}\n")
    code = None
    try:
        main(["rank", "--config", str(config), "--input", str(tmp_path), "--output",
              str(tmp_path / "out"), *flags])
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert named in err and "only --input, --output and --seed apply" in err
    assert not (tmp_path / "out").exists()


def test_help_says_which_flags_config_mode_takes(capsys):
    with pytest.raises(SystemExit):
        main(["rank", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "only --input, --output and --seed apply" in text
