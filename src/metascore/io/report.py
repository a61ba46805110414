"""``detailed_results.html``: a self-contained report an organizer can read.

One HTML file with inline CSS and inline SVG: no script, no network, no external resource
(Codabench shows it in its detailed-results page, and it must open offline from the
downloaded ``scoring_result`` zip). Sections: summary and warnings, the final leaderboard
(baselines flagged, excluded candidates with their reason), the qualification threshold
and decisions, a per-judge rank heatmap, the pairwise margin matrix with the Condorcet
winner highlighted, the rank uncertainty plot (bootstrap rank intervals, P(first), groups),
the judges' agreement and the ranking's stability, with ``analysis.compare`` the
comparison of ranking methods on the same pool (:mod:`metascore.io.comparison_html`), the
development leaderboard, and the configuration and signature.
"""

from __future__ import annotations

import dataclasses
import html
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..leaderboard import Analysis, Board, Leaderboard, Row
from ..registry import Display, get_ranking_method
from .comparison_html import render_comparison
from .per_judge import PER_JUDGE_FILE, judge_columns
from .report_labels import clip_middle, heatmap_header, judge_header, judge_labels

__all__ = ["render_report"]

#: The margin matrix draws at most this many candidates (the best-ranked ones): a larger
#: grid is unreadable and its SVG grows with the square of the pool.
MARGINS_SHOWN = 30
#: The rank heatmap shows at most this many judges (columns), in the board's order; a
#: leaderboard table of more judges shows a summary of each candidate's judge ranks
#: instead of one column per judge (leaderboard.csv, or per_judge.csv.gz beyond
#: ``output.judge_columns``, holds them all).
REPORT_JUDGES = 60
#: The rank heatmap shows at most this many ranked candidates (rows), the best-ranked.
HEATMAP_CANDIDATES = 100

_CSS = """
:root { --ink:#1f2933; --muted:#66788a; --line:#d9e2ec; --bg:#f5f7fa; --card:#fff;
  --accent:#2f6fde; --good:#1f7a4d; --good-bg:#e3f6ec; --bad:#a61b1b; --bad-bg:#fdecec;
  --warn-bg:#fff4d6; --warn:#8a5a00; --base:#5b4bb7; --base-bg:#ece9fb; --gold:#c58b00; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font: 14px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1320px; margin: 0 auto; padding: 24px 20px 48px; }
header h1 { font-size: 24px; margin: 0 0 4px; }
header p { margin: 0; color: var(--muted); }
section { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 18px 20px; margin-top: 18px; }
h2 { font-size: 17px; margin: 0 0 10px; }
h3 { font-size: 14px; margin: 16px 0 6px; color: var(--muted); text-transform: uppercase;
  letter-spacing: .04em; }
.cards { display:flex; flex-wrap:wrap; gap:12px; margin-top:16px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px;
  padding:12px 16px; flex:1 1 140px; }
.card.wide { flex:2 1 260px; }
.card .label { color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.04em; }
.card .value { font-size:20px; font-weight:600; margin-top:2px; overflow-wrap:break-word; }
.card .value.long { font-size:16px; }
.msg { background:var(--warn-bg); color:var(--warn); border:1px solid #f0d58c;
  border-radius:8px; padding:10px 14px; margin-top:12px; }
.scroll { overflow-x:auto; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 6px 10px; border-bottom: 1px solid var(--line); text-align: left;
  vertical-align: top; }
th { background: #eef2f7; font-weight: 600; font-size: 12.5px; white-space: nowrap; }
td.num, th.num { text-align: right; white-space: nowrap; }
th.judge { white-space: normal; min-width: 7em; max-width: 11em; vertical-align: bottom; }
th.task { white-space: normal; text-align: center; color: var(--muted); font-weight: 600;
  border-bottom: 2px solid var(--line); }
table.leaderboard th { white-space: normal; }
thead tr:first-child th[rowspan] { vertical-align: bottom; }
td.status { min-width: 15em; max-width: 26em; }
td.name { min-width: 11em; max-width: 18em; overflow-wrap: break-word; }
td .sub { color: var(--muted); font-size: 11.5px; margin-left: 3px; }
tr.winner td { background: #fff8e1; }
tr.baseline td { background: var(--base-bg); }
tr.excluded td { color: var(--muted); }
td.failed { color: var(--bad); }
details > summary { cursor: pointer; color: var(--accent); margin: 10px 0 4px; }
.badge { display:inline-block; font-size:11px; font-weight:600; border-radius:999px;
  padding:1px 8px; margin-left:6px; vertical-align:1px; }
.b-base { background:var(--base-bg); color:var(--base); border:1px solid #cfc8f3; }
.b-ok { background:var(--good-bg); color:var(--good); }
.b-no { background:var(--bad-bg); color:var(--bad); }
.b-win { background:#fff1c2; color:var(--gold); }
.reason { color: var(--muted); font-size: 12.5px; }
.note { color: var(--muted); font-size: 12.5px; margin: 8px 0 0; }
pre { background:#0f1720; color:#e6edf3; padding:12px 14px; border-radius:8px;
  overflow-x:auto; font-size:12.5px; }
dl.sig { display:grid; grid-template-columns: max-content 1fr; gap:4px 16px; margin:0; }
dl.sig dt { color:var(--muted); } dl.sig dd { margin:0; font-family: ui-monospace, monospace; }
svg text { font-family: -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
.legend { color: var(--muted); font-size: 12px; margin-top: 6px; }
table.stats { width: auto; } table.stats td.num { font-size: 16px; font-weight: 600; }
footer { color: var(--muted); font-size: 12px; margin-top: 18px; text-align: center; }
"""


