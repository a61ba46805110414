"""Readers for every score input the meta-scoring program accepts (SPEC section 6).

Each score reader returns the **canonical long table**, one row per
(phase, candidate, task, metric) score:

=============  ==========================================================================
column         meaning
=============  ==========================================================================
phase          phase name (``""`` when the source has no phase)
candidate      what is ranked (a submission id, a model)
participant    its owner, or ``None`` when unknown
task, metric   the judge: ``task`` (dataset) and ``metric`` (leaderboard column); either
               may be ``""``
value          float; ``NaN`` = missing
submitted_at   ISO 8601 string or ``None``
is_baseline    bool (``False`` unless the source says so)
=============  ==========================================================================

The frame's ``attrs`` hold ``format``, ``source`` (the path read) and ``failed``: a list of
``(phase, candidate, task, reason)`` for submissions of a scoring-output tree that produced
no scores for a task (their rows are absent, so the score is missing downstream).

Formats (``FORMATS``) and how :func:`detect_format` recognises them:

- ``long``: CSV or JSON (a list of records or ``{"rows": [...]}``) with columns
  ``phase, candidate, participant, task, metric, value`` (+ ``submitted_at``,
  ``is_baseline``); only ``candidate`` and ``value`` are required.
- ``tree``: a directory ``<root>/<phase>/<candidate>/<task>/scores.json`` (or
  ``scores.txt``), optionally ``<root>/submissions.csv`` with candidate metadata. A tree
  without the phase level (``<root>/<candidate>/<task>/scores.json``) is read with phase
  ``""`` (or the ``phase`` argument).
- ``codabench_json``: Codabench ``results.json?phase=`` export.
- ``codabench_csv``: Codabench ``results.csv?phase=`` export (one phase per file).
- ``codalab_csv``: CodaLab v1 leaderboard CSV (``value (rank)`` cells); also the
  in-container ``input/scores/metadata`` file.
- ``coopetition``: CodaLab v1 ``coopetition_scores_phase_<N>.txt``; the same table as the
  leaderboard CSV (checked against ``codalab/competition-examples``:
  ``developers/coopetition/automl_hackathon_bundle/scoring_program/run/coopetition``).
- ``wide``: CSV, one row per candidate, one column per judge (``task`` = column name).
- ``preflib``: votes, not scores; read them with :func:`read_votes`.

Every parse error is an :class:`~metascore.errors.InputError` naming the file, the line
(or JSON key) and the offending value.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError, did_you_mean
from ..matrix import MISSING_TOKENS, parse_score

__all__ = [
    "CANONICAL_COLUMNS",
    "FORMATS",
    "read_scores",
    "detect_format",
    "read_scores_file",
    "read_votes",
    "resolve_inside",
]

CANONICAL_COLUMNS = [
    "phase",
    "candidate",
    "participant",
    "task",
    "metric",
    "value",
    "submitted_at",
    "is_baseline",
]
FORMATS = (
    "long",
    "tree",
    "codabench_json",
    "codabench_csv",
    "codalab_csv",
    "coopetition",
    "wide",
    "preflib",
)

StrPath = str | PathLike[str]

SCORE_FILES = ("scores.json", "scores.txt")  # scores.json wins when both exist (Codabench)
MANIFEST = "submissions.csv"
PREFLIB_SUFFIXES = (".soc", ".soi", ".toc", ".toi")
BLIND_PHASE = "Not allowed, phase is blind."

_COOPETITION_NAME = re.compile(r"coopetition_scores_phase_(\d+)(?:\.txt|\.csv)?", re.I)
# "<leaderboard title> - <phase name>(<phase id>)"; the title part is optional here.
_CODABENCH_TITLE = re.compile(r"(?:(?P<board>.*?) - )?(?P<phase>.*?)(?:\((?P<id>\d+)\))?")
# "<task name>(<task id>)-<column title>"
_CODABENCH_COLUMN = re.compile(r"(?P<task>.*?)\((?P<tid>\d+)\)-(?P<metric>.*)")
# "<owner>-<submission id>": the owner is everything before the last "-<digits>".
_CODABENCH_ROW = re.compile(r"(?P<owner>.+)-(?P<id>\d+)")
# CodaLab v1 cell: "0.8406 (1)" -> value "0.8406"
_CODALAB_CELL = re.compile(r"(?P<value>.*?)\s*\((?P<rank>[^()]*)\)")
_FACT_SHEET = "fact_sheet_answers"
_TRUE = frozenset({"true", "1", "yes", "y", "t"})
_FALSE = frozenset({"false", "0", "no", "n", "f", ""}) | MISSING_TOKENS


# ================================================================ public API
def resolve_inside(root: StrPath, relpath: StrPath) -> Path:
    """Resolve ``relpath`` under ``root`` and refuse anything that leaves ``root``.

    Absolute paths, ``..`` components that climb out, and symbolic links pointing outside
    ``root`` raise :class:`InputError`. Returns the resolved path (which need not exist).
    """
    rel = Path(relpath)
    if rel.is_absolute():
        raise InputError(f"path {str(relpath)!r} is absolute; give a path relative to {str(root)!r}.")
    return _check_inside(Path(root), Path(root) / rel, shown=str(relpath))


def detect_format(path: StrPath) -> str:
    """Name the input format of ``path`` (one of :data:`FORMATS`).

    A directory is a ``tree``; ``.soc/.soi/.toc/.toi`` files are ``preflib``;
    ``coopetition_scores_phase_<N>.txt`` is ``coopetition``; JSON is ``codabench_json``
    when its top level maps leaderboard titles to ``{"<owner>-<id>": {...}}`` rows, else
    ``long``; a CSV whose header starts with ``Username`` is ``codabench_csv``, with
    ``submission_pk`` ``codalab_csv``, with ``candidate`` and ``value`` columns (and a
    ``task`` or ``metric`` column) ``long``, anything else ``wide``. Raises
    :class:`InputError` when the file matches no format, or several.
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p} does not exist.")
    if p.is_dir():
        return "tree"
    suffix = p.suffix.lower()
    if suffix in PREFLIB_SUFFIXES:
        return "preflib"
    if _COOPETITION_NAME.fullmatch(p.name):
        return "coopetition"
    if suffix == ".json":
        return _detect_json(p)
    text = _read_text(p)
    first_line = text.lstrip().split("\n", 1)[0].strip()
    if first_line.startswith(BLIND_PHASE.rstrip(".")):
        return "codalab_csv"
    header = [h.strip() for h in next(csv.reader([first_line]), [])]
    if not header or not any(header):
        raise InputError(f"no scores found in {p} (the file is empty).")
    matches = []
    if header[0] == "submission_pk":
        matches.append("codalab_csv")
    if header[0] == "Username":
        matches.append("codabench_csv")
    if suffix == ".csv":
        names = {h.lower() for h in header}
        if {"candidate", "value"} <= names:
            matches.append("long")
            if not names & {"task", "metric"}:
                matches.append("wide")  # one judge named "value", or a long table of one judge
        elif not matches:
            matches.append("wide")
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise InputError(
            f"cannot tell the format of {p} from its name or first line; set `format:` "
            f"to one of {', '.join(FORMATS)}."
        )
    raise InputError(
        f"the format of {p} is ambiguous: it could be {' or '.join(matches)}; set `format:` "
        "to say which."
    )


