"""Issue 41: a competition shaped like SemEval-2020 Task 4 runs locally as Codabench runs it,
and each dead end names its way out.

The fixture ``tests/data/bundles/v1_five_phases`` is built the way that bundle is (hand-written,
no file of it copied): five CodaLab v1 phases (Practice, three Evaluation phases with their
results hidden, an auto-migrating Post-Evaluation that reuses the Evaluation phases'
reference data and never ends), one leaderboard of three heterogeneous columns, result
submissions in phase folders (``alice__strong`` in two of them), and a starting kit zipped
without ``-r``: three empty folder entries next to ``submission.zip``, the trial data's gold
answers. One test (or more) per item of the issue; items 8 and 10 are in
``tests/bundle/test_site.py`` (``test_an_empty_export_says_so_and_names_the_rule``) and
``tests/leaderboard/test_filtering.py`` (``test_top_k_and_none``); the real site's view of
items 1 and 6 is ``tests/real_site/test_real_site_issue41.py``.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest
import yaml

from metascore.bundle.bundle_zip import build_bundle_zip
from metascore.bundle.check.full import check_bundle
from metascore.bundle.runtime import store as rt
from metascore.bundle.runtime import build as recipe
from metascore.bundle.runtime import cpython as cpython_recipe
from metascore.bundle.meta.add import add_meta
from metascore.bundle.meta.choices import MetaChoices
from metascore.bundle.runner import format_report, run_bundle
from metascore.bundle.schema.load import check_schema, load_competition
from metascore.bundle.site.submissions import collect_submissions
from metascore.errors import ConfigError
from real_site_bundles import edit_yaml as _edit
from repo_paths import TESTS

DATA = TESTS / "data" / "bundles"
FIVE = DATA / "v1_five_phases"
EVAL_C, POST = "Evaluation Subtask C", "Post-Evaluation"


@pytest.fixture(autouse=True)
def _organizers_meta_python(monkeypatch):
    monkeypatch.setenv("METASCORE_META_PYTHON", "auto")


def _copy(tmp_path: Path, src: Path = FIVE, name: str = "bundle") -> Path:
    return Path(shutil.copytree(src, tmp_path / name))


def _config(bundle: Path) -> dict:
    return yaml.safe_load((bundle / "final_ranking" / "reference_data" / "metascore.yaml").read_text())


@pytest.fixture(scope="module")
def plain_run(tmp_path_factory):
    """The fixture as it is (no meta phase), run once by the local backend."""
    out = tmp_path_factory.mktemp("plain") / "out"
    return run_bundle(FIVE, out)


def _runs(report, phase: str) -> dict[str, tuple[str, dict]]:
    return {r.candidate: (r.status, r.scores) for r in report.results if r.phase == phase}


# ---------------------------------------------------------------------- item 1: migration
def test_result_submissions_migrate_as_codabench_migrates_them(plain_run):
    """Every finished submission the Evaluation Subtask C leaderboard holds is re-run in the
    auto-migrating Post-Evaluation, results zips included; the same reference data gives the
    same scores."""
    moved = _runs(plain_run, POST)
    assert moved == _runs(plain_run, EVAL_C)
    assert sorted(moved) == ["alice__strong", "bob__mid", "carol__weak", "dave__late"]
    assert all(status == "Finished" for status, _ in moved.values())
    assert moved["alice__strong"][1] == {"A_Accuracy": 87.5, "B_Accuracy": 87.5, "C_BLEU": 80.9524}
    assert not any("not migrated" in w for w in plain_run.warnings)


def test_a_migrated_results_zip_that_does_not_fit_fails_there(tmp_path):
    """The scoring program decides: Practice's answers (trial ids) migrated into an
    Evaluation phase (test ids) fail there, as any submission would on Codabench."""
    bundle = _copy(tmp_path)
    _edit(bundle, lambda d: d["phases"][2].update(auto_migration=True))
    report = run_bundle(bundle, tmp_path / "out")
    moved = {r.candidate: r for r in report.results if r.phase == "Evaluation Subtask A"}
    # made to Evaluation Subtask A: alice__strong, bob__mid; migrated: carol__weak (alice's
    # and bob's migrated copies meet their own submissions there)
    assert moved["carol__weak"].status == "Failed"
    assert "reference id(s) without an answer" in moved["carol__weak"].reason
    assert moved["alice__strong"].status == "Finished"


# ---------------------------------------------------------------------- item 2: empty folders
def test_empty_folder_entries_of_a_starting_kit_are_not_submissions(tmp_path):
    subs, warnings = collect_submissions(load_competition(FIVE), cache=tmp_path)
    kit = [s for s in subs if s.origin == "starting kit"]
    assert [s.candidate for s in kit] == ["submission"]
    said = [w for w in warnings if "empty folder" in w]
    assert said == ["starting kit starting_kit.zip: 3 empty folders (sample_submission_subtaskA/, "
                    "sample_submission_subtaskB/, sample_submission_subtaskC/) are left out: an empty "
                    "folder is not a submission (a zip made without -r keeps only the folder's entry)."]


def test_an_empty_folder_among_the_submissions_is_left_out_and_said(tmp_path):
    folder = tmp_path / "subs"
    shutil.copytree(FIVE / "sample_submissions" / EVAL_C, folder / EVAL_C)
    (folder / EVAL_C / "zoe__nothing").mkdir()
    subs, warnings = collect_submissions(load_competition(FIVE), folder, cache=tmp_path / "cache")
    assert "zoe__nothing" not in {s.candidate for s in subs}
    assert any(w.endswith("empty folder zoe__nothing/ left out: an empty folder is not a submission.")
               for w in warnings), warnings


# ---------------------------------------------------------------------- item 13: names
def test_the_same_file_name_in_two_phase_folders_keeps_its_name(plain_run):
    """Practice's and Evaluation Subtask C's alice__strong never meet in a phase: both keep
    the name (it used to show as alice__strong-2 and alice__strong)."""
    names = {(r.phase, r.candidate) for r in plain_run.results}
    assert ("Practice", "alice__strong") in names and (EVAL_C, "alice__strong") in names
    assert not any(c.endswith("-2") for _, c in names)
    # and each ran its own files: the trial answers in Practice, the test answers in C
    assert _runs(plain_run, "Practice")["alice__strong"][1]["A_Accuracy"] == 75.0
    assert _runs(plain_run, EVAL_C)["alice__strong"][1]["A_Accuracy"] == 87.5


# ---------------------------------------------------------------------- item 3: an empty ranking
def test_an_unbeatable_baseline_is_said_before_and_after_the_run(tmp_path):
    """The kit's answers are Practice's gold answers: gating Post-Evaluation on Practice
    qualifies nobody. add-meta and bundle check say so beforehand; the run ends with one plain
    line: the ranking is empty, why, and the ways out."""
    bundle = _copy(tmp_path)
    result = add_meta(bundle, end="2027-06-30", submission_rule="Force_Last",
                      choices=MetaChoices(phases=("Practice", POST)))
    (note,) = [n for n in result.notes if "holds the reference answers" in n]
    assert note.startswith("baseline 'submission' (starting kit) holds the reference answers of "
                           "'Practice' (subtaskA_answers.csv = ref_practice/subtaskA_gold_answers.csv;")
    assert "no participant can beat it and the final ranking will be empty" in note
    assert any("holds the reference answers of 'Practice'" in w for w in check_bundle(bundle).warnings)
    report = run_bundle(bundle, tmp_path / "out")
    assert report.meta.status == "Finished"
    assert report.empty_ranking.startswith(
        "the final ranking is empty: no final-phase candidate qualified: none beat every baseline "
        "in the 'Practice' phase")
    assert "holds the best score of the 'Practice' phase on every judge, so nobody can beat it" in report.empty_ranking
    assert "; way out: `metascore bundle add-meta BUNDLE --filter top_k:" in report.empty_ranking
    text = format_report(report)
    assert f"; way out: `metascore bundle add-meta {bundle} --filter top_k:" in text  # the bundle named
    assert text.count("the final ranking is empty") == 1
    assert "\nthe final ranking is empty: " in text  # a line of its own


def test_a_beatable_baseline_is_not_said_unbeatable(tmp_path):
    bundle = _copy(tmp_path)
    with zipfile.ZipFile(bundle / "starting_kit.zip") as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    inner = tmp_path / "submission.zip"
    with zipfile.ZipFile(inner, "w") as z:  # one answer wrong
        z.writestr("subtaskA_answers.csv", "t1,1\nt2,1\nt3,0\nt4,1\n")
    members["submission.zip"] = inner.read_bytes()
    with zipfile.ZipFile(bundle / "starting_kit.zip", "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    result = add_meta(bundle, end="2027-06-30", choices=MetaChoices(phases=("Practice", POST)))
    assert not [n for n in result.notes if "reference answers" in n]


# ---------------------------------------------------------------------- item 4: an empty final phase
def test_an_empty_final_phase_says_why_and_which_phases_hold_scores(tmp_path):
    """Under Add (a v1 file), nothing migrated into Post-Evaluation is on a leaderboard: the
    meta phase says why that phase has no scores and which phases do, not "rank the
    development phase only"."""
    bundle = _copy(tmp_path)
    add_meta(bundle, end="2027-06-30")
    report = run_bundle(bundle, tmp_path / "out")
    assert report.meta.status == "Failed"
    reason = report.meta.reason
    assert "phase 'Post-Evaluation' (phases.development) has no scores in the input" in reason
    assert "nothing migrated into it" in reason and "submission_rule kept them off" in reason
    assert ("Phases with scores: 'Evaluation Subtask A' (2 submission(s)), 'Evaluation Subtask B' "
            "(2 submission(s)), 'Evaluation Subtask C' (4 submission(s)), 'Practice' (3 "
            "submission(s))") in reason
    assert "to rank the development phase only" not in reason
    # the run says the exact cause once
    assert any(w.startswith("no submission of phase 'Post-Evaluation' reaches the meta phase: the "
                            "finished submissions are on no leaderboard under the rule 'Add'")
               for w in report.warnings)