def render_report(lb: Leaderboard) -> str:
    """The whole ``detailed_results.html`` document as a string."""
    sig = lb.signature
    final = lb.final
    shown = get_ranking_method(str(sig.get("method"))).display
    failed = _failed_runs(lb)
    title = f"Meta-scoring results: {final.phase}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body><main>",
        "<header>",
        f"<h1>{_e(title)}</h1>",
        f"<p>Ranked with <b>{_e(sig.get('method'))}</b> ({_e(shown.label)}, "
        f"{_e(shown.direction)}) over {len(final.judges)} judges; "
        f"missing scores: {_e(sig.get('missing'))}; seed {_e(sig.get('seed'))}; "
        f"metascore {_e(sig.get('version'))}.</p>",
        "</header>",
        _summary_cards(lb, shown),
        *(f'<div class="msg">&#9888; {_e(m)}</div>' for m in lb.messages),
        _final_section(lb, shown, failed),
    ]
    if lb.filter is not None:
        parts.append(_qualification_section(lb, shown))
    parts.append(_heatmap_section(final, _labels(lb, final), _holder(lb, final)))
    parts.append(_margins_section(lb))
    if lb.analysis.uncertainty is not None:
        parts.append(_uncertainty_section(lb.final, lb.analysis))
    parts.append(_agreement_section(lb.analysis))
    if lb.analysis.comparison is not None or lb.analysis.comparison_note:
        parts.append(_comparison_section(lb.analysis, str(sig.get("method"))))
    if lb.development is not None:
        parts.append(_board_section(
            f"Development leaderboard: {lb.development.phase}", lb.development,
            "All selected development candidates, baselines included: the ranking the "
            "final-phase filter used.", shown, failed, final=False,
            labels=_labels(lb, lb.development), holder=_holder(lb, lb.development),
        ))
    parts.append(_provenance_section(lb))
    parts.append("<footer>Generated by metascore. This page is self-contained: no scripts, "
                 "no external resources.</footer></main></body></html>")
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------- sections
def _summary_cards(lb: Leaderboard, shown: Display) -> str:
    ranked = lb.final.ranked
    n_cand = sum(not r.is_baseline for r in lb.final.rows)
    cards = [("Winner", lb.winner or "none")]
    if ranked and ranked[0].score is not None:
        cards.append((f"Winner's {shown.label}", shown.short(ranked[0].score)))
    if lb.filter is not None:
        cards.append(("Qualified", f"{len(lb.filter.qualified)} of {n_cand}"))
    else:
        cards.append(("Candidates", str(len(ranked))))
    cards.append(("Judges", str(len(lb.final.judges))))
    if lb.margins is not None:
        cards.append(("Condorcet winner", lb.margins.condorcet_winner or "none"))
    cards.append(("Method", str(lb.signature.get("method"))))
    names = ("Winner", "Condorcet winner")  # a candidate's name: a wider card, never cut
    return '<div class="cards">' + "".join(
        f'<div class="card{" wide" if k in names else ""}"><div class="label">{_e(k)}</div>'
        f'<div class="value{" long" if len(v) > 18 else ""}">{_e(v)}</div></div>'
        for k, v in cards
    ) + "</div>"


def _failed_runs(lb: Leaderboard) -> dict[tuple[str, str, str], str]:
    """``(phase, candidate, task) -> reason`` of the scoring runs that failed."""
    return {(str(f.get("phase")), str(f.get("candidate")), str(f.get("task"))): str(f.get("reason"))
            for f in lb.input_summary.get("failed", []) or []}


