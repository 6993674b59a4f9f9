// The ironbees console: runs, one run live, its gates; the commit pipelines,
// one live, their approvals. Plain DOM, no build step.
// The token stays in this tab (sessionStorage); it reaches the page through the
// URL's #token= fragment (never sent to the server) or the login form.
"use strict";

const $ = (id) => document.getElementById(id);
const NODES = ["INIT", "PLAN", "WAIT_PLAN_APPROVAL", "BASELINE", "CODE", "VALIDATE", "DECIDE",
  "WAIT_REVIEW", "SUCCESS", "ESCALATE", "WAIT_HUMAN"];
const GATES = { WAIT_PLAN_APPROVAL: "Approve the plan?", WAIT_REVIEW: "Apply the validated change?",
  WAIT_HUMAN: "The run needs you" };

let token = null;
let current = null; // { id, controller, lastSeq, latest state view, seen nodes }

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

function takeToken() {
  const m = location.hash.match(/token=([^&]+)/);
  if (m) {
    sessionStorage.setItem("ironbees-token", decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname + location.hash.replace(/&?token=[^&]+/, "").replace(/^#$/, ""));
  }
  return sessionStorage.getItem("ironbees-token");
}

class Unauthorized extends Error {}

async function api(path, options = {}) {
  const headers = Object.assign({ Authorization: "Bearer " + token }, options.headers || {});
  if (options.body && !headers["Content-Type"]) headers["Content-Type"] = "application/json";
  const r = await fetch(path, Object.assign({}, options, { headers }));
  if (r.status === 401) { showLogin(); throw new Unauthorized("the token was refused"); }
  const text = await r.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (_) { body = { message: text }; }
  if (!r.ok) throw new Error((body && body.code ? body.code + ": " : "") + (body && body.message || r.statusText));
  return body;
}

function showLogin() {
  $("app").hidden = true;
  $("login").hidden = false;
  $("conn").textContent = "not connected";
}

function showApp() {
  $("login").hidden = true;
  $("app").hidden = false;
  $("conn").textContent = "connected";
}

// --- runs --------------------------------------------------------------------------

const money = (usd) => "$" + (usd || 0).toFixed(usd >= 1 ? 2 : 4);

async function loadRuns() {
  let page;
  try { page = await api("/api/agent/runs?limit=50"); } catch (e) { return; }
  const rows = $("run-rows");
  rows.replaceChildren(...page.runs.map((r) => {
    const tr = el("tr", { "data-run": r.id },
      el("td", {}, el("code", { text: r.id })),
      el("td", {}, el("span", { class: "status " + r.status.type, text: r.status.type })),
      el("td", { text: r.node === "__end__" ? "-" : r.node }),
      el("td", { text: money(r.costUsd) }),
      el("td", { class: "request", text: r.request, title: r.request }));
    tr.addEventListener("click", () => openRun(r.id));
    return tr;
  }));
  $("no-runs").hidden = page.runs.length > 0;
}

// --- one run -------------------------------------------------------------------------

async function openRun(id) {
  if (current && current.id === id) return;
  if (current && current.controller) current.controller.abort();
  current = { id, controller: new AbortController(), lastSeq: 0, seen: new Set(), view: null };
  if (location.hash !== "#run=" + id) history.replaceState(null, "", "#run=" + id);
  $("run").hidden = false;
  $("run-id").textContent = id;
  $("events").replaceChildren();
  $("plan").textContent = "No plan yet.";
  $("diffs").textContent = "No changes yet.";
  $("commands").replaceChildren();
  $("commands").textContent = "Nothing run yet.";
  $("plan-edit").dataset.filled = "";
  await refresh();
  follow(current);
  $("run").scrollIntoView({ behavior: "smooth", block: "start" });
}

let refreshing = null;
function refreshSoon() {
  if (refreshing) return;
  refreshing = setTimeout(() => { refreshing = null; refresh(); loadRuns(); }, 150);
}

async function refresh() {
  if (!current) return;
  const run = current;
  let view;
  try { view = await api("/api/agent/state/" + encodeURIComponent(run.id)); } catch (e) { return; }
  if (current !== run) return;
  run.view = view;
  renderRun(view);
}

function renderRun(view) {
  const { run, checkpoint, state } = view;
  const status = checkpoint.status;
  const badge = $("run-status");
  badge.textContent = status.type;
  badge.className = "status " + status.type;
  $("run-request").textContent = state.userRequest;
  const spend = state.spend || {};
  $("run-meta").textContent = `node ${checkpoint.node === "__end__" ? "-" : checkpoint.node} · round ${state.iterationCount}/${state.maxIterations} · ` +
    `${money(spend.costUsd)} · ${spend.modelCalls || 0} model calls · ${spend.toolCalls || 0} tool calls` +
    (status.type === "failed" ? ` · failed: ${status.code}: ${status.message}` : "") +
    (state.transactionId ? ` · applied as ${state.transactionId}` : "");
  renderGraph(checkpoint.node);
  renderPlan(state.plan, state.spec);
  renderDiffs(state.codeDiffs || []);
  const waiting = status.type === "waiting";
  $("gate").hidden = !waiting;
  if (waiting) {
    $("gate-title").textContent = GATES[status.node] || ("Paused at " + status.node);
    $("gate-reason").textContent = status.reason || state.pauseReason || "";
    $("edit-plan").hidden = status.node !== "WAIT_PLAN_APPROVAL";
    const edit = $("plan-edit");
    if (state.plan && edit.dataset.filled !== checkpoint.stateId) {
      edit.value = JSON.stringify(state.plan, null, 2);
      edit.dataset.filled = checkpoint.stateId;
    }
    setGateBusy(false);
  }
  const finished = status.type === "succeeded" || status.type === "cancelled";
  $("cancel").hidden = finished;
}

function renderGraph(at) {
  $("graph").replaceChildren(...NODES.map((n) => el("li", {
    class: (n === at ? "current" : current.seen.has(n) ? "seen" : ""), text: n,
  })));
}

function renderPlan(plan, spec) {
  const box = $("plan");
  if (!plan) { box.textContent = "No plan yet."; box.className = "muted"; return; }
  box.className = "";
  box.replaceChildren(
    el("p", {}, el("strong", { text: plan.summary }), " ", el("span", { class: "muted", text: "(" + plan.complexity + ")" })),
    el("ol", { class: "steps" }, ...plan.steps.map((s) => el("li", {},
      el("span", { text: s.description }),
      s.filePath ? el("span", {}, " — ", el("code", { text: s.filePath })) : null,
      s.rationale ? el("div", { class: "muted", text: s.rationale }) : null))),
    plan.taskGraph && plan.steps.length > 1
      ? el("p", { class: "muted", text: "order: " + plan.taskGraph.groups.map((g) => g.join(", ")).join(" → ") + " (a comma: no dependency between the steps)" })
      : null,
    spec ? el("details", {}, el("summary", { text: "Specification" }), el("p", { class: "request", text: spec })) : null);
}

function diffBlock(text) {
  const pre = el("pre");
  for (const line of text.split("\n")) {
    const cls = line.startsWith("+") && !line.startsWith("+++") ? "add"
      : line.startsWith("-") && !line.startsWith("---") ? "del" : line.startsWith("@@") ? "hunk" : null;
    pre.append(cls ? el("span", { class: cls, text: line }) : line, "\n");
  }
  return pre;
}

function renderDiffs(diffs) {
  const box = $("diffs");
  if (!diffs.length) { box.textContent = "No changes yet."; box.className = "muted"; return; }
  box.className = "";
  box.replaceChildren(...diffs.map((d) => el("details", { open: "" },
    el("summary", {}, el("code", { text: d.filePath }), " ", el("span", { class: "muted", text: d.type })),
    diffBlock(d.diff))));
}

function addCommand(k) {
  const box = $("commands");
  if (box.classList.contains("muted")) { box.replaceChildren(); box.className = ""; }
  const what = k.kind + (k.scope ? " (" + k.scope + ")" : "") + " · " + k.tool;
  const counts = k.kind === "test" ? ` · ${k.total} run, ${k.failed} failed` : k.failed ? ` · ${k.failed} errors` : "";
  const line = el("div", { class: "cmd " + (k.success ? "ok" : "bad") },
    el("span", { text: what + counts + ` · ${(k.durationMs / 1000).toFixed(1)}s` }));
  if (k.failures && k.failures.length) line.append(el("ul", {}, ...k.failures.map((f) => el("li", { text: f }))));
  box.append(line);
}

function describe(k) {
  switch (k.type) {
    case "runStarted": return "run started at " + k.entry;
    case "runResumed": return "resumed at " + k.node + (k.input ? " with an answer" : "");
    case "nodeStarted": return "▶ " + k.node + (k.attempt > 1 ? " (attempt " + k.attempt + ")" : "");
    case "nodeFailed": return "✘ " + k.node + ": " + k.code + ": " + k.message;
    case "checkpoint": return "checkpoint " + k.seq + " at " + k.node + " (" + k.status.type + ")";
    case "interrupted": return "waiting at " + k.node + ": " + k.reason;
    case "paused": return "paused before " + k.node + ": " + k.reason;
    case "diverted": return k.from + " → " + k.to + ": " + k.reason;
    case "runFinished": return "execution ended: " + k.status.type + (k.status.message ? " — " + k.status.message : "");
    case "context": return k.agent + " context: " + k.bytes + " bytes" +
      (k.tokens ? " (" + Object.entries(k.tokens).map(([p, n]) => p + " " + n + " tokens").join(", ") + ")" : "");
    case "modelCall": return `${k.agent} ← ${k.model}: ${k.usage.inputTokens || 0} in, ${k.usage.outputTokens || 0} out` +
      (k.costUsd != null ? ", " + money(k.costUsd) : "") + `, ${k.latencyMs} ms`;
    case "modelRetry": return "model retry (" + k.provider + "): " + k.reason;
    case "toolCall": return k.agent + " → " + k.name + " " + JSON.stringify(k.arguments).slice(0, 160);
    case "toolResult": return (k.ok ? "✔ " : "✘ ") + k.name + ": " + k.summary;
    case "plan": return "plan: " + k.plan.summary;
    case "planRejected": return "plan rejected: " + k.error;
    case "taskRound": return "round " + k.round + "/" + k.rounds + ": steps " + k.steps.join(", ") + (k.parallel ? " at once" : "");
    case "taskFailed": return "step " + k.step + " not done: " + k.reason + (k.replan ? "; planning again" : "");
    case "approved": return "approved (" + k.gate + ") by " + k.by + (k.edited ? ", plan edited" : "") + (k.feedback ? ": " + k.feedback : "");
    case "rejected": return "rejected (" + k.gate + "): " + k.feedback;
    case "escalated": return "escalated: " + k.reason;
    case "diff": return "round " + k.iteration + " changed " + k.files.join(", ");
    case "workspace": return "workspace synced";
    case "command": return k.kind + " " + k.tool + ": " + (k.success ? "passed" : "failed") + (k.kind === "test" ? ` (${k.total} run, ${k.failed} failed)` : "");
    case "decision": return "decision: " + (k.passed ? "passed" : "failed") + " → " + k.next;
    case "applied": return "applied " + (k.files || []).join(", ") + (k.transactionId ? " as " + k.transactionId : "");
    case "warning": return "warning " + k.code + ": " + k.message;
    default: return k.type;
  }
}

function onEvent(run, ev) {
  run.lastSeq = ev.seq;
  const k = ev.kind;
  if (k.type === "nodeStarted") run.seen.add(k.node);
  if (k.type === "modelDelta") return; // streamed text: the model call's line says enough
  if (k.type === "command") addCommand(k);
  const list = $("events");
  list.append(el("li", { value: String(ev.seq) }, el("span", { class: "k", text: k.type }), " ", describe(k)));
  if (list.children.length > 400) list.firstChild.remove();
  list.scrollTop = list.scrollHeight;
  if (["checkpoint", "interrupted", "paused", "runFinished", "plan", "diff", "applied"].includes(k.type)) refreshSoon();
}

// Server-sent events over fetch (EventSource cannot send the token header),
// resumed after the last event seen (Last-Event-ID) when the connection drops.
async function follow(run, kind = "agent", active = () => current === run, handle = onEvent) {
  let delay = 500;
  while (active() && !run.controller.signal.aborted) {
    try {
      const headers = { Authorization: "Bearer " + token, Accept: "text/event-stream" };
      if (run.lastSeq) headers["Last-Event-ID"] = String(run.lastSeq);
      const r = await fetch("/api/" + kind + "/runs/" + encodeURIComponent(run.id) + "/events", { headers, signal: run.controller.signal });
      if (r.status === 401) { showLogin(); return; }
      if (!r.ok || !r.body) throw new Error("events: " + r.status);
      const reader = r.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
          if (data) handle(run, JSON.parse(data));
        }
        delay = 500;
      }
      // The stream ends when the run has finished for good.
      if (kind === "agent") refreshSoon(); else pipelineSoon();
      const v = run.view && run.view.checkpoint.status.type;
      if (v === "succeeded" || v === "cancelled" || (kind !== "agent" && v === "failed")) return;
    } catch (e) {
      if (run.controller.signal.aborted) return;
    }
    await new Promise((res) => setTimeout(res, delay));
    delay = Math.min(delay * 2, 8000);
  }
}

