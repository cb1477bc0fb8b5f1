// The review page of `fpdb serve`: groups, the queue of undecided pairs, one group's members and
// edges, two members side by side with a word-level diff, same/distinct/undo. Plain DOM, no
// library: every byte is served by the binary.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { key: null, pair: null, queue: [], group: null };

function token() {
  return $("token").value || sessionStorage.getItem("fpdb-token") || "";
}

async function api(method, path, body) {
  const headers = {};
  const t = token();
  if (t) headers["Authorization"] = "Bearer " + t;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await r.json(); } catch (_) { data = null; }
  return { status: r.status, ok: r.ok, data };
}

function say(text, error) {
  const s = $("status");
  s.textContent = text;
  s.className = error ? "error" : "";
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c == null ? "" : String(c)));
  return e;
}

const fmt = (x) => (x == null ? "–" : Number(x).toFixed(3));

function failed(r, what) {
  if (r.status === 401) say("the server wants a token: type it above", true);
  else say(what + ": " + ((r.data && r.data.error && r.data.error.message) || ("HTTP " + r.status)), true);
}

// ---- lists -------------------------------------------------------------------------------------

async function loadLists() {
  const q = new URLSearchParams({
    order: $("order").value,
    min_jaccard: $("min").value || "0",
    max_jaccard: $("max").value || "1",
    decided: $("decided").checked ? "true" : "false",
    limit: "200",
  });
  const r = await api("GET", "/v1/review?" + q);
  if (!r.ok) return failed(r, "review lists");
  const groups = $("groups");
  groups.replaceChildren();
  for (const g of r.data.groups) {
    const li = el("li", { class: "group-row", "data-key": g.group.canonical },
      `${g.group.canonical} — ${g.group.size} members, weakest ${fmt(g.weakest)}`);
    li.addEventListener("click", () => openGroup(g.group.canonical));
    groups.append(li);
  }
  state.queue = r.data.pairs;
  const queue = $("queue");
  queue.replaceChildren();
  r.data.pairs.forEach((p, i) => {
    const li = el("li", { class: "pair-row", "data-a": p.a, "data-b": p.b },
      `${p.a} ~ ${p.b}  J ${fmt(p.jaccard)} ${p.channel}${p.decision ? " [" + p.decision + "]" : ""}`);
    li.addEventListener("click", () => openPair(p.a, p.b, i));
    queue.append(li);
  });
}

// ---- a group -----------------------------------------------------------------------------------

async function openGroup(key, keepPair) {
  state.key = key;
  if (location.hash !== "#" + encodeURIComponent(key)) history.replaceState(null, "", "#" + encodeURIComponent(key));
  const r = await api("GET", "/v1/groups/by-key/" + encodeURIComponent(key));
  if (!r.ok) return failed(r, "group of " + key);
  const v = r.data;
  state.group = v;
  $("group-title").textContent = `Group ${v.group.id}: ${v.group.size} member(s), canonical ${v.group.canonical}`;
  const mb = $("members").tBodies[0];
  mb.replaceChildren();
  for (const m of v.members) {
    mb.append(el("tr", { class: "member-row", "data-key": m.key },
      el("td", {}, m.key), el("td", {}, m.id), el("td", {}, m.shingles),
      el("td", {}, new Date(m.inserted_at_ms).toISOString()), el("td", {}, m.meta || "")));
  }
  const eb = $("edges").tBodies[0];
  eb.replaceChildren();
  for (const e of v.edges) {
    const tr = el("tr", { class: "edge-row" + (e.channel === "held" ? " held" : ""), "data-a": e.a, "data-b": e.b },
      el("td", {}, e.a), el("td", {}, e.b),
      el("td", {}, e.channel + (e.blocked_by ? ` (held by distinct ${e.blocked_by[0]} / ${e.blocked_by[1]})` : "")),
      el("td", {}, fmt(e.jaccard)), el("td", {}, fmt(e.containment)), el("td", {}, fmt(e.reverse_containment)),
      el("td", {}, fmt(e.cosine)), el("td", {}, e.decision || ""));
    tr.addEventListener("click", () => openPair(e.a, e.b));
    eb.append(tr);
  }
  const ds = $("decisions");
  ds.replaceChildren(...v.decisions.map((d) =>
    el("div", { class: "decision" }, `${d.decision} ${d.a} / ${d.b}` + (d.author ? ` by ${d.author}` : "") + (d.reason ? `: ${d.reason}` : ""))));
  if (keepPair && state.pair) {
    markPair();
    showScores();
  }
  else if (!state.pair && v.edges.length) openPair(v.edges[0].a, v.edges[0].b);
}

function markPair() {
  for (const tr of document.querySelectorAll("tr.edge-row, li.pair-row")) {
    const on = state.pair && tr.dataset.a === state.pair.a && tr.dataset.b === state.pair.b;
    tr.classList.toggle("current", !!on);
  }
}

// ---- a pair ------------------------------------------------------------------------------------

async function documentText(key) {
  const r = await api("GET", "/v1/documents/" + encodeURIComponent(key) + "?text=true");
  if (!r.ok) return { doc: null, text: null };
  const t = r.data && (typeof r.data.text === "string" ? r.data.text : null);
  return { doc: r.data, text: t };
}

// The current pair's scores and decision, from the group as last loaded (after a decision too).
function showScores() {
  const { a, b } = state.pair;
  const edge = (state.group && state.group.edges.find((e) => e.a === a && e.b === b)) ||
    state.queue.find((p) => p.a === a && p.b === b);
  $("scores").textContent = edge
    ? `channel ${edge.channel}, Jaccard ${fmt(edge.jaccard)}, containment ${fmt(edge.containment)} / ${fmt(edge.reverse_containment)}, cosine ${fmt(edge.cosine)}` +
      (edge.decision ? `, decided ${edge.decision}` : "")
    : "";
}

