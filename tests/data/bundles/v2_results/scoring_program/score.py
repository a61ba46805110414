import os
import sys

input_dir, output_dir = sys.argv[1], sys.argv[2]
truth = open(os.path.join(input_dir, "ref", "truth.txt")).read().split()
pred = open(os.path.join(input_dir, "res", "predictions.txt")).read().split()
if len(pred) != len(truth):
    sys.exit(f"expected {len(truth)} predictions, got {len(pred)}")
acc = sum(p == t for p, t in zip(pred, truth)) / len(truth)
with open(os.path.join(output_dir, "scores.txt"), "w") as f:
    f.write(f"accuracy: {acc:.6f}\nunknown_key: 1\n")
