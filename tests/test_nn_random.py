"""nn.dropout and nn.init: drawn on the device from explicit keys, the same values on every backend,
their statistics, dropout's gradient and fusion, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import device_for

import trueno_web as tw
from trueno_web.runtime import block_on


def test_dropout(dev):
    x = dev.tensor(np.ones((256, 256), np.float32))
    key = tw.random.key(3)
    y = block_on(tw.nn.dropout(x, 0.25, key).numpy())
    kept = y != 0
    assert set(np.unique(y).tolist()) <= {0.0, np.float32(1 / 0.75)}
    assert abs(kept.mean() - 0.75) < 0.01  # 65536 draws: the standard error is 0.0017
    np.testing.assert_array_equal(block_on(tw.nn.dropout(x, 0.25, key).numpy()), y)  # the same key, the same mask
    assert (block_on(tw.nn.dropout(x, 0.25, tw.random.split(key)[0]).numpy()) != y).any()
    assert tw.nn.dropout(x, 0.25, key, training=False) is x and tw.nn.dropout(x, 0.0, key) is x
    assert not block_on(tw.nn.dropout(x, 1.0, key).numpy()).any()
    g = block_on(tw.grad(lambda t: (tw.nn.dropout(t, 0.25, key) * 2.0).sum())(x).numpy())
    np.testing.assert_allclose(g, (y != 0) * 2.0 / 0.75, rtol=1e-6)  # the gradient goes where the mask kept


def test_dropout_fuses_and_matches_the_cpu(dev):
    x = dev.tensor(np.arange(4096, dtype=np.float32))
    block_on(tw.realize(x))
    before = dev.stats.dispatches
    y = block_on((tw.nn.dropout(x.relu(), 0.5, tw.random.key(1)) + 1.0).numpy())
    assert dev.stats.dispatches - before == 1
    cpu = device_for("numpy")
    want = block_on(
        (tw.nn.dropout(cpu.tensor(np.arange(4096, dtype=np.float32)).relu(), 0.5, tw.random.key(1)) + 1.0).numpy()
    )
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize(
    "name,shape,std",
    [
        ("kaiming_normal", (512, 256), math.sqrt(2 / 512)),
        ("kaiming_uniform", (512, 256), math.sqrt(2 / 512)),
        ("xavier_normal", (300, 100), math.sqrt(2 / 400)),
        ("xavier_uniform", (300, 100), math.sqrt(2 / 400)),
    ],
)
def test_initialisers_have_their_spread_and_agree_across_backends(name, shape, std, dev):
    w = block_on(getattr(tw.nn.init, name)(tw.random.key(7), shape, device=dev).numpy())
    assert w.shape == shape
    assert abs(w.mean()) < 4 * std / math.sqrt(w.size)
    assert w.std() == pytest.approx(std, rel=0.02)
    if name.endswith("uniform"):
        bound = std * math.sqrt(3)
        assert np.abs(w).max() <= bound
    cpu = block_on(getattr(tw.nn.init, name)(tw.random.key(7), shape, device=device_for("numpy")).numpy())
    np.testing.assert_allclose(w, cpu, rtol=1e-5, atol=1e-7)  # uniform: bit for bit; normal: a few ulps


def test_init_helpers_and_bad_input():
    assert tw.nn.init.fans((3, 4, 5)) == (12, 5) and tw.nn.init.fans((7,)) == (7, 7)
    assert tw.nn.init.gain("relu") == pytest.approx(math.sqrt(2))
    dev = device_for("numpy")
    with pytest.raises(tw.TruenoValueError, match="nonlinearity is one of"):
        tw.nn.init.kaiming_normal(tw.random.key(0), (2, 2), nonlinearity="swish", device=dev)
    with pytest.raises(tw.TruenoValueError, match="mode is"):
        tw.nn.init.kaiming_uniform(tw.random.key(0), (2, 2), mode="fan_avg", device=dev)
    with pytest.raises(tw.TruenoValueError, match="probability"):
        tw.nn.dropout(dev.tensor(np.ones(2, np.float32)), 1.5, tw.random.key(0))
    with pytest.raises(tw.TruenoValueError, match="shape of one dimension"):
        tw.nn.init.xavier_uniform(tw.random.key(0), (), device=dev)
    assert block_on(tw.nn.init.normal(tw.random.key(0), (3,), std=0.0, mean=2.0, device=dev).numpy()).tolist() == [
        2,
        2,
        2,
    ]
