"""Top-k winner selection across two phases (thesis ch. 6, ESANN 2022).

The top-k rule keeps the k best candidates of the development phase D and declares the
winner the best of them in the final phase F: ``i* = argmin_{rankD(i) <= k} rankF(i)``.
From the organizer's side F is meta-training and a further, post-challenge phase P is
meta-test (thesis 6.5):

- meta-training error: the normalized rank ``(r - 1)/(n - 1)`` in F of the declared winner;
- meta-test error: the normalized rank in P of the declared winner;
- generalization gap: meta-test minus meta-training error.

The semi-empirical optimum is ``k* = 1 + d/n`` with d the Kendall tau distance (number of
discordant pairs) between the D and F rankings and n the number of candidates; the thesis
calls ``1 + 2d/n`` the safer, conservative choice.

Phases cut from one matrix (:data:`SPLITS`): ``"disjoint"`` (default) deals each judge to
one phase, as the thesis describes (6.5.1: "averaging the scores on subsets of tasks");
``"paper"`` is what the code of METAGEN 2022 (ESANN 2022, github.com/Didayolo/
competition-metageneralization) does: it draws m judges with replacement and cuts the
draws into thirds (``int(m/3)``, ``int(m/3)``, the rest), so a judge can sit in two or
three phases (about 28% of the final phase's judges also sit in the post-challenge phase)
and in one phase several times. The published k* and d/n are that split's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ConfigError, InputError
from ..matrix import ScoreMatrix
from ..ranking import Ranking
from ..stats import kendall_tau_distance
from ..jsonable import jsonable
from ..registry import DEFAULT_METHOD, DEFAULT_SEED, generator
from .shared import fractional_ranks_rows, Progress, rank_codes, setup
from .bootstrap import bootstrap_scores, usable_trials
from .draws import Draws, skip_note

__all__ = ["top_k_curves", "k_star", "TopKCurves", "KStar", "SPLITS"]

#: How :func:`top_k_curves` cuts one matrix's judges into phases.
SPLITS = ("disjoint", "paper")
Phase = Ranking | ScoreMatrix | Mapping[str, float] | pd.Series


# ---------------------------------------------------------------------- k*
@dataclass(frozen=True)
class KStar:
    """Estimated optimal quota of the top-k rule.

    Attributes
    ----------
    value : float
        ``1 + d/n``.
    k : int
        The integer quota to use: ``ceil(value)``, at most n (rounding up keeps more
        candidates, the conservative side).
    conservative : float
        ``1 + 2d/n``, the safer choice the thesis recommends under noisy rankings.
    d : float
        Discordant pairs between the two phases' rankings of their common candidates.
    n : int
        Number of common candidates.
    ties : str
        How pairs tied in a ranking were counted.
    """

    value: float
    k: int
    conservative: float
    d: float
    n: int
    ties: str

    def to_dict(self) -> dict[str, Any]:
        return jsonable(dict(self.__dict__))


def _score_map(x: Phase, what: str) -> dict[str, float]:
    if isinstance(x, Ranking):
        return {c: float(v) for c, v in zip(x.candidates, x.scores)}
    if isinstance(x, pd.Series):
        x = x.to_dict()
    if isinstance(x, Mapping):
        out = {str(k): float(v) for k, v in x.items()}
        bad = [k for k, v in out.items() if not math.isfinite(v)]
        if bad:
            raise InputError(f"{what} score of candidate {bad[0]!r} is {out[bad[0]]!r}; scores must be finite.")
        return out
    raise InputError(
        f"{what} must be a Ranking, a score matrix or a mapping candidate -> score; "
        f"got {type(x).__name__}."
    )


def k_star(dev: Ranking | Mapping[str, float] | pd.Series,
           final: Ranking | Mapping[str, float] | pd.Series, *, ties: str = "ignore") -> KStar:
    """``k* = 1 + d/n`` from the development and final rankings (thesis 6.5.2).

    Both are restricted to their common candidates (n of them); d is the number of pairs
    the two rankings order strictly oppositely. Scores equal within the registry's
    tolerance are ties; with ``ties="ignore"`` a tied pair is not discordant, with
    ``ties="half"`` a pair tied in exactly one ranking counts 1/2. The thesis assumes no
    ties.

    Examples
    --------
    >>> k_star({"A": 3, "B": 2, "C": 1, "D": 0}, {"A": 2, "B": 3, "C": 0, "D": 1})
    KStar(value=1.5, k=2, conservative=2.0, d=2.0, n=4, ties='ignore')
    """
    a, b = _score_map(dev, "the development ranking"), _score_map(final, "the final ranking")
    common = [c for c in a if c in b]
    if len(common) < 2:
        raise InputError(
            f"k* needs at least 2 candidates ranked in both phases; {len(common)} are common."
        )
    d = kendall_tau_distance([a[c] for c in common], [b[c] for c in common],
                             normalize=False, ties=ties)
    n = len(common)
    value = 1.0 + d / n
    return KStar(value, min(n, math.ceil(value - 1e-12)), 1.0 + 2.0 * d / n, d, n, ties)


# ---------------------------------------------------------------------- curves
@dataclass(frozen=True)
class TopKCurves:
    """Meta-learning curves of the top-k rule (thesis fig. 6.2), averaged over trials.

    Arrays are aligned with ``k = 1..n``. ``k_best`` is the smallest k minimizing the mean
    meta-test error; ``k_band`` the range where the best k of another run of as many
    trials would fall, 95% of the time (:func:`_best_k_band`, from bootstrap resamples of
    the trials: the argmin of a flat curve moves far between runs); ``k_star`` the
    mean over trials of ``1 + d/n`` between D and F, ``d_mean`` and ``d_std`` the mean and
    standard deviation over trials of d. ``split``: how the judges were cut
    (:data:`SPLITS`; None when all three phases were given).
    ``mode`` says where the phases came from: ``"given"`` (D, F and P given: one trial),
    ``"split_final"`` (F and P are random halves of the final matrix' judges) or
    ``"split_all"`` (D, F and P are random thirds of one matrix' judges, thesis 6.5.1).
    ``skipped`` splits had a part without a usable judge (:func:`~.bootstrap.usable_trials`;
    every part holds a judge and every judge scores some candidate, so valid input has
    none): they are left out of the averages and counted in ``notes``.
    """

    k: np.ndarray
    meta_train: np.ndarray
    meta_test: np.ndarray
    meta_train_std: np.ndarray
    meta_test_std: np.ndarray
    k_best: int
    k_star: float
    d_mean: float
    candidates: tuple[str, ...]
    method: str
    mode: str
    n_trials: int
    seed: int | None
    missing: str
    params: dict[str, Any]
    skipped: int = 0
    notes: tuple[str, ...] = ()
    k_band: tuple[int, int] = (0, 0)
    d_std: float = 0.0
    split: str | None = None

    @property
    def gap(self) -> np.ndarray:
        """Generalization gap: meta-test minus meta-training error."""
        return self.meta_test - self.meta_train

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "k": self.k,
                "meta_train": self.meta_train,
                "meta_test": self.meta_test,
                "gap": self.gap,
                "meta_train_std": self.meta_train_std,
                "meta_test_std": self.meta_test_std,
            }
        )

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "method": self.method,
                "mode": self.mode,
                **({"split": self.split} if self.split is not None else {}),
                "n_candidates": len(self.candidates),
                "n_trials": self.n_trials,
                "seed": self.seed,
                "missing": self.missing,
                "params": self.params,
                "k_best": self.k_best,
                "k_band": list(self.k_band),
                "k_star": self.k_star,
                "d_mean": self.d_mean,
                "d_std": self.d_std,
                "d_over_n": self.d_mean / len(self.candidates),
                "curves": self.to_frame().to_dict(orient="list"),
            } | ({"notes": list(self.notes)} if self.notes else {})
        )


def _order(codes: np.ndarray, label_key: np.ndarray) -> np.ndarray:
    """Best first; equal scores by candidate label."""
    return np.lexsort((label_key, -codes))


def topk_errors(d: np.ndarray, f: np.ndarray, p: np.ndarray, label_key: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """Meta-training and meta-test errors of the top-k rule for every k (one trial).

    ``d``, ``f``, ``p`` are tie codes (higher is better) of the candidates in D, F and P.
    The top k of D are the first k in D order (ties by label); the winner is the first of
    them in F order; errors are its normalized fractional ranks in F and in P.
    """
    n = len(d)
    d_order, f_order = _order(d, label_key), _order(f, label_key)
    f_pos = np.empty(n, dtype=np.intp)
    f_pos[f_order] = np.arange(n)
    winner = f_order[np.minimum.accumulate(f_pos[d_order])]
    rf, rp = fractional_ranks_rows(np.vstack([f, p]))
    return (rf[winner] - 1.0) / (n - 1), (rp[winner] - 1.0) / (n - 1)


#: Bootstrap resamples of the trials behind :attr:`TopKCurves.k_band`.
BAND_RESAMPLES = 200


def _best_k_band(test: np.ndarray, rng: np.random.Generator) -> tuple[int, int]:
    """Where the best k (the smallest k at the minimum mean meta-test error) of another
    run of as many trials falls, 95% of the time: the 2.5th and 97.5th percentiles over
    :data:`BAND_RESAMPLES` bootstrap resamples of the trials (the rows of ``test``), each
    resample's deviation from the mean curve scaled by sqrt(2) (the other run's noise and
    this one's: the difference of two runs has twice the variance of one)."""
    trials = len(test)
    weights = rng.multinomial(trials, np.full(trials, 1.0 / trials), size=BAND_RESAMPLES)
    mean = test.mean(axis=0)
    curves = mean + np.sqrt(2.0) * ((weights @ test) / trials - mean)
    best = np.sort(np.argmin(curves, axis=1)) + 1
    lo, hi = np.quantile(best, [0.025, 0.975], method="inverted_cdf")
    return int(lo), int(hi)


def top_k_curves(
    dev: Phase,
    final: Phase | None = None,
    post: Phase | None = None,
    *,
    method: str = DEFAULT_METHOD,
    n_trials: int = 1000,
    split: float = 0.5,
    seed: int | np.random.Generator | None = DEFAULT_SEED,
    missing: str = "worst",
    progress: Progress = None,
    judge_split: str = "disjoint",
    **params: Any,
) -> TopKCurves:
    """Meta-training / meta-test curves of the top-k rule as a function of k (thesis 6.5).

    Parameters
    ----------
    dev, final, post : Ranking, ScoreMatrix or mapping candidate -> score
        The development phase D, the final phase F (meta-training) and the post-challenge
        phase P (meta-test). A ScoreMatrix is ranked with ``method``. Only candidates
        present in every phase are used.

        - all three given: one deterministic trial;
        - ``post`` omitted: ``final`` must be a ScoreMatrix; each trial splits its judges
          at random into F (a share ``split``) and P (the rest);
        - ``final`` and ``post`` omitted: ``dev`` must be a ScoreMatrix; each trial splits
          its judges at random into three near-equal parts D, F and P (thesis 6.5.1).
    judge_split : {"disjoint", "paper"}
        How a trial cuts the judges (:data:`SPLITS`): ``"disjoint"`` (default) deals each
        judge to one part; ``"paper"`` draws as many judges as the matrix has, with
        replacement, and cuts the draws (D and F ``int(m/3)`` draws each, P the rest; or F
        ``split`` of them and P the rest): the parts share judges, as METAGEN 2022's code.
    method, params
        Ranking method (and its parameters) applied to score matrices.
    n_trials : int
        Random splits averaged (ignored when all three phases are given).

    Ties: the top k of D are its first k candidates in score order, equal scores by
    candidate label; the winner among them is the first in F's order likewise.
    """
    if isinstance(n_trials, bool) or not isinstance(n_trials, (int, np.integer)) or n_trials < 1:
        raise ConfigError(f"`n_trials` must be a positive integer; got {n_trials!r}.")
    if not 0 < split < 1:
        raise ConfigError(f"`split` must be strictly between 0 and 1; got {split!r}.")
    if final is None and post is not None:
        raise ConfigError("give `final` when `post` is given.")
    if judge_split not in SPLITS:
        raise ConfigError(f"`judge_split` must be one of {list(SPLITS)}; got {judge_split!r}.")
    rng, seed_used = generator(seed)
    if final is None:
        mode, source = "split_all", dev
    elif post is None:
        mode, source = "split_final", final
    else:
        mode, source = "given", None
    if source is not None and not isinstance(source, ScoreMatrix):
        what = "`dev`" if mode == "split_all" else "`final`"
        raise InputError(
            f"{what} must be a ScoreMatrix to split its judges into phases; got "
            f"{type(source).__name__} (or give all three phases)."
        )
    phases = {"dev": dev, "final": final, "post": post}
    fixed = {k: v for k, v in phases.items() if v is not None and v is not source}
    names = [set(v.candidates) if isinstance(v, (ScoreMatrix, Ranking)) else set(map(str, _score_map(v, k)))
             for k, v in phases.items() if v is not None]
    first = dev.candidates if isinstance(dev, (ScoreMatrix, Ranking)) else list(_score_map(dev, "dev"))
    common = [c for c in first if all(c in s for s in names)]

    fixed_codes: dict[str, np.ndarray] = {}
    for key, value in fixed.items():
        if isinstance(value, ScoreMatrix):
            s = setup(value.subset(candidates=[c for c in common if c in value.candidates]),
                        method, params, missing, seed)
            value = s.full[method]
        scores = _score_map(value, key)
        fixed_codes[key] = np.array([scores.get(c, np.nan) for c in common])

    trials = 1 if mode == "given" else int(n_trials)
    usable = np.ones(trials, dtype=bool)
    split_codes: list[np.ndarray] = []
    if source is not None:
        s = setup(source.subset(candidates=common), method, params, missing, seed)
        parts = 3 if mode == "split_all" else 2
        if s.m < parts:
            raise InputError(
                f"splitting into {parts} phases needs at least {parts} judges; the matrix has {s.m}."
            )
        counts = []
        third = s.m // 3
        for _ in range(trials):
            if judge_split == "paper":  # m draws with replacement, cut in order
                perm = rng.choice(s.m, s.m, replace=True)
                cuts = [third, 2 * third] if parts == 3 else None
            else:
                perm = rng.permutation(s.m)
                cuts = None
            if parts == 3:
                pieces = np.split(perm, cuts) if cuts else np.array_split(perm, 3)
            else:
                h = min(s.m - 1, max(1, round(split * s.m)))
                pieces = [perm[:h], perm[h:]]
            for piece in pieces:
                counts.append(np.bincount(piece, minlength=s.m))
        counts = np.array(counts)
        seeds = rng.integers(0, 2**31 - 1, size=len(counts))
        draws = Draws("judges", counts, None, seeds, seed_used)
        scores = bootstrap_scores(s, draws, progress=progress)[method]
        usable = usable_trials(s, draws).reshape(trials, parts).all(axis=1)
        if not usable.any():
            raise InputError(skip_note(trials, trials, "random splits of the judges")
                             + " The top-k curves are undefined.")
        index = [s.matrix.candidates.index(c) if c in s.matrix.candidates else -1 for c in common]
        kept = np.where(np.array(index) >= 0, scores[:, np.maximum(index, 0)], np.nan)
        split_codes = list(kept.reshape(trials, parts, len(common)).transpose(1, 0, 2))

    def codes_of(key: str, t: int, slot: int) -> np.ndarray:
        if key in fixed_codes:
            return fixed_codes[key]
        return split_codes[slot][t]

    slots = {"split_all": {"dev": 0, "final": 1, "post": 2},
             "split_final": {"final": 0, "post": 1}, "given": {}}[mode]
    present = np.ones(len(common), bool)
    raw = []
    for t in np.flatnonzero(usable):
        row = [codes_of(k, t, slots.get(k, -1)) for k in ("dev", "final", "post")]
        raw.append(row)
        for r in row:
            present &= ~np.isnan(r)
    keep = np.flatnonzero(present)
    cands = tuple(common[i] for i in keep)
    n = len(cands)
    if n < 2:
        raise InputError(f"the top-k analysis needs at least 2 candidates in every phase; got {n}.")
    label_key = np.argsort(np.argsort(np.array(cands, dtype=object)))
    skipped = trials - len(raw)
    train = np.zeros((len(raw), n))
    test = np.zeros((len(raw), n))
    dist = np.zeros(len(raw))
    for t, row in enumerate(raw):
        d, f, p = rank_codes(np.vstack([r[keep] for r in row]))
        train[t], test[t] = topk_errors(d, f, p, label_key)
        dist[t] = kendall_tau_distance(d, f, normalize=False)
    mean_test = test.mean(axis=0)
    ddof = 1 if len(raw) > 1 else 0
    best = int(np.argmin(mean_test))  # the smallest k at the minimum
    band = _best_k_band(test, rng)
    return TopKCurves(
        k=np.arange(1, n + 1),
        meta_train=train.mean(axis=0),
        meta_test=mean_test,
        meta_train_std=train.std(axis=0, ddof=ddof),
        meta_test_std=test.std(axis=0, ddof=ddof),
        k_best=best + 1,
        k_star=float(np.mean(1.0 + dist / n)),
        d_mean=float(dist.mean()),
        candidates=cands,
        method=method,
        mode=mode,
        n_trials=trials,
        seed=seed_used,
        missing=missing,
        params=dict(params),
        skipped=skipped,
        notes=(skip_note(skipped, trials, "random splits of the judges"),) if skipped else (),
        k_band=band,
        d_std=float(dist.std(ddof=ddof)),
        split=None if mode == "given" else judge_split,
    )
