"""Constraints on ranking-method parameters, declared once in the registry.

A method declares each parameter's allowed values when it is registered (in the style of
scikit-learn's ``validate_params``)::

    @ranking_method("success_rate", input="pairwise", params={"ties": Options("zero", "half")})

and :func:`metascore.registry.check_params` checks them wherever parameters come from:
``rank``, the analysis, the command line and ``metascore.yaml`` (``validate-config``), so a
bad value is refused before anything runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

__all__ = ["Constraint", "Options", "Interval", "Target"]


class Constraint:
    """A set of allowed values: :meth:`problem` says what is wrong with a value, or None."""

    def problem(self, value: Any) -> str | None:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass(frozen=True)
class Options(Constraint):
    """One of a fixed set of values (compared with ``==``, booleans never match numbers)."""

    values: tuple[Any, ...]

    def __init__(self, *values: Any) -> None:
        object.__setattr__(self, "values", values)

    def problem(self, value: Any) -> str | None:
        for allowed in self.values:
            if type(allowed) is type(value) and allowed == value:
                return None
        return f"must be one of {list(self.values)}; got {value!r}"


@dataclass(frozen=True)
class Interval(Constraint):
    """A finite number (``integer=True``: an integer) between ``low`` and ``high``.

    ``None`` leaves a side open-ended; ``closed`` is ``"both"``, ``"left"``, ``"right"`` or
    ``"neither"``; ``what`` names the quantity in messages ("a confidence level").
    """

    low: float | None = None
    high: float | None = None
    closed: str = "both"
    integer: bool = False
    what: str | None = None

    def _describe(self) -> str:
        noun = "integer" if self.integer else "number"
        if self.high is None and self.low == 0 and self.closed in ("neither", "right"):
            return f"a positive {noun}"
        if self.high is None and self.low == 1 and self.integer:
            return "a positive integer"
        if self.high is None and self.low == 0:
            return f"a non-negative {noun}"
        if self.low is None and self.high is None:
            return f"a finite {noun}"
        left = "[" if self.closed in ("both", "left") else "("
        right = "]" if self.closed in ("both", "right") else ")"
        low = "-inf" if self.low is None else f"{self.low:g}"
        high = "inf" if self.high is None else f"{self.high:g}"
        return f"{self.what or 'a ' + noun} in {left}{low}, {high}{right}"

    def problem(self, value: Any) -> str | None:
        kind = Integral if self.integer else Real
        ok = isinstance(value, kind) and not isinstance(value, bool) and math.isfinite(value)
        if ok and self.low is not None:
            ok = value >= self.low if self.closed in ("both", "left") else value > self.low
        if ok and self.high is not None:
            ok = value <= self.high if self.closed in ("both", "right") else value < self.high
        return None if ok else f"must be {self._describe()}; got {value!r}"


def percentile_of(value: Any) -> float | None:
    """The percentile P of a target written ``"qP"`` (``"q90"``: each judge's 90th
    percentile), 0 <= P <= 100; None for anything else."""
    if not isinstance(value, str) or not value.startswith("q"):
        return None
    try:
        p = float(value[1:])
    except ValueError:
        return None
    return p if 0 <= p <= 100 else None


@dataclass(frozen=True)
class Target(Constraint):
    """A target score: ``"qP"`` (each judge's P-th percentile), ``"best"`` (each judge's
    best score), a finite number, or a mapping of judge labels to finite numbers (one
    target per judge; the method checks the labels against the matrix)."""

    def problem(self, value: Any) -> str | None:
        def number(x: Any) -> bool:
            return isinstance(x, Real) and not isinstance(x, bool) and math.isfinite(x)

        if value == "best" or number(value) or percentile_of(value) is not None:
            return None
        if isinstance(value, Mapping) and value and all(
                isinstance(k, str) and number(v) for k, v in value.items()):
            return None
        return ("must be 'qP' (each judge's P-th percentile, 0 <= P <= 100, e.g. 'q90'), "
                "'best', a finite number, or a mapping of judge labels to finite numbers; "
                f"got {value!r}")
