# CodaLab v1 scoring program: accuracy on three sets, written as scores.txt "key: value" lines.
import os
import sys

input_dir, output_dir = sys.argv[1], sys.argv[2]
lines = []
for name in ("set1", "set2", "set3"):
    pred = open(os.path.join(input_dir, "res", name + ".txt")).read().split()
    truth = open(os.path.join(input_dir, "ref", name + ".txt")).read().split()
    if len(pred) != len(truth):
        sys.exit("%s: expected %d labels, got %d" % (name, len(truth), len(pred)))
    lines.append("%s_score: %.6f" % (name, sum(p == t for p, t in zip(pred, truth)) / float(len(truth))))
open(os.path.join(output_dir, "scores.txt"), "w").write("\n".join(lines) + "\n")
