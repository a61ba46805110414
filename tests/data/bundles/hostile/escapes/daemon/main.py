# A daemon (double fork, setsid) that outlives the job and writes 3 s later, and a look at
# the parent's environment for the runner's secrets.
import os
import sys
import time

out = sys.argv[1]
try:
    secret = open(f"/proc/{os.getppid()}/environ", "rb").read()
except OSError:
    secret = b""
print(("ESCAPE" if b"METASCORE_TEST_SECRET" in secret else "held") + ": the parent's environment")
open(os.path.join(out, "pred.txt"), "w").write("0.5")
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(3)
        open(os.path.join(out, "..", "daemon-was-here"), "w").write("alive")
    os._exit(0)
os.wait()
