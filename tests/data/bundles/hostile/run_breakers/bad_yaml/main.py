import sys
open(sys.argv[1] + "/pred.txt", "w").write("0.5")
