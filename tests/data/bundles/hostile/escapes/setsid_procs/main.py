# 120 processes, each in a session of its own (double fork + setsid): a watcher that counts
# one session sees none of them (limit: 50 processes). Each one that starts says so.
import os
import sys
import time

open(os.path.join(sys.argv[1], "pred.txt"), "w").write("0.5")
read, write = os.pipe()
for _ in range(120):
    try:
        child = os.fork()
    except OSError:
        continue
    if child == 0:
        os.setsid()
        try:
            if os.fork() == 0:
                os.write(write, b"+")
                time.sleep(20)
        finally:
            os._exit(0)
    os.wait()
time.sleep(3)
os.set_blocking(read, False)
try:
    started = len(os.read(read, 4096))
except BlockingIOError:
    started = 0
print(("ESCAPE" if started > 50 else "held") + f": {started} processes in sessions of their own")
