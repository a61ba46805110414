"""The canonical long table as columns: coded text, float values, checks without loops.

A competition of 20 candidates x 471,033 per-sample judges is 9.4 million rows; as Python
objects that is gigabytes and minutes. So the table every reader returns stores its text
columns (``phase``, ``candidate``, ``participant``, ``task``, ``metric``,
``submitted_at``) as pandas categoricals (a small integer code per row, each distinct
text once; a missing ``participant`` or ``submitted_at`` is ``NaN``), ``value`` as
float64 and ``is_baseline`` as bool. This module builds such columns
(:func:`categorical`, :func:`constant`, :func:`recode`), joins them
(:func:`concat_columns`, :func:`concat_frames`), reads their codes back
(:func:`codes_of`) and checks the table (:func:`check_unique`, :func:`check_metadata`)
with integer arithmetic, so every step costs a few passes over arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from ..errors import InputError

__all__ = [
    "TEXT_COLUMNS", "Where", "categorical", "escape_surrogates", "unicode_text", "constant", "from_codes", "tiled", "recode", "codes_of", "concat_columns",
    "concat_frames", "with_phase", "check_unique", "check_metadata", "first_index", "last_index",
    "positions", "CHUNK",
]

#: Columns of the canonical table stored as categoricals.
TEXT_COLUMNS = ("phase", "candidate", "participant", "task", "metric", "submitted_at")


def _sorted(codes: np.ndarray, uniques: Sequence[Any]) -> pd.Categorical:
    """The categorical of ``codes`` into ``uniques`` (unique, -1: missing), with its
    categories sorted: sorting or comparing the column then orders its texts as strings
    would, and two tables holding the same texts have the same categories."""
    cats = np.empty(len(uniques), dtype=object)
    cats[:] = list(uniques)
    order = np.argsort(cats, kind="stable")
    if (order != np.arange(len(order))).any():
        rank = np.empty(len(order) + 1, dtype=np.int64)
        rank[order] = np.arange(len(order))
        rank[-1] = -1  # code -1 reads the last entry
        codes = rank[codes]
        cats = cats[order]
    return pd.Categorical.from_codes(codes, pd.Index(cats, dtype=object))


def categorical(values: Sequence[Any] | np.ndarray) -> pd.Categorical:
    """A categorical of ``values`` (``None``/NaN: missing)."""
    codes, uniques = pd.factorize(np.asarray(values, dtype=object))
    return _sorted(codes, uniques)


def constant(value: Any, n: int) -> pd.Categorical:
    """``n`` rows of ``value`` (``None``: missing) as a categorical."""
    if value is None:
        return pd.Categorical.from_codes(np.full(n, -1, dtype=np.int8), pd.Index([], dtype=object))
    return pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), pd.Index([value], dtype=object))


def from_codes(codes: np.ndarray, categories: Sequence[Any]) -> pd.Categorical:
    """A categorical from ``codes`` (-1: missing) into ``categories`` (which are unique)."""
    return _sorted(codes, categories)


def tiled(values: Sequence[Any], n: int) -> pd.Categorical:
    """``values`` (distinct) repeated ``n`` times, as a categorical with sorted categories
    (its codes made once, in the smallest integer type)."""
    cats = np.empty(len(values), dtype=object)
    cats[:] = list(values)
    order = np.argsort(cats, kind="stable")
    rank = np.empty(len(order), dtype=np.int8 if len(order) < 127 else
                    np.int16 if len(order) < 32767 else np.int32)
    rank[order] = np.arange(len(order))
    return pd.Categorical.from_codes(np.tile(rank, n), pd.Index(cats[order], dtype=object))


def recode(codes: np.ndarray, raw: Sequence[Any], parse: Callable[[int, Any], Any]) -> pd.Categorical:
    """``parse(k, raw[k])`` once per distinct raw value, as a categorical of the rows.

    ``codes`` index ``raw`` (-1: a missing cell, parsed as ``raw`` value ``None``);
    parsed values that are equal share one category; a parsed ``None`` is missing.
    """
    parsed = [parse(k, v) for k, v in enumerate(raw)]
    at_missing = parse(-1, None) if len(codes) and codes.min() < 0 else None
    if at_missing is None and all(type(p) is str for p in parsed) and parsed == list(raw) \
            and all(a < b for a, b in zip(parsed, parsed[1:])):
        return pd.Categorical.from_codes(codes, pd.Index(parsed, dtype=object))  # as it was
    parsed.append(at_missing)  # code -1 reads it
    keys, uniques = pd.factorize(np.asarray(parsed, dtype=object))
    return _sorted(keys.astype(np.int64)[codes], uniques)


def escape_surrogates(column: pd.Categorical) -> tuple[pd.Categorical, list[str]]:
    """``column`` with each text that holds a lone surrogate (``"\\ud800x"``: JSON can
    carry one, and no UTF-8 file, terminal or spreadsheet can take it) written with a
    backslash escape instead (``"\\\\ud800x"``), the same text always the same way; and
    the escaped texts. Refused when an escaped text is another text of the column."""
    cats = list(column.categories)
    bad = [k for k, c in enumerate(cats) if isinstance(c, str) and unicode_text(c) is not c]
    if not bad:
        return column, []
    for k in bad:
        cats[k] = unicode_text(cats[k])
    if len(set(cats)) < len(cats):
        clash = next(cats[k] for k in bad if cats.count(cats[k]) > 1)
        raise InputError(f"the name {clash!r} is given both as written and with a lone surrogate "
                         "(text that is not valid Unicode) in its place; rename one of them.")
    return from_codes(np.asarray(column.codes), cats), [cats[k] for k in bad]


def unicode_text(text: str) -> str:
    """``text`` itself when it is valid Unicode (UTF-8 can write it), else a copy with each
    lone surrogate written as a backslash escape (``"\\ud800x"`` -> ``"\\\\ud800x"``)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def codes_of(series: pd.Series | pd.Categorical) -> tuple[np.ndarray, list[Any]]:
    """``(codes, categories)`` of a column: its categorical codes, or a factorization of its
    values in order of first appearance (-1: missing)."""
    values = series.array if isinstance(series, pd.Series) else series
    if isinstance(values, pd.Categorical):
        return np.asarray(values.codes), list(values.categories)
    codes, uniques = pd.factorize(np.asarray(values, dtype=object))
    return codes, list(uniques)


