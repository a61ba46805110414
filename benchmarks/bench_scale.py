"""Method choice and exact Kemeny at benchmark scale (issues 33, 45), before and after, one run.

Usage:
    git worktree add /tmp/i45-before f8911a4          # the code before issue 45
    python benchmarks/bench_scale.py --before /tmp/i45-before/src --openml OpenML.data \
        --metagen competition-metageneralization/data/benchmarks
    python benchmarks/bench_scale.py --no-write --only kemeny       # print one group

Each row runs in a fresh interpreter, measured from outside (wall time and peak RSS by
``os.wait4``, :mod:`bench_files`); a run over ``--cap`` seconds is stopped. Groups:

- ``analyze``: ``metascore analyze FILE --out DIR`` (default methods, 1,000 trials, q = 100,
  r = 10) on the wide CSVs of per-sample judges of ``bench_files.py`` (20 x 100,000 and
  20 x 471,033; random scores, some negative, so ``relative_difference`` is left out);
  targets under 20 s and 90 s, memory under 2 GB;
- ``esann``: the ESANN 2021 OpenML matrix (292 algorithms x 76 datasets; ``--openml``
  names the ``.data`` file of github.com/Didayolo/ranking-esann-2021, datasets in rows),
  written once as the wide CSV a user gives (a row per algorithm, every value as read):
  ``metascore analyze esann.csv --format wide --out DIR`` (the defaults), target under
  10 s; the same with the 8 methods of ``bench_analysis.py`` (its 9 but ``kemeny_young``)
  named in ``--methods`` (the label says so). With ``--before``, the default row's
  ``analysis.json`` is compared with the code before's: every value the same (only the
  cost note of the method that had no batched shortcut, ``settings.costs`` and its note,
  may go);
- ``metagen`` (opt-in, ``--metagen DIR``: the ``data/benchmarks`` folder of
  github.com/Didayolo/competition-metageneralization): METAGEN 2022's four real
  benchmarks (AutoDL-AUC, AutoML, Statlog, OpenML; datasets in rows, higher is better)
  through ``metascore analyze FILE --methods mean --topk paper --trials 10000`` (the
  paper's ranking function, the mean of the scores, its split and its 10,000 trials; the
  label says so): the best k and d/n against the published ones (the notebook's printed
  k* and the d/n in its figures' titles). Allowed: the published k* inside ``k_band``
  (where the best k of another run of 10,000 trials falls, 95% of the time: the paper's
  run is one such run), and d/n within three standard errors of the difference of two
  runs of 10,000 trials (sqrt(2) x the standard error of the mean of d/n over our trials)
  plus 0.005 (the published value is rounded to two decimals);
- ``reference``: the printed table of ``metascore analyze`` against the reference path
  (``Execution(fast=False)``: the registry on every resample) on 20 x 2,000 judges, 200
  trials (the
  code before has no reference path: not run there);
- ``kemeny``: exact Kemeny-Young on near-transitive profiles (30 judges, qualities spread
  over 3, Gaussian noise 0.5 or 1.0): 100 candidates under 10 s each, 200 within a minute,
  the objective equal to the proven bound;
- ``mean``: ``ms.rank(x, "mean")`` on a plain 200 x 10,000 array against a bare
  ``np.mean(x, axis=1)`` on the same array, the best of 50 calls each: within 1.2x.

``--before SRC`` runs every row a second time with ``PYTHONPATH=SRC``. The table between
the markers of ``benchmarks/README.md`` is rewritten (not with ``--only`` or ``--no-write``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_files import INPUTS, ROOT, Run, fmt_cell, measure, write_input  # noqa: E402

README = Path(__file__).with_name("README.md")
BEGIN, END = "<!-- bench_scale: begin -->", "<!-- bench_scale: end -->"
EIGHT = ["mean", "median", "average_rank", "success_rate", "relative_difference", "copeland",
         "schulze", "epp"]

#: METAGEN 2022's published results: (k*, d/n), from its notebook (experiments.ipynb).
METAGEN = {"AutoDL-AUC": (3, 1.34), "AutoML": (3, 1.65), "Statlog": (5, 3.7), "OpenML": (7, 18.08)}


def wide_csv(data: Path, name: str, folder: Path) -> Path:
    """A ``.data`` matrix (datasets in rows, algorithms in columns) as the wide CSV a user
    gives: a row per algorithm, a column per dataset, every value as read (repr)."""
    path = folder / f"{name}.csv"
    if not path.exists():
        x = np.loadtxt(data).T
        lines = ["candidate," + ",".join(f"d{j}" for j in range(x.shape[1]))]
        lines += [f"a{i}," + ",".join(repr(float(v)) for v in row) for i, row in enumerate(x)]
        path.write_text("\n".join(lines) + "\n")
    return path


def metagen_cell(name: str, folder: Path) -> str:
    """The best k and d/n of ``folder/analysis.json`` against METAGEN 2022's."""
    import json

    curves = json.loads((folder / "analysis.json").read_text())["top_k"]["mean"]
    k_pub, dn_pub = METAGEN[name]
    n, trials = curves["n_candidates"], curves["n_trials"]
    dn = curves["d_over_n"]
    allowed = 3 * np.sqrt(2) * curves["d_std"] / n / np.sqrt(trials) + 0.005
    lo, hi = curves["k_band"]
    k_ok = lo <= k_pub <= hi
    dn_ok = abs(dn - dn_pub) <= allowed
    return (f"best k {curves['k_best']} (band {lo}-{hi}; paper {k_pub}: "
            f"{'in' if k_ok else 'OUTSIDE'}), d/n {dn:.3f} (paper {dn_pub}, allowed "
            f"±{allowed:.3f}: {'ok' if dn_ok else 'OFF'})")


