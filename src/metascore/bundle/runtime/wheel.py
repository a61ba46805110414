"""The meta-scoring program's own Python as a platform wheel, ``metascore-runtime``.

A build (:mod:`metascore.bundle.runtime.store`) is packed by :func:`write_wheel` into
``metascore_runtime-<version>-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl``:

- ``metascore_runtime/runtime.zip``, stored: the whole runtime as it goes into a program zip,
  LZMA-compressed once at the build, so that ``bundle zip`` copies it in seconds (a wheel's
  own members may only be deflated, and deflate makes the runtime a half larger);
- its ELF files (the interpreter, the extension modules, the bundled libraries), the same
  bytes, unpacked under ``metascore_runtime/runtime/``: what ``auditwheel show`` reads to
  check the tag against what they need;
- its manifest, ``metascore_runtime/runtime.json`` (the recipe key among it), and a small
  ``__init__.py``.

The tag says what the tree needs: Linux x86_64 and glibc 2.17's symbols at most (the build
checks every ELF file too); ``py3-none``: it brings its own interpreter, so it installs beside
any Python. Its version is metascore's, so ``pip install 'metascore[runtime]'`` takes the wheel
of the same release.

:func:`installed_wheel` finds an installed one (its folder and manifest);
:mod:`~metascore.bundle.runtime.store` uses it before the cache and before building when its
recipe key is the current one. The wheel is written the same, byte for byte, from the same
tree: members sorted, fixed times, modes from the files.
"""

from __future__ import annotations

import base64
import hashlib
import json
import stat
import zipfile
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from ...atomic import replacing
from ...errors import MetascoreError
from .build import is_elf

__all__ = ["DISTRIBUTION", "PACKAGE", "PLATFORM_TAGS", "RUNTIME_MANIFEST", "RUNTIME_ZIP", "wheel_name",
           "write_wheel", "installed_wheel"]

#: The distribution's name on the package index, and the folder it installs.
DISTRIBUTION = "metascore-runtime"
PACKAGE = "metascore_runtime"
#: The platform tags (PEP 600 and its manylinux2014 alias): glibc >= 2.17, x86_64.
PLATFORM_TAGS = ("manylinux_2_17_x86_64", "manylinux2014_x86_64")
#: A build's manifest and its zip, in the cache's folder of the build and in the wheel.
RUNTIME_MANIFEST = "runtime.json"
RUNTIME_ZIP = "runtime.zip"
_TREE = "runtime"
_EPOCH = (1980, 1, 1, 0, 0, 0)  # zip's earliest time: the same wheel from the same files
_INIT = '''"""The meta-scoring program's own Python, for metascore bundles (``metascore bundle zip``).

``ZIP`` holds the relocatable CPython with its packages that metascore puts into a meta-scoring
program's ``runtime/`` folder (``TREE`` has its binaries unpacked); ``runtime.json`` says what
it holds. Nothing here is imported to run it: the program runs ``runtime/bin/python{python}``
through the image's dynamic loader.
"""

from pathlib import Path

ZIP = Path(__file__).resolve().parent / "runtime.zip"
TREE = Path(__file__).resolve().parent / "runtime"
'''
_DESCRIPTION = """\
# metascore-runtime

The meta-scoring program's own Python for metascore
bundles: a relocatable CPython {python} with {packages}, built with `zig cc` for glibc
{glibc} from pinned sources, so that a Codabench meta phase runs in whatever image the
competition has (any Linux x86_64 image with glibc >= 2.17, with or without a Python).

Install it with metascore: `pip install 'metascore[runtime]'`. `metascore bundle zip`,
`bundle run` and `bundle add-meta` then put it into the bundle's `meta_scoring_program/runtime/`
without building anything; `metascore bundle runtime list` shows where each runtime comes from.
It is not a Python to run on its own: metascore runs it through the image's dynamic loader.

Recipe key `{key}` (metascore uses the wheel whose key is its own recipe's).
Licenses: CPython (PSF-2.0) and each package's own, in its `*.dist-info` folder under
`metascore_runtime/runtime/lib/python{python}/site-packages/`.
"""


