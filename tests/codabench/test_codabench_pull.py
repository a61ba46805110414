"""``metascore codabench pull`` and ``rank`` against a replayed Codabench site."""

from __future__ import annotations

import copy
import csv
import json

import pandas as pd
import pytest

from codabench_replay import DATA, TOKEN, Answer, Replay, add_bundle_competition, add_phase_results, serve
from metascore.bundle import load_competition
from metascore.cli import main
from metascore.codabench import TOKEN_ENV
from metascore.readers.formats import read_score_table, read_scores
from metascore.program import score_main
from repo_paths import ROOT, TESTS

CONFIG = """\
phases: {development: Development, final: Final}
ranking: {method: average_rank, seed: 7}
filter: {rule: beat_baseline}
analysis: {bootstrap: 20, stability: false}
"""


@pytest.fixture
def replay(monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    r = Replay()
    r.load("competition_41.json")
    stop = serve(r)
    yield r
    stop()


def body(replay: Replay, path: str, query: str = "") -> object:
    return copy.deepcopy(replay.routes[("GET", path, query)][0].body)


def cli(replay: Replay, capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["codabench", args[0], "--site", replay.url, "--competition", "41",
               "--retries", "1", "--backoff", "0", "--timeout", "2", *args[1:]])
    out, err = capsys.readouterr()
    assert TOKEN not in out + err
    return rc, out, err


@pytest.fixture
def pulled(replay, capsys, tmp_path):
    out = tmp_path / "pulled"
    rc, stdout, _ = cli(replay, capsys, "pull", "--baseline", "organizers", "--out", str(out))
    assert rc == 0
    assert "next: rank locally with" in stdout and "codabench submit" in stdout
    return out


def test_pull_writes_a_tree_the_readers_read(pulled, replay):
    table = read_score_table(pulled)
    frame = table.frame
    assert table.format == "tree"
    assert sorted(set(frame["phase"])) == ["Development", "Final"]
    row = frame[(frame["candidate"] == "jean-luc-521") & (frame["metric"] == "accuracy")].iloc[0]
    assert (row["participant"], row["task"], row["value"]) == ("jean-luc", "iris", 0.92)
    assert row["submitted_at"] == "2024-02-01T17:45:10.500000+00:00"
    # jean-luc's wine task has no score ("" in the export): no scores.json, no row
    assert not (pulled / "Development" / "jean-luc-521" / "wine").exists()
    assert frame[frame["candidate"] == "jean-luc-521"]["task"].tolist() == ["iris", "iris"]
    # hidden column kept, computed column ("" in a multi-task phase) absent
    assert set(frame["metric"]) == {"accuracy", "rmse", "duration"}
    baselines = set(frame.loc[frame["is_baseline"], "candidate"])
    assert baselines == {"organizers-501", "organizers-601"}
    # the exports as the site sent them
    sent = body(replay, "/api/competitions/41/results.json", "phase=102")
    assert json.loads((pulled / "Results - Final(102).json").read_text()) == sent


def test_judges_and_directions_come_from_the_columns(pulled):
    config = (pulled / "metascore.yaml").read_text()
    judges = json.loads((pulled / "codabench.json").read_text())["judges"]
    assert judges == [
        {"task": "iris", "metric": "accuracy", "direction": "higher", "weight": 1.0},
        {"task": "wine", "metric": "rmse", "direction": "lower", "weight": 1.0},
    ]
    assert "development: Development" in config and "final: Final" in config
    provenance = json.loads((pulled / "codabench.json").read_text())
    assert provenance["baselines"] == ["organizers-501", "organizers-601"]
    assert [p["name"] for p in provenance["phases"]] == ["Development", "Final"]


def test_pull_agrees_with_the_csv_export(pulled, replay):
    """The platform's own CSV export of the Final phase, read by metascore's CSV reader."""
    csv = read_scores(DATA / "Results - Final(102).csv")
    columns = body(replay, "/api/competitions/41/")["leaderboards"][0]["columns"]
    key = {c["title"]: c["key"] for c in columns}
    csv = csv.assign(metric=csv["metric"].map(key))
    tree = read_scores(pulled, phase="Final")
    cols = ["candidate", "participant", "task", "metric", "value"]
    order = ["candidate", "task", "metric"]
    plain = {c: object for c in cols if c != "value"}  # the texts, not their categories
    pd.testing.assert_frame_equal(csv[cols].astype(plain).sort_values(order).reset_index(drop=True),
                                  tree[cols].astype(plain).sort_values(order).reset_index(drop=True))


def test_rank_and_program_read_the_pulled_folder_unchanged(pulled, tmp_path, capsys):
    assert main(["rank", "--config", str(pulled / "metascore.yaml"), "--input", str(pulled),
                 "--output", str(tmp_path / "rank")]) == 0
    ref = tmp_path / "input" / "ref"
    ref.mkdir(parents=True)
    (ref / "metascore.yaml").write_bytes((pulled / "metascore.yaml").read_bytes())
    (tmp_path / "input" / "res").symlink_to(pulled)
    assert score_main(tmp_path / "input", tmp_path / "program") == 0
    local = (tmp_path / "rank" / "leaderboard.csv").read_text()
    assert local == (tmp_path / "program" / "leaderboard.csv").read_text()
    board = pd.read_csv(tmp_path / "rank" / "leaderboard.csv")
    assert board.loc[board["position"] == 1, "candidate"].tolist() == ["alice-611"]
    assert board.loc[board["is_baseline"], "candidate"].tolist() == ["organizers-601"]
    # the migrated baseline (a new id in Final) keeps its development score, and says
    # which id it had there (issue 31: the reasons cite it by its Final id)
    reason = board.loc[board["is_baseline"], "reason"].iloc[0]
    assert reason == ("baseline, shown for reference (not ranked); development average rank 3.5 "
                      "(as 'organizers-501' in 'Development')")
    assert all("baseline 'organizers-601' (3.5 as 'organizers-501' in 'Development')" in r
               or "(best: 'organizers-601', 3.5 as 'organizers-501' in 'Development')" in r
               for r in board.loc[~board["is_baseline"], "reason"])


def test_codabench_rank_one_command(replay, capsys, tmp_path):
    config = tmp_path / "metascore.yaml"
    config.write_text(CONFIG)
    out = tmp_path / "result"
    rc, stdout, _ = cli(replay, capsys, "rank", "--config", str(config), "--baseline",
                        "organizers", "--out", str(out))
    assert rc == 0, stdout
    assert f"final leaderboard: {out / 'leaderboard.csv'}" in stdout
    assert ".result." not in stdout  # the staging folder is not shown
    for name in ("leaderboard.csv", "leaderboard.json", "detailed_results.html", "scores.json"):
        assert (out / name).is_file()
    assert (out / "pulled" / "submissions.csv").is_file()
    board = pd.read_csv(out / "leaderboard.csv")
    # directions from the competition: wine/rmse is lower-is-better
    final = board[board["qualified"] == True]  # noqa: E712
    best_rmse = final.loc[final["judge:wine/rmse"].idxmin(), "judge_rank:wine/rmse"]
    assert best_rmse == 1.0
    assert not list(tmp_path.glob(".result.*"))
    # the phases asked for are the config's
    assert {r.query for r in replay.requests("GET") if "results" in r.path} == {"phase=101", "phase=102"}


def test_phases_lists_ids_dates_tasks_and_columns(replay, capsys, monkeypatch):
    """No token needed (a public competition); one line per phase with its id, then the
    leaderboard and what `pull` reads without --phase."""
    monkeypatch.delenv(TOKEN_ENV)
    rc, stdout, _ = cli(replay, capsys, "phases")
    assert rc == 0
    lines = stdout.splitlines()
    assert lines[0] == "competition 41: 'Two-task mini benchmark', 3 phase(s)"
    assert lines[1].split() == ["id", "index", "name", "start", "end", "status", "tasks"]
    assert lines[2].split() == ["101", "0", "Development", "2024-01-01", "00:00", "2024-02-29",
                                "23:59", "Previous", "iris,", "wine"]
    assert lines[4].split()[:4] == ["103", "2", "Final", "ranking"] and " never " in lines[4]
    assert lines[5].startswith("leaderboard 'Results', submission rule Force_Last: accuracy "
                               "(Accuracy, desc), rmse (RMSE, asc), duration (Duration, asc, hidden)")
    assert "the first two phases ['Development', 'Final']" in lines[6]
    assert not replay.requests("GET")[0].headers.get("Authorization")


def test_pull_says_which_phases_it_reads(replay, capsys, tmp_path):
    rc, stdout, _ = cli(replay, capsys, "pull", "--out", str(tmp_path / "a"))
    assert rc == 0
    assert ("[*] pulling phases ['Development', 'Final']: no --phase and no configuration, so "
            "the competition's first two phases; choose others with --phase") in stdout
    config = tmp_path / "metascore.yaml"
    config.write_text(CONFIG)
    rc, stdout, _ = cli(replay, capsys, "pull", "--config", str(config), "--out", str(tmp_path / "b"))
    assert rc == 0
    assert ("[*] pulling phases ['Development', 'Final']: the configuration's phases.development "
            "and phases.final") in stdout
    rc, stdout, _ = cli(replay, capsys, "pull", "--phase", "Final", "--out", str(tmp_path / "c"))
    assert rc == 0 and "[*] pulling phases ['Final']: named by --phase" in stdout


def test_config_direction_conflict_is_an_error(replay, capsys, tmp_path):
    config = tmp_path / "metascore.yaml"
    config.write_text(CONFIG + "judges:\n  - {task: iris, metric: accuracy}\n"
                      "  - {task: wine, metric: rmse, direction: higher}\n")
    rc, _, err = cli(replay, capsys, "rank", "--config", str(config), "--out", str(tmp_path / "o"))
    assert rc == 1
    assert "judge 'wine/rmse': the configuration says higher is better, but the competition's " \
           "column 'rmse' sorts asc" in err
    assert not (tmp_path / "o").exists()


def _blind(replay):
    comp = body(replay, "/api/competitions/41/")
    comp["leaderboards"] = []  # what a token without admin rights sees of a hidden leaderboard
    replay.replace("GET", "/api/competitions/41/", [Answer(200, comp)])


def _forbidden(replay):
    replay.replace("GET", "/api/competitions/41/results.json",
                   [Answer(403, {"detail": "You are not a competition admin or superuser"})],
                   query="phase=101")


def _unauthorized(replay):
    replay.replace("GET", "/api/competitions/41/",
                   [Answer(401, {"detail": "Authentication credentials were not provided."})])


def _bad_sorting(replay):
    comp = body(replay, "/api/competitions/41/")
    comp["leaderboards"][0]["columns"][1]["sorting"] = "up"
    replay.replace("GET", "/api/competitions/41/", [Answer(200, comp)])


def _bad_cell(replay):
    data = body(replay, "/api/competitions/41/results.json", "phase=102")
    data["Results - Final(102)"]["bob-631"]["wine(204)-RMSE"] = "n/a"
    replay.replace("GET", "/api/competitions/41/results.json", [Answer(200, data)], query="phase=102")


def _missing_field(replay):
    comp = body(replay, "/api/competitions/41/")
    del comp["phases"][1]["tasks"][0]["id"]
    replay.replace("GET", "/api/competitions/41/", [Answer(200, comp)])


def _slow(replay):
    replay.replace("GET", "/api/submissions/", [Answer(200, [], delay=1.0)], query="phase=102")


def _large(replay):  # an export beyond --max-answer 1 (MiB), its length announced
    data = body(replay, "/api/competitions/41/results.json", "phase=101")
    data["Results - Development(101)"]["jean-luc-521"]["fact_sheet_answers"] = "x" * (2 << 20)
    replay.replace("GET", "/api/competitions/41/results.json", [Answer(200, data)], query="phase=101")


def _deep(replay):  # issue 42, item 10: a results.json 200,000 levels deep
    replay.replace("GET", "/api/competitions/41/results.json",
                   [Answer(200, b"[" * 200_000 + b"]" * 200_000)], query="phase=101")


def _key_twice(replay):  # issue 42, item 12: a submission given twice, the last would win
    text = json.dumps(body(replay, "/api/competitions/41/results.json", "phase=101"))
    replay.replace("GET", "/api/competitions/41/results.json",
                   [Answer(200, text.replace('"bob-531"', '"jean-luc-521"', 1))], query="phase=101")


FAILURES = {
    "unknown competition": ((), ["--competition", "99"], "has no competition 99 that this token can see"),
    "unknown phase": ((), ["--phase", "Finall"], "competition 41 has no phase 'Finall' (did you "
                      "mean 'Final'?); its phases are ['Development', 'Final', 'Final ranking']."),
    "blind phase": ((_blind,), [], "its leaderboard is hidden (a blind phase)"),
    "empty export": ((), ["--phase", "Final ranking"], "phase 'Final ranking' (id 103): the "
                     "results export is empty"),
    "forbidden": ((_forbidden,), [], "HTTP 403 (You are not a competition admin or superuser): "
                  "the token was refused or lacks the rights"),
    "unauthorized": ((_unauthorized,), [], "competition 41: HTTP 401 (Authentication credentials "
                     "were not provided.): the token was refused or lacks the rights"),
    "bad sorting": ((_bad_sorting,), [], "competition 41: field 'leaderboards[0].columns[1]."
                    "sorting' is 'up', expected 'asc' or 'desc'"),
    "bad cell": ((_bad_cell,), [], "field 'Results - Final(102).bob-631.wine(204)-RMSE' is 'n/a', "
                 "expected a decimal string or ''"),
    "missing field": ((_missing_field,), [], "field 'phases[1].tasks[0].id' is missing"),
    "slow": ((_slow,), ["--timeout", "0.2"], "submissions of phase 'Final' (id 102): no answer "
             "within 0.2 s (2 attempts)"),
    "unknown baseline": ((), ["--baseline", "organisers"], "--baseline 'organisers' is neither a "
                         "submission ('<owner>-<id>') nor an owner in the pulled phases (did you "
                         "mean 'organizers'?)"),
    # issue 42, items 7, 10 and 12: what a site sends beyond what the client reads
    "answer beyond --max-answer": ((_large,), ["--max-answer", "1"], "/api/competitions/41/results.json"
                                   "?phase=101 is larger than 1 MiB (it announces "),
    "export 200,000 levels deep": ((_deep,), [], "/api/competitions/41/results.json?phase=101 is "
                                   "nested too deep to read"),
    "a submission given twice": ((_key_twice,), [], "gives the key 'jean-luc-521' twice in one object"),
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_each_failure_is_one_line_exit_1_nothing_written(replay, capsys, tmp_path, case):
    edits, args, expected = FAILURES[case]
    for edit in edits:
        edit(replay)
    out = tmp_path / "pulled"
    rc, _, err = cli(replay, capsys, "pull", "--out", str(out), *args)
    assert rc == 1
    assert err.count("\n") == 1 and err.startswith("metascore: error: ")
    assert expected in err
    assert not out.exists() and not list(tmp_path.iterdir())


def test_500_then_success_pulls(replay, capsys, tmp_path):
    replay.replace("GET", "/api/competitions/41/results.json", [
        Answer(500, {"detail": "A server error occurred."}),
        Answer(200, body(replay, "/api/competitions/41/results.json", "phase=101"))],
        query="phase=101")
    rc, stdout, _ = cli(replay, capsys, "pull", "--out", str(tmp_path / "p"))
    assert rc == 0
    assert "HTTP 500 (A server error occurred.); retrying" in stdout
    assert (tmp_path / "p" / "Development" / "alice-511" / "iris" / "scores.json").is_file()


def test_no_token_fails_before_any_request(replay, capsys, tmp_path, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV)
    rc, _, err = cli(replay, capsys, "pull", "--out", str(tmp_path / "p"))
    assert rc == 1 and "no API token" in err
    assert replay.log == []


def test_token_file_and_existing_out(replay, capsys, tmp_path, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV)
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    rc, _, err = cli(replay, capsys, "pull", "--token-file", str(token), "--out", str(busy))
    assert rc == 1 and "already exists and is not an empty folder" in err
    assert (busy / "keep.txt").read_text() == "mine"
    rc, _, _ = cli(replay, capsys, "pull", "--token-file", str(token), "--out", str(tmp_path / "p"))
    assert rc == 0
    for path in (tmp_path / "p").rglob("*"):
        if path.is_file():
            assert TOKEN not in path.read_text()


def test_phase_specific_judges_when_a_column_is_scored_in_one_phase(replay, capsys, tmp_path):
    data = body(replay, "/api/competitions/41/results.json", "phase=102")
    for row in data["Results - Final(102)"].values():
        row["wine(204)-RMSE"] = ""
        row["wine(204)-Accuracy"] = "0.5000000000"
    replay.replace("GET", "/api/competitions/41/results.json", [Answer(200, data)], query="phase=102")
    rc, _, _ = cli(replay, capsys, "pull", "--out", str(tmp_path / "p"))
    assert rc == 0
    judges = json.loads((tmp_path / "p" / "codabench.json").read_text())["judges"]
    assert {"task": "iris", "metric": "accuracy", "direction": "higher", "weight": 1.0} in judges
    assert {"task": "wine", "metric": "rmse", "direction": "lower", "weight": 1.0,
            "phase": "Development"} in judges
    assert {"task": "wine", "metric": "accuracy", "direction": "higher", "weight": 1.0,
            "phase": "Final"} in judges
    assert main(["rank", "--config", str(tmp_path / "p" / "metascore.yaml"), "--input",
                 str(tmp_path / "p"), "--output", str(tmp_path / "r")]) == 0
    board = pd.read_csv(tmp_path / "r" / "leaderboard.csv")
    assert "judge:wine/accuracy" in board.columns and "judge:wine/rmse" not in board.columns


# ---------------------------------------------------------------------- issue 25: migrated ids
TEMPLATE = ROOT / "bundle_template"
TEMPLATE_CONFIG = TEMPLATE / "final_ranking" / "reference_data" / "metascore.yaml"
#: The template with alice renamed zoe, as the real site exported it (issue 25): development
#: ids in submission order, the final phase's migrated copies numbered in migration order.
SITE_EXPORT = TESTS / "data" / "exports" / "template_results_site_ids.json"


@pytest.fixture
def template_site(monkeypatch):
    """The replayed site of SITE_EXPORT: each submission created in id order, the migrated
    final copies at migration time (carol-7 first, zoe-10 fourth)."""
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    r = Replay()
    comp = load_competition(TEMPLATE)
    phase_ids = {"Development": 41, "Final": 42, "Final ranking": 43}
    add_bundle_competition(r, comp, 7, phase_ids, {0: 87, 1: 88, 2: 89})
    export = json.loads(SITE_EXPORT.read_text())
    for phase, pid in phase_ids.items():
        title = f"Results - {phase}({pid})"
        rows = export.get(title, {})
        when = ("2026-06-01T00:05:{:02d}.000000Z" if phase == "Final" else "2026-02-{:02d}T10:00:00.000000Z")
        in_order = sorted(rows, key=lambda key: int(key.rsplit("-", 1)[1]))
        created = {key: when.format(k + 1) for k, key in enumerate(in_order)}
        add_phase_results(r, 7, pid, {title: rows}, created, [87 if phase == "Development" else 88])
    stop = serve(r)
    yield r
    stop()


def test_codabench_rank_takes_the_earlier_submission_from_development(template_site, capsys, tmp_path):
    """Issue 25 (b): `codabench rank` used to take "the earlier submission" from the
    migrated copies' creation times (the site's migration order) and crown carol-7; by the
    documented rule zoe's submission is the earlier one (zoe-1 before carol-3), as the
    meta-scoring program computes on the site's export."""
    out = tmp_path / "live"
    rc = main(["codabench", "rank", "--site", template_site.url, "--competition", "7", "--config",
               str(TEMPLATE_CONFIG), "--baseline", "baseline", "--out", str(out)])
    printed = capsys.readouterr()
    assert rc == 0, printed.err
    live = list(csv.DictReader((out / "leaderboard.csv").open()))
    assert [(r["position"], r["candidate"]) for r in live[:2]] == [("1", "zoe-10"), ("1", "carol-7")]
    assert live[0]["submitted_at"] > live[1]["submitted_at"]  # zoe's copy was created after carol's
    doc = json.loads((out / "leaderboard.json").read_text())
    assert doc["signature"]["submission_order"]["Final"].startswith("submission times of phase 'Development'")
    assert any("(2026-02-01T10:00:00 before 2026-02-03T10:00:00: their submissions in phase "
               "'Development')" in m for m in doc["messages"])
    # the meta-scoring program on the export itself (ids, no times): the same board
    res, ref = tmp_path / "input" / "res", tmp_path / "input" / "ref"
    res.mkdir(parents=True)
    ref.mkdir()
    (res / "results.json").write_bytes(SITE_EXPORT.read_bytes())
    (ref / "metascore.yaml").write_bytes(TEMPLATE_CONFIG.read_bytes())
    assert score_main(tmp_path / "input", tmp_path / "program") == 0
    program = list(csv.DictReader((tmp_path / "program" / "leaderboard.csv").open()))
    drop = ("submitted_at",)
    assert [{k: v for k, v in r.items() if k not in drop} for r in live] == \
        [{k: v for k, v in r.items() if k not in drop} for r in program]


def test_a_submission_whose_name_is_not_unicode_is_left_out_saying_so(replay, capsys, tmp_path):
    """Issue 42, item 9: an export row named "\\ud800x-999" (a lone surrogate, which no file
    name can hold) is left out with one line naming it; the others are pulled."""
    data = body(replay, "/api/competitions/41/results.json", "phase=101")
    rows = data["Results - Development(101)"]
    rows["\ud800x-999"] = dict(rows["alice-511"])
    replay.replace("GET", "/api/competitions/41/results.json", [Answer(200, data)], query="phase=101")
    out = tmp_path / "pulled"
    rc, stdout, err = cli(replay, capsys, "pull", "--out", str(out))
    assert rc == 0 and "Traceback" not in err, err
    said = [line for line in stdout.splitlines() if "not valid Unicode" in line]
    assert said == ["[!] phase 'Development': 1 submission(s) left out: their name is not valid "
                    "Unicode text (a lone surrogate) and cannot be a file name: \\ud800x-999"]
    frame = read_scores(out)
    assert sorted(set(frame.loc[frame["phase"] == "Development", "candidate"])) == \
        ["alice-511", "bob-531", "jean-luc-521", "organizers-501"]


def test_a_participant_whose_name_cannot_be_a_folder_name_does_not_stop_the_pull(replay, capsys, tmp_path):
    """Issue 49 (found on the real site): an account an identity provider made may hold any
    character in its username; a name with a slash, a backslash, a percent sign or a leading
    dot is pulled under a percent-encoded folder name, and the participant keeps their name."""
    data = body(replay, "/api/competitions/41/results.json", "phase=101")
    rows = data["Results - Development(101)"]
    names = ["ev/il-901", "back\\slash-902", "100%-903", ".hidden-904"]
    for name in names:
        rows[name] = dict(rows["alice-511"])
    replay.replace("GET", "/api/competitions/41/results.json", [Answer(200, data)], query="phase=101")
    out = tmp_path / "pulled"
    rc, _, err = cli(replay, capsys, "pull", "--out", str(out))
    assert rc == 0, err
    frame = read_scores(out)
    dev = frame[frame["phase"] == "Development"]
    folders = ["ev%2Fil-901", "back%5Cslash-902", "100%25-903", "%2Ehidden-904"]
    assert set(folders) <= set(dev["candidate"])
    people = dict(zip(dev["candidate"], dev["participant"]))
    assert [people[f] for f in folders] == ["ev/il", "back\\slash", "100%", ".hidden"]


def test_new_directory_all_or_nothing(tmp_path):
    """`pull --out` fills a staging folder: renamed onto an empty OUT when the block ends,
    removed (OUT left as it was) when it raises."""
    from metascore.codabench.pull import new_directory

    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(KeyboardInterrupt):
        with new_directory(out) as stage:
            (stage / "half.txt").write_text("x")
            raise KeyboardInterrupt
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and not any(out.iterdir())
    with new_directory(out) as stage:
        assert stage != out
        (stage / "whole.txt").write_text("y")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (out / "whole.txt").read_text() == "y"
