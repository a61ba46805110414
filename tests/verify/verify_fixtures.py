"""A competition pulled, ranked and published, for the tests of ``metascore verify``.

``competition_41`` of ``codabench_replay`` (two tasks, a hidden column ``duration``): the
organizer pulls it, ranks the pulled folder with ``metascore rank --config`` (the ranking
page and leaderboard.json the meta-scoring program would write), and the replayed site then
shows what anyone can read: the public leaderboards, the ranking page as submission 778's
detailed results, and the "Final ranking" page's section written by ``publish``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from codabench_replay import TOKEN, Replay, add_public_leaderboards, serve
from metascore.cli import main
from metascore.codabench import TOKEN_ENV
from metascore.codabench.publish import outcome_of, page_section, with_section
from metascore.render.ranking_record import RECORD_ID

META_SUBMISSION = 778
BLOCK = re.compile(r'(<script type="application/json" id="' + RECORD_ID + r'">)(.*?)(</script>)', re.S)


@dataclass(frozen=True)
class Published:
    pulled: Path      # what the organizer pulled
    page: str         # the ranking page (detailed_results.html)
    board: dict       # its leaderboard.json


def run(*args: str) -> tuple[int, str, str]:
    """``metascore ARGS`` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(args))
    return rc, out.getvalue(), err.getvalue()


def publish_competition(folder: Path, config: str | None = None) -> Published:
    """Pull competition 41 as its organizer (``config``: a metascore.yaml to pull with), rank
    the pulled folder as the meta-scoring program would."""
    replay = Replay()
    replay.load("competition_41.json")
    stop = serve(replay)
    old = os.environ.get(TOKEN_ENV)
    os.environ[TOKEN_ENV] = TOKEN
    try:
        extra = ["--config", config] if config else []
        rc, _, err = run("codabench", "pull", "--site", replay.url, "--competition", "41",
                         "--baseline", "organizers", *extra, "--out", str(folder / "pulled"))
        assert rc == 0, err
    finally:
        stop()
        if old is None:
            os.environ.pop(TOKEN_ENV)
        else:
            os.environ[TOKEN_ENV] = old
    rc, _, err = run("rank", "--config", str(folder / "pulled" / "metascore.yaml"),
                     "--input", str(folder / "pulled"), "--output", str(folder / "out"))
    assert rc == 0, err
    return Published(folder / "pulled", (folder / "out" / "detailed_results.html").read_text(),
                     json.loads((folder / "out" / "leaderboard.json").read_text()))


def public_site(published: Published) -> Replay:
    """The replayed site (not yet serving) as anyone reads it once the ranking is published."""
    replay = Replay()
    replay.load("competition_41.json")
    add_public_leaderboards(replay, 41, [101, 102])
    (detail,) = replay.routes[("GET", "/api/competitions/41/", "")]
    link = f"/competitions/41/detailed_results/{META_SUBMISSION}/"
    section = page_section(outcome_of(published.board), "http://site" + link, META_SUBMISSION, "now")
    detail.body["pages"] = [{"id": 6, "title": "Final ranking", "content": with_section("How.\n", section),
                             "index": 0}]
    detail.body["enable_detailed_results"] = True
    return replay


def serve_page(replay: Replay, page: str) -> None:
    """The ranking page as submission 778's detailed results (a signed storage address)."""
    replay.add("GET", f"/api/submissions/{META_SUBMISSION}/get_detail_result/",  # a JSON string
               json.dumps(f"{replay.url}/storage/detailed_results_{META_SUBMISSION}.html?sig=1"))
    replay.add("GET", f"/storage/detailed_results_{META_SUBMISSION}.html", page, query="sig=1",
               content_type="text/html")


def record_of(page: str) -> dict:
    return json.loads(BLOCK.search(page).group(2))


def with_record(page: str, record: dict) -> str:
    """``page`` with its record replaced (as someone editing the page would)."""
    text = json.dumps(record).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return BLOCK.sub(lambda m: m.group(1) + text + m.group(3), page)


def copy_folder(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst
