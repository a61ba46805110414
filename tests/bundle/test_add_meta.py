"""``metascore bundle add-meta``: an organizer's own bundle gets the meta phase, then passes
``bundle check`` and ``bundle run`` gives a final ranking that accounts for every candidate.

Fixtures (tests/data/bundles/):

- ``add_meta_v2``: a v2 code-submission bundle shaped like Codabench's iris and wheat_seeds
  examples: an ingestion program, three metrics (accuracy, r2 without ``sorting`` and
  negative for bad fits, mae ``asc``), a timing column (``duration``, ``sorting: desc`` as the
  real ones have it), a solution, the default leaderboard rule (Add), no ``docker_image``, a
  last phase without an end date, comments the organizer cares about;
- ``add_meta_v1``: a CodaLab v1 result-submission bundle with three scoring phases
  (Warm-up, Development, Final), one column without ``sort``, one ``sort: asc``, a Duration,
  and the result submissions of each phase marked ``on_leaderboard`` (v1 leaderboards are
  Add on Codabench), one of them flagged ``is_baseline``.

Expected final rankings, from the per-task scores the runs print (all judges, average rank):

v2, Development (the filter; baseline = the solution, y = 2x): alice (exact) and erin (+1.5)
beat it, bob (constant 10: r2 -5.7) and carol (y = -x: r2 -1.3) do not. Final: alice 1,
erin 2; bob and carol listed with "does not beat baseline 'solution'".

v1, Development (baseline_team: hits 0.6, rmse 0.5): alice beats it (hits 1, rmse 0.09),
bob (0.6, 1.0) and dan (0.2, 2.83) do not. Final: alice 1; bob and dan listed with reasons.

Both fixtures leave Codabench's default image (py37), which add-meta leaves as it is: the
meta-scoring program carries its own Python (``--meta-python bundled``, an organizer's
default, set for this module), so the bundles pass the check; the runs that fill the program
use the cached build (``built_runtime``).
"""

from __future__ import annotations

import csv
import re
import shutil
import zipfile
from pathlib import Path

import pytest
import yaml

from metascore.bundle.meta.add import add_meta
from metascore.bundle.meta.choices import MetaChoices
from metascore.bundle.archive import zip_directory
from metascore.bundle.check.full import check_bundle
from metascore.bundle.meta.yaml_text import YamlText
from metascore.cli import main
from metascore.errors import ConfigError
from repo_paths import ROOT, TESTS

DATA = TESTS / "data" / "bundles"
TEMPLATE = ROOT / "bundle_template"
V2, V1 = DATA / "add_meta_v2", DATA / "add_meta_v1"


@pytest.fixture(autouse=True)
def _organizers_meta_python(monkeypatch):
    """As an organizer runs add-meta: --meta-python's default, auto (these bundles keep
    Codabench's default image, py37, so a zip carries the program's own Python; a local run
    uses this machine's)."""
    monkeypatch.setenv("METASCORE_META_PYTHON", "auto")


def _copy(src: Path, tmp_path: Path, name: str = "bundle") -> Path:
    dest = tmp_path / name
    shutil.copytree(src, dest)
    return dest


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _board(out: Path) -> list[dict[str, str]]:
    with open(out / "final" / "leaderboard.csv", newline="") as f:
        return list(csv.DictReader(f))


def _config(bundle: Path) -> dict:
    return yaml.safe_load((bundle / "final_ranking" / "reference_data" / "metascore.yaml").read_text())


def _accounted(rows: list[dict[str, str]]) -> dict[str, str]:
    """Every row has a position, or is a baseline, or says why it was left out; by
    participant (the meta phase names a submission as the export does, <owner>-<id>)."""
    out = {}
    for row in rows:
        assert row["candidate"].rsplit("-", 1)[0] == row["participant"], row
        if row["position"]:
            out[row["participant"]] = f"position {row['position']}"
        else:
            assert row["is_baseline"] == "true" or row["reason"], row
            out[row["participant"]] = row["reason"]
    return out


