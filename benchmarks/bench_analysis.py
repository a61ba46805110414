"""Time the analyses: the comparison table, rank intervals, and stability at scale.

Usage: python benchmarks/bench_analysis.py [table] [intervals] [stability]
           [--table-sizes 13x66 292x76] [--data FILE.data ...] [--jobs 1]
           [--trials 1000] [--q 100] [--r 10]

Targets (2 cores):

- ``table``: the full comparison table (``compare_methods``: winner rank, Condorcet rate,
  generalization on 1,000 resamples; judge and candidate stability on q = 100 x r = 10) for
  9 methods (the 6 classical + kemeny_young, schulze, epp) under 60 s on a 13 x 66 and a
  292 x 76 matrix (the sizes of the ESANN 2021 AutoDL and OpenML benchmarks; ``--data``
  reads those ``.data`` files, datasets in rows, from the paper's repository instead of the
  synthetic matrices). When exact Kemeny-Young does not prove its optimum within 10 s on
  the whole matrix (the OpenML matrix has a 279-candidate cycle of near ties), it would
  cost that much per resample: the script says so and times the other methods;
- ``intervals``: the scoring program's rank intervals (``rank_uncertainty``, 200 resamples
  of the judges) with kemeny_young or sco on 20 candidates under 3 s;
- ``stability``: judge stability of average_rank and copeland, q = 100, on 200 x 10,000
  (the toolbox behind the thesis, ranky, takes 41 s for average rank).

How resamples are scored: README, "Performance" (the fast paths in
``metascore/analysis/fastpaths.py`` and ``bootstrap.py``).

Measured (2 cores, load average 1.1-1.6 by ``uptime``, ``--jobs 2``): table 13 x 66,
7-12 s (was 42 s), 7-8 s on the real AutoDL-ALC matrix; table 292 x 76, 8 methods, 32-39 s
(was 1,621 s), 37-42 s on the real OpenML matrix (55 s with one job); intervals 0.2 s
(kemeny_young) and 0.7 s (sco); stability 0.5 s (average_rank) and 2.1 s (copeland).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import metascore as ms
from metascore.analysis import compare_methods, rank_uncertainty, stability
from metascore.errors import MetascoreError

sys.path.insert(0, str(Path(__file__).parent))
from bench_core import make_matrix  # noqa: E402

NINE = ["mean", "median", "average_rank", "success_rate", "relative_difference", "copeland",
        "kemeny_young", "schulze", "epp"]
PARAMS = {"relative_difference": {"on": "ranks"}}  # the paper's variant; any sign of score


def timed(label: str, func, *args, **kwargs):
    start = time.perf_counter()
    out = func(*args, **kwargs)
    print(f"{label:64s} {time.perf_counter() - start:8.2f} s", flush=True)
    return out


def load_data(path: str) -> ms.ScoreMatrix:
    x = np.loadtxt(path).T  # the paper's files hold datasets in rows
    return ms.ScoreMatrix.from_array(x, [f"a{i}" for i in range(x.shape[0])],
                                     [f"d{j}" for j in range(x.shape[1])])


def bench_table(args: argparse.Namespace) -> None:
    matrices = {p: load_data(p) for p in args.data} or {
        s: make_matrix(*(int(v) for v in s.split("x"))) for s in args.table_sizes}
    for label, matrix in matrices.items():
        methods = list(NINE)
        for name in ("kemeny_young",):
            try:
                r = ms.rank(matrix, name, time_limit=10.0)
                if not r.details["optimal"]:
                    raise MetascoreError(r.notes[0])
            except MetascoreError as exc:
                print(f"{label}: {name} not solved ({str(exc)[:90]}...); timing without it")
                methods.remove(name)
        res = timed(f"table {matrix.n_candidates} x {matrix.n_judges}, {len(methods)} methods, "
                    f"jobs={args.jobs}", compare_methods, matrix, methods, n_trials=args.trials,
                    q=args.q, r=args.r, run=ms.Execution(params=PARAMS, jobs=args.jobs))
        cols = ["method", "winner_rank", "condorcet_rate", "generalization", "stability_judges",
                "stability_candidates"]
        print(res.table[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))


def bench_intervals(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(0)
    x = np.arange(20, 0, -1.0)[:, None] * 0.3 + rng.normal(size=(20, 30))
    matrix = ms.ScoreMatrix.from_array(x, [f"c{i}" for i in range(20)])
    for name in ("kemeny_young", "sco"):
        timed(f"rank intervals {name}, 20 candidates x 30 judges, 200 resamples",
              rank_uncertainty, matrix, name, n_trials=200, run=ms.Execution(jobs=args.jobs))


def bench_stability(args: argparse.Namespace) -> None:
    matrix = make_matrix(200, 10_000)
    for name in ("average_rank", "copeland"):
        res = timed(f"stability {name} (judges, 200 x 10,000, q={args.q}, r=1)", stability,
                    matrix, name, q=args.q, r=1, run=ms.Execution(jobs=args.jobs))
        print(f"{'':8s}W = {res.mean[name]:.5f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = ["table", "intervals", "stability"]
    # choices are checked below: argparse (3.11) refuses an empty list against choices
    parser.add_argument("parts", nargs="*", help=f"any of {parts} (default: all)")
    parser.add_argument("--table-sizes", nargs="+", default=["13x66", "292x76"])
    parser.add_argument("--data", nargs="+", default=[], help="ESANN 2021 .data files")
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--q", type=int, default=100)
    parser.add_argument("--r", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    unknown = sorted(set(args.parts) - set(parts))
    if unknown:
        parser.error(f"unknown part {unknown[0]!r}; choose from {parts}")
    for part in args.parts or parts:
        {"table": bench_table, "intervals": bench_intervals, "stability": bench_stability}[part](args)


if __name__ == "__main__":
    main()
