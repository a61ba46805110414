"""Tuple stand-ins made on demand, for matrices of hundreds of thousands of judges.

:class:`IndexLabels` is ``("0", "1", ..., "n-1")`` (unnamed candidates or judges) and
:class:`Repeated` is ``(value,) * n`` (one direction for every judge): both behave like
the tuple without building it, so a matrix of 471,033 per-sample judges does not pay for
471,033 strings or booleans it may never read. :mod:`metascore.matrix` re-exports them.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

__all__ = ["IndexLabels", "Repeated"]


class _TupleStandIn(Sequence[Any]):
    """What a tuple stand-in of ``n`` entries shares: its length, ``==`` with its own kind
    (:meth:`_same_as`) and with a tuple (:meth:`_holds`), ``hash`` and ``+`` like the tuple's."""

    __slots__ = ("_n",)
    _n: int

    def __len__(self) -> int:
        return self._n

    def _same_as(self, other: Any) -> bool:
        """Whether ``other``, of this kind and length, holds the same entries."""
        raise NotImplementedError

    def _holds(self, other: tuple) -> bool:
        """Whether the tuple ``other``, of this length, holds the same entries."""
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if isinstance(other, type(self)):
            return self._n == other._n and self._same_as(other)
        if isinstance(other, tuple):
            return len(other) == self._n and self._holds(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __add__(self, other: Any) -> tuple[Any, ...]:
        return tuple(self) + tuple(other)

    def __radd__(self, other: Any) -> tuple[Any, ...]:
        return tuple(other) + tuple(self)


class IndexLabels(_TupleStandIn):
    """The default labels ``("0", "1", ..., "n-1")``, made on demand.

    Behaves like the tuple of those strings (indexing, ``len``, ``in``, ``index``,
    iteration, ``==`` with a tuple) without building ``n`` strings: a matrix of 471,033
    unnamed judges would otherwise spend longer labelling them than ranking.
    """

    __slots__ = ()

    def __init__(self, n: int) -> None:
        self._n = int(n)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return tuple(map(str, range(self._n)[i]))
        return str(range(self._n)[operator.index(i)])

    def __iter__(self) -> Iterator[str]:
        return map(str, range(self._n))

    def _position(self, label: Any) -> int | None:
        if not (isinstance(label, str) and label.isascii() and label.isdigit()):
            return None
        k = int(label)
        return k if k < self._n and str(k) == label else None

    def __contains__(self, label: object) -> bool:
        return self._position(label) is not None

    def index(self, label: Any, *args: Any) -> int:
        k = self._position(label)
        if k is None or (args and k not in range(self._n)[slice(*args)]):
            raise ValueError(f"{label!r} is not in the labels")
        return k

    def count(self, label: Any) -> int:
        return int(label in self)

    def _same_as(self, other: Any) -> bool:
        return True

    def _holds(self, other: tuple) -> bool:
        return tuple(self) == other

    def __repr__(self) -> str:
        return f"IndexLabels({self._n})"


class Repeated(_TupleStandIn):
    """``(value,) * n`` made on demand: one direction for every judge of a matrix.

    Behaves like that tuple (indexing, slicing to a tuple, ``len``, iteration, ``==`` and
    ``hash`` like it, ``numpy.asarray``) without building it: 471,033 per-sample judges
    would otherwise cost a tuple of 471,033 entries per matrix.
    """

    __slots__ = ("_value",)

    def __init__(self, value: Any, n: int) -> None:
        self._value, self._n = value, int(n)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return (self._value,) * len(range(self._n)[i])
        range(self._n)[operator.index(i)]  # IndexError beyond the end
        return self._value

    def __iter__(self) -> Iterator[Any]:
        return itertools.repeat(self._value, self._n)

    def __contains__(self, value: object) -> bool:
        return self._n > 0 and value == self._value

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.full(self._n, self._value, dtype=dtype)

    def _same_as(self, other: Any) -> bool:
        return self._n == 0 or self._value == other._value

    def _holds(self, other: tuple) -> bool:
        return all(x == self._value for x in other)

    def __repr__(self) -> str:
        return f"Repeated({self._value!r}, {self._n})"
