"""What every analysis shares: the validated input, tie codes, ranks and concordance.

The validated input (:class:`Setup`) holds the registry's :class:`~metascore.inputs.Inputs`
(the matrix after the missing-data policy, prepared once), the methods resolved once from
their names (:class:`~metascore.method_spec.RankingMethod`, with their resampling
shortcuts) and each method's ranking of it: :func:`setup` prepares a matrix through the
registry (or takes the inputs it prepared), :func:`setup_of` starts from a
:class:`~metascore.Ranking` (the data it was computed from, and the ranking itself), and
:meth:`Setup.including` compares more methods on the same input (what was computed from
the data is shared). Every public analysis takes a matrix or a setup, and
:func:`resolve` makes the setup it reads from either. The resamples and the scores of
resampled matrices are in :mod:`.bootstrap`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..errors import ConfigError, InputError, did_you_mean
from ..matrix import ScoreMatrix
from ..method_spec import RankingMethod
from ..missing import Prepared
from ..pairwise import PairwiseCounts
from ..ranking import DEFAULT_TIE_BREAK, SCORE_RTOL, Ranking
from ..resampling import PairSums, Shortcuts, integer_valued
from ..inputs import Inputs
from ..registry import (DEFAULT_SEED, check_params, get_ranking_method, prepare_inputs,
                        rank_inputs, ranking_method_names)
from ..stats import fractional_ranks, kendall_w_of_ranks, ranks_along
from .execution import Execution

__all__ = [
    "Setup",
    "setup",
    "setup_of",
    "resolve",
    "resolve_methods",
    "method_params",
    "rank_codes",
    "fractional_ranks_rows",
    "code_ranks",
    "concordance_of",
    "pearson_rows",
    "judge_ranks",
]

_NO_SHORTCUTS = Shortcuts()


# ---------------------------------------------------------------------- inputs
@dataclass(frozen=True, eq=False)
class Setup:
    """A validated analysis input: the registry's inputs (a matrix after the missing-data
    policy) and the methods, resolved once from their names.

    ``specs`` holds each method's registration (its shortcuts: :meth:`hooks`); ``full``
    each method's ranking of the whole (prepared) matrix, computing which also validates the
    method parameters; ``seed`` is the integer seed of those rankings and ``run`` the
    :class:`~.execution.Execution` the setup was made with, without its ``progress`` and
    ``notify`` (an analysis of the setup runs so unless given another); ``source`` the matrix before the missing-data policy (None
    when the setup starts from a ranking). ``cache`` keeps what the resampling shortcuts
    compute once from the full data, and the scores of draws already scored (shared by the
    criteria that draw the same resamples).
    """

    inputs: Inputs
    methods: tuple[str, ...]
    specs: dict[str, RankingMethod]
    params: dict[str, dict[str, Any]]
    full: dict[str, Ranking]
    filled_ranks: np.ndarray  # per-judge fractional ranks, n x m (NaN: not ranked)
    seconds: dict[str, float] = field(default_factory=dict)  # each full ranking's time
    cache: dict[Any, Any] = field(default_factory=dict, repr=False)
    seed: int = DEFAULT_SEED
    run: Execution = field(default_factory=Execution, repr=False)
    source: ScoreMatrix | None = field(default=None, repr=False)  # before the policy

    @property
    def prepared(self) -> Prepared:
        """The matrix after the missing-data policy (:class:`~metascore.missing.Prepared`)."""
        return self.inputs.prepared

    @property
    def matrix(self) -> ScoreMatrix:
        return self.inputs.prepared.matrix

    @property
    def missing(self) -> str:
        return self.inputs.missing

    @property
    def excluded_candidates(self) -> dict[str, str]:
        return dict(self.inputs.prepared.excluded_candidates)

    @property
    def excluded_judges(self) -> dict[str, str]:
        return dict(self.inputs.prepared.excluded_judges)

    def hooks(self, name: str) -> Shortcuts:
        """The resampling shortcuts method ``name`` declares (none: an empty declaration)."""
        return self.specs[name].resampling or _NO_SHORTCUTS

    def restricted(self, methods: Sequence[str]) -> Setup:
        """The same input with only ``methods`` compared (what was computed from the data
        is kept)."""
        keep = tuple(m for m in self.methods if m in methods)
        out = dataclasses.replace(  # the scores of a draw hold every method: left behind
            self, methods=keep, specs={m: self.specs[m] for m in keep},
            params={m: self.params[m] for m in keep}, full={m: self.full[m] for m in keep},
            seconds={m: self.seconds[m] for m in keep if m in self.seconds},
            cache=self._data_cache(), run=dataclasses.replace(
                self.run, params={m: self.params[m] for m in keep}))
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k in _FROM_THE_DATA})
        return out

    def including(self, methods: str | Sequence[str], params: Mapping[str, Any] | None) -> Setup:
        """The same input with ``methods`` compared, in that order (``params`` as in
        :func:`setup`): a method this setup ranked already with the same parameters keeps
        its full-data ranking, the others rank the input (:func:`~metascore.registry.rank_inputs`);
        nothing is prepared again, and the judges' ranks and what the shortcuts computed
        from the data are shared."""
        specs = resolve_methods(methods)
        per_method = method_params(specs, params)
        known = {m: self.full[m] for m in specs
                 if m in self.full and self.params[m] == per_method[m]}
        out = _ranked(self.inputs, specs, per_method, self.run, known, self.filled_ranks,
                      self.source)
        shared = {k: v for k, v in self.__dict__.items() if k in _FROM_THE_DATA}
        out.__dict__.update(shared)  # cached properties of the data, computed once
        out.cache.update(self._data_cache())
        out.seconds.update({m: self.seconds[m] for m in known if m in self.seconds})
        return out

    def _data_cache(self) -> dict[Any, Any]:
        """What the shortcuts computed from the data (the scores of a draw, which hold
        every method, are left behind)."""
        return {k: v for k, v in self.cache.items() if k[:1] != ("scores",)}

    @property
    def n(self) -> int:
        return self.matrix.n_candidates

    @cached_property
    def pairs(self) -> PairSums:
        """Every judge's pairs (``filled_ranks`` without NaN), for per-trial pair sums."""
        return PairSums(self.filled_ranks)

    @cached_property
    def integral_weights(self) -> bool:
        """Whether every judge weight is an integer."""
        return integer_valued(np.asarray(self.matrix.weights, dtype=float))

    @cached_property
    def present(self) -> np.ndarray:
        """The scored cells (n x m)."""
        return ~np.isnan(self.matrix.values)

    @cached_property
    def full_counts(self) -> PairwiseCounts:
        """Pairwise counts of the whole prepared matrix (from ``filled_ranks``), computed
        once for every chunk of trials that restricts them to drawn candidates."""
        return PairwiseCounts.from_matrix(-self.filled_ranks, self.matrix.weights)

    @property
    def m(self) -> int:
        return self.matrix.n_judges


