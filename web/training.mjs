// The demo page's training panel, its main-thread side: asks the worker for CHUNK training steps at a time
// ({type: "train", action: "start" | "run" | "stop"}; the worker's side is trueno_web/app/training_panel.py)
// and draws the loss per step and the held-out accuracy with the 2-D canvas API. The next chunk is asked
// for only once the last one came back, so Stop takes effect within one round-trip.
// #panel-train carries data-state ("pending", "idle", "training", "stopping", "done"), data-steps,
// data-accuracy, data-loss-points, data-accuracy-points, data-steps-per-s, data-backend and data-reason.

import { $, COLORS, context2d, el, fmt, niceTicks, plotCurve } from "./draw.mjs";

const CHUNK = 10;  // steps per message round-trip
const ACC_COLOR = "#16a34a";
const tr = { worker: null, env: null, loss: [], acc: [], last: null, stop: false, t0: 0, wallSteps: 0, budget: 400 };

// What the steps run on, said honestly: a software GPU is named as such, the CPU fallback is not a GPU.
export function backendText(env, backend) {
  if (backend !== "webgpu" || !env || !env.on_gpu) return `the CPU fallback (${backend}, no GPU)`;
  if (env.swiftshader) return "WebGPU on SwiftShader (a software GPU: it runs on the CPU)";
  return env.software ? "WebGPU on a software GPU (it runs on the CPU)" : "WebGPU (the GPU)";
}

export function setUpTraining(worker) {
  tr.worker = worker;
  $("#train-start").addEventListener("click", start);
  $("#train-stop").addEventListener("click", () => {
    tr.stop = true;
    $("#train-stop").disabled = true;
    $("#panel-train").dataset.state = "stopping";
    $("#train-meta").textContent = "stopping after the steps under way…";
  });
  drawTraining();
}

// The worker is ready (the digit panel loaded): training may start.
export function trainingReady(env) {
  tr.env = env;
  $("#train-start").disabled = false;
  $("#panel-train").dataset.state = "idle";
  $("#train-meta").textContent = `ready: will train on ${backendText(env, env.backend)}`;
}

function start() {
  Object.assign(tr, { loss: [], acc: [], last: null, stop: false, wallSteps: 0 });
  $("#train-start").disabled = true;
  $("#train-stop").disabled = false;
  document.querySelector("input[name='weights'][value='trained']").disabled = true;
  const panel = $("#panel-train");
  Object.assign(panel.dataset, { state: "training", steps: "0", reason: "" });
  $("#train-meta").textContent = "drawing random weights…";
  drawTraining();
  tr.worker.postMessage({ type: "train", action: "start" });
}

export function renderTraining(data) {
  const first = data.steps === 0 && !data.loss_steps.length && !data.done;
  if (first) tr.t0 = performance.now();  // the wall clock starts with the first steps, after the step-0 evaluation
  data.loss_steps.forEach((s, i) => tr.loss.push([s, data.losses[i]]));
  tr.acc.push(...data.accuracy);
  tr.wallSteps = data.steps;
  tr.budget = data.budget;
  tr.last = data;
  if (!data.done) tr.worker.postMessage(tr.stop ? { type: "train", action: "stop" } :
    { type: "train", action: "run", steps: CHUNK });
  showTraining(data);
}

function showTraining(data) {
  const panel = $("#panel-train");
  const perS = data.train_s > 0 ? data.steps / data.train_s : null;
  const wall = (performance.now() - tr.t0) / 1000;
  const wallPerS = data.steps > 0 && wall > 0 ? data.steps / wall : null;
  const lastLoss = tr.loss.length ? tr.loss[tr.loss.length - 1][1] : null;
  Object.assign(panel.dataset, {
    steps: String(data.steps), accuracy: String(data.last_accuracy), backend: data.backend,
    lossPoints: String(tr.loss.length), accuracyPoints: String(tr.acc.length),
    stepsPerS: perS === null ? "" : perS.toFixed(2), reason: data.reason || "",
  });
  if (data.done) {
    panel.dataset.state = "done";
    $("#train-start").disabled = false;
    $("#train-start").textContent = "Train again";
    $("#train-stop").disabled = true;
    document.querySelector("input[name='weights'][value='trained']").disabled = false;
    $("#digit-weights-label").textContent = `(trained here: ${pct(data.last_accuracy)} held-out after ${data.steps} steps)`;
  }
  const backend = backendText(tr.env, data.backend);
  $("#train-meta").textContent = data.done ?
    `${data.reason === "budget" ? "done" : "stopped"} at step ${data.steps}: ${pct(data.last_accuracy)} of the ` +
      `held-out digits right; the draw-a-digit panel can now classify with these weights` :
    panel.dataset.state === "stopping" ? "stopping after the steps under way…" :
      `step ${data.steps} of ${data.budget} on ${backend}`;
  const rows = [
    ["runs on", backend, "backend"],
    ["step", `${data.steps} of ${data.budget} (batch ${data.batch}, AdamW lr ${data.lr}, hidden ${data.hidden})`, "steps"],
    ["loss", lastLoss === null ? "–" : fmt(lastLoss, 4), "loss"],
    ["held-out accuracy", `${pct(data.last_accuracy)} of ${data.test_size} (at step ${tr.acc.length ? tr.acc[tr.acc.length - 1][0] : 0})`, "accuracy"],
    ["steps/s", perS === null ? "–" : `${perS.toFixed(1)} in the worker (${wallPerS === null ? "–" : wallPerS.toFixed(1)} ` +
      "counting evaluations and messages)", "steps_per_s"],
    ["training time", `${data.train_s.toFixed(2)} s in the worker`, "train_s"],
  ];
  $("#train-stats").replaceChildren(...rows.flatMap(([k, v, key]) => [el("dt", {}, k), el("dd", { data: { key } }, v)]));
  drawTraining();
}

