"""Issue 31, items 1-7: what participants see of the meta phase on the site, and CodaLab v1
bundles as CodaLab repositories keep them.

- Items 1, 2, 4: ``add-meta`` opens the ranking (``enable_detailed_results: true``), keeps the
  meta submission's files, the results export, for the organizers (``hide_output: true`` on
  the Final ranking phase), and says when registrations wait for approval; ``bundle check``
  asks for each (the real site's answers are in tests/real_site/test_real_site_issue31.py).
- Item 3: a "Final ranking" page written from metascore.yaml; the run summary says why the
  meta program left a column out.
- Items 5-7: a v1 computed column (``< Rank >``) is no judge; a yaml naming ``X.zip`` where the
  repository keeps the folder ``X/``; ``--submission-rule`` on a v1 bundle writes the v2 form.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import zipfile
from pathlib import Path

import pytest
import yaml

from metascore.bundle.meta.add import add_meta
from metascore.bundle.meta.choices import MetaChoices
from metascore.bundle.archive import safe_extract
from metascore.bundle.bundle_zip import build_bundle_zip
from metascore.bundle.check.full import check_bundle
from metascore.bundle.runner import run_bundle
from metascore.bundle.schema.load import load_competition
from metascore.cli import main
from metascore.config import load_config
from metascore.errors import ConfigError
from repo_paths import ROOT, TESTS

DATA = TESTS / "data" / "bundles"


@pytest.fixture(autouse=True)
def _organizers_meta_python(monkeypatch):
    """As an organizer runs add-meta: --meta-python's default, auto (a local run then uses
    this machine's Python; no test here zips a bundle that would need the bundled one)."""
    monkeypatch.setenv("METASCORE_META_PYTHON", "auto")
TEMPLATE = ROOT / "bundle_template"
V2, V1, V1_COMPUTED = DATA / "add_meta_v2", DATA / "add_meta_v1", DATA / "v1_computed"


def _copy(src: Path, tmp_path: Path, name: str = "bundle") -> Path:
    return Path(shutil.copytree(src, tmp_path / name))


def _yaml(bundle: Path) -> dict:
    return yaml.safe_load((bundle / "competition.yaml").read_text())


def _meta_phase(data: dict) -> dict:
    phases = data["phases"]
    return next(p for p in (phases.values() if isinstance(phases, dict) else phases)
                if p.get("name", p.get("label")) == "Final ranking")


# ---------------------------------------------------------------------- items 1, 2, 4
@pytest.mark.parametrize("src, end", [(V2, "2026-12-31"), (V1, "2026-08-31")])
def test_add_meta_opens_the_ranking_and_keeps_the_export_for_the_organizers(tmp_path, src, end):
    bundle = _copy(src, tmp_path)
    before = " ".join(check_bundle(bundle).warnings)
    assert "enable_detailed_results" not in before  # no meta phase yet: nothing to say
    result = add_meta(bundle, end=end)
    data = _yaml(bundle)
    assert data["enable_detailed_results"] is True
    assert _meta_phase(data)["hide_output"] is True
    assert any("+ enable_detailed_results: true" in c for c in result.changes)
    assert any("detailed results your own scoring programs write" in n for n in result.notes)
    report = check_bundle(bundle)
    said = " ".join(report.warnings)
    assert "enable_detailed_results" not in said and "hide_output" not in said, said


