# Root in a sandbox with capabilities could remount a read-only host folder and write it.
import os
import subprocess
import sys

status = dict(line.split(":", 1) for line in open("/proc/self/status"))
caps = int(status["CapEff"].strip(), 16)
print(("ESCAPE" if caps else "held") + f": effective capabilities {caps:#x}, uid {os.getuid()}")
print(("held" if status["NoNewPrivs"].strip() == "1" else "ESCAPE") + ": no_new_privs " + status["NoNewPrivs"].strip())
for target in ("/usr", "/etc"):
    try:
        done = subprocess.run(["mount", "-o", "remount,bind,rw", target], capture_output=True).returncode == 0
    except OSError:
        done = False
    print(("ESCAPE" if done else "held") + f": remount {target} read-write")
open(os.path.join(sys.argv[1], "pred.txt"), "w").write("0.5")