def positions(n: int) -> np.ndarray:
    """``0..n-1`` in the smallest integer type that holds them (int32 below 2**31)."""
    return np.arange(n, dtype=np.int32 if n < 2**31 - 1 else np.int64)


def first_index(codes: np.ndarray, n: int) -> np.ndarray:
    """Position of the first row holding each code ``0..n-1`` (``len(codes)`` when none
    does; codes -1 are ignored)."""
    pos = positions(len(codes))
    first = np.full(n, len(codes), dtype=pos.dtype)  # one dtype: ufunc.at's fast loop
    valid = codes >= 0
    if not valid.all():
        pos, codes = pos[valid], codes[valid]
    np.minimum.at(first, codes, pos)
    return first


def last_index(codes: np.ndarray, n: int) -> np.ndarray:
    """Position of the last row holding each code ``0..n-1`` (-1 when none does)."""
    pos = positions(len(codes))
    last = np.full(n, -1, dtype=pos.dtype)
    valid = codes >= 0
    if not valid.all():
        pos, codes = pos[valid], codes[valid]
    np.maximum.at(last, codes, pos)
    return last


class Where:
    """Where each row of the table came from, for error messages, computed on demand.

    Readers that add rows one at a time give each its text; readers that add a block of
    rows give one function ``row -> text`` for the whole block (a 9-million-row table
    would otherwise hold 9 million strings that no message ever reads).
    """

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._parts: list[list[str] | Callable[[int], str]] = []
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def extend(self, texts: list[str]) -> None:
        if texts:
            self._starts.append(self._n)
            self._parts.append(list(texts))
            self._n += len(texts)

    def block(self, n: int, where: Callable[[int], str]) -> None:
        if n:
            self._starts.append(self._n)
            self._parts.append(where)
            self._n += n

    def __getitem__(self, i: int) -> str:
        i = int(i)
        k = int(np.searchsorted(self._starts, i, side="right")) - 1
        part = self._parts[k]
        local = i - self._starts[k]
        return part[local] if isinstance(part, list) else part(local)


def concat_columns(parts: list[dict[str, Any]], columns: Sequence[str]) -> dict[str, Any]:
    """The columns of several blocks, one after the other; categoricals are joined with
    the union of their categories (in order of appearance)."""
    if len(parts) == 1:
        return dict(parts[0])
    out: dict[str, Any] = {}
    for col in columns:
        pieces = [p[col] for p in parts]
        if isinstance(pieces[0], pd.Categorical):
            out[col] = union_categoricals(pieces, sort_categories=True)
        else:
            out[col] = np.concatenate([np.asarray(p) for p in pieces])
    return out