def read_scores(
    path: StrPath,
    format: str | None = None,
    *,
    phase: str | None = None,
    root: StrPath | None = None,
) -> pd.DataFrame:
    """Read scores in any supported format into the canonical long table.

    Parameters
    ----------
    path : path-like
        File or directory, used as given (relative to the working directory).
    format : str, optional
        One of :data:`FORMATS`; ``None`` detects it (:func:`detect_format`). An explicit
        format always wins.
    phase : str, optional
        When the source holds phases, keep only this one (an unknown phase is an error).
        When it has none (wide, CodaLab CSV, a long table without a ``phase`` column),
        label every row with it. For ``coopetition`` files, whose phase is a number,
        it replaces that number.
    root : path-like, optional
        A directory ``path`` must resolve inside (symbolic links included).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`CANONICAL_COLUMNS`; ``attrs`` holds ``format``, ``source`` and
        ``failed`` (see the module docstring).
    """
    p = Path(path)
    if root is not None:
        p = _check_inside(Path(root), p, shown=str(path))
    if not p.exists():
        raise InputError(f"{path} does not exist.")
    fmt = detect_format(p) if format is None else str(format)
    if fmt not in FORMATS:
        raise InputError(
            f"unknown input format {fmt!r}{did_you_mean(fmt, FORMATS)}; formats are "
            f"{', '.join(FORMATS)}."
        )
    if fmt == "preflib":
        raise InputError(
            f"{p} holds votes (PrefLib), not scores; read it with read_votes() "
            "(in the configuration: give it as the `votes` input)."
        )
    if fmt == "tree":
        if not p.is_dir():
            raise InputError(f"format 'tree' needs a directory; {p} is a file.")
    elif p.is_dir():
        raise InputError(f"format {fmt!r} needs a file; {p} is a directory.")
    rows = _Rows()
    if fmt == "tree":
        _read_tree(p, phase, rows)
    elif fmt == "long":
        if p.suffix.lower() == ".json":
            _read_long_json(p, rows)
        else:
            _read_long_csv(p, rows)
    elif fmt == "codabench_json":
        _read_codabench_json(p, rows)
    elif fmt == "codabench_csv":
        _read_codabench_csv(p, rows)
    elif fmt in ("codalab_csv", "coopetition"):
        file_phase = ""
        if fmt == "coopetition":
            match = _COOPETITION_NAME.fullmatch(p.name)
            file_phase = phase if phase is not None else (match.group(1) if match else "")
        _read_codalab_csv(p, rows, file_phase)
    else:
        _read_wide(p, rows)
    return rows.frame(p, fmt, phase)


def read_scores_file(path: StrPath) -> dict[str, float]:
    """Read one ``scores.json`` or ``scores.txt`` into ``{key: score}`` (file order).

    ``scores.json`` must be a flat object of finite numbers (numeric strings are accepted,
    as Codabench does). ``scores.txt`` holds ``key: value`` lines, with a space after the
    colon: Codabench v2 parses the file as YAML, which reads ``key:value`` as one string.
    Nested values, non-numbers, ``NaN``/``Infinity``, ``null`` and repeated keys are
    errors naming the file and key.
    """
    p = Path(path)
    if p.suffix.lower() == ".json":
        return _read_scores_json(p)
    if p.suffix.lower() == ".txt":
        return _read_scores_txt(p)
    raise InputError(f"{p}: expected a scores.json or scores.txt file.")


