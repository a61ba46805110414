"""Job logs streamed to disk with a cap: the first and the last part kept, the middle cut.

A program can print gigabytes; the runner never holds a log in memory. :class:`CappedLog`
writes what it receives straight into its file until half the cap, then keeps only the
last half in a bounded buffer; :meth:`CappedLog.close` writes one line saying how much was
cut, then that tail. :func:`tail` reads the end of a finished log for the summary, as text
that is safe to show: :func:`printable` writes out every control character (escape
sequences could set the terminal's title, write its clipboard, clear it) but the line
breaks and tabs. The log files themselves keep the job's bytes.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["CappedLog", "tail", "printable", "CUT_NOTE"]

CUT_NOTE = ("\n[metascore: {cut} bytes of this log were cut here; it keeps its first {head} "
            "and last {tail} bytes (change the cap with --log-limit)]\n")
_TAIL_READ = 64 * 1024
#: Control characters (C0 but tab and line feed, DEL, C1) and the bidirectional overrides
#: that reorder what a terminal shows.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class CappedLog:
    """A log file that keeps at most ``cap`` bytes of what is written to it (plus a note)."""

    def __init__(self, path: Path, cap: int) -> None:
        self.path = Path(path)
        self.head_cap = max(cap // 2, 0)
        self.tail_cap = max(cap - self.head_cap, 0)
        # rw-r--r-- at most, whatever the umask
        self.handle = os.fdopen(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644), "wb")
        self.written = 0       # bytes in the file so far (the head)
        self.total = 0         # bytes received
        self.buffer = bytearray()

    def write(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_cap - self.written
        if room > 0:
            self.handle.write(data[:room])
            self.written += min(room, len(data))
            data = data[room:]
        if data and self.tail_cap:
            self.buffer += data
            if len(self.buffer) > 2 * self.tail_cap:  # trim now and then, not on every write
                del self.buffer[: len(self.buffer) - self.tail_cap]

    @property
    def cut(self) -> int:
        return self.total - self.written - min(len(self.buffer), self.tail_cap)

    def close(self) -> None:
        if self.handle.closed:
            return
        kept = bytes(self.buffer[-self.tail_cap:]) if self.tail_cap else b""
        if self.cut > 0:
            self.handle.write(CUT_NOTE.format(cut=self.cut, head=self.head_cap, tail=self.tail_cap).encode())
        self.handle.write(kept)
        self.buffer = bytearray()
        self.handle.close()

    def append(self, text: str) -> None:
        """Add a line after the program's output (the runner's own messages), uncapped."""
        self.close()
        with open(self.path, "ab") as handle:
            if self.path.stat().st_size and not text.startswith("\n"):
                handle.write(b"\n")
            handle.write(text.encode() + (b"" if text.endswith("\n") else b"\n"))


def tail(path: Path, size: int = _TAIL_READ) -> str:
    """The last ``size`` bytes of a log as text ("" when it does not exist)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            end = handle.tell()
            handle.seek(max(0, end - size))
            data = handle.read()
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    if end > size:  # started mid-line
        text = text.split("\n", 1)[-1]
    return printable(text.replace("\r\n", "\n").replace("\r", "\n"))


def printable(text: str) -> str:
    r"""``text`` with each control character written out (``ESC`` as ``\x1b``) but line
    feeds and tabs, so that showing it cannot drive a terminal.

    >>> printable("\x1b]0;title\x07done\tok\n")
    '\\x1b]0;title\\x07done\tok\n'
    """
    return _UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                            else f"\\u{ord(m.group()):04x}", text)
