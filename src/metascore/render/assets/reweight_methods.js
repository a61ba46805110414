/* metascore's ranking methods, as the page recomputes them (issue 51).
 *
 * Each function here computes what the Python function of the same name computes
 * (src/metascore/missing.py, ranking.py, pairwise.py, grouped.py and methods/*.py), on the same
 * numbers, so that the re-weighted table orders the candidates exactly as `metascore rank`
 * does with those weights. A matrix is {n, m, cols, hib, w, judges}: cols[j] holds judge j's
 * raw value of each candidate (NaN: missing), hib[j] its direction, w[j] its weight.
 * No DOM here: reweight.js draws the panel.
 */
"use strict";

const MetascoreMethods = (function () {
  const SCORE_RTOL = 1e-10;   // ranking.py: scores this close (relatively) are equal
  const WEIGHT_RTOL = 1e-12;  // pairwise.py: margins this close to 0 (of the total weight) tie

  class RankError extends Error {}

  const quote = (s) => "'" + String(s) + "'";
  const isNaN_ = (x) => x !== x;
  const sum = (a) => { let s = 0; for (let i = 0; i < a.length; i++) s += a[i]; return s; };

  /** numpy's rint: round half to even. */
  function rint(x) {
    const r = Math.round(x);
    return (r - x === 0.5 && r % 2 !== 0) ? r - 1 : r;
  }

  /** pairwise.snap_margins: margins on a grid of about WEIGHT_RTOL * total (a power of two). */
  function snapStep(total) {
    return Math.pow(2, Math.floor(Math.log2(WEIGHT_RTOL * Math.max(total, 1e-300))));
  }
  const snap = (x, step) => rint(x / step) * step;

  /** Python's str ordering (code points), for ranked pairs' fixed order of equal margins. */
  function compareText(a, b) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; ) {
      const x = a.codePointAt(i), y = b.codePointAt(i);
      if (x !== y) return x < y ? -1 : 1;
      i += x > 0xffff ? 2 : 1;
    }
    return a.length === b.length ? 0 : (a.length < b.length ? -1 : 1);
  }

  // ------------------------------------------------------------------ per judge
  /** Indices of a column best first (higher first, NaN last), stable. */
  function bestFirst(x) {
    const idx = Array.from(x, (_, i) => i);
    idx.sort((a, b) => {
      const xa = x[a], xb = x[b];
      if (isNaN_(xa) || isNaN_(xb)) return isNaN_(xa) - isNaN_(xb) || a - b;
      return xa > xb ? -1 : xa < xb ? 1 : a - b;
    });
    return idx;
  }

  /** positional.position_spans of one column: each candidate's span [lo, hi] of shared
   * positions (NaN where the judge does not score it). */
  function spans(x) {
    const n = x.length, lo = new Float64Array(n).fill(NaN), hi = new Float64Array(n).fill(NaN);
    const idx = bestFirst(x);
    for (let s = 0; s < n; ) {
      if (isNaN_(x[idx[s]])) break;
      let e = s;
      while (e + 1 < n && x[idx[e + 1]] === x[idx[s]]) e++;
      for (let k = s; k <= e; k++) { lo[idx[k]] = s + 1; hi[idx[k]] = e + 1; }
      s = e + 1;
    }
    return [lo, hi];
  }

  /** stats.fractional_ranks ("average"), ranks_along "min" and dense_ranks of one column. */
  function ranks(x, ties) {
    const [lo, hi] = spans(x);
    if (ties === "average") return lo.map((l, i) => (l + hi[i]) / 2);
    if (ties === "min") return lo;
    const out = new Float64Array(x.length).fill(NaN), idx = bestFirst(x);  // dense
    let r = 0;
    for (let s = 0; s < idx.length; s++) {
      const v = x[idx[s]];
      if (isNaN_(v)) break;
      if (s === 0 || v !== x[idx[s - 1]]) r++;
      out[idx[s]] = r;
    }
    return out;
  }

  /** positional.over_present: the weighted mean of per-judge points over the judges that
   * score each candidate (points NaN: not scored). */
  function overPresent(points, w, n) {
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      let s = 0, own = 0;
      for (let j = 0; j < points.length; j++) {
        const p = points[j][i];
        if (!isNaN_(p)) { s += p * w[j]; own += w[j]; }
      }
      out[i] = s / own;
    }
    return out;
  }

  // ------------------------------------------------------------------ pairwise counts
  /** The columns as rows: a candidate's values on every judge side by side, so that the n x n
   * comparisons of two candidates judge by judge read contiguous memory. */
  function byRow(X, n) {
    const m = X.length, R = new Float64Array(n * m);
    for (let j = 0; j < m; j++) for (let i = 0; i < n; i++) R[i * m + j] = X[j][i];
    return R;
  }

  /** PairwiseCounts.from_matrix: N[a*n+b] the weight of judges preferring a to b, C the
   * weight of judges scoring both (null: every judge scores everyone, C = total). Each sum
   * adds the judges in their order, as the Python does per judge. */
  function counts(X, w, n) {
    const m = X.length, R = byRow(X, n), N = new Float64Array(n * n);
    w = Float64Array.from(w);
    const complete = !R.some(isNaN_);
    const C = complete ? null : new Float64Array(n * n);
    for (let a = 0; a < n; a++) {
      const ra = a * m;
      for (let b = a + 1; b < n; b++) {
        const rb = b * m;
        let ab = 0, ba = 0;
        for (let j = 0; j < m; j++) {  // true * w: w, without a branch (twice faster)
          const xa = R[ra + j], xb = R[rb + j];
          ab += (xa > xb) * w[j];
          ba += (xb > xa) * w[j];
        }
        N[a * n + b] = ab;
        N[b * n + a] = ba;
        if (C === null) continue;
        let both = 0;
        for (let j = 0; j < m; j++)  // x === x: not NaN
          both += (R[ra + j] === R[ra + j] && R[rb + j] === R[rb + j]) * w[j];
        C[a * n + b] = C[b * n + a] = both;
      }
      if (C !== null) for (let j = 0; j < m; j++) if (R[ra + j] === R[ra + j]) C[a * n + a] += w[j];
    }
    return { N, C, n, total: sum(w) };
  }

  /** PairwiseCounts.margins: N - N^T, float noise snapped away. */
  function margins(pc) {
    const { N, n } = pc, step = snapStep(pc.total), D = new Float64Array(n * n);
    for (let a = 0; a < n; a++)
      for (let b = 0; b < n; b++) D[a * n + b] = snap(N[a * n + b] - N[b * n + a], step);
    return D;
  }

  // ------------------------------------------------------------------ the methods
  // Each takes (X, w, ctx): X the oriented columns after the missing-data policy (higher is
  // better), w the weights, ctx {n, signs, judges, labels, params}; returns the scores.

  function mean(X, w, { n }) {
    return overPresent(X, w, n);
  }

  /** classical.median: the weighted median (the plain one when weights are equal). */
  function median(X, w, { n }) {
    const m = X.length, out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const row = Array.from({ length: m }, (_, j) => X[j][i]);
      const order = Array.from(row, (_, j) => j).sort((a, b) => {
        const xa = row[a], xb = row[b];
        if (isNaN_(xa) || isNaN_(xb)) return isNaN_(xa) - isNaN_(xb) || a - b;
        return xa < xb ? -1 : xa > xb ? 1 : a - b;
      });
      const xs = order.map((j) => row[j]);
      const cum = [];
      let c = 0;
      for (let k = 0; k < m; k++) { c += isNaN_(xs[k]) ? 0 : w[order[k]]; cum.push(c); }
      const half = cum[m - 1] / 2, tol = 1e-12 * Math.max(1, half);
      let k = cum.findIndex((v) => v >= half - tol);
      if (k < 0) k = 0;
      const upper = xs[Math.min(k + 1, m - 1)];
      const exact = Math.abs(cum[k] - half) <= tol;
      out[i] = exact && !isNaN_(upper) ? (xs[k] + upper) / 2 : xs[k];
    }
    return out;
  }

  /** classical.average_rank: minus the weighted average of the judges' ranks. */
  function average_rank(X, w, { n, params }) {
    const ties = params.ties || "average";
    const r = X.map((x) => ranks(x, ties));
    const avg = overPresent(r, w, n);
    return avg.map((a) => -(isNaN_(a) ? n : a));
  }

  /** classical.success_rate: the mean share of judges on which a candidate beats each other. */
  function success_rate(X, w, { n, params }) {
    const pc = counts(X, w, n), { N, C } = pc, tie = params.ties === "half" ? 0.5 : 0;
    const out = new Float64Array(n);
    for (let a = 0; a < n; a++) {
      let s = 0;
      for (let b = 0; b < n; b++) {
        if (b === a) continue;
        const comp = C ? C[a * n + b] : pc.total, win = N[a * n + b];
        const tied = Math.max(comp - win - N[b * n + a], 0);
        s += comp > 0 ? (win + tie * tied) / comp : tie;
      }
      out[a] = s / (n - 1);
    }
    return out;
  }

  /** classical.relative_difference: the mean signed relative difference (u-v)/(u+v). */
  function relative_difference(X, w, { n, signs, params }) {
    const onRanks = params.on === "ranks", m = X.length;
    const raw = (x, j) => x.map((v) => v * signs[j]);
    const base = byRow(onRanks ? X.map((x) => ranks(x, "average")) : X.map(raw), n);
    const ws = Float64Array.from(w, (wj, j) => wj * (onRanks ? -1 : signs[j]));
    const wsSum = sum(ws), wSum = sum(w), gaps = base.some(isNaN_);  // no gap: every pair weighs the total
    const pair = new Float64Array(n * n);
    for (let a = 0; a < n; a++) {
      for (let b = a + 1; b < n; b++) {
        let dot = 0, weight = 0;
        for (let j = 0; j < m; j++) {
          const u = base[a * m + j], v = base[b * m + j];
          const ratio = u / (u + v);  // 0/0 or a missing cell: 1/2, a term of 0
          dot += (ratio === ratio ? ratio : 0.5) * ws[j];
          if (gaps && u === u && v === v) weight += w[j];
        }
        const s = 2 * dot - wsSum, wt = gaps ? weight : wSum;
        pair[a * n + b] = wt > 0 ? s / wt : 0;
        pair[b * n + a] = wt > 0 ? -s / wt : 0;
      }
    }
    return Float64Array.from({ length: n }, (_, a) => {
      let t = 0;
      for (let b = 0; b < n; b++) t += pair[a * n + b];
      return t / (n - 1);
    });
  }

  /** classical.copeland: the share of opponents beaten head to head (a tie counts 1/2). */
  function copeland(X, w, { n }) {
    const D = margins(counts(X, w, n)), out = new Float64Array(n);
    for (let a = 0; a < n; a++) {
      let won = 0, tied = 0;
      for (let b = 0; b < n; b++) {
        if (b === a) continue;
        const d = D[a * n + b];
        if (d > 0) won++; else if (d === 0) tied++;
      }
      out[a] = (won + 0.5 * tied) / (n - 1);
    }
    return out;
  }

  /** benchmark_rules.plurality: the weighted share of judges on which one is first alone. */
  function plurality(X, w, { n }) {
    const points = X.map((x) => {
      const [lo, hi] = spans(x);
      return lo.map((l, i) => (isNaN_(l) ? NaN : +(hi[i] === 1)));
    });
    return overPresent(points, w, n);
  }

  /** benchmark_rules.dowdall: the weighted mean of 1 / position. */
  function dowdall(X, w, { n, params }) {
    const H = [0];  // positional._harmonic: H[k] = 1 + 1/2 + ... + 1/k
    for (let k = 1; k <= n; k++) H.push(H[k - 1] + 1 / k);
    const points = X.map((x) => {
      const [lo, hi] = spans(x);
      return lo.map((l, i) => isNaN_(l) ? NaN : params.ties === "min" ? 1 / l
        : (H[hi[i]] - H[l - 1]) / (hi[i] - l + 1));
    });
    return overPresent(points, w, n);
  }

  /** benchmark_rules.geometric_mean: of the raw scores, 1/score on lower-is-better judges. */
  function geometric_mean(X, w, { n, signs }) {
    const logs = X.map((x, j) => x.map((v) => Math.log(v * signs[j]) * signs[j]));
    const finite = logs.map((l) => l.map((v) => v === -Infinity ? 0 : v));
    const out = overPresent(finite, w, n).map(Math.exp);
    for (let i = 0; i < n; i++) if (logs.some((l) => l[i] === -Infinity)) out[i] = 0;
    return out;
  }

  /** numpy's nanpercentile (linear) of a column. */
  function percentile(x, p) {
    const v = Array.from(x).filter((t) => !isNaN_(t)).sort((a, b) => a - b), k = v.length;
    const at = (k - 1) * (p / 100);
    if (at >= k - 1) return v[k - 1];
    const lo = Math.floor(at), t = at - lo, a = v[lo], b = v[lo + 1], d = b - a;
    return t >= 0.5 ? b - d * (1 - t) : a + d * t;
  }

  /** benchmark_rules.optimality_gap: minus the mean shortfall below each judge's target. */
  function optimality_gap(X, w, { n, signs, judges, params }) {
    const gamma = params.gamma === undefined ? "q90" : params.gamma;
    const g = X.map((x, j) => {
      if (gamma === "best") return x.reduce((a, v) => (v > a ? v : a), -Infinity);
      if (typeof gamma === "string") return percentile(x, Number(gamma.slice(1)));
      if (typeof gamma === "object") return signs[j] * Number(gamma[judges[j]]);
      return signs[j] * Number(gamma);
    });
    const points = X.map((x, j) => x.map((v) => g[j] - Math.min(v, g[j])));
    return overPresent(points, w, n).map((gap) => -gap);
  }

  /** benchmark_rules.minimax: minus the weakest worst head-to-head defeat. */
  function minimax(X, w, { n }) {
    const pc = counts(X, w, n), D = margins(pc), step = snapStep(pc.total);
    return Float64Array.from({ length: n }, (_, a) => {
      let worst = 0;
      for (let b = 0; b < n; b++)
        if (D[a * n + b] < 0) worst = Math.max(worst, snap(pc.N[b * n + a], step));
      return -(worst / pc.total);
    });
  }

  /** benchmark_rules.baldwin: the lowest Borda count (sum of margins) dropped, again and again.
   * The margins are on a grid of a power of two, so their sums are exact in any order and
   * each count can be kept up to date instead of summed again. */
  function baldwin(X, w, { n }) {
    const pc = counts(X, w, n), D = margins(pc), tol = n * WEIGHT_RTOL * pc.total;
    const left = new Array(n).fill(true), before = new Float64Array(n), total = new Float64Array(n);
    for (let a = 0; a < n; a++) for (let b = 0; b < n; b++) total[a] += D[a * n + b];
    let nLeft = n;
    while (nLeft > 1) {
      let low = Infinity;
      for (let a = 0; a < n; a++) if (left[a] && total[a] < low) low = total[a];
      const drop = [];
      for (let a = 0; a < n; a++) if (left[a] && total[a] <= low + tol) drop.push(a);
      if (drop.length === nLeft) break;  // all equal: they share the first place
      for (let a = 0; a < n; a++) if (left[a]) before[a] = n - nLeft;
      for (const b of drop) {
        left[b] = false;
        for (let a = 0; a < n; a++) total[a] -= D[a * n + b];
      }
      nLeft -= drop.length;
    }
    for (let a = 0; a < n; a++) if (left[a]) before[a] = n - nLeft;
    return before.map((b) => b / (n - 1));
  }

  /** The positive margins by strength, strongest first: [strength, [a * n + b, ...]], the
   * pairs of one strength in the order of `order` (candidates' indices) for a, then b. */
  function byStrength(D, n, order) {
    const buckets = new Map();
    for (const a of order) for (const b of order) {
      const d = D[a * n + b];
      if (d > 0) (buckets.get(d) || buckets.set(d, []).get(d)).push(a * n + b);
    }
    return [...buckets.entries()].sort((x, y) => y[0] - x[0]);
  }

  /** Who reaches whom, as bit sets (each candidate reaches itself; `from` holds who reaches
   * each one), growing as links are added. */
  function reachability(n) {
    const words = (n + 31) >>> 5, to = new Uint32Array(n * words), from = new Uint32Array(n * words);
    const set = (bits, x, y) => { bits[x * words + (y >>> 5)] |= 1 << (y & 31); };
    for (let x = 0; x < n; x++) { set(to, x, x); set(from, x, x); }
    const has = (x, y) => (to[x * words + (y >>> 5)] >>> (y & 31)) & 1;
    /** Link a -> b: whoever reaches a now reaches what b reaches; `fresh(x, y)` for each
     * pair (x, y) that becomes reachable. */
    function link(a, b, fresh) {
      let news = false;
      for (let k = 0; k < words && !news; k++) news = (to[b * words + k] & ~to[a * words + k]) !== 0;
      if (!news) return;
      const reaching = from.slice(a * words, (a + 1) * words);  // who reaches a (may grow meanwhile)
      for (let i = 0; i < words; i++)
        for (let bitsX = reaching[i]; bitsX; bitsX &= bitsX - 1) {
          const x = i * 32 + 31 - Math.clz32(bitsX & -bitsX);
          for (let k = 0; k < words; k++) {
            let add = to[b * words + k] & ~to[x * words + k];
            to[x * words + k] |= add;
            for (; add; add &= add - 1) {
              const y = k * 32 + 31 - Math.clz32(add & -add);
              set(from, y, x);
              fresh(x, y);
            }
          }
        }
    }
    return { has, link };
  }

  /** condorcet.schulze: the share of candidates beaten by the strongest beat paths. The widest
   * path from a to b is the strength of the link that first lets a reach b when links are
   * added strongest first (what Floyd-Warshall's max-min finds, in less work). */
  function schulze(X, w, { n }) {
    const D = margins(counts(X, w, n)), p = new Float64Array(n * n), reach = reachability(n);
    const all = Array.from({ length: n }, (_, i) => i);
    for (const [strength, pairs] of byStrength(D, n, all))
      for (const e of pairs) reach.link(Math.floor(e / n), e % n, (x, y) => { p[x * n + y] = strength; });
    return Float64Array.from({ length: n }, (_, a) => {
      let beats = 0;
      for (let b = 0; b < n; b++) if (b !== a && p[a * n + b] > p[b * n + a]) beats++;
      return beats / (n - 1);
    });
  }

  /** condorcet.ranked_pairs: majorities locked by decreasing margin (equal margins by the
   * winner's label, then the loser's) unless they close a cycle; the share of candidates each
   * one reaches. */
  function ranked_pairs(X, w, { n, labels }) {
    const D = margins(counts(X, w, n)), reach = reachability(n);
    const byLabel = Array.from(labels, (_, i) => i).sort((a, b) => compareText(labels[a], labels[b]) || a - b);
    for (const [, pairs] of byStrength(D, n, byLabel))
      for (const e of pairs) {
        const a = Math.floor(e / n), b = e % n;
        if (!reach.has(b, a)) reach.link(a, b, () => {});  // else it would close a cycle
      }
    return Float64Array.from({ length: n }, (_, a) => {
      let c = -1;  // itself
      for (let b = 0; b < n; b++) c += reach.has(a, b);
      return c / (n - 1);
    });
  }

  /** benchmark_rules.threshold: fewest last places, then fewest second-to-last, ... */
  function threshold(X, w, { n, params }) {
    const m = X.length, places = Array.from({ length: n }, () => new Float64Array(n + 1));
    const sp = X.map(spans), scored = X.map((x) => x.filter((v) => !isNaN_(v)).length);
    const cell = (i, j) => {
      const [lo, hi] = sp[j];
      const low = scored[j] - hi[i], top = params.ties === "max" ? low : scored[j] - lo[i];
      return [low, top, w[j] / (top - low + 1)];
    };
    for (const sign of [1, -1])  // numpy's bincount order: every +share, then every -share
      for (let i = 0; i < n; i++)
        for (let j = 0; j < m; j++) {
          if (isNaN_(sp[j][0][i])) continue;
          const [low, top, share] = cell(i, j);
          places[i][sign > 0 ? low : top + 1] += sign * share;
        }
    const rows = places.map((p, i) => {
      let own = 0, c = 0;
      for (let j = 0; j < m; j++) if (!isNaN_(sp[j][0][i])) own += w[j];
      const out = new Float64Array(n);
      for (let k = 0; k < n; k++) { c += p[k]; out[k] = rint((c / own) * 1e12) / 1e12; }
      return out;
    });
    const cmp = (a, b) => {
      for (let k = 0; k < n; k++) if (rows[a][k] !== rows[b][k]) return rows[a][k] - rows[b][k];
      return 0;
    };
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => cmp(a, b) || a - b);
    const score = new Float64Array(n);
    for (let s = 0; s < n; ) {
      let e = s;
      while (e + 1 < n && cmp(order[s], order[e + 1]) === 0) e++;
      for (let k = s; k <= e; k++) score[order[k]] = (n - 1 - e) / (n - 1);
      s = e + 1;
    }
    return score;
  }

  const METHODS = { mean, median, average_rank, success_rate, relative_difference, copeland, plurality,
    dowdall, geometric_mean, optimality_gap, minimax, baldwin, schulze, ranked_pairs, threshold };

  // ------------------------------------------------------------------ checks (methods' own)
  function check(method, raw, M, rows, cols, params) {
    const each = (bad, why) => {
      for (let i = 0; i < rows.length; i++) for (const j of cols) {
        const v = raw(i, j);
        if (bad(v, j)) throw new RankError(why(M.cand[rows[i]], v, M.judges[j]));
      }
    };
    if (method === "relative_difference" && params.on !== "ranks")
      each((v) => v < 0, (c, v, j) => `relative difference needs non-negative scores, but candidate ${quote(c)} ` +
        `has ${v} on judge ${quote(j)}.`);
    if (method === "geometric_mean")
      each((v, j) => v < 0 || (v === 0 && !M.hib[j]), (c, v, j) => `geometric_mean needs positive scores, but ` +
        `candidate ${quote(c)} has ${v} on judge ${quote(j)}.`);
    if (method === "optimality_gap" && params.gamma !== null && typeof params.gamma === "object")
      for (const j of cols) if (!(M.judges[j] in params.gamma))
        throw new RankError(`optimality_gap: \`gamma\` gives no target for judge ${quote(M.judges[j])}.`);
  }

  // ------------------------------------------------------------------ missing.prepare
  /** The judges of weight 0 set aside, then the missing-data policy: the rows and columns
   * kept and the candidates dropped (with why). */
  function prepare(M, missing) {
    const cols = [];
    for (let j = 0; j < M.m; j++) if (M.w[j] > 0) cols.push(j);
    if (!cols.length)
      throw new RankError(`every judge has weight 0 (${M.m} judges), so nothing would be counted; ` +
        "give at least one judge a positive weight.");
    let rows = Array.from({ length: M.n }, (_, i) => i);
    const miss = (i, j) => isNaN_(M.cols[j][i]);
    const excluded = [];
    if (!rows.some((i) => cols.some((j) => miss(i, j)))) return { rows, cols, excluded };
    const empty = cols.find((j) => rows.every((i) => miss(i, j)));
    if (empty !== undefined && missing !== "drop_judges")
      throw new RankError(`judge ${quote(M.judges[empty])} has no score for any candidate.`);
    if (missing === "error") {
      const i = rows.find((r) => cols.some((j) => miss(r, j)));
      const j = cols.find((c) => miss(i, c));
      throw new RankError(`candidate ${quote(M.cand[i])} has no score for judge ${quote(M.judges[j])} (missing='error').`);
    }
    if (missing === "drop_candidates") {
      for (const i of rows) {
        const j = cols.find((c) => miss(i, c));
        if (j !== undefined) excluded.push([i, `missing score for judge ${quote(M.judges[j])}`]);
      }
      rows = rows.filter((i) => cols.every((j) => !miss(i, j)));
    } else if (missing === "drop_judges") {
      const kept = cols.filter((j) => rows.every((i) => !miss(i, j)));
      if (!kept.length)
        throw new RankError("every judge has a missing score, so missing='drop_judges' leaves nothing to rank.");
      return { rows, cols: kept, excluded };
    }
    return { rows, cols, excluded };
  }

  /** Prepared.filled: the oriented columns, missing cells filled for `worst` (the judge's worst
   * value, or -inf for order-based methods) and, under `pairwise`, for unscored candidates. */
  function filled(M, rows, cols, missing, valuesBased) {
    const X = cols.map((j) => Float64Array.from(rows, (i) => (M.hib[j] ? 1 : -1) * M.cols[j][i]));
    if (missing !== "worst" && missing !== "pairwise") return X;
    const unscored = rows.map((_, k) => X.every((x) => isNaN_(x[k])));
    return X.map((x) => {
      let fill = -Infinity;
      if (valuesBased) { fill = Infinity; for (const v of x) if (v < fill) fill = v; }
      return x.map((v, k) => isNaN_(v) && (missing === "worst" || unscored[k]) ? fill : v);
    });
  }

  // ------------------------------------------------------------------ registry.rank
  /** Rank matrix M with `method`: {scores, rows, excluded}; scores of the candidates kept
   * (rows, indices of M's candidates). Throws RankError with the reason it cannot. */
  function rankMatrix(M, method, params, missing, fill) {
    const { rows, cols, excluded } = prepare(M, missing);
    check(method, (i, j) => M.cols[j][rows[i]], M, rows, cols, params);
    if (rows.length < 2)
      throw new RankError(`ranking needs at least 2 candidates; got ${rows.length}.`);
    const X = filled(M, rows, cols, missing, fill === "values");
    const ctx = { n: rows.length, signs: cols.map((j) => (M.hib[j] ? 1 : -1)),
      judges: cols.map((j) => M.judges[j]), labels: rows.map((i) => M.cand[i]), params };
    const scores = METHODS[method](X, cols.map((j) => M.w[j]), ctx);
    const bad = Array.from(scores).findIndex((s) => !Number.isFinite(s));
    if (bad >= 0) throw new RankError(`method ${method} produced a non-finite score for ${quote(ctx.labels[bad])}.`);
    return { scores, rows, excluded };
  }

  /** grouped.rank_in_groups: the rule inside each group, then the method across the groups. */
  function rankGroups(M, groups, set) {
    const { rows, cols, excluded } = prepare(M, set.missing);
    const present = [...new Set(cols.map((j) => groups.of[j]))];
    if (!present.length) throw new RankError("no group has a counted judge left to rank.");
    const sub = (js) => ({
      n: rows.length, m: js.length, cols: js.map((j) => Float64Array.from(rows, (i) => M.cols[j][i])),
      hib: js.map((j) => M.hib[j]), w: js.map((j) => M.w[j]), judges: js.map((j) => M.judges[j]),
      cand: rows.map((i) => M.cand[i]),
    });
    const weight = (g) => (g in groups.weights ? groups.weights[g] : 1);
    const counted = present.filter((g) => weight(g) > 0);
    if (!counted.length)
      throw new RankError("every group with a counted judge has weight 0, so nothing would be counted; " +
        "give one of them a positive weight.");
    const column = (g) => {
      const S = sub(cols.filter((j) => groups.of[j] === g));
      const r = rankMatrix(S, set.within, set.withinParams, set.missing, set.fills[set.within]);
      return Float64Array.from(r.scores, (s, k) => (S.cols.every((x) => isNaN_(x[k])) ? NaN : s));
    };
    const across = { n: rows.length, m: counted.length, cols: counted.map(column), hib: counted.map(() => true),
      w: counted.map(weight), judges: counted, cand: rows.map((i) => M.cand[i]) };
    const r = rankMatrix(across, set.method, set.params, set.missing, set.fills[set.method]);
    return { scores: r.scores, rows: r.rows.map((k) => rows[k]),
      excluded: excluded.concat(r.excluded.map(([k, why]) => [rows[k], why])) };
  }

  /** ranking.tie_groups and the tie-break: the kept candidates best first (equal scores in
   * the order of M's candidates, which the page lists in the tie-break's order) and each one's
   * position (equal scores share it). */
  function order(scores) {
    const n = scores.length;
    const idx = Array.from({ length: n }, (_, i) => i).sort((a, b) => scores[b] - scores[a] || a - b);
    const group = new Int32Array(n);
    for (let k = 1; k < n; k++) {
      const hi = scores[idx[k - 1]], lo = scores[idx[k]];
      const gap = hi - lo > SCORE_RTOL * Math.max(1, Math.max(hi, -lo));
      group[idx[k]] = group[idx[k - 1]] + (gap ? 1 : 0);
    }
    idx.sort((a, b) => group[a] - group[b] || a - b);
    const position = new Int32Array(n);
    idx.forEach((c, k) => {
      position[c] = k > 0 && group[c] === group[idx[k - 1]] ? position[idx[k - 1]] : k + 1;
    });
    return { best: idx, position };
  }

  /** The page's ranking of M with the settings: scores, the kept candidates best first, their
   * positions and who the missing-data policy dropped. */
  function rank(M, set, groups) {
    const r = groups ? rankGroups(M, groups, set)
      : rankMatrix(M, set.method, set.params, set.missing, set.fills[set.method]);
    const o = order(r.scores);
    return { scores: r.scores, rows: r.rows, best: o.best, position: o.position, excluded: r.excluded };
  }

  return { rank, rankMatrix, order, RankError, METHODS: Object.keys(METHODS) };
})();
