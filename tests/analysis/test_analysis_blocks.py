"""The analyses at scale (issue 33): blocks of trials, batched shortcuts, shared draws.

Every batched computation is checked against the trial-by-trial reference
(``Execution(fast=False)``: the registry on every resampled matrix, the plain per-trial
statistics): the printed table of ``metascore analyze`` is the same, and so is every
per-trial value.
"""

from __future__ import annotations

import dataclasses

import importlib
import io
from contextlib import redirect_stdout

import numpy as np
import pytest

import metascore as ms
from metascore.analysis import shared as E
from metascore.analysis import draws as D
from metascore.analysis import analyze
from metascore.analysis import bootstrap as B
from metascore.analysis import fastpaths as F
from metascore.analysis import trial_stats as T
from metascore.cli import analyze as cli
from metascore.methods.classical_shortcuts import count_medians, weighted_medians
from metascore.ranking import tie_groups
from metascore.resampling import JudgeDraws, PairSums, exact_products

analysis_module = importlib.import_module("metascore.analysis.analyze")

METHODS = ["mean", "median", "average_rank", "success_rate", "relative_difference",
           "copeland", "schulze", "epp", "plurality", "dowdall", "minimax"]


def matrices():
    rng = np.random.default_rng(0)
    yield "continuous", ms.ScoreMatrix.from_array(
        rng.normal(size=(7, 9)) + np.linspace(1, 0, 7)[:, None] + 3)
    yield "ties", ms.ScoreMatrix.from_array(rng.integers(0, 4, size=(6, 8)).astype(float),
                                            higher_is_better=[True] * 6 + [False] * 2)
    holes = rng.integers(0, 5, size=(6, 8)).astype(float)
    holes[rng.random(holes.shape) < 0.15] = np.nan
    yield "holes", ms.ScoreMatrix.from_array(holes)
    yield "weights", ms.ScoreMatrix.from_array(rng.random((6, 7)) + 0.1,
                                               weights=[1, 2, 1, 3, 1, 1, 2])


def printed(result) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        cli._print_table(result)
    return out.getvalue()


@pytest.mark.parametrize("label, matrix", list(matrices()))
@pytest.mark.parametrize("axes", [None, {"winner_rank": "judges", "condorcet_rate": "both",
                                         "generalization": "judges"}])
def test_the_printed_table_is_the_reference_one(label, matrix, axes):
    kw = dict(n_trials=40, q=6, r=3, curve_r=2, axes=axes)
    run = ms.Execution(seed=5, params={"relative_difference": {"on": "ranks"}})
    fast = analyze(matrix, METHODS, **kw, run=run)
    slow = analyze(matrix, METHODS, **kw, run=dataclasses.replace(run, fast=False))
    assert printed(fast) == printed(slow)
    for (name, a), (_, b) in zip(fast.parts(), slow.parts()):
        for key in ("values", "mean", "std", "lower", "upper", "p_first", "mean_rank"):
            x, y = getattr(a, key, None), getattr(b, key, None)
            if isinstance(x, dict):
                for m in x:
                    np.testing.assert_allclose(x[m], y[m], rtol=1e-9, atol=1e-12,
                                               err_msg=f"{label} {name} {key} {m}")
            elif x is not None:
                np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12, err_msg=f"{name} {key}")


def test_blocks_do_not_change_the_results_and_bound_the_memory(monkeypatch):
    m = ms.ScoreMatrix.from_array(np.random.default_rng(1).normal(size=(6, 50)))
    s = E.setup(m, ["median", "copeland", "epp"], ms.Execution(seed=3))
    plan = D.plan_draws(3, 60, "both", s.n, s.m)
    whole = B.run_trials(s, plan, then=T.generalization_stats)
    sizes = []
    real = D.DrawPlan.chunk

    def chunk(self, lo, hi):
        sizes.append(hi - lo)
        return real(self, lo, hi)

    monkeypatch.setattr(D.DrawPlan, "chunk", chunk)
    monkeypatch.setattr(B, "BLOCK_CELLS", 7 * s.m)  # at most 7 trials of judge weights
    s2 = E.setup(m, ["median", "copeland", "epp"], ms.Execution(seed=3))
    blocks = B.run_trials(s2, plan, then=T.generalization_stats)
    assert max(sizes) <= 7 and sum(sizes) == 60
    for name in s.methods:
        np.testing.assert_array_equal(whole.scores[name], blocks.scores[name])
        np.testing.assert_allclose(whole.extra[name], blocks.extra[name], rtol=1e-12)
    # the same trials drawn whole or by blocks
    parts = [plan.chunk(lo, hi) for lo, hi in ((0, 13), (13, 40), (40, 60))]
    np.testing.assert_array_equal(np.vstack([p.counts for p in parts]), plan.chunk(0, 60).counts)
    np.testing.assert_array_equal(np.concatenate([p.seeds for p in parts]),
                                  D.draw(3, 60, "both", s.n, s.m).seeds)


