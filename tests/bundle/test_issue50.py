"""Issue 50: a new user's trial on a public two-phase Codabench v2 class competition, from a
fresh clone to the final leaderboard; what cost the time, item by item (items 2 to 7).

The fixture ``tests/data/bundles/v2_results_py39`` is built like that bundle (hand-written):
two phases of result submissions, one accuracy column, ``codalab/codalab-legacy:py39``, a
scoring program importing scikit-learn, a Final phase without an end date, and a starting
kit that is code (a script that writes a submission, no submission in it).
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest
import yaml

from metascore.bundle.check.full import check_bundle
from metascore.bundle.meta.add import add_meta
from metascore.bundle.runner import format_report, run_bundle
from repo_paths import TESTS

FIXTURE = TESTS / "data" / "bundles" / "v2_results_py39"
END = "2026-04-30"


@pytest.fixture(autouse=True)
def _no_environment(tmp_path, monkeypatch):
    """No environment of the image is built; the runtime comes from this machine."""
    monkeypatch.setenv("METASCORE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("METASCORE_META_PYTHON", "auto")


def _copy(tmp_path: Path, name: str = "bundle") -> Path:
    return Path(shutil.copytree(FIXTURE, tmp_path / name))


def _config(bundle: Path) -> dict:
    return yaml.safe_load((bundle / "final_ranking" / "reference_data" / "metascore.yaml").read_text())


def _without(monkeypatch, *modules: str) -> None:
    """This machine's Python lacks ``modules`` (as a fresh machine lacks scikit-learn)."""
    from metascore.bundle.check import image_checks

    real = importlib.util.find_spec
    monkeypatch.setattr(image_checks.importlib.util, "find_spec",
                        lambda name, *a: None if name in modules else real(name, *a))


def _shadow_sklearn(bundle: Path) -> None:
    """Make the scoring program fail as it does where scikit-learn is missing: a module of
    its own folder, first on its path, raises what the missing package raises."""
    (bundle / "scoring_program" / "sklearn").mkdir()
    (bundle / "scoring_program" / "sklearn" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'sklearn'\", name='sklearn')\n")


# ---------------------------------------------------------------------- item 2
def test_check_and_add_meta_say_a_local_run_needs_bundle_env_for_py39(tmp_path, monkeypatch, capsys):
    """py39 is Anaconda: its content is not listed in full, but it carries scikit-learn;
    this Python lacks it, so `bundle check` notes it and add-meta's next `bundle run` takes
    --setup, which builds them (no separate `bundle env` step)."""
    from metascore.cli import main

    _without(monkeypatch, "sklearn")
    bundle = _copy(tmp_path)
    (note,) = [n for n in check_bundle(bundle).notes if "bundle env" in n]
    assert note.startswith("a local `metascore bundle run` needs `metascore bundle env` first")
    assert "lacks sklearn, which codalab/codalab-legacy:py39 carries" in note
    assert main(["bundle", "add-meta", str(bundle), "--end", END]) == 0
    out = capsys.readouterr().out
    assert (f"      metascore bundle run {bundle} --setup --out runs/   (--setup, once: the image's "
            "packages, which this Python lacks)") in out
    assert "metascore bundle env" not in out


def test_py37_and_py39_are_known_to_carry_the_scientific_stack():
    from metascore.bundle.platform.images import carried_by, modules_of

    for tag in ("py37", "py39"):
        image = f"docker.io/codalab/codalab-legacy:{tag}"
        assert {"numpy", "scipy", "sklearn", "pandas", "matplotlib", "yaml", "theano"} <= carried_by(image)
        assert modules_of(image) is None  # not every module listed: no "does not carry" warning
    assert carried_by("codalab/codalab-legacy:py312") == modules_of("codalab/codalab-legacy:py312")
    assert carried_by("python:3.12") is None


def test_identical_failures_are_one_block_with_a_count(tmp_path):
    """Every run failed on the same missing module: one block, how many runs and which,
    the reason once (the issue's first run printed the same 6-line block 10 times)."""
    bundle = _copy(tmp_path)
    _shadow_sklearn(bundle)
    report = run_bundle(bundle, tmp_path / "runs", sandbox="auto")
    text = format_report(report)
    assert text.count("Traceback (most recent call last)") == 1, text
    assert text.count("FAILED") == 1
    assert "FAILED (6 runs) program_rc=1\n    runs: Development / alice__forest / Development Task; " in text
    assert f"(each run's in its folder under {tmp_path / 'runs' / 'runs'})" in text


