"""Baseline filtering for the final phase (thesis 6.6 and 8.1.7; the ``filter`` section of
docs/configuration.md).

The development phase (after participant selection) is ranked with the configured method,
baselines included. A final-phase candidate is matched to its development counterpart by
participant (falling back to the candidate id) and qualifies according to the rule:

- ``beat_baseline``: its development rank is **strictly** better than the rank of every
  baseline (``beat="all"``) or of at least one (``beat="any"``). Ranks are fractional, so
  a candidate whose score equals a baseline's shares its rank and does not qualify.
- ``top_k``: its development counterpart is among the ``k`` best non-baseline development
  candidates (in leaderboard order, tie-breaks applied). ``k="auto"`` uses the thesis'
  estimate ``k* = 1 + d / n`` (chapter 6), ``d`` the number of candidate pairs that the
  development and final rankings of the ``n`` common candidates order oppositely (Kendall
  tau distance), and admits ``ceil(k*)`` candidates.
- ``none``: everyone qualifies.

A final candidate without a development counterpart never qualifies (the reason says so).
In a one-phase competition (``same_phase``) the phase is both: each candidate is compared,
within the phase, with the baselines scored there, and the reasons name the phase rather
than a "development" phase that does not exist.
Every decision carries a one-sentence reason; the threshold (the baselines' development
scores and positions) is part of the result. A reason cites a baseline by the name it has
on the final board when that differs from its development id (Codabench gives a migrated
copy a new id: "baseline 'kit-5' (4.67 as 'kit-1' in 'Development')"), so a reader finds it
on both boards (:func:`baseline_counterparts`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..errors import InputError
from ..registry import get_ranking_method
from ..method_spec import Display
from ..matrix import ScoreMatrix
from ..ranking import Ranking
from .selection import participant_key
from ..analysis.topk import k_star

__all__ = ["BaselineScore", "Decision", "FilterResult", "filter_final", "baseline_counterparts",
           "phase_score_text", "proposed_k", "top_k_text"]


@dataclass(frozen=True)
class BaselineScore:
    """A baseline's development score, fractional rank and position (the threshold)."""

    candidate: str
    participant: str | None
    score: float
    rank: float
    position: int


@dataclass(frozen=True)
class Decision:
    """Whether one final-phase candidate qualified, and why."""

    candidate: str
    participant: str | None
    qualified: bool
    reason: str
    dev_candidate: str | None = None
    dev_score: float | None = None
    dev_position: int | None = None


@dataclass(frozen=True)
class FilterResult:
    """Outcome of the final-phase filter.

    Attributes
    ----------
    rule, beat : str
        The rule applied and, for ``beat_baseline``, ``"all"`` or ``"any"``.
    baselines : tuple of BaselineScore
        Development scores and positions of the baselines, best first.
    threshold : float or None
        The development score to beat strictly: the best baseline's (``all``) or the
        worst one's (``any``); None for the other rules.
    k : int or None
        Number of development candidates admitted (``top_k``).
    k_estimate : float or None
        ``k* = 1 + d / n`` when ``k="auto"``.
    kendall_distance : float or None
        ``d`` used by the estimate (discordant pairs, not normalized).
    decisions : tuple of Decision
        One per final-phase non-baseline candidate, by development position (candidates
        absent from development last), then candidate id.
    message : str or None
        Set when nobody qualified.
    """

    rule: str
    beat: str
    baselines: tuple[BaselineScore, ...]
    threshold: float | None
    k: int | None
    k_estimate: float | None
    kendall_distance: float | None
    decisions: tuple[Decision, ...]
    message: str | None = None

    @property
    def qualified(self) -> tuple[str, ...]:
        return tuple(d.candidate for d in self.decisions if d.qualified)

    @property
    def excluded(self) -> dict[str, str]:
        return {d.candidate: d.reason for d in self.decisions if not d.qualified}


