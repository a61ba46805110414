# 6: 20 sparse 19 MB files (a few KB on disk) and 20 links to them (10 hard, 10 symbolic):
# copied naively, 760 MB.
import os
import sys

out = sys.argv[1]
open(os.path.join(out, "pred.txt"), "w").write("0.5")
for i in range(20):
    with open(os.path.join(out, f"sparse{i}.bin"), "wb") as handle:
        handle.truncate(19 << 20)
        handle.write(b"x")
    if i < 10:
        os.link(os.path.join(out, f"sparse{i}.bin"), os.path.join(out, f"hard{i}.bin"))
    else:
        os.symlink(f"sparse{i}.bin", os.path.join(out, f"soft{i}.bin"))
