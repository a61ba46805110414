"""Time the meta-scoring pipeline, analysis included, against the platform's step limit.

Usage: python benchmarks/bench_program.py [--size 50x10] [--bootstrap 200]
           [--methods average_rank copeland schulze kemeny_young epp]
       python benchmarks/bench_program.py --program [2000x20 200x10000 ...]
       python benchmarks/bench_program.py --export [--before SRC] [--only NAME ...]

``--program`` times the whole scoring program on a long CSV written to disk (read, score
matrix, ranking, output files; average_rank, analysis off) at the given sizes, default
2,000 submissions x 20 tasks and 200 x 10,000: reading and the long-table-to-matrix step
must stay linear (seconds, not minutes, against Codabench's 600 s).

``--export`` (issues 42, 52) runs what an organizer runs on the largest competitions: ``metascore
rank --config metascore.yaml --input DIR --output OUT`` on a Codabench ``results.json``
export of two phases, Development and Final (N submissions of N participants x M tasks in
each, one column each, 10-decimal strings as the site writes them, and the baseline
``organizer``), with the configuration ``metascore bundle add-meta`` writes for such a
competition (two phases, the baseline filter, the analysis on: rank intervals, stability,
``compare``): add-meta runs on a copy of ``tests/data/bundles/add_meta_v2`` whose
leaderboard has M columns on one task per phase (``--method`` where the row names one),
and its ``metascore.yaml`` is used as written. Each command runs in a fresh interpreter
(``PYTHONPATH=SRC``), measured from outside (``os.wait4``: wall time, user + system CPU
time, peak RSS); ``--before SRC`` runs it again on older sources (``git archive f8d5791 src
| tar -x -C /tmp/before``), whose address space is capped (``--cap-memory``, 12 GiB) so
that a run asking for tens of GB fails at once instead of taking the machine. The table
goes into ``benchmarks/README.md`` (``--no-write``: print only).

Builds a two-phase competition (``--size`` candidates x tasks, every candidate qualified
with ``filter: {rule: none}``) and times :func:`metascore.leaderboard.build_leaderboard`
plus the rendering of every output file, with and without the analysis (rank
uncertainty: ``--bootstrap`` judge resamples; stability: 50 resamples). Codabench's
default time limit for the scoring step is 600 s; target: seconds for the methods with a
fast path (average_rank, mean, success_rate, copeland), well under the limit for the
others. Methods without a fast path rank every resample through the registry, so their
analysis costs about (bootstrap + 50) rankings.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from metascore.config import parse_config
from metascore.render.writers import render_outputs
from metascore.leaderboard import build_leaderboard
from metascore.readers.score_table import ScoreTable


def competition(n: int, m: int, seed: int = 0) -> ScoreTable:
    """A score table: ``n`` candidates, ``m`` tasks, development and final phases."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(size=n)
    rows = []
    for phase in ("Development", "Final"):
        values = skill[:, None] + rng.normal(scale=0.7, size=(n, m))
        for i in range(n):
            for j in range(m):
                rows.append((phase, f"c{i:03d}", f"p{i:03d}", f"task{j}", "score", values[i, j]))
    return ScoreTable(pd.DataFrame(rows, columns=["phase", "candidate", "participant", "task",
                                                  "metric", "value"]))


def program(sizes: list[str]) -> None:
    """Time read + matrix + rank + write of the scoring program at each ``NxM`` size."""
    from metascore.leaderboard.phases import phase_matrix
    from metascore.program import run
    from metascore.readers.configured import load_scores

    for size in sizes:
        n, m = (int(x) for x in size.split("x"))
        rng = np.random.default_rng(0)
        values = rng.normal(size=(n, 1)) + rng.normal(size=(n, m))
        cands = np.repeat([f"c{i:05d}" for i in range(n)], m)
        frame = pd.DataFrame({
            "phase": "Development", "candidate": cands, "participant": cands,
            "task": np.tile([f"task{j}" for j in range(m)], n), "metric": "score",
            "value": values.ravel(),
        })
        config = parse_config({"phases": {"final": None}, "filter": {"rule": "none"},
                               "input": {"path": "long.csv"},
                               "analysis": {"bootstrap": 0, "stability": False}})
        with tempfile.TemporaryDirectory() as tmp:
            frame.to_csv(Path(tmp) / "long.csv", index=False)
            start = time.perf_counter()
            table = load_scores(config.input, tmp, development=config.phases.development)
            read = time.perf_counter() - start
            start = time.perf_counter()
            phase_matrix(table, "Development", None)
            pivot = time.perf_counter() - start
            start = time.perf_counter()
            run(config, tmp, Path(tmp) / "out", log=lambda _: None)
            total = time.perf_counter() - start
        print(f"{n:6d} submissions x {m:6d} tasks ({n * m:9,d} rows): read {read:6.2f} s, "
              f"matrix {pivot:6.2f} s, whole program {total:6.2f} s", flush=True)


