"""The leaderboard model: the frozen result the meta-scoring program publishes.

A :class:`Leaderboard` holds the final :class:`Board` (and the development one), the
pairwise :class:`Margins` of the final pool, the :class:`Analysis` of the final ranking,
the published statistics, the provenance and what was read (:class:`InputSummary`).
:func:`metascore.leaderboard.build_leaderboard` builds it; :mod:`metascore.render.writers`
and :mod:`metascore.render.report` render it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..analysis import JudgeAgreement, MethodComparison, RankUncertainty, StabilityResult
from ..judge_groups import JudgeGroups
from ..analysis.robustness import Robustness
from ..readers.score_table import Failure, Flag, ScoreTable
from .filtering import FilterResult

#: ``progress(what, done, total)``: called while the bootstrap analyses run.
Progress = Callable[[str, int, int], None] | None


class JudgeIndex:
    """The judges of a board and each one's position, shared by the board's rows (the
    lookup table is built on the first lookup by key)."""

    __slots__ = ("judges", "_position")

    def __init__(self, judges: Sequence[str]) -> None:
        self.judges = tuple(judges)
        self._position: dict[str, int] | None = None

    def position(self, judge: str) -> int | None:
        if self._position is None:
            self._position = {j: k for k, j in enumerate(self.judges)}
        return self._position.get(judge)


class JudgeValues(Mapping[str, "float | None"]):
    """One row's number per judge, read by judge key: ``None`` where it is missing (not a
    finite number). A view of one row of an array, so a board of 471,033 judges holds no
    dictionary of 471,033 entries per candidate; :attr:`array` is the row itself."""

    __slots__ = ("_index", "_values")

    def __init__(self, index: JudgeIndex | Sequence[str], values: np.ndarray | None = None) -> None:
        self._index = index if isinstance(index, JudgeIndex) else JudgeIndex(index)
        n = len(self._index.judges)
        self._values = np.broadcast_to(np.nan, (n,)) if values is None else values
        if len(self._values) != n:
            raise ValueError(f"{len(self._values)} values for {n} judges")

    @property
    def array(self) -> np.ndarray:
        """The numbers in the judges' order (NaN where missing; do not write into it)."""
        return self._values

    def keys_are(self, judges: Sequence[str]) -> bool:
        """Whether the judges are ``judges``, in that order (:attr:`array` is then by them)."""
        mine = self._index.judges
        return mine is judges or mine == tuple(judges)

    def __getitem__(self, judge: str) -> float | None:
        k = self._index.position(judge)
        if k is None:
            raise KeyError(judge)
        x = float(self._values[k])
        return x if math.isfinite(x) else None

    def get(self, judge: str, default: Any = None) -> Any:  # type: ignore[override]
        k = self._index.position(judge)
        if k is None:
            return default
        x = float(self._values[k])
        return x if math.isfinite(x) else None

    def __iter__(self) -> Iterator[str]:
        return iter(self._index.judges)

    def __len__(self) -> int:
        return len(self._index.judges)

    def __repr__(self) -> str:
        return repr(dict(self))


@dataclass(frozen=True)
class Row:
    """One candidate on a board.

    ``position``/``rank``/``score`` are None for candidates that are shown but not ranked
    (baselines and excluded candidates on the final board). ``qualified`` is None on the
    development board and for baselines. ``values`` are the raw per-judge scores (None =
    missing) and ``judge_ranks`` the fractional per-judge ranks inside the ranked pool
    (each a :class:`JudgeValues` on a board: a mapping by judge key over one row of an array).
    ``rank_low``/``rank_high`` (the bootstrap rank interval), ``p_first`` (probability of
    being first) and ``group`` (1 = top group of inseparable candidates) are set on ranked
    rows when the rank uncertainty is computed (:class:`Analysis`), None otherwise.
    ``prediction_failed`` names the runs behind the row that finished after their prediction
    step failed (only a local run knows them: :mod:`~metascore.leaderboard.flags`).
    """

    candidate: str
    participant: str | None
    is_baseline: bool
    position: int | None
    rank: float | None
    score: float | None
    qualified: bool | None
    reason: str
    submitted_at: str | None
    values: Mapping[str, float | None]
    judge_ranks: Mapping[str, float | None]
    details: Mapping[str, float] = field(default_factory=dict)
    dev_position: int | None = None
    dev_score: float | None = None
    rank_low: float | None = None
    rank_high: float | None = None
    p_first: float | None = None
    group: int | None = None
    prediction_failed: tuple[str, ...] = ()

    def with_fields(self, **changes: Any) -> Row:
        """A copy with ``changes`` (:func:`dataclasses.replace` without its checks: a board
        of 100,000 rows takes each once)."""
        new = object.__new__(Row)
        new.__dict__.update(self.__dict__, **changes)
        return new


