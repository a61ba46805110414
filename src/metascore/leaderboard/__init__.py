"""The leaderboard: from a score table (the canonical long table and what its reader found)
and a config to the published result.

Pure computation (no files, no prints). :func:`build_leaderboard` runs the pipeline once:

1. judges: one per (task, metric) of the config (or every one found, higher is better);
2. per phase: the score matrix of every submission, each one's place in submission order
   for the ``submitted_at`` tie-break (:mod:`metascore.submission_order`: a final-phase
   submission takes its participant's development place), participant selection
   (:mod:`metascore.leaderboard.selection`), and the ranking with the configured method;
3. the final-phase filter against the development ranking (:mod:`metascore.leaderboard.filtering`;
   with one phase, within it);
4. the final ranking of the qualified candidates only; baselines shown, flagged, without a
   position; excluded candidates shown with their reason;
5. the pairwise margin matrix and Condorcet winner of the final pool;
6. how much to trust the final ranking (:class:`Analysis`): rank intervals, P(first) and
   groups by bootstrap over the judges, the judges' agreement and the ranking's stability;
   with ``analysis.compare``, the criteria table of other methods on the same pool;
7. the statistics that ``scores.json`` publishes, the provenance signature and an input
   summary.

The result, a frozen :class:`Leaderboard`, is rendered by :mod:`metascore.render.writers` and
:mod:`metascore.render.report`.

Modules: :mod:`.model` (the frozen result: Row, Board, Margins, Analysis, Leaderboard),
:mod:`.plan` (the phase plan, made once from the config: the phases, deadlines, selection,
judges, baselines, filter and the :class:`~.plan.Ranker`; it checks the table and selects
each phase, and signs its part of the signature),
:mod:`.phases` (a phase's score matrix and the input checks),
:mod:`.boards` (the development and final boards and the margins),
:mod:`.statistics` (the published statistics and the analysis of the final ranking),
:mod:`.notices` (the messages about the input: directions, candidates without a judge
score, baselines without a score, whether one phase is filtered),
:mod:`.flags` (runs that finished after a failed prediction step, marked on their rows),
:mod:`.build` (:func:`build_leaderboard`, its steps, the signature).
"""

from .build import build_leaderboard
from .model import Analysis, Board, Leaderboard, Margins, Progress, Row
from .phases import phase_matrix

__all__ = [
    "Row", "Board", "Margins", "Analysis", "Leaderboard", "build_leaderboard", "phase_matrix",
    "Progress",
]
