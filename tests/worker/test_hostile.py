"""Hostile submissions (issue 12) on every backend: each is stopped with the right status and
message, the rest of the competition and its meta phase complete, the runner's own memory
stays small and ``--out`` stays under the caps.

The bundle ``tests/data/bundles/hostile`` holds bounded misbehaving submissions: a 200 MB
stdout flood, an infinite loop, a 1 GB memory hog, a storm of 120 processes, a 100 MB disk
filler. The runner runs in a child process so that its peak resident memory is its own.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bundle_backends import BACKENDS, options
from metascore.bundle.worker.limits import Limits, format_size, limits_from_args, parse_size, tree_size
from metascore.bundle.worker.logs import CUT_NOTE, CappedLog
from metascore.bundle.worker.job import TIME_LIMIT_MESSAGE
from metascore.cli import main
from repo_paths import ROOT, TESTS

BUNDLE = TESTS / "data" / "bundles" / "hostile"
SRC = ROOT / "src"
LIMITS = "Limits(memory=256 << 20, processes=50, disk=20 << 20, log=1 << 20)"
#: The runner's own peak: VmHWM, of this program only (ru_maxrss keeps the high-water mark of
#: the process it was forked from across exec: a test session grown past the bound).
RUNNER = """
import json, re, sys
from metascore.bundle.worker.limits import Limits
from metascore.bundle.runner import run_bundle
report = run_bundle(sys.argv[1], sys.argv[2], limits={limits}, **json.loads(sys.argv[3]))
peak = int(re.search(r"VmHWM:\\s*(\\d+) kB", open("/proc/self/status").read()).group(1)) * 1024
print(json.dumps({{"peak": peak, "warnings": report.warnings}}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_hostile_submissions_are_stopped_and_the_competition_completes(backend, tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER.format(limits=LIMITS), str(BUNDLE), str(out), json.dumps(options(backend))],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    measured = json.loads(proc.stdout.splitlines()[-1])
    summary = json.loads((out / "run_summary.json").read_text())
    got = {r["candidate"]: r for r in summary["results"]}

    assert got["good"]["status"] == "Finished" and got["good"]["scores"] == {"score": 0.9}
    assert got["flood"]["status"] == "Finished" and got["flood"]["scores"] == {"score": 0.5}, got["flood"]["reason"]
    flood_log = Path(got["flood"]["run_dir"]) / "prediction" / "stdout.txt"
    assert flood_log.stat().st_size <= (1 << 20) + 300  # head + tail + the one-line note
    text = flood_log.read_text()
    assert "bytes of this log were cut here" in text and text.count("[metascore:") == 1
    assert text.startswith("flood flood") and text.rstrip().endswith("flood")
    assert CUT_NOTE.split("{cut}")[0].strip() in text

    assert got["loop"]["status_details"] == TIME_LIMIT_MESSAGE.format(limit=25)
    expected = {
        "memhog": "Memory limit exceeded: the job used more than 256m of memory (change it with --memory)",
        "forkstorm": "Process limit exceeded: the job started more than 50 processes at once "
                     "(change it with --max-processes)",
        "diskfill": "Disk limit exceeded: the job wrote more than 20m under its output "
                    "(change it with --disk-limit)",
    }
    for name, message in expected.items():
        assert (got[name]["status"], got[name]["status_details"]) == ("Failed", message), got[name]["reason"]
    # the disk filler's output is not kept; nothing of a job is over the caps
    assert not list((Path(got["diskfill"]["run_dir"]) / "prediction" / "output").iterdir())
    assert tree_size([out]) < 25 << 20

    assert summary["meta"]["status"] == "Finished", summary["meta"]["reason"]
    assert (out / "final" / "leaderboard.csv").is_file()
    assert measured["peak"] < 300 << 20, f"runner peak {measured['peak'] >> 20} MB"


def test_capped_log_keeps_head_and_tail_with_one_note(tmp_path):
    log = CappedLog(tmp_path / "log.txt", cap=10)
    for piece in (b"abc", b"defgh", b"ijklmnopqrstuvwxyz", b"0123"):
        log.write(piece)
    log.close()
    cut = 30 - 10
    assert (tmp_path / "log.txt").read_bytes() == (
        b"abcde" + CUT_NOTE.format(cut=cut, head=5, tail=5).encode() + b"z0123")
    small = CappedLog(tmp_path / "small.txt", cap=10)
    small.write(b"0123456789")
    small.close()
    assert (tmp_path / "small.txt").read_bytes() == b"0123456789"  # nothing cut, no note


def test_limit_options_parse_sizes_and_zero_turns_a_limit_off(tmp_path, capsys):
    assert parse_size("2g") == 2 << 30 and parse_size("512m") == 512 << 20 and format_size(5 << 30) == "5g"
    with pytest.raises(ValueError, match="'lots' is not a size"):
        parse_size("lots")
    code = main(["bundle", "run", str(BUNDLE), "--out", str(tmp_path / "out"), "--memory", "lots"])
    assert code == 1 and "--memory: 'lots' is not a size" in capsys.readouterr().err
    off = limits_from_args(argparse.Namespace(memory="0", max_processes=0, disk_limit="0", log_limit="1m"))
    assert off == Limits(memory=None, processes=None, disk=None, log=1 << 20)
