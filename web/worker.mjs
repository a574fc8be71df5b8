// The demo page's Web Worker: Pyodide + trueno_web, driven by trueno_web.app.demo_page.DemoSession.
// The page (app.mjs, training.mjs, gpt.mjs) sends {type: "chain", n}, {type: "classify", seq, strokes},
// {type: "train", action: "start" | "run" | "stop", steps}, {type: "weights", weights} and
// {type: "gpt", action: "start" | "run" | "stop", prompt, seed, temperature, chars, n} and
// {type: "try", seq, code} (the "try it" cell, tryit.mjs); this worker answers
//   {type: "progress", text, fraction}   while it works
//   {type: "stage", name, label, state, start, ms}   a start-up stage begins ("run") or ends ("done", ms)
//   {type: "adapter", data}              navigator.gpu's answer at once: {navigator_gpu, adapter, info, ms}
//   {type: "first", data}                a first result computed in JS with WebGPU, before Python is up
//   {type: "env" | "activations" | "filters" | "chain" | "digits", data}   one per panel
//   {type: "digit", data}                a drawing classified (data.seq: the request's)
//   {type: "training", data}             a training call's steps, losses and accuracies (training_panel.py)
//   {type: "weights", data}              which weights the digit panel classifies with now
//   {type: "gpt", data}                  a tiny-GPT call's new characters and the text so far (gpt_panel.py);
//                                        bad input: {error} (the page goes on)
//   {type: "examples", data}             the "try it" cell's examples, [{name, label, code}] (try_it.py)
//   {type: "try", data}                  a run of the cell: {seq, code, output, error, ms, backend}; the
//                                        user's error is in data.error (the page goes on)
//   {type: "compiling", n}               a run of the cell waits for n kernels to compile (0: compiled)
//   {type: "snapshot", state, ...}       the memory snapshot (snapshots.mjs): "loaded" (Python started from it),
//                                        "making" (none yet: made after the panels), "stored" {bytes, ms},
//                                        "failed" {error} (the page goes on), "unavailable" (no Cache Storage)
//   {type: "error", message}             Python's traceback or the JS error, then it stops
// Float arrays arrive as Float32Arrays (transferred, not copied).

import { PYODIDE_URL, WHEELS_URL } from "./config.mjs";
import { IMPORT_CODE, dropSnapshot, readSnapshot, snapshotURL, unpackWheel } from "./snapshots.mjs";

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

// Start-up stages, in order: the page shows each with its own bar and time (document.body.dataset.stages).
const STAGES = [
  ["adapter", "WebGPU adapter"],
  ["first", "a first result in JS"],
  ["pyodide", "Pyodide: fetch, compile, start Python"],
  ["install", "install trueno_web"],
  ["import", "import trueno_web"],
  ["device", "open the device"],
  ["panel", "first panel computed"],
];
const LABELS = Object.fromEntries(STAGES);
const FROM_SNAPSHOT = "Pyodide: fetch, compile, start Python from the snapshot";

// `done`: the stage's label once it is done (the pyodide stage says whether it started from a snapshot)
async function stage(name, fn, done = () => LABELS[name]) {
  const start = performance.now();
  post("stage", { name, label: LABELS[name], state: "run", start, ms: 0 });
  const out = await fn();
  post("stage", { name, label: done(), state: "done", start, ms: performance.now() - start });
  return out;
}

let adapterPromise = null;

async function webgpuStatus() {
  const gpu = self.navigator && self.navigator.gpu;
  const t0 = performance.now();
  if (!gpu) return { navigator_gpu: false, adapter: false, ms: 0 };
  try {
    const adapter = await gpu.requestAdapter();
    const info = adapter && adapter.info ? { vendor: adapter.info.vendor, architecture: adapter.info.architecture,
      device: adapter.info.device, description: adapter.info.description } : {};
    return { navigator_gpu: true, adapter: !!adapter, info, ms: performance.now() - t0, handle: adapter };
  } catch (e) {
    return { navigator_gpu: true, adapter: false, error: String(e), ms: performance.now() - t0 };
  }
}

