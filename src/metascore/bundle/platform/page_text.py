"""Text that Codabench's pages show as it is: the one escaping rule for what metascore
writes to a competition page or a task's name.

A page (``pages:`` in v2, ``html:`` in v1, and what ``metascore codabench publish`` writes)
reaches the participant's browser through Codabench's ``renderMarkdownWithLatex``
(``src/static/js/ours/latex_markdown_html.js``): fenced code blocks and ``$...$`` formulas
are cut out of the raw text first (the formulas rendered by KaTeX), the rest goes through
``marked`` 3 with no sanitizer (raw HTML passes), the two are put back by placeholders of
the form ``%%CODE_BLOCK_0%%``, and the result becomes DOM nodes. So a name, a phase name or
a rule's text written to a page is inert only if none of these steps sees anything in it:
:func:`page_text` writes

- every ASCII punctuation character with a backslash before it (CommonMark's escape, which
  ``marked`` follows for exactly that set): no link, image, emphasis, code span, heading,
  list, table cell break or GFM autolink (``http\\://``, ``www\\.``, ``a\\@b``) can start
  in it;
- ``&``, ``<``, ``>`` as ``&amp;``, ``&lt;``, ``&gt;``: no HTML, whatever parses the line;
  ``$`` and ``%`` as ``&#36;`` and ``&#37;``: the formula and placeholder passes, which run
  before Markdown and ignore its escapes, find nothing; ``\\`` as ``&#92;``: a backslash of
  the text escapes nothing (``marked`` 3 reads an escaped backslash before ``**`` as an
  escaped ``*``). The browser shows each reference as its character;
- line breaks and other control characters as one space (the text stays in its line,
  heading or table row), and no space at either end.

:func:`plain_name` is the rule for a task's name: the Results tab shows it as text (riot's
``{ task.name }``), but the phase editor's task picker (a Semantic UI dropdown) inserts it
as HTML, so a name holds no ``<`` or ``>`` (shown as ``‹`` and ``›``) and no line break.
"""

from __future__ import annotations

import string

__all__ = ["page_text", "plain_name"]

#: Characters the steps before Markdown read (and HTML's own): numeric or named references.
_REFERENCES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "$": "&#36;", "%": "&#37;", "\\": "&#92;"}
#: Line breaks and control characters (C0, DEL, C1, the Unicode line and paragraph
#: separators): one space each.
_BREAKS = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029]
_PAGE = str.maketrans({**{c: "\\" + c for c in string.punctuation}, **_REFERENCES,
                       **{chr(c): " " for c in _BREAKS}})
_NAME = str.maketrans({"<": "\u2039", ">": "\u203a", **{chr(c): " " for c in _BREAKS}})


def page_text(text: object) -> str:
    """``text`` as Markdown that Codabench's page shows as exactly that text (see above)."""
    return str(text).translate(_PAGE).strip()


def plain_name(text: object) -> str:
    """``text`` for a task's name: no HTML tag, no line break (see above)."""
    return str(text).translate(_NAME).strip()
