import sys

line = ("flood " * 1000 + "\n") * 170  # about 1 MB in long lines
for _ in range(200):  # about 200 MB on stdout
    sys.stdout.write(line)
sys.stdout.flush()
open(sys.argv[1] + "/pred.txt", "w").write("0.5")