ROOT = Path(__file__).resolve().parents[1]
README = Path(__file__).with_name("README.md")
BEGIN, END = "<!-- bench_program: begin -->", "<!-- bench_program: end -->"


@dataclass(frozen=True)
class Export:
    name: str
    n: int  # submissions (one per participant)
    m: int  # tasks
    method: str | None  # None: the default (average_rank)
    target: str


EXPORTS = [
    Export("e20k", 20_000, 20, None, "-"),
    Export("e100k", 100_000, 20, None, "< 60 s, < 2 GB"),
    Export("e20k-copeland", 20_000, 20, "copeland", "memory within the n x n counts in uint8 (400 MB)"),
    Export("e100k-schulze", 100_000, 20, "schulze", "refused before it starts, naming the size"),
]


def write_export(n: int, m: int, folder: Path) -> Path:
    """A Codabench ``results.json`` of two phases, Development and Final: ``n`` submissions
    x ``m`` tasks each (seeded; the final scores follow the development ones), and the
    baseline ``organizer``, which about half of the participants beat in Development. The
    judge j is column ``Score j`` of task ``Task`` (ids 100 and 101: one task per phase), as
    :func:`meta_config`'s bundle names it. Alone in its folder (the configuration reads
    ``path: .``)."""
    path = folder / f"export-{n}x{m}" / "results.json"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(n * 1_000_003 + m)
    skill = rng.normal(size=(n, 1)) * 0.3
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as fh:
        fh.write("{\n")
        for p, (phase, task) in enumerate((("Development(41)", 100), ("Final(42)", 101))):
            x = np.round(skill + rng.normal(size=(n, m)), 6)
            base = np.round(np.median(x, axis=0), 6)  # beaten by about half on average rank
            cols = [f"Task({task})-Score {j}" for j in range(m)]
            keys = [f"p{i:06d}-{1000 + i + p * n}" for i in range(n)] + [f"organizer-{10 + p}"]
            fh.write(f'    "Results - {phase}": {{\n')
            for i, key in enumerate(keys):
                row = (x[i] if i < n else base).tolist()
                cells = ",\n".join(f'            "{c}": "{v:.10f}"' for c, v in zip(cols, row))
                fh.write(f'        "{key}": {{\n{cells}\n        }}' + (",\n" if i < n else "\n"))
            fh.write("    },\n" if p == 0 else "    }\n")
        fh.write("}\n")
    tmp.rename(path)
    return path


def meta_config(m: int, method: str | None, folder: Path) -> Path:
    """The ``metascore.yaml`` that ``metascore bundle add-meta`` writes for a two-phase
    competition of ``m`` leaderboard columns on one task per phase (the fixture bundle
    ``add_meta_v2`` with its columns replaced), ``--method`` when given; the baseline is the
    bundle's solution, participant ``organizer``."""
    name = f"add-meta-{m}-{method or 'default'}"
    config = folder / f"{name}.yaml"
    if config.exists():
        return config
    bundle = folder / name
    shutil.rmtree(bundle, ignore_errors=True)
    shutil.copytree(ROOT / "tests" / "data" / "bundles" / "add_meta_v2", bundle)
    yaml = bundle / "competition.yaml"
    text = yaml.read_text().replace("name: Development Task", "name: Task")
    text = text.replace("name: Final Task", "name: Task").split("leaderboards:")[0]
    yaml.write_text(text + "leaderboards:\n  - title: Results\n    key: main\n    columns:\n" + "".join(
        f"      - {{title: Score {j}, key: score{j}, index: {j}, sorting: desc}}\n" for j in range(m)))
    argv = [sys.executable, "-m", "metascore", "bundle", "add-meta", str(bundle), "--end", "2026-12-31",
            *(["--method", method] if method else [])]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    shutil.copyfile(next(bundle.glob("*/reference_data/metascore.yaml")), config)
    return config