// A first result while Pyodide loads: eight numbers doubled by a WGSL kernel on the adapter, in JS.
async function firstResult(adapter) {
  const t0 = performance.now();
  const device = await adapter.requestDevice();
  try {
    const input = new Float32Array([1, 2, 3, 4, 5, 6, 7, 8.5]);
    const module = device.createShaderModule({ code: `
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(8) fn main(@builtin(global_invocation_id) i: vec3u) { x[i.x] = 2.0 * x[i.x]; }` });
    const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
    const usage = GPUBufferUsage;
    const data = device.createBuffer({ size: input.byteLength, usage: usage.STORAGE | usage.COPY_SRC | usage.COPY_DST });
    const read = device.createBuffer({ size: input.byteLength, usage: usage.MAP_READ | usage.COPY_DST });
    device.queue.writeBuffer(data, 0, input);
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0),
      entries: [{ binding: 0, resource: { buffer: data } }] }));
    pass.dispatchWorkgroups(1);
    pass.end();
    encoder.copyBufferToBuffer(data, 0, read, 0, input.byteLength);
    device.queue.submit([encoder.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    const out = Array.from(new Float32Array(read.getMappedRange()));
    read.unmap();
    return { input: Array.from(input), output: out, ms: performance.now() - t0 };
  } finally {
    device.destroy();
  }
}

// The manifest's entry for the project wheel: {file, sha256, version}.
async function fetchManifest() {
  const response = await fetch(wheelsURL + "manifest.json");
  if (!response.ok) throw new Error(`${wheelsURL}manifest.json: HTTP ${response.status} (run scripts/fetch_web_assets.py)`);
  const manifest = await response.json();
  const wheel = manifest.wheels && manifest.wheels.trueno_web;
  if (!wheel) throw new Error(`${wheelsURL}manifest.json names no trueno_web wheel`);
  return wheel;
}

async function fetchWheel(wheel) {
  const body = await fetch(wheelsURL + wheel.file);
  if (!body.ok) throw new Error(`${wheelsURL}${wheel.file}: HTTP ${body.status} (run scripts/fetch_web_assets.py)`);
  return new Uint8Array(await body.arrayBuffer());
}

// Resource timing of Pyodide's big files: how much of its stage was the network.
function fetchTimes() {
  const out = {};
  for (const e of performance.getEntriesByType("resource")) {
    const name = e.name.split("/").pop();
    if (/^pyodide|^python_stdlib|^trueno_web-|^manifest/.test(name)) {
      out[name] = { ms: Math.round(e.responseEnd - e.startTime), bytes: e.transferSize };
    }
  }
  return out;
}

async function boot() {
  const t0 = performance.now();
  // the wheel downloads while Pyodide loads; the adapter (and a first result) come first, in milliseconds
  const manifestPromise = fetchManifest();
  const wheelPromise = manifestPromise.then(fetchWheel);
  wheelPromise.catch(() => {});
  progress("looking for WebGPU", 0.02);
  const webgpu = await stage("adapter", webgpuStatus);
  const adapter = webgpu.handle;
  delete webgpu.handle;
  post("adapter", { data: webgpu });
  if (adapter) {
    try {
      post("first", { data: await stage("first", () => firstResult(adapter)) });
    } catch (e) {
      post("first", { data: { error: String(e && e.message || e) } });
    }
  }
  progress("loading Pyodide", 0.05);
  const snapshot = { url: null, bytes: null };
  await stage("pyodide", async () => {
    const { loadPyodide, version } = await importPyodide();
    Object.assign(snapshot, await findSnapshot(version, manifestPromise));
    await startPyodide(loadPyodide, snapshot);
  }, () => snapshot.bytes ? FROM_SNAPSHOT : LABELS.pyodide);
  progress("installing trueno_web", 0.3);
  // a pure wheel with no dependencies: unpacked from memory (no second download, no package resolver)
  await stage("install", async () => unpackWheel(pyodide, await wheelPromise));
  await stage("import", () => py(IMPORT_CODE));
  pyodide.globals.set("_progress", progress);
  pyodide.globals.set("_compiling", (n) => post("compiling", { n: Number(n) }));
  progress("opening the device", 0.35);
  const env = await stage("device", () => py(`
_session = await _dp.DemoSession.open(webgpu=ARGS["webgpu"])
_session.environment()
`, { webgpu: { navigator_gpu: webgpu.navigator_gpu, adapter: webgpu.adapter, ...(webgpu.error ? { error: webgpu.error } : {}) } }));
  env.webgpu = webgpu;
  env.pyodide = pyodide.version;
  env.boot_ms = performance.now() - t0;
  env.fetches = fetchTimes();
  post("env", { data: env });
  await stage("panel", () => panel("activations", "await _session.activations(progress=_progress)", {}, 0.4, 0.55));
  await panel("filters", "await _session.filters(progress=_progress)", {}, 0.55, 0.8);
  await panel("chain", "await _session.chain(int(ARGS['n']), progress=_progress)", { n: defaultSize }, 0.8, 0.95);
  progress("loading the digit classifier", 0.95);
  await panel("digits", "await _session.digits()", {}, 0.95, 1.0);
  post("examples", { data: await py("_dp.DemoSession.try_examples()") });
  if (snapshot.url && !snapshot.bytes) makeSnapshot(snapshot.url, await wheelPromise);
}

