"""``metascore analyze``: compare ranking methods on an organizer's own data.

Prints the comparison table, shows a progress bar on long work (tqdm, on stderr, only on
a terminal and without ``--quiet``), and writes ``analysis.json`` and a self-contained
``analysis.html`` into ``--out``. Everything is computed before anything is written, so
bad input leaves the output directory untouched. Resamples skipped for lack of a usable
judge (see :func:`metascore.analysis.bootstrap.usable_trials`) are counted in one
``metascore: note:`` line on stderr and explained in the notes of both files. Without
``--methods``, a default method that cannot take the data (``relative_difference`` on
negative scores) is left out with a note and the others are compared; a method named in
``--methods`` that cannot take the data is an error. Before the trials run, a
``metascore: note:`` line says what each method without a batched shortcut will cost
(one full ranking per resample on some axis, priced at its ranking of the whole matrix);
without ``--methods`` a default method that costs more than the other methods together
(:func:`metascore.analysis.costs.costlier_than_the_rest`) is left out, with a note.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from ..analysis import PAPER_AXES, Execution, analyze, setup
from ..analysis.analyze import shared_candidates
from ..analysis.draws import AXES
from ..analysis.topk import SPLITS
from ..analysis.compare import CRITERIA, unusable_methods
from ..errors import ConfigError, InputError, did_you_mean
from ..readers.formats import FORMATS
from ..inputs import Inputs
from ..matrix import ScoreMatrix
from ..registry import DEFAULT_SEED, get_ranking_method, prepare_inputs, ranking_method_names
from ..missing import MISSING_POLICIES
from .common import add_group_options, group_judges, read_matrix_file

__all__ = ["add_analyze_command"]

DEFAULT_METHODS = "mean,median,average_rank,success_rate,relative_difference,copeland"
#: The declared properties the table shows (docs/methods.md).
PROPERTIES = ("condorcet", "pareto", "order_only", "unanimity")


def add_analyze_command(subparsers: argparse._SubParsersAction) -> None:
    """Add ``analyze`` to the ``metascore`` command line."""
    p = subparsers.add_parser(
        "analyze",
        help="compare ranking methods on your data (criteria table, JSON and HTML report)",
        description="Compare ranking methods on a score matrix the way the thesis advises "
        "(ch. 5, 6; ESANN 2021): winner rank, Condorcet rate, generalization to unseen "
        "judges, judge and candidate stability with their spread, Kendall's W of the "
        "judges and the declared properties; stability against the number of judges; rank "
        "intervals per method; with --final, the top-k curves across the two phases (with --topk, "
        "across three phases cut from the one file). "
        "With groups (--group-by or --group), each method ranks in two steps: inside each "
        "group (or --within there), then across the groups. "
        "Writes OUT/analysis.json and OUT/analysis.html.",
    )
    p.add_argument("scores", help="score file (any format `metascore rank` reads)")
    p.add_argument("--final", help="final-phase score file: adds the top-k analysis")
    p.add_argument("--topk", nargs="?", const="disjoint", choices=SPLITS, metavar="SPLIT",
                   help="the top-k analysis on this one file, its judges cut into three "
                   "phases (development, final, post-challenge) in every trial: 'disjoint' "
                   "(the default: each judge in one phase) or 'paper' (METAGEN 2022's code: "
                   "as many judges drawn with replacement, then cut into thirds, so the "
                   "phases share judges; its published k* and d/n are this split's); with "
                   "--final, how the final phase's judges are cut in halves")
    p.add_argument("--methods",
                   help=f"comma-separated methods (default: {DEFAULT_METHODS}; a default "
                   "method that cannot take the data, e.g. relative_difference on negative "
                   "scores, is left out with a note, a method named here is an error then; "
                   "a default method that would cost more than the others together, ranking "
                   "resamples one at a time, is left out with a note too)")
    p.add_argument("--out", required=True, help="output directory for the report")
    _add_trial_options(p)
    _add_run_options(p)
    add_group_options(p)
    p.set_defaults(func=_cmd_analyze)


def _add_trial_options(p: argparse.ArgumentParser) -> None:
    """How many trials each part draws, on which axes, and what it reports."""
    p.add_argument("--trials", type=int, default=1000,
                   help="resamples for the bootstrap criteria, intervals and top-k (default 1000)")
    p.add_argument("--q", type=int, default=100, help="rankings per stability estimate (default 100)")
    p.add_argument("--r", type=int, default=10, help="repetitions of each stability (default 10)")
    p.add_argument("--curve-r", type=int, default=2,
                   help="repetitions per size of the stability-vs-judges curve (default 2)")
    for key in PAPER_AXES:
        p.add_argument(f"--axis-{key.replace('_', '-')}", choices=AXES, default=PAPER_AXES[key],
                       help=f"resampling axis of the {key.replace('_', ' ')} (default "
                       f"{PAPER_AXES[key]}, as ESANN 2021)")
    p.add_argument("--concordance-judges", choices=("kendall_w", "spearman"), default="kendall_w",
                   help="concordance of the judge stability (default kendall_w)")
    p.add_argument("--concordance-candidates", choices=("kendall_w", "spearman"),
                   default="spearman", help="concordance of the candidate stability (default spearman)")
    p.add_argument("--level", type=float, default=0.95, help="rank interval level (default 0.95)")


def _add_run_options(p: argparse.ArgumentParser) -> None:
    """How the analysis runs (seed, missing-data policy, parameters, workers) and reads its
    input."""
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"random seed (default {DEFAULT_SEED})")
    p.add_argument("--missing", default="worst", choices=MISSING_POLICIES,
                   help="missing-data policy (default: worst)")
    p.add_argument("--param", "-p", nargs="+", default=[], metavar="METHOD.NAME=VALUE",
                   help="method parameters, e.g. success_rate.ties=half")
    p.add_argument("--lower-is-better", "-l", nargs="+", default=[], metavar="JUDGE",
                   help="judges where a lower score is better")
    p.add_argument("--format", choices=FORMATS, help="input format (default: detected)")
    p.add_argument("--phase", help="phase to read when a file holds several")
    p.add_argument("--jobs", "-j", type=int, default=1,
                   help="parallel workers for the trials (joblib; -1 = all cores); results "
                   "are identical to one job")
    p.add_argument("--backend", help="joblib backend (default loky; 'dask' sends the trials "
                   "to the cluster given by --scheduler)")
    p.add_argument("--scheduler", help="address of a Dask scheduler (with --backend dask)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def _methods(text: str) -> list[str]:
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise ConfigError(f"--methods lists no method; valid methods are {ranking_method_names()}.")
    for name in names:
        get_ranking_method(name)  # unknown names raise with the valid ones
    return names


def _params(items: list[str], methods: list[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        key, eq, text = item.partition("=")
        try:
            value: Any = json.loads(text)
        except json.JSONDecodeError:
            value = text
        method, dot, name = key.strip().partition(".")
        if not eq:
            raise ConfigError(f"--param {item!r}: write METHOD.NAME=VALUE.")
        if not dot or method not in methods:
            raise ConfigError(f"--param {item!r}: write METHOD.NAME=VALUE with METHOD among "
                              f"{methods}{did_you_mean(method, methods) if dot else ''}.")
        out.setdefault(method, {})[name] = value
    return out


class _Bars:
    """One tqdm bar per stage on stderr; nothing when quiet or stderr is not a terminal."""

    def __init__(self, quiet: bool) -> None:
        self.enabled = not quiet and sys.stderr.isatty()
        self.bar: Any = None
        self.stage = ""

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        if stage != self.stage:
            self.close()
            self.bar = tqdm(total=total, desc=stage, unit="trial", leave=False, file=sys.stderr)
            self.stage = stage
        self.bar.n = done
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _read(path: str, args: argparse.Namespace) -> ScoreMatrix:
    """The phase's matrix, its judges grouped as the group options say."""
    parts: dict = {}
    matrix = read_matrix_file(Path(path), format=args.format, phase=args.phase,
                              lower_is_better=args.lower_is_better, parts=parts)
    return group_judges(matrix, args, parts)


