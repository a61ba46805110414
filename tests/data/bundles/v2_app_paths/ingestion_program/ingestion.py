"""Ingestion as the public examples write it: folders from argv, the model by a hard-coded path."""
import os
import sys

input_dir, output_dir, program_dir, submission_dir = sys.argv[1:5]
sys.path.append('/app/ingested_program')  # hard-coded, as in mini-automl's ingestion
from model import Model  # noqa: E402  (the submission's model.py)


def read(name):
    rows = [line.split(",") for line in open(os.path.join(input_dir, name)).read().split()]
    return [float(r[0]) for r in rows], [int(r[1]) for r in rows if len(r) > 1]


x_train, y_train = read("train.csv")
x_test, _ = read("test.csv")
model = Model()
model.fit(x_train, y_train)
with open(os.path.join(output_dir, "test.predict"), "w") as handle:
    handle.write("\n".join(str(p) for p in model.predict(x_test)) + "\n")
print("ingestion done:", len(x_test), "predictions")
