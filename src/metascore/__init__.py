"""metascore: sound meta-scoring for machine-learning competitions and benchmarks.

A score matrix (candidates x judges, each judge with a direction and a weight, missing
cells allowed) goes in; a :class:`Ranking` comes out, from one registry of ranking methods.

>>> import metascore as ms
>>> m = ms.ScoreMatrix.from_array([[0.9, 0.2], [0.8, 0.1], [0.7, 0.3]], ["A", "B", "C"],
...                               ["acc", "mae"], higher_is_better={"mae": False})
>>> ms.rank(m, "average_rank").ranked_candidates()
['A', 'B', 'C']
"""

from ._version import __version__

from .errors import ConfigError, InputError, MetascoreError
from .matrix import ScoreMatrix
from .pairwise import (
    PairwiseCounts,
    condorcet_winner,
    margin_matrix,
    pairwise_counts,
    smith_set,
    weak_condorcet_winners,
)
from .ranking import Ranking
from .registry import DEFAULT_SEED, get_ranking_method, rank, ranking_method_names
from .missing import MISSING_POLICIES
from .method_spec import Display, MethodOutput, RankingMethod, Weighting, ranking_method
from .stats import (
    fractional_ranks,
    kendall_tau_b,
    kendall_tau_distance,
    kendall_w,
    mean_spearman_from_w,
    spearman,
)
from . import methods as _methods  # noqa: F401,E402  (registers the methods)
from . import analysis  # noqa: E402
from .analysis import (  # noqa: E402
    Execution,
    compare_methods,
    condorcet_rate,
    crowdsourcing_utility,
    difficulty,
    generalization,
    judge_agreement,
    k_star,
    rank_uncertainty,
    stability,
    stability_vs_judges,
    top_k_curves,
    winner_rank,
)

__all__ = [
    "__version__",
    "ConfigError",
    "InputError",
    "MetascoreError",
    "ScoreMatrix",
    "PairwiseCounts",
    "pairwise_counts",
    "condorcet_winner",
    "weak_condorcet_winners",
    "margin_matrix",
    "smith_set",
    "Ranking",
    "DEFAULT_SEED",
    "MISSING_POLICIES",
    "Display",
    "MethodOutput",
    "RankingMethod",
    "Weighting",
    "get_ranking_method",
    "rank",
    "ranking_method",
    "ranking_method_names",
    "fractional_ranks",
    "kendall_tau_b",
    "kendall_tau_distance",
    "kendall_w",
    "mean_spearman_from_w",
    "spearman",
    "analysis",
    "Execution",
    "compare_methods",
    "condorcet_rate",
    "crowdsourcing_utility",
    "difficulty",
    "generalization",
    "judge_agreement",
    "k_star",
    "rank_uncertainty",
    "stability",
    "stability_vs_judges",
    "top_k_curves",
    "winner_rank",
]
