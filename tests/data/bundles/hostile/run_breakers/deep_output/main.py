# 3: an output 1,500 folders deep (made one level at a time: os.makedirs recurses).
import os
import sys

open(os.path.join(sys.argv[1], "pred.txt"), "w").write("0.5")
os.chdir(sys.argv[1])
for _ in range(1500):
    os.mkdir("d")
    os.chdir("d")
open("bottom.txt", "w").write("deep")
