# 11: 684 MB in memfd files: memory, but no process's address space and no folder.
import os
import sys

held, written = [], 0
for i in range(36):
    fd = os.memfd_create(f"hostile{i}")
    os.write(fd, b"x" * (19 << 20))
    held.append(fd)
    written += 19
print(f"ESCAPE: {written} MB in memfd files")
open(os.path.join(sys.argv[1], "pred.txt"), "w").write("0.5")
