// One MLP training step in TF.js 4.22 (forward, backward, AdamW), for the browser benchmark
// bench/browser_train.py and its smoke test e2e/test_browser_train.py.
//
//   h_i = relu(h_{i-1} @ w_i + b_i)  (i < L)     logits = h_{L-1} @ w_L + b_L
//   loss = mean over the batch of -log softmax(logits)[label]   (class-index labels)
//
// The same weights and minibatches as ours (passed in from Python). Linear layers are tf.fused.matMul with
// the bias and the relu (TF.js's own fusion, with its own gradient); the loss is
// tf.losses.softmaxCrossEntropy on tf.oneHot(labels) (its default reduction: the mean over the batch).
//
// AdamW by hand: TF.js has Adam (tf.train.adam) but no decoupled weight decay. A step is
//   {value, grads} = tf.variableGrads(loss)           gradients at the current weights
//   w.assign(w * (1 - lr * weight_decay))             the decoupled decay, every variable (biases too)
//   adam.applyGradients(grads)                        m, v, w -= lr * m_hat / (sqrt(v_hat) + eps)
// which is torch.optim.AdamW's order (decay the weights, then the Adam update computed from gradients taken
// before the decay) and tw.optim.AdamW's formula.
//
// TF.js comes from build/web/tfjs/ (scripts/fetch_web_assets.py fetches it at set-up): the union bundle
// tf.min.js, because tf-core.min.js (what bench/tfjs_block.mjs loads) registers no gradients, then the
// webgpu and wasm backends on top of it (UMD builds extending the global `tf`).

import {asF32, loadTfjs as loadBundles} from "./tfjs_block.mjs";

export {useBackend} from "./tfjs_block.mjs";

// Load tf.min.js, then the webgpu and wasm backends. Returns the versions.
export async function loadTfjs(base = "/tfjs/") {
  const versions = await loadBundles(base, "tfjs");
  if (!tf.getGradient || !tf.getGradient("RealDiv")) throw new Error("TF.js loaded without its gradients");
  return versions;
}

// A trainer on the current backend. weights: {w1, b1, ..., wL, bL} Float32Arrays (w_i row-major
// (sizes[i-1], sizes[i])); xs: Float32Arrays of (batch, sizes[0]); ys: Float32Arrays of class indices;
// hp: {lr, beta1, beta2, eps, weightDecay}. Returns {step, kernels, dispose}: step() trains on the next
// minibatch (cycling through xs) and resolves to the loss it computed (await loss.data(), a sync).
export function createTrainer(weights, sizes, batch, xs, ys, hp) {
  const L = sizes.length - 1;
  const params = [];
  const w = [], b = [];
  for (let i = 1; i <= L; i++) {
    // no names: TF.js names variables globally, and a page makes several trainers
    w.push(tf.variable(tf.tensor(asF32(weights[`w${i}`]), [sizes[i - 1], sizes[i]], "float32")));
    b.push(tf.variable(tf.tensor(asF32(weights[`b${i}`]), [sizes[i]], "float32")));
    params.push(w[i - 1], b[i - 1]);
  }
  const xt = Array.from(xs, (x) => tf.tensor(asF32(x), [batch, sizes[0]], "float32"));
  const yt = Array.from(ys, (y) => tf.tensor(Int32Array.from(asF32(y)), [batch], "int32"));
  const adam = tf.train.adam(hp.lr, hp.beta1, hp.beta2, hp.eps);
  const decay = tf.scalar(1 - hp.lr * hp.weightDecay);

  const loss = (x, y) => {
    let h = x;
    for (let i = 0; i < L - 1; i++) h = tf.fused.matMul({a: h, b: w[i], bias: b[i], activation: "relu"});
    const logits = tf.fused.matMul({a: h, b: w[L - 1], bias: b[L - 1]});
    return tf.losses.softmaxCrossEntropy(tf.cast(tf.oneHot(y, sizes[L]), "float32"), logits);
  };

  let k = 0;
  const update = () => {  // one step, no read; returns the loss tensor
    const i = k++ % xt.length;
    const {value, grads} = tf.variableGrads(() => loss(xt[i], yt[i]), params);
    tf.tidy(() => { for (const p of params) p.assign(tf.mul(p, decay)); });
    adam.applyGradients(grads);
    tf.dispose(grads);
    return value;
  };

  return {
    async step() {
      const value = update();
      try { return (await value.data())[0]; } finally { value.dispose(); }
    },
    // the TF.js kernels one step runs (tf.profile; reshapes and casts count though they move little)
    async kernels() {
      const info = await tf.profile(() => update());
      info.result.dispose();
      return info.kernels.map((kk) => kk.name);
    },
    dispose() {
      tf.dispose([...params, ...xt, ...yt, decay]);
      adam.dispose();
    },
  };
}