# ---------------------------------------------------------------------- item 6
@pytest.fixture(scope="module")
def kit_run(tmp_path_factory):
    """The fixture with the kit's script run (its submission is the baseline) and bob's
    Development submission failing, after add-meta, run locally."""
    tmp = tmp_path_factory.mktemp("kit_run")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("METASCORE_CACHE", str(tmp / "cache"))
        mp.setenv("METASCORE_META_PYTHON", "auto")
        bundle = _copy(tmp)
        _run_kit_script(bundle)
        (bundle / "sample_submissions" / "Development" / "bob__knn" / "predictions.txt").write_text("cat\n")
        add_meta(bundle, end=END)
        report = run_bundle(bundle, tmp / "runs", sandbox="auto")
    return bundle, report


def _run_kit_script(bundle: Path) -> None:
    """What the kit's README says: `python make_submission.py` writes submission/."""
    import subprocess
    import sys

    subprocess.run([sys.executable, "make_submission.py"], cwd=bundle / "starting_kit", check=True)


def test_a_second_add_meta_says_what_it_would_write_differently(tmp_path):
    """A second run with another filter writes it without --force, keeping the rest; over a
    metascore.yaml edited by hand it is refused, naming the line it would undo."""
    from metascore.errors import ConfigError
    from metascore.bundle.meta.choices import MetaChoices

    bundle = _copy(tmp_path)
    add_meta(bundle, end=END)
    result = add_meta(bundle, choices=MetaChoices(filter="top_k:2"))
    assert result.kind == "updated" and _config(bundle)["filter"] == {"rule": "top_k", "k": 2}
    assert _config(bundle)["phases"] == {"development": "Development", "final": "Final"}
    config = bundle / "final_ranking" / "reference_data" / "metascore.yaml"
    config.write_text(config.read_text().replace("bootstrap: 200", "bootstrap: 50"))
    with pytest.raises(ConfigError) as err:
        add_meta(bundle, choices=MetaChoices(method="copeland"))
    text = str(err.value)
    assert "the meta phase's files differ from what add-meta writes (final_ranking/reference_data/" \
           "metascore.yaml: 1 line(s); final_ranking/reference_data/metascore.yaml line " in text
    assert "line 27: `bootstrap: 200 " in text and "-> `bootstrap: 50 " in text  # add-meta's -> now
    assert text.endswith("or --force writes them again (what this run's options do not name is kept).")


def test_the_phase_ranked_alone_is_called_final_not_development(tmp_path):
    """No baseline, so filter none: 'Final' is ranked on its own, and metascore.yaml says so
    (development: null), each participant's submission picked as in a final phase."""
    from metascore.config import load_config

    bundle = _copy(tmp_path)
    result = add_meta(bundle, end=END)
    assert _config(bundle)["phases"] == {"development": None, "final": "Final"}
    assert any("phases: {development: null, final: 'Final'}" in n for n in result.notes)
    config = load_config(bundle / "final_ranking" / "reference_data" / "metascore.yaml")
    assert (config.phases.development, config.phases.final) == ("Final", None)
    assert config.selection.development == "last"  # selection.final: last


def test_winner_score_shows_the_average_rank(kit_run):
    _, report = kit_run
    assert report.meta.finished
    assert report.meta.scores["winner_score"] == 1.0  # alice, average rank 1 (not -1)


def test_a_failed_development_run_is_said_where_the_board_says_absent(kit_run):
    """The meta phase reads the results export, which leaves bob's failed Development
    submission out: the final leaderboard says "absent", the run says why."""
    _, report = kit_run
    text = format_report(report)
    assert ("note: bob-6 is \"absent from the 'Development' phase\" on the final leaderboard: its "
            "submission there failed in this run (bob__knn: program_rc=1)") in text
    assert "alice-5 is" not in text


# ---------------------------------------------------------------------- item 4
def test_add_meta_says_where_it_looked_for_a_baseline_and_how_to_give_one(tmp_path):
    bundle = _copy(tmp_path)
    (said,) = [n for n in add_meta(bundle, end=END).notes if n.startswith("no baseline")]
    assert ("no starting kit submission (starting kit starting_kit/: no submission found in it "
            "(looked for a folder or zip whose name contains 'submission', or a metadata file at "
            "its root; it holds README.md, make_submission.py): run its script (make_submission.py) "
            "so that it writes one there, or give a submission zip or folder with `bundle add-meta "
            "--baseline FILE`)") in said


