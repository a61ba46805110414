"""The meta-scoring program's own Python ("the runtime"): cached on this machine, shipped in
bundles, so the meta phase runs in whatever image the competition already has.

Codabench runs every phase in the competition's one ``docker_image`` (Codabench's default
``codalab/codalab-legacy:py37`` has Python 3.7 and numpy 1.17; some images have no Python),
while the meta-scoring program needs Python >= 3.10 and recent numpy, scipy, pandas and
pyyaml. So the program carries its own: a relocatable CPython with those packages, built for
glibc 2.17 (:mod:`metascore.bundle.runtime.build`), in ``runtime/`` next to ``score.py``.
The worker extracts program zips with Python's ``zipfile``, which keeps no permission bits,
so nothing shipped is executable: the command (:func:`bundled_command`) runs the interpreter
through the image's dynamic loader, ``/lib64/ld-linux-x86-64.so.2``, the fixed path of the
x86_64 ABI, present in every glibc image, which maps files without needing their x bit.

Two ways to run the meta-scoring program (``--meta-python``, or ``$METASCORE_META_PYTHON``;
default ``auto``: ``image`` where the competition's image is known to carry what the program
needs, ``codalab/codalab-legacy:py312``, else ``bundled``; a local run, which does not use the
image, runs it with this machine's Python and never needs the runtime;
:func:`~metascore.bundle.platform.meta_program.meta_python_in` decides):

``bundled``
    its own Python, as above: any Linux x86_64 image with glibc >= 2.17 (with or without a
    Python); the bundle grows by about 44 MB; the same interpreter and packages in every image.
``image``
    the image's ``python3``, with the ``metascore`` package vendored: the image needs Python
    >= 3.10 with numpy, scipy, pandas and pyyaml (``codalab/codalab-legacy:py312`` has them).

Where the runtime comes from, in this order (:func:`require_runtime`): the installed wheel
``metascore-runtime`` (``pip install 'metascore[runtime]'``; :mod:`~metascore.bundle.runtime.wheel`) when it is
the current recipe's; the cache; else it is built into the cache (a few minutes, once).
The cache: ``$METASCORE_RUNTIME_CACHE``, else ``<metascore cache>/runtime``, holds one folder
per recipe (``<key>/``: the tree ``runtime/``, ``runtime.zip`` with the same files ready to
go into a program zip, LZMA-compressed, ``runtime.json``), stage one's compiled CPython
(``cpython-<key>/``, reused while only the packages or what is left out change), and
``downloads/`` (the source tarballs and the compiler, kept for rebuilds). ``metascore bundle
runtime build|list|remove`` manage it; ``build --wheel DIR`` packs the build as the wheel.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ...atomic import replacing
from ...errors import MetascoreError
from ..files import new_folder
from . import build as recipe
from . import cpython as cpython_recipe
from .wheel import DISTRIBUTION, RUNTIME_MANIFEST, RUNTIME_ZIP, installed_wheel
from ..platform.meta_program import LOADER, RUNTIME_DIR
from ..worker.pyenv import cache_root

__all__ = [
    "Runtime", "runtime_cache", "recipe_key", "bundled_command", "image_command", "find_runtime",
    "installed_runtime", "cached_runtime", "ensure_runtime", "require_runtime", "list_runtimes",
    "remove_runtimes", "zip_runtime", "COMPRESSIONS", "runtime_zip", "first_build_notice",
]

#: How the runtime's members are compressed in a program zip (``bundle zip --compression``):
#: LZMA (the build's zip: a third smaller; Python's ``zipfile``, which Codabench's site and
#: worker extract with, reads it, Info-ZIP ``unzip`` 6.0 skips it) or deflate (any unzip).
COMPRESSIONS = ("lzma", "deflate")

_COMPLETE = ".complete"

_Log = Callable[[str], None]


def runtime_cache() -> Path:
    """``$METASCORE_RUNTIME_CACHE``, else ``runtime/`` in metascore's cache."""
    given = os.environ.get("METASCORE_RUNTIME_CACHE")
    return Path(given) if given else cache_root() / "runtime"