# ---------------------------------------------------------------------- (a) a v2 bundle end to end
@pytest.mark.slow
def test_v2_bundle_add_meta_check_run_ranks_every_candidate(tmp_path, capsys):
    bundle = _copy(V2, tmp_path)
    original = (V2 / "competition.yaml").read_text()
    assert main(["bundle", "add-meta", str(bundle), "--end", "2026-12-31",
                 "--submission-rule", "Force_Last"]) == 0
    said = capsys.readouterr().out
    # what real bundles bring, each said: no image, a column without sorting, a timing column
    assert ("docker_image left as it is, codalab/codalab-legacy:py37 (Codabench's default: no "
            "docker_image): every phase keeps running in it") in said and "~ docker_image" not in said
    assert "column(s) r2 have no sorting: Codabench sorts them descending" in said
    assert "timing column(s) duration" in said
    assert "baseline: the solution 'solution'" in said
    assert "phase 'Final': end 2026-12-31 (--end; it had none)" in said

    text = (bundle / "competition.yaml").read_text()
    new_lines = iter(text.splitlines())
    assert all(line in new_lines for line in original.splitlines()), "an original line was lost or moved"
    data = yaml.safe_load(text)
    assert "docker_image" not in data
    assert [p["name"] for p in data["phases"]] == ["Development", "Final", "Final ranking"]
    assert data["phases"][2]["tasks"] == [2] and data["tasks"][2]["scoring_program"] == "meta_scoring_program/"
    assert [c["key"] for c in data["leaderboards"][0]["columns"]][-2:] == ["n_qualified", "winner_score"]
    config = _config(bundle)
    assert config["phases"] == {"development": "Development", "final": "Final"}
    assert {(j["phase"], j["metric"], j["direction"]) for j in config["judges"]} == {
        (p, m, d) for p in ("Development", "Final")
        for m, d in (("accuracy", "higher"), ("r2", "higher"), ("mae", "lower"))}
    assert config["baselines"] == ["organizer"] and config["filter"]["rule"] == "beat_baseline"
    assert (bundle / "meta_scoring_program" / "README.md").is_file()

    assert main(["bundle", "check", str(bundle)]) == 0
    checked = capsys.readouterr().out
    assert "0 error(s), 0 warning(s): OK." in checked
    out = tmp_path / "runs"
    assert main(["bundle", "run", str(bundle), "--out", str(out), "--quiet"]) == 0
    # a local run uses this machine's Python, whatever the image (no runtime to build)
    meta = yaml.safe_load((out / "cache" / "meta_scoring_program" / "metadata.yaml").read_text())
    assert meta["command"] == "python3 /app/program/score.py /app/input /app/output"
    rows = _board(out)
    accounted = _accounted(rows)
    assert set(accounted) == {"organizer", "alice", "bob", "carol", "erin"}  # the solution: organizer
    assert accounted["alice"] == "position 1" and accounted["erin"] == "position 2"
    for loser in ("bob", "carol"):
        assert re.search(r"does not beat baseline 'organizer-\d+'", accounted[loser])
    r2 = {r["participant"]: float(r["judge:Final Task/r2"]) for r in rows}
    assert r2["bob"] < 0 and r2["carol"] < 0  # negative scores ranked, not refused


