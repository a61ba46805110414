"""A recomputed leaderboard compared with a published ranking, row by row.

``metascore verify`` (a page and a pulled folder) and ``metascore codabench verify`` (a live
competition's public pages) recompute the ranking from the scores they can read, with the
page's configuration (:func:`metascore.verify.record.recompute_config`), and :func:`compare`
says which candidate differs and why: not on the leaderboard any more, added since, a score
or a submission time changed since, another position, score or qualification; when the
scores agree and the ranking does not, a configuration the ranking was not made with.
:func:`verdict_lines` is what the commands print. Numbers are equal when they agree to
:data:`REL_TOL` (relative): a recomputation from the same data gives the same floats, so any
difference beyond is a real one. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from ..leaderboard import Board, Leaderboard
from .record import PublishedBoard, Record

__all__ = ["compare", "verdict_lines", "same_number", "REL_TOL"]

#: Two numbers are the same when they differ by at most this, relative to the larger.
REL_TOL = 1e-9


def same_number(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)


def compare(record: Record, lb: Leaderboard, source: str) -> list[str]:
    """Every way the recomputed leaderboard ``lb`` differs from the published ``record``,
    one sentence each, data first (rows gone, new, changed), then the ranking; empty when
    they agree. ``source`` names where the scores were read (``the public leaderboard``)."""
    lines = []
    for published, board in ((record.development, lb.development), (record.final, lb.final)):
        if published is None or board is None:
            if (published is None) != (board is None):
                lines.append("the configuration ranks " + ("two phases" if board is not None else "one phase")
                             + " but the page publishes " + ("one" if published is None else "two"))
            continue
        lines += _data_differences(published, board, source)
    ranking = _ranking_differences(record.final, lb.final, final=True)
    if record.development is not None and lb.development is not None:
        ranking += _ranking_differences(record.development, lb.development, final=False)
    if tuple(record.winners) != tuple(lb.winners) and not ranking:
        ranking.append(f"the page names the winner(s) {list(record.winners)}, the recomputation "
                       f"{list(lb.winners)}")
    if ranking and not lines:
        ranking.append(f"the scores in {source} are those the page gives, so the published ranking "
                       "does not follow from the configuration the page publishes (changed since the "
                       "ranking was made, or not the one it was made with)")
    return lines + ranking


def _data_differences(published: PublishedBoard, board: Board, source: str) -> list[str]:
    """Rows gone, rows new, and values changed since the page was written."""
    lines = []
    phase = published.phase
    now = {r.candidate: r for r in board.rows}
    listed = set(now) | set(board.not_selected)
    before = {r.candidate for r in published.rows} | set(published.not_selected)
    for r in published.rows:
        if r.candidate not in listed:
            lines.append(f"{r.who}: on the page's board of phase {phase!r}, but no longer in "
                         f"{source} of that phase")
    for c in sorted(set(published.not_selected) - listed):
        lines.append(f"{c}: a submission of phase {phase!r} the page lists as not selected, no "
                     f"longer in {source} of that phase")
    for c in [c for c in now if c not in before] + sorted(set(board.not_selected) - before):
        lines.append(f"{c}: in {source} of phase {phase!r}, but not in the published ranking "
                     "(added since it was made?)")
    judges = set(board.judges)
    gone = [j for j in published.judges if j not in judges]
    if gone:
        lines.append(f"phase {phase!r}: the page ranks on judges {gone}, which the recomputation "
                     f"does not have (no score of {source} for them)")
    for r in published.rows:
        mine = now.get(r.candidate)
        if mine is None or r.values is None:
            continue
        for judge, value in r.values.items():
            if judge in judges and not same_number(value, mine.values.get(judge)):
                lines.append(f"{r.who}: judge {judge!r} in phase {phase!r} was {_num(value)} "
                             f"when the ranking was made; {source} now says {_num(mine.values.get(judge))}")
        if not _same_time(r.submitted_at, mine.submitted_at):
            lines.append(f"{r.who}: submitted at {r.submitted_at} on the page, at "
                         f"{mine.submitted_at} on {source} (the tie-break uses it)")
    return lines


def _ranking_differences(published: PublishedBoard, board: Board, *, final: bool) -> list[str]:
    """Rows of both whose place differs: baseline, position, score, qualification."""
    lines = []
    what = "final" if final else f"development ({published.phase})"
    now = {r.candidate: r for r in board.rows}
    for r in published.rows:
        mine = now.get(r.candidate)
        if mine is None:
            continue
        changes = []
        if r.baseline != mine.is_baseline:
            changes.append(f"a baseline: {_yes(r.baseline)} published, {_yes(mine.is_baseline)} recomputed")
        if r.position != mine.position or not same_number(r.score, mine.score):
            changes.append(f"published {_place(r.position, r.score)}, recomputed "
                           f"{_place(mine.position, mine.score)}")
        if final and r.qualified != mine.qualified:
            changes.append(f"qualified: {_yes(r.qualified)} published, {_yes(mine.qualified)} "
                           f"recomputed ({mine.reason})")
        if changes:
            lines.append(f"{r.who} on the {what} board: " + "; ".join(changes))
    return lines


def _place(position: int | None, score: float | None) -> str:
    if position is None:
        return "not ranked"
    return f"position {position} (score {_num(score)})"


def _num(x: float | None) -> str:
    return "missing" if x is None else f"{x:.10g}"


def _yes(flag: bool | None) -> str:
    return "n/a" if flag is None else ("yes" if flag else "no")


def _same_time(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return True  # one side does not know it: nothing to compare
    try:
        return bool(_utc(pd.Timestamp(a)) == _utc(pd.Timestamp(b)))
    except (ValueError, TypeError):
        return a == b


def _utc(t: pd.Timestamp) -> pd.Timestamp:
    """``t`` without a time zone, in UTC (as the readers keep submission times)."""
    return t if t.tzinfo is None else t.tz_convert("UTC").tz_localize(None)


def _named(board: PublishedBoard, candidate: str) -> str:
    """``alice (alice-8)``, or the candidate when it names no one else."""
    row = board.row(candidate)
    name = row.participant if row is not None else None
    return f"{name} ({candidate})" if name and name != candidate else candidate


def verdict_lines(record: Record, differences: Sequence[str], source: str, *,
            cannot: Sequence[str] = ()) -> list[str]:
    """What ``verify`` prints: one line saying whether the published ranking is what its
    configuration gives on ``source``; then, if not, each difference (or why it could not be
    recomputed) on a line of its own."""
    final = record.final
    ranked = sum(r.position is not None for r in final.rows)
    names = [_named(final, w) for w in record.winners]
    what = (f"the published ranking of phase {final.phase!r} ({ranked} ranked, "
            f"{'winner ' + ' and '.join(names) if names else 'nobody ranked'}, "
            f"method {record.config.get('ranking', {}).get('method')})")
    if cannot:
        return [f"cannot check: {what} cannot be recomputed from {source}:", *(f"  - {c}" for c in cannot)]
    if not differences:
        return [f"match: {what} is what its published configuration gives on {source}"]
    return [f"MISMATCH: {what} is not what its published configuration gives on {source}; "
            f"{len(differences)} difference(s):", *(f"  - {d}" for d in differences)]
