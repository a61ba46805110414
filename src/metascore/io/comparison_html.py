"""The comparison of ranking methods as an HTML fragment: table and error-bar plots.

:func:`render_comparison` renders a :class:`~metascore.analysis.MethodComparison` (thesis
table 5.3: each criterion's mean and spread per method, the declared properties) as a
self-contained ``<style>`` + ``<div class="ms-an">`` fragment (inline SVG, no script, no
external resource). ``analysis.html`` (:mod:`metascore.io.analysis_report`) and
``detailed_results.html`` (:mod:`metascore.io.report`, with ``analysis.compare``) embed it.
"""

from __future__ import annotations

import math

import numpy as np

from ..analysis import MethodComparison
from ..analysis.compare import CRITERIA
from .svg_charts import axes_frame, esc, even_ticks, fmt_num, linear_scale, method_color, svg_doc

__all__ = ["render_comparison", "COMPARISON_CSS", "LABELS"]

#: The criteria's display names.
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
.ms-an td.method { white-space: nowrap; }
.ms-an .current { font-size: 11px; font-weight: 600; color: #1f7a4d; background: #e3f6ec;
  border-radius: 999px; padding: 1px 7px; margin-left: 6px; white-space: nowrap; }
.ms-an .note { color: var(--muted); font-size: 12.5px; margin: 6px 0 0; }
.ms-an svg text { font: 11px -apple-system, "Segoe UI", Roboto, Arial, sans-serif; fill: #3e4c59; }
"""


def _error_bar_chart(comp: MethodComparison, key: str) -> str:
    """Mean +- std of one criterion, one row per method."""
    methods = comp.methods
    means = [comp.table.loc[i, key] for i in range(len(methods))]
    stds = [comp.table.loc[i, f"{key}_std"] for i in range(len(methods))]
    lo_data = min([m - s for m, s in zip(means, stds) if math.isfinite(m)] + [0.0])
    lo = -1.0 if lo_data < 0 else 0.0
    width, row, left, right, top = 340, 22, 110, 16, 8
    height = top + row * len(methods) + 42
    x = linear_scale(lo, 1.0, left, width - right)
    body = [axes_frame(left, width - right, top, top + row * len(methods),
                       [(x(t), f"{t:g}") for t in even_ticks(lo, 1.0, 5)], [], LABELS[key], "")]
    for i, (name, m, s) in enumerate(zip(methods, means, stds)):
        y = top + row * i + row / 2
        body.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{esc(name)}</text>')
        if not math.isfinite(m):
            body.append(f'<text x="{left + 6}" y="{y + 4:.1f}">undefined</text>')
            continue
        a, b = x(max(lo, m - s)), x(min(1.0, m + s))
        c = method_color(i)
        body.append(f'<line x1="{a:.1f}" y1="{y:.1f}" x2="{b:.1f}" y2="{y:.1f}" stroke="{c}" '
                    f'stroke-width="2"/><line x1="{a:.1f}" y1="{y - 5:.1f}" x2="{a:.1f}" '
                    f'y2="{y + 5:.1f}" stroke="{c}"/><line x1="{b:.1f}" y1="{y - 5:.1f}" '
                    f'x2="{b:.1f}" y2="{y + 5:.1f}" stroke="{c}"/><circle cx="{x(m):.1f}" '
                    f'cy="{y:.1f}" r="4.5" fill="{c}"><title>{esc(name)}: {fmt_num(m)} ± '
                    f'{fmt_num(s)}</title></circle>')
    return svg_doc(width, height, f"{LABELS[key]} per method", "".join(body))


def _table(comp: MethodComparison, current: str | None) -> str:
    t = comp.table
    best = {k: np.nanmax(t[k].to_numpy(dtype=float)) if np.isfinite(t[k].to_numpy(dtype=float)).any()
            else None for k in CRITERIA}
    head = "".join(f'<th class="num">{esc(LABELS[k])}</th>' for k in CRITERIA)
    mark = '<span class="current" title="the method that ranks this leaderboard">in use</span>'
    rows = []
    for i, name in enumerate(comp.methods):
        cells = []
        for k in CRITERIA:
            v, s = float(t.loc[i, k]), float(t.loc[i, f"{k}_std"])
            cls = "num best" if best[k] is not None and math.isfinite(v) and v >= best[k] - 1e-12 else "num"
            cells.append(f'<td class="{cls}">{fmt_num(v)}<span class="pm">± {fmt_num(s, 2)}</span></td>')
        flags = "".join(f'<td>{"yes" if t.loc[i, f] else "no"}</td>'
                        for f in ("condorcet", "pareto", "order_only"))
        rows.append(f'<tr><td class="method"><span class="dot" '
                    f'style="background:{method_color(i)}"></span>{esc(name)}{mark if name == current else ""}</td>{"".join(cells)}{flags}</tr>')
    return (f'<div style="overflow-x:auto"><table><thead><tr><th>Method</th>{head}'
            '<th>Condorcet</th><th>Pareto</th><th>Order only</th></tr></thead><tbody>'
            f'{"".join(rows)}</tbody></table></div>')


def _procedure(comp: MethodComparison) -> str:
    ax, conc = comp.axes, comp.concordance
    return (f'<p class="note">{comp.n_trials} resamples for the winner rank ({esc(ax["winner_rank"])}), '
            f'the Condorcet rate ({esc(ax["condorcet_rate"])}) and the generalization '
            f'({esc(ax["generalization"])}, tested on out-of-bag judges); stabilities: '
            f'{comp.q} rankings × {comp.r} repetitions ({esc(conc["judges"])} on judges, '
            f'{esc(conc["candidates"])} on candidates). ± is the standard deviation over '
            f'resamples (over repetitions for stabilities). Seed {esc(comp.seed)}, missing '
            f'cells: {esc(comp.missing)}. Best value of each column highlighted.</p>')


def render_comparison(comp: MethodComparison, current: str | None = None) -> str:
    """The comparison table and one error-bar plot per criterion, as an HTML fragment
    (a ``<div class="ms-an">`` plus its ``<style>``) to embed in any page.

    ``current``: the method that ranks the page's leaderboard, tagged in the table.
    """
    agreement = ""
    if comp.agreement is not None:
        agreement = (f'<p class="note">Kendall\'s W of the judges: <b>{fmt_num(comp.agreement.w)}</b> '
                     f'(mean Spearman between judges {fmt_num(comp.agreement.mean_spearman)}).</p>')
    charts = "".join(f'<div class="panel">{_error_bar_chart(comp, k)}</div>' for k in CRITERIA)
    return (f"<style>{COMPARISON_CSS}</style><div class=\"ms-an\">{agreement}{_table(comp, current)}"
            f"{_procedure(comp)}<h3>Criteria per method (mean ± std)</h3>"
            f'<div class="grid">{charts}</div></div>')
