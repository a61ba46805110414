"""detailed_results.html: self-contained, escaped, and rendered by headless Chromium."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from metascore.config import parse_config
from metascore.io.report import render_report
from metascore.leaderboard import build_leaderboard
from metascore.program import load_scores
from shared_competition import CONFIG, FIXTURE
from requirements import require_chromium


def _report(**over) -> str:
    config = parse_config({**CONFIG, **over})
    frame, source = load_scores(config, FIXTURE)
    return render_report(build_leaderboard(frame, config, source=source))


def _external_references(page: str) -> list[str]:
    """Anything that would make a browser fetch something."""
    refs = re.findall(r"""(?:src|href|action|poster|data)\s*=\s*["']?([^"'\s>]+)""", page, re.I)
    refs += re.findall(r"url\(\s*([^)]*)\)", page, re.I)
    refs += re.findall(r"@import[^;]*", page, re.I)
    return refs


def test_report_is_self_contained_and_complete():
    page = _report()
    assert _external_references(page) == []
    assert "<script" not in page.lower()
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
    page = render_report(build_leaderboard(frame, config))
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "b&amp;b" in page


def test_report_when_nobody_qualifies():
    page = _report(filter={"rule": "top_k", "k": 1}, selection={"final": "all"},
                   phases={"deadlines": {"Development": "2024-03-01T09:00:00"}})
    assert "no final-phase candidate qualified" in page
    assert "No ranked candidates, so no heatmap." in page


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
    assert "<script" not in page.lower()
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