def _final_section(lb: Leaderboard, shown: Display, failed: dict[tuple[str, str, str], str]) -> str:
    intro = ("Qualified candidates are ranked; baselines are shown for reference without a "
             "position; excluded candidates are listed with the reason.")
    if lb.filter is None:
        intro = "Baselines are shown for reference without a position."
    return _board_section(f"Final leaderboard: {lb.final.phase}", lb.final, intro, shown, failed,
                          show_status=lb.filter is not None, labels=_labels(lb, lb.final),
                          holder=_holder(lb, lb.final))


def _board_section(
    title: str, board: Board, intro: str, shown: Display, failed: dict[tuple[str, str, str], str],
    show_status: bool = False, final: bool = True,
    labels: Mapping[str, tuple[str, str]] | None = None, holder: str = "leaderboard.csv",
) -> str:
    # the shown quantity replaces its own detail column (average_rank = -score)
    details = sorted({k for r in board.rows for k in r.details} - {shown.label.replace(" ", "_")})
    intervals = any(r.rank_low is not None for r in board.rows)
    arrow = "&#8595;" if shown.lower_is_better else "&#8593;"
    head = ['<th class="num">#</th>', "<th>Candidate</th>", "<th>Participant</th>",
            f'<th class="num" title="{_e(shown.direction)}">{_e(shown.label.capitalize())} {arrow}</th>']
    if intervals:
        head.append('<th class="num" title="bootstrap rank interval (see Rank uncertainty)">'
                    "Rank interval</th>")
    if show_status:  # before the judges, so the reason is on screen without scrolling
        head.append("<th>Status</th>")
    head += [f'<th class="num">{_e(_label(d))}</th>' for d in details]
    summary = _rank_summary(board) if len(board.judges) > REPORT_JUDGES else None
    judges = () if summary is not None else board.judges
    if summary is not None:  # too many judges for a column each: each candidate's summary
        head += ['<th class="num" title="the median of the candidate\'s ranks over the judges">'
                 "Median judge rank</th>",
                 '<th class="num" title="judges on which no ranked candidate ranks better">'
                 "Judges ranked first</th>",
                 '<th class="num" title="judges without a score of the candidate">Missing scores</th>']
    thead = judge_header(judges, board.higher_is_better, head,
                         labels or judge_labels(judges, None, None))
    body = []
    winner = board.ranked[0].candidate if board.ranked and final else None
    for r in board.rows:
        cls = "winner" if r.candidate == winner else "baseline" if r.is_baseline else \
            "excluded" if r.position is None else ""
        name = _e(r.candidate)
        if r.is_baseline:
            name += '<span class="badge b-base">baseline</span>'
        if r.candidate == winner:
            name += '<span class="badge b-win">winner</span>'
        cells = [f'<td class="num">{_e(r.position) if r.position is not None else "&ndash;"}</td>',
                 f'<td class="name">{name}</td>', f"<td>{_e(r.participant or '')}</td>",
                 f'<td class="num">{_fmt(None if r.score is None else shown.value(r.score))}</td>']
        if intervals:
            cells.append(f'<td class="num">{_interval(r)}</td>')
        if show_status:
            cells.append(f'<td class="status">{_status(r)}</td>')
        cells += [f'<td class="num">{_fmt(r.details.get(d))}</td>' for d in details]
        if summary is not None:
            cells += [f'<td class="num">{_fmt(x)}</td>' for x in summary[r.candidate]]
        for j in judges:
            rk = r.judge_ranks.get(j)
            sub = f'<span class="sub">({_fmt(rk)})</span>' if rk is not None else ""
            why = _failure(failed, board.phase, r.candidate, j) if r.values.get(j) is None else None
            if why is not None:
                cells.append(f'<td class="num failed" title="{_e(why)}">failed{sub}</td>')
                continue
            cells.append(f'<td class="num">{_fmt(r.values.get(j))}{sub}</td>')
        body.append(f'<tr class="{cls}">' + "".join(cells) + "</tr>")
    table = (f'<div class="scroll"><table class="leaderboard"><thead>{thead}'
             f'</thead><tbody>{"".join(body)}</tbody></table></div>')
    extra = ""
    if board.not_selected:
        items = "".join(f"<li><b>{_e(c)}</b>: {_e(why)}</li>"
                        for c, why in board.not_selected.items())
        extra = f"<h3>Submissions not on this board</h3><ul class=\"reason\">{items}</ul>"
    notes = "".join(f'<p class="note">Note: {_e(n)}</p>' for n in board.notes)
    failures = " A run that failed shows as failed (hover for the reason) and ranks like a " \
        "missing score." if any(p == board.phase for p, _, _ in failed) else ""
    about = ("Per-judge values show the judge rank in parentheses." if summary is None else
             f"With {len(board.judges)} judges (more than {REPORT_JUDGES}), each candidate's judge "
             "ranks are summarised: their median, the number of judges on which no ranked "
             "candidate ranks better, and the number of missing scores; "
             f"{_e(holder)} holds every judge's.")
    return (f"<section><h2>{_e(title)}</h2><p class=\"note\">{_e(intro)} {about}{failures}</p>"
            f"{table}{notes}{extra}</section>")


