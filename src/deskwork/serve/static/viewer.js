// deskwork run viewer: plain JavaScript, no build step, no network beyond this server.
// Data from the API is only ever inserted as text (never as HTML).
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const view = { token: sessionStorage.getItem("deskwork-token") || "", runs: [], runId: null,
               run: null, events: [], stream: null, listStream: null, drawQueued: false,
               draft: "" };

// -- HTTP -------------------------------------------------------------------------------

function headers(extra = {}) {
  const h = { ...extra };
  if (view.token) h.Authorization = "Bearer " + view.token;
  return h;
}

async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: headers(options.headers) });
  if (response.status === 401) { askToken(); throw new Error("unauthorized"); }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.detail || response.statusText);
  return body;
}

// Server-Sent Events over fetch (so the bearer token can travel in a header).
async function readStream(path, { onEvent, onEnd, onOpen, signal }) {
  const response = await fetch(path, { headers: headers({ Accept: "text/event-stream" }), signal });
  if (response.status === 401) { askToken(); return; }
  if (!response.ok || !response.body) throw new Error("stream failed: " + response.status);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    if (onOpen) { onOpen(); onOpen = null; }
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let kind = "message", data = null;
      for (const line of frame.split("\n")) {
        if (line.startsWith("event: ")) kind = line.slice(7);
        else if (line.startsWith("data: ")) data = JSON.parse(line.slice(6));
      }
      if (data === null) continue;
      if (kind === "end") onEnd && onEnd(data); else onEvent(data);
    }
  }
}

function askToken() {
  const dialog = $("#token-dialog");
  if (!dialog.open) dialog.showModal();
}

$("#token-form").addEventListener("submit", () => {
  view.token = $("#token-input").value.trim();
  sessionStorage.setItem("deskwork-token", view.token);
  start();
});

// -- runs list ---------------------------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const badge = (status) => el("span", { class: "badge " + status }, status);
const shortId = (id) => id.slice(0, 8);
const time = (iso) => new Date(iso).toLocaleTimeString();

async function loadRuns() {
  const status = $("#status-filter").value;
  const query = status ? "?limit=100&status=" + status : "?limit=100";
  view.runs = (await api("/runs" + query)).runs;
  const list = $("#runs");
  const focused = list.contains(document.activeElement) && document.activeElement.dataset.run;
  list.replaceChildren(...view.runs.map((run) => el("li", {},
    el("a", { href: "#/runs/" + run.run_id, "data-run": run.run_id,
              "aria-current": run.run_id === view.runId ? "page" : null },
      el("span", { class: "name" }, run.runner || "run"), badge(run.status),
      el("span", { class: "id" }, shortId(run.run_id)),
      el("span", { class: "when" }, time(run.updated_at))))));
  if (!view.runs.length) list.append(el("li", { class: "muted hint" }, "No runs yet."));
  if (focused) {  // the list is redrawn live: keep the keyboard where it was
    const again = list.querySelector(`a[data-run="${CSS.escape(focused)}"]`);
    if (again) again.focus();
  }
}

let listTimer = null;
function refreshSoon() {
  clearTimeout(listTimer);
  listTimer = setTimeout(() => loadRuns().catch(() => {}), 120);
}

async function followAllRuns() {
  const live = $("#live");
  for (;;) {
    try {
      await readStream("/events", {
        onOpen: () => { live.textContent = "live"; live.classList.add("on"); refreshSoon(); },
        onEvent: (event) => {
          refreshSoon();
          if (event.run_id === view.runId) refreshRun();
        },
      });
    } catch (err) { /* reconnect below */ }
    live.textContent = "reconnecting…"; live.classList.remove("on");
    await new Promise((r) => setTimeout(r, 1500));
  }
}

// -- one run ------------------------------------------------------------------------------

async function openRun(runId) {
  if (view.stream) view.stream.abort();
  view.runId = runId; view.run = null; view.events = []; view.draft = "";
  document.querySelectorAll("#runs a").forEach((a) =>
    a.toggleAttribute("aria-current", a.dataset.run === runId));
  $("#run").replaceChildren(el("p", { class: "muted" }, "Loading run " + runId + "…"));
  try { view.run = await api("/runs/" + encodeURIComponent(runId)); }
  catch (err) { $("#run").replaceChildren(el("p", { class: "msg error" }, err.message)); return; }
  draw();
  follow();
}