def filter_final(
    dev: Ranking,
    final: ScoreMatrix,
    *,
    rule: str = "beat_baseline",
    beat: str = "all",
    k: int | str | None = None,
    rank_fn: Callable[[ScoreMatrix], Ranking] | None = None,
    dev_phase: str = "development",
    dropped_baselines: Mapping[str, str] | None = None,
    same_phase: bool = False,
) -> FilterResult:
    """Decide which final-phase candidates enter the final ranking (module docstring).

    ``dev`` ranks the development phase (selected candidates and baselines); ``final``
    holds the final-phase candidates after selection (its baselines are shown on the
    leaderboard, never ranked: ignored here); ``rule``, ``beat`` and ``k`` are as in
    :class:`~metascore.config.FilterConfig`; ``rank_fn`` ranks a score matrix with the
    configured method (``k="auto"`` needs it); ``dev_phase`` names the development phase in
    messages; ``dropped_baselines`` are the baselines the missing-data policy removed from
    the development ranking, with the reason (``Ranking.excluded_candidates``), named when
    no baseline is left; with ``same_phase``, ``final`` is the development phase itself (a
    one-phase competition): each candidate is its own counterpart, matched by id.
    """
    dm = dev.matrix
    is_base = np.array(dm.is_baseline if dm is not None and dm.is_baseline else [False] * dev.n)
    order = [int(i) for i in dev.order]
    baselines = _baseline_scores(dev, is_base, order)
    _check_baselines(rule, baselines, dropped_baselines, dev_phase, dev.missing)
    # the name each baseline has on the final board, when it is another id
    names = {} if same_phase else {
        dev_id: found[0] for dev_id, found in baseline_counterparts(final, baselines).items()
        if len(found) == 1 and found[0] != dev_id}
    words = _Words(get_ranking_method(dev.method).display, dev_phase, same_phase, names)
    match = _counterparts(dev, final, order, is_base, same_phase)
    threshold = k_used = k_est = dist = None
    counted: dict[int, int] = {}  # the position top_k counts: among the non-baselines
    if rule == "beat_baseline":
        threshold = (baselines[0] if beat == "all" else baselines[-1]).score
    elif rule == "top_k":
        k_used, k_est, dist = (_auto_k(dev, final, match, rank_fn) if k == "auto"
                               else (int(k), None, None))  # type: ignore[arg-type]
        counted = {j: n for n, j in enumerate((i for i in order if not is_base[i]), 1)}

    def decide(j: int) -> tuple[bool, str]:
        pos = int(dev.positions[j])
        return _decide(rule, beat, float(dev.ranks[j]), float(dev.scores[j]), pos, baselines,
                       k_used, j in counted and counted[j] <= k_used, words,
                       counted.get(j, pos))

    decisions = _decisions(dev, final, match, decide, dev_phase)
    result = FilterResult(rule, beat, baselines, threshold, k_used, k_est, dist, decisions)
    if not result.qualified:
        message = _nobody_message(result, words, _unbeatable(dev, is_base))
        result = replace(result, message=message)
    return result


def _decisions(dev: Ranking, final: ScoreMatrix, match: Mapping[int, int | None],
               decide: Callable[[int], tuple[bool, str]], dev_phase: str
               ) -> tuple[Decision, ...]:
    """One decision per final candidate matched (``match``: its development counterpart),
    by ``decide`` on the counterpart; best development position first, so that outputs do
    not depend on the input order."""
    decisions = []
    for i, j in match.items():
        cand, part = final.candidates[i], final.participants[i] if final.participants else None
        if j is None:
            who = f"participant {part!r}" if part is not None else f"candidate {cand!r}"
            decisions.append(Decision(
                cand, part, False,
                f"absent from the {dev_phase!r} phase (no development submission for {who})",
            ))
            continue
        ok, reason = decide(j)
        decisions.append(Decision(cand, part, ok, reason, dev.candidates[j],
                                  float(dev.scores[j]), int(dev.positions[j])))
    decisions.sort(key=lambda d: (d.dev_position is None, d.dev_position or 0, d.candidate))
    return tuple(decisions)


