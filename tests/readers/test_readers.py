"""Input readers: one competition in every format, edge cases, and bad inputs."""

from __future__ import annotations

import json
import math
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from metascore.errors import InputError, InputWarning
from metascore.readers import (
    CANONICAL_COLUMNS,
    FORMATS,
    detect_format,
    ScoreTable,
    read_score_table,
    read_scores,
    read_scores_file,
    read_votes,
    resolve_inside,
)
from metascore.pairwise import PairwiseCounts
from repo_paths import TESTS

DATA = TESTS / "data"
COMP = DATA / "competition"
READERS = DATA / "readers"
BAD = READERS / "bad"

CODABENCH_KEY = {"baseline_rf": "organizers-201", "baseline_knn": "organizers-202"}
KEY = ["phase", "candidate", "task", "metric"]


@pytest.fixture(scope="module")
def canonical() -> pd.DataFrame:
    return read_scores(COMP / "long.csv")


def present(frame: pd.DataFrame, columns=("phase", "candidate", "task", "metric", "value")) -> pd.DataFrame:
    """Rows with a score, in a fixed order, without index (text as plain objects: the
    categories of two tables differ when their rows do)."""
    out = frame.loc[frame["value"].notna(), list(columns)]
    out = out.astype({c: object for c in columns if c != "value"})
    out = out.sort_values([c for c in KEY if c in columns])
    return out.reset_index(drop=True)


def relabel(frame: pd.DataFrame, *, candidates=None, phase=None, metric=None) -> pd.DataFrame:
    out = frame.copy()
    if candidates is not None:
        out["candidate"] = out["candidate"].map(lambda c: candidates.get(c, c))
    if phase is not None:
        out["phase"] = phase
    if metric is not None:
        out["metric"] = metric
    return out


# ------------------------------------------------------------------ the canonical table
def test_canonical_long_table(canonical):
    assert list(canonical.columns) == CANONICAL_COLUMNS
    assert len(canonical) == 2 * 7 * 3
    assert canonical["value"].dtype == float and canonical["is_baseline"].dtype == bool
    missing = canonical[canonical["value"].isna()]
    assert missing[KEY].values.tolist() == [["Final", "carol-104", "wine", "mae"]]
    baselines = sorted(set(canonical.loc[canonical["is_baseline"], "candidate"]))
    assert baselines == ["baseline_knn", "baseline_rf"]
    assert canonical.groupby("candidate")["participant"].first()["alice-102"] == "alice"
    assert canonical["participant"].nunique() == 5
    row = canonical[(canonical["candidate"] == "dave-105")].iloc[0]
    assert row["submitted_at"] == "2024-03-16T00:30:00+00:00"
    wine_dev = canonical[(canonical["phase"] == "Development") & (canonical["task"] == "wine")]
    assert wine_dev.set_index("candidate")["value"]["alice-101"] == 0.412
    assert canonical.attrs == {}  # a plain table: what the reader found is in the ScoreTable


def test_the_score_table_holds_the_table_and_what_the_reader_found(canonical):
    table = read_score_table(COMP / "long.csv")
    assert isinstance(table, ScoreTable)
    pd.testing.assert_frame_equal(table.frame, canonical)
    assert (table.format, table.source) == ("long", str(COMP / "long.csv"))
    assert (table.failed, table.unscored, table.flagged, table.notes) == ((), (), (), ())
    assert (table.directions, table.titles) == ({}, {})
    with pytest.raises(AttributeError):  # frozen: a new table, not an edited one
        table.format = "wide"
    assert table.with_frame(canonical.head(2)).format == "long"


def test_long_json_is_identical(canonical):
    frame = read_scores(COMP / "long.json")
    pd.testing.assert_frame_equal(frame, canonical)
    assert read_score_table(COMP / "long.json").format == "long"


def test_tree_matches_and_records_the_failure(canonical):
    table = read_score_table(COMP / "tree")
    frame = table.frame
    cols = ("phase", "candidate", "participant", "task", "metric", "value", "submitted_at", "is_baseline")
    pd.testing.assert_frame_equal(present(frame, cols), present(canonical, cols))
    assert len(frame) == len(canonical) - 1  # the failed task has no row
    assert table.failed == (("Final", "carol-104", "wine", "no scores.json or scores.txt"),)