# ---------------------------------------------------------------------- item 5: many phases
def test_add_meta_on_five_phases_shows_what_each_holds_and_the_choice(tmp_path):
    result = add_meta(_copy(tmp_path), end="2027-06-30", submission_rule="Force_Last")
    (overview,) = [n for n in result.notes if n.startswith("phases: 5 phases")]
    assert overview.splitlines() == [
        "phases: 5 phases; the final ranking is made of 'Post-Evaluation' after 'Evaluation "
        "Subtask C' (--phases DEVELOPMENT,FINAL chooses). Every phase has the leaderboard's "
        "columns (A_Accuracy, B_Accuracy, C_BLEU); a local run makes these submissions:",
        "    'Practice': reference data ref_practice/; 4 submission(s): submission (baseline), "
        "alice__strong, bob__mid, carol__weak",
        "    'Evaluation Subtask A': reference data ref_test/; 2 submission(s): alice__strong, bob__mid",
        "    'Evaluation Subtask B': reference data ref_test/ (as 'Evaluation Subtask A'); 2 "
        "submission(s): alice__strong, carol__weak",
        "    'Evaluation Subtask C' (development): reference data ref_test/ (as 'Evaluation Subtask "
        "A'); 4 submission(s): alice__strong, bob__mid, carol__weak, dave__late",
        "    'Post-Evaluation' (final): reference data ref_test/ (as 'Evaluation Subtask A'); "
        "migrates from 'Evaluation Subtask C'; 4 submission(s): alice__strong, bob__mid, "
        "carol__weak, dave__late"]
    # the pair cannot filter on the baseline, which runs in Practice only: said, and no filter
    assert any(n.startswith("baseline 'baseline' runs in 'Practice' only in a local run, not in "
                            "'Evaluation Subtask C', where beat_baseline compares") for n in result.notes)
    assert any(n.startswith("filter none: the final ranking ranks 'Post-Evaluation' on its own")
               for n in result.notes)


