"""End to end: a live competition shaped like ``bundle_template`` gives, through
``metascore codabench rank``, the same final ``leaderboard.csv`` as ``metascore bundle run``.

The replayed site is derived from a real run of the template (run once per module): its
competition.yaml gives the phases, tasks and leaderboard columns, and the run's collected
scores (``outputs/``) become Codabench's payloads: the results export of each phase (row
keys ``<owner>-<parent id>``, columns ``<task>(<task id>)-<column title>``, 10-decimal
strings, ``""`` for a failed task), the submissions list (a parent per submission, one
child per task) and the competition detail. As on the real site (issue 25), the final
phase's migrated copies get new ids and creation times in the site's migration order
(carol's first), not in submission order: the tie for first between alice and carol is
still alice's, the earlier submission, from all three paths.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pandas as pd
import pytest

from codabench_replay import TOKEN, Replay, add_bundle_competition, add_phase_results, serve
from metascore.bundle import load_competition, run_bundle
from metascore.cli import main
from metascore.codabench import TOKEN_ENV
from metascore.readers.formats import read_scores

pytestmark = pytest.mark.slow

TEMPLATE = "bundle_template"
COMPETITION = 5


@pytest.fixture(scope="module")
def bundle_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle_run")
    report = run_bundle(TEMPLATE, out)
    assert (out / "final" / "leaderboard.csv").is_file(), report
    return out


#: The order in which the real site migrated the template's development submissions into
#: the final phase (issue 25): not their submission order. Each migrated copy gets a new id
#: and is created (created_when) at migration time, in this order.
SITE_MIGRATION_ORDER = ["carol", "dave", "erin", "alice", "bob", "baseline"]


def render_site(replay: Replay, bundle_run) -> tuple[dict[str, str], list[str], str]:
    """Fill ``replay`` with the competition; returns (site row key -> the bundle run's
    name of that submission, baseline owners, path of the meta phase's metascore.yaml)."""
    comp = load_competition(TEMPLATE)
    scores = read_scores(bundle_run / "outputs")  # candidates <owner>-<id>, as the export names them
    board = comp.leaderboard
    phase_ids = {p.name: 30 + p.index for p in comp.phases}
    task_ids = {i: 70 + i for i in range(len(comp.tasks))}
    add_bundle_competition(replay, comp, COMPETITION, phase_ids, task_ids)
    config = None
    for phase in comp.phases:
        for i in phase.tasks:
            ref = comp.path(comp.tasks[i].reference_data)
            if ref is not None and (ref / "metascore.yaml").is_file():
                config = str(ref / "metascore.yaml")
    title = {c.key: c.title for c in board.columns}
    names: dict[str, str] = {}
    next_id = 1000
    for phase in comp.phases:
        pid = phase_ids[phase.name]
        rows = scores[scores["phase"] == phase.name]
        tasks = {comp.tasks[i].name: task_ids[i] for i in phase.tasks}
        assert set(rows["task"]) <= set(tasks), (phase.name, set(rows["task"]), tasks)
        local = sorted(pd.unique(rows["candidate"]), key=lambda c: int(c.rsplit("-", 1)[1]))
        if phase.auto_migrate:  # migrated copies: new ids, in the site's migration order
            local.sort(key=lambda c: SITE_MIGRATION_ORDER.index(c.rsplit("-", 1)[0]))
        export: dict[str, dict] = {}
        created: dict[str, str] = {}
        for k, cand in enumerate(local):
            group = rows[rows["candidate"] == cand]
            key = f"{group['participant'].iloc[0]}-{next_id}"
            next_id += 10
            names[key] = cand
            created[key] = (f"2026-06-01T00:05:{k:02d}.000000Z" if phase.auto_migrate
                            else f"2026-02-{k + 1:02d}T10:00:00.000000Z")
            row = {f"{t}({tid})-{c.title}": "" for t, tid in tasks.items() for c in board.columns}
            for task, metric, value in zip(group["task"], group["metric"], group["value"]):
                row[f"{task}({tasks[task]})-{title[metric]}"] = f"{value:.10f}"
            export[key] = row
        add_phase_results(replay, COMPETITION, pid, {f"{board.title} - {phase.name}({pid})": export},
                          created, list(tasks.values()))
    baselines = sorted(set(scores.loc[scores["is_baseline"], "participant"]))
    assert config is not None and baselines
    return names, baselines, config


def without_column(text: str, name: str) -> list[dict[str, str]]:
    return [{k: v for k, v in r.items() if k != name} for r in csv.DictReader(io.StringIO(text))]


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
    for key, cand in sorted(names.items(), key=lambda kv: -len(kv[0])):  # the site's ids -> the run's
        live = re.sub(rf"\b{re.escape(key)}\b", cand, live)
    expected = (bundle_run / "final" / "leaderboard.csv").read_text()
    # the pulled tree has each submission's created_when, the export (and so the bundle run's
    # meta phase) none: every other column is the same; the migration times do not decide
    # the tie (issue 25): carol's copy was created first, alice's development submission was
    assert without_column(live, "submitted_at") == without_column(expected, "submitted_at")
    first = [r for r in csv.DictReader(io.StringIO(live)) if r["position"] == "1"]
    assert [r["participant"] for r in first] == ["alice", "carol"]
    assert first[0]["submitted_at"] > first[1]["submitted_at"]  # alice's copy was created later
    doc = json.loads((out / "leaderboard.json").read_text())
    assert doc["signature"]["submission_order"]["Final"].startswith("submission times of phase 'Development'")
    assert (out / "scores.json").read_text() == (bundle_run / "final" / "scores.json").read_text()
    board = pd.read_csv(out / "leaderboard.csv")
    assert board["qualified"].eq(True).sum() >= 2 and board["is_baseline"].any()
