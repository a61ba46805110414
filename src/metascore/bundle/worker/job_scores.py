"""What a job's scoring step leaves: its scores file, read as Codabench's worker reads it and
kept as its server keeps it (:func:`read_job_scores`), and :class:`JobFailed`, the failure a
job ends with and its two texts.

``scores.json``, else ``scores.txt`` parsed as YAML; a value the platform cannot store fails
the job with the worker's message and the real reason. What a scoring program writes costs
the runner at most :data:`MAX_SCORES_SIZE` bytes read, no recursion and no alias expansion,
and the messages quote at most a few dozen characters of it.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Protocol

from ...errors import ConfigError
from ...readers.yaml_loader import load_plain_yaml
from ..files import read_job_file

__all__ = ["JobFailed", "NO_SCORES_MESSAGE", "MAX_SCORES_SIZE", "scores_file", "read_job_scores"]

NO_SCORES_MESSAGE = "Could not find scores file, did the scoring program output it?"
#: The largest scores file read (a real one holds a few numbers).
MAX_SCORES_SIZE = 1 << 20
_MAX_SCORE = Decimal(10) ** 10  # DecimalField(max_digits=20, decimal_places=10)
_NAMED_KEYS = 10     # ignored keys a note names
_HINT_TEXT = 4096    # characters of scores.txt looked at for the 'key:value' hint


class _Warned(Protocol):
    """Where the notes go (a job's result)."""

    warnings: list[str]


class JobFailed(Exception):
    """The job failed: ``details`` is the platform's message, ``reason`` the real error text."""

    def __init__(self, details: str, reason: str = "") -> None:
        super().__init__(details)
        self.details, self.reason = details, reason or details


def scores_file(output: Path) -> str | None:
    """The scores file the worker reads in ``output``: ``scores.json``, else ``scores.txt``
    (any kind of file: a link there is refused when read)."""
    for name in ("scores.json", "scores.txt"):
        if os.path.lexists(output / name):
            return name
    return None


def read_job_scores(output: Path, result: _Warned, columns: tuple[str, ...] = ()) -> dict[str, float]:
    """Read the scores as the worker does, then keep and check them as the server would.

    With ``columns`` (the leaderboard's column keys), the other keys are ignored whatever
    their value (nested objects, strings, lists), with a note in ``result``, as the server
    ignores them; without, every key is kept. Raises the job's failure for a missing or
    unreadable scores file or a kept value the platform cannot store; a boolean becomes 0/1
    with a warning in ``result``. What a scoring program writes costs the runner at most
    :data:`MAX_SCORES_SIZE` bytes read, no recursion and no alias expansion, and the
    messages quote at most a few dozen characters of it.
    """
    name = scores_file(output)
    if name is None:
        raise JobFailed(NO_SCORES_MESSAGE, f"no scores.json or scores.txt in {output.name}/")
    data = read_job_file(output / name, MAX_SCORES_SIZE + 1)
    if data is None:
        raise JobFailed(f"{name} is not a regular file",
                         f"{name} in {output.name}/ is a link or a special file; write the scores into a file")
    if len(data) > MAX_SCORES_SIZE:
        raise JobFailed(f"{name} is larger than {MAX_SCORES_SIZE >> 20} MiB",
                         f"{name}: larger than the {MAX_SCORES_SIZE >> 20} MiB the runner reads; a scores "
                         "file holds the leaderboard's numbers (Codabench keeps only its columns)")
    twice: list[str] = []  # keys given twice: Codabench's parsers keep the last value, silently
    raw = _parse_scores(name, data, twice)
    if twice:
        more = f" ({len(twice) - 1} more key(s) given twice)" if len(twice) > 1 else ""
        result.warnings.append(f"{twice[0].rstrip('.')}{more}, as on Codabench, which says nothing.")
    if not isinstance(raw, dict):
        raise JobFailed(f"{name} is not a flat object", f"{name} holds {type(raw).__name__} {_short(raw)}")
    wanted = set(columns)
    ignored = [str(k) for k in raw if wanted and str(k) not in wanted]
    if ignored:
        more = f" and {len(ignored) - _NAMED_KEYS} more" if len(ignored) > _NAMED_KEYS else ""
        result.warnings.append(
            f"{name}: key(s) {', '.join(_short(k) for k in ignored[:_NAMED_KEYS])}{more} match no "
            f"leaderboard column and are ignored by Codabench (columns: {', '.join(columns)})."
        )
    return {str(key): _score_value(name, key, value, result)
            for key, value in raw.items() if not wanted or str(key) in wanted}


def _parse_scores(name: str, data: bytes, twice: list[str]) -> Any:
    """The scores file parsed as the worker parses it: ``scores.json`` as JSON (integers as
    :class:`~decimal.Decimal`, so that none is too long to read), ``scores.txt`` as YAML
    (without aliases or deep nesting); a note for each key given twice goes into ``twice``."""
    if name == "scores.json":
        def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
            twice.extend(f"scores.json: key {_short(key)} appears twice; the last one is used"
                         for key, n in Counter(key for key, _ in items).items() if n > 1)
            return dict(items)
        try:
            return json.loads(data.decode("utf-8"), parse_int=Decimal, object_pairs_hook=pairs)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise JobFailed("scores.json is not valid JSON", f"scores.json: {str(exc)[:200]}") from None
        except RecursionError:  # the C decoder's own guard: nothing is left half-read
            raise JobFailed("scores.json is nested too deep",
                             "scores.json: nested too deep to read; it must be a flat object") from None
    text = data.decode("utf-8", errors="replace")
    try:
        raw = load_plain_yaml(text, "scores.txt", on_duplicate=twice.append)
    except ConfigError as exc:  # one line, quoting nothing of the file
        raise JobFailed(str(exc), str(exc)) from None
    if not isinstance(raw, dict):
        hint = (" Write 'key: value' with a space after the colon; 'key:value' is one string "
                "to a YAML parser" if re.search(r"^\s*[^:\s]+:\S", text[:_HINT_TEXT], re.M) else "")
        raise JobFailed("scores.txt is not a mapping (Codabench would lose these scores)",
                         f"scores.txt parses as {_short(raw)}, not as key: value pairs.{hint}")
    return raw


def _short(value: Any, size: int = 60) -> str:
    """``repr(value)`` cut to about ``size`` characters (a message quotes no more)."""
    if isinstance(value, (dict, list)) and len(value) >= 20:
        text = f"<a {type(value).__name__} of {len(value)} items>"
    else:
        text = str(value) if isinstance(value, Decimal) else repr(value)
    return text if len(text) <= size else text[:size] + "..."


def _score_value(name: str, key: Any, value: Any, result: _Warned) -> float:
    where = f"{name}: key {_short(key)}"
    if isinstance(value, bool):
        result.warnings.append(f"{where}: {value!r} is stored as {int(value)} by Codabench.")
        return float(value)
    if isinstance(value, (dict, list)):
        raise JobFailed(f"{name} must be a flat object of numbers",
                         f"{where}: {_short(value)} is not a number (nested values are not supported)")
    try:
        if isinstance(value, str):
            number = Decimal(value.strip())
        elif isinstance(value, (Decimal, int)):
            number = Decimal(value)
        else:
            number = Decimal(repr(float(value)))
    except (InvalidOperation, ValueError, TypeError):
        raise JobFailed(f"{name}: {_short(key)} is not a number",
                         f"{where}: {_short(value)} is not a number") from None
    if not number.is_finite():
        raise JobFailed(
            f"{name}: {_short(key)} is {_short(value)}",
            f"{where}: {_short(value)} is not a finite number; the worker cannot send NaN or Infinity and "
            "the platform would lose every score of this submission (write a finite value or leave "
            "the key out)")
    if abs(number) >= _MAX_SCORE:
        raise JobFailed(f"{name}: {_short(key)} is too large",
                         f"{where}: {_short(value)} does not fit Codabench's score field (abs < 1e10)")
    return float(number)