def recipe_key() -> str:
    """The name of the current recipe's build: a hash of :func:`~metascore.bundle.runtime.build.recipe_text`
    (the same on every Python that runs metascore, so a wheel built on one is found on all)."""
    return hashlib.sha256(recipe.recipe_text().encode()).hexdigest()[:16]


def bundled_command() -> str:
    """The meta-scoring program's command with its own Python: the image's loader runs the
    interpreter (no x bit needed); ``-I`` keeps the image's ``PYTHONPATH`` and site packages
    out, ``-B`` writes no bytecode, ``-u`` keeps the log live (``-I`` ignores the worker's
    ``PYTHONUNBUFFERED``), ``pycache_prefix`` finds the modules the build compiled."""
    return (f"{LOADER} {recipe.MOUNT}/bin/python{cpython_recipe.PYTHON_VERSION} -I -B -u "
            f"-X pycache_prefix={recipe.PYCACHE} /app/program/score.py /app/input /app/output")


def image_command() -> str:
    """The meta-scoring program's command with the image's ``python3``."""
    return "python3 /app/program/score.py /app/input /app/output"


@dataclass(frozen=True)
class Runtime:
    """One build: in the cache (``source`` ``"cache"``), or an installed wheel (``"wheel"``,
    ``version`` its version; its folder holds the ELF files and ``runtime.zip``)."""

    key: str
    folder: Path
    manifest: dict
    source: str = "cache"
    version: str = ""

    @property
    def tree(self) -> Path:
        """The runtime's files (``bin/``, ``lib/``), in the cache: what goes into
        ``runtime/`` (a wheel's are extracted there from its ``runtime.zip`` once)."""
        if self.source == "cache":
            return self.folder / RUNTIME_DIR
        tree = runtime_cache() / f"wheel-{self.key}" / RUNTIME_DIR
        if not (tree.parent / _COMPLETE).is_file():
            _extract(self.zip, tree.parent)
        return tree

    @property
    def zip(self) -> Path:
        """The same files under ``runtime/``, compressed once (copied into program zips)."""
        return self.folder / RUNTIME_ZIP

    @property
    def current(self) -> bool:
        return self.key == recipe_key()

    def origin(self) -> str:
        """Where it comes from, in words."""
        if self.source == "wheel":
            return f"installed wheel {DISTRIBUTION} {self.version} ({self.folder})"
        return f"cache ({self.folder})"

    def summary(self) -> str:
        m = self.manifest
        return (f"{self.key}{'' if self.current else ' (outdated)'}: Python {m.get('python')}, "
                f"{', '.join(m.get('packages', []))}; glibc >= {m.get('glibc')}; "
                f"{_mb(m.get('tree_bytes', 0))} MB unpacked"
                + (f" in {m['tree_files']:,} files, " if m.get("tree_files") else ", ") +
                f"{_mb(m.get('zip_bytes', 0))} MB zipped; built {m.get('built', '?')} in "
                f"{m.get('build_seconds', '?')} s; from the {self.origin()}")


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f}"


