"""Time the robustness figure (issue 51 item 4) where users get it: the meta-scoring
program's leaderboard build.

Usage: python benchmarks/bench_robustness.py [--only NAME ...] [--no-write]

Each row builds the leaderboard of one phase of N submissions (one per participant) x M
tasks, as ``metascore rank --config`` does (:func:`metascore.leaderboard.build_leaderboard`
on the score table, then every output file rendered), with the configuration's defaults
(average rank, missing: worst, rank intervals from 200 judge resamples, stability, the
report) but ``phases: {final: null}`` (one phase) and, where the row names one,
``ranking.method`` or ``ranking.missing``. The figure's time is that of its one call in the
build (``weights_robustness``, timed in place); the build's is the whole of it. Target:
the figure under 5 s at 1,000 x 60; at 100,000 x 20 a small share of the build. The table
goes into ``benchmarks/README.md`` (``--no-write``: print only).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

import metascore.leaderboard.build as build
from metascore.config import parse_config
from metascore.readers.score_table import ScoreTable
from metascore.render.writers import render_outputs

README = Path(__file__).with_name("README.md")
BEGIN, END = "<!-- bench_robustness: begin -->", "<!-- bench_robustness: end -->"


@dataclass(frozen=True)
class Row:
    name: str
    n: int
    m: int
    ranking: dict
    target: str
    missing_share: float = 0.0


ROWS = [
    Row("1k x 60", 1_000, 60, {}, "< 5 s"),
    Row("1k x 60 dowdall", 1_000, 60, {"method": "dowdall"}, "< 5 s"),
    Row("1k x 60 copeland", 1_000, 60, {"method": "copeland"}, "< 5 s"),
    Row("1k x 60 pairwise", 1_000, 60, {"missing": "pairwise"}, "< 5 s", 0.05),
    Row("100k x 20", 100_000, 20, {}, "a small share of the build"),
]


def score_table(n: int, m: int, missing_share: float) -> ScoreTable:
    """One phase of ``n`` submissions x ``m`` tasks (seeded; 6-decimal scores, so ties)."""
    rng = np.random.default_rng(n * 1_000_003 + m)
    x = np.round(rng.normal(size=(n, 1)) * 0.3 + rng.normal(size=(n, m)), 6)
    x[rng.random((n, m)) < missing_share] = np.nan
    names = np.array([f"p{i:06d}-{1000 + i}" for i in range(n)])
    frame = pd.DataFrame({
        "phase": "Development", "candidate": np.repeat(names, m),
        "participant": np.repeat([s.split("-")[0] for s in names], m),
        "task": np.tile([f"task{j}" for j in range(m)], n), "metric": "score",
        "value": x.ravel()})
    return ScoreTable(frame.dropna(subset=["value"]).reset_index(drop=True))


def measure(row: Row) -> dict:
    table = score_table(row.n, row.m, row.missing_share)
    config = parse_config({"phases": {"final": None},
                           **({"ranking": row.ranking} if row.ranking else {})})
    spent: list[float] = []
    inner = build.weights_robustness

    def timed(*args, **kw):
        start = time.perf_counter()
        out = inner(*args, **kw)
        spent.append(time.perf_counter() - start)
        return out

    build.weights_robustness = timed
    try:
        start = time.perf_counter()
        lb = build.build_leaderboard(table, config)
        render_outputs(lb)
        total = time.perf_counter() - start
    finally:
        build.weights_robustness = inner
    first = lb.robustness.places[0]
    shift = "none" if first.shift is None else f"{first.shift:.4f}"
    return {"figure": spent[0], "total": total,
            "winner": f"{first.kind} {shift}" if first.kind != "not computed" else first.kind}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="row names (e.g. '1k x 60')")
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    args = parser.parse_args()
    rows = [r for r in ROWS if not args.only or r.name in args.only]
    load = os.getloadavg()[0]
    lines = [f"Machine: {platform.machine()}, {os.cpu_count()} cores, load average {load:.1f} "
             f"at the start (shared machine); Python {platform.python_version()}, numpy "
             f"{np.__version__}.", "",
             "| board (one phase, the build with the defaults) | what the row sets | target | "
             "the figure | the whole build | the winner's figure |", "|---|---|---|---|---|---|"]
    for row in rows:
        got = measure(row)
        sets = ", ".join(f"ranking.{k}: {v}" for k, v in row.ranking.items()) or "-"
        if row.missing_share:
            sets += f" ({row.missing_share:.0%} of the cells missing)"
        line = (f"| {row.n:,} submissions x {row.m} tasks | {sets} | {row.target} | "
                f"{got['figure']:.2f} s | {got['total']:.1f} s | {got['winner']} |")
        lines.append(line)
        print(line, flush=True)
    table = "\n".join(lines)
    print(table)
    if not args.no_write and not args.only:  # the table between its markers
        head, rest = README.read_text().split(BEGIN, 1)
        README.write_text(f"{head}{BEGIN}\n{table}\n{END}{rest.split(END, 1)[1]}")
        print(f"rewrote the table in {README}")


if __name__ == "__main__":
    main()
