"""Import the participant's model from the code submission and write its predictions."""
import os
import sys

input_dir, output_dir, submission_dir = sys.argv[1:4]
sys.path.append(submission_dir)
from model import predict  # noqa: E402  (the submission's module)

with open(os.path.join(input_dir, "x.txt")) as f:
    xs = [int(v) for v in f.read().split()]
with open(os.path.join(output_dir, "predictions.txt"), "w") as f:
    f.write("\n".join(str(predict(x)) for x in xs) + "\n")