// --- commit pipelines (shown when this server drives them) ---------------------------

const STAGES = ["clone", "code", "test", "refactor", "sync", "notify"];
// The seed's names of the stages' result files (`.ironbees/cache/<name>_agent.json`).
const RESULT_FILES = { refactor: "refactoring", notify: "slack" };
let pipe = null; // { id, controller, lastSeq, view }

async function loadPipelines() {
  let page;
  try { page = await api("/api/pipeline/runs?limit=50"); } catch (e) { $("pipelines").hidden = true; return; }
  $("pipelines").hidden = false;
  $("pipeline-rows").replaceChildren(...page.runs.map((r) => {
    const tr = el("tr", { "data-pipeline": r.id },
      el("td", {}, el("code", { text: r.id })),
      el("td", {}, el("span", { class: "status " + r.status.type, text: r.status.type })),
      el("td", { text: r.node === "__end__" ? "-" : r.node }),
      el("td", { class: "request", text: r.request, title: r.request }));
    tr.addEventListener("click", () => openPipeline(r.id));
    return tr;
  }));
  $("no-pipelines").hidden = page.runs.length > 0;
}

async function openPipeline(id) {
  if (pipe && pipe.id === id) return;
  if (pipe && pipe.controller) pipe.controller.abort();
  const run = pipe = { id, controller: new AbortController(), lastSeq: 0, view: null };
  $("pipeline").hidden = false;
  $("pipeline-id").textContent = id;
  $("pipeline-events").replaceChildren();
  await refreshPipeline();
  follow(run, "pipeline", () => pipe === run, onPipelineEvent);
  $("pipeline").scrollIntoView({ behavior: "smooth", block: "start" });
}