def _labels(lb: Leaderboard, board: Board) -> dict[str, tuple[str, str]]:
    """``{judge: (task, shown title)}`` of the judges a board's views draw (see
    :mod:`metascore.io.report_labels`)."""
    return judge_labels(board.judges[:REPORT_JUDGES], lb.config.get("judges"),
                        lb.input_summary.get("column_titles"))


def _holder(lb: Leaderboard, board: Board) -> str:
    """Which file holds every judge's numbers of ``board``."""
    limit, contents = judge_columns(lb)
    name = "leaderboard.csv" if board is lb.final else "leaderboard.json"
    if len(board.judges) <= limit:
        return name
    if board is lb.final and contents != "none":
        return PER_JUDGE_FILE
    return f"no file (more than output.judge_columns: {limit} judges{'' if board is not lb.final else ', output.per_judge: none'})"


def _judges_shown(board: Board, holder: str) -> str:
    """The note saying that only the first judges are drawn, when there are more."""
    if len(board.judges) <= REPORT_JUDGES:
        return ""
    return (f" The first {REPORT_JUDGES} of the {len(board.judges)} judges are shown "
            f"({holder} holds them all).")


def _rank_summary(board: Board) -> dict[str, tuple[float | None, float | None, float]]:
    """Per candidate: the median of its judge ranks, the number of judges on which no ranked
    candidate ranks better, and its number of missing scores (ranks None when unranked)."""
    best = np.full(len(board.judges), np.inf)
    for r in board.ranked:
        np.fmin(best, r.judge_ranks.array, out=best)
    out: dict[str, tuple[float | None, float | None, float]] = {}
    for r in board.rows:
        ranks = r.judge_ranks.array
        missing = float(np.count_nonzero(np.isnan(r.values.array)))
        if r.position is None or np.isnan(ranks).all():
            out[r.candidate] = (None, None, missing)
            continue
        out[r.candidate] = (float(np.nanmedian(ranks)), float(np.count_nonzero(ranks == best)),
                            missing)
    return out


def _failure(failed: dict[tuple[str, str, str], str], phase: str, candidate: str, judge: str) -> str | None:
    """The reason the run of ``judge``'s task failed, if it did (judge = task/metric)."""
    for (p, c, task), why in failed.items():
        if p == phase and c == candidate and (judge == task or judge.startswith(f"{task}/")):
            return why
    return None


def _status(r: Row) -> str:
    if r.is_baseline:
        return f'<span class="reason">{_e(r.reason)}</span>'
    return f'{_badge(bool(r.qualified))} <span class="reason">{_e(r.reason)}</span>'


def _qualification_section(lb: Leaderboard, shown: Display) -> str:
    f = lb.filter
    assert f is not None
    label = shown.label
    if f.rule == "beat_baseline":
        which = "every baseline" if f.beat == "all" else "at least one baseline"
        rule = (f"A candidate enters the final ranking only if its development {label} is "
                f"strictly better than that of {which}; a tie does not qualify. Threshold: "
                f"development {shown.text(f.threshold) if f.threshold is not None else label + ' -'} "
                f"({shown.direction}).")
    elif f.rule == "top_k":
        est = (f" (k* = 1 + d/n = {_fmt(f.k_estimate)} with Kendall distance d = "
               f"{_fmt(f.kendall_distance)})" if f.k_estimate is not None else "")
        rule = f"The {f.k} best development candidates enter the final ranking{est}."
    else:
        rule = "No filter: every final-phase candidate is ranked."
    parts = [f"<section><h2>Who qualified for the final ranking</h2><p>{_e(rule)}</p>"]
    if f.baselines:
        rows = "".join(
            f'<tr><td>{_e(b.candidate)}<span class="badge b-base">baseline</span></td>'
            f"<td>{_e(b.participant or '')}</td><td class=\"num\">{_fmt(shown.value(b.score))}</td>"
            f'<td class="num">{b.position}</td></tr>' for b in f.baselines)
        parts.append("<h3>Threshold: baselines in the development phase</h3>"
                     '<div class="scroll"><table><thead><tr><th>Baseline</th><th>Participant</th>'
                     f'<th class="num">Development {_e(label)}</th><th class="num">Development position'
                     f"</th></tr></thead><tbody>{rows}</tbody></table></div>")
    rows = "".join(
        f"<tr><td>{_e(d.candidate)}</td><td>{_e(d.participant or '')}</td>"
        f'<td class="num">{_e(d.dev_position) if d.dev_position is not None else "&ndash;"}</td>'
        f'<td class="num">{_fmt(None if d.dev_score is None else shown.value(d.dev_score))}</td>'
        f"<td>{_badge(d.qualified)}</td>"
        f'<td class="reason">{_e(d.reason)}</td></tr>'
        for d in sorted(f.decisions, key=lambda d: (not d.qualified, d.dev_position or math.inf,
                                                     d.candidate)))
    parts.append("<h3>Decisions</h3>"
                 '<div class="scroll"><table><thead><tr><th>Candidate</th><th>Participant</th>'
                 f'<th class="num">Dev. position</th><th class="num">Dev. {_e(label)}</th>'
                 f"<th>Status</th><th>Reason</th></tr></thead><tbody>{rows}</tbody></table></div>")
    if f.message:
        parts.append(f'<div class="msg">&#9888; {_e(f.message)}</div>')
    parts.append("</section>")
    return "".join(parts)


