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


def _board(competition: int = 41, phase_id: int = 103, pulled_at: str = "2027-07-02T10:00:00+00:00") -> dict:
    """The meta program's leaderboard.json for an export signed for ``competition``'s meta
    phase ``phase_id``, pulled at ``pulled_at``."""
    config = parse_config(CONFIG)
    table = load_scores(config.input, FIXTURE, development=config.phases.development)
    board = json.loads(render_outputs(build_leaderboard(table, config))["leaderboard.json"])
    board["input"]["export"] = {"signed_by": "0123456789abcdef", "signed_at": pulled_at,
                                "site": "http://site", "competition": competition, "phase": "Final ranking",
                                "phase_id": phase_id, "tokens": ["ab" * 16], "pulled_at": pulled_at}
    return board


def _zip(board: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("leaderboard.json", json.dumps(board))
    return buf.getvalue()


def _serve_board(r, sub_id: int, board: dict) -> None:
    r.add("GET", f"/api/submissions/{sub_id}/get_details/", {"scoring_result": f"{r.url}/storage/s{sub_id}.zip?sig=1"})
    r.add("GET", f"/storage/s{sub_id}.zip", _zip(board), query="sig=1", content_type="application/zip")


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
    r.replace("GET", "/api/submissions/", [Answer(200, [
        {"id": 777, "owner": "alice", "parent": None, "status": "Failed", "created_when": None},
        {"id": 778, "owner": "organizers", "parent": None, "status": "Finished", "created_when": None},
        {"id": 779, "owner": "organizers", "parent": None, "status": "Running", "created_when": None},
    ])], query="phase=103")
    _serve_board(r, 778, _board())
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
    assert rc == 1 and err.count("\n") == 1 and "has no Finished submission made by an organizer" in err


# ---------------------------------------------------------------------- issue 49, item 2
def _mallory(site, board: dict | None = None) -> None:
    """A participant's Finished meta submission, newer than the organizer's: a replayed export
    whose board says mallory wins."""
    (answer,) = site.routes[("GET", "/api/submissions/", "phase=103")]
    answer.body.append({"id": 780, "owner": "mallory", "parent": None, "status": "Finished", "created_when": None})
    board = board or _board(pulled_at="2027-07-03T10:00:00+00:00")
    board["final"]["rows"][0]["participant"] = "mallory"
    _serve_board(site, 780, board)


def test_publish_keeps_the_organizers_result_after_a_participants_finished_upload(site, capsys):
    _mallory(site)
    rc = main(["codabench", "publish", "--site", site.url, "--competition", "41"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    (patch,) = [q for q in site.log if q.method == "PATCH" and q.path == "/api/competitions/41/"]
    page = next(p["content"] for p in patch.json()["pages"] if p["title"] == "Final ranking")
    assert "/detailed_results/778/" in page and "mallory" not in page
    assert "1 Finished submission(s) of phase 'Final ranking' made by participants are not published" in out
    assert not [q for q in site.log if q.path == "/api/submissions/780/get_details/"]  # never read


def test_publish_refuses_a_participants_submission_named_by_id(site, capsys):
    _mallory(site)
    rc = main(["codabench", "publish", "--site", site.url, "--competition", "41", "--submission", "780"])
    err = capsys.readouterr().err
    assert rc == 1 and err.count("\n") == 1, err
    assert "submission 780 was made by 'mallory', not by an organizer of competition 41 (organizers)" in err
    assert not [q for q in site.log if q.method == "PATCH"]


def test_publish_refuses_an_export_signed_for_another_competition(site, capsys):
    site.replace("GET", "/storage/s778.zip", [Answer(200, _zip(_board(competition=9, phase_id=17)),
                                                     content_type="application/zip")], query="sig=1")
    rc = main(["codabench", "publish", "--site", site.url, "--competition", "41"])
    err = capsys.readouterr().err
    assert rc == 1 and err.count("\n") == 1, err
    assert ("submission 778's results export was signed for competition 9's phase 'Final ranking' (id 17), "
            "not for competition 41's phase 'Final ranking' (id 103)") in err
    assert not [q for q in site.log if q.method == "PATCH"]


def test_publish_takes_the_organizers_newest_pulled_export(site, capsys):
    """Two organizer submissions: the one with the later pull is published, whatever their
    ids; naming the older one is refused with the newer one's id."""
    (answer,) = site.routes[("GET", "/api/submissions/", "phase=103")]
    answer.body.append({"id": 781, "owner": "organizers", "parent": None, "status": "Finished", "created_when": None})
    _serve_board(site, 781, _board(pulled_at="2027-07-01T12:00:00+00:00"))  # resubmitted old pull
    rc = main(["codabench", "publish", "--site", site.url, "--competition", "41"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    (patch,) = [q for q in site.log if q.method == "PATCH" and q.path == "/api/competitions/41/"]
    assert "/detailed_results/778/" in next(p["content"] for p in patch.json()["pages"] if p["title"] == "Final ranking")
    rc = main(["codabench", "publish", "--site", site.url, "--competition", "41", "--submission", "781"])
    err = capsys.readouterr().err
    assert rc == 1 and "only the newest becomes the published result; publish 778" in err, err
