"""Time the meta-scoring pipeline, analysis included, against the platform's step limit.

Usage: python benchmarks/bench_program.py [--size 50x10] [--bootstrap 200]
           [--methods average_rank copeland schulze kemeny_young epp]
       python benchmarks/bench_program.py --program [2000x20 200x10000 ...]

``--program`` times the whole scoring program on a long CSV written to disk (read, score
matrix, ranking, output files; average_rank, analysis off) at the given sizes, default
2,000 submissions x 20 tasks and 200 x 10,000: reading and the long-table-to-matrix step
must stay linear (seconds, not minutes, against Codabench's 600 s).

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
import tempfile
import time
from pathlib import Path

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
            table, _ = load_scores(config, tmp)
            read = time.perf_counter() - start
            start = time.perf_counter()
            phase_matrix(table, "Development", None)
            pivot = time.perf_counter() - start
            start = time.perf_counter()
            run(config, tmp, Path(tmp) / "out", log=lambda _: None)
            total = time.perf_counter() - start
        print(f"{n:6d} submissions x {m:6d} tasks ({n * m:9,d} rows): read {read:6.2f} s, "
              f"matrix {pivot:6.2f} s, whole program {total:6.2f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", nargs="*", metavar="NxM",
                        help="time the whole program at these sizes (default 2000x20 200x10000)")
    parser.add_argument("--size", default="50x10")
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--methods", nargs="+",
                        default=["average_rank", "copeland", "schulze", "kemeny_young", "epp"])
    args = parser.parse_args()
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