def read_votes(path: StrPath) -> tuple[list[list[list[str]]], list[float], list[str]]:
    """Read a PrefLib ``.soc``/``.soi``/``.toc``/``.toi`` file (PrefLib 2022 layout).

    The file starts with ``# KEY: value`` header lines, among them
    ``# ALTERNATIVE NAME <i>: <name>``, then one line per distinct order,
    ``<count>: <a>,<b>,{<c>,<d>},<e>`` (best first; braces group tied alternatives).

    Returns
    -------
    votes : list of votes
        Each vote is a list of tiers best first; a tier is a list of candidate names.
    weights : list of float
        The count of each vote.
    candidates : list of str
        Every alternative's name, in alternative-number order (``str(i)`` when unnamed).
    """
    p = Path(path)
    text = _read_text(p)
    header: dict[str, tuple[int, str]] = {}
    names: dict[int, str] = {}
    orders: list[tuple[int, float, str]] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            key, sep, value = line[1:].partition(":")
            if not sep:
                continue  # a free comment
            key = key.strip().upper()
            match = re.fullmatch(r"ALTERNATIVE NAME (\d+)", key)
            if match:
                names[int(match.group(1))] = value.strip()
            else:
                header[key] = (n, value.strip())
            continue
        count, sep, order = line.partition(":")
        if not sep:
            raise InputError(
                f"{p}, line {n}: {line!r} is not a '<count>: <order>' line; only the "
                "PrefLib 2022 layout ('# KEY: value' headers, then 'count: 1,2,{3,4}') is read."
            )
        weight = _number(count, f"{p}, line {n}: vote count")
        if not weight > 0:
            raise InputError(f"{p}, line {n}: vote count {count.strip()!r} must be > 0.")
        orders.append((n, weight, order))

    n_alt = _header_int(header, "NUMBER ALTERNATIVES", p)
    if n_alt is None:
        n_alt = max(names, default=0)
    bad = [i for i in names if not 1 <= i <= n_alt]
    if bad:
        raise InputError(
            f"{p}: ALTERNATIVE NAME {bad[0]} is outside 1..{n_alt} (NUMBER ALTERNATIVES)."
        )
    labels = [names.get(i, str(i)) for i in range(1, n_alt + 1)]
    if len(set(labels)) != len(labels):
        dup = next(x for x in labels if labels.count(x) > 1)
        raise InputError(f"{p}: alternative name {dup!r} is given to two alternatives.")

    votes: list[list[list[str]]] = []
    weights: list[float] = []
    for n, weight, order in orders:
        vote = _preflib_order(order, n_alt, labels, f"{p}, line {n}")
        if vote:
            votes.append(vote)
            weights.append(weight)
    if not votes:
        raise InputError(f"no votes found in {p}.")
    declared = _header_int(header, "NUMBER VOTERS", p)
    if declared is not None and not math.isclose(sum(w for _, w, _ in orders), declared):
        raise InputError(
            f"{p}: the vote counts add up to {sum(w for _, w, _ in orders):g} but the header "
            f"says NUMBER VOTERS: {declared} (is the file truncated?)."
        )
    declared = _header_int(header, "NUMBER UNIQUE ORDERS", p)
    if declared is not None and declared != len(orders):
        raise InputError(
            f"{p}: the file has {len(orders)} order lines but the header says "
            f"NUMBER UNIQUE ORDERS: {declared} (is the file truncated?)."
        )
    return votes, weights, labels


# ================================================================ row collection
class _Rows:
    """Collects canonical rows plus where each came from (for error messages)."""

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {c: [] for c in CANONICAL_COLUMNS}
        self.where: list[str] = []
        self.failed: list[tuple[str, str, str, str]] = []
        self.drop_empty_judges = False

    def add(
        self,
        where: str,
        phase: str,
        candidate: str,
        participant: str | None,
        task: str,
        metric: str,
        value: float,
        submitted_at: str | None = None,
        is_baseline: bool = False,
    ) -> None:
        if candidate == "":
            raise InputError(f"{where}: the candidate is empty.")
        for col, val in zip(
            CANONICAL_COLUMNS,
            (phase, candidate, participant, task, metric, value, submitted_at, is_baseline),
        ):
            self.columns[col].append(val)
        self.where.append(where)

    def frame(self, path: Path, fmt: str, phase: str | None) -> pd.DataFrame:
        """The canonical table, after phase selection and consistency checks."""
        frame = pd.DataFrame(self.columns, columns=CANONICAL_COLUMNS)
        frame["value"] = frame["value"].astype(float)
        frame["is_baseline"] = frame["is_baseline"].astype(bool)
        for col in ("participant", "submitted_at"):
            frame[col] = frame[col].astype(object)
        where = pd.Series(self.where, dtype=object)
        if self.drop_empty_judges and len(frame):
            # an export lists every (task, column) pair; a pair nobody has a score in is
            # a leaderboard column that task does not fill, not a judge
            scored = frame["value"].notna().groupby([frame["task"], frame["metric"]]).transform("any")
            frame, where = frame[scored.to_numpy()], where[scored.to_numpy()]
        failed = list(self.failed)
        if phase is not None:
            present = sorted(set(frame["phase"]) - {""})
            if not present:
                frame = frame.assign(phase=str(phase))
            elif str(phase) in present:
                keep = (frame["phase"] == str(phase)).to_numpy()
                frame, where = frame[keep], where[keep]
                failed = [f for f in failed if f[0] == str(phase)]
            else:
                raise InputError(
                    f"phase {phase!r} is not in {path}{did_you_mean(phase, present)}; it holds "
                    f"phase(s) {present}."
                )
        if not frame["value"].notna().any():
            raise InputError(f"no scores found in {path}.")
        frame = frame.reset_index(drop=True)
        where = where.reset_index(drop=True)
        _check_unique(frame, where)
        _check_metadata(frame, where)
        frame.attrs.update(format=fmt, source=str(path), failed=failed)
        return frame


def _check_unique(frame: pd.DataFrame, where: pd.Series) -> None:
    keys = ["phase", "candidate", "task", "metric"]
    later = np.flatnonzero(frame.duplicated(keys).to_numpy())
    if later.size:
        second = later[0]
        row = frame.iloc[second]
        same = (frame[keys] == row[keys]).all(axis=1).to_numpy()
        first = np.flatnonzero(same)[0]
        raise InputError(
            f"candidate {row['candidate']!r} has two scores for phase {row['phase']!r}, task "
            f"{row['task']!r}, metric {row['metric']!r} ({where[first]} and {where[second]})."
        )


