# issue 42, 5: 300 MB in files of /tmp (closed, kept): on the Docker backend the container's
# own writable layer, which no mount shows; then it waits for the watch to look.
import os
import sys
import time

written = 0
for i in range(30):  # files of 10 MB: one file is capped at --disk-limit
    try:
        with open(f"/tmp/fill{i}", "wb") as handle:
            handle.write(b"x" * (10 << 20))
        written += 10
    except OSError as exc:
        print(f"held: /tmp refused more after {written} MB ({exc.strerror})")
        break
print(f"wrote {written} MB into /tmp")
time.sleep(10)
open(os.path.join(sys.argv[1], "pred.txt"), "w").write("0.5")
