"""Accuracy of res/predictions.txt against ref/answers.txt (one label a line)."""
import json
import os
import sys

from sklearn.metrics import accuracy_score

input_dir, output_dir = sys.argv[1], sys.argv[2]
with open(os.path.join(input_dir, "ref", "answers.txt")) as f:
    truth = f.read().split()
with open(os.path.join(input_dir, "res", "predictions.txt")) as f:
    pred = f.read().split()
if len(pred) != len(truth):
    sys.exit(f"expected {len(truth)} predictions, got {len(pred)}")
with open(os.path.join(output_dir, "scores.json"), "w") as f:
    json.dump({"accuracy": accuracy_score(truth, pred)}, f)
