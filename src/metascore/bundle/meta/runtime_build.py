"""The recipe of the meta-scoring program's own Python, and its build.

:func:`build_runtime` makes a relocatable CPython 3.13 with numpy, scipy, pandas and pyyaml
that runs on any Linux x86_64 system whose glibc is 2.17 or newer (2012; Debian 8, CentOS 7,
Ubuntu 14.04 and every later one), with or without a Python of its own:

1. the source tarballs of zlib, bzip2, xz, libffi and CPython, as Debian ships them
   (``deb.debian.org``'s ``pool/``, pinned by name and sha256: :data:`SOURCES`);
2. ``zig cc`` (PyPI's ``ziglang``, pinned by hash) as the C compiler, targeting
   ``x86_64-linux-gnu.2.17``: every binary links against glibc 2.17's symbols only, whatever
   the glibc of the machine that builds it;
3. the libraries built static into CPython's extension modules (``_ctypes``, ``zlib``,
   ``_bz2``, ``_lzma``); no OpenSSL, sqlite, readline, curses or Tk (the program needs none);
4. the manylinux2014 wheels of :data:`WHEELS` (glibc 2.17, pinned by hash) installed by pip;
5. trimmed (:func:`trim`): the test suites, caches, headers and tools the program never loads;
6. checked: every ELF file's glibc symbol versions are read back (:func:`max_glibc`) and the
   packages and metascore's program are imported by the new interpreter, run through this
   machine's loader; the modules that import loads are compiled to ``.pyc`` under
   ``pycache/`` (about 10 MB more in a zip, and the program starts in about a second
   instead of ten).

It needs a Linux x86_64 machine with ``make``, pip and the network to reach Debian's archive
and PyPI; it takes a few minutes on two cores. :mod:`metascore.bundle.meta.runtime` keeps the
result in the cache and puts it into bundles.
"""

from __future__ import annotations

import ast
import hashlib
import os
import platform
import shutil
import stat
import struct
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path

from ...errors import MetascoreError

__all__ = [
    "PYTHON_VERSION", "GLIBC_TARGET", "SOURCES", "ZIGLANG", "WHEELS", "MOUNT", "PYCACHE", "recipe_text",
    "build_runtime", "trim", "max_glibc", "check_host",
]

#: The CPython version of the runtime (the ``pythonX.Y`` folder and binary).
PYTHON_VERSION = "3.13"
#: The oldest glibc the runtime needs: zig links against this version's symbols.
GLIBC_TARGET = "2.17"
DEBIAN = "https://deb.debian.org/debian/"
#: (name, path under DEBIAN, sha256) of each source tarball, built in this order. libffi is
#: bookworm's 3.4.4: trixie's 3.4.8 tarball has no ``configure`` (Debian runs autoreconf).
SOURCES = (
    ("zlib", "pool/main/z/zlib/zlib_1.3.dfsg+really1.3.1.orig.tar.gz",
     "60dd315c07f616887caa029408308a018ace66e3d142726a97db164b3b8f69fb"),
    ("bzip2", "pool/main/b/bzip2/bzip2_1.0.8.orig.tar.gz",
     "ab5a03176ee106d3f0fa90e381da478ddae405918153cca248e682cd0c4a2269"),
    ("xz", "pool/main/x/xz-utils/xz-utils_5.8.1.orig.tar.xz",
     "0b54f79df85912504de0b14aec7971e3f964491af1812d83447005807513cd9e"),
    ("libffi", "pool/main/libf/libffi/libffi_3.4.4.orig.tar.gz",
     "d66c56ad259a82cf2a9dfc408b32bf5da52371500b84745f7fb8b645712df676"),
    ("python", "pool/main/p/python3.13/python3.13_3.13.5.orig.tar.xz",
     "93e583f243454e6e9e4588ca2c2662206ad961659863277afcdb96801647d640"),
)
#: The C compiler (its wheel for Linux x86_64 hosts).
ZIGLANG = ("ziglang==0.17.1", "ea6cc5d87b033cf0aedfbc8f9549a908cae6c50ac31f1698188fa48a74524b54")
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
_CONFIGURE = ("--disable-test-modules", "--without-ensurepip", "--with-lto=no")
#: Standard-library parts the program never loads (tests, GUI, IDE, installers, docs data).
_STDLIB_UNUSED = ("test", "idlelib", "tkinter", "turtledemo", "turtle.py", "ensurepip",
                  "pydoc_data", "lib2to3", "sqlite3", "curses")
