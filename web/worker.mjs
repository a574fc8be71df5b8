// The demo page's Web Worker: Pyodide + trueno_web, driven by trueno_web.app.demo_page.DemoSession.
// The page (app.mjs, training.mjs) sends {type: "chain", n}, {type: "classify", seq, strokes},
// {type: "train", action: "start" | "run" | "stop", steps} and {type: "weights", weights}; this worker answers
//   {type: "progress", text, fraction}   while it works
//   {type: "env" | "activations" | "filters" | "chain" | "digits", data}   one per panel
//   {type: "digit", data}                a drawing classified (data.seq: the request's)
//   {type: "training", data}             a training call's steps, losses and accuracies (training_panel.py)
//   {type: "weights", data}              which weights the digit panel classifies with now
//   {type: "error", message}             Python's traceback or the JS error, then it stops
// Float arrays arrive as Float32Arrays (transferred, not copied).

import { PYODIDE_URL, WHEELS_URL } from "./config.mjs";

const here = new URL(".", import.meta.url);
const pyodideURL = new URL(PYODIDE_URL, here).href.replace(/\/?$/, "/");
const wheelsURL = new URL(WHEELS_URL, here).href.replace(/\/?$/, "/");

let pyodide = null;
let busy = Promise.resolve();

function post(type, payload = {}, transfer = []) {
  self.postMessage({ type, ...payload }, transfer);
}

function progress(text, fraction) {
  post("progress", { text: String(text), fraction: Number(fraction) });
}

function transferables(value, out = []) {
  if (ArrayBuffer.isView(value)) out.push(value.buffer);
  else if (Array.isArray(value)) value.forEach((v) => transferables(v, out));
  else if (value && typeof value === "object") Object.values(value).forEach((v) => transferables(v, out));
  return out;
}

// Run Python (top-level await allowed) with ARGS bound; return its last expression as plain JS.
async function py(code, args = {}) {
  pyodide.globals.set("ARGS", pyodide.toPy(args));
  const result = await pyodide.runPythonAsync(code, { filename: "<demo-page>" });
  if (result && typeof result.toJs === "function") {
    try {
      return result.toJs({ dict_converter: Object.fromEntries, create_pyproxies: false });
    } finally {
      result.destroy();
    }
  }
  return result;
}

async function webgpuStatus() {
  const gpu = self.navigator && self.navigator.gpu;
  if (!gpu) return { navigator_gpu: false, adapter: false };
  try {
    const adapter = await gpu.requestAdapter();
    return { navigator_gpu: true, adapter: !!adapter };
  } catch (e) {
    return { navigator_gpu: true, adapter: false, error: String(e) };
  }
}

async function boot() {
  const t0 = performance.now();
  progress("looking for WebGPU", 0.02);
  const webgpu = await webgpuStatus();
  progress("loading Pyodide", 0.05);
  const { loadPyodide } = await import(pyodideURL + "pyodide.mjs").catch((e) => {
    throw new Error(`Pyodide did not load from ${pyodideURL}pyodide.mjs (${e && e.message || e}).\n\n` +
      "The page needs Pyodide's core files (pyodide.mjs, pyodide.asm.mjs, pyodide.asm.wasm, python_stdlib.zip, " +
      "pyodide-lock.json) in a folder pyodide/ next to index.html, and the trueno_web wheel with its manifest.json " +
      "in wheels/. In a trueno_web checkout:\n" +
      "    python scripts/fetch_web_assets.py    # fills build/web/pyodide/ and build/web/wheels/\n" +
      "    python -m trueno_web serve            # serves web/ with those two folders beside it\n" +
      "Behind another static server, copy build/web/pyodide/ and build/web/wheels/ next to index.html, " +
      "or load Pyodide from a CDN: set PYODIDE_URL in config.mjs.");
  });
  pyodide = await loadPyodide({
    indexURL: pyodideURL,
    stdout: (s) => console.log("[python]", s),
    stderr: (s) => console.warn("[python]", s),
  });
  progress("installing trueno_web", 0.3);
  const response = await fetch(wheelsURL + "manifest.json");
  if (!response.ok) throw new Error(`${wheelsURL}manifest.json: HTTP ${response.status} (run scripts/fetch_web_assets.py)`);
  const manifest = await response.json();
  const wheel = manifest.wheels && manifest.wheels.trueno_web;
  if (!wheel) throw new Error(`${wheelsURL}manifest.json names no trueno_web wheel`);
  const failures = [];
  await pyodide.loadPackage(wheelsURL + wheel.file, {
    messageCallback: () => {},
    errorCallback: (s) => failures.push(s),
  });
  if (failures.length) throw new Error("installing the trueno_web wheel failed: " + failures.join("\n"));
  pyodide.globals.set("_progress", progress);
  progress("opening the device", 0.35);
  const env = await py(`
import trueno_web.app.demo_page as _dp
_session = await _dp.DemoSession.open(webgpu=ARGS["webgpu"])
_session.environment()
`, { webgpu });
  env.webgpu = webgpu;
  env.pyodide = pyodide.version;
  env.boot_ms = performance.now() - t0;
  post("env", { data: env });
  await panel("activations", "await _session.activations(progress=_progress)", {}, 0.4, 0.55);
  await panel("filters", "await _session.filters(progress=_progress)", {}, 0.55, 0.8);
  await panel("chain", "await _session.chain(int(ARGS['n']), progress=_progress)", { n: defaultSize }, 0.8, 0.95);
  progress("loading the digit classifier", 0.95);
  await panel("digits", "await _session.digits()", {}, 0.95, 1.0);
}

let defaultSize = 65536;

// Run one panel's computation, mapping its progress into [lo, hi] of the overall bar.
async function panel(type, code, args, lo, hi) {
  pyodide.globals.set("_progress", (text, f) => progress(text, lo + (hi - lo) * f));
  const data = await py(code, args);
  post(type, { data }, transferables(data));
}

// The training panel's calls: each runs a bounded number of steps, so messages queued meanwhile (a drawing
// to classify, Stop) wait at most one call.
const TRAIN = {
  start: "await _session.training().start()",
  run: "await _session.training().run(int(ARGS['steps']))",
  stop: "await _session.training().stop()",
};
const WEIGHTS = "(await _session.classifier()).weights_info()";

function fail(e) {
  const message = (e && (e.message || String(e))) || "unknown error";
  post("error", { message });
}

self.onmessage = (event) => {
  const msg = event.data || {};
  if (msg.type === "start") {
    if (msg.chainSize) defaultSize = msg.chainSize;
    busy = busy.then(boot).catch(fail);
  } else if (msg.type === "chain") {
    busy = busy.then(() => panel("chain", "await _session.chain(int(ARGS['n']), progress=_progress)",
                                 { n: msg.n }, 0, 1)).catch(fail);
  } else if (msg.type === "classify") {
    busy = busy.then(async () => {
      const data = await py("await _session.classify(ARGS['strokes'])", { strokes: msg.strokes });
      data.seq = msg.seq;
      data.strokes = msg.strokes.length;
      post("digit", { data });
    }).catch(fail);
  } else if (msg.type === "train" && TRAIN[msg.action]) {
    busy = busy.then(async () => {
      post("training", { data: await py(TRAIN[msg.action], { steps: msg.steps || 0 }) });
      if (msg.action === "start") post("weights", { data: await py(WEIGHTS) });  // a new run: the shipped ones
    }).catch(fail);
  } else if (msg.type === "weights") {
    busy = busy.then(async () => {
      post("weights", { data: await py("await _session.training().use(ARGS['weights'])", { weights: msg.weights }) });
    }).catch(fail);
  }
};
