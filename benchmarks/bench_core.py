"""Time every classical method on the sizes issue 2 names and print a table.

Usage: python benchmarks/bench_core.py [--repeat 3] [--sizes 50x100 200x10000 20x471033]

Targets (2-core machine, pure numpy): every method under 1 s on 200 x 10,000 and under 2 s
on 20 x 471,033 (one real competition used each test sample as a judge). Each cell is the
median wall-clock time of ``metascore.rank`` on a continuous random matrix (no ties),
including validation, orientation, pairwise counts and ranks.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import metascore as ms

CLASSICAL = ["mean", "median", "average_rank", "success_rate", "relative_difference", "copeland", "random_dictator"]


def make_matrix(n: int, m: int, seed: int = 0) -> ms.ScoreMatrix:
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(n, 1))
    values = 1 / (1 + np.exp(-(quality + rng.normal(scale=1.5, size=(n, m)))))
    directions = np.arange(m) % 4 != 3  # every fourth judge is lower-is-better
    return ms.ScoreMatrix.from_array(values, higher_is_better=list(directions))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sizes", nargs="+", default=["50x100", "200x10000", "20x471033"])
    parser.add_argument("--methods", nargs="+", default=CLASSICAL)
    args = parser.parse_args()
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes]
    print(f"{'method':22s}" + "".join(f"{f'{n}x{m}':>14s}" for n, m in sizes))
    matrices = {size: make_matrix(*size) for size in sizes}
    for name in args.methods:
        cells = []
        for size in sizes:
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                ms.rank(matrices[size], name)
                times.append(time.perf_counter() - start)
            cells.append(f"{np.median(times):13.3f}s")
        print(f"{name:22s}" + "".join(cells), flush=True)


if __name__ == "__main__":
    main()
