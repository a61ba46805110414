"""The comparison of ranking methods as an HTML fragment: table and error-bar plots.

:func:`render_comparison` renders a :class:`~metascore.analysis.MethodComparison` (thesis
table 5.3: each criterion's mean and spread per method, the declared properties) as a
self-contained ``<style>`` + ``<div class="ms-an">`` fragment (inline SVG, no script, no
external resource): a paragraph saying which method the table favours and why
(:func:`verdict`), the table, what each criterion measures, and one error-bar plot per
criterion (a proportion on [0, 1], a correlation on [-1, 1] when a value is negative).
``analysis.html`` (:mod:`metascore.render.analysis_report`) and ``detailed_results.html``
(:mod:`metascore.render.report`, with ``analysis.compare``) embed it.
"""

from __future__ import annotations

import math

import numpy as np

from ..analysis import MethodComparison
from ..analysis.compare import CRITERIA
from .svg_charts import axes_frame, esc, even_ticks, fmt_num, linear_scale, method_color, svg_doc

__all__ = ["render_comparison", "verdict", "COMPARISON_CSS", "LABELS"]

#: The criteria's display names.
LABELS = {
    "winner_rank": "Winner rank",
    "condorcet_rate": "Condorcet rate",
    "generalization": "Generalization",
    "stability_judges": "Stability (judges)",
    "stability_candidates": "Stability (candidates)",
}

_AXES = {"both": "candidates, then the judges"}
#: The criteria's names mid-sentence.
_IN_TEXT = {"winner_rank": "winner rank", "condorcet_rate": "Condorcet rate",
            "generalization": "generalization", "stability_judges": "stability (judges)",
            "stability_candidates": "stability (candidates)"}
_CONCORDANCE = {"kendall_w": "Kendall's W (0 to 1)",
                "spearman": "the mean Spearman correlation (-1 to 1)"}


def _is_proportion(comp: MethodComparison, key: str) -> bool:
    """Whether a criterion lies in [0, 1] (else it is a correlation in [-1, 1])."""
    if key in ("winner_rank", "condorcet_rate"):
        return True
    axis = {"stability_judges": "judges", "stability_candidates": "candidates"}.get(key)
    return axis is not None and comp.concordance.get(axis) == "kendall_w"


def _definitions(comp: MethodComparison) -> str:
    """What each column of the table measures, on this comparison's axes."""
    ax = {k: _AXES.get(v, v) for k, v in comp.axes.items()}
    conc = comp.concordance
    items = [
        ("Winner rank", "how well the method's winner does on the judges: 1 - (r - 1)/(n - 1), "
         "r its average rank over the judges, n the number of candidates; 1 when it is first on "
         f"every judge. Mean over resamples of the {ax['winner_rank']}."),
        ("Condorcet rate", "among resamples (of the "
         f"{ax['condorcet_rate']}) that have a Condorcet winner, a candidate that beats each "
         "other one head to head on most of the judges' weight, the share in which the method "
         "ranks it first (1/t when t candidates share first place)."),
        ("Generalization", "how well the ranking predicts judges it has not seen: the Spearman "
         "correlation (-1 to 1) between the method's ranking on resampled judges and each judge "
         f"left out of the resample, averaged (resampling the {ax['generalization']})."),
        ("Stability (judges)", f"{_CONCORDANCE.get(conc['judges'], conc['judges'])} between "
         f"{comp.q} rankings, each on a resample of the judges: 1 when the ranking does not "
         "depend on which judges are drawn."),
        ("Stability (candidates)", f"{_CONCORDANCE.get(conc['candidates'], conc['candidates'])}"
         f" between {comp.q} rankings, each on a resample of the candidates (compared on the "
         "candidates they share): 1 when the order of two candidates does not depend on which "
         "others take part."),
        ("Condorcet, Pareto, Order only", "declared properties of the method, not measured: a "
         "Condorcet winner is always ranked first; a candidate at least as good on every judge "
         "and better on one is never ranked below the other; only the order of the scores on "
         "each judge counts, not their values or scale."),
    ]
    body = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in items)
    return f'<h3>What the columns measure (higher is better)</h3><dl class="defs">{body}</dl>'


