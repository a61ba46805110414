"""End to end: a live competition shaped like ``bundle_template`` gives, through
``metascore codabench rank``, the same final ``leaderboard.csv`` as ``metascore bundle run``.

The replayed site is derived from a real run of the template (run once per module): its
competition.yaml gives the phases, tasks and leaderboard columns, and the run's collected
scores (``outputs/``) become Codabench's payloads: the results export of each phase (row
keys ``<owner>-<parent id>``, columns ``<task>(<task id>)-<column title>``, 10-decimal
strings, ``""`` for a failed task), the submissions list (a parent per submission, one
child per task) and the competition detail.
"""

from __future__ import annotations

import pandas as pd
import pytest

from codabench_replay import TOKEN, Replay, serve
from metascore.bundle import load_competition, run_bundle
from metascore.cli import main
from metascore.codabench.client import TOKEN_ENV
from metascore.io.readers import read_scores

pytestmark = pytest.mark.slow

TEMPLATE = "bundle_template"
COMPETITION = 5


@pytest.fixture(scope="module")
def bundle_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle_run")
    report = run_bundle(TEMPLATE, out)
    assert (out / "final" / "leaderboard.csv").is_file(), report
    return out


def render_site(replay: Replay, bundle_run) -> tuple[dict[str, str], list[str], str]:
    """Fill ``replay`` with the competition; returns (row key -> bundle candidate,
    baseline owners, path of the meta phase's metascore.yaml)."""
    comp = load_competition(TEMPLATE)
    scores = read_scores(bundle_run / "outputs")
    board = comp.leaderboard
    columns = [{"id": 300 + c.index, "computation": c.computation,
                "computation_indexes": [str(i) for i in c.computation_indexes] or None,
                "title": c.title, "key": c.key, "sorting": c.sorting, "index": c.index,
                "hidden": c.hidden, "precision": c.precision} for c in board.columns]
    title = {c.key: c.title for c in board.columns}
    phases, config = [], None
    for phase in comp.phases:
        tasks = [{"task": f"key-{i}", "order_index": n, "phase": 30 + phase.index, "id": 70 + i,
                  "value": f"key-{i}", "key": f"key-{i}", "name": comp.tasks[i].name,
                  "solutions": [], "public_datasets": []} for n, i in enumerate(phase.tasks)]
        phases.append({"id": 30 + phase.index, "index": phase.index, "name": phase.name,
                       "status": "Previous", "tasks": tasks, "hide_output": False,
                       "is_final_phase": False})
        for i in phase.tasks:
            ref = comp.path(comp.tasks[i].reference_data)
            if ref is not None and (ref / "metascore.yaml").is_file():
                config = str(ref / "metascore.yaml")
    replay.add("GET", f"/api/competitions/{COMPETITION}/", {
        "id": COMPETITION, "title": comp.title, "published": True, "phases": phases,
        "leaderboards": [{"id": 12, "primary_index": board.primary_index, "title": board.title,
                          "key": board.key, "columns": columns, "hidden": False,
                          "submission_rule": board.submission_rule}],
        "queue": None})

    names: dict[str, str] = {}
    next_id = 1000
    for phase in comp.phases:
        pid = 30 + phase.index
        rows = scores[scores["phase"] == phase.name]
        tasks = {comp.tasks[i].name: 70 + i for i in phase.tasks}
        assert set(rows["task"]) <= set(tasks), (phase.name, set(rows["task"]), tasks)
        export: dict[str, dict] = {}
        subs: list[dict] = []
        for cand, group in rows.groupby("candidate", sort=False):
            owner = group["participant"].iloc[0]
            parent, next_id = next_id, next_id + 10
            key = f"{owner}-{parent}"
            names[key] = cand
            when = pd.Timestamp(group["submitted_at"].iloc[0]).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            row = {"fact_sheet_answers": None}
            row.update({f"{t}({tid})-{c.title}": "" for t, tid in tasks.items() for c in board.columns})
            subs.append({"id": parent, "owner": owner, "parent": None, "has_children": True,
                         "created_when": when, "status": "Finished", "task": None, "scores": []})
            for n, (task, tid) in enumerate(tasks.items(), start=1):
                got = group[group["task"] == task]
                for metric, value in zip(got["metric"], got["value"]):
                    row[f"{task}({tid})-{title[metric]}"] = f"{value:.10f}"
                subs.append({"id": parent + n, "owner": owner, "parent": parent,
                             "has_children": False, "created_when": when,
                             "status": "Finished" if len(got) else "Failed", "task": {"id": tid},
                             "scores": [{"id": 1, "index": 0, "score": f"{v:.10f}", "column_key": m}
                                        for m, v in zip(got["metric"], got["value"])]})
            export[key] = row
        replay.add("GET", f"/api/competitions/{COMPETITION}/results.json",
                   {f"{board.title} - {phase.name}({pid})": export}, query=f"phase={pid}")
        replay.add("GET", "/api/submissions/", subs, query=f"phase={pid}")
    baselines = sorted(set(scores.loc[scores["is_baseline"], "participant"]))
    assert config is not None and baselines
    return names, baselines, config


def test_codabench_rank_equals_bundle_run(bundle_run, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    replay = Replay()
    names, baselines, config = render_site(replay, bundle_run)
    stop = serve(replay)
    try:
        out = tmp_path / "live"
        rc = main(["codabench", "rank", "--site", replay.url, "--competition", str(COMPETITION),
                   "--config", config, "--baseline", *baselines, "--out", str(out)])
    finally:
        stop()
    printed = capsys.readouterr()
    assert rc == 0, printed.err
    live = (out / "leaderboard.csv").read_text()
    for key, cand in names.items():  # Codabench names a submission <owner>-<id>
        live = live.replace(key, cand)
    expected = (bundle_run / "final" / "leaderboard.csv").read_text()
    assert live == expected
    assert (out / "scores.json").read_text() == (bundle_run / "final" / "scores.json").read_text()
    board = pd.read_csv(out / "leaderboard.csv")
    assert board["qualified"].eq(True).sum() >= 2 and board["is_baseline"].any()
