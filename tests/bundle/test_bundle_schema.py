"""competition.yaml (v2 and v1): errors name the key and the allowed values; warnings list
what Codabench silently ignores or gets wrong."""

from __future__ import annotations

import shutil
import zipfile

import pytest
import yaml

from metascore.bundle.schema.load import check_schema, load_competition, path_references
from metascore.errors import ConfigError
from repo_paths import ROOT, TESTS

BUNDLES = TESTS / "data" / "bundles"
TEMPLATE = ROOT / "bundle_template"


@pytest.fixture
def bundle(tmp_path):
    """A copy of the v2_results fixture and a function to edit its yaml."""
    root = tmp_path / "b"
    shutil.copytree(BUNDLES / "v2_results", root)

    def edit(change):
        data = yaml.safe_load((root / "competition.yaml").read_text())
        change(data)
        (root / "competition.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
        return check_schema(root)

    edit.root = root
    return edit


def test_template_is_clean():
    report = check_schema(TEMPLATE)
    assert report.errors == [] and report.warnings == []
    comp = report.competition
    assert [p.name for p in comp.phases] == ["Development", "Final", "Final ranking"]
    assert [[comp.tasks[i].name for i in p.tasks] for p in comp.phases] == [
        ["datasets"], ["datasets"], ["meta-ranking"]]
    assert comp.leaderboard.keys == ("blobs_accuracy", "housing_mae", "churn_brier", "n_qualified",
                                     "winner_score")
    assert [c.sorting for c in comp.leaderboard.columns[:3]] == ["desc", "asc", "asc"]
    assert comp.phases[0].execution_time_limit == 120


def test_fixtures_parse():
    v1 = load_competition(BUNDLES / "v1_computed")
    assert v1.version == 1 and [p.name for p in v1.phases] == ["Development"]
    # v1 columns ordered by rank and re-indexed; sort -> sorting; numeric_format -> precision
    assert [(c.key, c.index, c.sorting, c.precision) for c in v1.leaderboard.columns] == [
        ("ave_score", 0, "asc", 2), ("set1_score", 1, "desc", 4), ("set2_score", 2, "desc", 4)]
    assert load_competition(BUNDLES / "v2_shared").tasks[0].ingestion_only_during_scoring is True


def test_sorting_typo_names_key_and_choices(bundle):
    report = bundle(lambda d: d["leaderboards"][0]["columns"][0].update(sorting="dsc"))
    assert report.errors == [
        "competition.yaml: leaderboards[0].columns[0].sorting: 'dsc' is not one of 'desc', 'asc' "
        "(did you mean 'desc'?)."
    ]
    with pytest.raises(ConfigError, match=r"sorting: 'dsc' is not one of 'desc', 'asc'"):
        load_competition(bundle.root)


def test_submission_rule_and_computation_enums(bundle):
    def change(d):
        d["leaderboards"][0]["submission_rule"] = "force_last"
        d["leaderboards"][0]["columns"][1]["computation"] = "mean"
    errors = bundle(change).errors
    assert any("submission_rule: 'force_last' is not one of" in e and "did you mean 'Force_Last'" in e
               for e in errors)
    assert any("computation: 'mean' is not one of 'avg', 'sum', 'min', 'max', 'avg_rank'" in e for e in errors)


def test_singular_leaderboard_is_an_error_in_v2(bundle):
    report = bundle(lambda d: d.update(leaderboard=d.pop("leaderboards")))
    assert any("found 'leaderboard:' (singular)" in e for e in report.errors)


def test_warnings_for_what_codabench_ignores(bundle):
    def change(d):
        cols = d["leaderboards"][0]["columns"]
        cols[1]["computation_indexes"] = "0"
        cols.append({"title": "t", "key": "a_very_long_key_that_is_longer_than_36", "index": 7})
        cols[0]["index"] = 5  # no column at the primary index 0 any more
        cols[1]["computation_indexes"] = "5"
        d["leaderboards"].append({"title": "Other", "key": "other", "columns": [dict(cols[0])]})
        d["leaderboard"] = {"columns": {}}
        d["tasks"][0]["is_public"] = True
    report = bundle(change)
    text = "\n".join(report.warnings)
    assert report.errors == []
    assert "Codabench attaches only leaderboards[0] to every phase" in text
    assert "'5' is a string" in text
    assert "no column has index 0 (the primary index)" in text
    assert "more than Codabench's limit of 36" in text
    assert "leaderboard: ignored by Codabench v2" in text
    assert "tasks[0].is_public: unknown key" in text
    assert "'a_very_long_key_that_is_longer_than_36'" in text and "no file of any task's scoring" in text


def test_missing_path_error_with_did_you_mean(bundle):
    report = bundle(lambda d: d["tasks"][0].update(scoring_program="scoring_progam/"))
    assert report.errors == [
        "competition.yaml: tasks[0].scoring_program: 'scoring_progam/' does not exist in the bundle "
        "(did you mean 'scoring_program'?) (Codabench would look it up as a dataset key and fail)."
    ]


def test_uuid_reference_is_a_warning(bundle):
    report = bundle(lambda d: d["tasks"][0].update(reference_data="2d4f4c6e-1b7a-4a55-9a5e-3d1f0b9c8e21"))
    assert report.errors == []
    assert any("existing Codabench dataset" in w for w in report.warnings)


def test_structure_errors(bundle):
    def change(d):
        d["phases"][0]["tasks"] = [0, 9]
        d["phases"].insert(0, {"name": "Early", "start": "2026-01-01", "end": "2026-02-01", "tasks": [0]})
        d["phases"][0]["index"] = -1
        d["tasks"][1]["index"] = 0
    errors = bundle(change).errors
    assert any("phases[1].tasks: task index 9 is not defined" in e for e in errors)
    assert any("tasks[1].index: 0 is used by another task" in e for e in errors)
    assert any("must start after the previous one ends" in e for e in errors)


def test_unknown_version(bundle):
    assert bundle(lambda d: d.update(version=3)).errors == [
        "competition.yaml: version: 3 is not one of 2, 1.5 or 1."]


def test_program_metadata_checks(bundle):
    root = bundle.root
    (root / "scoring_program" / "metadata").write_text("command: [python3 a.py, python3 b.py]\n")
    assert any("command is a list" in e for e in check_schema(root).errors)
    (root / "scoring_program" / "metadata").write_text("command: python3 score.py && echo done\n")
    report = check_schema(root)
    assert report.errors == []
    assert any("shell syntax" in w for w in report.warnings)
    (root / "scoring_program" / "metadata").write_text("command: python3 /app/program/scroe.py\n")
    assert check_schema(root).errors == [  # the program cannot run: an error, with the closest name
        "competition.yaml: tasks[index=0].scoring_program (metadata): command 'python3 "
        "/app/program/scroe.py' runs '/app/program/scroe.py', but scoring_program has no scroe.py "
        "(did you mean 'score.py'?).",
        "competition.yaml: tasks[index=1].scoring_program (metadata): command 'python3 "
        "/app/program/scroe.py' runs '/app/program/scroe.py', but scoring_program has no scroe.py "
        "(did you mean 'score.py'?)."]


def test_program_zip_with_nested_folder_is_refused(bundle):
    root = bundle.root
    with zipfile.ZipFile(root / "scoring.zip", "w") as zf:
        zf.writestr("scoring_program/metadata", "command: python3 score.py\n")
        zf.writestr("scoring_program/score.py", "print(1)\n")
    report = bundle(lambda d: d["tasks"][0].update(scoring_program="scoring.zip"))
    assert any("not at the root; Codabench does not flatten" in e for e in report.errors)


def test_competition_yaml_in_a_subfolder(tmp_path):
    shutil.copytree(BUNDLES / "v2_results", tmp_path / "outer" / "inner")
    assert check_schema(tmp_path / "outer").errors == [f"{tmp_path / 'outer'}: competition.yaml is missing from the bundle root "
                             "(found in inner/: put its contents, not the folder, at the bundle root)."]


def test_v1_errors_and_warnings(tmp_path):
    root = tmp_path / "v1"
    shutil.copytree(BUNDLES / "v1_computed", root)
    data = yaml.safe_load((root / "competition.yaml").read_text())
    data["leaderboard"]["columns"]["set1_score"]["sort"] = "ascending"
    del data["html"]["terms"]
    (root / "competition.yaml").write_text(yaml.safe_dump(data))
    errors = check_schema(root).errors
    assert any("html: Codabench's v1 unpacker needs html.terms" in e for e in errors)
    assert any("set1_score.sort: 'ascending' is not one of 'desc', 'asc'" in e for e in errors)


def test_path_references_v1_and_v2():
    v2 = yaml.safe_load((TEMPLATE / "competition.yaml").read_text())
    refs = path_references(v2)
    assert refs[:3] == ["logo.png", "pages/terms.md", "pages/overview.md"]
    assert "meta_scoring_program/" in refs and "starting_kit/" in refs
    v1 = yaml.safe_load((BUNDLES / "v1_computed" / "competition.yaml").read_text())
    assert path_references(v1) == ["logo.png", "overview.html", "terms.html", "scoring_program/",
                                   "reference_data/"]


def test_duplicate_keys_in_files_codabench_reads_warn_and_the_last_wins(bundle, tmp_path):
    """Codabench loads competition.yaml and program metadata with PyYAML, where a key written
    twice keeps its last value; real bundles have such keys (two `solutions:` in Codabench's
    own mini-automl example), so they must run: a warning naming both lines, not an error."""
    from metascore.bundle.schema.metadata import read_metadata

    comp = bundle.root / "competition.yaml"
    comp.write_text(comp.read_text() + "title: again\n")
    first = next(i for i, line in enumerate(comp.read_text().splitlines(), 1)
                 if line.startswith("title:"))
    last = len(comp.read_text().splitlines())
    report = check_schema(bundle.root)
    assert not report.errors
    assert (f"competition.yaml: key 'title' appears twice (lines {first} and {last}); "
            "the last one is used.") in report.warnings
    assert report.competition.title == "again"
    program = tmp_path / "program"
    program.mkdir()
    (program / "metadata.yaml").write_text("command: a\ncommand: b\n")
    assert read_metadata(program) == ({"command": "b"}, "metadata.yaml")


def test_duplicate_keys_in_a_submissions_manifest_are_errors_with_their_lines(tmp_path):
    from metascore.bundle.site.submissions import read_manifest

    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "submissions.yaml").write_text("- file: a.zip\n  team: x\n  team: y\n")
    with pytest.raises(Exception, match=r"submissions\.yaml: key 'team' appears twice \(lines 2 and 3\)"):
        read_manifest(subs)