def _backend(args: argparse.Namespace) -> Any:
    """The Dask client to keep alive while the trials run (None without one)."""
    if args.scheduler and args.backend != "dask":
        raise ConfigError("--scheduler needs --backend dask.")
    if args.backend == "dask":
        try:
            from dask.distributed import Client
        except ImportError:
            raise ConfigError("--backend dask needs the optional dependency: "
                              "pip install 'metascore[dask]'.") from None
        return Client(args.scheduler) if args.scheduler else Client(processes=False)
    return None


def _print_table(result: Any) -> None:
    comp = result.comparison
    st = result.settings
    print(f"{st['n_candidates']} candidates x {st['n_judges']} judges, seed {st['seed']}")
    if comp is None:
        print(f"no comparison table: {st['comparison_note']}")
        _print_curves(result)
        return
    if comp.agreement is not None:
        print(f"Kendall's W of the judges: {comp.agreement.w:.3f} "
              f"(mean Spearman between judges {comp.agreement.mean_spearman:.3f})")
    heads = ["method"] + [k for k in CRITERIA] + list(PROPERTIES)
    rows = []
    for i, name in enumerate(comp.methods):
        row = [name]
        for k in CRITERIA:
            v, s = comp.table.loc[i, k], comp.table.loc[i, f"{k}_std"]
            row.append("n/a" if v != v else f"{v:.3f} ± {s:.3f}")
        row += ["yes" if comp.table.loc[i, f] else "no" for f in PROPERTIES]
        rows.append(row)
    widths = [max(len(str(r[c])) for r in [heads] + rows) for c in range(len(heads))]
    for r in [heads] + rows:
        print("  ".join(str(v).ljust(w) if c == 0 else str(v).rjust(w)
                        for c, (v, w) in enumerate(zip(r, widths))))
    ax = comp.axes
    print(f"axes: winner rank {ax['winner_rank']}, Condorcet rate {ax['condorcet_rate']}, "
          f"generalization {ax['generalization']}; stability concordance: judges "
          f"{comp.concordance['judges']}, candidates {comp.concordance['candidates']}; "
          f"± = std over trials (repetitions for stabilities)")
    _print_curves(result)


