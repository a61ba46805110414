"""Run the scoring and ingestion programs the way the Codabench v2 compute worker does.

The worker runs ``command`` from ``metadata.yaml`` (a string, no shell) with working
directory ``/app/program``, and mounts ``/app/input/{ref,res}``, ``/app/output``,
``/app/input_data`` and ``/app/ingested_program``. Here those are directories under
``tmp_path``; the ``/app/...`` prefixes of the command are replaced by them and
``python3`` by this interpreter.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from repo_paths import ROOT

FIXTURE = ROOT / "tests" / "data" / "competition"
SCORING = ROOT / "scoring_program"
INGESTION = ROOT / "ingestion_program"
OUTPUTS = {"scores.json", "scores.txt", "leaderboard.csv", "leaderboard.json",
           "detailed_results.html"}

CONFIG = """\
input: {path: long.csv}
judges:
  - {task: iris, metric: accuracy}
  - {task: wine, metric: mae, sorting: asc}
  - {task: digits, metric: f1}
selection: {development: best, final: best}
baselines: [organizers]
filter: {rule: beat_baseline, beat: any}
output:
  scores:
    n_qualified: n_qualified
    winner_score: winner_score
    condorcet: winner_is_condorcet
    threshold: threshold_score
    agreement: kendall_w
    stability: stability
"""


def _command(program: Path, mounts: dict[str, Path]) -> list[str]:
    meta = yaml.safe_load((program / "metadata.yaml").read_text())
    assert isinstance(meta["command"], str)  # Codabench v2 needs one string
    argv = shlex.split(meta["command"])
    assert argv[0] == "python3"
    out = [sys.executable]
    for arg in argv[1:]:
        for prefix, path in sorted(mounts.items(), key=lambda kv: -len(kv[0])):
            if arg == prefix or arg.startswith(prefix + "/"):
                arg = str(path) + arg[len(prefix):]
                break
        out.append(arg)
    return out


def _app(tmp_path: Path, program: Path) -> dict[str, Path]:
    app = tmp_path / "app"
    (app / "program").mkdir(parents=True)
    shutil.copytree(program, app / "program", dirs_exist_ok=True)
    for d in ("input/ref", "input/res", "output", "input_data", "ingested_program"):
        (app / d).mkdir(parents=True, exist_ok=True)
    return {f"/app/{d}": app / d for d in ("program", "input", "output", "input_data",
                                           "ingested_program")}


def _run(program: Path, mounts: dict[str, Path], *, sign: bool = True) -> subprocess.CompletedProcess:
    """Run ``program``; the scoring program as ``bundle zip`` fills it (the organizer's public
    key next to score.py) on a results export signed as ``codabench submit`` signs it."""
    if program == SCORING:
        from metascore.signature import PUBLIC_KEY_NAME, organizer_key, public_key_text
        from organizer import sign_as_organizer

        (mounts["/app/program"] / PUBLIC_KEY_NAME).write_text(public_key_text(organizer_key().public))
        if sign and (mounts["/app/input"] / "res").is_dir():
            sign_as_organizer(mounts["/app/input"])
    return subprocess.run(
        _command(program, mounts), cwd=mounts["/app/program"], capture_output=True,
        text=True, timeout=120,
    )


def test_scoring_program_on_the_fixture(tmp_path, umask):
    m = _app(tmp_path, SCORING)
    (m["/app/input"] / "ref" / "metascore.yaml").write_text(CONFIG)
    shutil.copy(FIXTURE / "long.csv", m["/app/input"] / "res" / "long.csv")
    umask(0o022)  # the program inherits it
    proc = _run(SCORING, m)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "[*] winner: dave-105" in proc.stdout
    out = m["/app/output"]
    assert {p.name for p in out.iterdir()} == OUTPUTS  # no metadata, one HTML file
    # readable by a web server or a colleague, like any file open() creates
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in out.iterdir()} == {
        name: "0o644" for name in OUTPUTS}
    scores = json.loads((out / "scores.json").read_text())
    config = yaml.safe_load(CONFIG)
    # the keys a bundle's competition.yaml columns must declare
    assert set(scores) == set(config["output"]["scores"])
    assert scores["n_qualified"] == 2
    assert scores["condorcet"] == 1
    assert scores["winner_score"] == pytest.approx(7 / 6)  # the average rank, as shown
    assert scores["threshold"] == pytest.approx(-11 / 3)
    # pool {dave, alice}, ranks 1/2, 1/2, 1.5/1.5: S = 1 + 1, W = 12 S / (9 * 6 - 3 * 6)
    assert scores["agreement"] == pytest.approx(2 / 3)
    assert 0 < scores["stability"] <= 1
    # scores.txt: what both platforms parse (YAML for v2, split on ':' for v1)
    txt = (out / "scores.txt").read_text()
    assert yaml.safe_load(txt) == pytest.approx(scores)
    for line in txt.splitlines():
        key, value = line.split(":")
        assert value.startswith(" ") and "e" not in value.lower()
        assert float(value) == pytest.approx(scores[key])
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["signature"]["method"] == "average_rank"
    assert board["signature"]["seed"] == 12345
    assert board["analysis"]["rank_uncertainty"]["n_trials"] == 200
    assert board["final"]["rows"][0]["rank_low"] == 1


def test_ingestion_then_scoring(tmp_path, umask):
    """Ingestion reads the submitted outputs tree; scoring reads its canonical table."""
    m = _app(tmp_path, INGESTION)
    shutil.copytree(FIXTURE / "tree", m["/app/ingested_program"], dirs_exist_ok=True)
    (m["/app/input_data"] / "metascore.yaml").write_text(CONFIG.replace("long.csv", "."))
    umask(0o022)
    proc = _run(INGESTION, m)
    assert proc.returncode == 0, proc.stderr
    long_csv = m["/app/output"] / "metascore_long.csv"
    assert long_csv.is_file()
    assert long_csv.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in m["/app/output"].iterdir()] == ["metascore_long.csv"]

    s = _app(tmp_path / "scoring", SCORING)
    (s["/app/input"] / "ref" / "metascore.yaml").write_text(CONFIG)
    shutil.copy(long_csv, s["/app/input"] / "res" / "metascore_long.csv")
    proc = _run(SCORING, s)
    assert proc.returncode == 0, proc.stderr
    scores = json.loads((s["/app/output"] / "scores.json").read_text())
    assert scores["n_qualified"] == 2
    assert scores["winner_score"] == pytest.approx(7 / 6)  # the average rank, as shown


def test_ingestion_rejects_a_bad_submission(tmp_path):
    m = _app(tmp_path, INGESTION)
    (m["/app/ingested_program"] / "results.json").write_text('{"Results - Final(12)": ')
    proc = _run(INGESTION, m)
    assert proc.returncode == 1
    assert proc.stderr.startswith("metascore: error: ")
    assert len(proc.stderr.strip().splitlines()) == 1
    assert list(m["/app/output"].iterdir()) == []


def test_vendored_package_is_used(tmp_path):
    """A `metascore/` folder next to score.py (as a bundle ships it) is imported first."""
    m = _app(tmp_path, SCORING)
    shutil.copytree(ROOT / "src" / "metascore", m["/app/program"] / "metascore",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (m["/app/program"] / "probe.py").write_text(
        "import runpy, sys\nsys.argv = ['score.py']\n"
        "try:\n    runpy.run_path('score.py', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "import metascore\nprint(metascore.__file__)\n"
    )
    proc = subprocess.run([sys.executable, "probe.py"], cwd=m["/app/program"],
                          capture_output=True, text=True, timeout=60)
    assert str(m["/app/program"] / "metascore") in proc.stdout
