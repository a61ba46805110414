"""Issue 46: only the organizer can make a final ranking.

The meta-scoring program (``score.py``, as ``bundle zip`` fills it: the organizer's public
key next to it) ranks a results export only when it carries the signature of that key over
every file; anything else exits 1 with one line and writes nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from metascore.bundle.meta.program_folder import assemble_meta_program
from metascore.errors import ConfigError
from metascore.signature import (PUBLIC_KEY_NAME, SIGNATURE_NAME, SignatureError, organizer_key,
                                 public_key_text, sign_folder, verify_folder)
from repo_paths import ROOT

FIXTURE = ROOT / "tests" / "data" / "competition"
CONFIG = "input: {path: long.csv}\nbaselines: [organizers]\n"


@pytest.fixture
def app(tmp_path):
    """/app as the worker lays it out for the meta phase: the program filled by ``bundle
    zip`` (with the key on this machine), the configuration and a results export."""
    program = assemble_meta_program(tmp_path / "program")
    (tmp_path / "input" / "ref").mkdir(parents=True)
    (tmp_path / "input" / "ref" / "metascore.yaml").write_text(CONFIG)
    res = tmp_path / "input" / "res"
    res.mkdir()
    shutil.copy(FIXTURE / "long.csv", res / "long.csv")
    (tmp_path / "output").mkdir()
    return tmp_path, program, res


def _score(tmp: Path, program: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(program / "score.py"), str(tmp / "input"), str(tmp / "output")],
                          capture_output=True, text=True, timeout=120, cwd=program)


def _refused(proc: subprocess.CompletedProcess, tmp: Path, *needles: str) -> None:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("metascore: error: "), proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr
    assert list((tmp / "output").iterdir()) == []


def test_the_organizers_signed_export_is_ranked(app):
    tmp, program, res = app
    sign_folder(res, organizer_key())
    (res / "metadata").write_text("exitCode: 0\n")  # the worker's own file, not signed
    proc = _score(tmp, program)
    assert proc.returncode == 0, proc.stderr
    assert f"signed by the organizer (key {organizer_key().fingerprint})" in proc.stdout
    assert (tmp / "output" / "leaderboard.csv").is_file()


def test_a_participants_unsigned_export_is_refused(app):
    tmp, program, _ = app
    _refused(_score(tmp, program), tmp, "not signed by the organizer (no metascore.sig",
             "only the organizer's `metascore codabench submit` makes a final ranking")


def test_an_export_signed_with_another_key_is_refused(app):
    tmp, program, res = app
    hers = organizer_key(tmp / "participant_key")
    sign_folder(res, hers)
    _refused(_score(tmp, program), tmp, f"signed by key {hers.fingerprint}",
             f"not by the organizer's key {organizer_key().fingerprint}")


@pytest.mark.parametrize("change, needle", [
    (lambda res: (res / "long.csv").write_text((res / "long.csv").read_text().replace("0.9", "0.1")),
     "long.csv was changed after the organizer signed"),
    (lambda res: (res / "extra.csv").write_text("candidate,task,value\nme,iris,1\n"),
     "extra.csv is in the results export but not in its signature"),
    (lambda res: (res / "long.csv").unlink(), "long.csv, signed by the organizer, is missing"),
    (lambda res: (res / SIGNATURE_NAME).write_text("{}"), "is not a metascore signature"),
])
def test_a_changed_export_is_refused(app, change, needle):
    tmp, program, res = app
    sign_folder(res, organizer_key())
    change(res)
    _refused(_score(tmp, program), tmp, needle)


def test_a_forged_signature_is_refused(app):
    tmp, program, res = app
    sign_folder(res, organizer_key())
    data = json.loads((res / SIGNATURE_NAME).read_text())
    data["files"]["long.csv"] = "0" * 64  # the list changed, the signature kept
    (res / SIGNATURE_NAME).write_text(json.dumps(data))
    _refused(_score(tmp, program), tmp, "does not match its list of files")


def test_a_program_without_the_organizers_key_refuses_everything(app):
    tmp, program, res = app
    sign_folder(res, organizer_key())
    (program / PUBLIC_KEY_NAME).unlink()
    _refused(_score(tmp, program), tmp, "has no organizer key (organizer_key.pub next to score.py)",
             "`metascore bundle zip`")


def test_the_filled_program_checks_signatures_with_only_its_own_files(tmp_path):
    """The vendored python-ecdsa and six run in a Python that has neither (an image's):
    isolated mode, no site packages, only the program folder and the standard library."""
    program = assemble_meta_program(tmp_path / "program")
    assert (program / PUBLIC_KEY_NAME).read_text() == public_key_text(organizer_key().public)
    assert (program / "LICENSES" / "ecdsa.txt").is_file() and (program / "LICENSES" / "six.txt").is_file()
    assert not list((program / "ecdsa").glob("test_*.py"))
    res = tmp_path / "res"
    res.mkdir()
    (res / "results.json").write_text("{}")
    sign_folder(res, organizer_key())
    # the package's __init__ needs numpy: load the vendored metascore/ as a bare namespace
    check = (f"import sys, types; sys.path.insert(0, {str(program)!r}); "
             "import ecdsa, six; assert ecdsa.__file__.startswith(sys.path[0]), ecdsa.__file__; "
             f"pkg = types.ModuleType('metascore'); pkg.__path__ = [{str(program / 'metascore')!r}]; "
             "sys.modules['metascore'] = pkg; "
             "from metascore.signature import verify_folder, read_public_key; from pathlib import Path; "
             f"print(verify_folder(Path({str(res)!r}), read_public_key(Path({str(program / PUBLIC_KEY_NAME)!r}))))")
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", check], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == organizer_key().fingerprint, proc.stderr


def test_the_key_is_made_once_private_and_reused(tmp_path):
    path = tmp_path / "keys" / "organizer_key"
    first = organizer_key(path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert organizer_key(path) == first and len(first.public) == 32
    with pytest.raises(ConfigError, match="no organizer key at"):
        organizer_key(tmp_path / "absent", create=False)
    path.write_text("not a key\n")
    with pytest.raises(ConfigError, match="not a metascore organizer key"):
        organizer_key(path)


def test_verify_folder_names_the_fingerprint(tmp_path):
    key = organizer_key(tmp_path / "k")
    (tmp_path / "res").mkdir()
    (tmp_path / "res" / "a.csv").write_text("x\n")
    sign_folder(tmp_path / "res", key)
    assert verify_folder(tmp_path / "res", key.public) == key.fingerprint
    with pytest.raises(SignatureError):
        verify_folder(tmp_path / "res", organizer_key(tmp_path / "other").public)


def test_bundle_check_refuses_a_meta_program_without_the_organizers_key(tmp_path):
    """A program that checks signatures but carries no key would refuse every export."""
    from metascore.bundle.check.full import check_bundle

    bundle = Path(shutil.copytree(ROOT / "bundle_template", tmp_path / "bundle"))
    program = bundle / "meta_scoring_program"
    shutil.rmtree(program)
    assemble_meta_program(program)
    assert check_bundle(bundle).errors == []
    (program / PUBLIC_KEY_NAME).unlink()
    errors = check_bundle(bundle).errors
    assert len(errors) == 1 and "has no organizer_key.pub, so it refuses every results export" in errors[0]


def test_a_key_that_cannot_be_made_stops_bundle_run_before_any_job(tmp_path):
    """The runner takes the organizer's key when it starts, not after every phase has run:
    a key file that cannot be made is one line naming it and the way out, and no job ran."""
    env = {**os.environ, "METASCORE_ORGANIZER_KEY": str(tmp_path / "file" / "key")}
    (tmp_path / "file").write_text("a file, not a folder")
    proc = subprocess.run([sys.executable, "-m", "metascore", "bundle", "run", str(ROOT / "bundle_template"),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"metascore: error: cannot make the organizer key {tmp_path / 'file' / 'key'}")
    assert "METASCORE_ORGANIZER_KEY" in last and "Traceback" not in proc.stderr
    assert "Finished" not in proc.stdout + proc.stderr  # no job ran
