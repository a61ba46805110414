"""Accuracy of input/res/predictions.txt against input/ref/truth.txt (one label per line)."""
import json
import os
import sys

input_dir, output_dir = sys.argv[1], sys.argv[2]
with open(os.path.join(input_dir, "ref", "truth.txt")) as f:
    truth = f.read().split()
pred_file = os.path.join(input_dir, "res", "predictions.txt")
if not os.path.isfile(pred_file):
    sys.exit("no predictions.txt in the submission's output")
with open(pred_file) as f:
    pred = f.read().split()
if len(pred) != len(truth):
    sys.exit(f"{len(pred)} predictions for {len(truth)} rows")
hits = [p == t for p, t in zip(pred, truth)]
scores = {
    "accuracy": sum(hits) / len(truth),
    # keys that are not leaderboard columns, as real scoring programs write them
    "details": {"n_rows": len(truth), "per_row": hits},
    "note": "computed on " + os.path.basename(os.path.normpath(input_dir)),
    "labels": sorted(set(truth)),
}
with open(os.path.join(output_dir, "scores.json"), "w") as f:
    json.dump(scores, f)
with open(os.path.join(output_dir, "detailed_results.html"), "w") as f:
    f.write("<html><body><p>%d of %d rows right</p></body></html>\n" % (sum(hits), len(truth)))