def _check_metadata(frame: pd.DataFrame, where: pd.Series) -> None:
    """One participant / submission time / baseline flag per (phase, candidate)."""
    for col in ("participant", "submitted_at", "is_baseline"):
        filled = frame[col].astype(object).where(frame[col].notna(), "\0none")
        counts = filled.groupby([frame["phase"], frame["candidate"]]).transform("nunique")
        bad = np.flatnonzero(counts.to_numpy() > 1)
        if bad.size:
            row = frame.iloc[bad[0]]
            same = np.flatnonzero(
                ((frame["phase"] == row["phase"]) & (frame["candidate"] == row["candidate"])).to_numpy()
            )
            other = next(i for i in same if filled.iloc[i] != filled.iloc[same[0]])
            raise InputError(
                f"candidate {row['candidate']!r} has two different {col} values: "
                f"{frame[col].iloc[same[0]]!r} ({where[same[0]]}) and {frame[col].iloc[other]!r} "
                f"({where[other]})."
            )


# ================================================================ cell parsers
def _value(cell: Any, where: str | Callable[[], str]) -> float:
    """A score cell: missing tokens -> NaN; infinities and non-numbers are errors.

    ``where`` may be a function building the location, called only on error.
    """
    if isinstance(cell, (str, float, int)) and not isinstance(cell, bool):
        try:
            number = float(cell)
        except ValueError:
            pass
        else:
            if not math.isinf(number):
                return number
    if callable(where):
        where = where()
    number = parse_score(cell, where=where, allow_inf=True)
    if math.isinf(number):
        raise InputError(
            f"{where}: score {cell!r} is infinite; a score must be a finite number (leave "
            "the cell empty when the score is missing)."
        )
    return number


def _number(text: str, where: str) -> float:
    try:
        return float(text.strip())
    except ValueError:
        raise InputError(f"{where} {text.strip()!r} is not a number.") from None


def _text(cell: Any) -> str:
    if cell is None or (isinstance(cell, float) and math.isnan(cell)):
        return ""
    return str(cell).strip()


def _optional_text(cell: Any) -> str | None:
    text = _text(cell)
    return None if text.lower() in MISSING_TOKENS else text


def _flag(cell: Any, where: str | Callable[[], str]) -> bool:
    if isinstance(cell, (bool, np.bool_)):
        return bool(cell)
    if cell is None:
        return False
    if isinstance(cell, (int, float)) and not isinstance(cell, bool) and cell in (0, 1):
        return bool(cell)
    text = _text(cell).lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InputError(
        f"{where() if callable(where) else where}: {cell!r} is not a true/false value (use "
        "true or false)."
    )


def _time(cell: Any, where: str | Callable[[], str]) -> str | None:
    text = _optional_text(cell)
    if text is None:
        return None
    iso = _iso_time(text)
    if iso is None:
        raise InputError(
            f"{where() if callable(where) else where}: submission time {text!r} is not a "
            "date/time (use ISO 8601, e.g. 2024-03-01T10:00:00Z)."
        )
    return iso


@functools.lru_cache(maxsize=4096)
def _iso_time(text: str) -> str | None:
    try:
        stamp = pd.Timestamp(text)
    except (TypeError, ValueError):
        return None
    return None if stamp is pd.NaT else stamp.isoformat()


# ================================================================ text and CSV helpers
def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a file.") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: byte {exc.start} is not valid UTF-8; save the file as UTF-8."
        ) from None


def _csv_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """``(line number, cells)`` for every non-blank CSV row."""
    reader = csv.reader(io.StringIO(_read_text(path), newline=""))
    start = 1
    try:
        for row in reader:
            if any(cell.strip() for cell in row):
                yield start, row
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(f"{path}, line {reader.line_num}: malformed CSV ({exc}).") from None


def _header(path: Path, rows: Iterator[tuple[int, list[str]]]) -> tuple[int, list[str]]:
    try:
        n, header = next(rows)
    except StopIteration:
        raise InputError(f"no scores found in {path} (the file is empty).") from None
    return n, [h.strip() for h in header]


def _column_index(header: list[str], names: Iterable[str]) -> dict[str, int]:
    """Positions of the wanted columns (case-insensitive); repeated names are an error."""
    wanted = set(names)
    found: dict[str, int] = {}
    for i, h in enumerate(header):
        key = h.lower()
        if key in wanted:
            if key in found:
                raise InputError(f"column {h!r} appears twice in the header.")
            found[key] = i
    return found


def _cell(row: list[str], i: int | None) -> str:
    return row[i] if i is not None and i < len(row) else ""


# ================================================================ long
def _read_long_csv(path: Path, rows: _Rows) -> None:
    lines = _csv_rows(path)
    _, header = _header(path, lines)
    try:
        cols = _column_index(header, CANONICAL_COLUMNS)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    _require(cols, ("candidate", "value"), path, header)
    for n, row in lines:
        record = {name: _cell(row, i) for name, i in cols.items()}
        _add_long(rows, record, lambda col: f"{path}, line {n}, column {col!r}", f"{path}, line {n}")


def _read_long_json(path: Path, rows: _Rows) -> None:
    data = _load_json(path)
    records = data.get("rows") if isinstance(data, dict) else data
    if not isinstance(records, list):
        raise InputError(
            f"{path}: a long JSON table is a list of records or {{\"rows\": [...]}}; got "
            f"{type(data).__name__}."
        )
    for k, record in enumerate(records):
        if not isinstance(record, dict):
            raise InputError(f"{path}, record {k}: expected an object, got {record!r}.")
        record = {str(key).strip().lower(): val for key, val in record.items()}
        _require(record, ("candidate", "value"), path, list(record), where=f"{path}, record {k}")
        _add_long(rows, record, lambda col: f"{path}, record {k}, key {col!r}", f"{path}, record {k}")


