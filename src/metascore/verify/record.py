"""The ranking page's record read back: :class:`Record`, and the configuration to recompute
the ranking with.

The ranking page (``detailed_results.html``) carries the record
:mod:`metascore.render.ranking_record` writes: the configuration and, per row, the
leaderboard row it stands for and the values it was ranked on. :func:`read_record` finds it
in the page's text and checks it field by field (an error names the page and the field);
:func:`recompute_config` is the page's configuration as a :class:`~metascore.config.Config`.
Pure: text in, values out.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..config import Config, judge_key, parse_config
from ..errors import InputError, MetascoreError
from ..readers.configured import InputConfig
from ..render.ranking_record import RECORD_FORMAT, RECORD_ID, RECORD_VERSION, ROW_FIELDS

__all__ = ["PublishedRow", "PublishedBoard", "Record", "read_record", "recompute_config",
           "counted_hidden"]

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
    fields = [str(x) for x in f.get(data, where, "row_fields", (list,))]
    needed = [x for x in ROW_FIELDS if (final or x != "qualified") and (published or x != "values")]
    if sorted(fields) != sorted(needed):
        raise f.error(f"{where}.row_fields", f"is {fields}, expected the fields {needed}")
    rows = []
    for n, item in enumerate(f.get(data, where, "rows", (list,))):
        at = f"{where}.rows[{n}]"
        if not isinstance(item, list) or len(item) != len(fields):
            raise f.error(at, f"is not an array of the {len(fields)} fields of row_fields")
        rows.append(_published_row(f, at, dict(zip(fields, item)), judges))
    not_selected = f.get(data, where, "not_selected", (dict,))
    return PublishedBoard(str(f.get(data, where, "phase", (str,))), judges, published, tuple(rows),
                          {str(k): str(v) for k, v in not_selected.items()})


def _published_row(f: _Fields, at: str, item: dict[str, Any], judges: tuple[str, ...]) -> PublishedRow:
    values = f.get(item, at, "values", (list,), optional=True)
    if values is not None and len(values) != len(judges):
        raise f.error(f"{at}.values", f"holds {len(values)} values for {len(judges)} judges")
    return PublishedRow(
        candidate=str(f.get(item, at, "candidate", (str,))),
        participant=f.get(item, at, "participant", (str,), optional=True),
        owner=f.get(item, at, "owner", (str,), optional=True),
        submission=f.get(item, at, "submission", (int,), optional=True),
        baseline=bool(f.get(item, at, "baseline", (bool,))),
        position=f.get(item, at, "position", (int,), optional=True),
        score=_float(f, f"{at}.score", item.get("score")),
        qualified=f.get(item, at, "qualified", (bool,), optional=True),
        submitted_at=f.get(item, at, "submitted_at", (str,), optional=True),
        values=None if values is None else {
            j: _float(f, f"{at}.values[{k}]", v) for k, (j, v) in enumerate(zip(judges, values))},
    )


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


def counted_hidden(record: Record) -> list[str]:
    """The hidden judges the page's configuration counts (weight above 0)."""
    hidden = set(record.hidden_judges)
    weights = {judge_key(str(j["task"]), str(j["metric"])): float(j.get("weight", 1.0))
               for j in record.config.get("judges") or ()}
    return sorted(j for j in hidden if weights.get(j, 1.0) > 0)