def _heatmap_section(board: Board, labels: Mapping[str, tuple[str, str]],
                     holder: str = "leaderboard.csv") -> str:
    ranked = board.ranked
    title = "<section><h2>Per-judge ranks of the ranked candidates</h2>"
    if not ranked or all(np.isnan(r.judge_ranks.array).all() for r in ranked):
        return title + '<p class="note">No ranked candidates, so no heatmap.</p></section>'
    n = len(ranked)
    judges = board.judges[:REPORT_JUDGES]
    shown = _judges_shown(board, holder)
    if n > HEATMAP_CANDIDATES:  # rows follow the leaderboard: keep the best-ranked
        ranked = ranked[:HEATMAP_CANDIDATES]
        shown += f" The {HEATMAP_CANDIDATES} best-ranked of the {n} ranked candidates are shown."
    rows = [f"{r.position}. {clip_middle(r.candidate, _NAME_CHARS)}" for r in ranked]
    left = min(260, 14 + 7 * max(len(s) for s in rows))
    cell_w, top, head = heatmap_header(judges, labels, left)
    cell_h = 28
    width = left + cell_w * len(judges) + 10
    height = top + cell_h * len(ranked) + 6
    out = [_svg_open(width, height, "Per-judge rank heatmap"), *head]
    for i, r in enumerate(ranked):
        y = top + i * cell_h
        out.append(f'<text x="{left - 8}" y="{y + cell_h / 2 + 4:.1f}" text-anchor="end" '
                   f'font-size="12" fill="#1f2933">{_e(rows[i])}<title>{_e(r.candidate)}</title></text>')
        for k, j in enumerate(judges):
            rk = r.judge_ranks.get(j)
            x = left + k * cell_w
            fill = "#e5e9ef" if rk is None else _rank_color(rk, n)
            out.append(f'<rect x="{x + 1}" y="{y + 1}" width="{cell_w - 2}" height="{cell_h - 2}" '
                       f'rx="4" fill="{fill}"><title>{_e(r.candidate)} on {_e(j)}: rank '
                       f'{_fmt(rk)}, score {_fmt(r.values.get(j))}</title></rect>')
            out.append(f'<text x="{x + cell_w / 2:.1f}" y="{y + cell_h / 2 + 4:.1f}" '
                       f'text-anchor="middle" font-size="12" fill="#1f2933">'
                       f'{_fmt(rk) if rk is not None else "n/a"}</text>')
    out.append("</svg>")
    return (title + '<div class="scroll">' + "".join(out) + "</div>"
            '<p class="legend">Rank 1 (green) is best on that judge; red is worst. Rows follow '
            "the final leaderboard. Missing scores rank last under the 'worst' policy."
            f"{shown}</p></section>")


#: Candidate names in the plots' margins are cut (in the middle) beyond this many characters.
_NAME_CHARS = 34


