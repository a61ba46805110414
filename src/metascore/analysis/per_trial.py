"""The methods without a batched fast path, scored one trial at a time (:mod:`.bootstrap`).

Three ways, each equal to ranking the resampled matrix through the registry:

- *pairwise counts* (a method that reads only ``N(a, b)``, e.g. ``kemeny_young``,
  ``schulze``, ``ranked_pairs``, ``epp``, ``sco``): the counts of a trial are the block's
  per-trial wins (one product for the block) or the full data's, restricted to the drawn
  candidates; the method runs on them (a warm start, or each drawn candidate once, when
  its shortcuts allow);
- *direct values* (a deterministic value method on a matrix without missing cells): the
  method on the drawn rows and columns of the prepared matrix, which the missing-data
  policy would leave as they are;
- *the registry* on the resampled score matrix (missing cells, stochastic methods).

The first two call the method through the registry's :func:`~metascore.registry.compute`
(how a method is called lives there only), without what :func:`~metascore.rank` adds.

What one of these costs is a full ranking per trial and method (the analysis report says
so, :func:`per_trial_methods`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..pairwise import PairwiseCounts
from ..inputs import Inputs
from ..method_spec import RankingMethod
from ..registry import compute, rank
from ..resampling import Shortcuts, integer_valued, reduced_counts
from .shared import Setup
from .draws import Draws
from .fastpaths import Block

__all__ = ["counts_path_reason", "direct_values_reason", "counts_scores", "values_scores",
           "per_trial_scores"]


def counts_path_reason(s: Setup, name: str, draws: Draws) -> str | None:
    """None when ``name`` can run on pairwise counts built without the registry, else why not.

    The method must read only the pairwise counts (``input="pairwise"``), every judge must
    rank every candidate (no missing cell, or ``missing="worst"``), and under judge
    resampling the judge weights must be integers so that the products give the
    registry's counts exactly.
    """
    if s.specs[name].input != "pairwise":
        return "the method reads scores, not pairwise counts"
    counts_reason = s.hooks(name).counts_reason
    if counts_reason is not None and (reason := counts_reason(s.params[name])) is not None:
        return reason
    if np.isnan(s.filled_ranks).any():
        return f"missing cells under missing={s.missing!r}"
    if draws.axis != "candidates" and not integer_valued(np.asarray(s.matrix.weights)):
        return "non-integer judge weights"
    return None


def direct_values_reason(s: Setup, name: str) -> str | None:
    """None when the value method ``name`` can be called directly on the rows and columns
    of the oriented matrix that a resample draws, else why not.

    Without missing cells the registry's missing-data policy leaves a resampled matrix as
    it is, so the method's function on those values gives the registry's scores; a
    stochastic method goes through the registry, which feeds it in label order.
    """
    spec = s.specs[name]
    if spec.input != "values":
        return "the method reads pairwise counts"
    if spec.stochastic:
        return "a stochastic method sees candidates and judges in label order"
    if s.matrix.has_missing:
        return "missing cells: the registry applies the missing-data policy per resample"
    return None


def counts_scores(pc: PairwiseCounts, spec: RankingMethod, params: dict[str, Any], seed: int,
                  start: np.ndarray | None = None) -> np.ndarray:
    """Scores of the pairwise method ``spec`` on ``pc``, equal to
    ``rank(pc, spec, seed=seed, **params).scores`` (for a method declaring a warm start,
    a ``start`` for its fit gives the same optimum to the fit's tolerance).

    A deterministic method is computed on the counts (its scores alone when it declares a
    ``scores`` shortcut), skipping what a :class:`~metascore.Ranking` adds (positions,
    ties, details); a stochastic method, which the registry feeds in label order, and any
    non-finite result go through :func:`rank`.
    """
    if not spec.stochastic:
        hooks = spec.resampling or Shortcuts()
        if hooks.scores is not None:
            warm = hooks.warm_start is not None and start is not None
            out = hooks.scores(pc, **params, **({"start": start} if warm else {}))
        else:  # as the registry computes it on votes (no values behind the counts)
            out = compute(spec, Inputs(pc.candidates, (), None, pc), params, seed)
        scores = np.asarray(getattr(out, "scores", out), dtype=float)
        if scores.shape == (pc.n,) and np.isfinite(scores).all():
            return scores
    return rank(pc, spec, seed=seed, **params).scores


def values_scores(inputs: Inputs, spec: RankingMethod, params: dict[str, Any]) -> np.ndarray | None:
    """Scores of the value method ``spec`` on ``inputs`` (the drawn rows and columns of a
    prepared matrix, :meth:`~metascore.inputs.Inputs.take`), as the registry computes
    them; None when they are not all finite (the registry then says why)."""
    out = compute(spec, inputs, params, None)
    scores = np.asarray(out.scores, dtype=float)
    return scores if scores.shape == (len(inputs.candidates),) and np.isfinite(scores).all() else None


def per_trial_scores(block: Block, routes: dict[str, str]) -> dict[str, np.ndarray]:
    """Scores (T x n, NaN for a candidate not drawn) of the methods routed ``counted``,
    ``direct`` or ``registry`` on the block's trials, one trial at a time."""
    s, draws = block.s, block.draws
    names = {kind: [m for m in s.methods if routes[m] == kind]
             for kind in ("counted", "direct", "registry")}
    out = {m: np.full((block.trials, s.n), np.nan) for kind in names.values() for m in kind}
    if not out:
        return out
    weights = block.weights
    counts = None if block.cw is None else np.rint(block.cw / weights).astype(np.int64)
    for t in np.flatnonzero(block.usable):  # a trial without a usable judge stays NaN
        cand = None if draws.candidates is None else np.asarray(draws.candidates[t], np.intp)
        first = None if cand is None else np.unique(cand, return_index=True)[1]

        def keep(name: str, scores: np.ndarray) -> None:
            if cand is None:
                out[name][t] = scores
            else:  # copies are ranked as clones; the score kept is the first copy's
                out[name][t, cand[first]] = scores[first]

        judges = None if counts is None else np.repeat(np.arange(s.m), counts[t])
        if names["direct"]:  # the rows and columns ScoreMatrix.subset would take
            drawn = s.inputs.take(np.arange(s.n) if cand is None else cand,
                                  np.arange(s.m) if judges is None else judges)
            for name in names["direct"]:
                scores = values_scores(drawn, s.specs[name], s.params[name])
                if scores is None:  # the registry raises the error
                    sub = s.matrix.subset(candidates=cand, judges=judges)
                    scores = rank(sub, s.specs[name], missing=s.missing, **s.params[name]).scores
                keep(name, scores)
        if names["registry"]:
            sub = s.matrix.subset(candidates=cand, judges=judges)
            if cand is not None:
                empty = np.isnan(sub.values).all(axis=0)
                if empty.any():  # a judge that scores none of the drawn candidates
                    sub = sub.subset(judges=np.flatnonzero(~empty))
            for name in names["registry"]:
                keep(name, rank(sub, s.specs[name], missing=s.missing, seed=int(draws.seeds[t]),
                                **s.params[name]).scores)
        if names["counted"]:
            n_ab = block.wins[t if block.cw is not None else 0]
            w_t = weights if counts is None else counts[t] * weights
            _score_counted(s, names["counted"], keep, cand, n_ab, w_t, int(draws.seeds[t]))
    return out


def _score_counted(s: Setup, methods: list[str], keep: Callable[[str, np.ndarray], None],
                   cand: np.ndarray | None, n_ab: np.ndarray, w_t: np.ndarray, seed: int) -> None:
    """A trial's scores of the methods ranked on pairwise counts, handed to ``keep``.

    ``cand``: the drawn candidates (None: all), ``n_ab``: the wins of the trial's judges
    among all candidates, ``w_t``: their weights."""
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
    for name in methods:
        hooks = s.hooks(name)
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
        keep(name, counts_scores(whole, s.specs[name], s.params[name], seed, start))
