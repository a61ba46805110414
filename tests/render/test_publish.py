"""Publishing the output files survives SIGKILL at any moment (``write_files``).

A writer process is killed with SIGKILL at random moments while it replaces a complete
OLD set of outputs (other scores) by a NEW one, in a folder that also holds files written
by others. After every kill, what a platform could read must be consistent:

- ``scores.json`` present: the complete set, every file from one run (old or new);
- ``scores.txt`` present: every non-score file present, from the same run as it;
- otherwise no score file at all (the other files may then be from either run);

every output file present is exactly its old or its new version (never torn), the files
of others are untouched, and the next normal write publishes the complete new set and
leaves no staging folder behind.

The writers are forks of one ``python`` (``PYTHONPATH=src``) that imported metascore once
(importing pandas in 40 fresh interpreters would take longer than the test). Each fork
installs an audit hook (:func:`sys.addaudithook`) that sleeps before every file-system
call (three times as long before a move or removal), a slow disk that stretches the few
milliseconds of a write over ~0.1 s so that random kills land in every step; nothing in
the product knows about it.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from metascore.config import parse_config
from metascore.render.publish import write_files
from metascore.render.writers import OUTPUT_FILES, render_outputs
from metascore.leaderboard import build_leaderboard
from metascore.readers.configured import load_scores

from shared_competition import CONFIG, FIXTURE
from repo_paths import ROOT

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")

SRC = ROOT / "src"
KILLS = 40
SEED = int(os.environ.get("METASCORE_KILL_SEED", "20240611"))
STAGING = ".metascore-staging-"

#: The writer server: reads ``go DIR`` (fork a writer into DIR, answer its pid) and
#: ``reap PID`` (wait for it, answer its wait status) on stdin. A writer is reaped only
#: when the test says so, so the pid it kills cannot have been reused.
SERVER = r'''
import json, os, sys, time
from metascore.render.publish import write_files

files = json.loads(open(sys.argv[1], encoding="utf-8").read())
pause = float(sys.argv[2])
MOVES = {"os.rename", "os.link", "os.remove"}  # os.replace is os.rename, unlink os.remove
SLOW = MOVES | {"open", "os.rmdir", "os.mkdir", "os.chmod", "os.scandir", "os.listdir",
                "shutil.rmtree", "tempfile.mkdtemp", "fcntl.flock"}

def slow_disk(event, args):
    if event in SLOW:
        time.sleep(3 * pause if event in MOVES else pause)

print("ready", flush=True)
for line in sys.stdin:
    command, arg = line.rstrip("\n").split(" ", 1)
    if command == "go":
        pid = os.fork()
        if pid == 0:
            sys.addaudithook(slow_disk)
            try:
                write_files(arg, files)
                code = 0
            except BaseException:
                code = 1
            os._exit(code)
        print(pid, flush=True)
    elif command == "reap":
        print(os.waitpid(int(arg), 0)[1], flush=True)
'''


def _render(extra: dict) -> dict[str, str]:
    config = parse_config({**CONFIG, **extra})
    table = load_scores(config.input, FIXTURE, development=config.phases.development)
    return render_outputs(build_leaderboard(table, config))


@pytest.fixture(scope="module")
def old_new():
    old = _render({"ranking": {"method": "mean"}})
    new = _render({})
    assert all(old[name] != new[name] for name in OUTPUT_FILES)  # every file tells its run
    assert old["scores.json"] != new["scores.json"]
    return old, new


class Server:
    def __init__(self, tmp: Path, files: dict[str, str], pause: float):
        (tmp / "server.py").write_text(SERVER)
        (tmp / "new.json").write_text(json.dumps(files))
        self.proc = subprocess.Popen(
            [sys.executable, str(tmp / "server.py"), str(tmp / "new.json"), str(pause)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(SRC)})
        # a hung server is killed, so a read returns '' and the test fails instead of hanging
        self.watchdog = threading.Timer(120, self.proc.kill)
        self.watchdog.start()
        assert self._ask(None) == "ready"

    def _ask(self, line: str | None) -> str:
        if line is not None:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        assert answer, "the writer server died"
        return answer.strip()

    def start(self, out: Path) -> int:
        return int(self._ask(f"go {out}"))

    def reap(self, pid: int) -> int:
        return int(self._ask(f"reap {pid}"))

    def close(self) -> None:
        self.watchdog.cancel()
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _others(out: Path) -> dict[str, str]:
    """Files of others in the output folder, some named almost like a staging folder."""
    (out / "scoring.log").write_text("the scoring program's own log\n")
    (out / "metadata").write_text("platform: yes\n")
    (out / "plots").mkdir()
    (out / "plots" / "a.svg").write_text("<svg/>")
    (out / "metascore-staging-1").mkdir()  # no leading dot
    (out / "metascore-staging-1" / "x").write_text("keep")
    (out / ".metascore-stagingX").mkdir()  # no dash
    (out / ".metascore-stagingX" / "x").write_text("keep")
    (out / ".metascore-staging-file").write_text("a file, not a staging folder")
    foreign = out.parent / f"{out.name}-foreign"
    foreign.mkdir()
    (foreign / "x").write_text("keep")
    (out / ".metascore-staging-link").symlink_to(foreign, target_is_directory=True)
    return _snapshot_others(out)


def _snapshot_others(out: Path) -> dict[str, str]:
    """Everything in ``out`` but the output files and the staging folders (links unfollowed)."""
    found = {}

    def walk(folder: Path, prefix: str) -> None:
        for path in sorted(folder.iterdir()):
            rel = prefix + path.name
            if not prefix and (rel in OUTPUT_FILES or rel in _staging(out)):
                continue
            if path.is_symlink():
                found[rel] = f"-> {os.readlink(path)}"
            elif path.is_dir():
                found[rel] = "<dir>"
                walk(path, rel + "/")
            else:
                found[rel] = path.read_text()

    walk(out, "")
    return found


def _staging(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir()
                  if p.name.startswith(STAGING) and p.is_dir() and not p.is_symlink())


def _state(out: Path, old: dict[str, str], new: dict[str, str]) -> str:
    """'old', 'new', 'none' (no score file), 'old-txt'/'new-txt' (scores.txt and a complete
    consistent set but no scores.json), or a violation starting with 'MIX'/'TORN'."""
    present = {}
    for name in OUTPUT_FILES:
        if (out / name).exists():
            text = (out / name).read_text()
            if text == old[name]:
                present[name] = "old"
            elif text == new[name]:
                present[name] = "new"
            else:
                return f"TORN {name}"
    runs = set(present.values())
    others = [n for n in OUTPUT_FILES if n not in ("scores.json", "scores.txt")]
    if "scores.json" in present:
        if len(present) == len(OUTPUT_FILES) and len(runs) == 1:
            return runs.pop()
        return f"MIX {sorted(present.items())}"
    if "scores.txt" in present:
        if all(present.get(n) == present["scores.txt"] for n in others):
            return f"{present['scores.txt']}-txt"
        return f"MIX {sorted(present.items())}"
    return "none"


def test_sigkill_while_publishing_never_mixes_old_and_new(tmp_path, old_new):
    old, new = old_new
    server = Server(tmp_path, new, pause=0.002)
    rng = random.Random(SEED)
    counts: dict[str, int] = {}
    problems: list[str] = []
    killed = left_staging = 0
    try:
        def fresh(name: str) -> tuple[Path, dict[str, str]]:
            out = tmp_path / name
            out.mkdir()
            for file, text in old.items():
                (out / file).write_text(text)
            return out, _others(out)

        durations = []
        for i in range(3):  # how long an unhindered write takes on this machine
            out, others = fresh(f"calibrate{i}")
            t0 = time.perf_counter()
            assert server.reap(server.start(out)) == 0
            durations.append(time.perf_counter() - t0)
            assert _state(out, old, new) == "new" and not _staging(out)
            assert _snapshot_others(out) == others
        span = 1.2 * sorted(durations)[1]

        for i in range(KILLS):
            out, others = fresh(f"kill{i}")
            delay = rng.uniform(0, span)
            pid = server.start(out)
            time.sleep(delay)
            os.kill(pid, signal.SIGKILL)
            status = server.reap(pid)
            killed += os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
            state = _state(out, old, new)
            counts[state.split()[0]] = counts.get(state.split()[0], 0) + 1
            if state.startswith(("MIX", "TORN")):
                problems.append(f"kill {i} at {delay * 1000:.0f} ms: {state}")
            if _snapshot_others(out) != others:
                problems.append(f"kill {i}: the files of others changed")
            left_staging += bool(_staging(out))

            write_files(out, new)  # the next normal run
            if _staging(out):
                problems.append(f"kill {i}: the next write left {_staging(out)}")
            if _state(out, old, new) != "new":
                problems.append(f"kill {i}: the next write gave {_state(out, old, new)}")
            if _snapshot_others(out) != others:
                problems.append(f"kill {i}: the next write changed the files of others")
    finally:
        server.close()
    summary = (f"{KILLS} kills (seed {SEED}, {killed} while writing, write ~"
               f"{span / 1.2 * 1000:.0f} ms): states {dict(sorted(counts.items()))}, "
               f"staging folder left by {left_staging}")
    print(summary)
    assert not problems, summary + "\n" + "\n".join(problems)
    # the kills reached the publishing steps, not only the staging before or cleanup after
    assert killed >= KILLS // 4, summary
    assert sum(n for s, n in counts.items() if s not in ("old", "new")) >= 1, summary


def test_stale_staging_folders_only_are_removed(tmp_path, old_new):
    """A staging folder left by a killed run goes at the next write; nothing else does."""
    old, new = old_new
    out = tmp_path / "out"
    out.mkdir()
    others = _others(out)
    for name in (f"{STAGING}abc123", f"{STAGING}zz"):
        (out / name / "new").mkdir(parents=True)
        (out / name / "new" / "scores.json").write_text("{}")
    write_files(out, new)
    assert not _staging(out)
    assert _snapshot_others(out) == others
    assert (tmp_path / "out-foreign" / "x").read_text() == "keep"  # the link was not followed
    assert {n: (out / n).read_text() for n in OUTPUT_FILES} == new


def test_writers_into_one_folder_take_turns(tmp_path, old_new):
    """A writer waits for the one holding the folder (so the staging folder it would take
    for a killed run's is never a live writer's)."""
    fcntl = pytest.importorskip("fcntl")
    old, new = old_new
    out = tmp_path / "out"
    out.mkdir()
    for file, text in old.items():
        (out / file).write_text(text)
    fd = os.open(out, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another writer at work
    live = out / f"{STAGING}live"
    live.mkdir()
    (live / "new").mkdir()
    done = threading.Event()
    thread = threading.Thread(target=lambda: (write_files(out, new), done.set()))
    thread.start()
    try:
        assert not done.wait(0.5)
        assert live.is_dir() and _state(out, old, new) == "old"
    finally:
        os.close(fd)  # the other writer is done (or was killed)
    thread.join(10)
    assert done.is_set() and not _staging(out) and _state(out, old, new) == "new"