REFERENCE = """
import io, sys, contextlib, numpy as np, metascore as ms
from metascore.analysis import analyze
from metascore.cli.analyze import _print_table
rng = np.random.default_rng(0)
m = ms.ScoreMatrix.from_array(rng.normal(size=(20, 1)) * 0.3 + rng.normal(size=(20, 2000)))
methods = ["mean", "median", "average_rank", "success_rate", "copeland"]
tables = []
for fast in (True, False):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        _print_table(analyze(m, methods, n_trials=200, q=20, r=5, run=ms.Execution(fast=fast)))
    tables.append(out.getvalue())
sys.exit(0 if tables[0] == tables[1] else 3)
"""

KEMENY = """
import sys, numpy as np, metascore as ms
n, noise = int(sys.argv[1]), float(sys.argv[2])
rng = np.random.default_rng(0)
values = np.linspace(3, 0, n)[:, None] + rng.normal(scale=noise, size=(n, 30))
r = ms.rank(ms.ScoreMatrix.from_array(values), "kemeny_young")
d = r.details
if "lower_bound" not in d:  # the code before issue 33: exact up to 50 per cycle, no bound
    print(f"note: solved, no bound reported; largest cycle {max(d['components'])}",
          file=sys.stderr)
    sys.exit(5)
proven = d["optimal"] and d["kendall_distance"] == d["lower_bound"]
print(f"note: distance {d['kendall_distance']:g} {'=' if proven else '>'} bound "
      f"{d['lower_bound']:g}, largest cycle {max(d['components'])}", file=sys.stderr)
sys.exit(5 if proven else 4)
"""

MEAN = """
import sys, time, numpy as np, metascore as ms
x = np.random.default_rng(0).normal(size=(200, 10_000))
def best(call):
    times = []
    for _ in range(50):
        start = time.perf_counter(); call(); times.append(time.perf_counter() - start)
    return min(times)
bare = best(lambda: np.mean(x, axis=1))
ours = best(lambda: ms.rank(x, "mean"))
print(f"note: {ours * 1e3:.2f} ms against np.mean's {bare * 1e3:.2f} ms: {ours / bare:.2f}x",
      file=sys.stderr)
sys.exit(5 if ours <= 1.2 * bare else 4)
"""