@dataclass(frozen=True)
class Board:
    """The leaderboard of one phase: rows best first, then unranked rows."""

    phase: str
    judges: tuple[str, ...]
    higher_is_better: tuple[bool, ...]
    weights: tuple[float, ...]
    rows: tuple[Row, ...]
    not_selected: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    winners: tuple[str, ...] = ()  # who the ranking puts first (Ranking.winners): more than
    # one when the first place is shared
    #: The judges' groups (a ranking in two steps), None without.
    groups: JudgeGroups | None = None
    #: The candidates the ranking was asked to rank (before the missing-data policy), in the
    #: order the tie-break alone puts them; empty when fewer than two were (what the ranking
    #: page's re-weighting panel ranks again: :mod:`metascore.render.reweight`).
    pool: tuple[str, ...] = ()

    @property
    def ranked(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.position is not None)


#: The pairwise margins a leaderboard keeps: those of this many best-ranked candidates (the
#: matrix grows with the square of the pool: 100,000 candidates would take 80 GB).
MARGINS_KEPT = 200


@dataclass(frozen=True)
class Margins:
    """Pairwise margins ``N(a, b) - N(b, a)`` of the best-ranked candidates of the final pool
    (ranking order; at most :data:`MARGINS_KEPT` of its ``n_candidates``) and the pool's
    Condorcet winner (found among all of them)."""

    candidates: tuple[str, ...]
    margins: np.ndarray
    condorcet_winner: str | None
    n_candidates: int


@dataclass(frozen=True)
class Analysis:
    """How much to trust the final ranking, computed on the ranked final pool (the candidates
    left after the final-phase filter; ``leaderboard.json``'s ``analysis``, ``docs/outputs.md``).

    Attributes
    ----------
    uncertainty : RankUncertainty or None
        Bootstrap over the judges (``analysis.bootstrap`` resamples, ``ranking.seed``):
        per candidate a rank interval, P(first) and a group (also copied onto the rows).
    agreement : JudgeAgreement or None
        Kendall's W between the judges (tie-corrected) and the mean Spearman rho.
    stability : StabilityResult or None
        Kendall's W of ``q`` rankings of judge-resampled matrices, ``r`` repetitions.
    settings : dict
        ``bootstrap``, ``level``, ``seed``, ``stability_q``, ``stability_r``.
    notes : tuple of str
        Why a part was not computed (disabled, too few candidates or judges, ...).
    comparison : MethodComparison or None
        The methods of ``analysis.compare`` compared on the same pool (the criteria table of
        :func:`metascore.analysis.compare_methods`); None when not configured or not
        computable.
    comparison_note : str or None
        Why the configured comparison is absent (too few candidates or judges, ...).
    """

    settings: Mapping[str, Any] = field(default_factory=dict)
    uncertainty: RankUncertainty | None = None
    agreement: JudgeAgreement | None = None
    stability: StabilityResult | None = None
    notes: tuple[str, ...] = ()
    comparison: MethodComparison | None = None
    comparison_note: str | None = None

    @property
    def kendall_w(self) -> float | None:
        return None if self.agreement is None else self.agreement.w

    @property
    def stability_w(self) -> float | None:
        if self.stability is None:
            return None
        return self.stability.mean[self.stability.methods[0]]

    def why_missing(self, what: str) -> str:
        """The note explaining why ``what`` (``"rank uncertainty"``, ``"judge agreement"``,
        ``"stability"``) was not computed."""
        for note in self.notes:
            if what in note:
                return note.rstrip(".")
        return f"{what} was not computed"


@dataclass(frozen=True)
class PhaseSummary:
    """How many rows a phase's board holds, and its judges (``judges`` None: more than
    ``output.judge_columns``, listed in ``per_judge.csv.gz``; ``n_judges`` says how many)."""

    candidates: int
    baselines: int
    not_selected: int
    judges: tuple[str, ...] | None
    n_judges: int

    @classmethod
    def of(cls, board: Board, judge_columns: int) -> PhaseSummary:
        shown = len(board.judges) <= judge_columns
        return cls(len(board.rows), sum(r.is_baseline for r in board.rows),
                   len(board.not_selected), tuple(board.judges) if shown else None,
                   len(board.judges))

    def to_dict(self) -> dict[str, Any]:
        return {"candidates": self.candidates, "baselines": self.baselines,
                "not_selected": self.not_selected,
                **({"judges": list(self.judges)} if self.judges is not None
                   else {"judges": None, "n_judges": self.n_judges})}


