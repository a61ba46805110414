"""Anyone can check a published ranking: the ranking page's record, read back and compared.

The ranking page (``detailed_results.html``) carries the record
:mod:`metascore.render.ranking_record` writes: the configuration and, per row, the
leaderboard row it stands for and the values it was ranked on. ``metascore verify`` (a page
and a pulled folder) and ``metascore codabench verify`` (a live competition's public pages)
recompute the ranking from the scores they can read, with the page's configuration
(:func:`recompute_config`), and compare it with the page, row by row (:func:`compare`):
which candidate differs and why (not on the leaderboard any more, a score changed since, a
candidate the ranking does not know, another position or score).

Pure: the text of a page in, :class:`Record` and lines of text out. Numbers are equal when
they agree to :data:`REL_TOL` (relative); a recomputation from the same data gives the same
floats, so any difference beyond is a real one.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .config import Config, judge_key, parse_config
from .errors import InputError, MetascoreError
from .leaderboard import Board, Leaderboard, Row
from .readers.configured import InputConfig
from .render.ranking_record import RECORD_FORMAT, RECORD_ID, RECORD_VERSION

__all__ = ["PublishedRow", "PublishedBoard", "Record", "read_record", "recompute_config",
           "compare", "counted_hidden", "verdict", "REL_TOL", "same_number"]

#: Two numbers are the same when they differ by at most this, relative to the larger.
REL_TOL = 1e-9

_BLOCK = re.compile(r'<script type="application/json" id="' + re.escape(RECORD_ID)
                    + r'">(.*?)</script>', re.S)


@dataclass(frozen=True)
class PublishedRow:
    """One row of a published board (:mod:`metascore.render.ranking_record`)."""

    candidate: str
    participant: str | None
    owner: str | None
    submission: int | None
    baseline: bool
    position: int | None
    score: float | None
    qualified: bool | None
    submitted_at: str | None
    values: Mapping[str, float | None] | None  # by judge key; None: not published

    @property
    def who(self) -> str:
        """``alice-8 (alice, submission 8)`` or the candidate alone."""
        if self.owner is not None and self.submission is not None:
            return f"{self.candidate} ({self.owner}, submission {self.submission})"
        return self.candidate


@dataclass(frozen=True)
class PublishedBoard:
    phase: str
    judges: tuple[str, ...]
    values_published: bool
    rows: tuple[PublishedRow, ...]
    not_selected: Mapping[str, str] = field(default_factory=dict)

    def row(self, candidate: str) -> PublishedRow | None:
        return next((r for r in self.rows if r.candidate == candidate), None)


@dataclass(frozen=True)
class Record:
    """What a ranking page publishes to recompute its ranking."""

    config: Mapping[str, Any]
    export: Mapping[str, Any] | None
    winners: tuple[str, ...]
    hidden_judges: tuple[str, ...]
    final: PublishedBoard
    development: PublishedBoard | None

    @property
    def boards(self) -> tuple[PublishedBoard, ...]:
        return tuple(b for b in (self.development, self.final) if b is not None)


# ---------------------------------------------------------------------- reading the page
def read_record(page: str, source: str) -> Record:
    """The record of the ranking page ``page`` (its text; ``source`` names it in errors)."""
    found = _BLOCK.findall(page)
    if not found:
        raise InputError(f"{source} holds no ranking record (no <script id={RECORD_ID!r}> block): "
                         "it is not a metascore ranking page, or one written before metascore "
                         "published its configuration; the ranking cannot be recomputed from it.")
    if len(found) > 1:
        raise InputError(f"{source} holds {len(found)} ranking records; a metascore ranking page "
                         "holds one, so this page was altered.")
    try:
        data = json.loads(found[0])
    except ValueError as exc:
        raise InputError(f"{source}: its ranking record is not JSON ({exc}).") from None
    return _parse(_Fields(source), data)


class _Fields:
    """Checked access to the record; errors name the page and the field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def get(self, obj: Any, where: str, key: str, kinds: tuple[type, ...], optional: bool = False) -> Any:
        if not isinstance(obj, dict):
            raise self.error(where, "is not an object")
        value = obj.get(key)
        if value is None and optional:
            return None
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            raise self.error(f"{where}.{key}" if where else key,
                             "is missing" if value is None else f"is {value!r:.60}")
        return value

    def error(self, where: str, what: str) -> InputError:
        return InputError(f"{self.source}: the ranking record's field {where!r} {what}; the page "
                          "was altered or written by another program.")


