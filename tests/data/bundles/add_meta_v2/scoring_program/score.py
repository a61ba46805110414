"""Scores: accuracy (the sign of y), r2 (negative when worse than the mean), mae, duration."""
import os
import sys

input_dir, output_dir = sys.argv[1], sys.argv[2]
truth = [float(v) for v in open(os.path.join(input_dir, "ref", "y.txt")).read().split()]
pred = [float(v) for v in open(os.path.join(input_dir, "res", "predictions.txt")).read().split()]
if len(pred) != len(truth):
    sys.exit(f"expected {len(truth)} predictions, got {len(pred)}")
n = len(truth)
mean = sum(truth) / n
accuracy = sum((p > 0) == (t > 0) for p, t in zip(pred, truth)) / n
r2 = 1 - sum((p - t) ** 2 for p, t in zip(pred, truth)) / sum((t - mean) ** 2 for t in truth)
mae = sum(abs(p - t) for p, t in zip(pred, truth)) / n
duration = float(open(os.path.join(input_dir, "res", "duration.txt")).read())
with open(os.path.join(output_dir, "scores.json"), "w") as f:
    f.write('{"accuracy": %r, "r2": %r, "mae": %r, "duration": %r}\n' % (accuracy, r2, mae, duration))
