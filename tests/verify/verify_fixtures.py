"""A competition pulled, ranked and published, for the tests of ``metascore verify``.

Two replayed competitions (``codabench_replay``): ``competition_41`` (:data:`MULTI_TASK`: two
tasks per phase, a hidden column ``duration``) and the template as the real site exported it
(:data:`SINGLE_TASK`: one task per phase, the migrated final copies with new ids). The
organizer pulls one, ranks the pulled folder with ``metascore rank --config`` (the ranking
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codabench_replay import TOKEN, Replay, add_bundle_competition, add_phase_results, add_public_leaderboards, serve
from metascore.bundle import load_competition
from metascore.cli import main
from metascore.codabench import TOKEN_ENV
from metascore.codabench.publish import outcome_of, page_section, with_section
from metascore.render.ranking_record import RECORD_ID

META_SUBMISSION = 778
BLOCK = re.compile(r'(<script type="application/json" id="' + RECORD_ID + r'">)(.*?)(</script>)', re.S)


@dataclass(frozen=True)
class Competition:
    id: int
    phases: tuple[int, int]  # development, final
    baseline: str
    fill: Callable[[Replay], None]  # the organizer's view of it


def _template(replay: Replay) -> None:
    """The template as the real site exported it (issue 25): each submission created in id
    order, the migrated final copies at migration time."""
    add_bundle_competition(replay, load_competition(REPO / "bundle_template"), 7,
                           {"Development": 41, "Final": 42, "Final ranking": 43}, {0: 87, 1: 88, 2: 89})
    export = json.loads((REPO / "tests" / "data" / "exports" / "template_results_site_ids.json").read_text())
    for phase, pid in (("Development", 41), ("Final", 42), ("Final ranking", 43)):
        title = f"Results - {phase}({pid})"
        rows = export.get(title, {})
        when = "2026-06-01T00:05:{:02d}.000000Z" if phase == "Final" else "2026-02-{:02d}T10:00:00.000000Z"
        created = {key: when.format(k + 1) for k, key in enumerate(sorted(rows, key=lambda k: int(k.rsplit("-", 1)[1])))}
        add_phase_results(replay, 7, pid, {title: rows}, created, [{"Development": 87, "Final": 88}.get(phase, 89)])


REPO = Path(__file__).resolve().parents[2]
MULTI_TASK = Competition(41, (101, 102), "organizers", lambda replay: replay.load("competition_41.json"))
SINGLE_TASK = Competition(7, (41, 42), "baseline", _template)


@dataclass(frozen=True)
class Published:
    competition: Competition
    pulled: Path      # what the organizer pulled
    page: str         # the ranking page (detailed_results.html)
    board: dict       # its leaderboard.json


def run(*args: str) -> tuple[int, str, str]:
    """``metascore ARGS`` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(args))
    return rc, out.getvalue(), err.getvalue()


def publish_competition(folder: Path, config: str | None = None, comp: Competition = MULTI_TASK) -> Published:
    """Pull ``comp`` as its organizer (``config``: a metascore.yaml to pull with), rank the
    pulled folder as the meta-scoring program would."""
    replay = Replay()
    comp.fill(replay)
    stop = serve(replay)
    old = os.environ.get(TOKEN_ENV)
    os.environ[TOKEN_ENV] = TOKEN
    try:
        extra = ["--config", config] if config else []
        rc, _, err = run("codabench", "pull", "--site", replay.url, "--competition", str(comp.id),
                         "--phase", "Development", "Final", "--baseline", comp.baseline, *extra,
                         "--out", str(folder / "pulled"))
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
    return Published(comp, folder / "pulled", (folder / "out" / "detailed_results.html").read_text(),
                     json.loads((folder / "out" / "leaderboard.json").read_text()))


def public_site(published: Published) -> Replay:
    """The replayed site (not yet serving) as anyone reads it once the ranking is published."""
    comp = published.competition
    replay = Replay()
    comp.fill(replay)
    add_public_leaderboards(replay, comp.id, list(comp.phases))
    (detail,) = replay.routes[("GET", f"/api/competitions/{comp.id}/", "")]
    link = f"/competitions/{comp.id}/detailed_results/{META_SUBMISSION}/"
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


@contextlib.contextmanager
def served(published: Published):
    """The public site of ``published``, serving, with its ranking page."""
    replay = public_site(published)
    stop = serve(replay)
    try:
        serve_page(replay, published.page)
        yield replay
    finally:
        stop()


def record_of(page: str) -> dict:
    return json.loads(BLOCK.search(page).group(2))


def rows_of(board: dict) -> list[dict]:
    """A published board's rows as objects (the record writes each as an array of its
    ``row_fields``)."""
    return [dict(zip(board["row_fields"], row)) for row in board["rows"]]


def with_record(page: str, record: dict) -> str:
    """``page`` with its record replaced (as someone editing the page would)."""
    text = json.dumps(record).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return BLOCK.sub(lambda m: m.group(1) + text + m.group(3), page)


def copy_folder(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst
