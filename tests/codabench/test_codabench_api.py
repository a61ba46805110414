"""Codabench payloads: parsed as the platform sends them, refused naming the field."""

from __future__ import annotations

import copy
import json

import pytest

from codabench_replay import DATA
from metascore.codabench.api import PayloadError, parse_competition, parse_results, parse_submissions

ROUTES = {(r["method"], r["path"], r.get("query", "")): r["body"]
          for r in json.loads((DATA / "competition_41.json").read_text())["routes"]}
DETAIL = ROUTES[("GET", "/api/competitions/41/", "")]
FINAL = ROUTES[("GET", "/api/competitions/41/results.json", "phase=102")]


def test_competition_detail():
    comp = parse_competition(DETAIL, "competition 41")
    assert [p.name for p in comp.phases] == ["Development", "Final", "Final ranking"]
    assert [(t.id, t.name) for t in comp.phase("Final").tasks] == [(203, "iris"), (204, "wine")]
    (board,) = comp.leaderboards
    assert [(c.key, c.sorting, c.hidden, c.computation) for c in board.columns] == [
        ("accuracy", "desc", False, None), ("rmse", "asc", False, None),
        ("duration", "asc", True, None), ("avg", "desc", False, "avg")]
    assert comp.queue is None


def test_phase_dates_status_and_submission_rule_are_read_when_sent():
    comp = parse_competition(DETAIL, "competition 41")
    final, meta = comp.phase("Final"), comp.phase("Final ranking")
    assert (final.start, final.end, final.status) == \
        ("2024-03-01T00:00:00Z", "2024-03-15T23:59:00Z", "Previous")
    assert meta.end is None  # a phase that never ends
    assert comp.leaderboards[0].submission_rule == "Force_Last"
    bare = copy.deepcopy(DETAIL)  # an older site: none of them sent
    for phase in bare["phases"]:
        for key in ("start", "end", "status"):
            phase.pop(key)
    bare["leaderboards"][0].pop("submission_rule")
    comp = parse_competition(bare, "competition 41")
    assert (comp.phases[0].start, comp.phases[0].status, comp.leaderboards[0].submission_rule) == \
        (None, None, None)
    bad = copy.deepcopy(DETAIL)
    bad["phases"][1]["end"] = 5
    with pytest.raises(PayloadError, match=r"phases\[1\]\.end"):
        parse_competition(bad, "competition 41")


def test_results_export_rows():
    comp = parse_competition(DETAIL, "c")
    board, rows = parse_results(FINAL, "export", comp.phase("Final"), comp.leaderboards)
    assert board.title == "Results"
    assert [(r.key, r.owner, r.submission_id) for r in rows][2] == ("jean-luc-621", "jean-luc", 621)
    assert rows[0].scores == {(203, "accuracy"): 0.89, (203, "duration"): 1.1,
                              (204, "rmse"): 0.82, (204, "duration"): 3.3}


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update({"Results - Final(999)": d.pop("Results - Final(102)")}),
     "field '(top level)' has keys ['Results - Final(999)'], expected one key "
     "'<leaderboard title> - Final(102)'"),
    (lambda d: d.update({"Scores - Final(102)": d.pop("Results - Final(102)")}),
     "names leaderboard 'Scores', which the competition does not list"),
    (lambda d: d["Results - Final(102)"]["alice-611"].update({"iris(999)-Accuracy": "1"}),
     "field 'Results - Final(102).alice-611.iris(999)-Accuracy' is not a column of phase 'Final'"),
    (lambda d: d["Results - Final(102)"].update({"nobody": {}}),
     "field 'Results - Final(102).nobody' is not a '<owner>-<submission id>' row key"),
    (lambda d: d["Results - Final(102)"]["bob-631"].update({"iris(203)-Accuracy": "NaN"}),
     "is 'NaN', not a finite number"),
])
def test_results_export_errors_name_the_field(edit, message):
    comp = parse_competition(DETAIL, "c")
    data = copy.deepcopy(FINAL)
    edit(data)
    with pytest.raises(PayloadError) as err:
        parse_results(data, "results export of phase 'Final'", comp.phase("Final"), comp.leaderboards)
    assert str(err.value).startswith("results export of phase 'Final': field ")
    assert message in str(err.value)


def test_two_columns_with_one_title_are_refused_only_when_scored():
    detail = copy.deepcopy(DETAIL)
    detail["leaderboards"][0]["columns"][2]["title"] = "RMSE"  # duration now titled RMSE too
    comp = parse_competition(detail, "c")
    data = copy.deepcopy(FINAL)  # the export then has one "<task>(<id>)-RMSE" key per task
    for row in data["Results - Final(102)"].values():
        del row["iris(203)-Duration"], row["wine(204)-Duration"]
        row["iris(203)-RMSE"] = ""
    with pytest.raises(PayloadError, match=r"'Results - Final\(102\).organizers-601.wine\(204\)-RMSE' "
                       "matches two leaderboard columns with the same title"):
        parse_results(data, "e", comp.phase("Final"), comp.leaderboards)
    for row in data["Results - Final(102)"].values():
        row["wine(204)-RMSE"] = ""
    _, rows = parse_results(data, "e", comp.phase("Final"), comp.leaderboards)
    assert rows[0].scores == {(203, "accuracy"): 0.89}


def test_submissions_list():
    subs = parse_submissions(ROUTES[("GET", "/api/submissions/", "phase=101")], "subs")
    assert subs[521].parent is None and subs[522].parent == 521
    assert subs[523].status == "Failed" and subs[523].scores == ()
    assert subs[512].scores == (("accuracy", 0.9533333333), ("duration", 2.0))
    with pytest.raises(PayloadError, match=r"field '\[0\].id' is '7', expected an integer"):
        parse_submissions([{"id": "7"}], "subs")
    with pytest.raises(PayloadError, match="expected a list of submissions"):
        parse_submissions({"results": []}, "subs")