def _parse(f: _Fields, data: Any) -> Record:
    if f.get(data, "", "format", (str,)) != RECORD_FORMAT:
        raise f.error("format", f"is not {RECORD_FORMAT!r}")
    version = f.get(data, "", "version", (int,))
    if version > RECORD_VERSION:
        raise InputError(f"{f.source}: its ranking record has version {version}, newer than this "
                         f"metascore reads ({RECORD_VERSION}); upgrade metascore.")
    config = data.get("config")
    if not isinstance(config, dict) or not config:
        raise InputError(f"{f.source} does not publish the configuration its ranking was made with, "
                         "so the ranking cannot be recomputed.")
    boards = f.get(data, "", "boards", (dict,))
    dev = boards.get("development")
    return Record(
        config=config, export=f.get(data, "", "export", (dict,), optional=True),
        winners=tuple(str(w) for w in f.get(data, "", "winners", (list,))),
        hidden_judges=tuple(str(j) for j in f.get(data, "", "hidden_judges", (list,))),
        final=_board(f, "boards.final", f.get(boards, "boards", "final", (dict,)), final=True),
        development=None if dev is None else _board(f, "boards.development", dev, final=False),
    )


def _board(f: _Fields, where: str, data: Any, *, final: bool) -> PublishedBoard:
    judges = tuple(str(j) for j in f.get(data, where, "judges", (list,)))
    published = bool(f.get(data, where, "values_published", (bool,)))
    rows = []
    for n, item in enumerate(f.get(data, where, "rows", (list,))):
        at = f"{where}.rows[{n}]"
        values = f.get(item, at, "values", (list,), optional=True)
        if values is not None and len(values) != len(judges):
            raise f.error(f"{at}.values", f"holds {len(values)} values for {len(judges)} judges")
        rows.append(PublishedRow(
            candidate=str(f.get(item, at, "candidate", (str,))),
            participant=f.get(item, at, "participant", (str,), optional=True),
            owner=f.get(item, at, "owner", (str,), optional=True),
            submission=f.get(item, at, "submission", (int,), optional=True),
            baseline=bool(f.get(item, at, "baseline", (bool,))),
            position=f.get(item, at, "position", (int,), optional=True),
            score=_float(f, f"{at}.score", item.get("score")),
            qualified=f.get(item, at, "qualified", (bool,), optional=True) if final else None,
            submitted_at=f.get(item, at, "submitted_at", (str,), optional=True),
            values=None if values is None else {
                j: _float(f, f"{at}.values[{k}]", v) for k, (j, v) in enumerate(zip(judges, values))},
        ))
    not_selected = f.get(data, where, "not_selected", (dict,))
    return PublishedBoard(str(f.get(data, where, "phase", (str,))), judges, published, tuple(rows),
                          {str(k): str(v) for k, v in not_selected.items()})


def _float(f: _Fields, where: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise f.error(where, f"is {value!r:.60}, not a number")
    return float(value)


def recompute_config(record: Record, input: InputConfig | None = None) -> Config:
    """The page's configuration, to recompute its ranking with: ``input`` in place of the
    page's own (None: keep it), and the analysis off (it never moves a row)."""
    data = dict(record.config)
    if input is not None:
        data["input"] = {"format": input.format or "auto", "path": input.path}
    data["analysis"] = {"bootstrap": 0, "stability": False, "compare": []}
    try:
        return parse_config(data, source="the ranking page's configuration")
    except MetascoreError as exc:
        raise InputError(f"the configuration the ranking page publishes cannot be read by this "
                         f"metascore ({exc})") from None


# ---------------------------------------------------------------------- comparing
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


def counted_hidden(record: Record) -> list[str]:
    """The hidden judges the page's configuration counts (weight above 0)."""
    hidden = set(record.hidden_judges)
    weights = {judge_key(str(j["task"]), str(j["metric"])): float(j.get("weight", 1.0))
               for j in record.config.get("judges") or ()}
    return sorted(j for j in hidden if weights.get(j, 1.0) > 0)



def _named(board: PublishedBoard, candidate: str) -> str:
    """``alice (alice-8)``, or the candidate when it names no one else."""
    row = board.row(candidate)
    name = row.participant if row is not None else None
    return f"{name} ({candidate})" if name and name != candidate else candidate


def verdict(record: Record, differences: Sequence[str], source: str, *,
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
