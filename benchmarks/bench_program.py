"""Time the meta-scoring pipeline, analysis included, against the platform's step limit.

Usage: python benchmarks/bench_program.py [--size 50x10] [--bootstrap 200]
           [--methods average_rank copeland schulze kemeny_young epp]

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
import time

import numpy as np
import pandas as pd

from metascore.config import parse_config
from metascore.io.writers import render_outputs
from metascore.leaderboard import build_leaderboard


def competition(n: int, m: int, seed: int = 0) -> pd.DataFrame:
    """Long table: ``n`` candidates, ``m`` tasks, development and final phases."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(size=n)
    rows = []
    for phase in ("Development", "Final"):
        values = skill[:, None] + rng.normal(scale=0.7, size=(n, m))
        for i in range(n):
            for j in range(m):
                rows.append((phase, f"c{i:03d}", f"p{i:03d}", f"task{j}", "score", values[i, j]))
    return pd.DataFrame(rows, columns=["phase", "candidate", "participant", "task", "metric",
                                       "value"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="50x10")
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--methods", nargs="+",
                        default=["average_rank", "copeland", "schulze", "kemeny_young", "epp"])
    args = parser.parse_args()
    n, m = (int(x) for x in args.size.split("x"))
    frame = competition(n, m)
    print(f"{n} candidates x {m} tasks, bootstrap {args.bootstrap}, stability q=50 r=1")
    for method in args.methods:
        times = []
        for analysis in ({"bootstrap": 0, "stability": False},
                         {"bootstrap": args.bootstrap, "stability": True}):
            config = parse_config({"filter": {"rule": "none"}, "ranking": {"method": method},
                                   "analysis": analysis})
            start = time.perf_counter()
            render_outputs(build_leaderboard(frame, config))
            times.append(time.perf_counter() - start)
        print(f"{method:16s} without analysis {times[0]:7.2f} s   with analysis "
              f"{times[1]:7.2f} s", flush=True)


if __name__ == "__main__":
    main()
