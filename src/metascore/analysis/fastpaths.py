"""Fast paths of the bootstrap: scores of resampled matrices without re-ranking them.

A ranking method declares the exact shortcuts it offers next to its function
(:class:`metascore.resampling.Shortcuts`, the ``resampling=`` of its registration); this
module decides, from those declarations and the data, which one a resample may take, and
computes what several methods (and the criteria) share, once per block of trials
(:class:`Block`):

- under judge resampling (:func:`judge_fast_scores`), a trial only reweights the judges:
  the method's ``judges`` shortcut reads the block's judge weights (and, if it needs
  them, the trials' head-to-head margins, one matrix product for every method);
- under candidate resampling (:func:`candidate_fast_scores`, axis ``candidates`` or
  ``both``), a ``candidates`` shortcut reads the candidate multiplicities, and a
  ``candidate_pairs`` shortcut the pairwise statistics of the drawn multiset
  (:class:`~metascore.resampling.PairStats`), from the full data's counts or, with the
  judges resampled too, from one product for the whole block.

Each path gives the registry's scores on the resampled matrix (tested against it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..resampling import CandidateDraws, JudgeDraws, Pulls, pair_stats
from .shared import Setup
from .draws import Draws

__all__ = [
    "Block",
    "fast_path_reason",
    "candidate_fast_reason",
    "judge_fast_scores",
    "candidate_fast_scores",
]

def fast_path_reason(s: Setup, name: str) -> str | None:
    """None when ``name`` can use its fast path on ``s`` under judge resampling, else why not.

    The method must declare a ``judges`` shortcut, every candidate must be ranked by every
    judge (no missing cell, or ``missing="worst"``), and the method's own conditions
    (``judges_reason``) must hold.
    """
    hooks = s.hooks(name)
    if hooks.judges is None:
        return "no fast path for this method"
    if s.matrix.has_missing and s.missing != "worst":
        return f"missing cells under missing={s.missing!r}"
    return None if hooks.judges_reason is None else hooks.judges_reason(s, s.params[name])


def candidate_fast_reason(s: Setup, name: str, judges_resampled: bool = False) -> str | None:
    """None when ``name`` can use its fast path under candidate resampling, else why not.

    The method must declare a ``candidates`` or ``candidate_pairs`` shortcut, the matrix
    must have no missing cell (the worst value a missing cell receives depends on the
    drawn candidates), and the method's own conditions (``candidates_reason``) must hold.
    """
    hooks = s.hooks(name)
    if hooks.candidates is None and hooks.candidate_pairs is None:
        return "no fast path for this method"
    if s.matrix.has_missing:
        return "missing cells (their fill value depends on the drawn candidates)"
    if hooks.candidates_reason is not None:
        return hooks.candidates_reason(s, s.params[name])
    return None


@dataclass(eq=False)
class Block:
    """A block of trials: its draws, which trials keep a usable judge, and what the fast
    paths and the criteria share, each computed when first needed.

    A trial without a usable judge is scored with every judge weighing its own weight
    once (no division by zero); its scores are discarded.
    """

    s: Setup
    draws: Draws
    usable: np.ndarray

    @property
    def trials(self) -> int:
        return self.draws.trials

    @cached_property
    def weights(self) -> np.ndarray:
        return np.asarray(self.s.matrix.weights, dtype=float)

    @cached_property
    def integral(self) -> bool:
        """Whether every judge weight (so every trial's weight) is an integer."""
        return self.s.integral_weights

    @cached_property
    def cw(self) -> np.ndarray | None:
        """The judges' weights in each trial (T x m), None when not resampled; float32
        when they are integers (exact: what the products read, half the memory)."""
        counts = self.draws.counts
        if counts is None:
            return None
        counts = np.where(self.usable[:, None], counts, 1) if not self.usable.all() else counts
        # a count is at most its trial's number of draws: exact in float32 below 2**24
        if self.integral and self.draw_totals.max(initial=0) * self.weights.max() < 2**24:
            cw = counts.astype(np.float32)
            if self.weights.strides != (0,) or self.weights[0] != 1.0:  # not all ones
                cw *= self.weights.astype(np.float32)[None, :]
            return cw
        return counts * self.weights[None, :]

    @cached_property
    def c(self) -> np.ndarray | None:
        """The candidates' multiplicities (T x n), None when not resampled."""
        return self.draws.multiplicities(self.s.n)

    @cached_property
    def draw_totals(self) -> np.ndarray:
        """How many judges each trial drew (T)."""
        return self.draws.counts.sum(axis=1)

    @cached_property
    def judge_draws(self) -> JudgeDraws:
        cw = self.cw if self.cw is not None else self.weights[None, :]
        # the setup's pairs, built when a shortcut first reads them
        draws = JudgeDraws(self.s.filled_ranks, cw, lambda: self.s.pairs, self.integral)
        if self.cw is not None and self.usable.all() and (
                self.weights.strides == (0,) and self.weights[0] == 1.0):
            draws.__dict__["total"] = self.draw_totals[:, None].astype(float)  # known
        return draws

    @cached_property
    def margins(self) -> np.ndarray:
        """Head-to-head margins of every trial's judges, T x n x n (1 x n x n: the full
        data's, when the judges were not resampled)."""
        if self.cw is None:
            return self.s.full_counts.margins()[None]
        return self.judge_draws.margins

    @cached_property
    def pulls(self) -> Pulls:
        """Sums over the judges' pairs weighted by the block's multiplicities (shared by
        the pair statistics, Copeland and the generalization; every candidate once when
        they were not resampled)."""
        return Pulls(self.s.pairs, self.c if self.c is not None
                     else np.ones((self.trials, self.s.n)))

    @cached_property
    def wins(self) -> np.ndarray:
        """``N(a, b)`` of every trial's judges, T x n x n (1 x n x n: the full data's)."""
        if self.cw is None:
            return np.asarray(self.s.full_counts.wins, dtype=float)[None]
        return self.s.pairs.wins(self.cw, self.integral)


def judge_fast_scores(block: Block, names: list[str]) -> dict[str, np.ndarray]:
    """Scores (T x n) of each of ``names`` on the block's judge resamples (the margins,
    computed when a method first needs them, are shared)."""
    s, draws = block.s, block.judge_draws
    if any(s.hooks(name).margins for name in names):
        draws.pair_margins  # noqa: B018  (computed first: the others may read it)
    return {name: s.hooks(name).judges(s, s.params[name], draws) for name in names}


def candidate_fast_scores(block: Block, names: list[str]) -> dict[str, np.ndarray]:
    """Scores (T x n, NaN for a candidate not drawn) of ``names`` on the block's
    candidate resamples; copies of a candidate tie with it, as in the registry."""
    s, c = block.s, block.c
    resampled = block.cw is not None
    cw = block.cw if resampled else np.broadcast_to(block.weights, (block.trials, s.m))
    draws = CandidateDraws(block.draws.candidates, c, cw, resampled)
    out: dict[str, np.ndarray] = {}
    stats = None
    for name in names:
        hooks = s.hooks(name)
        if hooks.candidate_pairs is not None:
            if stats is None:
                stats = (pair_stats(draws, pulls=block.pulls, integral=block.integral)
                         if resampled else pair_stats(draws, block.wins))
            scores = hooks.candidate_pairs(stats, s.params[name])
        else:
            scores = hooks.candidates(s, s.params[name], draws)
        out[name] = np.array(np.broadcast_to(scores, c.shape), dtype=float)
        out[name][c == 0] = np.nan
    return out
