"""Config-driven commands: ``metascore validate-config`` and ``metascore rank --config``.

Both go through the same code as the Codabench scoring program
(:func:`metascore.program.run`), so a local run and the platform give identical files.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from .config import load_config
from .errors import InputError
from .program import run

__all__ = ["register", "rank_with_config"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``validate-config`` to the ``metascore`` command line."""
    p = subparsers.add_parser(
        "validate-config",
        help="check a metascore.yaml configuration",
        description="Validate a metascore.yaml file: every key, value, method and parameter. "
        "Prints a one-line summary, or the first problem with the key, the allowed values "
        "and what was found.",
    )
    p.add_argument("config", metavar="CONFIG", help="path to metascore.yaml")
    p.set_defaults(func=_cmd_validate_config)


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
