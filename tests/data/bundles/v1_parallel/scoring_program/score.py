"""Fraction of correct predictions, and the prediction step's duration (v1.5 style)."""
import os
import sys

import yaml

input_dir, output_dir = sys.argv[1], sys.argv[2]
with open(os.path.join(input_dir, "ref", "truth.txt")) as f:
    truth = f.read().split()
with open(os.path.join(input_dir, "res", "predictions.txt")) as f:
    pred = f.read().split()
with open(os.path.join(input_dir, "res", "metadata")) as f:
    duration = float(yaml.safe_load(f)["elapsedTime"])  # fails on null, as on the platform
with open(os.path.join(output_dir, "scores.txt"), "w") as f:
    f.write("correct: %.6f\n" % (sum(p == t for p, t in zip(pred, truth)) / len(truth)))
    f.write("Duration: %.6f\n" % duration)
