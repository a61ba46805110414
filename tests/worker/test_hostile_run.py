"""One hostile submission costs nobody else their score, and the runner never amplifies a
job (issue 32): the property, over every hostile submission of ``tests/hostile_fixtures.py``.

The hostile bundle runs twice through ``metascore bundle run`` on each backend (``--memory
256m --max-processes 50 --disk-limit 20m --log-limit 1m --jobs 2``), into the same
``--out``: first with the two good submissions and every hostile one, then with the good
ones alone (which also removes the first run's trees, 1,500 folders deep among them). The
backends: the local sandbox run by root and by ``nobody`` (organizers run it both ways), the
Docker one, and the local rewrite mode run by root with the hostile ones of
:data:`~hostile_fixtures.REWRITE` as ``--submissions`` (each job then a user of its own).
Each run is a child process whose session keyring holds a key and whose umask is ``000``,
as an organizer's shell may have them. Then:

- the good submissions get the same scores in both runs, and the final leaderboard is
  written both times, with the good ones in the same order and with the same values;
- each hostile submission ends as :data:`~hostile_fixtures.EXPECTED` says: failed with a
  status of one line that says why (and the run's progress line naming it), or finished
  with its own score where the runner only had to stop amplifying it (sparse files,
  spreadsheet formulas as names); where the machine gives the runner no control group or
  no seccomp filter, the run says so in one line that names ``--backend docker``;
- no traceback and no raw escape sequence reach the terminal; the leaderboard CSV opens
  in a spreadsheet without running a formula, its JSON keeps the names exact;
- participants named in Markdown and HTML (:data:`~hostile_fixtures.MARKUP`) keep their
  names in the JSON and are text on the ranking page (``detailed_results.html``: no tag,
  no attribute of theirs) and on the "Final ranking" page section and task name that
  ``metascore codabench publish`` would write from that JSON (every name escaped);
- nothing outside ``--out`` changes (the bundle, the folder a link leads to, ``/tmp``, the
  control groups), no process of a job outlives the run, and nothing of the organizer's
  key, 0600 secret file (which links of sample submissions name) or ``/etc/shadow``
  reaches ``--out``;
- no file under ``--out`` has a set-id bit or is a device node, and nothing there is
  writable by the group or by others (issue 49, 4-5: the runner's own files and folders
  under ``umask 000``, a job's ``0777`` folder, ``0666`` scores.json or ``2777`` folder),
  checked after every job (all of ``--out`` but the folders of the jobs still running) and
  at the end; no job leaves a file that claims more than ``--disk-limit`` (a sparse file of
  1 TiB);
- the runner's own peak memory and the bytes it writes stay within the bounds stated
  below, whatever the jobs do.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import stat
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

from bundle_backends import options, require
from hostile_fixtures import (EXPECTED, FORMULAS, GOOD_SCORES, MARKUP_SUBMISSIONS, NOTED, REWRITE, SECRET_TEXT,
                              SURVIVOR, TERMINAL_NAME, hostile_bundle)
from requirements import NOBODY, require_public_python, source_for_others
from metascore.bundle.worker.cgroups import CGROUP_ROOT
from metascore.bundle.worker.logs import printable
from metascore.bundle.trees import tree_usage, walk
from metascore.bundle.platform.page_text import page_text
from metascore.codabench.publish import outcome_of, page_section, task_title

LIMITS = ["--memory", "256m", "--max-processes", "50", "--disk-limit", "20m", "--log-limit", "1m"]
DISK, LOG = 20 << 20, 1 << 20
SECRET = b"the organizer's key: s3cr3t"
#: (keyctl, add_key) system call numbers
_KEY_CALLS = {"x86_64": (250, 248), "aarch64": (219, 217)}
RUNNER = """
import ctypes, glob, json, os, resource, stat, sys, threading
os.umask(0)  # an organizer's shell may have it so: nothing of --out may be writable by others
keyctl, add_key = {calls}
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall(keyctl, 1, None)  # KEYCTL_JOIN_SESSION_KEYRING: a keyring of this run's own
libc.syscall(add_key, b"user", b"metascore-test", {secret!r}, {size}, -3)  # in the session keyring
from metascore.bundle.site import server
from metascore.bundle.trees import walk
from metascore.bundle.worker.cgroups import cgroup_support
from metascore.bundle.worker.syscall_filter import filter_support
from metascore.cli import main
out, running, lock, found, shared = sys.argv[sys.argv.index("--out") + 1], set(), threading.Lock(), [], []
run_job = server.run_job

