"""How ``detailed_results.html`` names the judges: task and column title, wrapped to fit.

A judge's key (``"GDP Nowcasting Task/private_test_RMSE"``) is long and its tail is what
tells two judges of one task apart, so the report never clips it from the end. Instead:

- :func:`judge_labels` splits each key into its task and its metric and shows the
  leaderboard column's title in place of the metric key when the input carries it (a
  judge's ``title`` in the configuration, else ``codabench.json``'s columns, recorded in
  the input summary as ``column_titles``);
- :func:`task_groups` groups consecutive judges of one task, so a table or a heat map
  prints the task once over its columns;
- :func:`wrap` breaks a label into lines at spaces, ``_``, ``-``, ``/`` and ``.``;
  :func:`breakable` lets a browser do the same in an HTML table header;
- :func:`judges_in_words` names a board's judges in a sentence (the report's rule, and the
  "Final ranking" page ``metascore codabench publish`` writes).

:func:`judge_header` and :func:`heatmap_header` draw the judges' headers of the
leaderboard table and of the rank heat map with these; the rest of the page is
:mod:`metascore.render.report`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

__all__ = ["judge_labels", "task_groups", "judge_header", "heatmap_header", "wrap", "breakable",
           "clip_middle", "svg_lines", "judges_in_words", "JUDGES_NAMED"]

#: A sentence names at most this many judges, then says how many more there are.
JUDGES_NAMED = 4
#: A piece of a label that ends where a line may break (after a separator).
_PIECE = re.compile(r"[^\s_/.\-]*[\s_/.\-]*")


def judge_labels(
    judges: Iterable[str], configured: Sequence[Mapping[str, Any]] | None,
    titles: Mapping[str, str] | None,
) -> dict[str, tuple[str, str]]:
    """``{judge key: (task, shown metric)}``; the task is ``""`` for a judge without one.

    ``configured``: the configuration's ``judges`` (dicts with ``task``, ``metric`` and an
    optional ``title``), which give the exact split and a title; ``titles``: ``{column key:
    title}`` of the competition's leaderboard. Other keys split at their first ``/``.
    """
    titles = dict(titles or {})
    exact: dict[str, tuple[str, str, str | None]] = {}
    for j in configured or ():
        task, metric = str(j.get("task") or ""), str(j.get("metric") or "")
        key = (f"{task}/{metric}" if metric else task) if task else metric
        exact[key] = (task, metric, j.get("title"))
    out: dict[str, tuple[str, str]] = {}
    for key in judges:
        if key in exact:
            task, metric, title = exact[key]
            if not metric:  # a one-metric task: the task is the column
                out[key] = ("", title or task)
                continue
        else:
            task, _, metric = key.partition("/") if "/" in key else ("", "", key)
            title = None
        out[key] = (task, title or titles.get(metric) or metric)
    return out


def judges_in_words(judges: Sequence[str], weights: Sequence[float],
                    labels: Mapping[str, tuple[str, str]]) -> str:
    """``1 judge (Accuracy on Final Task)``, ``3 judges (a on x, b on x and c on y)``;
    beyond :data:`JUDGES_NAMED`, ``40 judges (a on x, ..., d on y and 36 more)``. Judges of
    weight 0 are not counted: ``2 judges (...; 1 more shown, not counted)``. ``labels``:
    :func:`judge_labels`' (a judge without one is named by its key)."""
    counted = [j for j, w in zip(judges, weights) if w != 0]
    named = [f"{title} on {task}" if task else title
             for task, title in (labels.get(j, ("", j)) for j in counted[:JUDGES_NAMED])]
    if len(counted) > JUDGES_NAMED:
        named.append(f"{len(counted) - JUDGES_NAMED} more")
    text = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1] if named else ""
    zero = len(judges) - len(counted)
    if zero:
        text += f"{'; ' if text else ''}{zero} more shown, not counted"
    return f"{len(counted)} judge{'' if len(counted) == 1 else 's'}" + (f" ({text})" if text else "")


def task_groups(judges: Sequence[str], labels: Mapping[str, tuple[str, str]]) -> list[tuple[str, list[str]]]:
    """Runs of consecutive judges with the same task: ``[(task, [keys])]`` (``""``: none)."""
    groups: list[tuple[str, list[str]]] = []
    for key in judges:
        task = labels[key][0]
        if groups and groups[-1][0] == task and task:
            groups[-1][1].append(key)
        else:
            groups.append((task, [key]))
    return groups


