"""The leaderboard pipeline end to end on the shared competition fixture.

Expected leaderboards are computed by hand below (average rank, fractional ranks per task;
wine/mae is lower-is-better).

Development phase, participant selection ``best`` (all 7 submissions ranked together):
alice-101 averages (2+3+3)/3 = 2.67 and alice-102 (3+2+4)/3 = 3, so alice-101 represents
alice. Development pool (6 candidates), per-task ranks iris / wine / digits:

    dave-105     1   1   2    -> 4/3     position 1
    alice-101    2   2   3    -> 7/3     position 2
    baseline_rf  3   4   4    -> 11/3    position 3 (tie)
    baseline_knn 4   6   1    -> 11/3    position 3 (tie)
    bob-103      5.5 3   5    -> 13.5/3  position 5
    carol-104    5.5 5   6    -> 16.5/3  position 6
"""

from __future__ import annotations

import numpy as np
import pytest

from metascore.config import parse_config
from metascore.errors import ConfigError, InputError
from metascore.leaderboard import build_leaderboard
from metascore.readers.configured import load_scores
from shared_competition import FIXTURE, board as _board, config as _config


def _table(board):
    return [(r.position, r.candidate, r.qualified, None if r.score is None else round(r.score, 4))
            for r in board.rows]


def test_beat_any_baseline_final_best():
    """Final phase, selection ``best`` (7 final submissions ranked together)::

        iris: dave .97(1) alice-101 .96(2) alice-102 .95(3) rf=bob .94(4.5) knn(6) carol(7)
        wine: dave(1) alice-102(2) alice-101(3) bob(4) rf(5) knn(6) carol missing(7)
        digits: knn(1) alice-101=dave .9512(2.5) alice-102(4) rf(5) bob(6) carol(7)

    alice-101 averages 2.5 < alice-102's 3. Threshold (beat any): the worst baseline,
    baseline_knn (tied with baseline_rf at 11/3, later submission). dave (4/3) and alice
    (7/3) qualify; bob (4.5) and carol (5.5) do not. Final pool {dave, alice-101}: dave
    wins iris and wine, they tie on digits: dave (1+1+1.5)/3 = 7/6, alice 11/6.
    """
    lb = _board(_config(selection={"development": "best", "final": "best"},
                        filter={"beat": "any"}))
    assert _table(lb.final) == [
        (1, "dave-105", True, round(-7 / 6, 4)),
        (2, "alice-101", True, round(-11 / 6, 4)),
        (None, "baseline_rf", None, None),
        (None, "baseline_knn", None, None),
        (None, "bob-103", False, None),
        (None, "carol-104", False, None),
    ]
    rows = {r.candidate: r for r in lb.final.rows}
    assert rows["bob-103"].reason == (
        "development average rank 4.5 (position 5) does not beat baseline 'baseline_knn' (3.67)")
    assert rows["carol-104"].reason == (
        "development average rank 5.5 (position 6) does not beat baseline 'baseline_knn' (3.67)")
    assert rows["dave-105"].reason == (
        "development average rank 1.33 (position 1) beats baseline 'baseline_knn' (3.67)")
    assert rows["baseline_rf"].is_baseline and rows["baseline_rf"].position is None
    assert rows["dave-105"].judge_ranks == {"iris/accuracy": 1, "wine/mae": 1, "digits/f1": 1.5}
    assert rows["carol-104"].values["wine/mae"] is None  # the failed task
    assert rows["alice-101"].details["average_rank"] == pytest.approx(11 / 6)
    assert lb.final.not_selected == {
        "alice-102": "participant 'alice' is represented by 'alice-101' "
                     "(best score among its submissions; selection: best)"}
    # threshold published: baselines' development scores and positions
    assert [(b.candidate, round(b.score, 4), b.position) for b in lb.filter.baselines] == [
        ("baseline_rf", round(-11 / 3, 4), 3), ("baseline_knn", round(-11 / 3, 4), 3)]
    assert lb.filter.threshold == pytest.approx(-11 / 3)
    # development board
    assert [(r.position, r.candidate) for r in lb.development.rows] == [
        (1, "dave-105"), (2, "alice-101"), (3, "baseline_rf"), (3, "baseline_knn"),
        (5, "bob-103"), (6, "carol-104")]
    # margins: dave beats alice on 2 judges, loses on none
    assert lb.margins.candidates == ("dave-105", "alice-101")
    np.testing.assert_array_equal(lb.margins.margins, [[0, 2], [-2, 0]])
    assert lb.margins.condorcet_winner == "dave-105"
    assert lb.winner == "dave-105"
    assert lb.statistics["winner_is_condorcet"] == 1.0
    assert lb.statistics["dev_final_kendall_tau"] == pytest.approx(1.0)
    assert lb.scores == {"n_qualified": 2.0, "winner_score": pytest.approx(7 / 6)}  # its average rank


