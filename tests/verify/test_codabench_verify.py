"""Issue 53 item 1: ``metascore codabench verify`` as an anonymous visitor or a participant,
against a replayed site that shows what Codabench shows everyone (``codabench_replay``).

The ranking page and the "Final ranking" page are the organizer's (``verify_fixtures``); the
public leaderboards round each score to its column's precision and leave the hidden column
out, as ``get_leaderboard`` does. Competition 41 has two tasks per phase, so its leaderboard
rows show a task's submission and are matched to the ranked ones by their owner.
"""

from __future__ import annotations

import pytest

from codabench_replay import TOKEN
from metascore.codabench import TOKEN_ENV
from verify_fixtures import (META_SUBMISSION, SINGLE_TASK, publish_competition, record_of, run, serve_page, served,
                             with_record)


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    return publish_competition(tmp_path_factory.mktemp("published"))


@pytest.fixture
def site(published, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with served(published) as replay:
        yield replay


def _verify(site, *extra: str, competition: int = 41) -> tuple[int, list[str], str]:
    rc, out, err = run("codabench", "verify", "--site", site.url, "--competition", str(competition),
                       "--retries", "0", "--timeout", "5", *extra)
    return rc, out.splitlines(), err


def _board(site, phase_id: int) -> dict:
    return site.routes[("GET", f"/api/phases/{phase_id}/get_leaderboard/", "")][0].body


def test_an_anonymous_visitor_finds_the_published_ranking_matches(site):
    rc, lines, err = _verify(site)
    assert (rc, err) == (0, ""), lines
    assert lines[-1] == ("match: the published ranking of phase 'Final' (3 ranked, winner alice (alice-611), "
                         "method average_rank) is what its published configuration gives on the public leaderboard")
    # only what anyone may read, without credentials: no export, no submission list, no data
    asked = {(q.method, q.path) for q in site.log}
    assert asked == {("GET", "/api/competitions/41/"), ("GET", f"/api/submissions/{META_SUBMISSION}/get_detail_result/"),
                     ("GET", f"/storage/detailed_results_{META_SUBMISSION}.html"),
                     ("GET", "/api/phases/101/get_leaderboard/"), ("GET", "/api/phases/102/get_leaderboard/")}
    assert all("Authorization" not in q.headers for q in site.log)


def test_a_participant_finds_the_same(site, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    rc, lines, _ = _verify(site)
    assert rc == 0 and lines[-1].startswith("match: ")
    assert all(q.headers.get("Authorization") == f"Token {TOKEN}" for q in site.log if q.path.startswith("/api/"))
    assert all("Authorization" not in q.headers for q in site.log if q.path.startswith("/storage/"))


def test_the_leaderboards_rounding_is_not_a_difference(site):
    """The leaderboard shows alice's development RMSE 0.7123 as '0.712' (precision 3): the
    page's value rounds to it, so it is the page's that counts."""
    (row,) = [r for r in _board(site, 101)["submissions"] if r["owner"] == "alice"]
    assert {"column_key": "rmse", "score": "0.712"}.items() <= next(
        s for s in row["scores"] if s["column_key"] == "rmse").items()
    assert _verify(site)[0] == 0


def test_a_submission_taken_off_the_leaderboard_is_named(site):
    board = _board(site, 102)
    board["submissions"] = [r for r in board["submissions"] if r["owner"] != "jean-luc"]
    rc, lines, _ = _verify(site)
    assert rc == 1 and lines[-4].startswith("MISMATCH: the published ranking of phase 'Final'")
    assert ("  - jean-luc-621 (jean-luc, submission 621): on the page's board of phase 'Final', but no "
            "longer in the public leaderboard of that phase") in lines


def test_a_score_changed_since_is_named(site):
    (row,) = [r for r in _board(site, 102)["submissions"] if r["owner"] == "bob"]
    (cell,) = [s for s in row["scores"] if s["column_key"] == "accuracy"]
    cell["score"] = "0.99"
    rc, lines, _ = _verify(site)
    assert rc == 1
    assert ("  - bob-631 (bob, submission 631): judge 'iris/accuracy' in phase 'Final' was 0.9 when the "
            "ranking was made; the public leaderboard now says 0.99") in lines
    assert any(line.startswith("  - bob-631 (bob, submission 631) on the final board: published position 3")
               for line in lines)


def test_a_weight_changed_in_the_published_configuration_is_found(site, published):
    record = record_of(published.page)
    record["config"]["judges"][1]["weight"] = 3.0
    site.replace("GET", f"/storage/detailed_results_{META_SUBMISSION}.html", [], query="sig=1")
    serve_page(site, with_record(published.page, record))
    rc, lines, _ = _verify(site)
    assert rc == 1 and any("published position 1" in line for line in lines)
    assert "does not follow from the configuration the page publishes" in lines[-1]


def test_a_final_ranking_page_that_disagrees_with_the_ranking_page_is_named(site):
    (detail,) = site.routes[("GET", "/api/competitions/41/", "")]
    page = detail.body["pages"][0]
    page["content"] = page["content"].replace("| 1 | alice |", "| 1 | mallory |")
    rc, lines, _ = _verify(site)
    assert rc == 1
    assert ("  - the 'Final ranking' page lists 'mallory' at position 1, the ranking page 'alice' at "
            "position 1") in lines


def test_a_ranking_that_counts_a_hidden_column_cannot_be_checked(tmp_path, monkeypatch):
    config = tmp_path / "metascore.yaml"
    config.write_text("phases: {development: Development, final: Final}\n"
                      "judges:\n  - {task: iris, metric: accuracy}\n  - {task: iris, metric: duration, direction: lower}\n")
    published = publish_competition(tmp_path, str(config))
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with served(published) as replay:
        rc, lines, _ = _verify(replay)
    assert rc == 1
    assert lines[-2].startswith("cannot check: the published ranking of phase 'Final'")
    assert "judges ['iris/duration'], on columns the competition hides" in lines[-1]


def test_no_published_ranking_is_one_line(site):
    (detail,) = site.routes[("GET", "/api/competitions/41/", "")]
    detail.body["pages"] = []
    rc, lines, err = _verify(site)
    assert rc == 1 and lines == [] and err.count("\n") == 1
    assert "'Final ranking' page publishes no final ranking" in err and "--submission" in err


def test_detailed_results_not_shown_to_a_visitor_is_one_line(site):
    site.replace("GET", f"/api/submissions/{META_SUBMISSION}/get_detail_result/", [])
    site.add("GET", f"/api/submissions/{META_SUBMISSION}/get_detail_result/",
             {"error_msg": "You do not have permission to see the detailed result."}, status=403)
    rc, _, err = _verify(site)
    assert rc == 1 and err.count("\n") == 1 and "give a participant's token" in err


# ---------------------------------------------------------------------- one task per phase
@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return publish_competition(tmp_path_factory.mktemp("template"), comp=SINGLE_TASK)


@pytest.fixture
def template_site(template, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with served(template) as replay:
        yield replay


def test_one_task_per_phase_rows_are_matched_by_submission_id(template_site):
    """The template: each leaderboard row is the ranked submission itself (the migrated final
    copies with their own ids), matched by id, its time checked; the shared first place is
    alice's, the earlier development submission."""
    rc, lines, _ = _verify(template_site, competition=7)
    assert rc == 0, lines
    assert lines[-1].startswith("match: the published ranking of phase 'Final' (4 ranked, winner zoe (zoe-10) "
                                "and carol (carol-7), method average_rank)")
    assert not any("matched by their owner" in line for line in lines)


def test_a_removed_final_copy_is_named(template_site):
    board = _board(template_site, 42)
    board["submissions"] = [r for r in board["submissions"] if r["id"] != 11]
    rc, lines, _ = _verify(template_site, competition=7)
    assert rc == 1
    assert ("  - bob-11 (bob, submission 11): on the page's board of phase 'Final', but no longer in the "
            "public leaderboard of that phase") in lines


def test_a_changed_submission_time_is_named(template_site):
    (row,) = [r for r in _board(template_site, 41)["submissions"] if r["id"] == 1]
    row["created_when"] = "2026-03-30T10:00:00.000000Z"
    rc, lines, _ = _verify(template_site, competition=7)
    assert rc == 1
    assert any(line.startswith("  - zoe-1 (zoe, submission 1): submitted at 2026-02-01T10:00:00 on the page, at "
                               "2026-03-30T10:00:00") for line in lines), lines
