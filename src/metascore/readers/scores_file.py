"""Per-submission score files: ``scores.json`` and ``scores.txt`` (what a scoring program writes).

These are the leaves of a scoring-output tree (:mod:`metascore.readers.tree`);
:func:`read_scores_file` reads one on its own.
"""

from __future__ import annotations

import math
from os import PathLike
from pathlib import Path
from typing import Any

from ..errors import InputError
from .rows import load_json, read_text

__all__ = ["SCORE_FILES", "read_scores_file"]

SCORE_FILES = ("scores.json", "scores.txt")  # scores.json wins when both exist (Codabench)


def read_scores_file(path: str | PathLike[str]) -> dict[str, float]:
    """Read one ``scores.json`` or ``scores.txt`` into ``{key: score}`` (file order).

    ``scores.json`` must be a flat object of finite numbers (numeric strings are accepted,
    as Codabench does). ``scores.txt`` holds ``key: value`` lines, with a space after the
    colon: Codabench v2 parses the file as YAML, which reads ``key:value`` as one string.
    Nested values, non-numbers, ``NaN``/``Infinity``, ``null`` and repeated keys are
    errors naming the file and key.
    """
    p = Path(path)
    if p.suffix.lower() == ".json":
        return _read_scores_json(p)
    if p.suffix.lower() == ".txt":
        return _read_scores_txt(p)
    raise InputError(f"{p}: expected a scores.json or scores.txt file.")


class _NonFinite(str):
    """Marks a JSON ``NaN``/``Infinity`` constant so the error can name its key."""


def _unique_pairs(path: Path) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise InputError(f"{path}: key {key!r} is given twice.")
            out[key] = value
        return out

    return hook


def _read_scores_json(path: Path) -> dict[str, float]:
    data = load_json(path, parse_constant=_NonFinite, object_pairs_hook=_unique_pairs(path))
    if not isinstance(data, dict):
        raise InputError(
            f"{path}: scores.json must be a flat object {{\"key\": number}}; got "
            f"{type(data).__name__}."
        )
    scores: dict[str, float] = {}
    for key, value in data.items():
        at = f"{path}, key {key!r}"
        if isinstance(value, _NonFinite):
            raise InputError(
                f"{at}: {value} is not a finite number; Codabench drops the whole result on "
                "NaN/Infinity, so omit the key instead."
            )
        if isinstance(value, (dict, list)):
            raise InputError(
                f"{at}: holds a nested {'object' if isinstance(value, dict) else 'list'}; "
                "scores.json must be a flat object of numbers."
            )
        if value is None:
            raise InputError(f"{at}: null is not a score; omit the key when there is no score.")
        if isinstance(value, bool):
            raise InputError(f"{at}: {value!r} is a boolean, not a score.")
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                raise InputError(f"{at}: {value!r} is not a number.") from None
        else:
            number = float(value)
        if not math.isfinite(number):
            raise InputError(
                f"{at}: {value!r} is not a finite number; Codabench drops the whole result on "
                "NaN/Infinity, so omit the key instead."
            )
        scores[str(key)] = number
    return scores


def _read_scores_txt(path: Path) -> dict[str, float]:
    scores: dict[str, float] = {}
    for n, raw in enumerate(read_text(path).splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#") or line in ("---", "..."):
            continue
        at = f"{path}, line {n}"
        key, sep, rest = line.partition(":")
        if not sep:
            raise InputError(f"{at}: {line!r} is not a 'key: value' line.")
        key = key.strip().strip("'\"")
        if rest and not rest[0].isspace():
            raise InputError(
                f"{at}: {line!r} has no space after the colon; Codabench v2 parses scores.txt "
                f"as YAML and would read the whole line as one string (the score shows as "
                f"n/a), so write 'key: value' ({key}: {rest.strip()})."
            )
        text = rest.split(" #", 1)[0].strip().strip("'\"")
        if not key:
            raise InputError(f"{at}: {line!r} has no key before the colon.")
        if not text:
            raise InputError(f"{at}: key {key!r} has no value.")
        try:
            number = float(text)
        except ValueError:
            number = math.nan if text.lower() in (".nan", ".inf", "-.inf", "+.inf") else None
            if number is None:
                raise InputError(f"{at}: key {key!r} has value {text!r}, which is not a number.") from None
        if not math.isfinite(number):
            raise InputError(
                f"{at}: key {key!r} has value {text!r}, which is not a finite number; omit "
                "the key instead."
            )
        if key in scores:
            raise InputError(f"{at}: key {key!r} is given twice.")
        scores[key] = number
    return scores
