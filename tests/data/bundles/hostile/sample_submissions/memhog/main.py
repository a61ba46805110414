import sys
import time

blocks = []
for _ in range(40):  # up to 1 GB, 25 MB at a time, every page touched
    blocks.append(bytearray(25 * 1024 * 1024))
    time.sleep(0.05)
open(sys.argv[1] + "/pred.txt", "w").write("0.1")
