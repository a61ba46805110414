"""The ``metascore`` command line.

``main(argv) -> int`` parses arguments and dispatches to small per-command functions.
Library errors (:class:`~metascore.errors.MetascoreError`, ``OSError``) become one line on
stderr and exit code 1 through :func:`metascore.errors.exit_code`, shared with the
programs; usage errors exit 2.

Other modules add their own subcommands through a ``register(subparsers)`` function
listed in ``_COMMAND_MODULES``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from . import __version__
from .errors import InputError, InputWarning, exit_code
from .config import judge_key
from .directions import column_direction, direction_warnings
from .readers.formats import FORMATS, PREFLIB_SUFFIXES
from .matrix import ScoreMatrix
from .pairwise import PairwiseCounts
from .registry import DEFAULT_SEED, MISSING_POLICIES, get_ranking_method, rank, ranking_method_names

__all__ = ["main", "build_parser"]

#: Modules that add subcommands: each defines ``register(subparsers)``.
_COMMAND_MODULES = ("metascore.commands", "metascore.bundle.cli", "metascore.codabench.cli",
                    "metascore.analysis_cli")


def _parse_param(text: str) -> tuple[str, object]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    try:
        parsed: object = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    return key.strip(), parsed


def _parse_weight(text: str) -> tuple[str, float]:
    """``JUDGE=W`` with W a finite number (``true``, ``abc``, ``nan`` are usage errors)."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected JUDGE=WEIGHT, got {text!r}")
    key, value = text.split("=", 1)
    try:
        weight = float(value)
    except ValueError:
        weight = math.nan
    if not math.isfinite(weight):
        raise argparse.ArgumentTypeError(
            f"the weight of {key.strip()!r} must be a finite number; got {value!r}"
        )
    return key.strip(), weight


def read_matrix_file(
    path: Path,
    *,
    format: str | None = None,
    phase: str | None = None,
    lower_is_better: Sequence[str] = (),
    weights: Sequence[tuple[str, float]] = (),
    judges: Sequence[str] = (),
    exclude: Sequence[str] = (),
    notes: list[str] | None = None,
    alerts: list[str] | None = None,
) -> ScoreMatrix:
    """One phase of any score file the readers know, as a score matrix.

    Judges are the (task, metric) pairs found in that phase, keyed ``task/metric`` (``task`` when the
    metric is empty, as in a wide CSV), or only those named in ``judges``, minus those in
    ``exclude``; a judge listed in ``lower_is_better`` is lower-is-better, another takes
    its column's direction from the competition when the input carries it (a tree's
    ``codabench.json``), else higher-is-better. What the reader left out on purpose is
    appended to ``notes``; a warning per judge whose name says lower is better but that
    is ranked higher-is-better by default, and per candidate with no score on any chosen
    judge (kept with every score missing), to ``alerts``. For the ``submitted_at``
    tie-break, a participant of a phase listed before ``phase`` in the file keeps the
    place of their submission there (:mod:`metascore.submission_order`).
    """
    from .errors import did_you_mean
    from .readers.formats import read_scores
    from .leaderboard.phases import keyed_matrix
    from .leaderboard.pivot import phase_pairs
    from .submission_order import phase_origins

    frame = read_scores(path, format, format_option="--format")
    if notes is not None:
        notes.extend(frame.attrs.get("notes", []))
    phases = list(pd.unique(frame["phase"]))
    if phase is None:
        if len(phases) > 1:
            raise InputError(f"{path} holds phases {phases}; choose one with --phase.")
        phase = phases[0]
    elif phase not in phases:
        raise InputError(f"{path}: no phase {phase!r}{did_you_mean(phase, phases)}; phases are {phases}.")
    # judges come from the chosen phase only; keys computed once per (task, metric)
    pairs = sorted(phase_pairs(frame, phase), key=lambda tm: judge_key(*tm))
    keys = [judge_key(t, m) for t, m in pairs]
    weight_map = dict(weights)
    known_keys = set(keys)
    for name in list(lower_is_better) + list(weight_map) + list(judges) + list(exclude):
        if name not in known_keys:
            raise InputError(f"{path}: no judge {name!r}{did_you_mean(name, keys)}; judges are {keys}.")
    wanted, left_out = set(judges), set(exclude)
    chosen = [k for k in keys if (not wanted or k in wanted) and k not in left_out]
    if not chosen:
        raise InputError(f"{path}: --judges/--exclude leave no judge (judges are {keys}).")
    if len(chosen) < len(keys):
        chosen_set = set(chosen)
        pairs = [p for p, k in zip(pairs, keys) if k in chosen_set]
    keys = chosen
    known = frame.attrs.get("directions") or {}
    given = {key: False for key in lower_is_better}
    for (t, m), key in zip(pairs, keys):
        if key not in given and column_direction(t, m, known) is not None:
            given[key] = bool(column_direction(t, m, known))
    if alerts is not None:
        alerts.extend(direction_warnings(
            [(k, t, m) for (t, m), k in zip(pairs, keys) if k not in given], "give -l {key} (or --exclude {key} if it is not a score)"))
    unscored: dict[str, str] = {}
    # "the earlier submission": a participant of an earlier phase of the file keeps the
    # place of their submission there (a migrated copy has a new id)
    earlier = phases[:phases.index(phase)]
    origins = phase_origins(frame, phase, earlier) if earlier else None
    matrix = keyed_matrix(frame, phase, keys, [given.get(key, True) for key in keys],
                          [weight_map.get(key, 1.0) for key in keys], unscored=unscored, origins=origins)
    if alerts is not None:
        alerts.extend(f"candidate {c!r} has no score on any judge ({why}); it is ranked with "
                      "every score missing (--missing decides its place)." for c, why in unscored.items())
    return matrix


