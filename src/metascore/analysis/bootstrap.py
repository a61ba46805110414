"""Bootstrap draws and the scores of every compared method on every resampled matrix.

- :func:`draw`: the resample of each trial (judges, candidates or both). Trial ``t`` draws
  from its own generator, spawned from one ``numpy.random.SeedSequence(seed)``, so a trial's
  resample depends only on the seed and ``t``: never on how trials are split among workers.
- :func:`bootstrap_scores`: every method's scores on every trial's resampled matrix, in
  four exactly equal ways, cheapest first:

  1. *fast paths*: the exact shortcuts a method declares (:mod:`.fastpaths`, e.g. scores
     that are weighted sums of per-judge contributions computed once);
  2. *pairwise counts* (every other method that reads only N(a, b), e.g. ``kemeny_young``,
     ``schulze``, ``ranked_pairs``, ``epp``, ``sco``): under judge resampling the counts of a
     resample are a weighted sum of per-judge win indicators, so the counts of a block of
     resamples come from one matrix product; under candidate resampling they are the full
     counts restricted to the drawn candidates. The method then runs on those counts;
  3. value methods on a matrix without missing cells: the method's function on the drawn
     rows and columns of the oriented matrix (what the registry would hand it), without
     building a resampled :class:`~metascore.ScoreMatrix` and a full ranking;
  4. the registry on the resampled score matrix (missing cells, stochastic methods).

  Trials run in chunks, in this process (``jobs=1``) or through joblib (``jobs > 1``, any
  joblib backend: ``loky``, ``threading``, or ``dask``/``ray`` for a cluster); each trial is
  computed the same way wherever it runs, so results do not depend on ``jobs``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError, did_you_mean
from ..pairwise import PairwiseCounts
from ..registry import get_ranking_method, rank
from ..resampling import JudgeDraws, reduced_counts
from ._engine import Setup, generator
from .fastpaths import (
    candidate_fast_per_trial,
    candidate_fast_reason,
    candidate_fast_scores,
    fast_path_reason,
    integer_valued,
    judge_fast_scores_of,
    pair_blocks,
    pair_tensor_fits,
    pairwise_tallies,
    shortcuts,
)

Progress = Callable[[int, int], None] | None

__all__ = [
    "AXES",
    "Draws",
    "draw",
    "usable_trials",
    "skip_note",
    "check_axis",
    "bootstrap_scores",
    "fast_path_reason",
    "candidate_fast_reason",
    "counts_path_reason",
    "pairwise_tallies",
    "pair_blocks",
    "pair_tensor_fits",
    "counts_scores",
    "direct_values_reason",
    "values_scores",
    "single_threaded_blas",
]

#: Resampling axes of every bootstrap criterion.
AXES = ("judges", "candidates", "both")


def check_axis(axis: str, name: str = "axis") -> str:
    """``axis`` if it is one of :data:`AXES`, else a ConfigError naming the valid ones."""
    if axis not in AXES:
        raise ConfigError(
            f"`{name}` must be one of {list(AXES)}; got {axis!r}{did_you_mean(str(axis), AXES)}."
        )
    return axis


# ---------------------------------------------------------------------- draws
@dataclass(frozen=True)
class Draws:
    """The resamples of T trials.

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


def draw(
    seed: int | np.random.Generator | None,
    trials: int,
    axis: str,
    n: int,
    m: int,
    *,
    judges: int | None = None,
) -> Draws:
    """Draw the resamples of ``trials`` trials.

    Trial ``t`` uses ``default_rng(SeedSequence(seed).spawn(trials)[t])``: it draws ``n``
    candidates with replacement (axis ``candidates`` or ``both``), then ``judges`` judges
    with replacement (default ``m``; axis ``judges`` or ``both``), then the seed of the
    stochastic methods. A Generator given as ``seed`` supplies the entropy (recorded as None).
    """
    check_axis(axis)
    rng, seed_used = generator(seed)
    entropy = seed_used if seed_used is not None else int(rng.integers(0, 2**63 - 1))
    size = m if judges is None else int(judges)
    counts = np.zeros((trials, m), dtype=np.int64) if axis != "candidates" else None
    cands = np.zeros((trials, n), dtype=np.intp) if axis != "judges" else None
    seeds = np.zeros(trials, dtype=np.int64)
    for t, child in enumerate(np.random.SeedSequence(entropy).spawn(trials)):
        g = np.random.default_rng(child)
        if cands is not None:
            cands[t] = g.integers(0, n, size=n)
        if counts is not None:
            counts[t] = np.bincount(g.integers(0, m, size=size), minlength=m)
        seeds[t] = g.integers(0, 2**31 - 1)
    return Draws(axis, counts, cands, seeds, seed_used)


