import json
import os
import sys

res, out = os.path.join(sys.argv[1], "res"), sys.argv[2]
value = float(open(os.path.join(res, "pred.txt")).read())
json.dump({"score": value}, open(os.path.join(out, "scores.json"), "w"))