# ---------------------------------------------------------------------- (b) a v1 results bundle
@pytest.mark.slow
def test_v1_results_bundle_with_three_phases_add_meta_check_run(tmp_path, capsys):
    bundle = _copy(V1, tmp_path)
    assert main(["bundle", "add-meta", str(bundle), "--end", "2026-08-31",
                 "--image", "codalab/codalab-legacy:py312"]) == 0
    said = capsys.readouterr().out
    # more than two phases: each one with what it holds, and the pair chosen (issue 41, item 5)
    assert ("phases: 3 phases; the final ranking is made of 'Final' after 'Development' (--phases "
            "DEVELOPMENT,FINAL chooses)") in said
    assert "    'Warm-up': reference data ref_warmup/; 2 submission(s): alice, bob\n" in said
    assert "a v1 bundle: Codabench's import makes it Add" in said
    assert "competition_docker_image: codalab/codalab-legacy:py37 -> codalab/codalab-legacy:py312" in said
    assert "image codalab/codalab-legacy:py312 (--image): Codabench runs every phase in this one image" in said
    assert "column(s) hits have no sorting" in said
    assert "baseline: baseline_team" in said

    text = (bundle / "competition.yaml").read_text()
    assert "      leaderboard: *RESULTS\n      label: Qualified candidates" in text  # the file's own alias
    data = yaml.safe_load(text)
    assert data["phases"][4]["phasenumber"] == 4 and data["phases"][4]["label"] == "Final ranking"
    assert str(data["phases"][4]["start_date"]) == "2026-09-01"
    assert data["leaderboard"]["columns"]["n_qualified"]["leaderboard"]["label"] == "RESULTS"
    config = _config(bundle)
    assert config["phases"] == {"development": "Development", "final": "Final"}
    assert {(j["task"], j["metric"], j["direction"]) for j in config["judges"]} == {
        (f"{p} Task", m, d) for p in ("Development", "Final") for m, d in (("hits", "higher"), ("rmse", "lower"))}
    assert config["baselines"] == ["baseline_team"]

    assert main(["bundle", "check", str(bundle), "--meta-python", "image"]) == 0  # py312 has what it needs
    assert "0 error(s)" in capsys.readouterr().out
    out = tmp_path / "runs"
    assert main(["bundle", "run", str(bundle), "--out", str(out), "--quiet", "--meta-python", "image"]) == 0
    accounted = _accounted(_board(out))
    assert set(accounted) == {"alice", "bob", "dan", "baseline_team"}
    assert accounted["alice"] == "position 1"
    assert "does not beat baseline" in accounted["bob"] and "does not beat baseline" in accounted["dan"]


def test_v1_phases_option_and_a_second_run_reuse_the_meta_start(tmp_path):
    bundle = _copy(V1, tmp_path)
    # top_k: the baseline (made to Development only) is not needed in Warm-up
    choices = MetaChoices(phases=("Warm-up", "Development"), filter="top_k:2")
    add_meta(bundle, choices=choices, end="2026-08-31")
    assert _config(bundle)["phases"] == {"development": "Warm-up", "final": "Development"}
    before = _tree(bundle)
    # no --end the second time: the meta phase's start says where the last phase ends
    result = add_meta(bundle, choices=choices)
    assert not result.changed and _tree(bundle) == before


# ---------------------------------------------------------------------- (c) idempotent, --force, refusals, zips
def test_a_second_run_changes_nothing_and_says_so(tmp_path, capsys):
    bundle = _copy(V2, tmp_path)
    args = ["bundle", "add-meta", str(bundle), "--end", "2026-12-31"]
    assert main(args) == 0
    after = _tree(bundle)
    capsys.readouterr()
    assert main(args) == 0
    assert "already has the meta phase add-meta would write; nothing changed" in capsys.readouterr().out
    assert _tree(bundle) == after