def rows(args: argparse.Namespace, work: Path) -> list[tuple[str, str, str, list[str], Path | None]]:
    """(group, what, target, argv, output folder) of every row."""
    py = sys.executable
    out: list[tuple[str, str, str, list[str], Path | None]] = []
    for spec in INPUTS:
        if spec.name in ("w20x100000", "w20x471033"):
            path = write_input(spec, args.data)
            target = "< 20 s" if spec.m == 100_000 else "< 90 s"
            out.append(("analyze", f"`metascore analyze` on a {spec.label} (default methods)",
                        f"{target}, < 2 GB",
                        [py, "-m", "metascore", "analyze", str(path), "--out",
                         str(work / f"an-{spec.name}"), "-q"], work / f"an-{spec.name}"))
    if args.openml:
        esann = wide_csv(args.openml, "esann", args.data)
        for what, extra, key in (
                ("`metascore analyze esann.csv` (defaults)", [], "esann"),
                ("`metascore analyze esann.csv --methods` (8 methods named)",
                 ["--methods", ",".join(EIGHT)], "esann8")):
            out.append(("esann", f"ESANN OpenML 292 x 76: {what}", "< 10 s",
                        [py, "-m", "metascore", "analyze", str(esann), "--format", "wide",
                         "--out", str(work / f"an-{key}"), "-q", *extra], work / f"an-{key}"))
    if args.metagen:
        for name in METAGEN:
            path = wide_csv(args.metagen / f"{name}.data", f"metagen-{name}", args.data)
            out.append(("metagen", f"METAGEN 2022 {name}: `analyze --methods mean --topk paper "
                        "--trials 10000` (the paper's function, split and trials)",
                        "k*, d/n = paper's", [py, "-m", "metascore", "analyze", str(path),
                        "--format", "wide", "--methods", "mean", "--topk", "paper", "--trials",
                        "10000", "--out", str(work / f"mg-{name}"), "-q"], work / f"mg-{name}"))
    out.append(("reference", "printed table = the reference path's (20 x 2,000, 200 trials)",
                "identical", [py, "-c", REFERENCE], None))
    for n, noise, target in ((100, 0.5, "< 10 s"), (100, 1.0, "< 10 s"), (200, 0.5, "< 60 s")):
        out.append(("kemeny", f"exact Kemeny, {n} candidates x 30 judges, noise {noise:g}",
                    f"{target}, objective = bound", [py, "-c", KEMENY, str(n), str(noise)], None))
    out.append(("mean", "`ms.rank(x, \"mean\")` on a plain 200 x 10,000 array / bare `np.mean`",
                "< 1.2x", [py, "-c", MEAN], None))
    return out


def shown(run: Run, cap: float) -> str:
    """A cell: wall time and peak RSS, with what the run said (a line ``note: ...`` on
    stderr and exit 5), or why it failed (exit 3: the tables differ; exit 4: Kemeny's
    optimum not proven, or the mean over 1.2x)."""
    if run.seconds is not None and run.error and run.error.startswith("note: "):
        return f"{run.seconds:.2f} s, {run.rss_mb:,.0f} MB, {run.error[6:]}"
    if run.seconds is not None and not run.error and run.cpu is not None:
        return f"{fmt_cell(run, cap)} (CPU {run.cpu:.1f} s)"
    if run.seconds is not None and run.error == "exit 3":
        return f"the tables differ ({run.seconds:.1f} s)"
    if run.seconds is not None and run.error and "Error: " in run.error:  # one line, no class
        return f"failed: {run.error.split('Error: ', 1)[1]}"
    return fmt_cell(run, cap)


