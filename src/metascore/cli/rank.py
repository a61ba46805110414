"""``metascore rank``, ``metascore methods`` and ``metascore validate-config``.

``rank`` has two modes. Quick mode reads one score file (one phase of it, through
:func:`metascore.cli.common.read_matrix_file`, or PrefLib votes) and prints the ranking.
Config mode (``--config``) goes through the same code as the Codabench scoring program
(:func:`metascore.program.run`), so a local run and the platform give identical files;
``validate-config`` checks such a configuration.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import warnings
from pathlib import Path

from ..config import load_config
from ..errors import InputError, InputWarning
from ..matrix import ScoreMatrix
from ..pairwise import PairwiseCounts
from ..program import run
from ..readers.formats import FORMATS
from ..readers.preflib import PREFLIB_SUFFIXES
from ..registry import DEFAULT_METHOD, DEFAULT_SEED, get_ranking_method, rank, ranking_method_names
from ..missing import MISSING_POLICIES
from .common import add_group_options, group_judges, read_matrix_file

__all__ = ["add_rank_commands", "rank_with_config"]


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


def _read_votes(path: Path) -> PairwiseCounts:
    """PrefLib votes as pairwise counts; what the reader skipped is one note on stderr."""
    from ..readers.preflib import read_votes

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
    "group_by": ("--group-by", "ranking.groups.by"),
    "group": ("--group", "judges[].group"),
    "group_weight": ("--group-weight", "ranking.groups.weights"),
    "within": ("--within", "ranking.groups.method"),
    "within_param": ("--within-param", "ranking.groups.params"),
}


def _cmd_rank(args: argparse.Namespace) -> int:
    if args.config is not None:
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
        parts: dict = {}
        data = group_judges(read_matrix_file(
            path, format=args.format, phase=args.phase,
            lower_is_better=args.lower_is_better, weights=args.weight,
            judges=args.judges, exclude=args.exclude, notes=notes, alerts=alerts, parts=parts,
        ), args, parts)
        for note in notes:
            print(f"metascore: note: {note}", file=sys.stderr)
    ranking = rank(data, args.method or DEFAULT_METHOD, missing=args.missing or "worst",
                   seed=args.seed, **dict(args.param))
    for alert in alerts:
        print(f"metascore: warning: {alert}", file=sys.stderr)
    if args.json:
        print(json.dumps(ranking.to_dict(), indent=2, allow_nan=False))
    else:
        frame = ranking.to_frame()
        natural = get_ranking_method(ranking.method).display.label.replace(" ", "_")
        if natural != "score" and natural in frame.columns:  # average_rank: itself, not -it
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


def add_rank_commands(sub: argparse._SubParsersAction) -> None:
    """Add ``rank``, ``methods`` and ``validate-config`` to the ``metascore`` command line."""
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
    _add_quick_options(p)
    p.add_argument("--config", help="competition config (metascore.yaml): config mode")
    p.add_argument("--input", help="config mode: export file or scoring-output tree")
    p.add_argument("--output", help="config mode: output directory for the leaderboard files")
    add_group_options(p)
    p.set_defaults(func=_cmd_rank, parser=p)

    p = sub.add_parser("methods", help="list the ranking methods and their parameters")
    p.set_defaults(func=_cmd_methods)

    p = sub.add_parser(
        "validate-config",
        help="check a metascore.yaml configuration",
        description="Validate a metascore.yaml file: every key, value, method and parameter. "
        "Prints a one-line summary, or the first problem with the key, the allowed values "
        "and what was found.",
    )
    p.add_argument("config", metavar="CONFIG", help="path to metascore.yaml")
    p.set_defaults(func=_cmd_validate_config)


def _add_quick_options(p: argparse.ArgumentParser) -> None:
    """The options of ``metascore rank`` in quick mode (and ``--seed``, which config mode
    takes too)."""
    p.add_argument(
        "--method", "-m", default=None, choices=ranking_method_names(),
        help=f"ranking method (default: {DEFAULT_METHOD})",
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


def _cmd_validate_config(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    phases = config.phases.development + (
        f" -> {config.phases.final}" if config.phases.final else " (development only)")
    judges = "every (task, metric) found" if config.judges is None else \
        f"{len(config.judges)} judges"
    rule = config.filter.rule + (f" ({config.filter.beat})" if config.filter.rule ==
                                 "beat_baseline" else "")
    print(f"{Path(args.config).name}: OK: method {config.ranking.method}, phases {phases}, "
          f"{judges}, filter {rule}, {len(config.baselines)} named baselines, scores.json keys "
          f"{list(config.scores)}")
    return 0


def rank_with_config(args: argparse.Namespace) -> int:
    """``metascore rank --config CONFIG --input PATH --output DIR [--seed N]``.

    ``--input`` is a directory (the configuration's ``input.path`` is resolved inside it)
    or one export file. ``--seed`` overrides ``ranking.seed``.
    """
    if not args.input or not args.output:
        raise InputError("--config needs --input (export file or directory) and --output "
                         "(directory for the leaderboard files).")
    config = load_config(args.config)
    if getattr(args, "seed", None) is not None:
        config = dataclasses.replace(
            config, ranking=dataclasses.replace(config.ranking, seed=int(args.seed))
        )
    run(config, Path(args.input), Path(args.output))
    return 0
