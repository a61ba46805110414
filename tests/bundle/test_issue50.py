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
    this Python lacks it, so `bundle check` notes it and add-meta puts `bundle env` first."""
    from metascore.cli import main

    _without(monkeypatch, "sklearn")
    bundle = _copy(tmp_path)
    (note,) = [n for n in check_bundle(bundle).notes if "bundle env" in n]
    assert note.startswith("a local `metascore bundle run` needs `metascore bundle env` first")
    assert "lacks sklearn, which codalab/codalab-legacy:py39 carries" in note
    assert main(["bundle", "add-meta", str(bundle), "--end", END]) == 0
    out = capsys.readouterr().out
    assert f"      metascore bundle env {bundle}   (once: the programs need the image's packages" in out


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