# ---------------------------------------------------------------------- item 9: no filter
def test_without_a_filter_the_final_phase_is_ranked_on_its_own_judges(tmp_path):
    bundle = _copy(tmp_path)
    add_meta(bundle, end="2027-06-30", submission_rule="Force_Last",
             choices=MetaChoices(phases=("Practice", POST), filter="none"))
    config = _config(bundle)
    assert config["phases"] == {"development": None, "final": POST}  # ranked alone, named final
    assert [(j["task"], j["metric"]) for j in config["judges"]] == [
        ("Post-Evaluation Task", "A_Accuracy"), ("Post-Evaluation Task", "B_Accuracy"),
        ("Post-Evaluation Task", "C_BLEU")]
    page = (bundle / "final_ranking.md").read_text()
    assert "Practice" not in page
    report = run_bundle(bundle, tmp_path / "out")
    board = json.loads((tmp_path / "out" / "final" / "leaderboard.json").read_text())
    assert board["statistics"]["n_baselines"] == 0 and board["statistics"]["n_candidates"] == 4
    html = report.detailed_results.read_text()
    assert "Threshold" not in html and "Practice Task" not in html  # no judge of Practice


# ---------------------------------------------------------------------- item 6: v1 keys
def test_bundle_check_names_every_v1_key_codabench_does_not_read():
    report = check_schema(FIVE)
    warnings = [w for w in report.warnings if "not read by Codabench's v1 import" in w]
    assert [w.split(":", 2)[1].strip() for w in warnings] == [
        "allow_teams", "admin_names", "leaderboard_management_mode (phases 2, 3, 4)"]
    (hidden,) = [w for w in warnings if "leaderboard_management_mode" in w]
    assert ("hide_results is not read by Codabench's v1 import: the results of phase(s) 'Evaluation "
            "Subtask A', 'Evaluation Subtask B', 'Evaluation Subtask C' are shown on the leaderboard "
            "while each runs") in hidden
    assert "v2: hidden: true on the leaderboard" in hidden
    assert "add them as collaborators in the competition editor" in warnings[1]
    assert ("competition.yaml: enable_forum, color (phases 1, 2, 3, 4, 5): not read by Codabench's "
            "v1 import, with nothing a participant depends on.") in report.notes


