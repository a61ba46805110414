"""One execution record for the analyses (issue 52): every public analysis takes a matrix or
a prepared setup and ``run=Execution(...)``; the setup carries the methods resolved once, and
nothing is prepared twice."""

from __future__ import annotations

import dataclasses
import inspect
import json

import numpy as np
import pytest

import metascore as ms
from metascore import registry
from metascore.analysis import Execution, analyze, setup
from metascore.analysis import compare as compare_module
from metascore.analysis import criteria as criteria_module
from metascore.analysis import shared as shared_module
from metascore.cli import analyze as cli_analyze
from metascore.cli import main
from metascore.jsonable import jsonable


def matrix(seed: int = 0, n: int = 8, m: int = 7) -> ms.ScoreMatrix:
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(n, 1)) + rng.normal(size=(n, m))
    return ms.ScoreMatrix.from_array(values, [f"c{i}" for i in range(n)])


#: Each public analysis with its sizes (the same call on a matrix and on a setup).
CALLS = {
    "winner_rank_bootstrap": (ms.analysis.winner_rank_bootstrap, dict(n_trials=20)),
    "condorcet_rate": (ms.condorcet_rate, dict(n_trials=20)),
    "generalization": (ms.generalization, dict(n_trials=20)),
    "stability": (ms.stability, dict(q=4, r=2, axis="both")),
    "stability_vs_judges": (ms.stability_vs_judges, dict(q=4, r=2)),
    "compare_methods": (ms.compare_methods, dict(n_trials=20, q=4, r=2)),
    "analyze": (analyze, dict(n_trials=20, q=4, r=2, curve_r=1, topk="disjoint")),
}
METHODS = ["mean", "success_rate", "epp"]
RUN = Execution(seed=3, params={"success_rate": {"ties": "half"}})


def _dict(result) -> str:
    return json.dumps(jsonable(result.to_dict()))


@pytest.mark.parametrize("name", list(CALLS))
def test_every_analysis_of_a_setup_is_the_analysis_of_its_matrix(name):
    func, sizes = CALLS[name]
    m = matrix()
    s = setup(m, METHODS, RUN)
    assert _dict(func(s, **sizes)) == _dict(func(m, METHODS, **sizes, run=RUN))


def test_the_intervals_agreement_and_top_k_of_a_setup_are_those_of_its_matrix():
    m = matrix(1)
    s = setup(m, METHODS, RUN)
    for name in METHODS:
        one = dataclasses.replace(RUN, params={name: s.params[name]})
        assert (ms.rank_uncertainty(s, name, n_trials=30).to_dict()
                == ms.rank_uncertainty(m, name, n_trials=30, run=one).to_dict())
        assert (ms.top_k_curves(s, method=name, n_trials=20, run=one).to_dict()
                == ms.top_k_curves(m, method=name, n_trials=20, run=one).to_dict())
    assert ms.judge_agreement(s).to_dict() == ms.judge_agreement(m).to_dict()
    assert ms.winner_rank(s, "success_rate") == ms.winner_rank(
        m, "success_rate", run=Execution(seed=3, params={"ties": "half"}))


def test_a_setup_keeps_its_missing_data_policy_and_parameters():
    m = matrix(2)
    s = setup(m, ["mean", "success_rate"], RUN)
    with pytest.raises(ms.ConfigError, match="prepared with missing='worst', not 'drop_judges'"):
        ms.stability(s, q=4, r=2, run=Execution(missing="drop_judges"))
    with pytest.raises(ms.ConfigError, match="`params` differ from the setup's"):
        ms.stability(s, q=4, r=2, run=Execution(params={"success_rate": {"ties": "zero"}}))
    named = ms.stability(s, "success_rate", q=4, r=2,
                         run=Execution(params={"success_rate": {"ties": "zero"}}))
    assert named.params == {"success_rate": {"ties": "zero"}}


def test_analyze_takes_at_most_twelve_parameters():
    assert len(inspect.signature(analyze).parameters) <= 12


def test_an_analysis_of_a_setup_looks_no_method_up_by_name(monkeypatch):
    """The setup resolved its methods once: the resamples, their routes and the criteria
    read the registrations it carries."""
    m = matrix(3)
    s = setup(m, ["mean", "copeland", "epp", "median"], Execution(seed=1))
    looked_up = []

    class Counted(dict):
        def __getitem__(self, key):
            looked_up.append(key)
            return super().__getitem__(key)

    monkeypatch.setattr(registry, "_REGISTRY", Counted(registry._REGISTRY))
    analyze(s, n_trials=20, q=4, r=2, curve_r=1, topk="disjoint")
    assert looked_up == []


def _count_preparations(monkeypatch, modules) -> list[int]:
    prepared: list[int] = []
    real = registry.prepare_inputs

    def counted(data, missing):
        prepared.append(id(data))
        return real(data, missing)

    for module in modules:
        monkeypatch.setattr(module, "prepare_inputs", counted)
    return prepared


def test_analyze_prepares_each_phase_once(monkeypatch):
    """The top-k curves of every method read the phases prepared once, not once a method."""
    dev, final = matrix(4), matrix(5, m=5)
    prepared = _count_preparations(monkeypatch, [shared_module, criteria_module, compare_module])
    analyze(dev, ["mean", "average_rank", "copeland"], final=final, n_trials=20, q=4, r=2,
            curve_r=1)
    assert len(prepared) == 2  # the development phase, the final one (its shared candidates)


def test_the_command_line_prepares_the_scores_once(monkeypatch, tmp_path):
    """Without --methods, the check of the default methods and the analysis read the matrix
    prepared once."""
    rng = np.random.default_rng(0)
    values = rng.normal(size=(6, 5)) + 3
    path = tmp_path / "scores.csv"
    path.write_text("candidate," + ",".join(f"t{j}" for j in range(5)) + "\n" + "".join(
        f"c{i}," + ",".join(f"{v:.4f}" for v in row) + "\n" for i, row in enumerate(values)))
    prepared = _count_preparations(
        monkeypatch, [shared_module, criteria_module, compare_module, cli_analyze])
    assert main(["analyze", str(path), "--out", str(tmp_path / "out"), "--trials", "20", "--q",
                 "4", "--r", "2", "--quiet"]) == 0
    assert len(prepared) == 1


def test_a_setup_travels_to_the_workers_without_the_callables_of_its_run():
    """The trials' workers receive the setup (pickled): its run keeps the seed, the policy
    and the parameters, not the caller's progress bar or notes."""
    import pickle

    run = Execution(seed=2, progress=lambda stage, done, total: None, notify=print, jobs=2)
    s = setup(matrix(6), ["mean", "copeland"], run)
    assert s.run.progress is None and s.run.notify is None and s.run.seed == 2
    assert pickle.loads(pickle.dumps(s)).full["copeland"].to_dict() == s.full["copeland"].to_dict()
    seen = []
    got = ms.stability(s, q=4, r=2, run=dataclasses.replace(
        run, progress=lambda stage, done, total: seen.append(stage)))
    assert seen and set(seen) == {"judge stability"}
    assert got.to_dict() == ms.stability(s, q=4, r=2, run=Execution(seed=2)).to_dict()