def _margins_section(lb: Leaderboard) -> str:
    m = lb.margins
    title = "<section><h2>Pairwise margins</h2>"
    if m is None:
        return title + '<p class="note">Fewer than two candidates were ranked.</p></section>'
    total = len(m.candidates)
    shown = ""
    if total > MARGINS_SHOWN:  # the candidates are in ranking order: keep the best
        m = dataclasses.replace(m, candidates=m.candidates[:MARGINS_SHOWN],
                                margins=m.margins[:MARGINS_SHOWN, :MARGINS_SHOWN])
        shown = (f" The {MARGINS_SHOWN} best-ranked of the {total} candidates are shown "
                 "(leaderboard.json holds more).")
    n = len(m.candidates)
    cw = lb.margins.condorcet_winner
    cell = 44 if n <= 12 else 30
    left = min(260, 14 + 7 * max(len(clip_middle(c, _NAME_CHARS)) + 2 for c in m.candidates))
    longest = max(len(_clip(c, 22)) for c in m.candidates)
    top = 24 + round(5.5 * longest)
    width, height = left + cell * n + 10 + round(5.5 * longest), top + cell * n + 6
    peak = float(np.max(np.abs(m.margins))) or 1.0
    out = [_svg_open(width, height, "Pairwise margin matrix")]
    for k, c in enumerate(m.candidates):
        x = left + k * cell + cell / 2
        weight = ' font-weight="700"' if c == cw else ""
        out.append(f'<text transform="translate({x + 4:.1f},{top - 8}) rotate(-45)" '
                   f'font-size="12"{weight} fill="#1f2933">{_e(_clip(c, 22))}</text>')
    for i, a in enumerate(m.candidates):
        y = top + i * cell
        weight = ' font-weight="700"' if a == cw else ""
        star = " \u2605" if a == cw else ""
        out.append(f'<text x="{left - 8}" y="{y + cell / 2 + 4:.1f}" text-anchor="end" '
                   f'font-size="12"{weight} fill="#1f2933">{_e(clip_middle(a, _NAME_CHARS) + star)}'
                   f"<title>{_e(a)}</title></text>")
        for k, b in enumerate(m.candidates):
            x = left + k * cell
            v = float(m.margins[i, k])
            fill = "#f0f2f5" if i == k else _margin_color(v / peak)
            out.append(f'<rect x="{x + 1}" y="{y + 1}" width="{cell - 2}" height="{cell - 2}" '
                       f'rx="3" fill="{fill}"><title>{_e(a)} vs {_e(b)}: margin {_fmt(v)}'
                       "</title></rect>")
            if i != k:
                out.append(f'<text x="{x + cell / 2:.1f}" y="{y + cell / 2 + 4:.1f}" '
                           f'text-anchor="middle" font-size="11" fill="#1f2933">{_fmt(v)}</text>')
        if a == cw:
            out.append(f'<rect x="{left}" y="{y}" width="{cell * n}" height="{cell}" rx="4" '
                       'fill="none" stroke="#c58b00" stroke-width="2.5"/>')
    out.append("</svg>")
    verdict = (f"Condorcet winner: <b>{_e(cw)}</b> (beats every other candidate head to head; "
               "its row is outlined)." if cw else "There is no Condorcet winner in the final pool.")
    return (title + f"<p>{verdict}</p>" + '<div class="scroll">' + "".join(out) + "</div>"
            '<p class="legend">Cell (row a, column b) = weight of judges preferring a to b minus '
            "weight preferring b to a. Blue: the row candidate wins the duel; red: it loses."
            f"{shown}</p></section>")


