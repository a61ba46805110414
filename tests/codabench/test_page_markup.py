"""Issue 49, item 3: participant text is inert on the pages metascore writes to Codabench.

Codabench renders a page's content with its own ``renderMarkdownWithLatex``: code blocks and
``$...$`` formulas cut out first, then ``marked`` 3 with no sanitizer, then placeholders put
back. :func:`page_text` is the one rule for every name, phase name and rule text written
there; :func:`plain_name` the rule for the meta task's name (text on the Results tab, HTML in
the phase editor's task picker). ``tests/real_site/test_real_site_issue49_markup.py``
renders the same text with Codabench's own pages in Chromium.
"""

from __future__ import annotations

import dataclasses
import re
import string

import pytest
from hypothesis import given, settings, strategies as st

from hostile_fixtures import MARKUP
from metascore.bundle.meta.ranking_page import ranking_page
from metascore.bundle.platform.page_text import page_text, plain_name
from metascore.codabench.publish import Outcome, page_section, task_title, winner_headline
from metascore.config import parse_config

#: What page_text writes for a character CommonMark or Codabench's passes would read.
REFERENCES = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&#36;": "$", "&#37;": "%", "&#92;": "\\"}
TOKEN = re.compile(r"\\[!-/:-@\[-`{-~]|&amp;|&lt;|&gt;|&#36;|&#37;|&#92;|[^!-/:-@\[-`{-~]")
BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def shown(markdown: str) -> str:
    """What a CommonMark renderer shows of ``markdown`` when every piece of it is a
    backslash escape, one of :data:`REFERENCES` or a character that is not ASCII
    punctuation; fails on anything else (a character that could start a construct)."""
    pieces = TOKEN.findall(markdown)
    assert "".join(pieces) == markdown, f"a bare Markdown-active character in {markdown!r}"
    return "".join(REFERENCES.get(p, p[1:] if p[:1] == "\\" and len(p) == 2 else p) for p in pieces)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(string.punctuation + "\n\r\t\u2028")))
def test_page_text_escapes_every_character_markdown_or_codabench_would_read(text):
    out = page_text(text)
    assert shown(out) == BREAKS.sub(" ", text).strip()
    assert not BREAKS.search(out) and "$" not in out and "%" not in out and "<" not in out


@pytest.mark.parametrize("name", MARKUP)
def test_plain_names_hold_no_tag_and_no_line_break(name):
    out = plain_name(name)
    assert "<" not in out and ">" not in out and not BREAKS.search(out)
    assert out.replace("\u2039", "<").replace("\u203a", ">") == BREAKS.sub(" ", name).strip()


def _outcome(name: str, other: str = "bob") -> Outcome:
    return Outcome((name,), ((1, name, -1.0), (2, other, -2.0)), 2, 1, "average_rank", f"Final {name}",
                   f"only those who beat every baseline ({other}) in phase Development {name} are ranked",
                   f"1 judge (Accuracy on {name}) of phase Final {name} only")


@pytest.mark.parametrize("name", MARKUP)
def test_a_participants_name_is_text_in_every_line_of_the_page_section(name):
    """The section with the name is the section with a plain name, but for the name
    written by page_text (whose every character is inert, above), in each place."""
    link = "https://site/competitions/1/detailed_results/9/"
    section = page_section(_outcome(name, other=name), link, 9, "now")
    written = page_text(name)
    assert f"## Result: {written} wins\n" in section
    assert f"| 1 | {written} | 1 |" in section and f"**{written} wins**" in section
    assert section.replace(written, "NAME") == page_section(_outcome("NAME", other="NAME"), link, 9, "now")
    assert name not in section.replace(written, "")


@pytest.mark.parametrize("name", MARKUP)
def test_the_task_name_and_the_terminal_line_show_a_name_on_one_line_without_tags(name):
    title = task_title(_outcome(name))
    assert title.startswith(f"Final ranking: {plain_name(name)} wins (2 ranked by average rank")
    assert "<" not in title and not BREAKS.search(title)
    assert not BREAKS.search(winner_headline(_outcome(name)))


def test_a_shared_first_place_escapes_each_name():
    out = dataclasses.replace(_outcome("a"), winners=("[x](javascript:1)", "*y*"))
    assert "## Result: \\[x\\]\\(javascript\\:1\\) and \\*y\\* share first place" in page_section(out, "L", 1, "t")


@pytest.mark.parametrize("name", MARKUP)
def test_the_organizers_names_are_text_on_the_page_add_meta_writes(name):
    """Phase names, judge tasks and titles, baselines and method parameters come from the
    organizer's bundle; the page is still the Markdown it means to be."""
    page = _page_of(name)
    written = page_text(name)
    for text in (f"**Final {written}**", f"**Dev {written}**", f"'base {written}'", f"**Meta {written}**",
                 f"| task {written} | title {written} | higher | 1 |", f"| col {written} |"):
        assert text in page, text
    assert page.replace(written, "NAME") == _page_of("NAME")


def _page_of(name: str) -> str:
    config = parse_config({
        "phases": {"development": f"Dev {name}", "final": f"Final {name}"},
        "judges": [{"task": f"task {name}", "metric": "m", "title": f"title {name}", "phase": f"Final {name}"},
                   {"task": f"task {name}", "metric": "m", "title": f"title {name}", "phase": f"Dev {name}"}],
        "baselines": [f"base {name}"],
        "ranking": {"method": "average_rank", "params": {"ties": "dense"}},
    })
    return ranking_page(config, meta_phase=f"Meta {name}", columns={"n_qualified": f"col {name}"})
