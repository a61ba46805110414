"""Everything ``metascore analyze`` computes, as one pure function and one result.

:func:`analyze` compares methods on one phase (:func:`~.compare.compare_methods`), adds
the judge-axis stability against the number of judges, each method's bootstrap rank
intervals, and with a second phase the meta-train/meta-test curves of the top-k rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..jsonable import jsonable
from ..errors import ConfigError, InputError
from ..matrix import ScoreMatrix
from .bootstrap import single_threaded_blas
from .compare import MethodComparison, check_axes, compare_methods, too_few_to_compare
from .costs import NOTED_WORK, MethodCost, costlier_than_the_rest, method_costs
from .criteria import positive_int
from .execution import Execution
from .stability import StabilityCurve, default_sizes, stability_vs_judges
from .topk import SPLITS, TopKCurves, top_k_curves
from .uncertainty import RankUncertainty, rank_uncertainty
from .shared import resolve, setup, Setup

__all__ = ["analyze", "AnalysisResult"]


@dataclass(frozen=True)
class AnalysisResult:
    """What :func:`analyze` found.

    Attributes
    ----------
    comparison : MethodComparison or None
        The criteria table; None with fewer than :data:`~.compare.MIN_COMPARED` candidates
        (``settings["comparison_note"]`` says why).
    curve : StabilityCurve
        Judge stability against the number of judges.
    intervals : dict
        ``{method: RankUncertainty}``: bootstrap rank intervals over the judges.
    topk : dict or None
        ``{method: TopKCurves}`` when a final phase was given (the development phase picks
        the top k, random halves of the final phase's judges are meta-train and
        meta-test) or the matrix was cut into three phases (``topk``).
    settings : dict
        How it was computed; ``notes`` (only when there is one) repeats every part's notes
        about skipped trials and undefined values, each prefixed with the part's name.
    costs : dict
        ``{method: MethodCost}`` for the methods that ranked some resamples one at a time
        (``settings["costs"]`` holds what does not depend on the machine).
    """

    comparison: MethodComparison | None
    curve: StabilityCurve
    intervals: dict[str, RankUncertainty]
    topk: dict[str, TopKCurves] | None
    settings: dict[str, Any]
    costs: dict[str, MethodCost] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "settings": self.settings,
                "comparison": None if self.comparison is None else self.comparison.to_dict(),
                "stability_vs_judges": self.curve.to_dict(),
                "rank_intervals": {m: u.to_dict() for m, u in self.intervals.items()},
                "top_k": None if self.topk is None else {m: c.to_dict() for m, c in self.topk.items()},
            }
        )

    def parts(self) -> list[tuple[str, Any]]:
        """Every result of the analysis, with its name, in report order."""
        criteria = {} if self.comparison is None else self.comparison.criteria
        out: list[tuple[str, Any]] = [(_IN_NOTES.get(key, key), res) for key, res in criteria.items()]
        out.append(("stability vs judges", self.curve))
        out += [(f"rank intervals of {m}", u) for m, u in self.intervals.items()]
        out += [(f"top-k of {m}", c) for m, c in (self.topk or {}).items()]
        return out

    @property
    def skipped(self) -> dict[str, tuple[int, int]]:
        """``{part: (skipped, trials)}`` for every part that skipped trials (resamples
        without a usable judge, or, for the generalization, without an out-of-bag judge)."""
        return {name: (res.skipped, _trials(res)) for name, res in self.parts() if res.skipped}


#: Names of the comparison's criteria in notes.
_IN_NOTES = {"winner_rank": "winner rank", "condorcet_rate": "Condorcet rate",
          "generalization": "generalization", "stability_judges": "judge stability",
          "stability_candidates": "candidate stability"}


def _trials(res: Any) -> int:
    """How many trials a part drew."""
    if hasattr(res, "sizes"):
        return len(res.sizes) * res.q * res.r
    if hasattr(res, "q"):
        return res.q * res.r
    return res.n_trials


def _notes(result: AnalysisResult) -> list[str]:
    return [f"{name}: {note}" for name, res in result.parts() for note in res.notes]


def _draws(s: Setup, n_trials: int, q: int, r: int, curve_r: int,
           axes: Mapping[str, str] | None, skip: str | None
           ) -> list[tuple[str, int, int, bool]]:
    """The draws of each part of :func:`analyze`, in order: ``(axis, judges drawn,
    trials, reuses earlier scores)`` (:func:`.costs.method_costs`)."""
    ax = check_axes(axes)
    out: list[tuple[str, int, int, bool]] = []
    if not skip:
        out.append((ax["winner_rank"], s.m, n_trials, False))
        if ax["condorcet_rate"] != ax["winner_rank"]:
            out.append((ax["condorcet_rate"], s.m, n_trials, False))
        out += [(ax["generalization"], s.m, n_trials, False), ("judges", s.m, q * r, True),
                ("candidates", s.m, q * r, True)]
    for k in default_sizes(s.m):
        out.append(("judges", int(k), q * curve_r, True))
    return out + [("judges", s.m, n_trials, True)]


def shared_candidates(dev: ScoreMatrix, final: ScoreMatrix) -> list[str]:
    """Candidates of ``dev`` also in ``final``; an InputError when fewer than 2."""
    finals = set(final.candidates)
    common = [c for c in dev.candidates if c in finals]
    if len(common) < 2:
        raise InputError(
            f"the two phases share {len(common)} candidate(s) ({dev.n_candidates} in the "
            f"development phase, {final.n_candidates} in the final phase); the top-k analysis "
            "needs at least 2 candidates ranked in both."
        )
    return common


def analyze(
    data: ScoreMatrix | Setup,
    methods: str | Sequence[str] | None = None,
    *,
    final: ScoreMatrix | None = None,
    topk: str | None = None,
    n_trials: int = 1000,
    q: int = 100,
    r: int = 10,
    curve_r: int = 2,
    level: float = 0.95,
    axes: Mapping[str, str] | None = None,
    concordance: Mapping[str, str] | None = None,
    run: Execution | None = None,
) -> AnalysisResult:
    """Compare ``methods`` on ``data`` (a matrix, or a prepared :class:`~.shared.Setup`)
    the way the thesis advises an organizer to, as ``run`` says (its seed, policy,
    parameters, progress, workers: :class:`~.execution.Execution`).

    ``n_trials`` resamples for the winner rank, the Condorcet rate, the generalization, the
    rank intervals and the top-k curves; ``q`` x ``r`` for the two stabilities and ``q`` x
    ``curve_r`` per size for the stability against the number of judges (at
    :func:`.stability.default_sizes`). The parts share one validated input and the scores
    of the resamples they draw alike (the judge stability's are the rank intervals').

    The top-k curves (:func:`.topk.top_k_curves`, ``n_trials`` splits) come with a
    ``final`` phase (its judges cut in halves) or, with ``topk`` alone, from ``data`` cut in
    three; ``topk`` names the cut (:data:`.topk.SPLITS`; ``"disjoint"`` with ``final``).

    A method without a batched shortcut on some axis ranks those resamples one at a
    time: it is priced, said and perhaps left out before any trial runs (:func:`_priced`:
    ``settings["costs"]``, ``run.notify``, ``run.leave_out_costly``).
    """
    n_trials, curve_r = _checked_sizes(n_trials, curve_r, level)
    whole = data.source or data.matrix if isinstance(data, Setup) else data  # before the policy
    common = None if final is None else shared_candidates(whole, final)
    if topk is not None and topk not in SPLITS:
        raise ConfigError(f"`topk` must be one of {list(SPLITS)}; got {topk!r}.")
    s, run = resolve(data, methods, run)
    skip = too_few_to_compare(s.n)
    s, left_out, costs = _priced(s, run, _draws(s, n_trials, q, r, curve_r, axes, skip))
    run = replace(run, params=None)  # the parameters are the setup's from here on
    comparison = None if skip else compare_methods(  # else the other parts still run
        s, n_trials=n_trials, q=q, r=r, axes=axes, concordance=concordance, run=run)
    with single_threaded_blas():
        curve = stability_vs_judges(s, q=q, r=curve_r, concordance="kendall_w", run=run)
        intervals = {name: rank_uncertainty(s, name, n_trials=n_trials, level=level, run=run)
                     for name in s.methods}
    topks = None
    if final is not None or topk is not None:
        topks = _top_k(s, whole, final, common, topk or "disjoint", n_trials, run)
    settings = {
        "methods": list(s.methods), "n_candidates": whole.n_candidates, "n_judges": whole.n_judges,
        **({"costs": {m: c.to_dict() for m, c in costs.items()}} if costs else {}),
        **({"methods_left_out": left_out} if left_out else {}),
        "n_trials": n_trials, "q": q, "r": r, "curve_r": curve_r, "level": level,
        "seed": run.seed, "missing": s.missing, "params": s.params,
        **_parts(skip, comparison, topk, final, common)}
    return _noted(AnalysisResult(comparison, curve, intervals, topks, settings, costs),
                  left_out)


def _checked_sizes(n_trials: Any, curve_r: Any, level: Any) -> tuple[int, int]:
    """``n_trials`` (at least 2) and ``curve_r`` as ints; a ConfigError for a bad one or a
    ``level`` not strictly between 0 and 1."""
    n_trials = positive_int(n_trials, "n_trials", 2)
    curve_r = positive_int(curve_r, "curve_r")
    if not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ConfigError(f"`level` must be a number strictly between 0 and 1; got {level!r}.")
    return n_trials, curve_r


def _noted(result: AnalysisResult, left_out: Mapping[str, str]) -> AnalysisResult:
    """``result`` whose settings repeat every note: the methods left out, the costs, and
    each part's own notes (the settings of an analysis without a note stay as they were)."""
    notes = [*left_out.values(), *(c.note() for c in result.costs.values()), *_notes(result)]
    return replace(result, settings={**result.settings, "notes": notes}) if notes else result


