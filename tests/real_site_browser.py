"""Codabench's own pages in headless Chromium, as a participant, a logged-out visitor and the
organizer see them (the real-site tests, ``tests/real_site/``).

Playwright (PyPI ``playwright``, its driver only: no browser is downloaded) drives Debian's
``/usr/bin/chromium``. The site's front end is built from the pinned commit and its CDN files
are answered from npm packages at the versions the template names
(``tools/codabench_site/front_end.py``); any other request leaving this machine is refused and
recorded (:attr:`Browser.blocked`), so nothing is fetched from outside. Screenshots go to
``$CODABENCH_SITE_HOME/evidence/<folder>/`` and stay there as the tests' artefacts.
"""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlsplit

from real_site import evidence  # noqa: F401 (the browser tests' screenshots go there)
from repo_paths import ROOT

sys.path.insert(0, str(ROOT / "tools" / "codabench_site"))
import front_end  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
#: What EasyMDE's script asks for by itself when a Markdown editor is made (the upload form's):
#: its icon font and the spell checker's dictionary, "latest" on CDNs the template does not
#: name. Refused like anything else from outside; the pages work without them.
EASYMDE_EXTRAS = ("https://maxcdn.bootstrapcdn.com/font-awesome/latest/",
                  "https://cdn.jsdelivr.net/codemirror.spell-checker/latest/")
LOCAL = ("127.0.0.1", "localhost")
#: Codabench's competition page is laid out for a desktop window.
VIEWPORT = {"width": 1400, "height": 1000}


class Browser:
    """One headless Chromium; :meth:`page` opens a page as a user (``None``: logged out)."""

    def __init__(self, site: str, shots: Path) -> None:
        from playwright.sync_api import sync_playwright

        front_end.build()
        self.site, self.shots = site.rstrip("/"), shots
        self.blocked: list[str] = []  # requests to outside this machine, refused
        self.errors: list[str] = []
        self._pw = sync_playwright().start()
        self._browser = self._pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                 args=["--no-sandbox", "--disable-gpu"])

    def close(self) -> None:
        self._browser.close()
        self._pw.stop()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _route(self, route, request) -> None:
        url = request.url
        host = urlsplit(url).hostname or ""
        if host in LOCAL:
            path = urlsplit(url).path
            if url.startswith(self.site + "/static/"):
                answer = route.fetch()
                if answer.status == 404:
                    found = front_end.static_file(path[len("/static/"):])
                    if found is not None:
                        route.fulfill(status=200, body=found[0], content_type=found[1])
                        return
                route.fulfill(response=answer)
                return
            route.continue_()
            return
        found = front_end.resolve(url)
        if found is None:
            self.blocked.append(url)
            route.abort()
            return
        route.fulfill(status=200, body=found[0], content_type=found[1],
                      headers={"Access-Control-Allow-Origin": "*"})

    def page(self, user: str | None = None, password: str | None = None):
        context = self._browser.new_context(viewport=VIEWPORT)
        context.route("**/*", self._route)
        page = context.new_page()
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        if user is not None:
            page.goto(f"{self.site}/accounts/login/")
            page.fill("#id_username", user)
            page.fill("input[name=password]", password or "")
            page.click("button[type=submit]")
            page.wait_for_load_state("networkidle")
        return page

    def shot(self, page, name: str, *, full: bool = False) -> Path:
        path = self.shots / f"{name}.png"
        page.screenshot(path=str(path), full_page=full)
        return path


def open_full_ranking(page, site: str):
    """Follow the "Final ranking" page's link to the whole ranking; the frame of its
    ``detailed_results.html`` (``competition-detailed-results``' iframe), once shown."""
    link = page.locator(".pages-tab a:has-text('The full final ranking')")
    assert link.count() == 1
    href = link.get_attribute("href")
    page.goto(href if href.startswith("http") else site.rstrip("/") + href)
    page.wait_for_load_state("networkidle")
    frame = page.frame_locator("competition-detailed-results iframe")
    frame.locator("h1").wait_for()
    return frame
