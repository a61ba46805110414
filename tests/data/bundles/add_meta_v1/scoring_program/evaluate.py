import os
import sys

input_dir, output_dir = sys.argv[1], sys.argv[2]
pred = [float(v) for v in open(os.path.join(input_dir, "res", "predictions.txt")).read().split()]
ref = [float(v) for v in open(os.path.join(input_dir, "ref", "truth.txt")).read().split()]
if len(pred) != len(ref):
    sys.exit(f"expected {len(ref)} predictions, got {len(pred)}")
hits = sum(abs(p - t) < 0.5 for p, t in zip(pred, ref)) / len(ref)
rmse = (sum((p - t) ** 2 for p, t in zip(pred, ref)) / len(ref)) ** 0.5
with open(os.path.join(output_dir, "scores.txt"), "w") as f:
    f.write(f"hits: {hits:.6f}\nrmse: {rmse:.6f}\nDuration: 0.01\n")
