"""Hostile bundles (issue 42, items 2, 3 and 8): what a cloned or downloaded bundle could make
``metascore bundle check``, ``zip``, ``run`` and ``add-meta`` read, write or spend.

- A link that leaves the bundle (:data:`~hostile_fixtures.LINKS_OUT`: a file or folder link,
  absolute or relative, a chain of links, an item or a page that is itself a link; the
  organizer's 0600 file and ``/etc`` as targets) is refused by each of the four commands
  before anything is read or written: exit 1, one line naming the link and its target, no
  traceback; the bundle, the targets and the output folder unchanged, the 0600 file's
  content in no output and no zip; as root and as ``nobody``.
- A link inside the bundle is stored as what it names (Codabench's unpacker,
  ``ZipFile.extractall``, makes no links), and ``bundle run`` gives the jobs the same files.
- A hard link to the organizer's 0600 file (issue 49, 6), which reads as an ordinary file:
  ``bundle check`` warns of it, ``bundle zip`` refuses it (one line, nothing written) unless
  ``--allow-hardlinks``; as root and as ``nobody``. A file with two names both in the
  bundle is nothing to say.
- A bundle zip holding a link member or a name that escapes the extraction folder is
  refused by ``check`` and ``run``.
- ``add-meta`` writes nothing through ``final_ranking/`` or ``meta_scoring_program/`` when
  they lead out of the bundle (to a folder with the organizer's README, to ``/etc``).
- ``competition.yaml`` is bounded (bytes before it is read, nodes with aliases expanded and
  depth before it is parsed; a zip's member before it is extracted), and a ``bundle check``
  killed by SIGTERM or SIGINT removes its extraction from ``$TMPDIR``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

from hostile_fixtures import (HARD_LINK, LINKS_OUT, SECRET_TEXT, hard_linked_bundle, hostile_bundle, linked_bundle,
                              meta_links_bundle)
from metascore.bundle.archive import as_folder
from metascore.bundle.trees import walk
from metascore.cli import main
from metascore.readers.yaml_loader import MAX_YAML_BYTES, MAX_YAML_NODES
from repo_paths import ROOT
from requirements import source_for_others

SRC = ROOT / "src"
COMMANDS = ("check", "zip", "run", "add-meta")


def argv(command: str, bundle: Path, work: Path) -> list[str]:
    """The command line of ``command`` on ``bundle``, writing (if at all) into ``work``."""
    return {"check": ["bundle", "check", str(bundle)],
            "zip": ["bundle", "zip", str(bundle), "-o", str(work / "upload.zip")],
            "run": ["bundle", "run", str(bundle), "--out", str(work / "runs")],
            "add-meta": ["bundle", "add-meta", str(bundle)]}[command]


def state(folder: Path) -> dict[str, tuple]:
    """Each entry under ``folder`` (links not followed): kind, mode, size, time, link target
    and a digest of a regular file's bytes."""
    seen = {}
    for entry in walk(folder):
        info = entry.stat
        link = os.readlink(entry.name, dir_fd=entry.dir_fd) if stat.S_ISLNK(info.st_mode) else None
        digest = None
        if stat.S_ISREG(info.st_mode):
            fd = os.open(entry.name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=entry.dir_fd)
            with os.fdopen(fd, "rb") as handle:
                digest = hashlib.sha256(handle.read()).hexdigest()
        seen["/".join(entry.parts)] = (stat.S_IFMT(info.st_mode), info.st_mode, info.st_size,
                                       info.st_mtime_ns, link, digest)
    return seen


def etc_state() -> list[bool]:
    """Whether what the commands would write through a link to ``/etc`` is there (not the
    whole of ``/etc``, which other programs of the machine may change meanwhile)."""
    return [os.path.lexists(f"/etc/{name}") for name in ("reference_data", "README.md", "metascore.yaml",
                                                          "final_ranking.md", "upload.zip")]


