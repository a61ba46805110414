"""`bundle check` knows Codabench's traps (multi-task phases with Force_Last, migration of
multi-task submissions, Add with a meta phase, baselines) and checks the meta-ranking's
metascore.yaml against competition.yaml (the organizer's planted mistakes)."""

from __future__ import annotations

import shutil

import pytest
import yaml

from metascore.bundle.check.full import check_bundle
from metascore.cli import main
from repo_paths import ROOT, TESTS

TEMPLATE = ROOT / "bundle_template"
BUNDLES = TESTS / "data" / "bundles"
CONFIG = "final_ranking/reference_data/metascore.yaml"


@pytest.fixture
def bundle(tmp_path):
    """A copy of the template, and functions to edit its competition.yaml and metascore.yaml."""
    root = tmp_path / "b"
    shutil.copytree(TEMPLATE, root)

    class Edit:
        path = root

        @staticmethod
        def competition(change):
            data = yaml.safe_load((root / "competition.yaml").read_text())
            change(data)
            (root / "competition.yaml").write_text(yaml.safe_dump(data, sort_keys=False))

        @staticmethod
        def config(change):
            data = yaml.safe_load((root / CONFIG).read_text())
            change(data)
            (root / CONFIG).write_text(yaml.safe_dump(data, sort_keys=False))

        @staticmethod
        def check():
            return check_bundle(root)

    return Edit


def multi_task(data):
    """The old layout: one task per dataset in each phase (3 + 3 tasks), Force_Last."""
    tasks = []
    for phase, folder in (("dev", "dev_phase"), ("final", "final_phase")):
        for name in ("blobs", "housing", "churn"):
            tasks.append({"index": len(tasks), "name": name,
                          "input_data": f"{folder}/input_data/{name}/",
                          "reference_data": f"{folder}/reference_data/{name}/",
                          "ingestion_program": "ingestion_program/", "scoring_program": "scoring_program/"})
    meta = dict(data["tasks"][2], index=6)
    data["tasks"] = tasks + [meta]
    data["phases"][0]["tasks"], data["phases"][1]["tasks"], data["phases"][2]["tasks"] = [0, 1, 2], [3, 4, 5], [6]


def test_the_template_has_no_warning(capsys):
    report = check_bundle(TEMPLATE)
    assert report.errors == [] and report.warnings == []
    assert main(["bundle", "check", str(TEMPLATE)]) == 0
    assert "0 error(s), 0 warning(s): OK." in capsys.readouterr().out


def test_multi_task_force_last_warns_with_issue_2211(bundle):
    bundle.competition(lambda d: (multi_task(d), d["phases"][1].pop("auto_migrate_to_this_phase")))
    warnings = bundle.check().warnings
    dev = [w for w in warnings if w.startswith("competition.yaml: phase 'Development' has 3 tasks")]
    assert len(dev) == 1 and "submission_rule is Force_Last" in dev[0]
    assert "codabench issue #2211" in dev[0] and "one task per phase" in dev[0]
    assert any(w.startswith("competition.yaml: phase 'Final' has 3 tasks") and "#2211" in w
               for w in warnings)
    assert not any("#2247" in w for w in warnings)


def test_force_latest_multiple_too_but_not_force_best(bundle):
    bundle.competition(lambda d: (multi_task(d), d["phases"][1].pop("auto_migrate_to_this_phase"),
                                  d["leaderboards"][0].update(submission_rule="Force_Latest_Multiple")))
    assert sum("#2211" in w for w in bundle.check().warnings) == 2
    bundle.competition(lambda d: d["leaderboards"][0].update(submission_rule="Force_Best"))
    assert not any("#2211" in w for w in bundle.check().warnings)


def test_migration_out_of_and_into_a_multi_task_phase_warns_with_issue_2247(bundle):
    bundle.competition(multi_task)
    warnings = [w for w in bundle.check().warnings if "#2247" in w]
    assert len(warnings) == 2
    out, into = sorted(warnings, key=lambda w: "receives" in w)
    assert "migrates submissions automatically from phase 'Development', which has 3 tasks" in out
    assert "nothing migrates" in out
    assert "phase 'Final' has 3 tasks and receives migrated submissions" in into


def test_migration_into_a_multi_task_phase_from_a_single_task_one(bundle):
    def change(d):
        d["tasks"].append(dict(d["tasks"][1], index=3, name="extra"))
        d["phases"][1]["tasks"] = [1, 3]
    bundle.competition(change)
    warnings = [w for w in bundle.check().warnings if "#2247" in w]
    assert len(warnings) == 1 and "phase 'Final' has 2 tasks and receives migrated" in warnings[0]


