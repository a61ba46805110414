"""SCO paper Section 4.3: rankings from sparse simulated tournaments.

Usage: python benchmarks/sco_tournament.py [--seeds 50] [--contests 5 10 20 50 100 200]
                                           [--budgets 1 3 5 10 20 100] [--plackett-luce]

20 agents with true ratings theta ~ N(100, 30); each contest has 4 agents, whose
performance is their rating plus N(0, 5) noise, and the contest outcome (a vote) sorts
them. Contests are drawn two ways: ``uniform`` (4 distinct agents at random) and
``skill-matched`` (the first agent at random, then each next one is the closest in true
rating to the current contest average among 3 agents drawn at random).

For each number of contests it prints the Kendall tau distance (KTD, discordant pairs out
of 190) between each method's ranking and the true ranking, averaged over seeds; a pair a
method leaves tied counts 1/2 (the expected cost of breaking the tie at random). ``sco`` is
the default (projected L-BFGS, ``max_iter="auto"``) solver; the paper ran Algorithm 1
(10,000 steps of batch 16). ``--budgets`` adds ``sco`` rows with an explicit ``max_iter``.

``--plackett-luce`` adds the noisy sparse case of ``compare_peers.py`` (50,000 agents,
30,000 seven-player contests, Plackett-Luce outcomes): Kendall tau-b of ``sco``'s ratings
to the true skills for each budget and for ``"auto"``. The two settings are the evidence
for ``max_iter="auto"``: early stopping pays on noisy outcomes and costs on consistent ones.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from peer_cases import tournament
from scipy.stats import kendalltau

import metascore as ms

METHODS = [
    ("sco", "sco", {}),
    ("sco sgd (1e4 x 16, lr .1)", "sco", {"solver": "sgd", "iterations": 10_000,
                                          "batch_size": 16, "learning_rate": 0.1}),
    ("epp", "epp", {}),
    ("elo", "elo", {}),
    ("borda (average_rank)", "average_rank", {}),
    ("ranked_pairs", "ranked_pairs", {}),
]
N_AGENTS, CONTEST_SIZE = 20, 4


def contests(theta: np.ndarray, count: int, matched: bool, rng: np.random.Generator) -> list[list[int]]:
    votes = []
    for _ in range(count):
        if matched:
            chosen = [int(rng.integers(N_AGENTS))]
            while len(chosen) < CONTEST_SIZE:
                pool = rng.choice(np.setdiff1d(np.arange(N_AGENTS), chosen), 3, replace=False)
                mean = theta[chosen].mean()
                chosen.append(int(pool[np.argmin(np.abs(theta[pool] - mean))]))
            agents = np.array(chosen)
        else:
            agents = rng.choice(N_AGENTS, CONTEST_SIZE, replace=False)
        performance = theta[agents] + rng.normal(0.0, 5.0, size=CONTEST_SIZE)
        votes.append([int(a) for a in agents[np.argsort(-performance)]])
    return votes


def ktd(scores: np.ndarray, truth: np.ndarray) -> float:
    """Discordant pairs, plus 1/2 per pair tied by the method."""
    i, j = np.triu_indices(scores.size, 1)
    ds, dt = np.sign(scores[i] - scores[j]), np.sign(truth[i] - truth[j])
    return float(np.count_nonzero(ds * dt < 0) + 0.5 * np.count_nonzero(ds == 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--contests", type=int, nargs="+", default=[5, 10, 20, 50, 100, 200])
    parser.add_argument("--budgets", type=int, nargs="*", default=[],
                        help="extra `sco` rows with these explicit `max_iter`")
    parser.add_argument("--plackett-luce", action="store_true",
                        help="also 50,000 agents x 30,000 noisy seven-player contests")
    args = parser.parse_args()
    methods = METHODS[:1] + [(f"sco max_iter={k}", "sco", {"max_iter": k}) for k in args.budgets]
    tournaments(args, methods + METHODS[1:])
    if args.plackett_luce:
        plackett_luce(args.budgets)


def tournaments(args, methods) -> None:
    labels = [f"agent{i:02d}" for i in range(N_AGENTS)]
    for matched in (False, True):
        print(f"\n# {'skill-matched' if matched else 'uniform'} contests: mean KTD to the true "
              f"ranking over {args.seeds} seeds (max 190)")
        print(f"{'method':27s}" + "".join(f"{c:>8d}" for c in args.contests))
        results = {name: [] for name, _, _ in methods}
        for count in args.contests:
            sums = dict.fromkeys(results, 0.0)
            for seed in range(args.seeds):
                rng = np.random.default_rng([seed, count, int(matched)])
                theta = rng.normal(100.0, 30.0, size=N_AGENTS)
                votes = [[labels[a] for a in v] for v in contests(theta, count, matched, rng)]
                counts = ms.PairwiseCounts.from_votes(votes, candidates=labels)
                for name, method, params in methods:
                    sums[name] += ktd(ms.rank(counts, method, seed=seed, **params).scores, theta)
            for name in results:
                results[name].append(sums[name] / args.seeds)
        for name, values in results.items():
            print(f"{name:27s}" + "".join(f"{v:8.2f}" for v in values), flush=True)


def plackett_luce(budgets: list[int], n: int = 50_000, count: int = 30_000, k: int = 7) -> None:
    skill, votes = tournament(n, count, k)
    played = np.zeros(n, bool)
    played[votes.ravel()] = True
    counts = ms.PairwiseCounts.from_votes(votes, candidates=range(n))
    print(f"\n# Plackett-Luce: {n:,} agents x {count:,} contests of {k}: Kendall tau-b to the "
          "true skills")
    print(f"{'max_iter':10s}{'iterations':>11s}{'tau':>8s}{'loss':>10s}{'time':>8s}  regime")
    for budget in ["auto", *budgets]:
        start = time.perf_counter()
        r = ms.rank(counts, "sco", max_iter=budget)
        seconds = time.perf_counter() - start
        d = r.details
        tau = kendalltau(r.scores[played], skill[played]).statistic
        share = f" (contradicted {d['contradicted']:.1%})" if "contradicted" in d else ""
        print(f"{budget!s:10s}{d['iterations']:11d}{tau:8.3f}{d['loss']:10.4g}{seconds:7.2f}s  "
              f"{d['regime']}{share}", flush=True)


if __name__ == "__main__":
    main()
