"""Small building blocks of the inline-SVG plots of the analysis reports.

Shared by :mod:`metascore.render.comparison_html` (the method comparison fragment) and
:mod:`metascore.render.analysis_report` (``analysis.html``): escaping, number formatting, the
methods' colours, an ``<svg>`` element, linear scales, a plot frame with ticks and a legend.
Pure string building; nothing here reads or writes files.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["PALETTE", "esc", "fmt_num", "method_color", "svg_doc", "even_ticks", "linear_scale",
           "axes_frame", "legend"]

#: Colors of the methods, in order (colour-blind-safe Tableau 10).
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def fmt_num(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def method_color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def svg_doc(width: float, height: float, label: str, body: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{esc(label)}">'
            f"{body}</svg>")


def even_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    return list(np.linspace(lo, hi, count))


def linear_scale(lo: float, hi: float, a: float, b: float) -> Callable[[float], float]:
    span = (hi - lo) or 1.0
    return lambda v: a + (v - lo) / span * (b - a)


def axes_frame(x0: float, x1: float, y0: float, y1: float, xticks: Sequence[tuple[float, str]],
                yticks: Sequence[tuple[float, str]], xlabel: str, ylabel: str) -> str:
    parts = [f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="#fff" '
             'stroke="#d9e2ec"/>']
    for x, text in xticks:
        parts.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y1}" stroke="#eef2f7"/>'
                     f'<text x="{x:.1f}" y="{y1 + 14}" text-anchor="middle">{esc(text)}</text>')
    for y, text in yticks:
        parts.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x1}" y2="{y:.1f}" stroke="#eef2f7"/>'
                     f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{esc(text)}</text>')
    parts.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{y1 + 30}" text-anchor="middle">{esc(xlabel)}</text>')
    if ylabel:
        parts.append(f'<text x="12" y="{(y0 + y1) / 2:.1f}" text-anchor="middle" '
                     f'transform="rotate(-90 12 {(y0 + y1) / 2:.1f})">{esc(ylabel)}</text>')
    return "".join(parts)


def legend(methods: Sequence[str]) -> str:
    return '<p class="note">' + " ".join(
        f'<span class="dot" style="background:{method_color(i)}"></span>{esc(m)}&nbsp;&nbsp;'
        for i, m in enumerate(methods)) + "</p>"
