"""Nothing a submission or a zip does reaches the host (issue 23), on every backend that can
run here: the sandbox as root and as another user, the Docker backend, and what the rewrite
mode still guarantees.

The submissions under ``tests/data/bundles/hostile/escapes`` each try one way out, the way a
hostile participant would: links planted where the runner writes after the job, root's
capabilities, processes and memory in sessions of their own, ``/dev/shm``, the other
writable mounts, reading the host (a secret in the runner's home, the bundle's answer key
beside ``--out``, the other candidates' reference data), a prediction that is a link to the
answer key, a daemon. Two zips are made here: a ladder of links that writes above the
extraction folder, and a damaged one. Each attack prints ``ESCAPE: ...`` when it gets
through and ``held: ...`` when it is stopped. The run happens in a folder of the runner's
home, not under ``/tmp`` (which the sandbox replaces anyway).
"""

from __future__ import annotations

import io
import os
import shutil
import stat
import subprocess
import tempfile
import time
import warnings
import zipfile
from pathlib import Path

import pytest

from bundle_backends import options, require
from metascore.bundle.worker import local
from metascore.bundle.archive import safe_extract
from metascore.bundle.worker.backend import Mount
from metascore.bundle.worker.limits import Limits
from metascore.bundle.runner import run_bundle
from metascore.bundle.worker.sandbox import bwrap_argv, python_wrappers, sandbox_env, visible_paths
from metascore.errors import ConfigError, InputError
from repo_paths import TESTS
from requirements import require_public_python

HOSTILE = TESTS / "data" / "bundles" / "hostile"
LIMITS = Limits(memory=256 << 20, processes=50, disk=20 << 20, log=1 << 20)
PROCESSES = "Process limit exceeded: the job started more than 50 processes at once (change it with --max-processes)"
MEMORY = "Memory limit exceeded: the job used more than 256m of memory (change it with --memory)"
DISK = "Disk limit exceeded: the job wrote more than 20m under its output (change it with --disk-limit)"


def link_zip(path: Path, members: list[tuple[str, str | bytes]]) -> Path:
    """A zip of ``(name, link target)`` (str) and ``(name, file content)`` (bytes) members."""
    with zipfile.ZipFile(path, "w") as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a name twice is the point of some
        for name, value in members:
            info = zipfile.ZipInfo(name)
            if isinstance(value, str):
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                zf.writestr(info, value)
            else:
                info.external_attr = (stat.S_IFREG | 0o644) << 16
                zf.writestr(info, value)
    return path


def ladder_zip(path: Path, levels: int) -> Path:
    """Links that each pass the check made when they are created, then a file member written
    through them ``levels`` folders above the extraction folder: every link names one that
    does not exist yet (``t -> L4/PWNED``, ``L4 -> L3/..``, ..., ``L1 -> d/..``, ``d -> .``)."""
    links = [("t", f"L{levels}/PWNED")]
    links += [(f"L{k}", f"L{k - 1}/..") for k in range(levels, 1, -1)]
    links += [("L1", "d/.."), ("d", ".")]
    return link_zip(path, links + [("t", b"written outside the archive\n")])


def damaged_zip(path: Path, folder: Path) -> Path:
    """A zip of ``folder`` whose first file's bytes were changed (its CRC no longer matches)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as zf:
        for file in sorted(folder.iterdir()):
            zf.write(file, file.name)
    data = bytearray(buffer.getvalue())
    first = sorted(folder.iterdir())[0].read_bytes()
    at = bytes(data).index(first)  # stored: the content lies in the archive as it is
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))
    return path


@pytest.fixture
def home_dir():
    """A folder in the runner's home (outside /tmp), removed afterwards."""
    work = Path(tempfile.mkdtemp(prefix=".metascore-hostile-", dir=Path.home()))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ----------------------------------------------------------------------------- the zips
