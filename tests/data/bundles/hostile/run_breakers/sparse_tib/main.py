# issue 49, 5: a sparse file of 1 TiB (a few KB on disk) in the output. The local backend
# caps every file at --disk-limit (its size, what the file claims); the Docker one must
# too: kept in --out, the file is a terabyte for any tool that copies or archives it
# without its holes.
import os
import sys

out = sys.argv[1]
open(os.path.join(out, "pred.txt"), "w").write("0.5")
with open(os.path.join(out, "huge.bin"), "wb") as handle:
    handle.truncate(1 << 40)
print("a file of", os.stat(os.path.join(out, "huge.bin")).st_size, "bytes in the output")
