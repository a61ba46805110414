"""Issue 46: the outcome where participants look first (``metascore codabench publish``).

The "Final ranking" page gets the winner, the top of the board, the counts, the rule and the
link to the whole ranking between two markers (replaced, never stacked, on a second publish);
the meta task's name on the Results tab names the winner. Run against a local stand-in of the
site (``codabench_replay``) with the meta program's real output.
"""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from codabench_replay import TOKEN, Answer, Replay, serve
from metascore.cli import main
from metascore.codabench import TOKEN_ENV
from metascore.codabench.publish import (MARK_END, MARK_START, outcome_of, page_section, task_title,
                                         with_section)
from metascore.config import parse_config
from metascore.leaderboard import build_leaderboard
from metascore.readers.configured import load_scores
from metascore.render.writers import render_outputs
from shared_competition import CONFIG, FIXTURE

HOW = "# Final ranking\n\nHow participants are compared: ...\n"


def _board() -> dict:
    config = parse_config(CONFIG)
    table = load_scores(config.input, FIXTURE, development=config.phases.development)
    return json.loads(render_outputs(build_leaderboard(table, config))["leaderboard.json"])


def test_the_outcome_is_read_from_the_meta_programs_board():
    board = _board()
    out = outcome_of(board)
    ranked = [r for r in board["final"]["rows"] if r["position"] is not None]
    assert out.n_ranked == len(ranked) and out.phase == board["final"]["phase"]
    assert out.winners == tuple(r["participant"] or r["candidate"] for r in ranked if r["position"] == 1)
    assert out.n_excluded == sum(r["position"] is None and not r["is_baseline"] for r in board["final"]["rows"])
    assert out.rule.startswith("only those who beat")


def test_the_page_section_is_replaced_not_stacked():
    out = outcome_of(_board())
    first = with_section(HOW, page_section(out, "https://site/competitions/1/detailed_results/9/", 9, "then"))
    assert first.startswith(MARK_START) and first.endswith(HOW) and first.count(MARK_END) == 1
    assert f"## Result: {out.winners[0]} wins" in first or "share first place" in first
    assert "[The full final ranking](https://site/competitions/1/detailed_results/9/)" in first
    again = with_section(first, page_section(out, "https://site/competitions/1/detailed_results/10/", 10, "now"))
    assert again.count(MARK_START) == 1 and "/detailed_results/10/" in again and "/detailed_results/9/" not in again
    assert again.endswith(HOW)


def test_the_task_name_names_the_winner_within_the_sites_limit():
    out = outcome_of(_board())
    name = task_title(out)
    assert name.startswith(f"Final ranking: {out.winners[0]}") and len(name) <= 256
    crowd = out.__class__(tuple(f"p{i:03d}" for i in range(80)), (), 80, 0, "mean", "Final", "every participant is ranked")
    assert len(task_title(crowd)) == 256


def test_markdown_in_names_is_shown_not_rendered():
    out = outcome_of(_board())
    odd = out.__class__(("a*b_c|d<e>",), ((1, "a*b_c|d<e>", 1.0),), 1, 0, "mean", "Final", "x")
    text = page_section(odd, "https://site/x", 1, "now")
    assert "a\\*b\\_c\\|d&lt;e&gt;" in text and "<e>" not in text


@pytest.fixture
def site(monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    r = Replay()
    r.load("competition_41.json")
    stop = serve(r)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("leaderboard.json", json.dumps(_board()))
    r.replace("GET", "/api/submissions/", [Answer(200, [
        {"id": 777, "owner": "alice", "parent": None, "status": "Failed", "created_when": None},
        {"id": 778, "owner": "organizers", "parent": None, "status": "Finished", "created_when": None},
        {"id": 779, "owner": "organizers", "parent": None, "status": "Running", "created_when": None},
    ])], query="phase=103")
    r.add("GET", "/api/submissions/778/get_details/", {"scoring_result": f"{r.url}/storage/s778.zip?sig=1"})
    r.add("GET", "/storage/s778.zip", buf.getvalue(), query="sig=1", content_type="application/zip")
    r.add("PATCH", "/api/competitions/41/", {})
    r.add("GET", "/api/tasks/205/", {"id": 205, "name": "meta-ranking", "input_data": None,
                                     "ingestion_program": None, "reference_data": {"key": "ref-key"},
                                     "scoring_program": {"key": "program-key"}})
    r.add("PATCH", "/api/tasks/205/", {"detail": "Cannot update a task that is not yours"}, status=403)
    yield r
    stop()


def test_publish_again_writes_the_page_of_the_newest_finished_submission(site, capsys):
    """`codabench publish` picks the newest Finished submission (only the organizer's signed
    export finishes in the meta phase), keeps every other page and the whitelist (the site's
    update replaces them whole), and a refused rename is one warning, not a failure."""
    (answer,) = site.routes[("GET", "/api/competitions/41/", "")]
    answer.body["pages"] = [{"id": 5, "title": "Overview", "content": "Hello", "index": 0},
                            {"id": 6, "title": "Final ranking", "content": HOW, "index": 1}]
    answer.body["whitelist_emails"] = ["a@example.org"]
    rc = main(["codabench", "publish", "--site", site.url, "--competition", "41"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    (patch,) = [q for q in site.log if q.method == "PATCH" and q.path == "/api/competitions/41/"]
    body = patch.json()
    assert body["whitelist_emails"] == ["a@example.org"]
    assert [(p["id"], p["title"]) for p in body["pages"]] == [(5, "Overview"), (6, "Final ranking")]
    assert body["pages"][0]["content"] == "Hello"
    page = body["pages"][1]["content"]
    assert page.startswith(MARK_START) and page.endswith(HOW) and "/detailed_results/778/" in page
    assert "[!] the Results tab keeps the meta task's name" in out and "not yours" in out
    assert TOKEN not in out + err


def test_publish_without_a_finished_submission_is_one_line(site, capsys):
    site.replace("GET", "/api/submissions/", [Answer(200, [])], query="phase=103")
    rc = main(["codabench", "publish", "--site", site.url, "--competition", "41"])
    err = capsys.readouterr().err
    assert rc == 1 and err.count("\n") == 1 and "has no Finished submission to publish" in err
