# issue 42, 4: what a job run as root outside a sandbox (the rewrite mode) could do: read
# /etc/shadow, write next to --out, leave its session and its control groups, kill its
# supervisor, and leave a process that outlives the run. Each attempt says "held" or
# "ESCAPE"; what it reads is copied into its output, which the test searches.
import os
import signal
import sys
import time

out = sys.argv[1]
try:
    data = open("/etc/shadow", "rb").read()
    open(os.path.join(out, "shadow.txt"), "wb").write(data)
    print("ESCAPE: read /etc/shadow")
except OSError as exc:
    print(f"held: /etc/shadow ({exc.strerror})")
here = os.getcwd()  # in the rewrite mode <out>/runs/<phase>/<candidate>/<task>/prediction/program
while here != "/" and os.path.basename(here) != "runs":
    here = os.path.dirname(here)
if here != "/":  # <out>/runs: write beside <out>
    try:
        open(os.path.join(os.path.dirname(os.path.dirname(here)), "PWNED-next-to-out"), "w").write("x")
        print("ESCAPE: wrote next to --out")
    except OSError as exc:
        print(f"held: next to --out ({exc.strerror})")
for controller in ("memory", "pids", "unified"):
    try:
        with open(f"/sys/fs/cgroup/{controller}/cgroup.procs", "w") as handle:
            handle.write(str(os.getpid()))
        print(f"ESCAPE: left its {controller} group")
    except OSError as exc:
        print(f"held: its {controller} group ({exc.strerror})")
if os.fork() == 0:  # a daemon in a session of its own, meant to outlive the run
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)", "metascore-hostile-survivor"])
    os._exit(0)
time.sleep(0.5)
if os.getppid() > 1:  # a sandbox's or a container's first process is its own init, or none
    try:
        os.kill(os.getppid(), signal.SIGKILL)
        print("ESCAPE: killed its supervisor")
    except OSError as exc:
        print(f"held: its supervisor ({exc.strerror})")
open(os.path.join(out, "pred.txt"), "w").write("0.5")
