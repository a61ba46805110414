"""The coded canonical table and the pivot by integer codes against the old object paths.

``reference_pipeline`` holds the phase matrix as metascore built it before (a pandas pivot
on object columns); here both build the matrix of many small random tables (collisions
of judge keys, title aliases, phase-specific judges, missing metadata, candidates without
a judge score, runs that all failed, inconsistent participants) and must give the same
matrix, or the same error.
"""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest
import reference_pipeline as ref

from metascore.config import JudgeConfig, judge_key
from metascore.errors import MetascoreError
from metascore.leaderboard.phases import normalize_frame, phase_matrix
from metascore.matrix import ScoreMatrix
from metascore.readers.score_table import Failure, ScoreTable, Unscored

PHASES = ["Development", "Final"]
TASKS = ["a", "b", "a/b", "c"]
METRICS = ["", "b", "x", "Acc"]


def random_table(rng: random.Random) -> pd.DataFrame:
    """A canonical table with object columns, as a library user may pass one."""
    cands = [f"c{k}" for k in range(rng.randint(1, 6))]
    owner = {c: rng.choice([None, "", "p1", "p2", c]) for c in cands}
    stamp = {c: rng.choice([None, "2024-01-0%dT00:00:00" % rng.randint(1, 9)]) for c in cands}
    flag = {c: rng.choice([False, False, True, "true", "no", None]) for c in cands}
    pairs = [(t, m) for t in TASKS for m in METRICS]
    rows = []
    for phase in PHASES:
        for c in cands:
            for t, m in rng.sample(pairs, rng.randint(0, 4)):
                value = rng.choice([np.nan, round(rng.uniform(0, 1), 3), float(rng.randint(0, 3))])
                p = owner[c] if rng.random() > 0.05 else rng.choice(["p1", "p9", None])
                rows.append({"phase": phase, "candidate": c, "participant": p, "task": t,
                             "metric": m, "value": value, "submitted_at": stamp[c],
                             "is_baseline": flag[c]})
    rng.shuffle(rows)
    frame = pd.DataFrame(rows, columns=["phase", "candidate", "participant", "task", "metric",
                                        "value", "submitted_at", "is_baseline"])
    frame = frame.astype({c: object for c in frame.columns if c != "value"})
    frame.attrs["directions"] = rng.choice([{}, {"b": False, "x": True, "a": False}])
    frame.attrs["failed"] = [("Final", "c9", "a", "crashed"), ("Final", "c9", "", "timeout")]
    frame.attrs["unscored"] = rng.choice([[], [
        {"phase": "Final", "candidate": "c9", "participant": "p9", "submitted_at": None,
         "is_baseline": rng.random() < 0.5},
        {"phase": "Final", "candidate": "c0", "participant": None, "submitted_at": None,
         "is_baseline": False}]])
    return frame


def random_judges(rng: random.Random, frame: pd.DataFrame) -> tuple[JudgeConfig, ...] | None:
    if rng.random() < 0.4:
        return None
    found = sorted({(t, m) for t, m in zip(frame["task"], frame["metric"])})
    if not found:
        return None
    chosen = rng.sample(found, rng.randint(1, min(4, len(found))))
    judges = []
    for t, m in chosen:
        title = rng.choice([None, None, "Acc"]) if m else None
        metric = "acc" if title == "Acc" and m == "Acc" else m
        judges.append(JudgeConfig(
            t, metric, higher_is_better=rng.random() < 0.7, weight=rng.choice([1.0, 2.0, 0.5]),
            phase=rng.choice([None, None, "Final"]), title=title,
            direction_set=rng.random() < 0.5))
    keys = [j.key for j in judges]
    return tuple(j for k, j in zip(keys, judges) if keys.count(k) == 1) or None


def scored(raw: pd.DataFrame, frame: pd.DataFrame) -> ScoreTable:
    """``frame`` with what :func:`random_table` put in ``raw.attrs`` for the reference
    pipeline, as the readers give it now."""
    return ScoreTable(frame, failed=tuple(Failure(*f) for f in raw.attrs["failed"]),
                      unscored=tuple(Unscored(**u) for u in raw.attrs["unscored"]),
                      directions=raw.attrs["directions"])


