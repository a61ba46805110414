"""The ranking page's record: what it takes to recompute the published ranking.

``detailed_results.html`` (the ranking page Codabench shows anyone) carries one JSON data
block, ``<script type="application/json" id="metascore-ranking">`` (a data block: browsers
never run it), that ``metascore verify`` and ``metascore codabench verify`` read back
(:mod:`metascore.verify`). It holds, derived from the :class:`~metascore.leaderboard.Leaderboard`
alone:

- ``format``, ``version`` (:data:`RECORD_VERSION`) and the ``metascore`` version;
- ``config``: the effective configuration (method, parameters, missing-data policy, seed,
  phases, judges, baselines, filter, ...);
- ``export``: the signed results export's provenance (who signed it, for which competition
  and meta phase, pulled when), null for an unsigned input;
- ``winners``, and ``hidden_judges``: the judges on a column the competition hides, whose
  values the record leaves out (a participant never sees them; ``verify`` says it cannot
  check a ranking that counts them);
- ``boards``: the ``final`` board and the ``development`` board the filter used (null with
  one phase), each with its ``phase``, its published ``judges`` (hidden ones left out), its
  ``rows`` (ranked, baselines, excluded), each an array of the fields ``row_fields`` names
  (:data:`ROW_FIELDS`): ``candidate``, ``participant``, the leaderboard row it stands for
  (``owner`` and ``submission`` id of a Codabench row key ``<owner>-<id>``, else null),
  ``baseline``, ``position``, ``score``, ``qualified`` (final board), ``submitted_at`` and
  its ``values`` (one per published judge, null where missing); and ``not_selected`` (a
  participant's other submissions and why); and what ranking the board again takes (the
  ranking page's re-weighting panel, :mod:`metascore.render.reweight`): each published
  judge's direction (``higher_is_better``) and ``weights``, the weights of its hidden judges
  (``hidden_weights``), the judges' ``groups`` (null without: each judge's group, the
  groups' weights, the rule inside them and its parameters) and, on the final board, its
  ``pool``: the rows (their indices) the ranking was asked to rank, in the order the
  tie-break alone puts them.

The values are left out of every row (``values_published: false``) when the boards would
hold more than :data:`RECORD_VALUES` of them (a row takes about 150 bytes with three judges).
Inside the block ``<``, ``>`` and ``&`` are written ``\\u003c``, ``\\u003e``, ``\\u0026`` (the
same JSON), so that no participant's name can close the block or open a comment.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from .._version import __version__
from ..config import judge_key
from ..jsonable import jsonable
from ..leaderboard import Board, Leaderboard, Row
from ..submission_order import split_submission_key

__all__ = ["RECORD_ID", "RECORD_FORMAT", "RECORD_VERSION", "RECORD_VALUES", "ROW_FIELDS",
           "ranking_record", "record_html", "hidden_judges", "values_published"]

#: The ``id`` of the data block in the page.
RECORD_ID = "metascore-ranking"
RECORD_FORMAT = "metascore-ranking"
#: Bumped when a reader of an older record would misread this one.
RECORD_VERSION = 1
#: The most judge values the record holds in all (rows x published judges, both boards).
RECORD_VALUES = 200_000

_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}


def record_html(lb: Leaderboard) -> str:
    """The data block the ranking page carries."""
    text = json.dumps(ranking_record(lb), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return (f'<script type="application/json" id="{RECORD_ID}">'
            f"{text.translate(_ESCAPES)}</script>")


def values_published(lb: Leaderboard) -> bool:
    """Whether the record holds the judges' values (at most :data:`RECORD_VALUES` of them)."""
    hidden = hidden_judges(lb)
    boards = [b for b in (lb.final, lb.development) if b is not None]
    return sum(len(b.rows) * sum(j not in hidden for j in b.judges) for b in boards) <= RECORD_VALUES


def ranking_record(lb: Leaderboard) -> dict[str, Any]:
    """The record of ``lb`` (see the module's docstring), JSON-ready."""
    hidden = hidden_judges(lb)
    boards = [b for b in (lb.final, lb.development) if b is not None]
    values = values_published(lb)
    return {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "metascore": __version__,
        "config": jsonable(lb.config),
        "export": jsonable(lb.input_summary.export) if lb.input_summary.export is not None else None,
        "winners": list(lb.winners),
        "hidden_judges": sorted({j for b in boards for j in b.judges if j in hidden}),
        "boards": {
            "final": _board(lb.final, hidden, values, final=True),
            "development": None if lb.development is None
            else _board(lb.development, hidden, values, final=False),
        },
    }


def hidden_judges(lb: Leaderboard) -> frozenset[str]:
    """The judges (keys) on a hidden column of the competition."""
    columns = lb.input_summary.hidden
    if not columns:
        return frozenset()
    metrics = _judge_metrics(lb.config)
    judges = {j for b in (lb.final, lb.development) if b is not None for j in b.judges}
    return frozenset(j for j in judges if metrics.get(j, j.rsplit("/", 1)[-1]) in columns)


def _judge_metrics(config: Mapping[str, Any]) -> dict[str, str]:
    """``{judge key: metric}`` of the configured judges."""
    return {judge_key(str(j["task"]), str(j["metric"])): str(j["metric"])
            for j in config.get("judges") or ()}


#: A row's fields, in the order of its array (``qualified`` on the final board only,
#: ``values`` when published).
ROW_FIELDS = ("candidate", "participant", "owner", "submission", "baseline", "position", "score",
              "qualified", "submitted_at", "values")


def _board(board: Board, hidden: frozenset[str], values: bool, *, final: bool) -> dict[str, Any]:
    shown = [k for k, j in enumerate(board.judges) if j not in hidden]
    fields = [f for f in ROW_FIELDS if (final or f != "qualified") and (values or f != "values")]
    out = {
        "phase": board.phase,
        "judges": [board.judges[k] for k in shown],
        "values_published": values,
        "row_fields": fields,
        "rows": [_row(r, shown if values else None, board.judges, final) for r in board.rows],
        "not_selected": dict(board.not_selected),
        "higher_is_better": [bool(board.higher_is_better[k]) for k in shown],
        "weights": [float(board.weights[k]) for k in shown],
        "hidden_weights": {j: float(w) for j, w in zip(board.judges, board.weights) if j in hidden},
        "groups": _groups(board, shown),
    }
    if final:
        at = {r.candidate: k for k, r in enumerate(board.rows)}
        out["pool"] = [at[c] for c in board.pool]
    return out


def _groups(board: Board, shown: list[int]) -> dict[str, Any] | None:
    """The board's judge groups: each published judge's group (``of``), every group's
    weight, the rule inside the groups and its parameters (None: the method's)."""
    g = board.groups
    if g is None:
        return None
    return {"of": [g.of[k] for k in shown], "weights": {n: g.weight(n) for n in g.names},
            "method": g.within, "params": jsonable(dict(g.within_params))}


def _row(r: Row, shown: list[int] | None, judges: tuple[str, ...], final: bool) -> list[Any]:
    """The row's fields in the order of :data:`ROW_FIELDS` (those its board has)."""
    owner, submission = split_submission_key(r.candidate) or (None, None)
    row: list[Any] = [r.candidate, r.participant, owner, submission, r.is_baseline, r.position,
                      _number(r.score)]
    if final:
        row.append(r.qualified)
    row.append(r.submitted_at)
    if shown is not None:
        row.append([_number(r.values.get(judges[k])) for k in shown])
    return row


def _number(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)
