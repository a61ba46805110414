import sys
import os
import time

for _ in range(120):  # 120 sleeping children, bounded
    if os.fork() == 0:
        time.sleep(20)
        os._exit(0)
time.sleep(20)
