"""The exact resampling shortcuts the ranking methods declare (metascore.resampling).

Every shortcut a registered method declares gives the scores of :func:`metascore.rank` on
the resampled matrix, on random matrices with ties, zeros, missing cells, unequal judge
weights and lower-is-better judges, under judge and candidate multiplicities. A method
defined in this file (not shipped) shows that a method brings its shortcut in its own
registration, and that the analyses use it.
"""

from __future__ import annotations

import numpy as np
import pytest

import metascore as ms
from metascore import method_spec, registry
from metascore.analysis import stability, winner_rank_bootstrap
from metascore.analysis import shared as E
from metascore.analysis import draws as D
from metascore.analysis import bootstrap as B
from metascore.analysis import fastpaths as F
from metascore.resampling import JudgeDraws, Shortcuts, reduced_counts

DECLARING = [name for name in ms.ranking_method_names()
             if ms.get_ranking_method(name).resampling is not None]
#: Parameters tried besides the defaults.
VARIANTS = {"average_rank": [{"ties": "dense"}], "success_rate": [{"ties": "half"}],
            "relative_difference": [{"on": "ranks"}], "epp": [{"ridge": 0.5}],
            "dowdall": [{"ties": "min"}],
            "optimality_gap": [{"gamma": 2}, {"gamma": {f"{j}": 1.0 + j / 2 for j in range(6)}},
                               {"gamma": "best"}, {"gamma": "q25"}]}
#: Methods of positive scores (a zero on a lower-is-better judge is refused): 1 is added.
POSITIVE = {"geometric_mean"}


def random_matrix(seed: int, holes: bool, weights: list[float] | None, shift: float = 0.0
                  ) -> ms.ScoreMatrix:
    rng = np.random.default_rng(seed)
    v = rng.integers(0, 4, size=(7, 6)).astype(float) + shift  # ties and zeros
    if holes:
        v[rng.random(v.shape) < 0.15] = np.nan
        v[0, 0] = np.nan
    return ms.ScoreMatrix.from_array(
        v, [f"c{i}" for i in range(7)], weights=weights,
        higher_is_better=[True] * 4 + [False] * 2)


def registry_scores(s: E.Setup, name: str, cand: np.ndarray | None,
                    judges: np.ndarray | None) -> np.ndarray:
    """:func:`metascore.rank` on the resampled matrix, one score per candidate (the first
    copy's, NaN when not drawn)."""
    sub = s.matrix.subset(candidates=cand, judges=judges)
    scores = ms.rank(sub, name, missing=s.missing, **s.params[name]).scores
    if cand is None:
        return scores
    out = np.full(s.n, np.nan)
    first = np.unique(cand, return_index=True)[1]
    out[cand[first]] = scores[first]
    return out


def cases(name: str):
    for params in [{}] + VARIANTS.get(name, []):
        for seed in (1, 2, 3):
            for holes in (False, True):
                for weights in ([1, 2, 1, 1, 3, 1], None):
                    m = random_matrix(seed, holes, weights, 1.0 if name in POSITIVE else 0.0)
                    yield E.setup(m, name, ms.Execution(params={name: params}, seed=1)), seed


def judge_rows(draws: D.Draws, t: int, m: int) -> np.ndarray | None:
    return None if draws.counts is None else np.repeat(np.arange(m), draws.counts[t])


