"""``metascore verify RANKING_PAGE --input DIR``: a published ranking page, recomputed from a
pulled folder with the configuration the page publishes, and compared row by row
(:mod:`metascore.verify`); ``metascore codabench verify`` does the same from a live
competition's public pages (:mod:`metascore.cli.codabench`).

Exit code 0 when the page's ranking is what its configuration gives on the folder, 1 when
it is not (each difference on a line) or on an error (one line), 2 on a usage error.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import InputError

__all__ = ["add_verify_command"]


def add_verify_command(subparsers: argparse._SubParsersAction) -> None:
    """Add ``verify`` to the ``metascore`` command line."""
    p = subparsers.add_parser(
        "verify", help="check a published ranking page against a pulled folder",
        description="Read the ranking record a metascore ranking page (detailed_results.html) "
        "carries, recompute the ranking from the scores of DIR with the configuration the page "
        "publishes, and say in one line whether they agree; otherwise list each row that differs "
        "and why (a submission no longer in DIR, a changed score, another position or score). "
        "Exit 0 only when they agree. `metascore codabench verify` checks a live competition "
        "from its public pages instead.",
    )
    p.add_argument("page", metavar="RANKING_PAGE", help="the ranking page: detailed_results.html "
                   "written by the meta-scoring program or `metascore rank --config`")
    p.add_argument("--input", required=True, metavar="DIR", help="the scores it should rank: the "
                   "folder `metascore codabench pull` wrote (read as the page's configuration says)")
    p.set_defaults(func=_cmd_verify)


def _cmd_verify(args: argparse.Namespace) -> int:
    from ..program import recompute
    from ..verify.compare import compare, verdict_lines
    from ..verify.record import read_record, recompute_config

    path = Path(args.page)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "it is not UTF-8 text"
        raise InputError(f"cannot read the ranking page {path}: {reason}.") from None
    record = read_record(text, str(path))
    source = f"the folder {args.input}"
    differences = compare(record, recompute(recompute_config(record), args.input), source)
    for line in verdict_lines(record, differences, source):
        print(line)
    return 1 if differences else 0
