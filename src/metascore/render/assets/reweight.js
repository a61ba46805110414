/* The re-weighting panel of metascore's ranking page (issue 51).
 *
 * Readers change the weights of the final phase's judges (and of their groups) and the page
 * ranks the same candidates again with the published method (MetascoreMethods, the script
 * before this one), beside the official ranking, which stays as published. The numbers come
 * from the page's ranking record (the JSON data block of id "metascore-ranking");
 * the panel's settings from its data-settings attribute. The URL fragment
 * #weights=<judge>:<weight>,...&groups=<group>:<weight>,... sets weights on load (judges not
 * named keep theirs) and follows every change, so that a view is a link. Text from the data
 * only ever goes into textContent.
 */
"use strict";

function metascoreReweight() {
  const panel = document.getElementById("reweight");
  if (!panel || typeof MetascoreMethods === "undefined") return;
  const settings = JSON.parse(panel.getAttribute("data-settings"));
  const record = JSON.parse(document.getElementById(settings.record).textContent);
  const board = record.boards.final;
  const at = (name) => board.row_fields.indexOf(name);
  const CAND = at("candidate"), WHO = at("participant"), POS = at("position"), VALUES = at("values");
  const pool = board.pool.map((k) => board.rows[k]);  // the tie-break's order
  const official = { w: board.weights.slice(), g: Object.assign({}, board.groups ? board.groups.weights : {}) };
  const state = { w: official.w.slice(), g: Object.assign({}, official.g) };
  const matrix = {
    n: pool.length, m: board.judges.length, judges: board.judges, hib: board.higher_is_better,
    cand: pool.map((r) => r[CAND]), w: state.w,
    cols: board.judges.map((_, j) => Float64Array.from(pool, (r) => (r[VALUES][j] === null ? NaN : r[VALUES][j]))),
  };
  const judgeAt = new Map(board.judges.map((j, k) => [j, k]));
  const q = (sel) => panel.querySelector(sel);
  const form = q("form"), status = q(".rw-status"), tbody = q("#reweighted tbody"), link = q(".rw-url");
  const judgeInputs = Array.from(panel.querySelectorAll("input[data-judge]"));
  const groupInputs = Array.from(panel.querySelectorAll("input[data-group]"));

  // ------------------------------------------------------------------ the fragment
  const encode = (key) => encodeURIComponent(key).replace(/%2F/g, "/");

  /** {weights: [[key, text]], groups: [[key, text]]} of a fragment. */
  function parseFragment(hash) {
    const out = { weights: [], groups: [] };
    for (const part of hash.replace(/^#/, "").split("&")) {
      const eq = part.indexOf("=");
      const name = part.slice(0, eq), list = out[name];
      if (eq < 0 || !list) continue;
      for (const item of part.slice(eq + 1).split(",")) {
        const colon = item.lastIndexOf(":");
        if (colon <= 0) continue;
        let key = item.slice(0, colon);
        try { key = decodeURIComponent(key); } catch (e) { /* keep it as written */ }
        list.push([key, item.slice(colon + 1)]);
      }
    }
    return out;
  }

  function fragment() {
    const changed = (list) => list.filter(([, w, was]) => w !== was)
      .map(([k, w]) => `${encode(k)}:${w}`).join(",");
    const weights = changed(board.judges.map((j, k) => [j, state.w[k], official.w[k]]));
    const groups = changed(Object.keys(state.g).map((g) => [g, state.g[g], official.g[g]]));
    return [weights && `weights=${weights}`, groups && `groups=${groups}`].filter(Boolean).join("&");
  }

  /** The weights a fragment names, into the state; what it names wrongly, in words. */
  function readFragment(hash) {
    const found = parseFragment(hash), problems = [];
    const take = (pairs, where, set, what) => {
      for (const [key, text] of pairs) {
        const w = weight(text);
        if (!where(key)) problems.push(`the link names ${what} '${key}', which this ranking does not have`);
        else if (w === null)
          problems.push(`the link gives ${what} '${key}' the weight '${text}', not a number >= 0`);
        else set(key, w);
      }
    };
    state.w.splice(0, state.w.length, ...official.w);
    state.g = Object.assign({}, official.g);
    take(found.weights, (k) => judgeAt.has(k), (k, w) => { state.w[judgeAt.get(k)] = w; }, "judge");
    take(found.groups, (k) => k in official.g, (k, w) => { state.g[k] = w; }, "group");
    return problems;
  }

  /** The address of this view: the page's own, with the fragment of the weights. */
  function showLink() {
    const frag = fragment();
    link.value = location.href.replace(/#.*$/, "") + (frag ? "#" + frag : "");
    return frag;
  }

  function writeFragment() {
    const frag = showLink();
    try {
      history.replaceState(null, "", location.pathname + location.search + (frag ? "#" + frag : ""));
    } catch (e) { /* a document without an address of its own: the link field still shows it */ }
  }

  // ------------------------------------------------------------------ the inputs
  function weight(text) {
    const w = String(text).trim() === "" ? NaN : Number(text);
    return Number.isFinite(w) && w >= 0 ? w : null;
  }

  function showState() {
    for (const input of judgeInputs) input.value = String(state.w[judgeAt.get(input.dataset.judge)]);
    for (const input of groupInputs) input.value = String(state.g[input.dataset.group]);
  }

  /** The inputs into the state; false (and the bad inputs marked) when one is not a weight. */
  function readInputs() {
    let ok = true;
    for (const input of judgeInputs.concat(groupInputs)) {
      const w = weight(input.value);
      input.setAttribute("aria-invalid", String(w === null));
      if (w === null) { ok = false; continue; }
      if (input.dataset.judge !== undefined) state.w[judgeAt.get(input.dataset.judge)] = w;
      else state.g[input.dataset.group] = w;
    }
    return ok;
  }

  // ------------------------------------------------------------------ the table
  const shown = (score) => {
    const v = settings.display.sign * score + 0;
    return settings.display.sign < 0 ? String(Number(v.toFixed(2))) : String(Number(v.toPrecision(4)));
  };

  function cell(tr, text, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
    return td;
  }

  function move(was, now) {
    if (was === null) return ["new", "not ranked officially", "rw-up"];
    if (was === now) return ["=", "same position", ""];
    return was > now ? [`\u25B2 ${was - now}`, `up ${was - now}`, "rw-up"]
      : [`\u25BC ${now - was}`, `down ${now - was}`, "rw-down"];
  }

  function draw(result) {
    const rows = document.createDocumentFragment();
    let moved = 0;
    result.best.slice(0, settings.rows).forEach((k) => {
      const r = pool[result.rows[k]], now = result.position[k], was = r[POS];
      const tr = document.createElement("tr");
      tr.setAttribute("data-candidate", r[CAND]);
      cell(tr, String(now), "num");
      cell(tr, r[CAND], "name");
      cell(tr, r[WHO] || "");
      cell(tr, shown(result.scores[k]), "num");
      cell(tr, was === null ? "\u2013" : String(was), "num");
      const [text, words, cls] = move(was, now);
      cell(tr, text, cls).setAttribute("aria-label", words);
      if (was !== now) moved++;
      rows.appendChild(tr);
    });
    tbody.replaceChildren(rows);
    const dropped = q(".rw-excluded");
    dropped.textContent = result.excluded.length ? "Not ranked with these weights (the missing-data policy): " +
      result.excluded.map(([i, why]) => `${pool[i][CAND]} (${why})`).join("; ") + "." : "";
    if (result.best.length > settings.rows)
      dropped.textContent += ` The first ${settings.rows} of ${result.best.length} candidates are shown.`;
    return moved;
  }

  function officialOrder() {
    return board.rows.filter((r) => r[POS] !== null).map((r) => r[CAND]);
  }

  function say(result, moved) {
    const first = pool[result.rows[result.best[0]]], top = officialOrder()[0];
    const same = state.w.every((w, k) => w === official.w[k])
      && Object.keys(state.g).every((g) => state.g[g] === official.g[g]);
    const order = result.best.map((k) => pool[result.rows[k]][CAND]);
    if (same) {
      status.textContent = order.join("\n") === officialOrder().join("\n")
        ? "With the official weights the page finds the official ranking. Change a weight to see the ranking move."
        : "Warning: with the official weights the page does not find the official ranking, so its " +
          "re-weighted rankings cannot be trusted.";
      return;
    }
    const who = (r) => (r[WHO] && r[WHO] !== r[CAND] ? `${r[WHO]} (${r[CAND]})` : r[CAND]);
    status.textContent = `With these weights ${who(first)} is first` +
      (first[CAND] === top ? ", as officially" : `; officially ${top} is`) +
      `; ${moved} of ${result.best.length} candidates change position.`;
  }

  // ------------------------------------------------------------------ recompute
  function recompute(problems) {
    let result;
    try {
      result = MetascoreMethods.rank(matrix, settings, board.groups && { of: board.groups.of, weights: state.g });
    } catch (e) {
      if (!(e instanceof MetascoreMethods.RankError)) throw e;
      tbody.replaceChildren();
      q(".rw-excluded").textContent = "";
      status.textContent = `The page cannot rank with these weights: ${e.message}`;
      return;
    }
    say(result, draw(result));
    if (problems.length) status.textContent += ` (Ignored: ${problems.join("; ")}.)`;
  }

  function apply(event) {
    if (event) event.preventDefault();
    if (!readInputs()) {
      status.textContent = "A weight must be a number, 0 or more (0: the judge is not counted).";
      return;
    }
    recompute([]);
    writeFragment();
  }

  function load() {
    const problems = readFragment(location.hash);
    showState();
    recompute(problems);
    showLink();
  }

  form.addEventListener("submit", apply);
  form.addEventListener("change", (event) => { if (event.target !== link) apply(event); });
  link.addEventListener("focus", () => link.select());
  q("button[data-reset]").addEventListener("click", () => {
    state.w.splice(0, state.w.length, ...official.w);
    state.g = Object.assign({}, official.g);
    showState();
    apply();
  });
  window.addEventListener("hashchange", load);
  panel.classList.add("rw-live");  // shows the form, hides "this panel needs scripts"
  load();
}

// the record comes after the panel in the page
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", metascoreReweight);
else metascoreReweight();