def test_beat_all_with_deadlines():
    """With the 2024-03-15T23:59:59Z deadline, dave-105 (00:30 the next day) is left out.

    Development pool without dave (alice-101 is alice's best: 5/3 vs 6/3): alice 4/3
    (position 1), baseline_rf 8/3 (2), baseline_knn 3 (3), bob 3.5 (4), carol 4.5 (5). Only
    alice beats every baseline; selection ``last`` puts alice-102 in the final, where it
    wins by default (no ranking score with one candidate).
    """
    deadline = "2024-03-15T23:59:59+00:00"
    lb = _board(_config(phases={"deadlines": {"Development": deadline, "Final": deadline}}))
    assert _table(lb.final) == [
        (1, "alice-102", True, None),
        (None, "baseline_rf", None, None),
        (None, "baseline_knn", None, None),
        (None, "bob-103", False, None),
        (None, "carol-104", False, None),
    ]
    rows = {r.candidate: r for r in lb.final.rows}
    assert rows["alice-102"].reason == (
        "development average rank 1.33 (position 1) beats every baseline "
        "(best: 'baseline_rf', 2.67)")
    assert rows["bob-103"].reason == (
        "development average rank 3.5 (position 4) does not beat baseline 'baseline_rf' (2.67)")
    assert lb.final.not_selected["dave-105"] == (
        "submitted at 2024-03-16T00:30:00, after the 'Final' deadline 2024-03-15T23:59:59")
    assert lb.final.not_selected["alice-101"].startswith(
        "participant 'alice' is represented by 'alice-102' (latest submission")
    assert lb.winner == "alice-102"
    assert lb.scores == {"n_qualified": 1.0}  # winner_score undefined with one candidate
    assert any("omits 'winner_score'" in m for m in lb.messages)


def test_top_k_and_absent_candidates():
    """top_k with k = 3 admits dave, alice-101 and bob (development positions 1, 2, 5);
    the final (selection last) ranks dave, alice-102, bob on every task in that order."""
    lb = _board(_config(filter={"rule": "top_k", "k": 3}))
    assert _table(lb.final) == [
        (1, "dave-105", True, -1.0), (2, "alice-102", True, -2.0), (3, "bob-103", True, -3.0),
        (None, "baseline_rf", None, None), (None, "baseline_knn", None, None),
        (None, "carol-104", False, None),
    ]
    # carol is fourth of the non-baseline candidates, sixth with the two baselines above her
    assert lb.final.rows[-1].reason == ("development position 4 among the non-baseline "
                                        "candidates (6 with the baselines) is outside the top 3")


def test_development_only():
    lb = _board(_config(phases={"final": None}, filter={"rule": "none"}))
    assert lb.filter is None and lb.development is None
    assert [(r.position, r.candidate) for r in lb.final.ranked] == [
        (1, "dave-105"), (2, "alice-101"), (3, "bob-103"), (4, "carol-104")]
    assert [r.candidate for r in lb.final.rows if r.is_baseline] == ["baseline_knn", "baseline_rf"]
    assert lb.messages == ("scores.json omits 'n_qualified': statistic 'n_qualified' is undefined "
                           "(filter rule is 'none').",)