function follow() {
  const runId = view.runId;
  const controller = new AbortController();
  view.stream = controller;
  const after = view.events.length ? view.events[view.events.length - 1].position : -1;
  readStream(`/runs/${encodeURIComponent(runId)}/events?after=${after}`, {
    signal: controller.signal,
    onEvent: (event) => { if (runId === view.runId) { view.events.push(event); queueDraw(); } },
    onEnd: () => refreshRun(),
  }).catch(() => {});
}

async function refreshRun() {
  if (!view.runId) return;
  const runId = view.runId;
  const run = await api("/runs/" + encodeURIComponent(runId)).catch(() => null);
  if (run && runId === view.runId) { view.run = run; queueDraw(); }
}

function queueDraw() {
  if (view.drawQueued) return;
  view.drawQueued = true;
  requestAnimationFrame(() => { view.drawQueued = false; draw(); });
}

async function answer(decision, actionId) {
  const runId = view.runId;
  view.draft = "";
  const section = $(".pending");
  if (section) section.querySelectorAll("button, input").forEach((b) => (b.disabled = true));
  try {
    await api(`/runs/${encodeURIComponent(runId)}/resume`, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ decision, action_id: actionId }),  // 409 if it paused anew
    });
  } catch (err) { alert(err.message); }
  await refreshRun();
  follow();
}

function pendingSection(action) {
  const input = el("input", { type: "text", id: "answer", "aria-label": "Your answer" });
  input.value = view.draft;  // the page redraws on live events: keep what was typed
  input.addEventListener("input", () => { view.draft = input.value; });
  const box = el("section", { class: "pending", "aria-labelledby": "pending-title" },
    el("h3", { id: "pending-title" }, "Waiting for you: " + action.type.replace("_", " ")),
    el("p", {}, action.prompt),
    action.tool_call ? el("pre", {}, action.tool_call.name + " " +
      JSON.stringify(action.tool_call.arguments, null, 1)) : null);
  const actions = el("div", { class: "actions" });
  if (action.type === "confirmation") {
    const yes = el("button", { class: "primary", id: "approve" }, "Approve");
    const no = el("button", { class: "danger", id: "decline" }, "Decline");
    yes.addEventListener("click", () => answer(true, action.action_id));
    no.addEventListener("click", () => answer(false, action.action_id));
    actions.append(yes, no);
  } else {
    const send = el("button", { class: "primary", id: "send-answer" }, "Send");
    const submit = () => input.value.trim() && answer(input.value.trim(), action.action_id);
    send.addEventListener("click", submit);
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") submit(); });
    actions.append(input, send);
  }
  box.append(actions);
  return box;
}

function draw() {
  const run = view.run;
  if (!run) return;
  const parts = [
    el("div", { class: "run-head" }, el("h2", {}, run.runner || "run"), badge(run.status),
      el("code", { class: "muted" }, run.run_id)),
    facts(run),
  ];
  if (run.status === "paused" && run.pending_action) parts.push(pendingSection(run.pending_action));
  if (run.errors && run.errors.length) {
    parts.push(el("section", {}, el("h3", {}, "Errors"),
      ...run.errors.map((e) => el("div", { class: "msg error" }, e))));
  }
  if (run.content || run.data) {
    parts.push(el("section", {}, el("h3", {}, "Output"),
      run.data ? el("pre", {}, JSON.stringify(run.data, null, 2)) : el("div", {}, run.content)));
  }
  parts.push(el("div", { class: "grid2" },
    el("div", {}, conversation(run), modelCalls(), coordination()),
    el("div", {}, timeline())));
  const keepFocus = document.activeElement && document.activeElement.id;
  $("#run").replaceChildren(...parts);
  if (keepFocus && $("#" + keepFocus)) $("#" + keepFocus).focus();
}

function facts(run) {
  const m = run.metrics || {};
  const item = (label, value) => value === undefined || value === null ? null :
    el("span", {}, el("b", {}, label + " "), String(value));
  return el("div", { class: "facts" },
    item("started", new Date(run.created_at).toLocaleString()),
    item("updated", time(run.updated_at)),
    item("model calls", m.llm_calls), item("tokens", m.total_tokens),
    item("cost", m.cost != null ? "$" + Number(m.cost).toFixed(4) : null),
    item("latency", m.latency_ms != null ? Math.round(m.latency_ms) + " ms" : null),
    item("tool calls", m.tool_calls));
}