def test_a_ladder_of_links_writes_nothing_outside(tmp_path):
    dest = tmp_path / "a" / "b" / "dest"
    for levels in (1, 3):
        with pytest.raises(InputError, match="comes twice"):
            safe_extract(ladder_zip(tmp_path / f"ladder{levels}.zip", levels), dest)
    # without the file member: the links alone lead outside, through one another
    links = link_zip(tmp_path / "links.zip", [("t", "L2/x"), ("L2", "L1/.."), ("L1", "d/.."), ("d", ".")])
    with pytest.raises(InputError, match="points outside the archive"):
        safe_extract(links, dest)
    # a file under a link of the archive, a link leading to another that leaves
    under = link_zip(tmp_path / "under.zip", [("d", "."), ("d/f", b"x")])
    with pytest.raises(InputError, match="lies under a symbolic link"):
        safe_extract(under, dest)
    chain = link_zip(tmp_path / "chain.zip", [("a", "b"), ("b", "../..")])
    with pytest.raises(InputError, match="points outside the archive"):
        safe_extract(chain, dest)
    assert not list(tmp_path.rglob("PWNED")) and not dest.exists()
    assert sorted(p.name for p in (tmp_path / "a" / "b").iterdir()) == []  # no extraction left
    # links that stay inside are kept
    fine = link_zip(tmp_path / "fine.zip", [("data/x.txt", b"1"), ("y.txt", "data/x.txt"), ("here", "data")])
    safe_extract(fine, dest)
    assert (dest / "y.txt").read_text() == "1" and os.readlink(dest / "here") == "data"


def test_a_damaged_zip_is_refused_with_its_member(tmp_path):
    with pytest.raises(InputError, match=r"member 'main.py' cannot be read .*damaged"):
        safe_extract(damaged_zip(tmp_path / "bad.zip", HOSTILE / "sample_submissions" / "good"), tmp_path / "x")
    assert not (tmp_path / "x").exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".extract")]


# ----------------------------------------------------------------------------- the run
def run_escapes(work: Path, backend: str, names: list[str], **kwargs):
    """The hostile bundle with the escape submissions ``names`` (and good, and the two zips)."""
    shutil.copytree(HOSTILE, work / "bundle", ignore=shutil.ignore_patterns("escapes"))
    subs = work / "subs"
    subs.mkdir()
    for name in names:
        shutil.copytree(HOSTILE / "escapes" / name, subs / name)
    shutil.copytree(HOSTILE / "sample_submissions" / "good", subs / "good")
    ladder_zip(subs / "ladder.zip", 4)  # from out/cache/submissions/<extraction>: 4 up is `work`
    damaged_zip(subs / "damaged.zip", HOSTILE / "sample_submissions" / "good")
    (work / "canary").write_text("untouched")
    (work / "secret").write_text("the runner's secret")
    report = run_bundle(work / "bundle", work / "out", submissions=subs, limits=LIMITS, **kwargs,
                        **options(backend))
    return report, {r.candidate: r for r in report.results if r.phase == "Development"}


def log(result, name="stdout.txt") -> str:
    path = Path(result.run_dir) / "prediction" / name
    return path.read_text() if path.is_file() else ""


ALL = ["metalink", "caps", "setsid_procs", "setsid_memory", "shm", "diskmounts", "reader", "predlink", "daemon"]


@pytest.mark.slow
@pytest.mark.parametrize("backend", [pytest.param("local", id="local"),
                                     pytest.param("docker", id="docker", marks=pytest.mark.engine)])