def test_one_phase_filters_within_the_phase():
    """phases.final: null with baselines: a candidate must beat the baselines in the one
    phase (both tie at 11/3 there), then the qualified are ranked among themselves."""
    lb = _board(_config(phases={"final": None}))
    assert lb.filter is not None and lb.development is None
    assert [(r.position, r.candidate) for r in lb.final.ranked] == [(1, "dave-105"), (2, "alice-101")]
    excluded = {r.candidate: r.reason for r in lb.final.rows if r.qualified is False}
    # one phase: the reasons name it, never a "development" phase there is not (issue 31)
    assert excluded == {
        "bob-103": "average rank 4.5 in phase 'Development' (position 5) does not beat baseline "
                   "'baseline_rf' (3.67)",
        "carol-104": "average rank 5.5 in phase 'Development' (position 6) does not beat baseline "
                     "'baseline_rf' (3.67)"}
    assert {r.candidate: r.reason for r in lb.final.rows if r.is_baseline} == {
        c: "baseline, shown for reference (not ranked); average rank 3.67 in phase 'Development'"
        for c in ("baseline_rf", "baseline_knn")}
    assert lb.scores == {"n_qualified": 2.0, "winner_score": 1.0}  # its average rank
    assert lb.statistics["dev_final_kendall_tau"] is None
    # without any baseline, no filter applies, and the outputs say so
    table = load_scores(_config().input, FIXTURE)
    lb = build_leaderboard(table.with_frame(table.frame.assign(is_baseline=False)),
                           _config(phases={"final": None}, baselines=[]))
    assert lb.filter is None and len(lb.final.ranked) == 5  # organizers: one submission kept
    assert lb.messages[0].startswith("no filter applies: phase 'Development' (the only phase: "
                                     "phases.final is null) has no baseline")
    with pytest.raises(ConfigError, match=r"`filter.k` 'auto' compares the development and final"):
        _config(phases={"final": None}, filter={"rule": "top_k", "k": "auto"})


def test_nobody_qualifies_warns():
    table = load_scores(_config().input, FIXTURE)
    final = table.frame["phase"] == "Final"
    frame = table.frame.astype({"participant": object, "candidate": object})  # new values go in
    frame.loc[final & ~frame["is_baseline"], "participant"] = "newcomer"
    frame.loc[final & ~frame["is_baseline"], "candidate"] += "-new"
    lb = build_leaderboard(table.with_frame(frame), _config(selection={"final": "all"}))
    assert lb.winner is None and not lb.final.ranked
    assert lb.messages[0].startswith("the final ranking is empty: no final-phase candidate "
                                     "qualified: none has a submission in the 'Development' phase")
    assert lb.scores == {"n_qualified": 0.0}


@pytest.mark.parametrize("path", [
    "long.csv",
    "long.json",
    "tree",
    "results.json",
    {"Development": "Results - Development(11).csv", "Final": "Results - Final(12).csv"},
    {"Development": "codalab_development.csv", "Final": "codalab_final.csv"},
])
def test_every_format_gives_the_same_leaderboard(path):
    """Candidate ids differ between formats (``alice-101``, ``101``); compare by
    participant, position, score and qualification."""
    config = _config(selection={"development": "best", "final": "best"}, filter={"beat": "any"})
    reference, got = _board(config), _board(config, path)

    def key(lb):
        return sorted(
            (r.participant, r.position, r.qualified, r.is_baseline,
             None if r.score is None else round(r.score, 9))
            for r in lb.final.rows
        )
    assert key(got) == key(reference)
    assert got.scores == reference.scores


def test_single_phase_exports_rank_alone():
    config = _config(phases={"development": "Final", "final": None},
                     input={"path": "wide_final.csv"},
                     baselines=["baseline_rf", "baseline_knn"],
                     judges=[{"task": "iris"}, {"task": "wine", "direction": "lower"},
                             {"task": "digits"}])
    lb = _board(config, {"Final": "wide_final.csv"})
    long_cfg = _config(phases={"development": "Final", "final": None},
                       selection={"development": "all"})
    reference = _board(long_cfg)
    assert [(r.position, r.candidate) for r in lb.final.ranked] == \
        [(r.position, r.candidate) for r in reference.final.ranked]


