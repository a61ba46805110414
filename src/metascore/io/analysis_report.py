"""``analysis.json`` and ``analysis.html``: what ``metascore analyze`` writes.

The HTML is one self-contained file (inline CSS and SVG, no script, no external resource)
with the comparison table, the criteria per method with error bars, the stability against
the number of judges, the rank intervals per method and, with two phases, the top-k
curves. :func:`render_comparison` renders the table and its error-bar plots alone, as an
HTML fragment another report (e.g. ``detailed_results.html``) can embed.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..analysis import AnalysisResult, MethodComparison
from ..analysis.stability import StabilityCurve
from ..analysis.topk import TopKCurves
from ..analysis.uncertainty import RankUncertainty
from .writers import write_files

__all__ = ["render_analysis", "render_comparison", "analysis_json", "write_analysis",
           "COMPARISON_CSS"]

#: Colors of the methods, in order (colour-blind-safe Tableau 10).
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")

LABELS = {
    "winner_rank": "Winner rank",
    "condorcet_rate": "Condorcet rate",
    "generalization": "Generalization",
    "stability_judges": "Stability (judges)",
    "stability_candidates": "Stability (candidates)",
}

COMPARISON_CSS = """
.ms-an { --ink:#1f2933; --muted:#66788a; --line:#d9e2ec; --head:#eef2f7; --best:#e3f6ec; }
.ms-an table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
.ms-an th, .ms-an td { padding: 6px 10px; border-bottom: 1px solid var(--line); text-align: left; }
.ms-an th { background: var(--head); font-size: 12.5px; white-space: nowrap; }
.ms-an td.num { text-align: right; white-space: nowrap; }
.ms-an td.best { background: var(--best); font-weight: 600; }
.ms-an .pm { color: var(--muted); font-size: 11.5px; margin-left: 3px; }
.ms-an .dot { display:inline-block; width:10px; height:10px; border-radius:50%; margin-right:6px; }
.ms-an .grid { display: flex; flex-wrap: wrap; gap: 14px; }
.ms-an .panel { flex: 1 1 300px; }
.ms-an .note { color: var(--muted); font-size: 12.5px; margin: 6px 0 0; }
.ms-an svg text { font: 11px -apple-system, "Segoe UI", Roboto, Arial, sans-serif; fill: #3e4c59; }
"""

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


# ---------------------------------------------------------------------- helpers
def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _num(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _svg(width: float, height: float, label: str, body: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{_e(label)}">'
            f"{body}</svg>")


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    return list(np.linspace(lo, hi, count))


def _scale(lo: float, hi: float, a: float, b: float):
    span = (hi - lo) or 1.0
    return lambda v: a + (v - lo) / span * (b - a)


def _axes_frame(x0: float, x1: float, y0: float, y1: float, xticks: Sequence[tuple[float, str]],
                yticks: Sequence[tuple[float, str]], xlabel: str, ylabel: str) -> str:
    parts = [f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="#fff" '
             'stroke="#d9e2ec"/>']
    for x, text in xticks:
        parts.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y1}" stroke="#eef2f7"/>'
                     f'<text x="{x:.1f}" y="{y1 + 14}" text-anchor="middle">{_e(text)}</text>')
    for y, text in yticks:
        parts.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x1}" y2="{y:.1f}" stroke="#eef2f7"/>'
                     f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{_e(text)}</text>')
    parts.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{y1 + 30}" text-anchor="middle">{_e(xlabel)}</text>')
    if ylabel:
        parts.append(f'<text x="12" y="{(y0 + y1) / 2:.1f}" text-anchor="middle" '
                     f'transform="rotate(-90 12 {(y0 + y1) / 2:.1f})">{_e(ylabel)}</text>')
    return "".join(parts)


def _legend(methods: Sequence[str]) -> str:
    return '<p class="note">' + " ".join(
        f'<span class="dot" style="background:{_color(i)}"></span>{_e(m)}&nbsp;&nbsp;'
        for i, m in enumerate(methods)) + "</p>"


# ---------------------------------------------------------------------- comparison
def _error_bar_chart(comp: MethodComparison, key: str) -> str:
    """Mean +- std of one criterion, one row per method."""
    methods = comp.methods
    means = [comp.table.loc[i, key] for i in range(len(methods))]
    stds = [comp.table.loc[i, f"{key}_std"] for i in range(len(methods))]
    lo_data = min([m - s for m, s in zip(means, stds) if math.isfinite(m)] + [0.0])
    lo = -1.0 if lo_data < 0 else 0.0
    width, row, left, right, top = 340, 22, 110, 16, 8
    height = top + row * len(methods) + 42
    x = _scale(lo, 1.0, left, width - right)
    body = [_axes_frame(left, width - right, top, top + row * len(methods),
                        [(x(t), f"{t:g}") for t in _ticks(lo, 1.0, 5)], [], LABELS[key], "")]
    for i, (name, m, s) in enumerate(zip(methods, means, stds)):
        y = top + row * i + row / 2
        body.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{_e(name)}</text>')
        if not math.isfinite(m):
            body.append(f'<text x="{left + 6}" y="{y + 4:.1f}">undefined</text>')
            continue
        a, b = x(max(lo, m - s)), x(min(1.0, m + s))
        c = _color(i)
        body.append(f'<line x1="{a:.1f}" y1="{y:.1f}" x2="{b:.1f}" y2="{y:.1f}" stroke="{c}" '
                    f'stroke-width="2"/><line x1="{a:.1f}" y1="{y - 5:.1f}" x2="{a:.1f}" '
                    f'y2="{y + 5:.1f}" stroke="{c}"/><line x1="{b:.1f}" y1="{y - 5:.1f}" '
                    f'x2="{b:.1f}" y2="{y + 5:.1f}" stroke="{c}"/><circle cx="{x(m):.1f}" '
                    f'cy="{y:.1f}" r="4.5" fill="{c}"><title>{_e(name)}: {_num(m)} ± '
                    f'{_num(s)}</title></circle>')
    return _svg(width, height, f"{LABELS[key]} per method", "".join(body))


def _table(comp: MethodComparison) -> str:
    from ..analysis.compare import CRITERIA

    t = comp.table
    best = {k: np.nanmax(t[k].to_numpy(dtype=float)) if np.isfinite(t[k].to_numpy(dtype=float)).any()
            else None for k in CRITERIA}
    head = "".join(f'<th class="num">{_e(LABELS[k])}</th>' for k in CRITERIA)
    rows = []
    for i, name in enumerate(comp.methods):
        cells = []
        for k in CRITERIA:
            v, s = float(t.loc[i, k]), float(t.loc[i, f"{k}_std"])
            cls = "num best" if best[k] is not None and math.isfinite(v) and v >= best[k] - 1e-12 else "num"
            cells.append(f'<td class="{cls}">{_num(v)}<span class="pm">± {_num(s, 2)}</span></td>')
        flags = "".join(f'<td>{"yes" if t.loc[i, f] else "no"}</td>'
                        for f in ("condorcet", "pareto", "order_only"))
        rows.append(f'<tr><td><span class="dot" style="background:{_color(i)}"></span>'
                    f'{_e(name)}</td>{"".join(cells)}{flags}</tr>')
    return (f'<div style="overflow-x:auto"><table><thead><tr><th>Method</th>{head}'
            '<th>Condorcet</th><th>Pareto</th><th>Order only</th></tr></thead><tbody>'
            f'{"".join(rows)}</tbody></table></div>')


def _procedure(comp: MethodComparison) -> str:
    ax, conc = comp.axes, comp.concordance
    return (f'<p class="note">{comp.n_trials} resamples for the winner rank ({_e(ax["winner_rank"])}), '
            f'the Condorcet rate ({_e(ax["condorcet_rate"])}) and the generalization '
            f'({_e(ax["generalization"])}, tested on out-of-bag judges); stabilities: '
            f'{comp.q} rankings × {comp.r} repetitions ({_e(conc["judges"])} on judges, '
            f'{_e(conc["candidates"])} on candidates). ± is the standard deviation over '
            f'resamples (over repetitions for stabilities). Seed {_e(comp.seed)}, missing '
            f'cells: {_e(comp.missing)}. Best value of each column highlighted.</p>')


def render_comparison(comp: MethodComparison) -> str:
    """The comparison table and one error-bar plot per criterion, as an HTML fragment
    (a ``<div class="ms-an">`` plus its ``<style>``) to embed in any page."""
    from ..analysis.compare import CRITERIA

    agreement = ""
    if comp.agreement is not None:
        agreement = (f'<p class="note">Kendall\'s W of the judges: <b>{_num(comp.agreement.w)}</b> '
                     f'(mean Spearman between judges {_num(comp.agreement.mean_spearman)}).</p>')
    charts = "".join(f'<div class="panel">{_error_bar_chart(comp, k)}</div>' for k in CRITERIA)
    return (f"<style>{COMPARISON_CSS}</style><div class=\"ms-an\">{agreement}{_table(comp)}"
            f"{_procedure(comp)}<h3>Criteria per method (mean ± std)</h3>"
            f'<div class="grid">{charts}</div></div>')


# ---------------------------------------------------------------------- other plots
def _line_chart(x: np.ndarray, series: Sequence[tuple[str, np.ndarray, np.ndarray | None, str]],
                xlabel: str, ylabel: str, *, ylim: tuple[float, float] = (0.0, 1.0),
                marks: Sequence[tuple[float, str, str]] = (), width: int = 520,
                height: int = 280) -> str:
    """Lines (name, y, std or None, color) over x, with vertical marks (x, label, color)."""
    left, right, top, bottom = 52, 14, 10, height - 44
    xs = _scale(float(x.min()), float(x.max()), left, width - right)
    ys = _scale(ylim[0], ylim[1], bottom, top)
    xt = np.unique(np.linspace(x.min(), x.max(), min(len(x), 8)).round())
    body = [_axes_frame(left, width - right, top, bottom, [(xs(v), f"{v:g}") for v in xt],
                        [(ys(v), f"{v:.2g}") for v in _ticks(*ylim)], xlabel, ylabel)]
    for name, y, sd, color in series:
        ok = np.isfinite(y)
        if sd is not None:
            band_hi = [f"{xs(a):.1f},{ys(min(ylim[1], b + s)):.1f}" for a, b, s in zip(x[ok], y[ok], sd[ok])]
            band_lo = [f"{xs(a):.1f},{ys(max(ylim[0], b - s)):.1f}" for a, b, s in zip(x[ok], y[ok], sd[ok])]
            body.append(f'<polygon points="{" ".join(band_hi + band_lo[::-1])}" fill="{color}" '
                        'fill-opacity="0.15" stroke="none"/>')
        pts = " ".join(f"{xs(a):.1f},{ys(min(ylim[1], max(ylim[0], b))):.1f}" for a, b in zip(x[ok], y[ok]))
        body.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2">'
                    f"<title>{_e(name)}</title></polyline>")
    for value, label, color in marks:
        body.append(f'<line x1="{xs(value):.1f}" y1="{top}" x2="{xs(value):.1f}" y2="{bottom}" '
                    f'stroke="{color}" stroke-dasharray="4 3"/><text x="{xs(value) + 4:.1f}" '
                    f'y="{top + 12}">{_e(label)}</text>')
    return _svg(width, height, ylabel, "".join(body))


def _curve_section(curve: StabilityCurve) -> str:
    series = [(m, curve.mean[m], curve.std[m], _color(i)) for i, m in enumerate(curve.methods)]
    chart = _line_chart(curve.sizes.astype(float), series, "number of judges",
                        f"stability ({curve.concordance})")
    needed = curve.judges_needed(0.9)
    text = "; ".join(f"{_e(m)}: {needed[m] if needed[m] is not None else f'more than {int(curve.sizes.max())}'}"
                     for m in curve.methods)
    return (f"<section class=\"ms-an\"><h2>How many judges are enough?</h2>{chart}{_legend(curve.methods)}"
            f'<p class="note">Judge stability when ranking on k judges drawn with replacement '
            f"({curve.q} rankings × {curve.r} repetitions per k; bands: ± std). Judges needed "
            f"for a stability of 0.9: {text}.</p></section>")


def _interval_chart(u: RankUncertainty, color: str, limit: int) -> str:
    frame = u.to_frame().head(limit)
    n = len(u.candidates)
    left, right, top, row = 120, 14, 8, 16
    width = 360
    height = top + row * len(frame) + 42
    x = _scale(1.0, float(n), left, width - right)
    body = [_axes_frame(left, width - right, top, top + row * len(frame),
                        [(x(v), f"{v:g}") for v in np.unique(np.linspace(1, n, min(n, 6)).round())],
                        [], "rank (1 = best)", "")]
    for i, rec in enumerate(frame.itertuples()):
        y = top + row * i + row / 2
        body.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">'
                    f"{_e(rec.candidate[:18])}</text>"
                    f'<line x1="{x(rec.rank_lower):.1f}" y1="{y:.1f}" x2="{x(rec.rank_upper):.1f}" '
                    f'y2="{y:.1f}" stroke="{color}" stroke-width="5" stroke-opacity="0.35" '
                    f'stroke-linecap="round"/><circle cx="{x(rec.rank):.1f}" cy="{y:.1f}" r="3.5" '
                    f'fill="{color}"><title>{_e(rec.candidate)}: rank {rec.rank:g}, interval '
                    f"[{rec.rank_lower:g}, {rec.rank_upper:g}], P(first) {rec.p_first:.2f}, "
                    f"group {rec.group}</title></circle>")
    return _svg(width, height, f"rank intervals of {u.method}", "".join(body))


def _intervals_section(intervals: dict[str, RankUncertainty], limit: int = 25) -> str:
    first = next(iter(intervals.values()))
    panels = "".join(
        f'<div class="panel"><h3>{_e(m)}</h3>{_interval_chart(u, _color(i), limit)}</div>'
        for i, (m, u) in enumerate(intervals.items()))
    shown = min(limit, len(first.candidates))
    return (f'<section class="ms-an"><h2>Rank intervals per method</h2><div class="grid">{panels}</div>'
            f'<p class="note">{int(first.level * 100)}% bootstrap rank intervals over '
            f"{first.n_trials} resamples of the judges (dot: rank on the whole matrix); the "
            f"{shown} best of {len(first.candidates)} candidates of each method.</p></section>")


def _topk_chart(c: TopKCurves) -> str:
    series = [("meta-train", c.meta_train, c.meta_train_std, "#4e79a7"),
              ("meta-test", c.meta_test, c.meta_test_std, "#e15759")]
    top = float(min(1.0, max(np.nanmax(c.meta_test + c.meta_test_std),
                             np.nanmax(c.meta_train + c.meta_train_std), 0.05)))
    return _line_chart(c.k.astype(float), series, "k (candidates kept from development)",
                       "normalized rank of the winner", ylim=(0.0, top),
                       marks=[(c.k_star, f"k* = {c.k_star:.2f}", "#59a14f"),
                              (float(c.k_best), f"best k = {c.k_best}", "#9c755f")],
                       width=420, height=250)


def _topk_section(topk: dict[str, TopKCurves]) -> str:
    panels = "".join(f'<div class="panel"><h3>{_e(m)}</h3>{_topk_chart(c)}</div>'
                     for m, c in topk.items())
    first = next(iter(topk.values()))
    return (f'<section class="ms-an"><h2>Top-k rule across the two phases</h2>'
            f'<div class="grid">{panels}</div><p class="note">The k best of the development '
            f"phase enter the final phase; the winner is their best on a random half of the "
            f"final judges (meta-train, blue) and is scored on the other half (meta-test, red). "
            f"{first.n_trials} random splits, {len(first.candidates)} shared candidates; "
            f"k* = 1 + d/n (d: discordant pairs between the phases).</p></section>")


# ---------------------------------------------------------------------- page and files
def render_analysis(result: AnalysisResult, title: str = "Which ranking method?") -> str:
    """The self-contained ``analysis.html`` page."""
    st = result.settings
    sub = (f"{st['n_candidates']} candidates × {st['n_judges']} judges · methods: "
           f"{', '.join(st['methods'])} · seed {st['seed']}")
    parts = [
        f"<header><h1>{_e(title)}</h1><p>{_e(sub)}</p></header>",
        f"<section><h2>Comparison of the ranking methods</h2>{render_comparison(result.comparison)}"
        "</section>",
        _curve_section(result.curve),
        _intervals_section(result.intervals),
    ]
    if result.topk:
        parts.append(_topk_section(result.topk))
    parts.append(f"<section><h2>Settings</h2><pre>{_e(json.dumps(st, indent=2, sort_keys=True))}"
                 "</pre></section>")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}'
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
