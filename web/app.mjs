// The demo page's main thread: starts the worker (worker.mjs: Pyodide + trueno_web), draws what it
// sends with the 2-D canvas API, and wires the controls. document.body.dataset.state goes
// "loading" -> "ready" once every panel has drawn, or "error" with the error on the page.

import { $, COLORS, context2d, el, fmt, ms, niceTicks, plotCurve } from "./draw.mjs";
import { browserKey } from "./browser.mjs";
import { gptReady, renderGpt, setUpGpt } from "./gpt.mjs";
import { drawTraining, renderTraining, setUpTraining, trainingReady } from "./training.mjs";
import { renderTry, setUpTryIt, tryCompiling, tryItReady } from "./tryit.mjs";

const BAR_COLORS = { "one-shot": "#ef4444", "batch": "#eab308", "batch + fusion": "#22c55e", "CPU fallback": "#f97316" };
const PANELS = ["env", "activations", "filters", "chain", "digits"];
const rendered = new Set();
const state = { env: null, activations: null, filters: null, chain: null, digits: null, digit: null };

// ------------------------------------------------------------------ status, errors, readiness

function setStatus(text, fraction) {
  $("#status-text").textContent = text;
  if (fraction !== undefined && fraction !== null) $("#progress").value = Math.max(0, Math.min(1, fraction));
}

function showError(message) {
  const pre = $("#error");
  pre.hidden = false;
  pre.textContent = message;
  document.body.dataset.state = "error";
  setStatus("error (see below)");
  if (!state.env) {  // the worker never said which backend: the badge says it did not start
    $("#badge").className = "badge error";
    $(".badge-backend").textContent = "not started";
    $(".badge-adapter").textContent = "see the message below";
  }
  document.querySelectorAll(".panel[data-state='busy'], .panel[data-state='pending']")
    .forEach((p) => { p.dataset.state = "error"; });
}

// ------------------------------------------------------------------ start-up stages

const stages = [];  // {name, label, start, ms} in the order they began; document.body.dataset.stages

function renderStage(msg) {
  let row = document.querySelector(`#stages li[data-stage='${msg.name}']`);
  if (!row) {
    row = el("li", { "data-stage": msg.name });
    row.append(el("span", { class: "stage-label" }, msg.label), el("progress", { max: "1" }), el("span", { class: "stage-ms" }, ""));
    $("#stages").append(row);
    stages.push({ name: msg.name, label: msg.label, start: Math.round(msg.start), ms: null });
  }
  row.dataset.state = msg.state;
  if (msg.state === "done") {
    row.querySelector(".stage-label").textContent = msg.label;
    stages.find((s) => s.name === msg.name).label = msg.label;
    row.querySelector("progress").value = 1;
    row.querySelector(".stage-ms").textContent = ms(msg.ms);
    stages.find((s) => s.name === msg.name).ms = Math.round(msg.ms);
  }
  document.body.dataset.stages = JSON.stringify(stages);
}

// navigator.gpu answers in milliseconds: the badge says what is here before Python starts
function renderAdapter(data) {
  if (state.env) return;
  const info = data.info || {};
  const name = [info.vendor, info.architecture, info.description || info.device].filter(Boolean).join(" · ");
  $("#badge").className = "badge " + (data.adapter ? "gpu" : "cpu");
  $(".badge-backend").textContent = data.adapter ? "WebGPU adapter" : "no WebGPU: CPU fallback";
  $(".badge-adapter").textContent = data.adapter ? (name || "adapter") + ` · found in ${ms(data.ms)}` : "starting Python…";
}

function renderFirst(data) {
  const p = $("#first-result");
  p.hidden = false;
  if (data.error) {
    p.textContent = `WebGPU from JS did not run a first kernel: ${data.error}`;
    return;
  }
  p.dataset.output = JSON.stringify(data.output);
  document.body.dataset.firstResultMs = String(Math.round(performance.now()));
  p.textContent = `First result, from JS on WebGPU in ${ms(data.ms)}: 2 × [${data.input.join(", ")}] = ` +
    `[${data.output.join(", ")}] (one WGSL kernel, while Python loads)`;
}

// The start-up snapshot's state (worker.mjs): document.body.dataset.snapshot; a failure is only a warning
// (the next visit starts Python without one again).
function renderSnapshot(msg) {
  document.body.dataset.snapshot = msg.state;
  if (msg.state === "failed") console.warn("the start-up snapshot was not made:", msg.error);
}

