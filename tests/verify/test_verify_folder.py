"""Issue 53 item 4: ``metascore verify RANKING_PAGE --input PULLED_DIR``, offline.

The ranking page's record (item 2) read back, the ranking recomputed from a pulled folder with
the configuration the page publishes, and each kind of difference named: a submission removed
from the folder, a score changed in it, a weight changed in the page's configuration.
"""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from metascore.config import parse_config
from metascore.leaderboard import build_leaderboard
from metascore.readers.score_table import ScoreTable
from metascore.render import ranking_record
from metascore.render.report import render_report
from metascore.verify.record import read_record
from verify_fixtures import copy_folder, publish_competition, record_of, rows_of, run, with_record


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    return publish_competition(tmp_path_factory.mktemp("published"))


def _verify(tmp_path, page: str, folder) -> tuple[int, list[str], str]:
    path = tmp_path / "detailed_results.html"
    path.write_text(page)
    rc, out, err = run("verify", str(path), "--input", str(folder))
    return rc, out.splitlines(), err


def test_the_page_and_its_own_folder_match_in_one_line(published, tmp_path):
    rc, lines, err = _verify(tmp_path, published.page, published.pulled)
    assert (rc, err) == (0, "")
    (line,) = lines
    assert line.startswith("match: the published ranking of phase 'Final' (3 ranked, winner alice (alice-611), "
                           "method average_rank) is what its published configuration gives on the folder")


def test_a_submission_removed_from_the_folder_is_named(published, tmp_path):
    folder = copy_folder(published.pulled, tmp_path / "pulled")
    shutil.rmtree(folder / "Final" / "jean-luc-621")
    manifest = folder / "submissions.csv"
    manifest.write_text("".join(line for line in manifest.read_text().splitlines(keepends=True)
                                if "jean-luc-621" not in line))
    rc, lines, _ = _verify(tmp_path, published.page, folder)
    assert rc == 1 and lines[0].startswith("MISMATCH: the published ranking of phase 'Final'")
    assert (f"  - jean-luc-621 (jean-luc, submission 621): on the page's board of phase 'Final', but no "
            f"longer in the folder {folder} of that phase") in lines


def test_a_changed_score_is_named_with_both_values(published, tmp_path):
    folder = copy_folder(published.pulled, tmp_path / "pulled")
    scores = folder / "Final" / "bob-631" / "iris" / "scores.json"
    scores.write_text(json.dumps({**json.loads(scores.read_text()), "accuracy": 0.99}))
    rc, lines, _ = _verify(tmp_path, published.page, folder)
    assert rc == 1
    assert (f"  - bob-631 (bob, submission 631): judge 'iris/accuracy' in phase 'Final' was 0.9 when the "
            f"ranking was made; the folder {folder} now says 0.99") in lines
    assert ("  - bob-631 (bob, submission 631) on the final board: published position 3 (score -2.5), "
            "recomputed position 1 (score -1.5)") in lines


def test_a_weight_changed_in_the_published_configuration_is_found(published, tmp_path):
    record = record_of(published.page)
    record["config"]["judges"][1]["weight"] = 3.0  # wine/rmse counts three times, says the page
    rc, lines, _ = _verify(tmp_path, with_record(published.page, record), published.pulled)
    assert rc == 1
    assert any(line.startswith("  - alice-611 (alice, submission 611) on the final board: published position 1")
               for line in lines), lines
    assert lines[-1].endswith("so the published ranking does not follow from the configuration the page "
                              "publishes (changed since the ranking was made, or not the one it was made with)")


def test_a_page_without_a_record_is_one_line(published, tmp_path):
    page = published.page.replace('id="metascore-ranking"', 'id="other"')
    rc, lines, err = _verify(tmp_path, page, published.pulled)
    assert rc == 1 and lines == [] and err.count("\n") == 1
    assert "holds no ranking record" in err and "cannot be recomputed" in err


def test_a_page_without_its_configuration_says_so(published, tmp_path):
    record = record_of(published.page)
    del record["config"]
    rc, _, err = _verify(tmp_path, with_record(published.page, record), published.pulled)
    assert rc == 1 and "does not publish the configuration its ranking was made with" in err


