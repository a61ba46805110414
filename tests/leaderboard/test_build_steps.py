"""The seams of build_leaderboard (issue 44 items 2 and 3): what was read is a typed summary
built from the score table, with records for failed and flagged runs (a dict only where
leaderboard.json is written); the phase plan is made once from the configuration and signs
its own part of the signature; one analysis setup of the final ranking serves the rank
uncertainty, the stability, the judges' agreement and the method comparison."""

from __future__ import annotations

import json
import shutil

from metascore.config import parse_config
from metascore.leaderboard import build_leaderboard, statistics
from metascore.leaderboard.model import InputSummary
from metascore.leaderboard.plan import PhasePlan, Ranker
from metascore.readers.configured import load_scores
from metascore.readers.score_table import Failure, Flag
from metascore.render.writers import render_outputs
from shared_competition import CONFIG, FIXTURE, config as _config


def _tree(tmp_path):
    """The fixture's tree with one failed run and one flagged run."""
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURE / "tree", tree)
    failed = tree / "Final" / "carol-104" / "wine"
    for old in failed.iterdir():
        old.unlink()
    (failed / "error.txt").write_text("Failed (program_rc=1): MemoryError\n")
    (tree / "Development" / "alice-101" / "iris" / "prediction_failed.txt").write_text(
        "prediction step: exited 1\n")
    return tree


def test_the_input_summary_is_typed_and_a_dict_only_in_leaderboard_json(tmp_path):
    config = _config(input={"path": "."}, analysis={"bootstrap": 0, "stability": False})
    table = load_scores(config.input, _tree(tmp_path), development=config.phases.development)
    assert table.input_path == "." and table.format == "tree"
    (failure,) = [f for f in table.failed if f.candidate == "carol-104"]
    assert isinstance(failure, Failure) and (failure.phase, failure.task) == ("Final", "wine")
    (flag,) = table.flagged
    assert isinstance(flag, Flag) and flag.reason == "prediction step: exited 1"
    lb = build_leaderboard(table, config)
    summary = lb.input_summary
    assert isinstance(summary, InputSummary)
    assert summary.failed == table.failed and summary.flagged == table.flagged
    assert summary.phases["Final"].candidates == len(lb.final.rows)
    written = json.loads(render_outputs(lb)["leaderboard.json"])["input"]
    assert written == json.loads(json.dumps(summary.to_dict()))
    assert written["failed"][0] == {"phase": failure.phase, "candidate": failure.candidate,
                                    "task": failure.task, "reason": failure.reason}
    assert written["prediction_failed"] == [flag._asdict()]
    assert list(written) == ["path", "format", "failed", "prediction_failed", "rows",
                             "phases_found", "phases"]


def test_the_phase_plan_is_made_once_and_signs_its_part():
    config = parse_config({**CONFIG, "phases": {"deadlines": {"Final": "2030-01-01T00:00:00Z"}}})
    plan = PhasePlan.of(config)
    assert plan.phases == ("Development", "Final") and plan.ranker == Ranker.of(config.ranking)
    table = plan.check(load_scores(config.input, FIXTURE))
    origins = plan.origins(table)
    lb = build_leaderboard(table, config)
    own = plan.signature(origins)
    assert {k: lb.signature[k] for k in own} == own
    assert list(lb.signature)[-len(own):] == list(own)  # after the ranking's own keys
    # a phase's selection says which candidates have no judge score: no out-parameter
    selection = plan.select(table, "Final", origins["Final"])
    assert selection.unscored == {} and selection.matrix.n_candidates >= 2
    # the ranker signs a ranking of nobody with the keys a ranking signs
    assert list(plan.ranker.signature()) == [k for k in lb.signature if k not in own]


def test_one_setup_serves_every_analysis_of_the_final_ranking(monkeypatch):
    """The final ranking's pool is not prepared again: one setup of it is made, and the
    rank uncertainty, the judges' agreement, the stability and the comparison read it."""
    import metascore.analysis.criteria as criteria
    import metascore.analysis.shared as shared

    made = []
    real_setup_of = statistics.setup_of

    def counted(*args, **kwargs):
        made.append(args[1])
        return real_setup_of(*args, **kwargs)

    def refused(*args, **kwargs):
        raise AssertionError("the analysis prepared the pool again")

    monkeypatch.setattr(statistics, "setup_of", counted)
    config = parse_config({**CONFIG, "analysis": {"bootstrap": 20, "stability": True,
                                                  "compare": ["average_rank", "copeland"]},
                           "filter": {"rule": "none"}})
    table = load_scores(config.input, FIXTURE)
    monkeypatch.setattr(shared, "prepare_inputs", refused)
    monkeypatch.setattr(criteria, "prepare_inputs", refused)
    lb = build_leaderboard(table, config)
    assert made == ["average_rank"]
    a = lb.analysis
    assert a.uncertainty is not None and a.agreement is not None and a.stability is not None
    assert a.comparison is not None and list(a.comparison.methods) == ["average_rank", "copeland"]
