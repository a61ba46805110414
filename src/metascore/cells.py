"""Score cells: one cell parsed, and a whole array validated in one pass.

:func:`parse_score` reads one cell as a float (missing tokens as ``NaN``, an infinity refused
unless allowed). :func:`to_float_array` turns a 2-D array-like into the float array a
:class:`~metascore.matrix.ScoreMatrix` holds and proves it finite by its sums, computed once
(the row sums, which the mean reuses, for long contiguous rows; two threads for a large
array, since one core does not reach the memory's speed).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from .errors import InputError

__all__ = ["MISSING_TOKENS", "parse_score", "has_strings", "has_nan", "to_float_array", "row_sums"]

#: Cell contents that mean "missing" (compared case-insensitively, after stripping).
MISSING_TOKENS = frozenset({"", "nan", "n/a", "na", "null", "none", "-"})

#: From this many judges, a matrix whose rows are contiguous is validated by its row sums
#: (which the mean reuses) rather than one total sum: numpy sums long rows as fast as the
#: whole array, short ones up to twice slower.
ROW_SUMS_FROM_JUDGES = 1000
#: Two threads sum the rows of this many cells (10 MiB) or more: on 2 cores one thread was
#: faster up to 1.25 million cells, two from 1.5 million (1.22x; 1.34x at 2 million).
THREADED_CELLS = 10 * 2**20 // 8
_SUMMER: ThreadPoolExecutor | None = None


def parse_score(value: Any, *, where: str, allow_inf: bool = False) -> float:
    """Parse one score cell into a float (``nan`` when missing).

    ``where`` names the cell for the error message (e.g. "candidate 'A', judge 'acc'").
    """
    if value is None:
        return math.nan
    if isinstance(value, (bool, np.bool_)):
        raise InputError(f"{where}: score {value!r} is a boolean, not a number.")
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in MISSING_TOKENS:
            return math.nan
        try:
            number = float(text)
        except ValueError:
            raise InputError(f"{where}: score {value!r} is not a number.") from None
    else:
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise InputError(f"{where}: score {value!r} is not a number.") from None
    if math.isinf(number) and not allow_inf:
        raise InputError(
            f"{where}: score {value!r} is infinite; fix the score or allow infinite values "
            "for this judge."
        )
    return number


def has_strings(values: Any) -> bool:
    if isinstance(values, np.ndarray):
        return values.dtype.kind in "OUS"
    return True  # lists and frames may hold anything: parse cell by cell


def has_nan(array: np.ndarray) -> bool:
    # A finite sum proves there is no NaN (nor inf) in one pass, without a boolean copy.
    with np.errstate(over="ignore", invalid="ignore"):
        total = array.sum()
    return not np.isfinite(total) and bool(np.isnan(array).any())


def to_float_array(
    raw: np.ndarray, cands: Sequence[str], jdgs: Sequence[str], inf_ok: bool | np.ndarray
) -> tuple[np.ndarray, bool, np.ndarray | None]:
    """The float array (a view when ``raw`` is already float64), whether it is complete,
    and its row sums when validation computed them (else None).

    One pass (a sum) validates a complete finite matrix; only a non-finite sum pays for
    the cell-by-cell checks of infinite values. Long contiguous rows are summed row by row
    (:data:`ROW_SUMS_FROM_JUDGES`), which costs the same and gives the row sums for free.
    """
    if raw.dtype == np.float64:
        array = raw.view()
    elif raw.dtype.kind in "fiu":
        array = np.array(raw, dtype=float)
    else:
        try:
            array = np.array(raw, dtype=float)
        except (TypeError, ValueError):
            array = np.empty(raw.shape, dtype=float)
            for (i, j), cell in np.ndenumerate(raw):
                array[i, j] = parse_score(
                    cell, where=f"candidate {cands[i]!r}, judge {jdgs[j]!r}", allow_inf=True
                )
    sums = None
    with np.errstate(over="ignore", invalid="ignore"):
        if array.shape[1] >= ROW_SUMS_FROM_JUDGES and array.strides[1] == array.itemsize:
            sums = row_sums(array)
            finite = bool(np.isfinite(sums).all())
        else:
            finite = bool(np.isfinite(array.sum()))
    if finite:
        return array, True, sums
    inf = np.isinf(array) & ~np.broadcast_to(inf_ok, (len(jdgs),))[None, :]
    if inf.any():
        i, j = np.argwhere(inf)[0]
        raise InputError(
            f"candidate {cands[i]!r}, judge {jdgs[j]!r}: score {float(array[i, j])!r} is infinite; "
            "fix the score or allow infinite values for this judge."
        )
    return array, False, sums


def row_sums(array: np.ndarray) -> np.ndarray:
    """``array.sum(axis=1)``, the same bits; a large array's rows summed by two threads
    (numpy lets go of the interpreter while it sums; one core does not reach the memory's speed)."""
    n = array.shape[0]
    if array.size < THREADED_CELLS or n < 2 or len(os.sched_getaffinity(0)) < 2:
        return array.sum(axis=1)
    global _SUMMER
    _SUMMER = _SUMMER or ThreadPoolExecutor(1, thread_name_prefix="metascore-sums")
    out, half = np.empty(n), n // 2
    other = _SUMMER.submit(np.sum, array[half:], axis=1, out=out[half:])
    np.sum(array[:half], axis=1, out=out[:half])
    other.result()
    return out