def _parts(skip: str | None, comparison: MethodComparison | None, split: str | None,
           final: ScoreMatrix | None, common: list[str] | None) -> dict[str, Any]:
    """The settings of the analysis' optional parts: the comparison's axes (or why there
    is none), the top-k split, the final phase."""
    return {
        **({"comparison_note": skip} if skip else {"axes": comparison.axes,
                                                  "concordance": comparison.concordance}),
        **({"topk_split": split} if split is not None else {}),
        "final": None if final is None else {"n_candidates": final.n_candidates,
                                              "n_judges": final.n_judges,
                                              "shared_candidates": len(common)},
    }


def _priced(s: Setup, run: Execution, draws: list[tuple[str, int, int, bool]]
            ) -> tuple[Setup, dict[str, str], dict[str, MethodCost]]:
    """The setup without the methods left out for their cost, why each was left out, and
    the costs worth a note of the methods kept, in their order.

    A method without a batched shortcut on some axis ranks those resamples one at a time:
    ``settings["costs"]`` and a note say how many (:func:`.costs.method_costs`; from
    :data:`.costs.NOTED_WORK`), and ``run.notify`` (when given) receives, before any trial
    runs, what each will cost here (:meth:`.costs.MethodCost.estimate`) and which methods
    are left out. With ``run.leave_out_costly``, a method ranking resamples one at a time
    whose work exceeds that of the other methods together
    (:func:`.costs.costlier_than_the_rest`) is left out (``settings["methods_left_out"]``,
    with the note)."""
    costs = method_costs(s, draws)
    rest = costlier_than_the_rest(costs) if run.leave_out_costly else {}
    left_out = {m: f"{m} left out: {costs[m].note()[:-1]}, {costs[m].work:.2g} pair-judge "
                   f"visits in all, more than the {work:.2g} of the other methods together; "
                   "name it among the methods to compare it anyway." for m, work in rest.items()}
    if left_out:
        s = s.restricted([m for m in s.methods if m not in left_out])
    noted = {m: costs[m] for m in s.methods
             if costs[m].rankings and costs[m].slow_work >= NOTED_WORK}
    if run.notify is not None:
        for text in [*left_out.values(), *(c.estimate() for c in noted.values())]:
            run.notify(text)
    return s, left_out, noted


def _top_k(s: Setup, whole: ScoreMatrix, final: ScoreMatrix | None, common: list[str] | None,
           split: str, n_trials: int, run: Execution) -> dict[str, TopKCurves]:
    """Each method's top-k curves: the development phase ``s`` (or its shared candidates,
    prepared once) then ``final`` (its shared candidates, prepared once), or ``s`` cut in
    three."""
    phases: tuple[Setup, ...] = (s,)
    if final is not None:
        run_all = replace(run, params=s.params)
        dev = s if len(common) == whole.n_candidates else setup(
            whole.subset(candidates=common), s.methods, run_all)
        phases = (dev, setup(final.subset(candidates=common), s.methods, run_all))
    return {name: top_k_curves(*phases, method=name, n_trials=n_trials, judge_split=split,
                               run=replace(run, params={name: s.params[name]}))
            for name in s.methods}