def test_the_v2_rewrite_names_them_and_carries_the_rest_as_the_v1_import_maps_it(tmp_path):
    bundle = _copy(tmp_path)
    v1 = load_competition(bundle)
    result = add_meta(bundle, end="2027-06-30", submission_rule="Force_Last")
    assert "every other key as Codabench's v1 import maps it" in result.changes[0]
    said = [n for n in result.notes if n.startswith("not in the v2 form")]
    assert [n.split(": ")[1] for n in said[:3]] == [
        "allow_teams", "admin_names", "leaderboard_management_mode (phases 2, 3, 4)"]
    assert said[3] == ("not in the v2 form either, with nothing a participant depends on: "
                       "enable_forum, color (phases 1, 2, 3, 4, 5).")
    v2 = load_competition(bundle)
    # the meta task is named as the v1 import names a phase's task
    assert [t.name for t in v2.tasks.values()][-1] == "Final ranking Task"
    # key by key, the parsed forms: what the v1 import maps is what the v2 file says
    kept = [p for p in v2.phases if p.name != "Final ranking"]
    fields = ("name", "tasks", "execution_time_limit", "starting_kit", "public_data", "start",
              "auto_migrate", "hide_output")
    for a, b in zip(v1.phases, kept):
        assert {f: getattr(a, f) for f in fields} == {f: getattr(b, f) for f in fields}
    assert [p.end for p in kept[:-1]] == [p.start - dt.timedelta(days=1) for p in v1.phases[1:]]
    assert {i: v2.tasks[i] for i in v1.tasks} == v1.tasks
    assert list(v1.leaderboard.columns) == [c for c in v2.leaderboard.columns if c.key in v1.leaderboard.keys]
    assert (v2.title, v2.docker_image, v2.registration_auto_approve, v2.pages[:3]) == (
        v1.title, v1.docker_image, v1.registration_auto_approve, v1.pages[:3])
    assert v2.leaderboard.submission_rule == "Force_Last" and v1.leaderboard.submission_rule == "Add"


def test_the_first_leaderboard_is_the_files_first_whatever_its_rank(tmp_path):
    """Codabench's v1 import attaches the file's first leaderboard to every phase."""
    bundle = _copy(tmp_path)

    def two_boards(d):
        d["leaderboard"]["leaderboards"] = {"Results": {"label": "Results", "rank": 2},
                                            "Other": {"label": "Other", "rank": 1}}
    _edit(bundle, two_boards)
    assert load_competition(bundle).leaderboard.key == "Results"
    add_meta(bundle, end="2027-06-30", submission_rule="Force_Last")
    assert yaml.safe_load((bundle / "competition.yaml").read_text())["leaderboards"][0]["key"] == "Results"