def _require(
    present: Iterable[str], names: Iterable[str], path: Path, header: list[str], where: str | None = None
) -> None:
    have = set(present)
    for name in names:
        if name not in have:
            raise InputError(
                f"{where or path} has no {name!r} column{did_you_mean(name, header)}; "
                f"columns are {header}."
            )


def _add_long(rows: _Rows, record: dict[str, Any], at: Callable[[str], str], where: str) -> None:
    for key in ("candidate", "phase", "task", "metric", "participant"):
        if isinstance(record.get(key), (dict, list)):
            raise InputError(f"{at(key)}: {record[key]!r} is not a plain value.")
    rows.add(
        where,
        phase=_text(record.get("phase")),
        candidate=_text(record.get("candidate")),
        participant=_optional_text(record.get("participant")),
        task=_text(record.get("task")),
        metric=_text(record.get("metric")),
        value=_value(record.get("value"), lambda: at("value")),
        submitted_at=_time(record.get("submitted_at"), lambda: at("submitted_at")),
        is_baseline=_flag(record.get("is_baseline"), lambda: at("is_baseline")),
    )


# ================================================================ wide
def _read_wide(path: Path, rows: _Rows) -> None:
    lines = _csv_rows(path)
    _, header = _header(path, lines)
    try:
        meta = _column_index(header, ("candidate", "participant", "submitted_at", "is_baseline"))
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    cand = meta.get("candidate", 0)
    judges = [(i, h) for i, h in enumerate(header) if i != cand and i not in meta.values()]
    if not judges:
        raise InputError(f"no scores found in {path} (no judge columns besides the candidate).")
    seen: set[str] = set()
    for i, h in judges:
        if not h:
            raise InputError(f"{path}: column {i + 1} of the header has no name.")
        if h in seen:
            raise InputError(f"{path}: column {h!r} appears twice in the header.")
        seen.add(h)
    for n, row in lines:
        at = f"{path}, line {n}"
        if len(row) > len(header) and any(c.strip() for c in row[len(header):]):
            raise InputError(f"{at}: the row has {len(row)} cells but the header has {len(header)}.")
        participant = _optional_text(_cell(row, meta.get("participant")))
        submitted = _time(_cell(row, meta.get("submitted_at")), f"{at}, column 'submitted_at'")
        baseline = _flag(_cell(row, meta.get("is_baseline")), f"{at}, column 'is_baseline'")
        candidate = _text(_cell(row, cand))
        for i, judge in judges:
            value = _value(_cell(row, i), lambda: f"{at}, column {judge!r}")
            rows.add(at, "", candidate, participant, judge, "", value, submitted, baseline)


# ================================================================ scores.json / scores.txt
class _NonFinite(str):
    """Marks a JSON ``NaN``/``Infinity`` constant so the error can name its key."""


def _load_json(path: Path, **kwargs: Any) -> Any:
    text = _read_text(path)
    if not text.strip():
        raise InputError(f"no scores found in {path} (the file is empty).")
    try:
        return json.loads(text, **kwargs)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})."
        ) from None


def _unique_pairs(path: Path) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise InputError(f"{path}: key {key!r} is given twice.")
            out[key] = value
        return out

    return hook


def _read_scores_json(path: Path) -> dict[str, float]:
    data = _load_json(path, parse_constant=_NonFinite, object_pairs_hook=_unique_pairs(path))
    if not isinstance(data, dict):
        raise InputError(
            f"{path}: scores.json must be a flat object {{\"key\": number}}; got "
            f"{type(data).__name__}."
        )
    scores: dict[str, float] = {}
    for key, value in data.items():
        at = f"{path}, key {key!r}"
        if isinstance(value, _NonFinite):
            raise InputError(
                f"{at}: {value} is not a finite number; Codabench drops the whole result on "
                "NaN/Infinity, so omit the key instead."
            )
        if isinstance(value, (dict, list)):
            raise InputError(
                f"{at}: holds a nested {'object' if isinstance(value, dict) else 'list'}; "
                "scores.json must be a flat object of numbers."
            )
        if value is None:
            raise InputError(f"{at}: null is not a score; omit the key when there is no score.")
        if isinstance(value, bool):
            raise InputError(f"{at}: {value!r} is a boolean, not a score.")
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                raise InputError(f"{at}: {value!r} is not a number.") from None
        else:
            number = float(value)
        if not math.isfinite(number):
            raise InputError(
                f"{at}: {value!r} is not a finite number; Codabench drops the whole result on "
                "NaN/Infinity, so omit the key instead."
            )
        scores[str(key)] = number
    return scores


