"""The layout of the package: what the sources say and where their names live (issue 27)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "metascore"

#: Modules whose docstrings still cite a section of a specification or a research file that
#: are not in the repository (issue 27 moves them to the fact itself, or to docs/, later).
CITING_OUTSIDE_FILES = {
    "io/writers.py", "leaderboard/model.py", "methods/classical.py", "registry.py",
}


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(SRC).as_posix()


def test_sources_cite_no_file_outside_the_repository():
    """"SPEC 5" or "research/codabench.md 1.1" point nowhere for a reader of the repository:
    a docstring says the fact, or links what is in it (docs/...)."""
    outside = re.compile(r"\bSPEC \d|research/|codabench\.md")
    citing = {_name(p) for p in _modules() if outside.search(p.read_text(encoding="utf-8"))}
    assert citing - CITING_OUTSIDE_FILES == set(), "cites files the repository does not hold"
    assert CITING_OUTSIDE_FILES - citing == set(), "fixed: remove it from CITING_OUTSIDE_FILES"
