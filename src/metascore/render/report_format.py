"""The cells of ``detailed_results.html``: numbers, percentages and rank intervals as
HTML text, escaping, the opening of an inline SVG, and the colours of the rank heatmap, the
margin matrix and the qualification badge (the sections are :mod:`metascore.render.report`)."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

from ..leaderboard import Row

__all__ = ["html_text", "number_html", "three_places_html", "percent_text", "rank_interval_html", "key_label", "clip_end", "svg_open", "rank_color", "margin_color", "qualified_badge"]


def html_text(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def number_html(x: float | None) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "&ndash;"
    x = float(x)
    if x.is_integer() and abs(x) < 1e12:
        return str(int(x))
    return f"{x:.4f}".rstrip("0").rstrip(".") if abs(x) >= 1e-4 else f"{x:.3g}"


def three_places_html(x: float | None) -> str:
    return "&ndash;" if x is None or not math.isfinite(x) else f"{x:.3f}"


def percent_text(p: float | None) -> str:
    """A probability as a percentage: ``98.5%``, ``0%``, ``<0.1%`` (plain text)."""
    if p is None:
        return "\u2013"
    if 0 < p < 0.001:
        return "<0.1%"
    return f"{100 * p:.1f}".rstrip("0").rstrip(".") + "%"


def rank_interval_html(r: Row) -> str:
    if r.rank_low is None:
        return ""
    if r.rank_low == r.rank_high:
        return number_html(r.rank_low)
    return f"{number_html(r.rank_low)}&ndash;{number_html(r.rank_high)}"


def key_label(key: str) -> str:
    return key.replace("_", " ")


def clip_end(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def svg_open(width: float, height: float, label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{html_text(label)}">')


def _mix(c1: Sequence[int], c2: Sequence[int], t: float) -> str:
    r, g, b = (round(a + (b - a) * t) for a, b in zip(c1, c2))
    return f"#{r:02x}{g:02x}{b:02x}"


_GREEN, _YELLOW, _RED = (99, 190, 123), (255, 235, 132), (248, 105, 107)
_BLUE, _WHITE = (76, 132, 224), (247, 248, 250)


def rank_color(rank: float, n: int) -> str:
    t = 0.0 if n <= 1 else min(1.0, max(0.0, (rank - 1) / (n - 1)))
    return _mix(_GREEN, _YELLOW, t * 2) if t <= 0.5 else _mix(_YELLOW, _RED, (t - 0.5) * 2)


def margin_color(t: float) -> str:
    return _mix(_WHITE, _BLUE, t) if t >= 0 else _mix(_WHITE, _RED, -t)


def qualified_badge(qualified: bool) -> str:
    if qualified:
        return '<span class="badge b-ok">qualified</span>'
    return '<span class="badge b-no">excluded</span>'
