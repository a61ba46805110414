"""The resamples of the bootstrap analyses, drawn a block of trials at a time.

Trial ``t`` draws from its own generator, ``default_rng(SeedSequence(entropy,
spawn_key=(t,)))`` (the t-th child of ``SeedSequence(entropy)``): the candidates first
(axis ``candidates`` or ``both``), then the judges (axis ``judges`` or ``both``), then the
seed of the stochastic methods. A trial's resample depends only on the seed and ``t``,
never on how the trials are split into blocks or among workers. A :class:`DrawPlan` says
what to draw and draws any block of trials on demand, so an analysis of 1,000 trials of
471,033 judges never holds more than a block of judge counts; :class:`Draws` is a block
(or all trials) drawn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError, did_you_mean
from ..registry import generator

__all__ = ["AXES", "check_axis", "Draws", "DrawPlan", "plan_draws", "draw", "usable", "skip_note"]

#: Resampling axes of every bootstrap criterion.
AXES = ("judges", "candidates", "both")


def check_axis(axis: str, name: str = "axis") -> str:
    """``axis`` if it is one of :data:`AXES`, else a ConfigError naming the valid ones."""
    if axis not in AXES:
        raise ConfigError(
            f"`{name}` must be one of {list(AXES)}; got {axis!r}{did_you_mean(str(axis), AXES)}."
        )
    return axis


@dataclass(frozen=True)
class Draws:
    """The resamples of T trials (all of a criterion's, or a block of them).

    Attributes
    ----------
    axis : str
    counts : int array (T, m) or None
        How many times each judge was drawn in each trial (None: every judge once).
    candidates : int array (T, k) or None
        Candidate positions drawn in each trial, in draw order (None: every candidate once).
    seeds : int array (T,)
        Seed handed to stochastic methods in each trial (the same for every method).
    seed : int or None
        The seed the draws came from (None when a Generator was given).
    """

    axis: str
    counts: np.ndarray | None
    candidates: np.ndarray | None
    seeds: np.ndarray
    seed: int | None

    @property
    def trials(self) -> int:
        return len(self.seeds)

    def judge_weights(self, weights: np.ndarray) -> np.ndarray:
        """Weight of each judge in each trial (T x m): judge weight times multiplicity."""
        w = np.asarray(weights, dtype=float)[None, :]
        return np.repeat(w, self.trials, axis=0) if self.counts is None else self.counts * w

    def chunk(self, lo: int, hi: int) -> Draws:
        """Trials ``lo:hi``."""
        def part(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[lo:hi]

        return Draws(self.axis, part(self.counts), part(self.candidates), self.seeds[lo:hi],
                     self.seed)

    def multiplicities(self, n: int) -> np.ndarray | None:
        """How many times each candidate was drawn in each trial (T x n), None when the
        candidates were not resampled."""
        if self.candidates is None:
            return None
        trials = self.trials
        flat = (self.candidates + n * np.arange(trials)[:, None]).ravel()
        return np.bincount(flat, minlength=trials * n).reshape(trials, n).astype(float)


@dataclass(frozen=True)
class DrawPlan:
    """What a criterion draws: ``trials`` resamples along ``axis`` of an ``n`` x ``m``
    matrix, ``size`` judges per trial, from the generators of ``entropy`` (the recorded
    ``seed``, None when a Generator supplied the entropy). :meth:`chunk` draws a block."""

    axis: str
    trials: int
    n: int
    m: int
    size: int
    entropy: int
    seed: int | None

    def chunk(self, lo: int, hi: int) -> Draws:
        """The resamples of trials ``lo:hi``."""
        count = hi - lo
        counts = np.zeros((count, self.m), dtype=np.int32) if self.axis != "candidates" else None
        cands = np.zeros((count, self.n), dtype=np.intp) if self.axis != "judges" else None
        seeds = np.zeros(count, dtype=np.int64)
        for i, t in enumerate(range(lo, hi)):
            g = np.random.default_rng(np.random.SeedSequence(self.entropy, spawn_key=(t,)))
            if cands is not None:
                cands[i] = g.integers(0, self.n, size=self.n)
            if counts is not None:
                counts[i] = np.bincount(g.integers(0, self.m, size=self.size), minlength=self.m)
            seeds[i] = g.integers(0, 2**31 - 1)
        return Draws(self.axis, counts, cands, seeds, self.seed)

    def key(self) -> tuple:
        """What the draws of a trial depend on (besides the trial's index)."""
        return (self.axis, self.n, self.m, self.size, self.entropy)


def plan_draws(seed: int | np.random.Generator | None, trials: int, axis: str, n: int, m: int, *,
         judges: int | None = None) -> DrawPlan:
    """The plan of ``trials`` resamples: ``n`` candidates drawn with replacement (axis
    ``candidates`` or ``both``), then ``judges`` judges (default ``m``; axis ``judges`` or
    ``both``). A Generator given as ``seed`` supplies the entropy (recorded as None)."""
    check_axis(axis)
    rng, seed_used = generator(seed)
    entropy = seed_used if seed_used is not None else int(rng.integers(0, 2**63 - 1))
    return DrawPlan(axis, int(trials), n, m, m if judges is None else int(judges), entropy,
                    seed_used)


def draw(seed: int | np.random.Generator | None, trials: int, axis: str, n: int, m: int, *,
         judges: int | None = None) -> Draws:
    """Every resample of :func:`plan_draws` at once (small analyses and tests)."""
    return plan_draws(seed, trials, axis, n, m, judges=judges).chunk(0, trials)


def usable(present: np.ndarray, draws: Draws) -> np.ndarray:
    """Whether each trial's resample keeps a usable judge (bool array, T).

    ``present`` marks the scored cells (n x m). A judge is usable in a trial when it is
    drawn and scores at least one drawn candidate; a trial without one (every drawn judge
    lacks a score for every drawn candidate, which only missing cells kept by
    ``missing="worst"`` or ``"pairwise"`` allow) has nothing to rank. Such a trial is
    skipped: its scores stay NaN for every method, each criterion leaves it out and
    counts it (:func:`skip_note`). The rule reads only the draws, so it is the same for
    every method and whatever the blocks or ``jobs``.
    """
    if draws.counts is None and (draws.candidates is None or present.all()):
        return np.full(draws.trials, bool(present.any(axis=0).any()))
    if present.all():
        return draws.counts.any(axis=1)
    if draws.candidates is None:
        scoring = np.repeat(present.any(axis=0)[None, :], draws.trials, axis=0)
    else:
        drawn = draws.multiplicities(present.shape[0])
        scoring = (drawn @ present.astype(float)) > 0  # T x m
    if draws.counts is not None:
        scoring &= draws.counts > 0
    return scoring.any(axis=1)


def skip_note(skipped: int, total: int, what: str = "resamples") -> str:
    """The note of a result whose ``skipped`` of ``total`` trials kept no usable judge."""
    return (f"{skipped} of {total} {what} kept no usable judge (every drawn judge lacks a "
            "score for every drawn candidate) and were skipped.")
