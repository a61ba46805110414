"""The competition's docker image against what its programs need.

Codabench runs every program of a competition (submissions, ingestion and scoring programs,
the meta phase's) in one image: ``docker_image`` (v1 ``competition_docker_image``), and
without one ``codalab/codalab-legacy:py37`` (Codabench's ``competitions/models.py`` and
``unpackers/v2.py``).
:func:`image_problems` returns:

an error
    for a meta phase whose meta-scoring program runs with the image's ``python3``
    (``--meta-python image``, or an assembled program without its own Python) in an image
    whose Python is older than
    :data:`~metascore.bundle.platform.meta_program.META_PROGRAM_PYTHON` (py37: Python 3.7 and
    numpy 1.17; py39: Python 3.9): the vendored package cannot even be imported there. The
    fixes: the program's own Python (``--meta-python bundled``, the default of ``bundle
    zip``), which runs in any Linux x86_64 image with glibc >= 2.17 and leaves the image
    alone, or ``codalab/codalab-legacy:py312``, which changes every phase's image.
warnings
    one per program file (scoring, ingestion, solution) that the image's Python cannot
    compile, for the images whose Python is known (Python 2 code such as ``print "x"`` in
    Codabench's default py37, or syntax newer than the image's Python): every run fails; and
    one per module that a scoring or ingestion program, or a solution, imports and that the
    image does not carry (neither the standard library of its Python nor its packages), for
    the images whose content is known exactly
    (:data:`~metascore.bundle.platform.images.IMAGE_MODULES`: py312; the Anaconda images py37
    and py39 carry hundreds of packages and are not checked); also against py312 when the
    error above recommends it. An import inside ``try: ... except ImportError`` is optional
    and not counted; a module whose file or folder is anywhere in the bundle (a program's own
    module, the submission's ``model.py``) is local.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath

from .meta_config import MetaConfig
from ..schema.command_checks import program_files
from ..schema.competition import Competition, Task
from ..files import is_noise
from ..platform.images import carried_by, modules_of, python_of
from ..platform.meta_program import (META_PROGRAM_PYTHON, in_runtime, meta_python_in, meta_python_of,
                                     needs_meta_program)
from ..worker.pyenv import interpreter_for, package_for

__all__ = ["RECOMMENDED_IMAGE", "image_problems", "meta_tasks", "meta_python_for",
           "meta_image_note", "meta_python_sentence", "local_run_note", "LOCAL_RUN_NEEDS_ENV"]

#: The image whose own Python runs the meta-scoring program (Python >= 3.10, recent numpy),
#: for ``--meta-python image``.
RECOMMENDED_IMAGE = "codalab/codalab-legacy:py312"
# standard-library modules that Python 3.12 no longer has, and that 3.13 dropped (still in 3.12)
_REMOVED_IN_312 = frozenset({"asynchat", "asyncore", "distutils", "imp", "smtpd"})
_REMOVED_IN_313 = frozenset({
    "aifc", "audioop", "cgi", "cgitb", "chunk", "crypt", "imghdr", "lib2to3", "mailcap", "msilib",
    "nis", "nntplib", "ossaudiodev", "pipes", "sndhdr", "spwd", "sunau", "telnetlib", "uu", "xdrlib",
})
_OPTIONAL = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def image_problems(comp: Competition, metas: Sequence[MetaConfig], *,
                   meta_python: str | None = None) -> tuple[list[str], list[str]]:
    """``(errors, warnings)`` of ``comp``'s image against its meta phase and its programs.

    ``meta_python``: how a placeholder ``meta_scoring_program/`` will be filled (default:
    ``$METASCORE_META_PYTHON``, else ``bundled``); an assembled program says it itself.
    """
    key = "docker_image" if comp.version == 2 else "competition_docker_image"
    image = comp.docker_image
    shown = image if comp.image_given else f"{image} (Codabench's default: competition.yaml sets no {key})"
    errors: list[str] = []
    version = python_of(image)
    meta_phases = [m.phase.name for m in metas
                   if _runs_metascore(comp, m.task) and meta_python_for(comp, m.task, meta_python) == "image"]
    target = image
    if meta_phases and version is not None and version < META_PROGRAM_PYTHON:
        need = ".".join(map(str, META_PROGRAM_PYTHON))
        errors.append(
            f"competition.yaml: {key}: {shown} runs Python {'.'.join(map(str, version))}, but meta "
            f"phase {', '.join(map(repr, meta_phases))} runs metascore's meta-scoring program with "
            f"the image's python3, and it needs Python >= {need} and a recent numpy (>= 1.23): it "
            "would fail there. Let the program carry its own Python (`metascore bundle zip` without "
            f"--meta-python image), or set {key}: {RECOMMENDED_IMAGE} (the image is "
            "competition-wide: every phase's programs would run in it).")
        target = RECOMMENDED_IMAGE
    sources = list(_program_sources(comp, {id(m.task) for m in metas}))
    syntax = _syntax_warnings(sources, key, shown, version)
    modules = modules_of(target)
    if modules is None:
        return errors, syntax
    carried = modules | _stdlib(python_of(target) or (sys.version_info.major, sys.version_info.minor))
    local = _local_modules(comp.root)
    needed: dict[str, list[str]] = {}
    for rel, source in sources:
        for module in sorted(_imports(source) - carried - local):
            needed.setdefault(module, []).append(rel)
    why = "" if target == image else f" (the image meta phase {', '.join(map(repr, meta_phases))} needs)"
    warnings = [
        f"competition.yaml: {key}: {', '.join(files[:3])}{' and more' if len(files) > 3 else ''} "
        f"import(s) {module!r}, which {target}{why} does not carry: the program fails there with "
        f"ModuleNotFoundError. Use an image that has it (e.g. one built FROM {target} with "
        f"`pip install {package_for(module)}`) and set {key} to it."
        for module, files in sorted(needed.items())
    ]
    return errors, syntax + warnings


def _syntax_warnings(sources: list[tuple[str, str]], key: str, shown: str,
                     version: tuple[int, int] | None) -> list[str]:
    """One warning per program file that the image's Python cannot even compile (Python 2
    code, such as ``print "x"``, in a Python 3 image): every run of it would fail there."""
    if version is None or version[0] != 3:
        return []
    python = ".".join(map(str, version))
    warnings = []
    for rel, source in sources:
        try:
            ast.parse(source, feature_version=min(max(version, (3, 7)), sys.version_info[:2]))
        except SyntaxError as exc:
            why = (exc.msg or "invalid syntax").rstrip(".")
            old = ", Python 2 code" if "Missing parentheses" in why else ""
            warnings.append(
                f"competition.yaml: {key}: {rel}, line {exc.lineno}, is not Python {python} "
                f"({why}{old}), the Python of {shown}: every run of it fails there with "
                f"SyntaxError. Port it to Python 3, or set {key} to an image whose Python runs it.")
        except ValueError:  # a NUL byte: not a source file at all
            continue
    return warnings


#: How the note of :func:`local_run_note` starts (add-meta then puts `bundle env` first).
LOCAL_RUN_NEEDS_ENV = "a local `metascore bundle run` needs `metascore bundle env` first"


def local_run_note(comp: Competition, metas: Sequence[MetaConfig]) -> str | None:
    """The modules the programs import that the image carries and this machine's Python
    lacks, when no environment of the image is built: the local backend runs the programs
    with this Python, so a `bundle run` would fail every run on them (None: nothing lacks).
    The image's modules are those it is known to carry (:func:`carried_by`: py37 and py39
    too, whose full content is not listed)."""
    image = comp.docker_image
    modules = carried_by(image)
    if modules is None or interpreter_for(image):
        return None
    wanted: set[str] = set()
    for _, source in _program_sources(comp, {id(m.task) for m in metas}):
        wanted |= _imports(source)
    lacking = {m for m in wanted & modules if importlib.util.find_spec(m) is None}
    missing = sorted(lacking - _local_modules(comp.root)) if lacking else []
    if not missing:
        return None
    return (f"{LOCAL_RUN_NEEDS_ENV}: its local backend runs the programs with this machine's "
            f"Python ({sys.executable}), which lacks {', '.join(missing)}, which {image} carries; "
            "`metascore bundle env BUNDLE` builds the image's packages once (minutes; `bundle run "
            "--setup` does it too), and every later run uses them.")


def meta_tasks(comp: Competition, metas: Sequence[MetaConfig]) -> list[Task]:
    """The meta tasks (each once) whose scoring program is metascore's meta-scoring program."""
    found: dict[int, Task] = {}
    for m in metas:
        if _runs_metascore(comp, m.task):
            found.setdefault(id(m.task), m.task)
    return list(found.values())