def test_add_with_a_meta_phase_warns_and_the_baseline_must_be_added_by_hand(bundle):
    bundle.competition(lambda d: d["leaderboards"][0].update(submission_rule="Add"))
    warnings = bundle.check().warnings
    add = [w for w in warnings if "nothing reaches the leaderboard until" in w]
    assert len(add) == 1 and "meta phase 'Final ranking' reads a results export" in add[0]
    assert ("Fix: `metascore bundle add-meta BUNDLE --submission-rule Force_Last` (it sets "
            "submission_rule: Force_Last on the leaderboard in competition.yaml)") in add[0]
    assert any(w.startswith(CONFIG) and "adds it to the leaderboard by hand" in w
               and "'Development', 'Final'" in w for w in warnings)


def test_add_without_a_meta_phase_reading_an_export_is_fine(bundle):
    bundle.competition(lambda d: d["leaderboards"][0].update(submission_rule="Add"))
    bundle.config(lambda c: c.update(input={"format": "tree", "path": "."}))
    assert bundle.check().warnings == []


def test_no_baselines_listed_warns_that_an_export_cannot_flag_the_baseline(bundle):
    bundle.config(lambda c: c.pop("baselines"))
    warnings = bundle.check().warnings
    assert len(warnings) == 1 and "does not say which row is the baseline" in warnings[0]


# ------------------------------------------------------------------ metascore.yaml (issue 14)
def test_method_typo_is_an_error_with_did_you_mean(bundle):
    bundle.config(lambda c: c["ranking"].update(method="kemeny"))
    errors = bundle.check().errors
    assert len(errors) == 1 and errors[0].startswith(CONFIG + ": ")
    assert "`ranking.method`" in errors[0] and "did you mean 'kemeny_young'?" in errors[0]


def test_method_parameter_is_checked_through_the_registry(bundle):
    bundle.config(lambda c: c["ranking"].update(method="kemeny_young", params={"sed": 1}))
    errors = bundle.check().errors
    assert len(errors) == 1 and "unknown parameter 'ranking.params.sed'" in errors[0]


def test_direction_typo_is_an_error(bundle):
    bundle.config(lambda c: c["judges"][1].update(direction="lowr"))
    errors = bundle.check().errors
    assert len(errors) == 1 and "`judges[1].direction` must be one of ['higher', 'lower']" in errors[0]


def test_judge_for_a_task_that_is_not_in_the_phases(bundle):
    bundle.config(lambda c: c["judges"].append({"task": "blobs", "metric": "blobs_accuracy"}))
    errors = bundle.check().errors
    assert f"{CONFIG}: judges[3] ('blobs/blobs_accuracy'): task 'blobs' is not a task of phase " \
           "'Development' (its tasks: 'datasets')." in errors
    assert len(errors) == 2  # Development and Final


def test_judge_for_a_removed_column(bundle):
    def drop_housing(d):
        d["leaderboards"][0]["columns"] = [c for c in d["leaderboards"][0]["columns"]
                                           if c["key"] != "housing_mae"]
    bundle.competition(drop_housing)
    errors = bundle.check().errors
    assert errors == [f"{CONFIG}: judges[1] ('datasets/housing_mae'): metric 'housing_mae' is not a "
                      "leaderboard column key (keys: 'blobs_accuracy', 'churn_brier')."]


def test_direction_that_contradicts_the_column_sorting(bundle):
    bundle.config(lambda c: c["judges"][1].update(direction="higher"))
    errors = bundle.check().errors
    assert errors == [f"{CONFIG}: judges[1] ('datasets/housing_mae'): direction higher, but "
                      "leaderboard column 'housing_mae' has sorting: asc (lower is better); make "
                      "them agree."]


def test_scoring_key_without_a_column_is_a_warning(bundle):
    bundle.config(lambda c: c["output"]["scores"].update(n_judges="n_judges"))
    report = bundle.check()
    assert report.errors == []
    assert any(w.startswith(f"{CONFIG}: `output.scores` key 'n_judges' (n_judges) has no "
                            "leaderboard column") for w in report.warnings)


def test_phase_names_must_be_phases_of_the_competition(bundle):
    bundle.config(lambda c: c["phases"].update(final="Finale"))
    errors = bundle.check().errors
    assert errors[0] == (f"{CONFIG}: `phases.final` 'Finale' is not a phase of competition.yaml "
                         "(did you mean 'Final'?) (phases: 'Development', 'Final').")


def test_no_judges_with_a_lower_is_better_column_warns(bundle):
    bundle.config(lambda c: c.pop("judges"))
    warnings = bundle.check().warnings
    assert any("no `judges:`" in w and "'housing_mae', 'churn_brier' have sorting: asc" in w
               for w in warnings)


