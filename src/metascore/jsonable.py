"""The one JSON cleaner: numpy and pandas values to plain, strict-JSON Python values."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["jsonable", "ReadyDict", "ready_values", "ready_records"]


class ReadyDict(dict):  # type: ignore[type-arg]
    """A mapping of text keys to values that are JSON-ready already (text, integers, finite
    floats, None): :func:`jsonable` passes it through as it is (a board's per-judge numbers
    are millions of floats)."""


#: Values already JSON-ready, passed through without a call (large boards hold millions).
_PLAIN = frozenset({str, int, bool, type(None), ReadyDict})


def jsonable(obj: Any) -> Any:
    """JSON-ready copy of ``obj``.

    Mappings get string keys, tuples and arrays become lists, numpy scalars Python ones,
    timestamps ISO 8601 text, and NaN or infinite floats ``None`` (JSON has no NaN; an
    undefined value is null, never a silent number).
    """
    if type(obj) is float:  # the common case first (ABC checks below are slow)
        return obj if math.isfinite(obj) else None
    if type(obj) is ReadyDict:
        return obj
    if isinstance(obj, Mapping):
        return {k if type(k) is str else str(k): v if type(v) in _PLAIN else jsonable(v)
                for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [v if type(v) in _PLAIN else jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, pd.Timestamp):
        return obj.isoformat()
    return obj


def ready_values(values: Iterable[Any]) -> list[Any]:
    """``values`` JSON-ready, each as :func:`jsonable` makes a mapping's values: the
    columns of rows built into :class:`ReadyDict` (a board's 100,000 rows, cleaned a column
    at a time instead of a dictionary at a time)."""
    return [v if type(v) in _PLAIN else jsonable(v) for v in values]


def ready_records(columns: Sequence[Sequence[Any]], names: Sequence[str]) -> list[ReadyDict]:
    """One JSON-ready record per row of ``columns`` (one list of values per name of
    ``names``), each value as :func:`ready_values` makes it."""
    return [ReadyDict(zip(names, row)) for row in zip(*map(ready_values, columns))]