def test_a_second_run_changes_what_its_options_name_and_keeps_the_rest(tmp_path, capsys):
    """Issue 50's second trial: a second add-meta with another method writes it without
    --force, keeps the end and the other choices, and says so; only over files edited by
    hand is --force needed, and it writes them again with what the bundle keeps."""
    bundle = _copy(V2, tmp_path)
    assert main(["bundle", "add-meta", str(bundle), "--end", "2026-12-31", "--filter", "none"]) == 0
    first = _tree(bundle)
    capsys.readouterr()
    assert main(["bundle", "add-meta", str(bundle), "--method", "copeland"]) == 0
    out = capsys.readouterr().out
    assert "updated (what this run's options name; the rest as it was):" in out
    assert ("note: kept as the bundle has them (a second add-meta changes only what its options "
            "name; repeat none): the last phase's end 2026-12-31 (--end); metascore.yaml's "
            "baselines ") in out and "filter none" in out
    data = yaml.safe_load((bundle / "competition.yaml").read_text())
    assert [p["name"] for p in data["phases"]].count("Final ranking") == 1
    assert (_config(bundle)["ranking"]["method"], _config(bundle)["filter"]) == ("copeland", {"rule": "none"})
    assert main(["bundle", "add-meta", str(bundle), "--method", "average_rank"]) == 0
    assert _tree(bundle) == first  # back to the first options: the first files again
    page = bundle / "pages" / "final_ranking.md"
    page.write_text(page.read_text() + "\nEdited by hand.\n")
    capsys.readouterr()
    assert main(["bundle", "add-meta", str(bundle), "--method", "copeland"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "differ from what add-meta writes (pages/final_ranking.md" in err
    assert "--force" in err
    assert main(["bundle", "add-meta", str(bundle), "--method", "copeland", "--force"]) == 0
    assert "rewrote the meta-ranking phase (--force)" in capsys.readouterr().out
    assert "Edited by hand" not in page.read_text()
    assert (_config(bundle)["ranking"]["method"], _config(bundle)["filter"]) == ("copeland", {"rule": "none"})


def test_an_end_or_rule_alone_keeps_files_edited_by_hand(tmp_path, capsys):
    bundle = _copy(V2, tmp_path)
    assert main(["bundle", "add-meta", str(bundle), "--end", "2026-12-31"]) == 0
    config = bundle / "final_ranking" / "reference_data" / "metascore.yaml"
    config.write_text(config.read_text().replace("bootstrap: 200", "bootstrap: 50"))
    capsys.readouterr()
    assert main(["bundle", "add-meta", str(bundle), "--submission-rule", "Force_Last"]) == 0
    out = capsys.readouterr().out
    assert "  ~ leaderboard submission_rule: Add -> Force_Last\n" in out
    assert "the meta phase and its files stay as they are: they differ from what add-meta writes" in out
    assert "bootstrap: 50" in config.read_text()


def test_a_bundle_with_its_own_meta_phase_is_refused_in_one_line(tmp_path, capsys):
    bundle = _copy(TEMPLATE, tmp_path)
    before = _tree(bundle)
    assert main(["bundle", "add-meta", str(bundle)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "already has a meta phase (phase 'Final ranking', task 'meta-ranking'" in err
    assert _tree(bundle) == before
    assert main(["bundle", "add-meta", str(bundle), "--force"]) == 0
    data = yaml.safe_load((bundle / "competition.yaml").read_text())
    assert [p["name"] for p in data["phases"]] == ["Development", "Final", "Final ranking"]
    assert len(data["tasks"]) == 3
    assert not check_bundle(bundle).errors


def test_a_zip_gives_a_zip_with_the_program_filled_and_passes_check(tmp_path, capsys, built_runtime):
    source = zip_directory(_copy(V2, tmp_path, "folder"), tmp_path / "bundle.zip")
    assert main(["bundle", "add-meta", str(source), "--end", "2026-12-31"]) == 0
    assert "metascore bundle run " + str(source) + " --submissions DIR" in capsys.readouterr().out
    with zipfile.ZipFile(source) as zf:
        names = set(zf.namelist())
        assert "Final ranking" in zf.read("competition.yaml").decode()
    assert {"final_ranking/reference_data/metascore.yaml", "meta_scoring_program/score.py",
            "meta_scoring_program/metadata.yaml", "meta_scoring_program/metascore/__init__.py",
            "meta_scoring_program/runtime/bin/python3.13",
            "ingestion_program/ingest.py", "sample_submissions/alice__exact/model.py"} <= names
    assert main(["bundle", "check", str(source)]) == 0
    capsys.readouterr()
    stat = source.stat()  # not rewritten (not read: the zip carries the meta program's Python, 73 MB)
    assert main(["bundle", "add-meta", str(source), "--end", "2026-12-31"]) == 0
    assert "nothing changed" in capsys.readouterr().out
    assert (source.stat().st_ino, source.stat().st_mtime_ns, source.stat().st_size) == (
        stat.st_ino, stat.st_mtime_ns, stat.st_size)


def test_a_zip_with_o_folder_gives_a_folder_and_leaves_the_zip(tmp_path):
    source = zip_directory(_copy(V2, tmp_path, "folder"), tmp_path / "bundle.zip")
    stamp = source.read_bytes()
    result = add_meta(source, tmp_path / "out", end="2026-12-31")
    assert result.target == tmp_path / "out" and source.read_bytes() == stamp
    assert (tmp_path / "out" / "meta_scoring_program" / "README.md").is_file()
    assert not check_bundle(tmp_path / "out").errors


def test_o_copies_a_folder_and_leaves_the_original(tmp_path):
    before = _tree(V2)
    add_meta(V2, tmp_path / "copy", end="2026-12-31")
    assert _tree(V2) == before
    assert "Final ranking" in (tmp_path / "copy" / "competition.yaml").read_text()


@pytest.mark.parametrize("kwargs, message", [
    ({}, "phase 'Final' (the last phase) has no end date, so the Final ranking phase cannot start "
         "after it: give --end DATE"),
    ({"end": "2026-06-01"}, "phase 'Final' starts at 2026-07-01 00:00:00; its end must come after that"),
    ({"end": "soon"}, "--end 'soon' is not a date"),
    ({"end": "2026-12-31", "choices": MetaChoices(judges=("acuracy",))},
     "--judges/--exclude: 'acuracy' is not a leaderboard column (did you mean 'accuracy'?)"),
    ({"end": "2026-12-31", "choices": MetaChoices(method="averge_rank")}, "did you mean 'average_rank'"),
    ({"end": "2026-12-31", "choices": MetaChoices(baselines=("none",), filter="beat_baseline")},
     "--filter beat_baseline needs a baseline"),
    ({"end": "2026-12-31", "submission_rule": "ForceLast"}, "did you mean 'Force_Last'"),
])
def test_refusals_are_one_sentence_and_write_nothing(tmp_path, kwargs, message):
    bundle = _copy(V2, tmp_path)
    before = _tree(bundle)
    with pytest.raises(ConfigError) as info:
        add_meta(bundle, **kwargs)
    assert message in str(info.value) and "\n" not in str(info.value)
    assert _tree(bundle) == before


def test_judges_exclude_filter_and_baseline_options(tmp_path):
    bundle = _copy(V2, tmp_path)
    add_meta(bundle, end="2026-12-31", choices=MetaChoices(
        method="copeland", judges=("accuracy", "MAE", "duration"), exclude=("accuracy",),
        filter="top_k:2", baselines=("carol",)))
    config = _config(bundle)
    assert {j["metric"] for j in config["judges"]} == {"mae", "duration"}  # titles work too
    assert config["ranking"]["method"] == "copeland" and config["baselines"] == ["carol"]
    assert config["filter"] == {"rule": "top_k", "k": 2}
    assert not check_bundle(bundle).errors


# ---------------------------------------------------------------------- (d) the Add rule
def test_an_add_leaderboard_is_said_and_force_last_is_offered(tmp_path, capsys):
    bundle = _copy(V2, tmp_path)
    assert main(["bundle", "add-meta", str(bundle), "--end", "2026-12-31"]) == 0
    said = capsys.readouterr().out
    assert "leaderboard submission_rule Add (Codabench's default): nothing reaches the leaderboard" in said
    assert (f"Fix: `metascore bundle add-meta {bundle} --submission-rule Force_Last`: each participant's "
            "last finished submission then goes there by itself") in said
    assert "submission_rule" not in yaml.safe_load((bundle / "competition.yaml").read_text())["leaderboards"][0]
    # the meta phase stays as it is, so no --force is needed to change the rule afterwards
    assert main(["bundle", "add-meta", str(bundle), "--end", "2026-12-31",
                 "--submission-rule", "Force_Last"]) == 0
    said = capsys.readouterr().out
    assert ("updated (what this run's options name; the rest as it was):\n  ~ leaderboard submission_rule: "
            "Add -> Force_Last\nnote: kept as the bundle has them") in said
    assert "replaces their previous one, even a worse one (participants no longer choose what shows)" in said
    board = yaml.safe_load((bundle / "competition.yaml").read_text())["leaderboards"][0]
    assert board["submission_rule"] == "Force_Last"


# ---------------------------------------------------------------------- one phase, flow style
@pytest.mark.slow
def test_one_phase_flow_style_bundle(tmp_path, capsys):
    bundle = _copy(DATA / "v2_results", tmp_path)
    assert main(["bundle", "add-meta", str(bundle), "--end", "2026-03-31",
                 "--submission-rule", "Force_Last"]) == 0
    said = capsys.readouterr().out
    assert "one phase: phases.final is null, so phase 'Feedback' is ranked on its own" in said
    assert "no baseline: no starting kit submission" in said and "filter: none" in said
    text = (bundle / "competition.yaml").read_text()
    assert "  - {index: 1, name: Feedback, start: 2026-01-01, tasks: [0, 1], execution_time_limit: 30, " \
           "end: 2026-03-31}" not in text  # a flow item gets the key inside its braces:
    assert "start: 2026-01-01, end: 2026-03-31, tasks: [0, 1]" in text
    assert "  - {index: 2, name: meta-ranking," in text
    assert set(yaml.safe_load(text)["tasks"][2]) == {"index", "name", "description", "reference_data",
                                                     "scoring_program"}  # commas quoted in a flow item
    config = _config(bundle)
    assert config["phases"] == {"development": "Feedback", "final": None}
    assert config["output"]["scores"] == {"n_candidates": "n_candidates", "winner_score": "winner_score"}
    assert main(["bundle", "check", str(bundle)]) == 0
    capsys.readouterr()
    out = tmp_path / "runs"
    assert main(["bundle", "run", str(bundle), "--out", str(out), "--quiet", "--meta-python", "image"]) == 0
    assert {r["participant"] for r in _board(out) if r["position"]} == {"alice", "bob"}


# ---------------------------------------------------------------------- the text editor
@pytest.mark.parametrize("text", [
    "a: 1\nitems:\n- {x: 1}\n- {x: 2}   # two\n\n# next\nb: 2\n",
    "a: 1\nitems:\n  - x: 1\n    y: 'q'\n  - x: 2\n    y: >\n      folded\n      text\n# next\nb: 2\n",
    "a: 1\r\nitems: [{x: 1}, {x: 2}]\r\nb: 2\r\n",
    "items:\n    -   x: 1\n        y: 2\n",
    "base: &B {x: 0}\nitems:\n  - x: 1\n    ref: *B\n  - *B\n# after\nz: 1\n",  # aliases last
])
def test_append_then_remove_gives_the_text_back(text):
    yt = YamlText(text)
    yt.append_item(yt.get(yt.root, "items"), {"x": 3, "name": "a: b"}, comment=["marker: added", "  more"])
    assert yaml.safe_load(yt.text)["items"][-1] == {"x": 3, "name": "a: b"}
    assert yaml.safe_load(yt.text)["items"][:-1] == yaml.safe_load(text)["items"]
    if "\r\n" in text:
        assert "\n" not in yt.text.replace("\r\n", "")
    yt.remove_item(yt.get(yt.root, "items"), -1 % len(yt.get(yt.root, "items").value), "marker:")
    assert yt.text == text


def test_a_v1_column_ending_with_its_leaderboard_alias(tmp_path):
    """The new columns go after the last column even when its last key is an alias (PyYAML
    hands out the anchored node, whose position is the anchor's)."""
    bundle = _copy(V1, tmp_path)
    path = bundle / "competition.yaml"
    text = path.read_text()
    path.write_text(text.replace("      label: Duration\n      numeric_format: 2\n      rank: 3\n      leaderboard: *RESULTS\n", "")
                    .replace("    Duration:\n      leaderboard: *RESULTS\n      label: Duration\n      numeric_format: 2\n      rank: 3\n",
                             "    Duration:\n      label: Duration\n      numeric_format: 2\n      rank: 3\n      leaderboard: *RESULTS\n"))
    assert path.read_text().endswith("      leaderboard: *RESULTS\n")
    add_meta(bundle, end="2026-08-31")
    columns = yaml.safe_load(path.read_text())["leaderboard"]["columns"]
    assert list(columns) == ["hits", "rmse", "Duration", "n_qualified", "winner_score"]
    assert columns["Duration"]["leaderboard"] == columns["n_qualified"]["leaderboard"] == {"label": "RESULTS", "rank": 1}


def test_an_end_with_a_time_is_written_quoted_so_codabench_keeps_the_time(tmp_path):
    """Codabench's unpacker keeps only the day of an unquoted date-time (issue 25, item 2):
    `--end "2026-12-31 23:59:00"` is written quoted, and the check has nothing to say of it."""
    bundle = _copy(V2, tmp_path)
    add_meta(bundle, end="2026-12-31 23:59:00")
    assert 'end: "2026-12-31 23:59:00"' in (bundle / "competition.yaml").read_text()
    report = check_bundle(bundle)
    assert not any("unquoted date-time" in w for w in report.warnings)
    final = next(p for p in report.competition.phases if p.name == "Final")
    assert final.end.hour == 23 and report.competition.phases[-1].start.isoformat() == "2027-01-01T00:00:00"
