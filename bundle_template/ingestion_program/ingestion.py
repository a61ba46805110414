"""Ingestion program: train the submitted model on every dataset and write its predictions.

Usage: python3 ingestion.py INPUT_DATA OUTPUT_DIR SUBMISSION_DIR
(on Codabench: /app/input_data /app/output /app/ingested_program)

INPUT_DATA holds one folder per dataset, each with train.csv (features x1.. and target y),
test.csv (features) and task.json ({"name": ..., "type": "classification" | "regression" |
"probability"}). The submission is a folder with model.py defining ``class Model`` with
``fit(X, y, task_type)`` and ``predict(X)`` (numpy arrays); a fresh model is made for each
dataset. OUTPUT_DIR/<dataset>/predictions.csv gets one column, "prediction".

One Codabench task covers every dataset (the single-task pattern of Codabench's own
mini-automl example), so a crash on one dataset must not lose the others: the error is
printed with its traceback, its last line is kept in OUTPUT_DIR/<dataset>/error.txt (the
scoring program shows it and leaves that dataset's column empty), and the next dataset
runs. The exit code is 0 as long as the datasets could be listed; the compute worker does
not check it anyway, and the scoring program says what is missing.
"""

import csv
import importlib.util
import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np


def read_table(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], np.array(rows[1:], dtype=float)


def load_model(submission_dir):
    """A fresh ``Model()`` from the submission's model.py (the module is re-executed)."""
    path = Path(submission_dir) / "model.py"
    if not path.is_file():
        raise FileNotFoundError(f"the submission has no model.py (found: "
                                f"{sorted(p.name for p in Path(submission_dir).iterdir())})")
    spec = importlib.util.spec_from_file_location("submission_model", path)
    module = importlib.util.module_from_spec(spec)
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec.loader.exec_module(module)
    return module.Model()


def predict_dataset(dataset_dir, output_dir, submission_dir):
    """Train a fresh model on one dataset and write its predictions.csv."""
    info = json.loads((dataset_dir / "task.json").read_text())
    _, train = read_table(dataset_dir / "train.csv")
    _, X_test = read_table(dataset_dir / "test.csv")
    X_train, y_train = train[:, :-1], train[:, -1]
    if info["type"] != "regression":
        y_train = y_train.astype(int)
    print(f"[*] {info['name']} ({info['type']}): {len(X_train)} training rows, {len(X_test)} test rows")
    start = time.time()
    model = load_model(submission_dir)
    model.fit(X_train, y_train, info["type"])
    predictions = np.asarray(model.predict(X_test), dtype=float).ravel()
    if predictions.shape != (len(X_test),):
        raise ValueError(f"predict returned {predictions.shape[0]} values for {len(X_test)} test rows")
    output_dir.mkdir(parents=True, exist_ok=True)
    with open(output_dir / "predictions.csv", "w") as f:
        f.write("prediction\n" + "".join(f"{v:.6g}\n" for v in predictions))
    print(f"[+] {info['name']}: wrote predictions.csv ({time.time() - start:.2f} s)")


def main(input_dir, output_dir, submission_dir):
    input_dir, output_dir = Path(input_dir), Path(output_dir)
    datasets = sorted(d for d in input_dir.iterdir() if (d / "task.json").is_file())
    if not datasets:
        sys.exit(f"ingestion.py: error: no dataset folder (with task.json) in {input_dir}")
    output_dir.mkdir(parents=True, exist_ok=True)
    failed = []
    for dataset_dir in datasets:
        try:
            predict_dataset(dataset_dir, output_dir / dataset_dir.name, submission_dir)
        except Exception as exc:  # the submission's error: record it, go on with the others
            traceback.print_exc()
            failed.append(dataset_dir.name)
            (output_dir / dataset_dir.name).mkdir(parents=True, exist_ok=True)
            (output_dir / dataset_dir.name / "error.txt").write_text(
                f"{type(exc).__name__}: {exc}\n")
            print(f"[-] {dataset_dir.name}: the model failed ({type(exc).__name__}: {exc}); "
                  "going on with the other datasets", file=sys.stderr)
    done = len(datasets) - len(failed)
    print(f"[+] predictions for {done} of {len(datasets)} dataset(s)"
          + (f"; failed: {', '.join(failed)}" if failed else ""))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: ingestion.py INPUT_DATA OUTPUT_DIR SUBMISSION_DIR")
    main(*sys.argv[1:])