def test_nothing_a_submission_does_reaches_the_host(backend, home_dir, monkeypatch):
    require(backend)
    monkeypatch.setenv("METASCORE_TEST_SECRET", "token")
    report, got = run_escapes(home_dir, backend, ALL)
    time.sleep(4)  # the daemon would have written by now
    for name in ALL:
        assert "ESCAPE" not in log(got[name]), (name, log(got[name]))
    assert "held: effective capabilities 0x0" in log(got["caps"])
    assert "held: the parent's environment" in log(got["daemon"])
    assert "held: /dev/shm refused more after" in log(got["shm"])
    assert log(got["reader"]).count("held:") >= 3  # the bundle, a host folder, --out
    if backend == "local":  # a user of its own, not root: the host's root-only files stay closed
        assert "uid 0" not in log(got["caps"]) and "held: /etc/shadow" in log(got["reader"])

    assert (home_dir / "canary").read_text() == "untouched"
    assert not list(home_dir.rglob("PWNED")) and not list(home_dir.rglob("daemon-was-here"))
    assert not [p for p in home_dir.iterdir() if p.name not in ("bundle", "subs", "out", "canary", "secret")]

    status = {name: (r.status, r.status_details) for name, r in got.items()}
    assert status["good"] == ("Finished", "") and got["good"].scores == {"score": 0.9}
    for name in ("metalink", "caps", "shm", "reader", "daemon"):
        assert status[name] == ("Finished", ""), (name, got[name].reason)
    assert "held: " in log(got["setsid_procs"]) or status["setsid_procs"] == ("Failed", PROCESSES)
    if backend == "local":  # the job's forks are refused past 50 (a container's too) or it is killed
        assert status["setsid_memory"] == ("Failed", MEMORY), got["setsid_memory"].reason
    else:  # the engine's OOM killer ends a child: the job goes on with one block
        assert "held: 1 x 200 MB alive at once" in log(got["setsid_memory"])
    assert status["diskmounts"] == ("Failed", DISK), got["diskmounts"].reason
    # the link to the answer key is not passed on: no score of 1.0
    assert status["predlink"][0] == "Failed"
    assert any("pred.txt (a link to /app/input/ref/truth.txt, outside the folder)" in w
               for w in got["predlink"].warnings)
    # the zips: that submission fails, with why; the others ran
    assert status["ladder"][0] == "Failed" and "comes twice" in got["ladder"].reason
    assert status["damaged"][0] == "Failed" and "cannot be read" in got["damaged"].reason
    assert report.meta is not None and report.meta.status == "Finished", report.meta.reason


def test_the_sandbox_run_by_another_user_holds_too():
    """The sandbox as an unprivileged runner arranges it (bwrap in a user namespace, the job
    ``nobody``): run here through ``setpriv`` as a user with no home and no rights."""
    require("local")
    if os.geteuid() != 0:
        pytest.skip("needs root to become another user; the other tests run as this one already")
    uid, python = 4242, "/usr/bin/python3"
    if not os.access(python, os.X_OK) or not shutil.which("setpriv"):
        pytest.skip("needs /usr/bin/python3 and setpriv (util-linux)")
    work = Path(tempfile.mkdtemp(prefix="metascore-user-", dir="/var/tmp"))
    try:
        for sub in ("app", "tmp", "bin", "program", "output"):
            (work / sub).mkdir()
        shutil.copy(HOSTILE / "escapes" / "caps" / "main.py", work / "program" / "main.py")
        python_wrappers(work / "bin", python)
        for path in [work, *work.rglob("*")]:
            os.chown(path, uid, uid, follow_symlinks=False)
        mounts = (Mount("/app/program", work / "program"), Mount("/app/output", work / "output"))
        probe = "import os; print('uid', os.getuid()); print(sorted(os.listdir('/')))"
        argv = bwrap_argv([python, "-c", probe + "; exec(open('main.py').read())", "/app/output"],
                          mounts, "/app/program", sandbox_env({}), work, bwrap=shutil.which("bwrap"),
                          visible=visible_paths(python))
        proc = subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv],
                              capture_output=True, text=True, timeout=120, cwd=work,
                              env={"PATH": "/usr/bin:/bin"})
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert lines[0] == "uid 65534" and "root" not in lines[1] and "home" not in lines[1], lines
        assert "ESCAPE" not in proc.stdout and "held: effective capabilities 0x0" in proc.stdout, proc.stdout
        assert (work / "output" / "pred.txt").read_text() == "0.5"
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ----------------------------------------------------------------------------- rewrite mode
def test_rewrite_mode_must_be_asked_for_foreign_submissions(home_dir, monkeypatch):
    local.sandbox_available.cache_clear()
    monkeypatch.setattr(local, "sandbox_available", lambda: (False, "bwrap is not installed"))
    (home_dir / "subs").mkdir()
    with pytest.raises(ConfigError, match=r"--submissions: the local sandbox cannot run here \(bwrap is not "
                                          r"installed\).*install bubblewrap.*--backend docker.*--sandbox rewrite"):
        run_bundle(HOSTILE, home_dir / "out", submissions=home_dir / "subs")
    assert not (home_dir / "out").exists()


