"""The ranking-method registry: the one core abstraction of metascore.

The methods declare themselves with :func:`ranking_method` (:mod:`metascore.method_spec`:
what a method is, how it is called, its resampling shortcuts); importing this module loads
the shipped ones (:mod:`metascore.methods`). :func:`rank` does the shared work in
steps: :func:`prepare_inputs` validates the data once for any method (its kind, the
missing-data policy) into :class:`~metascore.inputs.Inputs`, :func:`rank_inputs` ranks them with a method (its
own check of the data, then :func:`compute`, which orients, reorders and calls the method
with what it takes, and :func:`finish`, which checks its scores and builds the
:class:`~metascore.Ranking`: ties, positions with tie-breaks, provenance). The Ranking
keeps the Inputs it was computed from, so the analyses of a ranking start from them
(:mod:`metascore.analysis`) and rank other methods with :func:`rank_inputs`; every call
of a method, a resample's too, goes through :func:`compute`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from . import methods as _methods  # noqa: F401  (importing registers every shipped method)
from ._version import __version__
from .errors import ConfigError, InputError, did_you_mean
from .grouped import rank_in_groups
from .matrix import ScoreMatrix
from .sequences import IndexLabels
from .method_spec import (
    Display,
    MethodOutput,
    Properties,
    RankingMethod,
    ranking_method,
    registered_methods,
)
from .inputs import Inputs
from .missing import Prepared, prepare
from .pairwise import DENSE_BYTES_LIMIT, PairwiseCounts, dense_bytes
from .ranking import DEFAULT_TIE_BREAK, TIE_BREAK_KEYS, Ranking, tie_places

__all__ = [
    "DEFAULT_METHOD",
    "DEFAULT_SEED",
    "get_ranking_method",
    "ranking_method_names",
    "check_params",
    "generator",
    "rank",
    "prepare_inputs",
    "rank_inputs",
    "compute",
    "check_dense_size",
    "finish",
]

#: Seed used when none is given; recorded in every output.
DEFAULT_SEED = 12345
#: Method used when none is given (the library, the CLI and the configuration).
DEFAULT_METHOD = "average_rank"

_REGISTRY = registered_methods()


def ranking_method_names() -> list[str]:
    """Names of all registered ranking methods, sorted."""
    return sorted(_REGISTRY)


def get_ranking_method(name: str) -> RankingMethod:
    """The registered method ``name``; an unknown name lists the valid ones."""
    if isinstance(name, RankingMethod):
        return name
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ConfigError(
            f"unknown ranking method {name!r}{did_you_mean(name, _REGISTRY)}; "
            f"valid methods are {sorted(_REGISTRY)}."
        ) from None


# ---------------------------------------------------------------------- parameters
def _seed_value(seed: int | np.random.Generator | None) -> int | None:
    """The seed to record (None for a Generator), after checking it."""
    if isinstance(seed, np.random.Generator):
        return None
    if seed is None:
        return DEFAULT_SEED
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"`seed` must be a non-negative integer or a Generator; got {seed!r}.")
    return int(seed)


def generator(seed: int | np.random.Generator | None) -> tuple[np.random.Generator, int | None]:
    """The random generator of ``seed`` and the seed to record (None for a Generator;
    ``DEFAULT_SEED`` when ``seed`` is None)."""
    value = _seed_value(seed)
    if isinstance(seed, np.random.Generator):
        return seed, None
    return np.random.default_rng(value), value


def check_params(method: str | RankingMethod, params: dict[str, Any]) -> dict[str, Any]:
    """Check parameter names and values against the method's declared constraints;
    return the parameters with the defaults filled in. Raises :class:`ConfigError`."""
    spec = get_ranking_method(method)
    defaults = spec.defaults
    for name, value in params.items():
        if name not in defaults:
            raise ConfigError(
                f"method {spec.name!r} has no parameter {name!r}{did_you_mean(name, defaults)}; "
                f"its parameters are {sorted(defaults) or 'none'}."
            )
        problem = spec.constraints[name].problem(value)
        if problem is not None:
            raise ConfigError(f"method {spec.name!r}: `{name}` {problem}.")
    return {**defaults, **params}


def _label_order(labels: Sequence[str]) -> np.ndarray:
    return np.array(sorted(range(len(labels)), key=labels.__getitem__), dtype=np.intp)


def _restore_order(
    out: Any, c_order: np.ndarray | None, j_order: np.ndarray | None
) -> MethodOutput:
    """Map a method's output computed on reordered candidates/judges back to input order.

    ``c_order`` and ``j_order`` are None when the candidates or judges were not reordered.
    """
    if not isinstance(out, MethodOutput):
        out = MethodOutput(np.asarray(out, dtype=float))
    if c_order is None:
        return out
    n = len(c_order)
    if np.array_equal(c_order, np.arange(n)) and (
        j_order is None or np.array_equal(j_order, np.arange(len(j_order)))
    ):
        return out
    inv = np.empty(n, dtype=np.intp)
    inv[c_order] = np.arange(n)
    details: dict[str, Any] = {}
    for key, value in out.details.items():
        if key.endswith("_judge_index") and j_order is not None:
            value = int(j_order[int(value)])
        elif isinstance(value, np.ndarray) and value.ndim == 2 and value.shape == (n, n):
            value = value[np.ix_(inv, inv)]
        elif key in out.per_candidate:
            value = np.asarray(value)[inv]
        details[key] = value
    return MethodOutput(np.asarray(out.scores, dtype=float)[inv], details, out.notes, out.per_candidate)


# ---------------------------------------------------------------------- rank
def prepare_inputs(
    data: ScoreMatrix | PairwiseCounts | pd.DataFrame | np.ndarray, missing: str
) -> Inputs:
    """Validate ``data`` once, for any method: its kind and the missing-data policy
    ``missing`` (a score matrix; pairwise counts are taken as they are)."""
    if not isinstance(data, ScoreMatrix):  # the common case first
        if isinstance(data, PairwiseCounts):
            return Inputs(data.candidates, (), None, data)
        if isinstance(data, pd.DataFrame):
            data = ScoreMatrix.from_frame(data)
        elif isinstance(data, np.ndarray):  # candidates x judges, higher is better, 0, 1, ...
            data = ScoreMatrix.from_array(data)
    if isinstance(data, ScoreMatrix):
        prepared = prepare(data, missing)
        return Inputs(prepared.matrix.candidates, prepared.matrix.judges, prepared, None)
    raise InputError(
        f"cannot rank a {type(data).__name__}; give a ScoreMatrix, PairwiseCounts, a "
        "pandas DataFrame or a 2-D numpy array (candidates x judges)."
    )


def _checked(spec: RankingMethod, inputs: Inputs, params: dict[str, Any]) -> tuple[str, ...]:
    """Refuse what ``spec`` cannot rank in ``inputs`` (votes for a method reading scores,
    what the method's own check refuses, fewer than 2 candidates); the notes of the
    preparation for this method."""
    prepared = inputs.prepared
    notes: tuple[str, ...] = ()
    if prepared is None:
        if spec.input != "pairwise":
            raise InputError(
                f"method {spec.name!r} needs a score matrix; votes and pairwise counts only "
                "feed pairwise methods "
                f"({[n for n in ranking_method_names() if _REGISTRY[n].input == 'pairwise']})."
            )
    else:
        if spec.check is not None:
            spec.check(prepared.matrix, params)
        notes = _missing_notes(spec, prepared)
    candidates = inputs.candidates
    if len(candidates) < 2:
        only = f" ({candidates[0]!r})" if candidates else ""
        raise InputError(
            f"ranking needs at least 2 candidates; got {len(candidates)}{only}."
        )
    return notes


def _missing_notes(spec: RankingMethod, prepared: Prepared) -> tuple[str, ...]:
    if not prepared.uncounted and prepared.missing != "pairwise":
        return ()
    notes = [f"judge {j!r} has weight 0: shown, not counted." for j in prepared.uncounted]
    candidates, missing = prepared.matrix.candidates, prepared.missing
    if missing == "pairwise" and spec.input == "values" and prepared.matrix.has_missing:
        notes.append(
            "missing='pairwise': each candidate's score averages over the judges where it "
            "has a score."
        )
    if missing == "pairwise" and prepared.unscored.any():
        for c in np.flatnonzero(prepared.unscored):
            notes.append(
                f"missing='pairwise': candidate {candidates[c]!r} has no score on any judge; "
                "it is ranked as missing='worst' would (the worst value on every judge)."
            )
    return tuple(notes)


def compute(
    spec: RankingMethod,
    inputs: Inputs,
    params: dict[str, Any],
    seed: int | np.random.Generator | None,
) -> MethodOutput:
    """Call the method on ``inputs`` with ``params`` and what it takes, and map its output
    back to the input order: the one place a method is called (a resample's rankings
    too, :mod:`metascore.analysis.per_trial`).

    A stochastic method sees the candidates and judges in label order, so that what it
    draws does not depend on the input order; it receives the generator of ``seed``.
    """
    kwargs = dict(params)
    c_order = j_order = None  # None: the input order
    if spec.stochastic:
        c_order = _label_order(inputs.candidates)
        kwargs["rng"], _ = generator(seed)
    prepared = inputs.prepared
    if prepared is not None and spec.needs_dense:
        check_dense_size(spec, len(inputs.candidates))
    if prepared is None:  # votes
        counts = inputs.counts
        if counts.is_sparse and not spec.sparse:
            counts = PairwiseCounts(counts.candidates, *counts.dense(), counts.total_weight)
        if c_order is not None:
            counts = counts.subset(c_order)
        out = spec.call(counts, params=kwargs)
    elif spec.input == "pairwise":
        weights = np.asarray(prepared.matrix.weights)
        x = prepared.filled(values_based=False)
        labels: Sequence[str] = inputs.candidates
        if c_order is not None:
            x, labels = x[c_order], [inputs.candidates[i] for i in c_order]
        if spec.values is not None:
            out = spec.values(x, weights, **kwargs)
        else:
            counts = PairwiseCounts.from_matrix(x, weights, labels)
            out = spec.call(counts, params=kwargs, values=(x, weights))
    else:
        matrix = prepared.matrix
        weights, signs = np.asarray(matrix.weights), matrix.signs
        judges: Sequence[str] = inputs.judges
        x = prepared.filled(values_based=not spec.order_only)
        if c_order is not None:
            j_order = _label_order(inputs.judges)
            x, weights, signs = x[np.ix_(c_order, j_order)], weights[j_order], signs[j_order]
            judges = [inputs.judges[j] for j in j_order]
        sums = None  # the row sums validation computed, when x is what it validated, whole
        if ("sums" in spec.takes and x is matrix.values and matrix.row_sums_known
                and not matrix.has_missing):
            sums = matrix.row_sums
        out = spec.call(x, weights, params=kwargs, signs=signs, sums=sums, judges=judges)
    return _restore_order(out, c_order, j_order)


def check_dense_size(spec: RankingMethod, n: int) -> None:
    """Refuse, before any is made, the n x n arrays of ``n`` candidates that method ``spec``
    needs (:attr:`~metascore.method_spec.RankingMethod.needs_dense`) when they would take
    more than :data:`~metascore.pairwise.DENSE_BYTES_LIMIT`."""
    need = dense_bytes(n)
    if need > DENSE_BYTES_LIMIT:
        others = [name for name in ranking_method_names() if not _REGISTRY[name].needs_dense]
        raise InputError(
            f"method {spec.name!r} compares every pair of the {n:,} candidates in {n:,} x {n:,} "
            f"matrices: about {need / 1e9:,.1f} GB, over the {DENSE_BYTES_LIMIT / 1e9:.1f} GB "
            f"metascore allows; rank them with a method that reads the scores directly "
            f"({', '.join(others)}).")


def finish(
    spec: RankingMethod,
    inputs: Inputs,
    out: MethodOutput,
    *,
    params: dict[str, Any],
    seed: int | None,
    tie_break: tuple[str, ...],
    notes: tuple[str, ...] = (),
) -> Ranking:
    """Check the method's scores and details, then build the :class:`~metascore.Ranking`
    of ``inputs`` (which it keeps): ties, fractional ranks, positions with ``tie_break``
    and provenance; ``notes`` are the preparation's."""
    candidates, prepared = inputs.candidates, inputs.prepared
    scores = _checked_scores(spec, candidates, out.scores)
    details = _checked_details(spec, inputs, out)
    meta = prepared.matrix if prepared is not None else None
    # the tie-break's keys known: the places are computed when first read, else refused now
    known = all(k in TIE_BREAK_KEYS for k in tie_break)
    found = {} if known else dict(zip(("positions", "order", "ranks"),
                                      tie_places(scores, tie_break, candidates, meta)))
    return Ranking.of(
        method=spec.name,
        params=params,
        candidates=candidates if isinstance(candidates, IndexLabels) else tuple(candidates),
        scores=scores,
        **found,
        judges=inputs.judges,
        uncounted_judges=prepared.uncounted if prepared else (),
        seed=seed,
        missing=inputs.missing,
        tie_break=tie_break,
        excluded_candidates=prepared.excluded_candidates if prepared else {},
        excluded_judges=prepared.excluded_judges if prepared else {},
        notes=notes + tuple(out.notes),
        details=details,
        per_candidate=tuple(out.per_candidate),
        version=__version__,
        matrix=meta,
        inputs=inputs,
    )


def _checked_scores(spec: RankingMethod, candidates: Sequence[str], scores: Any) -> np.ndarray:
    """The method's scores as floats: one finite score per candidate."""
    scores = np.asarray(scores, dtype=float)
    if scores.shape != (len(candidates),):
        raise RuntimeError(
            f"method {spec.name!r} returned {scores.shape} scores for {len(candidates)} candidates."
        )
    if not np.isfinite(scores).all():
        bad = candidates[int(np.flatnonzero(~np.isfinite(scores))[0])]
        raise RuntimeError(f"method {spec.name!r} produced a non-finite score for {bad!r}.")
    return scores


def _checked_details(spec: RankingMethod, inputs: Inputs, out: MethodOutput) -> dict[str, Any]:
    """The method's details: its per-candidate ones checked, one value per candidate, and
    each judge it names by index (``<what>_judge_index``) named by label too."""
    details = dict(out.details)
    if not details:
        return details
    n = len(inputs.candidates)
    for key in out.per_candidate:
        if np.shape(details[key]) != (n,):
            raise RuntimeError(
                f"method {spec.name!r}: per-candidate detail {key!r} has shape "
                f"{np.shape(details[key])}, not one value per candidate."
            )
    judges = inputs.judges
    for key in [k for k in details if k.endswith("_judge_index")]:
        details[key[: -len("_index")]] = judges[int(details[key])] if judges else None
    return details


def _rank(spec: RankingMethod, inputs: Inputs, params: dict[str, Any],
          seed: int | np.random.Generator | None, tie_break: tuple[str, ...]) -> Ranking:
    """Rank ``inputs`` with ``spec`` and its checked ``params``."""
    seed_used = _seed_value(seed)  # a generator is made only for a stochastic method
    notes = _checked(spec, inputs, params)
    out = compute(spec, inputs, params, seed)
    return finish(spec, inputs, out, params=params, seed=seed_used, tie_break=tie_break,
                  notes=notes)


def rank_inputs(
    inputs: Inputs,
    method: str = DEFAULT_METHOD,
    *,
    seed: int | np.random.Generator | None = None,
    tie_break: Sequence[str] = DEFAULT_TIE_BREAK,
    **params: Any,
) -> Ranking:
    """:func:`rank` of inputs already validated (:func:`prepare_inputs`, or those a
    :class:`~metascore.Ranking` keeps): ``method`` ranks the same data as another method
    did, nothing prepared again."""
    spec = get_ranking_method(method)
    return _rank(spec, inputs, check_params(spec, params), seed, tuple(tie_break))


def rank(
    data: ScoreMatrix | PairwiseCounts | pd.DataFrame | np.ndarray,
    method: str = DEFAULT_METHOD,
    *,
    missing: str = "worst",
    seed: int | np.random.Generator | None = None,
    tie_break: Sequence[str] = DEFAULT_TIE_BREAK,
    **params: Any,
) -> Ranking:
    """Rank the candidates of ``data`` with the registered ``method``.

    Parameters
    ----------
    data : ScoreMatrix, PairwiseCounts, DataFrame or ndarray
        A score matrix (a DataFrame is read as a wide, higher-is-better matrix; a 2-D numpy
        array as candidates x judges, higher is better, labelled ``"0", "1", ...`` like
        :meth:`ScoreMatrix.from_array`), or pairwise counts from votes (pairwise methods
        only). A matrix whose judges are in groups (:meth:`ScoreMatrix.grouped`) is ranked
        in two steps (:mod:`metascore.grouped`): its rule inside each group, then ``method``
        across the groups.
    method : str
        A name from :func:`ranking_method_names`.
    missing : {"worst", "drop_candidates", "drop_judges", "pairwise", "error"}
        Missing-data policy (:data:`MISSING_POLICIES`; see ``docs/inputs.md``).
    seed : int or numpy.random.Generator, optional
        Randomness of stochastic methods; defaults to ``DEFAULT_SEED`` and is recorded.
    tie_break : sequence of str
        Order inside groups of equal scores (positions stay shared).
    **params
        Method parameters; unknown names are refused.

    Examples
    --------
    >>> import metascore as ms
    >>> m = ms.ScoreMatrix.from_array([[1, 1, 0], [.8, .8, 1], [.6, .6, .6]], ["A", "B", "C"])
    >>> ms.rank(m, "copeland").ranked_candidates()
    ['A', 'B', 'C']
    """
    spec = get_ranking_method(method)
    params = check_params(spec, params)
    if isinstance(data, ScoreMatrix) and data.groups is not None:  # two steps
        inputs = prepare_inputs(data, missing)
        ranking = rank_in_groups(inputs.prepared, spec.name, params, seed=seed,
                                 tie_break=tuple(tie_break), rank_one=rank)
        return dataclasses.replace(ranking, inputs=inputs)
    _seed_value(seed)  # a bad seed is refused before the data is read
    return _rank(spec, prepare_inputs(data, missing), params, seed, tuple(tie_break))
