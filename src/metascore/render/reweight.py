"""The ranking page's re-weighting panel: readers change the judges' weights and watch the
ranking move, beside the official one (issue 51).

``detailed_results.html`` (and so ``metascore rank --config``'s page) carries, below the final
leaderboard, a panel where each judge of the final board (and each group of judges, for a
ranking in two steps) has a weight a reader can change; the page then ranks the same
candidates (those the official ranking ranked: the filter's verdicts and the baselines stay
as published) again with the published method, its parameters, the missing-data policy and
the tie-break, exactly as :func:`metascore.rank` does (``assets/reweight_methods.js``, one
function per method of :data:`RECOMPUTED`), and lists them in a table ``id="reweighted"``,
one row per candidate in order, each ``data-candidate="<candidate id>"``, with its move
against the official position. The numbers are the page's ranking record's
(:mod:`metascore.render.ranking_record`), which carries what a ranking needs.

The URL fragment ``#weights=<judge>:<weight>,...&groups=<group>:<weight>,...`` (judge keys as
``leaderboard.json`` names them, URL-encoded; judges not named keep their weight) sets the
weights when the page opens, and the panel keeps it in step with the inputs, so that a view
is a link. Without scripts the panel says it needs them; where the page cannot recompute the
ranking (a method of :data:`NOT_RECOMPUTED`, values not published, a hidden judge counted,
too much work) it says why, and carries no script.

The scripts are static files of the package (``assets/``), inlined here: no external
resource, no framework; every text from the data goes into the page as text.
"""

from __future__ import annotations

import json
import math
from importlib.resources import files
from typing import Any

from ..leaderboard import Leaderboard
from ..registry import check_params, get_ranking_method
from .ranking_record import RECORD_ID, hidden_judges, values_published
from .report_format import html_text
from .report_labels import judge_labels

__all__ = ["PANEL_ID", "TABLE_ID", "SCRIPT_ID", "RECOMPUTED", "NOT_RECOMPUTED", "reweight_html",
           "why_not_recomputed", "panel_script"]

PANEL_ID = "reweight"
#: The re-weighted table: one row per candidate, in order, ``data-candidate`` on each.
TABLE_ID = "reweighted"
SCRIPT_ID = "metascore-reweight"

#: The methods the page recomputes, and how their work grows with n candidates and m
#: judges: ``values`` (a sort per judge), ``pairs`` (every pair of candidates on every judge),
#: ``cubic`` (then a pass over the pairs for each candidate).
RECOMPUTED: dict[str, str] = {
    "mean": "values", "median": "values", "average_rank": "values", "geometric_mean": "values",
    "optimality_gap": "values", "dowdall": "values", "plurality": "values", "threshold": "pairs",
    "success_rate": "pairs", "relative_difference": "pairs", "copeland": "pairs", "minimax": "pairs",
    "baldwin": "pairs", "schulze": "cubic", "ranked_pairs": "cubic",
}
_FIT = "it fits its ratings by iterative optimisation"
#: The methods the page cannot recompute exactly, and why.
NOT_RECOMPUTED: dict[str, str] = {
    "random_dictator": "it draws its judge with numpy's seeded random generator, which the page does not have",
    "kemeny_young": "it solves an optimisation over every order of the candidates (an integer program)",
    "epp": _FIT + " (Bradley-Terry strengths)",
    "elo": _FIT + " (Bradley-Terry strengths)",
    "sco": _FIT + " from seeded random draws",
    "sco_fenchel_young": _FIT + " from seeded random draws",
}
#: The most elementary steps one recomputation may take (about a second in a browser).
WORK_LIMIT = 2e9
#: The panel has an input for the first judges only; the fragment sets any judge's weight.
JUDGE_INPUTS = 200
#: The re-weighted table lists the first candidates only.
ROWS_SHOWN = 1000


def _work(kind: str, n: int, m: int) -> float:
    sort = n * m * math.log2(n + 1)
    return {"values": sort, "pairs": sort + n * n * m, "cubic": sort + n * n * m + n ** 3}[kind]


