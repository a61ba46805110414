"""Readers for every score input the meta-scoring program accepts (docs/inputs.md lists them).

Each score reader returns the **canonical long table**, one row per
(phase, candidate, task, metric) score:

=============  ==========================================================================
column         meaning
=============  ==========================================================================
phase          phase name (``""`` when the source has no phase)
candidate      what is ranked (a submission id, a model)
participant    its owner, or missing (``NaN``) when unknown
task, metric   the judge: ``task`` (dataset) and ``metric`` (leaderboard column); either
               may be ``""``
value          float; ``NaN`` = missing
submitted_at   ISO 8601 string, or missing (``NaN``)
is_baseline    bool (``False`` unless the source says so)
=============  ==========================================================================

The text columns are pandas categoricals with sorted categories (:mod:`.table`: a code
per row, each text once), ``value`` float64, ``is_baseline`` bool.

:func:`read_score_table` returns it in a :class:`~.score_table.ScoreTable`, with what the
reader found besides the scores (the format and path read, the runs of a scoring-output
tree that produced no score, the submissions with none at all, notes, the competition's
column sortings); :func:`read_scores` returns the table alone.

Formats (``FORMATS``); :func:`detect_format` recognises them (detection lives here only),
and each is read by its own module:

=====================  ================================  ====================================================
format                 module                            input
=====================  ================================  ====================================================
``long``               ``readers/long.py``               CSV or JSON long table (``candidate``, ``value``,
                                                         optional ``phase, participant, task, metric,
                                                         submitted_at, is_baseline``)
``wide``               ``readers/wide.py``               CSV, one row per candidate, one column per judge;
                                                         or a whitespace-separated matrix
``tree``               ``readers/tree.py``               ``<root>/[<phase>/]<candidate>/<task>/scores.json``
                                                         (or ``scores.txt``: ``readers/scores_file.py``), with an
                                                         optional ``<root>/submissions.csv`` manifest; a
                                                         directory without them is read as a folder of
                                                         export files (e.g. an unzipped Codabench export)
``codabench_json``     ``readers/codabench_export.py``   Codabench ``results.json?phase=`` export
``codabench_csv``      ``readers/codabench_export.py``   Codabench ``results.csv?phase=`` export (one phase)
``codalab_csv``        ``readers/codalab.py``            CodaLab v1 leaderboard CSV (``value (rank)`` cells);
                                                         also the in-container ``input/scores/metadata``
``coopetition``        ``readers/codalab.py``            CodaLab v1 ``coopetition_scores_phase_<N>.txt``
``preflib``            ``readers/preflib.py``            votes, not scores: read them with :func:`read_votes`
=====================  ================================  ====================================================

The shared row collection and cell parsers are in ``readers/rows.py``.

Every parse error is an :class:`~metascore.errors.InputError` naming the file, the line
(or JSON key) and the offending value.
"""

from __future__ import annotations

import codecs
import csv
from collections.abc import Callable
from os import PathLike
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError, did_you_mean
from .codabench_export import is_leaderboard_title, is_submission_key, read_codabench_csv, read_codabench_json
from .codalab import BLIND_PHASE, COOPETITION_NAME, read_codalab_csv, read_coopetition
from .long import read_long
from .preflib import PREFLIB_SUFFIXES, read_votes
from .rows import CANONICAL_COLUMNS, Rows, check_inside, load_json, read_text
from .score_table import ScoreTable, concat_scores
from .scores_file import SCORE_FILES, read_scores_file
from .columns import COLUMNS_FILE
from .tree import MANIFEST, read_tree, tree_score_files
from .wide import read_wide

