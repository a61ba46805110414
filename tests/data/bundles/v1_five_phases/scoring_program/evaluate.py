# A scoring program written for this fixture in the style of SemEval-2020 Task 4's: a result
# submission holds subtaskA_answers.csv, subtaskB_answers.csv and/or subtaskC_answers.csv
# (no header; "id,answer"); a subtask without its file scores 0; answers whose ids are not
# the reference's stop the program (exit 4), as the original's "missing prediction" does.
import csv
import math
import os
import sys
from collections import Counter

input_dir, output_dir = sys.argv[1], sys.argv[2]
res, ref = os.path.join(input_dir, "res"), os.path.join(input_dir, "ref")


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return {r[0]: r[1:] for r in csv.reader(f) if r}


def accuracy(gold, pred):
    return 100.0 * sum(pred[i][0] == g[0] for i, g in gold.items()) / len(gold)


def bleu1(gold, pred):
    """Clipped unigram precision with the brevity penalty (BLEU of order 1)."""
    matches = total = ref_len = 0
    for i, refs in gold.items():
        words = pred[i][0].split()
        best = Counter()
        for r in refs:
            best |= Counter(r.split())
        matches += sum((Counter(words) & best).values())
        total += len(words)
        ref_len += min(len(r.split()) for r in refs)
    if total == 0:
        return 0.0
    penalty = 1.0 if total > ref_len else math.exp(1 - ref_len / total)
    return 100.0 * matches / total * penalty


lines = []
for key, name, metric in (("A_Accuracy", "subtaskA", accuracy), ("B_Accuracy", "subtaskB", accuracy),
                          ("C_BLEU", "subtaskC", bleu1)):
    answers = os.path.join(res, name + "_answers.csv")
    if not os.path.isfile(answers):
        lines.append(key + ": 0")
        continue
    gold, pred = rows(os.path.join(ref, name + "_gold_answers.csv")), rows(answers)
    if set(pred) != set(gold):
        print("%s: %d reference id(s) without an answer, %d answer(s) for unknown ids"
              % (name, len(set(gold) - set(pred)), len(set(pred) - set(gold))), file=sys.stderr)
        sys.exit(4)
    lines.append("%s: %.4f" % (key, metric(gold, pred)))
with open(os.path.join(output_dir, "scores.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
