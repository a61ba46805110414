"""A release a maintainer can run (issue 43): one version from one place, the workflows GitHub
accepts, the distributions PyPI accepts, and the runtime wheel auditwheel agrees with.

- the version is written in ``src/metascore/_version.py`` only: the package's metadata,
  ``metascore --version``, the ``runtime`` extra's pin (setup.py), the image's labels (the
  Dockerfile's ``VERSION`` check) and the release workflow's tag check read it there;
- ``.github/workflows/*.yml`` pass GitHub's workflow schema (``check-jsonschema
  --builtin-schema vendor.github-workflows``); CI runs ``.ci/run``; a ``v*`` tag publishes the
  sdist, the wheel and the runtime wheel by trusted publishing, and the image;
- ``python -m build`` makes an sdist and a wheel that ``twine check`` passes; each, installed
  into a fresh virtual environment (no site packages), runs the template competition;
- the runtime wheel, packed from a small stand-in tree whose one binary needs glibc 2.17,
  passes ``twine check`` and ``auditwheel show`` names its tag (the real build's wheel:
  ``tests/bundle/test_runtime.py``, with ``METASCORE_RUNTIME=1``).

The tools (build, twine, check-jsonschema, auditwheel) come with the ``test`` extra; a test
whose tool is missing skips with the reason, and fails under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
import yaml

import metascore
from metascore._version import __version__
from repo_paths import ROOT
from requirements import unavailable

WORKFLOWS = ROOT / ".github" / "workflows"


def _tool(name: str) -> str:
    """The command-line tool ``name`` next to this Python (the test extra), or on PATH."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.is_file() else shutil.which(name)
    if found is None:
        unavailable(f"{name} is not installed (pip install -e '.[test]' brings it)")
    return found


def _module(name: str) -> None:
    try:
        __import__(name)
    except ImportError:
        unavailable(f"the {name} package is not installed (pip install -e '.[test]' brings it)")


# ----------------------------------------------------------------------------- one version
def test_the_version_is_written_once_and_read_everywhere(capsys):
    from metascore.cli import main

    text = (ROOT / "src" / "metascore" / "_version.py").read_text(encoding="utf-8")
    assert f'__version__ = "{__version__}"' in text and metascore.__version__ == __version__
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'version = { attr = "metascore._version.__version__" }' in pyproject
    assert "\nversion =" not in pyproject.split("[tool.setuptools.dynamic]")[0]  # not written twice
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out == f"metascore {__version__}\n"
    setup = (ROOT / "setup.py").read_text(encoding="utf-8")
    assert 'f"metascore-runtime=={_version()}' in setup and __version__ not in setup
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert 'org.opencontainers.image.version="${VERSION}"' in dockerfile
    assert "is not the package version" in dockerfile
    assert f"## [{__version__}]" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def test_the_version_in_the_installed_metadata_and_the_runtime_extra():
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        meta = metadata("metascore")
    except PackageNotFoundError:
        pytest.skip("metascore is not installed (pip install -e .)")
    assert meta["Version"] == __version__
    pins = [r for r in meta.get_all("Requires-Dist") or [] if r.startswith("metascore-runtime")]
    assert pins and pins[0].startswith(f"metascore-runtime=={__version__};")
    assert 'extra == "runtime"' in pins[0] and 'sys_platform == "linux"' in pins[0]