__all__ = [
    "FORMATS",
    "read_scores",
    "read_score_table",
    "detect_format",
    "resolve_inside",
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

# readers that need nothing but the file (``tree`` and ``coopetition`` also take the phase)
_READERS: dict[str, Callable[[Path, Rows], None]] = {
    "long": read_long,
    "codabench_json": read_codabench_json,
    "codabench_csv": read_codabench_csv,
    "codalab_csv": read_codalab_csv,
    "wide": read_wide,
}


def resolve_inside(root: StrPath, relpath: StrPath) -> Path:
    """Resolve ``relpath`` under ``root`` and refuse anything that leaves ``root``.

    Absolute paths, ``..`` components that climb out, and symbolic links pointing outside
    ``root`` raise :class:`InputError`. Returns the resolved path (which need not exist).
    """
    rel = Path(relpath)
    if rel.is_absolute():
        raise InputError(f"path {str(relpath)!r} is absolute; give a path relative to {str(root)!r}.")
    return check_inside(Path(root), Path(root) / rel, shown=str(relpath))


def detect_format(path: StrPath, option: str = "input.format") -> str:
    """Name the input format of ``path`` (one of :data:`FORMATS`).

    A directory is a ``tree`` (:func:`read_scores` reads a directory without scoring
    outputs as a folder of export files, each by its own format: an unzipped site export);
    ``.soc/.soi/.toc/.toi`` files are ``preflib``;
    ``coopetition_scores_phase_<N>.txt`` is ``coopetition``; JSON is ``codabench_json``
    when its top level maps leaderboard titles to ``{"<owner>-<id>": {...}}`` rows, else
    ``long``; a CSV whose header starts with ``Username`` is ``codabench_csv``, with
    ``submission_pk`` ``codalab_csv``, with ``candidate`` and ``value`` columns (and a
    ``task`` or ``metric`` column) ``long``, anything else ``wide``. Raises
    :class:`InputError` when the file matches no format, or several; the message tells
    how to name it: ``option`` (``input.format`` in metascore.yaml, ``--format`` on the
    command line).
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p} does not exist.")
    if p.is_dir():
        return "tree"
    suffix = p.suffix.lower()
    if suffix in PREFLIB_SUFFIXES:
        return "preflib"
    if COOPETITION_NAME.fullmatch(p.name):
        return "coopetition"
    if suffix == ".json":
        return _json_format(p, load_json(p), option)
    first_line = _first_line(p)
    if first_line.startswith(BLIND_PHASE.rstrip(".")):
        return "codalab_csv"
    header = _header_cells(first_line)
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
            f"cannot tell the format of {p} from its name or first line; set {_option(option)} "
            f"to one of {', '.join(FORMATS)}."
        )
    raise InputError(
        f"the format of {p} is ambiguous: it could be {' or '.join(matches)}; set "
        f"{_option(option)} to say which."
    )


def read_scores(
    path: StrPath,
    format: str | None = None,
    *,
    phase: str | None = None,
    root: StrPath | None = None,
    format_option: str = "input.format",
) -> pd.DataFrame:
    """Read scores in any supported format into the canonical long table (a
    :class:`pandas.DataFrame`, columns :data:`CANONICAL_COLUMNS`); the parameters are
    those of :func:`read_score_table`, which also returns what the reader found besides
    the scores."""
    return read_score_table(path, format, phase=phase, root=root, format_option=format_option).frame


def read_score_table(
    path: StrPath,
    format: str | None = None,
    *,
    phase: str | None = None,
    root: StrPath | None = None,
    format_option: str = "input.format",
) -> ScoreTable:
    """Read scores in any supported format into the canonical long table, with what the
    reader found besides the scores.

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
    format_option : str
        How error messages name the format setting (``--format`` on the command line).

    Returns
    -------
    ScoreTable
        ``frame``: the table, columns :data:`CANONICAL_COLUMNS`; ``format``, ``source``
        (the path read), ``failed``, ``unscored``, ``flagged``, ``notes`` and
        ``directions`` (:class:`~.score_table.ScoreTable` says what each holds).
    """
    p = Path(path)
    if root is not None:
        p = check_inside(Path(root), p, shown=str(path))
    if not p.exists():
        raise InputError(f"{path} does not exist.")
    data = None  # a JSON file is parsed once, to detect its format and to read it
    if format is None and p.suffix.lower() == ".json" and p.is_file():
        data = load_json(p)
        fmt = _json_format(p, data, format_option)
    else:
        fmt = detect_format(p, format_option) if format is None else str(format)
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
    if fmt == "tree" and format is None and not any(tree_score_files(p)):
        exports = _export_files(p)
        if exports:  # an unzipped site export: read each file by its own format
            return concat_scores([read_score_table(f, phase=phase, root=root) for f in exports])
    if fmt == "tree":
        if not p.is_dir():
            raise InputError(f"format 'tree' needs a directory; {p} is a file.")
    elif p.is_dir():
        raise InputError(f"format {fmt!r} needs a file; {p} is a directory.")
    rows = Rows()
    if fmt == "tree":
        read_tree(p, phase, rows)
    elif fmt == "coopetition":
        read_coopetition(p, rows, phase)
    elif data is not None:
        _READERS[fmt](p, rows, data)  # type: ignore[call-arg]
        del data  # the parsed file, given back before the table is built
    else:
        _READERS[fmt](p, rows)
    return rows.score_table(p, fmt, phase)


def _export_files(folder: Path) -> list[Path]:
    """The export files directly in ``folder`` (``.json``, ``.csv``, ``.txt``; no hidden
    files, not a tree's ``submissions.csv`` and ``codabench.json``)."""
    return sorted(f for f in folder.iterdir() if f.is_file() and not f.name.startswith(".")
                  and f.suffix.lower() in (".json", ".csv", ".txt")
                  and f.name not in (MANIFEST, COLUMNS_FILE))


def _first_line(path: Path) -> str:
    """The first line of the file after its leading blank lines, stripped, read from the
    start of the file only as far as that line goes (the reader decodes a 100 MB file
    once); bytes that are not UTF-8 before its end are reported as reading the whole text
    reports them."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    text, size = "", 1 << 16
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(size)
            try:
                text += decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError:
                break
            start = text.lstrip()
            if "\n" in start:
                return start.split("\n", 1)[0].strip()
            if not chunk:
                return start.strip()
            size *= 2
    return read_text(path).lstrip().split("\n", 1)[0].strip()  # raises the decoding error


def _header_cells(line: str) -> list[str]:
    """The cells of a first line, stripped: as the csv module reads them, or split at the
    commas when it cannot (a line without quotes, or one the csv module refuses, such as a
    whitespace matrix's first row of a million cells: one field beyond its size limit)."""
    if '"' in line:
        try:
            return [h.strip() for h in next(csv.reader([line]), [])]
        except csv.Error:
            pass
    return [h.strip() for h in line.split(",")] if line else []


def _option(option: str) -> str:
    """How a message names the format setting: ``--format`` or ``input.format:``."""
    return option if option.startswith("-") else f"`{option}:`"


def _json_format(path: Path, data: Any, option: str) -> str:
    """``long`` or ``codabench_json``, from the shape of the parsed JSON ``data``."""
    if isinstance(data, list):
        return "long"
    if isinstance(data, dict):
        codabench = bool(data) and all(isinstance(v, dict) for v in data.values()) and (
            _submission_rows(data) or all(is_leaderboard_title(k) for k in data)
        )
        long = "rows" in data and isinstance(data["rows"], list)
        if codabench and long:
            raise InputError(
                f"the format of {path} is ambiguous: it could be codabench_json or long; set "
                f"{_option(option)} to say which."
            )
        if codabench:
            return "codabench_json"
        if long:
            return "long"
    raise InputError(
        f"cannot tell the format of {path}: JSON input is a long table (a list of records "
        "or {\"rows\": [...]}) or a Codabench results export ({\"<leaderboard> - "
        f"<phase>(<id>)\": {{\"<owner>-<id>\": {{...}}}}}}); set {_option(option)} if it is one of these."
    )


def _submission_rows(data: dict[str, Any]) -> bool:
    """Whether every board of ``data`` maps ``<owner>-<id>`` keys to objects (and some do)."""
    keys = [k for board in data.values() for k in board]
    return bool(keys) and all(
        is_submission_key(k) and isinstance(board[k], dict)
        for board in data.values()
        for k in board
    )