def _uncertainty_section(board: Board, a: Analysis) -> str:
    """One row per ranked candidate: its bootstrap rank interval (bar), its observed rank
    (dot), P(first) and its group; groups are shaded bands."""
    u = a.uncertainty
    assert u is not None
    rows = [r for r in board.ranked if r.rank_low is not None]
    n = len(u.candidates)
    row_h, top, plot_w = 30, 44, 560
    names = {r.candidate: f"{r.position}. {clip_middle(r.candidate, _NAME_CHARS)}" for r in rows}
    left = min(260, 24 + 7 * max(len(v) for v in names.values()))
    col_p, col_g = left + plot_w + 46, left + plot_w + 112
    width, height = col_g + 70, top + row_h * len(rows) + 10

    def x(rank: float) -> float:
        return left + (rank - 0.5) / n * plot_w

    out = [_svg_open(width, height, "Rank uncertainty: bootstrap rank intervals")]
    for i, r in enumerate(rows):  # group bands first, a line where a new group starts
        y = top + i * row_h
        shade = "#e8effc" if r.group % 2 else "#f7f1e3"
        out.append(f'<rect x="4" y="{y}" width="{width - 8}" height="{row_h}" fill="{shade}"/>')
        if i and r.group != rows[i - 1].group:
            out.append(f'<line x1="4" y1="{y}" x2="{width - 4}" y2="{y}" stroke="#66788a" '
                       'stroke-width="1.5"/>')
    step = max(1, math.ceil(n / 20))
    for t in sorted({1, n, *range(1, n + 1, step)}):
        out.append(f'<line x1="{x(t):.1f}" y1="{top - 6}" x2="{x(t):.1f}" y2="{height - 10}" '
                   'stroke="#c3cfdc" stroke-width="1" stroke-dasharray="2 3"/>')
        out.append(f'<text x="{x(t):.1f}" y="{top - 12}" text-anchor="middle" font-size="11" '
                   f'fill="#66788a">{t}</text>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="14" text-anchor="middle" font-size="12" '
               'font-weight="600" fill="#1f2933">rank (1 = best)</text>')
    for cx, label in ((col_p, "P(first)"), (col_g, "group")):
        out.append(f'<text x="{cx}" y="{top - 12}" text-anchor="middle" font-size="12" '
                   f'font-weight="600" fill="#1f2933">{label}</text>')
    for i, r in enumerate(rows):
        mid = top + i * row_h + row_h / 2
        out.append(f'<text x="{left - 10}" y="{mid + 4:.1f}" text-anchor="end" font-size="12" '
                   f'fill="#1f2933">{_e(names[r.candidate])}<title>{_e(r.candidate)}</title></text>')
        x0, x1 = x(r.rank_low), x(r.rank_high)
        if x1 - x0 < 6:
            x0, x1 = (x0 + x1) / 2 - 3, (x0 + x1) / 2 + 3
        tip = (f"{r.candidate}: rank {_fmt(r.rank)}, {_pct(u.level)} interval "
               f"[{_fmt(r.rank_low)}, {_fmt(r.rank_high)}], P(first) {_pct(r.p_first)}, "
               f"group {r.group}")
        out.append(f'<rect x="{x0:.1f}" y="{mid - 5:.1f}" width="{x1 - x0:.1f}" height="10" '
                   f'rx="5" fill="#2f6fde" fill-opacity="0.45" stroke="#2f6fde">'
                   f"<title>{_e(tip)}</title></rect>")
        out.append(f'<circle cx="{x(r.rank):.1f}" cy="{mid:.1f}" r="5.5" fill="#1f2933" '
                   f'stroke="#fff" stroke-width="1.5"><title>{_e(tip)}</title></circle>')
        bold = ' font-weight="700"' if r.p_first and r.p_first >= 0.5 else ""
        out.append(f'<text x="{col_p}" y="{mid + 4:.1f}" text-anchor="middle" font-size="12"'
                   f'{bold} fill="#1f2933">{_e(_pct(r.p_first))}</text>')
        out.append(f'<text x="{col_g}" y="{mid + 4:.1f}" text-anchor="middle" font-size="12" '
                   f'fill="#1f2933">{r.group}</text>')
    out.append("</svg>")
    n_groups = int(u.group.max())
    how = (f"Bootstrap over the judges: {u.n_trials} resamples of the {len(board.judges)} "
           f"judges, drawn with replacement (seed {u.seed}), each ranked again with "
           f"{u.method} (missing scores: {u.missing}). Bars span the central {_pct(u.level)} "
           "of a candidate's resampled ranks; the dot is its rank on all judges; P(first) is "
           "the share of resamples it wins (ties split).")
    groups = (f"{n_groups} group{'s' if n_groups != 1 else ''}: shaded bands separated by a "
              "line; a candidate joins the group of the best candidate above it whose interval "
              "overlaps its own, so candidates of one group cannot be told apart at this level.")
    return ("<section><h2>Rank uncertainty</h2>"
            f'<p>{_e(how)}</p><div class="scroll">{"".join(out)}</div>'
            f'<p class="legend">{_e(groups)}</p></section>')


def _agreement_section(a: Analysis) -> str:
    """Kendall's W between the judges, mean Spearman rho, stability, with a reading."""
    rows = []
    if a.agreement is not None:
        g = a.agreement
        rows.append(("Kendall's W between the judges", g.w, _read_agreement(g.w)))
        rows.append(("Mean Spearman rho between pairs of judges", g.mean_spearman,
                     f"the same information as W, (m W - 1) / (m - 1), for m = {g.n_judges} "
                     f"judges over {g.n_candidates} candidates"))
    if a.stability is not None:
        st = a.stability
        rows.append((f"Stability: Kendall's W of {st.q} rankings on resampled judges",
                     a.stability_w, _read_stability(a.stability_w)))
    parts = ["<section><h2>Judge agreement and stability</h2>"]
    if rows:
        body = "".join(f'<tr><td>{_e(k)}</td><td class="num">{_fmt3(v)}</td>'
                       f'<td class="reason">{_e(why)}</td></tr>' for k, v, why in rows)
        parts.append('<div class="scroll"><table class="stats"><thead><tr><th>Measure</th>'
                     '<th class="num">Value</th><th>Reading</th></tr></thead>'
                     f"<tbody>{body}</tbody></table></div>")
        parts.append('<p class="legend">Kendall\'s W and the stability range from 0 (no '
                     "agreement) to 1 (identical rankings), the mean Spearman rho from "
                     "-1/(m - 1) to 1; the readings are rules of thumb. Agreement compares the "
                     "judges with one another; stability resamples the judges with replacement "
                     f"(seed {_e(a.settings.get('seed'))}), ranks each resample with the "
                     "configured method and measures how much those rankings agree.</p>")
    parts += [f'<p class="note">Note: {_e(n)}</p>' for n in a.notes]
    parts.append("</section>")
    return "".join(parts)