@pytest.mark.parametrize("name", DECLARING)
def test_every_declared_shortcut_equals_rank(name):
    hooks = ms.get_ranking_method(name).resampling
    used: set[str] = set()
    for s, seed in cases(name):
        params = s.params[name]
        # judge multiplicities
        if F.fast_path_reason(s, name) is None:
            draws = D.draw(seed, 6, "judges", s.n, s.m)
            cw = draws.judge_weights(s.matrix.weights)
            got = hooks.judges(s, params, JudgeDraws(s.filled_ranks, cw))
            for t in range(draws.trials):
                want = registry_scores(s, name, None, judge_rows(draws, t, s.m))
                np.testing.assert_allclose(got[t], want, rtol=0, atol=1e-12)
            used.add("judges")
        # candidate multiplicities, with or without judge multiplicities
        for axis in ("candidates", "both"):
            draws = D.draw(seed, 6, axis, s.n, s.m)
            if F.candidate_fast_reason(s, name, axis == "both") is not None:
                continue
            block = F.Block(s, draws, B.usable_trials(s, draws))
            got = F.candidate_fast_scores(block, [name])[name]
            for t in range(draws.trials):
                want = registry_scores(s, name, draws.candidates[t], judge_rows(draws, t, s.m))
                np.testing.assert_allclose(got[t], want, rtol=0, atol=1e-12)
            used.add("candidates" if hooks.candidates is not None else "candidate_pairs")
        if s.matrix.has_missing:
            continue  # the counts below are those of complete rankings
        pc = ms.PairwiseCounts.from_matrix(-s.filled_ranks, s.matrix.weights)
        if hooks.counts_reason is not None and hooks.counts_reason(params) is None:
            np.testing.assert_array_equal(ms.rank(pc, name, **params).scores,
                                          s.full[name].scores)
            used.add("counts_reason")
        draws = D.draw(seed, 6, "candidates", s.n, s.m)
        for cand in draws.candidates:
            distinct, inverse, mult = np.unique(cand, return_inverse=True, return_counts=True)
            want = registry_scores(s, name, cand, None)[cand]
            once = pc.subset(distinct)
            if hooks.clone_beats is not None and distinct.size > 1:
                beats = hooks.clone_beats(once, params)
                np.testing.assert_allclose((beats @ mult / (cand.size - 1))[inverse], want,
                                           rtol=0, atol=1e-12)
                used.add("clone_beats")
            if hooks.scores is not None:
                np.testing.assert_array_equal(hooks.scores(pc, **params), s.full[name].scores)
                used.add("scores")
            if hooks.warm_start is not None and distinct.size > 1:
                start = hooks.warm_start(s.full[name])
                got = hooks.scores(reduced_counts(once, mult), **params,
                                   start=start[distinct], multiplicity=mult)[inverse]
                np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-7)  # the fit's tolerance
                used.add("warm_start")
    declared = {field for field in ("judges", "candidates", "candidate_pairs", "clone_beats",
                                    "scores", "warm_start", "counts_reason")
                if getattr(hooks, field) is not None}
    assert declared <= used, f"{name}: declared but never applicable: {declared - used}"


def test_the_analyses_name_no_method():
    """Outside docstrings and comments, no analysis module names a ranking method (a
    summary's ``"mean": self.mean`` key is a statistic, not the method)."""
    import importlib
    import inspect
    import pkgutil
    import re

    import metascore.analysis

    for info in pkgutil.iter_modules(metascore.analysis.__path__):
        module = importlib.import_module(f"metascore.analysis.{info.name}")
        code = re.sub(r'""".*?"""', "", inspect.getsource(module), flags=re.S)
        code = re.sub(r"#.*", "", code)
        code = re.sub(r"['\"]\w+['\"]: self\.", "", code)
        named = [n for n in ms.ranking_method_names() if re.search(rf"['\"]{n}['\"]", code)]
        assert named == [], f"{module.__name__} names {named}"


# --------------------------------------------------------------------------- a new method
CALLS: list[str] = []


def total(X: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted sum of the oriented scores (a method defined only in this test)."""
    return X @ w


def _total_judges(base, params, draws: JudgeDraws) -> np.ndarray:
    CALLS.append("judges")
    return draws.cw @ base.matrix.oriented().T


def _total_candidates(base, params, draws) -> np.ndarray:
    CALLS.append("candidates")
    return draws.cw @ base.matrix.oriented().T


@pytest.fixture
def example_methods():
    """``test_total`` with its shortcuts and ``test_total_plain``, the same without."""
    names = ("test_total", "test_total_plain")
    registry.ranking_method(names[0], resampling=Shortcuts(
        judges=_total_judges, candidates=_total_candidates))(total)
    registry.ranking_method(names[1])(total)
    CALLS.clear()
    yield names
    for name in names:
        method_spec.registered_methods().pop(name)


def test_a_new_method_brings_its_shortcut_in_its_registration(example_methods):
    fast, plain = example_methods
    rng = np.random.default_rng(4)
    m = ms.ScoreMatrix.from_array(rng.integers(0, 5, size=(6, 8)).astype(float),
                                  [f"c{i}" for i in range(6)])
    for axis in ("judges", "candidates", "both"):
        CALLS.clear()
        a = stability(m, [fast, plain], axis=axis, q=10, r=2, run=ms.Execution(seed=3))
        assert set(CALLS) == ({"judges"} if axis == "judges" else {"candidates"})
        assert a.mean[fast] == a.mean[plain]
        assert a.mean == stability(m, [fast, plain], axis=axis, q=10, r=2, run=ms.Execution(seed=3, fast=False)).mean
        s = E.setup(m, [fast, plain], ms.Execution(seed=1))
        draws = D.draw(7, 30, axis, s.n, s.m)
        scores = B.bootstrap_scores(s, draws)
        slow = B.bootstrap_scores(s, draws, ms.Execution(fast=False))
        np.testing.assert_allclose(scores[fast], slow[fast], rtol=0, atol=1e-12)
        np.testing.assert_allclose(scores[fast], scores[plain], rtol=0, atol=1e-12)
    CALLS.clear()
    w = winner_rank_bootstrap(m, [fast, plain], n_trials=20, run=ms.Execution(seed=2))
    assert CALLS and w.mean[fast] == w.mean[plain]
