"""Inputs and expected outputs of tests/programs/test_vectorized_outputs.py.

The expected outputs were written by metascore before the coded canonical table (commit
fd36288; rewritten by 6ded4bb, the same pipeline with the signature's ``submission_order``
of issue 25), so the test shows that the column readers, the pivot by codes and the array
views of the boards publish the same files, byte for byte (but for the two settings the
change added to the effective configuration, output.judge_columns and output.per_judge).
Two files were rewritten since, for a fix: ``expected/mean/rank.txt`` shows the
``score`` column, which the quick-mode table dropped for every method shown as a score
(mean, copeland, ...) instead of only for those shown as something else (average rank;
``expected/long/rank.txt`` likewise):

    git worktree add /tmp/before 6ded4bb
    python tests/data/vectorized/make_expected.py --inputs          # the inputs (seeded)
    PYTHONPATH=/tmp/before/src python tests/data/vectorized/make_expected.py --outputs

Issue 31 changed only the words of the filter's reasons and of the report's qualification
section (a one-phase competition names its phase, not a development phase; a baseline is
cited by its final-board id, with its development id): the files were written again by this
script with the pipeline of that change, and the two settings taken out
(``without_new_settings`` of the test), every other byte as before. Issue 41 changed the words
of the top_k reasons of candidates below a baseline (their position among the non-baseline
candidates, which top_k counts, with the position among all in parentheses) and of the
signature's submission order (a final candidate takes its earlier submission's place whether
it was migrated or made again): those words were replaced in the files, every other byte as
before.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
#: case -> (input file, configuration, quick-mode options)
CASES = {
    "wide": ("wide.csv", "wide.yaml", ["-m", "average_rank", "-l", "rmse_2", "-w", "acc_1=2"]),
    "long": ("long.csv", "long.yaml", ["--phase", "Final", "-m", "copeland"]),
    "mean": ("wide.csv", "mean.yaml", ["-m", "mean", "--exclude", "acc_3"]),
}


def write_inputs() -> None:
    rng = np.random.default_rng(2026)
    judges = [f"{'rmse' if j % 5 == 2 else 'acc'}_{j}" for j in range(40)]
    lines = ["candidate,participant,submitted_at,is_baseline," + ",".join(judges)]
    for i in range(12):
        quality = rng.normal()
        cells = []
        for j in range(40):
            if rng.random() < 0.04:
                cells.append(rng.choice(["", "n/a", "NaN"]))
            else:
                cells.append(f"{quality + rng.normal():.4f}" if j % 7 else f"{rng.integers(0, 4)}")
        day = 1 + i % 9
        lines.append(f"cand{i:02d},team{i % 8},2024-03-0{day}T10:00:00Z,{'true' if i == 11 else 'false'},"
                     + ",".join(cells))
    (HERE / "wide.csv").write_text("\n".join(lines) + "\n")
    rows = ["phase,candidate,participant,task,metric,value,submitted_at,is_baseline"]
    for phase in ("Development", "Final"):
        for i in range(7):
            owner = "organizers" if i == 0 else f"p{i % 5}"
            cand = f"{owner}-{10 * i + (phase == 'Final')}"
            for task in ("iris", "wine", "digits"):
                for metric in ("accuracy", "time"):
                    if rng.random() < 0.05:
                        continue
                    value = round(float(rng.normal(0.5 + 0.05 * i, 0.1)), 3)
                    rows.append(f"{phase},{cand},{owner},{task},{metric},{value},"
                                f"2024-0{1 + (phase == 'Final')}-1{i}T00:00:00,{str(i == 0).lower()}")
    (HERE / "long.csv").write_text("\n".join(rows) + "\n")
    (HERE / "wide.yaml").write_text(
        "phases: {development: Development, final: null}\n"
        "judges:\n" + "".join(f"  - {{task: {j}, direction: {'lower' if j.startswith('rmse') else 'higher'}}}\n"
                              for j in judges)
        + "analysis: {bootstrap: 20, stability: true}\n"
        "output: {scores: {n_candidates: n_candidates, winner_score: winner_score, agreement: kendall_w}}\n")
    (HERE / "long.yaml").write_text(
        "baselines: [organizers]\n"
        "judges:\n  - {task: iris, metric: accuracy}\n  - {task: wine, metric: accuracy, weight: 2}\n"
        "  - {task: digits, metric: accuracy}\n  - {task: iris, metric: time, direction: lower}\n"
        "ranking: {method: copeland}\nanalysis: {bootstrap: 30, compare: [average_rank, copeland]}\n")
    (HERE / "mean.yaml").write_text(
        "phases: {development: Development, final: null}\nranking: {method: mean, missing: worst}\n"
        "filter: {rule: top_k, k: 5}\nanalysis: {bootstrap: 0, stability: false}\n")


def write_outputs() -> None:
    from metascore.cli import main

    for case, (data, config, quick) in CASES.items():
        out = HERE / "expected" / case
        shutil.rmtree(out, ignore_errors=True)
        assert main(["rank", "--config", str(HERE / config), "--input", str(HERE / data),
                     "--output", str(out)]) == 0
        (out / "rank.txt").write_text(quick_mode(data, quick))


def quick_mode(data: str, options: list[str]) -> str:
    """What ``metascore rank FILE OPTIONS`` prints (stdout, then stderr), run from the
    inputs' folder so that no absolute path shows."""
    from metascore.cli import main

    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(HERE)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            assert main(["rank", data, *options]) == 0
    finally:
        os.chdir(here)
    return out.getvalue() + "--- stderr\n" + err.getvalue()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", action="store_true")
    parser.add_argument("--outputs", action="store_true")
    args = parser.parse_args()
    if args.inputs:
        write_inputs()
    if args.outputs:
        write_outputs()