def _comparison_section(a: Analysis, method: str) -> str:
    """The criteria table of the methods of ``analysis.compare``, or why it is absent."""
    head = "<section><h2>Comparison of ranking methods</h2>"
    comp = a.comparison
    if comp is None:
        return f'{head}<p class="note">{_e(a.comparison_note)}</p></section>'
    intro = (f"How {', '.join(comp.methods)} behave on the pool this leaderboard was ranked "
             f"from ({comp.n_candidates} candidates × {comp.n_judges} judges), to choose or "
             f"confirm a method (the leaderboard uses {method}). Every criterion is at most 1, "
             "higher is better; each is defined below the table.")
    return f"{head}<p>{_e(intro)}</p>{render_comparison(comp, current=method)}</section>"


def _read_agreement(w: float) -> str:
    if not math.isfinite(w):
        return "undefined: every judge ties all candidates"
    if w >= 0.7:
        return "strong: the judges largely agree on the order of the candidates"
    if w >= 0.3:
        return "moderate: the judges partly agree; different judges favour different candidates"
    return "weak: the judges disagree, so the winner depends on how they are aggregated"


def _read_stability(s: float | None) -> str:
    if s is None or not math.isfinite(s):
        return "undefined"
    if s >= 0.9:
        return "stable: resampling the judges barely changes the ranking"
    if s >= 0.7:
        return "fairly stable: some positions change when the judges are resampled"
    return "unstable: the ranking depends on which judges are included; consider more judges"


def _provenance_section(lb: Leaderboard) -> str:
    sig = "".join(f"<dt>{_e(k)}</dt><dd>{_e(json.dumps(v, default=str))}</dd>"
                  for k, v in lb.signature.items())
    return ("<section><h2>Configuration and signature</h2>"
            f'<h3>Ranking signature</h3><dl class="sig">{sig}</dl>'
            "<details><summary>What was read (input summary, JSON)</summary>"
            f"<pre>{_e(json.dumps(lb.input_summary, indent=2, default=str))}</pre></details>"
            "<details><summary>Effective configuration (JSON)</summary>"
            f"<pre>{_e(json.dumps(lb.config, indent=2, default=str))}</pre></details></section>")


# ---------------------------------------------------------------------- helpers
def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _fmt(x: float | None) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "&ndash;"
    x = float(x)
    if x.is_integer() and abs(x) < 1e12:
        return str(int(x))
    return f"{x:.4f}".rstrip("0").rstrip(".") if abs(x) >= 1e-4 else f"{x:.3g}"


def _fmt3(x: float | None) -> str:
    return "&ndash;" if x is None or not math.isfinite(x) else f"{x:.3f}"


def _pct(p: float | None) -> str:
    """A probability as a percentage: ``98.5%``, ``0%``, ``<0.1%`` (plain text)."""
    if p is None:
        return "\u2013"
    if 0 < p < 0.001:
        return "<0.1%"
    return f"{100 * p:.1f}".rstrip("0").rstrip(".") + "%"


def _interval(r: Row) -> str:
    if r.rank_low is None:
        return ""
    if r.rank_low == r.rank_high:
        return _fmt(r.rank_low)
    return f"{_fmt(r.rank_low)}&ndash;{_fmt(r.rank_high)}"


def _label(key: str) -> str:
    return key.replace("_", " ")


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def _svg_open(width: float, height: float, label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{_e(label)}">')


def _mix(c1: Sequence[int], c2: Sequence[int], t: float) -> str:
    r, g, b = (round(a + (b - a) * t) for a, b in zip(c1, c2))
    return f"#{r:02x}{g:02x}{b:02x}"


_GREEN, _YELLOW, _RED = (99, 190, 123), (255, 235, 132), (248, 105, 107)
_BLUE, _WHITE = (76, 132, 224), (247, 248, 250)


def _rank_color(rank: float, n: int) -> str:
    t = 0.0 if n <= 1 else min(1.0, max(0.0, (rank - 1) / (n - 1)))
    return _mix(_GREEN, _YELLOW, t * 2) if t <= 0.5 else _mix(_YELLOW, _RED, (t - 0.5) * 2)


def _margin_color(t: float) -> str:
    return _mix(_WHITE, _BLUE, t) if t >= 0 else _mix(_WHITE, _RED, -t)


def _badge(qualified: bool) -> str:
    if qualified:
        return '<span class="badge b-ok">qualified</span>'
    return '<span class="badge b-no">excluded</span>'
