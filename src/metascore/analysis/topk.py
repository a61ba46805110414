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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ConfigError, InputError
from ..matrix import ScoreMatrix
from ..ranking import Ranking
from ..stats import kendall_tau_distance
from ..jsonable import jsonable
from ..registry import DEFAULT_METHOD, generator
from .execution import Execution
from .shared import (fractional_ranks_rows, method_params, rank_codes, resolve, resolve_methods,
                     setup, Setup)
from .bootstrap import bootstrap_scores, usable_trials
from .draws import Draws, skip_note

__all__ = ["top_k_curves", "k_star", "TopKCurves", "KStar", "SPLITS"]

#: How :func:`top_k_curves` cuts one matrix's judges into phases.
SPLITS = ("disjoint", "paper")
Phase = Ranking | ScoreMatrix | Setup | Mapping[str, float] | pd.Series


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
    judge_split: str = "disjoint",
    run: Execution | None = None,
) -> TopKCurves:
    """Meta-training / meta-test curves of the top-k rule as a function of k (thesis 6.5).

    ``dev``, ``final``, ``post`` (a Ranking, a ScoreMatrix, a prepared
    :class:`~.shared.Setup` or a mapping candidate -> score) are the development phase D,
    the final phase F (meta-training) and the post-challenge phase P (meta-test); only the
    candidates in every phase are used. A ScoreMatrix is ranked with ``method`` on them
    (its parameters: ``run.params``), a setup as it was prepared. All three given: one
    deterministic trial; ``post`` omitted: each of ``n_trials`` trials splits ``final``'s
    judges at random into F (a share ``split``) and P; ``final`` and ``post`` omitted: into
    three near-equal parts D, F and P (thesis 6.5.1). ``judge_split`` (:data:`SPLITS`) says
    how: ``"disjoint"`` deals each judge to one part, ``"paper"`` draws as many judges as the
    matrix has, with replacement, and cuts the draws (D and F ``int(m/3)`` each, P the rest;
    or F ``split`` of them), as METAGEN 2022's code. ``run``: the seed of the splits, the
    missing-data policy, the progress (stage ``"top-k <method>"``).

    Ties: the top k of D are its first k candidates in score order, equal scores by
    candidate label; the winner among them is the first in F's order likewise.
    """
    _check(n_trials, split, final, post, judge_split)
    run = Execution() if run is None else run
    rng, seed_used = generator(run.seed)
    phases = {"dev": dev, "final": final, "post": post}
    mode, split_key = _mode(phases)
    source = phases.get(split_key)
    common = _common(phases)
    fixed = {key: _fixed_codes(value, key, common, method, run)
             for key, value in phases.items() if value is not None and key != split_key}
    trials = 1 if mode == "given" else int(n_trials)
    usable, split_codes = np.ones(trials, dtype=bool), {}
    params = None
    if source is not None:
        s = _source_setup(source, common, method, run)
        params = s.params[method]
        usable, split_codes = _split_codes(s, mode, common, trials, rng, seed_used, split,
                                           judge_split, method, run)
    rows = [[fixed[k] if k in fixed else split_codes[k][t] for k in ("dev", "final", "post")]
            for t in np.flatnonzero(usable)]
    return TopKCurves(
        **_curves(rows, common, trials, rng), method=method, mode=mode, n_trials=trials,
        seed=seed_used, missing=source.missing if isinstance(source, Setup) else run.policy,
        params=_params_of(method, run) if params is None else params,
        split=None if mode == "given" else judge_split)


def _check(n_trials: Any, split: float, final: Phase | None, post: Phase | None,
           judge_split: str) -> None:
    if isinstance(n_trials, bool) or not isinstance(n_trials, (int, np.integer)) or n_trials < 1:
        raise ConfigError(f"`n_trials` must be a positive integer; got {n_trials!r}.")
    if not 0 < split < 1:
        raise ConfigError(f"`split` must be strictly between 0 and 1; got {split!r}.")
    if final is None and post is not None:
        raise ConfigError("give `final` when `post` is given.")
    if judge_split not in SPLITS:
        raise ConfigError(f"`judge_split` must be one of {list(SPLITS)}; got {judge_split!r}.")


def _mode(phases: Mapping[str, Phase | None]) -> tuple[str, str | None]:
    """Where the phases come from (:attr:`TopKCurves.mode`) and the phase whose judges are
    split (None: all three given)."""
    if phases["final"] is None:
        mode, key = "split_all", "dev"
    elif phases["post"] is None:
        mode, key = "split_final", "final"
    else:
        return "given", None
    if not isinstance(phases[key], (ScoreMatrix, Setup)):
        what = "`dev`" if mode == "split_all" else "`final`"
        raise InputError(
            f"{what} must be a ScoreMatrix to split its judges into phases; got "
            f"{type(phases[key]).__name__} (or give all three phases)."
        )
    return mode, key


def _candidates(value: Phase, key: str) -> Sequence[str]:
    if isinstance(value, Setup):
        return value.matrix.candidates
    if isinstance(value, (ScoreMatrix, Ranking)):
        return value.candidates
    return list(_score_map(value, key))


def _common(phases: Mapping[str, Phase | None]) -> list[str]:
    """The candidates of every given phase, in the development phase's order."""
    sets = [set(map(str, _candidates(v, k))) for k, v in phases.items() if v is not None]
    return [c for c in _candidates(phases["dev"], "dev") if all(c in s for s in sets)]


