"""Writers of the meta-scoring outputs (what each file holds: ``docs/outputs.md``),
rendered in memory; :func:`~metascore.render.publish.write_files` publishes the set all or
nothing (:func:`write_outputs`).

- ``scores.json``: flat object of finite numbers (``allow_nan=False``);
- ``scores.txt``: ``key: value`` lines with a finite decimal literal (Codabench parses it
  as YAML, CodaLab v1 splits on ``:``; ``0.00001`` rather than ``1e-05``, which YAML 1.1
  reads as a string);
- ``leaderboard.csv`` and ``leaderboard.json`` (with the signature): one row per
  candidate, with its rank interval, P(first) and group when the rank uncertainty was
  computed (empty otherwise); per-judge values and ranks are the CSV columns
  ``judge:<judge>`` and ``judge_rank:<judge>``, and the JSON row's ``judges`` and
  ``judge_ranks`` objects, for a board of at most ``output.judge_columns`` judges
  (:data:`~metascore.config.JUDGE_COLUMNS`); beyond, the board's ``per_judge`` entry says
  so and ``per_judge.csv.gz`` (:mod:`metascore.render.per_judge`) holds the final board's
  per-judge ranks (and values, or nothing: ``output.per_judge``); the JSON also
  summarizes the analysis (judge agreement, stability, how the intervals were computed)
  and holds the comparison of the methods of ``analysis.compare`` (or why it is absent);
- ``detailed_results.html`` (:mod:`metascore.render.report`).
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, fields, replace
from decimal import Decimal
from operator import attrgetter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..config import JUDGE_COLUMNS
from ..errors import MetascoreError
from ..jsonable import ReadyDict, jsonable, ready_records
from ..leaderboard import Analysis, Board, Leaderboard
from ..leaderboard.filtering import Decision
from ..leaderboard.model import MARGINS_KEPT, JudgeValues
from ..readers.spreadsheet import spreadsheet_text
from .per_judge import PER_JUDGE_FILE, judge_columns, number_texts, per_judge_csv_gz
from .publish import write_files
from .report import render_report
from .report_robustness import robustness_json

__all__ = [
    "OUTPUT_FILES",
    "render_outputs",
    "write_outputs",
    "scores_json",
    "scores_txt",
    "leaderboard_csv",
    "leaderboard_json",
    "long_csv",
]

OUTPUT_FILES = (
    "scores.json", "scores.txt", "leaderboard.csv", "leaderboard.json", "detailed_results.html",
)
#: Per-judge columns of ``leaderboard.csv`` have their own namespace, so a judge named
#: ``score`` or ``candidate`` never overwrites a column (the JSON nests them instead).
JUDGE_PREFIX = "judge:"
JUDGE_RANK_PREFIX = "judge_rank:"
#: ``leaderboard.json`` holds the pairwise margins of at most this many candidates (the
#: best-ranked; ``n_candidates`` says how many were ranked): those the leaderboard kept.
MARGINS_LIMIT = MARGINS_KEPT
#: Codabench stores scores in a DecimalField(max_digits=20, decimal_places=10).
MAX_ABS_SCORE = 1e10


def render_outputs(lb: Leaderboard) -> dict[str, str | bytes]:
    """Every output file's text (bytes for ``per_judge.csv.gz``), keyed by file name
    (nothing is written)."""
    files: dict[str, str | bytes] = {
        "scores.json": scores_json(lb.scores),
        "scores.txt": scores_txt(lb.scores),
        "leaderboard.csv": leaderboard_csv(lb),
        "leaderboard.json": leaderboard_json(lb),
        "detailed_results.html": render_report(lb),
    }
    limit, contents = judge_columns(lb)
    if len(lb.final.judges) > limit and contents != "none":
        files[PER_JUDGE_FILE] = per_judge_csv_gz(lb.final, values=contents == "values_and_ranks")
    return files


def write_outputs(output_dir: str | Path, lb: Leaderboard) -> list[Path]:
    """Render and write all output files into ``output_dir`` (created if needed)."""
    return write_files(output_dir, render_outputs(lb))


# ---------------------------------------------------------------------- score files
def _check_scores(scores: Mapping[str, float]) -> dict[str, float]:
    clean = {}
    for key, value in scores.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
            raise MetascoreError(f"score {key!r} is {value!r}, not a number.")
        x = float(value)
        if not math.isfinite(x):
            raise MetascoreError(
                f"score {key!r} is {x!r}; scores must be finite (the platform would drop the "
                "whole result)."
            )
        if abs(x) >= MAX_ABS_SCORE:
            raise MetascoreError(
                f"score {key!r} is {x!r}; the platform stores at most |value| < 1e10."
            )
        clean[str(key)] = x
    return clean


def decimal_literal(x: float) -> str:
    """A finite float as a plain decimal literal: ``2``, ``0.25``, ``0.00001`` (never ``e``)."""
    if float(x).is_integer():
        return str(int(x))
    text = format(Decimal(repr(float(x))), "f")
    return text


def scores_json(scores: Mapping[str, float]) -> str:
    """``scores.json``: a flat object of finite numbers."""
    clean = _check_scores(scores)
    body = {k: int(v) if v.is_integer() else v for k, v in clean.items()}
    return json.dumps(body, indent=2, allow_nan=False) + "\n"


def scores_txt(scores: Mapping[str, float]) -> str:
    """``scores.txt``: one ``key: value`` line per score."""
    clean = _check_scores(scores)
    bad = [k for k in clean if ":" in k or "\n" in k]
    if bad:
        raise MetascoreError(f"score key {bad[0]!r} contains ':' or a newline; scores.txt "
                             "cannot hold it.")
    return "".join(f"{k}: {decimal_literal(v)}\n" for k, v in clean.items())


# ---------------------------------------------------------------------- leaderboards
#: A row's own columns in the files (``prediction_failed`` after ``reason``, when a row has flags).
_ROW = ("position", "rank", "score", "candidate", "participant", "is_baseline", "qualified",
        "reason", "submitted_at", "dev_position", "dev_score", "rank_low", "rank_high", "p_first",
        "group")


def _board_columns(board: Board, per_judge: bool = True, details: bool = True) -> list[str]:
    # the runs that finished after a failed prediction step: a column only when there are
    # some (only a local run knows them; the site's files keep their columns)
    flags = ["prediction_failed"] if _flagged(board) else []
    cols = [*_ROW[:8], *flags, *_ROW[8:],
            *(sorted({k for r in board.rows for k in r.details}) if details else ())]
    if per_judge:
        for j in board.judges:
            cols += [f"{JUDGE_PREFIX}{j}", f"{JUDGE_RANK_PREFIX}{j}"]
    return cols


def _flagged(board: Board) -> bool:
    return any(r.prediction_failed for r in board.rows)


def _row_columns(board: Board, names: Iterable[str]) -> list[list[Any]]:
    """Each named column of the board's rows: a row's field, its flags, or a detail."""
    rows, out = board.rows, []
    for name in names:
        if name == "prediction_failed":
            out.append(["; ".join(r.prediction_failed) or None for r in rows])
        elif name in _ROW:
            out.append(list(map(attrgetter(name), rows)))
        else:
            out.append([r.details.get(name) for r in rows])
    return out


def _board_records(board: Board, per_judge: bool = True) -> list[dict[str, Any]]:
    """The rows as JSON-ready records, built a column at a time: own columns, details, judges."""
    keys = _board_columns(board, per_judge=False, details=False)
    records = ready_records(_row_columns(board, keys), keys)
    for rec, details in ((rec, r.details) for rec, r in zip(records, board.rows) if r.details):
        rec.update(jsonable(dict(details)))
    if per_judge:
        values, ranks = _judge_arrays(board, "values"), _judge_arrays(board, "judge_ranks")
        for rec, vs, rs in zip(records, _ready(values), _ready(ranks)):
            rec["judges"] = ReadyDict(zip(board.judges, vs))
            rec["judge_ranks"] = ReadyDict(zip(board.judges, rs))
    return records


def _judge_arrays(board: Board, attr: str) -> np.ndarray:
    """Each row's numbers per judge (``values`` or ``judge_ranks``) in the board's judge
    order, as one (rows x judges) array, NaN where missing: the rows' own arrays stacked
    when they are views by the board's judges, else read judge by judge."""
    m = len(board.judges)
    out = np.empty((len(board.rows), m))
    for i, r in enumerate(board.rows):
        mapping = getattr(r, attr)
        if isinstance(mapping, JudgeValues) and mapping.keys_are(board.judges):
            out[i] = mapping.array
        else:
            out[i] = [np.nan if (x := mapping.get(j)) is None else x for j in board.judges]
    return out


