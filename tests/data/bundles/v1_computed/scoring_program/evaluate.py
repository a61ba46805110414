import os
import sys

input_dir, output_dir = sys.argv[1], sys.argv[2]
res = open(os.path.join(input_dir, "res", "answer.txt")).read().split()
ref = open(os.path.join(input_dir, "ref", "answer.txt")).read().split()
with open(os.path.join(output_dir, "scores.txt"), "w") as f:
    f.write(f"set1_score: {float(res[0] == ref[0]):.4f}\nset2_score: {float(res[1] == ref[1]):.4f}\n")
