"""Label 1 when x1 > 0.5."""
import csv
import os
import sys

data_dir, out_dir = sys.argv[1], sys.argv[2]
with open(os.path.join(data_dir, "test.csv")) as f:
    rows = list(csv.DictReader(f))
with open(os.path.join(out_dir, "predictions.csv"), "w") as f:
    f.write("label\n" + "".join("%d\n" % (float(r["x1"]) > 0.5) for r in rows))
