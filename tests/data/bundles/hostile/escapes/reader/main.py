# Reads what a job must not see: root-only files, a canary in the runner's home, the bundle
# (its answer key) beside --out, and the other candidates' reference data under --out/runs,
# whose host paths the mount table gives away.
import glob
import os
import sys


def attempt(path):
    try:
        with open(path, "rb") as handle:
            handle.read(16)
        print(f"ESCAPE: read {path}")
    except OSError as exc:
        print(f"held: {path} ({exc.strerror})")


host_output = next(line.split()[3] for line in open("/proc/self/mountinfo") if line.split()[4] == "/app/output")
out = host_output.split("/runs/")[0]
# the host's /etc is shown by the local sandbox (a container shows its image's own)
paths = ["/etc/shadow"] if os.path.isdir("/.metascore") else []
paths += [*glob.glob("/root/.metascore-hostile-*/secret"), *glob.glob("/home/*/.metascore-hostile-*/secret"),
         os.path.join(out, "..", "bundle", "ref", "truth.txt"),
         *glob.glob(os.path.join(out, "runs", "*", "*", "*", "scoring", "input", "ref", "truth.txt"))]
for path in paths:
    attempt(path)
for folder in ("/root", "/home", "/run", "/var", "/work", out):
    try:
        print(f"seen: {folder}: {sorted(os.listdir(folder))}")
    except OSError as exc:
        print(f"held: {folder} ({exc.strerror})")
open(os.path.join(sys.argv[1], "pred.txt"), "w").write("0.5")