def _print_curves(result: Any) -> None:
    """The judges needed for a stable ranking and, with a final phase, the top-k."""
    needed = result.curve.judges_needed(0.9)
    print("judges needed for a judge stability of 0.9: " + ", ".join(
        f"{m} {n if n is not None else '> ' + str(int(result.curve.sizes.max()))}"
        for m, n in needed.items()))
    if result.topk:
        print("top-k: " + ", ".join(
            f"{m} k* = {c.k_star:.2f} (best k {c.k_best}, band {c.k_band[0]}-{c.k_band[1]}; "
            f"d/n {c.d_mean / len(c.candidates):.2f})" for m, c in result.topk.items()))


def _note_skipped(result: Any) -> None:
    """One ``metascore: note:`` line on stderr when some part skipped trials."""
    skipped = result.skipped
    if skipped:
        parts = ", ".join(f"{name} {k} of {total}" for name, (k, total) in skipped.items())
        print(f"metascore: note: skipped resamples without a usable judge (or, for the "
              f"generalization, without an out-of-bag judge): {parts}; see the notes in "
              "analysis.json.", file=sys.stderr)


def _with_left_out(result: Any, left_out: dict[str, str]) -> Any:
    """``result`` whose settings record the default methods left out and why (a note each,
    shown in analysis.html's notes and analysis.json)."""
    notes = {m: f"default method {m} left out: {why}." for m, why in left_out.items()}
    settings = {**result.settings,
                "methods_left_out": {**notes, **result.settings.get("methods_left_out", {})},
                "notes": [*notes.values(), *result.settings.get("notes", [])]}
    return dataclasses.replace(result, settings=settings)


def _with_groups(result: Any, matrix: ScoreMatrix) -> Any:
    """``result`` whose settings record the judges' groups, with a note on what the
    declared properties mean for a ranking in two steps."""
    note = ("the judges are in groups, so each method ranks in two steps (inside each group, "
            "then across them); the declared properties are those of the rules, and the "
            "two-step ranking need not keep them (a Condorcet winner of the judges may lose).")
    settings = {**result.settings, "groups": matrix.groups.describe(),
                "notes": [note, *result.settings.get("notes", [])]}
    return dataclasses.replace(result, settings=settings)


def _cmd_analyze(args: argparse.Namespace) -> int:
    from ..render.analysis_report import write_analysis

    methods = _methods(args.methods or DEFAULT_METHODS)
    params = _params(args.param, methods)
    matrix = _read(args.scores, args)
    final = _read(args.final, args) if args.final else None
    if final is not None:
        shared_candidates(matrix, final)  # refused before anything is ranked
    inputs = prepare_inputs(matrix, args.missing)  # once: the check and the analysis read it
    left_out: dict[str, str] = {}
    if args.methods is None:  # the defaults: leave out those the data rules out
        methods, params, left_out = _usable(inputs, final, methods, params, args.missing)
    for m, why in left_out.items():  # said now, before the trials run
        print(f"metascore: note: default method {m} left out: {why}.", file=sys.stderr)
    bars = _Bars(args.quiet)
    client = _backend(args)
    try:
        run = Execution(
            seed=args.seed, missing=args.missing, params=params, progress=bars, jobs=args.jobs,
            backend=args.backend, leave_out_costly=args.methods is None,
            notify=lambda text: print(f"metascore: note: {text}", file=sys.stderr, flush=True))
        result = analyze(
            setup(matrix, methods, run, inputs=inputs), final=final, topk=args.topk,
            n_trials=args.trials, q=args.q, r=args.r, curve_r=args.curve_r, level=args.level,
            axes={k: getattr(args, f"axis_{k}") for k in PAPER_AXES},
            concordance={"judges": args.concordance_judges,
                         "candidates": args.concordance_candidates},
            run=run,
        )
    finally:
        bars.close()
        if client is not None:
            client.close()
    if left_out:
        result = _with_left_out(result, left_out)
    if matrix.groups is not None:
        result = _with_groups(result, matrix)
    _print_table(result)
    _note_skipped(result)
    paths = write_analysis(args.out, result)
    print("wrote " + " and ".join(str(p) for p in paths))
    return 0


def _usable(inputs: Inputs, final: ScoreMatrix | None, methods: list[str],
            params: dict[str, dict[str, Any]], missing: str
            ) -> tuple[list[str], dict[str, dict[str, Any]], dict[str, str]]:
    """The default methods that can rank both phases, their parameters, and why each of
    the others was left out (an InputError when none is left)."""
    run = Execution(missing=missing, params=params)
    left_out = unusable_methods(inputs, methods, run=run)
    if final is not None:
        left_out.update({m: why for m, why in unusable_methods(final, methods, run=run).items()
                         if m not in left_out})
    methods = [m for m in methods if m not in left_out]
    if not methods:
        raise InputError("no default method can rank these scores: "
                         + "; ".join(f"{m}: {why}" for m, why in left_out.items()) + ".")
    return methods, {m: v for m, v in params.items() if m in methods}, left_out