def _read_scores_txt(path: Path) -> dict[str, float]:
    scores: dict[str, float] = {}
    for n, raw in enumerate(_read_text(path).splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#") or line in ("---", "..."):
            continue
        at = f"{path}, line {n}"
        key, sep, rest = line.partition(":")
        if not sep:
            raise InputError(f"{at}: {line!r} is not a 'key: value' line.")
        key = key.strip().strip("'\"")
        if rest and not rest[0].isspace():
            raise InputError(
                f"{at}: {line!r} has no space after the colon; Codabench v2 parses scores.txt "
                f"as YAML and would read the whole line as one string (the score shows as "
                f"n/a), so write 'key: value' ({key}: {rest.strip()})."
            )
        text = rest.split(" #", 1)[0].strip().strip("'\"")
        if not key:
            raise InputError(f"{at}: {line!r} has no key before the colon.")
        if not text:
            raise InputError(f"{at}: key {key!r} has no value.")
        try:
            number = float(text)
        except ValueError:
            number = math.nan if text.lower() in (".nan", ".inf", "-.inf", "+.inf") else None
            if number is None:
                raise InputError(f"{at}: key {key!r} has value {text!r}, which is not a number.") from None
        if not math.isfinite(number):
            raise InputError(
                f"{at}: key {key!r} has value {text!r}, which is not a finite number; omit "
                "the key instead."
            )
        if key in scores:
            raise InputError(f"{at}: key {key!r} is given twice.")
        scores[key] = number
    return scores


# ================================================================ tree
def _check_inside(root: Path, path: Path, shown: str) -> Path:
    base = root.resolve()
    target = path.resolve()
    if target != base and not target.is_relative_to(base):
        raise InputError(
            f"path {shown!r} leads outside {str(root)!r} (to {str(target)!r}); paths must stay "
            "inside it (no '..', absolute paths or symbolic links pointing out)."
        )
    return target


def _subdirs(root: Path, folder: Path) -> list[Path]:
    """Sorted sub-directories of ``folder``, refusing links that leave ``root``."""
    out = []
    for child in sorted(folder.iterdir(), key=lambda c: c.name):
        if child.name.startswith(".") or child.name == "__MACOSX":
            continue
        _check_inside(root, child, shown=str(child.relative_to(root)))
        if child.is_dir():
            out.append(child)
    return out


def _scores_file(root: Path, folder: Path) -> Path | None:
    for name in SCORE_FILES:
        candidate = folder / name
        if candidate.is_symlink() or candidate.exists():
            _check_inside(root, candidate, shown=str(candidate.relative_to(root)))
            if candidate.is_file():
                return candidate
    return None


def _read_tree(root: Path, phase: str | None, rows: _Rows) -> None:
    deep = [f for name in SCORE_FILES for f in root.glob(f"*/*/*/{name}")]
    shallow = [f for name in SCORE_FILES for f in root.glob(f"*/*/{name}")]
    if deep and shallow:
        raise InputError(
            f"{root} mixes <phase>/<candidate>/<task>/scores.json (e.g. "
            f"{deep[0].relative_to(root)}) and <candidate>/<task>/scores.json (e.g. "
            f"{shallow[0].relative_to(root)}); use one layout."
        )
    if not deep and not shallow:
        raise InputError(
            f"no scores found in {root} (expected <phase>/<candidate>/<task>/scores.json or "
            "scores.txt)."
        )
    manifest = _read_manifest(root)
    if deep:
        phases = _subdirs(root, root)
        if phase is not None:
            names = [d.name for d in phases]
            if str(phase) not in names:
                raise InputError(
                    f"phase {phase!r} is not in {root}{did_you_mean(phase, names)}; it holds "
                    f"phase(s) {names}."
                )
            phases = [d for d in phases if d.name == str(phase)]
        labels = [d.name for d in phases]
        for phase_dir in phases:
            _read_phase_dir(root, phase_dir, phase_dir.name, manifest, rows)
    else:
        labels = ["" if phase is None else str(phase)]
        _read_phase_dir(root, root, labels[0], manifest, rows)
    # a manifest entry (for one phase, or for all when it names none) with no output
    seen = set(zip(rows.columns["phase"], rows.columns["candidate"]))
    seen |= {(f[0], f[1]) for f in rows.failed}
    for (m_phase, candidate), (n, _) in manifest.items():
        for label in [m_phase] if m_phase else labels:
            if label in labels and (label, candidate) not in seen:
                rows.failed.append(
                    (label, candidate, "", f"listed in {MANIFEST} (line {n}) but has no scoring output")
                )


def _read_phase_dir(
    root: Path, folder: Path, phase: str, manifest: dict[tuple[str, str], tuple[int, dict[str, Any]]], rows: _Rows
) -> None:
    for cand_dir in _subdirs(root, folder):
        candidate = cand_dir.name
        _, meta = manifest.get((phase, candidate)) or manifest.get(("", candidate)) or (0, {})
        participant = meta.get("participant") or candidate
        tasks = _subdirs(root, cand_dir)
        if not tasks:
            rows.failed.append((phase, candidate, "", "no task directories"))
        for task_dir in tasks:
            scores_path = _scores_file(root, task_dir)
            if scores_path is None:
                rows.failed.append((phase, candidate, task_dir.name, "no scores.json or scores.txt"))
                continue
            scores = read_scores_file(scores_path)
            if not scores:
                rows.failed.append((phase, candidate, task_dir.name, f"{scores_path.name} holds no scores"))
            for metric, value in scores.items():
                rows.add(
                    str(scores_path),
                    phase,
                    candidate,
                    participant,
                    task_dir.name,
                    metric,
                    value,
                    meta.get("submitted_at"),
                    bool(meta.get("is_baseline", False)),
                )


def _read_manifest(root: Path) -> dict[tuple[str, str], tuple[int, dict[str, Any]]]:
    """``<root>/submissions.csv``: ``(phase, candidate) -> (line, metadata)``."""
    path = root / MANIFEST
    if not (path.exists() or path.is_symlink()):
        return {}
    path = _check_inside(root, path, shown=MANIFEST)
    lines = _csv_rows(path)
    _, header = _header(path, lines)
    try:
        cols = _column_index(header, ("phase", "candidate", "participant", "submitted_at", "is_baseline"))
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    _require(cols, ("candidate",), path, header)
    manifest: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
    for n, row in lines:
        at = f"{path}, line {n}"
        key = (_text(_cell(row, cols.get("phase"))), _text(_cell(row, cols["candidate"])))
        if not key[1]:
            raise InputError(f"{at}: the candidate is empty.")
        if key in manifest:
            raise InputError(
                f"{at}: candidate {key[1]!r} is listed twice (first at line {manifest[key][0]})."
            )
        manifest[key] = (
            n,
            {
                "participant": _optional_text(_cell(row, cols.get("participant"))),
                "submitted_at": _time(_cell(row, cols.get("submitted_at")), f"{at}, column 'submitted_at'"),
                "is_baseline": _flag(_cell(row, cols.get("is_baseline")), f"{at}, column 'is_baseline'"),
            },
        )
    return manifest


# ================================================================ Codabench exports
def _detect_json(path: Path) -> str:
    data = _load_json(path)
    if isinstance(data, list):
        return "long"
    if isinstance(data, dict):
        codabench = bool(data) and all(isinstance(v, dict) for v in data.values()) and (
            _looks_like_rows(data) or all(_looks_like_title(k) for k in data)
        )
        long = "rows" in data and isinstance(data["rows"], list)
        if codabench and long:
            raise InputError(
                f"the format of {path} is ambiguous: it could be codabench_json or long; set "
                "`format:` to say which."
            )
        if codabench:
            return "codabench_json"
        if long:
            return "long"
    raise InputError(
        f"cannot tell the format of {path}: JSON input is a long table (a list of records "
        "or {\"rows\": [...]}) or a Codabench results export ({\"<leaderboard> - "
        "<phase>(<id>)\": {\"<owner>-<id>\": {...}}}); set `format:` if it is one of these."
    )


def _looks_like_rows(data: dict[str, Any]) -> bool:
    keys = [k for board in data.values() for k in board]
    return bool(keys) and all(
        _CODABENCH_ROW.fullmatch(k) and isinstance(board[k], dict)
        for board in data.values()
        for k in board
    )


def _looks_like_title(key: str) -> bool:
    match = _CODABENCH_TITLE.fullmatch(key)
    return bool(match and match.group("board") is not None and match.group("id"))


def _codabench_phase(title: str) -> str:
    match = _CODABENCH_TITLE.fullmatch(title.strip())
    return (match.group("phase") if match else title).strip()


def _codabench_owner(key: str) -> str:
    match = _CODABENCH_ROW.fullmatch(key)
    return match.group("owner") if match else key


def _codabench_judges(columns: Iterable[str]) -> dict[str, tuple[str, str]]:
    """``column -> (task, metric)``; a task name used by two task ids keeps its id."""
    parsed: dict[str, tuple[str, str, str]] = {}
    for col in columns:
        if col == _FACT_SHEET or col in parsed:
            continue
        match = _CODABENCH_COLUMN.fullmatch(col)
        if match:
            parsed[col] = (match.group("task").strip(), match.group("tid"), match.group("metric").strip())
        else:
            parsed[col] = ("", "", col.strip())
    ids: dict[str, set[str]] = {}
    for task, tid, _ in parsed.values():
        ids.setdefault(task, set()).add(tid)
    return {
        col: (f"{task}({tid})" if len(ids[task]) > 1 else task, metric)
        for col, (task, tid, metric) in parsed.items()
    }


def _read_codabench_json(path: Path, rows: _Rows) -> None:
    data = _load_json(path)
    if not isinstance(data, dict):
        raise InputError(
            f"{path}: a Codabench results export is an object keyed by leaderboard title; got "
            f"{type(data).__name__}."
        )
    rows.drop_empty_judges = True
    columns = [c for board in data.values() if isinstance(board, dict)
               for row in board.values() if isinstance(row, dict) for c in row]
    judges = _codabench_judges(columns)
    for title, board in data.items():
        if not isinstance(board, dict):
            raise InputError(f"{path}, key {title!r}: expected an object of submissions, got {board!r}.")
        phase = _codabench_phase(title)
        for key, row in board.items():
            if not isinstance(row, dict):
                raise InputError(f"{path}, key {title!r} > {key!r}: expected an object, got {row!r}.")
            owner = _codabench_owner(key)
            for col, cell in row.items():
                if col == _FACT_SHEET:
                    continue
                at = f"{path}, key {title!r} > {key!r} > {col!r}"
                task, metric = judges[col]
                rows.add(at, phase, key, owner, task, metric, _value(cell, at))


def _read_codabench_csv(path: Path, rows: _Rows) -> None:
    match = re.fullmatch(r"(?P<title>.+ - .*\(\d+\))\.csv", path.name, re.I)
    phase = _codabench_phase(match.group("title")) if match else ""
    lines = _csv_rows(path)
    _, header = _header(path, lines)
    if not header or header[0] != "Username":
        raise InputError(
            f"{path}: a Codabench results CSV starts with a 'Username' column; the header is {header}."
        )
    rows.drop_empty_judges = True
    judges = _codabench_judges(header[1:])
    used = [(i, h) for i, h in enumerate(header) if i > 0 and h != _FACT_SHEET]
    seen: set[str] = set()
    for _, h in used:
        if h in seen:
            raise InputError(f"{path}: column {h!r} appears twice in the header.")
        seen.add(h)
    for n, row in lines:
        key = row[0].strip()
        owner = _codabench_owner(key)
        for i, col in used:
            at = f"{path}, line {n}, column {col!r}"
            task, metric = judges[col]
            rows.add(f"{path}, line {n}", phase, key, owner, task, metric, _value(_cell(row, i), at))


# ================================================================ CodaLab v1 exports
def _read_codalab_csv(path: Path, rows: _Rows, phase: str) -> None:
    """CodaLab v1 leaderboard CSV / coopetition file (``get_results_csv``).

    Each leaderboard group is a block starting with ``submission_pk,User,<label>...``.
    When a group has column groups, a sub-header row follows; the v1 writer emits it one
    cell to the left (its first cell stands for ``User``), which is undone here. A cell
    ``<value> (<rank>)`` gives ``<value>``; ``-`` is missing. Extra empty trailing cells
    (the v1 writer pads every row) are ignored. Caveat: v1 writes every sub-column of one
    column group into the same cell, so only groups with one sub-column survive the export.
    """
    text = _read_text(path)
    if text.strip().startswith(BLIND_PHASE.rstrip(".")):
        raise InputError(
            f"{path} says {BLIND_PHASE!r}: CodaLab does not export the scores of a blind "
            "phase; export them once the phase is no longer blind."
        )
    rows.drop_empty_judges = True
    header: list[str] | None = None
    judges: list[tuple[int, str, str]] = []
    expect_subheader = False
    for n, row in _csv_rows(path):
        first = row[0].strip()
        if first == "submission_pk":
            header = [h.strip() for h in row]
            if len(header) < 2 or header[1] != "User":
                raise InputError(f"{path}, line {n}: expected 'submission_pk,User,...'; got {row}.")
            judges = [(i, "", h) for i, h in enumerate(header) if i >= 2 and h]
            expect_subheader = True
            continue
        if header is None:
            raise InputError(
                f"{path}, line {n}: expected the header 'submission_pk,User,...' first; got {row}."
            )
        if expect_subheader and first == "":
            judges = _codalab_subheader(path, n, header, [s.strip() for s in row])
            expect_subheader = False
            continue
        expect_subheader = False
        if first == "No data available":
            continue
        if first.startswith("Exception parsing scores"):
            raise InputError(
                f"{path}, line {n}: CodaLab could not export this leaderboard group (the file "
                f"says {first!r})."
            )
        at = f"{path}, line {n}"
        if len(row) < len(header):
            raise InputError(f"{at}: the row has {len(row)} cells but the header has {len(header)}.")
        extra = [c for c in row[len(header):] if c.strip()]
        if extra:
            raise InputError(f"{at}: cell {extra[0]!r} lies beyond the last header column.")
        user = row[1].strip()
        participant = None if user in ("", "Anonymous") else user
        for i, task, metric in judges:
            cell = row[i].strip()
            match = _CODALAB_CELL.fullmatch(cell)
            raw = match.group("value") if match else cell
            value = _value(raw, f"{at}, column {header[i]!r}")
            rows.add(at, phase, first, participant, task, metric, value)


def _codalab_subheader(
    path: Path, n: int, header: list[str], subs: list[str]
) -> list[tuple[int, str, str]]:
    """``(cell, task, metric)`` per column, from the column-group labels and sub-labels.

    The v1 writer lists sub-labels from the second cell on (one cell left of their
    columns) and only for grouped columns, and it puts every value of one group in the
    group's first cell. So its files can be read only when every column is a group with
    one sub-column; anything else is refused rather than mislabelled.
    """
    shifted = len(subs) > 1 and subs[1] != ""
    labels = subs[1:] if shifted else subs[2:]
    columns = header[2:]
    while columns and not columns[-1]:
        columns.pop()
    while labels and not labels[-1]:
        labels.pop()
    if shifted:
        if len(labels) != len(columns):
            raise InputError(
                f"{path}, line {n}: the sub-header has {len(labels)} labels for {len(columns)} "
                "columns; CodaLab v1 writes sub-labels only for grouped columns, so a "
                "leaderboard mixing grouped and ungrouped columns cannot be aligned."
            )
        repeated = [a for a, b in zip(columns, columns[1:]) if a == b]
        if repeated:
            raise InputError(
                f"{path}, line {n}: column group {repeated[0]!r} has several sub-columns, "
                "and CodaLab v1's CSV export writes all of them into one cell, so their "
                "scores cannot be told apart; export the scores in another form (e.g. the "
                "scoring results as a tree)."
            )
    judges = []
    for i, group in enumerate(columns, start=2):
        sub = labels[i - 2] if i - 2 < len(labels) else ""
        judges.append((i, group if sub else "", sub or group))
    return judges


# ================================================================ PrefLib helpers
_PREFLIB_ORDER = re.compile(r"\s*(?:\d+|\{\s*\d+(?:\s*,\s*\d+)*\s*\})(?:\s*,\s*(?:\d+|\{\s*\d+(?:\s*,\s*\d+)*\s*\}))*\s*")


def _header_int(header: dict[str, tuple[int, str]], key: str, path: Path) -> int | None:
    if key not in header:
        return None
    n, text = header[key]
    try:
        return int(text)
    except ValueError:
        raise InputError(f"{path}, line {n}: {key} {text!r} is not a whole number.") from None


def _preflib_order(order: str, n_alt: int, labels: list[str], at: str) -> list[list[str]]:
    if not order.strip():
        return []
    if not _PREFLIB_ORDER.fullmatch(order):
        raise InputError(
            f"{at}: order {order.strip()!r} is not a list of alternative numbers like 1,2,{{3,4}},5."
        )
    vote: list[list[str]] = []
    seen: set[int] = set()
    for tier in re.findall(r"\{[^}]*\}|\d+", order):
        tier_ids = [int(x) for x in re.findall(r"\d+", tier)]
        for i in tier_ids:
            if not 1 <= i <= n_alt:
                raise InputError(f"{at}: alternative {i} is outside 1..{n_alt}.")
            if i in seen:
                raise InputError(f"{at}: alternative {i} appears twice in one order.")
            seen.add(i)
        vote.append([labels[i - 1] for i in tier_ids])
    return vote