function importPyodide() {
  return import(pyodideURL + "pyodide.mjs").catch((e) => {
    throw new Error(`Pyodide did not load from ${pyodideURL}pyodide.mjs (${e && e.message || e}).\n\n` +
      "The page needs Pyodide's core files (pyodide.mjs, pyodide.asm.mjs, pyodide.asm.wasm, python_stdlib.zip, " +
      "pyodide-lock.json) in a folder pyodide/ next to index.html, and the trueno_web wheel with its manifest.json " +
      "in wheels/. In a trueno_web checkout:\n" +
      "    python scripts/fetch_web_assets.py    # fills build/web/pyodide/ and build/web/wheels/\n" +
      "    python -m trueno_web serve            # serves web/ with those two folders beside it\n" +
      "Behind another static server, copy build/web/pyodide/ and build/web/wheels/ next to index.html, " +
      "or load Pyodide from a CDN: set PYODIDE_URL in config.mjs.");
  });
}

// {url, bytes}: where this Pyodide's and wheel's snapshot is kept, and the snapshot when there is one
// (bytes null: none yet; url null: no Cache Storage on this origin).
async function findSnapshot(version, manifestPromise) {
  if (!self.caches) {
    post("snapshot", { state: "unavailable" });
    return { url: null, bytes: null };
  }
  const url = snapshotURL(version, (await manifestPromise).sha256);
  let bytes = null;
  try {
    bytes = await readSnapshot(url);
  } catch (e) {
    console.warn("the start-up snapshot could not be read, starting Python without it:", e);
  }
  return { url, bytes };
}

async function startPyodide(loadPyodide, snapshot) {
  const options = {
    indexURL: pyodideURL,
    stdout: (s) => console.log("[python]", s),
    stderr: (s) => console.warn("[python]", s),
  };
  if (snapshot.bytes) {
    try {
      pyodide = await loadPyodide({ ...options, _loadSnapshot: snapshot.bytes });
      post("snapshot", { state: "loaded", bytes: snapshot.bytes.length });
      return;
    } catch (e) {  // a snapshot this Pyodide refuses (another build): drop it, start as without one
      console.warn("the start-up snapshot did not load, starting Python without it:", e);
      snapshot.bytes = null;
      await dropSnapshot(snapshot.url);
    }
  }
  pyodide = await loadPyodide(options);
}

// Made by a worker of its own once every panel is drawn (snapshot_maker.mjs), for the next visit.
function makeSnapshot(url, wheel) {
  let maker;
  try {  // a browser without workers in workers: no snapshot, the page goes on
    maker = new Worker(new URL("./snapshot_maker.mjs", import.meta.url), { type: "module" });
  } catch (e) {
    post("snapshot", { state: "failed", error: String(e && e.message || e) });
    return;
  }
  post("snapshot", { state: "making" });
  maker.onmessage = (event) => {
    post("snapshot", event.data);
    maker.terminate();
  };
  maker.onerror = (event) => {
    event.preventDefault();
    post("snapshot", { state: "failed", error: event.message || "snapshot_maker.mjs did not load" });
    maker.terminate();
  };
  maker.postMessage({ pyodideURL, url, wheel });
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
// The tiny-GPT panel's calls, a few characters each; a start with bad input answers {error}.
const GPT = {
  start: `
try:
    _r = await _session.gpt().start(ARGS['prompt'], ARGS['seed'], ARGS['temperature'], ARGS['chars'])
except _dp.TruenoError as _e:
    _r = {"error": f"{type(_e).__name__}: {_e}"}
_r`,
  run: "await _session.gpt().run(int(ARGS['n']))",
  stop: "await _session.gpt().stop()",
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
  } else if (msg.type === "gpt" && GPT[msg.action]) {
    busy = busy.then(async () => {
      post("gpt", { data: await py(GPT[msg.action], { prompt: msg.prompt ?? "", seed: msg.seed ?? 0,
        temperature: msg.temperature ?? 1, chars: msg.chars ?? 1, n: msg.n || 0 }) });
    }).catch(fail);
  } else if (msg.type === "try") {
    busy = busy.then(async () => {
      const data = await py("await _session.try_it(ARGS['code'], compiling=_compiling)", { code: String(msg.code ?? "") });
      post("try", { data: { ...data, seq: msg.seq, code: String(msg.code ?? "") } });
    }).catch(fail);
  } else if (msg.type === "weights") {
    busy = busy.then(async () => {
      post("weights", { data: await py("await _session.training().use(ARGS['weights'])", { weights: msg.weights }) });
    }).catch(fail);
  }
};