def test_parts_drawing_alike_share_their_scores():
    m = ms.ScoreMatrix.from_array(np.random.default_rng(2).normal(size=(5, 12)))
    s = E.setup(m, ["mean", "schulze"], ms.Execution(seed=4))
    first = B.run_trials(s, D.plan_draws(4, 30, "judges", s.n, s.m))
    again = B.run_trials(s, D.plan_draws(4, 20, "judges", s.n, s.m))  # the first 20: no new draw
    assert again.scores["schulze"] is not first.scores["schulze"]
    np.testing.assert_array_equal(again.scores["schulze"], first.scores["schulze"][:20])
    other = B.run_trials(s, D.plan_draws(5, 20, "judges", s.n, s.m))  # another seed: drawn
    assert not np.array_equal(other.scores["mean"], first.scores["mean"][:20])


@pytest.mark.parametrize("m", [40, 3000, 20000])
def test_count_medians_equal_the_plain_weighted_medians(m):
    rng = np.random.default_rng(m)
    values = np.round(rng.normal(size=(5, m)), 1)  # ties
    for total in (1, 2, 9, m // 3, m, 2 * m):
        counts = np.stack([np.bincount(rng.integers(0, m, size=total), minlength=m)
                           for _ in range(7)])
        got = count_medians(values, counts.astype(np.float32))
        np.testing.assert_array_equal(got, weighted_medians(values, counts.astype(float)))
    # draws piled on the best values: every median outside its window (computed in full)
    counts = np.zeros((3, m))
    counts[:, np.argsort(values[0])[-5:]] = m // 5
    np.testing.assert_array_equal(count_medians(values, counts), weighted_medians(values, counts))


def test_exact_products_are_exact_in_float32_and_split_past_2_24():
    rng = np.random.default_rng(3)
    features = np.sign(rng.normal(size=(6, 5000))).astype(np.float32)
    counts = rng.integers(0, 5000, size=(4, 5000)).astype(float)  # sums up to 1.2e7 each
    want = counts.astype(np.int64) @ features.astype(np.int64).T
    np.testing.assert_array_equal(exact_products(counts, features, 1.0), want)
    big = counts * 4  # sums past 2**24: slabs
    np.testing.assert_array_equal(exact_products(big, features, 1.0), 4 * want)
    halves = counts + 0.5  # not integers: float64
    np.testing.assert_allclose(exact_products(halves, features), halves @ features.T.astype(float))


def test_pair_sums_give_the_registry_counts_with_ties_and_weights():
    rng = np.random.default_rng(4)
    values = rng.integers(0, 3, size=(5, 30)).astype(float)
    ranks = E.judge_ranks(values, "worst")
    weights = rng.integers(1, 4, size=(3, 30)).astype(float)
    pairs = PairSums(ranks)
    assert pairs.tied.size > 0
    for t, w in enumerate(pairs.wins(weights)):
        np.testing.assert_array_equal(w, ms.PairwiseCounts.from_matrix(values, weights[t]).wins)


@pytest.mark.parametrize("n", [2, 3, 7])
def test_pair_sums_square_puts_each_pair_at_its_two_cells(n):
    rng = np.random.default_rng(n)
    pairs = PairSums(rng.random((n, 2)))
    upper, lower = rng.random((2, 4, pairs.a.size))
    for sign, given in ((-1.0, None), (1.0, None), (0.0, None), (2.5, None), (0.0, lower)):
        expected = np.zeros((4, n, n))
        expected[:, pairs.a, pairs.b] = upper
        expected[:, pairs.b, pairs.a] = sign * upper if given is None else given
        np.testing.assert_array_equal(pairs.square(upper, sign, given), expected)


def test_vectorized_rank_codes_group_like_tie_groups():
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 4, size=(50, 9)) * 0.1 + rng.choice([0, 1e-12, 1e-6], size=(50, 9))
    scores[rng.random(scores.shape) < 0.2] = np.nan
    codes = E.rank_codes(scores)
    for row, code in zip(scores, codes):
        present = ~np.isnan(row)
        np.testing.assert_array_equal(-code[present], tie_groups(row[present])[1])
        assert np.isnan(code[~present]).all()


@pytest.mark.parametrize("name, params", [("average_rank", {}), ("success_rate", {"ties": "half"})])
def test_shortcuts_reading_the_margins_copeland_computed_are_the_same(name, params):
    values = np.random.default_rng(6).integers(0, 4, size=(6, 11)).astype(float)
    s = E.setup(ms.ScoreMatrix.from_array(values), name, ms.Execution(params=params, seed=1))
    draws = D.draw(2, 9, "judges", s.n, s.m)
    cw = draws.judge_weights(s.matrix.weights)
    own = JudgeDraws(s.filled_ranks, cw)
    shared = JudgeDraws(s.filled_ranks, cw)
    shared.margins  # noqa: B018  (as the analyses do when Copeland is compared)
    hooks = ms.get_ranking_method(name).resampling
    assert shared.margins_known() and not own.margins_known()
    np.testing.assert_allclose(hooks.judges(s, s.params[name], shared),
                               hooks.judges(s, s.params[name], own), rtol=0, atol=1e-12)