def _read_votes(path: Path) -> PairwiseCounts:
    """PrefLib votes as pairwise counts; what the reader skipped is one note on stderr."""
    from .readers.formats import read_votes

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InputWarning)
        votes, weights, candidates = read_votes(path)
    for warning in caught:
        if issubclass(warning.category, InputWarning):
            print(f"metascore: note: {warning.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return PairwiseCounts.from_votes(votes, weights, candidates)


#: Quick-mode options and where the same choice lives in metascore.yaml (config mode
#: refuses them rather than ignore them).
QUICK_ONLY = {
    "method": ("-m/--method", "ranking.method"),
    "lower_is_better": ("-l/--lower-is-better", "judges[].direction"),
    "weight": ("-w/--weight", "judges[].weight"),
    "param": ("-p/--param", "ranking.params"),
    "missing": ("--missing", "ranking.missing"),
    "format": ("--format", "input.format"),
    "phase": ("--phase", "phases"),
    "judges": ("--judges", "judges"),
    "exclude": ("--exclude", "judges"),
    "json": ("--json", "the output files"),
}


def _cmd_rank(args: argparse.Namespace) -> int:
    if args.config is not None:
        from .commands import rank_with_config

        given = [dest for dest in QUICK_ONLY if getattr(args, dest) not in (None, [], False)]
        if given:
            args.parser.error(
                "--config takes its choices from the configuration and does not combine with "
                + ", ".join(f"{QUICK_ONLY[d][0]} (set {QUICK_ONLY[d][1]})" for d in given)
                + "; only --input, --output and --seed apply."
            )
        return rank_with_config(args)
    if args.input is not None or args.output is not None:
        args.parser.error("--input and --output belong to config mode (--config); in quick mode "
                          "give the score file as the argument.")
    if args.scores is None:
        raise InputError("give a scores file, or --config with --input and --output.")
    path = Path(args.scores)
    alerts: list[str] = []
    if path.suffix.lower() in PREFLIB_SUFFIXES:
        data: ScoreMatrix | PairwiseCounts = _read_votes(path)
    else:
        notes: list[str] = []
        data = read_matrix_file(
            path, format=args.format, phase=args.phase,
            lower_is_better=args.lower_is_better, weights=args.weight,
            judges=args.judges, exclude=args.exclude, notes=notes, alerts=alerts,
        )
        for note in notes:
            print(f"metascore: note: {note}", file=sys.stderr)
    ranking = rank(data, args.method or "average_rank", missing=args.missing or "worst",
                   seed=args.seed, **dict(args.param))
    for alert in alerts:
        print(f"metascore: warning: {alert}", file=sys.stderr)
    if args.json:
        print(json.dumps(ranking.to_dict(), indent=2, allow_nan=False))
    else:
        frame = ranking.to_frame()
        natural = get_ranking_method(ranking.method).display.label.replace(" ", "_")
        if natural in frame.columns:  # e.g. average_rank: show it, not its negative score
            frame = frame.drop(columns="score")
        print(frame.to_string(index=False, float_format=lambda v: f"{v:.6g}"))
        for note in ranking.notes:
            print(f"note: {note}")
        for cand, why in ranking.excluded_candidates.items():
            print(f"excluded: {cand} ({why})")
        print(f"signature: {json.dumps(ranking.signature())}")
    return 0


def _cmd_methods(args: argparse.Namespace) -> int:
    for name in ranking_method_names():
        spec = get_ranking_method(name)
        kind = "pairwise" if spec.input == "pairwise" else "values"
        flags = ",".join(
            f for f, on in (("stochastic", spec.stochastic), ("condorcet", spec.condorcet)) if on
        )
        params = ", ".join(f"{k}={v!r}" for k, v in spec.defaults.items())
        print(f"{name:22s} [{kind}{',' + flags if flags else ''}] {spec.description}")
        if params:
            print(f"{'':22s}   parameters: {params}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="metascore",
        description="Rank competition candidates across tasks, gate the final phase on a "
        "baseline, and test Codabench/CodaLab bundles locally.",
    )
    parser.add_argument("--version", action="version", version=f"metascore {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser(
        "rank",
        help="rank candidates from a score file (or a competition's scores with --config)",
        description="Rank candidates. Quick mode: a score file in (a wide CSV: first column = "
        "candidate, one column per judge; a long CSV/JSON: candidate, task, metric, value; a "
        "Codabench or CodaLab export; a scoring-output tree; PrefLib votes .soc/.soi/.toc/.toi), "
        "a leaderboard table out. Config mode (--config): read a competition's per-task scores, "
        "rank, apply the final-phase filter and write the leaderboard files; there the "
        "configuration decides everything, so only --input, --output and --seed apply and the "
        "quick-mode options (-m, -l, -w, -p, --missing, --format, --phase, --judges, --exclude, "
        "--json) are refused (exit 2) with the configuration key to set instead.",
    )
    p.add_argument("scores", nargs="?", help="score file, export, outputs tree or PrefLib votes")
    p.add_argument(
        "--method", "-m", default=None, choices=ranking_method_names(),
        help="ranking method (default: average_rank)",
    )
    p.add_argument(
        "--lower-is-better", "-l", nargs="+", default=[], metavar="JUDGE",
        help="judges (columns) where a lower score is better",
    )
    p.add_argument(
        "--judges", nargs="+", default=[], metavar="JUDGE",
        help="rank on these judges (columns) only",
    )
    p.add_argument(
        "--exclude", nargs="+", default=[], metavar="JUDGE",
        help="leave these columns out (e.g. a leaderboard's Duration or its own computed "
        "average rank; CodaLab columns labelled <...> are left out already)",
    )
    p.add_argument(
        "--weight", "-w", nargs="+", type=_parse_weight, default=[], metavar="JUDGE=W",
        help="judge weights (default 1)",
    )
    p.add_argument(
        "--missing", default=None, choices=MISSING_POLICIES,
        help="missing-data policy (default: worst)",
    )
    p.add_argument(
        "--seed", type=int, default=None,
        help=f"random seed (default {DEFAULT_SEED}; with --config: the config's ranking.seed)",
    )
    p.add_argument(
        "--param", "-p", nargs="+", type=_parse_param, default=[], metavar="NAME=VALUE",
        help="method parameters, e.g. ties=half",
    )
    p.add_argument("--format", choices=FORMATS, help="input format (default: detected)")
    p.add_argument("--phase", help="phase to rank when the file holds several")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--config", help="competition config (metascore.yaml): config mode")
    p.add_argument("--input", help="config mode: export file or scoring-output tree")
    p.add_argument("--output", help="config mode: output directory for the leaderboard files")
    p.set_defaults(func=_cmd_rank, parser=p)

    p = sub.add_parser("methods", help="list the ranking methods and their parameters")
    p.set_defaults(func=_cmd_methods)

    for module_name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)

    def body() -> int:
        try:
            code = int(args.func(args) or 0)
            sys.stdout.flush()  # a closed pipe shows up here, not at interpreter exit
            return code
        except BrokenPipeError:
            # the reader went away (`metascore rank big.csv | head`): stop quietly, as the
            # Python docs recommend (signal.html, "Note on SIGPIPE"): point stdout at devnull
            # so the interpreter's final flush cannot fail again.
            _silence_stdout()
            return 1

    return exit_code(body)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is not a real file (tests)
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
