"""The meta-scoring program's own Python ("the runtime"): cached on this machine, shipped in
bundles, so the meta phase runs in whatever image the competition already has.

Codabench runs every phase in the competition's one ``docker_image`` (Codabench's default
``codalab/codalab-legacy:py37`` has Python 3.7 and numpy 1.17; some images have no Python),
while the meta-scoring program needs Python >= 3.10 and recent numpy, scipy, pandas and
pyyaml. So the program carries its own: a relocatable CPython with those packages, built for
glibc 2.17 (:mod:`metascore.bundle.meta.runtime_build`), in ``runtime/`` next to ``score.py``.
The worker extracts program zips with Python's ``zipfile``, which keeps no permission bits,
so nothing shipped is executable: the command (:func:`bundled_command`) runs the interpreter
through the image's dynamic loader, ``/lib64/ld-linux-x86-64.so.2``, the fixed path of the
x86_64 ABI, present in every glibc image, which maps files without needing their x bit.

Two ways to run the meta-scoring program (``--meta-python``, or ``$METASCORE_META_PYTHON``;
default ``auto``: ``image`` where the competition's image is known to carry what the program
needs, ``codalab/codalab-legacy:py312``, else ``bundled``; a local run, which does not use the
image, runs it with this machine's Python and never needs the runtime):

``bundled``
    its own Python, as above: any Linux x86_64 image with glibc >= 2.17 (with or without a
    Python); the bundle grows by about 73 MB; the same interpreter and packages in every image.
``image``
    the image's ``python3``, with the ``metascore`` package vendored: the image needs Python
    >= 3.10 with numpy, scipy, pandas and pyyaml (``codalab/codalab-legacy:py312`` has them).

The cache: ``$METASCORE_RUNTIME_CACHE``, else ``<metascore cache>/runtime``, holds one folder
per recipe (``<key>/``: the tree ``runtime/``, ``runtime.zip`` with the same files ready to
go into a program zip, ``runtime.json``), and ``downloads/`` (the source tarballs and the
compiler, kept for rebuilds). ``metascore bundle runtime build|list|remove`` manage it; a
bundle command that needs the runtime builds it once (a few minutes, then reused).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ...errors import ConfigError, MetascoreError
from . import runtime_build as recipe
from ..worker.pyenv import cache_root, modules_of, python_of

__all__ = [
    "META_PYTHONS", "PROGRAM_MODULES", "LOADER", "RUNTIME_DIR", "Runtime", "default_meta_python",
    "meta_python_in", "check_meta_python",
    "runtime_cache", "recipe_key", "bundled_command", "image_command", "find_runtime",
    "ensure_runtime", "require_runtime", "list_runtimes", "remove_runtimes", "in_runtime",
]

#: The values of ``--meta-python``.
META_PYTHONS = ("auto", "bundled", "image")
#: The modules the meta-scoring program needs beyond the standard library.
PROGRAM_MODULES = frozenset({"numpy", "scipy", "pandas", "yaml"})
#: The dynamic loader of x86_64 glibc systems (the ABI fixes its path).
LOADER = "/lib64/ld-linux-x86-64.so.2"
#: The runtime's folder inside the meta-scoring program.
RUNTIME_DIR = PurePosixPath(recipe.MOUNT).name
_COMPLETE = ".complete"
_MANIFEST = "runtime.json"
_ZIP = "runtime.zip"

_Log = Callable[[str], None]


def in_runtime(parts: tuple[str, ...]) -> bool:
    """Whether a path (its parts) lies in a meta-scoring program's own Python
    (``runtime/bin``, ``runtime/lib``, ``runtime/pycache``): files no check needs to read."""
    return any(a == RUNTIME_DIR and b in ("bin", "lib", "pycache") for a, b in zip(parts, parts[1:]))


def default_meta_python() -> str:
    """``$METASCORE_META_PYTHON`` when set (checked), else ``"auto"``."""
    return check_meta_python(os.environ.get("METASCORE_META_PYTHON") or "auto")


def meta_python_in(image: str | None, value: str | None = None) -> str:
    """``"bundled"`` or ``"image"``: ``value`` (default :func:`default_meta_python`), with
    ``auto`` decided by ``image``: ``image`` when it is known to carry Python >= 3.10 and the
    program's modules (:data:`~metascore.bundle.worker.pyenv.IMAGE_MODULES`), else ``bundled``."""
    value = default_meta_python() if value is None else check_meta_python(value)
    if value != "auto":
        return value
    python, modules = python_of(image), modules_of(image)
    runs = python is not None and python >= (3, 10) and modules is not None and PROGRAM_MODULES <= modules
    return "image" if runs else "bundled"


def check_meta_python(value: str) -> str:
    """``value`` if it is one of :data:`META_PYTHONS`; else a ConfigError."""
    if value not in META_PYTHONS:
        raise ConfigError(f"--meta-python {value!r}: use one of {', '.join(META_PYTHONS)} "
                          "(METASCORE_META_PYTHON takes the same values).")
    return value


def runtime_cache() -> Path:
    """``$METASCORE_RUNTIME_CACHE``, else ``runtime/`` in metascore's cache."""
    given = os.environ.get("METASCORE_RUNTIME_CACHE")
    return Path(given) if given else cache_root() / "runtime"


def recipe_key() -> str:
    """The name of the current recipe's build: a hash of :func:`runtime_build.recipe_text`."""
    return hashlib.sha256(recipe.recipe_text().encode()).hexdigest()[:16]


