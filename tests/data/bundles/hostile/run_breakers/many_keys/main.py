# 10: 10^6 score keys besides the leaderboard's (the key filter must be linear).
import json
import os
import sys

scores = {f"extra_{i}": 0.5 for i in range(1_000_000)}
scores["score"] = 0.5
json.dump(scores, open(os.path.join(sys.argv[1], "scores.json"), "w"))
