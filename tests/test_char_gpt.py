"""The tiny character-level GPT (trueno_web/char_gpt.py): its text, its loss falling under opt.trainer on every
backend, its gradient against finite differences of a float64 NumPy model, sampling, and its weights file."""

from __future__ import annotations

import math

import pytest
from conftest import BACKENDS, device_for

import trueno_web as tw
from trueno_web.char_gpt import CharGpt, Config, Vocab, load_text, named, windows
from trueno_web.runtime import block_on

TINY = Config(d_model=8, n_layers=1, n_heads=2, context=6)


@pytest.fixture(scope="module")
def npdev():
    return device_for("numpy")


def tiny_model(dev, chars="abcde\n", config=TINY, seed=0) -> CharGpt:
    return CharGpt.create(dev, Vocab(chars), config, tw.random.key(seed))


def test_the_shipped_text():
    text = load_text()
    assert 90_000 < len(text) < 250_000 and text.isascii()
    assert text.startswith("MACBETH") and "Fair is foul, and foul is fair" in text
    vocab = Vocab.from_text(text)
    assert len(vocab) == 67 and vocab.decode(vocab.encode("Hail, King of Scotland!")) == "Hail, King of Scotland!"
    with pytest.raises(tw.TruenoValueError, match="outside the vocabulary"):
        vocab.encode("caf\u00e9")


def test_windows_are_next_character_pairs():
    ids = list(range(50))
    x, y = next(windows(ids, batch=3, context=5, seed=1))
    assert len(x) == len(y) == 15
    for r in range(3):
        row_x, row_y = x[5 * r : 5 * r + 5], y[5 * r : 5 * r + 5]
        assert list(row_y[:-1]) == list(row_x[1:]) and row_y[-1] == row_x[-1] + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_loss_falls_under_the_trainer(backend):
    dev = device_for(backend)
    text = "the cat sat on the mat.\n" * 8
    vocab = Vocab.from_text(text)
    model = CharGpt.create(dev, vocab, TINY, tw.random.key(0))
    step = tw.optim.AdamW(model.params, lr=2e-2).trainer(model.loss)
    losses = []
    for _, (x, y) in zip(range(25), windows(vocab.encode(text), 4, TINY.context, seed=0)):
        losses.append(block_on(block_on(step(dev.tensor(x, (4, 6)), dev.tensor(y, (4, 6)))).item()))
    assert losses[0] == pytest.approx(math.log(len(vocab)), abs=0.1)  # small initial weights: a uniform guess
    assert sum(losses[-5:]) / 5 < losses[0] - 0.7, losses


def reference_loss(p: dict, tokens, labels, n_heads: int) -> float:
    """The model's loss in float64 NumPy, written independently of its tensor code (the block: test_models)."""
    import numpy as np
    from test_models import reference_block

    def ln(t, g, b):
        mu = t.mean(-1, keepdims=True)
        return (t - mu) / np.sqrt(((t - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * g + b

    n = tokens.shape[-1]
    x = p["tok_emb"][tokens.astype(int)] + p["pos_emb"][:n]
    for i in range(len([k for k in p if k.startswith("blocks.") and k.endswith(".w_o")])):
        x = reference_block(
            {k.split(".")[2]: (v, v.shape) for k, v in p.items() if k.startswith(f"blocks.{i}.")}, x, n_heads
        )
    z = ln(x, p["lnf_w"], p["lnf_b"]) @ p["w_out"]
    z = z - z.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return float(-np.take_along_axis(logp, labels.astype(int)[..., None], -1).mean())


@pytest.mark.parametrize("name", ["blocks.0.w_qkv", "tok_emb", "pos_emb"])
def test_gradient_matches_finite_differences(npdev, name):
    np = pytest.importorskip("numpy")
    from test_autodiff import fd_grad

    model = tiny_model(npdev, config=Config(d_model=8, n_layers=2, n_heads=2, context=5))
    rng = np.random.default_rng(3)
    host = {k: block_on(t.numpy()).astype(np.float64) for k, t in named(model.params).items()}
    for k in host:  # away from the initial weights' symmetry (biases 0, scales 1): every rule is exercised
        host[k] = host[k] + rng.normal(0, 0.3, host[k].shape)
    x = rng.integers(0, 6, (2, 5)).astype(np.float32)
    y = rng.integers(0, 6, (2, 5)).astype(np.float32)
    params = CharGpt.from_bytes(npdev, _blob(model, host))[0].params
    value, grads = tw.value_and_grad(model.loss)(params, npdev.tensor(x), npdev.tensor(y))
    got = block_on(named(grads)[name].numpy())
    assert block_on(value.item()) == pytest.approx(reference_loss(host, x, y, 2), rel=1e-4)
    names = list(host)
    want = fd_grad(
        lambda *arrays: reference_loss(dict(zip(names, arrays)), x, y, 2), list(host.values()), names.index(name)
    )
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-4 * max(1.0, float(np.abs(want).max())))


def _blob(model: CharGpt, host: dict) -> bytes:
    """A weights file of `model`'s vocabulary and sizes with the parameters `host` (float64 NumPy arrays)."""
    import json
    from dataclasses import asdict

    from trueno_web.models import write_safetensors

    meta = {"vocab": json.dumps(model.vocab.chars), "config": json.dumps(asdict(model.config))}
    return write_safetensors({k: (v.astype("float32"), v.shape) for k, v in host.items()}, meta)


def test_sampling_is_deterministic_per_key(npdev):
    model = tiny_model(npdev)
    a = block_on(model.sample("ab", 12, tw.random.key(5)))
    assert a == block_on(model.sample("ab", 12, tw.random.key(5)))
    assert len(a) == 14 and a.startswith("ab") and set(a) <= set(model.vocab.chars)
    others = {block_on(model.sample("ab", 12, tw.random.key(k))) for k in range(6, 10)}
    assert len(others | {a}) > 1  # other keys, other text (near-uniform logits: all 4 equal is ~6^-44)
    # past the context: the window slides
    long = block_on(model.sample("", 2 * TINY.context, tw.random.key(1)))
    assert len(long) == 2 * TINY.context + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_sampling_is_the_same_on_every_backend(backend):
    """The draws are made on the device from the key: webgpu, numpy and wasm-simd give the same characters
    (unless two candidates' scores tie within float32 rounding, which this seed does not)."""
    want = block_on(tiny_model(device_for("numpy"), seed=2).sample("a", 10, tw.random.key(4)))
    assert block_on(tiny_model(device_for(backend), seed=2).sample("a", 10, tw.random.key(4))) == want


def test_gumbel_max_draws_from_the_softmax(npdev):
    np = pytest.importorskip("numpy")
    from trueno_web.char_gpt import gumbel_argmax

    scores = np.log(np.array([0.1, 0.2, 0.7], np.float32))
    rows = npdev.tensor(np.tile(scores, (4000, 1)))
    drawn = block_on(gumbel_argmax(rows, tw.random.key(0)).numpy())
    freq = np.bincount(drawn.astype(int), minlength=3) / 4000
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.7], atol=0.03)
    assert block_on(gumbel_argmax(rows, tw.random.key(0), temperature=0).numpy()).tolist() == [2.0] * 4000
    cold = block_on(gumbel_argmax(rows, tw.random.key(1), temperature=0.05).numpy())
    assert (cold == 2).mean() > 0.99
    with pytest.raises(tw.TruenoValueError):
        gumbel_argmax(rows, tw.random.key(0), temperature=-1)


