"""Accuracy of the predictions in res/ against the solution in ref/ (set1_score), and a
Duration column that is always 0, as iris's (its `yaml.load` without a Loader fails)."""
import glob
import os
import sys

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
os.makedirs(output_dir, exist_ok=True)
with open(os.path.join(output_dir, "scores.txt"), "w") as f:
    f.write(f"set1_score: {score:.12f}\nDuration: 0\n")  # iris's reading of the time fails: 0
