"""detailed_results.html: self-contained, escaped, and rendered by headless Chromium."""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from metascore.config import parse_config
from metascore.render.report import render_report
from metascore.leaderboard import build_leaderboard
from metascore.readers.configured import load_scores
from metascore.readers.score_table import ScoreTable
from shared_competition import CONFIG, FIXTURE
from requirements import require_chromium


def _report(**over) -> str:
    config = parse_config({**CONFIG, **over})
    table = load_scores(config.input, FIXTURE, development=config.phases.development)
    return render_report(build_leaderboard(table, config))


def _external_references(page: str) -> list[str]:
    """Anything that would make a browser fetch something (a link to a place in the page
    itself, ``#...``, fetches nothing)."""
    refs = re.findall(r"""(?:src|href|action|poster|data)\s*=\s*["']?([^"'\s>]+)""", page, re.I)
    refs += re.findall(r"url\(\s*([^)]*)\)", page, re.I)
    refs += re.findall(r"@import[^;]*", page, re.I)
    return [r for r in refs if not r.startswith("#")]


def _scripts(page: str) -> list[str]:
    """The page's script tags but its one data block (the ranking record, which no browser
    runs: issue 53) and the re-weighting panel's inline script (issue 51)."""
    tags = re.findall(r"<script\b[^>]*>", page, re.I)
    record = '<script type="application/json" id="metascore-ranking">'
    panel = '<script id="metascore-reweight">'
    assert tags.count(record) == 1 and tags.count(panel) == 1
    return [t for t in tags if t not in (record, panel)]


def test_report_is_self_contained_and_complete():
    page = _report()
    assert _external_references(page) == []
    assert _scripts(page) == []
    # the only URL is the SVG namespace, which is never fetched
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}
    for text in ("Final leaderboard: Final", "Who qualified for the final ranking",
                 "Threshold: baselines in the development phase", "Per-judge ranks",
                 "Pairwise margins", "Condorcet winner: <b>dave-105</b>",
                 "Development leaderboard: Development", "Ranking signature",
                 "Effective configuration", 'class="badge b-base">baseline',
                 "does not beat baseline &#x27;baseline_knn&#x27;", "<h2>Rank uncertainty</h2>",
                 "Bootstrap over the judges: 200 resamples of the 3 judges",
                 "<h2>Judge agreement and stability</h2>", "Kendall&#x27;s W between the judges",
                 "Stability: Kendall&#x27;s W of 50 rankings on resampled judges"):
        assert text in page, text


def test_report_escapes_names():
    config = parse_config({"phases": {"final": None}})
    frame = pd.DataFrame({
        "phase": "Development", "candidate": ["<script>alert(1)</script>", "b&b"],
        "participant": None, "task": '"t"', "metric": "", "value": [0.5, 0.4],
        "submitted_at": None, "is_baseline": False,
    })
    page = render_report(build_leaderboard(ScoreTable(frame), config))
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "b&amp;b" in page


def test_report_when_nobody_qualifies():
    page = _report(filter={"rule": "top_k", "k": 1}, selection={"final": "all"},
                   phases={"deadlines": {"Development": "2024-03-01T09:00:00"}})
    assert "no final-phase candidate qualified" in page
    assert "No candidate was ranked, so there is no heatmap." in page


def _chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [require_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--no-first-run",
         f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *args],
        capture_output=True, text=True, timeout=90,
    )


@pytest.mark.browser
def test_report_renders_in_chromium(tmp_path):
    require_chromium()
    page = tmp_path / "detailed_results.html"
    page.write_text(_report())
    url = page.as_uri()
    dom = _chromium(["--dump-dom", url], tmp_path / "profile1")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert '<table class="leaderboard">' in dom.stdout
    assert "dave-105" in dom.stdout and "<svg" in dom.stdout
    assert 'aria-label="Rank uncertainty: bootstrap rank intervals"' in dom.stdout
    shot = tmp_path / "report.png"
    run = _chromium([f"--screenshot={shot}", "--window-size=1280,2000", url],
                    tmp_path / "profile2")
    assert run.returncode == 0, run.stderr[-2000:]
    assert shot.stat().st_size > 20_000  # a real page, not a blank image
    for log in (dom.stderr, run.stderr):
        assert "net::ERR" not in log


def test_comparison_section_is_self_contained():
    page = _report(analysis={"bootstrap": 30, "compare": ["average_rank", "copeland", "schulze"]})
    assert _external_references(page) == []
    assert _scripts(page) == []
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}
    assert "<h2>Comparison of ranking methods</h2>" in page


@pytest.mark.browser
def test_comparison_renders_in_chromium(tmp_path):
    """analysis.compare: the table and its five error-bar plots are drawn (SVG in the DOM,
    a non-blank screenshot of the section's size)."""
    require_chromium()
    page = tmp_path / "detailed_results.html"
    page.write_text(_report(filter={"rule": "none"},
                            analysis={"bootstrap": 30,
                                      "compare": ["average_rank", "copeland", "schulze"]}))
    dom = _chromium(["--dump-dom", page.as_uri()], tmp_path / "profile1")
    assert dom.returncode == 0, dom.stderr[-2000:]
    section = dom.stdout[dom.stdout.index("<h2>Comparison of ranking methods</h2>"):]
    section = section[:section.index("</section>")]
    for label in ("Winner rank", "Condorcet rate", "Generalization", "Stability (judges)",
                  "Stability (candidates)"):
        assert f'aria-label="{label} per method"' in section
    assert section.count('<circle') == 15  # 3 methods x 5 criteria
    shot = tmp_path / "report.png"
    run = _chromium([f"--screenshot={shot}", "--window-size=1280,4000", page.as_uri()],
                    tmp_path / "profile2")
    assert run.returncode == 0, run.stderr[-2000:]
    assert shot.stat().st_size > 20_000
    assert "net::ERR" not in dom.stderr + run.stderr