let pipelineTimer = null;
function pipelineSoon() {
  if (pipelineTimer) return;
  pipelineTimer = setTimeout(() => { pipelineTimer = null; refreshPipeline(); loadPipelines(); }, 150);
}

async function refreshPipeline() {
  if (!pipe) return;
  const run = pipe;
  let view;
  try { view = await api("/api/pipeline/state/" + encodeURIComponent(run.id)); } catch (e) { return; }
  if (pipe !== run) return;
  run.view = view;
  renderPipeline(view);
}

function renderPipeline(view) {
  const { checkpoint, state } = view;
  const status = checkpoint.status;
  $("pipeline-status").textContent = status.type;
  $("pipeline-status").className = "status " + status.type;
  $("pipeline-commit").textContent = state.commitMessage || "";
  const err = state.error;
  $("pipeline-meta").textContent = `${state.gitRemote || "origin"}/${state.targetBranch || ""} · hub ${state.hubPath || ""}` +
    (err ? ` · failed at ${err.failedStage}: ${err.code}: ${err.message}` : "") +
    (state.rollbackPoint && err ? ` · hub back at ${state.rollbackPoint}` : "");
  const stages = state.stageStatus || {};
  $("stages").replaceChildren(...STAGES.map((name) => el("li", {
    class: stages[name] === "running" ? "current" : (stages[name] || "pending"), text: name + " · " + (stages[name] || "pending"),
  })));
  const results = state.results || {};
  const box = $("stage-results");
  const done = STAGES.filter((n) => results[n]);
  if (!done.length) { box.textContent = "Nothing done yet."; box.className = "muted"; } else {
    box.className = "";
    box.replaceChildren(...done.map((n) => el("details", {},
      el("summary", {}, el("code", { text: (RESULT_FILES[n] || n) + "_agent.json" }), " ", el("span", { class: "muted", text: results[n].status || "" })),
      el("pre", { text: JSON.stringify(results[n], null, 2) }))));
  }
  const waiting = status.type === "waiting";
  $("pipeline-gate").hidden = !waiting;
  if (waiting) {
    $("pipeline-question").textContent = status.reason || ("Waiting at " + status.node);
    // APPROVE_CODE asks about the code stage's result, APPROVE_SYNC before the push.
    const stage = (status.node || "").replace(/^APPROVE_/, "").toLowerCase();
    const r = results[stage];
    $("pipeline-summary").textContent = r ? JSON.stringify(r, null, 2).slice(0, 1200) : "";
    setPipelineGateBusy(false);
  }
  $("pipeline-cancel").hidden = ["succeeded", "cancelled", "failed"].includes(status.type);
}

