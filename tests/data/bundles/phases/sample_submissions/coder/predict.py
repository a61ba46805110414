"""Predict the parity of each number in x.txt."""
import os
import sys

data, out = sys.argv[1], sys.argv[2]
with open(os.path.join(data, "x.txt")) as f:
    xs = [int(v) for v in f.read().split()]
with open(os.path.join(out, "predictions.txt"), "w") as f:
    f.write("\n".join("even" if x % 2 == 0 else "odd" for x in xs) + "\n")
