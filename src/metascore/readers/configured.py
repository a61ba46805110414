"""The scores a configuration's ``input`` names, read from a folder or a file.

:func:`load_scores` is how the meta-scoring program, the ingestion program and
``metascore rank --config`` read their input: the ``metascore_long.csv`` the ingestion
program wrote, else the file or folder of ``input.path`` (one path, or one per phase)
read as ``input.format`` says. Scores that name no phase are the development phase; the
competition's column sortings and titles of a pulled folder's ``codabench.json`` join the
table's findings. It also returns the summary of what was read that the outputs publish.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from .columns import read_directions, read_titles
from .formats import read_score_table, resolve_inside
from .score_table import ScoreTable, concat_scores
from .table import with_phase

if TYPE_CHECKING:
    from ..config import Config

__all__ = ["LONG_NAME", "load_scores"]

#: Canonical long table written by the ingestion program and preferred by the scorer.
LONG_NAME = "metascore_long.csv"


def load_scores(config: Config, root: str | Path) -> tuple[ScoreTable, dict[str, Any]]:
    """Read the scores the configuration points at, under ``root``.

    ``root`` is a directory (``input.path`` is resolved inside it and may not leave it;
    a ``metascore_long.csv`` written by the ingestion program wins) or a single file.
    Returns the score table and a summary of what was read (relative paths only, so
    outputs do not depend on where the run happened).
    """
    root = Path(root)
    fmt = config.input.format
    if root.is_file():
        table = _phased(read_score_table(root, fmt), config)
        return table, _source(table, root.name)
    if not root.is_dir():
        raise InputError(f"{root}: no such file or directory.")
    if (root / LONG_NAME).is_file():
        table = _with_directions(read_score_table(root / LONG_NAME, "long"), root)
        return table, _source(table, LONG_NAME)
    spec = config.input.path
    if isinstance(spec, str):
        target = resolve_inside(root, spec)
        table = _with_directions(_phased(read_score_table(target, fmt, root=root), config), root, target)
        return table, _source(table, spec)
    table = concat_scores([read_score_table(resolve_inside(root, rel), fmt, phase=phase, root=root)
                           for phase, rel in spec.items()])
    table = _with_directions(table, root)
    return table, _source(table, dict(spec))


def _with_directions(table: ScoreTable, root: Path, tree: Path | None = None) -> ScoreTable:
    """Add the directions of ``<root>/codabench.json`` (a pulled folder) to the table's,
    and the columns' titles (shown by the report) of that file and of the one at the root
    of the scores folder ``tree``."""
    inner = read_titles(tree) if tree is not None and tree != root and tree.is_dir() else {}
    return dataclasses.replace(
        table, directions={**read_directions(root), **table.directions},
        titles={**inner, **read_titles(root)})


def _phased(table: ScoreTable, config: Config) -> ScoreTable:
    """Scores without any phase (a wide CSV, a CodaLab CSV) are the development phase."""
    frame = table.frame
    if not (len(frame) and (frame["phase"] == "").all()):
        return table
    dev = config.phases.development
    note = f"the scores name no phase; they are read as phase {dev!r} (phases.development)"
    return dataclasses.replace(
        table,
        frame=with_phase(frame, dev),
        failed=tuple((p or dev, *rest) for p, *rest in table.failed),
        unscored=tuple({**u, "phase": u["phase"] or dev} for u in table.unscored),
        flagged=tuple((p or dev, *rest) for p, *rest in table.flagged),
        notes=(*table.notes, note),
    )


def _source(table: ScoreTable, path: Any) -> dict[str, Any]:
    """What was read, as the outputs' input summary publishes it (``path`` as given)."""
    failed = [{"phase": p, "candidate": c, "task": t, "reason": r} for p, c, t, r in table.failed]
    out = {"path": path, "format": table.format, "failed": failed}
    if table.flagged:  # runs the mock runner marked (the site's export cannot)
        out["prediction_failed"] = [{"phase": p, "candidate": c, "task": t, "reason": r}
                                    for p, c, t, r in table.flagged]
    if table.titles:  # the competition's column titles, for the report's labels
        out["column_titles"] = dict(table.titles)
    return out
