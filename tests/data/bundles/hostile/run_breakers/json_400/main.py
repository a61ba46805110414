# 5: a 400-digit integer in scores.json (more than a float holds).
import os
import sys

open(os.path.join(sys.argv[1], "scores.json"), "w").write('{"score": 1' + "0" * 400 + "}")
