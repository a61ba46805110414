# 5: a scores.json of 100,000 levels of nesting, passed through by the scoring program.
import os
import sys

open(os.path.join(sys.argv[1], "scores.json"), "w").write('{"score": ' + "[" * 100_000 + "]" * 100_000 + "}")
