""".ci/run: under CI=true a missing engine or browser fails the run before the tests start.

The script runs in a copy of the repository layout with stand-in commands on ``PATH``
(``chromium``, ``apt-get``, the engine setup script, ``pip`` and ``python``), so nothing is
installed and the real test suite is not run again.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from repo_paths import ROOT

BASH = shutil.which("bash")

pytestmark = pytest.mark.skipif(BASH is None, reason=".ci/run is a bash script")


def _tool(path: Path, body: str) -> None:
    path.write_text(f"#!{BASH}\n{body}\n")
    path.chmod(0o755)


def _run(tmp_path: Path, *, ci: bool, chromium: bool, engine_ok: bool | None,
         tests_exit: int = 0, bwrap: bool = True, gcc: bool = True):
    """Run .ci/run; ``engine_ok`` None: there is no engine setup script."""
    repo, bin_dir, calls = tmp_path / "repo", tmp_path / "bin", tmp_path / "calls.log"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(ROOT / ".ci" / "run", repo / ".ci" / "run")
    bin_dir.mkdir()
    for tool in ("bash", "dirname", "tail"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    if chromium:
        _tool(bin_dir / "chromium", "exit 0")
    if bwrap:
        _tool(bin_dir / "bwrap", "exit 0")
    if gcc:
        _tool(bin_dir / "gcc", "exit 0")
    _tool(bin_dir / "apt-get", "exit 100")  # the install fails
    _tool(bin_dir / "pip", f'echo "pip $*" >> {calls}')
    _tool(bin_dir / "python", f'echo "python $*" >> {calls}; exit {tests_exit}')
    (tmp_path / "shared" / "tools").mkdir(parents=True)
    if engine_ok is not None:
        _tool(tmp_path / "shared" / "tools" / "container-engine.sh",
              "exit 0" if engine_ok else "echo 'podman: cannot start the API service'; exit 3")
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    if ci:
        env["CI"] = "true"
    proc = subprocess.run([BASH, str(repo / ".ci" / "run")], env=env, capture_output=True,
                          text=True, timeout=60)
    return proc, calls.read_text().splitlines() if calls.exists() else []


def test_engine_setup_failure_fails_under_ci(tmp_path):
    proc, calls = _run(tmp_path, ci=True, chromium=True, engine_ok=False)
    assert proc.returncode == 1
    assert "ci: FAILED: container engine setup failed" in proc.stderr
    assert "podman: cannot start the API service" in proc.stdout  # the log's end is shown
    assert calls == []  # the tests did not start


def test_chromium_install_failure_fails_under_ci(tmp_path):
    proc, calls = _run(tmp_path, ci=True, chromium=False, engine_ok=True)
    assert proc.returncode == 1
    assert "ci: FAILED: chromium could not be installed" in proc.stderr
    assert calls == []


def test_bwrap_install_failure_fails_under_ci(tmp_path):
    proc, calls = _run(tmp_path, ci=True, chromium=True, engine_ok=True, bwrap=False)
    assert proc.returncode == 1
    assert "ci: FAILED: bubblewrap could not be installed" in proc.stderr
    assert calls == []


def test_compiler_install_failure_fails_under_ci(tmp_path):
    proc, calls = _run(tmp_path, ci=True, chromium=True, engine_ok=True, gcc=False)
    assert proc.returncode == 1
    assert "ci: FAILED: gcc could not be installed" in proc.stderr
    assert calls == []


@pytest.mark.skipif(Path("/var/run/docker.sock").exists(), reason="this host has a Docker socket")
def test_no_engine_at_all_fails_under_ci(tmp_path):
    proc, calls = _run(tmp_path, ci=True, chromium=True, engine_ok=None)
    assert proc.returncode == 1
    assert "ci: FAILED: no container engine" in proc.stderr
    assert calls == []


def test_outside_ci_the_tests_run_and_skip(tmp_path):
    proc, calls = _run(tmp_path, ci=False, chromium=False, engine_ok=False, tests_exit=0)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("the tests that need it will skip") == 2
    assert calls == ["pip install -q -e .[test,docker,dask]", "python -m pytest -q -n 2 --dist loadfile"]


def test_under_ci_with_everything_the_tests_decide(tmp_path):
    proc, calls = _run(tmp_path, ci=True, chromium=True, engine_ok=True, tests_exit=3)
    assert proc.returncode == 3 and "ci: FAILED" not in proc.stderr
    assert calls[-1] == "python -m pytest -q -n 2 --dist loadfile"
