"""Which way a judge points when nobody said: the competition's columns, or a warning.

A judge's direction comes, in order, from the configuration (``direction``/``sorting``, or
``--lower-is-better``), from the competition's leaderboard columns (their ``sorting``,
read by :mod:`metascore.readers.columns`), else it defaults to higher-is-better, and a name
that says lower is better (``mae``, ``rmse``, ``loss``, ``error``, ``time``, ...) earns a
warning. Pure functions: the callers print.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import numpy as np

__all__ = ["LOWER_IS_BETTER_WORDS", "column_direction", "looks_lower_is_better", "direction_warnings"]

#: Words of a column name that usually mean "lower is better".
LOWER_IS_BETTER_WORDS = frozenset({
    "mae", "mse", "rmse", "msle", "rmsle", "mape", "smape", "wape", "loss", "logloss",
    "nll", "error", "err", "errors", "time", "duration", "elapsed", "runtime", "latency",
    "seconds", "sec", "wer", "cer", "ter", "perplexity", "ppl", "brier", "distance",
    "regret", "cost", "eer", "fid", "fnr", "fpr",
})


#: Any of the words anywhere in a lowercased name (a word of the name must contain one);
#: matched on lowercased text, many times faster than re.IGNORECASE.
_ANY_WORD = re.compile("|".join(sorted(map(re.escape, LOWER_IS_BETTER_WORDS))))


def _name(task: str, metric: str) -> str:
    return metric or task


def column_direction(task: str, metric: str, directions: Mapping[str, bool]) -> bool | None:
    """The competition's direction of judge ``(task, metric)``: its column is the metric
    (the task for a judge without metric); None when the competition does not say."""
    return directions.get(_name(task, metric))


def looks_lower_is_better(name: str) -> bool:
    """Whether a word of ``name`` (split at non-letters and camelCase) says lower is better.

    >>> looks_lower_is_better("wine/MAE"), looks_lower_is_better("val_logLoss"), looks_lower_is_better("accuracy")
    (True, True, False)
    """
    if not _ANY_WORD.search(name.lower()):  # no such word inside: the common case
        return False
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name)
    return any(w.lower() in LOWER_IS_BETTER_WORDS for w in words)


def direction_warnings(undirected: Iterable[tuple[str, str, str]], how: str) -> list[str]:
    """One warning per judge ``(key, task, metric)`` whose direction nobody gave and whose
    name says lower is better; ``how`` tells how to give it (a flag or a config key;
    ``{key}`` in it is replaced by the judge's key)."""
    judges = list(undirected)
    names = [_name(task, metric) for _, task, metric in judges]
    return [
        f"judge {key!r} is ranked as higher-is-better, but its name says lower is better; "
        f"if it is, {how.format(key=key)}."
        for k in _maybe_lower(names)
        for key, task, metric in [judges[k]]
        if looks_lower_is_better(names[k])
    ]


def _maybe_lower(names: list[str]) -> list[int]:
    """Positions of the names holding one of the words anywhere: one regular-expression
    scan of all the names joined (hundreds of thousands of per-sample judges), not one
    call per name."""
    if len(names) < 1000 or any("\n" in name for name in names):
        return [k for k, name in enumerate(names) if _ANY_WORD.search(name.lower())]
    text = "\n".join(names).lower()  # the same length: str.lower keeps ASCII offsets
    if not text.isascii():
        return [k for k, name in enumerate(names) if _ANY_WORD.search(name.lower())]
    starts = np.cumsum([0] + [len(name) + 1 for name in names[:-1]])
    hits = np.searchsorted(starts, [m.start() for m in _ANY_WORD.finditer(text)], side="right") - 1
    return sorted(set(hits.tolist()))
