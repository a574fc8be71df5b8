"""Expr: one node of a tensor expression, and how it reads memory.

A node is a leaf (host data, or a DeviceArray already on the device), an op of the catalog on input
nodes, or a view of a base node (a `layout.View`: shape, strides, offset, mask). realize.py turns the
nodes under some tensors into one batch; the Tensor methods build them.
"""

from __future__ import annotations

from numbers import Number
from types import MappingProxyType

from .. import ops
from ..dtypes import DType, float32, scalar_dtype
from ..errors import TruenoValueError
from ..host import HostData, to_host
from ..layout import View, contiguous_strides
from ..resident import DeviceArray

COPY = ops.get("copy")
NO_OPTIONS = MappingProxyType({})  # the options of most nodes: one shared read-only mapping, not a dict each
CONSTANTS_KEPT = 4096  # broadcast constants a device keeps at most (then its cache starts over)


class Expr:
    """One node of a tensor expression: a leaf (host data or a DeviceArray), an op, or a view of a base."""

    __slots__ = ("op", "inputs", "params", "options", "shape", "view", "leaf", "dtype")

    def __init__(self, shape, op=None, inputs=(), params=(), options=None, view=None, leaf=None, dtype=float32):
        self.shape, self.op, self.inputs, self.params = shape, op, inputs, params
        self.options, self.view, self.leaf, self.dtype = options or NO_OPTIONS, view, leaf, dtype

    def layout(self) -> tuple[Expr, tuple[int, ...], int]:
        """(base, strides, offset): how this node reads its base's flat storage (a node that is no view is
        its own base, read row-major)."""
        if self.view is not None:
            return self.inputs[0], self.view.strides, self.view.offset
        return self, contiguous_strides(self.shape), 0

    def row_major(self) -> bool:
        """Reads its base row-major (from some offset): False for a masked view."""
        view = self.view
        if view is None:
            return True
        return view.mask is None and view.strides == contiguous_strides(self.shape, view.strides)

    def contiguous(self) -> Expr:
        """This node, or its copy where it is a view that does not read its base row-major from offset 0:
        what a kernel that needs row-major memory of its own reads."""
        view = self.view
        if view is None or (view.offset == 0 and self.row_major()):
            return self
        return Expr(self.shape, op=COPY, inputs=(self,), dtype=self.dtype)


def leaf(device, data, shape=None, dtype: DType | None = None) -> Expr:
    """A leaf node on `device`: a DeviceArray of it, a number (0-d: of `dtype`, else its own kind's default)
    or host data (of its dtype, or converted to `dtype`), checked against the device's limits."""
    if isinstance(data, DeviceArray):
        if data.device is not device:
            raise TruenoValueError("this DeviceArray is on another device; upload the data to this device")
        data.check_alive()
        return Expr(data.shape, leaf=data, dtype=data.dtype)
    device.check_open()
    if isinstance(data, Number):
        host = to_host([data], dtype=dtype or scalar_dtype(data))
        host = HostData(host.data, (), dtype=host.dtype)
    else:
        host = to_host(data, shape, dtype)
    device.executor.check_size(host.size * host.dtype.itemsize, "this input")
    return Expr(host.shape, leaf=host, dtype=host.dtype)


def constant(device, value, dtype: DType, shape: tuple[int, ...] = ()) -> Expr:
    """A Python number as `dtype`, broadcast to `shape` (a 0-d leaf under a stride-0 view): kept per device
    (`GpuDevice.constants`) and shared by every op that uses that number at that shape, so a loop that
    writes `x <= 4.0` builds it once and realize uploads it once (the leaf becomes resident)."""
    key = (dtype.name, value if type(value) is int else _bits(value), shape)
    cache = device.constants
    found = cache.get(key)
    if found is not None:
        return found
    if len(cache) >= CONSTANTS_KEPT:
        cache.clear()
    base = leaf(device, value, dtype=dtype)
    if shape:
        view = View(shape, (0,) * len(shape), 0, tuple((0, d) for d in shape))
        base = Expr(shape, view=view, inputs=(base,), dtype=dtype)
    cache[key] = base
    return base


def _bits(value) -> tuple[str, str]:
    """A float's or complex's exact value as a key: hex keeps -0.0 apart from 0.0."""
    value = complex(value)
    return value.real.hex(), value.imag.hex()
