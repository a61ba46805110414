"""The scores a configuration's ``input`` names, read from a folder or a file.

:func:`load_scores` is how the meta-scoring program, the ingestion program and
``metascore rank --config`` read their input: the ``metascore_long.csv`` the ingestion
program wrote, else the file or folder of ``input.path`` (one path, or one per phase)
read as ``input.format`` says (:class:`InputConfig`, the ``input`` section of
``metascore.yaml``). Scores that name no phase are the development phase; the
competition's column sortings and titles of a pulled folder's ``codabench.json`` join the
table's findings, and the table records the path as the configuration gave it
(``ScoreTable.input_path``), which the outputs publish.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from .columns import read_directions, read_hidden, read_titles
from .formats import read_score_table, resolve_inside
from .score_table import ScoreTable, concat_scores
from .table import with_phase

__all__ = ["LONG_NAME", "InputConfig", "load_scores"]

#: Canonical long table written by the ingestion program and preferred by the scorer.
LONG_NAME = "metascore_long.csv"


@dataclass(frozen=True)
class InputConfig:
    """Where the scores are: ``format`` (``None`` = detect) and ``path`` inside the input.

    ``path`` is one file or directory holding every phase, or a mapping
    ``{phase: path}`` for exports that hold one phase per file.
    """

    format: str | None = None
    path: str | Mapping[str, str] = "."


def load_scores(input: InputConfig, root: str | Path, *, development: str = "Development") -> ScoreTable:
    """Read the scores ``input`` points at, under ``root``.

    ``root`` is a directory (``input.path`` is resolved inside it and may not leave it;
    a ``metascore_long.csv`` written by the ingestion program wins) or a single file.
    Scores that name no phase are read as phase ``development`` (``phases.development``).
    The table's ``input_path`` is what was read, relative (so outputs do not depend on
    where the run happened).
    """
    root = Path(root)
    fmt = input.format
    if root.is_file():
        table = _phased(read_score_table(root, fmt), development)
        return dataclasses.replace(table, input_path=root.name)
    if not root.is_dir():
        raise InputError(f"{root}: no such file or directory.")
    if (root / LONG_NAME).is_file():
        table = _with_directions(read_score_table(root / LONG_NAME, "long"), root)
        return dataclasses.replace(table, input_path=LONG_NAME)
    spec = input.path
    if isinstance(spec, str):
        target = resolve_inside(root, spec)
        table = _with_directions(_phased(read_score_table(target, fmt, root=root), development),
                                 root, target)
        return dataclasses.replace(table, input_path=spec)
    table = concat_scores([read_score_table(resolve_inside(root, rel), fmt, phase=phase, root=root)
                           for phase, rel in spec.items()])
    return dataclasses.replace(_with_directions(table, root), input_path=dict(spec))


def _with_directions(table: ScoreTable, root: Path, tree: Path | None = None) -> ScoreTable:
    """Add the directions of ``<root>/codabench.json`` (a pulled folder) to the table's,
    and the columns' titles (shown by the report) and hidden columns of that file and of the
    one at the root of the scores folder ``tree``."""
    inner = tree if tree is not None and tree != root and tree.is_dir() else None
    return dataclasses.replace(
        table, directions={**read_directions(root), **table.directions},
        titles={**(read_titles(inner) if inner else {}), **read_titles(root)},
        hidden=read_hidden(root) | (read_hidden(inner) if inner else frozenset()))


def _phased(table: ScoreTable, development: str) -> ScoreTable:
    """Scores without any phase (a wide CSV, a CodaLab CSV) are the development phase."""
    frame = table.frame
    if not (len(frame) and (frame["phase"] == "").all()):
        return table
    note = (f"the scores name no phase; they are read as phase {development!r} "
            "(phases.development)")
    return dataclasses.replace(
        table,
        frame=with_phase(frame, development),
        failed=tuple(f._replace(phase=f.phase or development) for f in table.failed),
        unscored=tuple(u._replace(phase=u.phase or development) for u in table.unscored),
        flagged=tuple(f._replace(phase=f.phase or development) for f in table.flagged),
        notes=(*table.notes, note),
    )