def test_the_record_holds_each_row_the_leaderboard_row_it_stands_for(published):
    record = record_of(published.page)
    assert record["format"] == "metascore-ranking" and record["version"] == 1
    assert record["config"] == published.board["config"]
    final = record["boards"]["final"]
    assert final["phase"] == "Final" and final["judges"] == ["iris/accuracy", "wine/rmse"]
    assert final["row_fields"] == ["candidate", "participant", "owner", "submission", "baseline", "position",
                                   "score", "qualified", "submitted_at", "values"]
    rows = {r["candidate"]: r for r in rows_of(final)}
    assert rows["jean-luc-621"] | {"values": None} == {
        "candidate": "jean-luc-621", "participant": "jean-luc", "owner": "jean-luc", "submission": 621,
        "baseline": False, "position": 2, "score": -2.0, "qualified": True, "values": None,
        "submitted_at": "2024-03-01T00:05:02"}
    published_rows = {r["candidate"]: r for r in published.board["final"]["rows"]}
    for cand, row in rows.items():
        assert row["values"] == [published_rows[cand]["judges"][j] for j in final["judges"]]
    dev = record["boards"]["development"]
    assert "qualified" not in dev["row_fields"]
    assert [r["candidate"] for r in rows_of(dev)] == [r["candidate"] for r in published.board["development"]["rows"]]


def test_hidden_columns_stay_hidden(tmp_path):
    """A judge on a hidden column is counted, but the record never prints its values."""
    config = tmp_path / "metascore.yaml"
    config.write_text("phases: {development: Development, final: Final}\n"
                      "judges:\n  - {task: iris, metric: accuracy}\n  - {task: iris, metric: duration, direction: lower}\n")
    published = publish_competition(tmp_path, str(config))
    record = record_of(published.page)
    assert record["hidden_judges"] == ["iris/duration"]
    assert published.board["input"]["hidden_columns"] == ["duration"]
    for board in record["boards"].values():
        assert board["judges"] == ["iris/accuracy"]
        assert all(len(r["values"]) == 1 for r in rows_of(board))
    # the organizer's own folder has the hidden values: the offline check still recomputes it
    rc, lines, _ = _verify(tmp_path, published.page, published.pulled)
    assert rc == 0, lines


def test_names_cannot_break_out_of_the_record():
    """A participant's name cannot close the data block or open a comment: <, > and & are
    written as JSON escapes, and the name reads back unchanged."""
    name = "</script><!--<script>alert(1)</script>&"
    frame = pd.DataFrame({"phase": "Development", "candidate": [name, "b-2"], "participant": None,
                          "task": "t", "metric": "", "value": [0.5, 0.4], "submitted_at": None,
                          "is_baseline": False})
    lb = build_leaderboard(ScoreTable(frame), parse_config({"phases": {"final": None}, "filter": {"rule": "none"}}))
    page = render_report(lb)
    start = page.index('id="metascore-ranking">') + len('id="metascore-ranking">')
    text = page[start:page.index("</script>", start)]
    assert not set(text) & set("<>&")
    assert rows_of(json.loads(text)["boards"]["final"])[0]["candidate"] == name
    assert read_record(page, "page").final.row(name).position == 1


def test_too_many_values_are_left_out_and_the_check_still_runs(published, tmp_path, monkeypatch):
    monkeypatch.setattr(ranking_record, "RECORD_VALUES", 5)
    rc, _, err = run("rank", "--config", str(published.pulled / "metascore.yaml"), "--input",
                     str(published.pulled), "--output", str(tmp_path / "out"))
    assert rc == 0, err
    page = (tmp_path / "out" / "detailed_results.html").read_text()
    record = record_of(page)
    assert not record["boards"]["final"]["values_published"]
    assert "values" not in record["boards"]["final"]["row_fields"]
    rc, lines, _ = _verify(tmp_path, page, published.pulled)
    assert rc == 0, lines
