"""Bad inputs to the scoring program: exit 1, one clear stderr line, no output file.

Each case builds ``input/ref/metascore.yaml`` and ``input/res/...`` and calls
:func:`metascore.program.score_main` (the function ``score.py`` calls).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from metascore.program import score_main
from repo_paths import TESTS

FIXTURE = TESTS / "data" / "competition"
LONG = (FIXTURE / "long.csv").read_text()
JUDGES = """\
judges:
  - {task: iris, metric: accuracy}
  - {task: wine, metric: mae, direction: lower}
  - {task: digits, metric: f1}
"""
GOOD = f"input: {{path: long.csv}}\n{JUDGES}baselines: [organizers]\n"
HEADER = "phase,candidate,participant,task,metric,value,submitted_at,is_baseline\n"


def _wine_empty() -> str:
    lines = LONG.splitlines(keepends=True)
    return "".join(
        ",".join(c if k != 5 else "" for k, c in enumerate(line.rstrip("\n").split(","))) + "\n"
        if ",wine," in line else line
        for line in lines
    )


CASES = {
    "malformed JSON": (
        GOOD.replace("long.csv", "results.json"),
        {"results.json": '{"Results - Final(12)": {"alice-101": '},
        r"results\.json",
    ),
    "key:value without a space": (
        "input: {path: tree}\nphases: {final: null}\n",
        {"tree/Development/alice-101/iris/scores.txt": "accuracy:0.97\n",
         "tree/Development/bob-103/iris/scores.txt": "accuracy: 0.93\n"},
        r"no space after the colon",
    ),
    "NaN in a score": (
        GOOD,
        {"long.csv": LONG.replace(",0.9667,", ",NaN,").replace(",0.412,", ",inf,")},
        r"inf",
    ),
    "Infinity in JSON scores": (
        "input: {path: tree}\nphases: {final: null}\n",
        {"tree/Development/alice-101/iris/scores.json": '{"accuracy": Infinity}',
         "tree/Development/bob-103/iris/scores.json": '{"accuracy": 0.9}'},
        r"Infinity|finite",
    ),
    "a task missing for everyone": (
        GOOD,
        {"long.csv": _wine_empty()},
        r"task 'wine' .*no score for any candidate in phase 'Development'",
    ),
    "a configured task absent from the data": (
        GOOD.replace("task: digits", "task: digit"),
        {"long.csv": LONG},
        r"judge 'digit/f1': task 'digit' .*no score in phase 'Development'.*did you mean 'digits/f1'",
    ),
    "unknown method": (
        GOOD + "ranking: {method: copland}\n",
        {"long.csv": LONG},
        r"ranking\.method.*got 'copland' \(did you mean 'copeland'\?\)",
    ),
    "unknown method parameter": (
        GOOD + "ranking: {method: success_rate, params: {tie: half}}\n",
        {"long.csv": LONG},
        r"unknown parameter 'ranking\.params\.tie'.*did you mean 'ties'",
    ),
    "baseline name not found": (
        GOOD.replace("[organizers]", "[organisers]"),
        {"long.csv": LONG},
        r"baseline 'organisers'.*neither a candidate nor a participant.*did you mean 'organizers'",
    ),
    "empty input": (GOOD, {"long.csv": ""}, r"empty|no scores"),
    "header only": (GOOD, {"long.csv": HEADER}, r"no scores|nothing to rank|no rows"),
    "duplicate candidate ids": (
        GOOD,
        {"long.csv": LONG + "Final,bob-103,bob,iris,accuracy,0.5,2024-03-02T08:45:00+00:00,false\n"},
        r"bob-103",
    ),
    "a candidate id shared by two participants": (
        GOOD,
        {"long.csv": LONG.replace("Final,carol-104,carol,", "Final,bob-103,carol,")},
        r"bob-103",
    ),
    "config key typo": (
        GOOD + "rankng: {method: copeland}\n",
        {"long.csv": LONG},
        r"unknown key 'rankng' in metascore\.yaml \(did you mean 'ranking'\?\)",
    ),
    "nested config key typo": (
        GOOD + "filter: {rulle: none}\n",
        {"long.csv": LONG},
        r"unknown key 'filter\.rulle' in metascore\.yaml \(did you mean 'rule'\?\)",
    ),
    "bad config value": (
        GOOD + "ranking: {missing: wrost}\n",
        {"long.csv": LONG},
        r"`ranking\.missing` must be one of \[.*\]; got 'wrost' \(did you mean 'worst'\?\)",
    ),
    "analysis key typo": (
        GOOD + "analysis: {bootstap: 100}\n",
        {"long.csv": LONG},
        r"unknown key 'analysis\.bootstap' in metascore\.yaml \(did you mean 'bootstrap'\?\)",
    ),
    "bad analysis value": (
        GOOD + "analysis: {level: 95}\n",
        {"long.csv": LONG},
        r"`analysis\.level` must be a number strictly between 0 and 1 \(e\.g\. 0\.95\); got 95",
    ),
    "config is not YAML": (
        "judges: [\n", {"long.csv": LONG}, r"not valid YAML",
    ),
    "a path that escapes the input directory": (
        GOOD.replace("path: long.csv", "path: ../ref/metascore.yaml"),
        {"long.csv": LONG},
        r"`input\.path` must be a relative path inside the input directory",
    ),
    "a phase missing from the data": (
        GOOD + "phases: {final: Finale}\n",
        {"long.csv": LONG},
        # which phases hold scores, and why the one named may not (issue 41, item 4)
        r"phase 'Finale' \(phases\.final\) has no scores in the input \(did you mean 'Final'\?\): "
        r"no submission of it reached the results export\. .*nobody submitted to 'Finale', or "
        r"nothing migrated into it .*Phases with scores: 'Development' \(7 submission\(s\)\), "
        r"'Final' \(7 submission\(s\)\)",
    ),
    "every submission after the deadline": (
        GOOD + "phases: {deadlines: {Final: 2024-01-01}}\n",
        {"long.csv": LONG},
        r"every submission of phase 'Final' is after its deadline",
    ),
}


def _setup(tmp_path: Path, config: str | None, files: dict[str, str]) -> tuple[Path, Path]:
    inp, out = tmp_path / "input", tmp_path / "output"
    (inp / "ref").mkdir(parents=True)
    (inp / "res").mkdir(parents=True)
    out.mkdir()
    if config is not None:
        (inp / "ref" / "metascore.yaml").write_text(config)
    for rel, text in files.items():
        path = inp / "res" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return inp, out


def _assert_failed(code: int, err: str, out: Path, pattern: str) -> None:
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("metascore: error: ")
    assert "Traceback" not in err
    assert re.search(pattern, lines[0]), lines[0]
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input(tmp_path, capsys, name):
    config, files, pattern = CASES[name]
    inp, out = _setup(tmp_path, config, files)
    code = score_main(inp, out)
    _assert_failed(code, capsys.readouterr().err, out, pattern)


def test_missing_config(tmp_path, capsys):
    inp, out = _setup(tmp_path, None, {"long.csv": LONG})
    code = score_main(inp, out)
    _assert_failed(code, capsys.readouterr().err, out, r"no metascore\.yaml in the reference data")


def test_symlink_escaping_the_input(tmp_path, capsys):
    inp, out = _setup(tmp_path, GOOD.replace("long.csv", "link.csv"), {})
    secret = tmp_path / "outside.csv"
    secret.write_text(LONG)
    os.symlink(secret, inp / "res" / "link.csv")
    code = score_main(inp, out)
    _assert_failed(code, capsys.readouterr().err, out, r"link\.csv")


def test_nobody_qualifies_error(tmp_path, capsys):
    """Every non-baseline final candidate is absent from development: exit 1 (on_empty: error)."""
    text = "".join(
        line.replace("alice", "zed").replace("bob", "zob").replace("carol", "zarol")
        .replace("dave", "zave") if line.startswith("Final") else line
        for line in LONG.splitlines(keepends=True)
    )
    inp, out = _setup(tmp_path, GOOD + "filter: {on_empty: error}\n", {"long.csv": text})
    code = score_main(inp, out)
    _assert_failed(code, capsys.readouterr().err, out,
                   r"the final ranking is empty: no final-phase candidate qualified: none has a "
                   r"submission in the 'Development' phase, .* \(filter\.on_empty: error\)")
