"""Reading and ranking files: the command line and the meta-scoring program against the
bare path (``pandas.read_csv`` + the library call), before and after, in one run.

Usage:
    python benchmarks/bench_files.py --before /tmp/perf-before/src   # rewrites the table
    python benchmarks/bench_files.py --no-write --only w20x20000     # one input, print only

Each command runs in its own subprocess; its wall time and peak resident memory (RSS,
``os.wait4``) are measured from outside. The inputs are random (seeded) and written once
into ``--data`` (default: ``$TMPDIR/metascore-bench-files``, reused when present):

- wide CSV (``candidate,s0,s1,...``, one row per candidate, scores with 6 decimals);
- long CSV (``phase,candidate,participant,task,metric,value``, one row per score).

Commands, per input:

- ``rank``: ``metascore rank FILE -m average_rank`` (quick mode, the table on stdout);
- ``program``: ``metascore rank --config metascore.yaml --input FILE --output DIR`` with
  one phase and no bootstrap (``phases: {final: null}``, ``analysis: {bootstrap: 0}``),
  the meta-scoring program's pipeline; the outputs' total size is reported;
- ``bare``: ``pandas.read_csv`` (a long file pivoted to candidates x judges) then
  ``metascore.rank(frame, "average_rank")``, in a fresh interpreter too.

``--before SRC`` runs ``rank`` and ``program`` a second time with ``PYTHONPATH=SRC`` (the
code before the change: ``git worktree add /tmp/perf-before <commit>``). A command over
``--cap`` seconds is stopped and reported as such. The machine's load average is
recorded at the start and the end: on a shared machine, rerun when it is low. Memory is
reported as the peak RSS and as that peak above the interpreter with metascore imported
(``metascore --version``), against the budget of 3 x (the matrix as float64 + the file).
Timing targets live here, never in the test suite.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
README = Path(__file__).with_name("README.md")
BEGIN, END = "<!-- bench_files: begin -->", "<!-- bench_files: end -->"
CONFIG = "phases: {development: Development, final: null}\nanalysis: {bootstrap: 0}\n"


@dataclass(frozen=True)
class Input:
    name: str
    kind: str  # "wide" or "long"
    n: int  # candidates
    m: int  # judges
    commands: tuple[str, ...]

    @property
    def label(self) -> str:
        rows = f" ({self.n * self.m / 1e6:g}M rows)" if self.kind == "long" else ""
        return f"{self.kind} CSV, {self.n:,} x {self.m:,}{rows}"


INPUTS = [
    Input("w20x20000", "wide", 20, 20_000, ("rank", "program")),
    Input("w20x100000", "wide", 20, 100_000, ("rank", "program")),
    Input("l200x10000", "long", 200, 10_000, ("rank", "program")),
    Input("l2000x20", "long", 2_000, 20, ("rank", "program")),
    Input("w20x471033", "wide", 20, 471_033, ("rank", "program")),
]


# ---------------------------------------------------------------------- inputs
def scores(n: int, m: int, seed: int) -> np.ndarray:
    """Candidates of different quality, noisy per judge, rounded to 6 decimals."""
    rng = np.random.default_rng(seed)
    return np.round(rng.normal(size=(n, 1)) * 0.3 + rng.normal(size=(n, m)), 6)


def write_input(spec: Input, folder: Path) -> Path:
    """The input file, written by a child interpreter when missing: a peak RSS read by
    ``os.wait4`` counts what a child inherited at ``fork``, so this process stays small."""
    path = folder / f"{spec.name}.csv"
    if not path.exists():
        child = multiprocessing.get_context("spawn").Process(target=_write_input, args=(spec, path))
        child.start()
        child.join()
        if child.exitcode != 0:
            raise SystemExit(f"writing {path} failed (exit code {child.exitcode})")
    return path


def _write_input(spec: Input, path: Path) -> None:
    x = scores(spec.n, spec.m, seed=spec.n * 1_000_003 + spec.m)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as fh:
        if spec.kind == "wide":
            fh.write("candidate," + ",".join(f"s{j}" for j in range(spec.m)) + "\n")
            for i, row in enumerate(x):
                fh.write(f"c{i:04d}," + ",".join(f"{v:.6f}" for v in row.tolist()) + "\n")
        else:
            frame = pd.DataFrame({
                "phase": "Development",
                "candidate": np.repeat([f"c{i:04d}" for i in range(spec.n)], spec.m),
                "participant": np.repeat([f"p{i:04d}" for i in range(spec.n)], spec.m),
                "task": np.tile([f"t{j:05d}" for j in range(spec.m)], spec.n),
                "metric": "score",
                "value": x.reshape(-1),
            })
            frame.to_csv(fh, index=False, float_format="%.6f", lineterminator="\n")
    tmp.rename(path)
    return path


BARE_WIDE = ("import sys, pandas as pd, metascore as ms\n"
             "frame = pd.read_csv(sys.argv[1], index_col=0)\n"
             "ms.rank(frame, 'average_rank')\n")
BARE_LONG = ("import sys, pandas as pd, metascore as ms\n"
             "frame = pd.read_csv(sys.argv[1])\n"
             "wide = frame.pivot(index='candidate', columns='task', values='value')\n"
             "ms.rank(wide, 'average_rank')\n")


# ---------------------------------------------------------------------- measuring
@dataclass
class Run:
    seconds: float | None  # None: over the cap
    rss_mb: float
    outputs_mb: float | None = None
    error: str | None = None
    cpu: float | None = None  # user + system seconds of the command


def measure(argv: list[str], src: Path, cap: float, out: Path | None = None) -> Run:
    """Wall time and peak RSS of one command in a fresh interpreter (PYTHONPATH=src)."""
    env = dict(os.environ, PYTHONPATH=str(src), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    if out is not None:
        shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    deadline = start + cap
    status, usage = 0, None
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pid, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = -9
            return Run(None, usage.ru_maxrss / 1024)
        time.sleep(0.02)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
    size = None
    if out is not None and out.exists():
        size = sum(f.stat().st_size for f in out.iterdir() if f.is_file()) / 1e6
    run = Run(seconds, usage.ru_maxrss / 1024, size, cpu=usage.ru_utime + usage.ru_stime)
    if proc.returncode != 0:
        run.error = err.splitlines()[-1] if err else f"exit {proc.returncode}"
    return run


def commands(spec: Input, path: Path, work: Path, tag: str) -> dict[str, tuple[list[str], Path | None]]:
    py = sys.executable
    out = work / f"out-{spec.name}-{tag}"
    return {
        "rank": ([py, "-m", "metascore", "rank", str(path), "-m", "average_rank"], None),
        "program": ([py, "-m", "metascore", "rank", "--config", str(work / "metascore.yaml"),
                     "--input", str(path), "--output", str(out)], out),
        "bare": ([py, "-c", BARE_WIDE if spec.kind == "wide" else BARE_LONG, str(path)], None),
    }


# ---------------------------------------------------------------------- report
def fmt_time(run: Run | None, cap: float) -> str:
    if run is None:
        return "–"
    if run.seconds is None:
        return f"over {cap:g} s"
    if run.error:
        return f"failed ({run.error[:60]})"
    return f"{run.seconds:.2f} s" if run.seconds < 10 else f"{run.seconds:.1f} s"


def fmt_cell(run: Run | None, cap: float) -> str:
    if run is None:
        return "–"
    text = f"{fmt_time(run, cap)}, {run.rss_mb:,.0f} MB"
    if run.outputs_mb is not None and run.seconds is not None and not run.error:
        text += f", outputs {run.outputs_mb:.1f} MB"
    return text


def table(results: dict[tuple[str, str], dict[str, Run]], base_rss: float, cap: float,
          folder: Path) -> list[str]:
    lines = ["| input | command | before | after | bare path | after / bare | memory above imports |",
             "|---|---|---|---|---|---|---|"]
    for spec in INPUTS:
        bare = results.get((spec.name, "bare"), {}).get("after")
        for cmd in spec.commands:
            runs = results.get((spec.name, cmd))
            if not runs:
                continue
            after = runs.get("after")
            ratio = "–"
            if after and bare and after.seconds and bare.seconds and not after.error:
                ratio = f"{after.seconds / bare.seconds:.2f}"
            budget = 3 * (spec.n * spec.m * 8 / 1e6 + (folder / f"{spec.name}.csv").stat().st_size / 1e6)
            above = "–"
            if after and after.seconds is not None:
                above = f"{after.rss_mb - base_rss:,.0f} MB (budget {budget:,.0f}"
                above += f"; bare path {bare.rss_mb - base_rss:,.0f})" if bare and bare.seconds else ")"
            shown = "`metascore rank FILE -m average_rank`" if cmd == "rank" else \
                "`metascore rank --config` (program, no bootstrap)"
            lines.append(f"| {spec.label} | {shown} | {fmt_cell(runs.get('before'), cap)} | "
                         f"{fmt_cell(after, cap)} | {fmt_cell(bare, cap)} | {ratio} | {above} |")
    return lines


def rewrite_readme(lines: list[str]) -> None:
    text = README.read_text()
    if BEGIN not in text:
        raise SystemExit(f"{README} has no {BEGIN} marker")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    README.write_text(head + BEGIN + "\n" + "\n".join(lines) + "\n" + END + tail)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="source tree of the old code (its src folder)")
    parser.add_argument("--data", type=Path,
                        default=Path(tempfile.gettempdir()) / "metascore-bench-files")
    parser.add_argument("--only", nargs="+", help="input names (default: all)")
    parser.add_argument("--cap", type=float, default=300.0, help="seconds before a run is stopped")
    parser.add_argument("--no-write", action="store_true", help="print, do not rewrite README.md")
    args = parser.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    (args.data / "metascore.yaml").write_text(CONFIG)
    after_src = ROOT / "src"
    chosen = [s for s in INPUTS if not args.only or s.name in args.only]
    load_start = os.getloadavg()
    started = time.time()
    base = measure([sys.executable, "-m", "metascore", "--version"], after_src, args.cap)
    results: dict[tuple[str, str], dict[str, Run]] = {}
    for spec in chosen:
        path = write_input(spec, args.data)
        print(f"{spec.label}: {path.stat().st_size / 1e6:.1f} MB", flush=True)
        for tag, src in (("after", after_src), ("before", args.before)):
            if src is None:
                continue
            cmds = commands(spec, path, args.data, tag)
            names = list(spec.commands) + (["bare"] if tag == "after" else [])
            for cmd in names:
                argv, out = cmds[cmd]
                run = measure(argv, src, args.cap, out)
                results.setdefault((spec.name, cmd), {})[tag] = run
                print(f"  {tag:6s} {cmd:8s} {fmt_cell(run, args.cap)}", flush=True)
    load_end = os.getloadavg()
    import metascore

    lines = [
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, load "
        f"average {load_start[0]:.1f} at the start and {load_end[0]:.1f} at the end (shared "
        f"machine); Python {platform.python_version()}, numpy {np.__version__}, pandas "
        f"{pd.__version__}, metascore {metascore.__version__}.",
        f"Run: `python benchmarks/bench_files.py{' --before ' + str(args.before) if args.before else ''}` "
        f"({time.time() - started:.0f} s); interpreter with metascore imported: "
        f"{base.rss_mb:.0f} MB; each cell: wall time, peak RSS (and the outputs' size).",
        "",
        *table(results, base.rss_mb, args.cap, args.data),
    ]
    print("\n".join(lines))
    if not args.no_write and not args.only:
        rewrite_readme(lines)
        print(f"rewrote the table in {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
