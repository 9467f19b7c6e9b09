"use strict";
// The review page of lsh_frame: entities and pairs, paged, filtered, answered.
// Plain JavaScript with no library and nothing fetched: the data is the JSON
// block above, columnar (one array per column), read once.
(function () {
  const DATA = JSON.parse(document.getElementById("lsh-data").textContent);
  const P = DATA.pairs;
  const N = P.left.length;
  for (let i = 1; i < N; i++) P.left[i] += P.left[i - 1]; // sent as steps
  const PAGE = 25;
  const DOUBT = 0.1; // a pair is doubtful when 1 - |2p - 1| >= DOUBT (p in [0.05, 0.95])
  const STORE = "lsh_frame.review." + PAGE_KEY;
  const $ = (id) => document.getElementById(id);
  const link = DATA.link;
  const rightTable = link ? 1 : 0;

  // --- derived arrays, each one pass over the pairs ---------------------------
  const shift = link ? DATA.tables[0].labels.length : 0;
  const records = DATA.entities.length;
  const entityOf = Int32Array.from(DATA.entities);
  let entities = 0;
  for (let r = 0; r < records; r++) entities = Math.max(entities, entityOf[r] + 1);
  const size = new Int32Array(entities);
  for (let r = 0; r < records; r++) size[entityOf[r]]++;
  // Members of each entity and the pairs touching it (compressed rows).
  const memberStart = new Int32Array(entities + 1);
  for (let e = 0; e < entities; e++) memberStart[e + 1] = memberStart[e] + size[e];
  const members = new Int32Array(records);
  const fill = memberStart.slice(0, entities);
  for (let r = 0; r < records; r++) members[fill[entityOf[r]]++] = r;

  const probability = new Float64Array(N);
  const doubt = new Float64Array(N);
  const cut = DATA.cut.at;
  const byProbability = P.probability !== null && DATA.cut.column === "match_probability";
  for (let i = 0; i < N; i++) {
    const p = byProbability ? P.probability[i] / 10000 : P.score[i] / 1000;
    probability[i] = p;
    let d;
    if (byProbability) d = 1 - Math.abs(2 * p - 1);
    else if (cut === null) d = 0;
    else d = 1 - Math.min(1, Math.abs(p - cut) / 0.5);
    // A decision against the pair's own side of the cut is doubtful too.
    if (cut !== null && (p >= cut ? 1 : 0) !== P.match[i]) d = Math.max(d, DOUBT);
    doubt[i] = d;
  }
  const pairCount = new Int32Array(entities + 1);
  const nodeLeft = (i) => P.left[i];
  const nodeRight = (i) => P.right[i] + shift;
  for (let i = 0; i < N; i++) {
    const a = entityOf[nodeLeft(i)], b = entityOf[nodeRight(i)];
    pairCount[a + 1]++;
    if (b !== a) pairCount[b + 1]++;
  }
  for (let e = 0; e < entities; e++) pairCount[e + 1] += pairCount[e];
  const pairsOf = new Int32Array(pairCount[entities]);
  const at = pairCount.slice(0, entities);
  const entityDoubt = new Float64Array(entities);
  const entityKeys = new Array(entities);
  for (let i = 0; i < N; i++) {
    const a = entityOf[nodeLeft(i)], b = entityOf[nodeRight(i)];
    pairsOf[at[a]++] = i;
    entityDoubt[a] = Math.max(entityDoubt[a], doubt[i]);
    if (b !== a) {
      pairsOf[at[b]++] = i;
      entityDoubt[b] = Math.max(entityDoubt[b], doubt[i]);
    }
  }
  // Which keys found each pair: a category's name is its keys joined by "|".
  const keyNames = [];
  const keysOfCategory = P.keys.map((name) =>
    name.split("|").filter((k) => k).map((k) => {
      let at = keyNames.indexOf(k);
      if (at < 0) { keyNames.push(k); at = keyNames.length - 1; }
      return at;
    }));

  // The special readings of pairs (crossed fields, nicknames ...), by pair.
  const readingsOf = new Map();
  for (const reading of DATA.readings || [])
    for (const i of reading.pairs) {
      if (!readingsOf.has(i)) readingsOf.set(i, []);
      readingsOf.get(i).push(reading.text);
    }

  // --- answers, kept in the browser's storage ---------------------------------
  // Answers given before (labels=) come first; those made here since win.
  const given = {};
  if (DATA.answers) DATA.answers.pairs.forEach((pair, k) => { given[pair] = DATA.answers.match[k]; });
  let answers = {};
  try { answers = JSON.parse(localStorage.getItem(STORE) || "null"); } catch (e) { answers = null; }
  answers = answers === null ? given : answers;
  function save() {
    try { localStorage.setItem(STORE, JSON.stringify(answers)); } catch (e) { /* storage off */ }
    const count = Object.keys(answers).length + (DATA.answers ? DATA.answers.others.left.length : 0);
    $("answered").textContent = count + (count === 1 ? " answer" : " answers");
  }
  function answer(pair, value) { // value: 1, 0, null (unsure) or undefined (clear)
    if (value === undefined) delete answers[pair]; else answers[pair] = value;
  }
  function answerName(value) {
    return value === 1 ? "yes" : value === 0 ? "no" : value === null ? "unsure" : "";
  }

  // --- text helpers -------------------------------------------------------------
  const esc = (text) => String(text).replace(/[&<>"']/g, (c) =>
    ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  function value(table, record, column) { return DATA.tables[table].columns[column][record]; }
  function label(table, record) { return DATA.tables[table].labels[record]; }
  function node(n) { // a node (record of the left table, then the right one's)
    return n >= shift && link ? [1, n - shift] : [0, n];
  }
  // Characters of a not in the longest common subsequence of a and b.
  function differing(a, b) {
    const marks = new Uint8Array(a.length).fill(1);
    if (a.length * b.length > 250000) { if (a === b) marks.fill(0); return marks; }
    const w = b.length + 1;
    const table = new Uint16Array((a.length + 1) * w);
    for (let i = a.length - 1; i >= 0; i--)
      for (let j = b.length - 1; j >= 0; j--)
        table[i * w + j] = a[i] === b[j] ? table[(i + 1) * w + j + 1] + 1
          : Math.max(table[(i + 1) * w + j], table[i * w + j + 1]);
    let i = 0, j = 0;
    while (i < a.length && j < b.length) {
      if (a[i] === b[j]) { marks[i] = 0; i++; j++; }
      else if (table[(i + 1) * w + j] >= table[i * w + j + 1]) i++;
      else j++;
    }
    return marks;
  }
  function marked(text, other) {
    if (text === null) return '<span class="missing">missing</span>';
    if (other === null || other === undefined) return esc(text);
    const marks = differing(text, other);
    let html = "", open = false;
    for (let i = 0; i < text.length; i++) {
      if (marks[i] && !open) { html += "<mark>"; open = true; }
      if (!marks[i] && open) { html += "</mark>"; open = false; }
      html += esc(text[i]);
    }
    return html + (open ? "</mark>" : "");
  }
  // As explain shows a probability: values near 0 or 1 still differ.
  const pct = (p) => p < 0.001 && p > 0 ? p.toExponential(1)
    : p > 0.999 && p < 1 ? "1 − " + (1 - p).toExponential(1) : p.toFixed(3);
  const sigmoid = (bits) => 1 / (1 + Math.pow(2, -bits));

  // --- search text, built on first use ----------------------------------------
  let haystack = null;
  function searchText() {
    if (haystack) return haystack;
    haystack = new Array(records);
    for (let n = 0; n < records; n++) {
      const [t, r] = node(n);
      let text = String(label(t, r));
      for (const c of DATA.columns) { const v = value(t, r, c); if (v !== null) text += " " + v; }
      haystack[n] = text.toLowerCase();
    }
    return haystack;
  }

  // --- state, filters, the list -----------------------------------------------
  const state = { view: "entities", page: 0, entity: -1, pair: -1, rows: [] };
  const SORTS = {
    entities: [["size", "largest first"], ["doubt", "most doubtful first"], ["first", "in order"]],
    pairs: [["doubt", "most doubtful first"], ["high", "most probable first"], ["low", "least probable first"], ["first", "in order"]],
  };
  function readFilters() {
    const min = parseInt($("f-size-min").value, 10);
    const max = parseInt($("f-size-max").value, 10);
    return {
      doubtful: $("f-doubtful").checked,
      min: isNaN(min) ? 1 : min,
      max: isNaN(max) ? Infinity : max,
      key: $("f-key").value === "" ? -1 : parseInt($("f-key").value, 10),
      decision: $("f-decision").value,
      search: $("f-search").value.trim().toLowerCase(),
      sort: $("f-sort").value,
    };
  }
  function pairHasKey(i, key) { return keysOfCategory[P.found_by[i]].includes(key); }
  function filtered() {
    const f = readFilters();
    const hay = f.search ? searchText() : null;
    const rows = [];
    if (state.view === "entities") {
      let found = null;
      if (hay) { // entities with a record whose values hold the text
        found = new Uint8Array(entities);
        for (let n = 0; n < records; n++) if (hay[n].includes(f.search)) found[entityOf[n]] = 1;
      }
      for (let e = 0; e < entities; e++) {
        if (size[e] < f.min || size[e] > f.max) continue;
        if (f.doubtful && entityDoubt[e] < DOUBT) continue;
        if (found && !found[e]) continue;
        if (f.key >= 0) {
          let any = false;
          for (let k = pairCount[e]; k < pairCount[e + 1] && !any; k++) any = pairHasKey(pairsOf[k], f.key);
          if (!any) continue;
        }
        rows.push(e);
      }
      if (f.sort === "size") rows.sort((a, b) => size[b] - size[a] || a - b);
      else if (f.sort === "doubt") rows.sort((a, b) => entityDoubt[b] - entityDoubt[a] || a - b);
    } else {
      for (let i = 0; i < N; i++) {
        const s = Math.max(size[entityOf[nodeLeft(i)]], size[entityOf[nodeRight(i)]]);
        if (s < f.min || s > f.max) continue;
        if (f.doubtful && doubt[i] < DOUBT) continue;
        if (f.decision !== "" && P.match[i] !== +f.decision) continue;
        if (f.key >= 0 && !pairHasKey(i, f.key)) continue;
        if (hay && !hay[nodeLeft(i)].includes(f.search) && !hay[nodeRight(i)].includes(f.search)) continue;
        rows.push(i);
      }
      if (f.sort === "doubt") rows.sort((a, b) => doubt[b] - doubt[a] || a - b);
      else if (f.sort === "high") rows.sort((a, b) => probability[b] - probability[a] || a - b);
      else if (f.sort === "low") rows.sort((a, b) => probability[a] - probability[b] || a - b);
    }
    return rows;
  }
  function recordSummary(n) {
    const [t, r] = node(n);
    const parts = [];
    for (const c of DATA.columns.slice(0, 3)) { const v = value(t, r, c); if (v !== null) parts.push(v); }
    return parts.join(" · ");
  }
  function entityAnswer(e) { // the answer shared by all its inner pairs, if any
    let seen;
    for (let k = pairCount[e]; k < pairCount[e + 1]; k++) {
      const i = pairsOf[k];
      if (entityOf[nodeLeft(i)] !== e || entityOf[nodeRight(i)] !== e) continue;
      const a = answers[i];
      if (a === undefined) return undefined;
      if (seen === undefined) seen = a; else if (seen !== a) return undefined;
    }
    return seen;
  }
  function renderList() {
    const rows = state.rows;
    const pages = Math.max(1, Math.ceil(rows.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    const noun = state.view === "entities" ? "entities" : "pairs";
    $("count").textContent = rows.length.toLocaleString("en") + " " + noun;
    $("page").textContent = (state.page + 1) + " / " + pages;
    $("prev").disabled = state.page === 0;
    $("next").disabled = state.page >= pages - 1;
    let html = "";
    for (const row of rows.slice(state.page * PAGE, (state.page + 1) * PAGE)) {
      if (state.view === "entities") {
        const a = entityAnswer(row);
        const selected = row === state.entity ? " selected" : "";
        html += `<li class="row${selected}" data-index="${row}"><span class="num">#${row}</span>` +
          `<span class="what">${esc(recordSummary(members[memberStart[row]]))}</span>` +
          `<span class="num">${size[row]} rec.</span>` +
          (entityDoubt[row] >= DOUBT ? '<span class="badge doubt">doubtful</span>' : "") +
          (a !== undefined ? `<span class="badge ${answerName(a)}">${answerName(a)}</span>` : "") + "</li>";
      } else {
        const a = answers[row];
        const selected = row === state.pair ? " selected" : "";
        html += `<li class="row${selected}" data-index="${row}"><span class="num">${pct(probability[row])}</span>` +
          `<span class="what">${esc(recordSummary(nodeLeft(row)))} ~ ${esc(recordSummary(nodeRight(row)))}</span>` +
          (P.match[row] ? '<span class="badge match">match</span>' : "") +
          (a !== undefined ? `<span class="badge ${answerName(a)}">${answerName(a)}</span>` : "") + "</li>";
      }
    }
    $("list").innerHTML = html;
  }
  let refreshed = 0; // how many times the lists were filtered (tests wait on it)
  function refresh() {
    state.rows = filtered(); state.page = 0; renderList();
    refreshed++;
    if (window.lshReview) window.lshReview.refreshed = refreshed;
  }

  // --- detail: an entity, a pair ----------------------------------------------
  function recordsTable(nodes, against) {
    // against(n): the text each value is compared with, or null for none.
    let html = '<table class="records"><tr><th></th>';
    for (const n of nodes) {
      const [t, r] = node(n);
      html += `<th>${link ? (t ? "right " : "left ") : ""}${esc(label(t, r))}</th>`;
    }
    html += "</tr>";
    for (const c of DATA.columns) {
      html += `<tr><th>${esc(c)}</th>`;
      for (const n of nodes) {
        const [t, r] = node(n);
        html += `<td>${marked(value(t, r, c), against(n, c))}</td>`;
      }
      html += "</tr>";
    }
    return html + "</table>";
  }
  function markButtons(pair) {
    const a = pair in answers ? answers[pair] : undefined;
    const on = (v) => (a === v ? " on" : "");
    return `<div class="actions" data-pair="${pair}">` +
      `<button type="button" class="mark yes${on(1)}" data-answer="yes">✓ same entity</button>` +
      `<button type="button" class="mark no${on(0)}" data-answer="no">✗ different</button>` +
      `<button type="button" class="mark unsure${on(null)}" data-answer="unsure">? unsure</button>` +
      `<button type="button" class="mark clear" data-answer="clear">clear</button></div>`;
  }
  function fieldRows(i) { // the waterfall's steps, as explain reads the pair
    const M = DATA.model;
    if (!M) return null;
    let bits = M.starts[M.start[i]];
    const steps = [{ name: "prior", bits: bits, total: bits }];
    for (const F of M.fields) {
      const [level, w] = F.readings[F.code[i]];
      bits += w;
      steps.push({ name: F.field, level: F.levels[level], bits: w, total: bits });
    }
    return steps;
  }
  function waterfall(steps) {
    const step = 78, width = step * (steps.length + 1) + 40, height = 200, top = 16, bottom = 36;
    let low = 0, high = 0;
    for (const s of steps) { low = Math.min(low, s.total, s.total - s.bits); high = Math.max(high, s.total, s.total - s.bits); }
    low = Math.min(low, -1); high = Math.max(high, 1);
    const y = (v) => top + (high - v) / (high - low) * (height - top - bottom);
    let svg = `<svg class="waterfall" width="${width}" height="${height}" role="img" aria-label="waterfall">`;
    svg += `<line x1="30" x2="${width}" y1="${y(0)}" y2="${y(0)}" stroke="#9aa3ab"/>`;
    const all = [...steps, { name: "total", bits: steps[steps.length - 1].total, total: steps[steps.length - 1].total, isTotal: true }];
    all.forEach((s, k) => {
      const x = 36 + k * step;
      const from = s.isTotal || k === 0 ? 0 : s.total - s.bits;
      const color = k === 0 ? "#8a949e" : s.bits >= 0 ? "#3c9d48" : "#d64541";
      const y1 = y(Math.max(from, s.total)), y2 = y(Math.min(from, s.total));
      svg += `<rect x="${x}" y="${y1}" width="60" height="${Math.max(1, y2 - y1)}" fill="${color}"` +
        (s.isTotal ? ' stroke="#000"' : "") + `><title>${esc(s.name)}: ${s.bits.toFixed(2)} bits</title></rect>`;
      svg += `<text x="${x + 30}" y="${y1 - 3}" text-anchor="middle">${(s.bits >= 0 ? "+" : "") + s.bits.toFixed(2)}</text>`;
      const name = s.name.length > 12 ? s.name.slice(0, 11) + "…" : s.name;
      svg += `<text x="${x + 30}" y="${height - 20}" text-anchor="middle">${esc(name)}</text>`;
      if (s.level) svg += `<text x="${x + 30}" y="${height - 7}" text-anchor="middle">${esc(s.level)}</text>`;
    });
    return svg + "</svg>";
  }
  function pairDetail(i) {
    const l = nodeLeft(i), r = nodeRight(i);
    const [lt, lr] = node(l), [rt, rr] = node(r);
    const against = (n, c) => n === l ? value(rt, rr, c) : value(lt, lr, c);
    let html = `<h3 id="pair-title">Pair ${esc(label(lt, lr))} ~ ${esc(label(rt, rr))}</h3>`;
    html += `<p>score ${(P.score[i] / 1000).toFixed(3)}` +
      (P.probability ? `, match probability <b>${pct(P.probability[i] / 10000)}</b>` : "") +
      ` → <b>${P.match[i] ? "match" : "no match"}</b>; found by ${esc(P.keys[P.found_by[i]] || "(not given)")}</p>`;
    html += markButtons(i);
    html += recordsTable([l, r], against);
    const steps = fieldRows(i);
    html += '<table class="records fields"><tr><th>field</th><th>score</th>' +
      (steps ? "<th>level</th><th>bits</th><th>probability</th>" : "") + "</tr>";
    const scores = P.fields;
    if (steps) {
      html += `<tr><td>prior</td><td></td><td></td><td>${steps[0].bits.toFixed(3)}</td><td>${pct(sigmoid(steps[0].total))}</td></tr>`;
      for (const s of steps.slice(1)) {
        const sc = scores[s.name] ? scores[s.name][i] : -1;
        html += `<tr><td>${esc(s.name)}</td><td>${sc < 0 ? "–" : (sc / 1000).toFixed(3)}</td><td>${esc(s.level)}</td>` +
          `<td class="bits">${(s.bits >= 0 ? "+" : "") + s.bits.toFixed(3)}</td><td class="running">${pct(sigmoid(s.total))}</td></tr>`;
      }
    } else {
      for (const f of Object.keys(scores)) {
        const sc = scores[f][i];
        html += `<tr><td>${esc(f)}</td><td>${sc < 0 ? "–" : (sc / 1000).toFixed(3)}</td></tr>`;
      }
    }
    html += "</table>";
    for (const text of readingsOf.get(i) || []) html += `<p class="note reading">${esc(text)}</p>`;
    if (steps) {
      html += waterfall(steps);
      const sum = sigmoid(steps[steps.length - 1].total);
      if (P.probability && Math.abs(sum - P.probability[i] / 10000) > 0.001)
        html += '<p class="note">The match probability differs from the fields\' sum: the pair was decided by a rule beyond the weights ' +
          (DATA.model.matching ? "(the link read as a matching)" : "(identical records, shared matches or an answer)") + ".</p>";
    }
    return html;
  }
  function showEntity(e) {
    state.entity = e;
    const nodes = Array.from(members.subarray(memberStart[e], memberStart[e + 1]));
    const shown = nodes.slice(0, 30);
    const first = node(shown[0]);
    let html = `<h2 id="entity-title">Entity #${e}: ${size[e]} record${size[e] > 1 ? "s" : ""}</h2>`;
    html += '<div class="actions">' +
      '<button type="button" id="entity-right" class="yes">✓ entity right: all one entity</button>' +
      '<button type="button" id="entity-wrong" class="no">✗ entity wrong: not one entity</button>' +
      '<button type="button" id="entity-clear">clear its answers</button></div>';
    if (nodes.length > shown.length) html += `<p class="note">The first ${shown.length} of ${nodes.length} records.</p>`;
    html += recordsTable(shown, (n, c) => n === shown[0] ? null : value(first[0], first[1], c));
    // Its pairs inside it first, then those to other records, most probable first.
    const inner = [], outer = [];
    for (let k = pairCount[e]; k < pairCount[e + 1]; k++) {
      const i = pairsOf[k];
      (entityOf[nodeLeft(i)] === e && entityOf[nodeRight(i)] === e ? inner : outer).push(i);
    }
    const order = (a, b) => probability[b] - probability[a] || a - b;
    inner.sort(order);
    outer.sort(order);
    // A giant entity lists its 200 most probable pairs inside, not all of them.
    const listed = inner.slice(0, 200).concat(outer.slice(0, 10));
    html += `<h3>Its pairs</h3><p class="note">${inner.length} inside it` +
      (inner.length > 200 ? " (the 200 most probable shown)" : "") + `, ${outer.length} to other records` +
      (outer.length > 10 ? " (the 10 most probable shown)" : "") + '</p><ol class="pairs-of">';
    for (const i of listed) {
      const inside = entityOf[nodeLeft(i)] === e && entityOf[nodeRight(i)] === e;
      const [lt, lr] = node(nodeLeft(i)), [rt, rr] = node(nodeRight(i));
      const a = answers[i];
      html += `<li data-pair="${i}"${i === state.pair ? ' class="selected"' : ""}><span class="num">${pct(probability[i])}</span> ` +
        `${esc(label(lt, lr))} ~ ${esc(label(rt, rr))} ${P.match[i] ? '<span class="badge match">match</span>' : ""}` +
        (inside ? "" : ' <span class="badge">to another entity</span>') +
        (a !== undefined ? ` <span class="badge ${answerName(a)}">${answerName(a)}</span>` : "") + "</li>";
    }
    html += '</ol><div id="pair-detail"></div>';
    $("detail").innerHTML = html;
    if (state.pair >= 0 && entityHas(e, state.pair)) $("pair-detail").innerHTML = pairDetail(state.pair);
  }
  function entityHas(e, i) { return entityOf[nodeLeft(i)] === e || entityOf[nodeRight(i)] === e; }
  function showPair(i) {
    state.pair = i;
    if (state.view === "entities" && state.entity >= 0) showEntity(state.entity);
    else $("detail").innerHTML = pairDetail(i);
  }
  function redraw() {
    if (state.view === "entities" && state.entity >= 0) showEntity(state.entity);
    else if (state.pair >= 0) $("detail").innerHTML = pairDetail(state.pair);
    renderList();
    save();
  }
  function markEntity(e, value) {
    for (let k = pairCount[e]; k < pairCount[e + 1]; k++) {
      const i = pairsOf[k];
      if (entityOf[nodeLeft(i)] === e && entityOf[nodeRight(i)] === e) answer(i, value);
    }
    redraw();
  }

  // --- the histogram of probabilities with the cut -----------------------------
  function histogram() {
    const bins = 40, svg = $("histogram"), width = 380, height = 130, base = 108;
    const yes = new Int32Array(bins), no = new Int32Array(bins);
    for (let i = 0; i < N; i++) {
      const b = Math.min(bins - 1, Math.floor(probability[i] * bins));
      if (P.match[i]) yes[b]++; else no[b]++;
    }
    let most = 1;
    for (let b = 0; b < bins; b++) most = Math.max(most, yes[b] + no[b]);
    const h = (count) => count ? Math.log10(1 + count) / Math.log10(1 + most) * (base - 8) : 0;
    let html = "";
    const w = (width - 20) / bins;
    for (let b = 0; b < bins; b++) {
      const hn = h(no[b] + yes[b]), hy = hn * (yes[b] / Math.max(1, yes[b] + no[b]));
      const x = 10 + b * w;
      html += `<rect x="${x}" y="${base - hn}" width="${w - 1}" height="${hn - hy}" fill="#d98880"><title>${no[b]} not matched</title></rect>`;
      html += `<rect x="${x}" y="${base - hy}" width="${w - 1}" height="${hy}" fill="#58a55c"><title>${yes[b]} matched</title></rect>`;
    }
    html += `<line x1="10" x2="${width - 10}" y1="${base}" y2="${base}" stroke="#555"/>`;
    for (const t of [0, 0.5, 1]) html += `<text x="${10 + t * (width - 20)}" y="${base + 14}" font-size="10" text-anchor="middle">${t}</text>`;
    if (cut !== null) {
      const x = 10 + cut * (width - 20);
      html += `<line id="cut" x1="${x}" x2="${x}" y1="4" y2="${base}" stroke="#000" stroke-dasharray="4 2"/>` +
        `<text x="${x + 3}" y="12" font-size="10">cut ${cut.toFixed(3)}</text>`;
    }
    svg.innerHTML = html;
    $("histogram-caption").textContent = (byProbability ? "match probability" : "score") +
      " of " + N.toLocaleString("en") + " pairs (log count; green: matched)";
  }

  // --- export ---------------------------------------------------------------------
  function csvCell(text) {
    text = String(text);
    return /[",\n\r]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }
  function answersCsv() {
    let csv = "left,right,match\n";
    const pairs = Object.keys(answers).map(Number).sort((a, b) => a - b);
    for (const i of pairs) {
      const [lt, lr] = node(nodeLeft(i)), [rt, rr] = node(nodeRight(i));
      const a = answers[i];
      csv += csvCell(label(lt, lr)) + "," + csvCell(label(rt, rr)) + "," +
        (a === 1 ? "True" : a === 0 ? "False" : "") + "\n";
    }
    // Answers given before about pairs this page does not show: kept as they were.
    const others = DATA.answers ? DATA.answers.others : { left: [] };
    for (let k = 0; k < others.left.length; k++) {
      const a = others.match[k];
      csv += csvCell(others.left[k]) + "," + csvCell(others.right[k]) + "," +
        (a === 1 ? "True" : a === 0 ? "False" : "") + "\n";
    }
    return csv;
  }
  function download() {
    const blob = new Blob([answersCsv()], { type: "text/csv" });
    const anchor = document.createElement("a");
    anchor.href = URL.createObjectURL(blob);
    anchor.download = "answers.csv";
    document.body.appendChild(anchor);
    anchor.click();
    setTimeout(() => { URL.revokeObjectURL(anchor.href); anchor.remove(); }, 1000);
  }

  // --- wiring ---------------------------------------------------------------------
  function setView(view) {
    state.view = view;
    document.body.className = view;
    $("tab-entities").classList.toggle("active", view === "entities");
    $("tab-pairs").classList.toggle("active", view === "pairs");
    $("f-sort").innerHTML = SORTS[view].map(([v, t]) => `<option value="${v}">${t}</option>`).join("");
    if (view === "pairs") $("f-size-min").value = "1";
    else if ($("f-size-min").value === "1") $("f-size-min").value = "2";
    refresh();
  }
  $("tab-entities").addEventListener("click", () => setView("entities"));
  $("tab-pairs").addEventListener("click", () => setView("pairs"));
  for (const id of ["f-doubtful", "f-size-min", "f-size-max", "f-key", "f-decision", "f-sort"])
    $(id).addEventListener("change", refresh);
  let typing = 0;
  $("f-search").addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(refresh, 150); });
  $("prev").addEventListener("click", () => { state.page--; renderList(); });
  $("next").addEventListener("click", () => { state.page++; renderList(); });
  $("list").addEventListener("click", (event) => {
    const row = event.target.closest("li.row");
    if (!row) return;
    const index = +row.dataset.index;
    if (state.view === "entities") { state.pair = -1; showEntity(index); }
    else showPair(index);
    renderList();
  });
  $("detail").addEventListener("click", (event) => {
    const target = event.target;
    if (target.id === "entity-right") return markEntity(state.entity, 1);
    if (target.id === "entity-wrong") return markEntity(state.entity, 0);
    if (target.id === "entity-clear") return markEntity(state.entity, undefined);
    const button = target.closest("button.mark");
    if (button) {
      const pair = +button.parentElement.dataset.pair;
      const value = { yes: 1, no: 0, unsure: null, clear: undefined }[button.dataset.answer];
      answer(pair, value);
      return redraw();
    }
    const item = target.closest(".pairs-of li");
    if (item) { state.pair = +item.dataset.pair; showEntity(state.entity); }
  });
  $("export").addEventListener("click", download);

  const kinds = P.probability ? "" : " (no learned model: scores)";
  $("title").textContent = DATA.title;
  document.title = DATA.title;
  let matches = 0;
  for (let i = 0; i < N; i++) matches += P.match[i];
  let groups = 0;
  for (let e = 0; e < entities; e++) if (size[e] > 1) groups++;
  $("summary").textContent = `${N.toLocaleString("en")} pairs, ${matches.toLocaleString("en")} matches, ` +
    `${groups.toLocaleString("en")} entities of 2 or more records` + kinds;
  $("f-key").innerHTML += keyNames.map((k, at) => `<option value="${at}">${esc(k)}</option>`).join("");
  histogram();
  setView("entities");
  save();
  // For tests and benchmarks: the page is drawn, and its answers as CSV.
  window.lshReview = {
    ready: performance.now(), csv: answersCsv, pairs: N, entities: groups, refreshed: refreshed,
  };
  document.body.dataset.ready = "1";
})();