function describePipeline(k) {
  switch (k.type) {
    case "stageFinished": return k.stage + " " + k.status + ": " + k.summary;
    case "stageApproval": return k.stage + " " + (k.approved ? "approved" : "rejected") + " by " + k.by;
    case "rolledBack": return "rolled back after " + k.failedStage + " (" + k.code + ")" + (k.rollbackBranch ? " to " + k.rollbackBranch : "");
    default: return describe(k);
  }
}

function onPipelineEvent(run, ev) {
  run.lastSeq = ev.seq;
  const k = ev.kind;
  const list = $("pipeline-events");
  list.append(el("li", { value: String(ev.seq) }, el("span", { class: "k", text: k.type }), " ", describePipeline(k)));
  if (list.children.length > 400) list.firstChild.remove();
  list.scrollTop = list.scrollHeight;
  if (["checkpoint", "interrupted", "runFinished", "stageFinished", "rolledBack"].includes(k.type)) pipelineSoon();
}

function setPipelineGateBusy(busy) {
  for (const id of ["pipeline-approve", "pipeline-reject"]) $(id).disabled = busy;
}

async function answerPipeline(approved) {
  const err = $("pipeline-gate-error");
  err.hidden = true;
  if (!pipe || !pipe.view) return;
  setPipelineGateBusy(true);
  try {
    await api("/api/pipeline/approve", { method: "POST", body: JSON.stringify({ stateId: pipe.view.checkpoint.stateId, approved }) });
    $("pipeline-gate").hidden = true;
    pipelineSoon();
  } catch (e) {
    err.textContent = e.message;
    err.hidden = false;
    setPipelineGateBusy(false);
  }
}

