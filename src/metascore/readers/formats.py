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

Formats (``FORMATS``): each is one :class:`~.input_format.InputFormat` record, defined in
its own module next to its reader and its detection rule, and listed in :data:`REGISTRY`;
:data:`FORMATS`, :func:`detect_format`, :func:`read_score_table` and the site's export
formats (:data:`SITE_EXPORTS`) are derived from the records:

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

from os import PathLike
from pathlib import Path

import pandas as pd

from ..errors import InputError, did_you_mean
from . import codabench_export, codalab, long, preflib, tree, wide
from .columns import COLUMNS_FILE
from .input_format import InputFormat, Sniff, Source, Verdict
from .rows import Rows, check_inside
from .score_table import ScoreTable, concat_scores
from .tree import MANIFEST, tree_score_files

__all__ = [
    "REGISTRY",
    "FORMATS",
    "SITE_EXPORTS",
    "read_scores",
    "read_score_table",
    "detect_format",
    "resolve_inside",
]

#: Every input format, one record each (:mod:`.input_format`), in the order ``--format``
#: lists them; detection asks them in this order.
REGISTRY: tuple[InputFormat, ...] = (
    long.LONG_FORMAT,
    tree.TREE_FORMAT,
    codabench_export.CODABENCH_JSON_FORMAT,
    codabench_export.CODABENCH_CSV_FORMAT,
    codalab.CODALAB_CSV_FORMAT,
    codalab.COOPETITION_FORMAT,
    wide.WIDE_FORMAT,
    preflib.PREFLIB_FORMAT,
)
#: The format names (``input.format``, ``--format``).
FORMATS = tuple(f.name for f in REGISTRY)
#: The formats of a results export downloaded from the site.
SITE_EXPORTS = tuple(f.name for f in REGISTRY if f.site_export)

StrPath = str | PathLike[str]


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
    ``task`` or ``metric`` column) ``long``, anything else ``wide``. (Each rule is its
    format's record's: :data:`REGISTRY`.) Raises :class:`InputError` when the file matches
    no format, or several; the message tells how to name it: ``option`` (``input.format``
    in metascore.yaml, ``--format`` on the command line).
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p} does not exist.")
    return _detect(p, option)[0].name


def _detect(p: Path, option: str) -> tuple[InputFormat, Sniff | None]:
    """The format of the existing ``p``, and what was read of the file to tell it."""
    for fmt in REGISTRY:
        if fmt.by_path is not None and fmt.by_path(p):
            return fmt, None
    sniff = Sniff(p)
    matches: list[InputFormat] = []
    fallbacks: list[InputFormat] = []
    for fmt in REGISTRY:
        verdict = None if fmt.by_content is None else fmt.by_content(sniff)
        if verdict is Verdict.SURE:
            return fmt, sniff
        if verdict is not None:
            (matches if verdict is Verdict.MATCH else fallbacks).append(fmt)
    found = matches or fallbacks
    if len(found) == 1:
        return found[0], sniff
    if found:
        raise InputError(
            f"the format of {p} is ambiguous: it could be "
            f"{' or '.join(sorted(f.name for f in found))}; set {_option(option)} to say which."
        )
    if sniff.is_json:
        raise InputError(
            f"cannot tell the format of {p}: JSON input is a long table (a list of records "
            "or {\"rows\": [...]}) or a Codabench results export ({\"<leaderboard> - "
            f"<phase>(<id>)\": {{\"<owner>-<id>\": {{...}}}}}}); set {_option(option)} if it is one of these."
        )
    raise InputError(
        f"cannot tell the format of {p} from its name or first line; set {_option(option)} "
        f"to one of {', '.join(f.name for f in REGISTRY)}."
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
    sniff = None  # what detection read: a JSON file is parsed once, to detect and to read it
    if format is None:
        fmt, sniff = _detect(p, format_option)
    else:
        fmt = _registered(str(format))
    if fmt.read is None:
        raise InputError(f"{p} {fmt.refusal}.")
    if fmt.directory and format is None and not any(tree_score_files(p)):
        exports = _export_files(p)
        if exports:  # an unzipped site export: read each file by its own format
            return concat_scores([read_score_table(f, phase=phase, root=root) for f in exports])
    if fmt.directory and not p.is_dir():
        raise InputError(f"format {fmt.name!r} needs a directory; {p} is a file.")
    if not fmt.directory and p.is_dir():
        raise InputError(f"format {fmt.name!r} needs a file; {p} is a directory.")
    rows = Rows()
    fmt.read(Source(p, phase, None if sniff is None else sniff.data), rows)
    del sniff  # the parsed file, given back before the table is built
    return rows.score_table(p, fmt.name, phase)


def _registered(name: str) -> InputFormat:
    """The record of format ``name``."""
    for fmt in REGISTRY:
        if fmt.name == name:
            return fmt
    names = [f.name for f in REGISTRY]
    raise InputError(
        f"unknown input format {name!r}{did_you_mean(name, names)}; formats are {', '.join(names)}."
    )


def _export_files(folder: Path) -> list[Path]:
    """The export files directly in ``folder`` (``.json``, ``.csv``, ``.txt``; no hidden
    files, not a tree's ``submissions.csv`` and ``codabench.json``)."""
    return sorted(f for f in folder.iterdir() if f.is_file() and not f.name.startswith(".")
                  and f.suffix.lower() in (".json", ".csv", ".txt")
                  and f.name not in (MANIFEST, COLUMNS_FILE))


def _option(option: str) -> str:
    """How a message names the format setting: ``--format`` or ``input.format:``."""
    return option if option.startswith("-") else f"`{option}:`"