def test_errors_name_the_problem():
    table = load_scores(_config().input, FIXTURE)
    with pytest.raises(InputError, match=r"baseline 'nobody' .*neither a candidate"):
        build_leaderboard(table, _config(baselines=["nobody"]))
    with pytest.raises(InputError, match=r"needs at least one baseline in the 'Development'"):
        build_leaderboard(table.with_frame(table.frame.assign(is_baseline=False)), _config(baselines=[]))
    with pytest.raises(InputError, match=r"phases\.deadlines names phase 'Dev'"):
        build_leaderboard(table, _config(phases={"deadlines": {"Dev": "2024-01-01"}}))
    with pytest.raises(InputError, match=r"no column 'task'"):
        build_leaderboard(table.with_frame(table.frame.drop(columns="task")), _config())


def test_input_order_does_not_matter():
    config = _config(selection={"development": "best", "final": "best"}, filter={"beat": "any"})
    table = load_scores(config.input, FIXTURE, development=config.phases.development)
    a = build_leaderboard(table, config)
    shuffled = table.frame.sample(frac=1.0, random_state=3).reset_index(drop=True)
    b = build_leaderboard(table.with_frame(shuffled), config)
    assert _table(a.final) == _table(b.final)
    assert a.scores == b.scores


def test_a_baseline_dropped_by_drop_candidates_is_named_with_the_reason():
    table = load_scores(_config().input, FIXTURE)
    frame = table.frame
    dev = frame["phase"] == frame["phase"].iloc[0]
    gap = dev & frame["candidate"].str.startswith("baseline") & (frame["task"] == "wine")
    config = _config(ranking={"missing": "drop_candidates"})
    with pytest.raises(InputError, match=r"baseline 'baseline_\w+' .*dropped by "
                       r"missing='drop_candidates' \(missing score for judge 'wine/mae'\)"):
        build_leaderboard(table.with_frame(frame[~gap]), config)


def test_kemeny_global_details_stay_out_of_the_leaderboard_files():
    from metascore.render.writers import render_outputs

    config = _config(ranking={"method": "kemeny_young"}, analysis={"bootstrap": 0, "stability": False})
    files = render_outputs(_board(config))
    header = files["leaderboard.csv"].splitlines()[0].split(",")
    assert "order" not in header and "components" not in header
    assert ">order<" not in files["detailed_results.html"]
    assert ">components<" not in files["detailed_results.html"]


def test_wide_csv_goes_through_config_mode(tmp_path):
    """A wide CSV names no phase: it is the development phase; with phases.final: null it
    gets every output file, the HTML report included (issue 14)."""
    from metascore.program import run

    config = parse_config({"phases": {"final": None}, "analysis": {"bootstrap": 0, "stability": False}})
    lines: list[str] = []
    lb = run(config, FIXTURE / "wide_final.csv", tmp_path / "out", log=lines.append)
    assert (tmp_path / "out" / "detailed_results.html").is_file()
    assert lb.final.phase == "Development" and len(lb.final.ranked) == 7
    assert any("name no phase" in line for line in lines)
    with pytest.raises(InputError, match=r"phases\.final: null"):
        run(parse_config({}), FIXTURE / "wide_final.csv", tmp_path / "out2", log=lines.append)


def test_a_failed_run_is_shown_as_failed_not_as_a_missing_score(tmp_path):
    """Issue 14: a task folder of the outputs tree with the runner's error.txt instead of
    scores is a failed run: the report marks the cell failed, with the reason."""
    import shutil

    from metascore.program import run

    tree = tmp_path / "tree"
    shutil.copytree(FIXTURE / "tree", tree)
    wine = tree / "Development" / "dave-105" / "wine"
    (wine / "scores.json").unlink()
    (wine / "error.txt").write_text("Failed (program_rc=1): ValueError: dave's model crashed\n")
    config = _config(input={"path": "."}, analysis={"bootstrap": 0, "stability": False})
    run(config, tree, tmp_path / "out", log=lambda _: None)
    page = (tmp_path / "out" / "detailed_results.html").read_text()
    assert 'class="num failed"' in page
    assert "dave&#x27;s model crashed" in page