def _fixed_codes(value: Phase, key: str, common: list[str], method: str, run: Execution
                 ) -> np.ndarray:
    """The scores of a phase that is not split, aligned with ``common`` (NaN: not ranked):
    a matrix ranked by ``method`` on the common candidates it holds, a setup's ranking."""
    if isinstance(value, ScoreMatrix):
        value = setup(value.subset(candidates=[c for c in common if c in value.candidates]),
                      method, run).full[method]
    elif isinstance(value, Setup):
        value = resolve(value, None if method in value.methods else method, run)[0].full[method]
    scores = _score_map(value, key)
    return np.array([scores.get(c, np.nan) for c in common])


def _source_setup(source: ScoreMatrix | Setup, common: list[str], method: str, run: Execution
                  ) -> Setup:
    """The setup whose judges are split: a matrix's common candidates prepared for
    ``method``, or a setup with ``method`` alone (what it computed from the data kept)."""
    if isinstance(source, ScoreMatrix):
        return setup(source.subset(candidates=common), method, run)
    s, _ = resolve(source, None if method in source.methods else method, run)
    return s if s.methods == (method,) else s.restricted([method])


def _split_codes(s: Setup, mode: str, common: list[str], trials: int, rng: np.random.Generator,
                 seed_used: int | None, split: float, judge_split: str, method: str,
                 run: Execution) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Which trials keep a usable judge in every part, and each split phase's scores in
    every trial (trials x common, NaN: not ranked), the judges cut by ``judge_split``."""
    parts = 3 if mode == "split_all" else 2
    if s.m < parts:
        raise InputError(
            f"splitting into {parts} phases needs at least {parts} judges; the matrix has {s.m}."
        )
    counts = np.array([np.bincount(piece, minlength=s.m) for _ in range(trials)
                       for piece in _cut(rng, s.m, parts, split, judge_split)])
    seeds = rng.integers(0, 2**31 - 1, size=len(counts))
    draws = Draws("judges", counts, None, seeds, seed_used)
    scores = bootstrap_scores(s, draws, run, progress=run.stage(f"top-k {method}"))[method]
    usable = usable_trials(s, draws).reshape(trials, parts).all(axis=1)
    if not usable.any():
        raise InputError(skip_note(trials, trials, "random splits of the judges")
                         + " The top-k curves are undefined.")
    at = {c: i for i, c in enumerate(s.matrix.candidates)}
    index = np.array([at.get(c, -1) for c in common], dtype=np.intp)
    kept = np.where(index >= 0, scores[:, np.maximum(index, 0)], np.nan)
    per_part = kept.reshape(trials, parts, len(common)).transpose(1, 0, 2)
    names = ("dev", "final", "post") if parts == 3 else ("final", "post")
    return usable, dict(zip(names, per_part))


def _cut(rng: np.random.Generator, m: int, parts: int, split: float, judge_split: str
         ) -> list[np.ndarray]:
    """One trial's judges cut into ``parts`` (positions; repeated under ``"paper"``)."""
    third = m // 3
    if judge_split == "paper":  # m draws with replacement, cut in order
        perm = rng.choice(m, m, replace=True)
        cuts = [third, 2 * third] if parts == 3 else None
    else:
        perm = rng.permutation(m)
        cuts = None
    if parts == 3:
        return np.split(perm, cuts) if cuts else np.array_split(perm, 3)
    h = min(m - 1, max(1, round(split * m)))
    return [perm[:h], perm[h:]]


def _params_of(method: str, run: Execution) -> dict[str, Any]:
    """The parameters given for ``method`` (as the result records them)."""
    return method_params(resolve_methods(method), run.params)[method]


def _curves(rows: list[list[np.ndarray]], common: list[str], trials: int,
            rng: np.random.Generator) -> dict[str, Any]:
    """The curves (:class:`TopKCurves`' fields) of the trials' codes ``rows`` (D, F, P of
    each usable trial) on the candidates ranked in every phase of every trial."""
    present = np.ones(len(common), bool)
    for row in rows:
        for r in row:
            present &= ~np.isnan(r)
    keep = np.flatnonzero(present)
    cands = tuple(common[i] for i in keep)
    n = len(cands)
    if n < 2:
        raise InputError(f"the top-k analysis needs at least 2 candidates in every phase; got {n}.")
    label_key = np.argsort(np.argsort(np.array(cands, dtype=object)))
    skipped = trials - len(rows)
    train, test, dist = np.zeros((len(rows), n)), np.zeros((len(rows), n)), np.zeros(len(rows))
    for t, row in enumerate(rows):
        d, f, p = rank_codes(np.vstack([r[keep] for r in row]))
        train[t], test[t] = topk_errors(d, f, p, label_key)
        dist[t] = kendall_tau_distance(d, f, normalize=False)
    mean_test = test.mean(axis=0)
    ddof = 1 if len(rows) > 1 else 0
    return dict(
        k=np.arange(1, n + 1), meta_train=train.mean(axis=0), meta_test=mean_test,
        meta_train_std=train.std(axis=0, ddof=ddof), meta_test_std=test.std(axis=0, ddof=ddof),
        k_best=int(np.argmin(mean_test)) + 1,  # the smallest k at the minimum
        k_star=float(np.mean(1.0 + dist / n)), d_mean=float(dist.mean()), candidates=cands,
        skipped=skipped,
        notes=(skip_note(skipped, trials, "random splits of the judges"),) if skipped else (),
        k_band=_best_k_band(test, rng), d_std=float(dist.std(ddof=ddof)))
