"""Making tensors: from host data, a number, a DeviceArray or a Tensor (asarray); from a generator row
(generate: tw.random's draws, made on the device). Constructors such as zeros, ones, full and arange go
here too."""

from __future__ import annotations

import math

from ..dtypes import dtype_of
from ..errors import TruenoTypeError, TruenoValueError
from ..resident import DeviceArray
from .core import Tensor
from .expr import Expr, leaf


def asarray(data, device=None, shape=None, *, dtype=None) -> Tensor:
    """A Tensor on `device` from host data (of its own dtype, or converted to `dtype` on the host), a
    DeviceArray or a Tensor (converted to `dtype` on the device where it is another)."""
    if isinstance(data, (Tensor, DeviceArray)):
        if device is not None and data.device is not device:
            raise TruenoValueError("this array is on another device; read it and make a new one there")
        t = data if isinstance(data, Tensor) else Tensor(data.device, leaf(data.device, data))
        return t if dtype is None else t.astype(dtype, copy=False)
    if device is None:
        raise TruenoTypeError("asarray needs device= for host data (e.g. tw.asarray(x, device=dev))")
    return Tensor(device, leaf(device, data, shape, None if dtype is None else dtype_of(dtype)))


def generate(device, op, shape: tuple[int, ...], params: tuple[float, ...]) -> Tensor:
    """A Tensor of generator row `op` (ops.GENERATORS: no inputs, e.g. tw.random.uniform) on `device`:
    nothing is uploaded, each element is made from its index where the expression runs."""
    if not getattr(op, "generator", False):
        raise TruenoTypeError(f"generate() takes a generator row of ops.GENERATORS, got {op!r:.60}")
    device.check_open()
    shape, options = op.row.shape(op, [], {"shape": shape})
    device.executor.check_size(math.prod(shape) * 4, f"this {op.name} draw")
    return Tensor(device, Expr(shape, op=op, params=tuple(float(p) for p in params), options=options))