def secret_anywhere(folder: Path) -> list[str]:
    """Files under ``folder`` (zips opened, members of zips in zips too) holding the
    organizer's secret."""
    found = []
    for entry in walk(folder):
        if not stat.S_ISREG(entry.stat.st_mode):
            continue
        fd = os.open(entry.name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=entry.dir_fd)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read()
        if SECRET_TEXT.encode() in data or _in_zip(data):
            found.append("/".join(entry.parts))
    return found


def _in_zip(data: bytes) -> bool:
    import io
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return any(SECRET_TEXT.encode() in (member := zf.read(i)) or _in_zip(member) for i in zf.infolist())
    except zipfile.BadZipFile:
        return False


# ----------------------------------------------------------------------------- item 2: links out
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", LINKS_OUT)
def test_a_link_out_of_the_bundle_is_refused_before_anything_is_read_or_written(case, command, tmp_path, capsys):
    bundle = linked_bundle(tmp_path, LINKS_OUT[case])
    link, target = LINKS_OUT[case][0]
    named = f"{link} is a link to {target.format(outside=tmp_path / 'outside')}"
    before, etc = state(tmp_path), etc_state()

    code = main(argv(command, bundle, tmp_path))
    out, err = capsys.readouterr()
    assert code == 1, (out, err)
    lines = [line for line in (out + err).splitlines() if named in line]
    assert len(lines) == 1 and "outside the bundle" in lines[0], (out, err)
    assert "Traceback" not in out + err and "internal error" not in err
    assert SECRET_TEXT.strip() not in out + err
    assert state(tmp_path) == before  # no zip, no --out, nothing in the bundle or behind a link
    assert etc_state() == etc


