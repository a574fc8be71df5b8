"""The public sync point: `await dev.synchronize()` and `await tw.synchronize(*tensors_or_devices)` wait for
the device's work (lazy tensors are realised first), on every backend; bad input raises; a closed device
raises DeviceLostError. NumPy-free: it runs in Pyodide too (e2e/test_parity_in_pyodide.py)."""

from __future__ import annotations

import math

import pytest

import trueno_web as tw
from trueno_web.runtime import block_on


def test_synchronize_waits_and_realises(dev):
    x = dev.tensor([float(i) for i in range(1 << 16)])
    y = (x * 1e-5).exp().sum()
    block_on(tw.synchronize(y))  # lazy: computed, then waited for
    assert y.expr.leaf is not None
    before = dev.stats.submits
    block_on(dev.synchronize())
    block_on(tw.synchronize(dev, y))  # nothing new to compute: no submit
    assert dev.stats.submits == before
    assert math.isclose(block_on(y.item()), sum(math.exp(i * 1e-5) for i in range(1 << 16)), rel_tol=1e-5)


def test_synchronize_bad_input_and_closed_device():
    with pytest.raises(tw.TruenoTypeError, match="tensors and devices"):
        block_on(tw.synchronize(3))
    with pytest.raises(tw.TruenoValueError, match="needs a tensor or a device"):
        block_on(tw.synchronize())
    dev = block_on(tw.GpuDevice.create("numpy"))
    dev.close()
    with pytest.raises(tw.DeviceLostError):
        block_on(dev.synchronize())