function markRendered(name) {
  rendered.add(name);
  if (name !== "env" && !document.body.dataset.firstPanelMs) {
    document.body.dataset.firstPanelMs = String(Math.round(performance.now()));
  }
  if (document.body.dataset.state === "loading" && PANELS.every((p) => rendered.has(p))) {
    document.body.dataset.state = "ready";
    document.body.dataset.readyMs = String(Math.round(performance.now()));
    setStatus(`ready: everything computed in ${((performance.now()) / 1000).toFixed(1)} s since the page opened`, 1);
    $("#status").classList.add("done");
  }
}

const plural = (n, word, many = word + "s") => `${n} ${n === 1 ? word : many}`;
// The counts of one run; on a CPU backend nothing crosses a bus, so it names no transfers at all.
const countsText = (s) => (s.uploads || s.downloads) ?
  `${plural(s.uploads, "upload")} · ${plural(s.dispatches, "dispatch", "dispatches")} · ` +
  `${plural(s.submits, "submit")} · ${plural(s.downloads, "download")}` :
  `${plural(s.dispatches, "dispatch", "dispatches")} · ${plural(s.submits, "submit")} · nothing to transfer`;
const onGpu = () => !!(state.env && state.env.on_gpu);

// ------------------------------------------------------------------ no-WebGPU banner

// One line: why there is no WebGPU and the advice for this browser; the others behind a disclosure.
function renderBanner(note, advice) {
  const banner = $("#no-webgpu");
  const key = browserKey();
  const mine = advice.find((a) => a.key === key) || advice.find((a) => a.key === "other");
  const line = el("span", { class: "banner-line" }, note + (mine ? ` To get WebGPU (${mine.browser}): ${mine.text}` : ""));
  const others = advice.filter((a) => a !== mine);
  banner.replaceChildren(line, ...(others.length ? [el("details", { class: "banner-others" },
    el("summary", {}, "other browsers"),
    el("ul", {}, ...others.map((a) => el("li", { data: { browser: a.key } }, el("b", {}, a.browser), ": ", a.text))))] : []));
  banner.dataset.browser = key;
  banner.hidden = false;
}

// ------------------------------------------------------------------ badge

function renderEnv(env) {
  state.env = env;
  const a = env.adapter || {};
  const badge = $("#badge");
  badge.className = "badge " + (env.on_gpu ? (env.software ? "gpu software" : "gpu") : "cpu");
  badge.dataset.backend = env.backend;
  document.body.dataset.compare = env.compare ? "yes" : "no";
  document.body.dataset.gpu = env.on_gpu ? "yes" : "no";  // .gpu-only / .cpu-only text follows it
  $(".badge-backend").textContent = env.on_gpu ? `WebGPU · ${env.backend}` : `CPU fallback · ${env.backend}`;
  const adapterText = [a.vendor, a.device || a.architecture, a.description].filter(Boolean)
    .filter((v, i, all) => all.indexOf(v) === i).join(" · ");
  $(".badge-adapter").textContent = (adapterText || "adapter") + (env.swiftshader ? " · SwiftShader (software GPU)" :
    env.software ? " · software" : "");
  badge.title = Object.entries(a).map(([k, v]) => `${k}: ${v}`).join("\n");
  if (env.fallback_note) renderBanner(env.fallback_note, env.enable_webgpu || []);
  if (env.software_note) {
    const note = $("#software-note");
    note.hidden = false;
    note.textContent = env.software_note;
  }
  document.querySelectorAll(".backend-name").forEach((e) => { e.textContent = env.on_gpu ? "the GPU (" + env.backend + ")" : `the CPU fallback (${env.backend})`; });
  document.querySelectorAll(".cpu-name").forEach((e) => { e.textContent = env.cpu_backend; });
  $("#footer-env").textContent = `trueno_web ${env.trueno_web} · Python ${env.python} on Pyodide ${env.pyodide} in a Web Worker · ` +
    `CPU fallback: ${(env.cpu_adapter || {}).device || env.cpu_backend} · worker ready in ${ms(env.boot_ms)}`;
  markRendered("env");
}

// ------------------------------------------------------------------ panel 1: activations

function plotDots(ctx, xs, ys, sx, sy, color, every) {
  ctx.fillStyle = color;
  for (let i = 0; i < xs.length; i += every) {
    if (!Number.isFinite(ys[i])) continue;
    ctx.beginPath(); ctx.arc(sx(xs[i]), sy(ys[i]), 2.2, 0, 2 * Math.PI); ctx.fill();
  }
}

const PLOT_H = 160, STRIP_H = 34;

