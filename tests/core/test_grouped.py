"""Judges in groups, ranked in two steps: a registered rule inside each group, then one
across the groups (the library, metascore.yaml and the analyses).

Vote'n'Rank's two-step case study is reproduced in ``test_vote_and_rank.py``.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import metascore as ms
from metascore.analysis import shared as E
from metascore.analysis import draws as D
from metascore.analysis import bootstrap as B
from metascore.config import parse_config
from metascore.errors import ConfigError, InputError
from metascore.leaderboard import build_leaderboard
from metascore.readers.score_table import ScoreTable
from metascore.render.writers import render_outputs

#   t1/acc t1/f1 t2/acc       group means: t1    t2
# A  0.9   0.5   0.6                       0.70  0.6
# B  0.7   0.7   0.9                       0.70  0.9
# C  0.8   0.9   0.1                       0.85  0.1
VALUES = [[0.9, 0.5, 0.6], [0.7, 0.7, 0.9], [0.8, 0.9, 0.1]]
JUDGES = ["t1/acc", "t1/f1", "t2/acc"]
GROUPS = {"t1": ["t1/acc", "t1/f1"], "t2": ["t2/acc"]}


def matrix(values=VALUES) -> ms.ScoreMatrix:
    return ms.ScoreMatrix.from_array(values, list("ABC")[:len(values)], JUDGES)


def test_two_steps_rank_the_groups_then_across_them():
    flat = ms.rank(matrix(), "copeland")
    # one step: A beats C, C beats B, B beats A (2-1 each): a cycle, all tie
    np.testing.assert_allclose(flat.scores, [0.5, 0.5, 0.5])
    grouped = matrix().grouped(GROUPS, weights={"t1": 2}, within="mean")
    r = ms.rank(grouped, "copeland")
    # across the group means, t1 weighing 2: C beats A and B 2-1, B beats A (tie on t1)
    np.testing.assert_allclose(r.scores, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(r.details["group_score:t1"], [0.7, 0.7, 0.85])
    np.testing.assert_allclose(r.details["group_score:t2"], [0.6, 0.9, 0.1])
    assert r.details["groups"]["t1"] == {"judges": ["t1/acc", "t1/f1"], "weight": 2.0,
                                         "method": "mean", "params": {}}
    assert r.judges == tuple(JUDGES) and r.method == "copeland"
    assert r.signature()["groups"] == {"within": "mean", "within_params": {}, "groups": {
        "t1": {"weight": 2.0, "judges": 2}, "t2": {"weight": 1.0, "judges": 1}}}
    assert "group_score:t1" in r.to_frame().columns


def test_the_rule_inside_defaults_to_the_rule_across():
    grouped = matrix().grouped(GROUPS)
    # mean inside, mean across (weights 1, 1): A (0.7 + 0.6) / 2, B 0.8, C 0.475
    np.testing.assert_allclose(ms.rank(grouped, "mean").scores, [0.65, 0.8, 0.475])
    # within-group parameters go with the rule inside
    r = ms.rank(matrix().grouped(GROUPS, within="optimality_gap", within_params={"gamma": 0.8}),
                "mean")
    # t1 gaps: A (0 + 0.3) / 2, B (0.1 + 0.1) / 2, C 0; t2: A 0.2, B 0, C 0.7 (the
    # scores are minus the gaps)
    np.testing.assert_allclose(r.details["group_score:t1"], [-0.15, -0.1, 0.0], atol=1e-12)
    np.testing.assert_allclose(r.scores, [-0.175, -0.05, -0.35])


def test_a_group_of_weight_0_is_shown_not_counted():
    r = ms.rank(matrix().grouped(GROUPS, weights={"t2": 0}, within="mean"), "mean")
    np.testing.assert_allclose(r.scores, [0.7, 0.7, 0.85])  # t1 alone
    np.testing.assert_allclose(r.details["group_score:t2"], [0.6, 0.9, 0.1])  # still shown
    assert "group 't2' has weight 0: shown, not counted." in r.notes
    assert r.winners == ("C",)


def test_a_candidate_without_a_score_in_a_group_has_no_group_score():
    values = [[0.9, 0.5, 0.6], [0.7, 0.7, 0.9], [0.8, 0.9, np.nan]]
    grouped = matrix(values).grouped(GROUPS, within="mean")
    r = ms.rank(grouped, "mean", missing="pairwise")
    assert np.isnan(r.details["group_score:t2"][2])
    np.testing.assert_allclose(r.scores, [0.65, 0.8, 0.85])  # C: its t1 mean alone
    # worst: C's missing group score is the worst group score, 0.6
    np.testing.assert_allclose(ms.rank(grouped, "mean").scores, [0.65, 0.8, (0.85 + 0.6) / 2])
    # drop_candidates drops C before any step
    r = ms.rank(grouped, "mean", missing="drop_candidates")
    assert r.candidates == ("A", "B") and "C" in r.excluded_candidates


def test_judge_weights_count_inside_their_group_and_weight_0_judges_nowhere():
    m = ms.ScoreMatrix.from_array(VALUES, list("ABC"), JUDGES, weights=[3, 1, 0])
    r = ms.rank(m.grouped({"t1": ["t1/acc", "t1/f1"], "t2": ["t2/acc"]}), "mean")
    # t1: (3 x + y) / 4; t2 has no counted judge left: no group
    np.testing.assert_allclose(r.scores, [0.8, 0.7, 0.825])
    assert "group_score:t2" not in r.details and r.uncounted_judges == ("t2/acc",)


@pytest.mark.parametrize("groups, weights, message", [
    ({"t1": ["t1/acc"], "t2": ["t2/acc"]}, None, r"judge 't1/f1' is in no group"),
    ({"t1": ["t1/acc", "t1/f1"], "t2": ["t2/acc", "t1/f1"]}, None,
     r"judge 't1/f1' is in two groups, 't1' and 't2'"),
    ({"t1": ["t1/acc", "t1/f1", "t2/ac"], "t2": ["t2/acc"]}, None,
     r"group 't1' names judge 't2/ac', which is not a judge of the matrix \(did you mean 't2/acc'\?\)"),
    (GROUPS, {"t3": 1}, r"group weights name group 't3', which is not a group"),
    (GROUPS, {"t1": -1}, r"group 't1' has weight -1; group weights must be numbers >= 0"),
    (GROUPS, {"t1": 0, "t2": 0}, r"every group has weight 0"),
])
def test_bad_groups_are_refused_with_the_judge_or_group_named(groups, weights, message):
    with pytest.raises(InputError, match=message):
        matrix().grouped(groups, weights=weights)


def test_an_unknown_rule_inside_is_refused():
    with pytest.raises(ConfigError, match="unknown ranking method 'men'"):
        ms.rank(matrix().grouped(GROUPS, within="men"), "mean")


def test_resamples_keep_the_groups_and_are_ranked_in_two_steps():
    grouped = matrix().grouped(GROUPS, within="mean")
    sub = grouped.subset(judges=[0, 0, 2])
    assert sub.groups.of == ("t1", "t1", "t2") and sub.judges == ("t1/acc", "t1/acc#1", "t2/acc")
    assert grouped.subset(candidates=[2, 0]).groups == grouped.groups
    s = E.setup(grouped, ["copeland", "mean"], ms.Execution(seed=3))
    for axis in ("judges", "candidates", "both"):
        draws = D.draw(5, 8, axis, s.n, s.m)
        got = B.bootstrap_scores(s, draws)
        for t in range(draws.trials):
            judges = None if draws.counts is None else np.repeat(np.arange(s.m), draws.counts[t])
            cand = None if draws.candidates is None else draws.candidates[t]
            resampled = grouped.subset(candidates=cand, judges=judges)
            for name in ("copeland", "mean"):
                want = ms.rank(resampled, name).scores
                if cand is not None:
                    first = np.unique(cand, return_index=True)[1]
                    want, row = want[first], got[name][t, cand[first]]
                else:
                    row = got[name][t]
                np.testing.assert_allclose(row, want, atol=1e-12)


def test_the_analyses_rank_a_grouped_matrix_in_two_steps():
    rng = np.random.default_rng(0)
    m = ms.ScoreMatrix.from_array(rng.random((6, 6)), [f"c{i}" for i in range(6)],
                                  [f"t{k // 2}/m{k % 2}" for k in range(6)])
    grouped = m.grouped({f"t{g}": [f"t{g}/m0", f"t{g}/m1"] for g in range(3)}, within="mean")
    u = ms.rank_uncertainty(grouped, "copeland", n_trials=30, run=ms.Execution(seed=1))
    assert u.method == "copeland" and len(u.candidates) == 6
    result = ms.analysis.analyze(grouped, ["copeland", "plurality"], n_trials=20, q=5, r=2, curve_r=1, run=ms.Execution(seed=1))
    assert set(result.comparison.methods) == {"copeland", "plurality"}


# ---------------------------------------------------------------------- metascore.yaml
def table() -> ScoreTable:
    rows = [dict(phase="Dev", candidate=c, task=j.split("/")[0], metric=j.split("/")[1], value=v)
            for c, vals in zip("ABC", VALUES) for j, v in zip(JUDGES, vals)]
    rows += [dict(phase="Dev", candidate=c, task="diag", metric="acc", value=v)
             for c, v in zip("ABC", (50, 10, 30))]
    return ScoreTable(pd.DataFrame(rows))


def config(ranking: dict, judges: list | None = None) -> object:
    return parse_config({"phases": {"development": "Dev", "final": None},
                         "filter": {"rule": "none"}, "judges": judges, "ranking": ranking,
                         "analysis": {"bootstrap": 20, "stability": False}})


def test_metascore_yaml_groups_by_task_with_weights_and_a_rule_inside():
    judges = [{"task": t, "metric": "acc" if t == "diag" else m, **({"weight": 0} if t == "diag" else {})}
              for t, m in [("t1", "acc"), ("t1", "f1"), ("t2", "acc"), ("diag", "acc")]]
    cfg = config({"method": "copeland", "groups": {
        "by": "task", "method": "mean", "weights": {"t1": 2, "t2": 1}}}, judges)
    lb = build_leaderboard(table(), cfg)
    assert [r.candidate for r in lb.final.ranked] == ["C", "B", "A"]
    assert lb.final.ranked[0].details["group_score:t1"] == pytest.approx(0.85)
    files = render_outputs(lb)
    doc = json.loads(files["leaderboard.json"])
    assert doc["signature"]["groups"]["within"] == "mean"
    assert doc["config"]["ranking"]["groups"] == {"by": "task", "weights": {"t1": 2.0, "t2": 1.0},
                                                  "method": "mean", "params": {}}
    assert "group_score:t1" in files["leaderboard.csv"].splitlines()[0]


def test_metascore_yaml_groups_by_the_judges_group_key():
    judges = [{"task": "t1", "metric": "acc", "group": "one"}, {"task": "t1", "metric": "f1", "group": "one"},
              {"task": "t2", "metric": "acc", "group": "two"}]
    lb = build_leaderboard(table(), config({"method": "mean", "groups": {"weights": {"one": 2}}}, judges))
    # mean inside and across, "one" weighing 2: A (1.4 + 0.6) / 3, B (1.4 + 0.9) / 3, C 1.8 / 3
    assert [round(r.score, 4) for r in lb.final.ranked] == [0.7667, 0.6667, 0.6]
    # a group key alone groups the judges, weights 1
    lb = build_leaderboard(table(), config({"method": "mean"}, judges))
    assert [r.candidate for r in lb.final.ranked] == ["B", "A", "C"]


@pytest.mark.parametrize("ranking, judges, message", [
    ({"groups": {"by": "tasks"}}, None, r"`ranking\.groups\.by` must be one of \['judges', 'task', 'metric'\]"),
    ({"groups": {}}, None, r"`ranking\.groups` groups the judges by their `group` key, and judge "
                           r"'\(no judge is listed\)' has none"),
    ({"groups": {"by": "judges"}}, [{"task": "a", "group": "g"}, {"task": "b"}],
     r"judge 'b' has none"),
    ({"groups": {"by": "task"}}, [{"task": "a", "group": "g"}], r"`ranking\.groups\.by` is 'task', "
                                                                r"and judges give a `group` key"),
    ({"groups": {"weights": {"h": 1}}}, [{"task": "a", "group": "g"}],
     r"unknown group 'ranking\.groups\.weights\.h'"),
    ({"groups": {"by": "task", "weights": {"a": -2}}}, None,
     r"`ranking\.groups\.weights\.a` must be a number >= 0"),
    ({"groups": {"by": "task", "method": "copland"}}, None, r"did you mean 'copeland'"),
    ({"groups": {"by": "task", "method": "dowdall", "params": {"ties": "max"}}}, None,
     r"`ranking\.groups\.params\.ties` must be one of \['average', 'min'\]"),
    ({"groups": {"by": "task", "params": {"ties": "min"}}}, None,
     r"`ranking\.groups\.params` are the parameters of ranking\.groups\.method, which is not given"),
])
def test_metascore_yaml_refuses_bad_groups(ranking, judges, message):
    with pytest.raises(ConfigError, match=message):
        config(ranking, judges)


def test_a_group_weight_naming_no_task_is_refused_at_build():
    cfg = config({"groups": {"by": "task", "weights": {"t3": 1}}})
    with pytest.raises(InputError, match=r"group weights name group 't3', which is not a group"):
        build_leaderboard(table(), cfg)
