"""Scoring as the public examples write it: every folder hard-coded under /app."""
import json
import os

res, ref, out = "/app/input/res", "/app/input/ref", "/app/output/"
pred = [int(v) for v in open(os.path.join(res, "test.predict")).read().split()]
truth = [int(v) for v in open(os.path.join(ref, "test.solution")).read().split()]
accuracy = sum(p == t for p, t in zip(pred, truth)) / len(truth)
with open(os.path.join(out, "scores.json"), "w") as handle:
    json.dump({"accuracy": accuracy}, handle)
with open(os.path.join(out, "detailed_results.html"), "w") as handle:
    handle.write(f"<html><body><p>accuracy {accuracy:.3f}</p></body></html>\n")
