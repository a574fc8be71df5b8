// The peers of bench/browser_peers.py in the page: jax-js and TF.js on WebGPU, the same workloads as ours.
//
//   matmul   C = A @ B of (m, k) @ (k, n) float32, A and B resident on the library's GPU device
//   chain    relu(x) * 2 + o of n float32, x and o resident
//
// Each case is {run(), dispose()}: run() computes and downloads the result (a Float32Array): jax-js
// `await y.data()`, TF.js `await y.data()`, so every figure is timed to a completed read, as ours.
// jax-js runs eagerly (each op as it comes) or through jax.jit (the function traced once, its kernels
// fused); jax-js takes ownership of its arguments, so resident inputs are passed as `.ref`.
// Served at /bench/peers.mjs; jax-js's modules from /jaxjs/ and TF.js's UMD builds from /tfjs/ (build/web/,
// fetched at set-up by scripts/fetch_web_assets.py; nothing is fetched at run time).

import {asF32, loadTfjs, useBackend} from "./tfjs_block.mjs";

let jax = null;

// Load both libraries and start their WebGPU devices; returns their versions and adapters.
export async function loadPeers(jaxBase = "/jaxjs/", tfBase = "/tfjs/") {
  jax = await import(jaxBase + "index.js");
  const devices = await jax.init("webgpu");
  if (!devices.includes("webgpu")) throw new Error(`jax-js started no webgpu device (only ${devices})`);
  jax.defaultDevice("webgpu");
  const tfVersions = await loadTfjs(tfBase, "tfjs-core", ["webgpu"]);
  await useBackend("webgpu");
  const version = async (url) => (await (await fetch(url)).json()).version;
  const a = jax.getWebGPUDevice().adapterInfo;
  return {
    "@jax-js/jax": await version(jaxBase + "package.json"),
    "@tensorflow/tfjs-core": tfVersions["tfjs-core"],
    "@tensorflow/tfjs-backend-webgpu": tfVersions["tfjs-backend-webgpu"],
    "jax-js adapter": a ? `${a.vendor} / ${a.architecture}` : "unknown",
  };
}

async function jaxResident(data, shape) {
  const x = jax.numpy.array(asF32(data)).reshape(shape);
  await x.blockUntilReady();
  return x;
}

// jax-js's matmul: mode "eager" (np.matmul) or "jit" (jax.jit of it).
export async function jaxMatmul(a, b, m, k, n, mode) {
  const np = jax.numpy;
  const at = await jaxResident(a, [m, k]);
  const bt = await jaxResident(b, [k, n]);
  const f = mode === "jit" ? jax.jit((x, y) => np.matmul(x, y)) : (x, y) => np.matmul(x, y);
  return {
    run: () => f(at.ref, bt.ref).data(),
    dispose() { at.dispose(); bt.dispose(); if (f.dispose) f.dispose(); },
  };
}

// jax-js's chain relu(x) * 2 + o: eager or jit.
export async function jaxChain(x, o, mode) {
  const np = jax.numpy;
  const xt = await jaxResident(x, [x.length]);
  const ot = await jaxResident(o, [o.length]);
  const chain = (u, v) => np.add(np.multiply(jax.nn.relu(u), 2), v);
  const f = mode === "jit" ? jax.jit(chain) : chain;
  return {
    run: () => f(xt.ref, ot.ref).data(),
    dispose() { xt.dispose(); ot.dispose(); if (f.dispose) f.dispose(); },
  };
}

async function tfResident(data, shape) {
  const t = tf.tensor(asF32(data), shape, "float32");
  await t.data();  // uploaded to the GPU before anything is timed
  return t;
}

async function tfRun(build) {
  const y = tf.tidy(build);
  try { return await y.data(); } finally { y.dispose(); }
}

// TF.js's matmul on webgpu.
export async function tfMatmul(a, b, m, k, n) {
  const at = await tfResident(a, [m, k]);
  const bt = await tfResident(b, [k, n]);
  return {run: () => tfRun(() => tf.matMul(at, bt)), dispose() { at.dispose(); bt.dispose(); }};
}

// TF.js's chain relu(x) * 2 + o on webgpu.
export async function tfChain(x, o) {
  const xt = await tfResident(x, [x.length]);
  const ot = await tfResident(o, [o.length]);
  return {run: () => tfRun(() => tf.add(tf.mul(tf.relu(xt), 2), ot)), dispose() { xt.dispose(); ot.dispose(); }};
}
