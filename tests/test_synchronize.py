"""The public sync point: `await dev.synchronize()` and `await tw.synchronize(*tensors_or_devices)` wait for
the device's work (lazy tensors are realised first), on every backend; bad input raises; a closed device
raises DeviceLostError."""

from __future__ import annotations

import numpy as np
import pytest

import trueno_web as tw
from trueno_web.runtime import block_on


def test_synchronize_waits_and_realises(dev):
    x = dev.tensor(np.arange(1 << 16, dtype=np.float32))
    y = (x * 1e-5).exp().sum()
    block_on(tw.synchronize(y))  # lazy: computed, then waited for
    assert y.expr.leaf is not None
    before = dev.stats.submits
    block_on(dev.synchronize())
    block_on(tw.synchronize(dev, y))  # nothing new to compute: no submit
    assert dev.stats.submits == before
    assert np.isfinite(block_on(y.item()))


def test_synchronize_bad_input_and_closed_device():
    with pytest.raises(tw.TruenoTypeError, match="tensors and devices"):
        block_on(tw.synchronize(3))
    with pytest.raises(tw.TruenoValueError, match="needs a tensor or a device"):
        block_on(tw.synchronize())
    dev = block_on(tw.GpuDevice.create("numpy"))
    dev.close()
    with pytest.raises(tw.DeviceLostError):
        block_on(dev.synchronize())
