"""The first screen of ``detailed_results.html``: where am I, who won, by what rule.

On Codabench the page opens in a frame of about 1155 x 710 px inside the competition's page,
with nothing around it naming the competition. So the page's head says, before anything
else: the competition (``output.title``, which ``bundle add-meta`` copies from
``competition.yaml``) and the phase ranked, the winner by participant name, and in one
sentence the rule: who was ranked (the filter, its count and the judges of the phase that
decides it), by which method over which judges of the ranked phase, and how a tie is broken.
The summary cards and the final board follow it.
"""

from __future__ import annotations

from ..leaderboard import Board, Leaderboard, Row
from ..method_spec import Display
from ..submission_order import BY_NUMBER, BY_TIME, EARLIER
from .report_format import html_text
from .report_labels import JUDGES_NAMED, judge_labels, judges_in_words
from .report_robustness import robustness_html

__all__ = ["page_title", "render_head", "judges_of"]


def _who(row: Row | None, candidate: str) -> str:
    """``alice (alice-8)``: the participant, with the candidate id when it differs."""
    name = row.participant if row is not None and row.participant else candidate
    return name if name == candidate else f"{name} ({candidate})"


def first_place(lb: Leaderboard) -> str:
    """``Winner: alice (alice-8)``, ``Shared first place: ... and ...``, or ``Nobody is ranked``."""
    rows = {r.candidate: r for r in lb.final.rows}
    names = [_who(rows.get(c), c) for c in lb.winners]
    if not names:
        return "Nobody is ranked"
    if len(names) == 1:
        return f"Winner: {names[0]}"
    return "Shared first place: " + ", ".join(names[:-1]) + f" and {names[-1]}"


def page_title(lb: Leaderboard) -> str:
    """The document's ``<title>``: the competition first, when known."""
    title = lb.config.get("output", {}).get("title")
    return f"{title}: final ranking" if title else f"Meta-scoring results: {lb.final.phase}"


def judges_of(lb: Leaderboard, board: Board) -> str:
    """The judges of ``board`` in words (:func:`~.report_labels.judges_in_words`)."""
    named = [j for j, w in zip(board.judges, board.weights) if w != 0][:JUDGES_NAMED]
    labels = judge_labels(named, lb.config.get("judges"), lb.input_summary.titles)
    return judges_in_words(board.judges, board.weights, labels)


def _qualification(lb: Leaderboard) -> str:
    """Where and on which judges the filter decided (before the ranking's own judges)."""
    dev = lb.development
    if dev is None:  # one phase: the filter ranks it on the ranking's judges
        return f"in {lb.final.phase}"
    same = list(dev.judges) == list(lb.final.judges) and list(dev.weights) == list(lb.final.weights)
    return f"in {dev.phase}, on {'the same judges' if same else 'its ' + judges_of(lb, dev)}"


def _rule(lb: Leaderboard, shown: Display) -> str:
    final = lb.final
    n_cand = sum(not r.is_baseline for r in final.rows)
    filt = lb.filter
    if filt is None:
        who = f"{len(final.ranked)} participant(s) of phase {final.phase} ranked"
    elif filt.rule == "beat_baseline":
        names = ", ".join(dict.fromkeys(b.participant or b.candidate for b in filt.baselines)) or "the baseline"
        which = "every baseline" if filt.beat == "all" else "a baseline"
        who = (f"{len(filt.qualified)} of the {n_cand} participant(s) of phase {final.phase} ranked: "
               f"those who beat {which} ({names}) {_qualification(lb)}")
    elif filt.rule == "top_k":
        who = (f"{len(filt.qualified)} of the {n_cand} participant(s) of phase {final.phase} ranked: "
               f"the {filt.k} best {_qualification(lb)}")
    else:
        who = f"{len(final.ranked)} participant(s) of phase {final.phase} ranked"
    sig = lb.signature
    ties = ""
    if "submitted_at" in (sig.get("tie_break") or []):
        basis = str((sig.get("submission_order") or {}).get(final.phase, ""))
        ties = f"; a tie goes to {EARLIER} {BY_TIME if basis.startswith('submission times') else BY_NUMBER}"
    only = " only" if lb.development is not None else ""
    return (f"{who}; by {sig.get('method')} ({shown.label}, {shown.direction}) over "
            f"{judges_of(lb, final)} of phase {final.phase}{only}{ties}.")


def render_head(lb: Leaderboard, shown: Display) -> str:
    """The page's ``<header>``: the competition and phase, the headline, the rule."""
    title = lb.config.get("output", {}).get("title")
    where = f"{html_text(title)} &middot; " if title else ""
    sig = lb.signature
    return "\n".join([
        "<header>",
        f'<p class="where">{where}Final ranking of phase {html_text(lb.final.phase)}</p>',
        f"<h1>{html_text(first_place(lb))}</h1>",
        f'<p class="rule">{html_text(_rule(lb, shown))}</p>',
        robustness_html(lb),
        f"<p>Missing scores: {html_text(sig.get('missing'))}; seed {html_text(sig.get('seed'))}; "
        f"metascore {html_text(sig.get('version'))}.</p>",
        "</header>",
    ])
