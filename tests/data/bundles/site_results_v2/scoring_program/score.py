"""Scores probabilities against 0/1 labels: AUC (higher is better) and log loss (lower).

Standard library only, so that it runs in any image with a Python 3.
"""
import json
import math
import os
import sys

input_dir, output_dir = sys.argv[1], sys.argv[2]
pred = [float(v) for v in open(os.path.join(input_dir, "res", "predictions.txt")).read().split()]
truth = [int(v) for v in open(os.path.join(input_dir, "ref", "truth.txt")).read().split()]
if len(pred) != len(truth):
    sys.exit(f"expected {len(truth)} probabilities, got {len(pred)}")
pos = [p for p, t in zip(pred, truth) if t == 1]
neg = [p for p, t in zip(pred, truth) if t == 0]
pairs = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in pos for b in neg)
auc = pairs / (len(pos) * len(neg))
eps = 1e-6
logloss = -sum(math.log(max(eps, p if t else 1 - p)) for p, t in zip(pred, truth)) / len(truth)
with open(os.path.join(output_dir, "scores.json"), "w") as f:
    json.dump({"auc": round(auc, 6), "logloss": round(logloss, 6)}, f)