def _baseline_scores(dev: Ranking, is_base: np.ndarray, order: list[int]
                     ) -> tuple[BaselineScore, ...]:
    """The development baselines with their scores, best first."""
    dm = dev.matrix
    return tuple(
        BaselineScore(dev.candidates[i], dm.participants[i] if dm is not None and dm.participants
                      else None, float(dev.scores[i]), float(dev.ranks[i]),
                      int(dev.positions[i]))
        for i in order if is_base[i]
    )


def _check_baselines(rule: str, baselines: tuple[BaselineScore, ...],
                     dropped: Mapping[str, str] | None, dev_phase: str, missing: str) -> None:
    """Refuse the baseline filter without a baseline, naming those the missing-data policy
    dropped."""
    if rule != "beat_baseline" or baselines:
        return
    if dropped:
        name, why = next(iter(dropped.items()))
        others = f" (and {len(dropped) - 1} more)" if len(dropped) > 1 else ""
        raise InputError(
            f"filter rule 'beat_baseline' needs at least one baseline in the {dev_phase!r} "
            f"phase, but baseline {name!r}{others} was dropped by "
            f"missing={missing!r} ({why}); give the baselines every score, or use "
            "another missing-data policy (e.g. 'worst')."
        )
    raise InputError(
        f"filter rule 'beat_baseline' needs at least one baseline in the {dev_phase!r} "
        "phase; list them under `baselines` in the configuration, flag them is_baseline "
        "in the data, or use filter rule 'none'."
    )


def _counterparts(dev: Ranking, final: ScoreMatrix, order: list[int], is_base: np.ndarray,
                  same_phase: bool) -> dict[int, int | None]:
    """The development counterpart of each final candidate but the baselines (its position
    in ``dev``, None: none): by participant, else by candidate id (by id alone in one
    phase)."""
    dm = dev.matrix
    by_key: dict[str, int] = {}
    for i in order:  # best first, so a participant with several entries maps to its best
        if not is_base[i]:
            by_key.setdefault(participant_key(dm, i) if dm is not None else dev.candidates[i], i)
    by_id = {c: i for i, c in enumerate(dev.candidates) if not is_base[i]}
    match: dict[int, int | None] = {}
    for i in range(final.n_candidates):
        if final.is_baseline and final.is_baseline[i]:
            continue
        if same_phase:
            match[i] = by_id.get(final.candidates[i])
        else:
            match[i] = by_key.get(participant_key(final, i), by_id.get(final.candidates[i]))
    return match


def phase_score_text(shown: Display, score: float, dev_phase: str, same_phase: bool) -> str:
    """A score of the filter's ranking in words: "development average rank 2.5", or in a
    one-phase competition "average rank 2.5 in phase 'Final'"."""
    return f"{shown.text(score)} in phase {dev_phase!r}" if same_phase else f"development {shown.text(score)}"


@dataclass(frozen=True)
class _Words:
    """How the reasons word the filter's ranking and name the baselines."""

    shown: Display
    dev_phase: str
    same_phase: bool
    names: Mapping[str, str]  # a baseline's development id -> its other id on the final board

    def score(self, score: float) -> str:
        return phase_score_text(self.shown, score, self.dev_phase, self.same_phase)

    def position(self, pos: int) -> str:
        return f"position {pos} in phase {self.dev_phase!r}" if self.same_phase else f"development position {pos}"

    def baseline(self, b: BaselineScore) -> str:
        """``'kit-1' (4.67)``, or with another name on the final board ``'kit-5' (4.67 as
        'kit-1' in 'Development')``."""
        return f"{self.name(b)} ({self.shown.short(b.score)}{self.alias(b)})"

    def name(self, b: BaselineScore) -> str:
        return repr(self.names.get(b.candidate, b.candidate))

    def alias(self, b: BaselineScore) -> str:
        return f" as {b.candidate!r} in {self.dev_phase!r}" if b.candidate in self.names else ""