def usable_trials(s: Setup, draws: Draws) -> np.ndarray:
    """Whether each trial's resample keeps a usable judge (bool array, T).

    A judge is usable in a trial when it is drawn and scores at least one drawn candidate;
    a trial without one (every drawn judge lacks a score for every drawn candidate, which
    only missing cells kept by ``missing="worst"`` or ``"pairwise"`` allow) has nothing to
    rank. Such a trial is skipped: :func:`bootstrap_scores` leaves its scores NaN for every
    method, each criterion leaves it out and counts it (:func:`skip_note`). The rule reads
    only the draws, so it is the same for every method and whatever ``jobs``.
    """
    present = ~np.isnan(s.matrix.values)
    if present.all() or draws.candidates is None:
        scoring = np.repeat(present.any(axis=0)[None, :], draws.trials, axis=0)
    else:
        trials, n = draws.candidates.shape[0], s.n
        flat = (draws.candidates + n * np.arange(trials)[:, None]).ravel()
        drawn = np.bincount(flat, minlength=trials * n).reshape(trials, n)
        scoring = (drawn @ present.astype(np.int64)) > 0  # T x m
    if draws.counts is not None:
        scoring &= draws.counts > 0
    return scoring.any(axis=1)


def skip_note(skipped: int, total: int, what: str = "resamples") -> str:
    """The note of a result whose ``skipped`` of ``total`` trials kept no usable judge."""
    return (f"{skipped} of {total} {what} kept no usable judge (every drawn judge lacks a "
            "score for every drawn candidate) and were skipped.")


# ---------------------------------------------------------------------- pairwise counts path
def counts_path_reason(s: Setup, name: str, draws: Draws) -> str | None:
    """None when ``name`` can run on pairwise counts built without the registry, else why not.

    The method must read only the pairwise counts (``input="pairwise"``), every judge must
    rank every candidate (no missing cell, or ``missing="worst"``), the per-judge tensor
    must fit in memory, and under judge resampling the judge weights must be integers so
    that the product gives the registry's counts exactly.
    """
    spec = get_ranking_method(name)
    if spec.input != "pairwise":
        return "the method reads scores, not pairwise counts"
    counts_reason = shortcuts(name).counts_reason
    if counts_reason is not None and (reason := counts_reason(s.params[name])) is not None:
        return reason
    if np.isnan(s.filled_ranks).any():
        return f"missing cells under missing={s.missing!r}"
    if not pair_tensor_fits(s.n, s.m):
        return "too many candidates x judges for the pairwise tensor"
    if draws.counts is not None and not integer_valued(np.asarray(s.matrix.weights)):
        return "non-integer judge weights"
    return None


# ---------------------------------------------------------------------- per-trial work
def counts_scores(pc: PairwiseCounts, name: str, params: dict[str, Any], seed: int,
                  start: np.ndarray | None = None) -> np.ndarray:
    """Scores of the pairwise method ``name`` on ``pc``, equal to
    ``rank(pc, name, seed=seed, **params).scores`` (for a method declaring a warm start,
    a ``start`` for its fit gives the same optimum to the fit's tolerance).

    A deterministic method is called directly on the counts (its scores alone when it
    declares a ``scores`` shortcut), skipping what a :class:`~metascore.Ranking` adds
    (positions, ties, details); a stochastic method, which the registry feeds in label
    order, and any non-finite result go through :func:`rank`.
    """
    spec = get_ranking_method(name)
    if not spec.stochastic:
        hooks = shortcuts(name)
        if hooks.scores is not None:
            warm = hooks.warm_start is not None and start is not None
            out = hooks.scores(pc, **params, **({"start": start} if warm else {}))
        else:  # as the registry calls it on votes (no values behind the counts)
            out = spec.call(pc, params=params)
        scores = np.asarray(getattr(out, "scores", out), dtype=float)
        if scores.shape == (pc.n,) and np.isfinite(scores).all():
            return scores
    return rank(pc, name, seed=seed, **params).scores


