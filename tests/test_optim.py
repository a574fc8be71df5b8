"""Optimizers against NumPy float64 transcriptions of torch.optim's update rules, gradient clipping, the
cosine schedule, one submit per step and no new device buffers once a loop runs, and a small model
trained to a known solution on every backend."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import device_for

import trueno_web as tw
from trueno_web import optim
from trueno_web.runtime import block_on

GRADS = [np.array([[0.5, -1.0], [2.0, 0.25]]), np.array([[-0.3, 0.7], [0.1, -2.0]]), np.array([[1.0, 1.0], [-1, 0]])]
P0 = np.array([[1.0, -2.0], [0.5, 3.0]])


def reference(name: str, **kw) -> np.ndarray:
    """torch.optim's algorithm in float64 over GRADS."""
    p, m, v, buf = P0.copy(), 0.0, 0.0, None
    lr = kw.get("lr", 0.1)
    for t, g in enumerate(GRADS, start=1):
        if name == "sgd":
            wd, mu = kw.get("weight_decay", 0.0), kw.get("momentum", 0.0)
            g = g + wd * p
            if mu:
                buf = g if buf is None else mu * buf + g
                g = g + mu * buf if kw.get("nesterov") else buf
            p = p - lr * g
        else:
            b1, b2, eps, wd = 0.9, 0.999, 1e-8, kw.get("weight_decay", 0.0)
            if name == "adamw":
                p = p * (1 - lr * wd)
            elif wd:
                g = g + wd * p
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            p = p - lr / (1 - b1**t) * m / (np.sqrt(v / (1 - b2**t)) + eps)
    return p


CASES = [
    ("sgd", optim.SGD, {}),
    ("sgd", optim.SGD, {"momentum": 0.9}),
    ("sgd", optim.SGD, {"momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("adam", optim.Adam, {}),
    ("adam", optim.Adam, {"weight_decay": 0.1}),
    ("adamw", optim.AdamW, {"weight_decay": 0.1}),
]


@pytest.mark.parametrize("name,cls,kw", CASES, ids=lambda v: str(v))
def test_updates_match_torch_rules(name, cls, kw, dev):
    p = dev.tensor(P0.astype(np.float32))
    params = {"w": p}
    opt = cls(params, lr=0.1, **kw)
    for g in GRADS:
        block_on(opt.step({"w": dev.tensor(g.astype(np.float32))}))
    assert params["w"] is p  # rebound in place
    np.testing.assert_allclose(block_on(p.numpy()), reference(name, lr=0.1, **kw), rtol=1e-5, atol=1e-6)


def test_clip_by_global_norm_and_schedule():
    dev = device_for("numpy")
    grads = [dev.tensor(np.array([3.0, 0.0], np.float32)), {"b": dev.tensor(np.array([[4.0]], np.float32))}]
    assert block_on(optim.global_norm(grads).item()) == pytest.approx(5.0)
    clipped = optim.clip_by_global_norm(grads, 1.0)
    np.testing.assert_allclose(block_on(clipped[0].numpy()), [0.6, 0.0], rtol=1e-6)
    np.testing.assert_allclose(block_on(clipped[1]["b"].numpy()), [[0.8]], rtol=1e-6)
    kept = optim.clip_by_global_norm(grads, 10.0)
    np.testing.assert_array_equal(block_on(kept[0].numpy()), [3.0, 0.0])
    lr = optim.cosine_schedule(1.0, total_steps=10, warmup=2, end=0.1)
    assert [lr(0), lr(1)] == [0.5, 1.0]
    assert lr(2) == pytest.approx(1.0) and lr(10) == pytest.approx(0.1)
    assert lr(6) == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * 0.5)))


def _fit(dev, steps: int):
    """Least squares y = x @ w_true + 0.5 from random weights, AdamW with a schedule and clipping."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    w_true = np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)
    y = x @ w_true + 0.5
    params = {"w": dev.tensor(np.zeros((4, 1), np.float32)), "b": dev.tensor(np.zeros(1, np.float32))}
    X, Y = dev.tensor(x), dev.tensor(y)
    opt = optim.AdamW(params, lr=optim.cosine_schedule(0.1, steps, warmup=5), weight_decay=0.0, clip_norm=10.0)
    step = tw.value_and_grad(lambda p: ((X @ p["w"] + p["b"] - Y) ** 2.0).mean())
    losses = []
    for _ in range(steps):
        loss, grads = step(params)
        block_on(opt.step(grads, loss))
        losses.append(block_on(loss.item()))
    return params, losses, w_true


def test_training_reaches_the_solution(dev):
    params, losses, w_true = _fit(dev, 150)
    assert losses[-1] < 1e-3 * losses[0]
    np.testing.assert_allclose(block_on(params["w"].numpy()), w_true, atol=2e-2)
    np.testing.assert_allclose(block_on(params["b"].numpy()), [0.5], atol=2e-2)


def test_one_submit_per_step_and_no_new_buffers(fresh_gpu):
    dev = fresh_gpu
    made = []
    driver = dev.executor.driver
    create = driver.create_buffer
    driver.create_buffer = lambda n: made.append(n) or create(n)
    try:
        _fit(dev, 4)
        before_made, before_submits = len(made), dev.stats.submits
        _fit_steps = 6
        params, losses, _ = _fit(dev, _fit_steps)
    finally:
        driver.create_buffer = create
    assert dev.stats.submits - before_submits == _fit_steps
    assert len(made) == before_made, "a training loop made new device buffers after its first steps"


def test_misuse():
    dev = device_for("numpy")
    p = dev.tensor(np.zeros(2, np.float32))
    with pytest.raises(tw.TruenoValueError, match="at least one parameter"):
        optim.SGD({}, lr=0.1)
    with pytest.raises(tw.TruenoTypeError, match="lr is a non-negative number"):
        optim.SGD([p], lr="fast")
    assert (optim.Adam([p]).weight_decay, optim.AdamW([p]).weight_decay) == (0.0, 0.01)  # torch's defaults
    opt = optim.SGD([p], lr=0.1)
    with pytest.raises(tw.TruenoValueError, match=r"gradient of shape \(3,\) for a parameter of shape \(2,\)"):
        block_on(opt.step([dev.tensor(np.zeros(3, np.float32))]))
    block_on(opt.step([dev.tensor(np.ones(2, np.float32))]))
    np.testing.assert_allclose(block_on(p.numpy()), [-0.1, -0.1])
