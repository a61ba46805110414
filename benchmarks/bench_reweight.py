"""The ranking page's re-weighting panel (issue 51): how long the page takes to rank again
when a reader changes a weight, in headless Chromium, on 1,000 candidates x 60 judges.

Usage:
    python benchmarks/bench_reweight.py                  # every method the page recomputes; rewrites the table
    python benchmarks/bench_reweight.py --no-write --only mean,copeland --repeats 5

For each method of ``metascore.render.reweight.RECOMPUTED`` the page is written as users get
it, by ``metascore rank --config`` (one phase of 1,000 candidates, no filter, the analysis
off) on a random board: 60 judges (3 tasks x 20 metrics), half scoring 1 to 10 (ties), half
with 4 decimals, random directions and weights, 3% of the cells of 20 judges missing (the
default missing-data policy, ``worst``). Chromium (Playwright's driver on Debian's
``/usr/bin/chromium``) opens it, and each repeat sets the first judge's weight (0, then 1,
alternately) in its input and sends the form's ``change`` event, as a reader's Enter does:
the panel then ranks the 1,000 candidates again (``MetascoreMethods.rank``), redraws its
table's 1,000 rows and updates the link. The time is that whole handler, measured in the
page (``performance.now()`` around the synchronous dispatch), and the CPU time the browser's
renderer processes used meanwhile (DevTools' ``SystemInfo.getProcessInfo``), which a loaded
machine does not lengthen. The median of ``--repeats`` is reported, with the machine's load. Target: under 100 ms.
Timing targets live here, never in the test suite.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = Path(__file__).with_name("README.md")
BEGIN, END = "<!-- bench_reweight: begin -->", "<!-- bench_reweight: end -->"
N, TASKS, METRICS = 1000, 3, 20

#: One weight change as a reader makes it: the input set, the form's change event sent.
CHANGE = """(repeats) => {
  const input = document.getElementById('rw-j0'), form = document.querySelector('#reweight form');
  const panel = [];
  for (let k = 0; k < repeats; k++) {
    input.value = String(k % 2 === 0 ? 0 : 1);
    let t = performance.now();
    form.dispatchEvent(new Event('change', {bubbles: true}));
    panel.push(performance.now() - t);
    if (document.querySelectorAll('#reweighted tbody tr').length !== 1000) throw new Error('not ranked');
  }
  return panel;
}"""


def write_board(folder: Path, seed: int = 51) -> tuple[Path, dict]:
    rng = np.random.default_rng(seed)
    ids = rng.permutation(np.arange(10_000, 10_000 + N))
    names = np.array([f"p{c:04d}-{ids[c]}" for c in range(N)])
    frames, judges = [], []
    for j in range(TASKS * METRICS):
        task, metric = f"t{j // METRICS}", f"m{j % METRICS}"
        judges.append({"task": task, "metric": metric, "weight": float(rng.choice([0.5, 1.0, 2.0])),
                       "direction": str(rng.choice(["higher", "lower"]))})
        values = rng.integers(1, 11, N).astype(float) if j % 2 == 0 else np.round(rng.uniform(0.01, 1, N), 4)
        keep = rng.random(N) >= (0.03 if j % 3 == 0 else 0.0)
        frames.append(pd.DataFrame({"phase": "Board", "candidate": names[keep], "participant": [n.split("-")[0] for n in names[keep]],
                                    "task": task, "metric": metric, "value": values[keep]}))
    path = folder / "board.csv"
    pd.concat(frames).to_csv(path, index=False)
    return path, {"input": {"path": path.name}, "phases": {"development": "Board", "final": None},
                  "judges": judges, "filter": {"rule": "none"},
                  "analysis": {"bootstrap": 0, "stability": False, "compare": []}}


def make_page(path: Path, config: dict, method: str, out: Path) -> tuple[Path, float]:
    """``metascore rank --config`` with ``method``: the page, and the seconds it took."""
    from metascore.cli import main

    out.mkdir(parents=True, exist_ok=True)
    cfg = out / "metascore.yaml"
    cfg.write_text(yaml.safe_dump({**config, "ranking": {"method": method}}))
    t = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = main(["rank", "--config", str(cfg), "--input", str(path), "--output", str(out)])
    if code != 0:
        raise SystemExit(f"{method}: metascore rank failed: {err.getvalue()}")
    return out / "detailed_results.html", time.perf_counter() - t


def renderers_cpu(cdp) -> float:
    """Seconds of CPU the browser's renderer processes have used."""
    info = cdp.send("SystemInfo.getProcessInfo")["processInfo"]
    return sum(p["cpuTime"] for p in info if p["type"] == "renderer")


def measure(browser, page: Path, repeats: int) -> tuple[float, float]:
    """Median milliseconds of a weight change (the panel's handler, wall time), and the
    renderers' CPU milliseconds per change (what a loaded machine does not lengthen)."""
    tab = browser.new_page(viewport={"width": 1155, "height": 710})
    tab.goto(page.as_uri())
    if tab.locator("#reweighted tbody tr").count() != N:
        raise SystemExit(f"{page}: the panel did not rank the {N} candidates: {tab.inner_text('#reweight')[:300]}")
    cdp = browser.new_browser_cdp_session()
    cpu = renderers_cpu(cdp)
    panel = tab.evaluate(CHANGE, repeats)
    cpu = (renderers_cpu(cdp) - cpu) * 1000 / repeats
    cdp.detach()
    tab.close()
    return statistics.median(panel), cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="comma-separated methods (default: every method the page recomputes)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from playwright.sync_api import sync_playwright

    from metascore.render.reweight import RECOMPUTED

    methods = args.only.split(",") if args.only else sorted(RECOMPUTED)
    load = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory(prefix="metascore-bench-reweight-") as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        path, config = write_board(Path(tmp))
        for method in methods:
            page, made = make_page(path, config, method, Path(tmp) / method)
            change, cpu = measure(browser, page, args.repeats)
            rows.append((method, RECOMPUTED[method], change, cpu))
            print(f"{method:20s} {RECOMPUTED[method]:7s} {change:9.1f} ms  cpu {cpu:7.1f} ms  "
                  f"(page {made:.1f} s, {page.stat().st_size / 1e6:.1f} MB)", flush=True)
        browser.close()
    table = [f"{N:,} candidates x {TASKS * METRICS} judges, median of {args.repeats} weight changes, "
             f"load {load:.1f} at the start and {os.getloadavg()[0]:.1f} at the end (2 cores, Chromium "
             "headless):", "", "| method | work grows as | one weight change, wall (ms) | its CPU (ms) | under 100 ms |",
             "|---|---|---|---|---|"]
    grows = {"values": "n m log n", "pairs": "n² m", "cubic": "n³"}
    table += [f"| `{m}` | {grows[kind]} | {ms:,.0f} | {cpu:,.0f} | {'yes' if ms < 100 else 'CPU only' if cpu < 100 else 'no'} |"
              for m, kind, ms, cpu in rows]
    print("\n".join(table))
    if not args.no_write and not args.only:
        text = README.read_text()
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        README.write_text(head + BEGIN + "\n" + "\n".join(table) + "\n" + END + tail)


if __name__ == "__main__":
    main()