def single_threaded_blas() -> contextlib.AbstractContextManager:
    """Limit BLAS to one thread (threadpoolctl), or do nothing when threadpoolctl is absent
    (a vendored copy of metascore in a stock image)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - the package depends on it
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")



@dataclass(frozen=True)
class _Work:
    """What a worker needs to score a chunk of trials (picklable, no Ranking objects)."""

    setup: Setup
    registry: tuple[str, ...]  # methods ranked through the registry
    counted: tuple[str, ...]   # methods ranked on pairwise counts
    direct: tuple[str, ...] = ()  # value methods called on the resampled values
    per_trial: tuple[str, ...] = ()  # candidate fast paths that cost a pass per trial


def direct_values_reason(s: Setup, name: str) -> str | None:
    """None when the value method ``name`` can be called directly on the rows and columns
    of the oriented matrix that a resample draws, else why not.

    Without missing cells the registry's missing-data policy leaves a resampled matrix as
    it is, so the method's function on those values gives the registry's scores; a
    stochastic method goes through the registry, which feeds it in label order.
    """
    spec = get_ranking_method(name)
    if spec.input != "values":
        return "the method reads pairwise counts"
    if spec.stochastic:
        return "a stochastic method sees candidates and judges in label order"
    if s.matrix.has_missing:
        return "missing cells: the registry applies the missing-data policy per resample"
    return None


def values_scores(x: np.ndarray, w: np.ndarray, signs: np.ndarray, name: str,
                  params: dict[str, Any]) -> np.ndarray | None:
    """Scores of the value method ``name`` on oriented values ``x`` (candidates x judges)
    with judge weights ``w`` and directions ``signs``, as the registry computes them; None
    when they are not all finite (the registry then says why)."""
    spec = get_ranking_method(name)
    out = spec.call(x, w, params=params, signs=signs)
    scores = np.asarray(getattr(out, "scores", out), dtype=float)
    return scores if scores.shape == (x.shape[0],) and np.isfinite(scores).all() else None


def _score_chunk(work: _Work, counts: np.ndarray | None, cands: np.ndarray | None,
                 seeds: np.ndarray, usable: np.ndarray) -> dict[str, np.ndarray]:
    """Scores (Tc x n) of the registry and counted methods on a chunk of trials.

    BLAS runs single-threaded here: the trials make many small linear-algebra calls, which
    multi-threaded BLAS slows down by an order of magnitude on a busy machine (parallelism
    comes from ``jobs`` instead).
    """
    with single_threaded_blas():
        return _score_trials(work, counts, cands, seeds, usable)


def _score_trials(work: _Work, counts: np.ndarray | None, cands: np.ndarray | None,
                  seeds: np.ndarray, usable: np.ndarray) -> dict[str, np.ndarray]:
    s = work.setup
    trials = len(seeds)
    if counts is not None and not usable.all():  # skipped trials: no division by no judge
        counts = np.where(usable[:, None], counts, 1)
    out = {name: np.full((trials, s.n), np.nan)
           for name in work.registry + work.counted + work.direct}
    if work.per_trial:
        cw = np.asarray(s.matrix.weights, dtype=float)[None, :] * (
            np.ones((trials, s.m)) if counts is None else counts)
        out.update(candidate_fast_scores(s, list(work.per_trial), cands, cw, counts is not None))
    weights = np.asarray(s.matrix.weights, dtype=float)
    wins: dict[int, np.ndarray] = {}
    if work.counted:
        cw = (np.ones((trials, s.m), dtype=np.int64) if counts is None else counts) * weights
        if counts is None:
            full = s.full_counts.wins
            wins = {t: full for t in range(trials)}
        else:
            for lo, hi, block in pair_blocks(s.filled_ranks, cw):
                wins.update({lo + i: block[i] for i in range(hi - lo)})
    oriented, signs = s.matrix.oriented(), s.matrix.signs
    for t in range(trials):
        if not usable[t]:  # no usable judge: skipped, its scores stay NaN
            continue
        cand = None if cands is None else np.asarray(cands[t], dtype=np.intp)
        first = None if cand is None else np.unique(cand, return_index=True)[1]

        def keep(name: str, scores: np.ndarray) -> None:
            if cand is None:
                out[name][t] = scores
            else:  # copies are ranked as clones; the score kept is the first copy's
                out[name][t, cand[first]] = scores[first]

        judges = None if counts is None else np.repeat(np.arange(s.m), counts[t])
        if work.direct:  # the rows and columns ScoreMatrix.subset would take
            rows = np.arange(s.n) if cand is None else cand
            cols = np.arange(s.m) if judges is None else judges
            x = oriented[np.ix_(rows, cols)]
            for name in work.direct:
                scores = values_scores(x, weights[cols], signs[cols], name, s.params[name])
                if scores is None:  # the registry raises the error
                    sub = s.matrix.subset(candidates=cand, judges=judges)
                    scores = rank(sub, name, missing=s.missing, **s.params[name]).scores
                keep(name, scores)
        if work.registry:
            sub = s.matrix.subset(candidates=cand, judges=judges)
            if cand is not None:
                empty = np.isnan(sub.values).all(axis=0)
                if empty.any():  # a judge that scores none of the drawn candidates
                    sub = sub.subset(judges=np.flatnonzero(~empty))
            for name in work.registry:
                keep(name, rank(sub, name, missing=s.missing, seed=int(seeds[t]),
                                **s.params[name]).scores)
        if work.counted:
            _score_counted(work, keep, cand, wins[t],
                           weights if counts is None else counts[t] * weights, int(seeds[t]))
    return out


def _score_counted(work: _Work, keep: Callable[[str, np.ndarray], None],
                   cand: np.ndarray | None, n_ab: np.ndarray, w_t: np.ndarray, seed: int) -> None:
    """A trial's scores of the methods ranked on pairwise counts, handed to ``keep``.

    ``cand``: the drawn candidates (None: all), ``n_ab``: the wins of the trial's judges
    among all candidates, ``w_t``: their weights."""
    s = work.setup
    labels = s.matrix.candidates
    if cand is not None:  # a judge scoring none of the drawn candidates is dropped, as in the registry
        w_t = w_t * ~np.isnan(s.matrix.values[cand]).all(axis=0)
    total = float(w_t.sum())

    def counts(rows: np.ndarray | None) -> PairwiseCounts:
        if rows is None:
            return PairwiseCounts(labels, n_ab, np.full(n_ab.shape, total), total)
        sub = n_ab[np.ix_(rows, rows)]
        names = tuple(labels[i] for i in rows)
        if len(set(names)) < len(names):  # copies: the labels ScoreMatrix.subset gives
            names = s.matrix.subset(candidates=rows, judges=[0]).candidates
        return PairwiseCounts(names, sub, np.full(sub.shape, total), total)

    if cand is not None:  # the distinct drawn candidates, their copies and multiplicities
        distinct, inverse, mult = np.unique(cand, return_inverse=True, return_counts=True)
        once = counts(distinct)
    whole: PairwiseCounts | None = None
    for name in work.counted:
        hooks = shortcuts(name)
        if cand is not None and hooks.clone_beats is not None:  # rank each candidate once
            beats = np.zeros((1, 1)) if distinct.size == 1 else hooks.clone_beats(
                once, s.params[name])
            keep(name, (beats @ mult / (cand.size - 1))[inverse])
            continue
        start = None
        if hooks.warm_start is not None:  # the fit starts from the full data's
            full_start = hooks.warm_start(s.full[name])
            start = full_start if cand is None else full_start[cand]
        if cand is not None and hooks.warm_start is not None and distinct.size > 1:
            # copies share their fitted value: fit each drawn candidate once
            scores = hooks.scores(reduced_counts(once, mult), **s.params[name],
                                  start=full_start[distinct], multiplicity=mult)
            if np.isfinite(scores).all():  # else the registry says what went wrong
                keep(name, scores[inverse])
                continue
        if whole is None:
            whole = counts(cand)
        keep(name, counts_scores(whole, name, s.params[name], seed, start))


def _chunks(trials: int, jobs: int) -> list[tuple[int, int]]:
    pieces = max(1, min(trials, 20 if jobs == 1 else 8 * jobs))
    edges = np.linspace(0, trials, pieces + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def check_jobs(jobs: Any) -> int:
    """``jobs`` as a positive int (-1: every core, as joblib); a ConfigError otherwise."""
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs == 0 or jobs < -1:
        raise ConfigError(f"`jobs` must be a positive integer or -1 (all cores); got {jobs!r}.")
    return int(jobs)


def _run(work: _Work, draws: Draws, usable: np.ndarray, jobs: int, backend: str | None,
         progress: Progress, done: int, total: int) -> Iterator[tuple[int, int, dict]]:
    """Score the chunks in order, here or through joblib, reporting progress as they are
    collected. With joblib the workers start at once: the caller can work meanwhile."""
    def part(a: np.ndarray | None, lo: int, hi: int) -> np.ndarray | None:
        return None if a is None else a[lo:hi]

    chunks = _chunks(draws.trials, jobs)
    tasks = ((work, part(draws.counts, lo, hi), part(draws.candidates, lo, hi),
              draws.seeds[lo:hi], usable[lo:hi]) for lo, hi in chunks)
    if jobs == 1 and backend is None:
        results: Iterator[dict] = (_score_chunk(*task) for task in tasks)  # when collected
    else:
        from joblib import Parallel, delayed, parallel_config

        # parallel_config (not Parallel(backend=...)) also finds the external backends
        # (dask); a generator Parallel dispatches the first chunks before it returns and
        # the rest as workers finish
        with parallel_config(backend=backend or "loky", n_jobs=jobs):
            results = Parallel(return_as="generator")(
                delayed(_score_chunk)(*task) for task in tasks)
    return _collect(chunks, results, progress, done, total)


def _collect(chunks: list[tuple[int, int]], results: Iterator[dict], progress: Progress,
             done: int, total: int) -> Iterator[tuple[int, int, dict]]:
    for (lo, hi), res in zip(chunks, results):
        if progress is not None:
            progress(done + hi, total)
        yield lo, hi, res


def bootstrap_scores(
    s: Setup,
    draws: Draws,
    *,
    progress: Progress = None,
    done: int = 0,
    total: int | None = None,
    fast: bool = True,
    tallies: tuple[np.ndarray, np.ndarray] | None = None,
    jobs: int = 1,
    backend: str | None = None,
) -> dict[str, np.ndarray]:
    """Scores of every method on every trial's resampled matrix.

    Parameters
    ----------
    s : Setup
    draws : Draws
        Copies of a drawn candidate are ranked as clones; the score kept is its first copy's.
    progress : callable(done, total), optional
        Called after each chunk of trials (``done`` offsets the count, ``total`` defaults
        to the number of trials).
    fast : bool
        Use the fast paths, the pairwise-count path and the direct value path where they
        apply (False: the registry for every method, the reference they are tested
        against).
    tallies : (won, tied), optional
        :func:`pairwise_tallies` of the draws' judge weights, if the caller has them.
    jobs, backend
        Number of joblib workers and joblib backend (None: joblib's default, ``loky``).

    Returns
    -------
    dict
        ``{method: array (T, n)}``, NaN for a candidate absent from a trial, and a whole
        row of NaN for a trial without a usable judge (:func:`usable_trials`), whatever
        the path.
    """
    jobs = check_jobs(jobs)
    trials = draws.trials
    total = trials if total is None else total
    out: dict[str, np.ndarray] = {}
    registry, counted, direct, by_judges, by_candidates, per_trial = [], [], [], [], [], []
    fast = fast and s.matrix.groups is None  # judges in groups: every resample in two steps
    for name in s.methods:
        if fast and draws.candidates is None and fast_path_reason(s, name) is None:
            by_judges.append(name)
        elif (fast and draws.candidates is not None
              and candidate_fast_reason(s, name, draws.counts is not None) is None):
            (per_trial if candidate_fast_per_trial(name) else by_candidates).append(name)
        elif fast and counts_path_reason(s, name, draws) is None:
            counted.append(name)
        elif fast and direct_values_reason(s, name) is None:
            direct.append(name)
        else:
            registry.append(name)
    usable = usable_trials(s, draws)
    scored: Iterator[tuple[int, int, dict]] | None = None
    if registry or counted or direct or per_trial:  # workers start before the fast paths
        work = _Work(s, tuple(registry), tuple(counted), tuple(direct), tuple(per_trial))
        scored = _run(work, draws, usable, jobs, backend, progress, done, total)
        for name in registry + counted + direct + per_trial:
            out[name] = np.full((trials, s.n), np.nan)
    cw = draws.judge_weights(s.matrix.weights)
    if not usable.all():  # a trial without a judge would divide by zero on the fast paths
        cw = np.where(usable[:, None], cw, 1.0)
        tallies = None
    if by_judges:
        out.update(judge_fast_scores_of(s, by_judges, JudgeDraws(s.filled_ranks, cw, tallies)))
    if by_candidates:
        out.update(candidate_fast_scores(s, by_candidates, draws.candidates, cw,
                                         draws.counts is not None))
    if scored is None and progress is not None:
        progress(done + trials, total)
    for lo, hi, res in scored or ():
        for name, scores in res.items():
            out[name][lo:hi] = scores
    for name in out:
        out[name][~usable] = np.nan
    return {name: out[name] for name in s.methods}
