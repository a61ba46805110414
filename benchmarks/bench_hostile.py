"""What one hostile submission costs the run (issue 32): per fixture, before and after.

For each submission of ``tests/hostile_fixtures.py`` (or those named with ``--only``), the
hostile bundle runs with the two good submissions and that one alone (``bundle run``,
local backend, ``--memory 256m --max-processes 50 --disk-limit 20m --log-limit 1m``), in a
fresh interpreter that imports metascore from ``--src`` (default: this checkout; give the
``src`` of an older checkout for the "before" column). Printed per fixture: how the run
ended (``ok``, or the exception that stopped it, or ``timeout``), the submission's status,
the runner's own peak resident memory and the bytes it wrote (``wchar`` of
``/proc/self/io``: every ``write``, ``sendfile`` and ``copy_file_range``), the bytes left
under ``--out`` and the wall time.

    git archive 5c911d3 src | tar -x -C /tmp/before        # the code before issue 32
    python benchmarks/bench_hostile.py --src /tmp/before/src
    python benchmarks/bench_hostile.py --only memfd,keyring
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

from hostile_fixtures import EXPECTED, hostile_bundle  # noqa: E402

from metascore.bundle.worker.limits import tree_size  # noqa: E402

RUNNER = """
import ctypes, json, resource, sys
# a key in this process's own session keyring, as an organizer's shell may hold one
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall(250, 1, None)  # keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL): a fresh keyring
libc.syscall(248, b"user", b"metascore-bench", b"the organizer's secret", 22, -3)  # add_key
try:
    from metascore.bundle.worker.limits import Limits
except ImportError:  # a checkout from before the bundle sub-packages (--src of an older one)
    from metascore.bundle.limits import Limits
from metascore.bundle.runner import run_bundle
limits = Limits(memory=256 << 20, processes=50, disk=20 << 20, log=1 << 20)
outcome, status = "ok", None
try:
    report = run_bundle(sys.argv[1], sys.argv[2], limits=limits, backend="local", jobs=2)
    status = {r.candidate: [r.status, r.status_details] for r in report.results}
except BaseException as exc:
    outcome = f"{type(exc).__name__}: {str(exc)[:120]}"
io = dict(line.split(": ") for line in open("/proc/self/io").read().splitlines())
print(json.dumps({"outcome": outcome, "status": status, "wchar": int(io["wchar"]),
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def measure(name: str, src: Path, timeout: float) -> dict:
    work = Path(tempfile.mkdtemp(prefix="bench-hostile-", dir=Path.home()))
    try:
        bundle = hostile_bundle(work, [name])
        env = {**os.environ, "PYTHONPATH": str(src)}
        start = time.monotonic()
        try:
            proc = subprocess.run([sys.executable, "-c", RUNNER, str(bundle), str(work / "out")],
                                  capture_output=True, text=True, env=env, timeout=timeout)
            lines = proc.stdout.strip().splitlines()
            got = json.loads(lines[-1]) if lines else {"outcome": f"died: {proc.stderr.strip()[-120:]}"}
        except subprocess.TimeoutExpired:
            got = {"outcome": f"timeout after {timeout:.0f} s"}
        got["seconds"] = time.monotonic() - start
        got["out"] = tree_size([work / "out"])
        return got
    finally:
        subprocess.run(["rm", "-rf", str(work)], check=False)  # a tree of any depth
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the metascore sources to run")
    parser.add_argument("--only", default="", help="comma-separated fixture names")
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(EXPECTED)
    print(f"{'fixture':<24} {'run':<40} {'status':<50} {'peak MB':>8} {'wrote MB':>9} {'out MB':>7} {'s':>6}")
    for name in names:
        got = measure(name, args.src, args.timeout)
        status = (got.get("status") or {}).get(name)
        shown = " ".join(str(s) for s in status)[:50] if status else "-"
        mb = lambda key: f"{got[key] / 2**20:.0f}" if key in got else "-"  # noqa: E731
        print(f"{name!r:<24} {got['outcome'][:40]:<40} {shown:<50} {mb('peak'):>8} {mb('wchar'):>9} "
              f"{mb('out'):>7} {got['seconds']:>6.0f}", flush=True)


if __name__ == "__main__":
    main()
