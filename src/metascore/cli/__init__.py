"""The ``metascore`` command line: one module per command group.

- :mod:`metascore.cli.rank`: ``rank`` (quick mode and config mode), ``methods``,
  ``validate-config``.
- :mod:`metascore.cli.bundle`: ``bundle add-meta | check | run | env | zip | runtime`` (the
  commands of ``env`` and ``runtime``, the caches, in :mod:`metascore.cli.bundle_cache`).
- :mod:`metascore.cli.codabench`: ``codabench phases | pull | rank | submit | sign | publish | verify``.
- :mod:`metascore.cli.analyze`: ``analyze``.
- :mod:`metascore.cli.verify`: ``verify`` (a ranking page against a pulled folder).
- :mod:`metascore.cli.common`: what several groups share (one phase of a score file as a
  score matrix).

Each group module adds its subcommands to the parser :func:`build_parser` makes and never
imports this package's ``main``. ``main(argv) -> int`` parses the arguments and runs the
chosen command. Library errors (:class:`~metascore.errors.MetascoreError`, ``OSError``)
become one line on stderr and exit code 1 through :func:`metascore.errors.exit_code`,
shared with the programs; usage errors exit 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .._version import __version__
from ..errors import exit_code
from .analyze import add_analyze_command
from .bundle import add_bundle_commands
from .codabench import add_codabench_commands
from .rank import add_rank_commands
from .verify import add_verify_command

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="metascore",
        description="Rank competition candidates across tasks, gate the final phase on a "
        "baseline, and test Codabench/CodaLab bundles locally.",
    )
    parser.add_argument("--version", action="version", version=f"metascore {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    add_rank_commands(sub)
    add_bundle_commands(sub)
    add_codabench_commands(sub)
    add_analyze_command(sub)
    add_verify_command(sub)
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
