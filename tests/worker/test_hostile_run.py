"""One hostile submission costs nobody else their score, and the runner never amplifies a
job (issue 32): the property, over every hostile submission of ``tests/hostile_fixtures.py``.

The hostile bundle runs twice through ``metascore bundle run`` on each backend (the local
one as root where the machine allows, and the Docker one: ``--memory 256m
--max-processes 50 --disk-limit 20m --log-limit 1m --jobs 2``), into the same ``--out``: first with the two good submissions
and every hostile one, then with the good ones alone (which also removes the first run's
trees, 1,500 folders deep among them). Each run is a child process whose session keyring
holds a key, as an organizer's shell may. Then:

- the good submissions get the same scores in both runs, and the final leaderboard is
  written both times, with the good ones in the same order and with the same values;
- each hostile submission ends as :data:`~hostile_fixtures.EXPECTED` says: failed with a
  status of one line that says why (and the run's progress line naming it), or finished
  with its own score where the runner only had to stop amplifying it (sparse files,
  spreadsheet formulas as names); where the machine gives the runner no control group or
  no seccomp filter, the run says so in one line that names ``--backend docker``;
- no traceback and no raw escape sequence reach the terminal; the leaderboard CSV opens
  in a spreadsheet without running a formula, its JSON keeps the names exact;
- nothing outside ``--out`` changes (the bundle, the folder a link leads to, ``/tmp``, the
  control groups), and nothing of the organizer's key or 0600 secret file (which links of
  sample submissions name) reaches ``--out``;
- the runner's own peak memory and the bytes it writes stay within the bounds stated
  below, whatever the jobs do.
"""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from bundle_backends import options, require
from hostile_fixtures import EXPECTED, FORMULAS, GOOD_SCORES, SECRET_TEXT, TERMINAL_NAME, hostile_bundle
from metascore.bundle.worker.cgroups import CGROUP_ROOT, cgroup_support
from metascore.bundle.worker.logs import printable
from metascore.bundle.worker.syscall_filter import filter_support
from metascore.bundle.trees import tree_usage, walk
from repo_paths import ROOT

SRC = ROOT / "src"
LIMITS = ["--memory", "256m", "--max-processes", "50", "--disk-limit", "20m", "--log-limit", "1m"]
DISK, LOG = 20 << 20, 1 << 20
SECRET = b"the organizer's key: s3cr3t"
#: (keyctl, add_key) system call numbers
_KEY_CALLS = {"x86_64": (250, 248), "aarch64": (219, 217)}
RUNNER = """
import ctypes, json, os, resource, sys
keyctl, add_key = {calls}
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall(keyctl, 1, None)  # KEYCTL_JOIN_SESSION_KEYRING: a keyring of this run's own
libc.syscall(add_key, b"user", b"metascore-test", {secret!r}, {size}, -3)  # in the session keyring
from metascore.cli import main
code = main(sys.argv[2:])
io = dict(line.split(": ") for line in open("/proc/self/io").read().splitlines())
json.dump({{"code": code, "pid": os.getpid(), "wchar": int(io["wchar"]),
           "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}}, open(sys.argv[1], "w"))
"""
#: What hostile submissions may add to the runner's own peak memory ...
MEMORY_BOUND = 64 << 20
#: ... and to the bytes it writes, per hostile submission: its extraction (at most
#: --disk-limit), one copy of what its job holds (at most --disk-limit) and its logs.
BYTES_BOUND = 2 * DISK + 8 * LOG


@pytest.fixture
def work():
    """A folder in the runner's home (outside /tmp, which the sandbox replaces)."""
    folder = Path(tempfile.mkdtemp(prefix=".metascore-hostile-run-", dir=Path.home()))
    try:
        yield folder
    finally:
        subprocess.run(["rm", "-rf", str(folder)], check=False)  # the deep trees too


