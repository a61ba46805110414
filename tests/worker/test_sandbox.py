"""The local backend's sandbox (bwrap with the worker's /app layout) and its rewrite fallback.

The fixture ``tests/data/bundles/v2_app_paths`` carries the traits of Codabench's public
example bundles: hard-coded ``/app/...`` paths, ``sys.path.append('/app/ingested_program')``
then ``from model import Model``, a legacy ``metadata`` file with ``$program``, ``$input``,
``$output``, ``$submission_program``, ``python`` and ``python3`` commands, a
``detailed_results.html`` in ``/app/output``, and a ``$shared`` placeholder in a step where
the worker mounts no ``/app/shared``.
"""

from __future__ import annotations

import os

import time
from pathlib import Path

import pytest

from bundle_backends import local_backend, options
from metascore.bundle.worker import local
from metascore.bundle.worker.backend import Mount, StepSpec
from metascore.bundle.worker.local import APP_PATH_HINT, LocalBackend
from metascore.bundle.runner import run_bundle
from metascore.errors import ConfigError
from repo_paths import TESTS

BUNDLE = TESTS / "data" / "bundles" / "v2_app_paths"
HOST_APP = Path("/app")


def scores(report):
    return {r.candidate: (r.status, r.scores) for r in report.results}


@pytest.mark.parametrize("backend", [pytest.param("local", id="local"),
                                     pytest.param("docker", id="docker", marks=pytest.mark.engine)])
def test_hard_coded_worker_paths_run_unchanged(backend, tmp_path):
    had_app = HOST_APP.exists()
    report = run_bundle(BUNDLE, tmp_path / "out", **options(backend))
    assert scores(report) == {"alice": ("Finished", {"accuracy": 1.0}), "bob": ("Finished", {"accuracy": 0.6})}
    for result in report.results:
        assert (result.scoring_output / "detailed_results.html").is_file()
    assert HOST_APP.exists() == had_app  # nothing written at the host's /app
    if backend == "local":  # $shared, not mounted in the prediction step: a folder of the run
        notes = list((tmp_path / "out" / "runs").rglob("note.txt"))
        assert len(notes) == 1 and "/.scratch/program/app/shared/" in str(notes[0])


def test_rewrite_mode_says_once_what_it_cannot_do(tmp_path):
    had_app = HOST_APP.exists()
    report = run_bundle(BUNDLE, tmp_path / "out", sandbox="rewrite")
    assert [r.status for r in report.results] == ["Failed", "Failed"]
    for result in report.results:  # the hard-coded /app paths are named as the cause
        assert APP_PATH_HINT in result.reason
        assert any(APP_PATH_HINT in note for note in result.prediction_problems)  # the sys.path import
    notices = [w for w in report.warnings if "rewrite mode" in w]
    assert len(notices) == 1 and "hard-coded /app/... path" in notices[0]
    # the unmounted $shared is rewritten into the run, never to the host's /app/shared
    assert HOST_APP.exists() == had_app
    notes = list((tmp_path / "out" / "runs").rglob("note.txt"))
    assert len(notes) == 1 and "/.scratch/program/app/shared/" in str(notes[0])


PROBE = """
import os, socket, subprocess, sys, time
print("cwd", os.getcwd())
print("python3", subprocess.run(["python3", "-c", "import sys; print(sys.executable)"],
                                capture_output=True, text=True).stdout.strip())
print("secret", os.environ.get("METASCORE_TEST_SECRET"))
print("env", sorted(os.environ))
for target in ("/etc/metascore-probe", sys.argv[1] + "/probe"):
    try:
        open(target, "w")
        print("wrote", target)
    except OSError as exc:
        print("refused", exc.errno)
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    print("network yes")
except OSError:
    print("network no")
open("/app/output/ok", "w").write("ok")
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.5); open('/app/output/late', 'w')"],
                 start_new_session=True)
"""


