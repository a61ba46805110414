"""The layout of the package: what the sources say and where their names live (issue 27)."""

from __future__ import annotations

import re
from pathlib import Path
from repo_paths import ROOT

SRC = ROOT / "src" / "metascore"

#: Modules whose docstrings still cite a section of a specification or a research file that
#: are not in the repository (none left: each says the fact, or links docs/).
CITING_OUTSIDE_FILES: set[str] = set()


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(SRC).as_posix()


def test_sources_cite_no_file_outside_the_repository():
    """"SPEC 5" or "research/codabench.md 1.1" point nowhere for a reader of the repository:
    a docstring says the fact, or links what is in it (docs/...)."""
    outside = re.compile(r"\bSPEC (section )?\d|research/|codabench\.md")
    citing = {_name(p) for p in _modules() if outside.search(p.read_text(encoding="utf-8"))}
    assert citing - CITING_OUTSIDE_FILES == set(), "cites files the repository does not hold"
    assert CITING_OUTSIDE_FILES - citing == set(), "fixed: remove it from CITING_OUTSIDE_FILES"


#: Modules allowed over :data:`MAX_LINES` lines (none).
LONG_MODULES: set[str] = set()
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
    for path in sorted((SRC / "bundle").rglob("*.py")):
        defined, exported = _top_level_definitions(path)
        for name in defined:
            homes.setdefault(name, []).append(_name(path))
        if path.name != "__init__.py":  # the package's public API gathers names
            assert set(exported) <= defined, (
                f"{_name(path)} exports names it imports: {sorted(set(exported) - defined)}")
    twice = {name: modules for name, modules in homes.items() if len(modules) > 1}
    assert twice == {}, "defined in two bundle modules"


def test_readme_layout_names_every_bundle_module():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text[text.index("## Layout"):].split("```")[1]
    missing = [p.name for p in sorted((SRC / "bundle").rglob("*.py"))
               if p.name != "__init__.py" and not re.search(rf"(?<![\w/]){re.escape(p.name)}", block)]
    assert missing == [], "README.md, Layout: name these bundle modules"


#: Public top-level functions and classes that two modules of ``src/metascore`` define on
#: purpose, with the reason; any other name is defined in one module only.
DEFINED_TWICE = {
    # bundle/worker/job_init.py is a script the local backend runs by path (bundle/worker/sandbox.py's
    # JOB_INIT, ``python -S -I job_init.py``), importing only the standard library; its
    # ``main`` is that program's entry point, as cli's ``main`` is metascore's.
    "main": {"bundle/worker/job_init.py", "cli/__init__.py"},
}


def test_each_public_function_or_class_is_defined_in_one_module():
    """One name, one thing: two ``register``, two ``check_bundle`` or two ``Leaderboard``
    in two modules make a reader (and an import) pick the wrong one."""
    import ast

    homes: dict[str, set[str]] = {}
    for path in _modules():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and not node.name.startswith("_"):
                homes.setdefault(node.name, set()).add(_name(path))
    twice = {name: modules for name, modules in homes.items() if len(modules) > 1}
    assert twice == DEFINED_TWICE, "defined in two modules: rename one, or list it with a reason"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_at_load(body: list) -> list:
    """The statements of ``body`` outside its functions: those that run when the module is
    imported, and those of its ``if TYPE_CHECKING:`` blocks (a type-only import is an arrow
    of the graph too: a circle through one is a circle a reader follows, and one
    ``from __future__`` change away from an import error)."""
    import ast

    out: list = []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        out.append(node)
        for field in ("body", "orelse", "finalbody"):
            out += _imported_at_load(getattr(node, field, None) or [])
        for handler in getattr(node, "handlers", None) or []:
            out += _imported_at_load(handler.body)
    return out


def _import_graph() -> dict[str, set[str]]:
    """Which modules of the package each module imports at its top level, type-only imports
    included (``import x``, ``from .x import y``, ``from . import x``; ``y`` counts as a
    module when it is one)."""
    import ast

    modules = {_module_name(p): p for p in _modules()}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in _imported_at_load(ast.parse(path.read_text(encoding="utf-8")).body):
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    if f"{target}.{alias.name}" in modules:
                        edges.add(f"{target}.{alias.name}")
                    elif target in modules:
                        edges.add(target)
        graph[name] = edges - {name}
    return graph


