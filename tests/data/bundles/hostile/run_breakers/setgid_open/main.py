# issue 49, 5: a set-group-ID folder any local user may write (2777): the set-id scrub
# clears its set-group-ID bit; its write bit for others must go too.
import os
import sys

out = sys.argv[1]
folder = os.path.join(out, "shared")
os.mkdir(folder)
os.chmod(folder, 0o2777)
print("mode:", oct(os.stat(folder).st_mode & 0o7777))
open(os.path.join(out, "pred.txt"), "w").write("0.5")
