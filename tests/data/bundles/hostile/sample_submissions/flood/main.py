import sys

line = ("flood " * 20 + "\n") * 8000  # about 1 MB
for _ in range(300):  # about 300 MB on stdout
    sys.stdout.write(line)
sys.stdout.flush()
open(sys.argv[1] + "/pred.txt", "w").write("0.5")
