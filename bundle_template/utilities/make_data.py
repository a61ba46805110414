"""Generate the template's tiny datasets (seeded: rerunning gives byte-identical files).

Usage, from the bundle folder:  python3 utilities/make_data.py [OUT_DIR]
(OUT_DIR defaults to the bundle folder; the committed CSVs are this script's output)

Three datasets, each with a training set shared by both phases and a separate evaluation
set per phase (development = validation rows, final = test rows). Each phase is ONE
Codabench task whose ingestion program loops over the datasets, and whose scoring program
writes one leaderboard column per dataset (key ``<dataset>_<metric>``):

- blobs:   3-class classification, 2 features (overlapping Gaussian blobs); blobs_accuracy
- housing: regression, 3 features, y = 3 x1 - 2 x2 + 1.5 x3^2 + noise; housing_mae (lower is better)
- churn:   binary outcome, 2 features, P(y=1) = sigmoid(2 x1 - x2 + 1.5 x1 x2 - 0.5);
           predictions are probabilities; churn_brier (lower is better)

Layout written (relative to the bundle folder):
  dev_phase/input_data/<dataset>/{train.csv, test.csv, task.json}
  dev_phase/reference_data/<dataset>/{labels.csv, task.json}
  final_phase/...   (same training sets, different test rows and labels)
"""

import json
import sys
from pathlib import Path

import numpy as np

SEED = 20260101
SIZES = {"train": 90, "development": 45, "final": 45}
BUNDLE = Path(__file__).resolve().parents[1]


def blobs(rng, n):
    centers = np.array([[0.0, 0.0], [2.0, 0.5], [0.8, 2.0]])
    y = rng.integers(0, 3, size=n)
    X = centers[y] + rng.normal(scale=0.9, size=(n, 2))
    return X, y


def housing(rng, n):
    X = rng.uniform(-2, 2, size=(n, 3))
    y = 3 * X[:, 0] - 2 * X[:, 1] + 1.5 * X[:, 2] ** 2 + rng.normal(scale=0.5, size=n)
    return X, y


def churn(rng, n):
    X = rng.normal(size=(n, 2))
    logit = 2 * X[:, 0] - X[:, 1] + 1.5 * X[:, 0] * X[:, 1] - 0.5
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)
    return X, y


TASKS = {
    "blobs": (blobs, {"type": "classification"}, {"metric": "accuracy", "key": "blobs_accuracy"}, "%d"),
    "housing": (housing, {"type": "regression"}, {"metric": "mae", "key": "housing_mae"}, "%.4f"),
    "churn": (churn, {"type": "probability"}, {"metric": "brier", "key": "churn_brier"}, "%d"),
}


def write_csv(path, X, y=None, y_format="%d"):
    path.parent.mkdir(parents=True, exist_ok=True)
    cols = [f"x{i + 1}" for i in range(X.shape[1])]
    lines = [",".join(cols + (["y"] if y is not None else []))]
    for i, row in enumerate(X):
        cells = [f"{v:.4f}" for v in row] + ([y_format % y[i]] if y is not None else [])
        lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n")


def write_labels(path, y, y_format):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("y\n" + "".join(y_format % v + "\n" for v in y))


def main(bundle=BUNDLE):
    bundle = Path(bundle)
    rng = np.random.default_rng(SEED)
    for name, (make, info, ref_info, y_format) in TASKS.items():
        X_train, y_train = make(rng, SIZES["train"])
        for phase, folder in (("development", "dev_phase"), ("final", "final_phase")):
            X, y = make(rng, SIZES[phase])
            inputs, reference = bundle / folder / "input_data" / name, bundle / folder / "reference_data" / name
            write_csv(inputs / "train.csv", X_train, y_train, y_format)
            write_csv(inputs / "test.csv", X)
            (inputs / "task.json").write_text(json.dumps({"name": name, **info}) + "\n")
            write_labels(reference / "labels.csv", y, y_format)
            (reference / "task.json").write_text(json.dumps({"name": name, **ref_info}) + "\n")
    print(f"wrote dev_phase/ and final_phase/ under {bundle} (seed {SEED})")


if __name__ == "__main__":
    main(*sys.argv[1:2])
