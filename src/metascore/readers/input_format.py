"""What an input format is: one :class:`InputFormat` record per format.

A record says how its files are read (``read``: into the shared :class:`~.rows.Rows`),
how they are recognised (``by_path``: from the path alone, at once; ``by_content``: from
what the file holds, a :class:`Verdict` on a :class:`Sniff`) and what it needs (a file or
a directory; whether it is a results export of the site). Each format's module defines its
record next to its reader; :mod:`.formats` lists the records (``REGISTRY``), and the
format names, detection, reading and the bundle check's export formats are derived from
them. Adding a format is one module with its record, and the record in ``REGISTRY``.
"""

from __future__ import annotations

import codecs
import csv
import enum
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..errors import InputError
from .rows import Rows, load_json, read_text

__all__ = ["InputFormat", "Source", "Sniff", "Verdict"]


class Verdict(enum.IntEnum):
    """What a format's ``by_content`` rule says of a file."""

    #: Only this format (the first such one wins, whatever the others say).
    SURE = 2
    #: This format; with another match, the file is ambiguous.
    MATCH = 1
    #: This format when no other matches.
    FALLBACK = 0


@dataclass(frozen=True)
class Source:
    """What a reader is handed: the path, the phase asked for (a reader of files that hold
    their phases keeps only that one; :meth:`.rows.Rows.score_table` labels the others),
    and the parsed JSON when detection parsed it already (else None)."""

    path: Path
    phase: str | None = None
    data: Any = None


class Sniff:
    """A file as the ``by_content`` rules look at it, read as far as they ask: a ``.json``
    file parsed once (:attr:`data`), another file's first line and its header cells."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.suffix = path.suffix.lower()
        #: Whether the file is JSON (its ``.json`` suffix): :attr:`data` holds it parsed.
        self.is_json = self.suffix == ".json"
        self.data: Any = load_json(path) if self.is_json else None

    @cached_property
    def first_line(self) -> str:
        """The first line after the leading blank lines, stripped, read from the start of
        the file only as far as that line goes (a 100 MB file is decoded once, by its
        reader); bytes that are not UTF-8 before its end are reported as reading the
        whole text reports them."""
        decoder = codecs.getincrementaldecoder("utf-8-sig")()
        text, size = "", 1 << 16
        with open(self.path, "rb") as fh:
            while True:
                chunk = fh.read(size)
                try:
                    text += decoder.decode(chunk, final=not chunk)
                except UnicodeDecodeError:
                    break
                start = text.lstrip()
                if "\n" in start:
                    return start.split("\n", 1)[0].strip()
                if not chunk:
                    return start.strip()
                size *= 2
        return read_text(self.path).lstrip().split("\n", 1)[0].strip()  # raises the decoding error

    @cached_property
    def header(self) -> list[str]:
        """The cells of the first line, stripped: as the csv module reads them, or split at
        the commas when it cannot (a line without quotes, or one the csv module refuses,
        such as a whitespace matrix's first row of a million cells). A file without any
        is refused: it holds no scores."""
        line = self.first_line
        cells: list[str] | None = None
        if '"' in line:
            try:
                cells = [h.strip() for h in next(csv.reader([line]), [])]
            except csv.Error:
                pass
        if cells is None:
            cells = [h.strip() for h in line.split(",")] if line else []
        if not cells or not any(cells):
            raise InputError(f"no scores found in {self.path} (the file is empty).")
        return cells


@dataclass(frozen=True)
class InputFormat:
    """One input format.

    ``read(source, rows)`` adds the scores of ``source`` to ``rows`` (None: the format
    holds no scores, and ``refusal`` says what to do with it instead). A format is
    recognised by ``by_path`` (the path alone: the first format that claims a path has it)
    or else by ``by_content`` (None when the file is not of this format). ``directory``:
    it reads a directory, not a file; ``site_export``: it is a results export downloaded
    from the site (the bundle check's ``EXPORT_FORMATS``).
    """

    name: str
    read: Callable[[Source, Rows], None] | None
    by_path: Callable[[Path], bool] | None = None
    by_content: Callable[[Sniff], Verdict | None] | None = None
    directory: bool = False
    site_export: bool = False
    refusal: str | None = None
