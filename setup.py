"""The extras of metascore (the rest of its metadata is in pyproject.toml).

They are here because one of them names the version: ``metascore[runtime]`` pins the
``metascore-runtime`` wheel (the meta-scoring program's own Python, ``metascore bundle runtime
build --wheel``) of this very release, and the version is written once, in
``src/metascore/_version.py``.
"""

import ast
from pathlib import Path

from setuptools import setup


def _version() -> str:
    text = (Path(__file__).resolve().parent / "src" / "metascore" / "_version.py").read_text(encoding="utf-8")
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["__version__"]:
            return ast.literal_eval(node.value)
    raise RuntimeError("src/metascore/_version.py assigns no __version__")


setup(extras_require={
    "docker": ["docker>=7.0"],
    "dask": ["dask[distributed]>=2023.1"],
    # the platform wheel exists for Linux x86_64 only; elsewhere the extra installs nothing
    "runtime": [f"metascore-runtime=={_version()}; sys_platform == 'linux' and platform_machine == 'x86_64'"],
    # scikit-learn: the realistic bundle fixtures score with it (tests/data/bundles/sklearn_scoring);
    # build, twine, check-jsonschema, auditwheel: the release checks (tests/project/test_release.py)
    # pytest-xdist: the suite runs in two processes (README's test command), half CI's time
    "test": ["pytest>=7", "pytest-xdist>=3.0", "hypothesis>=6.80", "scikit-learn", "build>=1.0",
             "twine>=5.0", "check-jsonschema>=0.28", "auditwheel>=6.0"],
    # peers compared in benchmarks/compare_peers.py (not needed to use metascore)
    "bench": ["ranky>=1.0", "pref-voting>=1.18", "open-spiel>=2.0", "choix>=0.4"],
})