// One activation: the device's curve (solid), the CPU fallback's values (dots) and, under it, a strip
// with their difference device - CPU, scaled to its largest magnitude (flat: bit-identical).
function drawActivation(canvas, xs, row, show, W) {
  const strip = row.cpu ? STRIP_H : 0;
  const H = PLOT_H + strip, pad = { l: 34, r: 8, t: 8, b: 20 };
  const ctx = context2d(canvas, W, H);
  let lo = Infinity, hi = -Infinity;
  for (const ys of [row.gpu, row.cpu || []]) for (const v of ys) if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (!(hi > lo)) { lo -= 1; hi += 1; }
  const span = hi - lo;
  lo -= 0.08 * span; hi += 0.08 * span;
  const x0 = xs[0], x1 = xs[xs.length - 1];
  const sx = (x) => pad.l + (x - x0) / (x1 - x0) * (W - pad.l - pad.r);
  const sy = (y) => PLOT_H - pad.b - (y - lo) / (hi - lo) * (PLOT_H - pad.t - pad.b);
  ctx.font = "10px system-ui, sans-serif";
  ctx.fillStyle = COLORS.text;
  ctx.strokeStyle = COLORS.grid;
  ctx.lineWidth = 1;
  for (const gx of [-4, -2, 0, 2, 4]) {
    ctx.beginPath(); ctx.moveTo(sx(gx), pad.t); ctx.lineTo(sx(gx), PLOT_H - pad.b); ctx.stroke();
    ctx.textAlign = "center"; ctx.fillText(String(gx), sx(gx), PLOT_H - 6);
  }
  for (const gy of niceTicks(lo, hi, 4)) {
    ctx.beginPath(); ctx.moveTo(pad.l, sy(gy)); ctx.lineTo(W - pad.r, sy(gy)); ctx.stroke();
    ctx.textAlign = "right"; ctx.fillText(fmt(gy, 2), pad.l - 4, sy(gy) + 3);
  }
  ctx.strokeStyle = COLORS.axis;
  if (lo < 0 && hi > 0) { ctx.beginPath(); ctx.moveTo(pad.l, sy(0)); ctx.lineTo(W - pad.r, sy(0)); ctx.stroke(); }
  ctx.beginPath(); ctx.moveTo(sx(0), pad.t); ctx.lineTo(sx(0), PLOT_H - pad.b); ctx.stroke();
  if (show.gpu) plotCurve(ctx, xs, row.gpu, sx, sy, COLORS.gpu, 2.5, []);
  if (show.cpu && row.cpu) plotDots(ctx, xs, row.cpu, sx, sy, COLORS.cpu, 8);
  if (strip) drawDiffStrip(ctx, xs, row, sx, PLOT_H, W, pad);
}

function drawDiffStrip(ctx, xs, row, sx, top, W, pad) {
  const mid = top + STRIP_H / 2 - 2, half = STRIP_H / 2 - 6;
  const d = row.gpu.map((g, i) => g - row.cpu[i]);
  const worst = d.reduce((m, v) => (Number.isFinite(v) ? Math.max(m, Math.abs(v)) : m), 0);
  ctx.fillStyle = "#f8fafc";
  ctx.fillRect(pad.l, top - 2, W - pad.l - pad.r, STRIP_H - 2);
  ctx.strokeStyle = COLORS.axis;
  ctx.lineWidth = 1;
  ctx.beginPath(); ctx.moveTo(pad.l, mid + 0.5); ctx.lineTo(W - pad.r, mid + 0.5); ctx.stroke();
  if (worst > 0) plotCurve(ctx, xs, d, sx, (v) => mid - (v / worst) * half, COLORS.diff, 1.2, []);
  ctx.font = "9px system-ui, sans-serif";
  ctx.fillStyle = COLORS.text;
  ctx.textAlign = "right";
  ctx.fillText("Δ", pad.l - 4, mid + 3);
  ctx.textAlign = "left";
  ctx.fillText(worst > 0 ? `±${fmt(worst, 2)}` : "identical", pad.l + 3, top + 7);
}


function paramsText(params) {
  const entries = Object.entries(params || {});
  return entries.length ? "(" + entries.map(([k, v]) => `${k}=${v}`).join(", ") + ")" : "";
}

function timingText(t) {
  return `first run ${ms(t.first)}, then ${ms(t.ms)} (median of ${t.runs})`;
}