def wrap(text: str, width: int, max_lines: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken after a space, ``_``,
    ``-``, ``/`` or ``.`` (a longer piece is cut); beyond ``max_lines`` the last line ends
    with an ellipsis."""
    width = max(2, width)
    lines: list[str] = []
    line = ""
    for piece in (p for p in _PIECE.findall(text) if p):
        while len(piece) > width:  # a piece longer than a line: cut it
            if line:
                lines.append(line)
                line = ""
            lines.append(piece[:width])
            piece = piece[width:]
        if len(line) + len(piece.rstrip()) > width:
            lines.append(line)
            line = ""
        line += piece
    if line or not lines:
        lines.append(line)
    lines = [ln.rstrip() for ln in lines]
    if len(lines) > max_lines:
        last = lines[max_lines - 1]
        lines = lines[:max_lines - 1] + [last[: width - 1].rstrip() + "\u2026"]
    return lines


def breakable(text: str) -> str:
    """``text`` escaped for HTML, with a line-break opportunity after ``_``, ``/`` and
    ``.`` (a browser already breaks after spaces and hyphens)."""
    return re.sub(r"(?<=[_/.])", "<wbr>", html.escape(text, quote=True)).removesuffix("<wbr>")


def clip_middle(text: str, n: int) -> str:
    """``text`` in at most ``n`` characters, an ellipsis in the middle (the start and the
    end of a name are what tell names apart)."""
    if len(text) <= n:
        return text
    head = (n - 1) // 2
    return text[:head] + "\u2026" + text[len(text) - (n - 1 - head):]


def svg_lines(x: float, y: float, lines: Sequence[str], line_height: float, attrs: str,
              title: str) -> str:
    """An SVG ``<text>`` of several lines centred at ``x``, the first baseline at ``y``,
    with the full name as its tooltip."""
    spans = "".join(
        f'<tspan x="{x:.1f}" dy="{0 if i == 0 else line_height}">{html.escape(ln)}</tspan>'
        for i, ln in enumerate(lines))
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="middle" {attrs}>{spans}'
            f"<title>{html.escape(title)}</title></text>")


def judge_header(judges: Sequence[str], higher_is_better: Sequence[bool], head: Sequence[str],
                 labels: Mapping[str, tuple[str, str]], uncounted: Collection[str] = ()) -> str:
    """The ``<tr>`` header rows of a leaderboard table: the cells ``head`` (before the
    judges), then one column per judge, its title wrapped, under its task's name (a second
    row when a judge has a task); the key and direction in the tooltip. A judge of
    ``uncounted`` (weight 0) says "not counted" under its title."""
    groups = task_groups(judges, labels)
    two = any(task for task, _ in groups)
    first = [_rowspan(c) for c in head] if two else list(head)
    second: list[str] = []
    hib = dict(zip(judges, higher_is_better))
    for task, keys in groups:
        cells = []
        for j in keys:
            arrow = "&#8593;" if hib[j] else "&#8595;"
            zero = j in uncounted
            why, mark = ("; weight 0: shown, not counted", '<br><span class="sub">not counted</span>') \
                if zero else ("", "")
            cells.append(f'<th class="num judge" title="{html.escape(j)}: '
                         f'{"higher" if hib[j] else "lower"} is better{why}">'
                         f"{breakable(labels[j][1])}&nbsp;{arrow}{mark}</th>")
        if not task:
            first += [_rowspan(c) if two else c for c in cells]
            continue
        first.append(f'<th class="task" colspan="{len(keys)}" title="task {html.escape(task)}">'
                     f"{breakable(task)}</th>")
        second += cells
    return f'<tr>{"".join(first)}</tr>' + (f'<tr>{"".join(second)}</tr>' if two else "")


def _rowspan(cell: str) -> str:
    """A header cell made two rows high (its attributes are escaped: no ``>`` inside)."""
    return cell.replace(">", ' rowspan="2">', 1)


def _chars(width: float) -> int:
    """How many 12 px characters a label of ``width`` pixels holds."""
    return int((width - 8) / 6.8)


def heatmap_header(judges: Sequence[str], labels: Mapping[str, tuple[str, str]],
                   left: float) -> tuple[int, int, list[str]]:
    """The column labels of the rank heat map whose columns start at ``left``: each task
    once over its columns, each title on up to 3 lines. Returns ``(cell width, top of the
    first row, SVG elements)``; a cell widens (up to 148 px) until the titles fit."""
    cell_w, line_h = 92, 14
    while cell_w < 148 and any(len(wrap(labels[j][1], _chars(cell_w), 9)) > 3 for j in judges):
        cell_w += 8
    groups = task_groups(judges, labels)
    group_lines = {task: wrap(task, _chars(cell_w * len(keys)), 2) for task, keys in groups if task}
    title_lines = {j: wrap(labels[j][1], _chars(cell_w), 3) for j in judges}
    band = max((len(v) for v in group_lines.values()), default=0) * line_h
    top = 16 + band + (6 if band else 0) + max(len(v) for v in title_lines.values()) * line_h
    out = []
    k = 0
    for task, keys in groups:
        x0, x1 = left + k * cell_w, left + (k + len(keys)) * cell_w
        if task:
            out.append(svg_lines((x0 + x1) / 2, 14, group_lines[task], line_h,
                                 'font-size="12" font-weight="600" fill="#66788a"', f"task {task}"))
            out.append(f'<line x1="{x0 + 4}" y1="{band + 8}" x2="{x1 - 4}" y2="{band + 8}" '
                       'stroke="#c3cfdc" stroke-width="1.5"/>')
        for j in keys:
            lines = title_lines[j]
            out.append(svg_lines(left + k * cell_w + cell_w / 2, top - 8 - (len(lines) - 1) * line_h,
                                 lines, line_h, 'font-size="12" font-weight="600" fill="#1f2933"', j))
            k += 1
    return cell_w, top, out
