"""Every compared method's scores on every trial's resampled matrix, a block at a time.

The trials of a criterion (:mod:`.draws`) are split into blocks small enough that memory
does not grow with the number of trials (a block's judge counts and pair sums); each
block is drawn, scored and handed to the criterion's own per-trial statistics in one
task (:func:`run_trials`), here (``jobs=1``) or in a joblib worker (``jobs > 1``, any
joblib backend: ``loky``, ``threading``, or ``dask``/``ray`` for a cluster). Each trial is
computed the same way wherever it runs, so results depend neither on the blocks nor on
``jobs``. Each method takes the cheapest of four exactly equal routes:

1. *fast paths*: the exact shortcuts a method declares, batched over the block
   (:mod:`.fastpaths`: weighted sums of per-judge contributions, one matrix product per
   block; pairwise statistics of the drawn candidates);
2. *pairwise counts*, 3. *direct values*, 4. *the registry*: one trial at a time
   (:mod:`.per_trial`).

Criteria that draw the same resamples (same seed, axis and size) share the scores: a
setup keeps the scores it computed, by what the draws depend on.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError
from .execution import Execution, Progress
from .shared import Setup
from .draws import Draws, DrawPlan, usable
from .fastpaths import (
    Block,
    candidate_fast_reason,
    candidate_fast_scores,
    fast_path_reason,
    judge_fast_scores,
)
from .per_trial import (
    counts_path_reason,
    direct_values_reason,
    per_trial_scores,
)

#: ``then(block, scores, fast) -> {name: per-trial array}``: a criterion's statistics of a
#: block of trials, computed in the block's task (module-level: it goes to workers).
Then = Callable[[Block, dict[str, np.ndarray], bool], dict[str, np.ndarray]] | None

__all__ = [
    "usable_trials",
    "check_jobs",
    "routes",
    "Trials",
    "run_trials",
    "bootstrap_scores",
    "single_threaded_blas",
]

#: Judge weights per block (trials x judges): the memory of a block's draws (two copies of
#: 4 bytes each: the counts and the weights). Large enough that a product of a block with
#: the per-judge features runs near the processor's speed (76 trials at 471,033 judges:
#: about twice as fast as 34), which reads the features once per block.
BLOCK_CELLS = 36_000_000
#: Pair statistics per block (trials x candidates^2).
BLOCK_PAIRS = 4_000_000
#: Fewest trials per block when every method is batched (see :func:`_edges`).
MIN_BLOCK = 128
#: Routes of a method, cheapest first; :func:`routes` picks one per method.
ROUTES = ("judges", "candidates", "counted", "direct", "registry")


def usable_trials(s: Setup, draws: Draws) -> np.ndarray:
    """Whether each trial keeps a usable judge (:func:`.draws.usable` on ``s``'s cells)."""
    return usable(s.present, draws)


def check_jobs(jobs: Any) -> int:
    """``jobs`` as a positive int (-1: every core, as joblib); a ConfigError otherwise."""
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs == 0 or jobs < -1:
        raise ConfigError(f"`jobs` must be a positive integer or -1 (all cores); got {jobs!r}.")
    return int(jobs)


_CONTROLLER: list[Any] = []  # threadpoolctl's controller, made once (it scans the libraries)


def single_threaded_blas() -> contextlib.AbstractContextManager:
    """Limit BLAS to one thread (threadpoolctl), or do nothing when threadpoolctl is absent
    (a vendored copy of metascore in a stock image)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - the package depends on it
        return contextlib.nullcontext()
    if not _CONTROLLER:
        import scipy.linalg  # noqa: F401  (scipy's BLAS loaded before the controller looks)

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1, user_api="blas")


def routes(s: Setup, axis: str, fast: bool = True) -> dict[str, str]:
    """How each method of ``s`` is scored on resamples along ``axis`` (one of
    :data:`ROUTES`; ``fast=False``: the registry for every method, the reference)."""
    probe = Draws(axis, None if axis == "candidates" else np.zeros((0, s.m)),
                  None if axis == "judges" else np.zeros((0, s.n)), np.zeros(0), None)
    out = {}
    fast = fast and s.matrix.groups is None  # judges in groups: every resample in two steps
    for name in s.methods:
        if not fast:
            out[name] = "registry"
        elif axis == "judges" and fast_path_reason(s, name) is None:
            out[name] = "judges"
        elif axis != "judges" and candidate_fast_reason(s, name, axis == "both") is None:
            out[name] = "candidates"
        elif counts_path_reason(s, name, probe) is None:
            out[name] = "counted"
        elif direct_values_reason(s, name) is None:
            out[name] = "direct"
        else:
            out[name] = "registry"
    return out


@dataclass(frozen=True)
class Trials:
    """What :func:`run_trials` computed: ``scores`` (``{method: T x n}``, NaN for a
    candidate not drawn and for a skipped trial), ``usable`` (T), ``extra`` (the
    criterion's per-trial statistics, ``{key: array with T rows}``)."""

    scores: dict[str, np.ndarray]
    usable: np.ndarray
    extra: dict[str, np.ndarray]


def _run_block(s: Setup, source: Draws | DrawPlan, lo: int, hi: int, way: dict[str, str],
               then: Then, fast: bool) -> tuple[dict, np.ndarray, dict]:
    """Draw, score and describe trials ``lo:hi`` (BLAS single-threaded: see
    :func:`single_threaded_blas`; parallelism comes from ``jobs``)."""
    with single_threaded_blas():
        draws = source.chunk(lo, hi)
        block = Block(s, draws, usable(s.present, draws))
        scores: dict[str, np.ndarray] = {}
        judged = [m for m in s.methods if way[m] == "judges"]
        if judged:
            scores.update(judge_fast_scores(block, judged))
        drawn = [m for m in s.methods if way[m] == "candidates"]
        if drawn:
            scores.update(candidate_fast_scores(block, drawn))
        scores.update(per_trial_scores(block, way))
        for name in scores:
            scores[name][~block.usable] = np.nan
        extra = then(block, scores, fast) if then is not None else {}
        return scores, block.usable, extra


def _edges(s: Setup, trials: int, axis: str, jobs: int, one_at_a_time: bool
           ) -> list[tuple[int, int]]:
    """Blocks of trials: at most ``BLOCK_CELLS`` judge weights and ``BLOCK_PAIRS`` pair
    statistics each. When some method ranks the trials one at a time (slow: the progress
    bar should move) or workers share them, at least 20 blocks (8 per worker); else at
    least ``MIN_BLOCK`` trials per block (a product is only fast on enough rows)."""
    size = BLOCK_PAIRS // max(1, s.n * s.n)
    if axis != "candidates":
        size = min(size, BLOCK_CELLS // max(1, s.m))
    pieces = 20 if jobs == 1 else 8 * max(jobs, 1)
    if one_at_a_time or jobs != 1:
        size = min(size, -(-trials // pieces))
    else:
        size = min(size, max(MIN_BLOCK, -(-trials // pieces)))
    edges = np.arange(0, trials + max(1, size), max(1, size)).clip(max=trials)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def run_trials(
    s: Setup,
    source: Draws | DrawPlan,
    run: Execution | None = None,
    *,
    then: Then = None,
    progress: Progress = None,
    done: int = 0,
    total: int | None = None,
) -> Trials:
    """Score every method of ``s`` on every trial of ``source`` (drawn block by block)
    and compute the criterion's per-trial statistics ``then`` on each block, as ``run``
    says (its ``fast``, ``jobs`` and ``backend``; None: the setup's run).

    ``progress(done, total)`` is called after each block (``done`` offsets the count,
    ``total`` defaults to the number of trials). Scores of a plan are kept in ``s.cache``
    and reused by a later call on the same draws (the same or fewer trials).
    """
    run = s.run if run is None else run
    fast, jobs, backend = run.fast, check_jobs(run.jobs), run.backend
    trials = source.trials
    total = trials if total is None else total
    key = ("scores", source.key(), fast) if isinstance(source, DrawPlan) else None
    kept = s.cache.get(key) if key is not None else None
    if then is None and kept is not None and kept.usable.size >= trials:
        if progress is not None:
            progress(done + trials, total)
        return Trials({m: v[:trials] for m, v in kept.scores.items()}, kept.usable[:trials], {})
    way = routes(s, source.axis, fast)
    slow = any(r not in ("judges", "candidates")
               or (r == "candidates" and s.hooks(m).one_at_a_time(s.params[m]))
               for m, r in way.items())
    edges = _edges(s, trials, source.axis, jobs if backend is None else max(jobs, 2), slow)
    if jobs == 1 and backend is None:
        results = (_run_block(s, source, lo, hi, way, then, fast) for lo, hi in edges)
    else:
        from joblib import Parallel, delayed, parallel_config

        # The first trial here: what the shortcuts compute once from the full data lands in
        # s.cache before s goes to the workers (else each block would compute it again).
        edges = [(0, 1), (1, edges[0][1])] + edges[1:] if edges[0][1] > 1 else edges
        first = _run_block(s, source, *edges[0], way, then, fast)
        tasks = ((s, source, lo, hi, way, then, fast) for lo, hi in edges[1:])
        # parallel_config (not Parallel(backend=...)) also finds the external backends
        # (dask); a generator Parallel dispatches blocks as workers free up
        with parallel_config(backend=backend or "loky", n_jobs=jobs):
            rest = Parallel(return_as="generator")(delayed(_run_block)(*t) for t in tasks)
        results = itertools.chain([first], rest)
    parts = []
    for (lo, hi), part in zip(edges, results):
        parts.append(part)
        if progress is not None:
            progress(done + hi, total)
    scores = {m: np.concatenate([p[0][m] for p in parts]) for m in s.methods}
    out = Trials(scores, np.concatenate([p[1] for p in parts]),
                 {k: np.concatenate([p[2][k] for p in parts]) for k in parts[0][2]})
    if key is not None and (kept is None or kept.usable.size < trials):
        s.cache[key] = Trials(out.scores, out.usable, {})
    return out


def bootstrap_scores(
    s: Setup,
    draws: Draws | DrawPlan,
    run: Execution | None = None,
    *,
    progress: Progress = None,
    done: int = 0,
    total: int | None = None,
) -> dict[str, np.ndarray]:
    """Scores of every method on every trial's resampled matrix.

    Parameters
    ----------
    s : Setup
    draws : Draws or DrawPlan
        Copies of a drawn candidate are ranked as clones; the score kept is its first copy's.
    run : Execution, optional
        ``fast`` (False: the registry for every method, the reference the fast paths, the
        pairwise-count path and the direct value path are tested against), ``jobs`` and
        ``backend`` (joblib workers and backend); None: the setup's run.
    progress : callable(done, total), optional
        Called after each block of trials (``done`` offsets the count, ``total`` defaults
        to the number of trials).

    Returns
    -------
    dict
        ``{method: array (T, n)}``, NaN for a candidate absent from a trial, and a whole
        row of NaN for a trial without a usable judge (:func:`usable_trials`), whatever
        the path.
    """
    return run_trials(s, draws, run, progress=progress, done=done, total=total).scores
