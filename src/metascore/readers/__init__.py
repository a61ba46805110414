"""Input readers (score tables, exports, scoring-output trees, PrefLib votes)."""

from .formats import (
    CANONICAL_COLUMNS,
    FORMATS,
    detect_format,
    read_scores,
    read_scores_file,
    read_votes,
    resolve_inside,
)

__all__ = [
    "CANONICAL_COLUMNS",
    "FORMATS",
    "detect_format",
    "read_scores",
    "read_scores_file",
    "read_votes",
    "resolve_inside",
]
