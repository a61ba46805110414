"""What metascore writes for its user is writable by that user alone, whatever the umask
(issue 49, 4): under ``umask 000`` a ``0777`` folder would let any local user put files
into it, a ``0666`` file let them change it (a bundle zip before its upload, a copy that
``add-meta -o`` made, the files of ``--out``). Files get ``rw-r--r--`` at most and folders
``rwxr-xr-x``, what ``umask 022`` gives; a stricter umask takes more away. What a job
leaves in ``--out`` is ``tests/worker/test_hostile_run.py``'s (its fixtures
``world_writable``, ``setgid_open``), run by a runner under ``umask 000``.
"""

from __future__ import annotations

import os
import shutil
import stat
import zipfile
from pathlib import Path

from hostile_fixtures import hostile_bundle
from metascore.bundle.archive import safe_extract, zip_directory
from metascore.bundle.files import copy_job_output, new_folder, write_text
from metascore.bundle.trees import walk
from metascore.cli import main
from repo_paths import TESTS

ADD_META_V2 = TESTS / "data" / "bundles" / "add_meta_v2"


def open_to_others(path: Path) -> dict[str, str]:
    """``path`` and every entry below it (links left out) that the group or others may
    write, with its mode."""
    found = {}
    info = os.lstat(path)
    if info.st_mode & 0o022:
        found["."] = oct(stat.S_IMODE(info.st_mode))
    if stat.S_ISDIR(info.st_mode):
        for entry in walk(path):
            if entry.stat.st_mode & 0o022 and not stat.S_ISLNK(entry.stat.st_mode):
                found["/".join(entry.parts)] = oct(stat.S_IMODE(entry.stat.st_mode))
    return found


def test_the_write_helpers_write_nothing_others_may_change_under_umask_000(tmp_path, umask):
    source = tmp_path / "job_output"
    (source / "open").mkdir(parents=True)
    (source / "open" / "scores.json").write_text('{"score": 1}')
    (source / "open" / "scores.json").chmod(0o666)
    (source / "open").chmod(0o777)
    members = tmp_path / "members.zip"
    with zipfile.ZipFile(members, "w") as zf:
        info = zipfile.ZipInfo("dir/shared.txt")
        info.external_attr = (stat.S_IFREG | 0o666) << 16
        zf.writestr(info, "x")
    umask(0)

    write_text(tmp_path / "a" / "b" / "c.txt", "text")
    with new_folder(tmp_path / "filled", tmp_path / ".filled-tmp") as tmp:
        (tmp / "made" / "here").mkdir(parents=True)  # 0777 under umask 000
        (tmp / "made" / "here" / "file.txt").write_text("x")  # 0666
    zipped = zip_directory(source, tmp_path / "z" / "out.zip")
    copy_job_output(source, tmp_path / "copied" / "output")
    safe_extract(members, tmp_path / "extracted" / "here")

    for written in ("a", "filled", "z", "copied", "extracted"):
        assert open_to_others(tmp_path / written) == {}, written
    assert stat.S_IMODE(zipped.stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "a" / "b").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "copied" / "output" / "open" / "scores.json").stat().st_mode) == 0o644


def test_a_stricter_umask_takes_more_away(tmp_path, umask):
    umask(0o077)
    write_text(tmp_path / "a" / "c.txt", "text")
    zipped = zip_directory(tmp_path / "a", tmp_path / "z" / "out.zip")
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
    assert {stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "a" / "c.txt", zipped)} == {0o600}


def _zippable(work: Path) -> Path:
    """The hostile bundle with the good submissions only, ready for ``bundle zip``."""
    bundle = hostile_bundle(work, [])
    with open(bundle / "ranking" / "metascore.yaml", "a") as handle:
        handle.write("baselines: [good_too]\n")  # the check before zipping asks for one
    with open(bundle / "competition.yaml", "a") as handle:
        handle.write("docker_image: codalab/codalab-legacy:py312\n")  # runs the meta program as it is
    return bundle


def test_bundle_zip_under_umask_000_writes_a_zip_only_its_user_may_change(tmp_path, umask, capsys):
    bundle = _zippable(tmp_path)
    umask(0)
    assert main(["bundle", "zip", str(bundle), "-o", str(tmp_path / "new" / "upload.zip")]) == 0, capsys.readouterr()
    assert open_to_others(tmp_path / "new") == {}
    assert stat.S_IMODE((tmp_path / "new" / "upload.zip").stat().st_mode) == 0o644


def test_add_meta_under_umask_000_writes_copies_only_its_user_may_change(tmp_path, umask, capsys):
    """``-o DIR`` of a folder (the copy and the files add-meta adds), ``-o NEW.zip`` of a zip."""
    folder = tmp_path / "bundle"
    shutil.copytree(ADD_META_V2, folder)
    with open(folder / "competition.yaml", "a") as handle:  # runs the meta program with its python3
        handle.write("docker_image: codalab/codalab-legacy:py312\n")
    (folder / "pages" / "extra.md").write_text("the organizer's page\n")
    (folder / "pages" / "extra.md").chmod(0o666)  # copied as the organizer's own file is not
    zipped = zip_directory(folder, tmp_path / "bundle.zip")
    umask(0)
    assert main(["bundle", "add-meta", str(folder), "--end", "2026-12-31", "-o", str(tmp_path / "copy")]) == 0, \
        capsys.readouterr()
    assert main(["bundle", "add-meta", str(zipped), "--end", "2026-12-31", "-o", str(tmp_path / "new.zip")]) == 0, \
        capsys.readouterr()
    assert (tmp_path / "copy" / "meta_scoring_program").is_dir()
    assert open_to_others(tmp_path / "copy") == {}
    assert stat.S_IMODE((tmp_path / "new.zip").stat().st_mode) == 0o644