def test_codabench_json_matches(canonical):
    frame = read_scores(COMP / "results.json")
    expected = relabel(canonical, candidates=CODABENCH_KEY)
    cols = ("phase", "candidate", "participant", "task", "metric", "value")
    pd.testing.assert_frame_equal(present(frame, cols), present(expected, cols))
    # "" for the failed task is a missing score; columns no task fills are not judges
    assert len(frame) == len(canonical)
    assert frame.loc[frame["value"].isna(), KEY].values.tolist() == [["Final", "carol-104", "wine", "mae"]]
    assert not frame["is_baseline"].any() and frame["submitted_at"].isna().all()


@pytest.mark.parametrize("phase,phase_id", [("Development", 11), ("Final", 12)])
def test_codabench_csv_matches(canonical, phase, phase_id):
    frame = read_scores(COMP / f"Results - {phase}({phase_id}).csv")
    assert set(frame["phase"]) == {phase}  # from the file name
    expected = relabel(canonical[canonical["phase"] == phase], candidates=CODABENCH_KEY)
    cols = ("phase", "candidate", "participant", "task", "metric", "value")
    pd.testing.assert_frame_equal(present(frame, cols), present(expected, cols))


@pytest.mark.parametrize("phase", ["Development", "Final"])
def test_codalab_csv_matches(canonical, phase):
    frame = read_scores(COMP / f"codalab_{phase.lower()}.csv", phase=phase)
    pk = {c: c.rsplit("-", 1)[-1] for c in canonical["candidate"]}
    pk.update(baseline_rf="201", baseline_knn="202")
    expected = relabel(canonical[canonical["phase"] == phase], candidates=pk)
    cols = ("phase", "candidate", "participant", "task", "metric", "value")
    pd.testing.assert_frame_equal(present(frame, cols), present(expected, cols))
    assert frame["value"].isna().sum() == (phase == "Final")


def test_coopetition_matches(canonical):
    frame = read_scores(COMP / "coopetition_scores_phase_2.txt")
    assert set(frame["phase"]) == {"2"}  # phase number from the file name
    renamed = read_scores(COMP / "coopetition_scores_phase_2.txt", phase="Final")
    final = read_scores(COMP / "codalab_final.csv", phase="Final")
    pd.testing.assert_frame_equal(present(renamed), present(final))
    pd.testing.assert_frame_equal(present(relabel(frame, phase="Final")), present(final))


def test_wide_matches(canonical):
    frame = read_scores(COMP / "wide_final.csv", phase="Final")
    expected = relabel(canonical[canonical["phase"] == "Final"], metric="")
    pd.testing.assert_frame_equal(present(frame), present(expected))
    assert frame["participant"].isna().all()
    assert frame["value"].isna().sum() == 1


def test_phase_filter(canonical):
    final = read_scores(COMP / "long.csv", phase="Final")
    assert set(final["phase"]) == {"Final"} and len(final) == 21
    tree = read_score_table(COMP / "tree", phase="Development")
    assert set(tree.frame["phase"]) == {"Development"} and tree.failed == ()
    codabench = read_scores(COMP / "results.json", phase="Final")
    assert set(codabench["phase"]) == {"Final"} and len(codabench) == 21
    with pytest.raises(InputError, match=r"phase 'Fnal' is not in .*did you mean 'Final'"):
        read_scores(COMP / "long.csv", phase="Fnal")
    with pytest.raises(InputError, match=r"phase 'Test' is not in .*tree"):
        read_scores(COMP / "tree", phase="Test")
    with pytest.raises(InputError, match=r"phase 'Development' is not in .*Final\(12\)"):
        read_scores(COMP / "Results - Final(12).csv", phase="Development")


# ------------------------------------------------------------------ detection
@pytest.mark.parametrize(
    "name,fmt",
    [
        ("long.csv", "long"),
        ("long.json", "long"),
        ("tree", "tree"),
        ("results.json", "codabench_json"),
        ("Results - Final(12).csv", "codabench_csv"),
        ("codalab_final.csv", "codalab_csv"),
        ("coopetition_scores_phase_2.txt", "coopetition"),
        ("wide_final.csv", "wide"),
    ],
)
def test_detect_format(name, fmt):
    assert detect_format(COMP / name) == fmt
    assert read_score_table(COMP / name).format == fmt


def test_detect_format_preflib_and_blind():
    assert detect_format(READERS / "votes.toc") == "preflib"
    assert detect_format(BAD / "blind.csv") == "codalab_csv"


