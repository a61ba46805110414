"""Stability of rankings under resampling (thesis 5.3.1, fig. 5.5; ESANN 2021).

- :func:`stability`: concordance of q rankings of q resampled matrices, repeated r times,
  under judge, candidate or joint resampling;
- :func:`stability_vs_judges`: judge-axis stability as a function of the number of judges
  (how many tasks an organizer needs).

ESANN 2021 measured judge stability with Kendall's W and candidate stability with the mean
pairwise Spearman rho (each pair restricted to the candidates both rankings hold): these
are the defaults (:data:`PAPER_CONCORDANCE`); both are available on every axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ..jsonable import jsonable
from ..errors import ConfigError, did_you_mean
from ..matrix import ScoreMatrix
from .criteria import PerMethodSummary, finite_mean, positive_int, spread
from .execution import Execution, Progress
from .shared import concordance_of, rank_codes, resolve, Setup
from .bootstrap import run_trials
from .draws import check_axis, plan_draws, skip_note

__all__ = ["PAPER_CONCORDANCE", "stability", "stability_vs_judges", "StabilityResult",
           "StabilityCurve"]

CONCORDANCES = ("kendall_w", "spearman")

#: The concordance ESANN 2021 used on each axis (the default when none is given).
PAPER_CONCORDANCE = {"judges": "kendall_w", "candidates": "spearman", "both": "spearman"}
#: The progress stage of a stability on each axis.
_STAGES = {"judges": "judge stability", "candidates": "candidate stability",
           "both": "judge and candidate stability"}


def _concordance(value: str | None, axis: str) -> str:
    if value is None:
        return PAPER_CONCORDANCE[axis]
    if value not in CONCORDANCES:
        raise ConfigError(
            f"`concordance` must be one of {list(CONCORDANCES)}; got {value!r}"
            f"{did_you_mean(str(value), CONCORDANCES)}."
        )
    return value


@dataclass(frozen=True)
class StabilityResult(PerMethodSummary):
    """Stability of several methods: concordance of q rankings of q resampled matrices,
    repeated r times.

    Attributes
    ----------
    values : dict
        ``{method: array (r,)}``: the concordance of each repetition (NaN when fewer than
        2 of its q rankings are left).
    mean, std : dict
        Over the r repetitions (std with ddof=1; 0 when r = 1).
    skipped, notes
        Resamples skipped because they kept no usable judge (every drawn judge lacks a
        score for every drawn candidate): a repetition's concordance is over the rankings
        left. ``notes`` (in :meth:`to_dict` only when there is one) says how many.
    """

    methods: tuple[str, ...]
    axis: str
    concordance: str
    q: int
    r: int
    values: dict[str, np.ndarray]
    seed: int | None
    missing: str
    params: dict[str, dict[str, Any]]
    skipped: int = 0
    notes: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "method": list(self.methods),
                "stability": [self.mean[m] for m in self.methods],
                "std": [self.std[m] for m in self.methods],
            }
        )

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "criterion": "stability",
                "axis": self.axis,
                "concordance": self.concordance,
                "q": self.q,
                "r": self.r,
                "methods": list(self.methods),
                "mean": self.mean,
                "std": self.std,
                "values": {m: self.values[m] for m in self.methods},
                "seed": self.seed,
                "missing": self.missing,
                "params": self.params,
            } | _notes(self.notes)
        )


@dataclass(frozen=True)
class StabilityCurve:
    """Stability versus the number of judges drawn (thesis fig. 5.5).

    ``mean[method]`` and ``std[method]`` are arrays aligned with ``sizes`` (NaN at a size
    where no repetition kept 2 rankings). ``skipped`` resamples kept no usable judge
    (counted in ``notes``, as :class:`StabilityResult`).
    """

    methods: tuple[str, ...]
    sizes: np.ndarray
    mean: dict[str, np.ndarray]
    std: dict[str, np.ndarray]
    concordance: str
    q: int
    r: int
    seed: int | None
    missing: str
    params: dict[str, dict[str, Any]]
    n_judges: int
    skipped: int = 0
    notes: tuple[str, ...] = ()

    def judges_needed(self, target: float = 0.9) -> dict[str, int | None]:
        """Smallest size whose mean stability reaches ``target`` (None if none does)."""
        out: dict[str, int | None] = {}
        for m in self.methods:
            hit = np.flatnonzero(self.mean[m] >= target)
            out[m] = int(self.sizes[hit[0]]) if hit.size else None
        return out

    def to_frame(self) -> pd.DataFrame:
        """Long table: one row per (method, size)."""
        rows = [
            {"method": m, "n_judges": int(k), "stability": float(mu), "std": float(sd)}
            for m in self.methods
            for k, mu, sd in zip(self.sizes, self.mean[m], self.std[m])
        ]
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "criterion": "stability_vs_judges",
                "methods": list(self.methods),
                "sizes": self.sizes,
                "mean": self.mean,
                "std": self.std,
                "judges_needed_0.9": self.judges_needed(0.9),
                "concordance": self.concordance,
                "q": self.q,
                "r": self.r,
                "seed": self.seed,
                "missing": self.missing,
                "params": self.params,
                "n_judges": self.n_judges,
            } | _notes(self.notes)
        )


def _notes(notes: tuple[str, ...]) -> dict[str, list[str]]:
    """``{"notes": [...]}`` when there is a note, else nothing (the key is new: a result
    without a note keeps the files it always gave)."""
    return {"notes": list(notes)} if notes else {}


def _stability_notes(skipped: int, total: int, undefined: int, r: int) -> tuple[str, ...]:
    if not skipped:
        return ()
    notes = (skip_note(skipped, total) + " Each repetition's concordance is over the "
             "rankings left.",)
    if undefined:
        notes += (f"{undefined} of {r} repetitions kept fewer than 2 rankings; their "
                  "concordance is undefined"
                  + (", and so is the stability." if undefined == r else "."),)
    return notes


def _stability_values(
    s: Setup, run: Execution, *, axis: str, size: int, q: int, r: int, concordance: str,
    progress: Progress, done: int, total: int,
) -> tuple[dict[str, np.ndarray], int | None, int, int]:
    """Concordance of each of r repetitions of q resampled rankings, per method; the seed,
    the number of skipped resamples and of undefined repetitions.

    All q * r resamples are drawn first, then every method ranks the same matrices. A
    resample without a usable judge is skipped: its repetition's concordance is over the
    other rankings, and undefined (NaN) when fewer than 2 are left.
    """
    plan = plan_draws(run.seed, q * r, axis, s.n, s.m, judges=size)
    trials = run_trials(s, plan, run, progress=progress, done=done, total=total)
    usable = trials.usable.reshape(r, q)
    kept = usable.sum(axis=1)
    out = {}
    for name in s.methods:
        codes = rank_codes(trials.scores[name]).reshape(r, q, s.n)
        out[name] = np.array([
            concordance_of(block if k == q else block[ok], concordance) if k >= 2 else np.nan
            for block, ok, k in zip(codes, usable, kept)])
    return out, plan.seed, int(q * r - kept.sum()), int((kept < 2).sum())


def stability(
    data: ScoreMatrix | Setup,
    methods: str | Sequence[str] | None = None,
    *,
    axis: str = "judges",
    q: int = 100,
    r: int = 10,
    concordance: str | None = None,
    run: Execution | None = None,
) -> StabilityResult:
    """Stability of ranking methods under judge, candidate or joint resampling (thesis 5.3.1).

    ``q`` bootstrap matrices (judges drawn with replacement for ``axis="judges"``,
    candidates for ``axis="candidates"``, candidates then judges for ``"both"``; drawn
    candidates are ranked with their copies, which act as clones) give q rankings per
    method; their concordance is Kendall's W (``concordance="kendall_w"``) or the mean
    Spearman rho over all pairs of rankings (``"spearman"``), each pair restricted to the
    candidates both rankings hold. When rankings do not share every candidate, Kendall's W
    is obtained from the mean pairwise Spearman by ``W = (1 + (q - 1) rho) / q``. The
    default concordance is the paper's for the axis (:data:`PAPER_CONCORDANCE`). The
    procedure is repeated ``r`` times; the result holds the r values, their mean and std.

    Examples
    --------
    >>> import metascore as ms
    >>> m = ms.ScoreMatrix.from_array([[3, 3, 3], [2, 2, 2], [1, 1, 1]], ["A", "B", "C"])
    >>> stability(m, ["average_rank", "copeland"], q=5, r=2).mean
    {'average_rank': 1.0, 'copeland': 1.0}
    """
    draws = _Draws.checked(axis, q, r, concordance)  # before the setup's rankings
    s, run = resolve(data, methods, run)
    axis, q, r, concordance = draws
    values, seed_used, skipped, undefined = _stability_values(
        s, run, axis=axis, size=s.m, q=q, r=r, concordance=concordance,
        progress=run.stage(_STAGES[axis]), done=0, total=q * r)
    return StabilityResult(s.methods, axis, concordance, q, r, values, seed_used, s.missing,
                           s.params, skipped, _stability_notes(skipped, q * r, undefined, r))


class _Draws(NamedTuple):
    """The resampling of a stability, checked once: the axis, ``q`` rankings a repetition,
    ``r`` repetitions, and the concordance of the q rankings."""

    axis: str
    q: int
    r: int
    concordance: str

    @classmethod
    def checked(cls, axis: str, q: int, r: int, concordance: str | None) -> _Draws:
        check_axis(axis)
        concordance = _concordance(concordance, axis)
        return cls(axis, positive_int(q, "q", 2), positive_int(r, "r"), concordance)


def default_sizes(m: int) -> np.ndarray:
    """Up to 10 judge counts evenly spread over 2..m."""
    return np.unique(np.linspace(min(2, m), m, num=min(10, m)).round().astype(int))


def stability_vs_judges(
    data: ScoreMatrix | Setup,
    methods: str | Sequence[str] | None = None,
    sizes: Sequence[int] | None = None,
    *,
    q: int = 100,
    r: int = 10,
    concordance: str = "kendall_w",
    run: Execution | None = None,
) -> StabilityCurve:
    """Judge-axis stability as a function of the number of judges (thesis fig. 5.5).

    For each size k, each of the q rankings is computed on k judges drawn with replacement
    from the m judges, and the concordance of the q rankings is averaged over r
    repetitions. It answers "how many tasks does my benchmark need for a stable ranking?"
    (see :meth:`StabilityCurve.judges_needed`). Sizes above m extrapolate by resampling.
    ``sizes`` defaults to up to 10 sizes evenly spread over 2..m.
    """
    _, q, r, concordance = _Draws.checked("judges", q, r, concordance)  # before the rankings
    s, run = resolve(data, methods, run)
    progress = run.stage("stability vs judges")
    sizes = default_sizes(s.m) if sizes is None else sizes
    sizes = np.asarray([positive_int(k, "sizes") for k in sizes], dtype=int)
    mean = {m: np.zeros(len(sizes)) for m in s.methods}
    std = {m: np.zeros(len(sizes)) for m in s.methods}
    total = len(sizes) * q * r
    seed_used = None
    skipped = undefined = 0
    for i, k in enumerate(sizes):
        vals, seed_used, skip, undef = _stability_values(
            s, run, axis="judges", size=int(k), q=q, r=r, concordance=concordance,
            progress=progress, done=i * q * r, total=total)
        skipped, undefined = skipped + skip, undefined + undef
        for m in s.methods:
            mean[m][i], std[m][i] = finite_mean(vals[m]), spread(vals[m])
    notes = _stability_notes(skipped, total, undefined, len(sizes) * r)
    return StabilityCurve(
        s.methods, sizes, mean, std, concordance, q, r, seed_used, s.missing, s.params, s.m,
        skipped, notes,
    )
