"""What a ranking method declares about itself, and the table of registered methods.

A ranking method is a pure function registered by name with :func:`ranking_method`. It
receives either a clean, oriented float array (candidates x judges, higher is better) and
the judges' weights, or, for methods that declare ``input="pairwise"``, the pairwise counts
``N(a, b)`` (so votes feed them too). It returns one score per candidate, higher is better,
optionally wrapped in :class:`MethodOutput` with details and notes.

A registration says three separate things: what the method *is* (:class:`Properties`:
Condorcet-consistent, stochastic, order-only, Pareto), how it is *called* (its input kind
and the extra inputs it ``takes``, see :data:`EXTRA_INPUTS`), and what it can do on
resampled data (:class:`~metascore.resampling.Shortcuts`) and under other weights
(:class:`Weighting`). :func:`metascore.rank` does the
shared work once (validation, orientation, the missing-data policy, the random generator,
ranks, positions with tie-breaks and provenance).

This module imports neither the registry nor the methods: the methods import it to
declare themselves, and :mod:`metascore.registry` imports both.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import numpy as np

from .constraints import Constraint
from .matrix import ScoreMatrix
from .resampling import Shortcuts

__all__ = [
    "EXTRA_INPUTS",
    "MethodOutput",
    "Display",
    "Properties",
    "RankingMethod",
    "Weighting",
    "ranking_method",
    "registered_methods",
]

#: The extra inputs a method may ask for in ``takes``, by input kind:
#:
#: - ``signs`` (values): the judges' directions (+1 higher-is-better, -1 lower-is-better);
#: - ``sums`` (values): the row sums ``X.sum(axis=1)`` when validating the matrix already
#:   computed them and no cell is missing (``X`` is then the validated array itself), else
#:   None;
#: - ``judges`` (values): the judges' labels, in the order of ``X``'s columns (a parameter
#:   given per judge is looked up by label);
#: - ``values`` (pairwise): ``(X, w)``, the oriented values behind the counts (missing
#:   cells ``-inf`` under ``worst``, NaN under ``pairwise``) when ranking a score matrix,
#:   None when ranking votes.
EXTRA_INPUTS = {"values": ("signs", "sums", "judges"), "pairwise": ("values",)}

#: Names of the arguments the registry passes besides the method's own parameters.
_PASSED = frozenset({"rng", "signs", "sums", "judges", "values"})

_TABLE: dict[str, RankingMethod] = {}


def registered_methods() -> dict[str, RankingMethod]:
    """The table of registered methods, by name (the registry loads the shipped ones)."""
    return _TABLE


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
class Properties:
    """What a method is, independent of how it is called.

    Attributes
    ----------
    stochastic : bool
        Uses the random generator (seeded; the seed is recorded).
    order_only : bool
        Invariant to strictly increasing transforms of a judge's scores.
    pareto : bool
        A candidate that Pareto-dominates another is never ranked below it.
    condorcet : bool
        A Condorcet winner, when one exists, is always ranked first.
    unanimity : bool
        A strict order that every judge gives is the ranking, without ties. False for a
        rule that may tie candidates such an order separates (plurality counts first places
        only; under Pareto the order is still never reversed).
    """

    stochastic: bool = False
    order_only: bool = False
    pareto: bool = True
    condorcet: bool = False
    unanimity: bool = True


@dataclass(frozen=True)
class Weighting:
    """How a method's score moves with the judges' weights (the robustness analysis reads
    it; :mod:`metascore.analysis.robustness`).

    Attributes
    ----------
    points : callable or None
        For a method *linear in the weights*: ``points(X, matrix, params)``, the per-judge
        points ``p_ij`` (candidates x judges, NaN where the judge does not score the
        candidate) of the matrix the method saw, such that the score is, up to a strictly
        increasing transform, ``sum_j w_j p_ij / sum_j w_j`` over the judges scoring the
        candidate, and the points do not depend on the weights. None otherwise.
    per_pair : bool
        The score divides by each pair's compared weight: linear only when every pair of
        candidates is compared on the same judges (no missing cell under ``pairwise``).
    why_not : str
        For a method with no points (and no Condorcet route): why its score is no weighted
        mean of per-judge points, one clause (``"the weighted median jumps ..."``).
    """

    points: Callable[[np.ndarray, ScoreMatrix, dict[str, Any]], np.ndarray] | None = None
    per_pair: bool = False
    why_not: str = ""


class _FromProperties:
    """A :class:`RankingMethod` attribute read from its :class:`Properties` of the same name
    (``spec.condorcet`` is ``spec.properties.condorcet``); read-only."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, spec: RankingMethod | None, owner: type | None = None) -> Any:
        return self if spec is None else getattr(spec.properties, self.name)

    def __set__(self, spec: RankingMethod, value: Any) -> None:
        raise AttributeError(f"{self.name} is read from the method's properties")


