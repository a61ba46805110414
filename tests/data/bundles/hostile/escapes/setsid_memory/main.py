# Three children in sessions of their own each hold 200 MB (limit: 256 MB for the job).
import os
import sys
import time

open(os.path.join(sys.argv[1], "pred.txt"), "w").write("0.5")
read, write = os.pipe()
for _ in range(3):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            block = bytearray(200 * 1024 * 1024)  # every page touched
            os.write(write, b"%d\n" % os.getpid())
            time.sleep(20)
        os._exit(0)
    os.wait()
time.sleep(3)
os.set_blocking(read, False)
try:
    pids = [int(p) for p in os.read(read, 4096).split()]
except BlockingIOError:
    pids = []
alive = []
for pid in pids:
    try:
        os.kill(pid, 0)
        alive.append(pid)
    except OSError:
        pass
print(("ESCAPE" if len(alive) > 1 else "held") + f": {len(alive)} x 200 MB alive at once")
