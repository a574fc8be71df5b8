// trueno_web.models.TransformerBlock written in TF.js core ops (no tf.layers), for the browser benchmark
// (bench/browser_transformer.py) and its agreement test (e2e/test_tfjs_block.py).
//
//   h = x + attention(layer_norm1(x))     multi-head, causal: position i attends positions <= i
//   y = h + mlp(layer_norm2(h))           mlp(z) = gelu_tanh(z @ w_fc + b_fc) @ w_proj + b_proj
//
// The same weights as ours (passed in from Python), the same formulas: layer_norm as
// (x - mean) * rsqrt(mean((x - mean)^2) + eps) * w + b (tf.moments), the tanh form of gelu with
// x*x*x, softmax(q k^T / sqrt(d_head) with -inf above the diagonal) v. Linear layers are
// tf.fused.matMul with the bias (TF.js's own matmul+bias fusion: its best case short of a custom kernel).
// Served by the bench at /bench/tfjs_block.mjs; TF.js's UMD builds come from build/web/tfjs/ (fetched
// at set-up by scripts/fetch_web_assets.py; nothing is fetched at run time).

const NAMES = ["ln1_w", "ln1_b", "w_qkv", "b_qkv", "w_o", "b_o", "ln2_w", "ln2_b", "w_fc", "b_fc", "w_proj", "b_proj"];
const GELU_C = Math.sqrt(2 / Math.PI);

// Load a classic script (TF.js's UMD builds extend the global `tf`).
function loadScript(url) {
  return new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = url;
    s.onload = resolve;
    s.onerror = () => reject(new Error(`could not load ${url}`));
    document.head.appendChild(s);
  });
}

const BUNDLES = {"tfjs-core": "tf-core.min.js", "tfjs": "tf.min.js"};  // package -> its UMD build

// Load TF.js's `core` bundle ("tfjs-core", or "tfjs": the union bundle, with the gradients), then the
// `backends`' builds on top of it, unless a page's `tf` is there already. Returns the packages' versions.
export async function loadTfjs(base = "/tfjs/", core = "tfjs-core", backends = ["webgpu", "wasm"]) {
  if (!globalThis.tf) {
    await loadScript(base + BUNDLES[core]);
    for (const name of backends) await loadScript(`${base}tf-backend-${name}.min.js`);
    if (backends.includes("wasm")) tf.wasm.setWasmPaths(base);  // the .wasm files next to the scripts, on our own server
  }
  const versions = {};
  for (const name of [core, ...backends.map((b) => `tfjs-backend-${b}`)]) {  // the webgpu build names none
    versions[name] = (await (await fetch(`${base}${name}.package.json`)).json()).version;
  }
  return versions;
}

// Switch TF.js to `name` ("webgpu", "wasm"); returns what TF.js says it runs on.
export async function useBackend(name) {
  if (!(await tf.setBackend(name))) throw new Error(`TF.js backend ${name} did not initialise`);
  await tf.ready();
  const info = {backend: tf.getBackend()};
  if (name === "webgpu") {
    const a = tf.backend().adapterInfo;
    info.adapter = a ? {vendor: a.vendor, architecture: a.architecture} : null;
  }
  if (name === "wasm") info.simd = await tf.env().getAsync("WASM_HAS_SIMD_SUPPORT");
  return info;
}

// A Float32Array as it is; anything else is a mistake of the caller's.
export function asF32(v) {
  if (!(v instanceof Float32Array)) throw new TypeError(`expected a Float32Array, got ${v && v.constructor.name}`);
  return v;
}

// The block on the current backend. weights: {name: Float32Array} (row-major, shapes as
// TransformerBlock.shapes), x: Float32Array of (seq, d_model). Returns {run, dispose}: run() computes the
// block on the resident x and downloads the result (await y.data()), as our end-to-end figure does.
export function createBlock(weights, x, seq, dModel, nHeads, eps = 1e-5) {
  const d = dModel, n = seq, h = nHeads, dh = d / h;
  const f = asF32(weights.w_fc).length / d;
  const shapes = {ln1_w: [d], ln1_b: [d], w_qkv: [d, 3 * d], b_qkv: [3 * d], w_o: [d, d], b_o: [d],
                  ln2_w: [d], ln2_b: [d], w_fc: [d, f], b_fc: [f], w_proj: [f, d], b_proj: [d]};
  const w = {};
  for (const k of NAMES) w[k] = tf.tensor(asF32(weights[k]), shapes[k], "float32");
  const xt = tf.tensor(asF32(x), [n, d], "float32");
  const causal = tf.tensor(Float32Array.from({length: n * n}, (_, i) => (i % n) <= Math.floor(i / n) ? 0 : -Infinity), [n, n]);
  const scale = tf.scalar(1 / Math.sqrt(dh));

  // functional ops throughout: the UMD tf-core registers no chained methods (t.add(...)) on its tensors
  const layerNorm = (t, g, b) => {
    const {mean, variance} = tf.moments(t, -1, true);
    return tf.add(tf.mul(tf.mul(tf.sub(t, mean), tf.rsqrt(tf.add(variance, eps))), g), b);
  };
  const linear = (t, wt, b) => tf.fused.matMul({a: t, b: wt, bias: b});
  const gelu = (z) => tf.mul(tf.mul(z, 0.5),
    tf.add(tf.tanh(tf.mul(tf.add(z, tf.mul(tf.mul(tf.mul(z, z), z), 0.044715)), GELU_C)), 1));

  const forward = (x) => {
    const qkv = tf.transpose(tf.reshape(linear(layerNorm(x, w.ln1_w, w.ln1_b), w.w_qkv, w.b_qkv), [n, 3, h, dh]),
                             [1, 2, 0, 3]);
    const [q, k, v] = tf.unstack(qkv);                                   // each (heads, L, d_head)
    const p = tf.softmax(tf.add(tf.mul(tf.matMul(q, k, false, true), scale), causal), -1);
    const att = tf.reshape(tf.transpose(tf.matMul(p, v), [1, 0, 2]), [n, d]);  // heads side by side again
    const x1 = tf.add(x, linear(att, w.w_o, w.b_o));
    const z = linear(layerNorm(x1, w.ln2_w, w.ln2_b), w.w_fc, w.b_fc);
    return tf.add(x1, linear(gelu(z), w.w_proj, w.b_proj));
  };

  return {
    async run() {
      const y = tf.tidy(() => forward(xt));
      try { return await y.data(); } finally { y.dispose(); }
    },
    // the TF.js kernels one forward pass runs (tf.profile; reshapes count though they move no data)
    async kernels() {
      const info = await tf.profile(() => forward(xt));
      info.result.dispose();
      return info.kernels.map((k) => k.name);
    },
    dispose() {
      for (const t of [...Object.values(w), xt, causal, scale]) t.dispose();
    },
  };
}