def test_generalization_of_judges_with_ties_is_the_plain_one():
    values = np.random.default_rng(7).integers(0, 3, size=(7, 25)).astype(float)
    s = E.setup(ms.ScoreMatrix.from_array(values), ["median", "copeland"], ms.Execution(seed=1))
    draws = D.draw(8, 80, "both", s.n, s.m)
    block = F.Block(s, draws, B.usable_trials(s, draws))
    scores = B.bootstrap_scores(s, draws)
    fast, plain = (T.generalization_stats(block, scores, f) for f in (True, False))
    assert s.pairs.tied.size == s.m  # every judge ties some candidates: tie patterns
    for key in fast:
        np.testing.assert_allclose(fast[key], plain[key], rtol=1e-10, atol=1e-12)


def test_the_cost_of_a_method_ranked_one_resample_at_a_time_is_reported():
    m = ms.ScoreMatrix.from_array(np.random.default_rng(8).random((60, 400)) + 0.1)
    said: list[str] = []
    res = analyze(m, ["mean", "epp"], n_trials=20, q=4, r=2, curve_r=1, run=ms.Execution(notify=said.append, progress=lambda *a: said.append("a trial ran")))
    cost = res.settings["costs"]["epp"]
    # 20 (winner rank, Condorcet rate) + 20 (generalization) + 8 (judge stability; the
    # candidate stability reuses the winner rank's draws) + 4 for each size of the curve
    # but the last (the judge stability's draws) + 20 (the intervals: more than 8)
    sizes = len(res.curve.sizes)
    assert cost == {"axes": ["candidates", "both", "judges"],
                    "rankings": 20 + 20 + 8 + 4 * (sizes - 1) + 20}
    assert "mean" not in res.settings["costs"]
    assert any(n.startswith("epp has no batched shortcut on the 'candidates' and 'both' and "
                            "'judges' resampling axes: it ranks") for n in res.settings["notes"])
    # what it will cost is said before the first trial runs
    assert said[0].startswith("epp has no batched shortcut") and " it will rank " in said[0]
    assert said[0].endswith(" s.") and "a trial ran" not in said[:1] and said[1] == "a trial ran"
    small = analyze(m, ["mean", "epp"], n_trials=20, q=4, r=2, curve_r=1, run=ms.Execution(leave_out_costly=True))
    assert small.settings["methods"] == ["mean"]
    assert small.settings["methods_left_out"]["epp"].startswith("epp left out: epp has no")
    assert "more than the " in small.settings["methods_left_out"]["epp"]
    alone = analyze(m, ["epp"], n_trials=20, q=4, r=2, curve_r=1, run=ms.Execution(leave_out_costly=True))
    assert alone.settings["methods"] == ["epp"]  # nothing to compare it with: kept


def test_a_method_is_left_out_only_when_it_costs_more_than_the_others_together():
    from metascore.analysis.costs import MethodCost, costlier_than_the_rest

    def cost(name, rankings, batched):
        return MethodCost(name, ("candidates",) if rankings else (), rankings, 100, 1000,
                          0.01, batched)

    # a ranking one at a time: 1e7 pair-judge visits; a batched resample: 110,000
    cheap = {f"m{i}": cost(f"m{i}", 0, 1000) for i in range(5)}  # 5 x 1.1e8
    assert costlier_than_the_rest({**cheap, "slow": cost("slow", 60, 0)}) == {
        "slow": pytest.approx(5.5e8)}  # 6e8 > 5.5e8
    assert costlier_than_the_rest({**cheap, "slow": cost("slow", 50, 0)}) == {}  # 5e8
    assert costlier_than_the_rest({"slow": cost("slow", 600, 0)}) == {}  # alone
    assert costlier_than_the_rest({"m": cost("m", 0, 10**9), "x": cost("x", 1, 0)}) == {}


def test_analyze_leaves_out_a_costly_default_method_with_a_note(tmp_path, capsys, monkeypatch):
    """relative_difference on ranks ranks each candidate resample in a pass of its own;
    on 30 candidates it costs more than the five other default methods together."""
    from metascore.cli import main

    rng = np.random.default_rng(9)
    path = tmp_path / "wide.csv"
    lines = ["candidate," + ",".join(f"s{j}" for j in range(40))]
    lines += [f"c{i}," + ",".join(f"{v:.4f}" for v in rng.random(40) + 0.1) for i in range(30)]
    path.write_text("\n".join(lines) + "\n")
    costs_module = importlib.import_module("metascore.analysis.costs")
    monkeypatch.setattr(costs_module, "NOTED_WORK", 0)  # a "large size" for this small file
    monkeypatch.setattr(analysis_module, "NOTED_WORK", 0)  # its cost said, however small
    args = ["analyze", str(path), "--trials", "30", "--q", "4", "--r", "2", "-q",
            "-p", "relative_difference.on=ranks"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert "metascore: note: relative_difference left out: relative_difference has no" in err
    assert "more than the " in err and " of the other methods together" in err
    assert main([*args, "--methods", "mean,relative_difference", "--out", str(tmp_path / "b")]) == 0
    err = capsys.readouterr().err  # named: compared, its cost said
    assert "left out" not in err and "relative_difference has no batched shortcut" in err
    assert " it will rank " in err
