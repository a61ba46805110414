"""What a job leaves behind is made harmless (issue 42): set-id bits, device nodes and file
capabilities in its folders (every backend), the write bits of the group and others (issue
49, 5), and, for the rewrite mode's own users, their processes, their files in the folders
every user may write and their System V IPC."""

from __future__ import annotations

import os
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from metascore.bundle.worker.leftovers import SET_ID, end_user, scrub, scrub_notes, user_processes
from metascore.bundle.worker.sandbox import JOB_INIT
from requirements import source_for_others

CAPABILITY = struct.pack("<5I", 0x02000001, 1 << 2, 0, 0, 0)  # vfs_cap_data v2: CAP_DAC_READ_SEARCH
UID = 1_999_999_000  # a user nobody has


def needs_root():
    if os.geteuid() != 0:
        pytest.skip("needs root: only root makes device nodes, file capabilities and other users")


def test_scrub_clears_set_id_bits_and_removes_devices_and_capabilities(tmp_path):
    needs_root()
    job, outside = tmp_path / "job", tmp_path / "outside"
    (job / "deep" / "closed").mkdir(parents=True)
    outside.mkdir()
    for path, mode in ((job / "rootsh", 0o4755), (job / "deep" / "closed" / "g", 0o2711),
                       (outside / "host-suid", 0o4755), (job / "plain", 0o755)):
        path.write_bytes(b"#!/bin/sh\n")
        path.chmod(mode)
    (job / "shared").mkdir(mode=0o2775)
    (job / "shared").chmod(0o2775)
    os.link(job / "rootsh", job / "rootsh-too")  # a set-id file with another name: removed
    (job / "to-host").symlink_to(outside / "host-suid")  # a link is not followed
    os.mknod(job / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    os.setxattr(job / "plain", "security.capability", CAPABILITY)
    (job / "deep" / "closed").chmod(0)

    found = scrub([job])
    assert {k: sorted(v) for k, v in found.items()} == {
        "set-id": ["deep/closed/g", "rootsh", "rootsh-too", "shared"], "device": ["null"],
        "capability": ["plain"], "shared": []}
    assert not (job / "null").exists() and not (job / "rootsh").exists()  # rootsh had two names
    assert stat.S_IMODE((job / "rootsh-too").stat().st_mode) == 0o755  # then one: its bit cleared
    assert stat.S_IMODE((job / "deep" / "closed" / "g").stat().st_mode) == 0o711
    assert stat.S_IMODE((job / "shared").stat().st_mode) == 0o755  # nor the group's write bit
    assert os.listxattr(job / "plain") == [] or "security.capability" not in os.listxattr(job / "plain")
    assert (outside / "host-suid").stat().st_mode & SET_ID  # nothing outside the folders changed
    assert scrub([job]) == {"set-id": [], "device": [], "capability": [], "shared": []}


def test_scrub_leaves_nothing_others_may_write(tmp_path):
    """Issue 49, 5: a 0777 folder, a 0666 scores.json, a 2777 folder (0777 once its set-id bit
    is cleared) and a 0666 FIFO are left writable by their owner alone, in place, links not
    followed; the names of a file that is not its folder owner's and has another name, which
    may be outside the job's folders, are removed (its bits are another's to change)."""
    job, outside = tmp_path / "job", tmp_path / "outside"
    (job / "open" / "deeper").mkdir(parents=True)
    outside.mkdir()
    (outside / "theirs").write_text("another's file")
    (outside / "theirs").chmod(0o666)
    (job / "scores.json").write_text('{"score": 0.5}')
    (job / "shared").mkdir()
    os.mkfifo(job / "fifo")
    (job / "to-theirs").symlink_to(outside / "theirs")
    for path, mode in ((job / "open", 0o777), (job / "open" / "deeper", 0o770), (job / "scores.json", 0o666),
                       (job / "shared", 0o2777), (job / "fifo", 0o666)):
        path.chmod(mode)
    os.link(job / "scores.json", job / "open" / "scores-too.json")  # the job's own: both names kept
    if os.geteuid() == 0:  # a 0666 file of another user, linked in
        os.chown(outside / "theirs", UID, UID)
        os.link(outside / "theirs", job / "open" / "theirs")

    found = scrub([job])
    modes = {p.relative_to(job).as_posix(): stat.S_IMODE(p.lstat().st_mode) for p in job.rglob("*")
             if not p.is_symlink()}
    assert {k: v for k, v in modes.items() if v & 0o022} == {}
    assert modes["open"] == modes["shared"] == 0o755 and modes["scores.json"] == modes["fifo"] == 0o644
    assert modes["open/deeper"] == 0o750
    assert (job / "open" / "scores-too.json").read_text() == '{"score": 0.5}'
    assert found["set-id"] == ["shared"] and found["device"] == found["capability"] == []
    assert found["shared"] == (["open/theirs"] if os.geteuid() == 0 else [])
    assert stat.S_IMODE((outside / "theirs").stat().st_mode) == 0o666  # not the job's to change
    assert scrub([job]) == {"set-id": [], "device": [], "capability": [], "shared": []}


def test_scrub_notes_name_what_was_changed(tmp_path):
    (tmp_path / "output").mkdir()
    (tmp_path / "output" / "x").write_text("x")
    (tmp_path / "output" / "x").chmod(0o4755)
    notes = scrub_notes(tmp_path, "prediction")
    assert notes == ["prediction step: the programs left 1 file(s) with a set-id bit ('output/x'): the bits "
                     "were cleared; nothing a job leaves keeps one."]
    assert scrub_notes(tmp_path, "prediction") == []


def test_a_closed_folder_is_opened_to_its_owner_so_nothing_in_it_is_missed(tmp_path):
    """Run by another user than root (the sandbox as nobody), the runner owns what its job
    wrote but cannot list a folder the job closed: it opens it to itself first."""
    script = ("import sys; from pathlib import Path; from metascore.bundle.worker.leftovers import scrub; "
              "print(scrub([Path(sys.argv[1])])['set-id'])")
    work = Path(tempfile.mkdtemp(dir="/var/tmp")) if os.geteuid() == 0 else tmp_path
    try:
        (work / "closed").mkdir()
        (work / "closed" / "x").write_text("x")
        argv = [sys.executable, "-c", script, str(work)]
        if os.geteuid() == 0:  # as the owner of the tree, not root
            for path in (work, work / "closed", work / "closed" / "x"):
                os.chown(path, 4242, 4242)
            work.chmod(0o755)
            argv = ["setpriv", "--reuid=4242", "--regid=4242", "--clear-groups", *argv]
        (work / "closed" / "x").chmod(0o6755)
        (work / "closed").chmod(0)
        proc = subprocess.run(argv, capture_output=True, text=True, cwd="/",
                              env={**os.environ, "PYTHONPATH": os.pathsep.join([str(source_for_others()), *sys.path])})
        assert proc.stdout.strip() == "['closed/x']", proc.stderr
        assert stat.S_IMODE((work / "closed" / "x").stat().st_mode) == 0o755
    finally:
        if work != tmp_path:
            shutil.rmtree(work, ignore_errors=True)


def _as_user(code: str) -> subprocess.Popen:
    """``code`` run as :data:`UID` by the job's first program (``job_init.py --user``)."""
    return subprocess.Popen([sys.executable, "-S", "-I", str(JOB_INIT), "--user", str(UID), str(UID), "--",
                             "/usr/bin/python3", "-c", code], cwd="/", stdout=subprocess.PIPE, text=True)


def test_end_user_kills_its_processes_and_removes_its_files_and_ipc(tmp_path):
    needs_root()
    if not os.access("/usr/bin/python3", os.X_OK):
        pytest.skip("needs /usr/bin/python3")
    code = ("import ctypes, os, time\n"
            "libc = ctypes.CDLL(None)\n"
            "print(libc.shmget(0, 1 << 20, 0o1600), flush=True)\n"  # IPC_PRIVATE, IPC_CREAT | 0600
            "open('/tmp/metascore-leftover-%d' % os.getuid(), 'w').write('x')\n"
            "os.makedirs('/var/tmp/metascore-leftover-%d/deep' % os.getuid())\n"
            "if os.fork() == 0:\n    os.setsid(); time.sleep(60)\n"
            "print('ready', flush=True); time.sleep(60)\n")
    proc = _as_user(code)
    try:
        shmid = int(proc.stdout.readline())
        assert proc.stdout.readline().strip() == "ready"
        assert len(user_processes(UID)) == 2 and shmid >= 0
        end_user(UID)
        proc.wait(10)
        deadline = time.monotonic() + 5
        while user_processes(UID) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert user_processes(UID) == []
        assert not Path(f"/tmp/metascore-leftover-{UID}").exists()
        assert not Path(f"/var/tmp/metascore-leftover-{UID}").exists()
        ids = [line.split()[1] for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]]
        assert str(shmid) not in ids
    finally:
        proc.kill()
        end_user(UID)


def test_the_supervised_job_becomes_its_user_and_cannot_signal_its_supervisor():
    """``job_init.py --supervise --user``: only the command becomes the job's user; the
    supervisor stays root, so the job cannot kill it (the rewrite mode as root)."""
    needs_root()
    code = ("import os, signal\n"
            "print(os.getuid(), os.geteuid(), open('/proc/self/status').read().split('CapEff:')[1].split()[0])\n"
            "try:\n    os.kill(os.getppid(), signal.SIGKILL); print('killed')\n"
            "except PermissionError:\n    print('held')\n")
    proc = subprocess.run([sys.executable, "-S", "-I", str(JOB_INIT), "--supervise", "--user", str(UID), str(UID),
                           "--", "/usr/bin/python3", "-c", code], capture_output=True, text=True, cwd="/", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(UID), str(UID), "0000000000000000", "held"]
