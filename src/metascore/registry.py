"""The ranking-method registry: the one core abstraction of metascore.

A ranking method is a pure function registered by name with :func:`ranking_method`. It
receives either a clean, oriented float array (candidates x judges, higher is better) and
the judges' weights, or, for methods that declare ``input="pairwise"``, the pairwise counts
``N(a, b)`` (so votes feed them too). It returns one score per candidate, higher is better,
optionally wrapped in :class:`MethodOutput` with details and notes.

:func:`rank` does the shared work once: validation, orientation, the missing-data policy,
the random generator, ranks, positions with tie-breaks and provenance.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pandas as pd

from .constraints import Constraint
from .errors import ConfigError, InputError, did_you_mean
from .matrix import IndexLabels, ScoreMatrix
from .missing import MISSING_POLICIES, Prepared, prepare
from .pairwise import PairwiseCounts
from .ranking import Ranking, fractional_rank_of_scores, positions_and_order, tie_groups
from .resampling import Shortcuts

__all__ = [
    "DEFAULT_SEED",
    "MISSING_POLICIES",
    "MethodOutput",
    "Display",
    "RankingMethod",
    "ranking_method",
    "get_ranking_method",
    "ranking_method_names",
    "check_params",
    "generator",
    "rank",
    "prepare",
    "Prepared",
]

#: Seed used when none is given; recorded in every output.
DEFAULT_SEED = 12345

_REGISTRY: dict[str, RankingMethod] = {}


@dataclass(frozen=True)
class MethodOutput:
    """What a method may return instead of a bare score array.

    ``per_candidate`` names the keys of ``details`` that hold one value per candidate (in
    the candidates' order): only those become leaderboard columns and follow the candidates
    when they are reordered. Any other detail (an order of labels, component sizes, a
    matrix) is a global value, even when its length happens to equal the number of
    candidates.
    """

    scores: np.ndarray
    details: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    per_candidate: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = [k for k in self.per_candidate if k not in self.details]
        if unknown:
            raise ValueError(f"per_candidate names {unknown[0]!r}, which is not in details.")


@dataclass(frozen=True)
class Display:
    """How people read a method's score: ``label`` and ``sign`` (the shown quantity is
    ``sign * score``). The score stays higher-is-better everywhere internally; a method
    whose natural quantity is lower-is-better (an average rank) declares ``sign=-1``.
    """

    label: str = "score"
    sign: float = 1.0

    @property
    def lower_is_better(self) -> bool:
        return self.sign < 0

    def value(self, score: float) -> float:
        """The shown quantity of ``score``."""
        return self.sign * float(score) + 0.0  # + 0.0: never "-0"

    def short(self, score: float) -> str:
        """The shown quantity, short: a rank with 2 decimals (``1.67``), else 4 digits."""
        v = self.value(score)
        return f"{v:.2f}".rstrip("0").rstrip(".") if self.lower_is_better else f"{v:.4g}"

    def text(self, score: float) -> str:
        """``"average rank 1.67"``, ``"score 0.9123"``."""
        return f"{self.label} {self.short(score)}"

    @property
    def direction(self) -> str:
        return "lower is better" if self.lower_is_better else "higher is better"


@dataclass(frozen=True)
class RankingMethod:
    """A registered ranking method and what it declares about itself.

    Attributes
    ----------
    name : str
    func : callable
        ``func(X, w, **params)`` for ``input="values"`` (``X`` oriented, NaN only under the
        ``pairwise`` missing policy) or ``func(counts, **params)`` for ``input="pairwise"``.
        Stochastic methods also receive ``rng``; ``uses_signs`` methods receive ``signs``.
    input : {"values", "pairwise"}
    stochastic : bool
        Uses the random generator.
    order_only : bool
        Invariant to strictly increasing transforms of a judge's scores.
    pareto : bool
        A candidate that Pareto-dominates another is never ranked below it.
    condorcet : bool
        A Condorcet winner, when one exists, is always ranked first.
    sparse : bool
        Accepts sparse pairwise counts (large vote sets).
    uses_signs : bool
        Needs the judges' directions (``signs``: +1 higher-is-better, -1 lower-is-better).
    uses_sums : bool
        A value method that may reuse the row sums ``X.sum(axis=1)``: it receives ``sums``,
        those sums when validating the matrix already computed them (``X`` is then the
        validated array itself), else None.
    uses_values : bool
        A pairwise method that may also need the values behind the counts: it receives
        ``values=(X, w)`` (oriented, missing cells ``-inf`` under ``worst``, NaN under
        ``pairwise``) when ranking a score matrix, ``values=None`` when ranking votes.
    check : callable or None
        ``check(matrix, params)`` extra validation on the clean score matrix.
    values : callable or None
        For a pairwise method, the same scores computed from the oriented score matrix,
        ``values(X, w, **params)``, used instead of building pairwise counts when the input
        is a score matrix (a cheaper route, e.g. per-judge ranks); it must agree with
        ``func(PairwiseCounts.from_matrix(X, w), **params)``.
    constraints : mapping
        ``{parameter: Constraint}``: the allowed values of each parameter
        (:mod:`metascore.constraints`), checked by :func:`check_params`.
    description : str
    display : Display
        How reports show the score (e.g. ``average rank``, lower is better).
    resampling : Shortcuts or None
        The exact shortcuts the method offers on resampled data
        (:class:`metascore.resampling.Shortcuts`); None: each resample is ranked in full.
    """

    name: str
    func: Callable[..., Any]
    input: Literal["values", "pairwise"] = "values"
    stochastic: bool = False
    order_only: bool = False
    pareto: bool = True
    condorcet: bool = False
    sparse: bool = False
    uses_signs: bool = False
    uses_sums: bool = False
    uses_values: bool = False
    check: Callable[[ScoreMatrix, dict[str, Any]], None] | None = None
    values: Callable[..., Any] | None = None
    constraints: dict[str, Constraint] = field(default_factory=dict)
    description: str = ""
    display: Display = field(default_factory=Display)
    resampling: Shortcuts | None = None

    @property
    def defaults(self) -> dict[str, Any]:
        """The method's own parameters and their defaults."""
        return dict(self._defaults)

    @cached_property
    def _defaults(self) -> dict[str, Any]:
        sig = inspect.signature(self.func)
        skip = {"rng", "signs", "sums", "values"}
        return {
            name: p.default
            for name, p in list(sig.parameters.items())[1 if self.input == "pairwise" else 2:]
            if name not in skip and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
        }

    def __call__(self, data: Any, **kwargs: Any) -> Ranking:
        return rank(data, self.name, **kwargs)


