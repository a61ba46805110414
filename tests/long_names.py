"""A competition with long task and column names, as ``metascore bundle run`` writes it.

Three tasks named like a real one (``GDP Nowcasting Task``), three leaderboard columns
whose keys (``private_test_RMSE``) differ from their titles (``Private test RMSE``), six
candidates with long names and a baseline, two phases: a scoring-output tree with
``submissions.csv`` and ``codabench.json``. The values are fixed (no randomness), so the
winner is ``dave-random-walk`` and three candidates qualify.
"""

from __future__ import annotations

import json
from pathlib import Path

TASKS = ("GDP Nowcasting Task", "Inflation Nowcasting Task", "Unemployment Forecasting Task")
COLUMNS = (("private_test_RMSE", "Private test RMSE", "asc"),
           ("public_test_RMSE", "Public test RMSE", "asc"),
           ("private_test_R2", "Private test R²", "desc"))
CANDIDATES = (("kit", "organizer", True),
              ("gradient-boosted-ensemble-with-lags-v12", "alice", False),
              ("bob-linear-ar-model", "bob", False),
              ("carol-transformer-nowcaster-large", "carol", False),
              ("dave-random-walk", "dave", False),
              ("erin-lightgbm-tuned", "erin", False),
              ("frank-mean-forecast", "frank", False))
WINNER = "gradient-boosted-ensemble-with-lags-v12"
CONFIG = {"input": {"format": "tree", "path": "."}, "baselines": ["kit"],
          "filter": {"beat": "any"}, "selection": {"final": "best"}}


def _value(phase: int, cand: int, task: int, col: int) -> float:
    """A fixed, varied score (R² may be negative, RMSE is positive); candidate 1 (the
    longest name) is the best almost everywhere."""
    quality = ((phase * 7 + cand * 13 + task * 5 + col * 3) * 37) % 100 / 100
    if cand == 1:
        quality = 0.97 - 0.3 * ((task + col) % 4 == 3)
    return round(quality * 1.3 - 0.4, 4) if col == 2 else round(0.5 + (1 - quality) * 1.5, 4)


def write_long_names(root: Path) -> Path:
    """Write the competition into ``root`` and return it."""
    for p, phase in enumerate(("Development", "Final")):
        for c, (cand, _, _) in enumerate(CANDIDATES):
            for t, task in enumerate(TASKS):
                folder = root / phase / cand / task
                folder.mkdir(parents=True, exist_ok=True)
                scores = {key: _value(p, c, t, k) for k, (key, _, _) in enumerate(COLUMNS)}
                (folder / "scores.json").write_text(json.dumps(scores))
    (root / "submissions.csv").write_text(
        "candidate,participant,submitted_at,is_baseline\n" + "".join(
            f"{c},{who},2024-03-0{i + 1}T10:00:00+00:00,{str(base).lower()}\n"
            for i, (c, who, base) in enumerate(CANDIDATES)))
    columns = [{"key": k, "title": t, "index": i, "sorting": s, "hidden": False, "computation": None}
               for i, (k, t, s) in enumerate(COLUMNS)]
    (root / "codabench.json").write_text(json.dumps({"phases": [
        {"id": i, "name": phase, "tasks": [{"id": j, "name": t, "folder": t} for j, t in enumerate(TASKS)],
         "leaderboard": {"title": "Results", "columns": columns}}
        for i, phase in enumerate(("Development", "Final"))]}))
    return root
