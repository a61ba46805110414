"""Stage one of the meta-scoring program's own Python: CPython compiled for glibc 2.17.

:func:`build_cpython` installs a relocatable CPython (``bin/``, ``lib/``, ``include/``) into a
folder, from pinned sources, on any Linux x86_64 machine:

1. the source tarballs of zlib, bzip2, xz, libffi and CPython, as Debian ships them (pinned by
   path under the archive's ``pool/`` and by sha256: :data:`SOURCES`), downloaded from the
   Debian archive of this machine's apt configuration or ``$METASCORE_DEBIAN_MIRROR``
   (:mod:`~metascore.bundle.runtime.debian`);
2. ``zig cc`` (PyPI's ``ziglang``, pinned by hash) as the C compiler, targeting
   ``x86_64-linux-gnu.2.17``: every binary links against glibc 2.17's symbols only, whatever
   the glibc of the machine that builds it;
3. the libraries built static into CPython's extension modules (``_ctypes``, ``zlib``,
   ``_bz2``, ``_lzma``); no OpenSSL, sqlite, readline, curses or Tk (the program needs none).

It needs ``make``, pip and the network (the archive and PyPI), and takes most of the build's
few minutes; :mod:`~metascore.bundle.runtime.store` keeps its result in the cache under
:func:`cpython_key`, so a change of what goes on top of it (:mod:`~metascore.bundle.runtime.build`: the
packages, what is left out) does not compile CPython again.
"""

from __future__ import annotations

import ast
import hashlib
import io
import os
import platform
import shutil
import stat
import subprocess
import sys
import tarfile
import time
import tokenize
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from ...atomic import replacing
from ...errors import MetascoreError
from .debian import MIRROR_VARIABLE, debian_archive

__all__ = [
    "PYTHON_VERSION", "GLIBC_TARGET", "SOURCES", "ZIGLANG", "CONFIGURE", "cpython_recipe_text",
    "cpython_key", "code_digest", "check_host", "build_cpython", "pip_run", "hashed_requirements",
]

