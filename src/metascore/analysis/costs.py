"""What the methods without a batched shortcut cost in an analysis, before it runs.

A method whose declared shortcuts (:class:`metascore.resampling.Shortcuts`) cover an axis
is scored on a whole block of resamples by a few matrix products; on the other axes it
ranks every resample in full (:mod:`.per_trial`), as a relative difference on values
does under candidate resampling (a pass over the pairs of each resample) or a pairwise
method fitted per resample (``epp``, ``schulze``, ``kemeny_young``). :func:`method_costs`
counts those rankings over the draws an analysis makes (the parts that draw alike share
them, :mod:`.bootstrap`): the report says how many; the command line also prices them at
the time the method took to rank the whole matrix. Without ``--methods`` it leaves out a
default method whose work (rankings x candidates^2 x judges, the same on every machine,
so the same methods are compared everywhere) exceeds its budget.
"""

from __future__ import annotations

from dataclasses import dataclass

from .shared import Setup
from .bootstrap import routes
from .fastpaths import shortcuts

__all__ = ["MethodCost", "method_costs", "NOTED_WORK"]

#: Work (rankings x candidates^2 x judges) from which a method's cost is reported: below,
#: the rankings one at a time take a fraction of a second.
NOTED_WORK = 1e8


@dataclass(frozen=True)
class MethodCost:
    """``method`` ranks ``rankings`` resamples of ``n`` candidates and ``m`` judges one at
    a time, on the ``axes`` its shortcuts do not cover; ``seconds_each``: the time its
    ranking of the whole matrix took (what one such ranking costs, about)."""

    method: str
    axes: tuple[str, ...]
    rankings: int
    n: int
    m: int
    seconds_each: float

    @property
    def work(self) -> float:
        """``rankings x n^2 x m``: pairs of candidates times judges, over the rankings (a
        proxy of the cost that does not depend on the machine)."""
        return float(self.rankings) * self.n * self.n * self.m

    @property
    def seconds(self) -> float:
        """The time estimate: ``rankings x seconds_each`` (on this machine)."""
        return self.rankings * self.seconds_each

    def axes_text(self) -> str:
        """``the 'candidates' and 'both' resampling axes``."""
        names = " and ".join(f"'{a}'" for a in self.axes)
        return f"the {names} resampling ax{'es' if len(self.axes) > 1 else 'is'}"

    def note(self) -> str:
        return (f"{self.method} has no batched shortcut on {self.axes_text()}: it ranks "
                f"{self.rankings:,} resamples one at a time, a full ranking each.")

    def estimate(self) -> str:
        return (f"{self.note()[:-1]}, about {self.seconds_each:.2g} s each here (its ranking "
                f"of the whole matrix): about {self.seconds:,.0f} s.")

    def to_dict(self) -> dict:
        return {"axes": list(self.axes), "rankings": self.rankings}


def _one_at_a_time(s: Setup, axis: str) -> set[str]:
    way = routes(s, axis)
    return {m for m in s.methods if way[m] in ("counted", "direct", "registry")
            or (way[m] == "candidates" and shortcuts(m).one_at_a_time(s.params[m]))}


def method_costs(s: Setup, draws: list[tuple[str, int, int, bool]]) -> dict[str, MethodCost]:
    """The cost of each method of ``s`` that ranks some resamples one at a time, over
    ``draws``: the ``(axis, judges drawn, trials, reuses)`` of each part in the order
    they run (a part that ``reuses`` the scores of an earlier part's draws, when it drew
    as many, costs nothing)."""
    scored: dict[tuple[str, int], int] = {}
    rankings: dict[str, int] = {}
    axes: dict[str, list[str]] = {}
    for axis, size, trials, reuses in draws:
        if reuses and scored.get((axis, size), 0) >= trials:
            continue
        scored[(axis, size)] = max(trials, scored.get((axis, size), 0))
        for name in _one_at_a_time(s, axis):
            rankings[name] = rankings.get(name, 0) + trials
            axes.setdefault(name, [])
            if axis not in axes[name]:
                axes[name].append(axis)
    return {m: MethodCost(m, tuple(axes[m]), rankings[m], s.n, s.m, s.seconds.get(m, 0.0))
            for m in s.methods if m in rankings}