def test_explicit_format_wins():
    frame = read_scores(COMP / "coopetition_scores_phase_2.txt", format="codalab_csv")
    assert set(frame["phase"]) == {""}  # no phase number taken from the name
    with pytest.raises(InputError, match=r"has no 'value' column"):
        read_scores(COMP / "wide_final.csv", format="long")
    with pytest.raises(InputError, match=r"unknown input format 'codabench'.*did you mean"):
        read_scores(COMP / "long.csv", format="codabench")
    assert set(FORMATS) >= {"long", "tree", "preflib"}


def test_ambiguous_long_or_wide_resolved_by_format():
    long = read_scores(BAD / "ambiguous.csv", format="long")
    assert long[["candidate", "task", "metric"]].values.tolist() == [["a", "", ""], ["b", "", ""]]
    wide = read_scores(BAD / "ambiguous.csv", format="wide")
    assert wide["task"].tolist() == ["value", "value"]
    assert wide["value"].tolist() == [0.5, 0.7]


# ------------------------------------------------------------------ Codabench details
def test_codabench_owner_with_hyphen_and_repeated_task_names(tmp_path):
    export = {
        "Results - Final phase - B(34)": {
            "jean-luc-812": {
                "fact_sheet_answers": {"method": "x"},
                "Task A(7)-Accuracy": "0.9100000000",
                "Task A(9)-Accuracy": 0.5,
            },
            "team-42-815": {"Task A(7)-Accuracy": "", "Task A(9)-Accuracy": "0.25"},
        }
    }
    path = tmp_path / "results.json"
    path.write_text(json.dumps(export))
    frame = read_scores(path)
    assert set(frame["phase"]) == {"Final phase - B"}
    assert frame["participant"].tolist() == ["jean-luc", "jean-luc", "team-42", "team-42"]
    assert frame["task"].tolist() == ["Task A(7)", "Task A(9)"] * 2  # same name, two tasks
    assert frame["metric"].unique().tolist() == ["Accuracy"]
    np.testing.assert_array_equal(frame["value"], [0.91, 0.5, np.nan, 0.25])


def test_codabench_csv_without_title_takes_phase_argument(tmp_path):
    path = tmp_path / "export.csv"
    path.write_text("Username,fact_sheet_answers,Iris(3)-acc\nann-5,,0.75\n")
    assert detect_format(path) == "codabench_csv"
    assert read_scores(path)["phase"].tolist() == [""]
    assert read_scores(path, phase="Final")["phase"].tolist() == ["Final"]


# ------------------------------------------------------------------ CodaLab v1 details
def test_coopetition_real_shape():
    table = read_score_table(READERS / "coopetition_scores_phase_1.txt")
    frame = table.frame
    assert table.format == "coopetition"
    assert frame[["phase", "candidate", "participant", "task", "metric"]].values.tolist()[:2] == [
        ["1", "9101", "mira", "", "AVG"],
        ["1", "9101", "mira", "", "Valid"],
    ]
    np.testing.assert_array_equal(frame["value"], [0.7712, 0.602, 0.8015, 0.6433, np.nan, 0.5511])


def test_codalab_blocks_and_aligned_subheader(tmp_path):
    path = tmp_path / "metadata"  # the in-container input/scores/metadata file
    path.write_text(
        "submission_pk,User,set1,set2\n"
        ",,auc,auc\n"  # sub-header already aligned under the groups
        "1,ann,0.8 (1),0.7 (2)\n"
        "submission_pk,User,Duration\n"
        "No data available\n"
        "submission_pk,User,Speed\n"
        "1,ann,12.5 (1)\n"
    )
    frame = read_scores(path)
    assert frame[["task", "metric", "value"]].values.tolist() == [
        ["set1", "auc", 0.8],
        ["set2", "auc", 0.7],
        ["", "Speed", 12.5],
    ]