def findings(table: ScoreTable) -> tuple:
    """Everything a score table holds besides the frame."""
    return (table.format, table.source, table.failed, table.unscored, table.flagged, table.notes,
            dict(table.directions), dict(table.titles))


def outcome(build, frame, phase, judges, baselines):
    unscored: dict[str, str] = {}
    try:
        matrix = build(frame, phase, judges, baselines, unscored)
    except MetascoreError as exc:
        return ("error", type(exc).__name__, str(exc))
    return matrix, unscored


def same_matrix(a: ScoreMatrix, b: ScoreMatrix) -> None:
    assert a.candidates == b.candidates and a.judges == b.judges
    np.testing.assert_array_equal(a.values, b.values)
    assert a.higher_is_better == b.higher_is_better
    np.testing.assert_array_equal(a.weights, b.weights)
    assert a.participants == b.participants and a.submitted_at == b.submitted_at
    assert a.is_baseline == b.is_baseline


@pytest.mark.parametrize("seed", range(400))
def test_phase_matrix_matches_the_object_pivot(seed):
    rng = random.Random(seed)
    raw = random_table(rng)
    if raw.empty:
        return
    judges = random_judges(rng, raw)
    baselines = tuple(rng.sample(["c0", "c1", "p1", "p2"], rng.randint(0, 2)))
    phase = rng.choice(PHASES)
    old = outcome(ref.phase_matrix, ref.normalize_frame(raw), phase, judges, baselines)
    new = outcome(phase_matrix, scored(raw, normalize_frame(raw)), phase, judges, baselines)
    if old[0] == "error" or new[0] == "error":
        assert new == old
        return
    same_matrix(new[0], old[0])
    assert new[1] == old[1]


def test_the_table_is_coded():
    """normalize_frame codes the text columns: a row costs bytes, not Python objects."""
    frame = normalize_frame(pd.DataFrame({
        "phase": "P", "candidate": ["b", "a", "b"], "participant": [None, "", "q"],
        "task": ["t2", "t1", "t1"], "value": [1.0, 2.0, 3.0]}))
    assert frame["metric"].tolist() == ["", "", ""] and frame["candidate"].tolist() == ["b", "a", "b"]
    for col in ("phase", "candidate", "participant", "task", "metric"):
        assert isinstance(frame[col].dtype, pd.CategoricalDtype), col
        assert list(frame[col].cat.categories) == sorted(frame[col].cat.categories)
    assert frame["participant"].isna().any() and "" not in frame["participant"].cat.categories


def test_judge_keys_shared_by_two_pairs():
    """("a/b", "") and ("a", "b") are one judge: a candidate with both has two scores."""
    raw = pd.DataFrame({"phase": "P", "candidate": ["x", "x", "y"], "task": ["a/b", "a", "a"],
                        "metric": ["", "b", "b"], "value": [1.0, 2.0, 3.0]})
    for build in (ref.phase_matrix, phase_matrix):
        norm = ref.normalize_frame(raw) if build is ref.phase_matrix else ScoreTable(normalize_frame(raw))
        with pytest.raises(MetascoreError, match=r"phase 'P': candidate 'x' has more than one "
                           r"score for judge 'a/b'"):
            build(norm, "P", None)
    assert judge_key("a/b") == judge_key("a", "b")


# ---------------------------------------------------------------------- readers
NUMBERS = ["0.5", "1", " 2.25 ", "1e-3", "-0", "1_0", "3.", ".5", "nan", "NaN", "-nan", "7"]
MISSING = ["", "n/a", "-", " NA ", "null", "None", "nan"]
BAD = ["abc", "inf", "1e400", "True", "0x1p3", "-Infinity"]


def cell(rng: random.Random, bad: float) -> str:
    r = rng.random()
    if r < bad:
        return rng.choice(BAD)
    return rng.choice(MISSING) if r < bad + 0.15 else rng.choice(NUMBERS + [str(round(rng.uniform(-5, 5), 4))])


