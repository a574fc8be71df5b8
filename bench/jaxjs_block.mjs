// trueno_web.models.TransformerBlock in jax-js 0.1.25 (its numpy and nn), for the browser benchmark
// bench/browser_transformer.py and its agreement test (e2e/test_tfjs_block.py): the block of
// bench/tfjs_block.mjs,
//
//   h = x + attention(layer_norm1(x))     multi-head, causal: position i attends positions <= i
//   y = h + mlp(layer_norm2(h))           mlp(z) = gelu_tanh(z @ w_fc + b_fc) @ w_proj + b_proj
//
// written as a jax-js user would: nn.standardize for layer_norm ((x - mean) / sqrt(var + eps), its variance
// E[x^2] - mean^2), nn.dotProductAttention with isCausal (softmax(q k^T / sqrt(d_head), -inf above the
// diagonal) v, the heads the middle axis of (seq, heads, d_head)), nn.gelu (the tanh form, its default).
// mode "jit": the forward pass is one jax.jit function (traced once, its kernels fused); "eager": each op
// dispatched as it comes. Ownership as in bench/jaxjs_train.mjs: every jax-js function consumes its Array
// arguments, `.ref` adds a reference, so the weights and x are passed as `.ref` each call.
// Served at /bench/jaxjs_block.mjs beside ./jaxjs_train.mjs (loadJaxjs) and ./tfjs_block.mjs (asF32).

import {asF32} from "./tfjs_block.mjs";
import {jaxjs} from "./jaxjs_train.mjs";

export {loadJaxjs} from "./jaxjs_train.mjs";

const NAMES = ["ln1_w", "ln1_b", "w_qkv", "b_qkv", "w_o", "b_o", "ln2_w", "ln2_b", "w_fc", "b_fc", "w_proj", "b_proj"];

// The block on jax-js's webgpu device (loadJaxjs first). weights: {name: Float32Array} (row-major, shapes as
// TransformerBlock.shapes), x: Float32Array of (seq, d_model). Returns {run, dispose}: run() computes the
// block on the resident x and downloads the result (await y.data()), as our end-to-end figure does.
export async function createBlock(weights, x, seq, dModel, nHeads, eps = 1e-5, mode = "jit") {
  if (mode !== "jit" && mode !== "eager") throw new Error(`mode must be "jit" or "eager", not ${mode}`);
  const jax = jaxjs(), np = jax.numpy, nn = jax.nn;
  const d = dModel, n = seq, h = nHeads, dh = d / h;
  const f = asF32(weights.w_fc).length / d;
  const shapes = {ln1_w: [d], ln1_b: [d], w_qkv: [d, 3 * d], b_qkv: [3 * d], w_o: [d, d], b_o: [d],
                  ln2_w: [d], ln2_b: [d], w_fc: [d, f], b_fc: [f], w_proj: [f, d], b_proj: [d]};
  const w = {};
  for (const k of NAMES) {
    w[k] = np.array(asF32(weights[k])).reshape(shapes[k]);
    await w[k].blockUntilReady();
  }
  const xt = np.array(asF32(x)).reshape([n, d]);
  await xt.blockUntilReady();

  const layerNorm = (t, g, b) => nn.standardize(t, -1, {epsilon: eps}).mul(g).add(b);
  const linear = (t, wt, b) => np.matmul(t, wt).add(b);
  const forward = (p, x) => {  // consumes p's arrays and x
    const qkv = linear(layerNorm(x.ref, p.ln1_w, p.ln1_b), p.w_qkv, p.b_qkv).reshape([n, 3, h, dh]);
    const [q, k, v] = np.unstack(qkv, 1);  // each (seq, heads, d_head)
    const att = nn.dotProductAttention(q, k, v, {isCausal: true}).reshape([n, d]);  // heads side by side
    const x1 = x.add(linear(att, p.w_o, p.b_o));
    const z = linear(layerNorm(x1.ref, p.ln2_w, p.ln2_b), p.w_fc, p.b_fc);
    return x1.add(linear(nn.gelu(z), p.w_proj, p.b_proj));
  };
  const run = mode === "jit" ? jax.jit(forward) : forward;
  const refs = () => Object.fromEntries(NAMES.map((k) => [k, w[k].ref]));

  return {
    async run() {
      return await run(refs(), xt.ref).data();
    },
    dispose() {
      jax.tree.dispose([w, xt]);
      if (run.dispose) run.dispose();
    },
  };
}