def test_baselines_that_no_local_submission_has(bundle):
    bundle.config(lambda c: c.update(baselines=["organizer"]))
    warnings = bundle.check().warnings
    assert any("baseline 'organizer' (`baselines:`): no submission of the starting kit, the "
               "solutions or sample_submissions/ is by participant 'organizer': `bundle run` finds "
               "it when --submissions DIR holds one of its submissions" in w for w in warnings)


def test_beat_baseline_without_any_baseline_is_an_error(bundle):
    shutil.rmtree(bundle.path / "starting_kit" / "baseline_submission")
    bundle.config(lambda c: c.pop("baselines"))
    errors = bundle.check().errors
    assert any("filter rule beat_baseline needs a baseline, and there is none" in e for e in errors)


def test_a_broken_meta_config_makes_bundle_check_fail(bundle, capsys):
    bundle.config(lambda c: c["ranking"].update(method="kemeny"))
    assert main(["bundle", "check", str(bundle.path)]) == 1
    out = capsys.readouterr().out
    assert "error: final_ranking/reference_data/metascore.yaml:" in out and "not ready to upload" in out


def test_judge_title_must_be_the_column_title(bundle):
    bundle.config(lambda c: c["judges"][0].update(title="Accuracy"))
    assert bundle.check().errors == [
        f"{CONFIG}: judges[0] ('datasets/blobs_accuracy'): title 'Accuracy', but leaderboard column "
        "'blobs_accuracy' has title 'Accuracy (blobs)'; a results export names the column by its "
        "title, so they must be equal."]


def test_judge_without_title_warns_when_the_input_is_an_export(bundle):
    bundle.config(lambda c: c["judges"][2].pop("title"))
    warnings = bundle.check().warnings
    assert warnings == [f"{CONFIG}: judges[2] ('datasets/churn_brier'): a Codabench results export "
                        "names column 'churn_brier' by its title (datasets(<task id>)-Brier (churn)), "
                        "so this judge finds no score there; add title: 'Brier (churn)' to it."]
    bundle.config(lambda c: c.update(input={"format": "tree", "path": "."}))
    assert bundle.check().warnings == []  # a tree names scores by key


