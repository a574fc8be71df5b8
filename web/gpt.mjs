// The demo page's tiny-GPT panel, its main-thread side: asks the worker for CHUNK characters at a time
// ({type: "gpt", action: "start" | "run" | "stop"}; the worker's side is trueno_web/app/gpt_panel.py) and
// shows the text as it comes. The next chunk is asked for only once the last one came back, so Stop takes
// effect within one round-trip. #panel-gpt carries data-state ("pending", "idle", "generating", "stopping",
// "done"), data-chars, data-chars-per-s, data-backend, data-reason, data-seed and data-error (bad input).

import { $, el } from "./draw.mjs";
import { backendText } from "./training.mjs";

const CHUNK = 4;  // characters per message round-trip
const gpt = { worker: null, env: null, stop: false, text: "", prompt: "", t0: 0 };

export function setUpGpt(worker) {
  gpt.worker = worker;
  $("#gpt-start").addEventListener("click", start);
  $("#gpt-stop").addEventListener("click", () => {
    gpt.stop = true;
    $("#gpt-stop").disabled = true;
    $("#panel-gpt").dataset.state = "stopping";
    $("#gpt-meta").textContent = "stopping after the characters under way…";
  });
}

// The worker is ready (the digit panel loaded): generating may start.
export function gptReady(env) {
  gpt.env = env;
  $("#gpt-start").disabled = false;
  $("#panel-gpt").dataset.state = "idle";
  $("#gpt-meta").textContent = `ready: will sample on ${backendText(env, env.backend)}`;
}

function start() {
  Object.assign(gpt, { stop: false, text: "", prompt: "" });
  $("#gpt-start").disabled = true;
  $("#gpt-stop").disabled = false;
  Object.assign($("#panel-gpt").dataset, { state: "generating", chars: "0", reason: "", error: "" });
  $("#gpt-meta").textContent = "loading the model…";
  gpt.worker.postMessage({
    type: "gpt", action: "start", prompt: $("#gpt-prompt").value, seed: $("#gpt-seed").value,
    temperature: $("#gpt-temperature").value, chars: $("#gpt-length").value,
  });
}

export function renderGpt(data) {
  const panel = $("#panel-gpt");
  if (data.error) {  // bad input: said in the panel, the page goes on
    Object.assign(panel.dataset, { state: "idle", error: data.error });
    $("#gpt-meta").textContent = data.error;
    $("#gpt-start").disabled = false;
    $("#gpt-stop").disabled = true;
    return;
  }
  if (data.chars === 0 && !data.done) gpt.t0 = performance.now();
  if (!data.done) gpt.worker.postMessage(gpt.stop ? { type: "gpt", action: "stop" } :
    { type: "gpt", action: "run", n: CHUNK });
  gpt.prompt = data.prompt;
  gpt.text = data.text;
  const pre = $("#gpt-text");
  const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
  pre.replaceChildren(el("b", {}, data.prompt), data.text.slice(data.prompt.length));
  if (atBottom) pre.scrollTop = pre.scrollHeight;
  const perS = data.gen_s > 0 ? data.chars / data.gen_s : null;
  const wall = (performance.now() - gpt.t0) / 1000;
  Object.assign(panel.dataset, {
    chars: String(data.chars), backend: data.backend, reason: data.reason || "", seed: String(data.seed),
    charsPerS: perS === null ? "" : perS.toFixed(2),
  });
  const c = data.config;
  $("#gpt-size").textContent = `${c.n_layers} transformer block${c.n_layers > 1 ? "s" : ""}, ${c.d_model} wide, ` +
    `${c.n_heads} heads, a context of ${c.context} characters, ${data.n_params.toLocaleString("en-US")} parameters, ` +
    `held-out loss ${data.held_out_loss.toFixed(2)} against a uniform guess's ${Math.log(data.vocab_size).toFixed(2)}`;
  const backend = backendText(gpt.env, data.backend);
  if (data.done) {
    panel.dataset.state = "done";
    $("#gpt-start").disabled = false;
    $("#gpt-start").textContent = "Generate again";
    $("#gpt-stop").disabled = true;
  }
  $("#gpt-meta").textContent = data.done ?
    `${data.reason === "stopped" ? "stopped" : "done"} at ${data.chars} characters` :
    panel.dataset.state === "stopping" ? "stopping after the characters under way…" :
      `${data.chars} of ${data.max_chars} characters on ${backend}`;
  const rows = [
    ["runs on", backend, "backend"],
    ["characters", `${data.chars} of ${data.max_chars} (seed ${data.seed}, temperature ${data.temperature})`, "chars"],
    ["chars/s", perS === null ? "–" : `${perS.toFixed(1)} in the worker (${data.chars > 0 && wall > 0 ?
      (data.chars / wall).toFixed(1) : "–"} counting messages)`, "chars_per_s"],
    ["sampling time", `${data.gen_s.toFixed(2)} s in the worker`, "gen_s"],
  ];
  $("#gpt-stats").replaceChildren(...rows.flatMap(([k, v, key]) => [el("dt", {}, k), el("dd", { data: { key } }, v)]));
}
