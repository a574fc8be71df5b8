"""The demo page's training panel, its Python side (trueno_web/app/training_panel.py, DemoSession.training) on
the desktop: bounded calls, the accuracy evaluated every `eval_every` steps, the run ending at its budget or at
stop(), and the digit panel classifying with the weights it trained (folded /16, as the shipped model is)."""

from __future__ import annotations

import math

import pytest
from conftest import backend_unavailable

from trueno_web.app.demo_page import DemoSession
from trueno_web.runtime import block_on


@pytest.fixture(scope="module")
def session(backend):
    cpu = "wasm-simd" if backend_unavailable("wasm-simd") is None else "numpy"  # the page's, where wasmtime is
    s = block_on(DemoSession.open(backend=backend, cpu_backend=cpu))
    yield s
    s.dev.close()
    s.cpu.close()


def test_a_run_reports_losses_and_accuracy_and_ends_at_its_budget(session):
    panel = session.training()
    panel.budget = 60
    first = block_on(panel.start())
    assert first["steps"] == 0 and first["accuracy"][0][0] == 0 and not first["done"]
    assert first["backend"] == session.dev.backend and first["test_size"] == 359
    steps, evals = [], list(first["accuracy"])
    while True:
        r = block_on(panel.run(25))
        assert len(r["loss_steps"]) == len(r["losses"]) <= 25
        steps += r["loss_steps"]
        evals += r["accuracy"]
        assert all(math.isfinite(v) for v in r["losses"])
        if r["done"]:
            break
    assert steps == list(range(1, 61)) and r["reason"] == "budget"
    assert [s for s, _ in evals] == [0, 25, 50, 60]  # every 25 steps, and the last step
    assert evals[-1][1] > 0.7 and r["steps_per_s"] > 0 and r["train_s"] > 0
    with pytest.raises(RuntimeError):
        block_on(panel.run(10))
    assert block_on(panel.stop())["accuracy"] == []  # ended already: nothing more to evaluate


def test_stop_then_classify_with_the_trained_weights(session):
    panel = session.training()
    panel.budget = 400
    block_on(panel.start())
    with pytest.raises(RuntimeError):
        block_on(panel.use("trained"))  # not before the run ended
    r = block_on(panel.run(30))
    assert r["steps"] == 30 and not r["done"]
    stopped = block_on(panel.stop())
    assert stopped["done"] and stopped["reason"] == "stopped" and stopped["accuracy"][0][0] == 30
    info = block_on(panel.use("trained"))
    assert info["weights"] == "trained" and "30 steps" in info["weights_label"]

    # the digit panel's forward pass on raw 0..16 pixels is the trainer's on pixels / 16
    test_x = panel.trainer.test_x
    want = block_on(panel.trainer.accuracy())
    pixels = [round(v * 16) for v in block_on(test_x.numpy()).reshape(-1).tolist()][:640]
    hits = 0
    for i in range(10):
        out = block_on(session.classify(pixels=pixels[64 * i : 64 * (i + 1)]))
        assert out["weights"] == "trained" and len(out["probabilities"]) == 10
        assert abs(sum(out["probabilities"]) - 1) < 1e-5 and out["max_abs_diff"] < 1e-4
        hits += out["predicted"] == panel.trainer.test_y[i]
    assert want > 0.5 and hits >= 5

    assert block_on(panel.use("shipped"))["weights"] == "shipped"
    assert block_on(session.classify(pixels=pixels[:64]))["weights"] == "shipped"
    block_on(panel.use("trained"))
    block_on(panel.start())  # a new run drops the old weights: back to the shipped ones
    assert block_on(session.classify(pixels=pixels[:64]))["weights"] == "shipped"
    with pytest.raises(ValueError):
        block_on(panel.use("other"))