def _decide(
    rule: str, beat: str, r: float, score: float, pos: int,
    baselines: tuple[BaselineScore, ...], k: int | None, in_top: bool, words: _Words,
    counted: int,
) -> tuple[bool, str]:
    """Whether a candidate qualifies, and why, in words a person reads (the method's
    natural quantity, e.g. "average rank 2.5", rather than its internal score).
    ``counted``: the candidate's position without the baselines, which top_k counts."""
    mine = f"{words.score(score)} (position {pos})"
    if rule == "none":
        return True, "no filter (rule 'none')"
    if rule == "top_k":
        where = "within" if in_top else "outside"
        if counted == pos:
            return in_top, f"{words.position(pos)} is {where} the top {k}"
        return in_top, (f"{words.position(counted)} among the non-baseline candidates ({pos} "
                        f"with the baselines) is {where} the top {k}")
    best, worst = baselines[0], baselines[-1]
    if beat == "all":
        if r < best.rank:
            what = "the baseline" if len(baselines) == 1 else "every baseline"
            return True, (f"{mine} beats {what} (best: {words.name(best)}, "
                          f"{words.shown.short(best.score)}{words.alias(best)})")
        ref = best
    else:
        if r < worst.rank:
            return True, f"{mine} beats baseline {words.baseline(worst)}"
        ref = worst
    if r == ref.rank:
        return False, (f"{mine} ties with baseline {words.baseline(ref)}; "
                       "a tie does not qualify")
    return False, f"{mine} does not beat baseline {words.baseline(ref)}"


def baseline_counterparts(final: ScoreMatrix, baselines: Sequence[BaselineScore]) -> dict[str, list[str]]:
    """Each development baseline's final-phase baselines: the same id or, as the filter
    matches candidates, the same participant when that participant has one development
    baseline (Codabench gives a migrated final-phase submission a new id)."""
    by_part: dict[str, list[BaselineScore]] = {}
    for b in baselines:
        by_part.setdefault(b.participant or b.candidate, []).append(b)
    ids = {b.candidate for b in baselines}
    found: dict[str, list[str]] = {b.candidate: [] for b in baselines}
    for i, cand in enumerate(final.candidates):
        if not (final.is_baseline and final.is_baseline[i]):
            continue
        if cand in ids:
            found[cand].append(cand)
            continue
        same = by_part.get(participant_key(final, i), [])
        if len(same) == 1:
            found[same[0].candidate].append(cand)
    return found


def _auto_k(
    dev: Ranking, final: ScoreMatrix, match: dict[int, int | None],
    rank_fn: Callable[[ScoreMatrix], Ranking] | None,
) -> tuple[int, float, float]:
    """``ceil(1 + d / n)`` over the candidates present in both phases
    (:func:`metascore.analysis.k_star`)."""
    common = [(i, j) for i, j in match.items() if j is not None]
    if len(common) < 2:
        return 1, 1.0, 0.0
    if rank_fn is None:
        raise ValueError("k='auto' needs rank_fn to rank the final phase")
    final_rank = rank_fn(final.subset(candidates=[i for i, _ in common]))
    scores = {c: float(s) for c, s in zip(final_rank.candidates, final_rank.scores)}
    # candidates a missing-data policy dropped from the final ranking are left out of d
    common = [(i, j) for i, j in common if final.candidates[i] in scores]
    if len(common) < 2:
        return 1, 1.0, 0.0
    # keyed by the final candidate: its development counterpart may have another id
    ks = k_star({final.candidates[i]: dev.scores[j] for i, j in common},
                {final.candidates[i]: scores[final.candidates[i]] for i, _ in common})
    return ks.k, ks.value, ks.d


