"""Stage two of the meta-scoring program's own Python: the packages on the compiled CPython,
what the program never loads left out, and the checks.

:func:`build_runtime` takes stage one's CPython (:mod:`~metascore.bundle.runtime.cpython`)
and makes the runtime that ``bundle zip`` ships, for any Linux x86_64 system whose glibc is
2.17 or newer (2012; Debian 8, CentOS 7, Ubuntu 14.04 and every later one), with or without a
Python of its own:

1. the manylinux2014 wheels of :data:`WHEELS` (glibc 2.17, pinned by hash) installed by pip;
2. slimmed (:func:`trim`) to what the meta-scoring program loads. What it loads was measured
   by running everything it can do (``tests/runtime_workload.py``: every method of the
   registry with each option, the analyses, the report, every input format) in a full build
   and reading ``sys.modules`` and the shared objects mapped into the process: the test
   suites, headers, stubs and tools, the standard library's packages and extension modules
   it never imports (:data:`STDLIB_UNUSED`, :data:`DYNLOAD_UNUSED`), the subpackages of
   numpy, scipy and pandas it never imports (:data:`SITE_UNUSED`: scipy.io, signal, stats,
   spatial...), their test and benchmark extension modules, and every bundled library that
   no kept file links to (a second copy of gfortran in ``scipy.libs``) are left out. What
   depends on the data stays whole: the codecs, pytz's time-zone database;
3. checked: every ELF file's glibc symbol versions are read back (:func:`max_glibc`) and the
   packages and metascore's program are imported by the new interpreter, run through this
   machine's loader; the modules that import loads are compiled to ``.pyc`` under
   ``pycache/`` (the program starts in about a second instead of ten).

``tests/bundle/test_runtime.py`` runs the workload in this runtime and in one without the
slimming and compares every output file byte for byte.
"""

from __future__ import annotations

import ast
import shutil
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

from ...errors import MetascoreError
from .cpython import (GLIBC_TARGET, PYTHON_VERSION, code_digest, cpython_recipe_text,
                              hashed_requirements, pip_run)

__all__ = [
    "WHEELS", "STDLIB_UNUSED", "DYNLOAD_UNUSED", "SITE_UNUSED", "MOUNT", "PYCACHE", "SMOKE",
    "recipe_text", "build_runtime", "trim", "max_glibc", "needed_libraries", "program_imports", "is_elf",
]

#: The packages the meta-scoring program imports, and theirs; one manylinux2014 (or pure
#: Python) wheel each, for CPython 3.13.
WHEELS = (
    ("numpy==2.2.6", "1bc23a79bfabc5d056d106f9befb8d50c31ced2fbc70eedb8155aec74a45798f"),
    ("scipy==1.16.3", "7dc1360c06535ea6116a2220f760ae572db9f661aba2d88074fe30ec2aa1ff88"),
    ("pandas==2.3.2", "4ac8c320bded4718b298281339c1a50fb00a6ba78cb2a63521c39bec95b0209b"),
    ("python-dateutil==4.0.0", "a5e246f79eb80475e691bf93862cead98decd8a498cf53ba0516fcdc0f50dc1c"),
    ("pytz==2026.6", "7fed3fee8fd6bd4a2b7b75a8d56021d0624127bf69bd5691f115db929ac570b3"),
    ("tzdata==2026.6", "0a10eec6e13ef16b627fabed9a5f2ba61a62b1c67f327305f4e7e412a70b4aec"),
    ("pyyaml==6.0.4", "50588147ab2c6a59b5f990a4905db80899a6c2bd197e046a6201f1e67587e794"),
    ("threadpoolctl==3.8.0", "f1b49c82704d50f13ffae019c727b0fa4f6791a58f48f06a09c45face1be66da"),
)
#: Standard-library packages and modules the program never imports (tests, GUI, IDE,
#: installers, docs data, networking, servers, concurrency by processes or coroutines).
STDLIB_UNUSED = ("test", "idlelib", "tkinter", "turtledemo", "turtle.py", "ensurepip", "pydoc_data",
                 "lib2to3", "sqlite3", "curses", "asyncio", "multiprocessing", "xml", "xmlrpc",
                 "http", "wsgiref", "venv", "dbm", "tomllib")
