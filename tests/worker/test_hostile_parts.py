"""The parts that keep one hostile submission from costing the run (issue 32), each on its
own: trees of any depth, copies that write each file once with its holes, zips, YAML a
participant wrote, score files, the file limit, deleted files held open, the control
groups, the seccomp filter, the session keyring, links out of a bundle, spreadsheet cells
and terminal text. ``tests/worker/test_hostile_run.py`` runs them all together in one competition.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from bundle_backends import require
from hostile_fixtures import BREAKERS, hostile_bundle, make
from metascore.bundle.worker import cgroups, local
from metascore.bundle.archive import safe_extract
from metascore.bundle.worker.cgroups import StepGroup, cgroup_support
from metascore.bundle.worker.limits import FILE_COST, JobWatch, Limits, held_deleted
from metascore.bundle.worker.logs import printable, tail
from metascore.bundle.schema.metadata import read_metadata
from metascore.bundle.runner import run_bundle
from metascore.bundle.worker.sandbox import JOB_INIT
from metascore.bundle.schema.load import check_schema
from metascore.bundle.links import OUTSIDE_LINK_RULE
from metascore.bundle.worker.syscall_filter import SYSCALLS, job_filter
from metascore.bundle.trees import MAX_DEPTH, copy_tree, remove_tree, tree_usage, walk
from metascore.bundle.worker.job import JobResult
from metascore.bundle.worker.job_scores import MAX_SCORES_SIZE, JobFailed, read_job_scores
from metascore.errors import ConfigError, InputError
from metascore.readers.rows import text_cell
from metascore.readers.yaml_loader import load_plain_yaml
from metascore.readers.spreadsheet import spreadsheet_text, unquoted_text

BOMB = (BREAKERS / "yaml_bomb" / "metadata.yaml").read_text()


def deep_tree(root: Path, depth: int, name: str = "d") -> Path:
    """``root/d/d/.../d/bottom.txt``, ``depth`` folders deep (made one level at a time)."""
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir(name, dir_fd=fd)
        child = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    with os.fdopen(os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as handle:
        handle.write("deep")
    os.close(fd)
    return root


# ----------------------------------------------------------------------------- trees (2, 3)
def test_a_tree_deeper_than_any_path_is_walked_sized_and_removed(tmp_path):
    root = deep_tree(tmp_path / "deep", 1500, name="d" * 100)  # 150,000 characters deep
    entries = list(walk(root))
    assert len(entries) == 1501 and entries[-1].parts[-1] == "bottom.txt"
    assert tree_usage([root])[1] == 1501
    with pytest.raises(InputError, match=f"the output: .*more than {MAX_DEPTH} folders deep|longer than"):
        copy_tree(root, tmp_path / "copy", keep_links=False, what="the output")
    os.chmod(root / ("d" * 100), 0)  # a folder its job made unreadable
    remove_tree(root)
    assert not root.exists()


def test_a_folder_turned_into_a_link_while_walked_is_left_out_once(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
    (tmp_path / "b" / "x").write_text("x")
    seen = []
    for entry in walk(tmp_path):
        seen.append("/".join(entry.parts))
        if entry.parts == ("b",):  # listed as a folder, a link by the time the walk enters it
            (tmp_path / "a").rmdir()
            (tmp_path / "a").symlink_to("/etc")
    assert seen == ["a", "b", "b/x"]


def test_a_copy_writes_each_file_once_and_keeps_its_holes(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(4):
        with open(src / f"sparse{i}", "wb") as handle:
            handle.truncate(19 << 20)
            handle.write(b"x")
    os.link(src / "sparse0", src / "hard0")
    os.symlink("sparse1", src / "soft1")
    os.symlink("/etc/passwd", src / "host")
    os.mkfifo(src / "fifo")
    left = copy_tree(src, tmp_path / "dest", keep_links=False)
    dest = tmp_path / "dest"
    assert sorted(left) == ["fifo (not a regular file)", "host (a link to /etc/passwd, outside the folder)"]
    assert (dest / "soft1").read_bytes()[:1] == b"x" and (dest / "soft1").stat().st_size == 19 << 20
    assert (dest / "hard0").stat().st_ino == (dest / "sparse0").stat().st_ino  # one file, two names
    assert (dest / "soft1").stat().st_ino == (dest / "sparse1").stat().st_ino
    assert tree_usage([dest])[0] <= tree_usage([src])[0] + 4 * 4096  # what the source holds, not 6 x 19 MB
    kept = copy_tree(src, tmp_path / "program", keep_links=True, skip={"fifo"}.__contains__)
    assert kept == [] and os.readlink(tmp_path / "program" / "host") == "/etc/passwd"


# ----------------------------------------------------------------------------- zips (2, 7)
def test_zips_with_bad_names_deep_members_or_too_many_bytes_are_refused_before_writing(tmp_path):
    make("bad_name", tmp_path, tmp_path)
    with pytest.raises(InputError, match="a member name is not valid UTF-8"):
        safe_extract(tmp_path / "bad_name.zip", tmp_path / "a")
    make("deep_zip", tmp_path, tmp_path)
    with pytest.raises(InputError, match="is 1500 folders deep .* more than the 100 folders"):
        safe_extract(tmp_path / "deep_zip.zip", tmp_path / "b")
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("zeros.bin", bytes(64 << 20))
    with pytest.raises(InputError, match=r"67108864 bytes uncompressed, more than the limit of 20971520 \(--disk-limit\)"):
        safe_extract(bomb, tmp_path / "c", max_total_size=20 << 20, size_name=" (--disk-limit)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad_name.zip", "bomb.zip", "deep_zip.zip"]


# ----------------------------------------------------------------------------- YAML (1, 9)
def test_yaml_a_participant_wrote_is_refused_before_it_costs_anything(tmp_path):
    started = time.monotonic()
    with pytest.raises(ConfigError, match=r"^m: uses a YAML alias \(\*a\) at line 3;"):
        load_plain_yaml(BOMB, "m")
    with pytest.raises(ConfigError, match="nested more than 100 levels deep"):
        load_plain_yaml("command: " + "[" * 20_000 + "]" * 20_000, "m")
    assert time.monotonic() - started < 5  # neither expanded nor recursed into
    with pytest.raises(ConfigError, match="not valid YAML at line 1 .*could not determine a constructor"):
        load_plain_yaml("command: !!python/object/apply:os.system ['true']", "m")
    with pytest.raises(ConfigError, match="not valid YAML at line 2"):
        load_plain_yaml("command: [python3 main.py\n", "m")
    assert load_plain_yaml("a: &x 1\nb: 2\n", "m") == {"a": 1, "b": 2}  # an anchor alone is fine
    program = tmp_path / "program"
    program.mkdir()
    (program / "metadata.yaml").write_text("command: x\n" + "#" * (64 * 1024))
    with pytest.raises(ConfigError, match="metadata.yaml: larger than 64 KiB"):
        read_metadata(program)


# ----------------------------------------------------------------------------- scores (5, 9, 10)
@pytest.mark.parametrize("name, details", [
    ("json_deep", "scores.json is nested too deep"),
    ("json_bigint", "scores.json: 'score' is too large"),
    ("json_400", "scores.json: 'score' is too large"),
    ("txt_400", "scores.txt: 'score' is too large"),
    ("txt_bomb", "scores.txt: uses a YAML alias (*a) at line 2; write the values out instead"),
    ("many_keys", f"scores.json is larger than {MAX_SCORES_SIZE >> 20} MiB"),
])
def test_pathological_score_files_fail_their_job_with_a_short_message(name, details, tmp_path):
    subprocess.run([sys.executable, BREAKERS / name / "main.py", tmp_path], check=True)
    with pytest.raises(JobFailed) as caught:
        read_job_scores(tmp_path, JobResult("p", "c", "t"), ("score",))
    assert caught.value.details.startswith(details)
    assert len(caught.value.reason) < 300


def test_the_key_filter_is_linear_and_its_note_names_a_few_keys(tmp_path):
    scores = {f"extra_{i}": 0.5 for i in range(50_000)} | {"score": 0.25}
    (tmp_path / "scores.json").write_text(json.dumps(scores))
    result = JobResult("p", "c", "t")
    assert read_job_scores(tmp_path, result, ("score", "other")) == {"score": 0.25}
    assert result.warnings == ["scores.json: key(s) 'extra_0', 'extra_1', 'extra_2', 'extra_3', 'extra_4', "
                               "'extra_5', 'extra_6', 'extra_7', 'extra_8', 'extra_9' and 49990 more match no "
                               "leaderboard column and are ignored by Codabench (columns: score, other)."]
    (tmp_path / "scores.json").write_text('{"score": 12345678901234567890123, "b": 0.5}')
    with pytest.raises(JobFailed, match="too large"):
        read_job_scores(tmp_path, JobResult("p", "c", "t"))


# ----------------------------------------------------------------------------- limits (4, 8)
def test_files_count_against_the_disk_limit_one_per_block(tmp_path):
    limits = Limits(disk=40 * FILE_COST)
    assert limits.files == 40
    assert limits.message("files") == ("File limit exceeded: the job made more than 40 files and folders "
                                       "under its output (one per 4 KiB of --disk-limit; change it there)")
    watch = JobWatch(None, [tmp_path], limits)
    for i in range(40):
        (tmp_path / f"e{i}").touch()
    assert watch.disk_exceeded() is None
    (tmp_path / "one_more").touch()
    assert watch.disk_exceeded() == "files"


def test_a_file_claiming_more_than_the_disk_limit_breaks_it_whatever_it_holds(tmp_path):
    """Issue 49, 5: a sparse file of 1 TiB holds a few KB, but claims more than --disk-limit:
    the watch fails the job as the local backend's limit on one file's size does (the
    Docker backend has no other), unless such a file was there before the job."""
    old, new = tmp_path / "old", tmp_path / "new"
    for folder in (old, new):
        folder.mkdir()
    with open(old / "big.bin", "wb") as handle:  # in the program folder before the job ran
        handle.truncate(30 << 20)
    limits = Limits(disk=20 << 20)
    watch = JobWatch(None, [old, new], limits)
    with open(new / "sparse19.bin", "wb") as handle:  # within the limit, as sparse_links
        handle.truncate(19 << 20)
    assert watch.disk_exceeded() is None
    with open(new / "huge.bin", "wb") as handle:
        handle.truncate(1 << 40)
    assert tree_usage([new])[0] < 1 << 20  # what it holds
    assert watch.disk_exceeded() == "disk"


def test_deleted_files_a_job_holds_open_count_as_written(tmp_path):
    code = ("import os, sys, tempfile, time\nh = tempfile.TemporaryFile(dir=sys.argv[1])\n"
            "h.write(b'x' * (3 << 20)); h.flush(); print('ready', flush=True); time.sleep(30)")
    child = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "ready\n"
        assert held_deleted([child.pid]) >= 3 << 20
        assert list(tmp_path.iterdir()) == []  # no folder shows it
    finally:
        child.kill()
        child.wait()


# ----------------------------------------------------------------------------- cgroups (11)
def test_a_step_group_counts_memory_no_process_maps(tmp_path):
    kind, why = cgroup_support()
    if kind is None:
        pytest.skip(f"this machine makes no control groups for the runner: {why}")
    group = StepGroup(Limits(memory=100 << 20, processes=20))
    try:
        code = "import os\nfd = os.memfd_create('x')\nfor _ in range(30): os.write(fd, b'x' * (10 << 20))"
        joins = [arg for path in group.procs_files for arg in ("--cgroup", path)]
        proc = subprocess.run([sys.executable, "-S", "-I", str(JOB_INIT), *joins, "--", sys.executable, "-c", code],
                              capture_output=True, timeout=60)
        assert proc.returncode == -9 and group.oom_killed()
    finally:
        group.remove()
    assert not any(folder.exists() for folder in group.folders)


def test_cgroup_v2_groups_get_memory_swap_and_pids_limits(tmp_path):
    """On a v2 hierarchy (a copy of its files here: this machine has v1) the groups go under
    a parent without processes, with the controllers enabled for its children."""
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    group = StepGroup(Limits(memory=256 << 20, processes=50), root=tmp_path, proc_cgroup="0::/user.slice\n")
    parent = tmp_path / f"metascore-{os.getpid()}"
    assert group.folders == [parent / group.folders[0].name]
    assert (parent / "cgroup.subtree_control").read_text() == "+memory +pids"
    assert (group.folders[0] / "memory.max").read_text() == str(256 << 20)
    assert (group.folders[0] / "pids.max").read_text() == str(50 + cgroups.SANDBOX_PROCESSES)
    assert group.procs_files == [str(group.folders[0] / "cgroup.procs")]
    (group.folders[0] / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert group.oom_killed()


def test_without_control_groups_or_the_filter_the_backend_says_so_once(monkeypatch):
    require("local")
    monkeypatch.setattr(local, "cgroup_support", lambda: (None, "no cgroup v1 memory and pids groups can be "
                                                                "made here (Permission denied)"))
    backend = local.LocalBackend(sandbox="bwrap")
    assert backend.notice == (
        "local backend: no cgroup v1 memory and pids groups can be made here (Permission denied), so memory "
        "a job holds outside its processes (memfd files, shared memory, a tmpfs) is not counted in "
        "--memory; --backend docker holds them (or run as root where cgroups and seccomp work).")
    assert "\n" not in backend.notice


# ----------------------------------------------------------------------------- seccomp, keyring (11, 12)
def test_the_filter_numbers_are_the_kernels(tmp_path):
    """Cross-checked against libseccomp's tables where Debian's python3-seccomp is there."""
    system = shutil.which("python3", path="/usr/bin")
    probe = "import seccomp, json, sys; json.dump({m: {n: seccomp.resolve_syscall(getattr(seccomp.Arch, a), n) " \
            "for n in json.loads(sys.argv[1])} for m, a in (('x86_64', 'X86_64'), ('aarch64', 'AARCH64'))}, sys.stdout)"
    proc = subprocess.run([system or "python3", "-c", probe, json.dumps(list(SYSCALLS["x86_64"]))],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip("libseccomp's Python module (python3-seccomp) is not installed")
    assert json.loads(proc.stdout) == SYSCALLS


FILTERED = """
import ctypes, errno, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
program = open(sys.argv[1], "rb").read()
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
assert libc.prctl(38, 1, 0, 0, 0) == 0  # no_new_privs
assert libc.prctl(22, 2, ctypes.byref(Prog(len(program) // 8, program)), 0, 0) == 0  # SECCOMP_MODE_FILTER
calls = {sys.argv[2]}
def tried(name, *args):
    return "ok" if libc.syscall(calls[name], *args) >= 0 else errno.errorcode[ctypes.get_errno()]
print(tried("unshare", 0x10000000), tried("keyctl", 0, -3, 0), tried("clone3", None, 0),
      tried("mount", b"none", b"/tmp", b"tmpfs", 0, None), tried("clone", 0x10000000 | 17, None, None, None, 0))
pid = os.fork()
if pid == 0:
    os._exit(7)
print(os.waitpid(pid, 0)[1] >> 8, open("/proc/self/status").read().count("Seccomp:\\t2"))
"""


def test_the_filter_refuses_namespaces_mounts_and_keys_and_allows_the_rest(tmp_path):
    program = job_filter()
    if program is None:
        pytest.skip(f"no filter is built for {os.uname().machine}")
    (tmp_path / "filter.bpf").write_bytes(program)
    calls = SYSCALLS[os.uname().machine]
    proc = subprocess.run([sys.executable, "-c", FILTERED.replace("{sys.argv[2]}", repr(calls)),
                           str(tmp_path / "filter.bpf")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["EPERM EPERM ENOSYS EPERM EPERM", "7 1"]


def test_a_job_starts_in_a_new_empty_session_keyring(tmp_path):
    machine = os.uname().machine
    if machine not in SYSCALLS:
        pytest.skip(f"keyring calls of {machine} are not listed")
    keyctl, add_key = SYSCALLS[machine]["keyctl"], SYSCALLS[machine]["add_key"]
    read = (f"import ctypes; libc = ctypes.CDLL(None); b = ctypes.create_string_buffer(64); "
            f"print(libc.syscall({keyctl}, 11, -3, b, 64))")  # KEYCTL_READ the session keyring: bytes of ids
    setup = (f"import ctypes, subprocess, sys; libc = ctypes.CDLL(None); libc.syscall({keyctl}, 1, None); "
             f"libc.syscall({add_key}, b'user', b'k', b'secret', 6, -3); ")
    mine = subprocess.run([sys.executable, "-c", setup + f"subprocess.run([sys.executable, '-c', {read!r}])"],
                          capture_output=True, text=True)
    jobs = subprocess.run([sys.executable, "-c", setup + f"subprocess.run([sys.executable, '-S', '-I', {str(JOB_INIT)!r}, "
                           f"'--new-keyring', '--', sys.executable, '-c', {read!r}])"], capture_output=True, text=True)
    assert (mine.stdout, jobs.stdout) == ("4\n", "0\n"), (mine.stderr, jobs.stderr)


# ----------------------------------------------------------------------------- links out of a bundle (13)
def test_links_out_of_the_bundle_are_refused_and_said(tmp_path):
    bundle = hostile_bundle(tmp_path, ["outside_link"])
    report = check_schema(bundle)
    assert report.errors == []
    assert [w for w in report.warnings if "outside" in w] == [
        "sample_submissions/outside_link: `bundle run` fails this submission: sample_submissions/outside_link "
        f"is a link to {tmp_path / 'outside'}, outside the bundle; {OUTSIDE_LINK_RULE}."]
    shutil.rmtree(bundle / "ref")
    (bundle / "ref").symlink_to("/etc")
    report = check_schema(bundle)
    assert report.errors == [f"competition.yaml: tasks[0].reference_data: ref is a link to /etc, outside the "
                             f"bundle; {OUTSIDE_LINK_RULE}."]
    with pytest.raises(ConfigError, match="^competition.yaml: tasks.0..reference_data: ref is a link to /etc"):
        run_bundle(bundle, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # refused before anything is written


# ----------------------------------------------------------------------------- spreadsheets, terminals (14, 15)
@pytest.mark.parametrize("name", ['=HYPERLINK("x","y")', "@SUM(1+1)", "+1+cmd|' /C calc'!A0", "-2+3",
                                  "\t=1", "\r=1"])
def test_a_formula_is_written_as_text_and_read_back_as_it_was(name):
    cell = spreadsheet_text(name)
    assert cell == "'" + name and unquoted_text(cell) == name
    assert text_cell(cell) == name.strip()


def test_numbers_and_plain_names_are_written_as_they_are():
    for text in ("-0.5", "+3", "-1e-05", "alice", "'quoted", ""):
        assert spreadsheet_text(text) == text and unquoted_text(text) == text


def test_job_output_and_names_reach_the_terminal_written_out(tmp_path):
    (tmp_path / "log").write_bytes(b"\x1b]0;title\x07\x1b]52;c;ZWNobw==\x07\xc2\x9b2J\xe2\x80\xaeevil\r\nok\tdone\n")
    assert tail(tmp_path / "log") == "\\x1b]0;title\\x07\\x1b]52;c;ZWNobw==\\x07\\x9b2J\\u202eevil\nok\tdone\n"
    assert printable("terminal\x1b]0;pwned\x07name") == "terminal\\x1b]0;pwned\\x07name"


@pytest.mark.parametrize("name, text", [
    ("scores.json", '{"score": 0.1, "other": 1, "score": 0.75}'),
    ("scores.txt", "score: 0.1\nother: 1\nscore: 0.75\n"),
])
def test_a_key_given_twice_keeps_its_last_value_as_codabench_and_says_so(name, text, tmp_path):
    """Issue 42 item 12 in `bundle run`: Codabench's worker parses the scores file with
    json/yaml, which keep a repeated key's last value without a word; the runner keeps the
    same value and names the key."""
    (tmp_path / name).write_text(text)
    result = JobResult("p", "c", "t")
    assert read_job_scores(tmp_path, result, ("score", "other")) == {"score": 0.75, "other": 1.0}
    lines = " (lines 1 and 3)" if name == "scores.txt" else ""
    assert result.warnings == [f"{name}: key 'score' appears twice{lines}; the last one is used, as on "
                               "Codabench, which says nothing."]
