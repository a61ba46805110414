# /dev/shm is memory: 40 x 15 MB there is 600 MB of RAM outside every limit, unless the job
# has a small /dev/shm of its own.
import os
import sys

written = 0
try:
    for i in range(40):
        with open(f"/dev/shm/metascore-hostile-{os.getpid()}-{i}", "wb") as handle:
            handle.write(b"x" * (15 << 20))
        written += 15
except OSError as exc:
    print(f"held: /dev/shm refused more after {written} MB ({exc.strerror})")
else:
    print(f"ESCAPE: {written} MB written to /dev/shm")
open(os.path.join(sys.argv[1], "pred.txt"), "w").write("0.5")