function conversation(run) {
  const items = [];
  if (run.input !== null && run.input !== undefined) {
    const text = typeof run.input === "object" && "input" in run.input ? run.input.input : run.input;
    items.push(msg("user", "user", typeof text === "string" ? text : JSON.stringify(text)));
  }
  const reasoning = (run.messages || []).filter((m) => m.role === "assistant")
    .map((m) => m.reasoning_content);
  let assistantIndex = 0;
  const calls = {};
  const typing = new Map();  // streamed tokens of a message not finished yet, by agent
  for (const event of view.events) {
    const p = event.payload || {};
    if (event.type === "stream.token" && (p.type || "content") === "content") {
      typing.set(event.source, (typing.get(event.source) || "") + (p.token || ""));
    } else if (event.type === "llm.stream_restarted") {
      typing.delete(event.source);  // the cut stream's tokens are not part of the reply
    } else if (event.type === "assistant.message") {
      typing.delete(event.source);
      const node = msg("assistant", event.source, p.content || "");
      const thought = reasoning[assistantIndex++];
      if (thought) node.append(el("details", { class: "reasoning" },
        el("summary", {}, "reasoning"), el("pre", {}, thought)));
      for (const call of p.tool_calls || []) {
        calls[call.id + event.source] = call;
        node.append(el("pre", {}, "→ " + call.name + "(" + call.arguments + ")"));
      }
      items.push(node);
    } else if (event.type === "tool.completed") {
      items.push(msg("tool", event.source, p.result_preview ?? ""));
    } else if (event.type === "tool.failed" || event.type === "llm.failed") {
      items.push(msg("error", event.source, p.error || JSON.stringify(p)));
    } else if (event.type === "run.failed") {
      items.push(msg("error", "run failed", (p.errors || []).join("; ")));
    } else if (event.type === "workforce.handoff") {
      items.push(msg("tool", "handoff", `${p.from} → ${p.to}` + (p.context ? ": " + p.context : "")));
    }
  }
  for (const [who, text] of typing) items.push(msg("assistant typing", who + " …", text));
  return el("section", { "aria-label": "Conversation" }, el("h3", {}, "Conversation"),
    el("div", { class: "convo" }, items.length ? items : el("p", { class: "muted" }, "No messages yet.")));
}

function msg(kind, who, text) {
  return el("div", { class: "msg " + kind }, el("div", { class: "who" }, who), el("div", {}, text));
}

function modelCalls() {
  const rows = [];
  const started = {};
  for (const event of view.events) {
    if (event.type === "llm.started") started[event.source] = event;
    if (event.type !== "llm.completed" && event.type !== "llm.failed") continue;
    const p = event.payload || {};
    rows.push(el("tr", {}, el("td", {}, event.source), el("td", {}, p.model || ""),
      el("td", { class: "num" }, p.prompt_tokens ?? ""), el("td", { class: "num" }, p.completion_tokens ?? ""),
      el("td", { class: "num" }, p.cost != null ? "$" + Number(p.cost).toFixed(5) : "—"),
      el("td", { class: "num" }, p.latency_ms != null ? Math.round(p.latency_ms) + " ms" : "")));
  }
  if (!rows.length) return null;
  return el("section", {}, el("h3", {}, "Model calls"), el("table", {},
    el("thead", {}, el("tr", {}, el("th", {}, "agent"), el("th", {}, "model"),
      el("th", { class: "num" }, "in"), el("th", { class: "num" }, "out"),
      el("th", { class: "num" }, "cost"), el("th", { class: "num" }, "latency"))),
    el("tbody", {}, rows)));
}

