"""trueno_web.models on every backend: the digit classifier's probabilities against a float64 NumPy
forward pass, its held-out accuracy from the shipped weights (computed through the library), the
transformer block against a float64 NumPy forward pass (relative error <= 1e-4), and the dispatches
each forward pass takes (the CPU backends count plan steps, so the numbers hold on every backend).

The held-out digits ship inside trueno_web/data/digits_mlp.bin (scripts/train_digits.py writes them), so
nothing here imports scikit-learn. The models themselves need no NumPy (checked in a subprocess).
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys

import pytest
from _cases import HAVE_NUMPY

import trueno_web as tw
from trueno_web.models import DIGITS_FILE, Mlp, TransformerBlock, load_digits_file, read_safetensors
from trueno_web.runtime import block_on

needs_numpy = pytest.mark.skipif(not HAVE_NUMPY, reason="the reference forward passes are NumPy (desktop)")

ARRAYS, META = load_digits_file()
(TEST_X, X_SHAPE), TEST_Y = ARRAYS["test_x"], ARRAYS["test_y"][0]


def dispatches(dev, *tensors) -> int:
    before = dev.stats.dispatches
    block_on(tw.realize(*tensors))
    return dev.stats.dispatches - before


def f64(name_or_pair):
    import numpy as np

    data, shape = ARRAYS[name_or_pair] if isinstance(name_or_pair, str) else name_or_pair
    return np.asarray(data, dtype=np.float64).reshape(shape)


# ---------------------------------------------------------------- the digit classifier


def test_the_shipped_file_is_small_and_says_what_it_holds():
    from importlib import resources

    blob = resources.files("trueno_web").joinpath("data", DIGITS_FILE).read_bytes()
    assert len(blob) < 50_000
    arrays, meta = read_safetensors(blob)
    shapes = {name: shape for name, (_, shape) in arrays.items()}
    n = int(meta["test_size"])
    assert shapes == {"w1": (64, 32), "b1": (32,), "w2": (32, 10), "b2": (10,), "test_x": (n, 64), "test_y": (n,)}
    assert meta["activation"] == "relu" and float(meta["test_accuracy"]) > 0.95
    assert max(arrays["test_x"][0]) <= 16 and sorted(set(arrays["test_y"][0])) == list(range(10))


@needs_numpy
def test_digit_probabilities_match_a_numpy_forward_pass(dev):
    import numpy as np

    mlp = block_on(Mlp.digits(dev))
    x = f64("test_x")
    probs = mlp(dev.tensor(TEST_X, shape=x.shape))
    assert probs.shape == (x.shape[0], 10)
    got = np.asarray(block_on(probs.numpy()), np.float64)
    z = np.maximum(x @ f64("w1") + f64("b1"), 0) @ f64("w2") + f64("b2")
    want = np.exp(z - z.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    assert (got.argmax(1) == want.argmax(1)).all()


def test_held_out_accuracy_of_the_shipped_weights(dev):
    """Above 95%, and what the training script measured (the same predictions, to one digit)."""
    mlp = block_on(Mlp.digits(dev))
    pred = block_on(mlp.predict(dev.tensor(TEST_X, shape=X_SHAPE)).numpy())
    pred = [int(p) for p in (pred.reshape(-1).tolist() if hasattr(pred, "reshape") else pred)]
    accuracy = sum(p == y for p, y in zip(pred, TEST_Y)) / len(TEST_Y)
    assert accuracy > 0.95
    assert abs(accuracy - float(META["test_accuracy"])) <= 1 / len(TEST_Y) + 1e-9


def test_classifier_dispatches(dev):
    """probabilities: matmul with bias + relu as its epilogue, matmul with its bias add, and ONE row kernel for
    the softmax (max, exp, sum, divide) = 3; predict: the same two products and ONE row kernel for argmax (max,
    compare, index min) = 3. Without epilogues (software adapters): the first bias + relu a map kernel of its
    own, the second bias an element value of the row kernel: 4 each."""
    mlp = block_on(Mlp.digits(dev))
    x = dev.tensor(TEST_X[: 64 * 20], shape=(20, 64), dtype=tw.float32)  # the pixels as floats (not a kernel)
    want = 3 if dev.executor.epilogue_budget else 4
    assert dispatches(dev, mlp(x)) == want
    assert dispatches(dev, mlp.predict(x)) == want


@needs_numpy
def test_a_gelu_classifier_on_one_sample_and_host_input(dev):
    import numpy as np

    rng = random.Random(3)
    weights = {
        "w1": ([rng.gauss(0, 0.3) for _ in range(12 * 7)], (12, 7)),
        "b1": [rng.gauss(0, 0.1) for _ in range(7)],
        "w2": ([rng.gauss(0, 0.3) for _ in range(7 * 3)], (7, 3)),
        "b2": [0.5, -0.5, 0.0],
    }
    mlp = block_on(Mlp.create(dev, weights, activation="gelu"))
    x = [rng.uniform(-2, 2) for _ in range(12)]
    got = np.asarray(block_on(mlp(x).numpy()), np.float64)  # host data, one sample: a (1, 12) row
    w = {
        k: np.asarray(v[0] if isinstance(v, tuple) else v, np.float64).reshape(v[1] if isinstance(v, tuple) else -1)
        for k, v in weights.items()
    }
    h = np.asarray(x) @ w["w1"] + w["b1"]
    h = 0.5 * h * (1 + np.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3)))
    z = h @ w["w2"] + w["b2"]
    want = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    np.testing.assert_allclose(got, want[None], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="activation"):
        Mlp({"w1": None, "b1": None, "w2": None, "b2": None}, activation="tanh")


# ---------------------------------------------------------------- the transformer block


def reference_block(weights: dict, x, n_heads: int, eps: float = 1e-5):
    """GPT-2's pre-norm block in float64 NumPy, written independently of the model's tensor code."""
    import numpy as np

    w = {k: f64(v) for k, v in weights.items()}

    def ln(t, g, b):
        mu = t.mean(-1, keepdims=True)
        return (t - mu) / np.sqrt(((t - mu) ** 2).mean(-1, keepdims=True) + eps) * g + b

    *lead, n, d = x.shape
    e = d // n_heads
    qkv = ln(x, w["ln1_w"], w["ln1_b"]) @ w["w_qkv"] + w["b_qkv"]
    q, k, v = (qkv[..., i * d : (i + 1) * d].reshape(*lead, n, n_heads, e).swapaxes(-3, -2) for i in range(3))
    s = q @ k.swapaxes(-1, -2) / math.sqrt(e)
    s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    att = (p / p.sum(-1, keepdims=True)) @ v
    h = x + att.swapaxes(-3, -2).reshape(x.shape) @ w["w_o"] + w["b_o"]
    z = ln(h, w["ln2_w"], w["ln2_b"]) @ w["w_fc"] + w["b_fc"]
    z = 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))
    return h + z @ w["w_proj"] + w["b_proj"]


#: The block is 9 dispatches, whatever the backend, batch or size (the plan is the same graph):
#:   4 matmul kernels, each with its epilogue: qkv + bias; output projection + bias + residual; fc + bias;
#:     proj + bias + residual
#:   1 attention kernel (all heads; the scores never in memory; q, k and v read in place as views of qkv)
#:   2 row kernels: layer_norm 1 and 2
#:   1 map kernel: gelu (past the epilogue's budget: kernels/caps.py EPILOGUE_BUDGET)
#:   1 copy: the heads side by side again ((heads, L, d_head) -> (L, d_model), a transposed view reshaped)
#: = 4 + 1 + 2 + 1 + 1. Fusion is what keeps it there: unfused, layer_norm alone is 11 kernels. Without epilogues
#: (software adapters: kernels/caps.py), 11: the biases and residuals in 3 map kernels and the second row kernel.
BLOCK_DISPATCHES = 9
BLOCK_DISPATCHES_WITHOUT_EPILOGUES = 11


@needs_numpy
@pytest.mark.parametrize("lead", [(), (2,)], ids=["L16", "B2xL16"])
def test_transformer_block_matches_float64_numpy(dev, lead):
    import numpy as np

    d, n, heads = 32, 16, 4
    weights = TransformerBlock.random_weights(d, seed=5)
    block = block_on(TransformerBlock.create(dev, weights, n_heads=heads))
    rng = np.random.default_rng(9)
    x = rng.standard_normal((*lead, n, d)).astype(np.float32)
    y = block(dev.tensor(x))
    assert y.shape == x.shape
    assert dispatches(dev, y) == (
        BLOCK_DISPATCHES if dev.executor.epilogue_budget else BLOCK_DISPATCHES_WITHOUT_EPILOGUES
    )
    got = np.asarray(block_on(y.numpy()), np.float64)
    want = reference_block(weights, x.astype(np.float64), heads)
    rel = np.abs(got - want).max() / np.abs(want).max()
    assert rel <= 1e-4, rel
    # causality: changing the last position changes no earlier output
    x2 = x.copy()
    x2[..., -1, :] += 1.0
    got2 = np.asarray(block_on(block(dev.tensor(x2)).numpy()), np.float64)
    np.testing.assert_array_equal(got2[..., :-1, :], got[..., :-1, :])


def test_block_weights_and_shape_errors(dev):
    weights = TransformerBlock.random_weights(12, d_ff=20, seed=1)
    assert {k: s for k, (_, s) in weights.items()}["w_fc"] == (12, 20)
    assert weights["w_o"][0] == TransformerBlock.random_weights(12, d_ff=20, seed=1)["w_o"][0]
    with pytest.raises(ValueError, match="multiple of n_heads"):
        block_on(TransformerBlock.create(dev, weights, n_heads=5))


# ---------------------------------------------------------------- no NumPy needed

NO_NUMPY = """
import sys, json
sys.modules["numpy"] = None  # import numpy fails from here on
import trueno_web as tw
from trueno_web.models import Mlp, TransformerBlock, load_digits_file
from trueno_web.runtime import block_on

async def main():
    dev = await tw.GpuDevice.create("wasm-simd")
    arrays, meta = load_digits_file()
    mlp = await Mlp.digits(dev)
    pred = await mlp.predict(dev.tensor(arrays["test_x"][0], shape=arrays["test_x"][1])).numpy()
    block = await TransformerBlock.create(dev, TransformerBlock.random_weights(8, seed=0), n_heads=2)
    y = await block(dev.tensor([0.1 * i for i in range(4 * 8)], shape=(4, 8))).numpy()
    hits = sum(int(p) == t for p, t in zip(pred, arrays["test_y"][0]))
    print(json.dumps([type(pred).__name__, hits / len(pred), list(y.shape)]))

block_on(main())
"""


@pytest.mark.skipif(sys.platform == "emscripten", reason="needs a subprocess")
def test_the_models_run_without_numpy():
    from conftest import backend_unavailable

    reason = backend_unavailable("wasm-simd")
    if reason:
        pytest.skip(reason)
    out = subprocess.run([sys.executable, "-c", NO_NUMPY], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    kind, accuracy, n = json.loads(out.stdout.strip().splitlines()[-1])
    assert kind == "NDResult" and accuracy > 0.95 and n == [4, 8]
