"""Writers of the meta-scoring outputs (what each file holds: ``docs/outputs.md``).

Every file is rendered in memory first, then written into a staging directory inside the
output directory and published there file by file (a platform reads
``/app/output/scores.json`` itself, so the set cannot be switched by renaming a folder).
``write_files`` takes these steps, in this order:

1. lock the output directory (``flock`` on the directory itself, no lock file: writers
   into one folder take turns; the lock dies with its process) and remove the staging
   folders (``.metascore-staging-*`` directories, nothing else) that a killed run left;
2. stage every file in a new ``.metascore-staging-*`` directory, each ``fsync``-ed;
3. withdraw the old score files, ``scores.json`` then ``scores.txt`` (moved into the
   staging directory, where they are kept for a rollback), ``fsync`` the directory;
4. move every other file in with ``os.replace`` (each atomic; a previous version is kept
   as a hard link, or a copy), ``fsync`` the directory;
5. move ``scores.txt`` in, ``fsync``, then ``scores.json``, ``fsync``;
6. remove the staging directory.

So whenever the process stops, even by SIGKILL (and after a machine crash, as far as the
file system keeps the order that the ``fsync`` calls impose), a reader finds the complete
old set, the complete new set, or no score file: ``scores.json`` present means every file
is there and from one run; ``scores.txt`` present means every file but ``scores.json`` is
there and from its run; without score files the other files may be old or new (each
whole, never truncated). The only leftover is a staging folder, which the next write
removes. A failure with an exception (disk full) undoes the steps taken, newest first, and
leaves the previous files as they were. Files of others in the folder (a scoring
program's own files, the platform's ``metadata``) are never touched, and score files not
in the new set are left alone. Each file gets the mode ``open()`` would give it (``0o666``
less the umask), not the temporary file's ``0o600``, and never the write bits of the group
and of others (under ``umask 000``, ``0o644``: what ``umask 022`` gives). Nothing here writes ``metadata``,
which the platform owns, and ``detailed_results.html`` is the only HTML file written.

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
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict
from decimal import Decimal
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: writers into one folder are not serialized
    fcntl = None  # type: ignore[assignment]

import numpy as np
import pandas as pd

from ..config import JUDGE_COLUMNS
from ..errors import MetascoreError
from ..jsonable import ReadyDict, jsonable
from ..leaderboard import Analysis, Board, Leaderboard
from ..leaderboard.model import MARGINS_KEPT, JudgeValues
from ..readers.scores_file import SCORE_FILES
from ..readers.spreadsheet import spreadsheet_text
from .per_judge import PER_JUDGE_FILE, judge_columns, number_texts, per_judge_csv_gz
from .report import render_report
from .report_robustness import robustness_json

__all__ = [
    "OUTPUT_FILES",
    "render_outputs",
    "write_outputs",
    "write_files",
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
_FORBIDDEN = ("metadata",)
#: Name prefix of the staging directories inside the output directory.
STAGING_PREFIX = ".metascore-staging-"


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


def write_files(output_dir: str | Path, files: Mapping[str, str | bytes],
                withdraw: Iterable[str] = ()) -> list[Path]:
    """Write ``{name: text or bytes}`` into ``output_dir``, all or nothing (steps in the
    module doc); then remove the files named in ``withdraw`` that are not among ``files``
    (an output of an earlier run that this run does not produce, e.g. ``per_judge.csv.gz``).

    The score files among ``files`` (``scores.json``, ``scores.txt``) are withdrawn first
    and published last, ``scores.json`` last of all: the platform reads it as "the results
    are complete". If publishing fails half-way, the steps taken are undone newest first,
    so the directory holds the old set again; a killed process leaves the old set, the new
    one, or no score file, and a staging folder that the next call removes.
    """
    out = Path(output_dir)
    bad = [name for name in files if name in _FORBIDDEN or name in ("", ".", "..")
           or "/" in name or "\\" in name or name.startswith(STAGING_PREFIX)]
    if bad:
        raise MetascoreError(f"refusing to write {bad[0]!r} into the output directory.")
    out.mkdir(parents=True, exist_ok=True)
    mode = _file_mode()
    with _locked(out) as dir_fd:
        _remove_stale_staging(out)
        stage = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out))
        try:
            new, old = stage / "new", stage / "old"
            new.mkdir()
            old.mkdir()
            for name, text in files.items():
                _write_synced(new / name, text, mode)
            _publish(new, old, out, list(files), dir_fd)
            for name in withdraw:
                if name not in files and name not in _FORBIDDEN and "/" not in name \
                        and os.path.isfile(out / name):
                    os.unlink(out / name)
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    return [out / name for name in files]


def _publish(new: Path, old: Path, out: Path, names: list[str], dir_fd: int | None) -> None:
    """Move ``new/name`` over ``out/name``: score files withdrawn first and published last.

    ``old`` receives what is replaced, so that a failure restores it.
    """
    # score files are withdrawn in SCORE_FILES' order and published in the reverse order,
    # after every other file (scores.json last of all)
    scores = [name for name in SCORE_FILES if name in names]  # withdrawal order
    others = sorted(name for name in names if name not in SCORE_FILES)
    done: list[tuple[str, str]] = []  # (what, name), undone newest first on failure
    try:
        for name in scores:  # from here on, a reader finds no result
            if os.path.lexists(out / name):
                done.append(("withdrawn", name))
                os.replace(out / name, old / name)
        if done:
            _sync(dir_fd)
        for name in others:
            if os.path.lexists(out / name):
                try:
                    os.link(out / name, old / name)
                except OSError:  # no hard links here: a copy keeps the old content too
                    shutil.copy2(out / name, old / name)
                done.append(("replaced", name))
            else:
                done.append(("added", name))
            os.replace(new / name, out / name)
        _sync(dir_fd)
        for name in reversed(scores):  # scores.txt, then scores.json
            done.append(("added", name))
            os.replace(new / name, out / name)
            _sync(dir_fd)
    except BaseException:
        for what, name in reversed(done):
            try:
                if what == "added":
                    if not (new / name).exists():  # it was published: withdraw it
                        (out / name).unlink(missing_ok=True)
                elif (old / name).exists():
                    os.replace(old / name, out / name)
            except OSError:
                pass  # restore what can be; the original error says what went wrong
        raise


def _write_synced(path: Path, text: str | bytes, mode: int) -> None:
    """Write ``text`` (UTF-8) or bytes to ``path`` and flush it to the disk, with ``mode``."""
    with (path.open("wb") if isinstance(text, bytes)
          else path.open("w", encoding="utf-8", newline="")) as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(path, mode)


@contextmanager
def _locked(out: Path) -> Iterator[int | None]:
    """Hold an exclusive ``flock`` on the directory ``out``; yield its descriptor.

    Yields ``None`` where a directory cannot be opened (Windows); where it cannot be
    locked (some network file systems) the writes go on unserialized.
    """
    try:
        fd: int | None = os.open(out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        fd = None
    try:
        if fd is not None and fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError:
                pass
        yield fd
    finally:
        if fd is not None:
            os.close(fd)  # and the lock with it


def _sync(dir_fd: int | None) -> None:
    """Make the renames in the directory durable (where a directory can be synced)."""
    if dir_fd is not None:
        try:
            os.fsync(dir_fd)
        except OSError:
            pass


def _remove_stale_staging(out: Path) -> None:
    """Remove the staging directories a killed run left in ``out`` (under the lock, no live
    writer has one); files and links named like them are not staging directories."""
    with os.scandir(out) as entries:
        stale = [entry.path for entry in entries
                 if entry.name.startswith(STAGING_PREFIX) and entry.is_dir(follow_symlinks=False)]
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)


#: The write bits of the group and of others: no output file has them.
_SHARED_WRITE = 0o022


def _file_mode() -> int:
    """The mode ``open()`` gives a new file, ``0o666`` less the process umask, without the
    write bits of the group and of others."""
    try:  # Linux says it without changing it (other threads may be creating files)
        with open("/proc/self/status", encoding="ascii") as fh:
            umask = next(int(line.split()[1], 8) for line in fh if line.startswith("Umask:"))
    except (OSError, StopIteration, ValueError, IndexError):
        umask = os.umask(0o022)  # elsewhere reading the umask means setting it
        os.umask(umask)
    return 0o666 & ~(umask | _SHARED_WRITE)


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
def _board_columns(board: Board, per_judge: bool = True) -> list[str]:
    details = sorted({k for r in board.rows for k in r.details})
    # the runs that finished after a failed prediction step: a column only when there are
    # some (only a local run knows them; the site's files keep their columns)
    flags = ["prediction_failed"] if _flagged(board) else []
    cols = ["position", "rank", "score", "candidate", "participant", "is_baseline", "qualified",
            "reason", *flags, "submitted_at", "dev_position", "dev_score", "rank_low", "rank_high",
            "p_first", "group", *details]
    if per_judge:
        for j in board.judges:
            cols += [f"{JUDGE_PREFIX}{j}", f"{JUDGE_RANK_PREFIX}{j}"]
    return cols


def _flagged(board: Board) -> bool:
    return any(r.prediction_failed for r in board.rows)


def _board_records(board: Board, per_judge: bool = True) -> list[dict[str, Any]]:
    records = []
    flagged = _flagged(board)
    for r in board.rows:
        rec: dict[str, Any] = {
            "position": r.position, "rank": r.rank, "score": r.score, "candidate": r.candidate,
            "participant": r.participant, "is_baseline": r.is_baseline,
            "qualified": r.qualified, "reason": r.reason,
            **({"prediction_failed": "; ".join(r.prediction_failed) or None} if flagged else {}),
            "submitted_at": r.submitted_at,
            "dev_position": r.dev_position, "dev_score": r.dev_score, "rank_low": r.rank_low,
            "rank_high": r.rank_high, "p_first": r.p_first, "group": r.group,
            **dict(r.details),
        }
        records.append(rec)
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
    records = _board_records(board, False)
    lines = list(map(",".join, zip(*(_cells([rec.get(c) for rec in records]) for c in own))))
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
            **{k: v for k, v in asdict(lb.filter).items() if k != "decisions"},
            "qualified": list(lb.filter.qualified),
            "excluded": dict(lb.filter.excluded),
            "decisions": [asdict(d) for d in lb.filter.decisions],
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
