"""The science to choose and trust a ranking (thesis 4.5, 5.3, 6, 10.1; ESANN 2021).

- Criteria to choose a method: :func:`winner_rank`, :func:`winner_rank_bootstrap`,
  :func:`condorcet_rate`, :func:`generalization`, :func:`stability`,
  :func:`stability_vs_judges`, :func:`judge_agreement`, and all of them in one table:
  :func:`compare_methods`. Every bootstrap criterion takes the resampling ``axis``
  (``judges``, ``candidates`` or ``both``); the defaults are the ESANN 2021 procedures
  (:data:`PAPER_AXES`, :data:`PAPER_CONCORDANCE`).
- Trust in one ranking: :func:`rank_uncertainty` (rank intervals, P(first), groups).
- Everything ``metascore analyze`` reports, in one call: :func:`analyze`.
- Two-phase competitions: :func:`top_k_curves`, :func:`k_star`.
- Competition design: :func:`crowdsourcing_utility`, :func:`difficulty`.

Every analysis takes a score matrix or a prepared input (:class:`Setup`, made once by
:func:`setup`: the matrix after the missing-data policy, the methods and their rankings of
it), and runs as one record says (:class:`Execution`, ``run=``: the seed, the missing-data
policy, the method parameters, progress, workers). Every function is pure and seeded (the
seed is recorded in its result); bootstrap procedures draw their indices once per trial
(trial t from the t-th child of one ``SeedSequence(seed)``) and apply them to every method
compared, and rank resampled matrices through the method registry (:func:`metascore.rank`),
or through a fast path proven equal to it (:mod:`.bootstrap`). ``run.jobs``/``run.backend``
spread the trials over joblib workers (a Dask or Ray cluster too) with results identical to
one job.
"""

from .analyze import AnalysisResult, analyze
from .draws import AXES
from .execution import Execution
from .shared import Setup, setup, setup_of
from .compare import MethodComparison, compare_methods
from .criteria import (
    PAPER_AXES,
    CriterionResult,
    JudgeAgreement,
    condorcet_rate,
    generalization,
    judge_agreement,
    winner_rank,
    winner_rank_bootstrap,
)
from .stability import PAPER_CONCORDANCE, StabilityCurve, StabilityResult, stability, stability_vs_judges
from .topk import KStar, TopKCurves, k_star, top_k_curves
from .uncertainty import RankUncertainty, rank_uncertainty
from .utility import Difficulty, crowdsourcing_utility, difficulty
from ..stats import kendall_w

__all__ = [
    "Execution",
    "Setup",
    "setup",
    "setup_of",
    "analyze",
    "AnalysisResult",
    "AXES",
    "PAPER_AXES",
    "PAPER_CONCORDANCE",
    "winner_rank",
    "winner_rank_bootstrap",
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