@pytest.fixture
def shared_dir():
    """A folder any user may enter (not list): the rewrite mode's own users reach --out there."""
    work = Path(tempfile.mkdtemp(prefix=".metascore-rewrite-", dir="/var/tmp"))
    work.chmod(0o711)
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_rewrite_mode_keeps_no_process_and_no_secret(home_dir, shared_dir, monkeypatch):
    """Run by root, the rewrite mode runs ``--submissions`` each as a user of its own, with no
    capability (issue 42, 4; the hostile property test's ``root_job`` tries the rest); run
    by another user, as that user. Either way no process outlives its job."""
    root = os.geteuid() == 0
    work = shared_dir if root else home_dir
    monkeypatch.setenv("METASCORE_TEST_SECRET", "token")
    shutil.copytree(HOSTILE, work / "bundle", ignore=shutil.ignore_patterns("escapes", "sample_submissions"))
    subs = work / "subs"
    for name in ("daemon", "setsid_procs", "caps"):
        shutil.copytree(HOSTILE / "escapes" / name, subs / name)
    shutil.copytree(HOSTILE / "sample_submissions" / "good", subs / "good")
    report = run_bundle(work / "bundle", work / "out", submissions=subs, sandbox="rewrite", limits=LIMITS,
                        python_env=require_public_python() if root else None)
    got = {r.candidate: r for r in report.results if r.phase == "Development"}
    time.sleep(4)
    assert "held: the parent's environment" in log(got["daemon"])
    assert got["daemon"].status == "Finished" and not list(work.rglob("daemon-was-here"))
    # sessions of their own are still the job's: counted (or, its own user's, refused), and killed with it
    assert "held: " in log(got["setsid_procs"]) or \
        (got["setsid_procs"].status, got["setsid_procs"].status_details) == ("Failed", PROCESSES)
    notice = [w for w in report.warnings if "rewrite mode" in w]
    assert len(notice) == 1 and got["good"].scores == {"score": 0.9}
    if root:  # no capability, and the host's root-only files stay closed
        assert "each job runs as a user of its own" in notice[0] and "not isolated otherwise" in notice[0]
        assert "held: effective capabilities 0x0" in log(got["caps"]) and "uid 0" not in log(got["caps"])
    else:
        assert "as your user" in notice[0]


def test_rewrite_mode_as_root_refuses_what_its_users_cannot_reach(shared_dir):
    """The jobs' own user must run the Python environment and enter --out: else the run is
    refused before anything runs, naming what and what to do."""
    if os.geteuid() != 0:
        pytest.skip("the rewrite mode runs jobs as users of their own only when run by root")
    python = require_public_python()
    closed = shared_dir / "closed"
    closed.mkdir(mode=0o700)
    (closed / "python3").symlink_to(python)
    with pytest.raises(ConfigError, match=r"as a user of their own .*cannot run .*closed/python3 .*--python-env"):
        run_bundle(HOSTILE, shared_dir / "out", submissions=HOSTILE / "sample_submissions", sandbox="rewrite",
                   python_env=closed / "python3")
    with pytest.raises(ConfigError, match=r"as a user of their own .*cannot enter .*closed/out .*/var/tmp"):
        run_bundle(HOSTILE, closed / "out", submissions=HOSTILE / "sample_submissions", sandbox="rewrite",
                   python_env=python)
    assert not (closed / "out" / "runs").exists() and not (shared_dir / "out" / "runs").exists()
    # without --submissions (the bundle's own programs) the mode runs as the runner, and says so
    assert "as your user" in local.LocalBackend(sandbox="rewrite").notice
    assert "a user of its own" in local.LocalBackend(sandbox="rewrite", foreign=True).notice
