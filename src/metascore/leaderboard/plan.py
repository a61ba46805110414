"""The phase plan: what the configuration says about the phases, read once.

:class:`PhasePlan` is made once from a :class:`~metascore.config.Config`
(:meth:`PhasePlan.of`): the development and final phases, each one's selection policy and
deadline, the judges, the baselines and the final-phase filter, and the :class:`Ranker`
that ranks every phase. The steps of :func:`~metascore.leaderboard.build_leaderboard` read
it instead of the whole configuration: it checks a score table against itself
(:meth:`~PhasePlan.check`), finds each submission's place in submission order
(:meth:`~PhasePlan.origins`), selects a phase's candidates (:meth:`~PhasePlan.select`),
and signs its own part of the provenance signature (:meth:`~PhasePlan.signature`), as a
:class:`Ranker` signs a ranking that could not be made (:meth:`Ranker.signature`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .._version import __version__
from ..config import Config, FilterConfig, GroupsConfig, JudgeConfig, RankingConfig
from ..errors import InputError, MetascoreError
from ..matrix import ScoreMatrix
from ..method_spec import Display
from ..ranking import Ranking
from ..readers.score_table import ScoreTable
from ..registry import get_ranking_method, rank
from ..submission_order import Origin, order_basis, phase_origins
from .phases import check_baselines, check_judges, check_phases, normalize_frame, phase_matrix
from .selection import Selection, select_candidates

__all__ = ["Ranker", "PhasePlan"]


@dataclass(frozen=True)
class Ranker:
    """How every phase is ranked (``ranking`` of the configuration): the method, its
    parameters as configured (the outputs show them so; the ranking fills in the
    defaults), the missing-data policy, the seed and the tie-break."""

    method: str
    params: Mapping[str, Any]
    missing: str
    seed: int
    tie_break: tuple[str, ...]

    @classmethod
    def of(cls, config: RankingConfig) -> Ranker:
        return cls(config.method, dict(config.params), config.missing, config.seed,
                   tuple(config.tie_break))

    def __call__(self, matrix: ScoreMatrix) -> Ranking:
        return rank(matrix, self.method, missing=self.missing, seed=self.seed,
                    tie_break=self.tie_break, **dict(self.params))

    def at(self, phase: str) -> Callable[[ScoreMatrix], Ranking]:
        """This ranker, its errors naming ``phase``."""
        def ranked(matrix: ScoreMatrix) -> Ranking:
            try:
                return self(matrix)
            except MetascoreError as exc:
                raise type(exc)(f"phase {phase!r}: {exc}") from None
        return ranked

    @property
    def display(self) -> Display:
        """How the method's scores read (``average rank 2.5``)."""
        return get_ranking_method(self.method).display

    def signature(self) -> dict[str, Any]:
        """The signature of a ranking of nobody (fewer than two candidates were ranked):
        :meth:`Ranking.signature`'s keys, from the rule alone."""
        return {"method": self.method, "params": dict(self.params), "missing": self.missing,
                "seed": self.seed, "tie_break": list(self.tie_break), "n_candidates": 0,
                "n_judges": 0, "version": __version__}


@dataclass(frozen=True)
class PhasePlan:
    """The phases of a configuration and how each is read, selected and ranked."""

    development: str
    final: str | None
    #: ``selection`` of the configuration: the policy of each phase (its keys are
    #: ``development`` and ``final``, as the signature shows them).
    selection: Mapping[str, str]
    deadlines: Mapping[str, pd.Timestamp]
    judges: tuple[JudgeConfig, ...] | None
    baselines: tuple[str, ...]
    groups: GroupsConfig | None
    filter: FilterConfig
    ranker: Ranker

    @classmethod
    def of(cls, config: Config) -> PhasePlan:
        return cls(
            development=config.phases.development,
            final=config.phases.final,
            selection={"development": config.selection.development,
                       "final": config.selection.final},
            deadlines=dict(config.phases.deadlines),
            judges=config.judges,
            baselines=config.baselines,
            groups=config.ranking.groups,
            filter=config.filter,
            ranker=Ranker.of(config.ranking),
        )

    @property
    def phases(self) -> tuple[str, ...]:
        """The phases ranked, development first."""
        return (self.development,) if self.final is None else (self.development, self.final)

    def check(self, table: ScoreTable) -> ScoreTable:
        """``table`` with its text columns normalized, checked against the plan: every
        configured phase, judge and baseline is in it (every configuration error before
        any ranking work)."""
        table = table.with_frame(normalize_frame(table.frame))
        check_phases(table.frame, self.phases, self.deadlines)
        check_judges(table.frame, self.phases, self.judges)
        check_baselines(table, self.baselines)
        return table

    def origins(self, table: ScoreTable) -> dict[str, dict[str, Origin]]:
        """Each phase's submissions' origins for "the earlier submission": a participant's
        development submission sets the place of their final-phase submissions (a migrated
        copy has a new id and time; :func:`~metascore.submission_order.phase_origins`)."""
        return {phase: phase_origins(table, phase, self.phases[:k])
                for k, phase in enumerate(self.phases)}

    def select(self, table: ScoreTable, phase: str, origins: Mapping[str, Origin]) -> Selection:
        """The phase's matrix without late submissions, then participant selection; the
        selection says which candidates have no judge score (``unscored``)."""
        unscored: dict[str, str] = {}
        matrix = phase_matrix(table, phase, self.judges, self.baselines, unscored, origins,
                              self.groups)
        late: dict[str, str] = {}
        deadline = self.deadlines.get(phase)
        if deadline is not None and matrix.submitted_at:
            for cand, t in zip(matrix.candidates, matrix.submitted_at):
                if t is not None and t > deadline:
                    late[cand] = (f"submitted at {t.isoformat()}, after the {phase!r} deadline "
                                  f"{deadline.isoformat()}")
            if len(late) == matrix.n_candidates:
                raise InputError(f"every submission of phase {phase!r} is after its deadline "
                                 f"{deadline.isoformat()}.")
            if late:
                matrix = matrix.subset(
                    candidates=[c for c in matrix.candidates if c not in late])
        policy = self.selection["development" if phase == self.development else "final"]
        sel = select_candidates(matrix, policy, self.ranker.at(phase))
        dropped = {**late, **sel.dropped}
        return Selection(sel.matrix, {c: dropped[c] for c in sorted(dropped)}, unscored)

    def signature(self, origins: Mapping[str, Mapping[str, Origin]]) -> dict[str, Any]:
        """The plan's part of the provenance signature: the phases, the selection, the
        filter, and which rule "the earlier submission" followed in each phase (submission
        times or ids)."""
        f = self.filter
        return {
            "phases": {"development": self.development, "final": self.final},
            "selection": dict(self.selection),
            "filter": {"rule": f.rule, "beat": f.beat, "k": f.k},
            "submission_order": {
                phase: order_basis(found, phase) if "submitted_at" in self.ranker.tie_break
                else "not used (ranking.tie_break has no submitted_at)"
                for phase, found in origins.items()},
        }
