"""Ingestion program: train the submitted model and write its predictions.

Usage: python3 ingestion.py INPUT_DATA OUTPUT_DIR SUBMISSION_DIR
(on Codabench: /app/input_data /app/output /app/ingested_program)

INPUT_DATA holds train.csv (features x1.. and target y), test.csv (features) and task.json
({"name": ..., "type": "classification" | "regression" | "probability"}). The submission
is a folder with model.py defining ``class Model`` with ``fit(X, y, task_type)`` and
``predict(X)`` (numpy arrays). OUTPUT_DIR/predictions.csv gets one column, "prediction".
Any error in the submission is printed with its traceback and exits with code 1.
"""

import csv
import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np


def read_table(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], np.array(rows[1:], dtype=float)


def load_model(submission_dir):
    path = Path(submission_dir) / "model.py"
    if not path.is_file():
        raise FileNotFoundError(f"the submission has no model.py (found: "
                                f"{sorted(p.name for p in Path(submission_dir).iterdir())})")
    spec = importlib.util.spec_from_file_location("submission_model", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    spec.loader.exec_module(module)
    return module.Model()


def main(input_dir, output_dir, submission_dir):
    input_dir, output_dir = Path(input_dir), Path(output_dir)
    info = json.loads((input_dir / "task.json").read_text())
    header, train = read_table(input_dir / "train.csv")
    _, X_test = read_table(input_dir / "test.csv")
    X_train, y_train = train[:, :-1], train[:, -1]
    if info["type"] != "regression":
        y_train = y_train.astype(int)
    print(f"[*] task {info['name']} ({info['type']}): {len(X_train)} training rows, {len(X_test)} test rows")
    start = time.time()
    model = load_model(submission_dir)
    model.fit(X_train, y_train, info["type"])
    predictions = np.asarray(model.predict(X_test), dtype=float).ravel()
    if predictions.shape != (len(X_test),):
        raise ValueError(f"predict returned {predictions.shape[0]} values for {len(X_test)} test rows")
    output_dir.mkdir(parents=True, exist_ok=True)
    with open(output_dir / "predictions.csv", "w") as f:
        f.write("prediction\n" + "".join(f"{v:.6g}\n" for v in predictions))
    print(f"[+] wrote predictions.csv ({time.time() - start:.2f} s)")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: ingestion.py INPUT_DATA OUTPUT_DIR SUBMISSION_DIR")
    main(*sys.argv[1:])