def wide_text(rng: random.Random) -> str:
    m = rng.randint(1, 6)
    judges = [rng.choice(["acc", "s1", " s2 ", "rmse", "x y"]) + str(k) for k in range(m)]
    if rng.random() < 0.05:
        judges[-1] = judges[0]  # a column twice
    meta = rng.sample(["participant", "submitted_at", "is_baseline", "Candidate"], rng.randint(0, 2))
    header = judges + meta
    rng.shuffle(header)
    if "Candidate" not in meta:
        header = ["name"] + header
    bad = rng.choice([0.0, 0.0, 0.02])
    lines = [",".join(header)]
    for k in range(rng.randint(0, 5)):
        row = []
        for h in header:
            if h in ("name", "Candidate"):
                row.append(rng.choice([f"c{k}", f" c{k} ", f"c{k}"]) if rng.random() > 0.03 else "")
            elif h == "participant":
                row.append(rng.choice(["p", "", "q"]))
            elif h == "submitted_at":
                row.append(rng.choice(["2024-01-02", "", "2024-01-02T03:04:05Z"] + (["later"] if bad else [])))
            elif h == "is_baseline":
                row.append(rng.choice(["true", "", "0", "no"] + (["maybe"] if bad else [])))
            else:
                row.append(cell(rng, bad))
        r = rng.random()
        if r < 0.05:
            row = row[:-1]  # a short row
        elif r < 0.1:
            row.append(rng.choice(["", " ", "9"]))  # an extra cell
        lines.append(",".join(row))
        if rng.random() < 0.1:
            lines.append(rng.choice(["", "  ", ",,"]))  # blank lines
    if rng.random() < 0.1:
        lines[-1] = lines[-1].replace(",", ',"', 1) + '"' if "," in lines[-1] else lines[-1]
    end = "\r\n" if rng.random() < 0.2 else "\n"
    return end.join(lines) + (end if rng.random() < 0.8 else "")


def long_text(rng: random.Random) -> str:
    columns = ["candidate", "value"] + rng.sample(
        ["phase", "participant", "task", "metric", "submitted_at", "is_baseline"], rng.randint(1, 5))
    rng.shuffle(columns)
    header = [c.upper() if rng.random() < 0.1 else c for c in columns]
    bad = rng.choice([0.0, 0.0, 0.02])
    keys = [(c, ph, t, m) for c in range(4)  # no two rows for one key, mostly
            for ph in (("Dev", "Final") if "phase" in columns else ("Dev",))
            for t in (("t1", "t 3", "001") if "task" in columns else ("t1",))
            for m in (("", "m") if "metric" in columns else ("",))]
    keys += keys[:1] if rng.random() < 0.05 else []
    lines = [",".join(header)]
    for c, phase, task, metric in rng.sample(keys, rng.randint(0, min(12, len(keys)))):
        row = {"candidate": rng.choice([f"c{c}", f" c{c}"]) if rng.random() > 0.005 else "",
               "value": cell(rng, bad), "phase": rng.choice([phase, phase, f" {phase}"]),
               "participant": f"p{c}" if rng.random() > 0.03 else rng.choice(["", "n/a", "px"]),
               "task": task, "metric": rng.choice([metric, metric, metric.upper()]),
               "submitted_at": rng.choice(["2024-01-02", ""] + (["soon"] if bad else [])),
               "is_baseline": "yes" if c == 3 else rng.choice(["false", "", "no"] + (["perhaps"] if bad else []))}
        if row["submitted_at"] and rng.random() < 0.9:
            row["submitted_at"] = f"2024-01-0{c + 1}"
        cells = [row[c] for c in columns]
        r = rng.random()
        if r < 0.05 and columns[-1] not in ("candidate", "value"):
            cells = cells[:-1]
        elif r < 0.08:
            cells.append("extra")
        lines.append(",".join(cells))
        if rng.random() < 0.08:
            lines.append(rng.choice(["", " ", ",,,"]))
    if rng.random() < 0.08:
        lines.append('"quoted, cell",1')
    return "\n".join(lines) + "\n"