#: The cached properties of a :class:`Setup` that depend on its data only (shared by
#: :meth:`Setup.including`).
_FROM_THE_DATA = ("pairs", "integral_weights", "present", "full_counts")


def resolve_methods(methods: str | Sequence[str] | None) -> dict[str, RankingMethod]:
    """``{name: registration}`` of ``methods`` (one name or several, each once), in order:
    the one place the analyses look methods up by name."""
    names = () if methods is None else (methods,) if isinstance(methods, str) else tuple(methods)
    if not names:
        raise ConfigError("give at least one ranking method; valid methods are "
                          f"{ranking_method_names()}.")
    specs: dict[str, RankingMethod] = {}
    for name in names:
        spec = get_ranking_method(name)  # unknown names raise with the valid ones
        if name in specs:
            raise ConfigError(f"ranking method {name!r} is listed twice; list each method once.")
        specs[name] = spec
    return specs


def method_params(specs: Mapping[str, RankingMethod], params: Mapping[str, Any] | None
                  ) -> dict[str, dict[str, Any]]:
    """Per-method parameters: ``{method: {param: value}}``, checked against each method's
    declared constraints before any ranking runs (the methods ``params`` does not name:
    ``{}``).

    With a single method, a flat ``{param: value}`` mapping is accepted too (a key naming
    one of its parameters makes it flat: a parameter's value may be a mapping itself).
    """
    named = _named_params(specs, params)
    out = {name: dict(named.get(name, {})) for name in specs}
    for name, values in out.items():
        check_params(specs[name], values)
    return out