def meta_python_for(comp: Competition, task: Task, default: str | None = None) -> str:
    """How ``task``'s meta-scoring program runs: ``"bundled"`` or ``"image"``, as its
    assembled metadata says, or, for the placeholder, as ``bundle zip`` will fill it:
    ``default`` (else ``$METASCORE_META_PYTHON``, else auto) for ``comp``'s image
    (:func:`~metascore.bundle.platform.meta_program.meta_python_in`)."""
    path = comp.path(task.scoring_program)
    if path is not None and path.exists() and not needs_meta_program(path):
        found = meta_python_of(path)
        if found is not None:
            return found
    return meta_python_in(comp.docker_image, default)


def meta_image_note(comp: Competition, tasks: Sequence[Task], meta_python: str | None = None) -> str:
    """What is known, without running anything, about the meta-scoring program of ``tasks``
    in ``comp``'s image (``bundle check`` without ``--probe``)."""
    ways = {meta_python_for(comp, t, meta_python) for t in tasks}
    return meta_python_sentence(comp.docker_image, "image" if ways == {"image"} else "bundled")


def meta_python_sentence(image: str, way: str) -> str:
    """The one sentence ``bundle check`` and ``bundle add-meta`` say about the Python the
    meta-scoring program runs with in ``image``: the image's ``python3`` (``way`` ``image``)
    or its own (``bundled``), and what is known of it there."""
    probe = "`metascore bundle check --probe` or `bundle run --backend docker` try it in a container"
    if way == "image":
        if meta_python_in(image, "auto") == "image":
            version = ".".join(map(str, python_of(image) or ()))
            return (f"the meta-scoring program runs with the image's python3: {image} has Python "
                    f"{version} with numpy, scipy, pandas and pyyaml (--meta-python bundled ships "
                    "its own Python instead).")
        return (f"the meta-scoring program runs with the image's python3 (--meta-python image), "
                f"which needs Python >= 3.10 with numpy, scipy, pandas and pyyaml in {image}; {probe}.")
    known = python_of(image) is not None  # codalab-legacy py37, py39, py312: Debian, x86_64
    return ("the meta-scoring program carries its own Python (`bundle zip` puts it in): it runs in "
            "any Linux x86_64 image with glibc >= 2.17, "
            + (f"which {image} is (a Debian-based x86_64 image, glibc >= 2.28)." if known else
               f"and {image} is not an image metascore knows; {probe}."))


