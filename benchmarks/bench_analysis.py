"""Time the bootstrap analyses on a 200 candidates x 10,000 judges matrix.

Usage: python benchmarks/bench_analysis.py [--size 200x10000] [--q 100] [--r 1 10]
           [--methods average_rank copeland] [--registry-samples 3]

Reference: the toolbox behind the thesis (ranky) takes 41 s for 100 resamples of average
rank on this size. Target: seconds. Every analysis resamples judges once per trial for
all methods; ``average_rank`` and ``copeland`` take their fast paths (per-judge ranks and
pairwise signs computed once, resamples applied as weights), which the tests prove equal
to ranking each resampled matrix through the registry. For comparison the script also
times a few registry rankings of resampled matrices and extrapolates to q * r of them
(``--registry-samples 0`` skips it).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import metascore as ms
from metascore.analysis import condorcet_rate, rank_uncertainty, stability

sys.path.insert(0, str(Path(__file__).parent))
from bench_core import make_matrix  # noqa: E402


def timed(label: str, func, *args, **kwargs):
    start = time.perf_counter()
    out = func(*args, **kwargs)
    print(f"{label:58s} {time.perf_counter() - start:8.2f} s", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="200x10000")
    parser.add_argument("--q", type=int, default=100)
    parser.add_argument("--r", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--methods", nargs="+", default=["average_rank", "copeland"])
    parser.add_argument("--registry-samples", type=int, default=3)
    args = parser.parse_args()
    n, m = (int(v) for v in args.size.split("x"))
    matrix = make_matrix(n, m)
    print(f"matrix {n} x {m}, q = {args.q}")
    for r in args.r:
        for name in args.methods:
            res = timed(f"stability {name} (judges, q={args.q}, r={r})", stability, matrix, name, q=args.q, r=r)
            print(f"{'':8s}W = {res.mean[name]:.5f} (std over r: {res.std[name]:.1e})")
        timed(f"stability {' + '.join(args.methods)} together (r={r})", stability, matrix, args.methods,
              q=args.q, r=r)
    timed("rank_uncertainty average_rank (1000 trials)", rank_uncertainty, matrix, "average_rank",
          n_trials=1000)
    timed(f"condorcet_rate {' + '.join(args.methods)} (100 trials)", condorcet_rate, matrix,
          args.methods, n_trials=100)
    if args.registry_samples:
        rng = np.random.default_rng(0)
        for name in args.methods:
            start = time.perf_counter()
            for _ in range(args.registry_samples):
                ms.rank(matrix.subset(judges=np.sort(rng.integers(0, m, size=m))), name)
            per = (time.perf_counter() - start) / args.registry_samples
            print(f"{'registry path ' + name + f' (extrapolated to q={args.q})':58s} "
                  f"{per * args.q:8.2f} s  ({per:.2f} s per resample)", flush=True)


if __name__ == "__main__":
    main()