# ------------------------------------------------------------ dates as Codabench stores them
def test_an_unquoted_time_of_day_is_dropped_as_codabench_does(bundle):
    """Codabench's unpacker (unpackers/utils.get_datetime) keeps only the day of an unquoted
    YAML date-time: `end: 2026-05-31 23:59:00` ends the phase at 2026-05-31 00:00 UTC (issue
    25, item 2). A quoted value is parsed as text, its time kept."""
    import datetime as dt

    def change(d):
        d["phases"][0]["end"] = dt.datetime(2026, 5, 31, 23, 59)  # dumped unquoted
        d["phases"].append({"index": 1, "name": "Final", "start": "2026-06-01 08:00:00",  # quoted
                            "tasks": [0]})
    report = bundle(change)
    assert report.errors == []
    assert report.warnings == [
        "competition.yaml: phases[0].end: 2026-05-31 23:59:00 is an unquoted date-time, of which "
        "Codabench's unpacker keeps only the day: the phase really ends at 2026-05-31 00:00 UTC, "
        "23 h 59 min earlier than written; quote the value (end: \"2026-05-31 23:59:00\") to keep "
        "its time, or write the day alone."]
    dev, final = report.competition.phases
    assert dev.end == dt.datetime(2026, 5, 31) and final.start == dt.datetime(2026, 6, 1, 8, 0)


