"""The shared small competition of ``tests/data/competition`` and its usual configuration.

Three judges (iris accuracy, wine MAE lower-is-better, digits F1), two baselines of the
participant ``organizers``, a development and a final phase; ``filter: {beat: any}``
qualifies dave-105 and alice-101 for the final ranking.
"""

from __future__ import annotations

from pathlib import Path

from metascore.config import parse_config
from metascore.leaderboard import build_leaderboard
from metascore.readers.configured import load_scores

FIXTURE = Path(__file__).resolve().parent / "data" / "competition"
CONFIG = {
    "input": {"path": "long.csv"},
    "judges": [{"task": "iris", "metric": "accuracy"},
               {"task": "wine", "metric": "mae", "direction": "lower"},
               {"task": "digits", "metric": "f1"}],
    "baselines": ["organizers"],
    "selection": {"final": "best"},
    "filter": {"beat": "any"},
}


def config(**over):
    """The plain configuration: the input, judges and baselines of :data:`CONFIG` (no
    selection, no filter), with ``over`` on top."""
    base = {key: CONFIG[key] for key in ("input", "judges", "baselines")}
    return parse_config({**base, **over})


def board(config, path=None):
    """The leaderboard of ``config`` on the fixture (``path``: another input file of it)."""
    if path is not None:
        config = parse_config({**config.to_dict(), "input": {"path": path}})
    table = load_scores(config.input, FIXTURE, development=config.phases.development)
    return build_leaderboard(table, config)