def same_analysis(after: Path, before: Path) -> str:
    """Whether two ``analysis.json`` hold the same values, the cost note of a method that
    lost its one-at-a-time ranking aside (``settings.costs`` and its note)."""
    import json

    def values(folder: Path) -> dict:
        data = json.loads((folder / "analysis.json").read_text())
        settings = data["settings"]
        settings.pop("costs", None)
        notes = [n for n in settings.pop("notes", []) if "no batched shortcut" not in n]
        if notes:
            settings["notes"] = notes
        return data

    return "identical" if values(after) == values(before) else "DIFFERENT"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="source tree of the old code (its src folder)")
    parser.add_argument("--openml", type=Path, help="the ESANN 2021 OpenML.data file")
    parser.add_argument("--metagen", type=Path, help="METAGEN 2022's data/benchmarks folder "
                        "(opt-in rows: the top-k analysis with the paper's split)")
    parser.add_argument("--data", type=Path,
                        default=Path(tempfile.gettempdir()) / "metascore-bench-files")
    parser.add_argument("--only", nargs="+",
                        help="groups: analyze esann metagen reference kemeny mean")
    parser.add_argument("--cap", type=float, default=600.0, help="seconds before a run is stopped")
    parser.add_argument("--no-write", action="store_true", help="print, do not rewrite README.md")
    args = parser.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="metascore-bench-scale-"))
    load_start, started = os.getloadavg(), time.time()
    lines = ["| what | target | before | after |", "|---|---|---|---|"]
    chosen = [row for row in rows(args, work) if not args.only or row[0] in args.only]
    cells: dict[tuple[str, str], str] = {}
    # every row of the new code first, then the old code's (capped, often much longer)
    for tag, src in (("after", ROOT / "src"), ("before", args.before)):
        for group, what, _, argv, folder in chosen:
            if src is not None and not (tag == "before" and group in ("reference", "metagen")):
                cells[(what, tag)] = shown(measure(argv, src, args.cap, folder), args.cap)
                if group == "metagen" and (folder / "analysis.json").exists():
                    cells[(what, tag)] += "; " + metagen_cell(what.split()[2].rstrip(":"),
                                                              folder)
                if group == "esann" and folder is not None and (folder / "analysis.json").exists():
                    kept = folder.with_name(folder.name + f"-{tag}")
                    shutil.rmtree(kept, ignore_errors=True)
                    shutil.copytree(folder, kept)
                print(f"{what} [{tag}]: {cells[(what, tag)]}", flush=True)
    for _, what, target, _, _ in chosen:
        lines.append(f"| {what} | {target} | {cells.get((what, 'before'), '–')} | "
                     f"{cells[(what, 'after')]} |")
    same = work / "an-esann-after", work / "an-esann-before"
    if all((f / "analysis.json").exists() for f in same):
        lines.append(f"| ESANN, the defaults: `analysis.json` after = before | identical | – | "
                     f"{same_analysis(*same)} |")
    load_end = os.getloadavg()
    import metascore
    import scipy

    head = [
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, load "
        f"average {load_start[0]:.1f} at the start and {load_end[0]:.1f} at the end (shared "
        f"machine); Python {platform.python_version()}, numpy {np.__version__}, scipy "
        f"{scipy.__version__}, metascore {metascore.__version__}.",
        f"Run: `python benchmarks/bench_scale.py{' --before ' + str(args.before) if args.before else ''}"
        f"{' --openml ' + args.openml.name if args.openml else ''}"
        f"{' --metagen ' + args.metagen.name if args.metagen else ''}"
        f"{f' --cap {args.cap:g}' if args.cap != 600 else ''}` ({time.time() - started:.0f} s); "
        "each cell: wall time, peak RSS (and the CPU time, user + system, of the command).",
        "",
    ]
    print("\n".join(head + lines))
    if not args.no_write and not args.only:
        text = README.read_text()
        before, rest = text.split(BEGIN, 1)
        _, after = rest.split(END, 1)
        README.write_text(before + BEGIN + "\n" + "\n".join(head + lines) + "\n" + END + after)
        print(f"rewrote the table in {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