function renderActivations(data) {
  state.activations = data;
  const grid = $("#activation-grid");
  grid.replaceChildren();
  for (const row of data.ops) {
    const canvas = el("canvas", { class: "plot", data: { op: row.name } });
    const fig = el("figure", { class: "plot-card", data: { op: row.name } },
      el("figcaption", {}, el("span", { class: "name" }, el("b", {}, row.name), " ", el("span", { class: "params" }, paramsText(row.params))),
        data.compare ? el("span", { class: "diff", data: { key: "max_abs_diff" } }, `max |Δ| ${fmt(row.max_abs_diff, 2)}`) : ""),
      canvas);
    fig.title = `${row.name}${paramsText(row.params)}: ${row.doc}`;
    grid.append(fig);
  }
  const table = $("#probe-table");
  const cell = (p) => el("td", { data: { x: String(p.x), gpu: String(p.gpu), cpu: String(p.cpu) } },
    el("span", { class: "gpu-value" }, fmt(p.gpu, 8)),
    ...(data.compare ? [" / ", el("span", { class: "cpu-value" }, fmt(p.cpu, 8))] : []));
  const head = el("tr", {}, el("th", {}, "op"), ...data.probes.map((x) => el("th", {}, `x = ${x}`)));
  table.replaceChildren(el("thead", {}, head), el("tbody", {}, ...data.ops.map((row) =>
    el("tr", { data: { op: row.name } }, el("th", {}, row.name + paramsText(row.params)), ...row.probes.map(cell)))));
  const gpu = data.ms.gpu, cpu = data.ms.cpu;
  $("#activations-meta").textContent = `${data.ops.length} ops in one batch on ${data.backend} (${countsText(data.stats)}): ` +
    timingText(gpu) + (state.env && state.env.on_gpu ? "; the first run compiles the pipelines" : "") +
    (cpu ? ` · CPU fallback (${data.cpu_backend}): ${timingText(cpu)}` : "");
  drawActivations();
  $("#panel-activations").dataset.state = "done";
  markRendered("activations");
}

function drawActivations() {
  const data = state.activations;
  if (!data) return;
  const show = { gpu: $("#show-gpu").checked, cpu: $("#show-cpu").checked };
  document.querySelectorAll("#activation-grid canvas").forEach((canvas, i) =>
    drawActivation(canvas, data.x, data.ops[i], show, Math.max(200, canvas.parentElement.clientWidth - 8)));
}

// ------------------------------------------------------------------ panel 2: image filtering

function drawGray(canvas, values, h, w, map) {
  canvas.width = w;
  canvas.height = h;
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(w, h);
  const px = img.data;
  for (let i = 0; i < h * w; i++) {
    const g = Math.max(0, Math.min(255, Math.round(map(values[i]) * 255)));
    px[4 * i] = px[4 * i + 1] = px[4 * i + 2] = g;
    px[4 * i + 3] = 255;
  }
  ctx.putImageData(img, 0, 0);
}

function selectedFilter() {
  const checked = document.querySelector("input[name='filter']:checked");
  return checked ? checked.value : "blur";
}

function renderFilters(data) {
  state.filters = data;
  const [h, w] = data.shape;
  drawGray($("#img-original"), data.image, h, w, (v) => v);
  drawFilter();
  $("#panel-filters").dataset.state = "done";
  markRendered("filters");
}

function drawFilter() {
  const data = state.filters;
  if (!data) return;
  const name = selectedFilter();
  const f = data.filters[name];
  const [oh, ow] = f.shape;
  let map = (v) => v;
  if (name === "edges") {
    const top = Math.sqrt(Math.max(f.summary.max, 1e-12));
    map = (v) => Math.sqrt(Math.max(v, 0)) / top;
  }
  const canvas = $("#img-filtered");
  drawGray(canvas, f.output, oh, ow, map);
  canvas.dataset.filter = name;
  $("#filtered-caption").textContent = `${name}, ${oh}×${ow} (valid)`;
  const dl = $("#filter-stats");
  dl.dataset.filter = name;
  const compiling = state.env && state.env.on_gpu ? ", compiling pipelines" : "";
  const rows = [
    ["filter", f.doc, "doc"],
    [`time on ${f.gpu.backend}`, `${ms(f.gpu.ms)} warm (first run ${ms(f.gpu.first_ms)}${compiling})`, "gpu_ms"],
    ...(f.cpu ? [[`CPU fallback (${f.cpu.backend})`, `${ms(f.cpu.ms)} warm (first run ${ms(f.cpu.first_ms)})`, "cpu_ms"]] : []),
    ["one batch", countsText(f.gpu.stats), "stats"],
    ["output sum", fmt(f.summary.sum, 10), "sum"],
    ["output min", fmt(f.summary.min, 8), "min"],
    ["output max", fmt(f.summary.max, 8), "max"],
    ...(f.cpu ? [["max |device − CPU|", fmt(f.max_abs_diff, 2), "max_abs_diff"]] : []),
  ];
  dl.replaceChildren(...rows.flatMap(([k, v, key]) => [el("dt", {}, k), el("dd", { data: { key } }, v)]));
}

// ------------------------------------------------------------------ panel 3: the batch at work

