# The output is not the only folder a job can write: 30 MB into /app/program (three files,
# each under the 20 MB cap of one file) must count against the disk limit of 20 MB.
import os
import sys
import time

open(os.path.join(sys.argv[1], "pred.txt"), "w").write("0.5")
for i in range(3):
    with open(f"/app/program/fill-{i}", "wb") as handle:
        handle.write(b"x" * (10 << 20))
time.sleep(5)
