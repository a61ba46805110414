"""``metascore bundle env``: the competition image's Python packages in a cached virtual
environment, used by the local backend for that image (:mod:`metascore.bundle.worker.pyenv`).

The environments here are built offline and fast: no packages, or this Python's packages
(``--system-site-packages``); what is checked is that the environment is built, cached,
recorded for the image and used by ``python`` and ``python3`` in both local modes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bundle_backends import SANDBOX_MODES, local_backend
from metascore.bundle.worker.backend import Mount, StepSpec
from metascore.bundle.worker.pyenv import IMAGE_PACKAGES, build_env, interpreter_for, packages_for
from metascore.cli import main
from metascore.errors import ConfigError
from repo_paths import TESTS

BUNDLE = TESTS / "data" / "bundles" / "v2_app_paths"  # docker_image: ...:py37


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("METASCORE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_package_lists_ship_for_the_common_images():
    assert set(IMAGE_PACKAGES) == {f"codalab/codalab-legacy:{tag}" for tag in ("py37", "py39", "py312")}
    for packages in IMAGE_PACKAGES.values():
        names = {p.split("=")[0].split(">")[0].split("<")[0].lower() for p in packages}
        assert {"numpy", "scipy", "scikit-learn", "pandas", "pyyaml"} <= names
    assert packages_for("docker.io/codalab/codalab-legacy:py312") == IMAGE_PACKAGES["codalab/codalab-legacy:py312"]
    assert packages_for("codalab/codalab-legacy:gpu") is None and packages_for(None) is None


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_built_environment_runs_python_and_python3_for_its_image(mode, cache, tmp_path):
    backend = local_backend(mode)  # skips (fails under CI) before building when bwrap is missing
    env = build_env("example/image:1", (), system_site_packages=True)
    assert env.parent == cache / "envs" and (env / "requirements.txt").read_text() == "\n"
    assert interpreter_for("example/image:1") == str(env / "bin" / "python")
    assert interpreter_for("docker.io/example/image:1") == str(env / "bin" / "python")
    assert interpreter_for("other/image:1") is None
    assert build_env("example/image:1", (), system_site_packages=True) == env  # cached
    program = tmp_path / "program"
    program.mkdir()
    (program / "p.py").write_text(
        "import subprocess, sys\nprint(sys.prefix)\n"
        "print(subprocess.run(['python', '-c', 'import sys; print(sys.prefix)'], capture_output=True, "
        "text=True).stdout.strip())\nimport yaml\n"  # this Python's packages, through the system site
    )
    step = StepSpec("p", "python3 /app/program/p.py", (Mount("/app/program", program),),
                    image="example/image:1", scratch=tmp_path / "scratch")
    result = backend.run(step)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [str(env), str(env)]
    other = StepSpec("p", "python3 -c 'import sys; print(sys.prefix)'", step.mounts, image="other/image:1",
                     scratch=tmp_path / "scratch2")
    assert backend.run(other).stdout.strip() == sys.prefix  # no environment for it: this Python


def test_python_env_option_takes_a_folder_or_an_interpreter(cache, tmp_path):
    env = build_env("example/image:2", (), system_site_packages=True)
    assert local_backend("rewrite", python=env).python == str(env / "bin" / "python")
    assert local_backend("rewrite", python=env / "bin" / "python").python == str(env / "bin" / "python")
    with pytest.raises(ConfigError, match="neither a Python interpreter nor a virtual environment"):
        local_backend("rewrite", python=tmp_path)


def test_cli_builds_from_a_requirements_file_and_bundle_run_uses_it(cache, tmp_path, capsys):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("# nothing beyond this Python's packages\n\n")
    code = main(["bundle", "env", str(BUNDLE), "--requirements", str(requirements), "--system-site-packages"])
    out = capsys.readouterr().out
    assert code == 0 and "environment for codalab/codalab-legacy:py37:" in out
    interpreter = interpreter_for("codalab/codalab-legacy:py37")
    assert interpreter is not None and interpreter in out
    assert main(["bundle", "run", str(BUNDLE), "--out", str(tmp_path / "out"), "--sandbox", "rewrite"]) in (0, 1)
    assert (f"local backend (rewrite mode): python runs {interpreter} (the environment built for "
            "codalab/codalab-legacy:py37)") in capsys.readouterr().out


def test_cli_without_a_package_list_asks_for_requirements(cache, tmp_path, capsys):
    code = main(["bundle", "env", str(BUNDLE), "--image", "someone/custom:1"])
    assert code == 1
    assert "no package list ships for the image 'someone/custom:1'" in capsys.readouterr().err


def test_system_site_packages_from_a_virtual_environment_are_that_environments(cache, tmp_path):
    """Run from a virtual environment (as metascore usually is), --system-site-packages gives
    the new environment the packages of that environment, not only the base interpreter's."""
    import subprocess

    parent = tmp_path / "parent"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(parent)],
                   check=True)
    python = str(parent / "bin" / "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "metascore_parent_marker.py").write_text("WHERE = 'the parent environment'\n")
    env = build_env("example/image:4", (), system_site_packages=True, python=python)
    probe = "import metascore_parent_marker, yaml; print(metascore_parent_marker.WHERE)"
    out = subprocess.run([str(env / "bin" / "python"), "-c", probe], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "the parent environment"
    plain = build_env("example/image:5", (), python=python)  # without the option: neither
    out = subprocess.run([str(plain / "bin" / "python"), "-c", "import metascore_parent_marker"],
                         capture_output=True, text=True)
    assert out.returncode != 0 and "No module named 'metascore_parent_marker'" in out.stderr