def concat_frames(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Canonical tables one after the other (categorical columns stay categorical)."""
    if len(frames) == 1:
        return frames[0].reset_index(drop=True)
    columns = list(frames[0].columns)
    parts = []
    for f in frames:
        part = {}
        for col in columns:
            values = f[col].array if col in f.columns else None
            if isinstance(values, pd.Categorical):
                part[col] = values
            elif col in TEXT_COLUMNS:
                part[col] = categorical(f[col].to_numpy(dtype=object) if col in f.columns
                                        else [None] * len(f))
            else:
                part[col] = np.asarray(f[col])
        parts.append(part)
    return pd.DataFrame(concat_columns(parts, columns), columns=columns)


def with_phase(frame: pd.DataFrame, phase: str) -> pd.DataFrame:
    """``frame`` with every row in ``phase``."""
    return frame.assign(phase=constant(str(phase), len(frame)))


#: Rows handled at a time by the table's vectorized passes (the checks' int64 keys here,
#: the leaderboard's scatter into a score matrix): bounds the index arrays numpy makes.
CHUNK = 1 << 20


def _combined(columns: list[tuple[np.ndarray, int]], start: int = 0, stop: int | None = None) -> np.ndarray:
    """One int64 key per row ``start:stop`` from several code columns (``(codes, n_codes)``,
    codes may be -1), equal exactly when every code is."""
    stop = len(columns[0][0]) if stop is None else min(stop, len(columns[0][0]))
    key = np.zeros(stop - start, dtype=np.int64)
    for codes, n in columns:
        key *= n + 1
        key += codes[start:stop]
        key += 1
    return key


def _chunks(n: int) -> range:
    return range(0, n, CHUNK)


def check_unique(frame: pd.DataFrame, where: Where) -> None:
    """One score per (phase, candidate, task, metric); the error names both rows."""
    keys = ["phase", "candidate", "task", "metric"]
    cols = []
    size = 1
    for col in keys:
        codes, cats = codes_of(frame[col])
        cols.append((codes, len(cats)))
        size *= len(cats) + 1
    n = len(frame)
    if size >= 2 ** 62:  # too many distinct values for one integer key
        dup = frame.duplicated(keys).to_numpy()
        if not dup.any():
            return
    else:
        if size <= 8 * n + (1 << 20):  # a key in a table of flags, a chunk at a time
            seen = np.zeros(size, dtype=bool)
            for a in _chunks(n):
                seen[_combined(cols, a, a + CHUNK)] = True
            if int(np.count_nonzero(seen)) == n:
                return
            del seen
        key = _combined(cols)
        dup = pd.Series(key).duplicated().to_numpy()
        if not dup.any():
            return
    second = int(np.flatnonzero(dup)[0])
    row = frame.iloc[second]
    same = (frame[keys] == row[keys]).all(axis=1).to_numpy()
    first = int(np.flatnonzero(same)[0])
    raise InputError(
        f"candidate {row['candidate']!r} has two scores for phase {row['phase']!r}, task "
        f"{row['task']!r}, metric {row['metric']!r} ({where[first]} and {where[second]})."
    )


def check_metadata(frame: pd.DataFrame, where: Where) -> None:
    """One participant / submission time / baseline flag per (phase, candidate)."""
    phase, phases = codes_of(frame["phase"])
    cand, cands = codes_of(frame["candidate"])
    pair = [(phase, len(phases)), (cand, len(cands))]
    n, size = len(frame), (len(phases) + 1) * (len(cands) + 1)
    first = np.full(size, n, dtype=np.int64)  # each (phase, candidate)'s first row
    for a in _chunks(n):
        np.minimum.at(first, _combined(pair, a, a + CHUNK), np.arange(a, min(n, a + CHUNK)))
    for col in ("participant", "submitted_at", "is_baseline"):
        if col == "is_baseline":
            codes = np.asarray(frame[col], dtype=bool)
        else:
            codes = codes_of(frame[col])[0]  # -1: missing
        if col != "is_baseline" and len(codes) and codes.max() < 0:
            continue  # nobody has one
        bad = None
        for a in _chunks(n):
            group = _combined(pair, a, a + CHUNK)
            differs = np.flatnonzero(codes[a:a + CHUNK] != codes[first[group]])
            if differs.size:
                groups = group[differs]
                bad = groups if bad is None else np.concatenate([bad, groups])
        if bad is None:
            continue
        # the first row of a candidate that holds two values, as the message names it
        row_idx = int(first[bad].min())
        same = np.flatnonzero((phase == phase[row_idx]) & (cand == cand[row_idx]))
        other = int(same[np.flatnonzero(codes[same] != codes[same[0]])[0]])
        row = frame.iloc[row_idx]
        raise InputError(
            f"candidate {row['candidate']!r} has two different {col} values: "
            f"{_shown(frame[col].iloc[same[0]])!r} ({where[same[0]]}) and "
            f"{_shown(frame[col].iloc[other])!r} ({where[other]})."
        )


def _shown(value: Any) -> Any:
    """A cell as the messages show it: a missing text cell is ``None``."""
    if isinstance(value, float) and np.isnan(value):
        return None
    if isinstance(value, np.bool_):
        return bool(value)
    return value
