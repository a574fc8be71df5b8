"""nn.cross_entropy, nn.mse and nn.one_hot against NumPy float64, their gradients against finite
differences, and bad input, on every backend."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import device_for
from test_autodiff import check

import trueno_web as tw
from trueno_web.runtime import block_on

RNG = np.random.default_rng(5)


def ref_cross_entropy(logits, target, axis=-1):
    z = logits - logits.max(axis, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis, keepdims=True))
    return -(target * log_p).sum(axis)


def test_cross_entropy_indices_and_probabilities(dev):
    logits = RNG.normal(0, 3, (7, 5)).astype(np.float32)
    labels = RNG.integers(0, 5, 7)
    onehot = np.eye(5)[labels]
    want = ref_cross_entropy(logits.astype(np.float64), onehot)
    t = dev.tensor(logits)
    for reduction, r in (("mean", want.mean()), ("sum", want.sum()), ("none", want)):
        got = block_on(tw.nn.cross_entropy(t, dev.tensor(labels.astype(np.float32)), reduction=reduction).numpy())
        np.testing.assert_allclose(got, r, rtol=1e-5, atol=1e-5)
    probs = RNG.dirichlet(np.ones(5), 7)
    got = block_on(tw.nn.cross_entropy(t, dev.tensor(probs.astype(np.float32))).numpy())
    np.testing.assert_allclose(got, ref_cross_entropy(logits.astype(np.float64), probs).mean(), rtol=1e-5)
    # the class axis first: logits (5, 7), labels (7,)
    got = block_on(tw.nn.cross_entropy(t.T, dev.tensor(labels.astype(np.float32)), axis=0, reduction="none").numpy())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_mse_and_one_hot(dev):
    a, b = RNG.normal(size=(4, 3)).astype(np.float32), RNG.normal(size=(3,)).astype(np.float32)
    got = block_on(tw.nn.mse(dev.tensor(a), dev.tensor(b)).item())
    assert got == pytest.approx(((a.astype(np.float64) - b) ** 2).mean(), rel=1e-5)
    oh = block_on(tw.nn.one_hot(dev.tensor(np.array([2.0, 0.0, 1.0], np.float32)), 4).numpy())
    np.testing.assert_array_equal(oh, np.eye(4)[[2, 0, 1]])


def test_gradients_against_finite_differences():
    dev = device_for("numpy")
    logits = RNG.normal(0, 2, (6, 4))
    probs = RNG.dirichlet(np.ones(4), 6)

    def ce(xp, z, p):
        if xp.__name__ == "TW":
            return tw.nn.cross_entropy(z, p)
        return ref_cross_entropy(z, p).mean()

    check(ce, [logits, probs], dev)
    check(
        lambda xp, a, b: ((a - b) ** 2).mean() if xp.__name__ == "NP" else tw.nn.mse(a, b),
        [RNG.normal(size=(3, 2)), RNG.normal(size=(2,))],
        dev,
    )


def test_bad_input_names_the_mistake():
    dev = device_for("numpy")
    z = dev.tensor(np.zeros((3, 4), np.float32))
    with pytest.raises(tw.TruenoValueError, match="neither as class indices"):
        tw.nn.cross_entropy(z, dev.tensor(np.zeros(4, np.float32)))
    with pytest.raises(tw.TruenoValueError, match="reduction is one of"):
        tw.nn.mse(z, z, reduction="avg")
    assert block_on(tw.nn.mse(z, z).item()) == 0.0