def wheel_name(version: str) -> str:
    """The wheel's file name for ``version``."""
    return f"{PACKAGE}-{version}-py3-none-{'.'.join(PLATFORM_TAGS)}.whl"


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _metadata(version: str, manifest: dict) -> str:
    packages = ", ".join(p.replace("==", " ") for p in manifest.get("packages", []))
    description = _DESCRIPTION.format(python=manifest.get("python"), packages=packages or "packages",
                                      glibc=manifest.get("glibc"), key=manifest.get("key"))
    headers = [
        ("Metadata-Version", "2.1"), ("Name", DISTRIBUTION), ("Version", version),
        ("Summary", f"The meta-scoring program's own Python for metascore bundles: CPython "
                    f"{manifest.get('python')} with numpy, scipy, pandas and PyYAML, for any Linux "
                    "x86_64 image with glibc >= 2.17"),
        ("License", "PSF-2.0 AND BSD-3-Clause AND MIT AND others: each package's license "
                    "files are in its dist-info folder in the runtime"),
        ("Requires-Python", ">=3.10"),
        ("Classifier", "Operating System :: POSIX :: Linux"),
        ("Classifier", "Programming Language :: Python :: Implementation :: CPython"),
        ("Description-Content-Type", "text/markdown"),
    ]
    return "".join(f"{k}: {v}\n" for k, v in headers) + "\n" + description


def _wheel_file() -> str:
    lines = ["Wheel-Version: 1.0", "Generator: metascore bundle runtime build --wheel",
             "Root-Is-Purelib: false"] + [f"Tag: py3-none-{tag}" for tag in PLATFORM_TAGS]
    return "\n".join(lines) + "\n"


def write_wheel(tree: Path, archive: Path, manifest: dict, dest: Path, version: str) -> Path:
    """Pack the runtime ``tree`` (its ``bin/``, ``lib/``...), its zip ``archive`` and its
    ``manifest`` into the platform wheel of ``version`` in the folder ``dest``; return its
    path."""
    tree, dest = Path(tree), Path(dest)
    if not (tree / "bin").is_dir() or not Path(archive).is_file():
        raise MetascoreError(f"{tree}: not a runtime build (no bin/ in it, or no {archive}).")
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / wheel_name(version)
    info = f"{PACKAGE}-{version}.dist-info"
    generated = {
        f"{PACKAGE}/__init__.py": _INIT.format(python=manifest.get("python")).encode(),
        f"{PACKAGE}/{RUNTIME_MANIFEST}": (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode(),
    }
    record: list[str] = []
    with replacing(target) as part, zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as zf:
        def add(name: str, data: bytes, mode: int = 0o644, method: int = zipfile.ZIP_DEFLATED) -> None:
            member = zipfile.ZipInfo(name, _EPOCH)
            member.external_attr = (stat.S_IFREG | mode) << 16
            member.compress_type = method
            zf.writestr(member, data)
            record.append(f"{name},{_record_hash(data)},{len(data)}")

        for name, data in generated.items():
            add(name, data)
        add(f"{PACKAGE}/{RUNTIME_ZIP}", Path(archive).read_bytes(), method=zipfile.ZIP_STORED)
        for path in sorted(p for p in tree.rglob("*") if p.is_file() and is_elf(p)):
            executable = path.stat().st_mode & stat.S_IXUSR
            add(f"{PACKAGE}/{_TREE}/{path.relative_to(tree).as_posix()}", path.read_bytes(),
                0o755 if executable else 0o644)
        add(f"{info}/METADATA", _metadata(version, manifest).encode())
        add(f"{info}/WHEEL", _wheel_file().encode())
        add(f"{info}/top_level.txt", f"{PACKAGE}\n".encode())
        name = f"{info}/RECORD"
        record.append(f"{name},,")
        member = zipfile.ZipInfo(name, _EPOCH)
        member.external_attr = (stat.S_IFREG | 0o644) << 16
        zf.writestr(member, "\n".join(record) + "\n", zipfile.ZIP_DEFLATED)
    return target


def installed_wheel() -> tuple[Path, dict, str] | None:
    """The installed ``metascore-runtime``: its package folder, its manifest and its
    version; None when it is not installed (or its manifest cannot be read)."""
    try:
        dist = distribution(DISTRIBUTION)
    except PackageNotFoundError:
        return None
    folder = Path(str(dist.locate_file(PACKAGE)))
    try:
        manifest = json.loads((folder / RUNTIME_MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (folder / RUNTIME_ZIP).is_file():
        return None
    return folder, manifest, dist.version