def test_the_cloned_bundle_of_the_issue_is_refused_as_root_and_as_nobody(tmp_path):
    """``ref/leak.txt -> ../../secret/secret.txt`` (0600) and ``scoring_program/shadow.txt ->
    /etc/shadow``: ``bundle check`` names both, ``bundle zip`` writes nothing; the same as an
    ordinary user (``nobody``, through ``setpriv``) where the test runs as root."""
    work = Path(tempfile.mkdtemp(prefix="metascore-links-", dir="/var/tmp"))  # nobody can enter it
    try:
        os.chmod(work, 0o755)
        bundle = linked_bundle(work, LINKS_OUT["relative file"] + LINKS_OUT["absolute file"])
        users = [[]]
        if os.geteuid() == 0 and shutil.which("setpriv"):
            users.append(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"])
            for path in [work, *work.rglob("*")]:
                if not path.is_symlink() and path.name != "secret.txt":
                    path.chmod(0o755 if path.is_dir() else 0o644)
            (work / "out").mkdir()
            (work / "out").chmod(0o777)
        else:
            (work / "out").mkdir()
        before = state(bundle)
        for user in users:
            env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(source_for_others()), "HOME": str(work / "out"),
                   "TMPDIR": str(work / "out")}
            check = subprocess.run([*user, sys.executable, "-m", "metascore", "bundle", "check", str(bundle)],
                                   capture_output=True, text=True, env=env, timeout=300)
            zipped = subprocess.run([*user, sys.executable, "-m", "metascore", "bundle", "zip", str(bundle),
                                     "-o", str(work / "out" / "upload.zip")],
                                    capture_output=True, text=True, env=env, timeout=300)
            assert check.returncode == 1 and zipped.returncode == 1, (user, check.stdout, zipped.stderr)
            errors = [line for line in check.stdout.splitlines() if line.startswith("error:")]
            assert len(errors) == 2, check.stdout
            assert "scoring_program/shadow.txt is a link to /etc/shadow, outside the bundle" in errors[0]
            assert f"ref/leak.txt is a link to ../../outside/secret.txt, which leads to {work}/outside/" \
                   "secret.txt, outside the bundle" in errors[1]
            assert zipped.stderr.count("\n") == 1 and "shadow.txt is a link to /etc/shadow" in zipped.stderr
            for proc in (check, zipped):
                assert "Traceback" not in proc.stdout + proc.stderr
                assert SECRET_TEXT.strip() not in proc.stdout + proc.stderr
            assert os.listdir(work / "out") == [] and state(bundle) == before
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ----------------------------------------------------------------------------- issue 49, 6: hard links
def test_a_hard_link_to_a_file_outside_is_said_by_check_and_refused_by_zip_as_root_and_as_nobody():
    """Issue 49, 6: ``ref/leak.txt`` is a second name of the organizer's 0600 file (owned by
    the user who runs the commands: root, then ``nobody``)."""
    users = [[]]
    if os.geteuid() == 0 and shutil.which("setpriv"):
        users.append(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"])
    for user in users:
        work = Path(tempfile.mkdtemp(prefix="metascore-hardlink-", dir="/var/tmp"))  # nobody can enter it
        try:
            os.chmod(work, 0o755)
            bundle = hard_linked_bundle(work)
            (work / "out").mkdir()
            if user:  # the bundle, the 0600 file and the output folder are nobody's
                subprocess.run(["chown", "-R", "65534:65534", str(work)], check=True)
            before = state(bundle), state(work / "outside")
            env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(source_for_others()), "HOME": str(work / "out"),
                   "TMPDIR": str(work / "out")}

            def metascore(*args):
                return subprocess.run([*user, sys.executable, "-m", "metascore", "bundle", *args],
                                      capture_output=True, text=True, env=env, timeout=300)

            check = metascore("check", str(bundle))
            zipped = metascore("zip", str(bundle), "-o", str(work / "out" / "upload.zip"))
            said = (f"{HARD_LINK} shares its data with a file outside the bundle (a hard link: 2 names, 1 of "
                    "them in the bundle)")
            assert check.returncode == 0, (user, check.stdout, check.stderr)
            warned = [line for line in check.stdout.splitlines() if said in line]
            assert len(warned) == 1 and warned[0].startswith("warning: ") and "--allow-hardlinks" in warned[0]
            assert "truth-too.txt" not in check.stdout and "0 warning(s)" not in check.stdout
            assert zipped.returncode == 1 and zipped.stderr.count("\n") == 1, (user, zipped.stdout, zipped.stderr)
            assert said in zipped.stderr and "no zip written" in zipped.stderr
            for proc in (check, zipped):
                assert "Traceback" not in proc.stdout + proc.stderr
                assert SECRET_TEXT.strip() not in proc.stdout + proc.stderr
            assert (state(bundle), state(work / "outside")) == before and os.listdir(work / "out") == []

            allowed = metascore("zip", str(bundle), "-o", str(work / "out" / "upload.zip"), "--allow-hardlinks")
            assert allowed.returncode == 0, (user, allowed.stdout, allowed.stderr)
            assert f"[*] {HARD_LINK}: packed though it shares its data" in allowed.stdout
            assert secret_anywhere(work / "out") == ["upload.zip"]  # the organizer said so
        finally:
            shutil.rmtree(work, ignore_errors=True)