def _load(folder: Path) -> Runtime | None:
    if not (folder / _COMPLETE).is_file():
        return None
    try:
        manifest = json.loads((folder / RUNTIME_MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return Runtime(folder.name, folder, manifest)


def installed_runtime() -> Runtime | None:
    """The installed ``metascore-runtime`` wheel's runtime (of any recipe), or None."""
    found = installed_wheel()
    if found is None:
        return None
    folder, manifest, version = found
    return Runtime(str(manifest.get("key", "")), folder, manifest, "wheel", version)


def cached_runtime() -> Runtime | None:
    """The current recipe's build, if it is in the cache (complete)."""
    return _load(runtime_cache() / recipe_key())


def find_runtime() -> Runtime | None:
    """The current recipe's runtime: the installed wheel's, else the cache's; None if
    neither has it."""
    wheel = installed_runtime()
    return wheel if wheel is not None and wheel.current else cached_runtime()


def _extract(archive: Path, folder: Path) -> None:
    """Extract a wheel's ``runtime.zip`` into ``folder`` (marked complete last)."""
    if folder.exists():
        shutil.rmtree(folder)
    part = folder.with_name(folder.name + ".part")
    shutil.rmtree(part, ignore_errors=True)
    with new_folder(folder, part), zipfile.ZipFile(archive) as zf:
        zf.extractall(part)
        (part / _COMPLETE).write_text("extracted\n", encoding="utf-8")


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
    """The current recipe's build in the cache, built first if it is not there (or
    ``rebuild``): stage one's CPython taken from the cache when it is there."""
    found = None if rebuild else cached_runtime()
    if found is not None:
        return found
    cpython_recipe.check_host()
    with _locked():
        found = None if rebuild else cached_runtime()  # built by another process meanwhile
        if found is not None:
            return found
        root, key = runtime_cache(), recipe_key()
        folder = root / key
        if folder.exists():
            shutil.rmtree(folder)
        log(f"[*] building the meta-scoring program's Python into {folder}, once per machine (`pip "
            "install 'metascore[runtime]'` gives it ready-made): CPython about 4 CPU-minutes, measured "
            "11 to 15 minutes on two busy cores, then 2 to 3 minutes of packages; a bundle zip that "
            "carries it weighs about 44 MB more (e.g. 0.5 -> 45 MB; --meta-python image leaves it out)")
        started = time.monotonic()
        cpython = _ensure_cpython(root, log)
        with tempfile.TemporaryDirectory(prefix=f"build-{key}-", dir=root) as work, \
                new_folder(folder, Path(work) / "result") as staging:  # in place once whole
            staging.mkdir()
            facts = recipe.build_runtime(staging / RUNTIME_DIR, cpython, Path(work), log)
            log("[*] compressing it for the program zips (LZMA, once)")
            zip_bytes = zip_runtime(staging / RUNTIME_DIR, staging / RUNTIME_ZIP)
            files = [p for p in (staging / RUNTIME_DIR).rglob("*") if p.is_file()]
            manifest = {
                "key": key, "python": cpython_recipe.PYTHON_VERSION, "cpython": cpython_recipe.cpython_key(),
                "packages": [w for w, _ in recipe.WHEELS], "glibc": facts["glibc"],
                "build_seconds": round(time.monotonic() - started),
                "tree_bytes": sum(p.stat().st_size for p in files), "tree_files": len(files),
                "zip_bytes": zip_bytes, "built": dt.datetime.now().isoformat(timespec="seconds"),
                "command": bundled_command(),
            }
            (staging / RUNTIME_MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
            (staging / _COMPLETE).write_text(key + "\n", encoding="utf-8")
    built = cached_runtime()
    assert built is not None
    log(f"[*] built {built.summary()}")
    return built


def _ensure_cpython(root: Path, log: _Log) -> Path:
    """Stage one's CPython (:func:`~metascore.bundle.runtime.cpython.build_cpython`) in the cache, built if it
    is not there; the caller holds the lock."""
    folder = root / f"cpython-{cpython_recipe.cpython_key()}"
    if (folder / _COMPLETE).is_file():
        log(f"[*] CPython {cpython_recipe.PYTHON_VERSION} compiled already ({folder})")
        return folder / "cpython"
    if folder.exists():
        shutil.rmtree(folder)
    with tempfile.TemporaryDirectory(prefix="build-cpython-", dir=root) as work, \
            new_folder(folder, Path(work) / "result") as staging:  # in place once whole
        staging.mkdir()
        cpython_recipe.build_cpython(staging / "cpython", Path(work), root / "downloads", log)
        (staging / _COMPLETE).write_text(cpython_recipe.cpython_key() + "\n", encoding="utf-8")
    return folder / "cpython"


def zip_runtime(tree: Path, dest: Path) -> int:
    """Zip ``tree`` under ``runtime/`` (sorted members, LZMA: Python's ``zipfile``, which the
    worker and the site extract programs with, reads it; a third smaller than deflate on
    these binaries); return the zip's size in bytes."""
    with replacing(dest) as part, zipfile.ZipFile(part, "w", zipfile.ZIP_LZMA) as zf:
        for path in sorted(tree.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                zf.write(path, f"{RUNTIME_DIR}/{path.relative_to(tree).as_posix()}")
    return dest.stat().st_size


def runtime_zip(runtime: Runtime, compression: str = "lzma", log: _Log = lambda _: None) -> Path:
    """The zip of ``runtime`` that goes into a program zip: its own (LZMA), or for
    ``"deflate"`` a copy with every member deflated, made once in the cache."""
    if compression == "lzma":
        return runtime.zip
    target = runtime_cache() / f"{runtime.key}-deflate.zip"
    if target.is_file():
        return target
    log("[*] recompressing the meta-scoring program's Python with deflate (once; --compression deflate)")
    target.parent.mkdir(parents=True, exist_ok=True)
    with replacing(target) as part, zipfile.ZipFile(runtime.zip) as zin, \
            zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            member = zipfile.ZipInfo(info.filename, info.date_time)
            member.external_attr, member.compress_type = info.external_attr, zipfile.ZIP_DEFLATED
            with zin.open(info) as src, zout.open(member, "w") as dest:
                shutil.copyfileobj(src, dest, 1 << 20)
    return target


def first_build_notice() -> str | None:
    """What the first zip that carries the meta-scoring program's Python costs on this
    machine, and the ways out, when neither the installed wheel nor the cache has it (None
    when one has)."""
    if find_runtime() is not None:
        return None
    return ("this machine has not built the meta-scoring program's own Python yet: this `bundle zip` "
            "builds it once, 11 to 15 minutes here (CPython compiled from source, then its packages), "
            "and the zip weighs about 45 MB (0.5 MB without it); ways out: `pip install "
            "'metascore[runtime]'` (once metascore is released on PyPI), or --meta-python image "
            "where the image's python3 has Python >= 3.10 with numpy, scipy, pandas and pyyaml "
            "(codalab/codalab-legacy:py312: `bundle add-meta --image` sets it)")


def list_runtimes() -> list[Runtime]:
    """The installed wheel's runtime, then every complete build in the cache; the current
    recipe's first (the one :func:`find_runtime` takes is first of all)."""
    root = runtime_cache()
    found = [r for r in (_load(p) for p in sorted(root.iterdir()) if p.is_dir()) if r] if root.is_dir() else []
    wheel = installed_runtime()
    return sorted(([wheel] if wheel is not None else []) + found, key=lambda r: not r.current)


def remove_runtimes(*, everything: bool = False) -> list[str]:
    """Remove the outdated builds and half-finished ones (``everything``: also the current
    build and the downloads); return what was removed."""
    root = runtime_cache()
    if not root.is_dir():
        return []
    removed = []
    with _locked():
        for path in sorted(root.iterdir()):
            current = (recipe_key(), f"wheel-{recipe_key()}", f"cpython-{cpython_recipe.cpython_key()}", "downloads",
                       f"{recipe_key()}-deflate.zip")
            keep = path.name == ".lock" or (not everything and path.name in current)
            if not keep:
                shutil.rmtree(path) if path.is_dir() else path.unlink()
                removed.append(str(path))
    if everything:
        shutil.rmtree(root, ignore_errors=True)
    return removed


def require_runtime(log: _Log) -> Runtime:
    """:func:`find_runtime` (the installed wheel's, else the cache's), else
    :func:`ensure_runtime` (built); a failure said with the way out."""
    wheel = installed_runtime()
    if wheel is not None and wheel.current:
        return wheel
    if wheel is not None:
        log(f"[*] note: the installed {DISTRIBUTION} {wheel.version} is another recipe's "
            f"({wheel.key}, not {recipe_key()}: install the one of this metascore's release)")
    found = cached_runtime()
    if found is not None:
        return found
    try:
        return ensure_runtime(log)
    except MetascoreError as exc:
        raise MetascoreError(f"{exc} The meta-scoring program's own Python could not be built; "
                             "retry, install it (pip install 'metascore[runtime]'), or pass "
                             "--meta-python image (then the competition's image must have "
                             "Python >= 3.10 with numpy, scipy, pandas and pyyaml).") from None