const pct = (v) => (v === null || v === undefined ? "–" : `${(100 * v).toFixed(1)}%`);

// The two charts, sized from their container; before a run, empty axes with a hint.
export function drawTraining() {
  const budget = tr.budget;
  chart($("#train-loss"), tr.loss, budget, (lo, hi) => [0, Math.max(hi, 0.5) * 1.05], COLORS.gpu, false, "press Train");
  chart($("#train-accuracy"), tr.acc, budget, () => [0, 1], ACC_COLOR, true, "");
}

function chart(canvas, points, budget, yRange, color, dots, hint) {
  const W = Math.max(240, Math.min(560, canvas.parentElement.clientWidth)), H = 190;
  const pad = { l: 40, r: 10, t: 10, b: 22 };
  const ctx = context2d(canvas, W, H);
  const ys = points.map((p) => p[1]).filter(Number.isFinite);
  const [lo, hi] = yRange(Math.min(0, ...ys), ys.length ? Math.max(...ys) : 1);
  const sx = (s) => pad.l + (s / budget) * (W - pad.l - pad.r);
  const sy = (v) => H - pad.b - ((v - lo) / (hi - lo)) * (H - pad.t - pad.b);
  ctx.font = "10px system-ui, sans-serif";
  ctx.lineWidth = 1;
  ctx.fillStyle = COLORS.text;
  for (const t of niceTicks(lo, hi, 4)) {
    ctx.strokeStyle = t === lo ? COLORS.axis : COLORS.grid;
    ctx.beginPath(); ctx.moveTo(pad.l, sy(t) + 0.5); ctx.lineTo(W - pad.r, sy(t) + 0.5); ctx.stroke();
    ctx.textAlign = "right";
    ctx.fillText(hi === 1 ? `${Math.round(100 * t)}%` : fmt(t, 2), pad.l - 4, sy(t) + 3);
  }
  for (const s of niceTicks(0, budget, 4)) {
    ctx.strokeStyle = s === 0 ? COLORS.axis : COLORS.grid;
    ctx.beginPath(); ctx.moveTo(sx(s) + 0.5, pad.t); ctx.lineTo(sx(s) + 0.5, H - pad.b); ctx.stroke();
    ctx.textAlign = "center";
    ctx.fillText(String(s), sx(s), H - 8);
  }
  if (!points.length) {
    if (hint) {
      ctx.fillStyle = "#94a3b8";
      ctx.font = "13px system-ui, sans-serif";
      ctx.fillText(hint, (pad.l + W - pad.r) / 2, H / 2);
    }
    return;
  }
  plotCurve(ctx, points.map((p) => p[0]), points.map((p) => p[1]), sx, sy, color, dots ? 1.5 : 1.2, []);
  if (dots) {
    ctx.fillStyle = color;
    for (const [s, v] of points) { ctx.beginPath(); ctx.arc(sx(s), sy(v), 2.5, 0, 2 * Math.PI); ctx.fill(); }
  }
  const [s, v] = points[points.length - 1];
  ctx.fillStyle = color;
  ctx.font = "bold 11px system-ui, sans-serif";
  ctx.textAlign = sx(s) > W - 60 ? "right" : "left";
  ctx.fillText(hi === 1 ? pct(v) : fmt(v, 3), sx(s) + (ctx.textAlign === "right" ? -4 : 4), Math.max(pad.t + 10, sy(v) - 5));
}