@dataclass(frozen=True)
class RankingMethod:
    """A registered ranking method and what it declares about itself.

    Attributes
    ----------
    name : str
    func : callable
        ``func(X, w, **params)`` for ``input="values"`` (``X`` oriented, NaN only under the
        ``pairwise`` missing policy) or ``func(counts, **params)`` for ``input="pairwise"``;
        a stochastic method also receives ``rng``, and each name in ``takes`` its input.
    input : {"values", "pairwise"}
    properties : Properties
        Condorcet, stochastic, order-only, Pareto (also readable as attributes).
    takes : tuple of str
        Extra inputs the method reads (:data:`EXTRA_INPUTS`).
    sparse : bool
        Accepts sparse pairwise counts (large vote sets).
    dense : bool
        Holds n x n arrays whatever its input (a pairwise method without ``values`` does
        too): the registry refuses it beyond :data:`~metascore.pairwise.DENSE_BYTES_LIMIT`
        before it runs (:attr:`needs_dense`).
    check : callable or None
        ``check(matrix, params)`` extra validation on the clean score matrix.
    values : callable or None
        For a pairwise method, the same scores computed from the oriented score matrix,
        ``values(X, w, **params)``, used instead of building pairwise counts when the input
        is a score matrix (a cheaper route, e.g. per-judge ranks); it must agree with
        ``func(PairwiseCounts.from_matrix(X, w), **params)``.
    constraints : mapping
        ``{parameter: Constraint}``: the allowed values of each parameter
        (:mod:`metascore.constraints`), checked by :func:`metascore.registry.check_params`.
    description : str
    display : Display
        How reports show the score (e.g. ``average rank``, lower is better).
    resampling : Shortcuts or None
        The exact shortcuts the method offers on resampled data
        (:class:`metascore.resampling.Shortcuts`); None: each resample is ranked in full.
    weighting : Weighting
        How the score moves with the judges' weights.
    """

    name: str
    func: Callable[..., Any]
    input: Literal["values", "pairwise"] = "values"
    properties: Properties = field(default_factory=Properties)
    takes: tuple[str, ...] = ()
    sparse: bool = False
    dense: bool = False
    check: Callable[[ScoreMatrix, dict[str, Any]], None] | None = None
    values: Callable[..., Any] | None = None
    constraints: dict[str, Constraint] = field(default_factory=dict)
    description: str = ""
    display: Display = field(default_factory=Display)
    resampling: Shortcuts | None = None
    weighting: Weighting = field(default_factory=Weighting)

    @property
    def needs_dense(self) -> bool:
        """Whether ranking a score matrix holds n x n arrays (pairwise counts without a
        ``values`` route, or a method declared ``dense``)."""
        return self.dense or (self.input == "pairwise" and self.values is None)

    stochastic = _FromProperties()
    order_only = _FromProperties()
    pareto = _FromProperties()
    condorcet = _FromProperties()
    unanimity = _FromProperties()

    @property
    def defaults(self) -> dict[str, Any]:
        """The method's own parameters and their defaults."""
        return dict(self._defaults)

    @cached_property
    def _defaults(self) -> dict[str, Any]:
        sig = inspect.signature(self.func)
        return {
            name: p.default
            for name, p in list(sig.parameters.items())[1 if self.input == "pairwise" else 2:]
            if name not in _PASSED and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
        }

    def call(self, data: Any, *args: Any, params: dict[str, Any], **available: Any) -> Any:
        """``func(data, *args, **params)`` plus the extra inputs it takes, picked from
        ``available`` (a taken input not available is passed as None)."""
        extra = {name: available.get(name) for name in self.takes}
        return self.func(data, *args, **params, **extra)


