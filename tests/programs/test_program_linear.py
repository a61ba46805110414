"""The meta program's steps stay linear in the number of submissions (issue 52): counted in
operations, not timed.

The program runs as ``metascore bundle add-meta`` configures it (two phases, the baseline
filter, rank intervals and stability) on n and 2n submissions per phase. Its work is counted
as the Python and C functions it calls (``sys.setprofile``) plus the labels it scans looking
one up in a matrix's or a ranking's tuple of candidates (``in``, ``index``, ``count``: a C
loop no profiler sees, which made the development board quadratic at 100,000 submissions).
Doubling the submissions may at most double the work, give or take the sorts. The method
comparison (``analysis.compare``) is left out: it compares every pair of candidates by
nature, and beyond 20 million pairs it is not computed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metascore.config import parse_config
from metascore.matrix import ScoreMatrix
from metascore.program import run
from metascore.ranking import Ranking

CONFIG = {"input": {"path": "long.csv"}, "phases": {"development": "Development", "final": "Final"},
          "baselines": ["organizer"], "filter": {"rule": "beat_baseline", "beat": "all"},
          "analysis": {"bootstrap": 20, "level": 0.95, "stability": True}}


class Scanned(tuple):
    """A tuple of labels that counts the labels a lookup in it scans."""

    seen = [0]

    def __contains__(self, item: object) -> bool:
        Scanned.seen[0] += len(self)
        return tuple.__contains__(self, item)

    def index(self, *args: object) -> int:  # type: ignore[override]
        Scanned.seen[0] += len(self)
        return tuple.index(self, *args)

    def count(self, item: object) -> int:
        Scanned.seen[0] += len(self)
        return tuple.count(self, item)


def _scanned_candidates(monkeypatch, cls: type, *makers: str) -> None:
    """Every ``cls`` made, by its ``__init__`` or its classmethods ``makers``, holds its
    candidates in a :class:`Scanned`."""
    def scanned(obj):
        if type(obj.candidates) is tuple:
            object.__setattr__(obj, "candidates", Scanned(obj.candidates))
        return obj

    init = cls.__init__

    def counted(self, *args, **kwargs) -> None:
        init(self, *args, **kwargs)
        scanned(self)

    monkeypatch.setattr(cls, "__init__", counted)
    for name in (n for n in makers if n in cls.__dict__):
        make = getattr(cls, name)
        monkeypatch.setattr(cls, name, classmethod(lambda c, *a, make=make, **k: scanned(
            make(*a, **k))))


def _competition(n: int, m: int, folder: Path) -> None:
    """A long CSV of two phases: n submissions of n participants x m tasks each, and the
    baseline ``organizer`` at every task's median (about half beat it)."""
    rng = np.random.default_rng(n)
    frames = []
    for p, phase in enumerate(("Development", "Final")):
        x = rng.normal(size=(n, m))
        frames.append(pd.DataFrame({
            "phase": phase,
            "candidate": np.repeat([f"p{i:05d}-{i + p * n}" for i in range(n)] + [f"organizer-{p}"], m),
            "participant": np.repeat([f"p{i:05d}" for i in range(n)] + ["organizer"], m),
            "task": np.tile([f"t{j}" for j in range(m)], n + 1), "metric": "score",
            "value": np.vstack([x, np.median(x, axis=0)]).ravel()}))
    pd.concat(frames).to_csv(folder / "long.csv", index=False)


def _work(n: int, tmp_path: Path, rule: dict | None = None) -> int:
    folder = tmp_path / f"{n}-{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    _competition(n, 5, folder)
    calls = [0]

    def profile(frame, event, arg):
        if event in ("call", "c_call"):
            calls[0] += 1

    Scanned.seen[0] = 0
    sys.setprofile(profile)
    try:
        lb = run(parse_config({**CONFIG, "filter": rule or CONFIG["filter"]}), folder,
                 folder / "out", log=lambda _: None)
    finally:
        sys.setprofile(None)
    assert len(lb.final.rows) == n + 1 and lb.filter.qualified  # every step ran
    assert lb.analysis.uncertainty is not None and lb.analysis.stability is not None
    return calls[0] + Scanned.seen[0]


@pytest.mark.parametrize("rule", [None, {"rule": "top_k", "k": "auto"}])
def test_the_program_steps_are_linear_in_the_submissions(monkeypatch, tmp_path, rule):
    """add-meta's baseline filter, and its other filter that ranks the final phase twice."""
    _scanned_candidates(monkeypatch, ScoreMatrix, "from_array")
    _scanned_candidates(monkeypatch, Ranking, "of")
    small, large = _work(1000, tmp_path, rule), _work(2000, tmp_path, rule)
    assert large <= 2.2 * small, f"{small:,} operations at 1,000 submissions, {large:,} at 2,000"


@pytest.mark.parametrize("lookups", [0, 1])
def test_the_count_sees_a_quadratic_step(monkeypatch, tmp_path, lookups):
    """The count is not blind: a step looking each final candidate up in the ranking's
    tuple of candidates (the development board's old line) makes the work grow faster."""
    from metascore.leaderboard import boards

    _scanned_candidates(monkeypatch, ScoreMatrix, "from_array")
    _scanned_candidates(monkeypatch, Ranking, "of")
    real = boards.dev_board

    def quadratic(phase, matrix, ranking, dropped):
        for _ in range(lookups):
            [c for c in matrix.candidates if c not in ranking.candidates]
        return real(phase, matrix, ranking, dropped)

    monkeypatch.setattr("metascore.leaderboard.build.dev_board", quadratic)
    small, large = _work(1000, tmp_path), _work(2000, tmp_path)
    assert (large > 2.2 * small) == bool(lookups)
