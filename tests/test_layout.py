"""The layout of the package: what the sources say and where their names live (issue 27)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "metascore"

#: Modules whose docstrings still cite a section of a specification or a research file that
#: are not in the repository (issue 27 moves them to the fact itself, or to docs/, later).
CITING_OUTSIDE_FILES = {
    "render/writers.py", "leaderboard/model.py", "methods/classical.py", "registry.py",
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


#: Modules over :data:`MAX_LINES` lines that issue 27 splits later (by its other parts).
LONG_MODULES = {"render/report.py"}
MAX_LINES = 600


def test_no_module_is_longer_than_600_lines():
    """A module that grows past 600 lines is split by concern."""
    long = {_name(p) for p in _modules()
            if len(p.read_text(encoding="utf-8").splitlines()) > MAX_LINES}
    assert long - LONG_MODULES == set(), f"over {MAX_LINES} lines: split by concern"
    assert LONG_MODULES - long == set(), "split: remove it from LONG_MODULES"


def _top_level_definitions(path: Path) -> tuple[set[str], list[str]]:
    """The public names ``path`` defines at its top level (def, class, assignment), and its
    ``__all__``."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    defined: set[str] = set()
    exported: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            if "__all__" in names:
                exported = list(ast.literal_eval(node.value))
            defined |= names
    return {n for n in defined if not n.startswith("_")}, exported


def test_bundle_modules_define_each_public_name_once():
    """Two modules of the bundle package never define the same public name (two
    ``check_bundle`` for two different checks); a module's ``__all__`` lists what it
    defines, not what it imports from another module (one place to look a name up)."""
    homes: dict[str, list[str]] = {}
    for path in sorted((SRC / "bundle").glob("*.py")):
        defined, exported = _top_level_definitions(path)
        for name in defined:
            homes.setdefault(name, []).append(path.name)
        if path.name != "__init__.py":  # the package's public API gathers names
            assert set(exported) <= defined, (
                f"bundle/{path.name} exports names it imports: {sorted(set(exported) - defined)}")
    twice = {name: modules for name, modules in homes.items() if len(modules) > 1}
    assert twice == {}, "defined in two bundle modules"


def test_readme_layout_names_every_bundle_module():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text[text.index("## Layout"):].split("```")[1]
    missing = [p.name for p in sorted((SRC / "bundle").glob("*.py"))
               if p.name != "__init__.py" and not re.search(rf"(?<![\w/]){re.escape(p.name)}", block)]
    assert missing == [], "README.md, Layout: name these bundle modules"
