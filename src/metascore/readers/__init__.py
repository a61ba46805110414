"""Input readers (score tables, exports, scoring-output trees, PrefLib votes).

:func:`read_score_table` gives a :class:`ScoreTable`: the canonical long table and what the
reader found besides the scores; :func:`read_scores` gives the table alone (a DataFrame);
:func:`read_votes` reads PrefLib votes.
"""

from .formats import FORMATS, detect_format, read_score_table, read_scores, resolve_inside
from .rows import CANONICAL_COLUMNS
from .scores_file import read_scores_file
from .preflib import read_votes
from .score_table import ScoreTable

__all__ = [
    "CANONICAL_COLUMNS",
    "FORMATS",
    "detect_format",
    "ScoreTable",
    "read_score_table",
    "read_scores",
    "read_scores_file",
    "read_votes",
    "resolve_inside",
]
