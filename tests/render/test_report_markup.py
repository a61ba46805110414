"""Issue 49, item 3: ``detailed_results.html`` shows participant and organizer text as text.

Codabench opens the file in an iframe (``competition-detailed-results``: ``<iframe
src="{detailed_result}">``, the storage URL of the scoring output), so the page is HTML
that nothing sanitizes: every name, phase name, task, column title, reason and message is
escaped, in text, in attributes (``title``) and in the inline SVG. Checked by parsing the
page: the same tags as with plain names, no attribute a name could add, each name in the
text exactly.
"""

from __future__ import annotations

import csv
import io
from html.parser import HTMLParser

import pytest

from hostile_fixtures import MARKUP
from metascore.config import parse_config
from metascore.leaderboard import build_leaderboard
from metascore.readers.formats import read_score_table
from metascore.render.report import render_report


class Page(HTMLParser):
    """The tags, attributes and text of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.scripts: list[dict[str, str | None]] = []
        self.attrs: set[str] = set()
        self.values: list[tuple[str, str]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag == "script":
            self.scripts.append(dict(attrs))
        for key, value in attrs:
            self.attrs.add(key)
            self.values.append((key, value or ""))

    def handle_data(self, data):
        self.text.append(data)


def parsed(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def _report(tmp_path, names: list[str], tag: str) -> str:
    """The report of a two-phase competition whose participants, phases, task, judge title
    and baseline are named after ``names``."""
    dev, final, task = f"Dev {names[0]}", f"Final {names[-1]}", f"task {names[1 % len(names)]}"
    buf = io.StringIO()
    out = csv.writer(buf)
    out.writerow(["phase", "candidate", "participant", "task", "metric", "value", "is_baseline"])
    people = [(f"base {names[0]}", 0.5, True)] + [(n, 0.9 - i / 100, False) for i, n in enumerate(names)]
    for phase in (dev, final):
        for i, (who, score, base) in enumerate(people):
            out.writerow([phase, f"{who}-{i}", who, task, "acc", score if phase == dev else 1 - score,
                          "true" if base else "false"])
    path = tmp_path / f"{tag}.csv"
    path.write_text(buf.getvalue())
    config = parse_config({
        "input": {"path": path.name}, "phases": {"development": dev, "final": final},
        "judges": [{"task": task, "metric": "acc", "title": f"title {names[-1]}"}],
        "baselines": [f"base {names[0]}"], "output": {"title": f"Title {names[0]}"},
        "analysis": {"bootstrap": 20},
    })
    return render_report(build_leaderboard(read_score_table(path), config))


def test_every_name_on_the_ranking_page_is_text(tmp_path):
    plain = parsed(_report(tmp_path, [f"name_{i}/x.y" for i in range(len(MARKUP))], "plain"))
    page = parsed(_report(tmp_path, list(MARKUP), "hostile"))
    assert page.tags == plain.tags and page.attrs == plain.attrs
    assert not {"a", "img", "iframe", "object"} & page.tags
    # two script elements: the re-weighting panel's, static (issue 51), and the ranking's
    # record (issue 53), data a browser never runs
    assert page.scripts == plain.scripts == [{"id": "metascore-reweight"},
                                             {"type": "application/json", "id": "metascore-ranking"}]
    # a name is in a title, or names the judge of a re-weighting input (read as text)
    assert {key for key, value in page.values if any(n in value for n in MARKUP)} <= {"title", "data-judge"}
    text = "\n".join(page.text)
    for name in MARKUP:
        assert name in text, name


@pytest.mark.parametrize("name", MARKUP)
def test_a_name_in_an_attribute_stays_in_it(tmp_path, name):
    """Where a name goes into a ``title`` attribute (the heat map's cells, the margins),
    it is that attribute's whole value, never a new attribute."""
    page = parsed(_report(tmp_path, [name, "x"], "one"))
    assert not [a for a in page.attrs if a.startswith("on") or a in ("src", "href", "style")]