#: Files a program never loads: compilers' sources and headers, type stubs.
_SOURCE_SUFFIXES = (".pyi", ".pxd", ".pyx", ".pxi", ".c", ".cc", ".cpp", ".h", ".hpp", ".f", ".f90")
#: What the check imports with the new interpreter.
SMOKE = ("import ctypes, bz2, lzma, zlib, decimal, json, csv, numpy, scipy.stats, scipy.optimize, "
         "scipy.sparse.linalg, scipy.special, pandas, yaml, threadpoolctl")
_LOADER = "/lib64/ld-linux-x86-64.so.2"
#: Where the runtime is in the job's container (the meta-scoring program's ``runtime/``), and
#: its compiled modules under it: ``-X pycache_prefix`` points there (a ``__pycache__`` folder
#: would do on Codabench, but the mock worker leaves those out of the programs it copies).
MOUNT = "/app/program/runtime"
PYCACHE = f"{MOUNT}/pycache"
_HOST_BUILD_VARIABLES = frozenset({"CC", "CXX", "CPP", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS",
                                   "LIBS", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME"})

_Log = Callable[[str], None]


def recipe_text() -> str:
    """Everything the build depends on, as text: the cache key is its hash (together with
    the digest of this module's code, so a change of the build steps builds again)."""
    lines = [f"python {PYTHON_VERSION}", f"glibc {GLIBC_TARGET}", f"zig {' '.join(ZIGLANG)}"]
    lines += [f"source {n} {p} {h}" for n, p, h in SOURCES]
    lines += [f"wheel {w} {h}" for w, h in WHEELS]
    lines += [f"configure {' '.join(_CONFIGURE)}", f"trim {' '.join(_STDLIB_UNUSED)}"]
    lines.append(_steps_digest())
    return "\n".join(lines) + "\n"



def _steps_digest() -> str:
    """The digest of this module's code without its imports and docstrings: a change of a
    build step builds again; moving the module or rewording its documentation does not."""
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    tree.body = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return hashlib.sha256(ast.dump(tree).encode()).hexdigest()

def check_host() -> None:
    """Raise unless this machine can build the runtime (Linux x86_64 with make)."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise MetascoreError(
            f"building the meta-scoring program's Python needs a Linux x86_64 machine (this is "
            f"{sys.platform} {platform.machine()}); build it on one (`metascore bundle runtime "
            "build`) and copy its cache folder, or use --meta-python image.")
    if shutil.which("make") is None:
        raise MetascoreError("building the meta-scoring program's Python needs `make` "
                             "(apt-get install make).")


# ------------------------------------------------------------------------------- build
def build_runtime(dest: Path, work: Path, downloads: Path, log: _Log) -> dict:
    """Build the runtime into ``dest`` (absent), using ``work`` (scratch) and ``downloads``
    (kept: tarballs and the compiler wheel). Returns facts for the manifest."""
    check_host()
    started = time.monotonic()
    jobs = str(os.cpu_count() or 1)
    tarballs = {name: _download(DEBIAN + path, sha, downloads, log) for name, path, sha in SOURCES}
    zig = _zig(work, downloads, log)
    tools = _toolchain(zig, work)
    deps = work / "deps"
    # this machine's compiler settings (CFLAGS=-march=native, say) would make the binaries
    # unportable: only ours; zig given a target compiles for its baseline CPU, not this one
    clean = {k: v for k, v in os.environ.items() if k not in _HOST_BUILD_VARIABLES}
    env = {**clean, "CC": str(tools / "cc"), "AR": str(tools / "ar"),
           "RANLIB": str(tools / "ranlib"), "ZIG_GLOBAL_CACHE_DIR": str(work / "zig-cache"),
           "ZIG_LOCAL_CACHE_DIR": str(work / "zig-cache"), "PKG_CONFIG_LIBDIR": str(deps / "lib/pkgconfig"),
           "PKG_CONFIG_PATH": "", "MAKEFLAGS": ""}
    lib = {**env, "CFLAGS": "-O2 -fPIC"}
    log("[*] building zlib, bzip2, xz and libffi (static, for glibc "
        f"{GLIBC_TARGET})")
    src = _unpack(tarballs["zlib"], work)
    _run(["./configure", "--static", f"--prefix={deps}"], src, lib, "zlib configure")
    _run(["make", "-j", jobs, "install"], src, lib, "zlib make")
    src = _unpack(tarballs["bzip2"], work)
    _run(["make", "-j", jobs, "libbz2.a", f"CC={lib['CC']}", f"AR={lib['AR']}", f"RANLIB={lib['RANLIB']}",
          "CFLAGS=-O2 -fPIC -D_FILE_OFFSET_BITS=64"], src, lib, "bzip2 make")
    (deps / "include").mkdir(parents=True, exist_ok=True)
    shutil.copy2(src / "libbz2.a", deps / "lib" / "libbz2.a")
    shutil.copy2(src / "bzlib.h", deps / "include" / "bzlib.h")
    src = _unpack(tarballs["xz"], work)
    _run(["./configure", f"--prefix={deps}", "--disable-shared", "--enable-static", "--disable-xz",
          "--disable-xzdec", "--disable-lzmadec", "--disable-lzmainfo", "--disable-scripts",
          "--disable-doc", "--disable-nls"], src, lib, "xz configure")
    _run(["make", "-j", jobs, "install"], src, lib, "xz make")
    src = _unpack(tarballs["libffi"], work)
    _run(["./configure", f"--prefix={deps}", "--disable-shared", "--enable-static", "--disable-docs",
          "--disable-multi-os-directory", "--disable-exec-static-tramp"], src, lib, "libffi configure")
    _run(["make", "-j", jobs, "install"], src, lib, "libffi make")

    log(f"[*] building CPython {PYTHON_VERSION} with zig cc (a few minutes)")
    inc, libdir = f"-I{deps / 'include'}", f"-L{deps / 'lib'}"
    py = {**env, "CPPFLAGS": inc, "LDFLAGS": f"{libdir} -s",
          "LIBFFI_CFLAGS": inc, "LIBFFI_LIBS": f"{libdir} -lffi", "ZLIB_CFLAGS": inc,
          "ZLIB_LIBS": f"{libdir} -lz", "BZIP2_CFLAGS": inc, "BZIP2_LIBS": f"{libdir} -lbz2",
          "LIBLZMA_CFLAGS": inc, "LIBLZMA_LIBS": f"{libdir} -llzma"}
    src = _unpack(tarballs["python"], work)
    _run(["./configure", "--prefix=/runtime", *_CONFIGURE], src, py, "CPython configure")
    _run(["make", "-j", jobs], src, py, "CPython make")
    stage = work / "stage"
    _run(["make", "install", f"DESTDIR={stage}"], src, py, "CPython make install")
    tree = stage / "runtime"
    log("[*] installing the wheels: " + ", ".join(w for w, _ in WHEELS))
    _install_wheels(tree, work)
    trim(tree)
    shutil.move(str(tree), str(dest))
    need = max_glibc(dest)
    if need > _version(GLIBC_TARGET):
        raise MetascoreError(f"the built runtime needs glibc {need[0]}.{need[1]}, more than "
                             f"{GLIBC_TARGET}; the recipe is wrong.")
    _smoke(dest)
    return {"glibc": f"{need[0]}.{need[1]}", "build_seconds": round(time.monotonic() - started)}


def _download(url: str, sha256: str, downloads: Path, log: _Log) -> Path:
    """The file at ``url`` in ``downloads`` (fetched once), its sha256 checked."""
    target = downloads / url.rsplit("/", 1)[1]
    if target.is_file() and _sha256(target) == sha256:
        return target
    downloads.mkdir(parents=True, exist_ok=True)
    log(f"[*] downloading {url}")
    part = target.with_name(target.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(part, "wb") as out:
            shutil.copyfileobj(response, out, 1 << 20)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise MetascoreError(f"cannot download {url} ({exc}); the runtime's build needs Debian's "
                             "archive (a newer metascore pins the sources that replace it).") from None
    if _sha256(part) != sha256:
        part.unlink()
        raise MetascoreError(f"{url}: the download's sha256 is not the pinned {sha256}; not used.")
    os.replace(part, target)
    return target


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _pip(args: list[str], what: str) -> None:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-4:]
        raise MetascoreError(f"{what}: pip failed ({' '.join(cmd[3:6])} ...): " + " / ".join(last))


def _requirements(path: Path, pins: tuple[tuple[str, str], ...]) -> Path:
    path.write_text("".join(f"{req} --hash=sha256:{sha}\n" for req, sha in pins), encoding="utf-8")
    return path


def _zig(work: Path, downloads: Path, log: _Log) -> Path:
    """The zig binary: the pinned ``ziglang`` wheel downloaded by pip, unpacked into ``work``."""
    wheels = downloads / "ziglang"
    if not any(wheels.glob("ziglang-*.whl")):
        log(f"[*] downloading the C compiler ({ZIGLANG[0]}, about 100 MB)")
        _pip(["download", "--quiet", "--no-deps", "--only-binary=:all:", "--dest", str(wheels),
              "--require-hashes", "-r", str(_requirements(work / "zig.txt", (ZIGLANG,)))],
             "downloading the ziglang wheel")
    wheel = next(wheels.glob("ziglang-*.whl"))
    if _sha256(wheel) != ZIGLANG[1]:
        raise MetascoreError(f"{wheel}: not the pinned {ZIGLANG[0]} wheel; remove it and build again.")
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(work / "zig")
    zig = work / "zig" / "ziglang" / "zig"
    zig.chmod(zig.stat().st_mode | stat.S_IXUSR)  # zips keep no permission bits
    return zig


def _toolchain(zig: Path, work: Path) -> Path:
    """``cc``, ``ar`` and ``ranlib`` scripts that call zig (cc for glibc GLIBC_TARGET)."""
    tools = work / "tools"
    tools.mkdir()
    # -Wno-error=date-time: zig makes __DATE__ an error, and CPython's build info uses it;
    # no UB sanitizer (zig's default for unoptimized code, as in configure's probes)
    scripts = {"cc": f"cc -target x86_64-linux-gnu.{GLIBC_TARGET} -fno-sanitize=undefined "
                     "-Wno-error=date-time", "ar": "ar", "ranlib": "ranlib"}
    for name, args in scripts.items():
        (tools / name).write_text(f'#!/bin/sh\nexec "{zig}" {args} "$@"\n', encoding="utf-8")
        (tools / name).chmod(0o755)
    return tools


def _unpack(tarball: Path, work: Path) -> Path:
    """Extract ``tarball`` into ``work/src`` and return its one top folder."""
    dest = work / "src" / tarball.name
    with tarfile.open(tarball) as tf:
        if hasattr(tarfile, "data_filter"):  # Python >= 3.10.12: refuse links out, devices
            tf.extractall(dest, filter="data")
        else:  # pragma: no cover - the pinned, hash-checked tarballs only
            tf.extractall(dest)
    (top,) = list(dest.iterdir())
    return top


def _run(cmd: list[str], cwd: Path, env: dict[str, str], what: str) -> None:
    logfile = cwd.parent / f"{what.replace(' ', '-')}.log"
    with open(logfile, "w") as out:
        rc = subprocess.run(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        last = logfile.read_text(errors="replace").strip().splitlines()[-6:]
        raise MetascoreError(f"building the runtime: {what} failed (exit {rc}; log {logfile}): "
                             + " / ".join(last))


def _install_wheels(tree: Path, work: Path) -> None:
    site = tree / "lib" / f"python{PYTHON_VERSION}" / "site-packages"
    abi = "cp" + PYTHON_VERSION.replace(".", "")
    _pip(["install", "--quiet", "--no-deps", "--only-binary=:all:", "--platform", "manylinux2014_x86_64",
          "--python-version", PYTHON_VERSION, "--implementation", "cp", "--abi", abi,
          "--target", str(site), "--no-compile", "--require-hashes",
          "-r", str(_requirements(work / "wheels.txt", WHEELS))], "installing the wheels")


# ------------------------------------------------------------------------------- trim
def trim(tree: Path) -> None:
    """Remove from the runtime ``tree`` what the program never loads: every binary but the
    interpreter, headers and static libraries, the unused standard-library parts
    (:data:`_STDLIB_UNUSED`), caches, compilers' sources and stubs, and in the test folders
    of the packages the test modules and their data (a helper module there stays: numpy's
    ``testing`` imports one)."""
    for path in (tree / "bin").iterdir():
        if path.name != f"python{PYTHON_VERSION}":
            path.unlink()
    for name in ("include", "share", f"lib/libpython{PYTHON_VERSION}.a", "lib/pkgconfig"):
        _remove(tree / name)
    stdlib = tree / "lib" / f"python{PYTHON_VERSION}"
    for name in _STDLIB_UNUSED:
        _remove(stdlib / name)
    for path in stdlib.glob("config-*"):
        _remove(path)
    _remove(stdlib / "site-packages" / "bin")  # console scripts: f2py, numpy-config
    for path in sorted(tree.rglob("*"), reverse=True):  # children before their folders
        if path.is_dir():
            if path.name == "__pycache__" or not any(path.iterdir()):
                _remove(path)
        elif path.suffix in _SOURCE_SUFFIXES or path.suffix == ".pyc" or (
                "tests" in path.relative_to(tree).parts[:-1]
                and (path.name.startswith("test_") or path.suffix != ".py")):
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


def _needed_versions(path: Path) -> set[str]:
    """The symbol versions (``GLIBC_2.14``, ``GLIBCXX_3.4``) a 64-bit little-endian ELF file
    requires (its ``.gnu.version_r`` section); empty for any other file."""
    with open(path, "rb") as f:
        if f.read(6) != b"\x7fELF\x02\x01":
            return set()
    data = path.read_bytes()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names: set[str] = set()
    for _name, kind, _flags, _addr, offset, _size, link, info, _align, _entsize in sections:
        if kind != 0x6FFFFFFE:  # SHT_GNU_verneed
            continue
        strtab = sections[link][4]
        entry = offset
        for _ in range(info):  # Verneed entries
            _ver, count, _file, aux, nxt = struct.unpack_from("<HHIII", data, entry)
            at = entry + aux
            for _ in range(count):  # Vernaux entries
                _hash, _flags2, _other, name, next_aux = struct.unpack_from("<IHHII", data, at)
                end = data.index(b"\0", strtab + name)
                names.add(data[strtab + name:end].decode("ascii", "replace"))
                at += next_aux
            entry += nxt
    return names


def _smoke(tree: Path) -> None:
    """Import the packages and metascore's program (this installation's package, put on the
    path) with the new interpreter through this machine's loader, as the meta-scoring
    program's command runs it; then compile every module of the tree that was imported
    (unchecked-hash ``.pyc``: the worker's unzip resets modification times), so the program
    starts in about a second rather than ten."""
    import metascore

    cmd = [_LOADER, str(tree / "bin" / f"python{PYTHON_VERSION}"), "-I", "-B", "-c", _PRECOMPILE,
           str(tree), str(Path(metascore.__file__).resolve().parent.parent), MOUNT, PYCACHE]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-3:]
        raise MetascoreError("the built runtime cannot import its packages: " + " / ".join(last))


_PRECOMPILE = SMOKE + """
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
