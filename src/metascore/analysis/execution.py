"""How an analysis runs: one frozen record, :class:`Execution`, that every public analysis
takes as ``run=``.

What is the same for every analysis lives here once: the seed of the draws, the
missing-data policy and the method parameters a matrix is prepared with, where progress
and notes go, how many workers run the trials and on which joblib backend, and whether the
exact shortcuts are used. What differs between analyses (the number of trials, the axis,
the level) stays a keyword of each function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..registry import DEFAULT_SEED

__all__ = ["Execution", "Progress", "StageProgress"]

#: ``progress(done, total)``: one part's trials (what the trials report, internally).
Progress = Callable[[int, int], None] | None
#: ``progress(stage, done, total)``: the trials of each named part of an analysis.
StageProgress = Callable[[str, int, int], None] | None


@dataclass(frozen=True)
class Execution:
    """How an analysis runs (``run=`` of every analysis function).

    Attributes
    ----------
    seed : int, numpy.random.Generator or None
        The draws: trial t draws its resample from the t-th child of
        ``SeedSequence(seed)`` (a Generator supplies the entropy and is recorded as None).
        The full-data rankings of a prepared input use it when it is an integer,
        :data:`~metascore.DEFAULT_SEED` otherwise.
    missing : str or None
        The missing-data policy a matrix is prepared with (None: ``"worst"``). An analysis
        of a prepared :class:`~.shared.Setup` keeps the setup's policy: a different one
        here is refused.
    params : mapping or None
        Method parameters, ``{method: {name: value}}`` (with one method, ``{name: value}``
        too); each method's declared constraints are checked before anything runs. With
        a prepared setup, the parameters of the methods named here (None: the setup's).
    progress : callable or None
        ``progress(stage, done, total)`` after each block of trials of each named part
        (``"rank intervals mean"``, ``"judge stability"``, ...).
    notify : callable or None
        ``notify(text)``: what each method ranking resamples one at a time will cost,
        and which methods are left out, said before any trial runs (:func:`~.analyze.analyze`).
    jobs : int
        Joblib workers for the trials (-1: every core); results are identical to one job.
    backend : str or None
        The joblib backend (None: ``loky``; ``threading``, ``dask``, ``ray``, ...).
    leave_out_costly : bool
        :func:`~.analyze.analyze` leaves out a method ranking resamples one at a time whose
        work exceeds that of the other methods together (:func:`~.costs.costlier_than_the_rest`).
    fast : bool
        Score resamples by the exact shortcuts and the per-trial routes
        (:mod:`.bootstrap`); False ranks every resample through the registry, the
        reference they are tested against.
    """

    seed: int | np.random.Generator | None = DEFAULT_SEED
    missing: str | None = None
    params: Mapping[str, Any] | None = None
    progress: StageProgress = None
    notify: Callable[[str], None] | None = None
    jobs: int = 1
    backend: str | None = None
    leave_out_costly: bool = False
    fast: bool = True

    @property
    def policy(self) -> str:
        """The missing-data policy a matrix is prepared with."""
        return "worst" if self.missing is None else self.missing

    def stage(self, name: str) -> Progress:
        """The progress of the part ``name`` (``progress(done, total)``), or None."""
        progress = self.progress
        return None if progress is None else (lambda done, total: progress(name, done, total))