#: The standard library's extension modules it never imports (``lib-dynload/NAME.*.so``).
DYNLOAD_UNUSED = ("_asyncio", "_socket", "_elementtree", "pyexpat", "_lsprof", "_interpreters",
                  "_interpchannels", "_interpqueues", "termios", "syslog", "resource", "_posixshmem",
                  "_multiprocessing", "_testcapi", "_testinternalcapi", "_testbuffer",
                  "_testimportmultiple", "_testmultiphase", "_testsinglephase", "_xxtestfuzz",
                  "xxlimited", "xxlimited_35", "xxsubtype", "_ctypes_test")
#: Subpackages (folders under ``site-packages``, glob patterns) the program never imports, and
#: files of the kept ones matched by name: the libraries' test and benchmark extension modules.
#: ``tzdata`` serves the standard library's ``zoneinfo``, which neither the program nor pandas 2
#: (pytz for named time zones) uses; the ``RECORD`` files would list files no longer there.
SITE_UNUSED = ("scipy/stats", "scipy/integrate", "scipy/interpolate", "scipy/ndimage", "scipy/io",
               "scipy/signal", "scipy/cluster", "scipy/odr", "scipy/fftpack",
               "scipy/misc", "scipy/datasets", "scipy/differentiate", "scipy/special/_precompute",
               "scipy/optimize/cython_optimize", "scipy/_lib/array_api_compat/torch",
               "scipy/_lib/array_api_compat/dask", "scipy/_lib/array_api_compat/cupy",
               "scipy/_lib/pyprima", "scipy/_lib/cobyqa",
               "pandas/plotting/_matplotlib", "pandas/io/clipboard", "pandas/core/_numba/kernels",
               "numpy/random/lib", "numpy/_core/lib", "numpy/_pyinstaller", "numpy/typing/tests",
               "tzdata", "tzdata-*.dist-info", "*.dist-info/RECORD")
_SITE_UNUSED_FILES = ("_test_*.so", "_*_tests.cpython-*.so", "_ctest.cpython-*.so", "_cytest.cpython-*.so",
                      "_simd.cpython-*.so", "_multiarray_tests.cpython-*.so", "sas.cpython-*.so",
                      "byteswap.cpython-*.so", "_fpumode.cpython-*.so", "cython_special.cpython-*.so",
                      "_matfuncs_sqrtm_triu.cpython-*.so", "lapack_lite.cpython-*.so")
#: Files a program never loads: compilers' sources and headers, type stubs.
_SOURCE_SUFFIXES = (".pyi", ".pxd", ".pyx", ".pxi", ".c", ".cc", ".cpp", ".h", ".hpp", ".f", ".f90")
#: What the check imports with the new interpreter (the program's own imports come on top).
SMOKE = "import ctypes, bz2, lzma, zlib, decimal, json, csv, gzip, numpy, pandas, yaml, threadpoolctl"
_LOADER = "/lib64/ld-linux-x86-64.so.2"
#: Where the runtime is in the job's container (the meta-scoring program's ``runtime/``), and
#: its compiled modules under it: ``-X pycache_prefix`` points there (a ``__pycache__`` folder
#: would do on Codabench, but the mock worker leaves those out of the programs it copies).
MOUNT = "/app/program/runtime"
PYCACHE = f"{MOUNT}/pycache"
_LIBRARIES = ("numpy", "scipy", "pandas", "yaml", "threadpoolctl")

_Log = Callable[[str], None]


def recipe_text() -> str:
    """Everything the runtime depends on, as text: stage one's recipe, the wheels, what is
    left out, and the digest of this module's code. The cache key is its hash."""
    lines = [cpython_recipe_text().rstrip("\n")]
    lines += [f"wheel {w} {h}" for w, h in WHEELS]
    lines += [f"trim {' '.join(STDLIB_UNUSED)}", f"dynload {' '.join(DYNLOAD_UNUSED)}",
              f"site {' '.join(SITE_UNUSED)} {' '.join(_SITE_UNUSED_FILES)}",
              f"code {code_digest(Path(__file__))}"]
    return "\n".join(lines) + "\n"


