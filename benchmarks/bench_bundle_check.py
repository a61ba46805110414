"""What a hostile ``competition.yaml`` costs ``metascore bundle check`` (issue 42 item 8):
before and after.

Four bundles (made in a temporary folder from ``tests/data/bundles/hostile``): the bundle
as it is (a real-sized ``competition.yaml``, 1 KB), the same at the bounds (4 MiB, 195,000
nodes: the most a check may cost), the same with a 26 MB
``competition.yaml`` of 500,000 mappings, and a zip of it whose ``competition.yaml``
carries 200 MB of comments (under 1 MB zipped). Each ``metascore bundle check`` runs as
users run it (``python -m metascore bundle check BUNDLE``, its defaults) in a fresh
process that imports metascore from ``--src`` (default: this checkout; the ``src`` of an
older checkout for the "before" column), with its own ``$TMPDIR``; a run still going after
``--cap`` seconds is sent SIGTERM, as a user or a CI job ends it. Printed per bundle: the
exit code (``SIGTERM at cap`` for a stopped run), wall time, user+sys CPU time, peak
resident memory, what is left in ``$TMPDIR`` afterwards (files and folders, bytes), and the
first error line.

    git archive f8911a4 src | tar -x -C /tmp/before        # the code before issue 42
    python benchmarks/bench_bundle_check.py --src /tmp/before/src --cap 300
    python benchmarks/bench_bundle_check.py
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from hostile_fixtures import hostile_bundle  # noqa: E402


def bundles(work: Path) -> dict[str, Path]:
    """The four bundles, by the name of their row."""
    plain, edge, big = (hostile_bundle(work / name, []) for name in ("plain", "edge", "big"))
    for bundle in (plain, edge, big):  # a baseline, so that the real-sized bundle checks clean
        with open(bundle / "ranking" / "metascore.yaml", "a", encoding="utf-8") as handle:
            handle.write("baselines: [good_too]\n")
    text = (big / "competition.yaml").read_text(encoding="utf-8")
    with open(big / "competition.yaml", "a", encoding="utf-8") as handle:
        handle.write("extra:\n")
        for i in range(500_000):
            handle.write(f"  - {{name: entry number {i:06d}, value: 0.5, note: x}}\n")
    archive = work / "comments.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(plain.rglob("*")):
            if path.is_file() and path.name != "competition.yaml":
                zf.write(path, path.relative_to(plain).as_posix())
        with zf.open("competition.yaml", "w", force_zip64=True) as member:
            member.write(text.encode())
            line = b"# " + b"x" * 97 + b"\n"
            for _ in range(2_000_000):
                member.write(line)
    with open(edge / "competition.yaml", "a", encoding="utf-8") as handle:
        handle.write("extra:\n")  # the most the bounds let through
        for i in range(39_000):  # 5 nodes each: 195,000 of the 200,000
            handle.write(f"  - {{name: entry number {i:06d}, value: 0.5}}\n")
        while handle.tell() < (4 << 20) - 200:
            handle.write("# " + "x" * 97 + "\n")
    size = (big / "competition.yaml").stat().st_size
    return {"real-sized competition.yaml (folder)": plain,
            "at the bounds: 4 MiB, 195,000 nodes (folder)": edge,
            f"{size / 1e6:.1f} MB competition.yaml, 500,000 mappings (folder)": big,
            f"{archive.stat().st_size / 1e3:.0f} KB zip, 200 MB of comments in its yaml": archive}


def measure(bundle: Path, src: Path, cap: float, work: Path) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="tmpdir-", dir=work))
    env = {**os.environ, "PYTHONPATH": str(src), "TMPDIR": str(tmp)}
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "metascore", "bundle", "check", str(bundle)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
    stopped = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if not stopped and time.monotonic() - start > cap:
            proc.send_signal(signal.SIGTERM)
            stopped = True
        time.sleep(0.05)
    wall = time.monotonic() - start
    output = proc.stdout.read()
    proc.returncode = os.waitstatus_to_exitcode(status)
    entries = list(tmp.rglob("*"))
    left = (len(entries), sum(f.stat().st_size for f in entries if f.is_file() and not f.is_symlink()))
    error = next((line for line in output.splitlines() if "error" in line), "")
    shutil.rmtree(tmp, ignore_errors=True)
    return {"code": "SIGTERM at cap" if stopped else str(proc.returncode), "wall": wall,
            "cpu": usage.ru_utime + usage.ru_stime, "peak": usage.ru_maxrss * 1024, "left": left,
            "error": error[:150]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the metascore sources to time")
    parser.add_argument("--cap", type=float, default=300, help="seconds before a run is sent SIGTERM")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-bundle-check-"))
    try:
        print(f"src {args.src}; load average {os.getloadavg()[0]:.1f} at start")
        print("| bundle | exit | wall | user+sys | peak RSS | left in $TMPDIR | first error |")
        print("|---|---|---|---|---|---|---|")
        for name, bundle in bundles(work).items():
            got = measure(bundle, args.src.resolve(), args.cap, work)
            print(f"| {name} | {got['code']} | {got['wall']:.1f} s | {got['cpu']:.1f} s | "
                  f"{got['peak'] / 2**20:.0f} MiB | {got['left'][0]} entries, {got['left'][1] / 1e6:.0f} MB | "
                  f"{got['error']} |", flush=True)
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