def _rules(lb: Leaderboard) -> tuple[str, str | None]:
    """The method, and the rule inside the groups (None without groups)."""
    method = str(lb.config["ranking"]["method"])
    groups = lb.config["ranking"].get("groups")
    if lb.final.groups is None or not groups:
        return method, None
    return method, str(groups.get("method") or method)


def why_not_recomputed(lb: Leaderboard) -> str | None:
    """Why the page cannot rank the final board again (one sentence), or None when it can."""
    board = lb.final
    if len(board.pool) < 2:
        return "Fewer than two candidates are ranked: there is no ranking to re-weight."
    for name in dict.fromkeys(_rules(lb)):
        if name is not None and name not in RECOMPUTED:
            why = NOT_RECOMPUTED.get(name, "the page has no code for it")
            return (f"The page cannot recompute a ranking by {name}: {why}. Rank again with other weights "
                    "on your machine instead: metascore rank --weight JUDGE=W (or the judges' weights "
                    "in metascore.yaml).")
    if not values_published(lb):
        return ("The page does not carry the judges' values (the boards hold too many; "
                "leaderboard.csv and per_judge.csv.gz do), so it cannot rank them again.")
    counted = [j for j, w in zip(board.judges, board.weights) if w > 0 and j in hidden_judges(lb)]
    if counted:
        return (f"The ranking counts judge {counted[0]!r}, whose column the competition hides: its "
                "values are not published, so the page cannot rank the candidates again.")
    n, m = len(board.pool), len(board.judges)
    if any(_work(RECOMPUTED[r], n, m) > WORK_LIMIT for r in _rules(lb) if r is not None):
        return (f"Ranking {n:,} candidates on {m:,} judges again by {_rules(lb)[0]} would take the "
                "page too long, so it does not offer it; rank again with other weights on your "
                "machine: metascore rank --weight JUDGE=W.")
    return None


def _settings(lb: Leaderboard) -> dict[str, Any]:
    """What the script reads besides the record: the rules and how scores read."""
    method, within = _rules(lb)
    ranking = lb.config["ranking"]
    params = check_params(method, dict(ranking.get("params") or {}))
    groups = ranking.get("groups") or {}
    within_params = check_params(within, dict(groups.get("params") or {})) \
        if within is not None and groups.get("method") else params
    fills = {}
    for name in {method, within or method}:
        spec = get_ranking_method(name)
        fills[name] = "order" if spec.input == "pairwise" or spec.order_only else "values"
    display = get_ranking_method(method).display
    return {"record": RECORD_ID, "method": method, "params": params, "within": within or method,
            "withinParams": within_params, "missing": str(ranking["missing"]), "fills": fills,
            "display": {"label": display.label, "sign": display.sign}, "rows": ROWS_SHOWN}


def panel_script() -> str:
    """The panel's script: the methods, then the panel (static files of the package)."""
    assets = files("metascore.render.assets")
    return "\n".join((assets / name).read_text(encoding="utf-8")
                     for name in ("reweight_methods.js", "reweight.js"))


def reweight_html(lb: Leaderboard) -> str:
    """The panel's section of the ranking page."""
    head = (f'<section id="{PANEL_ID}" class="reweight" aria-labelledby="rw-title">'
            '<h2 id="rw-title">Re-weight the judges</h2>')
    why = why_not_recomputed(lb)
    if why is not None:
        return f'{head}<p class="note">{html_text(why)}</p></section>'
    settings = html_text(json.dumps(_settings(lb), allow_nan=False, separators=(",", ":")))
    head = head.replace('class="reweight"', f'class="reweight" data-settings="{settings}"')
    script = panel_script()
    if any(bad in script.lower() for bad in ("<script", "</script", "<!--")):  # static files; checked all the same
        raise RuntimeError("the panel's script cannot be inlined: it holds '<script', '</script' or '<!--'.")
    return (f"{head}{_intro(lb)}"
            '<p class="rw-needs-script">This panel needs scripts, which this viewer does not run: '
            "the official ranking above is the published one.</p>"
            f'<div class="rw-body">{_form(lb)}{_table(lb)}</div>'
            f'<script id="{SCRIPT_ID}">{script}</script></section>')


