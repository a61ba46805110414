"""metascore against the libraries users would pick, measured in one process run.

Usage:
    pip install -e ".[bench]"            # ranky, pref-voting, open-spiel, choix
    python benchmarks/compare_peers.py   # full run, rewrites the tables in benchmarks/README.md
    python benchmarks/compare_peers.py --quick --no-write   # small sizes only, print
    python benchmarks/compare_peers.py --sections interleaved --sizes 200x10000 20x471033 --no-write
                                         # mean and median against ranky, called in turn

For every function metascore shares with a peer, both run on the same seeded data in this
process. A time is the median of ``--repeat`` runs (one run when the first takes over 5 s)
and includes converting the data to the library's input type, as a user pays it: for
metascore, building the :class:`~metascore.ScoreMatrix` (or the pairwise counts of votes)
and the full :func:`metascore.rank` call (validation, ranks, provenance). A case over
``--cap`` seconds is interrupted, and the library is skipped at the larger sizes of that
function. A peer that is not installed is skipped with the reason.

The ratio columns are peer time / metascore time (above 1: metascore is faster). The
"agrees" marks compare the peer's ranking with metascore's on the same data: ``=`` same
order and ties, ``~`` same winner(s) only (the peer returns winners), otherwise the
Kendall tau-b between the two score vectors with a footnote saying why they differ.
Timing targets live here, never in the test suite.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("TQDM_DISABLE", "1")  # ranky's brute force draws a progress bar
# One BLAS thread for every library: on a shared 2-core machine, BLAS threads that wait for
# a busy core turn a 2 ms LAPACK call into 100+ ms at random. Override by setting the variable.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
import platform
import signal
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy
from peer_cases import (METASCORE, REASONS, TIE_NOTES, TIES, agreement, load_peers,
                        make_matrix, pairwise_wins, score_matrix_cases, strict_votes,
                        by_alternative, tournament)
from scipy.stats import kendalltau

import metascore as ms

README = Path(__file__).with_name("README.md")
BEGIN, END = "<!-- compare_peers: begin -->", "<!-- compare_peers: end -->"
SIZES = ["10x10", "50x100", "100x1000", "200x10000", "20x471033"]
QUICK_SIZES = ["10x10", "50x100", "100x1000"]


# ---------------------------------------------------------------------- timing
class Timeout(Exception):
    pass


@contextmanager
def cap(seconds: float):
    """Interrupt the block after ``seconds`` (SIGALRM; C calls finish first)."""
    def stop(signum, frame):
        raise Timeout()

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def measure(fn: Callable[[], object], repeat: int, limit: float) -> tuple[float, object]:
    """Median wall time of ``fn()`` and its last result; raises Timeout past ``limit``.

    ``repeat`` runs (one when the first takes over 5 s); a case under 50 ms runs again
    until 0.5 s or 50 runs have passed, so that the median of a fast case is not one
    unlucky moment on a shared machine.
    """
    times, result = [], None
    with cap(limit):
        while True:
            start = time.perf_counter()
            result = fn()
            times.append(time.perf_counter() - start)
            if times[0] > 5.0 or len(times) >= 50:
                break
            if len(times) >= repeat and (np.median(times) > 0.05 or sum(times) > 0.5):
                break
    return float(np.median(times)), result


def peer_runs(fn, keys, label, repeat, limit, log, tag):
    """``(key, seconds, result)`` for each key in turn, or ``(key, text, None)`` when the
    case failed, went over ``limit`` seconds, or is skipped after a case over the limit."""
    stop = None
    try:  # untimed first call: JIT compilation (pref_voting's numba) and caches
        with cap(limit):
            fn(keys[0])
    except Exception:  # noqa: BLE001 - the timed call below reports it
        pass
    for key in keys:
        if stop:
            yield key, stop, None
            continue
        try:
            t, result = measure(lambda: fn(key), repeat, limit)
        except Timeout:
            stop = f"skipped (over {limit:.0f} s at {label(key)})"
            log(f"{tag} {label(key)} timeout")
            yield key, f"over {limit:.0f} s", None
            continue
        except Exception as exc:  # noqa: BLE001 - a peer's failure is a result
            log(f"{tag} {label(key)} error {exc!r}"[:300])
            yield key, f"error: {type(exc).__name__}", None
            continue
        yield key, t, result


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        out = [f"### {self.title}", "", "| " + " | ".join(self.columns) + " |",
               "|" + "---|" * len(self.columns)]
        out += ["| " + " | ".join(r) + " |" for r in self.rows]
        if self.notes:
            out += [""] + [f"- {n}" for n in self.notes]
        return "\n".join(out) + "\n"


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


# ---------------------------------------------------------------------- sections
def score_matrix_section(peers, sizes, repeat, limit, log, functions=None
                         ) -> tuple[list[Table], list[list[str]]]:
    cases = {f: c for f, c in score_matrix_cases(peers).items() if not functions or f in functions}
    data = {s: make_matrix(s) for s in [TIES] + sizes}
    tables, summary = [], []
    for func, impls in cases.items():
        label, fn = METASCORE[func]
        cols = ["library", "call"] + [s.replace("x", " x ") for s in [TIES] + sizes]
        table = Table(func, cols)
        ms_times: dict[str, float] = {}
        ms_scores: dict[str, np.ndarray] = {}
        row = ["**metascore**", f"`{label}`"]
        for s in [TIES] + sizes:
            t, scores = measure(lambda: fn(data[s]), repeat, 10 * limit)
            ms_times[s], ms_scores[s] = t, np.asarray(scores, dtype=float)
            row.append(fmt(t))
            log(f"{func:20s} metascore  {s:10s} {fmt(t)}")
        table.rows.append(row)
        best_peer: dict[str, tuple[float, str]] = {}
        numpy_times: dict[str, float] = {}
        for lib, call, peer_fn in impls:
            row = [lib, f"`{call}`"]
            runs = peer_runs(lambda s: peer_fn(data[s]), [TIES] + sizes, str, repeat, limit, log,
                             f"{func:20s} {lib:10s}")
            for s, t, scores in runs:
                if isinstance(t, str):
                    row.append(t)
                    continue
                scores = np.asarray(scores, dtype=float)
                agree = agreement(ms_scores[s], scores, winners_only="[winners]" in call)
                if agree == "≈":
                    table.notes.append(f"{lib} at {s}: ≈ no pair in opposite orders; "
                                       f"{TIE_NOTES.get(lib, 'one side breaks ties the other keeps')}.")
                elif agree not in ("=", "~"):
                    reason = REASONS.get((func, lib)) or "see notes"
                    table.notes.append(f"{lib} at {s}: {agree}; {reason}.")
                ratio = t / ms_times[s]
                row.append(f"{fmt(t)} (x{ratio:.2g}) {agree if agree in '=~≈' else '≠'}")
                if lib == "numpy":
                    numpy_times[s] = t
                elif s not in best_peer or t < best_peer[s][0]:
                    best_peer[s] = (t, lib)
                log(f"{func:20s} {lib:10s} {s:10s} {fmt(t)} x{ratio:.2g} {agree}")
            table.rows.append(row)
        for s in sizes[-2:]:
            if s in best_peer:
                t, lib = best_peer[s]
                summary.append([func, s, fmt(ms_times[s]), f"{lib} {fmt(t)}", f"{t / ms_times[s]:.2g}"])
            if s in numpy_times and func in ("mean", "median"):
                t = numpy_times[s]
                summary.append([func, s, fmt(ms_times[s]), f"bare numpy {fmt(t)}",
                                f"{t / ms_times[s]:.2g}"])
        tables.append(table)
    return tables, summary


def kemeny_section(peers, sizes, repeat, limit, log) -> Table:
    """Exact Kemeny-Young, 50 judges, n candidates (noisy skills)."""
    cols = ["library", "call"] + [f"n={n}" for n in sizes]
    table = Table("Kemeny-Young (exact), 50 judges", cols)
    impls = []
    rk = peers["ranky"][0]
    if peers["pref_voting"][0] is not None:
        from pref_voting import voting_methods as vm
        from pref_voting.profiles import Profile

        def pv(M):
            out = np.zeros(M.shape[0])
            out[vm.kemeny_young(Profile(strict_votes(M)))] = 1.0
            return out
        impls.append(("pref_voting", "kemeny_young(Profile(votes)) [winners]", pv))
    if peers["open_spiel"][0] is not None:
        from open_spiel.python.voting import base, kemeny_young

        def osp(M):
            profile = base.PreferenceProfile(votes=strict_votes(M), alternatives=list(range(M.shape[0])))
            out = kemeny_young.KemenyYoungVoting().run_election(profile)
            return by_alternative(out.ranking, -np.arange(M.shape[0], dtype=float), M.shape[0])
        impls.append(("open_spiel", "KemenyYoungVoting [n! orders]", osp))
    if rk is not None:
        impls.append(("ranky", "rk.brute_force(M, axis=0, method='kendall')",
                      lambda M: np.asarray(rk.brute_force(M, axis=0, method="kendall"), dtype=float)))
    data = {}
    for n in sizes:
        rng = np.random.default_rng(n)
        data[n] = rng.normal(size=(n, 1)) + rng.normal(size=(n, 50))
    ms_scores, ms_times, row = {}, {}, ["**metascore**", "`rank(..., 'kemeny_young')`"]
    for n in sizes:
        t, r = measure(lambda: ms.rank(ms.ScoreMatrix.from_array(data[n]), "kemeny_young"), repeat, 10 * limit)
        ms_times[n], ms_scores[n] = t, r.scores
        row.append(fmt(t) + ("" if r.details.get("unique", True) else " (several optima)"))
        log(f"kemeny metascore n={n} {fmt(t)}")
    table.rows.append(row)
    for lib, call, fn in impls:
        row = [lib, f"`{call}`"]
        runs = peer_runs(lambda n: fn(data[n]), sizes, lambda n: f"n={n}", repeat, limit, log,
                         f"kemeny {lib}")
        for n, t, scores in runs:
            if isinstance(t, str):
                row.append(t)
                continue
            agree = agreement(ms_scores[n], np.asarray(scores, float), winners_only="[winners]" in call)
            if agree not in ("=", "~", "≈"):
                objective = _kemeny_agreement(data[n], np.asarray(scores, float))
                best = _kemeny_agreement(data[n], ms_scores[n])
                table.notes.append(f"{lib} at n={n}: {agree}; Kemeny agreement {objective:g} vs "
                                   f"metascore's {best:g} ({'co-optimal' if objective == best else 'not optimal'}).")
            row.append(f"{fmt(t)} (x{t / ms_times[n]:.2g}) {agree if agree in '=~≈' else '≠'}")
            log(f"kemeny {lib} n={n} {fmt(t)} {agree}")
        table.rows.append(row)
    return table


def _kemeny_agreement(M: np.ndarray, scores: np.ndarray) -> float:
    """Number of (judge, pair) agreements of the order given by ``scores`` (higher first)."""
    W, _ = pairwise_wins(M)
    above = scores[:, None] > scores[None, :]
    return float(W[above].sum())


def tournament_section(peers, repeat, limit, log, quick: bool) -> Table:
    """SCO, EPP/Elo and Plackett-Luce on multi-player contests; Kendall tau to true skills."""
    cases = [("20 agents x 2,000 contests of 4", 20, 2000, 4)]
    if not quick:
        cases.append(("50,000 agents x 30,000 contests of 7", 50_000, 30_000, 7))
    cols = ["library", "method"] + [c[0] for c in cases]
    table = Table("Multi-player contests: time (s) and Kendall tau-b to the true skills", cols)
    impls = [
        ("**metascore**", "`sco` (default: lbfgs, max_iter='auto')", lambda n, v: _ms_votes(n, v, "sco")),
        ("**metascore**", "`sco`, max_iter=100 (run to convergence)",
         lambda n, v: _ms_votes(n, v, "sco", max_iter=100)),
        ("**metascore**", "`sco`, solver='sgd' (10k x 32, lr 0.01)",
         lambda n, v: _ms_votes(n, v, "sco", solver="sgd")),
        ("**metascore**", "`epp` (Bradley-Terry, ridge 0.01)", lambda n, v: _ms_votes(n, v, "epp")),
    ]
    if peers["open_spiel"][0] is not None:
        pyspiel = peers["open_spiel"][0]

        def sco_cpp(n, votes, cls=pyspiel.sco.SoftCondorcetOptimizer, **extra):
            names = [str(i) for i in range(n)]
            opt = cls([(1, [names[a] for a in v]) for v in votes.tolist()], -100.0, 100.0, 32, **extra)
            opt.run_solver(10_000, 0.01)
            r = opt.ratings()
            return np.array([r.get(x, 0.0) for x in names])

        impls.append(("open_spiel", "C++ SoftCondorcetOptimizer (10k x 32, lr 0.01, T=1)", sco_cpp))
        impls.append(("open_spiel", "C++ FenchelYoungOptimizer (10k x 32, lr 0.01, sigma 100)",
                      lambda n, v: sco_cpp(n, v, pyspiel.sco.FenchelYoungOptimizer, sigma=100.0)))

        def elo_cpp(n, votes):
            if n > 5000:
                raise MemoryError(f"dense {n} x {n} win matrix")
            win = np.zeros((n, n), dtype=int)
            i, j = np.triu_indices(votes.shape[1], 1)
            np.add.at(win, (votes[:, i].ravel(), votes[:, j].ravel()), 1)
            return np.array(pyspiel.elo.compute_ratings_from_matrices(win.tolist()))

        impls.append(("open_spiel", "C++ Elo (MM on a dense win matrix)", elo_cpp))
    if peers["choix"][0] is not None:
        choix = peers["choix"][0]

        def pl(n, votes):
            if n > 5000:
                raise MemoryError(f"dense {n} x {n} Markov chain")
            return choix.ilsr_rankings(n, votes, alpha=0.01)
        impls.append(("choix", "ilsr_rankings (Plackett-Luce, alpha 0.01)", pl))
    data = [(tournament(n, c, k), n) for _, n, c, k in cases]
    for lib, call, fn in impls:
        row = [lib, call]
        for (skill, votes), n in data:
            played = np.zeros(n, bool)
            played[votes.ravel()] = True
            try:
                t, scores = measure(lambda: fn(n, votes), 1 if n > 1000 else repeat, limit)
            except Timeout:
                row.append(f"over {limit:.0f} s")
                continue
            except MemoryError as exc:
                row.append(f"not attempted ({exc} ≈ {8 * n * n / 2**30:.0f} GiB)")
                continue
            except Exception as exc:  # noqa: BLE001 - a peer's failure is a result
                row.append(f"error: {type(exc).__name__}")
                log(f"tournament {lib} {call[:30]} error {exc!r}"[:300])
                continue
            tau = kendalltau(np.asarray(scores)[played], skill[played]).statistic
            loss = f", SCO loss {_sco_loss(n, votes, np.asarray(scores)):.4g}" if "sco`" in call or "Condorcet" in call else ""
            row.append(f"{fmt(t)}, tau {tau:.3f}{loss}")
            log(f"tournament {lib} {call[:30]} n={n} {fmt(t)} tau {tau:.3f}")
        table.rows.append(row)
    table.notes.append("metascore's time includes `PairwiseCounts.from_votes(votes)` on the "
                       "(contests x k) array of agent indices; open_spiel's includes building its "
                       "list of (weight, names) votes, and the C++ Elo's the dense win matrix.")
    return table


def _sco_loss(n: int, votes: np.ndarray, theta: np.ndarray) -> float:
    """The sigmoid loss (T = 1) of ratings, the objective every SCO row minimizes."""
    from metascore.methods.sco import sigmoid_loss

    return sigmoid_loss(theta, *ms.PairwiseCounts.from_votes(votes, candidates=range(n)).pairs())[0]


def _ms_votes(n: int, votes: np.ndarray, method: str, **params) -> np.ndarray:
    counts = ms.PairwiseCounts.from_votes(votes, candidates=range(n))
    return ms.rank(counts, method, **params).scores


def bootstrap_section(peers, sizes, trials, limit, log) -> Table:
    """Kendall W of the average-rank rankings over bootstrap resamples of the judges."""
    cols = ["library", "call"] + [f"{s.replace('x', ' x ')}, {q} trials" for s in sizes for q in trials]
    table = Table("Bootstrap stability of average rank (Kendall W over resampled judges)", cols)
    rk = peers["ranky"][0]
    data = {s: make_matrix(s) for s in sizes}
    row = ["**metascore**", "`stability(matrix, 'average_rank', q=q, r=1)`"]
    ms_w = {}
    for s in sizes:
        for q in trials:
            t, res = measure(lambda: ms.stability(ms.ScoreMatrix.from_array(data[s]), "average_rank",
                                                  q=q, r=1).mean["average_rank"], 1, 10 * limit)
            ms_w[s, q] = (t, res)
            row.append(f"{fmt(t)}, W {res:.4f}")
            log(f"bootstrap metascore {s} q={q} {fmt(t)} W={res:.4f}")
    table.rows.append(row)
    if rk is not None:
        row, stop = ["ranky", "`rk.kendall_w([rk.borda(rk.bootstrap(M, axis=1)) ...], ties=True)`"], None
        for s in sizes:
            for q in trials:
                if stop:
                    row.append(stop)
                    continue
                def run():
                    ranks = np.column_stack([rk.borda(rk.bootstrap(data[s], axis=1)) for _ in range(q)])
                    return rk.kendall_w(ranks, axis=1, ties=True)
                try:
                    t, w = measure(run, 1, limit)
                except Timeout:
                    row.append(f"over {limit:.0f} s")
                    stop = f"skipped (over {limit:.0f} s at {s}, {q} trials)"
                    continue
                row.append(f"{fmt(t)} (x{t / ms_w[s, q][0]:.2g}), W {w:.4f}")
                log(f"bootstrap ranky {s} q={q} {fmt(t)} W={w:.4f}")
        table.rows.append(row)
    table.notes.append("Different random resamples: W agrees to its sampling error, not exactly. "
                       "metascore ranks every judge once and turns each resample into judge weights.")
    return table


# ---------------------------------------------------------------------- report
def interleaved_section(peers, sizes, log, rounds: int = 15, calls: int = 30) -> Table:
    """mean and median against ranky, the two called in turn: ``rounds`` rounds of ``calls``
    calls of each, so that both meet the same moments of a shared machine; each cell gives
    the medians of the rounds' medians and the ratio (ranky / metascore) with its range."""
    table = Table("mean and median against ranky, interleaved "
                  f"({rounds} rounds of {calls} calls each; ratio above 1: metascore is faster)",
                  ["function", "size", "metascore", "ranky", "ratio (range)"])
    if "ranky" not in peers:
        table.notes.append("ranky is not installed: nothing to interleave.")
        return table
    rk = peers["ranky"][0]
    calls_of = {"mean": (METASCORE["mean"][1], lambda M: np.asarray(rk.score(M))),
                "median": (METASCORE["median"][1], lambda M: np.asarray(rk.majority(M)))}

    def median_time(fn):
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return float(np.median(times))

    for func, (ours, theirs) in calls_of.items():
        for size in sizes:
            M = make_matrix(size)
            runs = [(median_time(lambda: ours(M)), median_time(lambda: theirs(M))) for _ in range(rounds)]
            ratios = [b / a for a, b in runs]
            a, b = (float(np.median([r[k] for r in runs])) for k in (0, 1))
            table.rows.append([func, size, fmt(a), fmt(b),
                               f"{np.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"])
            log(f"interleaved {func} {size}: {fmt(a)} against {fmt(b)}, ratio {np.median(ratios):.2f}")
    return table


