"""The meta-scoring program's own Python (issue 36), without building it: the command, the
cache, the zips, the checks and the probe, on small trees and fake builds.

The real build and the runs in old images are in ``test_meta_image.py``.
"""

from __future__ import annotations

import json
import shlex
from types import SimpleNamespace
import struct
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from metascore.bundle.runtime import store as rt
from metascore.bundle.platform import meta_program
from metascore.bundle.runtime import build as recipe
from metascore.bundle.runtime import cpython as cpython_recipe
from metascore.bundle.archive import zip_directory
from metascore.bundle.worker.backend import StepResult
from metascore.bundle.check.full import check_bundle
from metascore.bundle.schema.competition import DEFAULT_IMAGE
from metascore.bundle.worker.image_probe import LOCAL_NOTICE, PROBE, probe_command, probe_image
from metascore.bundle.meta.program_folder import assemble_meta_program
from metascore.bundle.platform.meta_program import meta_python_of
from metascore.cli import main
from metascore.errors import ConfigError
from repo_paths import ROOT, TESTS

TEMPLATE = ROOT / "bundle_template"
NO_PYTHON = TESTS / "data" / "bundles" / "no_python"
PY = f"python{recipe.PYTHON_VERSION}"
#: the interpreter's part of the bundled command (before the script)
INTERPRETER = shlex.split(rt.bundled_command())[:-3]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty runtime cache of this test's own."""
    monkeypatch.setenv("METASCORE_RUNTIME_CACHE", str(tmp_path / "runtime-cache"))
    return tmp_path / "runtime-cache"


def _fake_cpython(dest: Path, work: Path, downloads: Path, log) -> dict:
    """What build_cpython leaves, in small: an interpreter file and one module."""
    (dest / "bin").mkdir(parents=True)
    (dest / "bin" / PY).write_bytes(b"\x7fELF not really")
    (dest / "lib" / PY).mkdir(parents=True)
    (dest / "lib" / PY / "os.py").write_text("# the standard library\n")
    return {"build_seconds": 1}


def _fake_build(dest: Path, cpython: Path, work: Path, log) -> dict:
    """What build_runtime leaves: stage one's files as they are."""
    import shutil

    shutil.copytree(cpython, dest)
    return {"glibc": "2.17"}


@pytest.fixture
def fake_builds(cache, monkeypatch):
    """Builds made by :func:`_fake_cpython` and :func:`_fake_build` (no compiler runs), and no
    installed runtime wheel; returns the calls of each stage."""
    calls = {"cpython": 0, "runtime": 0}

    def cpython(*args):
        calls["cpython"] += 1
        return _fake_cpython(*args)

    def runtime(*args):
        calls["runtime"] += 1
        return _fake_build(*args)

    monkeypatch.setattr(cpython_recipe, "build_cpython", cpython)
    monkeypatch.setattr(recipe, "build_runtime", runtime)
    monkeypatch.setattr(cpython_recipe, "check_host", lambda: None)
    monkeypatch.setattr(rt, "installed_wheel", lambda: None)
    return calls


@pytest.fixture
def fake_runtime(fake_builds):
    """A build of the current recipe made by the fake stages."""
    return rt.ensure_runtime()


# ----------------------------------------------------------------------------- the command
def test_the_cache_key_follows_the_build_steps_not_where_the_recipe_lives(tmp_path):
    """Moving runtime_build.py (its relative imports), rewording a docstring or a comment keeps
    the cached runtime; changing a build step builds again."""
    source = Path(recipe.__file__).read_text(encoding="utf-8")
    digest = cpython_recipe.code_digest(Path(recipe.__file__))
    moved = tmp_path / "runtime_build.py"
    moved.write_text(source.replace("from ...errors import", "from metascore.errors import")
                     .replace('"""Everything the runtime depends on', '"""All that the runtime depends on')
                     .replace("# children before their folders", "# the children first"),
                     encoding="utf-8")
    assert cpython_recipe.code_digest(moved) == digest
    moved.write_text(source + "\nEXTRA_STEP = 1\n", encoding="utf-8")
    assert cpython_recipe.code_digest(moved) != digest


def _other_pythons() -> list[str]:
    """Interpreters of other versions than this one on this machine (pyenv's, the system's)."""
    import glob
    import subprocess
    import sys

    found = {}
    for path in sorted(glob.glob("/root/.pyenv/versions/3.*/bin/python3")
                       + glob.glob("/usr/bin/python3.1[0-9]") + glob.glob("/usr/local/bin/python3.1[0-9]")):
        proc = subprocess.run([path, "-c", "import sys; print(sys.version_info[:2] >= (3, 10), sys.version[:5])"],
                              capture_output=True, text=True)
        if proc.returncode == 0 and proc.stdout.startswith("True") and proc.stdout.split()[1] != sys.version[:5]:
            found.setdefault(proc.stdout.split()[1], path)
    return list(found.values())