def read_both(path, fmt):
    from metascore.readers.formats import read_score_table

    out = []
    for read in (lambda: read_score_table(path, fmt), lambda: ref.read_scores(path, fmt)):
        try:
            out.append(read())
        except MetascoreError as exc:
            out.append(("error", type(exc).__name__, str(exc)))
    return out


@pytest.mark.parametrize("seed", range(300))
@pytest.mark.parametrize("fmt", ["wide", "long"])
def test_column_readers_match_the_row_readers(tmp_path, fmt, seed):
    """The wide reader (numpy converts a row at a time) and the long reader (pandas reads
    the columns) give the table, or the error, of the readers that went one cell at a time."""
    rng = random.Random(seed)
    path = tmp_path / "scores.csv"
    path.write_text(wide_text(rng) if fmt == "wide" else long_text(rng), newline="")
    new, old = read_both(path, fmt)
    if isinstance(old, tuple) or isinstance(new, tuple):
        assert new == old
        return
    pd.testing.assert_frame_equal(new.frame, old.frame)
    assert findings(new) == findings(old)


def test_whitespace_matrix_matches_the_row_reader(tmp_path):
    path = tmp_path / "m.txt"
    path.write_text("a b c\nx 0.5 nan 1\ny 2 3 n/a\n")
    new, old = read_both(path, "wide")
    pd.testing.assert_frame_equal(new.frame, old.frame)
    path.write_text("x 0.5 inf 1\n")
    new, old = read_both(path, "wide")
    assert new == old and "is infinite" in new[2]


# ---------------------------------------------------------------------- matrices and files
@pytest.mark.parametrize("seed", range(200))
def test_from_long_matches_the_object_grid(seed):
    rng = random.Random(seed)
    rows = [(rng.choice(["a", "b", 1, "1", "c"]), rng.choice(["j1", "j2", 3, "3"]),
             rng.choice([0.5, np.nan, 2, None, "0.7", "x", np.inf])) for _ in range(rng.randint(1, 25))]
    frame = pd.DataFrame(rows, columns=["candidate", "judge", "value"])
    if seed % 2:
        frame["value"] = pd.to_numeric(frame["value"], errors="coerce")
    if seed % 3 == 0:
        frame = frame.drop_duplicates(["candidate", "judge"])
    out = []
    for build in (ScoreMatrix.from_long, ref.from_long):
        try:
            m = build(frame, allow_inf=True)
            out.append((m.candidates, m.judges, np.nan_to_num(m.values, nan=-99.0).tolist()))
        except MetascoreError as exc:
            out.append(str(exc))
    assert out[0] == out[1]


@pytest.mark.parametrize("seed", range(100))
def test_long_csv_writes_the_old_bytes(seed):
    """The ingestion program's metascore_long.csv, column by column."""
    from metascore.readers.rows import CANONICAL_COLUMNS
    from metascore.render.writers import long_csv

    rng = random.Random(seed)
    texts = ["a", "b,c", 'q"t', "x\ny", "r\rs", " sp ", "", "é"]
    n = rng.randint(0, 12)
    frame = pd.DataFrame({
        "phase": [rng.choice(texts[:3]) for _ in range(n)],
        "candidate": [rng.choice(texts) for _ in range(n)],
        "participant": [rng.choice([None, "p", "p,q"]) for _ in range(n)],
        "task": [rng.choice(texts) for _ in range(n)], "metric": [rng.choice(["", "m"]) for _ in range(n)],
        "value": [rng.choice([np.nan, 0.1, 1 / 3, 2.0, 1e-20, -0.0, 3.5]) for _ in range(n)],
        "submitted_at": [rng.choice([None, "2024-01-01T00:00:00", pd.Timestamp("2024-02-02")]) for _ in range(n)],
        "is_baseline": [rng.random() < 0.5 for _ in range(n)]})
    frame = frame.astype({c: object for c in frame.columns if c not in ("value", "is_baseline")})
    cols = CANONICAL_COLUMNS if seed % 5 else ["candidate"]
    for table in (frame, normalize_frame(frame) if n else frame):
        assert long_csv(table, cols) == ref.long_csv(table, cols)


