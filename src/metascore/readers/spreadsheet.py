"""CSV cells a spreadsheet shows as text: formula injection neutralised as OWASP advises.

A participant's name such as ``=HYPERLINK("http://...")``, ``@SUM(1+1)`` or
``+1+cmd|' /C calc'!A0`` at the start of a cell of a CSV file is a formula to Excel,
LibreOffice and Google Sheets, which run it when the organizer opens the file. OWASP's
advice ("CSV Injection"): a cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return gets a single quote in front, which the spreadsheet shows as text; and a
cell that holds a separator is quoted, so that no other reading of the separators (``;``
in many locales) starts a cell in the middle of it.

:func:`spreadsheet_text` is how metascore writes a text cell of every CSV file
(``leaderboard.csv``, ``metascore_long.csv``); numbers (``-0.5``) are left as they are.
:func:`unquoted_text` is how its readers take such a cell back (the quote dropped), so that
names read from a CSV that metascore or another careful tool wrote are the names; the JSON
files are never changed.
"""

from __future__ import annotations

import re

__all__ = ["spreadsheet_text", "unquoted_text", "FORMULA_STARTS"]

#: What a spreadsheet reads as the start of a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def spreadsheet_text(text: str) -> str:
    """``text`` as a CSV text cell: a quote in front of what a spreadsheet would run.

    >>> spreadsheet_text('=HYPERLINK("x")'), spreadsheet_text("-0.5"), spreadsheet_text("alice")
    ('\\'=HYPERLINK("x")', '-0.5', 'alice')
    """
    if text.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def unquoted_text(text: str) -> str:
    """A text cell as it was before :func:`spreadsheet_text` (the quote it added dropped).

    >>> unquoted_text("'=HYPERLINK(1)"), unquoted_text("'quoted'")
    ('=HYPERLINK(1)', "'quoted'")
    """
    if text.startswith("'") and text[1:].startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(text[1:]):
        return text[1:]
    return text