def test_greedy_sampling_follows_the_logits(npdev):
    np = pytest.importorskip("numpy")
    model = tiny_model(npdev, seed=3)
    text = block_on(model.sample("abc", 1, tw.random.key(0), temperature=0))
    tokens = npdev.tensor(np.array([model.vocab.encode("abc")], np.float32))
    want = int(block_on(model.logits(model.params, tokens).numpy())[0, -1].argmax())
    assert text == "abc" + model.vocab.chars[want]


def test_weights_round_trip(npdev, tmp_path):
    np = pytest.importorskip("numpy")
    model = tiny_model(npdev, config=Config(d_model=8, n_layers=2, n_heads=2, context=6))
    tokens = npdev.tensor(np.array([[0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0]], np.float32))
    want = block_on(model.logits(model.params, tokens).numpy())
    path = tmp_path / "gpt.bin"
    path.write_bytes(block_on(model.to_bytes({"final_loss": 1.25})))
    again, meta = CharGpt.from_bytes(npdev, path.read_bytes())
    assert meta["final_loss"] == "1.25" and again.config == model.config and again.vocab.chars == model.vocab.chars
    assert set(named(again.params)) == set(named(model.params))
    np.testing.assert_array_equal(block_on(again.logits(again.params, tokens).numpy()), want)


def test_bad_sizes(npdev):
    with pytest.raises(tw.TruenoValueError, match="multiple of n_heads"):
        Config(d_model=10, n_heads=4)
    model = tiny_model(npdev)
    with pytest.raises(tw.TruenoValueError, match="context is 6"):
        model.logits(model.params, npdev.tensor([[0.0] * 7]))


def test_grad_of_a_prefix_view(npdev):
    """The gradient through a view that reads its base row-major from offset 0 but not all of it (x[0], and
    TransformerBlock's qkv[0]): the rest of the base gets zeros."""
    x = npdev.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    g = block_on(tw.grad(lambda t: (t[0] * t[0]).sum())(x).numpy())
    assert g.tolist() == [[0.0, 2.0], [0.0, 0.0], [0.0, 0.0]]


def test_the_shipped_weights(npdev):
    """data/char_gpt.bin: trained on the shipped text (the command in data/README.md); its held-out loss is
    what its metadata says, well under a uniform guess's 4.2, and it samples."""
    text = load_text()
    model, meta = CharGpt.shipped(npdev)
    assert model.vocab.chars == Vocab.from_text(text).chars
    ids = model.vocab.encode(text)
    held_out = ids[len(ids) * 9 // 10 :]
    n = model.config.context
    x, y = next(windows(held_out, 8, n, seed=1234))  # the first of the windows the training script measured
    loss = block_on(model.loss(model.params, npdev.tensor(x, (8, n)), npdev.tensor(y, (8, n))).item())
    assert loss < 2.1 and abs(loss - float(meta["held_out_loss"])) < 0.3, (loss, meta)
    sample = block_on(model.sample("MACBETH.\n", 40, tw.random.key(0), temperature=0.8))
    assert len(sample) == 49 and set(sample) <= set(model.vocab.chars)
