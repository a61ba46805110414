"""What a backend can do is read from the backend (issue 44): its ``Capabilities`` and its
``check_run``, never its name or its type; the backends are a table by ``--backend`` name.

A stand-in backend put into the table under a name of its own gets what its declaration
says: refused for ``--submissions`` when its sandbox is missing, its image probed when its
programs run in the image, its own check before a run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from metascore.bundle.runner import meta_image_report, run_bundle
from metascore.bundle.schema.load import load_competition
from metascore.bundle.site.server import Site
from metascore.bundle.worker.backend import Capabilities, StepResult
from metascore.bundle.worker.backends import BACKENDS, DEFAULT_BACKEND, get_backend
from metascore.bundle.worker.limits import Limits
from metascore.bundle.worker.local import LocalBackend
from metascore.errors import ConfigError
from repo_paths import ROOT

TEMPLATE = ROOT / "bundle_template"
SRC = ROOT / "src" / "metascore"


class _StandIn:
    """A backend that declares what it can do, records the steps it is asked to run and
    answers each with ``result``."""

    name = "stand-in"
    notice = ""

    def __init__(self, capabilities: Capabilities, refuse: str = "",
                 result: StepResult = StepResult(0, False, "Python 3.12.3; glibc 2.36, x86_64\n", "", 0.1)):
        self.capabilities, self.refuse, self.result = capabilities, refuse, result
        self.limits = Limits()
        self.steps: list = []
        self.checked: list = []

    def describe(self, image):
        return "stand-in backend"

    def check_run(self, out, image):
        self.checked.append((out, image))
        if self.refuse:
            raise ConfigError(self.refuse)

    def run(self, step):
        self.steps.append(step)
        return self.result

    def run_many(self, steps, time_limit):
        return [self.run(s) for s in steps]


@pytest.fixture
def stand_in(monkeypatch):
    """Put a stand-in into the table of backends; ``stand_in(backend)`` registers it."""
    def register(backend: _StandIn) -> str:
        monkeypatch.setitem(BACKENDS, backend.name, lambda **_: backend)
        return backend.name
    return register


def test_the_table_makes_each_backend_by_its_name():
    assert list(BACKENDS) == ["local", "docker"] and DEFAULT_BACKEND == "local"
    local = get_backend("local", sandbox="rewrite")
    assert isinstance(local, LocalBackend) and local.name == "local"
    assert local.capabilities == Capabilities(runs_image=False)  # asked for rewrite: nothing missing
    with pytest.raises(ConfigError, match="unknown backend 'podman'; choose one of local, docker"):
        get_backend("podman")


def test_the_docker_backend_declares_that_its_programs_run_in_the_image():
    from metascore.bundle.worker.docker_backend import DockerBackend

    assert DockerBackend.capabilities == Capabilities(runs_image=True, sandbox_missing="")


def test_a_missing_sandbox_refuses_foreign_submissions_whatever_the_backend(stand_in, tmp_path):
    name = stand_in(_StandIn(Capabilities(runs_image=False, sandbox_missing="no sandbox on this machine")))
    with pytest.raises(ConfigError, match=r"^--submissions: the local sandbox cannot run here "
                                          r"\(no sandbox on this machine\)"):
        run_bundle(TEMPLATE, tmp_path / "out", backend=name, submissions=TEMPLATE / "sample_submissions")
    assert not (tmp_path / "out").exists()  # refused before anything is written


def test_every_backend_checks_the_run_before_it_starts(stand_in, tmp_path):
    backend = _StandIn(Capabilities(runs_image=True), refuse="stand-in: cannot write there")
    name = stand_in(backend)
    with pytest.raises(ConfigError, match="^stand-in: cannot write there$"):
        run_bundle(TEMPLATE, tmp_path / "out", backend=name)
    assert backend.checked == [(tmp_path / "out", "codalab/codalab-legacy:py312")]
    assert backend.steps == []


def _filled(target: Path, key) -> None:
    """A meta-scoring program as the runner fills one, in small."""
    target.mkdir(parents=True)
    (target / "metadata.yaml").write_text("command: python3 /app/program/score.py /app/input /app/output\n")
    (target / "score.py").write_text("")


def test_a_backend_that_runs_the_image_gets_it_probed_whatever_its_name(tmp_path):
    comp = load_competition(TEMPLATE)
    said: list[str] = []
    in_image = _StandIn(Capabilities(runs_image=True))
    site = Site(comp, tmp_path, in_image, image=None, fill_meta_program=_filled, log=said.append)
    assert meta_image_report(site, in_image, comp.docker_image, said.append) == []
    assert [s.name for s in in_image.steps] == ["image probe"]
    assert in_image.steps[0].image == comp.docker_image
    assert said[-1].startswith("[*] the meta-scoring program runs in codalab/codalab-legacy:py312")
    here = _StandIn(Capabilities(runs_image=False))
    said.clear()
    site = Site(comp, tmp_path / "here", here, image=None, fill_meta_program=_filled, log=said.append)
    assert meta_image_report(site, here, comp.docker_image, said.append) == []
    assert here.steps == [] and said[-1].startswith("[*] note: the local backend runs the meta-scoring program")


def _tests_a_backend_by_name_or_type(tree: ast.AST) -> list[int]:
    """Lines that compare a backend's ``name`` with a backend's name, read it with
    ``getattr``, or ask ``isinstance(..., LocalBackend / DockerBackend)``."""
    names = set(BACKENDS)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Attribute) and s.attr in ("name", "mode") for s in sides) and any(
                    isinstance(s, ast.Constant) and s.value in names for s in sides):
                found.append(node.lineno)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
            if any(isinstance(n, ast.Name) and n.id.endswith("Backend") for n in ast.walk(node.args[1])):
                found.append(node.lineno)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr" and any(
                isinstance(a, ast.Constant) and a.value == "name" for a in node.args[1:2]):
            found.append(node.lineno)
    return found


def test_no_module_tests_a_backend_by_its_name_or_type():
    """Outside the backends themselves, what a backend can do is read from its declaration."""
    own = {SRC / "bundle" / "worker" / "local.py", SRC / "bundle" / "worker" / "docker_backend.py"}
    found = []
    for path in sorted([*(SRC / "bundle").rglob("*.py"), *(SRC / "cli").rglob("*.py")]):
        if path not in own:
            found += [f"{path.relative_to(SRC)}:{line}"
                      for line in _tests_a_backend_by_name_or_type(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == []
    probe = ast.parse("if backend.name == 'local' or isinstance(engine, LocalBackend) "
                      "or getattr(backend, 'name', '') != 'docker': pass")
    assert len(_tests_a_backend_by_name_or_type(probe)) == 3  # the scan finds each form