function renderChain(data) {
  state.chain = data;
  $("#chain-text").textContent = data.chain;
  drawChain();
  const keys = ["uploads", "downloads", "bytes_up", "bytes_down", "dispatches", "submits"];
  const transfer = new Set(keys.slice(0, 4));  // all 0 on a CPU backend: those columns show only on a GPU
  const cls = (k) => (transfer.has(k) ? { class: "gpu-only" } : {});
  const columns = ["variant", "backend", "median ms", "fastest", "slowest", "runs", ...keys,
    ...(data.compare ? ["max |Δ| vs CPU"] : [])];
  const table = $("#chain-table");
  table.replaceChildren(
    el("thead", {}, el("tr", {}, ...columns.map((t) => el("th", cls(t), t)))),
    el("tbody", {}, ...data.variants.map((v) => el("tr", { data: { variant: v.name } },
      el("th", {}, v.name), el("td", { data: { key: "backend" } }, v.backend),
      el("td", { data: { key: "ms" } }, v.ms.toFixed(2)),
      el("td", { data: { key: "ms_min" } }, v.ms_min.toFixed(2)),
      el("td", { data: { key: "ms_max" } }, v.ms_max.toFixed(2)),
      el("td", { data: { key: "runs" } }, String(v.runs)),
      ...keys.map((k) => el("td", { ...cls(k), data: { key: k } }, String(v.stats[k]))),
      ...(data.compare ? [el("td", { data: { key: "max_abs_diff" } }, fmt(v.max_abs_diff, 2))] : [])))));
  table.dataset.n = String(data.n);
  $("#chain-note").hidden = data.variants.some((v) => v.stats.uploads > 0);
  $("#chain-meta").textContent = `sum of the result: ${fmt(data.checksum, 10)}`;
  $("#chain-meta").dataset.checksum = String(data.checksum);
  const panel = $("#panel-chain");
  panel.dataset.state = "done";
  panel.dataset.n = String(data.n);
  $("#chain-run").disabled = false;
  $("#chain-size").disabled = false;
  if (rendered.has("chain")) setStatus(`chain at ${data.n.toLocaleString("en-US")} elements done`, 1);
  markRendered("chain");
}

// One bar per variant (the median), a line from its fastest to its slowest run; on a narrow screen
// the names go above the bars instead of left of them.
function drawChain() {
  const data = state.chain;
  if (!data) return;
  const canvas = $("#chain-chart");
  const W = Math.min(900, Math.max(260, canvas.parentElement.clientWidth));
  const narrow = W < 520;
  const rowH = narrow ? 62 : 46, top = 24, left = narrow ? 4 : 130, right = 64, barY = narrow ? 16 : 0;
  const H = top + rowH * data.variants.length + 8;
  const ctx = context2d(canvas, W, H);
  const max = Math.max(...data.variants.map((v) => v.ms_max), 1e-6);
  const sx = (v) => left + Math.max(2, (v / max) * (W - left - right));
  ctx.font = "12px system-ui, sans-serif";
  ctx.fillStyle = COLORS.text;
  ctx.textAlign = "left";
  ctx.fillText(`${data.n.toLocaleString("en-US")} elements · ms (shorter is faster)`, left, 14);
  data.variants.forEach((v, i) => {
    const y = top + i * rowH + barY;
    ctx.fillStyle = BAR_COLORS[v.name] || COLORS.gpu;
    ctx.fillRect(left, y, sx(v.ms) - left, 20);
    ctx.strokeStyle = COLORS.text;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.moveTo(sx(v.ms_min), y + 10); ctx.lineTo(sx(v.ms_max), y + 10);
    for (const e of [v.ms_min, v.ms_max]) { ctx.moveTo(sx(e), y + 5); ctx.lineTo(sx(e), y + 15); }
    ctx.stroke();
    ctx.fillStyle = COLORS.text;
    ctx.font = "bold 12px system-ui, sans-serif";
    ctx.textAlign = narrow ? "left" : "right";
    ctx.fillText(v.name, narrow ? left : left - 8, narrow ? y - 4 : y + 14);
    ctx.font = "12px system-ui, sans-serif";
    ctx.textAlign = "left";
    ctx.fillText(ms(v.ms), sx(v.ms_max) + 6, y + 14);
    const s = v.stats;
    ctx.fillStyle = "#64748b";
    if (narrow) ctx.font = "11px system-ui, sans-serif";
    const moved = s.bytes_up + s.bytes_down ? ` · ${((s.bytes_up + s.bytes_down) / 1048576).toFixed(2)} MiB moved` : "";
    ctx.fillText(narrow ? countsText(s) : `${v.backend}: ${countsText(s)}${moved}`, left, y + 36);
  });
}

// ------------------------------------------------------------------ panel 4: draw a digit
//
// The pad keeps the strokes as drawn ([x0, y0, x1, y1, ...] in CSS pixels, one array per stroke) and,
// when a stroke ends, sends them all to the worker; Python (trueno_web/app/digits.py) makes the 8x8
// picture and classifies it. One request at a time: strokes finished meanwhile go in the next one.
// #panel-digits carries data-strokes (strokes in the result shown), data-pending ("1" while a newer
// drawing is not shown yet), data-predicted, data-backend, data-pixels and data-probabilities.

