"""The science to choose and trust a ranking (thesis 4.5, 5.3, 6, 10.1; ESANN 2021).

- Criteria to choose a method: :func:`winner_rank`, :func:`condorcet_rate`,
  :func:`generalization`, :func:`stability`, :func:`stability_vs_judges`,
  :func:`judge_agreement`, and all of them in one table: :func:`compare_methods`.
- Trust in one ranking: :func:`rank_uncertainty` (rank intervals, P(first), groups).
- Two-phase competitions: :func:`top_k_curves`, :func:`k_star`.
- Competition design: :func:`crowdsourcing_utility`, :func:`difficulty`.

Every function is pure and seeded (the seed is recorded in its result); bootstrap
procedures draw their indices once per trial and apply them to every method compared, and
rank resampled matrices through the method registry (:func:`metascore.rank`), or through
a fast path proven equal to it.
"""

from .criteria import (
    CriterionResult,
    JudgeAgreement,
    MethodComparison,
    StabilityCurve,
    StabilityResult,
    compare_methods,
    condorcet_rate,
    generalization,
    judge_agreement,
    stability,
    stability_vs_judges,
    winner_rank,
)
from .topk import KStar, TopKCurves, k_star, top_k_curves
from .uncertainty import RankUncertainty, rank_uncertainty
from .utility import Difficulty, crowdsourcing_utility, difficulty
from ..stats import kendall_w

__all__ = [
    "winner_rank",
    "condorcet_rate",
    "generalization",
    "stability",
    "stability_vs_judges",
    "judge_agreement",
    "compare_methods",
    "kendall_w",
    "rank_uncertainty",
    "top_k_curves",
    "k_star",
    "crowdsourcing_utility",
    "difficulty",
    "CriterionResult",
    "StabilityResult",
    "StabilityCurve",
    "JudgeAgreement",
    "MethodComparison",
    "RankUncertainty",
    "TopKCurves",
    "KStar",
    "Difficulty",
]
