"""``analysis.json`` and ``analysis.html``: what ``metascore analyze`` writes.

The HTML is one self-contained file (inline CSS and SVG, no script, no external resource)
with the comparison table, the criteria per method with error bars, the stability against
the number of judges, the rank intervals per method and, with two phases, the top-k
curves. :func:`render_comparison` renders the table and its error-bar plots alone, as an
HTML fragment another report (e.g. ``detailed_results.html``) can embed; it lives in
:mod:`metascore.render.comparison_html` and is re-exported here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..analysis import AnalysisResult
from ..analysis.stability import StabilityCurve
from ..analysis.topk import TopKCurves
from ..analysis.uncertainty import RankUncertainty
from .comparison_html import COMPARISON_CSS, render_comparison
from .svg_charts import axes_frame, esc, even_ticks, legend, linear_scale, method_color, svg_doc
from .publish import write_files

__all__ = ["render_analysis", "analysis_json", "write_analysis",]

_PAGE_CSS = """
body { margin:0; background:#f5f7fa; color:#1f2933;
  font: 14px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 20px 48px; }
header h1 { font-size: 24px; margin: 0 0 4px; }
header p { margin: 0; color: #66788a; }
section { background: #fff; border: 1px solid #d9e2ec; border-radius: 10px;
  padding: 18px 20px; margin-top: 18px; }
h2 { font-size: 17px; margin: 0 0 10px; }
h3 { font-size: 13px; margin: 4px 0 6px; color: #66788a; }
pre { background:#f5f7fa; padding:10px; border-radius:8px; overflow-x:auto; font-size:12px; }
"""


# ---------------------------------------------------------------------- plots
def _line_chart(x: np.ndarray, series: Sequence[tuple[str, np.ndarray, np.ndarray | None, str]],
                xlabel: str, ylabel: str, *, ylim: tuple[float, float] = (0.0, 1.0),
                marks: Sequence[tuple[float, str, str]] = (), width: int = 520,
                height: int = 280) -> str:
    """Lines (name, y, std or None, color) over x, with vertical marks (x, label, color)."""
    left, right, top, bottom = 52, 14, 10, height - 44
    xs = linear_scale(float(x.min()), float(x.max()), left, width - right)
    ys = linear_scale(ylim[0], ylim[1], bottom, top)
    xt = np.unique(np.linspace(x.min(), x.max(), min(len(x), 8)).round())
    body = [axes_frame(left, width - right, top, bottom, [(xs(v), f"{v:g}") for v in xt],
                        [(ys(v), f"{v:.2g}") for v in even_ticks(*ylim)], xlabel, ylabel)]
    for name, y, sd, color in series:
        ok = np.isfinite(y)
        if sd is not None:
            band_hi = [f"{xs(a):.1f},{ys(min(ylim[1], b + s)):.1f}" for a, b, s in zip(x[ok], y[ok], sd[ok])]
            band_lo = [f"{xs(a):.1f},{ys(max(ylim[0], b - s)):.1f}" for a, b, s in zip(x[ok], y[ok], sd[ok])]
            body.append(f'<polygon points="{" ".join(band_hi + band_lo[::-1])}" fill="{color}" '
                        'fill-opacity="0.15" stroke="none"/>')
        pts = " ".join(f"{xs(a):.1f},{ys(min(ylim[1], max(ylim[0], b))):.1f}" for a, b in zip(x[ok], y[ok]))
        body.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2">'
                    f"<title>{esc(name)}</title></polyline>")
    for value, label, color in marks:
        body.append(f'<line x1="{xs(value):.1f}" y1="{top}" x2="{xs(value):.1f}" y2="{bottom}" '
                    f'stroke="{color}" stroke-dasharray="4 3"/><text x="{xs(value) + 4:.1f}" '
                    f'y="{top + 12}">{esc(label)}</text>')
    return svg_doc(width, height, ylabel, "".join(body))


def _curve_section(curve: StabilityCurve) -> str:
    series = [(m, curve.mean[m], curve.std[m], method_color(i)) for i, m in enumerate(curve.methods)]
    # Kendall's W is a proportion: [0, 1]; a Spearman correlation may be negative
    low = min((float(np.nanmin(y - sd)) for _, y, sd, _ in series if np.isfinite(y).any()), default=0.0)
    ylim = (-1.0, 1.0) if curve.concordance != "kendall_w" and low < 0 else (0.0, 1.0)
    chart = _line_chart(curve.sizes.astype(float), series, "number of judges",
                        f"stability ({curve.concordance})", ylim=ylim)
    needed = curve.judges_needed(0.9)
    text = "; ".join(f"{esc(m)}: {needed[m] if needed[m] is not None else f'more than {int(curve.sizes.max())}'}"
                     for m in curve.methods)
    return (f"<section class=\"ms-an\"><h2>How many judges are enough?</h2>{chart}{legend(curve.methods)}"
            f'<p class="note">Judge stability when ranking on k judges drawn with replacement '
            f"({curve.q} rankings × {curve.r} repetitions per k; bands: ± std). Judges needed "
            f"for a stability of 0.9: {text}.</p></section>")


def _interval_chart(u: RankUncertainty, color: str, limit: int) -> str:
    frame = u.to_frame().head(limit)
    n = len(u.candidates)
    left, right, top, row = 120, 14, 8, 16
    width = 360
    height = top + row * len(frame) + 42
    x = linear_scale(1.0, float(n), left, width - right)
    body = [axes_frame(left, width - right, top, top + row * len(frame),
                        [(x(v), f"{v:g}") for v in np.unique(np.linspace(1, n, min(n, 6)).round())],
                        [], "rank (1 = best)", "")]
    for i, rec in enumerate(frame.itertuples()):
        y = top + row * i + row / 2
        body.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">'
                    f"{esc(rec.candidate[:18])}</text>"
                    f'<line x1="{x(rec.rank_lower):.1f}" y1="{y:.1f}" x2="{x(rec.rank_upper):.1f}" '
                    f'y2="{y:.1f}" stroke="{color}" stroke-width="5" stroke-opacity="0.35" '
                    f'stroke-linecap="round"/><circle cx="{x(rec.rank):.1f}" cy="{y:.1f}" r="3.5" '
                    f'fill="{color}"><title>{esc(rec.candidate)}: rank {rec.rank:g}, interval '
                    f"[{rec.rank_lower:g}, {rec.rank_upper:g}], P(first) {rec.p_first:.2f}, "
                    f"group {rec.group}</title></circle>")
    return svg_doc(width, height, f"rank intervals of {u.method}", "".join(body))


def _intervals_section(intervals: dict[str, RankUncertainty], limit: int = 25) -> str:
    first = next(iter(intervals.values()))
    panels = "".join(
        f'<div class="panel"><h3>{esc(m)}</h3>{_interval_chart(u, method_color(i), limit)}</div>'
        for i, (m, u) in enumerate(intervals.items()))
    shown = min(limit, len(first.candidates))
    return (f'<section class="ms-an"><h2>Rank intervals per method</h2><div class="grid">{panels}</div>'
            f'<p class="note">{int(first.level * 100)}% bootstrap rank intervals over '
            f"{first.n_trials} resamples of the judges (dot: rank on the whole matrix); the "
            f"{shown} best of {len(first.candidates)} candidates of each method.</p></section>")


def _topk_chart(c: TopKCurves) -> str:
    series = [("meta-train", c.meta_train, c.meta_train_std, "#4e79a7"),
              ("meta-test", c.meta_test, c.meta_test_std, "#e15759")]
    return _line_chart(c.k.astype(float), series, "k (candidates kept from development)",
                       "normalized rank of the winner", ylim=(0.0, 1.0),
                       marks=[(c.k_star, f"k* = {c.k_star:.2f}", "#59a14f"),
                              (float(c.k_best), f"best k = {c.k_best}", "#9c755f")],
                       width=420, height=250)


def _topk_section(topk: dict[str, TopKCurves]) -> str:
    panels = "".join(f'<div class="panel"><h3>{esc(m)}</h3>{_topk_chart(c)}</div>'
                     for m, c in topk.items())
    first = next(iter(topk.values()))
    paper = first.split == "paper"
    if first.mode == "split_all":
        title, how = ("Top-k rule across three phases cut from the judges",
                      "Each trial cuts the judges into a development, a final (meta-train, "
                      "blue) and a post-challenge phase (meta-test, red)"
                      + (" from as many judges drawn with replacement (METAGEN 2022's split: "
                         "the phases share judges)" if paper else ", each judge in one") + ". ")
    else:
        title, how = ("Top-k rule across the two phases",
                      "The k best of the development phase enter the final phase; the winner "
                      "is their best on a random half of the final judges (meta-train, blue) "
                      "and is scored on the other half (meta-test, red)"
                      + (", the halves cut from judges drawn with replacement" if paper else "")
                      + ". ")
    bands = "; ".join(f"{esc(m)}: best k {c.k_best}, band {c.k_band[0]}-{c.k_band[1]}, "
                      f"d/n {c.d_mean / len(c.candidates):.2f}" for m, c in topk.items())
    return (f'<section class="ms-an"><h2>{title}</h2>'
            f'<div class="grid">{panels}</div><p class="note">{how}'
            f"{first.n_trials} random splits, {len(first.candidates)} candidates; "
            f"k* = 1 + d/n (d: discordant pairs between the development and final rankings); "
            f"the band: where the best k of another run of as many splits falls, 95% of the "
            f"time ({bands}).</p></section>")


# ---------------------------------------------------------------------- page and files
def render_analysis(result: AnalysisResult, title: str = "Which ranking method?") -> str:
    """The self-contained ``analysis.html`` page."""
    st = result.settings
    sub = (f"{st['n_candidates']} candidates × {st['n_judges']} judges · methods: "
           f"{', '.join(st['methods'])} · seed {st['seed']}")
    table = (render_comparison(result.comparison) if result.comparison is not None
             else f'<p>Not computed: {esc(st.get("comparison_note", ""))}</p>')
    parts = [
        f"<header><h1>{esc(title)}</h1><p>{esc(sub)}</p></header>",
        f"<section><h2>Comparison of the ranking methods</h2>{table}</section>",
        _curve_section(result.curve),
        _intervals_section(result.intervals),
    ]
    if result.topk:
        parts.append(_topk_section(result.topk))
    if st.get("notes"):
        items = "".join(f"<li>{esc(note)}</li>" for note in st["notes"])
        parts.append(f"<section><h2>Notes</h2><ul>{items}</ul></section>")
    parts.append(f"<section><h2>Settings</h2><pre>{esc(json.dumps(st, indent=2, sort_keys=True))}"
                 "</pre></section>")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}'
            f'</title><meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<style>{_PAGE_CSS}{COMPARISON_CSS}</style></head><body><main>"
            f'{"".join(parts)}</main></body></html>\n')


def analysis_json(result: AnalysisResult) -> str:
    """``analysis.json``: every number of the analysis (NaN as null)."""
    return json.dumps(result.to_dict(), indent=2, allow_nan=False) + "\n"


def write_analysis(output_dir: str | Path, result: AnalysisResult) -> list[Path]:
    """Write ``analysis.json`` and ``analysis.html`` (both or neither)."""
    return write_files(output_dir, {"analysis.json": analysis_json(result),
                                    "analysis.html": render_analysis(result)})