def test_every_python_computes_the_same_recipe_key():
    """The key names a wheel built on one Python and looked for by metascore on another: it
    is read from the text, not from a dump of the syntax tree (which differs by version)."""
    import inspect
    import subprocess

    others = _other_pythons()
    if not others:
        pytest.skip("no other Python >= 3.10 on this machine to compare with")
    code = ("import ast, hashlib, io, tokenize\nfrom pathlib import Path\n"
            + inspect.getsource(cpython_recipe.code_digest)
            + "import sys\nprint(' '.join(code_digest(Path(p)) for p in sys.argv[1:]))\n")
    files = [cpython_recipe.__file__, recipe.__file__]
    ours = " ".join(cpython_recipe.code_digest(Path(f)) for f in files)
    for python in others:
        proc = subprocess.run([python, "-c", code, *files], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == ours, python


def test_the_bundled_command_runs_the_interpreter_through_the_image_loader():
    assert shlex.split(rt.bundled_command()) == [
        "/lib64/ld-linux-x86-64.so.2", f"/app/program/runtime/bin/{PY}", "-I", "-B", "-u",
        "-X", "pycache_prefix=/app/program/runtime/pycache",
        "/app/program/score.py", "/app/input", "/app/output"]
    assert rt.image_command() == "python3 /app/program/score.py /app/input /app/output"
    # the folder the platform's facts name is where the recipe mounts the runtime
    assert meta_program.RUNTIME_DIR == Path(recipe.MOUNT).name and Path(recipe.MOUNT).parent == Path("/app/program")


def test_meta_python_default_is_auto_and_the_environment_can_change_it(monkeypatch):
    monkeypatch.delenv("METASCORE_META_PYTHON", raising=False)
    assert meta_program.default_meta_python() == "auto"
    monkeypatch.setenv("METASCORE_META_PYTHON", "image")
    assert meta_program.default_meta_python() == "image"
    monkeypatch.setenv("METASCORE_META_PYTHON", "conda")
    with pytest.raises(ConfigError, match=r"^--meta-python 'conda': use one of auto, bundled, image"):
        meta_program.default_meta_python()


@pytest.mark.parametrize("image, expected", [
    ("codalab/codalab-legacy:py312", "image"),       # Python 3.12 with numpy, scipy, pandas, yaml
    ("docker.io/codalab/codalab-legacy:py312", "image"),
    ("codalab/codalab-legacy:py37", "bundled"),      # Codabench's default: Python 3.7
    ("codalab/codalab-legacy:py39", "bundled"),
    ("debian:bullseye", "bundled"),                  # not known: the program carries its Python
    (None, "bundled"),
])
def test_auto_ships_the_runtime_only_where_the_image_cannot_run_the_program(monkeypatch, image, expected):
    monkeypatch.delenv("METASCORE_META_PYTHON", raising=False)
    assert meta_program.meta_python_in(image) == expected
    assert meta_program.meta_python_in(image, "bundled") == "bundled" and meta_program.meta_python_in(image, "image") == "image"


def test_a_local_run_never_needs_the_runtime_and_a_docker_run_follows_the_image(monkeypatch, tmp_path):
    """auto on the local backend, which runs this machine's Python whatever the image: the
    image's python3 command (no build); on the docker backend: what the image needs. Read
    from what the backend declares (its capabilities), as the runner fills the placeholder."""
    from metascore.bundle.runner import _meta_filler
    from metascore.bundle.worker.backend import Capabilities
    from metascore.bundle.worker.docker_backend import DockerBackend
    from metascore.bundle.worker.local import LocalBackend

    monkeypatch.delenv("METASCORE_META_PYTHON", raising=False)
    assert LocalBackend(sandbox="rewrite").capabilities.runs_image is False
    assert DockerBackend.capabilities.runs_image is True
    filled = []
    monkeypatch.setattr("metascore.bundle.runner.assemble_meta_program",
                        lambda target, source, *, python, log, key: filled.append(python))
    for runs_image, image, expected in ((False, "codalab/codalab-legacy:py37", "image"),
                                        (True, "codalab/codalab-legacy:py37", "bundled"),
                                        (True, "codalab/codalab-legacy:py312", "image")):
        backend = SimpleNamespace(capabilities=Capabilities(runs_image=runs_image))
        for meta_python, wanted in ((None, expected), ("bundled", "bundled")):
            _meta_filler(None, meta_python, backend, image, lambda _: None)(tmp_path / "program", None)
            assert filled.pop() == wanted, (runs_image, image, meta_python)
        assert meta_program.meta_python_in(image, None, in_image=runs_image) == expected


def test_the_recipe_key_follows_every_pin(monkeypatch):
    key = rt.recipe_key()
    assert key == rt.recipe_key() and len(key) == 16
    monkeypatch.setattr(recipe, "WHEELS", recipe.WHEELS[:-1])
    assert rt.recipe_key() != key
    monkeypatch.undo()
    cpython = cpython_recipe.cpython_key()
    monkeypatch.setattr(cpython_recipe, "SOURCES", cpython_recipe.SOURCES[:-1])
    assert rt.recipe_key() != key and cpython_recipe.cpython_key() != cpython
    monkeypatch.undo()
    monkeypatch.setattr(recipe, "SITE_UNUSED", recipe.SITE_UNUSED[1:])  # what is left out
    assert rt.recipe_key() != key and cpython_recipe.cpython_key() == cpython
    assert all(len(sha) == 64 for _, _, sha in cpython_recipe.SOURCES)
    assert all("==" in req and len(sha) == 64 for req, sha in recipe.WHEELS)


# ----------------------------------------------------------------------------- the cache
def test_ensure_builds_once_with_a_manifest_and_a_zip_then_reuses(fake_runtime, cache, monkeypatch):
    built = fake_runtime
    assert built.folder == cache / rt.recipe_key() and built.current
    assert (built.tree / "bin" / PY).is_file()
    assert built.manifest["glibc"] == "2.17" and built.manifest["command"] == rt.bundled_command()
    assert built.manifest["packages"] == [w for w, _ in recipe.WHEELS]
    with zipfile.ZipFile(built.zip) as zf:
        assert sorted(zf.namelist()) == [f"runtime/bin/{PY}", f"runtime/lib/{PY}/os.py"]
    assert built.manifest["zip_bytes"] == built.zip.stat().st_size

    def fail(*args):
        raise AssertionError("built again")

    monkeypatch.setattr(recipe, "build_runtime", fail)
    assert rt.ensure_runtime().folder == built.folder


def test_a_half_built_folder_is_built_again(cache, monkeypatch):
    monkeypatch.setattr(recipe, "build_runtime", _fake_build)
    monkeypatch.setattr(cpython_recipe, "build_cpython", _fake_cpython)
    monkeypatch.setattr(cpython_recipe, "check_host", lambda: None)
    half = cache / rt.recipe_key()
    (half / "runtime").mkdir(parents=True)  # no .complete: interrupted
    assert rt.find_runtime() is None
    assert (rt.ensure_runtime().tree / "bin" / PY).is_file()


def test_list_and_remove_keep_the_current_build_unless_all(fake_runtime, cache):
    old = cache / "0123456789abcdef"
    (old / "runtime").mkdir(parents=True)
    (old / "runtime.json").write_text(json.dumps({"python": "3.12"}))
    (old / ".complete").write_text("old\n")
    (cache / "build-0123-x").mkdir()  # an interrupted build's scratch folder
    assert [r.key for r in rt.list_runtimes()] == [fake_runtime.key, "0123456789abcdef"]
    assert "(outdated)" in rt.list_runtimes()[1].summary()
    removed = rt.remove_runtimes()
    assert sorted(Path(p).name for p in removed) == ["0123456789abcdef", "build-0123-x"]
    assert [r.key for r in rt.list_runtimes()] == [fake_runtime.key]
    rt.remove_runtimes(everything=True)
    assert rt.list_runtimes() == [] and not cache.exists()


def test_runtime_list_and_remove_commands(fake_runtime, capsys):
    assert main(["bundle", "runtime", "list"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{fake_runtime.key}: Python {recipe.PYTHON_VERSION}, numpy==") and "glibc >= 2.17" in out
    assert main(["bundle", "runtime", "remove", "--all"]) == 0
    assert "removed" in capsys.readouterr().out
    assert main(["bundle", "runtime", "list"]) == 0
    assert "no build in" in capsys.readouterr().out


def test_the_build_refuses_another_machine_in_one_sentence(monkeypatch):
    monkeypatch.setattr(cpython_recipe.platform, "machine", lambda: "aarch64")
    with pytest.raises(Exception, match=r"needs a Linux x86_64 machine \(this is linux aarch64\); "
                       r"install it as a wheel instead"):
        cpython_recipe.check_host()


# ----------------------------------------------------------------------------- the glibc check
def _elf(needs: list[str]) -> bytes:
    """A minimal ELF64 file whose ``.gnu.version_r`` requires ``needs`` from libc.so.6."""
    strtab = b"\0libc.so.6\0" + b"".join(n.encode() + b"\0" for n in needs)
    names = [strtab.index(n.encode() + b"\0") for n in needs]
    verneed = struct.pack("<HHIII", 1, len(needs), 1, 16, 0)
    for i, name in enumerate(names):
        verneed += struct.pack("<IHHII", 0, 0, i + 2, name, 16 if i + 1 < len(needs) else 0)
    strtab_at, verneed_at = 64, 64 + len(strtab)
    shoff = verneed_at + len(verneed)
    header = b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack(
        "<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, 3, 0)
    sections = bytes(64)  # the null section
    sections += struct.pack("<IIQQQQIIQQ", 0, 3, 0, 0, strtab_at, len(strtab), 0, 0, 1, 0)
    sections += struct.pack("<IIQQQQIIQQ", 0, 0x6FFFFFFE, 0, 0, verneed_at, len(verneed), 1, 1, 8, 0)
    return header + strtab + verneed + sections


def test_max_glibc_reads_the_symbol_versions_every_elf_file_needs(tmp_path):
    (tmp_path / "a.so").write_bytes(_elf(["GLIBC_2.2.5", "GLIBC_2.17", "GLIBCXX_3.4.30"]))
    assert recipe._needed_versions(tmp_path / "a.so") == {"GLIBC_2.2.5", "GLIBC_2.17", "GLIBCXX_3.4.30"}
    (tmp_path / "notes.txt").write_text("GLIBC_2.99 is only text here\n")
    assert recipe.max_glibc(tmp_path) == (2, 17)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.so").write_bytes(_elf(["GLIBC_2.34"]))
    assert recipe.max_glibc(tmp_path) == (2, 34)


# ----------------------------------------------------------------------------- trim
def test_trim_keeps_the_interpreter_and_the_modules_a_program_may_load(tmp_path):
    tree = tmp_path / "runtime"
    files = [f"bin/{PY}", "bin/python3", "bin/pydoc3", "include/Python.h", f"lib/libpython{recipe.PYTHON_VERSION}.a",
             f"lib/{PY}/os.py", f"lib/{PY}/test/test_os.py", f"lib/{PY}/idlelib/x.py",
             f"lib/{PY}/__pycache__/os.cpython-313.pyc", f"lib/{PY}/site-packages/bin/f2py",
             f"lib/{PY}/site-packages/numpy/core.py", f"lib/{PY}/site-packages/numpy/core.pyi",
             f"lib/{PY}/site-packages/numpy/_core/include/numpy/arrayobject.h",
             f"lib/{PY}/site-packages/numpy/_core/tests/_natype.py",
             f"lib/{PY}/site-packages/numpy/_core/tests/test_umath.py",
             f"lib/{PY}/site-packages/numpy/_core/tests/data/table.csv",
             f"lib/{PY}/site-packages/scipy/_lib/_ccallback_c.cpython-313-x86_64-linux-gnu.so"]
    for rel in files:
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text("x")
    recipe.trim(tree)
    left = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file())
    assert left == [f"bin/{PY}", f"lib/{PY}/os.py",
                    f"lib/{PY}/site-packages/numpy/_core/tests/_natype.py",  # numpy.testing imports it
                    f"lib/{PY}/site-packages/numpy/core.py",
                    f"lib/{PY}/site-packages/scipy/_lib/_ccallback_c.cpython-313-x86_64-linux-gnu.so"]
    assert not (tree / "include").exists() and not (tree / f"lib/{PY}/site-packages/numpy/_core/include").exists()


# ----------------------------------------------------------------------------- the program folder
def test_assemble_bundled_copies_the_runtime_and_writes_its_command(fake_runtime, tmp_path):
    program = assemble_meta_program(tmp_path / "meta", python="bundled")
    meta = yaml.safe_load((program / "metadata.yaml").read_text())
    assert meta["command"] == rt.bundled_command()
    assert "ranks every submission" in meta["description"]
    assert (program / "runtime" / "bin" / PY).read_bytes() == (fake_runtime.tree / "bin" / PY).read_bytes()
    assert (program / "metascore" / "program.py").is_file() and meta_python_of(program) == "bundled"
    image = assemble_meta_program(tmp_path / "image", python="image")
    assert yaml.safe_load((image / "metadata.yaml").read_text())["command"] == rt.image_command()
    assert not (image / "runtime").exists() and meta_python_of(image) == "image"


def test_a_custom_program_keeps_its_script_and_arguments(fake_runtime, tmp_path):
    source = tmp_path / "mine"
    source.mkdir()
    (source / "score.py").write_text("print('mine')\n")
    (source / "metadata.yaml").write_text("command: python3 score.py /app/input /app/output --verbose\n")
    program = assemble_meta_program(tmp_path / "meta", source, python="bundled", with_runtime=False)
    command = yaml.safe_load((program / "metadata.yaml").read_text())["command"]
    assert shlex.split(command) == [*INTERPRETER, "/app/program/score.py", "/app/input", "/app/output", "--verbose"]
    assert meta_python_of(program) == "image"  # without runtime/, the loader has nothing to run
    (source / "metadata.yaml").write_text("command: Rscript score.R\n")
    with pytest.raises(ConfigError, match=r"does not run `python3 SCRIPT \.\.\.`.*--meta-python image"):
        assemble_meta_program(tmp_path / "meta2", source, python="bundled", with_runtime=False)


def test_zip_directory_copies_the_base_zip_members_as_they_are(tmp_path):
    base = tmp_path / "runtime.zip"
    with zipfile.ZipFile(base, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("runtime/bin/python", b"\0" * 10000)
    src = tmp_path / "program"
    src.mkdir()
    (src / "score.py").write_text("print(1)\n")
    (src / "inner.zip").write_bytes(base.read_bytes())
    (src / "__pycache__").mkdir()
    (src / "__pycache__" / "score.cpython-313.pyc").write_bytes(b"x")
    out = zip_directory(src, tmp_path / "out.zip", base=base)
    with zipfile.ZipFile(out) as zf, zipfile.ZipFile(base) as zb:
        assert zf.namelist() == ["runtime/bin/python", "inner.zip", "score.py"]
        ours, theirs = zf.getinfo("runtime/bin/python"), zb.getinfo("runtime/bin/python")
        assert (ours.compress_size, ours.CRC) == (theirs.compress_size, theirs.CRC)
        assert zf.getinfo("inner.zip").compress_type == zipfile.ZIP_STORED
        assert zf.read("runtime/bin/python") == b"\0" * 10000


def test_bundle_zip_puts_the_cached_runtime_into_the_meta_program(fake_runtime, tmp_path, capsys):
    assert main(["bundle", "zip", str(TEMPLATE), "-o", str(tmp_path / "b.zip"), "--meta-python", "bundled"]) == 0
    assert "filled with the meta-scoring program and a vendored metascore, with its own Python" in capsys.readouterr().out
    with zipfile.ZipFile(tmp_path / "b.zip") as outer:
        (tmp_path / "meta.zip").write_bytes(outer.read("meta_scoring_program.zip"))
    with zipfile.ZipFile(tmp_path / "meta.zip") as zf:
        names = zf.namelist()
        assert names[:2] == [f"runtime/bin/{PY}", f"runtime/lib/{PY}/os.py"]
        assert {"score.py", "metadata.yaml", "metascore/program.py"} <= set(names)
        assert yaml.safe_load(zf.read("metadata.yaml"))["command"] == rt.bundled_command()
    assert meta_python_of(tmp_path / "meta.zip") == "bundled"


# ----------------------------------------------------------------------------- check and add-meta
def test_check_errors_on_an_old_image_only_when_the_image_python_runs_the_program(tmp_path):
    import shutil

    bundle = shutil.copytree(TEMPLATE, tmp_path / "b")
    text = (bundle / "competition.yaml").read_text().replace(
        "docker_image: codalab/codalab-legacy:py312\n", "")
    (bundle / "competition.yaml").write_text(text)
    assert check_bundle(bundle, meta_python="bundled").errors == []
    errors = check_bundle(bundle, meta_python="image").errors
    assert len(errors) == 1 and f"{DEFAULT_IMAGE} (Codabench's default" in errors[0]
    assert "runs Python 3.7" in errors[0] and "without --meta-python image" in errors[0]


def test_check_says_what_it_knows_of_the_image_without_a_probe(tmp_path, capsys):
    import shutil

    assert main(["bundle", "check", str(TEMPLATE), "--meta-python", "bundled"]) == 0
    out = capsys.readouterr().out
    assert ("note: the meta-scoring program carries its own Python (`bundle zip` puts it in): it runs "
            "in any Linux x86_64 image with glibc >= 2.17, which codalab/codalab-legacy:py312 is") in out
    bundle = shutil.copytree(NO_PYTHON, tmp_path / "np")
    assert main(["bundle", "add-meta", str(bundle)]) == 0
    capsys.readouterr()
    assert main(["bundle", "check", str(bundle), "--meta-python", "bundled"]) == 0
    assert ("and debian:bullseye-slim is not an image metascore knows; `metascore bundle check "
            "--probe` or `bundle run --backend docker` try it in a container") in capsys.readouterr().out


def test_add_meta_leaves_the_image_and_says_so_unless_image_is_given(tmp_path, capsys):
    import shutil

    bundle = shutil.copytree(NO_PYTHON, tmp_path / "np")
    before = (bundle / "competition.yaml").read_text()
    assert main(["bundle", "add-meta", str(bundle)]) == 0
    said = capsys.readouterr().out
    assert "note: docker_image left as it is, debian:bullseye-slim: every phase keeps running in it" in said
    assert "~ docker_image" not in said
    after = (bundle / "competition.yaml").read_text()
    assert [line for line in after.splitlines() if line.startswith("docker_image")] == [
        line for line in before.splitlines() if line.startswith("docker_image")] == ["docker_image: debian:bullseye-slim"]
    assert main(["bundle", "add-meta", str(bundle), "--image", "debian:bookworm-slim"]) == 0
    said = capsys.readouterr().out
    assert "~ docker_image: debian:bullseye-slim -> debian:bookworm-slim" in said
    assert yaml.safe_load((bundle / "competition.yaml").read_text())["docker_image"] == "debian:bookworm-slim"


# ----------------------------------------------------------------------------- the probe
class _Images:
    def get(self, image):
        return type("Image", (), {"attrs": {"Os": "linux", "Architecture": "amd64"}})()


class _Backend:
    """Stands in for DockerBackend: records the step, answers with ``result``."""

    name = "docker"

    def __init__(self, result: StepResult):
        self.result, self.steps = result, []
        self.client = type("Client", (), {"images": _Images()})()

    def image_for(self, step):
        return step.image

    def run(self, step):
        self.steps.append(step)
        return self.result


def test_the_probe_runs_the_program_interpreter_on_the_imports(fake_runtime, tmp_path):
    program = assemble_meta_program(tmp_path / "meta", python="bundled", with_runtime=False)
    assert shlex.split(probe_command(program)) == [*INTERPRETER, "-c", PROBE]
    facts = "Python 3.13.5, numpy 2.2.6, scipy 1.16.3, pandas 2.3.2; glibc 2.31, x86_64"
    backend = _Backend(StepResult(0, False, facts + "\n", "", 1.0))
    found = probe_image(backend, "old:1", program)
    step = backend.steps[0]
    assert (step.image, step.mounts[0].container_path, step.mounts[0].read_only) == ("old:1", "/app/program", True)
    assert found.ok and found.line() == f"the meta-scoring program runs in old:1 (linux/amd64): {facts}"
    failed = _Backend(StepResult(1, False, "", "Traceback ...\n/lib64/ld-linux-x86-64.so.2: version "
                                 "`GLIBC_2.17' not found\n", 1.0))
    found = probe_image(failed, "older:1", program)
    assert not found.ok and found.line() == (
        "the meta-scoring program cannot run in older:1 (linux/amd64): /lib64/ld-linux-x86-64.so.2: "
        "version `GLIBC_2.17' not found; the meta phase would fail there on Codabench")
    image = assemble_meta_program(tmp_path / "image", python="image")
    assert shlex.split(probe_command(image)) == ["python3", "-c", PROBE]


def test_a_local_run_says_it_cannot_know_the_image(tmp_path):
    from metascore.bundle.runner import meta_image_report
    from metascore.bundle.worker.local import LocalBackend
    from metascore.bundle.schema.load import load_competition
    from metascore.bundle.site.server import Site

    comp = load_competition(TEMPLATE)
    backend = LocalBackend(sandbox="rewrite")
    site = Site(comp, tmp_path, backend, image=None, log=lambda _: None,
                fill_meta_program=lambda *_: pytest.fail("nothing to fill: the image is not tried"))
    said = []
    assert meta_image_report(site, backend, comp.docker_image, said.append) == []
    assert said == ["[*] note: " + LOCAL_NOTICE.format(image="codalab/codalab-legacy:py312")]


def test_the_runtime_packages_are_not_the_modules_the_image_must_carry(fake_runtime, tmp_path):
    """A program importing numpy in an image without it is warned about even when the meta
    program's own Python carries a numpy (it is not on that program's path)."""
    from metascore.bundle.check.image_checks import _local_modules

    root = tmp_path / "bundle"
    (root / "meta" / "runtime" / "lib" / PY / "site-packages" / "numpy").mkdir(parents=True)
    (root / "meta" / "runtime" / "lib" / PY / "site-packages" / "numpy" / "__init__.py").write_text("")
    (root / "scoring_program").mkdir()
    (root / "scoring_program" / "helpers.py").write_text("")
    with zipfile.ZipFile(root / "meta.zip", "w") as zf:
        zf.writestr(f"runtime/lib/{PY}/site-packages/scipy/__init__.py", "")
        zf.writestr("metascore/program.py", "")
    found = _local_modules(root)
    assert {"helpers", "scoring_program", "metascore", "program", "meta"} <= found
    assert not {"numpy", "scipy", "site-packages", "lib"} & found


# ----------------------------------------------------------------------------- issue 43: stages, wheel, archive
def test_a_change_of_stage_two_reuses_the_compiled_cpython(fake_builds, cache, monkeypatch):
    first = rt.ensure_runtime()
    assert fake_builds == {"cpython": 1, "runtime": 1}
    assert (cache / f"cpython-{cpython_recipe.cpython_key()}" / ".complete").is_file()
    monkeypatch.setattr(recipe, "SITE_UNUSED", recipe.SITE_UNUSED[1:])  # leave out less
    second = rt.ensure_runtime()
    assert second.key != first.key and fake_builds == {"cpython": 1, "runtime": 2}
    assert second.manifest["cpython"] == cpython_recipe.cpython_key()
    assert second.manifest["tree_files"] == 2


def test_the_runtime_zip_is_lzma_and_holds_the_tree(fake_runtime):
    with zipfile.ZipFile(fake_runtime.zip) as zf:
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_LZMA}
        assert zf.read(f"runtime/lib/{PY}/os.py") == b"# the standard library\n"


def _installed(tmp_path: Path, runtime, version: str = "9.9.9", key: str | None = None):
    """A stand-in for an installed wheel's folder (its ELF file, runtime.zip, manifest)."""
    import shutil

    folder = tmp_path / "site-packages" / "metascore_runtime"
    (folder / "runtime" / "bin").mkdir(parents=True)
    shutil.copy(runtime.tree / "bin" / PY, folder / "runtime" / "bin" / PY)
    shutil.copy(runtime.zip, folder / "runtime.zip")
    manifest = {**runtime.manifest, "key": key or runtime.key}
    return folder, manifest, version


def test_an_installed_wheel_comes_before_the_cache_and_before_building(fake_builds, cache, tmp_path, monkeypatch):
    cached = rt.ensure_runtime()
    wheel = _installed(tmp_path, cached)
    monkeypatch.setattr(rt, "installed_wheel", lambda: wheel)
    found = rt.require_runtime(lambda _: None)
    assert (found.source, found.version, found.folder) == ("wheel", "9.9.9", wheel[0])
    assert found.zip == wheel[0] / "runtime.zip"
    # its tree, for a program folder, comes out of its zip into the cache once
    assert (found.tree / f"lib/{PY}/os.py").read_text() == "# the standard library\n"
    assert found.tree == cache / f"wheel-{found.key}" / "runtime"
    # no cache at all: the wheel still, nothing built
    import shutil

    shutil.rmtree(cache)
    assert rt.require_runtime(lambda _: None).source == "wheel" and fake_builds["runtime"] == 1


def test_another_release_s_wheel_is_said_and_the_cache_is_used(fake_builds, tmp_path, monkeypatch):
    cached = rt.ensure_runtime()
    monkeypatch.setattr(rt, "installed_wheel", lambda: _installed(tmp_path, cached, "0.0.1", "0123456789abcdef"))
    said: list[str] = []
    found = rt.require_runtime(said.append)
    assert found.source == "cache" and found.key == cached.key
    assert said == [f"[*] note: the installed metascore-runtime 0.0.1 is another recipe's (0123456789abcdef, "
                    f"not {cached.key}: install the one of this metascore's release)"]


def test_runtime_list_says_where_each_comes_from_and_which_is_used(fake_builds, tmp_path, monkeypatch, capsys):
    cached = rt.ensure_runtime()
    wheel = _installed(tmp_path, cached)
    monkeypatch.setattr(rt, "installed_wheel", lambda: wheel)
    assert main(["bundle", "runtime", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert lines[0].endswith(f"from the installed wheel metascore-runtime 9.9.9 ({wheel[0]}) "
                             "[used by bundle zip, run and add-meta]")
    assert lines[1].endswith(f"from the cache ({cached.folder})") and "[used" not in lines[1]


def test_bundle_zip_copies_the_installed_wheel_s_zip_without_building(fake_builds, cache, tmp_path, monkeypatch, capsys):
    import shutil

    cached = rt.ensure_runtime()
    wheel = _installed(tmp_path, cached)
    with zipfile.ZipFile(wheel[0] / "runtime.zip", "a") as zf:  # tell the wheel's zip apart
        zf.writestr("runtime/FROM_THE_WHEEL", "yes")
    shutil.rmtree(cache)
    monkeypatch.setattr(rt, "installed_wheel", lambda: wheel)
    assert main(["bundle", "zip", str(TEMPLATE), "-o", str(tmp_path / "b.zip"), "--meta-python", "bundled"]) == 0
    assert "building" not in capsys.readouterr().out and fake_builds["runtime"] == 1
    with zipfile.ZipFile(tmp_path / "b.zip") as outer:
        (tmp_path / "meta.zip").write_bytes(outer.read("meta_scoring_program.zip"))
    with zipfile.ZipFile(tmp_path / "meta.zip") as zf:
        assert zf.read("runtime/FROM_THE_WHEEL") == b"yes"
        assert zf.getinfo(f"runtime/bin/{PY}").compress_type == zipfile.ZIP_LZMA


def test_the_wheel_holds_the_zip_stored_and_the_elf_files_unpacked(fake_runtime, tmp_path):
    from metascore.bundle.runtime.wheel import write_wheel

    (fake_runtime.tree / "bin" / PY).write_bytes(b"\x7fELF\x02\x01" + b"\0" * 58)  # an ELF header
    rt.zip_runtime(fake_runtime.tree, fake_runtime.zip)
    wheel = write_wheel(fake_runtime.tree, fake_runtime.zip, fake_runtime.manifest, tmp_path, "1.2.3")
    assert wheel.name == "metascore_runtime-1.2.3-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        assert {i.compress_type for i in zf.infolist()} <= {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED}
        assert zf.getinfo("metascore_runtime/runtime.zip").compress_type == zipfile.ZIP_STORED
        assert zf.read("metascore_runtime/runtime.zip") == fake_runtime.zip.read_bytes()
        assert f"metascore_runtime/runtime/bin/{PY}" in names           # the ELF file, unpacked
        assert f"metascore_runtime/runtime/lib/{PY}/os.py" not in names  # the rest: in the zip
        assert json.loads(zf.read("metascore_runtime/runtime.json"))["key"] == fake_runtime.key
        wheel_file = zf.read("metascore_runtime-1.2.3.dist-info/WHEEL").decode()
        assert "Tag: py3-none-manylinux_2_17_x86_64\n" in wheel_file and "Root-Is-Purelib: false" in wheel_file
        record = zf.read("metascore_runtime-1.2.3.dist-info/RECORD").decode().splitlines()
        assert len(record) == len(names) and record[-1] == "metascore_runtime-1.2.3.dist-info/RECORD,,"
    again = write_wheel(fake_runtime.tree, fake_runtime.zip, fake_runtime.manifest, tmp_path / "2", "1.2.3")
    assert again.read_bytes() == wheel.read_bytes()  # the same files, the same wheel


def test_runtime_build_wheel_writes_it(fake_runtime, tmp_path, capsys):
    assert main(["bundle", "runtime", "build", "--wheel", str(tmp_path / "dist")]) == 0
    out = capsys.readouterr().out
    from metascore import __version__

    wheel = tmp_path / "dist" / f"metascore_runtime-{__version__}-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    assert wheel.is_file() and f"wrote {wheel}" in out


# ----------------------------------------------------------------------------- the Debian archive
def _apt(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_archive_is_the_debian_source_of_apt_s_configuration(tmp_path):
    from metascore.bundle.runtime.debian import find_debian_archive

    os_release = tmp_path / "os-release"
    os_release.write_text('ID=debian\nVERSION_CODENAME=bookworm\n')
    root = _apt(tmp_path / "apt", {
        "sources.list.d/a-nodesource.sources": "Types: deb\nURIs: https://nodes.example/node_20.x\n"
                                               "Suites: nodistro\nComponents: main\n",
        "sources.list.d/debian.sources": "Types: deb\nURIs: http://security.example/debian-security\n"
                                         "Suites: bookworm-security\nComponents: main\n\n"
                                         "Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\n"
                                         "Components: main\nEnabled: no\n\n"
                                         "Types: deb\nURIs: http://mirror.example/debian\n"
                                         "Suites: bookworm bookworm-updates\nComponents: main contrib\n",
        "sources.list.d/old.list.disabled": "deb http://disabled.example/debian bookworm main\n",
    })
    assert find_debian_archive(root, os_release) == "http://mirror.example/debian/"
    # a one-line sources.list comes first; signed by Debian's keyring names the archive too
    _apt(root, {"sources.list": "# a comment\ndeb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
                                "http://first.example/debian/ trixie main\n"})
    assert find_debian_archive(root, os_release) == "http://first.example/debian/"
    (root / "sources.list").write_text("deb http://ubuntu.example/ubuntu noble main\n")  # not Debian's
    assert find_debian_archive(root, os_release) == "http://mirror.example/debian/"
    assert find_debian_archive(tmp_path / "none", os_release) is None


def test_the_mirror_variable_comes_first_and_no_archive_is_said_in_one_sentence(tmp_path, monkeypatch):
    from metascore.bundle.runtime import debian as runtime_archive
    from metascore.errors import MetascoreError

    monkeypatch.setenv("METASCORE_DEBIAN_MIRROR", "http://local.example/debian")
    assert runtime_archive.debian_archive() == "http://local.example/debian/"
    monkeypatch.delenv("METASCORE_DEBIAN_MIRROR")
    monkeypatch.setattr(runtime_archive, "find_debian_archive", lambda: None)
    with pytest.raises(MetascoreError, match=r"names no Debian archive; set METASCORE_DEBIAN_MIRROR to the URL "
                       r"of a Debian mirror \(the folder holding pool/\), or install a runtime wheel"):
        runtime_archive.debian_archive()


def test_no_archive_host_is_written_in_the_code():
    import re

    hosts = re.compile(r"\w+://[^/\s\"']*(debian|ubuntu)\.(org|com)")  # an archive's URL
    found = [str(p) for folder in (ROOT / "src", ROOT / "tests") for p in folder.rglob("*.py")
             if hosts.search(p.read_text(encoding="utf-8"))]
    assert found == []


# ----------------------------------------------------------------------------- the real build (METASCORE_RUNTIME=1)
def _workload(tree: Path, out: Path) -> dict:
    """Run tests/runtime_workload.py with the runtime in ``tree``; its outputs' digests."""
    import subprocess

    proc = subprocess.run([meta_program.LOADER, str(tree / "bin" / PY), "-I", "-B", str(TESTS / "runtime_workload.py"),
                           str(ROOT / "src"), str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((out / "outputs.json").read_text())


@pytest.mark.slow
def test_the_slimmed_runtime_gives_the_full_one_s_outputs_byte_for_byte(built_runtime, tmp_path):
    """Everything the program can do, run with the runtime as built (what the program never
    loads left out) and with the same CPython and wheels whole: the same files, byte for byte;
    and nothing the full run loads is missing from the slimmed runtime."""
    import shutil

    full = tmp_path / "full"
    cpython = rt.runtime_cache() / f"cpython-{cpython_recipe.cpython_key()}" / "cpython"
    shutil.copytree(cpython, full, symlinks=True)
    (tmp_path / "work").mkdir()
    recipe._install_wheels(full, tmp_path / "work")
    ours, theirs = _workload(built_runtime.tree, tmp_path / "slim-out"), _workload(full, tmp_path / "full-out")
    assert ours == theirs
    assert len(ours) >= 50 and sum("error" not in v for v in ours.values()) >= 45
    loaded = json.loads((tmp_path / "full-out" / "loaded.json").read_text())
    missing = [m for m in loaded["modules"] + loaded["shared"] if m.startswith(str(full))
               and not (built_runtime.tree / Path(m).relative_to(full)).exists()]
    assert missing == []


def test_the_real_runtime_wheel_passes_auditwheel_and_twine(built_runtime, tmp_path):
    import shutil
    import subprocess

    from metascore import __version__
    from metascore.bundle.runtime.wheel import write_wheel

    for tool in ("auditwheel", "twine"):
        if shutil.which(tool) is None and not (Path(sys.executable).parent / tool).is_file():
            pytest.skip(f"{tool} is not installed (pip install -e '.[test]')")
    wheel = write_wheel(built_runtime.tree, built_runtime.zip, built_runtime.manifest, tmp_path, __version__)
    bin_dir = Path(sys.executable).parent
    show = subprocess.run([str(bin_dir / "auditwheel") if (bin_dir / "auditwheel").is_file() else "auditwheel",
                           "show", str(wheel)], capture_output=True, text=True)
    assert show.returncode == 0, show.stderr
    assert 'consistent with the following platform tag: "manylinux_2_17_x86_64"' in " ".join(show.stdout.split())
    check = subprocess.run([str(bin_dir / "twine") if (bin_dir / "twine").is_file() else "twine",
                            "check", "--strict", str(wheel)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    with zipfile.ZipFile(wheel) as zf, zipfile.ZipFile(built_runtime.zip) as inner:
        unpacked = {n[len("metascore_runtime/"):]: zf.read(n) for n in zf.namelist()
                    if n.startswith("metascore_runtime/runtime/")}
        assert unpacked and all(inner.read(name) == data for name, data in unpacked.items())
    assert wheel.stat().st_size < 100e6  # PyPI's limit for one file