def ranking_method(
    name: str,
    *,
    input: Literal["values", "pairwise"] = "values",
    stochastic: bool = False,
    order_only: bool | None = None,
    pareto: bool = True,
    condorcet: bool = False,
    unanimity: bool = True,
    sparse: bool = False,
    dense: bool = False,
    takes: tuple[str, ...] = (),
    check: Callable[[ScoreMatrix, dict[str, Any]], None] | None = None,
    values: Callable[..., Any] | None = None,
    params: dict[str, Constraint] | None = None,
    description: str = "",
    display: Display | None = None,
    resampling: Shortcuts | None = None,
    weighting: Weighting | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``func`` as the ranking method ``name`` (decorator).

    ``params`` declares the allowed values of each parameter (``{name: Constraint}``);
    every parameter must be declared and its default must be allowed. Pairwise methods
    are order-only by construction (``order_only`` defaults to True for them). ``takes``
    names the extra inputs the method reads (:data:`EXTRA_INPUTS`); ``resampling`` its
    exact shortcuts on resampled data; ``weighting`` how its score moves with the judges'
    weights. The decorated function is returned unchanged, so it
    stays directly testable.
    """
    _check_call(name, input, takes)

    def register(func: Callable[..., Any]) -> Callable[..., Any]:
        if name in _TABLE:
            raise ValueError(f"a ranking method named {name!r} is already registered.")
        spec = RankingMethod(
            name=name,
            func=func,
            input=input,
            properties=Properties(
                stochastic=stochastic,
                order_only=(input == "pairwise") if order_only is None else order_only,
                pareto=pareto,
                condorcet=condorcet,
                unanimity=unanimity,
            ),
            takes=tuple(takes),
            sparse=sparse,
            dense=dense,
            check=check,
            values=values,
            constraints=dict(params or {}),
            description=description or _summary(func),
            display=display or Display(),
            resampling=resampling,
            weighting=weighting or Weighting(),
        )
        _check_params(spec)
        _TABLE[name] = spec
        return func

    return register


def _check_call(name: str, input: str, takes: tuple[str, ...]) -> None:
    """The input kind is known and the method takes only the extra inputs of its kind."""
    if input not in EXTRA_INPUTS:
        raise ValueError(f"`input` must be 'values' or 'pairwise'; got {input!r}.")
    unknown = [t for t in takes if t not in EXTRA_INPUTS[input]]
    if unknown:
        raise ValueError(f"method {name!r}: an {input!r} method takes only "
                         f"{list(EXTRA_INPUTS[input])}; got {unknown[0]!r}.")


def _summary(func: Callable[..., Any]) -> str:
    """The first paragraph of ``func``'s docstring, on one line."""
    return (inspect.getdoc(func) or "").split("\n\n")[0].replace("\n", " ")


def _check_params(spec: RankingMethod) -> None:
    """Every parameter of the method, and only those, is declared, and its default allowed."""
    undeclared = set(spec.defaults) ^ set(spec.constraints)
    if undeclared:
        raise ValueError(
            f"method {spec.name!r}: declare the allowed values of every parameter in `params` "
            f"(and only those); mismatch: {sorted(undeclared)}."
        )
    for param, default in spec.defaults.items():
        if spec.constraints[param].problem(default) is not None:
            raise ValueError(f"method {spec.name!r}: the default of {param!r} is not allowed.")