def _intro(lb: Leaderboard) -> str:
    board, (method, within) = lb.final, _rules(lb)
    dev = lb.development.phase if lb.development is not None else None
    who = (f"the filter (decided on phase {dev}) and the baselines stay as published"
           if dev is not None else "the filter, if any, and the baselines stay as published")
    text = (f"The official ranking above stays as published. Change the weights of the judges of "
            f"phase {board.phase} (0: not counted) and the page ranks the same "
            f"{len(board.pool)} candidates again, by {method} with the published missing-data "
            f"policy ({lb.config['ranking']['missing']}) and tie-break: {who}.")
    if within is not None:
        text += (f" The judges are in groups: {within} ranks the candidates inside each group, "
                 f"then {method} across the groups, each group weighing its weight.")
    hidden = [j for j in board.judges if j in hidden_judges(lb)]
    if hidden:
        text += (f" The competition hides {len(hidden)} judge(s) ({', '.join(hidden[:5])}), not "
                 "counted: their values are not published, so they keep their weight of 0.")
    text += (" A link to this page ending in #weights=judge:weight,judge:weight opens it with "
             "those weights (the judges it does not name keep theirs).")
    return f'<p class="note">{html_text(text)}</p>'


def _input(kind: str, k: int, key: str, weight: float, label: str, sub: str) -> str:
    return (f'<div class="rw-weight"><label for="rw-{kind[0]}{k}">{html_text(label)}'
            f'<span class="sub">{html_text(sub)}</span></label>'
            f'<input id="rw-{kind[0]}{k}" type="number" min="0" step="any" inputmode="decimal" '
            f'value="{weight:g}" data-{kind}="{html_text(key)}"></div>')


def _form(lb: Leaderboard) -> str:
    board = lb.final
    hidden = hidden_judges(lb)
    shown = [(j, hib, w) for j, hib, w in zip(board.judges, board.higher_is_better, board.weights)
             if j not in hidden]
    labels = judge_labels([j for j, _, _ in shown], lb.config.get("judges"), lb.input_summary.titles)
    items = []
    for k, (judge, hib, w) in enumerate(shown[:JUDGE_INPUTS]):
        task, title = labels[judge]
        where = f"{task} · " if task else ""
        items.append(_input("judge", k, judge, w, title,
                            f"{where}{'higher' if hib else 'lower'} is better · {judge}"))
    more = ""
    if len(shown) > JUDGE_INPUTS:
        more = (f'<p class="note">The first {JUDGE_INPUTS} of the {len(shown)} judges have an '
                "input; the link (#weights=...) sets any judge's weight.</p>")
    fields = [f'<fieldset><legend>Judges\' weights</legend>{"".join(items)}{more}</fieldset>']
    if board.groups is not None:
        groups = [_input("group", k, g, board.groups.weight(g), g, "group")
                  for k, g in enumerate(board.groups.names)]
        fields.append(f'<fieldset><legend>Groups\' weights</legend>{"".join(groups)}</fieldset>')
    return (f'<form class="rw-form" aria-label="Weights">{"".join(fields)}<div class="rw-actions">'
            '<button type="submit">Rank again</button>'
            '<button type="button" data-reset>Official weights</button>'
            '<label class="rw-link">Link to this view <input type="text" readonly '
            'class="rw-url"></label></div></form>')


def _table(lb: Leaderboard) -> str:
    display = get_ranking_method(_rules(lb)[0]).display
    arrow = "&#8595;" if display.lower_is_better else "&#8593;"
    return ('<div class="rw-result"><p class="rw-status" role="status" aria-live="polite"></p>'
            f'<div class="scroll"><table id="{TABLE_ID}" class="leaderboard">'
            "<caption>Re-weighted ranking (not official)</caption><thead><tr>"
            '<th class="num">#</th><th>Candidate</th><th>Participant</th>'
            f'<th class="num">{html_text(display.label.capitalize())} {arrow}</th>'
            '<th class="num">Official #</th><th>Move</th></tr></thead><tbody></tbody></table></div>'
            '<p class="note rw-excluded"></p></div>')