# ----------------------------------------------------------------------------- item 2: links inside
def test_links_inside_the_bundle_are_stored_as_what_they_name(tmp_path, capsys):
    """A file link, a folder link to another item and an absolute link that stay in the bundle:
    ``bundle check`` is clean of them, the zip holds regular files with their bytes (no link
    member: Codabench's ZipFile.extractall would write the link's path as the file), and
    ``bundle run``'s copy of the item holds the same files."""
    bundle = hostile_bundle(tmp_path, [])
    with open(bundle / "ranking" / "metascore.yaml", "a") as handle:
        handle.write("baselines: [good_too]\n")  # the check before zipping asks for one
    with open(bundle / "competition.yaml", "a") as handle:
        handle.write("docker_image: codalab/codalab-legacy:py312\n")  # runs the meta program as it is
    truth = (bundle / "ref" / "truth.txt").read_bytes()
    (bundle / "ref" / "alias.txt").symlink_to("truth.txt")
    (bundle / "ref" / "absolute.txt").symlink_to(bundle / "ref" / "truth.txt")
    (bundle / "scoring_program" / "shared").symlink_to("../ref")
    assert main(["bundle", "zip", str(bundle), "-o", str(tmp_path / "upload.zip")]) == 0, capsys.readouterr()

    unpacked = tmp_path / "codabench"
    with zipfile.ZipFile(tmp_path / "upload.zip") as zf:
        zf.extractall(unpacked)  # as Codabench's unpack_competition, then its worker
    items = {}
    for name in ("ref", "scoring_program"):
        with zipfile.ZipFile(unpacked / f"{name}.zip") as zf:
            assert not [i.filename for i in zf.infolist() if stat.S_ISLNK(i.external_attr >> 16)]
            zf.extractall(unpacked / name)
        items[name] = unpacked / name
    assert (items["ref"] / "alias.txt").read_bytes() == (items["ref"] / "absolute.txt").read_bytes() == truth
    assert (items["scoring_program"] / "shared" / "truth.txt").read_bytes() == truth
    assert not [p for p in unpacked.rglob("*") if p.is_symlink()]

    given = as_folder(bundle / "scoring_program", tmp_path / "cache", bundle=bundle)
    assert given == tmp_path / "cache" and not [p for p in given.rglob("*") if p.is_symlink()]
    assert (given / "shared" / "alias.txt").read_bytes() == truth
    assert sorted(p.relative_to(given).as_posix() for p in given.rglob("*") if p.is_file()) == sorted(
        p.relative_to(items["scoring_program"]).as_posix() for p in items["scoring_program"].rglob("*")
        if p.is_file())
    assert as_folder(bundle / "pages", tmp_path / "unused", bundle=bundle) == bundle / "pages"  # no link: as it is
    theirs = tmp_path / "submissions" / "alice"  # --submissions DIR: not the bundle's, not its rule
    theirs.mkdir(parents=True)
    (theirs / "pred.txt").symlink_to("../other.txt")
    assert as_folder(theirs, tmp_path / "unused", bundle=bundle) == theirs


def _doubling_links(ref: Path, n: int) -> None:
    """``ref/d0`` .. ``ref/d<n>``, each ``d<i>`` holding two links to ``d<i+1>``: the last
    folder's file reached 2^n times through them."""
    for i in range(n):
        (ref / f"d{i}").mkdir()
        for name in ("a", "b"):
            (ref / f"d{i}" / name).symlink_to(f"../d{i + 1}")
    (ref / f"d{n}").mkdir()
    (ref / f"d{n}" / "x.txt").write_text("x")


@pytest.mark.parametrize("make, said", [
    (lambda ref: (ref / "gone.txt").symlink_to("nothing.txt"),
     "ref/gone.txt is a link to nothing.txt, which names nothing"),
    (lambda ref: (ref / "loop").symlink_to("."), "ref/loop is a link to ., a folder that holds it"),
    (lambda ref: os.mkfifo(ref / "pipe"), "ref/pipe is a FIFO, not a regular file"),
    (lambda ref: _doubling_links(ref, 20), "ref: links to folders repeat more than 20,000 files and folders"),
], ids=["to nothing", "loop", "fifo", "2^20 repeats"])
def test_what_no_zip_can_hold_is_an_error_of_check_and_zip(make, said, tmp_path, capsys):
    bundle = hostile_bundle(tmp_path, [])
    make(bundle / "ref")
    assert main(["bundle", "check", str(bundle)]) == 1
    assert said in capsys.readouterr().out
    assert main(["bundle", "zip", str(bundle), "-o", str(tmp_path / "upload.zip")]) == 1
    assert said in capsys.readouterr().err and not (tmp_path / "upload.zip").exists()