def test_no_import_cycle_among_the_modules():
    """Module-level imports form no circle, ``if TYPE_CHECKING:`` imports counted (issue
    44): a module importing a name back from one that imports it works only by the order
    things happen to load in, and a type named from a module that imports this one ties
    the two for every reader."""
    graph = _import_graph()
    assert graph["metascore.cli"] >= {"metascore.cli.rank", "metascore.errors"}  # the graph is read
    assert "metascore.codabench.client" in graph["metascore.cli.codabench"]  # type-only, read
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycles.append(path[path.index(target):] + [module, target])
            elif target not in state:
                visit(target, path + [module])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [])
    assert cycles == [], "import cycles"


def test_modules_are_imported_by_import_statements():
    """No module imports one of the package by a name in a string (``importlib``), so the
    import statements are the whole graph that the cycle test reads."""
    import ast

    loading = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and re.fullmatch(r"metascore(\.\w+)+", node.value) \
                    and "import_module" in path.read_text(encoding="utf-8"):
                loading.append(f"{_name(path)}: {node.value}")
    assert loading == [], "imports a module by its name in a string"


def test_command_modules_do_not_import_the_command_line_main():
    """The command line is one package, one module per command group; a group module never
    imports the package's ``main``/``build_parser`` back (``cli/__init__.py`` imports them)."""
    graph = _import_graph()
    groups = {m for m in graph if m.startswith("metascore.cli.") and m != "metascore.cli.__main__"}
    assert groups >= {"metascore.cli.rank", "metascore.cli.analyze", "metascore.cli.bundle",
                      "metascore.cli.codabench", "metascore.cli.common"}
    back = sorted(m for m in groups if "metascore.cli" in graph[m])
    assert back == [], "import the cli package back"
    outside = sorted(p.relative_to(SRC).as_posix() for p in _modules()
                     if p.name == "cli.py" or p.stem.endswith("_cli"))
    assert outside == [], "command-line modules outside cli/"


def test_no_constant_is_assigned_in_two_modules():
    """A constant has one home (issue 35): ``CONFIG_NAME`` in two modules, or two different
    ``SOLVERS`` a reader has to tell apart by the module, drift apart."""
    homes = _constant_homes(r"[A-Z][A-Z0-9_]*", _modules())
    assert {k: v for k, v in homes.items() if len(v) > 1} == {}, "assigned in two modules"


def _constant_homes(pattern: str, paths: list[Path]) -> dict[str, list[str]]:
    """``{name: [module, ...]}`` of the module-level assignments of names matching
    ``pattern`` in ``paths``."""
    import ast

    homes: dict[str, list[str]] = {}
    for path in paths:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, ast.AnnAssign) else [])
            for target in targets:
                if isinstance(target, ast.Name) and re.fullmatch(pattern, target.id):
                    homes.setdefault(target.id, []).append(_name(path))
    return homes


def test_no_private_constant_outside_the_bundle_is_assigned_in_two_modules():
    """A private constant has one home too (issue 44): the words a true/false cell may say
    (``_TRUE``) or the rows a vectorized pass handles at a time (``_CHUNK``) defined in two
    modules drift apart. (bundle/ is another branch's: issue 44 item 1.)"""
    homes = _constant_homes(r"_[A-Z][A-Z0-9_]*",
                            [p for p in _modules() if not _name(p).startswith("bundle/")])
    assert homes.get("_TRUE") == ["readers/rows.py"]  # the test reads private constants
    assert {k: v for k, v in homes.items() if len(v) > 1} == {}, "assigned in two modules"


def test_no_module_takes_the_version_from_the_package_init():
    """``from .. import __version__`` loads the package ``__init__`` and with it every method;
    the version lives in ``_version.py``."""
    pattern = re.compile(r"^\s*from \.+ import (.*\b)?__version__\b", re.M)
    assert [_name(p) for p in _modules() if pattern.search(p.read_text(encoding="utf-8"))] == []


def test_every_folder_of_the_sources_is_a_package():
    folders = [d for d in SRC.rglob("*") if d.is_dir() and not d.is_symlink()
               and d.name != "__pycache__" and "__pycache__" not in d.parts]
    assert [d.relative_to(SRC).as_posix() for d in folders if not (d / "__init__.py").is_file()] == []