def verdict(comp: MethodComparison) -> str:
    """One paragraph (plain text): the method the table favours and why, or why none.

    A method is favoured when it is best (the highlighted cell) on more of the criteria
    that separate the methods than any other; a lead or a gap smaller than the larger of
    the two spreads (one standard deviation over resamples) is called within the spread.
    """
    t, methods = comp.table, list(comp.methods)
    if len(methods) < 2:
        return f"Only {methods[0]} was compared, so the table favours no method over another."
    values = {k: t[k].to_numpy(dtype=float) for k in CRITERIA}
    stds = {k: t[f"{k}_std"].to_numpy(dtype=float) for k in CRITERIA}
    best = _best_where_they_differ(values, len(methods))
    if not best:
        return ("The table favours no method: the methods tie on every criterion, so choose "
                "by the declared properties (the last three columns).")
    wins = {i: [k for k in best if i in best[k]] for i in range(len(methods))}
    most = max(len(w) for w in wins.values())
    leaders = [i for i in wins if len(wins[i]) == most]
    label = _IN_TEXT
    if len(leaders) > 1:
        who = "; ".join(f"{methods[i]} on {_join([label[k] for k in wins[i]])}" for i in leaders)
        return (f"The table favours no single method: {_join([methods[i] for i in leaders])} are "
                f"each best on {most} of the {len(best)} criteria that separate the methods ({who}). "
                "Weigh the criteria for this competition: the Condorcet rate when head-to-head wins "
                "should decide, the generalization when the judges stand for future tasks, the "
                "stabilities when the set of judges or candidates could have been different.")
    i = leaders[0]
    parts = [f"The table favours {methods[i]}: it is best on {_join([label[k] for k in wins[i]])} "
             f"({most} of the {len(best)} criteria that separate the methods)."]
    parts += _its_lead(i, wins[i], values, stds)
    parts += [_behind(i, best[k][0], k, values, stds, methods) for k in best if k not in wins[i]]
    parts += _its_properties(comp, i)
    return " ".join(parts)


def _best_where_they_differ(values: dict[str, np.ndarray], n: int) -> dict[str, list[int]]:
    """The best of the ``n`` methods on each criterion that separates them."""
    best: dict[str, list[int]] = {}
    for k, v in values.items():
        if np.isfinite(v).any():
            top = np.nanmax(v)
            winners = [i for i in range(n) if math.isfinite(v[i]) and v[i] >= top - 1e-12]
            if len(winners) < n:  # a criterion every method ties on tells nothing
                best[k] = winners
    return best


def _its_lead(i: int, won: list[str], values: dict[str, np.ndarray],
              stds: dict[str, np.ndarray]) -> list[str]:
    """Where method ``i``'s lead on the criteria it is best on (``won``) exceeds the spread
    of the resamples over the next method's, and where it is within it."""
    clear, close = [], []
    for k in won:
        others = [j for j in range(len(values[k])) if j != i and math.isfinite(values[k][j])]
        if not others:
            continue
        j = max(others, key=lambda j: values[k][j])
        lead = values[k][i] - values[k][j]
        (clear if lead > max(stds[k][i], stds[k][j]) else close).append(_IN_TEXT[k])
    parts = []
    if clear:
        parts.append(f"Its lead exceeds the spread of the resamples on {_join(clear)}")
    if close:
        parts.append(("and is" if clear else "Its lead is") + f" within the spread on {_join(close)}, "
                     "where another method would do about as well")
    if parts:
        parts[-1] += "."
    return parts


def _behind(i: int, j: int, k: str, values: dict[str, np.ndarray], stds: dict[str, np.ndarray],
            methods: list[str]) -> str:
    """That method ``j`` does better than the favoured ``i`` on criterion ``k``."""
    gap = values[k][j] - values[k][i]
    within = math.isfinite(gap) and gap <= max(stds[k][i], stds[k][j])
    return (f"On {_IN_TEXT[k]}, {methods[j]} does better ({fmt_num(values[k][j])} against "
            f"{fmt_num(values[k][i])}{', within the spread' if within else ''}).")


