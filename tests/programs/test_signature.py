"""Issue 46: only the organizer can make a final ranking.

The meta-scoring program (``score.py``, as ``bundle zip`` fills it: the organizer's public
key next to it) ranks a results export only when it carries the signature of that key over
every file; anything else exits 1 with one line and writes nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import subprocess
import sys
from pathlib import Path

import pytest

from metascore.bundle.meta.program_folder import assemble_meta_program
from metascore.errors import ConfigError
from metascore.signature.binding import COMPETITION_FILE, Binding, new_token, token_text
from metascore.signature import (PUBLIC_KEY_NAME, SIGNATURE_NAME, SignatureError, organizer_key,
                                 public_key_text, sign_folder, verify_folder)
from repo_paths import ROOT

FIXTURE = ROOT / "tests" / "data" / "competition"
CONFIG = "input: {path: long.csv}\nbaselines: [organizers]\n"
TOKEN = new_token()
NOW = "2027-07-02T10:00:00+00:00"


def binding(token: str = TOKEN, **kw) -> Binding:
    """What the organizer's `codabench submit` signs an export for: competition 12's meta phase."""
    return Binding(**{"site": "https://codabench.example", "competition": 12, "phase": "Final ranking",
                      "phase_id": 34, "tokens": (token,), "pulled_at": NOW,
                      "opened": "2027-07-01T00:00:00Z", "ends": (("Development", "2027-05-31T23:59:00Z"),
                                                                 ("Final", "2027-06-30T23:59:00Z")), **kw})


def sign(res: Path, key=None, **kw) -> Path:
    return sign_folder(res, key or organizer_key(), binding(**kw), NOW)


@pytest.fixture
def app(tmp_path):
    """/app as the worker lays it out for the meta phase: the program filled by ``bundle
    zip`` (with the key on this machine), the configuration and a results export."""
    program = assemble_meta_program(tmp_path / "program")
    (tmp_path / "input" / "ref").mkdir(parents=True)
    (tmp_path / "input" / "ref" / "metascore.yaml").write_text(CONFIG)
    (tmp_path / "input" / "ref" / COMPETITION_FILE).write_text(token_text(TOKEN, "test"))
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
    sign(res)
    (res / "metadata").write_text("exitCode: 0\n")  # the worker's own file, not signed
    proc = _score(tmp, program)
    assert proc.returncode == 0, proc.stderr
    assert (f"signed by the organizer (key {organizer_key().fingerprint}) for competition 12's phase "
            f"'Final ranking' (id 34) on https://codabench.example, pulled at {NOW}") in proc.stdout
    assert (tmp / "output" / "leaderboard.csv").is_file()


def test_a_participants_unsigned_export_is_refused(app):
    tmp, program, _ = app
    _refused(_score(tmp, program), tmp, "not signed by the organizer (no metascore.sig",
             "only the organizer's `metascore codabench submit` makes a final ranking")


def test_an_export_signed_with_another_key_is_refused(app):
    tmp, program, res = app
    hers = organizer_key(tmp / "participant_key")
    sign(res, hers)
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
    sign(res)
    change(res)
    _refused(_score(tmp, program), tmp, needle)


def test_a_forged_signature_is_refused(app):
    tmp, program, res = app
    sign(res)
    data = json.loads((res / SIGNATURE_NAME).read_text())
    data["files"]["long.csv"] = "0" * 64  # the list changed, the signature kept
    (res / SIGNATURE_NAME).write_text(json.dumps(data))
    _refused(_score(tmp, program), tmp, "does not match what it signs")


def test_a_program_without_the_organizers_key_refuses_everything(app):
    tmp, program, res = app
    sign(res)
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
    sign(res)
    # the package's __init__ needs numpy: load the vendored metascore/ as a bare namespace
    check = (f"import sys, types; sys.path.insert(0, {str(program)!r}); "
             "import ecdsa, six; assert ecdsa.__file__.startswith(sys.path[0]), ecdsa.__file__; "
             f"pkg = types.ModuleType('metascore'); pkg.__path__ = [{str(program / 'metascore')!r}]; "
             "sys.modules['metascore'] = pkg; "
             "from metascore.signature import verify_folder, read_public_key; from pathlib import Path; "
             f"print(verify_folder(Path({str(res)!r}), read_public_key(Path({str(program / PUBLIC_KEY_NAME)!r})), "
             f"{TOKEN!r}).fingerprint)")
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
    sign(tmp_path / "res", key)
    signed = verify_folder(tmp_path / "res", key.public, TOKEN)
    assert signed.fingerprint == key.fingerprint and signed.binding == binding() and signed.signed_at == NOW
    with pytest.raises(SignatureError):
        verify_folder(tmp_path / "res", organizer_key(tmp_path / "other").public, TOKEN)


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


# ---------------------------------------------------------------------- issue 49, item 1
def test_an_export_signed_for_another_competition_or_meta_phase_is_refused(app):
    """The organizer's key is one per user, shared by all their competitions: an export they
    signed for another competition (or another meta phase: another token) is not ranked."""
    tmp, program, res = app
    sign(res, token=new_token(), competition=99, phase_id=7)
    _refused(_score(tmp, program), tmp, "was signed for competition 99's phase 'Final ranking' (id 7) on "
             "https://codabench.example, not for this competition's meta phase",
             f"its token {TOKEN[:8]}... is not the signed")


@pytest.mark.parametrize("pulled_at, needle", [
    ("2027-06-20T08:00:00+00:00", "before phase 'Final' ended (2027-06-30T23:59:00Z)"),
    ("2027-06-30T23:59:30Z", "before the meta phase 'Final ranking' opened (2027-07-01T00:00:00Z)"),
])
def test_an_export_pulled_before_the_phases_closed_is_refused(app, pulled_at, needle):
    """This competition's own signed export, pulled while submissions could still come in:
    whoever replays it later, it is not ranked."""
    tmp, program, res = app
    sign(res, pulled_at=pulled_at)
    _refused(_score(tmp, program), tmp, "this results export is stale: its leaderboards were pulled at "
             f"{pulled_at}", needle, "pull the leaderboards again now")


def test_a_meta_phase_without_its_token_refuses_everything(app):
    tmp, program, res = app
    sign(res)
    (tmp / "input" / "ref" / COMPETITION_FILE).unlink()
    _refused(_score(tmp, program), tmp, f"the meta task's reference data has no {COMPETITION_FILE}",
             "`metascore bundle zip`")


def test_a_signature_of_the_older_format_is_one_line(app):
    tmp, program, res = app
    sign(res)
    data = json.loads((res / SIGNATURE_NAME).read_text())
    data["format"] = "metascore-signature/1"
    (res / SIGNATURE_NAME).write_text(json.dumps(data))
    _refused(_score(tmp, program), tmp, "older signature format (metascore-signature/1)", "sign it again")


def test_a_deeply_nested_signature_is_one_line(app):
    tmp, program, res = app
    (res / SIGNATURE_NAME).write_text("[" * 200_000 + "]" * 200_000)
    proc = _score(tmp, program)
    _refused(proc, tmp, "is not a metascore signature")
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr


# ---------------------------------------------------------------------- issue 49, item 4
def _under_umask(mask: int, fn):
    old = os.umask(mask)
    try:
        return fn()
    finally:
        os.umask(old)


def test_the_key_and_its_folders_are_private_whatever_the_umask(tmp_path):
    path = tmp_path / "config" / "metascore" / "organizer_key"
    _under_umask(0, lambda: organizer_key(path))
    assert path.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "config" / "metascore").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "config").stat().st_mode & 0o777 == 0o700
    assert organizer_key(path).path == path  # read back


@pytest.mark.parametrize("mode, needle", [(0o644, "mode 0644"), (0o620, "mode 0620"), (0o604, "mode 0604")])
def test_a_key_others_may_read_or_write_is_refused(tmp_path, mode, needle):
    path = tmp_path / "keys" / "organizer_key"
    organizer_key(path)
    path.chmod(mode)
    with pytest.raises(ConfigError) as info:
        organizer_key(path)
    assert needle in str(info.value) and f"run `chmod 600 {path}`" in str(info.value)


def test_a_key_in_a_folder_others_may_write_is_refused(tmp_path):
    path = tmp_path / "keys" / "organizer_key"
    organizer_key(path)
    (tmp_path / "keys").chmod(0o777)
    with pytest.raises(ConfigError) as info:
        organizer_key(path)
    assert "may be written by other users (mode 0777)" in str(info.value)
    assert f"run `chmod 700 {tmp_path / 'keys'}`" in str(info.value)


# ---------------------------------------------------------------------- root and nobody
AS_USER = r'''
import json, os, shutil, subprocess, sys
from pathlib import Path
from metascore.bundle.meta.program_folder import assemble_meta_program
from metascore.signature.binding import COMPETITION_FILE, Binding, new_token, token_text
from metascore.signature import organizer_key, sign_folder
from metascore.errors import ConfigError

work, long_csv = Path(sys.argv[1]), sys.argv[2]
os.umask(0)  # the worst umask: nothing may come out world-readable or writable
key = organizer_key()
home = Path(os.environ["HOME"])
modes = {p: oct(os.stat(home / p).st_mode & 0o777) for p in (".config", ".config/metascore", ".config/metascore/organizer_key")}
program = assemble_meta_program(work / "program", python="image", key=key)
token = new_token()
def case(name, **kw):
    app = work / name
    (app / "input" / "ref").mkdir(parents=True)
    (app / "input" / "res").mkdir()
    (app / "output").mkdir()
    (app / "input" / "ref" / "metascore.yaml").write_text("input: {path: long.csv}\nbaselines: [organizers]\n")
    (app / "input" / "ref" / COMPETITION_FILE).write_text(token_text(token))
    shutil.copy(long_csv, app / "input" / "res" / "long.csv")
    b = dict(site="https://codabench.example", competition=12, phase="Final ranking", phase_id=34,
             tokens=(token,), pulled_at="2027-07-02T10:00:00+00:00", opened="2027-07-01T00:00:00Z")
    b.update(kw)
    sign_folder(app / "input" / "res", key, Binding(**b), "2027-07-02T10:00:00+00:00")
    proc = subprocess.run([sys.executable, str(program / "score.py"), str(app / "input"), str(app / "output")],
                          capture_output=True, text=True, cwd=program)
    return {"rc": proc.returncode, "stderr": proc.stderr, "outputs": sorted(os.listdir(app / "output"))}
results = {"ok": case("ok"), "foreign": case("foreign", tokens=(new_token(),), competition=99),
           "stale": case("stale", pulled_at="2027-06-30T12:00:00+00:00")}
(home / ".config" / "metascore" / "organizer_key").chmod(0o644)
try:
    organizer_key()
    loose = "accepted"
except ConfigError as exc:
    loose = str(exc)
print(json.dumps({"modes": modes, "results": results, "loose": loose}))
'''


@pytest.mark.parametrize("user", ["root", "nobody"])
def test_every_refusal_holds_as_root_and_as_an_ordinary_user(tmp_path, user):
    """Issue 49 items 1 and 4 as an organizer's machine runs them, by root and by an ordinary
    user, under umask 000: the key's folders 700 and the key 600, a key others may read
    refused, and the meta program ranks this competition's fresh export only."""
    from requirements import NOBODY, require_public_python, source_for_others

    if os.geteuid() != 0:
        pytest.skip("needs root: to run as root, or to become another user")
    work = Path(tempfile.mkdtemp(prefix="metascore-i49-", dir="/var/tmp"))
    try:
        home = work / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if k != "METASCORE_ORGANIZER_KEY"}
        env.update(HOME=str(home), PYTHONPATH=str(source_for_others()))
        command = [sys.executable]
        if user == "nobody":
            command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", require_public_python()]
            work.chmod(0o711)
            subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(home)], check=True)
            (work / "cases").mkdir()
            subprocess.run(["chown", f"{NOBODY}:{NOBODY}", str(work / "cases")], check=True)
            shutil.copy(FIXTURE / "long.csv", work / "long.csv")
            (work / "long.csv").chmod(0o644)
        else:
            (work / "cases").mkdir()
            shutil.copy(FIXTURE / "long.csv", work / "long.csv")
        proc = subprocess.run([*command, "-c", AS_USER, str(work / "cases"), str(work / "long.csv")],
                              capture_output=True, text=True, env=env, timeout=300, cwd=work)
        assert proc.returncode == 0, proc.stderr[-3000:]
        found = json.loads(proc.stdout.splitlines()[-1])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert found["modes"] == {".config": "0o700", ".config/metascore": "0o700", ".config/metascore/organizer_key": "0o600"}
    ok, foreign, stale = (found["results"][k] for k in ("ok", "foreign", "stale"))
    assert ok["rc"] == 0 and "leaderboard.csv" in ok["outputs"], ok["stderr"]
    for refused, needle in ((foreign, "was signed for competition 99's phase"), (stale, "is stale")):
        assert refused["rc"] == 1 and refused["outputs"] == [], refused
        assert refused["stderr"].count("\n") == 1 and needle in refused["stderr"], refused["stderr"]
    assert "may be read or changed by other users (mode 0644)" in found["loose"], found["loose"]