#: The CPython version of the runtime (the ``pythonX.Y`` folder and binary).
PYTHON_VERSION = "3.13"
#: The oldest glibc the runtime needs: zig links against this version's symbols.
GLIBC_TARGET = "2.17"
#: (name, path under the Debian archive, sha256) of each source tarball, built in this order.
#: libffi is bookworm's 3.4.4: trixie's 3.4.8 tarball has no ``configure`` (Debian runs autoreconf).
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
#: CPython's configure options.
CONFIGURE = ("--disable-test-modules", "--without-ensurepip", "--with-lto=no")
_HOST_BUILD_VARIABLES = frozenset({"CC", "CXX", "CPP", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS",
                                   "LIBS", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME"})

_Log = Callable[[str], None]


def cpython_recipe_text() -> str:
    """Everything stage one depends on, as text (with the digest of this module's code)."""
    lines = [f"python {PYTHON_VERSION}", f"glibc {GLIBC_TARGET}", f"zig {' '.join(ZIGLANG)}"]
    lines += [f"source {n} {p} {h}" for n, p, h in SOURCES]
    lines += [f"configure {' '.join(CONFIGURE)}", f"code {code_digest(Path(__file__))}"]
    return "\n".join(lines) + "\n"


def cpython_key() -> str:
    """The name of stage one's build in the cache: a hash of :func:`cpython_recipe_text`."""
    return hashlib.sha256(cpython_recipe_text().encode()).hexdigest()[:16]


def code_digest(path: Path) -> str:
    """The digest of a module's code without its imports, docstrings, comments and blank
    lines: a change of a build step builds again; moving the module (its relative imports)
    or rewording its documentation does not. Read from the text and the syntax tree's line
    numbers only, so every Python computes the same digest (a dump of the tree would not)."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    dropped: set[int] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            dropped |= set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            dropped |= set(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            row, col = token.start
            lines[row - 1] = lines[row - 1][:col]
    kept = [line.rstrip() for number, line in enumerate(lines, 1)
            if number not in dropped and line.strip()]
    return hashlib.sha256("\n".join(kept).encode()).hexdigest()


def check_host() -> None:
    """Raise unless this machine can build the runtime (Linux x86_64 with make)."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise MetascoreError(
            f"building the meta-scoring program's Python needs a Linux x86_64 machine (this is "
            f"{sys.platform} {platform.machine()}); install it as a wheel instead (pip install "
            "'metascore[runtime]', on Linux x86_64), build it on such a machine and copy its "
            "cache folder, or use --meta-python image.")
    if shutil.which("make") is None:
        raise MetascoreError("building the meta-scoring program's Python needs `make` "
                             "(apt-get install make).")


def build_cpython(dest: Path, work: Path, downloads: Path, log: _Log) -> dict:
    """Compile CPython and install it into ``dest`` (absent, used as the prefix), using
    ``work`` (scratch) and ``downloads`` (kept: the tarballs and the compiler wheel)."""
    check_host()
    started = time.monotonic()
    jobs = str(os.cpu_count() or 1)
    tarballs = {name: _download(path, sha, downloads, log) for name, path, sha in SOURCES}
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
    _run(["./configure", "--prefix=/runtime", *CONFIGURE], src, py, "CPython configure")
    _run(["make", "-j", jobs], src, py, "CPython make")
    stage = work / "stage"
    _run(["make", "install", f"DESTDIR={stage}"], src, py, "CPython make install")
    shutil.move(str(stage / "runtime"), str(dest))
    return {"build_seconds": round(time.monotonic() - started)}


# ------------------------------------------------------------------------------- steps
def _download(path: str, sha256: str, downloads: Path, log: _Log) -> Path:
    """The file at ``path`` in the Debian archive (:func:`debian_archive`), in ``downloads``
    (fetched once), its sha256 checked."""
    target = downloads / path.rsplit("/", 1)[1]
    if target.is_file() and _sha256(target) == sha256:
        return target
    archive = debian_archive()
    url = archive + path
    downloads.mkdir(parents=True, exist_ok=True)
    log(f"[*] downloading {url}")
    try:
        with replacing(target) as out:  # the whole checked file, or none
            with urllib.request.urlopen(url, timeout=60) as response:
                shutil.copyfileobj(response, out, 1 << 20)
            out.seek(0)
            if _digest(out) != sha256:
                raise MetascoreError(f"{url}: the download's sha256 is not the pinned {sha256}; not used "
                                     f"(is {archive} a Debian archive? {MIRROR_VARIABLE} names another).")
    except OSError as exc:
        raise MetascoreError(
            f"cannot download {url} ({exc}); the runtime's build takes Debian's source tarballs "
            f"from the archive of this machine's apt configuration, or from {MIRROR_VARIABLE} "
            "(the URL of a Debian mirror); a newer metascore pins the sources that replace "
            "an old one.") from None
    return target


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return _digest(f)


def _digest(f: BinaryIO) -> str:
    digest = hashlib.sha256()
    while chunk := f.read(1 << 20):
        digest.update(chunk)
    return digest.hexdigest()


def pip_run(args: list[str], what: str) -> None:
    """Run this Python's pip with ``args``; a MetascoreError saying ``what`` failed."""
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-4:]
        raise MetascoreError(f"{what}: pip failed ({' '.join(cmd[3:6])} ...): " + " / ".join(last))


def hashed_requirements(path: Path, pins: tuple[tuple[str, str], ...]) -> Path:
    """Write ``pins`` (requirement, sha256) as a pip requirements file with hashes."""
    path.write_text("".join(f"{req} --hash=sha256:{sha}\n" for req, sha in pins), encoding="utf-8")
    return path


def _zig(work: Path, downloads: Path, log: _Log) -> Path:
    """The zig binary: the pinned ``ziglang`` wheel downloaded by pip, unpacked into ``work``."""
    wheels = downloads / "ziglang"
    if not any(wheels.glob("ziglang-*.whl")):
        log(f"[*] downloading the C compiler ({ZIGLANG[0]}, about 100 MB)")
        pip_run(["download", "--quiet", "--no-deps", "--only-binary=:all:", "--dest", str(wheels),
              "--require-hashes", "-r", str(hashed_requirements(work / "zig.txt", (ZIGLANG,)))],
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