def program_imports(package: Path) -> list[str]:
    """The modules of numpy, scipy, pandas, yaml and threadpoolctl that a module of the
    ``metascore`` package in ``package`` imports, at its top or inside a function."""
    found: set[str] = set()
    for path in sorted(Path(package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
    return sorted(n for n in found if n.split(".")[0] in _LIBRARIES)


def build_runtime(dest: Path, cpython: Path, work: Path, log: _Log) -> dict:
    """Make the runtime in ``dest`` (absent) from stage one's CPython in ``cpython`` (read
    only), using ``work`` (scratch). Returns facts for the manifest."""
    shutil.copytree(cpython, dest, symlinks=True)
    log("[*] installing the wheels: " + ", ".join(w for w, _ in WHEELS))
    _install_wheels(dest, work)
    trim(dest)
    need = max_glibc(dest)
    if need > _version(GLIBC_TARGET):
        raise MetascoreError(f"the built runtime needs glibc {need[0]}.{need[1]}, more than "
                             f"{GLIBC_TARGET}; the recipe is wrong.")
    _smoke(dest)
    return {"glibc": f"{need[0]}.{need[1]}"}


def _install_wheels(tree: Path, work: Path) -> None:
    site = tree / "lib" / f"python{PYTHON_VERSION}" / "site-packages"
    abi = "cp" + PYTHON_VERSION.replace(".", "")
    pip_run(["install", "--quiet", "--no-deps", "--only-binary=:all:", "--platform", "manylinux2014_x86_64",
             "--python-version", PYTHON_VERSION, "--implementation", "cp", "--abi", abi,
             "--target", str(site), "--no-compile", "--require-hashes",
             "-r", str(hashed_requirements(work / "wheels.txt", WHEELS))], "installing the wheels")


# ------------------------------------------------------------------------------- trim
def trim(tree: Path) -> None:
    """Remove from the runtime ``tree`` what the program never loads: every binary but the
    interpreter, headers and static libraries, the unused standard-library parts, extension
    modules and subpackages (:data:`STDLIB_UNUSED`, :data:`DYNLOAD_UNUSED`,
    :data:`SITE_UNUSED`), caches, compilers' sources and stubs, the libraries' test modules
    and their data (a helper module there stays: numpy's ``testing`` imports one), and the
    bundled libraries (``*.libs/``) that no kept file links to."""
    for path in (tree / "bin").iterdir():
        if path.name != f"python{PYTHON_VERSION}":
            path.unlink()
    for name in ("include", "share", f"lib/libpython{PYTHON_VERSION}.a", "lib/pkgconfig"):
        _remove(tree / name)
    stdlib = tree / "lib" / f"python{PYTHON_VERSION}"
    site = stdlib / "site-packages"
    for name in STDLIB_UNUSED:
        _remove(stdlib / name)
    for path in stdlib.glob("config-*"):
        _remove(path)
    for name in DYNLOAD_UNUSED:
        for path in (stdlib / "lib-dynload").glob(f"{name}.cpython-*.so"):
            path.unlink()
    for name in (*SITE_UNUSED, "bin"):  # bin: console scripts (f2py, numpy-config)
        for path in site.glob(name):
            _remove(path)
    for pattern in _SITE_UNUSED_FILES:
        for path in site.rglob(pattern):
            path.unlink()
    for path in sorted(tree.rglob("*"), reverse=True):  # children before their folders
        if path.is_dir():
            if path.name == "__pycache__" or not any(path.iterdir()):
                _remove(path)
        elif path.suffix in _SOURCE_SUFFIXES or path.suffix == ".pyc" or (
                "tests" in path.relative_to(tree).parts[:-1]
                and (path.name.startswith("test_") or path.suffix != ".py")):
            path.unlink()
    needed = needed_libraries(tree)
    for path in sorted(site.glob("*.libs/*")):
        if path.name not in needed:
            path.unlink()


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


# ------------------------------------------------------------------------------- checks
def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def max_glibc(tree: Path) -> tuple[int, int]:
    """The newest ``GLIBC_x.y`` symbol version that an ELF file under ``tree`` requires."""
    newest = (0, 0)
    for path in tree.rglob("*"):
        if path.is_file() and not path.is_symlink():
            for name in _needed_versions(path):
                if name.startswith("GLIBC_") and name[6:7].isdigit():
                    newest = max(newest, _version(name[6:]))
    return newest


def needed_libraries(tree: Path) -> set[str]:
    """The names of the shared libraries (``DT_NEEDED``) that the ELF files under ``tree``
    link to."""
    names: set[str] = set()
    for path in tree.rglob("*"):
        if path.is_file() and not path.is_symlink():
            names |= _dynamic_needed(path)
    return names


def _sections(data: bytes) -> list[tuple]:
    """The section headers of a 64-bit little-endian ELF file."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    return [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]


def is_elf(path: Path) -> bool:
    """Whether ``path`` is a 64-bit little-endian ELF file (a binary the glibc check reads)."""
    with open(path, "rb") as f:
        return f.read(6) == b"\x7fELF\x02\x01"


def _sections_of(path: Path, kind: int) -> tuple[bytes, list[tuple[int, int, int, int]]]:
    """A 64-bit ELF file's bytes and, for each section of ``kind``, its (offset, size, the
    offset of its string table, info); nothing for any other file."""
    if not is_elf(path):
        return b"", []
    data = path.read_bytes()
    sections = _sections(data)
    return data, [(offset, size, sections[link][4], info)
                  for _n, k, _f, _a, offset, size, link, info, _al, _e in sections if k == kind]


def _string(data: bytes, at: int) -> str:
    return data[at:data.index(b"\0", at)].decode("ascii", "replace")


def _dynamic_needed(path: Path) -> set[str]:
    """The ``DT_NEEDED`` names of an ELF file's ``.dynamic`` section; empty for any other file."""
    data, found = _sections_of(path, 6)  # SHT_DYNAMIC
    names: set[str] = set()
    for offset, size, strtab, _info in found:
        for at in range(offset, offset + size, 16):
            tag, value = struct.unpack_from("<qQ", data, at)
            if tag == 0:  # DT_NULL
                break
            if tag == 1:  # DT_NEEDED
                names.add(_string(data, strtab + value))
    return names


def _needed_versions(path: Path) -> set[str]:
    """The symbol versions (``GLIBC_2.14``, ``GLIBCXX_3.4``) a 64-bit little-endian ELF file
    requires (its ``.gnu.version_r`` section); empty for any other file."""
    data, found = _sections_of(path, 0x6FFFFFFE)  # SHT_GNU_verneed
    names: set[str] = set()
    for entry, _size, strtab, info in found:
        for _ in range(info):  # Verneed entries
            _ver, count, _file, aux, nxt = struct.unpack_from("<HHIII", data, entry)
            at = entry + aux
            for _ in range(count):  # Vernaux entries
                _hash, _flags2, _other, name, next_aux = struct.unpack_from("<IHHII", data, at)
                names.add(_string(data, strtab + name))
                at += next_aux
            entry += nxt
    return names


def _smoke(tree: Path) -> None:
    """Import the packages and metascore's program (this installation's package, put on the
    path) with the new interpreter through this machine's loader, as the meta-scoring
    program's command runs it; then compile every module of the tree that was imported
    (unchecked-hash ``.pyc``: the worker's unzip resets modification times), so the program
    starts in about a second rather than ten. What is compiled: what :data:`SMOKE` and the
    program import when it starts; then every library module the package imports anywhere,
    inside functions too (:func:`program_imports`: scipy.optimize for exact Kemeny-Young),
    is imported, to check that nothing it needs was left out (compiled when it is used).
    """
    import metascore

    package = Path(metascore.__file__).resolve().parent
    code = SMOKE + _PRECOMPILE + "".join(f"import {name}\n" for name in program_imports(package))
    cmd = [_LOADER, str(tree / "bin" / f"python{PYTHON_VERSION}"), "-I", "-B", "-c", code,
           str(tree), str(package.parent), MOUNT, PYCACHE]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-3:]
        raise MetascoreError("the built runtime cannot import its packages: " + " / ".join(last))


_PRECOMPILE = """
import importlib.util, py_compile, sys
tree, package, mount, prefix = sys.argv[1:5]
sys.path.append(package)
import metascore, metascore.program
sys.pycache_prefix = prefix  # where the program's command looks: the paths in the container
for module in list(sys.modules.values()):
    path = getattr(module, "__file__", None) or ""
    if path.endswith(".py") and path.startswith(tree + "/"):
        there = mount + path[len(tree):]
        cfile = tree + importlib.util.cache_from_source(there)[len(mount):]
        py_compile.compile(path, cfile=cfile, dfile=there, doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
"""