# ------------------------------------------------------------------ every candidate accounted for
def _tree_with(tmp_path, runs):
    """A copy of the fixture tree plus ``runs``: ``{(phase, candidate, task): scores dict or
    an error.txt line}``; new candidates are added to the manifest."""
    import json
    import shutil

    tree = tmp_path / "tree"
    shutil.copytree(FIXTURE / "tree", tree)
    added = set()
    for (phase, cand, task), what in runs.items():
        folder = tree / phase / cand / task
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.iterdir():
            old.unlink()
        if isinstance(what, dict):
            (folder / "scores.json").write_text(json.dumps(what))
        else:
            (folder / "error.txt").write_text(what + "\n")
        if not cand.startswith(("alice", "bob", "carol", "dave", "baseline")):
            added.add(cand)
    with (tree / "submissions.csv").open("a") as manifest:
        for cand in sorted(added):
            manifest.write(f"{cand},{cand.split('-')[0]},2024-03-20T00:00:00+00:00,false\n")
    return tree


def _run(config, tree, out):
    import json

    from metascore.program import run

    lines: list[str] = []
    lb = run(config, tree, out, log=lines.append)
    board = json.loads((out / "leaderboard.json").read_text())
    return lb, lines, board, (out / "leaderboard.csv").read_text(), (out / "detailed_results.html").read_text()


ERIN = {("Development", "erin-106", t): {m: v} for t, m, v in
        (("iris", "accuracy", 0.99), ("wine", "mae", 0.3), ("digits", "f1", 0.99))}


def test_a_candidate_scored_only_on_other_columns_is_ranked_or_listed(tmp_path):
    """Issue 24: erin's final scores are on a column that is not a judge (duration); she
    used to vanish from every output while the same candidate with empty cells ranked
    last. She is now a candidate with every score missing: ranked by missing=worst, or
    listed with the reason under drop_candidates, in every output."""
    tree = _tree_with(tmp_path, {**ERIN, ("Final", "erin-106", "iris"): {"duration": 12.0}})
    config = _config(input={"path": "."}, selection={"final": "best"}, filter={"beat": "any"},
                     analysis={"bootstrap": 0, "stability": False})
    lb, lines, board, csv_text, page = _run(config, tree, tmp_path / "out")
    rows = {r.candidate: r for r in lb.final.rows}
    assert rows["erin-106"].qualified and rows["erin-106"].position == len(lb.final.ranked)
    why = ("phase 'Final': candidate 'erin-106' has no score on any judge (its scores are for "
           "iris/duration, which is not a judge); it is kept with every score missing: "
           "ranking.missing 'worst' ranks it below every scored candidate.")
    assert why in lb.messages and f"[!] {why}" in lines and why in board["messages"]
    assert any(line.startswith("[*] filter beat_baseline: 3 of 5 final candidates") for line in lines)
    assert "erin-106" in csv_text and "erin-106" in page
    assert any(r["candidate"] == "erin-106" for r in board["final"]["rows"])

    dropped = _config(**{**config.to_dict(), "ranking": {"missing": "drop_candidates"}})
    lb, lines, board, csv_text, _ = _run(dropped, tree, tmp_path / "out2")
    (erin,) = [r for r in lb.final.rows if r.candidate == "erin-106"]
    assert erin.position is None and erin.reason.startswith("excluded by the missing-data policy")
    assert "erin-106" in csv_text
    # the console accounts for every candidate too
    unranked = [r for r in lb.final.rows if r.position is None and not r.is_baseline]
    assert (f"[*] {len(lb.final.ranked)} ranked, {len(unranked)} not ranked, 1 submission(s) not "
            "selected (a participant's other submissions, or late) in phase 'Final'") in lines
    assert len(lb.final.ranked) + len(unranked) == 5  # alice, bob, carol, dave, erin
    assert f"[*] not ranked: erin-106 ({erin.reason})" in lines