# ---------------------------------------------------------------------- item 7: --start keeps --end
def test_zip_start_keeps_the_end_given_to_add_meta(tmp_path):
    bundle = _copy(tmp_path)
    add_meta(bundle, end="2027-06-30")
    lines: list[str] = []
    zipped = build_bundle_zip(bundle, tmp_path / "b.zip", start=dt.date(2026, 12, 2), log=lines.append)
    with zipfile.ZipFile(zipped) as z:
        data = yaml.safe_load(z.read("competition.yaml"))
    starts = {p["label"]: str(p["start_date"]) for p in data["phases"].values()}
    assert starts["Practice"] == "2026-12-02" and starts[POST] == "2027-06-24"
    assert starts["Final ranking"] == "2027-07-01"  # the day after --end, where it was put
    assert any(line.endswith("(kept: the end given to `bundle add-meta --end`, and the day after it)")
               for line in lines)
    # a shift that would move a phase past that end is refused, saying why
    with pytest.raises(ConfigError, match=r"--start 2027-06-25: phase 'Evaluation Subtask A' would "
                       r"start on 2027-12-24 .*not before 2027-06-30, the end given to `bundle "
                       r"add-meta --end`"):
        build_bundle_zip(bundle, tmp_path / "c.zip", start=dt.date(2027, 6, 25))


def test_zip_start_keeps_a_v2_end_given_to_add_meta(tmp_path):
    bundle = _copy(tmp_path, DATA / "add_meta_v2")
    if yaml.safe_load((bundle / "competition.yaml").read_text())["phases"][-1].get("end"):
        _edit(bundle, lambda d: d["phases"][-1].pop("end"))
    add_meta(bundle, end="2027-06-30")
    first = load_competition(bundle).phases[0].start.date()
    zipped = build_bundle_zip(bundle, tmp_path / "b.zip", start=first + dt.timedelta(days=30))
    with zipfile.ZipFile(zipped) as z:
        phases = yaml.safe_load(z.read("competition.yaml"))["phases"]
    assert str(phases[-2]["end"]) == "2027-06-30" and str(phases[-1]["start"]) == "2027-07-01"
    assert str(phases[0]["start"]) == str(first + dt.timedelta(days=30))


# ---------------------------------------------------------------------- item 11: the description
def test_the_meta_phase_description_states_no_result(tmp_path):
    bundle = _copy(tmp_path)
    add_meta(bundle, end="2027-06-30", choices=MetaChoices(phases=("Practice", POST)))
    data = yaml.safe_load((bundle / "competition.yaml").read_text())
    description = next(p for p in data["phases"].values() if p["label"] == "Final ranking")["description"]
    assert description.endswith("The Qualified candidates column counts the participants who qualified.")
    assert "0:" not in description and "nobody" not in description


# ---------------------------------------------------------------------- item 12: the build message
def test_the_runtime_build_says_its_measured_time_and_the_zips_weight(tmp_path, monkeypatch):
    monkeypatch.setenv("METASCORE_RUNTIME_CACHE", str(tmp_path / "cache"))

    def fake_cpython(dest, work, downloads, log):
        (dest / "bin").mkdir(parents=True)
        (dest / "bin" / "python").write_bytes(b"not really")
        return {"build_seconds": 1}

    def fake_build(dest, cpython, work, log):
        shutil.copytree(cpython, dest)
        return {"glibc": "2.17"}

    monkeypatch.setattr(cpython_recipe, "build_cpython", fake_cpython)
    monkeypatch.setattr(recipe, "build_runtime", fake_build)
    monkeypatch.setattr(cpython_recipe, "check_host", lambda: None)
    monkeypatch.setattr(rt, "installed_wheel", lambda: None)
    lines: list[str] = []
    rt.ensure_runtime(lines.append)
    (said,) = [line for line in lines if line.startswith("[*] building the meta-scoring program's Python")]
    assert "about 4 CPU-minutes, measured 11 to 15 minutes on two busy cores" in said
    assert "about 44 MB more (e.g. 0.5 -> 45 MB" in said and "metascore[runtime]" in said


