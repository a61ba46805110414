"""Scoring program: one leaderboard column per dataset.

Usage: python3 score.py INPUT_DIR OUTPUT_DIR   (on Codabench: /app/input /app/output)

INPUT_DIR/ref holds one folder per dataset with labels.csv (column y) and task.json
({"name": ..., "metric": ..., "key": ...}); INPUT_DIR/res/<dataset>/ holds predictions.csv
(column prediction) written by the ingestion program, or error.txt when the model failed
on that dataset. OUTPUT_DIR/scores.json gets {key: value} for every dataset that could be
scored; each key (``blobs_accuracy``, ``housing_mae``, ``churn_brier``) is a leaderboard
column key of competition.yaml. Metrics:

- accuracy: share of exact matches (higher is better)
- mae: mean absolute error (lower is better)
- brier: mean squared error of probabilities in [0, 1] (lower is better)

A dataset without valid predictions gets no key, never a made-up value: its column stays
empty, which the meta-ranking reads as missing data. The reasons go to stderr and to
OUTPUT_DIR/detailed_results.html. If no dataset can be scored, the program exits with
code 1 and the reasons (the submission fails).
"""

import html
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


def score_dataset(ref, res, info):
    """The dataset's score, or ValueError/OSError saying why there is none."""
    if (res / "error.txt").is_file():
        raise ValueError(f"the model failed: {(res / 'error.txt').read_text().strip()}")
    predictions = res / "predictions.csv"
    if not predictions.is_file():
        raise FileNotFoundError("no predictions.csv: did the ingestion program fail? "
                                "(see the prediction logs)")
    y = read_column(ref / "labels.csv", "y")
    p = read_column(predictions, "prediction")
    if p.shape != y.shape:
        raise ValueError(f"{len(p)} predictions for {len(y)} test rows")
    if not np.all(np.isfinite(p)):
        raise ValueError("predictions contain NaN or infinite values")
    return score(info["metric"], y, p)


def report_html(rows):
    cells = "".join(f"<tr><td>{html.escape(name)}</td><td>{html.escape(key)}</td>"
                    f"<td>{html.escape(text)}</td></tr>" for name, key, text in rows)
    return ("<!doctype html><meta charset='utf-8'><title>Scores per dataset</title>"
            "<table><tr><th>dataset</th><th>column</th><th>score</th></tr>" + cells + "</table>\n")


def main(input_dir, output_dir):
    ref, res = Path(input_dir) / "ref", Path(input_dir) / "res"
    datasets = sorted(d for d in ref.iterdir() if (d / "task.json").is_file())
    if not datasets:
        raise FileNotFoundError(f"no dataset folder (with task.json) in {ref}")
    scores, rows, problems = {}, [], []
    for dataset_ref in datasets:
        info = json.loads((dataset_ref / "task.json").read_text())
        try:
            value = score_dataset(dataset_ref, res / dataset_ref.name, info)
        except (OSError, ValueError) as exc:
            problems.append(f"{info['name']}: {exc} (column {info['key']} left empty)")
            rows.append((info["name"], info["key"], f"no score: {exc}"))
            continue
        scores[info["key"]] = round(value, 6)
        rows.append((info["name"], info["key"], f"{value:.6f}"))
        print(f"[+] {info['name']}: {info['key']} = {value:.6f}")
    for problem in problems:
        print(f"score.py: {problem}", file=sys.stderr)
    if not scores:
        raise ValueError("no dataset could be scored: " + "; ".join(problems))
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "detailed_results.html").write_text(report_html(rows))
    (out / "scores.json").write_text(json.dumps(scores) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: score.py INPUT_DIR OUTPUT_DIR")
    try:
        main(*sys.argv[1:])
    except (OSError, ValueError) as exc:
        sys.exit(f"score.py: error: {exc}")