def run(bundle: Path, out: Path, work: Path, backend: str) -> tuple[subprocess.CompletedProcess, dict]:
    """``metascore bundle run`` on ``backend`` in a child process; its output and measurements."""
    calls = _KEY_CALLS.get(os.uname().machine)
    if calls is None:
        pytest.skip("the keyring system calls of this machine are not listed here")
    measured = work / "measured.json"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    script = RUNNER.format(calls=calls, secret=SECRET, size=len(SECRET))
    chosen = options(backend)
    where = ["--backend", "docker", "--image", chosen["image"]] if backend == "docker" else ["--backend", "local"]
    proc = subprocess.run(
        [sys.executable, "-c", script, str(measured), "bundle", "run", str(bundle), "--out", str(out),
         *where, "--jobs", "2", *LIMITS],
        capture_output=True, text=True, errors="replace", env=env, timeout=1200)
    assert measured.is_file(), proc.stderr[-3000:]
    return proc, json.loads(measured.read_text())


def snapshot(folder: Path) -> dict[str, tuple]:
    """Each entry under ``folder`` but ``out`` and the test's own ``measured.json``: its
    kind, size, mode, time and link."""
    seen = {}
    for entry in walk(folder):
        if entry.parts[0] in ("out", "measured.json"):
            continue
        info = entry.stat
        link = os.readlink(entry.name, dir_fd=entry.dir_fd) if stat.S_ISLNK(info.st_mode) else None
        seen["/".join(entry.parts)] = (stat.S_IFMT(info.st_mode), info.st_size, info.st_mode,
                                       info.st_mtime_ns, link)
    return seen


def leftover_groups(pid: int) -> list[str]:
    """Control groups of the runner ``pid`` still there after it ended."""
    mine = open("/proc/self/cgroup").read().splitlines()
    parents = [CGROUP_ROOT / f"metascore-{pid}"]
    for line in mine:
        _, controllers, path = line.split(":", 2)
        parents += [CGROUP_ROOT / c / path.lstrip("/") for c in controllers.split(",") if c in ("memory", "pids")]
    return [str(p) for parent in parents if parent.is_dir()
            for p in parent.iterdir() if p.name.startswith(f"metascore-{pid}-")] + \
        [str(p) for p in parents[:1] if p.exists()]


def good_rows(out: Path, summary: dict) -> list[tuple[str, dict]]:
    """The good submissions' rows of the final leaderboard, in its order: (name, per-judge
    values)."""
    keys = {e["key"]: e["candidate"] for e in summary["export"]}
    board = json.loads((out / "final" / "leaderboard.json").read_text())
    return [(keys[row["candidate"]], row["judges"]) for row in board["final"]["rows"]
            if keys.get(row["candidate"]) in GOOD_SCORES]


@pytest.mark.slow
@pytest.mark.parametrize("backend", [pytest.param("local", id="local"),
                                     pytest.param("docker", id="docker", marks=pytest.mark.engine)])
