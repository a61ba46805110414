"""The shared small competition of ``tests/data/competition`` and its usual configuration.

Three judges (iris accuracy, wine MAE lower-is-better, digits F1), two baselines of the
participant ``organizers``, a development and a final phase; ``filter: {beat: any}``
qualifies dave-105 and alice-101 for the final ranking.
"""

from __future__ import annotations

from pathlib import Path

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