def test_sandbox_shows_the_worker_layout_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.setenv("METASCORE_TEST_SECRET", "token")
    program, output = tmp_path / "program", tmp_path / "output"
    program.mkdir(), output.mkdir()
    (program / "probe.py").write_text(PROBE)
    # a host folder the job can see but not write (not this checkout: it may live under /tmp,
    # which the sandbox replaces with the run's own folder)
    outside = Path(os.__file__).parent
    step = StepSpec("probe", f"python probe.py {outside}",
                    (Mount("/app/program", program), Mount("/app/output", output)),
                    scratch=tmp_path / "scratch")
    result = local_backend("bwrap").run(step)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "cwd /app/program"
    assert lines[1] == f"python3 {local.sys.executable}"  # python and python3: the chosen interpreter
    assert lines[2] == "secret None"
    assert lines[3] == "env ['HOME', 'LANG', 'PATH', 'PWD', 'PYTHONUNBUFFERED', 'TMPDIR']"
    assert lines[4:6] == ["refused 30", "refused 30"]  # read-only file system
    assert lines[6] == "network no"
    assert (output / "ok").read_text() == "ok"
    time.sleep(2.5)  # the job's last process was killed with it
    assert not (output / "late").exists()


@pytest.mark.parametrize("mode", ["bwrap", "rewrite"])
def test_missing_module_names_it_and_the_fix(mode, tmp_path):
    program = tmp_path / "program"
    program.mkdir()
    (program / "p.py").write_text("import sklearn_is_not_here\n")
    step = StepSpec("p", "python3 p.py", (Mount("/app/program", program),),
                    image="codalab/codalab-legacy:py37", scratch=tmp_path / "scratch")
    result = local_backend(mode).run(step)
    assert result.exit_code == 1
    assert "the program needs the Python module 'sklearn_is_not_here'" in result.stderr
    assert "metascore bundle env BUNDLE" in result.stderr


@pytest.mark.parametrize("mode", ["bwrap", "rewrite"])
def test_missing_module_hint_reads_a_traceback_printed_on_stdout(mode, tmp_path):
    """Issue 24: a program that prints its traceback on stdout gets the hint too."""
    program = tmp_path / "program"
    program.mkdir()
    (program / "p.py").write_text(
        "import sys, traceback\ntry:\n    import sklearn_is_not_here\nexcept ImportError:\n"
        "    traceback.print_exc(file=sys.stdout)\n    sys.exit(1)\n")
    step = StepSpec("p", "python3 p.py", (Mount("/app/program", program),),
                    image="codalab/codalab-legacy:py37", scratch=tmp_path / "scratch")
    result = local_backend(mode).run(step)
    assert result.exit_code == 1 and "No module named" in result.stdout
    assert "the program needs the Python module 'sklearn_is_not_here'" in result.stderr


def test_without_bwrap_auto_falls_back_and_bwrap_mode_refuses(monkeypatch):
    monkeypatch.setattr(local, "sandbox_available", lambda: (False, "bwrap is not installed"))
    backend = LocalBackend(sandbox="auto")
    assert backend.mode == "rewrite"
    assert backend.notice.startswith("local backend in rewrite mode (bwrap is not installed)")
    with pytest.raises(ConfigError, match="--sandbox bwrap: bwrap is not installed"):
        LocalBackend(sandbox="bwrap")
    with pytest.raises(ConfigError, match="unknown sandbox mode 'chroot'"):
        LocalBackend(sandbox="chroot")
    assert LocalBackend(sandbox="rewrite").notice.startswith("local backend in rewrite mode (--sandbox rewrite)")


def test_folders_only_their_owner_may_enter_still_run(tmp_path):
    """A bundle's program folder of mode 0700 with files of mode 0600 (kept by a copy or an
    extraction) is the job's own folder in the sandbox: it runs and reads them."""
    program, output = tmp_path / "program", tmp_path / "output"
    program.mkdir(mode=0o700), output.mkdir(mode=0o700)
    (program / "p.py").write_text("import sys; open('/app/output/x', 'w').write(open('data.txt').read())\n")
    (program / "data.txt").write_text("mine")
    for path in (program / "p.py", program / "data.txt"):
        path.chmod(0o600)
    step = StepSpec("p", "python3 p.py", (Mount("/app/program", program), Mount("/app/output", output)),
                    scratch=tmp_path / "scratch")
    result = local_backend("bwrap").run(step)
    assert result.exit_code == 0, result.stderr
    assert (output / "x").read_text() == "mine"
