"""Accuracy of the labels in res/predictions.txt against ref/truth.txt."""
import json
import os
import sys

input_dir, output_dir = sys.argv[1], sys.argv[2]
truth = open(os.path.join(input_dir, "ref", "truth.txt")).read().split()
pred = open(os.path.join(input_dir, "res", "predictions.txt")).read().split()
if len(pred) != len(truth):
    sys.exit(f"expected {len(truth)} predictions, got {len(pred)}")
with open(os.path.join(output_dir, "scores.json"), "w") as f:
    json.dump({"accuracy": sum(p == t for p, t in zip(pred, truth)) / len(truth)}, f)