def checked(job, backend):  # after every job: no set-id bit, no device, nothing others may write
    with lock:
        running.add(str(job.run_dir))
    try:
        return run_job(job, backend)
    finally:
        with lock:
            running.discard(str(job.run_dir))
            busy = set(running)
        folders = [f for f in glob.glob(os.path.join(out, "runs", "*", "*", "*")) if f not in busy]
        folders += [os.path.join(out, name) for name in ("outputs", "final", "cache", "bundle")]
        for folder in folders:
            try:
                for entry in walk(folder, on_error=lambda _: None):
                    mode = entry.stat.st_mode
                    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or (mode & 0o6000 and not stat.S_ISLNK(mode)):
                        found.append(os.path.join(folder, *entry.parts))
                    if mode & 0o022 and not stat.S_ISLNK(mode):
                        shared.append(os.path.relpath(os.path.join(folder, *entry.parts), out))
            except OSError:  # not there (yet), or written meanwhile by the site
                pass

server.run_job = checked
code = main(sys.argv[2:])
io = dict(line.split(": ") for line in open("/proc/self/io").read().splitlines())
# the bytes this process wrote to files (its own: wchar also counts what the children it
# reaps wrote, a job's memfd included)
written = resource.getrusage(resource.RUSAGE_SELF).ru_oublock * 512
json.dump({{"code": code, "pid": os.getpid(), "wchar": int(io["wchar"]), "written": written, "set_id": found,
           "shared_write": shared,
           "lacking": {{"memfd": cgroup_support()[1], "userns": filter_support()}},
           "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}}, open(sys.argv[1], "w"))
"""
#: What hostile submissions may add to the runner's own peak memory ...
MEMORY_BOUND = 64 << 20
#: ... and to the bytes it writes, per hostile submission: its extraction (at most
#: --disk-limit), one copy of what its job holds (at most --disk-limit) and its logs.
BYTES_BOUND = 2 * DISK + 8 * LOG


@pytest.fixture
def work(request):
    """A folder outside /tmp (which the sandbox replaces): in the runner's home, or where
    any user may enter it (``/var/tmp``) for the runs of another user or its own users."""
    shared = request.node.callspec.params["variant"][1] != "local"
    folder = Path(tempfile.mkdtemp(prefix=".metascore-hostile-run-", dir="/var/tmp" if shared else Path.home()))
    if shared:
        folder.chmod(0o711)  # others may enter, not list or write
    try:
        yield folder
    finally:
        subprocess.run(["rm", "-rf", str(folder)], check=False)  # the deep trees too


def run(bundle: Path, out: Path, work: Path, variant: tuple[str, str]) -> tuple[subprocess.CompletedProcess, dict]:
    """``metascore bundle run`` as ``variant`` says (backend, and ``nobody``, ``rewrite`` or
    ``local``: the local sandbox run by root) in a child process; its output and measurements."""
    backend, how = variant
    calls = _KEY_CALLS.get(os.uname().machine)
    if calls is None:
        pytest.skip("the keyring system calls of this machine are not listed here")
    measured = work / "measured.json"
    env = {**os.environ, "PYTHONPATH": str(source_for_others())}
    script = RUNNER.format(calls=calls, secret=SECRET, size=len(SECRET))
    chosen = options(backend)
    where = ["--backend", "docker", "--image", chosen["image"]] if backend == "docker" else ["--backend", "local"]
    python, user = [sys.executable], []
    if how == "rewrite":  # the bundle's sample submissions given as participants' ones
        where += ["--sandbox", "rewrite", "--submissions", str(bundle / "sample_submissions"),
                  "--python-env", require_public_python()]
    elif how == "nobody":
        python = [require_public_python()]
        user = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        env["HOME"] = str(work / "home")  # for what it may cache, and its own organizer key
        env.pop("METASCORE_ORGANIZER_KEY", None)  # the session's key is root's, mode 600
        (work / "home").mkdir(exist_ok=True)
        subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(work)], check=True)
    proc = subprocess.run(
        [*user, *python, "-c", script, str(measured), "bundle", "run", str(bundle), "--out", str(out),
         *where, "--jobs", "2", *LIMITS],
        capture_output=True, text=True, errors="replace", env=env, timeout=1200, cwd=work)
    assert measured.is_file(), proc.stderr[-3000:]
    return proc, json.loads(measured.read_text())


def survivors() -> list[str]:
    """The processes a job meant to outlive the run (their command line holds the marker)."""
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and SURVIVOR.encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                found.append(name)
        except OSError:
            continue
    return found


def shared_write(out: Path) -> list[str]:
    """What under ``out`` (``out`` too; links left out) the group or others may write."""
    found = ["."] if out.stat().st_mode & 0o022 else []
    return found + ["/".join(e.parts) for e in walk(out) if e.stat.st_mode & 0o022 and not stat.S_ISLNK(e.stat.st_mode)]


def set_id_or_device(out: Path) -> list[str]:
    """Files under ``out`` with a set-id bit, and device nodes."""
    return ["/".join(e.parts) for e in walk(out) if stat.S_ISCHR(e.stat.st_mode) or stat.S_ISBLK(e.stat.st_mode)
            or (e.stat.st_mode & (stat.S_ISUID | stat.S_ISGID) and not stat.S_ISLNK(e.stat.st_mode))]


def snapshot(folder: Path) -> dict[str, tuple]:
    """Each entry under ``folder`` but ``out``, the test's own ``measured.json`` and the
    runner's home: its kind, size, mode, time and link."""
    seen = {}
    for entry in walk(folder):
        if entry.parts[0] in ("out", "measured.json", "home"):
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
@pytest.mark.parametrize("variant", [
    pytest.param(("local", "local"), id="local"),
    pytest.param(("docker", "local"), id="docker", marks=pytest.mark.engine),
    pytest.param(("local", "rewrite"), id="rewrite-root"),
    pytest.param(("local", "nobody"), id="local-nobody"),
])
def test_no_hostile_submission_costs_the_others_their_scores(variant, work):
    backend, how = variant
    require(backend)
    if how != "local" and os.geteuid() != 0:
        pytest.skip("needs root: to run as root, or to become another user (this run is that user)")
    names = REWRITE if how == "rewrite" else None
    bundle = hostile_bundle(work, names)
    (work / "outside").mkdir(exist_ok=True)  # made by the outside_link submission, when it runs
    (work / "outside" / "canary").write_text("untouched")
    before = snapshot(work)
    tmp_before = set(os.listdir("/tmp"))
    shadow = _host_shadow()

    proc, measured = run(bundle, work / "out", work, variant)
    summary = json.loads((work / "out" / "run_summary.json").read_text())
    got = {r["candidate"]: r for r in summary["results"] if r["phase"] == "Development"}
    board = (work / "out" / "final" / "leaderboard.json").read_text()
    board_csv = (work / "out" / "final" / "leaderboard.csv").read_text()
    full_rows = good_rows(work / "out", summary)
    out_size = tree_usage([work / "out"])[0]
    out_text = [entry for entry in walk(work / "out") if stat.S_ISREG(entry.stat.st_mode)
                and entry.stat.st_size < 4 << 20
                and any(secret in _read(entry) for secret in (SECRET, SECRET_TEXT.encode(), shadow))]

    # the run went through, told nothing raw to the terminal, and its own code raised nothing
    assert measured["code"] == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-3000:]
    for stream in (proc.stdout, proc.stderr):
        assert "\x1b" not in stream and "\x07" not in stream
    assert summary["meta"]["status"] == "Finished", summary["meta"]["reason"]

    # each hostile submission: as expected, one line saying why, named by its progress line;
    # where the machine gives the runner no control group (memfd) or no seccomp filter
    # (userns), the run says so in one line naming the Docker backend instead
    lacking = measured["lacking"] if backend == "local" else {}
    for name, (status, expected) in EXPECTED.items():
        if names is not None and name not in names:
            continue
        res = got[name]
        if lacking.get(name):
            assert any(lacking[name] in w and "--backend docker" in w for w in summary["warnings"])
            continue
        if status == "Finished":
            assert (res["status"], res["scores"].get("score")) == ("Finished", expected), (name, res["reason"])
            assert res["prediction_problems"] == [], (name, res["prediction_problems"])
            assert NOTED.get(name, "") in "\n".join(res["warnings"]), (name, res["warnings"])
            continue
        details = res["status_details"]
        assert res["status"] == "Failed" and expected in details, (name, details, res["reason"][:2000])
        assert "\n" not in details and len(details) < 400, (name, details)
        assert f"[-] Development / {printable(name)} / only: Failed: {printable(details)}" in proc.stdout, name
    assert all(good in got and got[good]["status"] == "Finished" for good in GOOD_SCORES)

    # spreadsheets run no formula of the leaderboard CSV; the JSON keeps the names exact
    cells = [cell for row in csv.reader(io.StringIO(board_csv)) for cell in row]
    for name in FORMULAS if names is None else ():
        assert any(cell.startswith("'" + name) for cell in cells), name
        assert json.dumps(name)[1:-1] in board
    assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")
                or (c[:1] == "-" and not _number(c))]
    assert TERMINAL_NAME not in proc.stdout
    if names is None:
        markup_is_text(json.loads(board), (work / "out" / "final" / "detailed_results.html").read_text())

    # nothing outside --out changed; nothing of the organizer's key or secret file is in it
    assert snapshot(work) == before
    assert not [n for n in set(os.listdir("/tmp")) - tmp_before if "PWNED" in n or "metascore-hostile" in n]
    assert leftover_groups(measured["pid"]) == []
    assert survivors() == []
    # no set-id bit and no device node under --out, nothing others may write there, after
    # every job and at the end; no job left a file that claims more than --disk-limit
    assert measured["set_id"] == [] and set_id_or_device(work / "out") == []
    assert measured["shared_write"] == [] and shared_write(work / "out") == []
    assert not [e for e in walk(work / "out" / "runs" / "Development")
                if stat.S_ISREG(e.stat.st_mode) and e.stat.st_size > DISK]
    # and while a job ran, no other local user could reach what it wrote: its sandbox is 0700
    sandboxes = list((work / "out" / "runs").glob("*/*/*/*"))
    assert sandboxes and {stat.S_IMODE(p.stat().st_mode) for p in sandboxes} == {0o700}
    assert out_text == []
    assert not [e for e in walk(work / "out") if e.name == "secret.txt"]

    # the runner's memory and bytes: the second run, without the hostile submissions, into
    # the same --out (the first run's trees, 1,500 folders deep, are removed first)
    clean = hostile_bundle(work / "clean", [])
    before_clean = snapshot(work)
    proc2, clean_measured = run(clean, work / "out", work, variant)
    summary2 = json.loads((work / "out" / "run_summary.json").read_text())
    assert clean_measured["code"] == 0, proc2.stderr[-3000:]
    clean_got = {r["candidate"]: r for r in summary2["results"] if r["phase"] == "Development"}
    assert {g: clean_got[g]["scores"] for g in GOOD_SCORES} == {g: got[g]["scores"] for g in GOOD_SCORES} \
        == {g: {"score": s} for g, s in GOOD_SCORES.items()}
    assert good_rows(work / "out", summary2) == full_rows and [r[0] for r in full_rows] == ["good", "good_too"]

    assert snapshot(work) == before_clean and survivors() == []  # also after the second run's time
    assert clean_measured["shared_write"] == [] and shared_write(work / "out") == []
    hostile = len(EXPECTED if names is None else names)
    extra_memory = measured["peak"] - clean_measured["peak"]
    extra_bytes = measured["written"] - clean_measured["written"]
    print(f"runner peak {measured['peak'] >> 20} MiB (without the hostile ones {clean_measured['peak'] >> 20}); "
          f"bytes written {measured['written'] >> 20} MiB ({clean_measured['written'] >> 20}; with what the jobs "
          f"it reaped wrote {measured['wchar'] >> 20} MiB, {clean_measured['wchar'] >> 20}); --out {out_size >> 20} MiB")
    assert extra_memory <= MEMORY_BOUND, f"the runner held {extra_memory >> 20} MiB more"
    assert extra_bytes <= hostile * BYTES_BOUND, f"the runner wrote {extra_bytes >> 20} MiB more"
    assert out_size <= (hostile + len(GOOD_SCORES)) * BYTES_BOUND


class _Page(HTMLParser):
    """The tags, the attributes with a value and the text of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs, self.text, self.scripts = set(), set(), [], []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs |= {(key, value or "") for key, value in attrs}
        if tag == "script":
            self.scripts.append(dict(attrs))

    def handle_data(self, data):
        self.text.append(data)


def markup_is_text(board: dict, report: str) -> None:
    """Issue 49, item 3: the participants named in Markdown and HTML are text on the ranking
    page and on the page section and task name publish writes from ``board``."""
    names = [name for name, _ in MARKUP_SUBMISSIONS.values()]
    rows = [r for r in board["final"]["rows"] if r["participant"] in names]
    assert sorted(r["participant"] for r in rows) == sorted(names)  # exact in the JSON
    page = _Page()
    page.feed(report)
    text = "".join(page.text)
    assert not {"a", "img", "iframe", "object", "embed"} & page.tags
    # the page's own script elements only: the re-weighting panel's, static (issue 51), and the
    # ranking's record (issue 53), data a browser never runs
    assert page.scripts == [{"id": "metascore-reweight"}, {"type": "application/json", "id": "metascore-ranking"}]
    assert not [k for k, v in page.attrs if k.startswith("on") or k in ("src", "href")]
    assert {k for k, v in page.attrs if any(n in v for n in names)} <= {"title", "data-judge"}  # a judge input names its judge, as text
    assert all(name in text for name in names)
    outcome = outcome_of(board)
    everyone = tuple((int(r["position"]), r["participant"], r["score"]) for r in board["final"]["rows"]
                     if r["position"] is not None)
    section = page_section(dataclasses.replace(outcome, top=everyone), "https://site/x/", 1, "now")
    for position, name, _ in everyone:
        assert f"| {position} | {page_text(name)} | " in section, name
    assert f"## Result: {page_text(outcome.winners[0])} wins" in section
    for raw in ("](javascript:", "![", "<img", "`code`", "$", "%%", "\\\n", "*b*", "__u__", "two\nlines"):
        assert raw not in section, raw
    title = task_title(outcome)
    assert "<" not in title and "\n" not in title


def _host_shadow() -> bytes:
    """The host's ``/etc/shadow`` (what a job must not read), or a text no file holds."""
    try:
        return Path("/etc/shadow").read_bytes() or b"\0no shadow\0"
    except OSError:
        return b"\0no shadow\0"


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
