"""Format ``preflib``: votes, not scores, in PrefLib 2022 ``.soc/.soi/.toc/.toi`` files.

The file starts with ``# KEY: value`` header lines, among them
``# ALTERNATIVE NAME <i>: <name>``, then one line per distinct order,
``<count>: <a>,<b>,{<c>,<d>},<e>`` (best first; braces group tied alternatives). Orders
with count 0 (PrefLib lists every possible order in some files, e.g. the Netflix data)
carry no vote: they are skipped, with one :class:`~metascore.errors.InputWarning`.
"""

from __future__ import annotations

import math
import re
import warnings
from os import PathLike
from pathlib import Path

from ..errors import InputError, InputWarning
from .input_format import InputFormat
from .rows import read_text

__all__ = ["PREFLIB_FORMAT", "PREFLIB_SUFFIXES", "read_votes"]

PREFLIB_SUFFIXES = (".soc", ".soi", ".toc", ".toi")
_PREFLIB_ORDER = re.compile(r"\s*(?:\d+|\{\s*\d+(?:\s*,\s*\d+)*\s*\})(?:\s*,\s*(?:\d+|\{\s*\d+(?:\s*,\s*\d+)*\s*\}))*\s*")


def read_votes(path: str | PathLike[str]) -> tuple[list[list[list[str]]], list[float], list[str]]:
    """Read a PrefLib ``.soc``/``.soi``/``.toc``/``.toi`` file (PrefLib 2022 layout).

    Order lines with count 0 are skipped; when there are any, one
    :class:`~metascore.errors.InputWarning` says how many (``warnings.warn``: the library
    never prints). A negative, fractional or non-numeric count is an error.

    Returns
    -------
    votes : list of votes
        Each vote is a list of tiers best first; a tier is a list of candidate names.
    weights : list of float
        The count of each vote.
    candidates : list of str
        Every alternative's name, in alternative-number order (``str(i)`` when unnamed).
    """
    p = Path(path)
    header, names, orders, zero_lines = _read_lines(p, read_text(p))
    labels = _alternatives(p, header, names)
    votes: list[list[list[str]]] = []
    weights: list[float] = []
    for n, weight, order in orders:
        vote = _preflib_order(order, len(labels), labels, f"{p}, line {n}")
        if vote and weight > 0:
            votes.append(vote)
            weights.append(weight)
    if not votes:
        raise InputError(f"no votes found in {p}.")
    _check_totals(p, header, orders, zero_lines)
    if zero_lines:
        lines = f"line {zero_lines[0]}" + (f" and {len(zero_lines) - 1} more" if len(zero_lines) > 1 else "")
        warnings.warn(
            f"{p}: ignored {len(zero_lines)} order(s) with vote count 0 ({lines}); they carry no vote.",
            InputWarning,
            stacklevel=2,
        )
    return votes, weights, labels


#: One order line: its line number, its count and its order text.
_Order = tuple[int, float, str]


def _read_lines(p: Path, text: str) -> tuple[dict[str, tuple[int, str]], dict[int, str],
                                              list[_Order], list[int]]:
    """The file's header (``{KEY: (line, value)}``), the alternatives' names by number,
    its order lines, and the lines whose count is 0."""
    header: dict[str, tuple[int, str]] = {}
    names: dict[int, str] = {}
    orders: list[_Order] = []
    zero_lines: list[int] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            key, sep, value = line[1:].partition(":")
            if not sep:
                continue  # a free comment
            key = key.strip().upper()
            match = re.fullmatch(r"ALTERNATIVE NAME (\d+)", key)
            if match:
                names[int(match.group(1))] = value.strip()
            else:
                header[key] = (n, value.strip())
            continue
        count, sep, order = line.partition(":")
        if not sep:
            raise InputError(
                f"{p}, line {n}: {line!r} is not a '<count>: <order>' line; only the "
                "PrefLib 2022 layout ('# KEY: value' headers, then 'count: 1,2,{3,4}') is read."
            )
        weight = _count(count, f"{p}, line {n}")
        if weight == 0:
            zero_lines.append(n)
        orders.append((n, weight, order))
    return header, names, orders, zero_lines