# ------------------------------------------------------------------ tree details
def _scores(path: Path, text: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    name = "scores.json" if text.lstrip().startswith("{") else "scores.txt"
    (path / name).write_text(text)


def test_tree_without_phase_level_manifest_and_failures(tmp_path):
    _scores(tmp_path / "ann-1" / "iris", '{"accuracy": "0.9", "duration": 3}')
    _scores(tmp_path / "ann-1" / "wine", "# written by score.py\nmae: 0.25\n")
    _scores(tmp_path / "bo-2" / "iris", '{"accuracy": 0.8}')
    (tmp_path / "bo-2" / "iris" / "scores.txt").write_text("accuracy: 0.1\n")  # json wins
    (tmp_path / "bo-2" / "wine").mkdir()
    (tmp_path / "bo-2" / "wine" / "metadata").write_text("exitCode: 1\n")
    (tmp_path / "cy-3").mkdir()
    (tmp_path / "submissions.csv").write_text(
        "candidate,participant,submitted_at,is_baseline\n"
        "ann-1,ann,2024-01-02 10:00Z,yes\n"
        "dee-4,dee,,\n"
    )
    table = read_score_table(tmp_path, phase="Final")
    frame = table.frame
    assert frame[["phase", "candidate", "participant", "task", "metric", "value"]].values.tolist() == [
        ["Final", "ann-1", "ann", "iris", "accuracy", 0.9],
        ["Final", "ann-1", "ann", "iris", "duration", 3.0],
        ["Final", "ann-1", "ann", "wine", "mae", 0.25],
        ["Final", "bo-2", "bo-2", "iris", "accuracy", 0.8],  # no manifest row: owner = candidate
    ]
    assert frame["submitted_at"].tolist()[:3] == ["2024-01-02T10:00:00+00:00"] * 3
    assert frame["is_baseline"].tolist() == [True, True, True, False]
    assert table.failed == (
        ("Final", "bo-2", "wine", "no scores.json or scores.txt"),
        ("Final", "cy-3", "", "no task directories"),
        ("Final", "dee-4", "", "listed in submissions.csv (line 3) but has no scoring output"),
    )


@pytest.mark.skipif(os.name == "nt", reason="symbolic links")
def test_tree_refuses_symlink_leaving_root(tmp_path):
    outside = tmp_path / "outside"
    _scores(outside, '{"accuracy": 0.99}')
    tree = tmp_path / "tree"
    (tree / "Final" / "ann-1").mkdir(parents=True)
    _scores(tree / "Final" / "bo-2" / "iris", '{"accuracy": 0.5}')
    (tree / "Final" / "ann-1" / "iris").symlink_to(outside)
    with pytest.raises(InputError, match=r"'Final/ann-1/iris' leads outside .*symbolic links"):
        read_scores(tree)


# ------------------------------------------------------------------ scores files
def test_read_scores_file(tmp_path):
    path = tmp_path / "scores.json"
    path.write_text('{"accuracy": 0.886, "duration": "42.4", "n": 0}')
    assert read_scores_file(path) == {"accuracy": 0.886, "duration": 42.4, "n": 0.0}
    path = tmp_path / "scores.txt"
    path.write_text("---\nset1_score: 0.81\n'set2_score':   1e-3  # tiny\n\nDuration: 12\n")
    assert read_scores_file(path) == {"set1_score": 0.81, "set2_score": 0.001, "Duration": 12.0}
    path.write_text("")
    assert read_scores_file(path) == {}


@pytest.mark.parametrize(
    "text,match",
    [
        ("acc: 0.9\nacc: 0.8\n", r"line 2: key 'acc' is given twice"),
        ("acc: .nan\n", r"line 1: key 'acc' has value '\.nan', which is not a finite"),
        ("acc: yes\n", r"line 1: key 'acc' has value 'yes', which is not a number"),
        ("acc:\n", r"line 1: key 'acc' has no value"),
        ("just words\n", r"line 1: 'just words' is not a 'key: value' line"),
    ],
)
def test_scores_txt_errors(tmp_path, text, match):
    path = tmp_path / "scores.txt"
    path.write_text(text)
    with pytest.raises(InputError, match=match):
        read_scores_file(path)


# ------------------------------------------------------------------ PrefLib
def test_read_votes():
    votes, weights, names = read_votes(READERS / "votes.toc")
    assert names == ["alpha", "beta", "gamma"]
    assert weights == [3.0, 2.0, 1.0]
    assert votes == [[["alpha"], ["beta"], ["gamma"]], [["beta"], ["alpha", "gamma"]],
                     [["gamma"], ["alpha"], ["beta"]]]
    counts = PairwiseCounts.from_votes(votes, weights, names)
    wins, _ = counts.dense()
    assert wins.tolist() == [[0.0, 4.0, 3.0], [2.0, 0.0, 5.0], [1.0, 1.0, 0.0]]
    with pytest.raises(InputError, match=r"holds votes \(PrefLib\), not scores") as refused:
        read_scores(READERS / "votes.toc")
    # what it says to do exists: quick mode ranks votes, read_votes and from_votes in Python
    assert "`votes` input" not in str(refused.value)
    assert "metascore rank FILE --method copeland" in str(refused.value)
    assert "read_votes() and PairwiseCounts.from_votes()" in str(refused.value)


@pytest.mark.parametrize(
    "body,match",
    [
        ("# NUMBER ALTERNATIVES: 2\n1: 1,3\n", r"line 2: alternative 3 is outside 1\.\.2"),
        ("# NUMBER ALTERNATIVES: 2\n1: 1,1\n", r"line 2: alternative 1 appears twice"),
        ("# NUMBER ALTERNATIVES: 2\n1: 1;2\n", r"line 2: order '1;2' is not a list"),
        ("# NUMBER ALTERNATIVES: 2\n# NUMBER VOTERS: 5\n2: 1,2\n", r"add up to 2 but .*NUMBER VOTERS: 5"),
        ("2\n1,alpha\n", r"line 1: '2' is not a '<count>: <order>' line"),
        ("# NUMBER ALTERNATIVES: 2\nx: 1,2\n", r"line 2: vote count 'x' is not a number"),
        ("# NUMBER ALTERNATIVES: 2\n-1: 1,2\n", r"bad\.soi, line 2: vote count '-1' must be a whole number >= 0"),
        ("# NUMBER ALTERNATIVES: 2\n2.5: 1,2\n", r"bad\.soi, line 2: vote count '2\.5' must be a whole number"),
        ("# NUMBER ALTERNATIVES: 2\n0: 1,2\n0: 2,1\n", r"no votes found in .*bad\.soi"),
    ],
)
def test_read_votes_errors(tmp_path, body, match):
    path = tmp_path / "bad.soi"
    path.write_text(body)
    with pytest.raises(InputError, match=match):
        read_votes(path)


def test_read_votes_skips_zero_count_orders_with_one_warning(capsys):
    """PrefLib lists orders nobody cast with count 0 (e.g. its Netflix .soc files)."""
    path = READERS / "zero_counts.soc"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        votes, weights, names = read_votes(path)
    assert [str(w.message) for w in caught] == [
        f"{path}: ignored 3 order(s) with vote count 0 (line 15 and 2 more); they carry no vote."
    ]
    assert caught[0].category is InputWarning
    assert capsys.readouterr() == ("", "")  # the library never prints
    assert names == ["Heat", "Ran", "Alien", "Up"]
    assert weights == [4.0, 3.0, 2.0, 1.0]
    assert votes == [[["Alien"], ["Heat"], ["Ran"], ["Up"]], [["Heat"], ["Alien"], ["Ran"], ["Up"]],
                     [["Ran"], ["Alien"], ["Heat"], ["Up"]], [["Alien"], ["Ran"], ["Up"], ["Heat"]]]


@pytest.mark.parametrize("unique", [7, 4])
def test_read_votes_zero_counts_header_counts_either_way(tmp_path, unique):
    """NUMBER UNIQUE ORDERS may count the zero-count lines (as PrefLib's tools do) or not."""
    text = (READERS / "zero_counts.soc").read_text().replace(
        "# NUMBER UNIQUE ORDERS: 7", f"# NUMBER UNIQUE ORDERS: {unique}"
    )
    path = tmp_path / "z.soc"
    path.write_text(text)
    with pytest.warns(InputWarning, match=r"ignored 3 order\(s\) with vote count 0"):
        assert read_votes(path)[1] == [4.0, 3.0, 2.0, 1.0]
    path.write_text(text.replace(f"ORDERS: {unique}", "ORDERS: 5"))
    with pytest.raises(InputError, match=r"7 order lines but the header says NUMBER UNIQUE ORDERS: 5"):
        read_votes(path)


def test_read_votes_without_zero_counts_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_votes(READERS / "votes.toc")


# ------------------------------------------------------------------ roots
def test_resolve_inside(tmp_path):
    (tmp_path / "a").mkdir()
    assert resolve_inside(tmp_path, "a/../a/x.csv") == (tmp_path / "a" / "x.csv").resolve()
    with pytest.raises(InputError, match=r"'\.\./x\.csv' leads outside"):
        resolve_inside(tmp_path / "a", "../x.csv")
    with pytest.raises(InputError, match=r"is absolute"):
        resolve_inside(tmp_path, str(tmp_path / "a"))
    if os.name != "nt":
        (tmp_path / "a" / "link").symlink_to(tmp_path)
        with pytest.raises(InputError, match=r"'link/x' leads outside"):
            resolve_inside(tmp_path / "a", "link/x")


# ------------------------------------------------------------------ metadata consistency
def test_long_metadata_columns_are_optional_and_checked(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("Candidate,Value,Task\nA,0.5,t1\nA,,t2\nB,NaN,t1\nB,null,t2\n")
    frame = read_scores(path, phase="Final")
    assert frame["phase"].tolist() == ["Final"] * 4
    assert frame["participant"].isna().all()  # missing (a categorical: NaN)
    assert frame["is_baseline"].tolist() == [False] * 4
    assert frame["value"].isna().tolist() == [False, True, True, True]
    path.write_text("candidate,task,value,is_baseline\nA,t1,0.5,maybe\n")
    with pytest.raises(InputError, match=r"line 2, column 'is_baseline': 'maybe' is not a true/false"):
        read_scores(path)
    path.write_text("candidate,task,value,submitted_at\nA,t1,0.5,last tuesday\n")
    with pytest.raises(InputError, match=r"line 2, column 'submitted_at': submission time 'last tuesday'"):
        read_scores(path)


# ------------------------------------------------------------------ bad inputs
BAD_INPUTS = [
    # (path, kwargs, match)
    (BAD / "malformed.json", {}, r"malformed\.json: not valid JSON \(Expecting value at line 1"),
    (BAD / "tree_no_space", {},
     r"scores\.txt, line 1: 'accuracy:0\.91' has no space after the colon; Codabench v2 parses "
     r"scores\.txt as YAML .* write 'key: value' \(accuracy: 0\.91\)"),
    (BAD / "tree_nan", {}, r"scores\.json, key 'accuracy': NaN is not a finite number"),
    (BAD / "tree_inf", {}, r"scores\.json, key 'duration': Infinity is not a finite number"),
    (BAD / "tree_nested", {}, r"scores\.json, key 'accuracy': holds a nested object"),
    (BAD / "tree_text", {}, r"scores\.json, key 'accuracy': 'high' is not a number"),
    (BAD / "non_numeric.csv", {}, r"non_numeric\.csv, line 3, column 'value': score '0\.9x' is not a number"),
    (BAD / "infinite.csv", {}, r"infinite\.csv, line 3, column 'value': score '-inf' is infinite"),
    (BAD / "empty.csv", {}, r"no scores found in .*empty\.csv"),
    (BAD / "all_missing.csv", {}, r"no scores found in .*all_missing\.csv"),
    (BAD / "blind.csv", {}, r"blind\.csv says 'Not allowed, phase is blind\.': CodaLab does not export"),
    (BAD / "ambiguous.csv", {}, r"ambiguous\.csv is ambiguous: it could be long or wide; set `input.format:`"),
    (BAD / "duplicate.csv", {}, r"candidate 'a' has two scores for phase 'Final', task 'iris', metric "
     r"'accuracy' \(.*line 2 and .*line 3\)"),
    (BAD / "two_owners.csv", {}, r"candidate 'a' has two different participant values: 'ann' \(.*line 2\) "
     r"and 'bob' \(.*line 3\)"),
    (COMP / "long.csv", {"root": READERS}, r"leads outside .*readers"),
    (BAD / "nowhere.csv", {}, r"nowhere\.csv does not exist"),
    (COMP / "long.csv", {"format": "tree"}, r"format 'tree' needs a directory"),
]


@pytest.mark.parametrize("path,kwargs,match", BAD_INPUTS, ids=lambda x: x.name if isinstance(x, Path) else None)
def test_bad_input(path, kwargs, match):
    with pytest.raises(InputError, match=match):
        read_scores(path, **kwargs)


def test_path_inside_root_is_accepted():
    frame = read_scores(COMP / "long.csv", root=DATA)
    assert len(frame) == 42


def test_unknown_file_kind(tmp_path):
    path = tmp_path / "scores.tsv"
    path.write_text("candidate\tvalue\na\t1\n")
    with pytest.raises(InputError, match=r"cannot tell the format of .*scores\.tsv.*set `input.format:`"):
        read_scores(path)
    with pytest.raises(InputError, match=r"set --format to one of"):  # quick mode's words
        read_scores(path, format_option="--format")
    path = tmp_path / "other.json"
    path.write_text('{"a": 1}')
    with pytest.raises(InputError, match=r"cannot tell the format of .*other\.json"):
        read_scores(path)


# ------------------------------------------------------------------ round trips
cells = st.one_of(
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
)


@given(
    grid=st.lists(st.lists(cells, min_size=2, max_size=2), min_size=1, max_size=5),
)
def test_long_csv_and_codabench_json_round_trip(tmp_path_factory, grid):
    if all(v is None for row in grid for v in row):
        grid[0][0] = 0.0
    folder = tmp_path_factory.mktemp("rt")
    lines = ["phase,candidate,participant,task,metric,value"]
    export: dict = {}
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            lines.append(f"P,c{i},o,t{j},m,{'' if v is None else repr(v)}")
            export.setdefault("LB - P(1)", {}).setdefault(f"o-{i}", {})[f"t{j}({j})-m"] = (
                "" if v is None else repr(v)
            )
    (folder / "long.csv").write_text("\n".join(lines) + "\n")
    (folder / "results.json").write_text(json.dumps(export))
    expected = [math.nan if v is None else v for row in grid for v in row]
    long = read_scores(folder / "long.csv")
    np.testing.assert_array_equal(long["value"], expected)
    assert long["candidate"].tolist() == [f"c{i}" for i in range(len(grid)) for _ in range(2)]
    codabench = read_scores(folder / "results.json")
    scored = {(t, m) for t, m, v in zip(codabench["task"], codabench["metric"], codabench["value"]) if v == v}
    keep = [f"t{j}" for j in range(2) if any(row[j] is not None for row in grid)]
    assert sorted({t for t, _ in scored}) == keep
    got = codabench.set_index(["candidate", "task"])["value"]
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if f"t{j}" in keep:
                assert got[(f"o-{i}", f"t{j}")] == v or (v is None and math.isnan(got[(f"o-{i}", f"t{j}")]))


def test_duplicate_reports_the_matching_pair(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("candidate,task,value\na,t1,1\nb,t1,2\nb,t1,3\na,t1,4\n")
    with pytest.raises(InputError, match=r"candidate 'b' has two scores .*line 3 and .*line 4\)"):
        read_scores(path)


@pytest.mark.parametrize(
    "text,match",
    [
        # a group with two sub-columns: v1 writes both values into one cell
        ("submission_pk,User,Set 1,Set 1\n,auc,bac\n1,ann,0.8 (1),,,,\n",
         r"line 2: column group 'Set 1' has several sub-columns"),
        # grouped and ungrouped columns: v1 sub-labels cannot be aligned
        ("submission_pk,User,Set 1,Duration\n,auc\n1,ann,0.8 (1),3.0 (1),,,\n",
         r"line 2: the sub-header has 1 labels for 2 columns"),
        ("submission_pk,User,acc\n1,ann,0.8 (1),0.1\n", r"line 2: cell '0\.1' lies beyond the last header"),
        ("submission_pk,User,acc\nException parsing scores!\n", r"line 2: CodaLab could not export"),
        ("submission_pk,Name,acc\n1,ann,0.8 (1)\n", r"line 1: expected 'submission_pk,User,\.\.\.'"),
    ],
)
def test_codalab_errors(tmp_path, text, match):
    path = tmp_path / "leaderboard.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=match):
        read_scores(path)


ALPHABET = st.sampled_from(list('abc019.,:;-{}[]"\' \n\tnaNfIinty()#_') + ["Username", "submission_pk", "candidate", "value", "NaN", "null"])


@given(text=st.lists(ALPHABET, max_size=40).map("".join))
@pytest.mark.parametrize(
    "name,fmt",
    [("x.csv", None), ("x.csv", "long"), ("x.csv", "wide"), ("x.csv", "codabench_csv"),
     ("x.csv", "codalab_csv"), ("x.json", None), ("x.json", "codabench_json"),
     ("scores.txt", "file"), ("scores.json", "file"), ("v.toi", "votes")],
)
def test_garbage_gives_input_error_not_traceback(tmp_path_factory, name, fmt, text):
    path = tmp_path_factory.mktemp("fuzz") / name
    path.write_text(text)
    try:
        if fmt == "file":
            read_scores_file(path)
        elif fmt == "votes":
            read_votes(path)
        else:
            frame = read_scores(path, format=fmt)
            assert list(frame.columns) == CANONICAL_COLUMNS and frame["value"].notna().any()
    except InputError:
        pass


def test_long_json_list_form_and_errors(tmp_path):
    path = tmp_path / "scores.json"
    path.write_text('[{"candidate": "A", "task": "t", "value": 0.5, "is_baseline": 1},'
                    ' {"candidate": "B", "task": "t", "value": null}]')
    assert detect_format(path) == "long"
    frame = read_scores(path)
    assert frame["is_baseline"].tolist() == [True, False]
    np.testing.assert_array_equal(frame["value"], [0.5, np.nan])
    path.write_text('[{"candidate": "A", "task": "t", "value": "high"}]')
    with pytest.raises(InputError, match=r"record 0, key 'value': score 'high' is not a number"):
        read_scores(path)
    path.write_text('[{"candidate": "A", "task": "t", "score": 1}]')
    with pytest.raises(InputError, match=r"record 0 has no 'value' column"):
        read_scores(path)


@pytest.mark.parametrize(("body", "message"), [
    ("A,t,m,0.5\nB,t,m,abc\n", r"x\.csv, line 3, column 'value': score 'abc' is not a number"),
    ("A,t,m,0.5\n\n\nB,t,m,inf\n", r"x\.csv, line 5, column 'value': score 'inf' is infinite"),
    ('A,"t\nu",m,0.5\nB,t,m,1e400x\n', r"x\.csv, line 4, column 'value': score '1e400x'"),
    ("A,t,m,0.5\n ,t,m,1\n", r"x\.csv, line 3: the candidate is empty"),
    ("A,t,m,0.5\nA,t,m,0.7\n", r"two scores .*x\.csv, line 2 and .*x\.csv, line 3"),
    ("A,t,m,0.5,maybe\n", r"x\.csv, line 2, column 'is_baseline': 'maybe' is not a true/false"),
])
def test_long_csv_errors_name_file_line_and_value(tmp_path, body, message):
    path = tmp_path / "x.csv"
    extra = ",is_baseline" if body.count(",") > body.count("\n") * 3 else ""
    path.write_text(f"candidate,task,metric,value{extra}\n{body}")
    with pytest.raises(InputError, match=message):
        read_scores(path, "long")


def test_long_csv_cells_are_read_like_the_csv_module(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("Candidate, Task ,metric,value,participant,is_baseline,submitted_at\n"
                    " A ,t,m, 0.5 ,NA,TRUE,2024-03-01T10:00:00Z\nB,t,m,n/a,,no,\n\nC,t,m,-,p,0,\n")
    frame = read_scores(path, "long")
    assert frame["candidate"].tolist() == ["A", "B", "C"]
    assert frame["value"].iloc[0] == 0.5 and frame["value"].iloc[1:].isna().all()
    plain = lambda col: [None if pd.isna(v) else v for v in frame[col]]  # noqa: E731
    assert plain("participant") == [None, None, "p"]
    assert frame["is_baseline"].tolist() == [True, False, False]
    assert plain("submitted_at") == ["2024-03-01T10:00:00+00:00", None, None]


# ------------------------------------------------------------------ whitespace matrices
def test_headerless_space_separated_matrix(tmp_path):
    path = tmp_path / "m.txt"
    path.write_text("0.9 0.8  0.7\n0.5\t0.6 0.4\n\n0.7 0.7 nan\n")
    frame = read_scores(path, "wide")
    table = frame.pivot(index="candidate", columns="task", values="value")
    assert list(table.index) == ["c1", "c2", "c3"] and list(table.columns) == ["j1", "j2", "j3"]
    assert table.loc["c2", "j3"] == 0.4 and np.isnan(table.loc["c3", "j3"])


def test_space_separated_matrix_with_names_and_header(tmp_path):
    path = tmp_path / "m.txt"
    path.write_text("model acc f1\nA 0.9 0.8\nB 0.5 0.6\n")
    table = read_scores(path, "wide").pivot(index="candidate", columns="task", values="value")
    assert list(table.index) == ["A", "B"] and list(table.columns) == ["acc", "f1"]
    path.write_text("acc f1\nA 0.9 0.8\nB 0.5 0.6\n")  # no label above the names
    assert list(read_scores(path, "wide")["task"].unique()) == ["acc", "f1"]
    path.write_text("A 0.9 0.8\nB 0.5\n")
    with pytest.raises(InputError, match=r"m\.txt, line 2: the row has 2 cells; the first row has 3"):
        read_scores(path, "wide")
