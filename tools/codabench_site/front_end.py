#!/usr/bin/env python3
"""Codabench's own pages in a headless browser on this machine: its front end and CDN files.

The site's templates (``src/templates/base.html``) load their front end from two places:

- ``/static/generated/riot.js`` and ``output.css``, which the repository does not hold: they
  are built from ``src/static/riot/*.tag`` and ``src/static/stylus`` with the repository's
  ``package.json`` (``npm install``, ``npm run build-stylus``, ``npm run build-riot``);
- semantic-ui, jquery, lodash, riot's compiler, toastr, easymde, katex, bootstrap-icons and
  others from CDNs, which cannot be reached here. The npm packages at the exact versions the
  template names answer them (:data:`CDN`), installed once from the npm registry; an
  unversioned URL (``easymde``, ``toastr.js/latest``) gets the version npm serves as latest,
  as the CDN does; two files the packages ship only unminified (``particles.js`` 2.0.0,
  ``filesize`` 4.2.1: no integrity attribute) are served unminified. jquery.address 1.6,
  which the template loads with an SRI hash, ships on npm only unminified: the byte-identical
  minified file is read from a checkout of github ``asual/jquery-address``
  (``$JQUERY_ADDRESS_SRC``) and its hash checked.

:func:`build` does both into ``$CODABENCH_SITE_HOME/front/`` (about 40 s the first time, then
reused); :func:`resolve` maps a URL the browser asks for to a file. The site itself is left
as it is (with ``DEBUG=False`` whitenoise indexes its static files when it starts, and the
shared site is not restarted for a test): the browser's route handler answers
``/static/...`` from the built tree when the site answers 404 for it. Only the standard
library is used here.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from site_base import HOME, PINNED_COMMIT

FRONT = HOME / "front"
#: npm packages at the versions ``base.html`` names (c7dbc756).
PACKAGES = {
    "semantic-ui-css": "2.4.1", "easymde": "2.21.0", "toastr": "2.1.4", "bootstrap-icons": "1.10.5",
    "katex": "0.13.11", "lodash": "4.17.11", "jquery": "3.2.1", "riot": "3.13.2",
    "particles.js": "2.0.0", "dompurify": "1.0.10", "luxon": "1.13.1", "filesize": "4.2.1",
    "gsap": "3.0.1", "file-saver": "2.0.5", "jszip": "3.10.1", "marked": "3.0.7",
}
#: URL prefix -> file or folder under ``front/cdn/node_modules/`` (longest prefix first).
CDN = {
    "https://cdnjs.cloudflare.com/ajax/libs/semantic-ui/2.4.1/": "semantic-ui-css/",
    "https://cdn.jsdelivr.net/npm/easymde/dist/": "easymde/dist/",
    "https://cdnjs.cloudflare.com/ajax/libs/toastr.js/latest/": "toastr/build/",
    "https://cdn.jsdelivr.net/npm/bootstrap-icons@1.10.5/": "bootstrap-icons/",
    "https://cdn.jsdelivr.net/npm/katex@0.13.11/": "katex/",
    "https://cdnjs.cloudflare.com/ajax/libs/lodash.js/4.17.11/": "lodash/",
    "https://cdnjs.cloudflare.com/ajax/libs/jquery/3.2.1/": "jquery/dist/",
    "https://cdnjs.cloudflare.com/ajax/libs/riot/3.13.2/": "riot/",
    "https://cdn.jsdelivr.net/particles.js/2.0.0/particles.min.js": "particles.js/particles.js",
    "https://cdnjs.cloudflare.com/ajax/libs/dompurify/1.0.10/": "dompurify/dist/",
    "https://cdn.jsdelivr.net/npm/luxon@1.13.1/": "luxon/",
    "https://cdnjs.cloudflare.com/ajax/libs/filesize/4.2.1/filesize.min.js": "filesize/lib/filesize.js",
    "https://cdn.jsdelivr.net/npm/gsap@3.0.1/": "gsap/",
    "https://cdn.jsdelivr.net/npm/file-saver@^2.0.5": "file-saver/dist/FileSaver.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/jszip/3.10.1/": "jszip/dist/",
    "https://cdn.jsdelivr.net/npm/marked@3.0.7/": "marked/",
}
JQUERY_ADDRESS = "https://cdnjs.cloudflare.com/ajax/libs/jquery.address/1.6/jquery.address.min.js"
JQUERY_ADDRESS_SRI = "mLCPYHfNREhSETFQGuowilY3zBAZGnDO2cxCnCEm8/I="
#: Web fonts the template asks Google for: answered with an empty style sheet.
EMPTY = ("https://fonts.googleapis.com/",)
TYPES = {".js": "application/javascript", ".css": "text/css", ".woff2": "font/woff2", ".woff": "font/woff",
         ".ttf": "font/ttf", ".eot": "application/vnd.ms-fontobject", ".svg": "image/svg+xml",
         ".png": "image/png", ".ico": "image/x-icon", ".html": "text/html"}


class FrontError(RuntimeError):
    pass


def _npm(args: list[str], cwd: Path) -> None:
    proc = subprocess.run(["npm", *args], cwd=cwd, capture_output=True, text=True, timeout=1200)
    if proc.returncode != 0:
        raise FrontError(f"npm {' '.join(args)} in {cwd} failed:\n{(proc.stdout + proc.stderr)[-3000:]}")


def build(src: str | None = None) -> Path:
    """``front/`` with ``cdn/node_modules`` and ``build/src/static`` (riot.js and output.css
    generated); made once, then reused. ``src``: a git directory holding the pinned commit
    (default ``$CODABENCH_SRC``, else the site's checkout)."""
    done = FRONT / "done.json"
    want = {"commit": PINNED_COMMIT, "packages": PACKAGES}
    if done.is_file() and json.loads(done.read_text()) == want:
        return FRONT
    cdn, front = FRONT / "cdn", FRONT / "build"
    for folder in (cdn, front):
        folder.mkdir(parents=True, exist_ok=True)
    (cdn / "package.json").write_text(json.dumps({"name": "codabench-cdn-stand-in", "version": "0.0.0",
                                                  "private": True, "dependencies": PACKAGES}, indent=1))
    _npm(["install", "--no-audit", "--no-fund", "--ignore-scripts"], cdn)
    git = src or os.environ.get("CODABENCH_SRC") or str(HOME / "codabench")
    archive = subprocess.run(["git", "-C", git, "archive", PINNED_COMMIT, "package.json", "src/static"],
                             capture_output=True, timeout=300)
    if archive.returncode != 0:
        raise FrontError(f"git archive of {PINNED_COMMIT} from {git}: {archive.stderr.decode()[-500:]}")
    subprocess.run(["tar", "-x", "-C", str(front)], input=archive.stdout, check=True)
    _npm(["install", "--no-audit", "--no-fund"], front)
    _npm(["run", "build-stylus"], front)
    _npm(["run", "build-riot"], front)
    done.write_text(json.dumps(want))
    return FRONT


def jquery_address() -> bytes:
    """jquery.address 1.6 minified, byte for byte the file the template's SRI hash names."""
    repo = os.environ.get("JQUERY_ADDRESS_SRC", "/work/.mirror/asual+jquery-address/repo")
    proc = subprocess.run(["git", "-C", repo, "show", "HEAD:test/jquery.address-1.6.min.js"],
                          capture_output=True, timeout=60)
    data = proc.stdout if proc.returncode == 0 else b""
    if base64.b64encode(hashlib.sha256(data).digest()).decode() != JQUERY_ADDRESS_SRI:
        raise FrontError(f"no jquery.address 1.6 minified with the template's SRI hash in {repo} "
                         "(a checkout of github asual/jquery-address; $JQUERY_ADDRESS_SRC)")
    return data


def resolve(url: str) -> tuple[bytes, str] | None:
    """The body and content type that answer ``url`` (a CDN file), or None when it is not one."""
    bare = url.split("?", 1)[0].split("#", 1)[0].replace("%5E", "^")
    if bare == JQUERY_ADDRESS:
        return jquery_address(), TYPES[".js"]
    if bare.startswith(EMPTY):
        return b"", TYPES[".css"]
    modules = FRONT / "cdn" / "node_modules"
    for prefix in sorted(CDN, key=len, reverse=True):
        if bare == prefix or (prefix.endswith("/") and bare.startswith(prefix)):
            target = CDN[prefix]
            path = modules / (target + bare[len(prefix):] if target.endswith("/") else target)
            if path.is_file():
                return path.read_bytes(), TYPES.get(path.suffix, "application/octet-stream")
            return None
    return None


def static_file(path: str) -> tuple[bytes, str] | None:
    """A ``/static/...`` file from the built tree (``path`` after ``/static/``)."""
    root = (FRONT / "build" / "src" / "static").resolve()
    target = (root / path.split("?", 1)[0]).resolve()
    if root in target.parents and target.is_file():
        return target.read_bytes(), TYPES.get(target.suffix, "application/octet-stream")
    return None


if __name__ == "__main__":
    print(build(sys.argv[1] if len(sys.argv) > 1 else None))