def test_no_folder_of_the_sources_holds_more_than_20_modules():
    """A folder of more than 20 modules is told apart by file prefixes; it gets sub-packages
    by what they are (bundle/: schema, site, worker, check, meta)."""
    crowded = {}
    for folder in [SRC, *(d for d in SRC.rglob("*") if d.is_dir() and not d.is_symlink())]:
        modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        if len(modules) > 20:
            crowded[folder.relative_to(SRC).as_posix() or "."] = len(modules)
    assert crowded == {}


#: Modules whose ``.attrs`` are the Docker SDK's (a container's or an image's inspect
#: data), not a DataFrame's; by file name, wherever the bundle package puts them.
DOCKER_SDK_ATTRS = {"docker_backend.py", "image_probe.py"}


def test_no_module_carries_data_in_dataframe_attrs():
    """What a reader finds besides the scores (format, failures, directions...) travels in a
    typed :class:`~metascore.readers.score_table.ScoreTable`, not in ``DataFrame.attrs``:
    untyped keys, lost by many pandas operations (issue 35)."""
    import ast

    using = sorted(
        f"{_name(p)}:{node.lineno}" for p in _modules() if p.name not in DOCKER_SDK_ATTRS
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr == "attrs")
    assert using == [], "DataFrame.attrs: put it in the ScoreTable"
    sdk = [p for p in _modules() if p.name in DOCKER_SDK_ATTRS]
    assert len(sdk) == len(DOCKER_SDK_ATTRS), "a Docker SDK module was renamed: update DOCKER_SDK_ATTRS"


def _defined_names(path: Path) -> set[str]:
    """Every name ``path`` defines at its top level (also under ``if``/``try``)."""
    import ast

    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        for sub in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(sub.name)
            elif isinstance(sub, (ast.Assign, ast.AnnAssign)):
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def test_names_are_imported_from_their_home_module():
    """A name is imported from the module that defines it, or from a package's
    ``__init__`` (the packages' public API); never through a module that imported it itself
    (``prepare`` through ``registry``, ``pair_blocks`` through two modules), and a module's
    ``__all__`` lists what it defines (issue 35)."""
    import ast

    files = {(".".join(p.relative_to(SRC.parent).with_suffix("").parts)).removesuffix(".__init__"): p
             for p in _modules() if "_programs" not in p.parts}
    defined = {name: _defined_names(path) for name, path in files.items()}
    through = []
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = package.split(".")[: len(package.split(".")) - max(node.level - 1, 0)] if node.level else []
            source = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module
            if source not in files or files[source].name == "__init__.py":
                continue
            through += [f"{name}: {alias.name} from {source}" for alias in node.names
                        if alias.name not in defined[source] and f"{source}.{alias.name}" not in files]
    assert through == [], "import these from the module that defines them"
    for name, path in files.items():
        if path.name != "__init__.py":
            _, exported = _top_level_definitions(path)
            assert set(exported) <= defined[name], f"{name}.__all__ lists names it imports"


def test_modules_are_not_imported_under_one_letter():
    """A module is named by its name where it is used (``run_trials``, ``bootstrap``), not
    by a one-letter alias such as the ``E``/``B`` the analyses used (issue 35)."""
    import ast

    short = [f"{_name(path)}: {alias.name} as {alias.asname}"
             for path in _modules()
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, (ast.Import, ast.ImportFrom))
             for alias in node.names if alias.asname is not None and len(alias.asname) == 1]
    assert short == []


def _modules_calling(attribute: str) -> set[str]:
    """The modules holding a call of ``attribute`` (``attribute(...)`` or ``x.attribute(...)``)."""
    import ast

    found = set()
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and attribute in (
                    getattr(node.func, "id", None), getattr(node.func, "attr", None)):
                found.add(_name(path))
    return found


def test_the_missing_data_policy_is_applied_in_at_most_two_modules():
    """One prepared input (issue 35): the registry applies the missing-data policy once and
    a :class:`~metascore.Ranking` keeps what it prepared (``Ranking.inputs``); the boards,
    the analyses and the resampling shortcuts read it instead of calling ``prepare``
    again."""
    calling = _modules_calling("prepare") - {"missing.py"}
    assert "registry.py" in calling  # the scan finds the registry's call
    assert len(calling) <= 2, f"prepare() called in {sorted(calling)}"


def test_only_the_registry_calls_a_method():
    """How a method is called (its extra inputs, orientation, label order) lives in one
    place, ``registry.compute``: the resampled rankings go through it too."""
    assert _modules_calling("call") == {"registry.py"}