@pytest.mark.parametrize("member, said", [
    (("ref/leak.txt", "../../outside/secret.txt", True), "member 'ref/leak.txt' is a symbolic link"),
    (("../escape.txt", "x", False), "member '../escape.txt' has an absolute path or '..'"),
    (("/abs.txt", "x", False), "member '/abs.txt' has an absolute path or '..'"),
], ids=["link member", "dot-dot", "absolute"])
def test_a_bundle_zip_with_a_link_member_or_an_escaping_name_is_refused(member, said, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    bundle = hostile_bundle(tmp_path, [])
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(bundle.rglob("*")):
            if path.is_file():
                zf.write(path, path.relative_to(bundle).as_posix())
        name, data, link = member
        info = zipfile.ZipInfo(name)
        info.external_attr = ((stat.S_IFLNK | 0o777) if link else (stat.S_IFREG | 0o644)) << 16
        zf.writestr(info, data)
    for command in ("check", "run", "add-meta"):
        assert main(argv(command, archive, tmp_path)) == 1
        out, err = capsys.readouterr()
        assert said in err and err.count("\n") == 1 and "Traceback" not in err, (command, out, err)
        assert os.listdir(tmp_path / "tmp") == []
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "runs" / "runs").exists()


# ----------------------------------------------------------------------------- item 3: add-meta
@pytest.mark.parametrize("final_ranking", ["{outside}", "/etc"], ids=["to a folder", "to /etc"])
@pytest.mark.parametrize("output", [None, "copy"], ids=["in place", "-o"])
def test_add_meta_writes_nothing_through_a_link_out_of_the_bundle(final_ranking, output, tmp_path, capsys):
    bundle = meta_links_bundle(tmp_path, final_ranking)
    before, etc = state(tmp_path), etc_state()
    args = ["bundle", "add-meta", str(bundle)] + (["-o", str(tmp_path / output)] if output else [])
    assert main(args) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert (f"is a link to {final_ranking.format(outside=tmp_path / 'outside')}" in err
            or f"meta_scoring_program is a link to {tmp_path / 'outside_program'}" in err), err
    assert "outside the bundle" in err and "nothing was written" in err
    assert state(tmp_path) == before and etc_state() == etc
    assert (tmp_path / "outside_program" / "README.md").read_text() == "the organizer's own README\n"


def test_add_meta_into_a_new_folder_writes_nothing_back_through_an_absolute_link(tmp_path, capsys, monkeypatch):
    """``pages -> /abs/bundle/texts`` stays inside the bundle, but in the copy that ``-o``
    makes it leads back into the bundle: add-meta refuses to write the ranking page there."""
    monkeypatch.setenv("METASCORE_META_PYTHON", "auto")  # an organizer's default: the program's own Python
    bundle = meta_links_bundle(tmp_path, "{outside}")
    (bundle / "final_ranking").unlink()
    (bundle / "meta_scoring_program").unlink()
    (bundle / "pages").rename(bundle / "texts")
    (bundle / "pages").symlink_to(bundle / "texts")
    before = state(tmp_path)
    assert main(["bundle", "add-meta", str(bundle), "--end", "2027-06-30", "-o", str(tmp_path / "copy")]) == 1
    err = capsys.readouterr().err
    assert f"pages is a link to {bundle / 'texts'}, outside the bundle, and add-meta would write" in err, err
    assert state(tmp_path) == before and not (tmp_path / "copy").exists()
    assert main(["bundle", "add-meta", str(bundle), "--end", "2027-06-30"]) == 0, capsys.readouterr()  # in place
    assert (bundle / "texts" / "final_ranking.md").is_file()


# ----------------------------------------------------------------------------- item 8: YAML bounds
def _bundle_with_yaml(work: Path, extra: str) -> Path:
    bundle = hostile_bundle(work, [])
    with open(bundle / "competition.yaml", "a", encoding="utf-8") as handle:
        handle.write(extra)
    return bundle


