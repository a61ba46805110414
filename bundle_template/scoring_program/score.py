"""Per-task scoring program: compare predictions with the reference labels.

Usage: python3 score.py INPUT_DIR OUTPUT_DIR   (on Codabench: /app/input /app/output)

INPUT_DIR/ref holds labels.csv (column y) and task.json ({"metric": ..., "key": ...});
INPUT_DIR/res holds predictions.csv (column prediction) written by the ingestion program.
OUTPUT_DIR/scores.json gets {key: value}; the key is a leaderboard column key of
competition.yaml. Metrics:

- accuracy: share of exact matches (higher is better)
- mae: mean absolute error (lower is better)
- brier: mean squared error of probabilities in [0, 1] (lower is better)

Missing or malformed predictions are an error (exit code 1 with the reason on stderr),
never a silent 0.
"""

import json
import sys
from pathlib import Path

import numpy as np


def read_column(path, name):
    lines = Path(path).read_text().split()
    if not lines or lines[0] != name:
        raise ValueError(f"{path.name}: expected a header {name!r}, found {lines[:1]}")
    return np.array(lines[1:], dtype=float)


def score(metric, y, p):
    if metric == "accuracy":
        return float(np.mean(p == y))
    if metric == "mae":
        return float(np.mean(np.abs(p - y)))
    if metric == "brier":
        if np.any((p < 0) | (p > 1)):
            raise ValueError("brier: probabilities must be in [0, 1]")
        return float(np.mean((p - y) ** 2))
    raise ValueError(f"unknown metric {metric!r}")


def main(input_dir, output_dir):
    ref, res = Path(input_dir) / "ref", Path(input_dir) / "res"
    info = json.loads((ref / "task.json").read_text())
    predictions = res / "predictions.csv"
    if not predictions.is_file():
        raise FileNotFoundError("no predictions.csv in the submission's output: did the "
                                "ingestion program fail? (see the prediction logs)")
    y = read_column(ref / "labels.csv", "y")
    p = read_column(predictions, "prediction")
    if p.shape != y.shape:
        raise ValueError(f"{len(p)} predictions for {len(y)} test rows")
    if not np.all(np.isfinite(p)):
        raise ValueError("predictions contain NaN or infinite values")
    value = score(info["metric"], y, p)
    Path(output_dir).mkdir(parents=True, exist_ok=True)
    (Path(output_dir) / "scores.json").write_text(json.dumps({info["key"]: round(value, 6)}) + "\n")
    print(f"[+] {info['name']}: {info['key']} = {value:.6f}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: score.py INPUT_DIR OUTPUT_DIR")
    try:
        main(*sys.argv[1:])
    except (OSError, ValueError) as exc:
        sys.exit(f"score.py: error: {exc}")