# ----------------------------------------------------------------------------- workflows
def test_the_workflows_pass_github_s_workflow_schema():
    tool = _tool("check-jsonschema")
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert [f.name for f in files] == ["ci.yml", "release.yml"]
    proc = subprocess.run([tool, "--builtin-schema", "vendor.github-workflows", *map(str, files)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_schema_check_refuses_a_broken_workflow(tmp_path):
    tool = _tool("check-jsonschema")
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  test:\n    steps:\n      - run: bash .ci/run\n")  # no runs-on
    proc = subprocess.run([tool, "--builtin-schema", "vendor.github-workflows", str(broken)],
                          capture_output=True, text=True)
    assert proc.returncode != 0


def _steps(workflow: dict, job: str) -> list[dict]:
    return workflow["jobs"][job]["steps"]


def test_ci_runs_ci_run_and_a_tag_publishes_everything_by_trusted_publishing():
    ci = yaml.safe_load((WORKFLOWS / "ci.yml").read_text(encoding="utf-8"))
    assert any(s.get("run") == "bash .ci/run" for s in _steps(ci, "test"))
    release = yaml.safe_load((WORKFLOWS / "release.yml").read_text(encoding="utf-8"))
    assert release[True]["push"]["tags"] == ["v*"]  # yaml reads the key `on` as True
    runs = {job: " ".join(s.get("run", "") for s in _steps(release, job)) for job in release["jobs"]}
    assert "src/metascore/_version.py" in runs["version"] and "CHANGELOG.md" in runs["version"]
    assert "python -m build" in runs["dist"] and "twine check" in runs["dist"]
    assert "metascore bundle runtime build --wheel" in runs["runtime"] and "auditwheel show" in runs["runtime"]
    pypi = release["jobs"]["pypi"]
    assert pypi["permissions"] == {"id-token": "write"} and set(pypi["needs"]) == {"dist", "runtime"}
    publish = [s for s in pypi["steps"] if s.get("uses", "").startswith("pypa/gh-action-pypi-publish")]
    assert publish and "password" not in publish[0].get("with", {})  # no stored token
    image = [s for s in _steps(release, "image") if s.get("uses", "").startswith("docker/build-push-action")][0]
    assert image["with"]["build-args"] == "VERSION=${{ needs.version.outputs.version }}"
    assert "${{ needs.version.outputs.version }}" in image["with"]["tags"]


# ----------------------------------------------------------------------------- distributions
@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> Path:
    """The sdist and the wheel, as ``python -m build`` makes them (the wheel from the sdist)."""
    _module("build")
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    return out


def test_build_makes_an_sdist_and_a_wheel_that_twine_check_passes(dists):
    names = sorted(p.name for p in dists.iterdir())
    assert names == [f"metascore-{__version__}-py3-none-any.whl", f"metascore-{__version__}.tar.gz"]
    proc = subprocess.run([_tool("twine"), "check", "--strict", *map(str, dists.iterdir())],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with zipfile.ZipFile(dists / names[0]) as zf:
        assert "metascore/_programs/scoring_program/score.py" in zf.namelist()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_each_distribution_installs_into_a_fresh_venv_and_runs_the_template(dists, kind, tmp_path):
    """What a user does: a new virtual environment without this machine's packages, the
    distribution installed by pip (its dependencies from the index), the main job run."""
    dist = next(dists.glob("*.whl" if kind == "wheel" else "*.tar.gz"))
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(dist)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    where = subprocess.run([str(python), "-c", "import metascore; print(metascore.__file__)"],
                           capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(env)) and str(ROOT / "src") not in where
    version = subprocess.run([str(env / "bin" / "metascore"), "--version"], capture_output=True, text=True)
    assert version.stdout == f"metascore {__version__}\n"
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    run = subprocess.run([str(env / "bin" / "metascore"), "bundle", "run", str(ROOT / "bundle_template"),
                          "--out", str(tmp_path / "runs")], capture_output=True, text=True, cwd=tmp_path,
                         env={**clean, "PATH": f"{env / 'bin'}:{clean.get('PATH', '')}"})
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    assert "13 of 13 runs finished" in run.stdout
    board = (tmp_path / "runs" / "final" / "leaderboard.csv").read_text(encoding="utf-8").splitlines()
    assert [row.split(",")[3] for row in board[1:3]] == ["alice-8", "carol-10"]  # tied first, alice earlier


# ----------------------------------------------------------------------------- the runtime wheel
_STANDIN_C = """
#include <time.h>
/* clock_gettime moved into libc in glibc 2.17: this library needs GLIBC_2.17, no newer */
double standin_now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec; }
"""


@pytest.fixture(scope="module")
def standin_wheel(tmp_path_factory) -> Path:
    """The runtime wheel packed by ``write_wheel`` from a stand-in tree: one shared library
    compiled here (needing glibc 2.17's ``clock_gettime``) as the interpreter and as an
    extension module, one module, its LZMA zip and a manifest."""
    from metascore.bundle.runtime.store import zip_runtime
    from metascore.bundle.runtime.wheel import write_wheel

    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        unavailable("no C compiler (gcc) to make the stand-in runtime's binary (apt-get install gcc)")
    root = tmp_path_factory.mktemp("standin")
    (root / "standin.c").write_text(_STANDIN_C)
    tree = root / "runtime"
    lib = tree / "lib" / "python3.13"
    (lib / "lib-dynload").mkdir(parents=True)
    (tree / "bin").mkdir()
    so = lib / "lib-dynload" / "_standin.cpython-313-x86_64-linux-gnu.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(so), str(root / "standin.c")], check=True)
    shutil.copy(so, tree / "bin" / "python3.13")
    (lib / "os.py").write_text("# the standard library\n")
    zip_runtime(tree, root / "runtime.zip")
    manifest = {"key": "0123456789abcdef", "python": "3.13", "packages": ["numpy==2.2.6"], "glibc": "2.17"}
    return write_wheel(tree, root / "runtime.zip", manifest, root / "dist", __version__)


def test_the_runtime_wheel_passes_twine_check(standin_wheel):
    proc = subprocess.run([_tool("twine"), "check", "--strict", str(standin_wheel)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_auditwheel_show_agrees_with_the_runtime_wheel_s_tag(standin_wheel):
    proc = subprocess.run([_tool("auditwheel"), "show", str(standin_wheel)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = " ".join(proc.stdout.split())
    assert 'is consistent with the following platform tag: "manylinux_2_17_x86_64"' in said, said


def test_the_installed_runtime_wheel_is_found_where_pip_put_it(standin_wheel, tmp_path):
    """pip installs it like any wheel; metascore finds it (folder, manifest, version)."""
    target = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check",
                           "--target", str(target), str(standin_wheel)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code = ("import json; from metascore.bundle.runtime.store import installed_runtime; r = installed_runtime(); "
            "print(json.dumps([r.source, r.version, r.key, str(r.zip), r.zip.is_file()]))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(ROOT / "src")])}
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout) == ["wheel", __version__, "0123456789abcdef",
                                        str(target / "metascore_runtime" / "runtime.zip"), True]


@pytest.mark.engine
@pytest.mark.slow
def test_the_image_s_labels_say_the_version():
    from engine import build_image
    from requirements import require_engine

    from metascore.bundle.worker.docker_backend import connect

    require_engine()
    labels = connect().images.get(build_image()).labels or {}
    assert labels.get("org.opencontainers.image.version") == __version__
    assert labels.get("org.opencontainers.image.title") == "metascore"