def bundled_command() -> str:
    """The meta-scoring program's command with its own Python: the image's loader runs the
    interpreter (no x bit needed); ``-I`` keeps the image's ``PYTHONPATH`` and site packages
    out, ``-B`` writes no bytecode, ``-u`` keeps the log live (``-I`` ignores the worker's
    ``PYTHONUNBUFFERED``), ``pycache_prefix`` finds the modules the build compiled."""
    return (f"{LOADER} {recipe.MOUNT}/bin/python{recipe.PYTHON_VERSION} -I -B -u "
            f"-X pycache_prefix={recipe.PYCACHE} /app/program/score.py /app/input /app/output")


def image_command() -> str:
    """The meta-scoring program's command with the image's ``python3``."""
    return "python3 /app/program/score.py /app/input /app/output"


@dataclass(frozen=True)
class Runtime:
    """One build in the cache."""

    key: str
    folder: Path
    manifest: dict

    @property
    def tree(self) -> Path:
        """The runtime's files (``bin/``, ``lib/``): what goes into ``runtime/``."""
        return self.folder / RUNTIME_DIR

    @property
    def zip(self) -> Path:
        """The same files under ``runtime/``, compressed once (copied into program zips)."""
        return self.folder / _ZIP

    @property
    def current(self) -> bool:
        return self.key == recipe_key()

    def summary(self) -> str:
        m = self.manifest
        return (f"{self.key}{'' if self.current else ' (outdated)'}: Python {m.get('python')}, "
                f"{', '.join(m.get('packages', []))}; glibc >= {m.get('glibc')}; "
                f"{_mb(m.get('tree_bytes', 0))} MB unpacked, {_mb(m.get('zip_bytes', 0))} MB zipped; "
                f"built {m.get('built', '?')} in {m.get('build_seconds', '?')} s ({self.folder})")


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f}"


def _load(folder: Path) -> Runtime | None:
    if not (folder / _COMPLETE).is_file():
        return None
    try:
        manifest = json.loads((folder / _MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return Runtime(folder.name, folder, manifest)


def find_runtime() -> Runtime | None:
    """The current recipe's build, if it is in the cache (complete)."""
    return _load(runtime_cache() / recipe_key())


@contextmanager
def _locked() -> Iterator[None]:
    """One build or removal at a time (other processes wait)."""
    import fcntl  # POSIX only, as the build

    root = runtime_cache()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def ensure_runtime(log: _Log = lambda _: None, *, rebuild: bool = False) -> Runtime:
    """The current recipe's build, built first if it is not in the cache (or ``rebuild``)."""
    found = None if rebuild else find_runtime()
    if found is not None:
        return found
    recipe.check_host()
    with _locked():
        found = None if rebuild else find_runtime()  # built by another process meanwhile
        if found is not None:
            return found
        root, key = runtime_cache(), recipe_key()
        folder = root / key
        if folder.exists():
            shutil.rmtree(folder)
        log(f"[*] building the meta-scoring program's Python into {folder}, once per machine: about "
            "4 CPU-minutes, measured 11 to 15 minutes on two busy cores; a bundle zip that carries it "
            "weighs about 73 MB more (e.g. 0.6 -> 74 MB; --meta-python image leaves it out)")
        with tempfile.TemporaryDirectory(prefix=f"build-{key}-", dir=root) as work:
            staging = Path(work) / "result"
            staging.mkdir()
            facts = recipe.build_runtime(staging / RUNTIME_DIR, Path(work), root / "downloads", log)
            zip_bytes = _zip_tree(staging / RUNTIME_DIR, staging / _ZIP)
            manifest = {
                "key": key, "python": recipe.PYTHON_VERSION,
                "packages": [w for w, _ in recipe.WHEELS], "glibc": facts["glibc"],
                "build_seconds": facts["build_seconds"], "tree_bytes": _size(staging / RUNTIME_DIR),
                "zip_bytes": zip_bytes, "built": dt.datetime.now().isoformat(timespec="seconds"),
                "command": bundled_command(),
            }
            (staging / _MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
            (staging / _COMPLETE).write_text(key + "\n", encoding="utf-8")
            os.replace(staging, folder)
    built = find_runtime()
    assert built is not None
    log(f"[*] built {built.summary()}")
    return built


def _zip_tree(tree: Path, dest: Path) -> int:
    """Zip ``tree`` under ``runtime/`` (sorted members); return the zip's size in bytes."""
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(tree.rglob("*")):
            if path.is_file():
                zf.write(path, f"{RUNTIME_DIR}/{path.relative_to(tree).as_posix()}")
    return dest.stat().st_size


def _size(tree: Path) -> int:
    return sum(p.stat().st_size for p in tree.rglob("*") if p.is_file())


def list_runtimes() -> list[Runtime]:
    """Every complete build in the cache, the current recipe's first."""
    root = runtime_cache()
    found = [r for r in (_load(p) for p in sorted(root.iterdir()) if p.is_dir()) if r] if root.is_dir() else []
    return sorted(found, key=lambda r: not r.current)


def remove_runtimes(*, everything: bool = False) -> list[str]:
    """Remove the outdated builds and half-finished ones (``everything``: also the current
    build and the downloads); return what was removed."""
    root = runtime_cache()
    if not root.is_dir():
        return []
    removed = []
    with _locked():
        for path in sorted(root.iterdir()):
            keep = path.name == ".lock" or (not everything and path.name in (recipe_key(), "downloads"))
            if not keep:
                shutil.rmtree(path) if path.is_dir() else path.unlink()
                removed.append(str(path))
    if everything:
        shutil.rmtree(root, ignore_errors=True)
    return removed


def require_runtime(log: _Log) -> Runtime:
    """:func:`ensure_runtime`, its failure said with the way out."""
    try:
        return ensure_runtime(log)
    except MetascoreError as exc:
        raise MetascoreError(f"{exc} The meta-scoring program's own Python could not be built; "
                             "retry, or pass --meta-python image (then the competition's image "
                             "must have Python >= 3.10 with numpy, scipy, pandas and pyyaml).") from None