async function openPair(a, b, queueIndex) {
  state.pair = { a, b, index: queueIndex == null ? state.queue.findIndex((p) => p.a === a && p.b === b) : queueIndex };
  $("pair").hidden = false;
  $("pair-title").textContent = `${a} ~ ${b}`;
  if (!state.group || !state.group.members.some((m) => m.key === a)) await openGroup(a, true);
  markPair();
  showScores();
  $("left-key").textContent = a;
  $("right-key").textContent = b;
  const [l, r] = await Promise.all([documentText(a), documentText(b)]);
  if (l.text == null || r.text == null) {
    for (const [id, d] of [["left", l], ["right", r]]) {
      const box = $(id);
      box.className = "text missing";
      box.textContent = "texts are not stored" + (d.doc && d.doc.meta ? " — metadata: " + JSON.stringify(d.doc.meta) : "");
    }
    return;
  }
  const [lw, rw] = wordDiff(l.text, r.text);
  render($("left"), lw);
  render($("right"), rw);
}

// A word-level diff: the longest common subsequence of the two word lists (dynamic programming up
// to 4M cells); past that, a word counts as shared when the other text has it at all.
function wordDiff(x, y) {
  const tok = (s) => s.match(/\S+|\s+/g) || [];
  const xt = tok(x), yt = tok(y);
  const xi = xt.map((t, i) => [t, i]).filter(([t]) => /\S/.test(t));
  const yi = yt.map((t, i) => [t, i]).filter(([t]) => /\S/.test(t));
  const n = xi.length, m = yi.length;
  const xs = new Uint8Array(xt.length), ys = new Uint8Array(yt.length); // 1 = only in this text
  if (n * m <= 4e6) {
    const w = m + 1;
    const dp = new Uint32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        dp[i * w + j] = xi[i][0] === yi[j][0] ? dp[(i + 1) * w + j + 1] + 1 : Math.max(dp[(i + 1) * w + j], dp[i * w + j + 1]);
    let i = 0, j = 0;
    while (i < n && j < m) {
      if (xi[i][0] === yi[j][0]) { i++; j++; }
      else if (dp[(i + 1) * w + j] >= dp[i * w + j + 1]) xs[xi[i++][1]] = 1;
      else ys[yi[j++][1]] = 1;
    }
    while (i < n) xs[xi[i++][1]] = 1;
    while (j < m) ys[yi[j++][1]] = 1;
  } else {
    const xset = new Set(xi.map((p) => p[0])), yset = new Set(yi.map((p) => p[0]));
    for (const [t, k] of xi) if (!yset.has(t)) xs[k] = 1;
    for (const [t, k] of yi) if (!xset.has(t)) ys[k] = 1;
  }
  return [xt.map((t, k) => [t, xs[k] === 1]), yt.map((t, k) => [t, ys[k] === 1])];
}

function render(box, words) {
  box.className = "text";
  box.replaceChildren(...words.map(([t, only]) => (only ? el("span", { class: "only" }, t) : document.createTextNode(t))));
}

// ---- decisions ---------------------------------------------------------------------------------

async function decide(kind) {
  if (!state.pair) return say("pick a pair first", true);
  const { a, b } = state.pair;
  const r = await api("POST", "/v1/decisions", { a, b, decision: kind, reason: $("reason").value || null, author: $("author").value || null });
  if (r.status === 409) {
    const ev = (r.data.evidence || []).map((d) => `${d.decision} ${d.a}/${d.b}`).join(", ");
    return say(`refused: it contradicts ${ev}`, true);
  }
  if (!r.ok) return failed(r, kind);
  $("reason").value = "";
  say(`${kind}: ${a} / ${b} — recorded`);
  await refresh();
}

async function undo() {
  if (!state.pair) return say("pick a pair first", true);
  const { a, b } = state.pair;
  const r = await api("DELETE", "/v1/decisions/" + encodeURIComponent(a) + "/" + encodeURIComponent(b));
  if (r.status === 404) return say(`no decision about ${a} / ${b}`, true);
  if (!r.ok) return failed(r, "undo");
  say(`undone: ${r.data.undone.decision} ${a} / ${b}`);
  await refresh();
}

async function refresh() {
  await loadLists();
  if (state.key) await openGroup(state.key, true);
}

function step(d) {
  if (!state.queue.length) return;
  const i = state.pair && state.pair.index >= 0 ? state.pair.index + d : 0;
  const k = Math.max(0, Math.min(state.queue.length - 1, i));
  openPair(state.queue[k].a, state.queue[k].b, k);
}

// ---- wiring ------------------------------------------------------------------------------------

$("btn-same").addEventListener("click", () => decide("same"));
$("btn-distinct").addEventListener("click", () => decide("distinct"));
$("btn-undo").addEventListener("click", undo);
for (const id of ["order", "min", "max", "decided"]) $(id).addEventListener("change", loadLists);
$("token").addEventListener("change", () => { sessionStorage.setItem("fpdb-token", $("token").value); refresh(); });
$("token").value = sessionStorage.getItem("fpdb-token") || "";
document.addEventListener("keydown", (e) => {
  if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.ctrlKey || e.metaKey || e.altKey) return;
  const keys = { s: () => decide("same"), d: () => decide("distinct"), u: undo, j: () => step(1), k: () => step(-1),
    r: () => $("reason").focus(), g: () => $("groups").scrollIntoView() };
  if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
});
window.addEventListener("hashchange", () => {
  const k = decodeURIComponent(location.hash.slice(1));
  if (k && k !== state.key) { state.pair = null; openGroup(k); }
});
loadLists().then(() => {
  const k = decodeURIComponent(location.hash.slice(1));
  if (k) openGroup(k);
});