def proposed_k(n: int) -> int:
    """The ``k`` to propose for ``top_k`` when ``n`` candidates, baselines not counted, could
    enter: the better half of them (at least one)."""
    return max(1, (n + 1) // 2)


def top_k_text(n: int, dev_phase: str) -> str:
    """``top_k:K`` proposed from the data, with what K counts."""
    k = proposed_k(n)
    return (f"`--filter top_k:{k}`: k counts the candidates of {dev_phase!r} that are not baselines, "
            f"{n} here, and top_k:{k} admits the best {k}")


def _ways_out(n: int, dev_phase: str) -> str:
    """How to get a final ranking when nobody beat the baseline, ``n`` candidates of the
    final phase having a development submission: the one filter that follows from the data,
    ``top_k`` with its k, as the add-meta command that writes it and as metascore.yaml says it
    (the runner names the bundle in ``BUNDLE``)."""
    k = proposed_k(n)
    return (f"way out: `metascore bundle add-meta BUNDLE --filter top_k:{k}` (metascore.yaml: "
            f"`filter: {{rule: top_k, k: {k}}}`), which admits the best {k} of the {n} candidates of "
            f"{dev_phase!r} that are not baselines")


#: Every candidate ties the baseline: no baseline filter nor top_k tells them apart, so the
#: way out is no filter.
_TIED_OUT = ("no baseline filter nor top_k tells tied candidates apart; to rank them all: "
             "`metascore bundle add-meta BUNDLE --filter none` (metascore.yaml: `filter: {rule: none}`)")


def _named(b: BaselineScore, words: _Words) -> str:
    """A baseline by the participant that `baselines:` lists, with its id and score in the
    phase the filter compares in: ``'kit' ('kit-2' in 'Development', development average rank 2)``."""
    where = f"{b.candidate!r} in {words.dev_phase!r}, " if b.participant and b.participant != b.candidate else ""
    return f"{(b.participant or b.candidate)!r} ({where}{words.score(b.score)})"


def _unbeatable(dev: Ranking, is_base: np.ndarray) -> list[str]:
    """The baselines that hold the best development score on every judge (ties included):
    nobody can beat them."""
    dm = dev.matrix
    if dm is None or not is_base.any():
        return []
    values = np.asarray(dm.oriented(), dtype=float)
    best = np.where(np.isnan(values), -np.inf, values).max(axis=0)
    top = values >= best  # a missing score is never the best
    return [dev.candidates[i] for i in range(dev.n) if is_base[i] and top[i].all()]


def _nobody_message(result: FilterResult, words: _Words, unbeatable: Sequence[str] = ()) -> str:
    """One plain sentence: nobody is ranked, why, and the ways out."""
    head = ("the final ranking is empty: no candidate qualified" if words.same_phase
            else "the final ranking is empty: no final-phase candidate qualified")
    if not result.decisions:
        where = f"phase {words.dev_phase!r}" if words.same_phase else "the final phase"
        return f"{head}: {where} has no candidates besides baselines."
    if all(d.dev_candidate is None for d in result.decisions):
        return (f"{head}: none has a submission in the {words.dev_phase!r} phase, where the "
                "filter compares them; ways out: another development phase (`phases.development` "
                "in metascore.yaml; `metascore bundle add-meta BUNDLE --phases DEVELOPMENT,FINAL`) or no "
                "filter (`filter.rule: none`; `--filter none`).")
    ways_out = _ways_out(sum(d.dev_candidate is not None for d in result.decisions), words.dev_phase)
    if result.rule == "beat_baseline":
        ref = result.baselines[0] if result.beat == "all" else result.baselines[-1]
        if all(d.dev_candidate is not None and d.dev_score == ref.score for d in result.decisions):
            every = "every candidate" if words.same_phase else "every final-phase candidate"
            return (f"the final ranking is empty: {every} ties the baseline {_named(ref, words)}, and "
                    f"the filter admits only those who beat it (a tie does not); {_TIED_OUT}.")
        which = "every baseline" if result.beat == "all" else "any baseline"
        why = ""
        if ref.candidate in unbeatable:
            why = (f"; it holds the best score of the {words.dev_phase!r} phase on every judge, so "
                   "nobody can beat it")
        threshold = "the best" if result.beat == "all" else "the weakest"
        return (f"{head}: none beat {which} in the {words.dev_phase!r} phase ({threshold}: "
                f"{_named(ref, words)}){why}; {ways_out}.")
    return f"{head} under rule {result.rule!r}; {ways_out}."