def _alternatives(p: Path, header: dict[str, tuple[int, str]], names: dict[int, str]
                  ) -> list[str]:
    """Every alternative's name in number order (``str(i)`` when unnamed), as many as
    NUMBER ALTERNATIVES says (else the highest named)."""
    n_alt = _header_int(header, "NUMBER ALTERNATIVES", p)
    if n_alt is None:
        n_alt = max(names, default=0)
    bad = [i for i in names if not 1 <= i <= n_alt]
    if bad:
        raise InputError(
            f"{p}: ALTERNATIVE NAME {bad[0]} is outside 1..{n_alt} (NUMBER ALTERNATIVES)."
        )
    labels = [names.get(i, str(i)) for i in range(1, n_alt + 1)]
    if len(set(labels)) != len(labels):
        dup = next(x for x in labels if labels.count(x) > 1)
        raise InputError(f"{p}: alternative name {dup!r} is given to two alternatives.")
    return labels


def _check_totals(p: Path, header: dict[str, tuple[int, str]], orders: list[_Order],
                  zero_lines: list[int]) -> None:
    """Refuse a file whose counts or order lines disagree with its header (truncated)."""
    declared = _header_int(header, "NUMBER VOTERS", p)
    if declared is not None and not math.isclose(sum(w for _, w, _ in orders), declared):
        raise InputError(
            f"{p}: the vote counts add up to {sum(w for _, w, _ in orders):g} but the header "
            f"says NUMBER VOTERS: {declared} (is the file truncated?)."
        )
    declared = _header_int(header, "NUMBER UNIQUE ORDERS", p)
    # PrefLib's own tools count the zero-count lines among the unique orders; accept both
    if declared is not None and declared not in (len(orders), len(orders) - len(zero_lines)):
        raise InputError(
            f"{p}: the file has {len(orders)} order lines but the header says "
            f"NUMBER UNIQUE ORDERS: {declared} (is the file truncated?)."
        )


def _count(text: str, at: str) -> float:
    """A vote count: a whole number >= 0 (0 = an order nobody cast)."""
    try:
        count = float(text.strip())
    except ValueError:
        raise InputError(f"{at}: vote count {text.strip()!r} is not a number.") from None
    if not count.is_integer() or count < 0:
        raise InputError(
            f"{at}: vote count {text.strip()!r} must be a whole number >= 0 (the number of "
            "voters who cast this order)."
        )
    return count


def _header_int(header: dict[str, tuple[int, str]], key: str, path: Path) -> int | None:
    if key not in header:
        return None
    n, text = header[key]
    try:
        return int(text)
    except ValueError:
        raise InputError(f"{path}, line {n}: {key} {text!r} is not a whole number.") from None


def _preflib_order(order: str, n_alt: int, labels: list[str], at: str) -> list[list[str]]:
    if not order.strip():
        return []
    if not _PREFLIB_ORDER.fullmatch(order):
        raise InputError(
            f"{at}: order {order.strip()!r} is not a list of alternative numbers like 1,2,{{3,4}},5."
        )
    vote: list[list[str]] = []
    seen: set[int] = set()
    for tier in re.findall(r"\{[^}]*\}|\d+", order):
        tier_ids = [int(x) for x in re.findall(r"\d+", tier)]
        for i in tier_ids:
            if not 1 <= i <= n_alt:
                raise InputError(f"{at}: alternative {i} is outside 1..{n_alt}.")
            if i in seen:
                raise InputError(f"{at}: alternative {i} appears twice in one order.")
            seen.add(i)
        vote.append([labels[i - 1] for i in tier_ids])
    return vote


#: The record of format ``preflib`` (:mod:`.input_format`): votes, not scores, by suffix.
PREFLIB_FORMAT = InputFormat(
    "preflib", None, by_path=lambda p: p.suffix.lower() in PREFLIB_SUFFIXES,
    refusal=("holds votes (PrefLib), not scores, which neither a configuration's input nor "
             "`metascore analyze` reads: rank it with `metascore rank FILE --method copeland` "
             "(or another pairwise method), or in Python with read_votes() and "
             "PairwiseCounts.from_votes()"))