def test_add_meta_says_why_a_sample_submission_at_the_root_is_no_baseline(tmp_path):
    """A bundle shipping ``sample_code_submission/`` at its root (as Codabench's
    Mini-MNIST does) without naming it as a starting kit: the note says why no run makes it
    and the option that does."""
    bundle = _copy(tmp_path)
    (bundle / "sample_code_submission").mkdir()
    (bundle / "sample_code_submission" / "model.py").write_text("print(1)\n")
    (said,) = [n for n in add_meta(bundle, end=END).notes if n.startswith("no baseline")]
    assert (f"; sample_code_submission/ at the bundle's root: no phase names it as its "
            f"starting_kit, so no run makes it; `--baseline {bundle / 'sample_code_submission'}` "
            "runs it as the baseline)") in said


def test_a_baseline_given_as_a_file_runs_in_the_development_phase(tmp_path, capsys):
    """`--baseline FILE`: copied into sample_submissions/Development/, flagged in its
    manifest, the filter beat_baseline; a second run finds it and changes nothing."""
    from metascore.cli import main

    bundle = _copy(tmp_path)
    _run_kit_script(bundle)
    given = shutil.move(bundle / "starting_kit" / "submission", tmp_path / "majority")
    assert main(["bundle", "add-meta", str(bundle), "--end", END, "--baseline", str(given)]) == 0
    assert f"+ sample_submissions/Development/baseline__majority: the baseline (--baseline {given})" \
        in capsys.readouterr().out
    config = _config(bundle)
    assert (config["baselines"], config["filter"]["rule"]) == (["baseline"], "beat_baseline")
    copied = bundle / "sample_submissions" / "Development" / "baseline__majority" / "predictions.txt"
    assert copied.read_text() == "cat\n" * 10
    assert yaml.safe_load((copied.parent.parent / "submissions.yaml").read_text()) == [
        {"file": "baseline__majority", "participant": "baseline", "is_baseline": True}]
    assert not add_meta(bundle, end=END).changed  # the copy is the baseline now


def test_the_kits_own_result_submission_belongs_to_its_phase(kit_run):
    """The kit's script wrote starting_kit/submission/: a result submission, made to the
    kit's phase, with no warning asking to fix a manifest nobody wrote."""
    _, report = kit_run
    assert not [w for w in report.warnings if "have no phase" in w or "submissions manifest" in w]
    assert {(r.phase, r.candidate) for r in report.results if r.candidate == "submission"} == {
        ("Development", "submission")}


# ---------------------------------------------------------------------- item 5
def _today(monkeypatch, day: str) -> None:
    import datetime as dt

    from metascore.bundle.schema import phase_dates

    monkeypatch.setattr(phase_dates, "utc_now", lambda: dt.datetime.fromisoformat(day))


def test_a_phase_without_an_end_gets_an_end_proposed(tmp_path, monkeypatch):
    from metascore.errors import ConfigError

    bundle = _copy(tmp_path)
    with pytest.raises(ConfigError, match=r"proposed: --end 2026-04-24 \(54 days after its start, as "
                       r"long as 'Development'; the Final ranking phase then opens 2026-04-25\)\.$"):
        add_meta(bundle)  # the tests' clock: 2025-12-01, before the competition
    _today(monkeypatch, "2026-12-07T09:00:00")  # the competition is running: 'Final' open since March
    with pytest.raises(ConfigError, match=r"proposed: --end 2027-01-30 \(54 days from today, as long as "
                       r"'Development': 'Final' opened 2026-03-01, before today; the Final ranking "
                       r"phase then opens 2027-01-31\)\.$"):
        add_meta(bundle)


def test_top_k_says_what_k_counts_and_proposes_one(tmp_path):
    """The baseline holds the Development answers, so nobody beats it: the note proposes
    top_k with a k from the local run's participants, saying that k does not count it; and
    a top_k that admits everyone says so, with a k proposed."""
    from metascore.bundle.meta.choices import MetaChoices

    bundle = _copy(tmp_path)
    gold = tmp_path / "gold"
    gold.mkdir()
    shutil.copy(bundle / "dev_reference" / "answers.txt", gold / "predictions.txt")
    notes = add_meta(bundle, end=END, choices=MetaChoices(baseline_files=(gold,))).notes
    (said,) = [n for n in notes if "holds the reference answers" in n]
    assert ("another filter (`--filter top_k:2`: k counts the candidates of 'Development' that are not "
            "baselines, 3 here, and top_k:2 admits the best 2 of the local run's participants") in said
    notes = add_meta(_copy(tmp_path, "k3"), end=END, choices=MetaChoices(filter="top_k:3")).notes
    assert ("filter top_k:3: the best 3 of 'Development' enter the final ranking; k counts the "
            "candidates that are not baselines (a baseline is never admitted nor counted); a local run "
            "ranks 3 there, so all of them enter; proposed: --filter top_k:2 (the better half).") in notes


