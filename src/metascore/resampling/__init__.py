"""Exact resampling shortcuts a ranking method may declare, and the statistics they share.

A bootstrap trial ranks a resampled matrix: judges drawn with replacement (each judge gets
a multiplicity), candidates drawn with replacement (each candidate gets a multiplicity,
copies tie with their original), or both. Many methods need not rank each resample from
scratch: their scores are functions of *sufficient statistics* of the full matrix that the
multiplicities only reweight (the way sacrebleu splits a metric's corpus statistics from
the score computed from them, so resampling reuses the statistics). A method declares what
it can do with :class:`Shortcuts`, given to :func:`metascore.registry.ranking_method` next
to its function::

    @ranking_method("mean", resampling=Shortcuts(judges=mean_by_judges, ...))

The analyses (:mod:`metascore.analysis.bootstrap`) read these declarations and never name
a method. Every shortcut must give the registry's scores on the resampled matrix exactly
(``tests/methods/test_method_shortcuts.py`` checks each declared one against :func:`~metascore.rank`).

Two modules, by concern:

- :mod:`.shortcuts`: the contract: what a method declares (:class:`Shortcuts`), the full
  data it reads (:class:`ResampleBase`, with what a shortcut computes once from it kept in
  ``base.cache``: :func:`kept`) and what it is handed for a block of trials: per-trial
  judge weights (:class:`JudgeDraws`), candidate multiplicities (:class:`CandidateDraws`),
  the pairwise wins of each trial's judges among the drawn candidates (:class:`PairStats`);
- :mod:`.pair_sums`: the numeric kernels computing those statistics for a block of trials
  at once, exactly: the matrix products of judge weights and per-judge features
  (:func:`exact_products`) and the sums over every pair of candidates (:class:`PairSums`,
  :class:`Pulls`). The analyses hand the shortcuts blocks of trials, so memory does not
  grow with the number of trials.
"""

from .pair_sums import (BLOCK, COUNTS_LIMIT, PairSums, Pulls, exact_products, integer_valued,
                        pair_blocks, pair_tensor_fits, real_products)
from .shortcuts import (CandidateDraws, JudgeDraws, PairStats, ResampleBase, Shortcuts, kept,
                        pair_stats, reduced_counts)

__all__ = [
    "Shortcuts",
    "ResampleBase",
    "JudgeDraws",
    "CandidateDraws",
    "PairStats",
    "PairSums",
    "Pulls",
    "BLOCK",
    "COUNTS_LIMIT",
    "integer_valued",
    "exact_products",
    "real_products",
    "pair_tensor_fits",
    "pair_blocks",
    "kept",
    "pair_stats",
    "reduced_counts",
]
