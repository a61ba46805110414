"""The ``metascore`` command line.

``main(argv) -> int`` parses arguments and dispatches to small per-command functions.
Library errors (:class:`~metascore.errors.MetascoreError`, ``OSError``) are caught here,
in one place, and printed as one line on stderr with exit code 1; usage errors exit 2.

Other modules add their own subcommands through a ``register(subparsers)`` function
listed in ``_COMMAND_MODULES``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from . import __version__
from .errors import InputError, MetascoreError
from .matrix import ScoreMatrix
from .registry import DEFAULT_SEED, MISSING_POLICIES, get_ranking_method, rank, ranking_method_names

__all__ = ["main", "build_parser"]

#: Modules that add subcommands: each defines ``register(subparsers)``.
_COMMAND_MODULES = ("metascore.commands", "metascore.bundle.cli")


def _parse_param(text: str) -> tuple[str, object]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    try:
        parsed: object = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    return key.strip(), parsed


def read_matrix_file(
    path: Path,
    *,
    lower_is_better: Sequence[str] = (),
    weights: Sequence[tuple[str, object]] = (),
    candidate_column: str | None = None,
) -> ScoreMatrix:
    """Read a wide (candidates x judges) or long (candidate, judge, value) CSV file."""
    if not path.exists():
        raise InputError(f"{path}: no such file.")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise InputError(f"{path}: not a readable CSV file ({str(exc).strip()}).") from None
    if frame.empty:
        raise InputError(f"{path}: no rows; nothing to rank.")
    cols = [c.strip() for c in frame.columns]
    frame.columns = cols
    weight_map = {k: float(v) for k, v in weights}  # type: ignore[arg-type]
    lower = set(lower_is_better)
    long_cols = {"candidate", "value"} <= set(cols) and ("judge" in cols or "task" in cols)
    if long_cols:
        if "judge" not in cols:
            frame["judge"] = (
                frame["task"] + "/" + frame["metric"] if "metric" in cols else frame["task"]
            )
        judges = list(pd.unique(frame["judge"]))
        matrix_kwargs = {}
        if "participant" in cols:
            matrix_kwargs["participants"] = dict(zip(frame["candidate"], frame["participant"]))
        if "submitted_at" in cols:
            matrix_kwargs["submitted_at"] = dict(zip(frame["candidate"], frame["submitted_at"]))
        _check_judges(path, judges, lower, weight_map)
        return ScoreMatrix.from_long(
            frame,
            higher_is_better={j: j not in lower for j in judges},
            weights=weight_map or None,
            **matrix_kwargs,
        )
    key = candidate_column or cols[0]
    if key not in cols:
        raise InputError(f"{path}: no column {key!r}; columns are {cols}.")
    frame = frame.set_index(key)
    judges = list(frame.columns)
    _check_judges(path, judges, lower, weight_map)
    return ScoreMatrix.from_frame(
        frame, higher_is_better={j: j not in lower for j in judges}, weights=weight_map or None
    )


def _check_judges(path: Path, judges: list[str], lower: set[str], weights: dict) -> None:
    from .errors import did_you_mean

    for name in list(lower) + list(weights):
        if name not in judges:
            raise InputError(
                f"{path}: no judge {name!r}{did_you_mean(name, judges)}; judges are {judges}."
            )


def _cmd_rank(args: argparse.Namespace) -> int:
    if args.config is not None:
        from .commands import rank_with_config

        return rank_with_config(args)
    if args.scores is None:
        raise InputError("give a scores file, or --config with --input and --output.")
    matrix = read_matrix_file(
        Path(args.scores),
        lower_is_better=args.lower_is_better,
        weights=args.weight,
        candidate_column=args.candidate_column,
    )
    ranking = rank(
        matrix, args.method, missing=args.missing, seed=args.seed, **dict(args.param)
    )
    if args.json:
        print(json.dumps(ranking.to_dict(), indent=2, allow_nan=False))
    else:
        frame = ranking.to_frame()
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
        description="Rank candidates. Quick mode: a wide CSV (first column = candidate, one "
        "column per judge) or a long CSV (candidate, judge or task[, metric], value) in, a "
        "leaderboard table out. Config mode (--config): read a competition's per-task scores, "
        "rank, apply the final-phase filter and write the leaderboard files.",
    )
    p.add_argument("scores", nargs="?", help="wide or long CSV file of scores")
    p.add_argument(
        "--method", "-m", default="average_rank", choices=ranking_method_names(),
        help="ranking method (default: average_rank)",
    )
    p.add_argument(
        "--lower-is-better", "-l", nargs="+", default=[], metavar="JUDGE",
        help="judges (columns) where a lower score is better",
    )
    p.add_argument(
        "--weight", "-w", nargs="+", type=_parse_param, default=[], metavar="JUDGE=W",
        help="judge weights (default 1)",
    )
    p.add_argument(
        "--missing", default="worst", choices=MISSING_POLICIES,
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
    p.add_argument("--candidate-column", help="candidate column of a wide CSV (default: the first)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--config", help="competition config (metascore.yaml): config mode")
    p.add_argument("--input", help="config mode: export file or scoring-output tree")
    p.add_argument("--output", help="config mode: output directory for the leaderboard files")
    p.set_defaults(func=_cmd_rank)

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
    try:
        return int(args.func(args) or 0)
    except (MetascoreError, OSError) as exc:
        print(f"metascore: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("metascore: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
