"""What each peer library is asked to compute in ``compare_peers.py``, and how its answer
is compared with metascore's: the data, the calls (input conversion included), the reasons
rankings can differ, and the agreement marks."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable

import numpy as np
from scipy.stats import kendalltau, rankdata

import metascore as ms
from metascore.ranking import fractional_rank_of_scores

TIES = "10x10 ties"  # integer scores 0..3: where tie conventions show


# ---------------------------------------------------------------------- peers
def _peer(module: str, dist: str):
    try:
        mod = __import__(module, fromlist=["_"])
        return mod, importlib.metadata.version(dist)
    except Exception as exc:  # noqa: BLE001 - any import failure is reported, not fatal
        return None, f"{type(exc).__name__}: {exc}".splitlines()[0]


def load_peers() -> dict[str, tuple[object, str]]:
    peers = {
        "ranky": _peer("ranky", "ranky"),
        "pref_voting": _peer("pref_voting.profiles", "pref-voting"),
        "open_spiel": _peer("pyspiel", "open-spiel"),
        "choix": _peer("choix", "choix"),
    }
    return peers


# ---------------------------------------------------------------------- data
def make_matrix(size: str, seed: int = 0) -> np.ndarray:
    """Candidates x judges, higher is better: sigmoid(quality + N(0, 1.5) judge noise)."""
    if size == TIES:
        rng = np.random.default_rng(seed)
        return rng.integers(0, 4, size=(10, 10)).astype(float)
    n, m = (int(v) for v in size.split("x"))
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(n, 1))
    return 1.0 / (1.0 + np.exp(-(quality + rng.normal(scale=1.5, size=(n, m)))))


def tournament(n: int, contests: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Plackett-Luce contests: skill ~ N(0, 1); each contest draws k distinct agents and
    orders them by skill + Gumbel noise. Returns (skill, votes best first)."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(size=n)
    players = rng.integers(0, n, size=(contests, k))
    while True:  # redraw the contests that name an agent twice
        srt = np.sort(players, axis=1)
        bad = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))
        if bad.size == 0:
            break
        players[bad] = rng.integers(0, n, size=(bad.size, k))
    perf = skill[players] + rng.gumbel(size=players.shape)
    return skill, np.take_along_axis(players, np.argsort(-perf, axis=1), axis=1)


def pairwise_wins(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What a peer user computes first: W[a, b] = #judges a > b, T = #ties (numpy blocks)."""
    n, m = M.shape
    W, T = np.zeros((n, n)), np.zeros((n, n))
    block = max(1, 4_000_000 // (n * m))
    for s in range(0, n, block):
        W[s:s + block] = np.count_nonzero(M[s:s + block, None, :] > M[None], axis=2)
        T[s:s + block] = np.count_nonzero(M[s:s + block, None, :] == M[None], axis=2)
    np.fill_diagonal(T, 0)
    return W, T


def strict_votes(M: np.ndarray) -> list[list[int]]:
    """One strict order per judge, best first (ties broken by candidate index)."""
    return np.argsort(-M, axis=0, kind="stable").T.tolist()


# ---------------------------------------------------------------------- metascore calls
def ms_rank(method: str, **params) -> Callable[[np.ndarray], np.ndarray]:
    def run(M: np.ndarray) -> np.ndarray:
        return ms.rank(ms.ScoreMatrix.from_array(M), method, **params).scores
    return run


def by_alternative(ranking, scores, n):
    out = np.full(n, np.nan)
    out[np.asarray(ranking, dtype=int)] = scores
    return out


# ---------------------------------------------------------------------- peer calls
def score_matrix_cases(peers) -> dict[str, list[tuple[str, str, Callable]]]:
    """function -> [(library, call, fn(M) -> scores, higher is better)]."""
    rk = peers["ranky"][0]
    cases: dict[str, list] = {
        "mean": [("numpy", "M.mean(axis=1)", lambda M: M.mean(axis=1))],
        "median": [("numpy", "np.median(M, axis=1)", lambda M: np.median(M, axis=1))],
        "average_rank": [("numpy", "-rankdata(-M, axis=0).mean(1)",
                          lambda M: -rankdata(-M, axis=0).mean(axis=1))],
        "success_rate": [], "relative_difference": [], "copeland": [], "schulze": [],
        "ranked_pairs": [], "bradley_terry": [], "kendall_w": [],
    }
    if rk is not None:
        cases["mean"].append(("ranky", "rk.score(M)", lambda M: np.asarray(rk.score(M))))
        cases["median"].append(("ranky", "rk.majority(M)", lambda M: np.asarray(rk.majority(M))))
        cases["average_rank"].append(("ranky", "rk.borda(M) [mean rank]",
                                      lambda M: -np.asarray(rk.borda(M))))
        cases["success_rate"].append(("ranky", "rk.pairwise(M, wins=rk.success_rate)",
                                      lambda M: np.asarray(rk.pairwise(M, wins=rk.success_rate))))
        cases["relative_difference"].append((
            "ranky", "rk.pairwise(M, wins=rk.relative_difference)",
            lambda M: np.asarray(rk.pairwise(M, wins=rk.relative_difference))))
        cases["copeland"].append(("ranky", "rk.copeland(M)", lambda M: np.asarray(rk.copeland(M))))
        cases["kendall_w"].append(("ranky", "rk.kendall_w(M, axis=1, ties=True)",
                                   lambda M: np.array([rk.kendall_w(M, axis=1, ties=True)])))
    if peers["pref_voting"][0] is not None:
        from pref_voting import voting_methods as vm
        from pref_voting.profiles import Profile

        def pv(M):
            return Profile(strict_votes(M))

        def winners(fn):
            def run(M):
                out = np.zeros(M.shape[0])
                out[fn(pv(M))] = 1.0
                return out
            return run

        cases["average_rank"].append(("pref_voting", "Profile(votes).borda_scores()",
                                      lambda M: _dict_scores(pv(M).borda_scores(), M.shape[0])))
        cases["copeland"].append(("pref_voting", "Profile(votes).copeland_scores()",
                                  lambda M: _dict_scores(pv(M).copeland_scores(), M.shape[0])))
        cases["schulze"].append(("pref_voting", "beat_path(Profile(votes)) [winners]",
                                 winners(vm.beat_path)))
        cases["ranked_pairs"].append(("pref_voting", "ranked_pairs_tb(Profile(votes)) [winners]",
                                      winners(vm.ranked_pairs_tb)))
    if peers["open_spiel"][0] is not None:
        from open_spiel.python.voting import base, borda, copeland, elo, ranked_pairs, schulze

        def osp(method, use_scores=False):
            def run(M):
                profile = base.PreferenceProfile(votes=strict_votes(M),
                                                 alternatives=list(range(M.shape[0])))
                out = method().run_election(profile)
                # Borda and Copeland scores rank like the returned order and keep its ties;
                # other methods' scores are not monotone in it: use positions there.
                scores = out.scores if use_scores else -np.arange(M.shape[0], dtype=float)
                return by_alternative(out.ranking, scores, M.shape[0])
            return run

        cases["average_rank"].append(("open_spiel", "BordaVoting [strict votes]", osp(borda.BordaVoting, True)))
        cases["copeland"].append(("open_spiel", "CopelandVoting [strict votes]", osp(copeland.CopelandVoting, True)))
        cases["schulze"].append(("open_spiel", "SchulzeVoting [strict votes]", osp(schulze.SchulzeVoting)))
        cases["ranked_pairs"].append(("open_spiel", "RankedPairsVoting [strict votes]",
                                      osp(ranked_pairs.RankedPairsVoting)))
        cases["bradley_terry"].append(("open_spiel", "EloVoting (C++ MM) [strict votes]", osp(elo.EloVoting)))
    if peers["choix"][0] is not None:
        choix = peers["choix"][0]

        def bt(M):
            W, T = pairwise_wins(M)
            return choix.ilsr_pairwise_dense(W + 0.5 * T, alpha=1e-6)

        cases["bradley_terry"].append(("choix", "ilsr_pairwise_dense(W + T/2)", bt))
    return cases


def _dict_scores(d: dict, n: int) -> np.ndarray:
    return np.array([float(d[i]) for i in range(n)])


METASCORE = {
    "mean": ("rank(ScoreMatrix.from_array(M), 'mean')", ms_rank("mean")),
    "median": ("rank(..., 'median')", ms_rank("median")),
    "average_rank": ("rank(..., 'average_rank')", ms_rank("average_rank")),
    "success_rate": ("rank(..., 'success_rate')", ms_rank("success_rate")),
    "relative_difference": ("rank(..., 'relative_difference')", ms_rank("relative_difference")),
    "copeland": ("rank(..., 'copeland')", ms_rank("copeland")),
    "schulze": ("rank(..., 'schulze')", ms_rank("schulze")),
    "ranked_pairs": ("rank(..., 'ranked_pairs')", ms_rank("ranked_pairs")),
    "bradley_terry": ("rank(..., 'epp') [ridge 0.01]", ms_rank("epp")),
    "kendall_w": ("kendall_w(M)", lambda M: np.array([ms.kendall_w(M)])),
}

#: Why a peer's ranking can differ from metascore's (shown only when it does).
REASONS = {
    ("average_rank", "pref_voting"): "strict votes: a judge's tie is broken by candidate index",
    ("average_rank", "open_spiel"): "strict votes: a judge's tie is broken by candidate index",
    ("copeland", "pref_voting"): "strict votes: a judge's tie becomes a win for the lower index",
    ("copeland", "open_spiel"): "strict votes: a judge's tie becomes a win for the lower index",
    ("schulze", "open_spiel"): "strict votes; and equal path strengths are ordered by a "
                               "comparator that is not a total order",
    ("schulze", "pref_voting"): "strict votes: a judge's tie becomes a win for the lower index",
    ("ranked_pairs", "open_spiel"): "strict votes; equal margins are locked in another order "
                                    "(metascore: larger margin first, then candidate order)",
    ("ranked_pairs", "pref_voting"): "strict votes; equal margins broken by candidate order",
    ("bradley_terry", "open_spiel"): "strict votes, smoothing 0.01 added to every cell "
                                     "(metascore: ties count 1/2, ridge 0.01 on the ratings)",
    ("bradley_terry", "choix"): "prior 1e-6 (metascore: ridge 0.01 shrinks ratings of "
                                "close candidates differently)",
    ("median", "numpy"): "",
}


#: What "≈" means for a library that returns a strict order.
TIE_NOTES = {
    "open_spiel": "open_spiel returns a strict order (RankOutcome.ranking) where metascore "
                  "reports equal scores",
    "pref_voting": "pref_voting orders what metascore reports as equal",
}


# ---------------------------------------------------------------------- agreement
def agreement(ref: np.ndarray, other: np.ndarray, winners_only: bool = False) -> str:
    if ref.size == 1:  # a statistic, not a ranking
        return "=" if np.isclose(ref[0], other[0], rtol=1e-9) else f"{other[0]:.4g} vs {ref[0]:.4g}"
    if winners_only:
        top = np.flatnonzero(fractional_rank_of_scores(ref) == fractional_rank_of_scores(ref).min())
        return "~" if set(top) == set(np.flatnonzero(other == other.max())) else "winner differs"
    r_ref, r_other = fractional_rank_of_scores(ref), fractional_rank_of_scores(other)
    if np.array_equal(r_ref, r_other):
        return "="
    i, j = np.triu_indices(ref.size, 1)
    if not np.any(np.sign(r_ref[i] - r_ref[j]) * np.sign(r_other[i] - r_other[j]) < 0):
        return "≈"  # no pair in opposite orders: one side orders what the other leaves tied
    tau = kendalltau(ref, other).statistic
    return f"tau {tau:.3f}"