def test_phase_order_is_checked_on_the_stored_dates(bundle):
    """12:00 and 18:00 of the same day are both stored as that day's midnight, and the
    unpacker refuses a phase that starts when the previous one ends."""
    import datetime as dt

    def change(d):
        d["phases"][0]["end"] = dt.datetime(2026, 5, 31, 12, 0)
        d["phases"].append({"index": 1, "name": "Final", "start": dt.datetime(2026, 5, 31, 18, 0),
                            "tasks": [0]})
    report = bundle(change)
    assert report.errors == [
        "competition.yaml: phases ('Feedback' -> 'Final'): phase 'Final' starts at 2026-05-31 "
        "00:00:00 but 'Feedback' ends at 2026-05-31 00:00:00 (as Codabench stores them: it keeps "
        "only the day of an unquoted date-time, here phases[0].end, phases[1].start); a phase "
        "must start after the previous one ends (equal times are refused too)."]
    assert sum("unquoted date-time" in w for w in report.warnings) == 2


def test_v1_start_dates_lose_their_time_too(tmp_path):
    root = tmp_path / "v1"
    shutil.copytree(BUNDLES / "v1_computed", root)
    text = (root / "competition.yaml").read_text()
    text = text.replace("start_date: 2026-01-01", "start_date: 2026-01-01 09:30:00")
    (root / "competition.yaml").write_text(text)
    report = check_schema(root)
    (warning,) = [w for w in report.warnings if "unquoted date-time" in w]
    assert warning.startswith("competition.yaml: phases.1.start_date: 2026-01-01 09:30:00 is an "
                              "unquoted date-time")
    assert "really starts at 2026-01-01 00:00 UTC, 9 h 30 min" in warning
    assert report.competition.phases[0].start.hour == 0