const PAD = 280;  // the pad's side, CSS pixels
const PEN = 16;   // the ink shown on the pad; the model's pen width is chosen in Python (see digits.py)
const pad = { strokes: [], current: null, pointer: null, requested: 0, inflight: false, worker: null };

function padContext() {
  const ctx = $("#digit-pad").getContext("2d");
  ctx.strokeStyle = ctx.fillStyle = "#0f172a";
  ctx.lineWidth = PEN;
  ctx.lineCap = ctx.lineJoin = "round";
  return ctx;
}

function drawPad() {
  const ctx = context2d($("#digit-pad"), PAD, PAD);
  if (!pad.strokes.length) {
    ctx.fillStyle = "#94a3b8";
    ctx.font = "14px system-ui, sans-serif";
    ctx.textAlign = "center";
    ctx.fillText("draw a digit here", PAD / 2, PAD / 2 + 5);
  }
  const p = padContext();
  for (const s of pad.strokes) {
    p.beginPath();
    p.moveTo(s[0], s[1]);
    for (let i = 2; i < s.length; i += 2) p.lineTo(s[i], s[i + 1]);
    if (s.length === 2) p.lineTo(s[0] + 0.01, s[1]);  // a dot
    p.stroke();
  }
}

function padPoint(canvas, e) {
  const r = canvas.getBoundingClientRect();
  const x = (e.clientX - r.left - canvas.clientLeft) * PAD / canvas.clientWidth;
  const y = (e.clientY - r.top - canvas.clientTop) * PAD / canvas.clientHeight;
  return [Math.round(x * 10) / 10, Math.round(y * 10) / 10];
}

function drawPreview(pixels) {
  const S = 14, ctx = context2d($("#digit-preview"), 8 * S, 8 * S);
  for (let i = 0; i < 64; i++) {
    const g = Math.round(255 * (1 - (pixels ? pixels[i] : 0) / 16));
    ctx.fillStyle = `rgb(${g},${g},${g})`;
    ctx.fillRect((i % 8) * S, Math.floor(i / 8) * S, S, S);
  }
  ctx.strokeStyle = COLORS.grid;
  ctx.lineWidth = 1;
  for (let k = 1; k < 8; k++) {
    ctx.beginPath(); ctx.moveTo(k * S + 0.5, 0); ctx.lineTo(k * S + 0.5, 8 * S); ctx.stroke();
    ctx.beginPath(); ctx.moveTo(0, k * S + 0.5); ctx.lineTo(8 * S, k * S + 0.5); ctx.stroke();
  }
}

function drawDigitChart(probs, predicted) {
  const W = Math.min(320, $("#digit-chart").parentElement.clientWidth), H = 180, pad_ = { l: 34, r: 6, t: 16, b: 22 };
  const ctx = context2d($("#digit-chart"), W, H);
  const bw = (W - pad_.l - pad_.r) / 10;
  const sy = (p) => H - pad_.b - p * (H - pad_.t - pad_.b);
  ctx.font = "11px system-ui, sans-serif";
  ctx.lineWidth = 1;
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    ctx.strokeStyle = t === 0 ? COLORS.axis : COLORS.grid;
    ctx.beginPath(); ctx.moveTo(pad_.l, sy(t) + 0.5); ctx.lineTo(W - pad_.r, sy(t) + 0.5); ctx.stroke();
    ctx.fillStyle = COLORS.text;
    ctx.textAlign = "right";
    ctx.fillText(String(t), pad_.l - 5, sy(t) + 4);
  }
  for (let d = 0; d < 10; d++) {
    const x = pad_.l + d * bw;
    const p = probs && probs.length ? probs[d] : 0;
    ctx.fillStyle = d === predicted ? COLORS.gpu : "#cbd5e1";
    ctx.fillRect(x + 4, sy(p), bw - 8, Math.max(p > 0 ? 1 : 0, sy(0) - sy(p)));
    ctx.fillStyle = d === predicted ? COLORS.gpu : COLORS.text;
    ctx.font = (d === predicted ? "bold " : "") + "12px system-ui, sans-serif";
    ctx.textAlign = "center";
    ctx.fillText(String(d), x + bw / 2, H - 6);
    if (p >= 0.005) {
      ctx.font = "10px system-ui, sans-serif";
      ctx.fillStyle = COLORS.text;
      ctx.fillText(p >= 0.995 ? "1" : p.toFixed(2).replace(/^0/, ""), x + bw / 2, sy(p) - 3);
    }
  }
}

