# 4: 40,000 empty files: no byte written, 40,000 inodes taken.
import os
import sys

open(os.path.join(sys.argv[1], "pred.txt"), "w").write("0.5")
for i in range(40_000):
    open(os.path.join(sys.argv[1], f"e{i}"), "w").close()
