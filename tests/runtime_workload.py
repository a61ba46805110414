"""Everything the meta-scoring program can do, run once: what its own Python must hold.

``python runtime_workload.py SRC OUT`` (any Python >= 3.10 with numpy, scipy, pandas and
pyyaml; ``SRC``: the folder holding the ``metascore`` package) runs

- every module of ``numpy``/``scipy``/``pandas``/``yaml`` that a module of the package imports
  anywhere, inside functions too (read from the sources, so a lazy import on a path the runs
  below miss is counted);
- the meta-scoring program's pipeline (:func:`metascore.program.run`, as ``score.py`` runs it)
  on the template competition's meta phase (``tests/data/exports/template_results.json`` with
  ``bundle_template``'s ``metascore.yaml``), with every method of the registry and every
  value of each method's option parameters, every missing-data policy, a method comparison
  over the whole registry, judge groups, the top-k filters, the per-judge file; and on every
  input format of ``tests/data`` (long, wide, tree, Codabench and CodaLab exports, PrefLib,
  the coopetition text file);

and writes ``OUT/outputs.json`` (the sha256 of every file each run wrote, by run; the
comparison of two runtimes, byte for byte) and ``OUT/loaded.json`` (the file of every module
in ``sys.modules`` and every shared object mapped into the process at the end: what the
program ever loads). ``tests/bundle/test_runtime.py`` runs it in a full and in the slimmed
runtime and compares both files; ``bundle/runtime/build.py`` says what the runtime
leaves out from its figures.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
TEMPLATE_CONFIG = HERE.parent / "bundle_template" / "final_ranking" / "reference_data" / "metascore.yaml"
TEMPLATE_EXPORT = DATA / "exports" / "template_results.json"
COMPETITION = DATA / "competition"
LIBRARIES = ("numpy", "scipy", "pandas", "yaml", "threadpoolctl")
#: (name, input file or folder, the metascore.yaml lines that read it)
INPUTS = (
    ("long_csv", COMPETITION / "long.csv", "input: {format: long, path: long.csv}\nbaselines: [organizers]\n"),
    ("long_json", COMPETITION / "long.json", "input: {format: auto, path: long.json}\nbaselines: [organizers]\n"),
    ("codabench_json", COMPETITION / "results.json",
     "input: {format: codabench_json, path: results.json}\nbaselines: [organizers]\n"),
    ("codabench_csv", COMPETITION / "Results - Final(12).csv",
     "input: {format: auto}\nphases: {development: Final, final: null}\n"),
    ("codalab_csv", COMPETITION / "codalab_final.csv",
     "input: {format: auto}\nphases: {development: Final, final: null}\n"),
    ("tree", COMPETITION / "tree", "input: {format: tree}\nbaselines: [organizers]\n"),
    ("wide", COMPETITION / "wide_final.csv",
     "input: {format: auto}\nphases: {development: Final, final: null}\n"),
    ("coopetition", COMPETITION / "coopetition_scores_phase_2.txt",
     "input: {format: auto}\nphases: {development: '2', final: null}\n"),
    ("preflib_toc", DATA / "readers" / "votes.toc",
     "input: {format: preflib, path: votes.toc}\nphases: {development: votes, final: null}\n"),
    ("preflib_soc", DATA / "readers" / "zero_counts.soc",
     "input: {format: preflib, path: zero_counts.soc}\nphases: {development: zero_counts, final: null}\n"),
    ("codabench_export", DATA / "codabench" / "Results - Final(102).csv",
     "input: {format: auto}\nphases: {development: Final, final: null}\n"),
    ("codalab_automl", DATA / "codalab" / "automl_final.csv",
     "input: {format: auto}\nphases: {development: Final, final: null}\n"),
)


def library_imports(src: Path) -> list[str]:
    """The modules of :data:`LIBRARIES` that a module of ``src/metascore`` imports."""
    found: set[str] = set()
    for path in sorted((src / "metascore").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
                found |= {f"{node.module}.{a.name}" for a in node.names}
    return sorted(n for n in found if n.split(".")[0] in LIBRARIES)


def _import_all(names: list[str]) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:  # a name imported from a module, not a module
            importlib.import_module(name.rpartition(".")[0])


def _digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _run(name: str, config_text: str, source: Path, out: Path, results: dict) -> None:
    from metascore.config import load_config
    from metascore.errors import MetascoreError
    from metascore.program import run

    work = out / "runs" / name
    (work / "res").mkdir(parents=True, exist_ok=True)
    config_path = work / "metascore.yaml"
    config_path.write_text(config_text, encoding="utf-8")
    if source.is_dir():
        root = source
    else:
        root = work / "res"
        (root / source.name).write_bytes(source.read_bytes())
    try:
        run(load_config(config_path), root, work / "out", log=lambda _: None)
    except MetascoreError as exc:  # refused the same way in both runtimes
        results[name] = {"error": str(exc).replace(str(out), "OUT")}
        return
    results[name] = _digests(work / "out")


def _with(text: str, key: str, value: str) -> str:
    """``text`` (the template's metascore.yaml) with the top-level ``key`` replaced."""
    return re.sub(rf"^{key}:.*(\n[ #].*)*", f"{key}: {value}", text, count=1, flags=re.M)


def main(src: Path, out: Path) -> None:
    sys.path.insert(0, str(src))
    out.mkdir(parents=True, exist_ok=True)
    _import_all(library_imports(src))
    import metascore  # noqa: F401  (every method registered)
    import metascore.program  # noqa: F401
    from metascore.missing import MISSING_POLICIES
    from metascore.registry import get_ranking_method, ranking_method_names

    template = TEMPLATE_CONFIG.read_text(encoding="utf-8")
    results: dict[str, dict] = {}
    _run("template", template, TEMPLATE_EXPORT, out, results)
    for method in ranking_method_names():
        spec = get_ranking_method(method)
        variants = [{}] + [{param: value} for param, rule in spec.constraints.items()
                           for value in getattr(rule, "values", ())[1:]]
        for params in variants:
            name = "method_" + method + "".join(f"_{k}_{v}" for k, v in params.items())
            ranking = f"{{method: {method}, params: {json.dumps(params)}, seed: 12345}}"
            text = _with(_with(template, "ranking", ranking), "analysis", "{bootstrap: 20, stability: true}")
            _run(name, text, TEMPLATE_EXPORT, out, results)
    for missing in MISSING_POLICIES:
        _run(f"missing_{missing}", _with(template, "ranking", f"{{method: copeland, missing: {missing}}}"),
             TEMPLATE_EXPORT, out, results)
    every = ", ".join(ranking_method_names())
    _run("compare_all", _with(template, "analysis", f"{{bootstrap: 30, stability: true, compare: [{every}]}}"),
         TEMPLATE_EXPORT, out, results)
    for rule in ("top_k, k: 3", "top_k, k: auto", "none"):
        _run(f"filter_{rule.split(',')[0]}_{rule.rsplit(' ', 1)[-1]}",
             _with(template, "filter", f"{{rule: {rule}}}"), TEMPLATE_EXPORT, out, results)
    grouped = _with(template, "ranking", "{method: mean, groups: {by: task, method: average_rank}}")
    _run("groups", grouped, TEMPLATE_EXPORT, out, results)
    _run("per_judge", _with(template, "output", "{judge_columns: 1, per_judge: values_and_ranks}"),
         TEMPLATE_EXPORT, out, results)
    for name, source, text in INPUTS:
        _run(f"input_{name}", text + "analysis: {bootstrap: 20, compare: [average_rank, copeland]}\n",
             source, out, results)
    (out / "outputs.json").write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    modules = sorted({getattr(m, "__file__", None) or "" for m in list(sys.modules.values())} - {""})
    with open("/proc/self/maps", encoding="utf-8") as maps:
        mapped = sorted({line.split()[-1] for line in maps if line.rstrip().endswith(".so")
                         or ".so." in line.split()[-1]})
    (out / "loaded.json").write_text(json.dumps({"modules": modules, "shared": mapped}, indent=1) + "\n",
                                     encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