def test_bundle_zip_refuses_a_broken_meta_config_and_writes_nothing(bundle, capsys, tmp_path):
    bundle.config(lambda c: c["ranking"].update(method="kemeny"))
    dest = tmp_path / "out.zip"
    assert main(["bundle", "zip", str(bundle.path), "-o", str(dest)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "kemeny" in err[0] and "no zip written" in err[0]
    assert not dest.exists()


# ------------------------------------------------------------ the site's calendar (issue 25, item 3)
def _zipped_yaml(path):
    import zipfile

    return yaml.safe_load(zipfile.ZipFile(path).read("competition.yaml"))


def test_a_migrating_phase_that_starts_before_now_warns():
    """At its next run (every 5 minutes) Codabench's scheduler migrates an auto-migrating
    phase whose start is past, with what the previous phase holds then: nothing, right after
    the upload. The Final phase then stays empty."""
    import datetime as dt

    assert check_bundle(TEMPLATE, now=dt.datetime(2027, 5, 31, 23, 0)).warnings == []
    assert check_bundle(TEMPLATE, now=dt.datetime(2027, 6, 2, 9, 30)).warnings == [
        "competition.yaml: phases[1].start: 2027-06-01 00:00 UTC is already past (now: 2027-06-02 "
        "09:30 UTC) and phase 'Final' has auto_migrate_to_this_phase, so within 5 minutes of the "
        "upload Codabench migrates 'Development' into it with what 'Development' holds then "
        "(nothing, on a new competition), marks 'Final' migrated, and no later submission reaches "
        "it without a manual migration; move the dates so that 'Final' starts after 'Development' "
        "has its submissions, e.g. `metascore bundle zip --start today` (every phase moved so that "
        "the first starts today)."]


def test_bundle_check_and_zip_warn_about_a_past_migration(bundle, capsys, tmp_path):
    bundle.competition(lambda d: (d["phases"][0].update(start="2025-01-01 00:00:00", end="2025-05-31 23:59:00"),
                                  d["phases"][1].update(start="2025-06-01 00:00:00", end="2025-06-30 23:59:00"),
                                  d["phases"][2].update(start="2025-07-01 00:00:00")))
    assert main(["bundle", "check", str(bundle.path)]) == 0
    out = capsys.readouterr().out
    assert "warning: competition.yaml: phases[1].start: 2025-06-01 00:00 UTC is already past" in out
    assert main(["bundle", "zip", str(bundle.path), "-o", str(tmp_path / "b.zip")]) == 0
    out = capsys.readouterr().out
    assert "warning: competition.yaml: phases[1].start: 2025-06-01 00:00 UTC is already past" in out
    assert "1 warning(s) above" in out


def test_zip_start_moves_every_phase_date_and_keeps_the_calendar(tmp_path, capsys, monkeypatch):
    """`bundle zip --start today` (or a date): the first phase starts that day, every date
    moves by the same number of days (times, lengths and gaps kept), the folder is unchanged."""
    import datetime as dt

    from metascore.bundle.schema import phase_dates

    monkeypatch.setattr(phase_dates, "utc_now", lambda: dt.datetime(2031, 3, 10, 15, 0))
    before = (TEMPLATE / "competition.yaml").read_text()
    dest = tmp_path / "b.zip"
    assert main(["bundle", "zip", str(TEMPLATE), "-o", str(dest), "--start", "today"]) == 0
    out = capsys.readouterr().out
    assert "[*] phase dates moved by +1529 day(s) so that 'Development' starts on 2031-03-10:" in out
    assert "[*] phase 'Final': 2031-08-08 to 2031-09-06 (was 2027-06-01 to 2027-06-30)" in out
    assert "warning" not in out
    phases = _zipped_yaml(dest)["phases"]
    assert [(p.get("start"), p.get("end")) for p in phases] == [
        ("2031-03-10 00:00:00", "2031-08-07 23:59:00"), ("2031-08-08 00:00:00", "2031-09-06 23:59:00"),
        ("2031-09-07 00:00:00", None)]
    assert (TEMPLATE / "competition.yaml").read_text() == before
    # a date; unquoted YAML dates stay dates
    assert main(["bundle", "zip", str(BUNDLES / "phases"), "-o", str(dest), "--start", "2030-01-15"]) == 0
    assert [(p["start"], p.get("end")) for p in _zipped_yaml(dest)["phases"]] == [
        (dt.date(2030, 1, 15), dt.date(2030, 2, 14)), (dt.date(2030, 2, 15), None)]
    assert main(["bundle", "zip", str(TEMPLATE), "-o", str(dest), "--start", "next week"]) == 1
    assert "--start 'next week': expected 'today' or a date such as 2027-01-04." in capsys.readouterr().err


# ------------------------------------------------------------ the meta program's placeholder (item 4)
def test_a_hand_zipped_template_is_refused_and_the_folder_gets_a_note(tmp_path, capsys):
    """Zipped without `bundle zip`, meta_scoring_program/ holds only its README: Codabench
    accepts the bundle and the Final ranking submission fails after the time limit. Checking
    that zip is an error; checking the folder, a note naming `bundle zip`."""
    from metascore.bundle.archive import zip_directory

    hand = zip_directory(TEMPLATE, tmp_path / "hand.zip")  # as `cd bundle_template; zip -r` does
    assert main(["bundle", "check", str(hand)]) == 1
    out = capsys.readouterr().out
    assert ("error: competition.yaml: tasks[index=2].scoring_program: 'meta_scoring_program/' holds "
            "only a README, the placeholder that `metascore bundle zip` fills with the meta-scoring "
            "program: in this zip the worker finds no program, and on Codabench the submissions of "
            "phase(s) 'Final ranking' fail after the time limit ('Execution Time Limit exceeded'); "
            "upload the zip that `metascore bundle zip <bundle folder>` makes instead.") in out
    report = check_bundle(TEMPLATE)
    assert report.errors == [] and report.warnings == []
    assert report.notes == [
        "competition.yaml: tasks[index=2].scoring_program: 'meta_scoring_program/' holds only a "
        "README: it is the placeholder that `metascore bundle zip` (and `bundle run`) fill with the "
        "meta-scoring program, so upload the zip `metascore bundle zip` makes; a zip of this folder "
        "made otherwise has no program there, and on Codabench the submissions of phase(s) 'Final "
        "ranking' fail after the time limit ('Execution Time Limit exceeded')."]
    assert main(["bundle", "check", str(TEMPLATE)]) == 0
    out = capsys.readouterr().out
    assert "note: competition.yaml: tasks[index=2].scoring_program: 'meta_scoring_program/'" in out


def test_an_absent_meta_program_folder_in_a_zip_is_refused(bundle, tmp_path, capsys):
    from metascore.bundle.archive import zip_directory

    shutil.rmtree(bundle.path / "meta_scoring_program")
    assert check_bundle(bundle.path).notes[0].startswith(
        "competition.yaml: tasks[index=2].scoring_program: 'meta_scoring_program/' is absent: it is "
        "the placeholder")
    assert main(["bundle", "check", str(zip_directory(bundle.path, tmp_path / "hand.zip"))]) == 1
    assert ("error: competition.yaml: tasks[index=2].scoring_program: 'meta_scoring_program/' is "
            "absent, the placeholder") in capsys.readouterr().out
