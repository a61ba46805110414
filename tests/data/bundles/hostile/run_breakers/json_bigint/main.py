# 5: a 5,000-digit integer in scores.json (more digits than int() takes by default).
import os
import sys

open(os.path.join(sys.argv[1], "scores.json"), "w").write('{"score": 1' + "0" * 5000 + "}")
