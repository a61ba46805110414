"""Exceptions raised by metascore.

Every error a user can cause is a :class:`MetascoreError`, a ``ValueError`` whose message
is one sentence naming what was wrong (file, candidate, judge, key, value) and, where it
helps, what is allowed. The command line turns them into a one-line message and exit code 1.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "MetascoreError",
    "InputError",
    "ConfigError",
    "InputWarning",
    "closest_choice",
    "did_you_mean",
    "short_text",
    "report_internal_error",
    "exit_code",
]


class MetascoreError(ValueError):
    """Base class of every error metascore raises on bad input or configuration."""


class InputError(MetascoreError):
    """Input data (a score file, an export, a score matrix, votes) cannot be used."""


class ConfigError(MetascoreError):
    """A configuration value or bundle definition is invalid."""


class InputWarning(UserWarning):
    """Input was read, but part of it was skipped (e.g. PrefLib orders with count 0).

    Emitted with :func:`warnings.warn` (the library never prints); the command line shows
    each as one ``metascore: note:`` line on stderr.
    """


def closest_choice(value: str, choices: Iterable[str]) -> str | None:
    """The choice ``value`` was most likely meant to be, or ``None``.

    A choice equal to ``value`` but for case wins (``test_mae`` -> ``test_MAE``, not the
    closer-spelled ``test_R2``); otherwise the closest by spelling, case ignored.
    """
    names = list(dict.fromkeys(str(c) for c in choices))
    text = str(value)
    same = [c for c in names if c.casefold() == text.casefold() and c != text]
    if same:
        return same[0]
    folded: dict[str, str] = {}
    for c in names:
        folded.setdefault(c.casefold(), c)
    close = difflib.get_close_matches(text.casefold(), list(folded), n=1, cutoff=0.6)
    return folded[close[0]] if close else None


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest choice (:func:`closest_choice`), or ``""``."""
    close = closest_choice(value, choices)
    return f" (did you mean {close!r}?)" if close is not None else ""


def short_text(value: Any, size: int = 80) -> str:
    """``repr(value)``, cut to about ``size`` characters (a message quotes no more)."""
    text = repr(value)
    return text if len(text) <= size else text[:size] + "..."


def report_internal_error(exc: BaseException) -> None:
    """Print an unexpected exception (a bug) as one readable line, then its traceback."""
    import sys
    import traceback

    print(_printable(
        f"metascore: internal error: {type(exc).__name__}: {exc} (a bug in metascore; please "
        "report it with the traceback below)"),
        file=sys.stderr,
    )
    traceback.print_exception(exc, file=sys.stderr)


def _printable(text: str) -> str:
    """``text`` as the terminal can take it: what its encoding cannot write (a lone
    surrogate a file carried into a name) as a backslash escape."""
    import sys

    encoding = getattr(sys.stderr, "encoding", None) or "utf-8"
    try:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:
        return text.encode("ascii", "backslashreplace").decode("ascii")


def exit_code(body: Callable[[], int | None]) -> int:
    """Run an entry point's ``body`` and turn what it raises into an exit code.

    The one place where errors become exit codes (command line and both programs): a
    :class:`MetascoreError` or ``OSError`` prints ``metascore: error: <message>`` and
    gives 1; an interrupt gives 130; anything else is a bug, printed by
    :func:`report_internal_error`, and gives 1.
    """
    import sys

    try:
        return int(body() or 0)
    except (MetascoreError, OSError) as exc:
        print(_printable(f"metascore: error: {exc}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("metascore: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: one readable line first, then the traceback
        report_internal_error(exc)
        return 1