function coordination() {
  const handoffs = [], rounds = [], steps = [];
  const children = new Set((view.run && view.run.child_run_ids) || []);
  for (const event of view.events) {
    const p = event.payload || {};
    if (event.type === "workforce.handoff") handoffs.push(p);
    if (event.type === "blackboard.round") rounds.push(`round ${p.round}: ${p.agent}` +
      (p.instruction ? " — " + p.instruction : ""));
    if (event.type === "blackboard.posted") rounds.push(`round ${p.round}: ${p.author} posted ${p.kind}`);
    if (event.type === "step.completed" || event.type === "step.paused") steps.push(`${event.source}: ${p.status}`);
    for (const key of ["run_id", "child_run_id"]) {
      if (typeof p[key] === "string" && p[key] !== view.runId) children.add(p[key]);
    }
    const preview = typeof p.result_preview === "string" ? p.result_preview : "";
    for (const match of preview.matchAll(/"run_id":\s*"([0-9a-f]{32})"/g)) {
      if (match[1] !== view.runId) children.add(match[1]);
    }
  }
  const parts = [];
  if (handoffs.length) {
    const path = [handoffs[0].from, ...handoffs.map((h) => h.to)].join(" → ");
    parts.push(el("section", {}, el("h3", {}, "Handoff path"), el("div", { class: "path" }, path)));
  }
  if (rounds.length) parts.push(el("section", {}, el("h3", {}, "Blackboard rounds"),
    el("ol", {}, rounds.map((r) => el("li", {}, r)))));
  if (steps.length) parts.push(el("section", {}, el("h3", {}, "Flow steps"),
    el("ol", {}, steps.map((s) => el("li", {}, s)))));
  if (children.size) parts.push(el("section", {}, el("h3", {}, "Child runs"),
    el("ul", { id: "children" }, [...children].map((id) =>
      el("li", {}, el("a", { href: "#/runs/" + id }, id))))));
  const parent = view.run && view.run.parent_run_id;
  if (parent) parts.push(el("section", {}, el("h3", {}, "Started by"),
    el("a", { href: "#/runs/" + parent, id: "parent" }, parent)));
  return parts.length ? el("div", {}, parts) : null;
}

function detailOf(event) {
  const p = event.payload || {};
  switch (event.type) {
    case "tool.completed": return "→ " + (p.result_preview ?? "");
    case "tool.failed": return p.error;
    case "llm.started": return `${p.model} · ${p.messages_count} messages`;
    case "llm.completed": return `${p.total_tokens ?? "?"} tokens · ${Math.round(p.latency_ms || 0)} ms`;
    case "assistant.message":
      return (p.tool_calls || []).map((c) => c.name + c.arguments).join(", ") || (p.content || "");
    case "stream.token": return p.token;
    case "run.failed": return (p.errors || []).join("; ");
    default: return Object.keys(p).length ? JSON.stringify(p) : "";
  }
}

function timeline() {
  const kind = (t) => t.startsWith("tool.") ? "tool" : t.startsWith("llm.") ? "llm" :
    t.endsWith(".failed") ? "fail" : t.startsWith("run.") ? "run" : "";
  const shown = view.events.filter((e) => e.type !== "stream.token");
  return el("section", { "aria-label": "Event timeline" },
    el("h3", {}, `Timeline (${view.events.length} events)`),
    el("ol", { class: "timeline", id: "timeline" }, shown.map((event) => el("li", {},
      el("span", { class: "pos" }, "#" + event.position),
      el("span", { class: "t" }, time(event.timestamp)),
      el("span", {}, el("span", { class: "type " + kind(event.type) }, event.type), " ",
        el("span", { class: "muted" }, event.source)),
      detailOf(event) ? el("span", { class: "detail" }, detailOf(event)) : null))));
}

// -- navigation ---------------------------------------------------------------------------

function route() {
  const match = location.hash.match(/^#\/runs\/([^/?#]+)/);
  if (!match) return;
  let runId = match[1];
  try { runId = decodeURIComponent(runId); } catch (err) { /* not percent-encoded: as typed */ }
  openRun(runId);
}

document.addEventListener("keydown", (e) => {
  if (e.target.closest("input, select, textarea") || e.metaKey || e.ctrlKey || e.altKey) return;
  const links = [...document.querySelectorAll("#runs a")];
  const at = links.indexOf(document.activeElement);
  if (e.key === "j" || e.key === "k") {
    const next = links[Math.min(Math.max(at + (e.key === "j" ? 1 : -1), 0), links.length - 1)];
    if (next) { next.focus(); e.preventDefault(); }
  } else if (e.key === "a" && $("#approve")) { $("#approve").click(); }
  else if (e.key === "d" && $("#decline")) { $("#decline").click(); }
});

$("#status-filter").addEventListener("change", () => loadRuns().catch(() => {}));
window.addEventListener("hashchange", route);

let started = false;
function start() {
  loadRuns().then(() => {
    if (!started) { started = true; followAllRuns(); }
    route();
  }).catch(() => {});
}
start();
