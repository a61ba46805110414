"""Regenerate the shared competition fixture in every input format.

Run ``python tests/data/competition/make_fixtures.py`` from the repository root. The files
are committed; tests read them and never run this script. Each export imitates the
platform's own writer (see /work/shared/research/codabench.md section 4):

- Codabench ``results.json`` / ``results.csv``: ``collect_leaderboard_data`` writes every
  (task, leaderboard column) pair for every submission, ``""`` where there is no score,
  scores as 10-decimal strings, ``fact_sheet_answers`` first when present, and the CSV
  header ``Username,fact_sheet_answers,<columns of the first row>`` (so
  ``fact_sheet_answers`` twice).
- CodaLab v1 ``get_results_csv``: ``submission_pk,User,<group labels>``, a sub-header
  shifted one cell to the left, ``value (rank)`` cells with ``numeric_format`` 4, ``- (-)``
  when missing, and ``len(keys) + 1`` padding cells per row.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent

# candidate, participant, submitted_at, is_baseline, Codabench row key, CodaLab submission_pk
CANDIDATES = [
    ("baseline_rf", "organizers", "2024-02-20T09:00:00+00:00", True, "organizers-201", "201"),
    ("baseline_knn", "organizers", "2024-02-20T09:05:00+00:00", True, "organizers-202", "202"),
    ("alice-101", "alice", "2024-03-01T10:00:00+00:00", False, "alice-101", "101"),
    ("bob-103", "bob", "2024-03-02T08:45:00+00:00", False, "bob-103", "103"),
    ("carol-104", "carol", "2024-03-03T12:00:00+00:00", False, "carol-104", "104"),
    ("alice-102", "alice", "2024-03-05T16:20:00+00:00", False, "alice-102", "102"),
    # late: after the 2024-03-15T23:59:59+00:00 deadline of both phases
    ("dave-105", "dave", "2024-03-16T00:30:00+00:00", False, "dave-105", "105"),
]
# task, metric, Codabench sorting, Codabench task id
TASKS = [("iris", "accuracy", "desc", 21), ("wine", "mae", "asc", 22), ("digits", "f1", "desc", 23)]
PHASES = {"Development": 11, "Final": 12}
# scores per phase: candidate -> (iris accuracy, wine mae, digits f1); None = missing
SCORES = {
    "Development": {
        "baseline_rf": (0.9467, 0.47, 0.935),
        "baseline_knn": (0.94, 0.52, 0.971),
        "alice-101": (0.9667, 0.412, 0.9512),
        "bob-103": (0.9333, 0.455, 0.9301),  # ties carol on iris
        "carol-104": (0.9333, 0.501, 0.9125),
        "alice-102": (0.9533, 0.398, 0.9488),
        "dave-105": (0.98, 0.389, 0.962),
    },
    "Final": {
        "baseline_rf": (0.94, 0.48, 0.934),  # ties bob on iris
        "baseline_knn": (0.9333, 0.535, 0.965),
        "alice-101": (0.96, 0.425, 0.9512),  # ties dave on digits
        "bob-103": (0.94, 0.46, 0.9288),
        "carol-104": (0.93, None, 0.91),  # the wine run failed: no scores file
        "alice-102": (0.95, 0.405, 0.947),
        "dave-105": (0.97, 0.395, 0.9512),
    },
}


def records():
    for phase, table in SCORES.items():
        for cand, part, when, base, _, _ in CANDIDATES:
            for (task, metric, _, _), value in zip(TASKS, table[cand]):
                yield phase, cand, part, task, metric, value, when, base


def write_csv(path: Path, rows: list[list[object]]) -> None:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")


def long_forms() -> None:
    header = ["phase", "candidate", "participant", "task", "metric", "value", "submitted_at", "is_baseline"]
    rows = [
        [p, c, part, t, m, "" if v is None else repr(v), when, "true" if base else "false"]
        for p, c, part, t, m, v, when, base in records()
    ]
    write_csv(HERE / "long.csv", [header] + rows)
    json_rows = [dict(zip(header, r)) for r in records()]
    (HERE / "long.json").write_text(json.dumps({"rows": json_rows}, indent=1) + "\n", encoding="utf-8")


def tree() -> None:
    root = HERE / "tree"
    if root.exists():
        shutil.rmtree(root)
    for phase, table in SCORES.items():
        for cand, *_ in CANDIDATES:
            for (task, metric, _, _), value in zip(TASKS, table[cand]):
                out = root / phase / cand / task
                out.mkdir(parents=True)
                if value is None:  # the run failed: the platform's metadata only
                    (out / "metadata").write_text("elapsedTime: 2.1\nexitCode: 1\n")
                    continue
                (out / "metadata").write_text("elapsedTime: 3.4\nexitCode: 0\n")
                if cand == "baseline_knn":  # an older scoring program writing scores.txt
                    (out / "scores.txt").write_text(f"{metric}: {value}\n")
                else:
                    (out / "scores.json").write_text(json.dumps({metric: value}) + "\n")
    write_csv(
        root / "submissions.csv",
        [["candidate", "participant", "submitted_at", "is_baseline"]]
        + [[c, part, when, "true" if base else "false"] for c, part, when, base, _, _ in CANDIDATES],
    )


def codabench() -> None:
    data: dict[str, dict[str, dict[str, object]]] = {}
    for phase, table in SCORES.items():
        title = f"Results - {phase}({PHASES[phase]})"
        board: dict[str, dict[str, object]] = {}
        for cand, _, _, _, key, _ in CANDIDATES:
            row: dict[str, object] = {"fact_sheet_answers": {"method_name": cand.split("-")[0]}}
            for task, _, _, tid in TASKS:
                for _, column, _, _ in TASKS:  # every leaderboard column for every task
                    row[f"{task}({tid})-{column}"] = ""
            for (task, metric, _, tid), value in zip(TASKS, table[cand]):
                if value is not None:
                    row[f"{task}({tid})-{metric}"] = f"{value:.10f}"
            board[key] = row
        data[title] = board
        columns = list(next(iter(board.values())))
        lines = [["Username", "fact_sheet_answers"] + columns]
        for key, row in board.items():
            full = {"Username": key, **row}
            lines.append([full[c] if c != "fact_sheet_answers" else str(row[c]) for c in lines[0]])
        write_csv(HERE / f"{title}.csv", lines)
    (HERE / "results.json").write_text(json.dumps(data, indent=4) + "\n", encoding="utf-8")


def _ranks(values: list[float | None], higher: bool) -> list[str]:
    out = []
    for v in values:
        if v is None:
            out.append("-")
            continue
        better = sum(1 for w in values if w is not None and (w > v if higher else w < v))
        out.append(str(better + 1))
    return out


def codalab(phase: str, path: Path) -> None:
    table = SCORES[phase]
    cells = {c: [] for c, *_ in CANDIDATES}
    for k, (_, _, sorting, _) in enumerate(TASKS):
        column = [table[c][k] for c, *_ in CANDIDATES]
        for (c, *_), v, r in zip(CANDIDATES, column, _ranks(column, sorting == "desc")):
            cells[c].append("- (-)" if v is None else f"{v:.4f} ({r})")
    padding = [""] * (2 * len(TASKS) + 1 - len(TASKS))  # keys of groups and subs, + 1
    lines = [["submission_pk", "User"] + [t for t, *_ in TASKS], [""] + [m for _, m, _, _ in TASKS]]
    for c, part, _, _, _, pk in CANDIDATES:
        lines.append([pk, part] + cells[c] + padding)
    write_csv(path, lines)


def wide(phase: str) -> None:
    lines = [["candidate"] + [t for t, *_ in TASKS]]
    for c, *_ in CANDIDATES:
        lines.append([c] + ["" if v is None else repr(v) for v in SCORES[phase][c]])
    write_csv(HERE / f"wide_{phase.lower()}.csv", lines)


if __name__ == "__main__":
    long_forms()
    tree()
    codabench()
    codalab("Development", HERE / "codalab_development.csv")
    codalab("Final", HERE / "codalab_final.csv")
    codalab("Final", HERE / "coopetition_scores_phase_2.txt")
    wide("Final")
