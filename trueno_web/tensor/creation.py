"""Making tensors: from host data, a number, a DeviceArray or a Tensor (asarray); from a generator row
(generate: tw.random's draws, made on the device). Constructors such as zeros, ones, full and arange go
here too."""

from __future__ import annotations

import math

from ..errors import TruenoTypeError, TruenoValueError
from ..resident import DeviceArray
from .core import Tensor
from .expr import Expr, leaf


def asarray(data, device=None, shape=None) -> Tensor:
    """A Tensor on `device` from host data (converted to float32), a DeviceArray or a Tensor."""
    if isinstance(data, Tensor):
        if device is not None and data.device is not device:
            raise TruenoValueError("this tensor is on another device; read it and make a new one there")
        return data
    if isinstance(data, DeviceArray):
        if device is not None and data.device is not device:
            raise TruenoValueError("this DeviceArray is on another device; upload the data to this device")
        return Tensor(data.device, leaf(data.device, data))
    if device is None:
        raise TruenoTypeError("asarray needs device= for host data (e.g. tw.asarray(x, device=dev))")
    return Tensor(device, leaf(device, data, shape))


def generate(device, op, shape: tuple[int, ...], params: tuple[float, ...]) -> Tensor:
    """A Tensor of generator row `op` (ops.GENERATORS: no inputs, e.g. tw.random.uniform) on `device`:
    nothing is uploaded, each element is made from its index where the expression runs."""
    if not getattr(op, "generator", False):
        raise TruenoTypeError(f"generate() takes a generator row of ops.GENERATORS, got {op!r:.60}")
    device.check_open()
    shape, options = op.row.shape(op, [], {"shape": shape})
    device.executor.check_size(math.prod(shape) * 4, f"this {op.name} draw")
    return Tensor(device, Expr(shape, op=op, params=tuple(float(p) for p in params), options=options))