def _its_properties(comp: MethodComparison, i: int) -> list[str]:
    """The declared properties of method ``i`` (Condorcet, Pareto, order only), if any."""
    t, name = comp.table, comp.methods[i]
    props = [p for p, f in (("the Condorcet criterion", "condorcet"), ("Pareto", "pareto"))
             if bool(t.loc[i, f])]
    if props:
        return [f"{name} also satisfies {_join(props)} by construction"
                f"{' and uses only the order of the scores' if t.loc[i, 'order_only'] else ''}."]
    if t.loc[i, "order_only"]:
        return [f"{name} uses only the order of the scores on each judge."]
    return []


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


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
.ms-an .verdict { margin: 0 0 10px; }
.ms-an dl.defs { display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px;
  margin: 0; font-size: 12.5px; }
.ms-an dl.defs dt { font-weight: 600; } .ms-an dl.defs dd { margin: 0; color: var(--muted); }
.ms-an svg text { font: 11px -apple-system, "Segoe UI", Roboto, Arial, sans-serif; fill: #3e4c59; }
"""


def _error_bar_chart(comp: MethodComparison, key: str) -> str:
    """Mean +- std of one criterion, one row per method."""
    methods = comp.methods
    means = [comp.table.loc[i, key] for i in range(len(methods))]
    stds = [comp.table.loc[i, f"{key}_std"] for i in range(len(methods))]
    lo_data = min([m - s for m, s in zip(means, stds) if math.isfinite(m)] + [0.0])
    lo = -1.0 if lo_data < 0 and not _is_proportion(comp, key) else 0.0
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
    best: dict[str, float | None] = {}
    for k in CRITERIA:  # no highlight where every method ties: the column picks no method
        v = t[k].to_numpy(dtype=float)
        top = float(np.nanmax(v)) if np.isfinite(v).any() else None
        best[k] = None if top is None or (len(v) > 1 and np.all(np.isfinite(v) & (v >= top - 1e-12))) else top
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
                        for f in ("condorcet", "pareto", "order_only", "unanimity"))
        rows.append(f'<tr><td class="method"><span class="dot" '
                    f'style="background:{method_color(i)}"></span>{esc(name)}{mark if name == current else ""}</td>{"".join(cells)}{flags}</tr>')
    return (f'<div style="overflow-x:auto"><table><thead><tr><th>Method</th>{head}'
            '<th>Condorcet</th><th>Pareto</th><th>Order only</th>'
            '<th title="a strict order every judge gives is the ranking, without ties">'
            'Unanimity</th></tr></thead><tbody>'
            f'{"".join(rows)}</tbody></table></div>')


def _procedure(comp: MethodComparison) -> str:
    ax, conc = comp.axes, comp.concordance
    return (f'<p class="note">{comp.n_trials} resamples for the winner rank ({esc(ax["winner_rank"])}), '
            f'the Condorcet rate ({esc(ax["condorcet_rate"])}) and the generalization '
            f'({esc(ax["generalization"])}, tested on out-of-bag judges); stabilities: '
            f'{comp.q} rankings × {comp.r} repetitions ({esc(conc["judges"])} on judges, '
            f'{esc(conc["candidates"])} on candidates). ± is the standard deviation over '
            f'resamples (over repetitions for stabilities). Seed {esc(comp.seed)}, missing '
            f'cells: {esc(comp.missing)}. The best value of a column is highlighted unless every '
            'method ties on it.</p>')


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
    return (f"<style>{COMPARISON_CSS}</style><div class=\"ms-an\">"
            f'<p class="verdict">{esc(verdict(comp))}</p>{agreement}{_table(comp, current)}'
            f"{_procedure(comp)}{_definitions(comp)}<h3>Criteria per method (mean ± std)</h3>"
            f'<div class="grid">{charts}</div></div>')
