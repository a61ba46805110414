# 5: a 400-digit integer in a YAML scores.txt.
import os
import sys

open(os.path.join(sys.argv[1], "scores.txt"), "w").write("score: 1" + "0" * 400 + "\n")