def test_the_baselines_time_is_the_first_phase_start_as_stored(tmp_path):
    """`bundle run` dates the starting kit's baseline at the first phase's start: the start
    Codabench stores (midnight), not the written time."""
    import datetime as dt

    from metascore.bundle.site.submissions import collect_submissions

    root = tmp_path / "b"
    shutil.copytree(TEMPLATE, root)
    data = yaml.safe_load((root / "competition.yaml").read_text())
    data["phases"][0]["start"] = dt.datetime(2026, 1, 1, 8, 0)
    (root / "competition.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    subs, _ = collect_submissions(load_competition(root), cache=tmp_path / "cache")
    (baseline,) = [s for s in subs if s.is_baseline]
    assert baseline.submitted_at == "2026-01-01T00:00:00+00:00"


# ------------------------------------------------------------ a phase naming a missing task
@pytest.mark.parametrize("tasks, message", [
    ([5], "phases[2].tasks: task index 5 is not defined (tasks: 0, 1, 2); Codabench's unpacker "
          "fails on it: name the index of a task of `tasks:`."),
    (None, "phases[2].tasks: empty; list the indexes of the phase's tasks, e.g. tasks: [0] "
           "(Codabench's unpacker fails on it with \"'NoneType' object is not iterable\")."),
    ([], "phases[2].tasks: [] names no task; list the indexes of the phase's tasks, e.g. tasks: [0] "
         "(Codabench cannot run a submission in a phase without tasks)."),
])
def test_a_phase_naming_a_missing_task_is_refused(tmp_path, tasks, message):
    """Codabench's real unpacker fails on these after the upload ("'NoneType' object is not
    iterable"); `bundle check` refuses them first, and `bundle zip` writes no zip (issue 25,
    item 5)."""
    from metascore.cli import main

    root = tmp_path / "b"
    shutil.copytree(TEMPLATE, root)
    data = yaml.safe_load((root / "competition.yaml").read_text())
    data["phases"][2]["tasks"] = tasks
    (root / "competition.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    assert "competition.yaml: " + message in check_schema(root).errors
    assert main(["bundle", "zip", str(root), "-o", str(tmp_path / "b.zip")]) == 1
    assert not (tmp_path / "b.zip").exists()