def test_a_candidate_whose_every_run_failed_is_on_the_board(tmp_path):
    """A final submission whose every task failed (error.txt only) is a candidate with
    every score missing, with the failure as the reason in the messages."""
    failed = {("Final", "erin-106", t): "Failed (program_rc=1): MemoryError" for t in ("iris", "wine")}
    tree = _tree_with(tmp_path, {**ERIN, **failed})
    config = _config(input={"path": "."}, selection={"final": "best"}, filter={"beat": "any"},
                     analysis={"bootstrap": 0, "stability": False})
    lb, _, _, csv_text, _ = _run(config, tree, tmp_path / "out")
    (erin,) = [r for r in lb.final.rows if r.candidate == "erin-106"]
    assert erin.participant == "erin" and erin.position == len(lb.final.ranked)
    assert any("candidate 'erin-106' has no score on any judge (every run failed: task 'iris': "
               "Failed (program_rc=1): MemoryError (and 1 more))" in m for m in lb.messages)


def test_a_baseline_whose_run_failed_says_so(tmp_path):
    """Issue 24: a baseline whose run failed used to abort with "neither a candidate nor a
    participant"; now the error says its run failed, and why."""
    runs = {("Development", b, t): "Failed (program_rc=1): ModuleNotFoundError: No module named 'xgboost'"
            for b in ("baseline_rf", "baseline_knn") for t in ("iris", "wine", "digits")}
    tree = _tree_with(tmp_path, runs)
    config = _config(input={"path": "."}, analysis={"bootstrap": 0, "stability": False})
    table = load_scores(config.input, tree, development=config.phases.development)
    with pytest.raises(InputError, match=r"baseline 'baseline_\w+' has no score in phase 'Development' "
                       r"\(every run failed: task 'digits': Failed \(program_rc=1\): ModuleNotFoundError: "
                       r"No module named 'xgboost' \(and 2 more\)\), so the beat_baseline filter"):
        build_leaderboard(table, config)
    # named by candidate id, absent from every phase's scores: the same sentence, not "neither"
    import shutil
    for b in ("baseline_rf", "baseline_knn"):
        shutil.rmtree(tree / "Final" / b)
    table = load_scores(config.input, tree, development=config.phases.development)
    with pytest.raises(InputError, match=r"baseline 'baseline_\w+' has no score in phase 'Development' "
                                         r"\(every run failed"):
        build_leaderboard(table, _config(input={"path": "."}, baselines=["baseline_rf"]))
    # without the filter, the failed baseline is only shown
    lb = build_leaderboard(table, _config(input={"path": "."}, filter={"rule": "none"},
                                          analysis={"bootstrap": 0, "stability": False}))
    assert lb.winner is not None


def test_quick_mode_keeps_and_names_a_candidate_without_judge_scores(tmp_path):
    from metascore.cli.common import read_matrix_file

    path = tmp_path / "long.csv"
    path.write_text("phase,candidate,task,metric,value\nD,a,t,acc,0.9\nD,b,t,acc,0.8\n"
                    "D,a,t,time,3\nD,c,t,time,3\n")
    alerts: list[str] = []
    matrix = read_matrix_file(path, exclude=["t/time"], alerts=alerts)
    assert list(matrix.candidates) == ["a", "b", "c"]
    assert alerts == ["candidate 'c' has no score on any judge (its scores are for t/time, which is "
                      "not a judge); it is ranked with every score missing (--missing decides its place)."]


def test_a_board_that_loses_a_candidate_is_refused():
    """The invariant behind issue 24's vanished participant: every submission of a phase is
    on its board or listed as not selected, else the run stops loudly."""
    import dataclasses

    from metascore.errors import MetascoreError
    from metascore.leaderboard.notices import check_accounted

    table = load_scores(_config().input, FIXTURE)
    lb = build_leaderboard(table, _config(analysis={"bootstrap": 0, "stability": False}))
    check_accounted(table, lb.final)  # the real board: nobody lost
    lost = dataclasses.replace(lb.final, rows=tuple(r for r in lb.final.rows if r.candidate != "bob-103"))
    with pytest.raises(MetascoreError, match=r"phase 'Final': candidate\(s\) 'bob-103' are neither ranked "
                                             r"nor listed with a reason"):
        check_accounted(table, lost)