def exports(args: argparse.Namespace) -> None:
    """The ``--export`` rows, after and (with ``--before``) before; the table."""
    from bench_files import measure

    chosen = [e for e in EXPORTS if not args.only or e.name in args.only]
    load_start, started = os.getloadavg(), time.time()
    results: dict[str, dict[str, Any]] = {}
    for spec in chosen:
        path = write_export(spec.n, spec.m, args.data)
        config = meta_config(spec.m, spec.method, args.data)
        print(f"{spec.name}: {path.stat().st_size / 1e6:.0f} MB export", flush=True)
        for tag, src, cap in (("after", ROOT / "src", None), ("before", args.before, args.cap_memory)):
            if src is None:
                continue
            out = args.data / f"out-{spec.name}-{tag}"
            argv = [sys.executable, "-m", "metascore", "rank", "--config", str(config),
                    "--input", str(path.parent), "--output", str(out)]
            run = measure(_capped(argv, cap), Path(src), args.cap)
            results.setdefault(spec.name, {})[tag] = run
            print(f"  {tag:6s} {_cell(run, args.cap, cap)}", flush=True)
    load_end = os.getloadavg()
    lines = [
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, load average {load_start[0]:.1f} at "
        f"the start and {load_end[0]:.1f} at the end (shared machine); Python "
        f"{platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}.",
        f"Run: `python benchmarks/bench_program.py --export"
        f"{' --before ' + str(args.before) if args.before else ''}` ({time.time() - started:.0f} s); "
        "each cell: wall time, user + system CPU time, peak RSS (the before runs' address space "
        f"capped at {args.cap_memory / 2**30:g} GiB).",
        "",
        "| export (two phases, `metascore rank --config`, add-meta's configuration) | method | target | before | after |",
        "|---|---|---|---|---|",
    ]
    for spec in chosen:
        runs = results.get(spec.name, {})
        lines.append(f"| 2 x {spec.n:,} submissions x {spec.m} tasks | {spec.method or 'average_rank (default)'} | "
                     f"{spec.target} | {_cell(runs.get('before'), args.cap, args.cap_memory)} | "
                     f"{_cell(runs.get('after'), args.cap, None)} |")
    print("\n".join(lines))
    if not args.no_write and not args.only:
        text = README.read_text()
        head, rest = text.split(BEGIN, 1)
        README.write_text(head + BEGIN + "\n" + "\n".join(lines) + "\n" + END + rest.split(END, 1)[1])
        print(f"rewrote the table in {README}")


def _capped(argv: list[str], cap: int | None) -> list[str]:
    """``argv`` run with its address space capped at ``cap`` bytes (None: as it is)."""
    return argv if cap is None else ["prlimit", f"--as={cap}", *argv]


def _cell(run: Any, cap: float, memory: int | None) -> str:
    if run is None:
        return "–"
    cpu = f", CPU {run.cpu:.1f} s" if run.cpu is not None else ""
    if run.seconds is None:
        return f"stopped after {cap:g} s, {run.rss_mb:,.0f} MB"
    if run.error:
        return f"failed after {run.seconds:.1f} s{cpu}, {run.rss_mb:,.0f} MB: {run.error[:240]}"
    return f"{run.seconds:.1f} s{cpu}, {run.rss_mb:,.0f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", nargs="*", metavar="NxM",
                        help="time the whole program at these sizes (default 2000x20 200x10000)")
    parser.add_argument("--export", action="store_true",
                        help="the largest competitions' exports through `metascore rank --config`")
    parser.add_argument("--before", type=Path, help="--export: the sources of the code before (a src folder)")
    parser.add_argument("--only", nargs="+", help="--export: these rows only (print, do not write)")
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "metascore-bench-exports")
    parser.add_argument("--cap", type=float, default=600.0, help="seconds before a run is stopped")
    parser.add_argument("--cap-memory", type=int, default=12 << 30,
                        help="bytes of address space of a --before run")
    parser.add_argument("--no-write", action="store_true", help="print, do not rewrite README.md")
    parser.add_argument("--size", default="50x10")
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--methods", nargs="+",
                        default=["average_rank", "copeland", "schulze", "kemeny_young", "epp"])
    args = parser.parse_args()
    if args.export:
        args.data.mkdir(parents=True, exist_ok=True)
        exports(args)
        return
    if args.program is not None:
        program(args.program or ["2000x20", "200x10000"])
        return
    n, m = (int(x) for x in args.size.split("x"))
    table = competition(n, m)
    print(f"{n} candidates x {m} tasks, bootstrap {args.bootstrap}, stability q=50 r=1")
    for method in args.methods:
        times = []
        for analysis in ({"bootstrap": 0, "stability": False},
                         {"bootstrap": args.bootstrap, "stability": True}):
            config = parse_config({"filter": {"rule": "none"}, "ranking": {"method": method},
                                   "analysis": analysis})
            start = time.perf_counter()
            render_outputs(build_leaderboard(table, config))
            times.append(time.perf_counter() - start)
        print(f"{method:16s} without analysis {times[0]:7.2f} s   with analysis "
              f"{times[1]:7.2f} s", flush=True)


if __name__ == "__main__":
    main()
