"""bundle/ in layers (issue 44): its parts import one way, in the order docs/packages.md draws.

A part is a sub-package (``schema/``, ``worker/``...) or a top module (``archive.py``...) of
``src/metascore/bundle``. Every import counts, wherever it stands: at the top of a module,
inside a function, or under ``if TYPE_CHECKING:`` (a type-only import ties two parts as much
as any other). The package's ``__init__.py`` (its public API, gathering names from every
part) stands above them all and is left out.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

from repo_paths import ROOT

SRC = ROOT / "src" / "metascore"
BUNDLE = SRC / "bundle"
#: The heading of docs/packages.md above the drawing of the layers.
LAYERS_HEADING = "### bundle/ in layers"


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _part(path: Path) -> str:
    """``schema/`` for bundle/schema/load.py, ``archive.py`` for bundle/archive.py."""
    rel = path.relative_to(BUNDLE).parts
    return f"{rel[0]}/" if len(rel) > 1 else rel[0]


def _parts() -> list[str]:
    return sorted({_part(p) for p in BUNDLE.rglob("*.py") if p != BUNDLE / "__init__.py"})


def _imported(source: str, name: str, is_package: bool, modules: dict[str, Path]) -> set[str]:
    """The modules of the package that the module ``name`` (its text ``source``) imports,
    anywhere in it (``import x``, ``from .x import y``, ``from . import x``; ``y`` counts as
    a module when it is one)."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            target = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            found |= {f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target for a in node.names}
    return found & modules.keys()


def _arrows() -> dict[tuple[str, str], list[str]]:
    """``(part, part it imports)`` -> the imports that make the arrow (``file: module``)."""
    modules = {_module(p): p for p in SRC.rglob("*.py")}
    arrows: dict[tuple[str, str], list[str]] = {}
    for path in sorted(BUNDLE.rglob("*.py")):
        if path == BUNDLE / "__init__.py":
            continue
        source = path.read_text(encoding="utf-8")
        for target in sorted(_imported(source, _module(path), path.name == "__init__.py", modules)):
            target_path = modules[target]
            if not target_path.is_relative_to(BUNDLE) or target_path == BUNDLE / "__init__.py":
                continue
            if _part(target_path) != _part(path):
                arrows.setdefault((_part(path), _part(target_path)), []).append(
                    f"{path.relative_to(BUNDLE)}: {target}")
    return arrows


def _documented_layers() -> list[list[str]]:
    """The layers docs/packages.md draws, from the bottom up: each line of the block under
    :data:`LAYERS_HEADING` names the parts of one layer (top layer first), then says what
    they are after a dash."""
    text = (ROOT / "docs" / "packages.md").read_text(encoding="utf-8")
    assert LAYERS_HEADING in text, f"docs/packages.md has no {LAYERS_HEADING!r} section"
    block = text[text.index(LAYERS_HEADING):].split("```")[1]
    layers = []
    for line in block.strip("\n").splitlines():
        names = line.split(" - ")[0].split()
        assert names and all(re.fullmatch(r"\w+(/|\.py)", n) for n in names), line
        layers.append(names)
    return layers[::-1]


def _cycles(parts: list[str], arrows: dict[tuple[str, str], list[str]]) -> list[list[str]]:
    """The strongly connected components of more than one part (Tarjan)."""
    graph = {p: sorted(b for a, b in arrows if a == p) for p in parts}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(part: str) -> None:
        index[part] = low[part] = len(index)
        stack.append(part)
        for target in graph[part]:
            if target not in index:
                visit(target)
                low[part] = min(low[part], low[target])
            elif target in stack:
                low[part] = min(low[part], index[target])
        if low[part] == index[part]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == part:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for part in parts:
        if part not in index:
            visit(part)
    return found


def test_the_import_graph_is_read():
    """The graph the other tests judge is the real one: the runner imports the site, the
    worker and the schema; an import inside a function or under ``if TYPE_CHECKING:`` is
    read as any other."""
    arrows = _arrows()
    assert {("runner.py", "site/"), ("runner.py", "worker/"), ("site/", "worker/"),
            ("worker/", "schema/")} <= set(arrows)
    modules = {_module(p): p for p in SRC.rglob("*.py")}
    hidden = ("from typing import TYPE_CHECKING\n"
              "if TYPE_CHECKING:\n    from ..meta.program_folder import assemble_meta_program\n"
              "def run():\n    from ..check import full\n    from .. import archive\n")
    assert _imported(hidden, "metascore.bundle.site.server", False, modules) == {
        "metascore.bundle.meta.program_folder", "metascore.bundle.check.full", "metascore.bundle.archive"}


def test_bundle_parts_form_no_circle():
    """No two parts of bundle/ import each other, directly or through others."""
    arrows = _arrows()
    cycles = _cycles(_parts(), arrows)
    assert cycles == [], "parts of bundle/ that import each other in a circle: " + "; ".join(
        ", ".join(c) for c in cycles)


def test_bundle_layers_are_the_ones_the_docs_draw():
    """docs/packages.md draws every part of bundle/ once, on a layer, and every import
    points down: a part imports only parts of lower layers (none of its own layer)."""
    layers = _documented_layers()
    drawn = [name for layer in layers for name in layer]
    assert sorted(drawn) == _parts(), "docs/packages.md: draw each part of bundle/ once"
    floor = {name: i for i, layer in enumerate(layers) for name in layer}
    up = sorted(f"{a} -> {b} ({'; '.join(why)})" for (a, b), why in _arrows().items()
                if floor[b] >= floor[a])
    assert up == [], "imports that do not point down the layers docs/packages.md draws"


def test_the_bundle_package_docstring_lists_the_layers_in_order():
    """bundle/__init__.py says the same order as docs/packages.md: its list of the
    sub-packages names them from the top layer down."""
    layers = _documented_layers()
    doc = ast.get_docstring(ast.parse((BUNDLE / "__init__.py").read_text(encoding="utf-8"))) or ""
    named = re.findall(r"^- :mod:`~metascore\.bundle\.(\w+)`", doc, re.M)
    packages = [name.rstrip("/") for layer in layers[::-1] for name in layer if name.endswith("/")]
    assert named == packages, "bundle/__init__.py: list the sub-packages from the top layer down"


def test_no_private_constant_is_defined_twice_in_bundle():
    """A private constant (``_CHUNK``, ``_WATCH``) has one home in bundle/: two copies of a
    chunk size or a polling interval drift apart (issue 44)."""
    homes: dict[str, list[str]] = {}
    for path in BUNDLE.rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, ast.AnnAssign) else [])
            for target in targets:
                if isinstance(target, ast.Name) and re.fullmatch(r"_[A-Z][A-Z0-9_]*", target.id):
                    homes.setdefault(target.id, []).append(path.relative_to(BUNDLE).as_posix())
    assert {k: sorted(v) for k, v in homes.items() if len(v) > 1} == {}


def test_importing_a_lower_part_does_not_load_the_top_layer():
    """Issue 52 item 3: ``bundle/__init__`` resolves its public names when asked, so the
    client side (``codabench pull`` needs ``bundle.files``) loads only what it uses (it
    loaded 57 bundle modules before)."""
    import subprocess
    import sys

    code = ("import sys, metascore.codabench.pull; "
            "print(sorted(m for m in sys.modules if m.startswith('metascore.bundle')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    loaded = eval(proc.stdout)  # a list of module names
    assert not [m for m in loaded if m.split(".")[2:3] in (["runner"], ["bundle_zip"], ["meta"], ["check"], ["site"],
                                                            ["worker"])], loaded
    assert len(loaded) <= 5, loaded
