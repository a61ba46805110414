"""Time the optimal and probabilistic methods (issue 5) and print tables.

Usage: python benchmarks/bench_advanced.py [--quick]

1. Kemeny-sized problems (n = 8, 12, 20, 30, 40 candidates, 15 judges): every method of
   issue 5 on a "competition" matrix (noisy skills: judges mostly agree) and
   ``kemeny_young`` also on an impartial-culture matrix (independent random judges: the
   hardest case for the exact solver). Targets: exact Kemeny at n = 20 in seconds and at
   n = 40 under a minute on a 2-core machine.
2. EPP / Elo / SCO on dense counts (n = 20, 200, 2000 candidates, 15 judges).
3. Sparse: 50,000 candidates and 30,000 seven-player votes drawn from known skills
   (performance = skill + N(0, 1) noise), counts built with
   ``PairwiseCounts.from_votes(..., sparse=True)``; prints time, Kendall tau to the true
   skills and the peak memory allocated during the call. Target for the default ``sco``: a few seconds, tau >= ~0.548
   (what open_spiel's C++ SGD reaches on data of this shape), memory well under 2 GB.

``--quick`` runs a small subset (n <= 20, dense n <= 200, sparse 5,000 candidates).
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc

import numpy as np
from scipy.stats import kendalltau

import metascore as ms

ADVANCED = ["kemeny_young", "schulze", "ranked_pairs", "epp", "elo", "sco", "sco_fenchel_young"]


def skill_matrix(n: int, m: int, noise: float, seed: int = 0) -> ms.ScoreMatrix:
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(n, 1)) + noise * rng.normal(size=(n, m))
    return ms.ScoreMatrix.from_array(values, [f"c{i:05d}" for i in range(n)])


def timed(data, method: str, **params) -> tuple[float, ms.Ranking]:
    start = time.perf_counter()
    r = ms.rank(data, method, **params)
    return time.perf_counter() - start, r


def kemeny_table(sizes: list[int]) -> None:
    print(f"\n# Kemeny-sized problems, 15 judges: seconds per method\n{'method':30s}"
          + "".join(f"{f'n={n}':>10s}" for n in sizes))
    rows = [(name, 0.5, {}) for name in ADVANCED] + [("kemeny_young (impartial)", 100.0, {})]
    for label, noise, params in rows:
        method = label.split()[0]
        cells = []
        for n in sizes:
            seconds, r = timed(skill_matrix(n, 15, noise), method, **params)
            extra = "" if method != "kemeny_young" else ("u" if r.details["unique"] else "*")
            cells.append(f"{seconds:9.3f}{extra or ' '}")
        print(f"{label:30s}" + "".join(cells), flush=True)
    print("(kemeny: u = unique optimum, * = several optima)")


def dense_table(sizes: list[int]) -> None:
    print(f"\n# Dense counts, 15 judges: seconds per method\n{'method':30s}"
          + "".join(f"{f'n={n}':>10s}" for n in sizes))
    for method in ["epp", "elo", "sco", "sco_fenchel_young"]:
        cells = [f"{timed(skill_matrix(n, 15, 1.0), method)[0]:9.3f} " for n in sizes]
        print(f"{method:30s}" + "".join(cells), flush=True)


def sparse_votes(n: int, votes: int, k: int = 7, seed: int = 0):
    rng = np.random.default_rng(seed)
    skill = rng.normal(size=n)
    # k distinct players per vote: redraw the votes that name a player twice.
    players = rng.integers(0, n, size=(votes, k))
    while True:
        srt = np.sort(players, axis=1)
        bad = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))
        if bad.size == 0:
            break
        players[bad] = rng.integers(0, n, size=(bad.size, k))
    perf = skill[players] + rng.normal(size=players.shape)
    ranked = np.take_along_axis(players, np.argsort(-perf, axis=1), axis=1)
    labels = [f"p{i:05d}" for i in range(n)]
    start = time.perf_counter()
    counts = ms.PairwiseCounts.from_votes(
        ([labels[i] for i in row] for row in ranked), candidates=labels, sparse=True
    )
    return counts, skill, time.perf_counter() - start


def sparse_table(n: int, votes: int) -> None:
    counts, skill, build = sparse_votes(n, votes)
    print(f"\n# Sparse: {n} candidates, {votes} seven-player votes "
          f"(counts built in {build:.2f} s)")
    print(f"{'method':30s}{'seconds':>10s}{'tau':>10s}{'peak MB':>10s}")
    for method, params in [("sco", {}), ("epp", {}), ("elo", {}), ("average_rank", {}),
                           ("sco", {"solver": "sgd", "iterations": 100_000, "learning_rate": 0.1})]:
        seconds, r = timed(counts, method, **params)
        tracemalloc.start()  # a second run: tracing slows numpy down
        timed(counts, method, **params)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        label = method + (" (sgd, 1e5 steps, lr 0.1)" if params else "")
        tau = kendalltau(r.scores, skill)[0]
        print(f"{label:30s}{seconds:10.2f}{tau:10.3f}{peak:10.0f}", flush=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"(peak MB: numpy/Python allocations during the call, tracemalloc; "
          f"process peak RSS {rss:.0f} MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a fast subset")
    args = parser.parse_args()
    if args.quick:
        kemeny_table([8, 12, 20])
        dense_table([20, 200])
        sparse_table(5_000, 3_000)
    else:
        kemeny_table([8, 12, 20, 30, 40])
        dense_table([20, 200, 2000])
        sparse_table(50_000, 30_000)


if __name__ == "__main__":
    main()