def test_no_hostile_submission_costs_the_others_their_scores(backend, work):
    require(backend)
    bundle = hostile_bundle(work)
    (work / "outside" / "canary").write_text("untouched")
    before = snapshot(work)
    tmp_before = set(os.listdir("/tmp"))

    proc, measured = run(bundle, work / "out", work, backend)
    summary = json.loads((work / "out" / "run_summary.json").read_text())
    got = {r["candidate"]: r for r in summary["results"] if r["phase"] == "Development"}
    board = (work / "out" / "final" / "leaderboard.json").read_text()
    board_csv = (work / "out" / "final" / "leaderboard.csv").read_text()
    full_rows = good_rows(work / "out", summary)
    out_size = tree_usage([work / "out"])[0]
    out_text = [entry for entry in walk(work / "out") if stat.S_ISREG(entry.stat.st_mode)
                and entry.stat.st_size < 4 << 20
                and any(secret in _read(entry) for secret in (SECRET, SECRET_TEXT.encode()))]

    # the run went through, told nothing raw to the terminal, and its own code raised nothing
    assert measured["code"] == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-3000:]
    for stream in (proc.stdout, proc.stderr):
        assert "\x1b" not in stream and "\x07" not in stream
    assert summary["meta"]["status"] == "Finished", summary["meta"]["reason"]

    # each hostile submission: as expected, one line saying why, named by its progress line;
    # where the machine gives the runner no control group (memfd) or no seccomp filter
    # (userns), the run says so in one line naming the Docker backend instead
    lacking = {"memfd": cgroup_support()[1], "userns": filter_support()} if backend == "local" else {}
    for name, (status, expected) in EXPECTED.items():
        res = got[name]
        if lacking.get(name):
            assert any(lacking[name] in w and "--backend docker" in w for w in summary["warnings"])
            continue
        if status == "Finished":
            assert (res["status"], res["scores"].get("score")) == ("Finished", expected), (name, res["reason"])
            continue
        details = res["status_details"]
        assert res["status"] == "Failed" and expected in details, (name, details, res["reason"][:2000])
        assert "\n" not in details and len(details) < 400, (name, details)
        assert f"[-] Development / {printable(name)} / only: Failed: {printable(details)}" in proc.stdout, name
    assert all(good in got and got[good]["status"] == "Finished" for good in GOOD_SCORES)

    # spreadsheets run no formula of the leaderboard CSV; the JSON keeps the names exact
    cells = [cell for row in csv.reader(io.StringIO(board_csv)) for cell in row]
    for name in FORMULAS:
        assert any(cell.startswith("'" + name) for cell in cells), name
        assert json.dumps(name)[1:-1] in board
    assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")
                or (c[:1] == "-" and not _number(c))]
    assert TERMINAL_NAME not in proc.stdout

    # nothing outside --out changed; nothing of the organizer's key or secret file is in it
    assert snapshot(work) == before
    assert not [n for n in set(os.listdir("/tmp")) - tmp_before if "PWNED" in n or "metascore-hostile" in n]
    assert leftover_groups(measured["pid"]) == []
    assert out_text == []
    assert not [e for e in walk(work / "out") if e.name == "secret.txt"]

    # the runner's memory and bytes: the second run, without the hostile submissions, into
    # the same --out (the first run's trees, 1,500 folders deep, are removed first)
    clean = hostile_bundle(work / "clean", [])
    proc2, clean_measured = run(clean, work / "out", work, backend)
    summary2 = json.loads((work / "out" / "run_summary.json").read_text())
    assert clean_measured["code"] == 0, proc2.stderr[-3000:]
    clean_got = {r["candidate"]: r for r in summary2["results"] if r["phase"] == "Development"}
    assert {g: clean_got[g]["scores"] for g in GOOD_SCORES} == {g: got[g]["scores"] for g in GOOD_SCORES} \
        == {g: {"score": s} for g, s in GOOD_SCORES.items()}
    assert good_rows(work / "out", summary2) == full_rows and [r[0] for r in full_rows] == ["good", "good_too"]

    hostile = len(EXPECTED)
    extra_memory = measured["peak"] - clean_measured["peak"]
    extra_bytes = measured["wchar"] - clean_measured["wchar"]
    print(f"runner peak {measured['peak'] >> 20} MiB (without the hostile ones {clean_measured['peak'] >> 20}); "
          f"bytes written {measured['wchar'] >> 20} MiB ({clean_measured['wchar'] >> 20}); --out {out_size >> 20} MiB")
    assert extra_memory <= MEMORY_BOUND, f"the runner held {extra_memory >> 20} MiB more"
    assert extra_bytes <= hostile * BYTES_BOUND, f"the runner wrote {extra_bytes >> 20} MiB more"
    assert out_size <= (hostile + len(GOOD_SCORES)) * BYTES_BOUND


def _read(entry) -> bytes:
    fd = os.open(entry.name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=entry.dir_fd)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
