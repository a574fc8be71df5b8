// One MLP training step in jax-js 0.1.25 on its WebGPU device (forward, backward, AdamW), for the browser
// benchmark bench/browser_train.py and its check e2e/test_browser_train.py; the same interface as
// bench/tfjs_train.mjs (createTrainer -> {step, dispatches, dispose}).
//
//   h_i = relu(h_{i-1} @ w_i + b_i)  (i < L)     logits = h_{L-1} @ w_L + b_L
//   loss = mean over the batch of -(logSoftmax(logits) * oneHot(label)).sum()   (class-index labels)
//
// written with jax-js's numpy and nn; the gradients by jax.valueAndGrad of that loss. AdamW by hand, with
// torch.optim.AdamW's order and tw.optim.AdamW's formula (the step's scalars made on the host in float64):
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   p = p (1 - lr wd) - m / (sqrt(v * vScale) + eps) * stepSize,  vScale = 1 / (1 - b2^t),
//                                                                  stepSize = lr / (1 - b1^t)
// mode "jit": the whole step (loss, gradients, update) is one jax.jit function, traced once and its kernels
// fused; mode "eager": the same function called as it is (each op dispatched as it comes).
//
// Ownership: every jax-js function consumes its Array arguments (refcounts; `.ref` adds one). The step takes
// the state {p, m, v} and returns the new one; the resident minibatches are passed as `.ref`.
// jax-js is served from /jaxjs/ (build/web/jaxjs/, fetched at set-up by scripts/fetch_web_assets.py).

import {asF32} from "./tfjs_block.mjs";

let jax = null;

// Load jax-js and start its WebGPU device; returns its version and adapter.
export async function loadJaxjs(base = "/jaxjs/") {
  if (!jax) {
    jax = await import(base + "index.js");
    const devices = await jax.init("webgpu");
    if (!devices.includes("webgpu")) throw new Error(`jax-js started no webgpu device (only ${devices})`);
  }
  jax.defaultDevice("webgpu");
  const a = jax.getWebGPUDevice().adapterInfo;
  return {
    "@jax-js/jax": (await (await fetch(base + "package.json")).json()).version,
    adapter: a ? `${a.vendor} / ${a.architecture}` : "unknown",
  };
}

async function resident(array) {
  await array.blockUntilReady();
  return array;
}

// The jax-js module loadJaxjs imported (bench/jaxjs_block.mjs builds on it).
export function jaxjs() {
  if (!jax) throw new Error("jax-js is not loaded: call loadJaxjs first");
  return jax;
}

// A trainer: weights {w1, b1, ..., wL, bL} Float32Arrays (w_i row-major (sizes[i-1], sizes[i])); xs:
// Float32Arrays of (batch, sizes[0]); ys: Float32Arrays of class indices; hp: {lr, beta1, beta2, eps,
// weightDecay}; mode "jit" or "eager". Returns {step, dispatches, dispose}: step() trains on the next
// minibatch (cycling through xs) and resolves to the loss it computed (await loss.data(), a read).
export async function createTrainer(weights, sizes, batch, xs, ys, hp, mode = "jit") {
  if (mode !== "jit" && mode !== "eager") throw new Error(`mode must be "jit" or "eager", not ${mode}`);
  const np = jax.numpy, nn = jax.nn;
  const L = sizes.length - 1, classes = sizes[L];
  const flat = [];  // [w1, b1, ..., wL, bL] as jax-js Arrays on webgpu
  for (let i = 1; i <= L; i++) {
    flat.push(await resident(np.array(asF32(weights[`w${i}`])).reshape([sizes[i - 1], sizes[i]])));
    flat.push(await resident(np.array(asF32(weights[`b${i}`]))));
  }
  const xt = [], yt = [];
  for (const x of xs) xt.push(await resident(np.array(asF32(x)).reshape([batch, sizes[0]])));
  for (const y of ys) yt.push(await resident(np.array(Int32Array.from(asF32(y)), {dtype: np.int32})));

  const loss = (p, x, y) => {  // consumes p (the flat list), x and y
    let h = x;
    for (let i = 0; i < L; i++) {
      h = np.add(np.matmul(h, p[2 * i]), p[2 * i + 1]);
      if (i < L - 1) h = nn.relu(h);
    }
    const picked = np.sum(np.multiply(nn.logSoftmax(h), nn.oneHot(y, classes)), -1);
    return np.negative(np.mean(picked));
  };
  const lossAndGrads = jax.valueAndGrad(loss);
  const {beta1: b1, beta2: b2, eps} = hp;
  const decay = 1 - hp.lr * hp.weightDecay;

  const update = (state, x, y, stepSize, vScale) => {  // consumes all; returns [loss, new state]
    const [value, g] = lossAndGrads(state.p.map((a) => a.ref), x, y);
    const p = [], m = [], v = [];
    for (let k = 0; k < state.p.length; k++) {
      const mk = state.m[k].mul(b1).add(g[k].ref.mul(1 - b1));
      const vk = state.v[k].mul(b2).add(g[k].ref.mul(g[k]).mul(1 - b2));
      const denom = np.sqrt(vk.ref.mul(vScale.ref)).add(eps);
      p.push(state.p[k].mul(decay).sub(mk.ref.div(denom).mul(stepSize.ref)));
      m.push(mk);
      v.push(vk);
    }
    stepSize.dispose();
    vScale.dispose();
    return [value, {p, m, v}];
  };
  const run = mode === "jit" ? jax.jit(update) : update;

  let state = {p: flat, m: flat.map((a) => np.zerosLike(a.ref)), v: flat.map((a) => np.zerosLike(a.ref))};
  let k = 0, t = 0;
  const launch = () => {  // one step, nothing read; returns the loss Array
    const i = k++ % xt.length;
    t += 1;
    const stepSize = np.array(hp.lr / (1 - b1 ** t)), vScale = np.array(1 / (1 - b2 ** t));
    const [value, next] = run(state, xt[i].ref, yt[i].ref, stepSize, vScale);
    state = next;
    return value;
  };

  return {
    async step() {
      return (await launch().data())[0];
    },
    // the compute passes' dispatches of one step (GPUComputePassEncoder.dispatchWorkgroups calls, counted
    // while it is submitted and read)
    async dispatches() {
      const proto = GPUComputePassEncoder.prototype, original = proto.dispatchWorkgroups;
      let count = 0;
      proto.dispatchWorkgroups = function (...args) { count++; return original.apply(this, args); };
      try { await launch().data(); } finally { proto.dispatchWorkgroups = original; }
      return count;
    },
    dispose() {
      jax.tree.dispose([state, xt, yt]);
      if (run.dispose) run.dispose();
    },
  };
}
