"""The reference in docs/ stays true to the code: the methods table is generated from the
registry, and every configuration key, statistic, format and output file is documented."""

from __future__ import annotations

import importlib.util
import re

import pytest

from metascore.config import FILTER_RULES, SELECTION_POLICIES, STATISTICS
from metascore.readers.formats import FORMATS
from metascore.ranking import TIE_BREAK_KEYS
from metascore.missing import MISSING_POLICIES
from repo_paths import ROOT

DOCS = ROOT / "docs"


def _load_generator():
    spec = importlib.util.spec_from_file_location("methods_table", DOCS / "methods_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_methods_table_is_generated_from_the_registry():
    gen = _load_generator()
    text = (DOCS / "methods.md").read_text(encoding="utf-8")
    assert gen.updated(text) == text, "docs/methods.md is stale: run python docs/methods_table.py"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert gen.updated_readme(readme) == readme, "README.md's methods table is stale: run python docs/methods_table.py"


def test_every_configuration_key_is_documented():
    source = (ROOT / "src" / "metascore" / "config" / "load.py").read_text(encoding="utf-8")
    doc = (DOCS / "configuration.md").read_text(encoding="utf-8")
    # every v.mapping(<data>, <where>, (<keys>)) call of the validator
    calls = re.findall(r'v\.mapping\([^,]+(?:\([^)]*\))?, (?:"([\w.]*)"|(where)),\s*\(([^)]*)\)', source)
    assert len(calls) >= 9
    for where, judge, keys in calls:
        for key in re.findall(r'"(\w+)"', keys):
            if judge:  # a judge's keys: rows of the judges table
                wanted = f"| `{key}` |"
            elif where == "":
                wanted = f"## `{key}`"
            else:
                wanted = f"`{where}.{key}`"
            assert wanted in doc, f"{wanted!r} is not in docs/configuration.md"
    for values in (FILTER_RULES, SELECTION_POLICIES, MISSING_POLICIES, TIE_BREAK_KEYS, STATISTICS):
        for value in values:
            assert f"`{value}`" in doc, f"{value!r} is not in docs/configuration.md"


@pytest.mark.parametrize("page, names", [
    ("inputs.md", FORMATS),
    ("outputs.md", ("scores.json", "scores.txt", "leaderboard.csv", "leaderboard.json", "detailed_results.html")),
])
def test_formats_and_output_files_are_documented(page, names):
    doc = (DOCS / page).read_text(encoding="utf-8")
    for name in names:
        assert f"`{name}`" in doc, f"{name!r} is not in docs/{page}"


def test_readme_points_to_the_docs_not_to_unshipped_notes():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/" in readme
    assert "SPEC.md" not in readme and "research" not in readme
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).is_file(), link


def test_the_template_readme_says_what_the_runner_does():
    """bundle_template/README.md's "How faithful" section names what `bundle run` offers
    today (both backends, both sandbox modes, both feeds, the limits) and only options the
    command has."""
    import contextlib
    import io

    from metascore.bundle.worker.local import SANDBOX_MODES
    from metascore.bundle.worker.backends import BACKENDS
    from metascore.cli import main

    text = (ROOT / "bundle_template" / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## How faithful the local run is"):]
    help_text = io.StringIO()
    with contextlib.redirect_stdout(help_text), pytest.raises(SystemExit):
        main(["bundle", "run", "--help"])
    options = set(re.findall(r"--[a-z][a-z-]+", help_text.getvalue()))
    named = set(re.findall(r"`(--[a-z][a-z-]+)", section))
    assert named and named <= options, named - options
    for needed in ("--backend docker", "--sandbox rewrite", "--feed all", "--network",
                   "--memory", "--submissions"):
        assert needed in section, needed
    assert {m for m in SANDBOX_MODES if m != "auto"} <= set(re.findall(r"\w+", section))
    assert set(BACKENDS) <= set(re.findall(r"\w+", section))
    assert "auto_migrate_to_this_phase" in section and "submission_rule" in section
    assert "Every submission runs in every phase" not in section


def test_placeholder_table_is_generated_from_the_worker():
    """docs/placeholders.md's table is what the worker's substitute() and mounts give."""
    from metascore.bundle.platform.placeholders import PLACEHOLDERS, STEPS, markdown_table, substitute

    doc = (DOCS / "placeholders.md").read_text(encoding="utf-8")
    table = markdown_table()
    assert table in doc, ("docs/placeholders.md is stale: paste "
                          "metascore.bundle.platform.placeholders.markdown_table() between its markers")
    rows = {line.split(" | ")[0].strip("| `"): line for line in table.splitlines()[2:]}
    assert list(rows) == list(PLACEHOLDERS)
    for name in PLACEHOLDERS:
        cells = rows[name].strip("|").split(" | ")[1:]
        for step, cell in zip(STEPS, cells, strict=True):
            assert cell.split("`")[1] == substitute(name, step.kind, step.is_scoring, step.ingestion_only)
    assert "[placeholders.md](placeholders.md)" in (DOCS / "README.md").read_text(encoding="utf-8")


def test_the_package_map_names_every_package_and_matches_the_tree():
    """docs/packages.md names every package and top-level module of src/metascore, and every
    path it names exists (a move or a new package updates the map)."""
    src = ROOT / "src" / "metascore"
    text = (DOCS / "packages.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([\w/]+(?:\.py|/))`", text))
    packages = {p.name + "/" for p in src.iterdir() if p.is_dir() and p.name != "__pycache__"}
    modules = {p.name for p in src.glob("*.py")}
    assert sorted(packages - named) == [], "docs/packages.md: name these packages"
    assert sorted(modules - named) == [], "docs/packages.md: name these modules"
    every = {p.relative_to(src).as_posix() for p in src.rglob("*.py") if "_programs" not in p.parts
             and p.name != "__init__.py"}
    names = {n.rsplit("/", 1)[-1] for n in named}
    assert sorted(m for m in every if m not in named and m.rsplit("/", 1)[-1] not in names) == [], (
        "docs/packages.md: name these modules (every module, not only every package)")
    missing = sorted(n for n in named if not (src / n).exists()
                     and not n.startswith(("scoring_program/", "ingestion_program/"))
                     and not (ROOT / n).exists()
                     and not any((pkg / n).exists() for pkg in src.iterdir() if pkg.is_dir()))
    assert missing == [], "docs/packages.md names paths that do not exist"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/packages.md" in readme[readme.index("## Layout"):]