def machine_note(peers) -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()
    versions = ", ".join(
        f"{name} {info[1]}" if info[0] is not None else f"{name}: skipped ({info[1]})"
        for name, info in peers.items()
    )
    return (f"Machine: {cpu}, {os.cpu_count()} cores, load average {load[0]:.1f} at the start "
            f"(other jobs running); Python {platform.python_version()}, numpy {np.__version__}, "
            f"scipy {scipy.__version__}, metascore {ms.__version__}; peers: {versions}.")


def write_readme(text: str) -> None:
    old = README.read_text() if README.exists() else f"{BEGIN}\n{END}\n"
    head, rest = old.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    README.write_text(f"{head}{BEGIN}\n{text}{END}{tail}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cap", type=float, default=30.0, help="seconds per peer case")
    parser.add_argument("--sections", nargs="+", default=["matrix", "kemeny", "contests", "bootstrap"])
    parser.add_argument("--functions", nargs="+", help="score-matrix functions to run (default: all)")
    parser.add_argument("--sizes", nargs="+", help=f"score-matrix sizes (default: {' '.join(SIZES)})")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    peers = load_peers()
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    note = machine_note(peers)
    log(note)
    started = time.perf_counter()
    parts, summary = [], []
    sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    if "matrix" in args.sections:
        tables, summary = score_matrix_section(peers, sizes, args.repeat, args.cap, log, args.functions)
        parts += tables
    if "kemeny" in args.sections:
        parts.append(kemeny_section(peers, [6, 8] if args.quick else [6, 8, 10, 12, 15, 20],
                                    args.repeat, args.cap, log))
    if "contests" in args.sections:
        parts.append(tournament_section(peers, args.repeat, args.cap, log, args.quick))
    if "interleaved" in args.sections:
        parts.append(interleaved_section(peers, sizes[-2:], log))
    if "bootstrap" in args.sections:
        parts.append(bootstrap_section(peers, ["50x100"] if args.quick else ["100x1000", "200x10000"],
                                       [100, 1000], args.cap, log))
    text = [note, f"Run: `python benchmarks/compare_peers.py {' '.join(argv or sys.argv[1:])}`"
            f" ({time.perf_counter() - started:.0f} s, load average {os.getloadavg()[0]:.1f} at the end).", ""]
    if summary:
        key = Table("Key ratios at the large sizes (peer or numpy time / metascore time; above 1: "
                    "metascore is faster)", ["function", "size", "metascore", "fastest peer", "ratio"],
                    summary)
        text.append(key.markdown())
    text += [t.markdown() for t in parts]
    out = "\n".join(text)
    print(out)
    if not args.no_write:
        write_readme(out)


if __name__ == "__main__":
    main()