def test_check_asks_for_each_when_the_meta_phase_lacks_them(tmp_path):
    bundle = _copy(TEMPLATE, tmp_path)
    text = (bundle / "competition.yaml").read_text()
    text = text.replace("enable_detailed_results: True", "enable_detailed_results: False")
    text = text.replace("    hide_output: true\n", "")
    (bundle / "competition.yaml").write_text(text)
    warnings = check_bundle(bundle).warnings
    (detail,) = [w for w in warnings if "enable_detailed_results is not true" in w]
    assert "'Detailed results are disabled for this competition!'" in detail
    assert "'Final ranking'" in detail
    (hidden,) = [w for w in warnings if "hide_output" in w]
    assert "anyone, even logged out, can download the meta submission's files" in hidden
    # add-meta on a bundle that says false: the value is replaced, not a second key added
    data = yaml.safe_load(text)
    data["phases"] = data["phases"][:2]
    data["tasks"] = data["tasks"][:2]
    data["leaderboards"][0]["columns"] = data["leaderboards"][0]["columns"][:3]
    data["pages"] = [p for p in data["pages"] if p["title"] != "Final ranking"]  # the meta phase's
    (bundle / "competition.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    (bundle / "pages" / "final_ranking.md").unlink()
    shutil.rmtree(bundle / "final_ranking")
    shutil.rmtree(bundle / "meta_scoring_program")
    result = add_meta(bundle)
    assert "~ enable_detailed_results: false -> true" in result.changes
    assert _yaml(bundle)["enable_detailed_results"] is True
    assert (bundle / "competition.yaml").read_text().count("enable_detailed_results") == 1


def test_registrations_that_wait_for_approval_are_said(tmp_path, capsys):
    v2 = _copy(V2, tmp_path, "v2")  # no registration_auto_approve: Codabench's default, false
    result = add_meta(v2, end="2026-12-31")
    (note,) = [n for n in result.notes if "registrations wait" in n]
    assert "refuses their submissions (403)" in note and "registration_auto_approve: true" in note
    assert main(["bundle", "check", str(v2)]) == 0
    assert "note: competition.yaml: registrations wait for an organizer's approval" in capsys.readouterr().out
    # the template approves at once; a v1 bundle says it with has_registration: false
    assert not [n for n in check_bundle(TEMPLATE).notes if "registrations wait" in n]
    v1 = _copy(V1, tmp_path, "v1")
    text = (v1 / "competition.yaml").read_text()
    assert "has_registration: False" in text
    assert not [n for n in check_bundle(v1).notes if "registrations wait" in n]
    (v1 / "competition.yaml").write_text(text.replace("has_registration: False", "has_registration: True"))
    (note,) = [n for n in check_bundle(v1).notes if "registrations wait" in n]
    assert "has_registration: false" in note


# ---------------------------------------------------------------------- item 3
def test_the_final_ranking_page_says_how_the_ranking_is_computed(tmp_path):
    bundle = _copy(V2, tmp_path)
    add_meta(bundle, end="2026-12-31")
    data = _yaml(bundle)
    (page,) = [p for p in data["pages"] if p["title"] == "Final ranking"]
    assert page["file"] == "pages/final_ranking.md"  # beside the bundle's own pages
    text = (bundle / page["file"]).read_text()
    config = load_config(bundle / "final_ranking" / "reference_data" / "metascore.yaml")
    assert config.ranking.method in text and "**that row is not a participant's result**" in text
    assert "the row's eye icon opens the same ranking" in text
    for judge in config.judges:
        assert f"| {judge.task} ({judge.phase}) | {judge.title} | "
        f"{'higher' if judge.higher_is_better else 'lower'} | 1 |" in text
    assert "Only those who beat every baseline ('organizer') in phase **Development**" in text
    assert "a tie does not qualify" in text and "share a position" in text
    assert "| Qualified candidates | Number of final-phase candidates that passed the filter; 0: nobody" in text
    meta = _meta_phase(data)
    assert "Detailed Results" in meta["description"] and "'Final ranking' page" in meta["description"]
    # a second run changes nothing; --force writes the page entry once
    again = add_meta(bundle, end=None)
    assert not again.changed
    add_meta(bundle, force=True, choices=__import__("metascore.bundle.meta.choices",
                                                    fromlist=["MetaChoices"]).MetaChoices(method="copeland"))
    data = _yaml(bundle)
    assert [p["title"] for p in data["pages"]].count("Final ranking") == 1
    assert "(`copeland`)" in (bundle / "pages" / "final_ranking.md").read_text()


def test_a_v1_bundle_gets_its_page_in_html(tmp_path):
    bundle = _copy(V1, tmp_path)
    add_meta(bundle, end="2026-08-31")
    html = _yaml(bundle)["html"]
    assert html["Final ranking"] == "final_ranking.md"  # beside overview.html
    assert (bundle / "final_ranking.md").read_text().startswith("# Final ranking\n")
    assert not add_meta(bundle).changed


def test_the_run_summary_says_why_the_meta_program_left_a_column_out(tmp_path):
    bundle = _copy(V1_COMPUTED, tmp_path)  # one participant: no winner score
    add_meta(bundle, end="2027-06-30")
    report = run_bundle(bundle, tmp_path / "out", feed="all")  # Add: nothing is on the leaderboard
    (said,) = [w for w in report.warnings if "'winner_score'" in w]
    assert "the meta-scoring program left it out (statistic 'winner_score' is undefined (fewer than " \
           "two candidates were ranked))" in said
    assert "no finished scoring run wrote" not in said


# ---------------------------------------------------------------------- item 5
def test_a_v1_computed_column_is_no_judge_and_check_refuses_it_as_one(tmp_path):
    bundle = _copy(V1_COMPUTED, tmp_path)
    result = add_meta(bundle, end="2027-06-30")
    metrics = [j["metric"] for j in yaml.safe_load(
        (bundle / "final_ranking" / "reference_data" / "metascore.yaml").read_text())["judges"]]
    assert metrics == ["set1_score", "set2_score"]
    assert any("not judges: computed column(s) ave_score" in n for n in result.notes)
    config = bundle / "final_ranking" / "reference_data" / "metascore.yaml"
    config.write_text(config.read_text().replace(
        "judges:\n", "judges:\n  - {task: Development Task, metric: ave_score, title: < Rank >, direction: lower}\n"))
    (error,) = [e for e in check_bundle(bundle).errors if "ave_score" in e]
    assert "a CodaLab v1 computed column (Avg of other columns)" in error


def test_a_judge_without_scores_is_not_sent_to_a_sibling_metric(tmp_path):
    from metascore.config import JudgeConfig
    from metascore.leaderboard.pivot import closest_judge

    found = [("Final Task/bac_selection", "Final Task", "bac_selection"), ("Final Task/auc", "Final Task", "auc")]
    assert closest_judge(JudgeConfig(task="Final Task", metric="ave_score"), found) == ""
    assert closest_judge(JudgeConfig(task="Final Task", metric="AUC"), found) == " (did you mean 'Final Task/auc'?)"
    # a task with no score: the closest key, whatever its task
    assert closest_judge(JudgeConfig(task="Final Tsk", metric="auc"), found) == " (did you mean 'Final Task/auc'?)"


# ---------------------------------------------------------------------- item 6
def _repository_layout(tmp_path: Path) -> Path:
    """A v1 bundle as a CodaLab repository keeps it: the yaml names zips, the folders are there."""
    bundle = _copy(V1_COMPUTED, tmp_path, "repo")
    text = (bundle / "competition.yaml").read_text()
    text = text.replace("scoring_program: scoring_program/", "scoring_program: scoring_program.zip")
    text = text.replace("reference_data: reference_data/", "reference_data: reference_data.zip")
    (bundle / "competition.yaml").write_text(text)
    return bundle


def test_a_repository_keeps_folders_for_the_zips_its_yaml_names(tmp_path):
    bundle = _repository_layout(tmp_path)
    report = check_bundle(bundle)
    assert not report.errors, report.errors
    assert any("'scoring_program.zip' is the folder 'scoring_program/' here" in n for n in report.notes)
    add_meta(bundle, end="2027-06-30")
    out = run_bundle(bundle, tmp_path / "out", feed="all")
    assert [r.status for r in out.results] == ["Finished", "Finished"], out.results
    zipped = build_bundle_zip(bundle, tmp_path / "bundle.zip")
    with zipfile.ZipFile(zipped) as z:
        names = z.namelist()
        assert "scoring_program.zip" in names and "reference_data.zip" in names
        with zipfile.ZipFile(z.open("scoring_program.zip")) as program:
            assert "metadata" in program.namelist()  # files at the zip's root
    unpacked = tmp_path / "unpacked"
    safe_extract(zipped, unpacked)
    assert not check_bundle(unpacked, meta_program_available=False).errors


def test_a_zip_to_upload_with_the_folder_only_is_refused(tmp_path):
    bundle = _repository_layout(tmp_path)
    report = check_bundle(bundle, meta_program_available=False)
    (error,) = [e for e in report.errors if "scoring_program.zip" in e]
    assert "only the folder 'scoring_program/'" in error and "metascore bundle zip" in error


# ---------------------------------------------------------------------- item 7
def test_submission_rule_on_a_v1_bundle_writes_the_v2_form(tmp_path):
    bundle = _copy(V1, tmp_path)
    v1 = load_competition(bundle)
    original = (bundle / "competition.yaml").read_text()
    result = add_meta(bundle, end="2026-08-31", submission_rule="Force_Last")
    assert "written in the v2 form" in result.changes[0]
    assert (bundle / "competition.v1.yaml").read_text() == original
    v2 = load_competition(bundle)
    assert v2.version == 2 and v2.leaderboard.submission_rule == "Force_Last"
    # the same competition as Codabench's v1 import makes it, plus the meta phase
    kept = [p for p in v2.phases if p.name != "Final ranking"]
    assert [(p.name, p.start, p.auto_migrate, p.execution_time_limit) for p in kept] == [
        (p.name, p.start, p.auto_migrate, p.execution_time_limit) for p in v1.phases]
    # a v1 phase ends the day before the next one starts (Codabench's v1 import)
    assert [p.end for p in kept[:-1]] == [p.start - dt.timedelta(days=1) for p in v1.phases[1:]]
    assert [v2.tasks[i] for p in kept for i in p.tasks] == [v1.tasks[i] for p in v1.phases for i in p.tasks]
    assert [c for c in v2.leaderboard.columns if c.key in v1.leaderboard.keys] == list(v1.leaderboard.columns)
    assert v2.registration_auto_approve == v1.registration_auto_approve
    assert v2.docker_image == "codalab/codalab-legacy:py312" or v2.docker_image == v1.docker_image
    report = check_bundle(bundle)
    assert not report.errors and not [w for w in report.warnings if "submission_rule" in w], report.warnings
    assert not add_meta(bundle, submission_rule="Force_Last").changed
    out = run_bundle(bundle, tmp_path / "out")
    summary = json.loads((Path(out.out) / "run_summary.json").read_text())
    exported = {e["phase"] for e in summary["export"] if e["exported"]}
    assert exported == {"Warm-up", "Development", "Final"}  # Force_Last: exported without a click


def test_a_v1_bundle_under_add_is_told_how_to_set_the_rule(tmp_path):
    bundle = _copy(V1, tmp_path)
    result = add_meta(bundle, end="2026-08-31")
    (note,) = [n for n in result.notes if n.startswith("leaderboard submission_rule Add")]
    assert "a v1 competition.yaml is then written in the v2 form" in note
    assert "Leaderboard tab of Codabench's competition editor" in note
    (trap,) = [w for w in check_bundle(bundle).warnings if "submission_rule is Add" in w]
    assert "`metascore bundle add-meta BUNDLE --submission-rule Force_Last` writes the file in the v2 form" in trap
    assert "set submission_rule: Force_Last on the leaderboard in competition.yaml" not in trap


def test_the_rule_the_first_run_offers_is_taken_on_a_second_run_without_force(tmp_path):
    """The first add-meta on a v1 bundle offers --submission-rule Force_Last; running again
    with it (the meta phase unchanged) writes the v2 form without --force, and only that."""
    bundle = _copy(V1, tmp_path)
    add_meta(bundle, end="2026-08-31")
    meta_yaml = (bundle / "final_ranking" / "reference_data" / "metascore.yaml").read_text()
    result = add_meta(bundle, end="2026-08-31", submission_rule="Force_Last")
    assert result.kind == "updated" and "written in the v2 form" in result.changes[0]
    assert load_competition(bundle).leaderboard.submission_rule == "Force_Last"
    assert (bundle / "final_ranking" / "reference_data" / "metascore.yaml").read_text() == meta_yaml
    assert not add_meta(bundle, end="2026-08-31", submission_rule="Force_Last").changed
    # another method with the rule: both written, no --force (the rest of metascore.yaml kept)
    fresh = _copy(V1, tmp_path, "again")
    add_meta(fresh, end="2026-08-31")
    again = add_meta(fresh, end="2026-08-31", submission_rule="Force_Last", choices=MetaChoices(method="mean"))
    assert again.kind == "updated" and load_competition(fresh).leaderboard.submission_rule == "Force_Last"
    assert "method: mean" in (fresh / "final_ranking" / "reference_data" / "metascore.yaml").read_text()


def test_an_unknown_rule_is_refused_before_anything_is_converted(tmp_path):
    bundle = _copy(V1, tmp_path)
    with pytest.raises(ConfigError, match="did you mean 'Force_Last'"):
        add_meta(bundle, end="2026-08-31", submission_rule="ForceLast")
    assert not (bundle / "competition.v1.yaml").exists()


# ---------------------------------------------------------------------- issue 46
def test_add_meta_says_which_eye_icons_open_an_empty_page(tmp_path):
    """Issue 46 item 3: detailed results are on for the whole competition; a scoring program
    that writes no detailed_results.html leaves each of its rows' eye icons on an empty page."""
    bundle = _copy(V2, tmp_path)
    result = add_meta(bundle, end="2026-12-31")
    (note,) = [n for n in result.notes if "write no detailed_results.html" in n]
    assert "the scoring program(s) scoring_program/ write no detailed_results.html" in note
    assert "'Development', 'Final'" in note and "opens an empty page" in note
    assert "--eye-icons hide" in note and "keep them" in note
    assert "show_detailed_results_in_leaderboard" not in _yaml(bundle)  # the default keeps them
    # a scoring program that writes one gets no such note
    other = _copy(V2, tmp_path, "writes")
    score = other / "scoring_program" / "score.py"
    score.write_text(score.read_text() + "\n# also writes detailed_results.html\n")
    assert not [n for n in add_meta(other, end="2026-12-31").notes if "write no detailed_results.html" in n]


def test_eye_icons_hide_removes_them_and_the_page_says_where_the_ranking_is(tmp_path):
    bundle = _copy(V2, tmp_path)
    result = add_meta(bundle, end="2026-12-31", choices=MetaChoices(eye_icons="hide"))
    data = _yaml(bundle)
    assert data["show_detailed_results_in_leaderboard"] is False and data["enable_detailed_results"] is True
    assert any("show_detailed_results_in_leaderboard: false (--eye-icons hide)" in c for c in result.changes)
    assert any("no leaderboard shows an eye icon" in n for n in result.notes)
    assert check_bundle(bundle).errors == []
    page = (bundle / "pages" / "final_ranking.md").read_text()
    assert "appear at the top of this page once the organizers have submitted." in page
    assert "eye icon" not in page
    assert main(["bundle", "add-meta", str(_copy(V2, tmp_path, "cli")), "--end", "2026-12-31",
                 "--eye-icons", "hide"]) == 0
    assert _yaml(tmp_path / "cli")["show_detailed_results_in_leaderboard"] is False


def test_the_meta_program_carries_the_competitions_title(tmp_path):
    """Issue 46 item 5: the ranking page names the competition (output.title)."""
    bundle = _copy(V2, tmp_path)
    add_meta(bundle, end="2026-12-31")
    config = load_config(bundle / "final_ranking" / "reference_data" / "metascore.yaml")
    assert config.title == _yaml(bundle)["title"]
    assert load_config(TEMPLATE / "final_ranking" / "reference_data" / "metascore.yaml").title == \
        yaml.safe_load((TEMPLATE / "competition.yaml").read_text())["title"]


def test_one_tie_wording_true_on_the_site_and_in_bundle_run(tmp_path):
    """Issue 46 item 6: one rule in one wording: the earlier submission, by submission time
    where the results carry one (a pulled folder), else by submission number (a results
    export, bundle run's outputs tree), as the messages of the meta phase say which."""
    bundle = _copy(V2, tmp_path)
    add_meta(bundle, end="2026-12-31")
    page = (bundle / "pages" / "final_ranking.md").read_text()
    assert ("the earlier submission is listed first: by submission time where the results carry one, "
            "else by submission number") in page
    assert "its results export holds no times" in page
    # the template's page is the one add-meta would write from its metascore.yaml
    from metascore.bundle.meta.ranking_page import ranking_page

    config = load_config(TEMPLATE / "final_ranking" / "reference_data" / "metascore.yaml")
    columns = {c["key"]: c["title"] for c in yaml.safe_load((TEMPLATE / "competition.yaml").read_text())[
        "leaderboards"][0]["columns"] if c["key"] in config.scores}
    assert (TEMPLATE / "pages" / "final_ranking.md").read_text() == ranking_page(
        config, meta_phase="Final ranking", columns=columns)