function renderDigitsReady(info) {
  state.digits = info;
  $("#digit-accuracy").textContent =
    `${(100 * info.test_accuracy).toFixed(1)}% right on the ${info.test_size} held-out digits`;
  $("#digit-meta").textContent = `model loaded on ${info.backend} in ${ms(info.load_ms)}` +
    (info.cpu_backend && info.cpu_backend !== info.backend ? ` (and on ${info.cpu_backend} to compare)` : "");
  const panel = $("#panel-digits");
  panel.dataset.state = "done";
  panel.dataset.weights = "shipped";
  markRendered("digits");
  trainingReady(state.env);
  gptReady(state.env);
}

// Which weights classify the drawings (the worker's answer to a switch, or to a new training run): the
// radio buttons and the accuracy follow, and a drawing on the pad is classified again with them.
function renderWeights(info) {
  const panel = $("#panel-digits");
  panel.dataset.weights = info.weights;
  document.querySelector(`input[name='weights'][value='${info.weights}']`).checked = true;
  $("#digit-accuracy").textContent = `${info.weights === "trained" ? "weights trained in this tab, " : ""}` +
    `${(100 * info.weights_accuracy).toFixed(1)}% right on the ${state.digits.test_size} held-out digits`;
  if (pad.strokes.length) strokeDone();
}

function showDigit(data) {
  const panel = $("#panel-digits");
  const empty = data.predicted === null || data.predicted === undefined;
  state.digit = data;
  drawPreview(data.pixels);
  drawDigitChart(data.probabilities, empty ? -1 : data.predicted);
  $("#digit-predicted").textContent = empty ? "–" : String(data.predicted);
  // "not sure" (app/not_sure.py): the best guess stays, greyed, and the answer line says so and why
  const notSure = !empty && !!data.not_sure;
  $("#digit-predicted").classList.toggle("not-sure", notSure);
  $("#digit-confidence").textContent = empty ? "" : notSure ? data.answer : `p = ${fmt(data.probabilities[data.predicted], 3)}`;
  $("#digit-why").textContent = notSure ? data.reasons.join("; ") : "";
  $("#digit-timing").textContent = empty ? "the ten probabilities" :
    `on ${data.backend}: ${ms(data.ms)} (${onGpu() ? "upload, one batch, read back" : "one batch"}) · weights: ${data.weights_label} · ` +
    `drawing → 8×8 in ${ms(data.prepare_ms)}` +
    (data.cpu_backend && data.cpu_backend !== data.backend ?
      ` · CPU fallback (${data.cpu_backend}): max |Δp| ${fmt(data.max_abs_diff, 2)}` : "");
  Object.assign(panel.dataset, {
    predicted: empty ? "" : String(data.predicted), backend: data.backend, ms: String(data.ms),
    pixels: data.pixels.join(","), probabilities: Array.from(data.probabilities || []).join(","),
    cpuProbabilities: Array.from(data.cpu_probabilities || []).join(","), strokes: String(data.strokes),
    shownWeights: data.weights || "", notSure: notSure ? "1" : "0",
  });
}

function classifyDrawing() {
  pad.inflight = true;
  const seq = pad.requested;
  pad.worker.postMessage({ type: "classify", seq, strokes: pad.strokes.map((s) => s.slice()) });
}

function strokeDone() {
  pad.requested++;
  $("#panel-digits").dataset.pending = "1";
  if (!pad.inflight) classifyDrawing();
}

function renderDigit(data) {
  pad.inflight = false;
  if (data.seq !== pad.requested) {  // the drawing changed meanwhile: show the newer one instead
    if (pad.strokes.length) return classifyDrawing();
  } else {
    showDigit(data);
  }
  $("#panel-digits").dataset.pending = "0";
}

function clearPad() {
  pad.strokes = [];
  pad.current = null;
  pad.requested++;
  drawPad();
  showDigit({ pixels: new Array(64).fill(0), probabilities: [], predicted: null, backend: "", ms: 0, strokes: 0 });
  if (!pad.inflight) $("#panel-digits").dataset.pending = "0";
}