# ---------------------------------------------------------------------- item 14: wording
def test_an_end_before_the_last_phase_starts_says_where_it_came_from(tmp_path):
    bundle = _copy(tmp_path)
    _edit(bundle, lambda d: d.update(end_date=dt.date(2020, 3, 1)))  # before Post-Evaluation starts
    with pytest.raises(ConfigError) as exc:
        add_meta(bundle)
    text = str(exc.value)
    assert text.startswith("phase 'Post-Evaluation' (the last phase) would end on 2020-03-01, "
                           "competition.yaml's end_date, which is not after its start, 2020-03-12: "
                           "give --end DATE")
    assert "--end None" not in text


def test_a_v1_tasks_files_are_located_by_its_phase(tmp_path):
    bundle = _copy(tmp_path)
    (bundle / "scoring_program" / "metadata").write_text("command: python3 $program/evaluat.py $input $output\n")
    errors = check_schema(bundle).errors
    assert errors and all(re.match(r"competition\.yaml: phases\.\d\.scoring_program", e) for e in errors)
    assert not any(" Task'." in e for e in errors)


# ---------------------------------------------------------------------- what the new user's trial met
def test_a_competition_bundle_among_the_submissions_is_left_out_and_said(tmp_path):
    """The trial copied every zip of an example folder, the competition's bundle.zip too."""
    folder = tmp_path / "subs"
    shutil.copytree(FIVE / "sample_submissions" / EVAL_C, folder / EVAL_C)
    with zipfile.ZipFile(folder / "bundle.zip", "w") as z:
        z.writestr("competition.yaml", "version: 2\n")
    subs, warnings = collect_submissions(load_competition(FIVE), folder, cache=tmp_path / "cache")
    assert "bundle" not in {s.candidate for s in subs}
    assert any(w.endswith("bundle.zip left out: it holds a competition.yaml, so it is a competition "
                          "bundle, not a submission.") for w in warnings), warnings


def test_add_meta_counts_the_warnings_bundle_check_then_prints(tmp_path):
    """add-meta checks a view of the bundle made of links; a module that a program imports
    from a folder of the bundle (the participant's model.py in the starting kit) is found
    through them, so no warning is counted that `bundle check` does not print."""
    bundle = _copy(tmp_path)
    _edit(bundle, lambda d: d.update(competition_docker_image="codalab/codalab-legacy:py312"))
    (bundle / "starting_kit").mkdir()
    (bundle / "starting_kit" / "model_helpers.py").write_text("VALUE = 1\n")
    evaluate = bundle / "scoring_program" / "evaluate.py"
    evaluate.write_text(evaluate.read_text().replace(
        "from collections import Counter\n", "from collections import Counter\n\nimport model_helpers  # noqa\n"))
    assert not [w for w in check_bundle(bundle).warnings if "model_helpers" in w]
    result = add_meta(bundle, end="2027-06-30")
    assert result.warnings == len(check_bundle(bundle).warnings)


def test_a_local_run_that_needs_the_images_packages_says_bundle_env_first(tmp_path, monkeypatch, capsys):
    """The trial's scoring program imports matplotlib, which the image carries and the
    user's Python lacks: bundle check says so, and add-meta's next `bundle run` takes
    `--setup`, which builds them (and, without sample_submissions/, --submissions DIR, said)."""
    from metascore.bundle.check import image_checks
    from metascore.cli import main

    monkeypatch.setenv("METASCORE_CACHE", str(tmp_path / "cache"))  # no environment built
    real = image_checks.importlib.util.find_spec
    monkeypatch.setattr(image_checks.importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    bundle = _copy(tmp_path)
    _edit(bundle, lambda d: d.update(competition_docker_image="codalab/codalab-legacy:py312"))
    evaluate = bundle / "scoring_program" / "evaluate.py"
    evaluate.write_text("import matplotlib  # noqa: F401\n" + evaluate.read_text())
    shutil.rmtree(bundle / "sample_submissions")
    assert main(["bundle", "add-meta", str(bundle), "--end", "2027-06-30"]) == 0
    out = capsys.readouterr().out
    assert (f"\n      metascore bundle run {bundle} --setup --submissions DIR --out runs/   (--setup, once: "
            "the image's packages, which this Python lacks)\n        DIR holds one zip or folder per "
            "submission") in out
    (note,) = [n for n in check_bundle(bundle).notes if "bundle env" in n]
    assert note.startswith("a local `metascore bundle run` needs `metascore bundle env` first") and \
        "lacks matplotlib, which codalab/codalab-legacy:py312 carries" in note
