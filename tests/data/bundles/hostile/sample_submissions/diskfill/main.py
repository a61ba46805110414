import sys
for i in range(100):  # 100 files of 1 MB
    with open(f"{sys.argv[1]}/fill{i}.bin", "wb") as handle:
        handle.write(b"x" * 1024 * 1024)
open(sys.argv[1] + "/pred.txt", "w").write("0.2")