def test_whether_start_today_suits_the_competition_is_said(tmp_path, monkeypatch):
    _today(monkeypatch, "2026-12-07T09:00:00")
    running = add_meta(_copy(tmp_path), end="2027-01-30").lines()
    assert any(line.strip().startswith("upload: metascore bundle zip") and "--start" not in line
               for line in running)
    assert ("        dates: kept as they are, no --start (the competition is running: 'Development' "
            "opened 2026-01-05, before today); --start today would move a phase past the end given to "
            "`bundle add-meta --end`, and is refused") in running
    ended = _copy(tmp_path, "ended")
    text = (ended / "competition.yaml").read_text()
    (ended / "competition.yaml").write_text(text.replace("    start: 2026-03-01\n",
                                                         "    start: 2026-03-01\n    end: 2026-04-30\n"))
    lines = add_meta(ended).lines()
    assert f"      upload: metascore bundle zip {ended} -o bundle.zip --start today (it fills" in "\n".join(lines)
    assert ("        dates: every phase ended ('Final' on 2026-04-30): --start today opens 'Development' "
            "today, every phase keeping its length") in lines


# ---------------------------------------------------------------------- item 3
def test_setup_installs_bubblewrap_where_it_is_missing(monkeypatch):
    """A fresh Debian machine: no bwrap; `bundle run --setup` installs it with apt-get,
    fetching the package lists when the first try fails (a fresh image has none)."""
    from metascore.bundle.worker import machine_setup
    from metascore.errors import ConfigError

    ran = []

    class Done:
        def __init__(self, code):
            self.returncode = code

    monkeypatch.setattr(machine_setup.shutil, "which",
                        lambda name: None if name == "bwrap" else f"/usr/bin/{name}")
    monkeypatch.setattr(machine_setup.sys, "platform", "linux")
    monkeypatch.setattr(machine_setup.os, "geteuid", lambda: 0)
    monkeypatch.setattr(machine_setup.subprocess, "run",
                        lambda argv, **kw: ran.append(argv) or Done(100 if len(ran) == 1 else 0))
    lines = []
    assert machine_setup.install_bubblewrap(lines.append)
    assert ran == [["/usr/bin/apt-get", "install", "-y", "bubblewrap"], ["/usr/bin/apt-get", "update"],
                   ["/usr/bin/apt-get", "install", "-y", "bubblewrap"]]
    assert lines[0] == "[*] --setup: installing bubblewrap, the local sandbox: /usr/bin/apt-get install -y bubblewrap"
    monkeypatch.setattr(machine_setup.os, "geteuid", lambda: 1000)  # not root: through sudo
    ran.clear()
    machine_setup.install_bubblewrap()
    assert ran[0] == ["/usr/bin/sudo", "/usr/bin/apt-get", "install", "-y", "bubblewrap"]
    monkeypatch.setattr(machine_setup.shutil, "which", lambda name: None)
    with pytest.raises(ConfigError, match="no apt-get here to install bubblewrap with"):
        machine_setup.install_bubblewrap()


def test_run_setup_builds_the_images_packages_and_without_it_says_so_first(tmp_path, monkeypatch):
    """This Python lacks scikit-learn, which py39 carries: `bundle run --setup` builds the
    image's packages first (as `bundle env` does); without --setup the run says so before
    any job, where it used to fail every run."""
    from metascore.bundle import runner
    from metascore.bundle.worker.pyenv import packages_for

    _without(monkeypatch, "sklearn")
    built = []
    monkeypatch.setattr(runner, "build_env", lambda image, packages, **kw: built.append((image, packages)))
    bundle = _copy(tmp_path)
    lines: list[str] = []
    report = run_bundle(bundle, tmp_path / "runs", sandbox="auto", log=lines.append)
    (said,) = [w for w in report.warnings if "bundle env" in w]
    assert said.startswith("a local `metascore bundle run` needs `metascore bundle env` first") and \
        "(minutes; `bundle run --setup` does it too)" in said
    assert lines[0] == f"[!] {said}" and not built
    run_bundle(bundle, tmp_path / "runs", sandbox="auto", setup=True)
    assert built == [("codalab/codalab-legacy:py39", packages_for("codalab/codalab-legacy:py39"))]