def _runs_metascore(comp: Competition, task: Task) -> bool:
    """Whether ``task``'s scoring program is metascore's meta-scoring program."""
    path = comp.path(task.scoring_program)
    if path is None:
        return False
    if needs_meta_program(path):
        return True
    if not path.exists() or (path.is_file() and not zipfile.is_zipfile(path)):
        return False
    files = program_files(path)
    if "metascore/__init__.py" in files:
        return True
    return "score.py" in files and "metascore" in _read(path, "score.py")


def _stdlib(version: tuple[int, int]) -> frozenset[str]:
    """The standard library's top-level modules of Python ``version`` (3.10 and later; this
    Python's list, adjusted for the modules 3.12 and 3.13 removed)."""
    names = set(sys.stdlib_module_names) | _REMOVED_IN_313 | {"tomllib"}
    if version >= (3, 12):
        names -= _REMOVED_IN_312
    if version >= (3, 13):
        names -= _REMOVED_IN_313
    return frozenset(names)


def _program_sources(comp: Competition, skip_tasks: set[int]) -> Iterator[tuple[str, str]]:
    """``(bundle-relative name, source)`` of each Python file of the scoring and ingestion
    programs (meta tasks left out) and of the solutions, each file once."""
    refs = []
    for task in comp.tasks.values():
        if id(task) not in skip_tasks:
            refs += [task.scoring_program, task.ingestion_program]
    refs += [s.path for s in comp.solutions]
    seen = set()
    for ref in refs:
        path = comp.path(ref)
        if path is None or not path.exists() or path in seen or needs_meta_program(path):
            continue
        seen.add(path)
        if path.is_file() and not zipfile.is_zipfile(path):
            continue
        name = ref.rstrip("/")
        for rel in program_files(path):
            if rel.endswith(".py"):
                yield f"{name}/{rel}", _read(path, rel)


def _read(program: Path, rel: str) -> str:
    if program.is_dir():
        return (program / rel).read_text(encoding="utf-8", errors="replace")
    with zipfile.ZipFile(program) as zf:
        return zf.read(rel).decode("utf-8", "replace")


def _imports(source: str) -> set[str]:
    """The top-level modules ``source`` imports (absolute imports, not inside a ``try``
    that catches ImportError); an unparsable file imports nothing."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    optional = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_catches_import_error(h) for h in node.handlers):
            optional.update(id(sub) for stmt in node.body for sub in ast.walk(stmt))
    names = set()
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(k is None or (isinstance(k, ast.Name) and k.id in _OPTIONAL) for k in kinds)


def _local_modules(root: Path) -> frozenset[str]:
    """Every module name a file or folder of the bundle provides (zips included), but those
    of a meta-scoring program's own Python (``runtime/``: its numpy is not the image's)."""
    names: set[str] = set()
    for path in _tree(root):
        if is_noise(path.name) or in_runtime(path.relative_to(root).parts):
            continue
        if path.is_dir():
            names.add(path.name)
        elif path.suffix in (".py", ".so", ".pyc"):
            names.add(path.name.split(".")[0])
        elif path.suffix == ".zip" and zipfile.is_zipfile(path):
            names |= _zip_modules(path)
    return frozenset(names)


def _zip_modules(path: Path) -> set[str]:
    """The module names the members of the zip ``path`` provide; none from a zip that
    cannot be read (a name that is not UTF-8, a damaged zip: its job says why)."""
    names: set[str] = set()
    try:
        with zipfile.ZipFile(path) as zf:
            members = zf.namelist()
    except (OSError, ValueError, zipfile.BadZipFile):
        return names
    for member in members:
        parts = PurePosixPath(member).parts
        if in_runtime(parts):
            continue
        names.update(parts[:-1])
        if parts and parts[-1].endswith((".py", ".so", ".pyc")):
            names.add(parts[-1].split(".")[0])
    return names


def _tree(root: Path) -> Iterator[Path]:
    """Every path under ``root``, through links to folders too (add-meta checks a view of
    the bundle made of links to its entries), each real folder once."""
    seen: set[str] = set()
    for folder, dirs, files in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        here = Path(folder)
        yield from (here / name for name in sorted(dirs) + sorted(files))
