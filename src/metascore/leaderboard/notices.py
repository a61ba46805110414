"""What the leaderboard says about its input, so that nothing is decided silently.

- :func:`direction_messages`: judges ranked higher-is-better by default whose name says
  lower is better, and configured directions that contradict the competition's columns;
- :func:`unscored_messages`: submissions of a phase with no score on any judge (their
  scores are on other columns, or every run failed), kept with every score missing;
- :func:`check_scored_baselines`: a baseline the filter needs but that has no score;
- :func:`one_phase_filter`: whether a one-phase configuration (``phases.final: null``)
  filters within its phase;
- :func:`check_accounted`: the invariant that no submission of a phase leaves its board
  silently (ranked, shown unranked with a reason, or listed as not selected).

Each returns sentences (or raises one); :func:`~metascore.leaderboard.build_leaderboard`
puts them in ``Leaderboard.messages``, which every output shows (the console, the
``messages`` of ``leaderboard.json``, ``detailed_results.html``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..config import JudgeConfig, judge_key
from ..readers.directions import column_direction, direction_warnings
from ..errors import InputError, MetascoreError
from ..matrix import ScoreMatrix
from ..readers.score_table import ScoreTable
from .model import Board
from .pivot import table_pairs

__all__ = ["undirected_judges", "direction_messages", "unscored_messages",
           "check_scored_baselines", "one_phase_filter", "check_accounted"]


def undirected_judges(table: ScoreTable,
                      judges: Sequence[JudgeConfig] | None) -> list[tuple[str, str, str]]:
    """``(key, task, metric)`` of the judges whose direction neither the configuration nor
    the competition's columns give (they are ranked as higher-is-better)."""
    known = table.directions
    if judges is None:
        # in the categories' order, so sorted already but for texts of unequal types
        pairs = list(dict.fromkeys((str(t), str(m)) for t, m in table_pairs(table.frame)))
        if known:
            pairs = [(t, m) for t, m in pairs if column_direction(t, m, known) is None]
        return [(judge_key(t, m), t, m) for t, m in sorted(pairs)]
    candidates = [(j.key, j.task, j.metric) for j in judges if not j.direction_set]
    return [c for c in candidates if column_direction(c[1], c[2], known) is None]


def direction_messages(table: ScoreTable, judges: Sequence[JudgeConfig] | None) -> list[str]:
    """A judge ranked higher-is-better by default whose name says lower is better (``mae``,
    ``time``, ...), and a configured direction the competition's column contradicts."""
    out = direction_warnings(undirected_judges(table, judges),
                             "give its `direction: lower` in the configuration's judges")
    known = table.directions
    for j in judges or ():
        column = column_direction(j.task, j.metric, known)
        if j.direction_set and column is not None and column != j.higher_is_better:
            out.append(f"judge {j.key!r}: the configuration says "
                       f"{'higher' if j.higher_is_better else 'lower'} is better, but the "
                       f"competition's column sorts {'desc' if column else 'asc'}; the "
                       "configuration wins.")
    return out


#: What each missing-data policy does with a candidate that has no score at all.
_PLACE = {
    "worst": "ranking.missing 'worst' ranks it below every scored candidate",
    "drop_candidates": "ranking.missing 'drop_candidates' leaves it out of the ranking",
    "drop_judges": "ranking.missing 'drop_judges' would have to drop every judge",
    "pairwise": "ranking.missing 'pairwise' has no comparison to make with it",
    "error": "ranking.missing 'error' refuses it",
}


def unscored_messages(phase: str, unscored: Mapping[str, str], missing: str) -> list[str]:
    """One sentence per submission of ``phase`` with no score on any judge."""
    place = _PLACE.get(missing, f"ranking.missing {missing!r} decides its place")
    return [f"phase {phase!r}: candidate {cand!r} has no score on any judge ({why}); it is "
            f"kept with every score missing: {place}."
            for cand, why in unscored.items()]


def check_scored_baselines(matrix: ScoreMatrix, unscored: Mapping[str, str], phase: str) -> None:
    """The beat_baseline filter compares with the baselines' scores: refuse a baseline of
    ``phase`` without any (its run failed, or its scores are on other columns)."""
    if not matrix.is_baseline:
        return
    empty = np.isnan(np.asarray(matrix.values, dtype=float)).all(axis=1)
    for i, cand in enumerate(matrix.candidates):
        if matrix.is_baseline[i] and empty[i]:
            why = unscored.get(cand, "every judge's score is empty")
            raise InputError(
                f"baseline {cand!r} has no score in phase {phase!r} ({why}), so the "
                "beat_baseline filter has nothing to compare with; fix the baseline's run (its "
                "logs say why it failed), or set filter.rule: none."
            )


def one_phase_filter(matrix: ScoreMatrix, rule: str) -> bool:
    """With ``phases.final: null``, whether the filter applies within the one phase:
    ``top_k`` always, ``beat_baseline`` when the phase has a baseline."""
    if rule == "top_k":
        return True
    return rule == "beat_baseline" and any(matrix.is_baseline or ())


def check_accounted(table: ScoreTable, board: Board) -> None:
    """Every submission of the board's phase is a row of it or listed as not selected;
    losing one silently is a bug, said loudly rather than published."""
    frame = table.frame
    in_phase = (frame["phase"] == board.phase).to_numpy(dtype=bool)
    members = set(map(str, frame["candidate"][in_phase].unique()))
    members |= {str(u.candidate) for u in table.unscored if u.phase == board.phase}
    lost = sorted(members - {r.candidate for r in board.rows} - set(board.not_selected))
    if lost:
        raise MetascoreError(
            f"phase {board.phase!r}: candidate(s) {', '.join(map(repr, lost[:5]))} are neither "
            "ranked nor listed with a reason; this is a bug in metascore, please report it.")
