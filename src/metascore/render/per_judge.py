"""``per_judge.csv.gz``: the final board's per-judge numbers when the judges are too many
for ``leaderboard.csv`` and ``leaderboard.json`` (more than ``output.judge_columns``);
which file holds a board's per-judge numbers (:func:`per_judge_holder`), and the summary
of each candidate's judge ranks the report shows instead of a column per judge
(:func:`judge_rank_summary`).

One CSV row per judge, gzip-compressed (no time stamp in the header, so one run's file is
the same bytes every time)::

    judge,higher_is_better,weight,rank:<candidate 1>,rank:<candidate 2>,...
    s0,true,1.0,3.0,1.0,...

Candidates are the columns, in the order of ``leaderboard.csv`` (ranked ones first); a
rank is the candidate's fractional rank on that judge inside the ranked pool, empty for a
candidate that is not ranked (a baseline, an excluded candidate). With
``output.per_judge: values_and_ranks`` each candidate has a ``value:<candidate>`` column
(its raw score, empty when missing) before its ``rank:<candidate>``. Ranks are written
without a trailing ``.0`` (``4``, ``4.5``: a fifth of the compressed size at 20 x 471,033),
values as ``leaderboard.csv`` writes them (Python's shortest ``repr``).
"""

from __future__ import annotations

import csv
import gzip
import io
import numpy as np

from ..config import JUDGE_COLUMNS
from ..leaderboard import Board, Leaderboard

__all__ = ["PER_JUDGE_FILE", "per_judge_csv_gz", "number_texts", "judge_columns", "per_judge_holder",
           "judge_rank_summary"]

PER_JUDGE_FILE = "per_judge.csv.gz"
#: Judges formatted at a time (bounds the memory the text takes).
_CHUNK = 20_000
#: gzip's default level: at 20 x 471,033 ranks, 8.6 MB in 4.4 s (level 3: 9.6 MB in 1.6 s),
#: so the outputs stay under 10 MB.
_LEVEL = 6


def judge_columns(lb: Leaderboard) -> tuple[int, str]:
    """``output.judge_columns`` and ``output.per_judge`` of the leaderboard's configuration."""
    out = lb.config.get("output") or {}
    return int(out.get("judge_columns", JUDGE_COLUMNS)), str(out.get("per_judge", "ranks"))


def per_judge_csv_gz(board: Board, *, values: bool = False) -> bytes:
    """The board's per-judge ranks (and ``values``) as gzip-compressed CSV bytes."""
    rows = board.rows
    header: list[str] = ["judge", "higher_is_better", "weight"]
    for r in rows:
        header += [f"value:{r.candidate}", f"rank:{r.candidate}"] if values else [f"rank:{r.candidate}"]
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=_LEVEL) as gz:
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerow(header)
        gz.write(text.getvalue().encode("utf-8"))
        m = len(board.judges)
        for start in range(0, m, _CHUNK):
            stop = min(m, start + _CHUNK)
            ranks = np.stack([r.judge_ranks.array[start:stop] for r in rows], axis=1)
            cells = number_texts(ranks, whole=True)
            if values:
                raw = number_texts(np.stack([r.values.array[start:stop] for r in rows], axis=1))
                both = np.empty((stop - start, 2 * len(rows)), dtype=object)
                both[:, 0::2], both[:, 1::2] = raw, cells
                cells = both
            lines = []
            for k, numbers in enumerate(cells.tolist(), start=start):
                lines.append(",".join([_text(board.judges[k]),
                                       "true" if board.higher_is_better[k] else "false",
                                       repr(float(board.weights[k])), *numbers]))
            gz.write(("\n".join(lines) + "\n").encode("utf-8"))
    return buf.getvalue()


def number_texts(x: np.ndarray, whole: bool = False) -> np.ndarray:
    """Each number as ``repr(float)`` (``""`` when not finite), as an object array; with
    ``whole``, a number that is a whole number of at most 10^6 loses its ``.0``.

    Ranks (halves of integers) are looked up in a table of texts; other numbers are
    formatted one by one."""
    finite = np.isfinite(x)
    every = bool(finite.all())
    vals = x if every else x[finite]
    if not vals.size:
        return np.full(x.shape, "", dtype=object)
    halves = vals * 2
    low, high = float(halves.min()), float(halves.max())
    if 0 <= low and high <= 1e6 and not np.signbit(vals).any() and (np.floor(halves) == halves).all():
        table = np.array([_half_text(int(low) + k, whole) for k in range(int(high) - int(low) + 1)],
                         dtype=object)
        texts = table[halves.astype(np.int64) - int(low)]
    else:
        texts = np.array(list(map(repr, vals.ravel().tolist())), dtype=object).reshape(vals.shape)
    if every:
        return texts
    out = np.full(x.shape, "", dtype=object)
    out[finite] = texts
    return out


def _half_text(doubled: int, whole: bool) -> str:
    """``doubled / 2`` as ``repr`` writes it; without ``.0`` when ``whole`` and it is whole."""
    return str(doubled // 2) if whole and doubled % 2 == 0 else repr(doubled / 2)


def _text(cell: str) -> str:
    """One CSV cell as the csv module writes it (quoted when it must be)."""
    if any(c in cell for c in ',"\n'):  # as csv.writer with lineterminator "\n"
        return '"' + cell.replace('"', '""') + '"'
    return cell


def per_judge_holder(lb: Leaderboard, board: Board) -> str | None:
    """The output file that holds every judge's numbers of ``board``: ``leaderboard.csv``
    (the final board) or ``leaderboard.json`` up to ``output.judge_columns`` judges, then
    ``per_judge.csv.gz`` for the final board; None when no file does."""
    limit, contents = judge_columns(lb)
    if len(board.judges) <= limit:
        return "leaderboard.csv" if board is lb.final else "leaderboard.json"
    return PER_JUDGE_FILE if board is lb.final and contents != "none" else None


def judge_rank_summary(board: Board) -> dict[str, tuple[float | None, float | None, float]]:
    """Per candidate: the median of its judge ranks, the number of judges on which no ranked
    candidate ranks better, and its number of missing scores (ranks None when unranked)."""
    best = np.full(len(board.judges), np.inf)
    for r in board.ranked:
        np.fmin(best, r.judge_ranks.array, out=best)
    out: dict[str, tuple[float | None, float | None, float]] = {}
    for r in board.rows:
        ranks = r.judge_ranks.array
        missing = float(np.count_nonzero(np.isnan(r.values.array)))
        if r.position is None or np.isnan(ranks).all():
            out[r.candidate] = (None, None, missing)
            continue
        out[r.candidate] = (float(np.nanmedian(ranks)), float(np.count_nonzero(ranks == best)),
                            missing)
    return out