# ---------------------------------------------------------------- long judge names
#: Measures the page once laid out and writes the figures into the DOM (test copies only:
#: the report itself has no script).
_PROBE = """<script>
(function () {
  const box = (el) => el.getBoundingClientRect();
  const board = document.querySelector('table.leaderboard');
  const value = document.querySelector('.cards .card .value');  // the winner's
  const heat = document.querySelector('svg[aria-label="Per-judge rank heatmap"]');
  const status = [...board.querySelectorAll('thead tr:first-child th')]
    .findIndex((th) => th.textContent === 'Status');  // before any task group: the column
  const out = {
    viewport: window.innerWidth,
    page: document.documentElement.scrollWidth,
    rows: [...board.querySelectorAll('tbody tr')].map((tr) => box(tr).height),
    status: [...board.querySelectorAll('tbody tr')].map((tr) => box(tr.cells[status]).right),
    judges: [...board.querySelectorAll('th.judge')].map((th) => [box(th).width, box(th).height]),
    winner: {height: box(value).height, line: parseFloat(getComputedStyle(value).lineHeight),
             scroll: value.scrollWidth, client: value.clientWidth, text: value.textContent},
    heads: [...heat.querySelectorAll('text')].filter((t) => t.querySelector('tspan'))
      .map((t) => { const b = t.getBBox(); return [t.querySelector('title').textContent,
                    t.textContent.replace(t.querySelector('title').textContent, ''),
                    b.x, b.x + b.width, b.y]; }),
  };
  const pre = document.createElement('pre');
  pre.id = 'geometry';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def _long_names_report(tmp_path: Path) -> str:
    from long_names import CONFIG as LONG_CONFIG, write_long_names

    root = write_long_names(tmp_path / "competition")
    config = parse_config(LONG_CONFIG)
    table = load_scores(config.input, root, development=config.phases.development)
    return render_report(build_leaderboard(table, config))


def test_long_judge_names_show_task_and_column_title(tmp_path):
    """The leaderboard's header names each task once over its columns and shows the
    columns' titles (from codabench.json), not the keys; the heat map's column labels are
    all different and never cut; the status comes before the judges."""
    from long_names import COLUMNS, TASKS

    page = _long_names_report(tmp_path)
    board = page[page.index('<table class="leaderboard">'):]
    board = board[:board.index("</table>")]
    for task in TASKS:
        assert board.count(f'title="task {task}">{task}</th>') == 1, task
    for _, title, _ in COLUMNS:
        assert board.count(f">{title}&nbsp;") == len(TASKS)
    assert "private_test_RMSE&nbsp;" not in board  # the key only in the tooltip
    assert 'title="GDP Nowcasting Task/private_test_RMSE: lower is better"' in board
    assert board.index("<th rowspan=\"2\">Status</th>") < board.index('class="num judge"')
    heat = page[page.index('aria-label="Per-judge rank heatmap"'):]
    heat = heat[:heat.index("</svg>")]
    labels = re.findall(r"<text [^>]*>((?:<tspan[^>]*>[^<]*</tspan>)+)<title>([^<]*)</title>", heat)
    columns = {title: " ".join(re.findall(r">([^<]*)</tspan>", spans)) for spans, title in labels
               if not title.startswith("task ")}
    assert len(columns) == len(TASKS) * len(COLUMNS)
    assert set(columns.values()) == {t for _, t, _ in COLUMNS}
    assert "\u2026" not in "".join(columns.values())


@pytest.mark.browser
@pytest.mark.parametrize("width", [1024, 1400])
def test_long_judge_names_fit_the_window(tmp_path, width):
    """At 1024 and 1400 px: the page does not overflow (the wide table scrolls inside its
    box), the status and reason of every row are on screen without scrolling, no row is
    padded with blank space, the judge headers wrap, the winner's name is whole, and the
    heat map's column labels do not overlap."""
    from long_names import WINNER

    require_chromium()
    probe = tmp_path / "probe.html"
    probe.write_text(_long_names_report(tmp_path).replace("</body>", _PROBE + "</body>"))
    dom = _chromium([f"--window-size={width},900", "--dump-dom", probe.as_uri()], tmp_path / "profile")
    assert dom.returncode == 0, dom.stderr[-2000:]
    geometry = json.loads(html.unescape(re.search(r'<pre id="geometry">([^<]*)</pre>', dom.stdout)[1]))
    assert geometry["viewport"] == width
    assert geometry["page"] <= width
    assert len(geometry["status"]) == 7 and max(geometry["status"]) <= width - 20
    assert max(geometry["rows"]) <= 90, geometry["rows"]  # three lines of reason at most
    for w, h in geometry["judges"]:
        assert w <= 11 * 14 + 21 and h <= 4 * 19 + 13, (w, h)
    winner = geometry["winner"]
    assert winner["text"] == WINNER and winner["scroll"] <= winner["client"]
    assert winner["height"] <= 2 * winner["line"] + 1  # broken at hyphens at most once
    heads = sorted(geometry["heads"], key=lambda h: (round(h[4]), h[2]))
    columns = [h for h in heads if not h[0].startswith("task ")]
    assert len(columns) == 9 and len({h[1] for h in columns}) == 3
    for a, b in zip(columns, columns[1:]):
        assert a[3] < b[2], (a, b)  # side by side, apart
    shot = tmp_path / "report.png"
    run = _chromium([f"--screenshot={shot}", f"--window-size={width},1600", probe.as_uri()],
                    tmp_path / "profile2")
    assert run.returncode == 0 and shot.stat().st_size > 20_000