@pytest.mark.parametrize("seed", range(40))
def test_column_ranks_and_kendall_w_match_scipy(seed):
    """fractional_ranks of wide arrays sorts rows of the transposed array; kendall_w takes
    its tie correction from the squared ranks: both as before, bit for bit."""
    from scipy import stats as st

    from metascore.stats import COLUMN_RANKS_FROM, fractional_ranks, kendall_w

    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 30)), COLUMN_RANKS_FROM + int(rng.integers(0, 500))
    x = np.round(rng.normal(size=(n, m)), int(rng.integers(0, 3)))
    if seed % 3 == 0:
        x[rng.random((n, m)) < 0.1] = np.nan
    if seed % 4 == 0:
        x[rng.random((n, m)) < 0.1] = -np.inf
    policy = "omit" if np.isnan(x).any() else "propagate"
    np.testing.assert_array_equal(fractional_ranks(x, axis=0),
                                  st.rankdata(-x, method="average", axis=0, nan_policy=policy))
    if np.isnan(x).any() or np.isinf(x).any() or n < 2:
        return
    ordered = np.sort(x, axis=0)  # the tie sum as kendall_w computed it before
    change = np.vstack([np.ones((1, m), bool), ordered[1:] != ordered[:-1], np.ones((1, m), bool)])
    idx = np.flatnonzero(change.T.ravel())
    runs = ((idx % (n + 1))[1:] - (idx % (n + 1))[:-1])[(idx // (n + 1))[1:] == (idx // (n + 1))[:-1]]
    ranks = st.rankdata(-x, method="average", axis=0)
    totals = ranks.sum(axis=1)
    denom = m**2 * (n**3 - n) - m * float((runs.astype(float) ** 3 - runs).sum())
    old = float("nan") if denom <= 0 else 12.0 * float(((totals - totals.mean()) ** 2).sum()) / denom
    assert kendall_w(x) == old or (np.isnan(old) and np.isnan(kendall_w(x)))


def test_lazy_sequences_behave_like_tuples():
    from metascore.leaderboard.model import JudgeIndex, JudgeValues
    from metascore.sequences import IndexLabels, Repeated

    r = Repeated(True, 3)
    assert r == (True, True, True) and tuple(r) == (True,) * 3 and r[1:] == (True, True)
    assert np.asarray(r, dtype=bool).tolist() == [True] * 3 and hash(r) == hash((True,) * 3)
    with pytest.raises(IndexError):
        r[3]
    m = ScoreMatrix.from_array(np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert isinstance(m.candidates, IndexLabels) and m.candidates == ("0", "1")
    assert m.higher_is_better == (True, True) and m.subset(candidates=["1"]).judges == ("0", "1")
    values = JudgeValues(JudgeIndex(["a", "b"]), np.array([1.5, np.nan]))
    assert values == {"a": 1.5, "b": None} and values.get("c", 7) == 7 and list(values) == ["a", "b"]
    assert JudgeValues(["a"]) == {"a": None}


@pytest.mark.parametrize("fmt", ["wide", "long"])
@pytest.mark.parametrize("content", [
    b"\xef\xbb\xbfcandidate,task,value\na,t,1\n",  # a byte-order mark
    b"\xef\xbb\xbf\ncandidate,task,value\na,t,1\n",  # a mark on a blank line
    b"candidate,task,value\na,t,1\nb,t,\xff\n",  # not UTF-8
    b"\xc2\xa0\ncandidate,task,value\na,t,1\n",  # a no-break space before the header
    b"\n\n  \ncandidate,task,value\r\na,t,1\r\n",
])
def test_readers_on_encodings(tmp_path, fmt, content):
    path = tmp_path / "scores.csv"
    path.write_bytes(content)
    new, old = read_both(path, fmt)
    if isinstance(old, tuple) or isinstance(new, tuple):
        assert new == old
    else:
        pd.testing.assert_frame_equal(new.frame, old.frame)
        assert findings(new) == findings(old)