// --- actions -------------------------------------------------------------------------

function setGateBusy(busy) {
  for (const id of ["approve", "reject", "approve-edited"]) $(id).disabled = busy;
}

async function answer(body) {
  const err = $("gate-error");
  err.hidden = true;
  if (!current || !current.view) return;
  setGateBusy(true);
  try {
    await api("/api/agent/approve", { method: "POST", body: JSON.stringify(Object.assign({ stateId: current.view.checkpoint.stateId }, body)) });
    $("feedback").value = "";
    $("gate").hidden = true;
  } catch (e) {
    err.textContent = e.message;
    err.hidden = false;
    setGateBusy(false);
  }
}

function wire() {
  $("login-form").addEventListener("submit", (e) => {
    e.preventDefault();
    token = $("token").value.trim();
    sessionStorage.setItem("ironbees-token", token);
    start();
  });
  $("run-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const err = $("form-error");
    err.hidden = true;
    $("start").disabled = true;
    try {
      const body = { userRequest: $("request").value };
      if ($("auto").checked) body.autoApprove = true;
      const r = await api("/api/agent/execute", { method: "POST", headers: { Accept: "application/json" }, body: JSON.stringify(body) });
      $("request").value = "";
      await loadRuns();
      await openRun(r.runId);
    } catch (x) {
      err.textContent = x.message;
      err.hidden = false;
    } finally {
      $("start").disabled = false;
    }
  });
  $("approve").addEventListener("click", () => {
    const feedback = $("feedback").value.trim();
    answer(feedback ? { approved: true, feedback } : { approved: true });
  });
  $("approve-edited").addEventListener("click", () => {
    const feedback = $("feedback").value.trim();
    answer(Object.assign({ approved: true, editedContent: $("plan-edit").value }, feedback ? { feedback } : {}));
  });
  $("reject").addEventListener("click", () => {
    const feedback = $("feedback").value.trim();
    if (!feedback) { $("gate-error").textContent = "Say why in the feedback, so the agent can do better."; $("gate-error").hidden = false; return; }
    answer({ approved: false, feedback });
  });
  $("pipeline-approve").addEventListener("click", () => answerPipeline(true));
  $("pipeline-reject").addEventListener("click", () => {
    if (confirm("Reject? The hub goes back to the last good stage and nothing is pushed.")) answerPipeline(false);
  });
  $("pipeline-cancel").addEventListener("click", async () => {
    if (!pipe || !confirm("Cancel pipeline " + pipe.id + "? Its hub branches are deleted.")) return;
    try { await api("/api/pipeline/cancel", { method: "POST", body: JSON.stringify({ runId: pipe.id }) }); } catch (e) { /* shown by the refresh */ }
    pipelineSoon();
  });
  $("cancel").addEventListener("click", async () => {
    if (!current || !confirm("Cancel run " + current.id + "? Nothing of it is applied.")) return;
    try { await api("/api/agent/cancel", { method: "POST", body: JSON.stringify({ runId: current.id }) }); } catch (e) { /* shown by the refresh */ }
    refreshSoon();
  });
}

async function start() {
  try { await api("/api/agent/runs?limit=1"); } catch (e) { return; }
  showApp();
  await loadRuns();
  await loadPipelines();
  const m = location.hash.match(/run=([A-Za-z0-9._-]+)/);
  if (m) openRun(m[1]);
  if (!start.polling) start.polling = setInterval(() => { loadRuns(); loadPipelines(); }, 5000);
}

wire();
token = takeToken();
if (token) start(); else showLogin();