def _named_params(specs: Mapping[str, RankingMethod], params: Mapping[str, Any] | None
                  ) -> dict[str, Mapping[str, Any]]:
    """``params`` as ``{method: {param: value}}`` for the methods it names (see
    :func:`method_params`)."""
    methods = tuple(specs)
    params = dict(params or {})
    flat = len(methods) == 1 and params and (
        any(k in specs[methods[0]].defaults for k in params)
        or not all(isinstance(v, Mapping) for v in params.values()))
    if flat:
        params = {methods[0]: params}
    unknown = [k for k in params if k not in methods]
    if unknown:
        raise ConfigError(
            f"`params` names method {unknown[0]!r}{did_you_mean(unknown[0], methods)}, which is "
            f"not among the methods compared ({list(methods)})."
        )
    for key, value in params.items():
        if not isinstance(value, Mapping):
            raise ConfigError(
                f"`params[{key!r}]` must be a mapping of parameter names to values; got {value!r}."
            )
    return params


def judge_ranks(oriented: np.ndarray, missing: str) -> np.ndarray:
    """Per-judge fractional ranks (1 = best); a missing cell is tied last under ``worst``
    and NaN (not ranked) otherwise."""
    x = np.asarray(oriented, dtype=float)
    if np.isnan(x).any() and missing == "worst":
        x = np.where(np.isnan(x), -np.inf, x)
    return fractional_ranks(x, axis=0)


def setup(matrix: ScoreMatrix, methods: str | Sequence[str] | None,
          run: Execution | None = None, *, inputs: Inputs | None = None) -> Setup:
    """Validate the input once: method names and parameters (``run.params``), the
    missing-data policy (``run.missing``: the registry's
    :func:`~metascore.registry.prepare_inputs`, or the ``inputs`` it made of ``matrix``
    already); then each method ranks it (with ``run.seed`` when an integer)."""
    run = Execution() if run is None else run
    if not isinstance(matrix, ScoreMatrix):
        raise InputError(f"expected a ScoreMatrix; got {type(matrix).__name__}.")
    specs = resolve_methods(methods)
    per_method = method_params(specs, run.params)
    if inputs is None:
        inputs = prepare_inputs(matrix, run.policy)
    elif inputs.missing != run.policy:
        raise ConfigError(f"the inputs were prepared with missing={inputs.missing!r}, not "
                          f"{run.policy!r}.")
    return _ranked(inputs, specs, per_method, run, {}, source=matrix)


def setup_of(
    ranking: Ranking,
    methods: str | Sequence[str],
    params: Mapping[str, Any] | None,
) -> Setup:
    """:func:`setup` of the data ``ranking`` was computed from (its inputs: nothing is
    prepared again) with its missing-data policy and seed.

    ``ranking`` is its method's full-data ranking when :func:`setup` would make the same
    one (the same parameters, an integer seed, the default tie-break); any other method
    ranks its inputs (:func:`~metascore.registry.rank_inputs`).
    """
    specs = resolve_methods(methods)
    per_method = method_params(specs, params)
    known = {}
    if (ranking.method in specs and ranking.seed is not None
            and tuple(ranking.tie_break) == DEFAULT_TIE_BREAK
            and check_params(specs[ranking.method], per_method[ranking.method]) == ranking.params):
        known[ranking.method] = ranking
    run = Execution(seed=ranking.seed, missing=ranking.inputs.missing, params=per_method)
    return _ranked(ranking.inputs, specs, per_method, run, known)


