# 8: 400 MB in files of /tmp that are unlinked but kept open for 10 s: no folder shows them.
import os
import sys
import tempfile
import time

held = []
for i in range(20):
    handle = tempfile.TemporaryFile()  # unlinked at once
    try:
        handle.write(b"x" * (20 << 20))
        handle.flush()
    except OSError:  # one file is capped at --disk-limit
        pass
    held.append(handle)
time.sleep(10)
open(os.path.join(sys.argv[1], "pred.txt"), "w").write("0.5")
