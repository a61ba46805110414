"""How robust the winner is to the judges' weights, in the words of the ranking page and
in ``leaderboard.json`` (the figures: :mod:`metascore.analysis.robustness`).

The page says it in one sentence under its head ("Every judge's weight may move by up to
12% in any direction and alice stays first; a 13% shift (more weight on ..., less on ...)
puts bob first."), then where the second and third places hold. Percentages are rounded
so that both halves stay true: the first down, the second up (one more decimal when the
figure falls on the rounding grid). A bound says so; a figure not computed says why.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from ..analysis.robustness import PlaceShift, Robustness
from ..leaderboard import Leaderboard
from .report_format import html_text
from .report_labels import judge_labels

__all__ = ["robustness_sentence", "robustness_html", "robustness_json"]

#: Judges named in a sentence on each side of the shift (then "and N more").
NAMED = 3
#: Below this shift, a place is held by a hair: "less than 0.1%".
HAIR = 0.001
_ORDINALS = {2: "second", 3: "third"}


def robustness_json(lb: Leaderboard) -> dict[str, Any] | None:
    """``leaderboard.json``'s ``robustness``: the figures and the page's sentence."""
    if lb.robustness is None:
        return None
    return {**lb.robustness.to_dict(), "sentence": robustness_sentence(lb)}


def robustness_html(lb: Leaderboard) -> str:
    """The page's paragraph (``<p class="robustness">``), or nothing without figures."""
    text = robustness_sentence(lb)
    return f'<p class="robustness">{html_text(text)}</p>' if text else ""


def robustness_sentence(lb: Leaderboard) -> str:
    """What the figures say, in plain text: the winner, then the second and third places."""
    rob = lb.robustness
    if rob is None:
        return ""
    words = _Words(lb)
    if not rob.places:
        ranked = lb.final.ranked
        if not ranked:
            return "Nobody is ranked: there is no winner for a re-weighting of the judges to change."
        return (f"{words.name(ranked[0].candidate)} is the only candidate ranked: no "
                "re-weighting of the judges changes the winner.")
    first = _winner(rob, rob.places[0], words)
    rest = [_later(p, words) for p in rob.places[1:] if p.kind != "not computed"]
    if not rest:
        return first
    return first + " " + _join(rest)[0].upper() + _join(rest)[1:] + "."


class _Words:
    """Names as the page writes them: participants, judges' titles."""

    def __init__(self, lb: Leaderboard) -> None:
        self.rows = {r.candidate: r for r in lb.final.rows}
        self.winners = set(lb.winners)
        count = Counter(r.participant or r.candidate for r in lb.final.ranked)
        self.shared = {p for p, k in count.items() if k > 1}
        named = {j for p in (lb.robustness.places if lb.robustness else ())
                 for j in (*p.raised, *p.lowered)}
        self.labels = judge_labels([j for j in lb.final.judges if j in named],
                                   lb.config.get("judges"), lb.input_summary.titles)

    def name(self, candidate: str | None) -> str:
        """``alice``, or ``alice (alice-8)`` when alice has several ranked submissions."""
        row = self.rows.get(candidate) if candidate is not None else None
        name = row.participant if row is not None and row.participant else candidate
        return f"{name} ({candidate})" if name in self.shared and name != candidate else str(name)

    def judges(self, keys: tuple[str, ...], count: int) -> str:
        named = [self._judge(k) for k in keys[:NAMED]]
        if count > len(named):
            named.append(f"{count - len(named)} more")
        return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]

    def _judge(self, key: str) -> str:
        task, title = self.labels.get(key, ("", key))
        return f"{title} on {task}" if task else title

    def how(self, place: PlaceShift) -> str:
        """``(more weight on a and b, less on c)``: the direction of the shift found."""
        parts = []
        if place.n_raised:
            parts.append("more weight on " + self.judges(place.raised, place.n_raised))
        if place.n_lowered:
            parts.append("less on " + self.judges(place.lowered, place.n_lowered))
        return f" ({', '.join(parts)})" if parts else ""


def percents(x: float) -> tuple[str, str]:
    """``x`` as two percentages, one below it and one above it: whole percents from 10%,
    one decimal below; one more decimal when ``x`` falls on the grid (60%: 59.9% and
    60.1%)."""
    grid = 0.01 if x >= 0.1 else 0.001
    if abs(x / grid - round(x / grid)) < 1e-9:
        grid /= 10
        low = high = round(x / grid) * grid
        low, high = low - grid, high + grid
    else:
        low, high = math.floor(x / grid) * grid, math.ceil(x / grid) * grid
    places = max(0, -round(math.log10(grid * 100)))
    return f"{low * 100:.{places}f}%", f"{high * 100:.{places}f}%"


def _slight(x: float) -> str:
    """A shift below :data:`HAIR` in words."""
    return "the slightest shift" if x <= 1e-12 else "a shift below 0.1%"


def _winner(rob: Robustness, place: PlaceShift, words: _Words) -> str:
    holder = words.name(place.holder)
    if place.kind == "not computed":
        return (f"How far the judges' weights may move before the winner changes is not "
                f"computed for {rob.method}: {place.note}.")
    if place.shift is None:
        one = "Only one judge counts: " if rob.n_judges == 1 else ""
        return (f"{one}{'n' if one else 'N'}o re-weighting of the judges (every weight kept "
                f"above 0) puts anyone but {holder} first.")
    safe, past = percents(place.shift)
    if place.kind == "bound":
        return (f"Every judge's weight may move by up to {safe} in any direction and {holder} "
                f"stays first (a bound for {rob.method}: a larger shift may be needed to change "
                "the winner).")
    challenger = words.name(place.challenger)
    if place.shift < HAIR:
        level = (f"{holder} and {challenger} share the first place (the tie-break lists "
                 f"{holder} first)" if place.challenger in words.winners
                 else f"{holder} is first by a hair")
        return (f"{level}: {_slight(place.shift)} of the judges' weights{words.how(place)} "
                f"puts {challenger} first.")
    return (f"Every judge's weight may move by up to {safe} in any direction and {holder} "
            f"stays first; a {past} shift{words.how(place)} puts {challenger} first.")


def _later(place: PlaceShift, words: _Words) -> str:
    """``second place (bob) holds under shifts up to 4.9%``."""
    what = f"{_ORDINALS.get(place.position, f'#{place.position}')} place ({words.name(place.holder)})"
    if place.shift is None:
        return f"{what} holds under any re-weighting"
    if place.shift < HAIR:
        return f"{what} changes with {_slight(place.shift)}"
    bound = " (at least)" if place.kind == "bound" else ""
    return f"{what} holds under shifts up to {percents(place.shift)[0]}{bound}"


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else "; ".join(parts)