def resolve(data: ScoreMatrix | Setup, methods: str | Sequence[str] | None,
            run: Execution | None) -> tuple[Setup, Execution]:
    """The setup an analysis reads and how it runs: a matrix prepared for ``methods`` under
    ``run`` (:func:`setup`), or a prepared setup under ``run`` (default: the run it was made
    with) comparing ``methods`` (default: its own; others, or other ``run.params``, are
    ranked on its input by :meth:`Setup.including`). A setup keeps its missing-data policy,
    and its own methods their parameters unless ``methods`` names them."""
    if not isinstance(data, Setup):
        run = Execution() if run is None else run
        return setup(data, methods, run), run
    if run is None and methods is None:
        return data, data.run
    s, run = data, data.run if run is None else run
    if run.missing is not None and run.missing != s.missing:
        raise ConfigError(
            f"the setup was prepared with missing={s.missing!r}, not {run.missing!r}: prepare "
            "the matrix again (setup) to analyze it under another missing-data policy.")
    if methods is None:
        named = {} if run.params is None else _named_params(s.specs, run.params)
        if _filled(s, named) != _filled(s, {m: s.params[m] for m in named}):
            raise ConfigError(
                "`params` differ from the setup's: name the methods to rank with them (they "
                "are ranked again on the setup's input).")
        return s, run
    names = (methods,) if isinstance(methods, str) else tuple(methods)
    params = run.params if run.params is not None else {
        m: s.params[m] for m in names if m in s.params}
    if names == s.methods and _filled(s, method_params(s.specs, params)) == _filled(s, s.params):
        return s, run
    return s.including(names, params), run


def _filled(s: Setup, per_method: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``per_method`` with each method's defaults filled in (parameters compared as used)."""
    return {m: check_params(s.specs[m], dict(p)) for m, p in per_method.items()}


def _ranked(inputs: Inputs, specs: dict[str, RankingMethod], per_method: dict[str, dict[str, Any]],
            run: Execution, known: dict[str, Ranking], filled_ranks: np.ndarray | None = None,
            source: ScoreMatrix | None = None) -> Setup:
    """The :class:`Setup` of ``inputs``: each method's full-data ranking (those ``known``
    already made are kept) and the judges' ranks (``filled_ranks`` when computed already)."""
    prepared = inputs.prepared
    if prepared is None:
        raise InputError("the analyses need a score matrix, not pairwise counts from votes.")
    n = prepared.matrix.n_candidates
    if n < 2:
        raise InputError(
            f"the analysis needs at least 2 candidates; {n} remain after "
            f"missing={inputs.missing!r}."
        )
    # The full-data rankings use a fixed integer seed, never the caller's Generator: the
    # bootstrap draws must not depend on which (stochastic) methods are compared.
    seed = run.seed
    full_seed = seed if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) else DEFAULT_SEED
    full, seconds = dict(known), {}
    for name, spec in specs.items():
        if name in known:
            continue
        start = time.perf_counter()
        full[name] = rank_inputs(inputs, spec, seed=full_seed, **per_method[name])
        seconds[name] = time.perf_counter() - start
    names = tuple(specs)
    return Setup(
        inputs=inputs,
        methods=names,
        specs=dict(specs),
        params=per_method,
        full={name: full[name] for name in names},
        filled_ranks=(judge_ranks(prepared.oriented, inputs.missing) if filled_ranks is None
                      else filled_ranks),
        seconds=seconds,
        seed=int(full_seed),
        # the parameters as checked; no callable: a setup travels to the trials' workers
        run=dataclasses.replace(run, params=per_method, progress=None, notify=None),
        source=source,
    )


# ---------------------------------------------------------------------- ranks
def rank_codes(scores: np.ndarray) -> np.ndarray:
    """Exact tie codes of score rows: ``-group`` (0 = best group), NaN for absent.

    Scores equal within the registry's tolerance get the same code, exactly as
    :func:`~metascore.ranking.tie_groups` groups them (sorted best first, a new group at
    every step above the tolerance), so ranks computed from codes match
    :class:`~metascore.Ranking` ranks exactly. All rows at once.
    """
    scores = np.atleast_2d(np.asarray(scores, dtype=float))
    if scores.shape[1] == 0:
        return scores.copy()
    order = np.argsort(-scores, axis=1, kind="stable")  # NaN last
    s = np.take_along_axis(scores, order, axis=1)
    hi, lo = s[:, :-1], s[:, 1:]
    with np.errstate(invalid="ignore"):
        gap = hi - lo > SCORE_RTOL * np.maximum(1.0, np.maximum(hi, -lo))
    group = np.concatenate([np.zeros((len(s), 1)), np.cumsum(gap, axis=1)], axis=1)
    codes = np.empty(scores.shape)
    np.put_along_axis(codes, order, -group, axis=1)
    codes[np.isnan(scores)] = np.nan
    return codes


