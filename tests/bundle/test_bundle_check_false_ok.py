"""`bundle check` does not say OK on a bundle that cannot work (issue 24, section 2).

One fixture per false OK seen on real bundles, each written by its test: the check fails
(error) or warns, naming the file and the key, and the corrected bundle passes.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest
import yaml

from metascore.bundle.check.full import check_bundle
from metascore.cli import main
from repo_paths import ROOT, TESTS

TEMPLATE = ROOT / "bundle_template"
CONFIG = "final_ranking/reference_data/metascore.yaml"
LOGO = TESTS / "data" / "bundles" / "v2_results" / "logo.png"


def write(root: Path, files: dict[str, str | dict[str, str]]) -> Path:
    """Write ``files`` under ``root``: a text, or a ``{member: text}`` dict for a zip."""
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, dict):
            with zipfile.ZipFile(path, "w") as zf:
                for member, text in content.items():
                    zf.writestr(member, text)
        else:
            path.write_text(content)
    if not (root / "logo.png").exists():
        shutil.copy(LOGO, root / "logo.png")
    return root


def v2_bundle(root: Path, *, ingestion: dict[str, str], scoring: dict[str, str] | None = None,
              extra: dict | None = None, columns: str = "") -> Path:
    """A one-task v2 code-submission bundle with an ingestion program (folders)."""
    scoring = scoring or {
        "metadata.yaml": "command: python3 score.py\n",
        "score.py": "import json\njson.dump({'accuracy': 1.0}, open('/app/output/scores.json', 'w'))\n"
                    "open('/app/input/res/predictions.txt')\n",
    }
    files = {
        "competition.yaml": (
            "version: 2\ntitle: T\nimage: logo.png\nterms: terms.md\n"
            "pages: [{title: Terms, file: terms.md}]\ndocker_image: codalab/codalab-legacy:py312\n"
            "tasks:\n  - {index: 0, name: t, input_data: input_data/, reference_data: reference_data/,"
            " ingestion_program: ingestion_program/, scoring_program: scoring_program/}\n"
            "phases:\n  - {index: 0, name: Dev, start: 2026-01-01, tasks: [0]}\n"
            "leaderboards:\n  - title: Results\n    key: main\n    submission_rule: Force_Last\n"
            "    columns:\n      - {title: Accuracy, key: accuracy, index: 0, sorting: desc}\n" + columns),
        "terms.md": "Terms.\n",
        "input_data/train.csv": "x\n1\n",
        "reference_data/truth.csv": "y\n1\n",
        **{f"ingestion_program/{k}": v for k, v in ingestion.items()},
        **{f"scoring_program/{k}": v for k, v in scoring.items()},
        **(extra or {}),
    }
    return write(root, files)


INGEST = ("import sys\nsubmission = sys.argv[1]\nsys.path.append(submission)\n"
          "open('/app/input_data/train.csv')\nopen('/app/output/predictions.txt', 'w').write('1')\n")


# ------------------------------------------------------------- a command names a missing file
def v1_four_tasks(root: Path, script: str) -> Path:
    """A v1 result-submission bundle: four phases, each with its scoring program zip whose
    command runs ``script`` (the folder holds evaluation_en_task_a.py)."""
    phases, programs = {}, {}
    for n, task in enumerate("abcd", 1):
        programs[f"scoring_{task}.zip"] = {
            "metadata": f"command: python $program/{script} $input $output\n",
            "evaluation_en_task_a.py": "print('score')\n",
        }
        phases[n] = {"phasenumber": n, "label": f"Task {task.upper()}", "start_date": f"2026-0{n}-01",
                     "scoring_program": f"scoring_{task}.zip", "reference_data": "reference.zip"}
    data = {"title": "Four tasks", "image": "logo.png", "html": {"overview": "o.html", "terms": "t.html"},
            "phases": phases,
            "leaderboard": {"leaderboards": {"Results": {"label": "Results", "rank": 1}},
                            "columns": {"score": {"leaderboard": {"label": "Results"}, "label": "Score"}}}}
    return write(root, {"competition.yaml": yaml.safe_dump(data), "o.html": "o", "t.html": "t",
                        "reference.zip": {"truth.txt": "1\n"}, **programs})


def test_v1_commands_naming_a_missing_file_are_errors_with_the_closest_name(tmp_path, capsys):
    root = v1_four_tasks(tmp_path / "wrong", "evaluation_task_en_a.py")
    errors = check_bundle(root).errors
    assert len(errors) == 4
    for n, (task, error) in enumerate(zip("ABCD", errors), 1):
        # the place in competition.yaml is the v1 phase, not its task's name (issue 41, item 14)
        assert error == (
            f"competition.yaml: phases.{n}.scoring_program (metadata): command "
            "'python $program/evaluation_task_en_a.py $input $output' runs "
            f"'$program/evaluation_task_en_a.py', but scoring_{task.lower()}.zip has no "
            "evaluation_task_en_a.py (did you mean 'evaluation_en_task_a.py'?).")
    assert main(["bundle", "check", str(root)]) == 1
    assert "4 error(s)" in capsys.readouterr().out
    assert check_bundle(v1_four_tasks(tmp_path / "right", "evaluation_en_task_a.py")).errors == []


def test_relative_script_in_a_folder_program_and_commands_found_on_the_path(tmp_path):
    root = v2_bundle(tmp_path / "b", ingestion={"metadata.yaml": "command: python3 -u ingestion.py $submission_program\n",
                                                "ingest.py": INGEST})
    assert check_bundle(root).errors == [
        "competition.yaml: tasks[index=0].ingestion_program (metadata.yaml): command 'python3 -u "
        "ingestion.py $submission_program' runs 'ingestion.py', but ingestion_program has no "
        "ingestion.py (did you mean 'ingest.py'?)."]
    for command in ("python3 -u ingest.py $submission_program", "bash -c \"python3 ingest.py $submission_program\"",
                    "python3 -m ingest $submission_program", "Rscript -e 'q()' /app/ingested_program"):
        (root / "ingestion_program" / "metadata.yaml").write_text(f"command: {command}\n")
        assert check_bundle(root).errors == [], command


# ------------------------------------------------------------------ placeholders per step
def test_ingestion_that_never_gets_the_submission_warns(tmp_path):
    quiet = INGEST.replace("sys.argv[1]", "'/tmp'")
    root = v2_bundle(tmp_path / "b", ingestion={"metadata.yaml": "command: python3 ingest.py /app/input_data\n",
                                                "ingest.py": quiet})
    report = check_bundle(root)
    assert report.errors == []
    assert report.warnings == [
        "competition.yaml: tasks[index=0].ingestion_program (metadata.yaml): the command passes no "
        "'$submission_program' and no file of the ingestion program names /app/ingested_program, "
        "where the worker mounts the submission: in a code-submission competition the ingestion "
        "program cannot find the submission's code. Pass $submission_program (or read "
        "/app/ingested_program)."]
    # the hard-coded path in the program's own source is fine (Codabench's own examples do it)
    (root / "ingestion_program" / "ingest.py").write_text(quiet.replace("'/tmp'", "'/app/ingested_program'"))
    assert check_bundle(root).warnings == []
    # and so is the placeholder in the command
    (root / "ingestion_program" / "ingest.py").write_text(INGEST)
    (root / "ingestion_program" / "metadata.yaml").write_text("command: python3 ingest.py $submission_program\n")
    assert check_bundle(root).warnings == []


def test_ingested_program_placeholder_suggests_submission_program(tmp_path):
    root = v2_bundle(tmp_path / "b", ingestion={"metadata.yaml": "command: python3 ingest.py $ingested_program\n",
                                                "ingest.py": INGEST})
    assert check_bundle(root).warnings == [
        "competition.yaml: tasks[index=0].ingestion_program (metadata.yaml): '$ingested_program' is "
        "not a placeholder the worker replaces, and there is no shell to expand it: the program gets "
        "the text '$ingested_program' (did you mean '$submission_program'?)."]


def test_placeholders_that_name_folders_absent_from_the_step_warn(tmp_path):
    root = v2_bundle(tmp_path / "b", ingestion={
        "metadata.yaml": "command: python3 ingest.py $submission_program $hidden $input_data\n",
        "ingest.py": INGEST})
    warnings = [w.split(": ", 2)[2] for w in check_bundle(root).warnings]
    assert warnings == [
        "'$hidden' becomes /app/input/ref, which the worker does not mount for the ingestion program "
        "(prediction step) (only the scoring step has /app/input (ref/ and res/)).",
        "'$input_data' is not a placeholder: the worker replaces its beginning and passes "
        "'/app/input_data_data' (did you mean '$input'?)."]
    # with ingestion_only_during_scoring, $program is /app/ingestion_program, never mounted
    comp = root / "competition.yaml"
    comp.write_text(comp.read_text().replace("scoring_program: scoring_program/}",
                                             "scoring_program: scoring_program/, ingestion_only_during_scoring: true}"))
    (root / "ingestion_program" / "metadata.yaml").write_text("command: python3 $program/ingest.py $submission_program\n")
    report = check_bundle(root)
    assert report.errors == []
    assert [w.split(": ", 2)[2] for w in report.warnings] == [
        "'$program' becomes /app/ingestion_program, which the worker does not mount for the ingestion "
        "program (scoring step, ingestion_only_during_scoring) (the worker never mounts it; this "
        "program is /app/program)."]


def test_scoring_command_passing_program_as_the_predictions_warns(tmp_path):
    scoring = {"metadata.yaml": "command: python3 score.py $program $hidden $output\n",
               "score.py": "import sys, json\npred, ref, out = sys.argv[1:4]\n"
                           "json.dump({'accuracy': 1}, open(out + '/scores.json', 'w'))\n"}
    root = v2_bundle(tmp_path / "b", ingestion={"metadata.yaml": "command: python3 ingest.py $submission_program\n",
                                                "ingest.py": INGEST}, scoring=scoring)
    assert check_bundle(root).warnings == [
        "competition.yaml: tasks[index=0].scoring_program (metadata.yaml): the command passes "
        "'$program' (/app/program: the scoring program's own folder in the scoring step) and nothing "
        "under /app/input/res; if it is meant as the predictions, pass '$predictions' "
        "(/app/input/res) or '$input' (/app/input, holding res/ and ref/); the reference data is "
        "'$hidden' (/app/input/ref)."]
    (root / "scoring_program" / "metadata.yaml").write_text("command: python3 score.py $predictions $hidden $output\n")
    assert check_bundle(root).warnings == []


# ------------------------------------------------------------- data under one extra folder
def test_data_zip_under_one_extra_folder_warns(tmp_path):
    root = v2_bundle(tmp_path / "b", ingestion={"metadata.yaml": "command: python3 ingest.py $submission_program\n",
                                                "ingest.py": INGEST},
                     extra={"input_data.zip": {"input_data/train.csv": "x\n1\n"}})
    shutil.rmtree(root / "input_data")
    comp = root / "competition.yaml"
    comp.write_text(comp.read_text().replace("input_data: input_data/", "input_data: input_data.zip"))
    report = check_bundle(root)
    assert report.errors == []
    assert report.warnings == [
        "competition.yaml: tasks[index=0].input_data: input_data.zip holds everything under one "
        "folder, input_data/, and Codabench does not flatten it: the programs get "
        "/app/input_data/input_data/... where they read /app/input_data/..., and no program file "
        "names 'input_data'. Put the folder's contents at the zip root."]
    write(root, {"input_data.zip": {"train.csv": "x\n1\n"}})
    assert check_bundle(root).warnings == []
    # a program that reads the folder by name is not warned about
    write(root, {"input_data.zip": {"input_data/train.csv": "x\n1\n"},
                 "ingestion_program/ingest.py": INGEST.replace("/app/input_data/train.csv",
                                                               "/app/input_data/input_data/train.csv")})
    assert check_bundle(root).warnings == []


# --------------------------------------------------------------------- the meta phase's image
@pytest.fixture
def template(tmp_path):
    root = tmp_path / "t"
    shutil.copytree(TEMPLATE, root)
    return root


def edit_yaml(path: Path, change) -> None:
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_meta_phase_in_the_default_image_is_an_error_with_the_image_python(template):
    """With --meta-python image the image's python3 runs the program (the tests' default:
    conftest); the program's own Python (bundled, the organizers' default) runs anywhere."""
    edit_yaml(template / "competition.yaml", lambda d: d.pop("docker_image"))
    report = check_bundle(template)
    assert report.errors == [
        "competition.yaml: docker_image: codalab/codalab-legacy:py37 (Codabench's default: "
        "competition.yaml sets no docker_image) runs Python 3.7, but meta phase 'Final ranking' runs "
        "metascore's meta-scoring program with the image's python3, and it needs Python >= 3.10 and "
        "a recent numpy (>= 1.23): it would fail there. Let the program carry its own Python "
        "(`metascore bundle zip` without --meta-python image), or set docker_image: "
        "codalab/codalab-legacy:py312 (the image is competition-wide: every phase's programs "
        "would run in it)."]
    assert check_bundle(template, meta_python="bundled").errors == []
    edit_yaml(template / "competition.yaml", lambda d: d.update(docker_image="codalab/codalab-legacy:py39"))
    assert ["runs Python 3.9" in e for e in check_bundle(template).errors] == [True]
    edit_yaml(template / "competition.yaml", lambda d: d.update(docker_image="codalab/codalab-legacy:py312"))
    assert check_bundle(template).errors == []


def test_a_module_the_image_lacks_warns_with_the_module_and_the_image(template):
    score = template / "scoring_program" / "score.py"
    score.write_text("import lightgbm\nfrom catboost import CatBoost\ntry:\n    import xgboost\n"
                     "except ImportError:\n    xgboost = None\nimport imp\n" + score.read_text())
    warnings = [w for w in check_bundle(template).warnings if "does not carry" in w]
    assert [w.split("import(s) ")[1].split(",")[0] for w in warnings] == ["'catboost'", "'imp'", "'lightgbm'"]
    assert warnings[2] == (
        "competition.yaml: docker_image: scoring_program/score.py import(s) 'lightgbm', which "
        "codalab/codalab-legacy:py312 does not carry: the program fails there with "
        "ModuleNotFoundError. Use an image that has it (e.g. one built FROM "
        "codalab/codalab-legacy:py312 with `pip install lightgbm`) and set docker_image to it.")
    # with no image, the error names py312, and the warnings check the programs against it
    edit_yaml(template / "competition.yaml", lambda d: d.pop("docker_image"))
    report = check_bundle(template)
    assert len(report.errors) == 1 and "or set docker_image: codalab/codalab-legacy:py312" in report.errors[0]
    assert any("'lightgbm', which codalab/codalab-legacy:py312 (the image meta phase 'Final ranking' "
               "needs) does not carry" in w for w in report.warnings)


def test_a_program_the_images_python_cannot_compile_warns_with_file_line_and_image(tmp_path, template):
    """CodaLab's Compute_pi example: a v1 bundle of Python 2 programs, in Codabench's default
    image (Python 3.7): every run fails with SyntaxError; the check says so before a run."""
    bundle = v1_four_tasks(tmp_path / "v1", "evaluation_en_task_a.py")
    with zipfile.ZipFile(bundle / "scoring_a.zip", "a") as z:
        z.writestr("evaluate_py2.py", "import sys\nprint 'score', sys.argv\n")
    warnings = [w for w in check_bundle(bundle).warnings if "SyntaxError" in w]
    assert warnings == [
        "competition.yaml: competition_docker_image: scoring_a.zip/evaluate_py2.py, line 2, is not "
        "Python 3.7 (Missing parentheses in call to 'print'. Did you mean print(...)?, Python 2 code), "
        "the Python of codalab/codalab-legacy:py37 (Codabench's default: competition.yaml sets no "
        "competition_docker_image): every run of it fails there with SyntaxError. Port it to "
        "Python 3, or set competition_docker_image to an image whose Python runs it."]
    # syntax newer than the image's Python is named too; an unknown image is not judged
    score = template / "scoring_program" / "score.py"
    score.write_text("if (n := 1):\n    pass\n" + score.read_text())
    edit_yaml(template / "competition.yaml", lambda d: d.update(docker_image="codalab/codalab-legacy:py37"))
    assert [w.split(", is not ")[1][:11] for w in check_bundle(template, meta_python="bundled").warnings
            if "SyntaxError" in w] == ["Python 3.7 "]
    edit_yaml(template / "competition.yaml", lambda d: d.update(docker_image="codalab/codalab-legacy:py312"))
    assert not [w for w in check_bundle(template).warnings if "SyntaxError" in w]
    edit_yaml(template / "competition.yaml", lambda d: d.update(docker_image="someone/own-image:2"))
    assert not [w for w in check_bundle(template).warnings if "SyntaxError" in w]


# ------------------------------------------------------- v1 force_submission_to_leaderboard
def test_v1_force_submission_to_leaderboard_is_ignored_by_codabench(tmp_path):
    root = v1_four_tasks(tmp_path / "b", "evaluation_en_task_a.py")
    edit_yaml(root / "competition.yaml", lambda d: d.update(force_submission_to_leaderboard=True))
    report = check_bundle(root)
    assert report.errors == []
    assert report.warnings == [
        "competition.yaml: force_submission_to_leaderboard: Codabench's v1 import ignores it: the "
        "leaderboard's submission rule stays Add, so no submission reaches the leaderboard, the "
        "results export or a meta phase until its participant clicks 'add to leaderboard'. Fix: a "
        "v1 competition.yaml cannot set the rule (Codabench's v1 import makes it Add): `metascore "
        "bundle add-meta BUNDLE --submission-rule Force_Last` writes the file in the v2 form, which can, "
        "or after the upload choose the submission rule 'Force Last' in the Leaderboard tab of "
        "Codabench's competition editor."]
    assert report.competition.leaderboard.submission_rule == "Add"


# ------------------------------------------------------------------------ metascore.yaml
def test_filter_outputs_without_a_final_phase_warn(template):
    edit_yaml(template / CONFIG, lambda c: (c["phases"].update(final=None), c["filter"].update(rule="none"),
                                            c.pop("baselines")))
    warnings = [w for w in check_bundle(template).warnings if "`phases.final` is null" in w]
    assert warnings == [
        f"{CONFIG}: `output.scores` key 'n_qualified' (n_qualified): `phases.final` is null and "
        "n_qualified is the filter's, and the filter rule is 'none', so it is undefined: scores.json "
        "omits it and its leaderboard column stays empty. Remove the key, or name the final phase "
        "in `phases.final`."]


def test_filter_outputs_of_a_one_phase_filter_are_defined(template):
    """With one phase the filter applies within it (a baseline is there): n_qualified has a value."""
    edit_yaml(template / CONFIG, lambda c: c["phases"].update(final=None))
    assert not [w for w in check_bundle(template).warnings if "`phases.final` is null" in w]


def test_judge_without_direction_on_an_ascending_column(template):
    edit_yaml(template / CONFIG, lambda c: c["judges"][1].pop("direction"))
    assert check_bundle(template).errors == [
        f"{CONFIG}: judges[1] ('datasets/housing_mae'): no direction given, so the default, higher is "
        "better, applies wherever the input does not carry the columns' sorting (a Codabench results "
        "export does not), but leaderboard column 'housing_mae' has sorting: asc; add direction: "
        "lower to this judge."]
    edit_yaml(template / CONFIG, lambda c: c["judges"][1].update(direction="lower"))
    assert check_bundle(template).errors == []


# ------------------------------------------------------- keys written by the ingestion program
def test_keys_written_by_the_ingestion_program_are_not_unwritten(tmp_path):
    columns = "      - {title: Train time, key: train_time, index: 1, sorting: asc}\n"
    ingest = INGEST + "import json\njson.dump({'train_time': 1.5}, open('/app/output/times.json', 'w'))\n"
    root = v2_bundle(tmp_path / "b", columns=columns, ingestion={
        "metadata.yaml": "command: python3 ingest.py $submission_program\n", "ingest.py": ingest})
    scoring = root / "scoring_program" / "score.py"
    scoring.write_text("import json\nscores = {'accuracy': 1.0, **json.load(open('/app/input/res/times.json'))}\n"
                       "json.dump(scores, open('/app/output/scores.json', 'w'))\n")
    assert check_bundle(root).warnings == []
    (root / "ingestion_program" / "ingest.py").write_text(INGEST)
    assert check_bundle(root).warnings == [
        "competition.yaml: leaderboard column 'train_time': no file of any task's scoring program, "
        "ingestion program or reference data mentions this key; the column stays empty unless a "
        "program writes it (keys built at run time are not detected)."]
