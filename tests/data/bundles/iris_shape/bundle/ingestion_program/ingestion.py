"""Trains the submission's model on the input data and writes its predictions (as iris's
ingestion program does: it imports `model` from the submission, a result submission too)."""
import os
import sys

input_dir, output_dir, program_dir, submission_dir = sys.argv[1:5]
sys.path.append(program_dir)
sys.path.append(submission_dir)
from model import model  # noqa: E402  the code submission's model.py

rows = open(os.path.join(input_dir, "train.data")).read().split()
labels = open(os.path.join(input_dir, "train.solution")).read().split()
m = model()
m.fit(rows, labels)
os.makedirs(output_dir, exist_ok=True)
for name in ("valid", "test"):
    data = open(os.path.join(input_dir, f"{name}.data")).read().split()
    with open(os.path.join(output_dir, f"iris_{name}.predict"), "w") as f:
        f.write("\n".join(m.predict(data)) + "\n")