function setUpPad(worker) {
  pad.worker = worker;
  const canvas = $("#digit-pad");
  drawPad();
  drawPreview(null);
  drawDigitChart(null, -1);
  const panel = $("#panel-digits");
  Object.assign(panel.dataset, { pending: "0", strokes: "0", predicted: "" });
  canvas.addEventListener("pointerdown", (e) => {
    if (pad.current || (e.pointerType === "mouse" && e.button !== 0)) return;
    e.preventDefault();
    canvas.setPointerCapture(e.pointerId);
    pad.pointer = e.pointerId;
    pad.current = padPoint(canvas, e);
    pad.strokes.push(pad.current);
    if (pad.strokes.length === 1) drawPad();  // the hint goes
    const ctx = padContext();
    ctx.beginPath(); ctx.arc(pad.current[0], pad.current[1], PEN / 2, 0, 2 * Math.PI); ctx.fill();
  });
  canvas.addEventListener("pointermove", (e) => {
    if (!pad.current || e.pointerId !== pad.pointer) return;
    const ctx = padContext();
    const events = e.getCoalescedEvents ? e.getCoalescedEvents() : [];
    for (const ev of events.length ? events : [e]) {
      const [x, y] = padPoint(canvas, ev);
      const s = pad.current, n = s.length;
      if (x === s[n - 2] && y === s[n - 1]) continue;
      ctx.beginPath(); ctx.moveTo(s[n - 2], s[n - 1]); ctx.lineTo(x, y); ctx.stroke();
      s.push(x, y);
    }
  });
  const end = (e) => {
    if (!pad.current || e.pointerId !== pad.pointer) return;
    pad.current = null;
    pad.pointer = null;
    strokeDone();
  };
  canvas.addEventListener("pointerup", end);
  canvas.addEventListener("pointercancel", end);
  $("#digit-clear").addEventListener("click", clearPad);
  document.querySelectorAll("input[name='weights']").forEach((r) => r.addEventListener("change", () => {
    worker.postMessage({ type: "weights", weights: r.value });
  }));
}

// ------------------------------------------------------------------ the worker

function start() {
  let worker;
  try {
    worker = new Worker(new URL("./worker.mjs", import.meta.url), { type: "module" });
  } catch (e) {
    showError("This browser cannot start the page's module Web Worker: " + e);
    return;
  }
  worker.onmessage = (event) => {
    const msg = event.data;
    try {
      if (msg.type === "progress") setStatus(msg.text, msg.fraction);
      else if (msg.type === "stage") renderStage(msg);
      else if (msg.type === "adapter") renderAdapter(msg.data);
      else if (msg.type === "first") renderFirst(msg.data);
      else if (msg.type === "snapshot") renderSnapshot(msg);
      else if (msg.type === "error") showError(msg.message);
      else if (msg.type === "env") renderEnv(msg.data);
      else if (msg.type === "activations") renderActivations(msg.data);
      else if (msg.type === "filters") renderFilters(msg.data);
      else if (msg.type === "chain") renderChain(msg.data);
      else if (msg.type === "digits") renderDigitsReady(msg.data);
      else if (msg.type === "digit") renderDigit(msg.data);
      else if (msg.type === "training") renderTraining(msg.data);
      else if (msg.type === "weights") renderWeights(msg.data);
      else if (msg.type === "gpt") renderGpt(msg.data);
      else if (msg.type === "examples") tryItReady(msg.data);
      else if (msg.type === "try") renderTry(msg.data);
      else if (msg.type === "compiling") tryCompiling(msg.n);
    } catch (e) {
      showError(`drawing ${msg.type} failed: ${e && e.stack || e}`);
    }
  };
  worker.onerror = (event) => {
    event.preventDefault();
    showError("the worker failed: " + (event.message || "could not load worker.mjs or its imports (config.mjs, Pyodide)"));
  };
  worker.postMessage({ type: "start", chainSize: Number($("#chain-size").value) });

  setUpPad(worker);
  setUpTraining(worker);
  setUpGpt(worker);
  setUpTryIt(worker);
  // canvases are sized from their container: redraw them when it changes width (in the next frame, so
  // that the redraw's own layout change is not delivered in the same ResizeObserver round)
  let lastWidth = 0;
  new ResizeObserver(() => requestAnimationFrame(() => {
    const width = $("main").clientWidth;
    if (width === lastWidth) return;
    lastWidth = width;
    drawActivations();
    drawChain();
    drawTraining();
    const d = state.digit;
    drawDigitChart(d ? d.probabilities : null, d && d.predicted !== null && d.predicted !== undefined ? d.predicted : -1);
  })).observe($("main"));
  $("#show-gpu").addEventListener("change", drawActivations);
  $("#show-cpu").addEventListener("change", drawActivations);
  document.querySelectorAll("input[name='filter']").forEach((r) => r.addEventListener("change", drawFilter));
  $("#chain-run").addEventListener("click", () => {
    const n = Number($("#chain-size").value);
    $("#panel-chain").dataset.state = "busy";
    $("#chain-run").disabled = true;
    $("#chain-size").disabled = true;
    $("#status").classList.remove("done");
    setStatus(`running the chain at ${n.toLocaleString("en-US")} elements`, 0);
    worker.postMessage({ type: "chain", n });
  });
}

window.addEventListener("error", (e) => showError(String(e.error && e.error.stack || e.message)));
window.addEventListener("unhandledrejection", (e) => showError(String(e.reason && e.reason.stack || e.reason)));
start();
