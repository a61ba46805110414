"""Scores 1.0, or misbehaves on purpose according to the submission's output.txt."""
import json
import os
import sys

input_dir, output_dir = sys.argv[1], sys.argv[2]
path = os.path.join(input_dir, "res", "output.txt")
if not os.path.exists(path):
    sys.exit("score.py: no output.txt in the submission's output")
mode = open(path).read().strip()
out = os.path.join(output_dir, "{}")
if mode == "good":
    json.dump({"score": 1.0}, open(out.format("scores.json"), "w"))
elif mode == "nan":
    open(out.format("scores.json"), "w").write('{"score": NaN}')
elif mode == "nospace":
    open(out.format("scores.txt"), "w").write("score:1\n")
elif mode == "none":
    print("score.py: forgot to write the scores")
