"""Crowdsourcing utility and task difficulty (thesis 10.1).

- Crowdsourcing utility ``U_C``: how much better the winner is than the crowd's average,
  the value added by holding a competition rather than asking one participant.
- Intrinsic difficulty ``|s_max - s_best|``: how far the best candidate is from the best
  possible score.
- Modelling difficulty ``|s_best - s_random|``: how much a good model gains over a random
  one (Guyon et al. 2019 used a baseline; the thesis prefers a random model).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ConfigError, did_you_mean, InputError
from ..matrix import ScoreMatrix
from ..jsonable import jsonable

__all__ = ["crowdsourcing_utility", "difficulty", "Difficulty"]

FORMULAS = ("normalized", "thesis")


def _finite(value: Any, name: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"`{name}` must be a number; got {value!r}.") from None
    if not math.isfinite(x):
        raise ConfigError(f"`{name}` must be finite; got {value!r}.")
    return x


def _scores(scores: Any) -> np.ndarray:
    x = np.asarray(scores, dtype=float).ravel()
    x = x[~np.isnan(x)]
    if x.size == 0:
        raise InputError("no score given (all missing); the utility needs at least one score.")
    if not np.isfinite(x).all():
        raise InputError(f"scores must be finite; got {x[~np.isfinite(x)][0]!r}.")
    return x


def crowdsourcing_utility(
    scores: Sequence[float] | np.ndarray,
    s_min: float,
    s_max: float,
    higher_is_better: bool = True,
    s_random: float | None = None,
    *,
    formula: str = "normalized",
) -> float:
    """Crowdsourcing utility ``U_C`` of one judge's scores (thesis 10.1.1).

    ``s_min`` and ``s_max`` are the bounds of the metric. Scores are first made
    higher-is-better inside the bounds, ``s~ = s_max + s_min - s`` for a lower-is-better
    metric; ``s_random`` (the score of a random model) replaces the worst bound when given,
    which makes semi-bounded metrics usable (MAE in [0, inf): ``s_min=0``,
    ``s_max=inf``, ``s_random`` = the random model's MAE). With ``lo`` the worst bound and
    ``hi`` the best one after that transformation, ``s_best`` the best and ``s_mean`` the
    mean score:

    - ``formula="normalized"`` (default): ``(s_best - lo) / (s_mean - lo)``, the ratio of
      the best to the mean score after min-max normalization onto [0, 1];
    - ``formula="thesis"``: ``(s_best - s_mean lo) / (s_mean (hi - lo))``, the formula
      printed in the thesis, which min-max normalizes the *ratio* ``s_best / s_mean``.

    Both equal ``s_best / s_mean`` when the bounds are [0, 1]. Only the normalized form
    keeps the property the thesis states: one participant (or a crowd of equal scores)
    has utility 1; the printed one does not for other bounds (it gives ``1/5`` to a single
    participant on [0, 5]).

    Examples
    --------
    >>> round(crowdsourcing_utility([0.5, 0.7, 0.9], 0, 1), 6)  # 0.9 / 0.7
    1.285714
    >>> crowdsourcing_utility([1.0, 2.0, 3.0], 0, float("inf"), higher_is_better=False, s_random=4)
    1.5
    """
    if formula not in FORMULAS:
        raise ConfigError(f"`formula` must be one of {list(FORMULAS)}; got {formula!r}.")
    x = _scores(scores)
    lo, hi = _bounds(s_min, s_max, higher_is_better, s_random)
    s = x if higher_is_better else hi + lo - x  # higher is better, still within [lo, hi]
    s_best, s_mean = float(s.max()), float(s.mean())
    if formula == "normalized":
        if s_mean == lo:
            raise InputError("every score equals the worst bound; the utility is undefined.")
        return (s_best - lo) / (s_mean - lo)
    if s_mean == 0:
        raise InputError("the mean score is 0; the thesis formula is undefined.")
    return (s_best - s_mean * lo) / (s_mean * (hi - lo))


def _bounds(s_min: float, s_max: float, higher_is_better: bool, s_random: float | None
            ) -> tuple[float, float]:
    """The worst and the best bound of a metric once higher is better (the random model's
    score, when given, as the worst); a ConfigError when they are not finite or not in that
    order."""
    lo_bound, hi_bound = float(s_min), float(s_max)
    given = "s_random" if s_random is not None else "s_min" if higher_is_better else "s_max"
    if higher_is_better:
        worst = _finite(s_random if s_random is not None else s_min, given)
        best_bound = _finite(s_max, "s_max")
        lo, hi = worst, best_bound
    else:
        worst = _finite(s_random if s_random is not None else s_max, given)
        best_bound = _finite(s_min, "s_min")
        lo, hi = best_bound, worst
    if not lo < hi:
        raise ConfigError(
            f"the worst bound must be below the best one for a higher-is-better metric "
            f"(after orientation); got worst={worst!r}, best={best_bound!r} "
            f"(s_min={lo_bound!r}, s_max={hi_bound!r}, s_random={s_random!r})."
        )
    return lo, hi


@dataclass(frozen=True)
class Difficulty:
    """Per-judge difficulty (thesis 10.1.2); arrays aligned with ``judges``.

    ``modelling`` is NaN for a judge without a random-model score.
    """

    judges: tuple[str, ...]
    best: np.ndarray
    best_possible: np.ndarray
    random_score: np.ndarray
    intrinsic: np.ndarray
    modelling: np.ndarray

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "judge": list(self.judges),
                "best": self.best,
                "best_possible": self.best_possible,
                "random_score": self.random_score,
                "intrinsic_difficulty": self.intrinsic,
                "modelling_difficulty": self.modelling,
            }
        )

    def to_dict(self) -> dict[str, Any]:
        # JSON has no NaN: an unknown random score is null
        return jsonable({"rows": self.to_frame().to_dict(orient="records")})


def _per_judge(value: Any, judges: tuple[str, ...], name: str) -> np.ndarray:
    if value is None:
        return np.full(len(judges), np.nan)
    if isinstance(value, Mapping):
        unknown = [k for k in value if str(k) not in judges]
        if unknown:
            raise ConfigError(
                f"`{name}` names unknown judge {unknown[0]!r}{did_you_mean(str(unknown[0]), judges)}."
            )
        lookup = {str(k): v for k, v in value.items()}
        return np.array([np.nan if lookup.get(j) is None else _finite(lookup[j], name) for j in judges])
    if np.ndim(value) == 0:
        return np.full(len(judges), _finite(value, name))
    arr = [_finite(v, name) for v in value]
    if len(arr) != len(judges):
        raise ConfigError(f"`{name}` has {len(arr)} values for {len(judges)} judges.")
    return np.array(arr)


def difficulty(
    data: ScoreMatrix | Sequence[float] | np.ndarray,
    *,
    best_possible: float | Sequence[float] | Mapping[str, float],
    random_score: float | Sequence[float] | Mapping[str, float] | None = None,
    higher_is_better: bool = True,
) -> Difficulty:
    """Intrinsic and modelling difficulty of each judge (thesis 10.1.2).

    ``D_intrinsic = |s_max - s_best|`` with ``s_max`` the best possible score of the metric
    (``best_possible``: 1 for accuracy, 0 for an error) and ``s_best`` the best score
    observed; ``D_modelling = |s_best - s_random|`` with ``s_random`` the score of a random
    model (or of a baseline). For a ScoreMatrix the directions come from the matrix and
    ``best_possible`` / ``random_score`` may be one value, one per judge, or a mapping
    judge -> value; a 1-D array of scores is one judge named ``"scores"``.

    Examples
    --------
    >>> d = difficulty([0.6, 0.8, 0.7], best_possible=1.0, random_score=0.5)
    >>> round(float(d.intrinsic[0]), 6), round(float(d.modelling[0]), 6)
    (0.2, 0.3)
    """
    if isinstance(data, ScoreMatrix):
        judges = data.judges
        values = data.values
        directions = np.array(data.higher_is_better, dtype=bool)
    else:
        values = np.asarray(data, dtype=float)
        if values.ndim != 1:
            raise InputError(
                f"give a ScoreMatrix or a 1-D array of one judge's scores; got {values.ndim} dimensions."
            )
        values = values[:, None]
        judges = ("scores",)
        directions = np.array([bool(higher_is_better)])
    empty = np.isnan(values).all(axis=0)
    if empty.any():
        raise InputError(f"judge {judges[int(np.flatnonzero(empty)[0])]!r} has no score.")
    best = np.where(directions, np.nanmax(values, axis=0), np.nanmin(values, axis=0))
    top = _per_judge(best_possible, judges, "best_possible")
    if np.isnan(top).any():
        raise ConfigError(
            f"`best_possible` is missing for judge {judges[int(np.flatnonzero(np.isnan(top))[0])]!r}."
        )
    rand = _per_judge(random_score, judges, "random_score")
    return Difficulty(
        judges=tuple(judges),
        best=best,
        best_possible=top,
        random_score=rand,
        intrinsic=np.abs(top - best),
        modelling=np.abs(best - rand),
    )
