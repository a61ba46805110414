"""Safe zip extraction and Codabench-style zipping."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import pytest

from metascore.bundle.archive import safe_extract, zip_directory
from metascore.bundle.meta.program_folder import assemble_meta_program
from metascore.bundle.platform.meta_program import needs_meta_program
from metascore.errors import ConfigError, InputError


def make_zip(path: Path, members: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return path


def symlink_zip(path: Path, name: str, target: str) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        info = zipfile.ZipInfo(name)
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, target)
    return path


def test_extracts_and_skips_macos_noise(tmp_path):
    z = make_zip(tmp_path / "a.zip", {
        "metadata.yaml": "command: x\n", "sub/data.csv": "a\n1\n",
        "__MACOSX/._metadata.yaml": "junk", ".DS_Store": "junk", "sub/._data.csv": "junk",
    })
    kept = safe_extract(z, tmp_path / "out")
    assert kept == ["metadata.yaml", "sub/data.csv"]
    assert sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*")) == [
        "metadata.yaml", "sub", "sub/data.csv"]


@pytest.mark.parametrize("name", ["/etc/evil", "../evil", "a/../../evil", "C:/evil", "a\\..\\..\\evil"])
def test_refuses_paths_leaving_the_target(tmp_path, name):
    z = make_zip(tmp_path / "a.zip", {"ok.txt": "1", name: "x"})
    with pytest.raises(InputError, match="absolute path or '..'; refusing to extract it"):
        safe_extract(z, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # checked before anything is written


def test_symlinks(tmp_path):
    with pytest.raises(InputError, match=r"symbolic link 'link' -> '../../etc' points outside"):
        safe_extract(symlink_zip(tmp_path / "a.zip", "link", "../../etc"), tmp_path / "out")
    with pytest.raises(InputError, match="points outside"):
        safe_extract(symlink_zip(tmp_path / "b.zip", "link", "/etc/passwd"), tmp_path / "out2")
    safe_extract(symlink_zip(tmp_path / "c.zip", "sub/link", "../inside.txt"), tmp_path / "out3")
    assert os.readlink(tmp_path / "out3" / "sub" / "link") == "../inside.txt"


def test_size_and_member_limits(tmp_path):
    z = make_zip(tmp_path / "a.zip", {f"f{i}.txt": "x" * 100 for i in range(5)})
    with pytest.raises(InputError, match="5 members, more than the limit of 4"):
        safe_extract(z, tmp_path / "o1", max_members=4)
    with pytest.raises(InputError, match="500 bytes uncompressed, more than the limit of 499"):
        safe_extract(z, tmp_path / "o2", max_total_size=499)
    assert len(safe_extract(z, tmp_path / "o3", max_members=5, max_total_size=500)) == 5


def test_not_a_zip(tmp_path):
    (tmp_path / "x.zip").write_text("hello")
    with pytest.raises(InputError, match="not a readable zip file"):
        safe_extract(tmp_path / "x.zip", tmp_path / "out")


def test_zip_directory_puts_files_at_root_without_caches(tmp_path):
    src = tmp_path / "scoring_program"
    (src / "__pycache__").mkdir(parents=True)
    (src / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (src / "metadata.yaml").write_text("command: python3 score.py\n")
    (src / "lib").mkdir()
    (src / "lib" / "m.py").write_text("x = 1\n")
    (src / ".DS_Store").write_text("junk")
    out = zip_directory(src, tmp_path / "scoring_program.zip")
    assert zipfile.ZipFile(out).namelist() == ["metadata.yaml", "lib/m.py"]


def test_meta_program_pointer_and_assembly(tmp_path):
    folder = tmp_path / "meta_scoring_program"
    assert needs_meta_program(folder)  # absent
    folder.mkdir()
    (folder / "README.md").write_text("pointer")
    assert needs_meta_program(folder)
    (folder / "score.py").write_text("")
    assert not needs_meta_program(folder)
    assert not needs_meta_program(tmp_path / "scoring_program")
    dest = assemble_meta_program(tmp_path / "assembled")
    assert (dest / "score.py").is_file() and (dest / "metadata.yaml").is_file()
    assert (dest / "metascore" / "__init__.py").is_file()
    assert not list(dest.rglob("__pycache__"))
    with pytest.raises(ConfigError, match="not a meta-scoring program folder"):
        assemble_meta_program(tmp_path / "x", tmp_path / "nowhere")


def _bundle_imports() -> dict[str, set[str]]:
    """Module -> the bundle modules it imports (also inside functions), from the sources;
    modules are named by their path in the package (``worker/local``)."""
    import ast

    import metascore.bundle

    package = Path(metascore.bundle.__file__).parent
    modules = {p.relative_to(package).with_suffix("").as_posix() for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in sorted(package.rglob("*.py")):
        name = path.relative_to(package).with_suffix("").as_posix()
        here = name.split("/")[:-1]  # the sub-package the module is in
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level >= 1:
                if node.level - 1 > len(here):  # above the bundle package
                    continue
                base = here[: len(here) - (node.level - 1)]
                target = base + (node.module.split(".") if node.module else [])
                for alias in node.names:
                    as_module = "/".join(target + [alias.name])
                    deps.add(as_module if as_module in modules else "/".join(target) or "__init__")
                assert not [a.name for a in node.names if a.name.startswith("_")], (
                    f"{name} imports a private name from {'.' * node.level}{node.module or ''}"
                )
        graph[name] = {d for d in deps if d in modules and not d.endswith("__init__")} - {name}
    return graph


def test_bundle_modules_import_no_cycle_and_no_private_name():
    graph = _bundle_imports()
    assert {"archive", "schema/load", "runner", "worker/local"} <= set(graph)
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, "import cycle: " + " -> ".join(path + (module,))
        if module not in done:
            for dep in sorted(graph.get(module, ())):
                visit(dep, path + (module,))
            done.add(module)

    for module in graph:
        visit(module, ())
