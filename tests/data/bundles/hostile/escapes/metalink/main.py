# Plants links where the runner writes after the job (the platform's metadata file and the
# temporary name it was once written under), aimed at a canary beside --out: a runner that
# follows them writes into a host file.
import os
import sys

out = sys.argv[1]
canary = "../" * 7 + "canary"  # output/ -> prediction/ task/ candidate/ phase/ runs/ out/ ..
for name in (".metadata.tmp", ".metadata.yaml.tmp"):
    os.symlink(canary, os.path.join(out, name))
open(os.path.join(out, "pred.txt"), "w").write("0.5")