def ranking_method(
    name: str,
    *,
    input: Literal["values", "pairwise"] = "values",
    stochastic: bool = False,
    order_only: bool | None = None,
    pareto: bool = True,
    condorcet: bool = False,
    sparse: bool = False,
    uses_signs: bool = False,
    uses_sums: bool = False,
    uses_values: bool = False,
    check: Callable[[ScoreMatrix, dict[str, Any]], None] | None = None,
    values: Callable[..., Any] | None = None,
    params: dict[str, Constraint] | None = None,
    description: str = "",
    display: Display | None = None,
    resampling: Shortcuts | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``func`` as the ranking method ``name`` (decorator).

    ``params`` declares the allowed values of each parameter (``{name: Constraint}``);
    every parameter must be declared and its default must be allowed. Pairwise methods
    are order-only by construction (``order_only`` defaults to True for them). The
    decorated function is returned unchanged, so it stays directly testable.
    """
    if input not in ("values", "pairwise"):
        raise ValueError(f"`input` must be 'values' or 'pairwise'; got {input!r}.")

    def register(func: Callable[..., Any]) -> Callable[..., Any]:
        if name in _REGISTRY:
            raise ValueError(f"a ranking method named {name!r} is already registered.")
        doc = description or (inspect.getdoc(func) or "").split("\n\n")[0].replace("\n", " ")
        spec = RankingMethod(
            name=name,
            func=func,
            input=input,
            stochastic=stochastic,
            order_only=(input == "pairwise") if order_only is None else order_only,
            pareto=pareto,
            condorcet=condorcet,
            sparse=sparse,
            uses_signs=uses_signs,
            uses_sums=uses_sums,
            uses_values=uses_values,
            check=check,
            values=values,
            constraints=dict(params or {}),
            description=doc,
            display=display or Display(),
            resampling=resampling,
        )
        undeclared = set(spec.defaults) ^ set(spec.constraints)
        if undeclared:
            raise ValueError(
                f"method {name!r}: declare the allowed values of every parameter in `params` "
                f"(and only those); mismatch: {sorted(undeclared)}."
            )
        for param, default in spec.defaults.items():
            if spec.constraints[param].problem(default) is not None:
                raise ValueError(f"method {name!r}: the default of {param!r} is not allowed.")
        _REGISTRY[name] = spec
        return func

    return register


def _load_methods() -> None:
    from . import methods  # noqa: F401  (importing registers every method)


def ranking_method_names() -> list[str]:
    """Names of all registered ranking methods, sorted."""
    _load_methods()
    return sorted(_REGISTRY)


def get_ranking_method(name: str) -> RankingMethod:
    """The registered method ``name``; an unknown name lists the valid ones."""
    _load_methods()
    if isinstance(name, RankingMethod):
        return name
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ConfigError(
            f"unknown ranking method {name!r}{did_you_mean(name, _REGISTRY)}; "
            f"valid methods are {sorted(_REGISTRY)}."
        ) from None


# ---------------------------------------------------------------------- the wrapper
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


def _version() -> str:
    from . import __version__

    return __version__


def rank(
    data: ScoreMatrix | PairwiseCounts | pd.DataFrame,
    method: str = "average_rank",
    *,
    missing: str = "worst",
    seed: int | np.random.Generator | None = None,
    tie_break: Sequence[str] = ("submitted_at", "candidate"),
    **params: Any,
) -> Ranking:
    """Rank the candidates of ``data`` with the registered ``method``.

    Parameters
    ----------
    data : ScoreMatrix, PairwiseCounts or DataFrame
        A score matrix (a DataFrame is read as a wide, higher-is-better matrix), or pairwise
        counts from votes (pairwise methods only).
    method : str
        A name from :func:`ranking_method_names`.
    missing : {"worst", "drop_candidates", "drop_judges", "pairwise", "error"}
        Missing-data policy (SPEC 2).
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
    seed_used = _seed_value(seed)  # a generator is made only for a stochastic method
    tie_break = tuple(tie_break)

    if isinstance(data, pd.DataFrame):
        data = ScoreMatrix.from_frame(data)
    notes: list[str] = []
    prepared: Prepared | None = None
    if isinstance(data, PairwiseCounts):
        if spec.input != "pairwise":
            raise InputError(
                f"method {spec.name!r} needs a score matrix; votes and pairwise counts only "
                "feed pairwise methods "
                f"({[n for n in ranking_method_names() if _REGISTRY[n].input == 'pairwise']})."
            )
        if data.is_sparse and not spec.sparse:
            data = PairwiseCounts(data.candidates, *data.dense(), data.total_weight)
        candidates = data.candidates
        judges: tuple[str, ...] = ()
        counts = data
    elif isinstance(data, ScoreMatrix):
        prepared = prepare(data, missing)
        matrix = prepared.matrix
        candidates, judges = matrix.candidates, matrix.judges
        if spec.check is not None:
            spec.check(matrix, params)
        if missing == "pairwise" and spec.input == "values" and matrix.has_missing:
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
    else:
        raise InputError(
            f"cannot rank a {type(data).__name__}; give a ScoreMatrix, PairwiseCounts or a "
            "pandas DataFrame."
        )
    if len(candidates) < 2:
        only = f" ({candidates[0]!r})" if candidates else ""
        raise InputError(
            f"ranking needs at least 2 candidates; got {len(candidates)}{only}."
        )

    kwargs = dict(params)
    # Stochastic methods see candidates and judges in label order, so that what they draw
    # does not depend on the input order (SPEC 2); their outputs are mapped back.
    c_order = j_order = None  # None: the input order
    if spec.stochastic:
        c_order = _label_order(candidates)
        kwargs["rng"], _ = generator(seed)
    if prepared is not None:
        matrix = prepared.matrix
        weights = np.asarray(matrix.weights)
        if spec.input == "pairwise":
            x = prepared.filled(values_based=False)
            labels: Sequence[str] = candidates
            if c_order is not None:
                x, labels = x[c_order], [candidates[i] for i in c_order]
            if spec.values is not None:
                out = spec.values(x, weights, **kwargs)
            else:
                counts = PairwiseCounts.from_matrix(x, weights, labels)
                if spec.uses_values:
                    kwargs["values"] = (x, weights)
                out = spec.func(counts, **kwargs)
        else:
            signs = matrix.signs
            x = prepared.filled(values_based=not spec.order_only)
            if c_order is not None:
                j_order = _label_order(judges)
                x, weights, signs = x[np.ix_(c_order, j_order)], weights[j_order], signs[j_order]
            if spec.uses_signs:
                kwargs["signs"] = signs
            if spec.uses_sums:  # the row sums validation computed, when x is what it validated
                known = x is matrix.values and matrix.row_sums_known
                kwargs["sums"] = matrix.row_sums if known else None
            out = spec.func(x, weights, **kwargs)
    else:
        if c_order is not None:
            counts = counts.subset(c_order)
        if spec.uses_values:
            kwargs["values"] = None
        out = spec.func(counts, **kwargs)
    out = _restore_order(out, c_order, j_order)

    scores = np.asarray(out.scores, dtype=float)
    if scores.shape != (len(candidates),):
        raise RuntimeError(
            f"method {spec.name!r} returned {scores.shape} scores for {len(candidates)} candidates."
        )
    if not np.isfinite(scores).all():
        bad = candidates[int(np.flatnonzero(~np.isfinite(scores))[0])]
        raise RuntimeError(f"method {spec.name!r} produced a non-finite score for {bad!r}.")
    notes.extend(out.notes)
    details = dict(out.details)
    for key in out.per_candidate:
        if np.shape(details[key]) != (len(candidates),):
            raise RuntimeError(
                f"method {spec.name!r}: per-candidate detail {key!r} has shape "
                f"{np.shape(details[key])}, not one value per candidate."
            )
    for key in [k for k in details if k.endswith("_judge_index")]:
        details[key[: -len("_index")]] = judges[int(details[key])] if judges else None

    meta = prepared.matrix if prepared is not None else None
    _, group = tie_groups(scores)
    positions, order = positions_and_order(
        scores,
        tie_break,
        candidates,
        meta.submitted_at if meta is not None else (),
        meta.participants if meta is not None else (),
        group,
        meta.submission_order if meta is not None else (),
    )
    return Ranking(
        method=spec.name,
        params=params,
        candidates=candidates if isinstance(candidates, IndexLabels) else tuple(candidates),
        scores=scores,
        ranks=fractional_rank_of_scores(scores, group),
        positions=positions,
        order=order,
        judges=judges,
        seed=seed_used,
        missing=missing if prepared is not None else "votes",
        tie_break=tie_break,
        excluded_candidates=prepared.excluded_candidates if prepared else {},
        excluded_judges=prepared.excluded_judges if prepared else {},
        notes=tuple(notes),
        details=details,
        per_candidate=tuple(out.per_candidate),
        version=_version(),
        matrix=meta,
    )
