"""Issue 50, second trial: Codabench's public example ``codabench/iris``, from a clone to the
final ranking; each guess it needed and each misleading output, one test or more.

The fixture ``tests/data/bundles/iris_shape`` is built like that case (hand-written): the
bundle in ``bundle/``, its result and code sample submissions zipped beside it (the starting
kit's two folders, as the example repository ships them), an ingestion program that imports
``model`` from the submission (a result submission too, where it fails), a Final phase that
never ends, Codabench's default leaderboard rule ``Add`` and the py312 image. Every
submission predicts the same labels, so each ties the baseline.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from metascore.bundle.check.full import check_bundle
from metascore.bundle.meta.add import add_meta
from metascore.bundle.meta.choices import MetaChoices
from metascore.bundle.runner import format_report, run_bundle
from metascore.bundle.site.submissions import SUBMISSIONS_FOLDER
from metascore.cli import main
from metascore.errors import InputError
from repo_paths import ROOT, TESTS
from requirements import require_bwrap

CASE = TESTS / "data" / "bundles" / "iris_shape"
END = "2027-12-31"
PY312 = ("the meta-scoring program runs with the image's python3: codalab/codalab-legacy:py312 has "
         "Python 3.12 with numpy, scipy, pandas and pyyaml (--meta-python bundled ships its own "
         "Python instead).")
BESIDE = ("beside the bundle, sample_code_submission.zip, sample_result_submission.zip hold files of "
          "the starting kit's sample_code_submission, sample_result_submission only, which run as "
          "participant 'baseline' already")


@pytest.fixture(autouse=True)
def _no_environment(tmp_path, monkeypatch):
    """No environment of the image is built; the meta program's Python as the image decides."""
    monkeypatch.setenv("METASCORE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("METASCORE_META_PYTHON", "auto")


def _case(tmp: Path) -> Path:
    """A copy of the case (the bundle and the zips beside it); its bundle folder."""
    return Path(shutil.copytree(CASE, tmp / "iris")) / "bundle"


def _config(bundle: Path) -> dict:
    return yaml.safe_load((bundle / "final_ranking" / "reference_data" / "metascore.yaml").read_text())


def _subs(bundle: Path) -> Path:
    """What the trial did: the two sample zips copied flat into subs/."""
    subs = bundle.parent / "subs"
    subs.mkdir()
    for name in ("sample_code_submission.zip", "sample_result_submission.zip"):
        shutil.copy(bundle.parent / name, subs / name)
    return subs


@pytest.fixture(scope="module")
def trial(tmp_path_factory):
    """The trial's steps: add-meta with --end, then --submission-rule Force_Last, a run with
    the sample zips as submissions (an empty ranking), add-meta --filter none, a run again."""
    require_bwrap()
    tmp = tmp_path_factory.mktemp("iris")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("METASCORE_CACHE", str(tmp / "cache"))
        mp.setenv("METASCORE_META_PYTHON", "auto")
        bundle = _case(tmp)
        add_meta(bundle, end=END)
        ruled = add_meta(bundle, submission_rule="Force_Last")
        subs = _subs(bundle)
        first = run_bundle(bundle, tmp / "runs1", submissions=subs)
        unfiltered = add_meta(bundle, choices=MetaChoices(filter="none"))
        second = run_bundle(bundle, tmp / "runs2", submissions=subs)
    return bundle, ruled, first, unfiltered, second


# ---------------------------------------------------------------------- guess 1: which install
def test_already_have_a_bundle_says_how_to_install_from_a_clone():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Already have a bundle?", 1)[1].split("\n## ", 1)[0]
    assert "from a clone, `pip install .` at its root" in section


# ---------------------------------------------------------------------- guess 2: what goes in subs/
def test_a_run_without_participants_says_what_the_folder_holds_and_what_is_beside(tmp_path):
    bundle = _case(tmp_path)
    add_meta(bundle, end=END)
    with pytest.raises(InputError) as err:
        run_bundle(bundle, tmp_path / "runs")
    text = str(err.value)
    assert f"give --submissions DIR: {SUBMISSIONS_FOLDER}. B{BESIDE[1:]}: in DIR, as another " \
           "participant, they would only tie with it." in text
    assert "participant its name gives (alice__v2.zip: alice" in SUBMISSIONS_FOLDER
    assert "submissions.yaml" in SUBMISSIONS_FOLDER and "DIR/<phase name>/" in SUBMISSIONS_FOLDER


def test_add_meta_and_check_say_what_the_folder_holds(tmp_path, capsys):
    bundle = _case(tmp_path)
    assert main(["bundle", "add-meta", str(bundle), "--end", END]) == 0
    out = capsys.readouterr().out
    assert f"      metascore bundle run {bundle} --submissions DIR --out runs/\n        {SUBMISSIONS_FOLDER}; {BESIDE}" in out
    assert main(["bundle", "check", str(bundle)]) == 0
    out = capsys.readouterr().out
    assert ("note: a local `metascore bundle run` has no participant to rank: the bundle has no "
            f"sample_submissions/; give it (and this check) --submissions DIR: {SUBMISSIONS_FOLDER}; "
            f"{BESIDE}") in out


def test_the_next_steps_repeat_the_submissions_folder_given(tmp_path, capsys):
    bundle = _case(tmp_path)
    subs = _subs(bundle)
    assert main(["bundle", "add-meta", str(bundle), "--end", END, "--submissions", str(subs)]) == 0
    out = capsys.readouterr().out
    assert f"next: metascore bundle check {bundle} --submissions {subs}   (" in out
    assert f"      metascore bundle run {bundle} --submissions {subs} --out runs/\n" in out


def test_copies_of_the_kit_among_the_submissions_are_said_to_tie(trial):
    _, _, first, _, _ = trial
    said = [w for w in first.warnings if "holds files of the starting kit's" in w]
    assert len(said) == 2 and said[0].endswith(
        "sample_code_submission.zip holds files of the starting kit's sample_code_submission only, "
        "which runs as participant 'baseline': as participant 'sample_code_submission' it scores as "
        "the baseline does and ties with it (a baseline filter admits it nowhere).")


# ---------------------------------------------------------------------- guess 3: the Add rule
def test_the_add_rule_has_one_fix_the_same_command_in_add_meta_and_check(tmp_path, capsys):
    bundle = _case(tmp_path)
    assert main(["bundle", "add-meta", str(bundle), "--end", END]) == 0
    out = capsys.readouterr().out
    command = f"`metascore bundle add-meta {bundle} --submission-rule Force_Last`"
    (note,) = [line for line in out.splitlines() if line.startswith("note: leaderboard submission_rule Add")]
    assert f"Fix: {command}: each participant's last finished submission then goes there by itself" in note
    assert "--feed all" not in note and note.count("Force_Last") == 1
    assert main(["bundle", "check", str(bundle)]) == 0
    (warning,) = [line for line in capsys.readouterr().out.splitlines() if "submission_rule is Add" in line]
    assert f"Fix: {command} (it sets submission_rule: Force_Last on the leaderboard" in warning


# ---------------------------------------------------------------------- guesses 3 and 5: a second add-meta
def test_a_second_add_meta_needs_no_force_and_keeps_what_the_first_set(trial):
    bundle, ruled, _, unfiltered, _ = trial
    assert ruled.kind == "updated" and unfiltered.kind == "updated"
    assert ruled.notes[0] == (
        "kept as the bundle has them (a second add-meta changes only what its options name; repeat "
        "none): the last phase's end 2027-12-31 (--end); metascore.yaml's method average_rank, "
        "baselines baseline, filter beat_baseline, its judges and phases.")
    assert unfiltered.notes[0].startswith(
        "kept as the bundle has them (a second add-meta changes only what its options name; repeat "
        "none): the last phase's end 2027-12-31 (--end); submission_rule Force_Last; metascore.yaml's "
        "method average_rank, baselines baseline, its judges and phases.")
    text = (bundle / "competition.yaml").read_text()
    assert "submission_rule: Force_Last" in text and "end: 2027-12-31" in text
    assert _config(bundle)["filter"] == {"rule": "none"}


def test_the_readme_no_longer_says_a_second_run_is_refused_without_force():
    readme = (ROOT / "README.md").read_text()
    assert "one that would write otherwise is\nrefused unless `--force`" not in readme
    assert "A second run keeps what the bundle holds" in " ".join(readme.split())


# ---------------------------------------------------------------------- guess 4: the empty ranking
def test_an_empty_ranking_where_everyone_ties_the_baseline_says_so_with_the_one_way_out(trial):
    bundle, _, first, _, second = trial
    assert first.empty_ranking == (
        "the final ranking is empty: every final-phase candidate ties the baseline 'baseline' "
        "('baseline-2' in 'Development', development average rank 2), and the filter admits only "
        "those who beat it (a tie does not); no baseline filter nor top_k tells tied candidates "
        "apart; to rank them all: `metascore bundle add-meta BUNDLE --filter none` (metascore.yaml: "
        "`filter: {rule: none}`).")
    text = format_report(first)
    assert f"to rank them all: `metascore bundle add-meta {bundle} --filter none`" in text
    assert "--force" not in text and "top_k:1" not in text and "'baseline-6'" not in text
    assert second.empty_ranking is None and second.meta.scores["n_candidates"] == 2


# ---------------------------------------------------------------------- guess 6: FLAGGED
def test_a_result_submission_whose_ingestion_failed_is_scored_as_given(trial):
    """Codabench's worker copies a result submission (no metadata) to the prediction output
    and runs the ingestion program beside it without checking its exit code: the scores are
    the submission's own, not a scoring program's without predictions."""
    _, _, first, _, _ = trial
    results = [r for r in first.results if r.candidate.startswith("sample_result_submission")]
    assert len(results) == 4 and all(r.finished and not r.flagged for r in results)
    assert [r.scores["set1_score"] for r in results] == [pytest.approx(1 / 3)] * 4
    text = format_report(first)
    assert "FLAGGED" not in text and "prediction failed" not in text
    assert "bundle env" not in text and "requirements" not in text
    assert ("note   (4 runs) prediction step: a result submission (no metadata file, no code): its files "
            "are the predictions, scored as they are. Beside it, the ingestion program exited with "
            "code 1; last line of its stderr: ModuleNotFoundError: No module named 'model'. As on "
            "Codabench, whose worker too runs the ingestion program beside a result submission and "
            "checks no exit code of the prediction step (the error is in the submission's ingestion "
            "log there).\n") in text


def test_a_module_the_image_lacks_too_is_no_package_to_install(tmp_path):
    """A code submission without the model.py its ingestion program imports: py312 lacks
    `model` too, so no requirements file is proposed; a package py312 carries still is."""
    from metascore.bundle.worker.pyenv import missing_module_hint

    image = "codalab/codalab-legacy:py312"
    hint = missing_module_hint("ModuleNotFoundError: No module named 'model'", "/x/bin/python", image)
    assert hint == (
        "metascore: the program needs the Python module 'model', which neither /x/bin/python nor "
        "the image codalab/codalab-legacy:py312 has, so the import fails on Codabench too, unless "
        "a submission brings it (a code submission's model.py, which an ingestion program imports "
        "from /app/ingested_program); a package installed here would make this run differ from "
        "the site's.")
    assert "bundle env" in missing_module_hint("ModuleNotFoundError: No module named 'sklearn'", "/x/bin/python", image)


# ---------------------------------------------------------------------- the meta program's Python
def test_add_meta_and_check_say_the_same_of_the_meta_programs_python(tmp_path, capsys):
    bundle = _case(tmp_path)
    result = add_meta(bundle, end=END)
    (note,) = [n for n in result.notes if n.startswith("docker_image left as it is")]
    assert note.endswith(PY312) and "carries its own Python" not in note
    assert main(["bundle", "check", str(bundle)]) == 0
    assert f"note: {PY312}\n" in capsys.readouterr().out


# ---------------------------------------------------------------------- the ranking page
def test_the_ranking_page_under_filter_none_says_the_baseline_is_shown_unranked(trial):
    bundle, *_ = trial
    page = (bundle / "pages" / "final_ranking.md").read_text()
    assert "no baseline to beat" not in page
    assert ("- Every participant is ranked; the baseline ('baseline') is shown for reference, without "
            "a position (no filter: nobody needs to beat it).") in page
