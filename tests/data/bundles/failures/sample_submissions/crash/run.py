import os
import sys
import time

output, mode = sys.argv[1], sys.argv[2]
if mode == "crash":
    raise RuntimeError("boom: this submission crashes on purpose")
if mode == "slow":
    time.sleep(30)
if mode == "selfmeta":
    open(os.path.join(output, "metadata"), "w").write("exitCode: 0\n")
open(os.path.join(output, "output.txt"), "w").write("good" if mode in ("slow", "selfmeta") else mode)
