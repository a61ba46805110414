"""Accuracy of the predictions in res/ against the solution in ref/ (set1_score), and the
prediction step's duration from the platform's metadata (Duration), as iris's scoring does."""
import glob
import os
import sys

import yaml

input_dir, output_dir = sys.argv[1:3]
(solution,) = glob.glob(os.path.join(input_dir, "ref", "*.solution"))
base = os.path.basename(solution)[:-len(".solution")]
found = glob.glob(os.path.join(input_dir, "res", base + "*.predict"))
truth = open(solution).read().split()
score = -0.999999
if found:
    pred = open(found[-1]).read().split()
    if len(pred) == len(truth):
        score = sum(a == b for a, b in zip(pred, truth)) / len(truth)
try:
    with open(os.path.join(input_dir, "res", "metadata")) as f:
        duration = yaml.safe_load(f).get("elapsedTime") or 0
except OSError:
    duration = 0
os.makedirs(output_dir, exist_ok=True)
with open(os.path.join(output_dir, "scores.txt"), "w") as f:
    f.write(f"set1_score: {score:.12f}\nDuration: {int(duration or 0)}\n")