@pytest.mark.parametrize("command", COMMANDS)
def test_a_competition_yaml_over_the_size_bound_is_refused_before_it_is_read(command, tmp_path, capsys):
    bundle = _bundle_with_yaml(tmp_path, ("# " + "x" * 97 + "\n") * (MAX_YAML_BYTES // 100 + 1))
    size = (bundle / "competition.yaml").stat().st_size
    before = state(tmp_path)
    assert main(argv(command, bundle, tmp_path)) == 1
    out, err = capsys.readouterr()
    said = f"competition.yaml: {size:,} bytes, more than the 4 MiB a YAML file read by metascore may have"
    assert [line for line in (out + err).splitlines() if said in line], (out, err)
    assert "Traceback" not in out + err and state(tmp_path) == before


@pytest.mark.parametrize("extra, said", [
    ("laughs:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"  {chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(7)),
     f"more than {MAX_YAML_NODES:,} YAML nodes (aliases expanded) by line"),
    ("many: [" + "0, " * (MAX_YAML_NODES + 1) + "]\n", f"more than {MAX_YAML_NODES:,} YAML nodes"),
    ("deep: " + "[" * 150 + "]" * 150 + "\n", "nested more than 100 levels deep (line"),
], ids=["aliases", "nodes", "depth"])
def test_a_competition_yaml_over_the_node_or_depth_bound_is_refused_before_it_is_loaded(extra, said, tmp_path, capsys):
    bundle = _bundle_with_yaml(tmp_path, extra)
    assert (bundle / "competition.yaml").stat().st_size < MAX_YAML_BYTES
    assert main(["bundle", "check", str(bundle)]) == 1
    out = capsys.readouterr().out
    assert f"error: competition.yaml: {said}" in out and out.count("error:") == 1, out


def test_a_real_sized_competition_yaml_with_anchors_is_within_the_bounds(tmp_path, capsys):
    """Anchors, aliases and merge keys as organizers write them, and a thousand phases'
    worth of keys, pass: the bounds are far above real files."""
    bundle = _bundle_with_yaml(tmp_path, "defaults: &defaults {execution_time_limit: 25}\nnotes:\n" + "".join(
        f"  - {{<<: *defaults, name: note {i}, description: {'a note ' * 10}}}\n" for i in range(1000)))
    main(["bundle", "check", str(bundle)])
    out = capsys.readouterr().out
    assert "YAML nodes" not in out and "levels deep" not in out and "unknown key" in out, out


def _zip_bundle(bundle: Path, archive: Path, yaml_extra: bytes = b"") -> Path:
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(bundle.rglob("*")):
            if path.is_file() and path.name != "competition.yaml":
                zf.write(path, path.relative_to(bundle).as_posix())
        with zf.open("competition.yaml", "w", force_zip64=True) as handle:
            handle.write((bundle / "competition.yaml").read_bytes() + yaml_extra)
    return archive


def test_a_bundle_zip_whose_yaml_is_over_the_bound_is_refused_before_it_is_extracted(tmp_path, capsys, monkeypatch):
    """The issue's 437 KB zip whose competition.yaml carries 200 MB of comments."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    comments = ("# " + "x" * 97 + "\n").encode() * 2_000_000
    archive = _zip_bundle(hostile_bundle(tmp_path, []), tmp_path / "bundle.zip", comments)
    assert archive.stat().st_size < 1 << 20
    for command in ("check", "run", "add-meta"):
        assert main(argv(command, archive, tmp_path)) == 1
        err = capsys.readouterr().err
        assert "competition.yaml holds 200,00" in err and "more than the 4 MiB a competition.yaml may have; " \
               "nothing was extracted" in err and err.count("\n") == 1, err
        assert os.listdir(tmp_path / "tmp") == []
    assert not (tmp_path / "runs" / "bundle").exists()


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_killed_bundle_check_removes_its_extraction(sent, tmp_path):
    """``bundle check`` of a zip whose competition.yaml (within the bound) takes seconds to
    parse, stopped once its extraction is in ``$TMPDIR``: the extraction goes too."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    comments = ("# " + "x" * 97 + "\n").encode() * ((MAX_YAML_BYTES - (1 << 16)) // 100)
    archive = _zip_bundle(hostile_bundle(tmp_path, []), tmp_path / "bundle.zip", comments)
    env = {**os.environ, "PYTHONPATH": str(SRC), "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-m", "metascore", "bundle", "check", str(archive)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 120
        while not list(tmp.glob("metascore-check-*/competition.yaml")):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.02)
        proc.send_signal(sent)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, (out, err)
    assert err == "metascore: interrupted\n", err
    assert os.listdir(tmp) == []
