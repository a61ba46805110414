"""Where the runtime's source tarballs come from: the Debian archive this machine's apt
configuration names, as apt itself would reach it, or ``$METASCORE_DEBIAN_MIRROR``.

No archive host is written in the code: a machine behind a local mirror, or a proxy that lets
only its own mirror through, builds from that mirror. The tarballs are pinned by path and
sha256 (:data:`~metascore.bundle.runtime.build.SOURCES`), so any mirror serves the same
bytes or the build stops; the archive is not part of the build's cache key.

The apt configuration read is the one apt reads by default: ``/etc/apt/sources.list`` (one
line per source) and, in name order, ``/etc/apt/sources.list.d/*.list`` and ``*.sources``
(deb822 stanzas). The archive is the first enabled ``deb``/``deb-src`` source with the
``main`` component and a Debian suite (this system's codename when it is Debian, or
``stable``, ``testing``, ``unstable``, ...; a ``-security`` suite alone is not the archive,
whose ``pool/`` holds other files), or one signed by Debian's archive keyring.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ...errors import MetascoreError

__all__ = ["MIRROR_VARIABLE", "AptSource", "apt_sources", "debian_archive", "find_debian_archive"]

#: The environment variable that names the Debian archive (a mirror's URL) instead of apt's.
MIRROR_VARIABLE = "METASCORE_DEBIAN_MIRROR"
_APT = Path("/etc/apt")
_SUITE_NAMES = frozenset({"stable", "testing", "unstable", "sid", "oldstable", "oldoldstable",
                          "experimental"})
_SUITE_SUFFIXES = ("-updates", "-backports", "-proposed-updates", "-backports-sloppy")


@dataclass(frozen=True)
class AptSource:
    """One source of apt's configuration (a line, or one URI of a deb822 stanza)."""

    types: tuple[str, ...]
    uri: str
    suites: tuple[str, ...]
    components: tuple[str, ...]
    signed_by: str = ""
    enabled: bool = True
    file: str = ""


def apt_sources(root: Path = _APT) -> list[AptSource]:
    """The sources of the apt configuration under ``root``, in the order apt reads them."""
    files = [root / "sources.list"] if (root / "sources.list").is_file() else []
    parts = root / "sources.list.d"
    if parts.is_dir():
        files += sorted(p for p in parts.iterdir() if p.suffix in (".list", ".sources") and p.is_file())
    found: list[AptSource] = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found += _deb822(text, str(path)) if path.suffix == ".sources" else _one_line(text, str(path))
    return found


def _one_line(text: str, file: str) -> list[AptSource]:
    """``deb [options] URI SUITE [COMPONENT...]`` lines."""
    found = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        options = ""
        if "[" in line and "]" in line:  # deb [arch=amd64 signed-by=...] URI ...
            options = line[line.index("[") + 1:line.index("]")]
            line = line[:line.index("[")] + line[line.index("]") + 1:]
        words = line.split()
        if len(words) >= 3 and words[0] in ("deb", "deb-src"):
            signed = re.search(r"signed-by=(\S+)", options)
            found.append(AptSource((words[0],), words[1], (words[2],), tuple(words[3:]),
                                   signed.group(1) if signed else "", True, file))
    return found


def _deb822(text: str, file: str) -> list[AptSource]:
    """Stanzas of ``Types:``, ``URIs:``, ``Suites:``, ``Components:`` fields."""
    found = []
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        key = None
        for line in stanza.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            if line[0] in " \t" and key is not None:  # a continuation line
                fields[key] += " " + line.strip()
            elif ":" in line:
                key, value = line.split(":", 1)
                key = key.strip().lower()
                fields[key] = value.strip()
        types = tuple(fields.get("types", "").split())
        enabled = fields.get("enabled", "yes").lower() not in ("no", "false", "0")
        for uri in fields.get("uris", "").split():
            found.append(AptSource(types, uri, tuple(fields.get("suites", "").split()),
                                   tuple(fields.get("components", "").split()),
                                   fields.get("signed-by", ""), enabled, file))
    return found


def _codename(os_release: Path) -> str | None:
    """This system's Debian codename (``/etc/os-release``), or None if it is not Debian."""
    try:
        text = os_release.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    values = dict(re.findall(r'^(\w+)="?([^"\n]*)"?$', text, re.M))
    if values.get("ID") != "debian":
        return None
    return values.get("VERSION_CODENAME") or None


def _is_archive(source: AptSource, codename: str | None) -> bool:
    if not source.enabled or not {"deb", "deb-src"} & set(source.types) or "main" not in source.components:
        return False
    suites = [s for s in source.suites if not s.endswith("-security")]
    if not suites:
        return False
    if "debian-archive-keyring" in source.signed_by:
        return True
    names = _SUITE_NAMES | ({codename} if codename else set())
    return any(_base_suite(s) in names for s in suites)


def _base_suite(suite: str) -> str:
    for suffix in _SUITE_SUFFIXES:
        if suite.endswith(suffix):
            return suite[:-len(suffix)]
    return suite


def find_debian_archive(root: Path = _APT, os_release: Path = Path("/etc/os-release")) -> str | None:
    """The URL of the Debian archive (ending in ``/``) that apt's configuration under
    ``root`` names, or None."""
    codename = _codename(os_release)
    for source in apt_sources(root):
        if _is_archive(source, codename):
            return source.uri.rstrip("/") + "/"
    return None


def debian_archive() -> str:
    """``$METASCORE_DEBIAN_MIRROR``, else the Debian archive of apt's configuration; a
    MetascoreError naming both when there is neither."""
    given = os.environ.get(MIRROR_VARIABLE, "").strip()
    if given:
        return given.rstrip("/") + "/"
    found = find_debian_archive()
    if found is None:
        raise MetascoreError(
            f"building the meta-scoring program's Python needs Debian's source tarballs, and this "
            f"machine's apt configuration ({_APT}/sources.list, {_APT}/sources.list.d/) names no "
            f"Debian archive; set {MIRROR_VARIABLE} to the URL of a Debian mirror (the folder "
            "holding pool/), or install a runtime wheel (pip install 'metascore[runtime]').")
    return found