@dataclass(frozen=True)
class InputSummary:
    """What was read (``leaderboard.json``'s ``input``): where and in which format, the
    runs that produced no score and those whose prediction step failed, the competition's
    column titles and hidden columns, and what each phase's board holds.

    ``path`` is the configuration's ``input.path`` as given (relative to the input
    folder); None when the table was not read through a configuration (the read part is
    then absent from :meth:`to_dict`).
    """

    path: str | Mapping[str, str] | None
    format: str
    failed: tuple[Failure, ...]
    flagged: tuple[Flag, ...]
    titles: Mapping[str, str]
    rows: int
    phases_found: tuple[str, ...]
    phases: Mapping[str, PhaseSummary]
    export: Mapping[str, object] | None = None
    #: The competition's hidden columns (keys): a judge on one is not public.
    hidden: frozenset[str] = frozenset()

    @classmethod
    def of(cls, table: ScoreTable, boards: Sequence[Board], judge_columns: int) -> InputSummary:
        """The summary of ``table`` and of the ``boards`` built from it (development first)."""
        return cls(
            path=table.input_path, format=table.format, failed=table.failed,
            flagged=table.flagged, titles=dict(table.titles), rows=int(len(table.frame)),
            phases_found=tuple(sorted(str(p) for p in pd.unique(table.frame["phase"]))),
            phases={b.phase: PhaseSummary.of(b, judge_columns) for b in boards},
            export=table.export, hidden=table.hidden,
        )

    def to_dict(self) -> dict[str, Any]:
        """As ``leaderboard.json`` and the ranking page's provenance publish it."""
        read: dict[str, Any] = {}
        if self.path is not None:
            read = {"path": self.path if isinstance(self.path, str) else dict(self.path),
                    "format": self.format, "failed": [f._asdict() for f in self.failed]}
            if self.flagged:  # runs the mock runner marked (the site's export cannot)
                read["prediction_failed"] = [f._asdict() for f in self.flagged]
            if self.titles:  # the competition's column titles, for the report's labels
                read["column_titles"] = dict(self.titles)
            if self.hidden:  # the competition's hidden columns, left out of the page's record
                read["hidden_columns"] = sorted(self.hidden)
        if self.export is not None:  # the signed results export: who, when, for what
            read["export"] = dict(self.export)
        return {**read, "rows": self.rows, "phases_found": list(self.phases_found),
                "phases": {phase: s.to_dict() for phase, s in self.phases.items()}}


@dataclass(frozen=True)
class Leaderboard:
    """Everything the meta-scoring program publishes.

    Attributes
    ----------
    final : Board
        The ranked board: the final phase, or the development phase when no final phase
        is configured.
    development : Board or None
        The development board used by the filter (None without a final phase).
    filter : FilterResult or None
    margins : Margins or None
        None when fewer than two candidates are ranked.
    statistics : dict
        Every statistic of :data:`metascore.config.STATISTICS`; None when undefined.
    scores : dict
        ``scores.json`` content: config key -> finite number (undefined ones omitted).
    signature, config : dict
        Provenance: how the ranking was made, the effective configuration.
    input_summary : InputSummary
        What was read, and what each phase's board holds.
    messages : tuple of str
        Warnings an organizer must see (nobody qualified, omitted score keys, ...).
    analysis : Analysis
        Rank uncertainty, judge agreement and stability of the final ranking, and the
        comparison of the methods of ``analysis.compare``.
    robustness : Robustness or None
        How far the final phase's judges' weights may move before the winner, the second
        and the third place change (:mod:`metascore.analysis.robustness`).
    """

    final: Board
    development: Board | None
    filter: FilterResult | None
    margins: Margins | None
    statistics: Mapping[str, float | None]
    scores: Mapping[str, float]
    signature: Mapping[str, Any]
    config: Mapping[str, Any]
    input_summary: InputSummary
    messages: tuple[str, ...] = ()
    analysis: Analysis = field(default_factory=Analysis)
    robustness: Robustness | None = None

    @property
    def winner(self) -> str | None:
        """The candidate listed first (by the tie-break when the first place is shared)."""
        ranked = self.final.ranked
        return ranked[0].candidate if ranked else None

    @property
    def winners(self) -> tuple[str, ...]:
        """Every candidate sharing the first place (one name when it is not shared)."""
        return self.final.winners or ((self.winner,) if self.winner is not None else ())