def _ready(numbers: np.ndarray) -> list[list[float | None]]:
    """Rows of numbers as lists of Python floats, None where not finite."""
    cells = numbers.astype(object)
    cells[~np.isfinite(numbers)] = None
    return cells.tolist()


def _cell(value: Any) -> str:
    """One CSV cell's text: numbers as ``repr``, flags true/false, text safe to open in a
    spreadsheet (:func:`~metascore.readers.spreadsheet.spreadsheet_text`)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "" if not math.isfinite(value) else repr(value)
    return spreadsheet_text(value) if isinstance(value, str) else str(value)


def leaderboard_csv(lb: Leaderboard) -> str:
    """The final board as CSV: one row per candidate, ranked ones first (per-judge columns
    for at most ``output.judge_columns`` judges: each judge's value and rank, written from
    the board's arrays)."""
    board = lb.final
    per_judge = len(board.judges) <= judge_columns(lb)[0]
    cols = _board_columns(board, per_judge)
    own = cols[:len(cols) - 2 * len(board.judges)] if per_judge else cols
    lines = list(map(",".join, zip(*map(_cells, _row_columns(board, own)))))
    if per_judge and board.judges:
        numbers = np.empty((len(board.rows), 2 * len(board.judges)))
        numbers[:, 0::2] = _judge_arrays(board, "values")
        numbers[:, 1::2] = _judge_arrays(board, "judge_ranks")
        texts = number_texts(numbers)  # numbers need no quotes
        lines = [f"{line},{','.join(row)}" for line, row in zip(lines, texts.tolist())]
    return "\n".join([_csv_line([spreadsheet_text(c) for c in cols]), *lines]) + "\n"


def _cells(values: list[Any]) -> list[str]:
    """A column's cells as :func:`_csv_line` writes them (:func:`_cell`, then
    :func:`_csv_text`): a column of floats at once (numbers need no quotes), each distinct
    text once."""
    if set(map(type, values)) <= {float, type(None)}:
        return number_texts(np.array([np.nan if v is None else v for v in values], dtype=float)).tolist()
    texts: dict[str, str] = {}
    out = []
    for v in values:
        if type(v) is str:
            cell = texts.get(v)
            if cell is None:
                cell = texts[v] = _csv_text(_cell(v))
            out.append(cell)
        else:
            out.append(_csv_text(_cell(v)))
    return out


def _csv_line(cells: list[str]) -> str:
    """One CSV line of several cells (:func:`_csv_text`); a lone empty cell is ``""``."""
    if len(cells) == 1 and cells[0] == "":
        return '""'
    return ",".join(map(_csv_text, cells))


def leaderboard_json(lb: Leaderboard) -> str:
    """Everything as JSON: signature, config, input summary, boards, filter, margins."""
    doc = {
        "signature": lb.signature,
        "winner": lb.winner,
        "winners": list(lb.winners),
        "scores": dict(lb.scores),
        "statistics": dict(lb.statistics),
        "messages": list(lb.messages),
        "final": _board_dict(lb.final, *judge_columns(lb), final=True),
        "development": None if lb.development is None else _board_dict(
            lb.development, *judge_columns(lb), final=False),
        "filter": None if lb.filter is None else {
            **{k: v for k, v in asdict(replace(lb.filter, decisions=())).items()
               if k != "decisions"},
            "qualified": list(lb.filter.qualified),
            "excluded": dict(lb.filter.excluded),
            "decisions": ready_records([list(map(attrgetter(f.name), lb.filter.decisions))
                                        for f in fields(Decision)],
                                       [f.name for f in fields(Decision)]),
        },
        "margins": None if lb.margins is None else {
            "candidates": list(lb.margins.candidates[:MARGINS_LIMIT]),
            "margins": lb.margins.margins[:MARGINS_LIMIT, :MARGINS_LIMIT],
            "n_candidates": lb.margins.n_candidates,
            "condorcet_winner": lb.margins.condorcet_winner,
        },
        "analysis": _analysis_dict(lb.analysis),
        "robustness": robustness_json(lb),
        "config": lb.config,
        "input": lb.input_summary.to_dict(),
    }
    try:
        # no indent: json's C encoder (indenting falls back to Python, ~10x slower on the
        # millions of per-judge values of a large competition)
        return json.dumps(jsonable(doc), allow_nan=False) + "\n"
    except ValueError as exc:  # a non-finite number slipped through
        raise MetascoreError(f"leaderboard.json would hold a non-finite number ({exc}).") from None


def _board_dict(board: Board, limit: int = JUDGE_COLUMNS, contents: str = "ranks",
                final: bool = True) -> dict[str, Any]:
    """A board as JSON; beyond ``limit`` judges without its judges and per-judge numbers,
    and with ``per_judge`` saying where they are (the final board's in ``per_judge.csv.gz``)."""
    if len(board.judges) > limit:
        return {
            "phase": board.phase,
            "judges": None,
            "per_judge": {
                "n_judges": len(board.judges), "judge_columns": limit,
                "file": PER_JUDGE_FILE if final and contents != "none" else None,
                "holds": contents if final and contents != "none" else None,
            },
            "rows": _board_records(board, per_judge=False),
            "not_selected": dict(board.not_selected),
            "notes": list(board.notes),
        }
    return {
        "phase": board.phase,
        "judges": [
            {"key": j, "higher_is_better": h, "weight": w}
            for j, h, w in zip(board.judges, board.higher_is_better, board.weights)
        ],
        "rows": _board_records(board),
        "not_selected": dict(board.not_selected),
        "notes": list(board.notes),
    }


def _analysis_dict(a: Analysis) -> dict[str, Any]:
    """How much to trust the final ranking: summary values and how they were computed."""
    u, g, st = a.uncertainty, a.agreement, a.stability
    return {
        "settings": dict(a.settings),
        "rank_uncertainty": None if u is None else {
            "method": u.method, "n_trials": u.n_trials, "level": u.level, "seed": u.seed,
            "missing": u.missing, "resampled": "judges",
            "groups": int(u.group.max()),
        },
        "judge_agreement": None if g is None else {
            "kendall_w": g.w, "mean_spearman": g.mean_spearman,
            "n_candidates": g.n_candidates, "n_judges": g.n_judges, "notes": list(g.notes),
        },
        "stability": None if st is None else {
            "kendall_w": a.stability_w, "std": st.std[st.methods[0]], "axis": st.axis,
            "concordance": st.concordance, "q": st.q, "r": st.r, "seed": st.seed,
        },
        "notes": list(a.notes),
        "comparison": None if a.comparison is None else a.comparison.to_dict(),
        "comparison_note": a.comparison_note,
    }


# ---------------------------------------------------------------------- canonical table
def long_csv(frame: pd.DataFrame, columns: Iterable[str]) -> str:
    """The canonical long table as CSV text (missing values empty, flags true/false).

    Column by column: each distinct text of a coded column is written once, numbers as
    ``repr``; the cells are the csv module's (quoted when they must be)."""
    cols = list(columns)
    buf = io.StringIO()
    buf.write(_csv_line([spreadsheet_text(c) for c in cols]) + "\n")
    if not len(frame):
        return buf.getvalue()
    texts = [_column_texts(frame[c] if c in frame.columns else None, len(frame)) for c in cols]
    if len(cols) == 1:  # a row of one empty cell is written "" by the csv module
        texts[0] = ['""' if t == "" else t for t in texts[0]]
    buf.write("\n".join(map(",".join, zip(*texts))))
    buf.write("\n")
    return buf.getvalue()


def _column_texts(column: pd.Series | None, n: int) -> list[str]:
    """Each cell of a column as :func:`long_csv` writes it (see :func:`_cell`)."""
    if column is None:
        return [""] * n
    values = column.array
    if isinstance(values, pd.Categorical):
        table = np.array([_csv_text(_cell(_plain(v))) for v in values.categories] + [""], dtype=object)
        return table[np.asarray(values.codes)].tolist()
    raw = column.to_numpy()
    if raw.dtype == bool:
        return np.where(raw, "true", "false").tolist()
    if raw.dtype.kind == "f":
        return number_texts(raw).tolist()
    codes, uniques = pd.factorize(raw, use_na_sentinel=True)
    table = np.array([_csv_text(_cell(_plain(v))) for v in uniques] + [""], dtype=object)
    return table[codes].tolist()


def _csv_text(text: str) -> str:
    """One cell as the csv module writes it in a row of several (quoted when it must be),
    and quoted when it holds a ``;`` too: many spreadsheets split on it (OWASP's advice,
    see :mod:`metascore.readers.spreadsheet`)."""
    if any(c in text for c in ',"\n;'):  # as csv.writer with lineterminator "\n", and ";"
        return '"' + text.replace('"', '""') + '"'
    return text


def _plain(value: Any) -> Any:
    if value is None or value is pd.NaT:
        return None
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    return value