def fractional_ranks_rows(codes: np.ndarray) -> np.ndarray:
    """Fractional ranks (1 = best) of each row of codes among its present entries."""
    codes = np.atleast_2d(codes)
    return ranks_along(-codes, "average", axis=1)


def code_ranks(codes: np.ndarray) -> np.ndarray:
    """:func:`fractional_ranks_rows` of tie codes from :func:`rank_codes` (``-group``,
    NaN for absent): one plus the candidates of the better groups plus half the others
    of its group, from each row's count per group (no sort)."""
    codes = np.atleast_2d(codes)
    q, n = codes.shape
    present = ~np.isnan(codes)
    group = np.where(present, -codes, n).astype(np.intp)  # n: absent, not counted
    flat = group + (n + 1) * np.arange(q)[:, None]
    counts = np.bincount(flat[present], minlength=q * (n + 1)).reshape(q, n + 1)
    above = np.cumsum(counts, axis=1) - counts
    rows = np.arange(q)[:, None]
    ranks = 1.0 + above[rows, group] + (counts[rows, group] - 1.0) / 2.0
    ranks[~present] = np.nan
    return ranks


def pearson_rows(x: np.ndarray, y: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Pearson correlation of x and y along the last axis over ``mask``.

    Undefined correlations follow the concordance convention: 1 when both vectors are
    constant (identical rankings: all tied), 0 when only one is (no association), NaN when
    fewer than 2 entries are shared.
    """
    k = mask.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = np.where(mask, x, 0).sum(-1) / k
        my = np.where(mask, y, 0).sum(-1) / k
        dx = np.where(mask, x - mx[..., None], 0)
        dy = np.where(mask, y - my[..., None], 0)
        sxx, syy = (dx * dx).sum(-1), (dy * dy).sum(-1)
        r = (dx * dy).sum(-1) / np.sqrt(sxx * syy)
    flat_x, flat_y = sxx <= 1e-12, syy <= 1e-12
    r = np.where(flat_x & flat_y, 1.0, np.where(flat_x | flat_y, 0.0, r))
    return np.where(k >= 2, r, np.nan)


def _mean_pairwise_spearman(codes: np.ndarray) -> float:
    """Mean Spearman rho over the q(q-1)/2 pairs of rows, each pair restricted to the
    candidates both rows rank (ranks recomputed within that shared set)."""
    q, n = codes.shape
    present = ~np.isnan(codes)
    iu = np.triu_indices(q, k=1)
    if present.all():
        ranks = code_ranks(codes)
        rho = pearson_rows(ranks[iu[0]], ranks[iu[1]], np.ones((len(iu[0]), n), bool))
        return float(np.nanmean(rho)) if np.isfinite(rho).any() else float("nan")
    sxx, sxy, k = _shared_rank_sums(codes, present)
    syy = sxx.T
    # ranks are multiples of 1/2, so a spread is 0 or at least 1/2: 1e-3 tells them apart
    flat_x, flat_y = sxx < 1e-3, syy < 1e-3
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = sxy / np.sqrt(sxx * syy)
    rho = np.where(flat_x & flat_y, 1.0, np.where(flat_x | flat_y, 0.0, rho))
    rho = np.where(k >= 2, rho, np.nan)[iu]
    return float(np.nanmean(rho)) if np.isfinite(rho).any() else float("nan")


def _shared_rank_sums(codes: np.ndarray, present: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every pair of rows (i, j) of ``codes`` (q x n, NaN = absent), restricted to the
    k_ij candidates both rank, with x the fractional ranks of row i and y those of row j
    among them: ``sum (x - m)^2`` (q x q: [i, j]; the other spread is its transpose),
    ``sum (x - m)(y - m)`` and k (m = (k + 1) / 2, the mean of any fractional ranks).

    Computed exactly on doubled ranks (integers): along row i's order (best first), the
    doubled rank of a candidate among those row j also ranks is one plus the count of
    those before its tie group plus the count through the end of its group, two
    cumulative counts of row j's presence, for every (i, j) at once (n x q x q, int16,
    with a slab of zeros read for the candidates row i lacks). The sums are integers
    (int32 or int64), exact; without ties, the doubled ranks of k candidates are 2, 4, ..., 2k.
    """
    q, n = codes.shape
    order = np.argsort(-codes, axis=1, kind="stable")  # NaN (absent) last
    ordered = np.take_along_axis(codes, order, axis=1)
    rows = np.arange(q)[None, :]
    small = np.int16 if 2 * n + 1 < 2**15 else np.int32  # a doubled rank fits
    counts = np.zeros((n + 1, q, q), dtype=small)  # [p, i, j]; p = n: zeros (absent)
    np.take(present.T.astype(small), order.T, axis=0, out=counts[:n])  # j ranks i's p-th
    for p in range(1, n):  # cumulative along the order (slab by slab: contiguous)
        counts[p] += counts[p - 1]
    new = np.ones((q, n), dtype=bool)  # a tie group starts at p
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]  # NaN != NaN: absent ones apart
    untied = bool(new.all())
    where = np.full((q, n), n)  # each candidate's position in each row's order
    np.put_along_axis(where, order, np.broadcast_to(np.arange(n), (q, n)), axis=1)
    if untied:  # before + through + 1 = 2 through when shared
        where[~present] = n  # the zero slab
        x = counts[where.T, rows]  # [c, i, j]: 0 where row i lacks c
        x *= 2
    else:  # through the ends of c's tie group in row i: 1 + before + through
        last = np.ones((q, n), dtype=bool)
        last[:, :-1] = new[:, 1:]
        pos = np.arange(n)
        start = np.maximum.accumulate(np.where(new, pos, 0), axis=1)
        end = np.minimum.accumulate(np.where(last, pos, n - 1)[:, ::-1], axis=1)[:, ::-1]
        before = np.take_along_axis(start, where, axis=1) - 1
        before[(before < 0) | ~present] = n  # nothing before the group; absent
        through = np.take_along_axis(end, where, axis=1)
        through[~present] = n
        x = counts[before.T, rows]
        x += counts[through.T, rows]
        x += present.T[:, :, None]
    shared = present.astype(float)
    k = np.rint(shared @ shared.T).astype(np.int64)
    centre = k * (k + 1) ** 2  # 4 k m^2
    wide = np.int32 if n * (2 * n + 1) ** 2 < 2**31 else np.int64  # holds every sum
    sxy = (np.einsum("cij,cji->ij", x, x, dtype=wide) - centre) / 4.0  # 0 if either lacks c
    if untied:  # the doubled ranks of the shared candidates in row i are 2, 4, ..., 2k
        sxx = (2 * k * (k + 1) * (2 * k + 1) // 3 - centre) / 4.0
    else:
        x *= present.T[:, None, :]
        sxx = (np.einsum("cij,cij->ij", x, x, dtype=wide) - centre) / 4.0
    return sxx, sxy, k


def concordance_of(codes: np.ndarray, kind: str) -> float:
    """Concordance of q rankings (rows of tie codes, NaN = candidate absent).

    ``kind="spearman"``: mean Spearman rho over all pairs of rankings, each pair restricted
    to the candidates both contain. ``kind="kendall_w"``: Kendall's W with the tie
    correction when every ranking holds every candidate; otherwise (candidate resampling)
    the W that corresponds to the mean pairwise Spearman by Kendall's identity
    ``W = (1 + (q - 1) rho_mean) / q``, exact for complete untied rankings. Identical
    rankings have concordance 1 (even when all tied).
    """
    codes = np.atleast_2d(codes)
    q = codes.shape[0]
    if q < 2:
        raise InputError(f"concordance needs at least 2 rankings; got {q}.")
    complete = not np.isnan(codes).any()
    if complete and (codes == codes[0]).all():
        return 1.0
    if kind == "kendall_w":
        if complete:
            return float(kendall_w_of_ranks(code_ranks(codes).T))
        return (1.0 + (q - 1) * _mean_pairwise_spearman(codes)) / q
    if kind == "spearman":
        return _mean_pairwise_spearman(codes)
    raise ConfigError(
        f"unknown concordance {kind!r}{did_you_mean(kind, ('kendall_w', 'spearman'))}; "
        "allowed values are ['kendall_w', 'spearman']."
    )
