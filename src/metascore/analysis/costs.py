"""What each method costs in an analysis, before it runs.

A method whose declared shortcuts (:class:`metascore.resampling.Shortcuts`) cover an axis
is scored on a whole block of resamples by a few matrix products; on the other axes it
ranks every resample in full (:mod:`.per_trial`), as a relative difference on ranks does
under candidate resampling (a pass over the drawn candidates of each resample) or a
pairwise method fitted per resample (``epp``, ``schulze``, ``kemeny_young``).
:func:`method_costs` counts, over the draws an analysis makes (the parts that draw alike
share them, :mod:`.bootstrap`), the resamples each method ranks one at a time and those
it scores in blocks, and weighs them in one unit that does not depend on the machine (so
the same methods are compared everywhere): a ranking one at a time visits every pair of
candidates on every judge (n^2 m), a batched resample reads one row of products (n (n +
m)). The report says how many rankings; the command line also prices them, before they
run, at the time the method took to rank the whole matrix; and without ``--methods`` it
leaves out a default method that costs more than the other methods together.
"""

from __future__ import annotations

from dataclasses import dataclass

from .shared import Setup
from .bootstrap import routes

__all__ = ["MethodCost", "method_costs", "costlier_than_the_rest", "NOTED_WORK"]

#: Work (rankings x candidates^2 x judges) from which a method's cost is reported: below,
#: the rankings one at a time take a fraction of a second.
NOTED_WORK = 1e8


@dataclass(frozen=True)
class MethodCost:
    """``method`` ranks ``rankings`` resamples of ``n`` candidates and ``m`` judges one at
    a time, on the ``axes`` its shortcuts do not cover, and scores ``batched`` resamples by
    its shortcuts; ``seconds_each``: the time its ranking of the whole matrix took (what
    one ranking one at a time costs, about)."""

    method: str
    axes: tuple[str, ...]
    rankings: int
    n: int
    m: int
    seconds_each: float
    batched: int = 0

    @property
    def slow_work(self) -> float:
        """``rankings x n^2 x m``: pairs of candidates times judges, over the rankings one
        at a time."""
        return float(self.rankings) * self.n * self.n * self.m

    @property
    def work(self) -> float:
        """:attr:`slow_work` plus ``batched x n (n + m)`` (a batched resample reads a row
        of the pair table or of the per-judge products): the cost in a unit that does not
        depend on the machine."""
        return self.slow_work + float(self.batched) * self.n * (self.n + self.m)

    @property
    def seconds(self) -> float:
        """The time estimate of the rankings one at a time: ``rankings x seconds_each``
        (on this machine)."""
        return self.rankings * self.seconds_each

    def axes_text(self) -> str:
        """``the 'candidates' and 'both' resampling axes``."""
        names = " and ".join(f"'{a}'" for a in self.axes)
        return f"the {names} resampling ax{'es' if len(self.axes) > 1 else 'is'}"

    def note(self) -> str:
        return (f"{self.method} has no batched shortcut on {self.axes_text()}: it ranks "
                f"{self.rankings:,} resamples one at a time, a full ranking each.")

    def estimate(self) -> str:
        """What it will cost here, said before it runs."""
        return (f"{self.method} has no batched shortcut on {self.axes_text()}: it will rank "
                f"{self.rankings:,} resamples one at a time, a full ranking each, about "
                f"{self.seconds_each:.2g} s each here (its ranking of the whole matrix): "
                f"about {self.seconds:,.0f} s.")

    def to_dict(self) -> dict:
        return {"axes": list(self.axes), "rankings": self.rankings}


def costlier_than_the_rest(costs: dict[str, MethodCost]) -> dict[str, float]:
    """``{method: the others' work together}`` for a method ranking resamples one at a
    time (at least :data:`NOTED_WORK`) whose work exceeds that of all the other methods
    together (at most one can; none when it is the only method)."""
    total = sum(c.work for c in costs.values())
    return {m: total - c.work for m, c in costs.items()
            if len(costs) > 1 and c.slow_work >= NOTED_WORK and c.work > total - c.work}


def _one_at_a_time(s: Setup, axis: str) -> set[str]:
    way = routes(s, axis)
    return {m for m in s.methods if way[m] in ("counted", "direct", "registry")
            or (way[m] == "candidates" and s.hooks(m).one_at_a_time(s.params[m]))}


def method_costs(s: Setup, draws: list[tuple[str, int, int, bool]]) -> dict[str, MethodCost]:
    """The cost of every method of ``s`` over ``draws``: the ``(axis, judges drawn,
    trials, reuses)`` of each part in the order they run (a part that ``reuses`` the
    scores of an earlier part's draws, when it drew as many, costs nothing)."""
    scored: dict[tuple[str, int], int] = {}
    rankings = dict.fromkeys(s.methods, 0)
    batched = dict.fromkeys(s.methods, 0)
    axes: dict[str, list[str]] = {m: [] for m in s.methods}
    for axis, size, trials, reuses in draws:
        if reuses and scored.get((axis, size), 0) >= trials:
            continue
        scored[(axis, size)] = max(trials, scored.get((axis, size), 0))
        slow = _one_at_a_time(s, axis)
        for name in s.methods:
            if name in slow:
                rankings[name] += trials
                if axis not in axes[name]:
                    axes[name].append(axis)
            else:
                batched[name] += trials
    return {m: MethodCost(m, tuple(axes[m]), rankings[m], s.n, s.m, s.seconds.get(m, 0.0),
                          batched[m]) for m in s.methods}