# ---------------------------------------------------------------------- item 7
def test_the_first_zip_says_what_the_build_costs_before_it_starts(tmp_path, monkeypatch, capsys):
    """From a clone, with no runtime built: the cost (time, size) and the ways out are said
    before anything is built."""
    from metascore.bundle import bundle_zip
    from metascore.bundle.runtime import store as runtime
    from metascore.cli import main

    from metascore.errors import ConfigError

    said: list[str] = []

    def started(*args, **kwargs):  # the zip (and the build) would start here: stop
        said.append(capsys.readouterr().out)
        raise ConfigError("stopped before the build")

    bundle = _copy(tmp_path)
    add_meta(bundle, end=END)
    monkeypatch.setattr(runtime, "find_runtime", lambda: None)
    monkeypatch.setattr(bundle_zip, "build_bundle_zip", started)
    assert main(["bundle", "zip", str(bundle), "-o", str(tmp_path / "bundle.zip")]) == 1
    (before,) = said
    assert ("note: this machine has not built the meta-scoring program's own Python yet: this `bundle "
            "zip` builds it once, 11 to 15 minutes here") in before
    assert "the zip weighs about 45 MB" in before
    assert "`pip install 'metascore[runtime]'`" in before and "--meta-python image" in before
    # and add-meta, whose next steps name `bundle zip`, says it first
    assert ("        the first zip on this machine builds the meta-scoring program's own Python (11 to 15 "
            "minutes, once; a 45 MB zip): `bundle zip` says the ways out") in add_meta(
                _copy(tmp_path, "again"), end=END).lines()


def _fake_runtime(tmp_path: Path):
    """A runtime zip as the build writes it (LZMA members under runtime/), small."""
    import zipfile

    from metascore.bundle.runtime.store import Runtime

    folder = tmp_path / "rt"
    folder.mkdir()
    with zipfile.ZipFile(folder / "runtime.zip", "w", zipfile.ZIP_LZMA) as z:
        z.writestr("runtime/bin/python3.13", b"\x7fELF" + bytes(range(256)) * 40)
        z.writestr("runtime/lib/os.py", "import sys\n" * 50)
    return Runtime("k" * 16, folder, {})


@pytest.mark.parametrize("compression, kind", [("lzma", 14), ("deflate", 8)])
def test_compression_deflate_gives_a_zip_any_unzip_reads(tmp_path, monkeypatch, compression, kind):
    """The meta-scoring program's own Python is LZMA in its program zip (Info-ZIP unzip 6.0
    skips such members, exit code 81); --compression deflate deflates them."""
    import io
    import zipfile

    from metascore.bundle import bundle_zip

    monkeypatch.setenv("METASCORE_RUNTIME_CACHE", str(tmp_path / "cache"))
    fake = _fake_runtime(tmp_path)
    monkeypatch.setattr(bundle_zip, "require_runtime", lambda log: fake)
    bundle = _copy(tmp_path)
    add_meta(bundle, end=END)
    dest = bundle_zip.build_bundle_zip(bundle, tmp_path / "bundle.zip", compression=compression)
    with zipfile.ZipFile(dest) as outer:
        inner = zipfile.ZipFile(io.BytesIO(outer.read("meta_scoring_program.zip")))
    members = {i.filename: i for i in inner.infolist() if i.filename.startswith("runtime/")}
    assert set(members) == {"runtime/bin/python3.13", "runtime/lib/os.py"}
    assert {i.compress_type for i in members.values()} == {kind}  # 14: LZMA, 8: deflate
    assert inner.read("runtime/lib/os.py") == b"import sys\n" * 50
    if compression == "deflate" and shutil.which("unzip"):
        import subprocess

        (tmp_path / "program.zip").write_bytes(zipfile.ZipFile(dest).read("meta_scoring_program.zip"))
        done = subprocess.run(["unzip", "-tq", str(tmp_path / "program.zip")], capture_output=True)
        assert done.returncode == 0, done.stdout
