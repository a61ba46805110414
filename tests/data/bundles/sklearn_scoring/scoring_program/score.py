"""F1 and accuracy of predictions.csv against solution.csv, with scikit-learn."""
import csv
import json
import os
import sys

from sklearn.metrics import accuracy_score, confusion_matrix, f1_score

ref_dir, res_dir, out_dir = sys.argv[1:4]


def labels(path):
    with open(path) as f:
        return [int(row["label"]) for row in csv.DictReader(f)]


truth = labels(os.path.join(ref_dir, "solution.csv"))
pred = labels(os.path.join(res_dir, "predictions.csv"))
scores = {
    "f1": round(float(f1_score(truth, pred)), 6),
    "accuracy": round(float(accuracy_score(truth, pred)), 6),
    "confusion": confusion_matrix(truth, pred).tolist(),
}
with open(os.path.join(out_dir, "scores.json"), "w") as f:
    json.dump(scores, f)
