"""Run the submission's predict(xs) on the input xs; write one prediction per line."""
import importlib.util
import os
import sys
import time

input_dir, output_dir, submission_dir = sys.argv[1:4]
spec = importlib.util.spec_from_file_location("model", os.path.join(submission_dir, "model.py"))
model = importlib.util.module_from_spec(spec)
spec.loader.exec_module(model)
xs = [float(v) for v in open(os.path.join(input_dir, "x.txt")).read().split()]
start = time.time()
ys = model.predict(xs)
with open(os.path.join(output_dir, "predictions.txt"), "w") as f:
    f.write("\n".join(repr(float(y)) for y in ys) + "\n")
with open(os.path.join(output_dir, "duration.txt"), "w") as f:
    f.write(repr(time.time() - start))
