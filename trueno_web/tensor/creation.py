"""Making tensors: from host data, a number, a DeviceArray or a Tensor (asarray); from a generator row
(generate: tw.random's draws and the `index` iota, made on the device); the array API's constants (zeros,
ones, full, empty and their _like forms): a 0-d leaf of 4 bytes expanded to the shape (a stride-0 view),
never a host array of the result's size. arange, linspace, eye, tril, triu and meshgrid are in iota.py.

`device=None` is the default device (device.default_device): device.py, which sits above this module,
installs its getter here with `use_default_device` when it is imported."""

from __future__ import annotations

import math
import operator
from numbers import Integral, Number, Real

from .. import ops
from ..dtypes import dtype_of, iinfo, py_cast, scalar_dtype, signature
from ..errors import TruenoTypeError, TruenoValueError
from ..resident import DeviceArray
from .core import Tensor
from .expr import Expr, leaf

INDEX = ops.get("index")
_default_device = None  # device.default_device, installed by device.py (see the module docstring)


def use_default_device(getter) -> None:
    """Install the function that gives the device of `device=None` (device.py does, at import)."""
    global _default_device
    _default_device = getter


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


def generate(device, op, shape: tuple[int, ...], params: tuple[float, ...], strides=None) -> Tensor:
    """A Tensor of generator row `op` (ops.GENERATORS: no inputs, e.g. tw.random.uniform) on `device`:
    nothing is uploaded, each element is made from its index where the expression runs (`strides`: the
    index iota's, kinds._generator_shape)."""
    if not getattr(op, "generator", False):
        raise TruenoTypeError(f"generate() takes a generator row of ops.GENERATORS, got {op!r:.60}")
    device.check_open()
    shape, options = op.row.shape(op, [], {"shape": shape} | ({} if strides is None else {"strides": strides}))
    device.executor.check_size(math.prod(shape) * 4, f"this {op.name} draw")
    dtype = signature(op, [])[1]
    params = tuple(float(p) for p in params)
    return Tensor(device, Expr(shape, op=op, params=params, options=options, dtype=dtype))


# ---------------------------------------------------------------- arguments of the creation functions


def device_arg(device, where: str):
    """The device of `device=`: a GpuDevice, or None for the default device; open."""
    if device is None:
        if _default_device is None:
            raise TruenoTypeError(
                f"{where} needs device= here: the default device comes with trueno_web.device (call tw.{where}, "
                "which loads it, or pass device=)"
            )
        device = _default_device()
    if not hasattr(device, "executor") or not hasattr(device, "check_open"):
        raise TruenoTypeError(
            f"{where}: device= must be a GpuDevice (or None: the default); got {type(device).__name__}"
        )
    device.check_open()
    return device


def shape_arg(shape, where: str) -> tuple[int, ...]:
    """An int or a tuple of ints, none negative."""
    dims = (shape,) if isinstance(shape, Integral) else shape
    try:
        dims = tuple(dims)
        if any(isinstance(d, bool) for d in dims):
            raise TypeError
        dims = tuple(operator.index(d) for d in dims)
    except TypeError:
        raise TruenoTypeError(f"{where}: shape must be an int or a tuple of ints; got {shape!r:.60}") from None
    if any(d < 0 for d in dims):
        raise TruenoValueError(f"{where}: shape {dims} has a negative size")
    return dims


def int_arg(value, name: str, where: str) -> int:
    """A Python int (a bool is no size)."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TruenoTypeError(f"{where}: {name} must be an int; got {type(value).__name__} {value!r:.40}")
    return int(value)


def constant(device, value, dtype, where: str) -> Tensor:
    """A 0-d tensor of `value` (a Python bool, int, float or complex) as `dtype` (None: the value's own, the
    standard's bool -> bool, int -> int32, float -> float32, complex -> complex64). An int out of an integer
    dtype's range raises, as does a complex value of a real dtype."""
    if not isinstance(value, Number):
        raise TruenoTypeError(f"{where}: the fill value must be a number; got {type(value).__name__}")
    dtype = scalar_dtype(value) if dtype is None else dtype_of(dtype)
    if not isinstance(value, Real) and dtype.kind != "complex":
        raise TruenoTypeError(f"{where}: a complex fill value needs a complex dtype; got dtype={dtype.name}")
    if dtype.integral and isinstance(value, Integral) and not isinstance(value, bool):
        lo, hi = iinfo(dtype).min, iinfo(dtype).max
        if not lo <= value <= hi:
            raise TruenoValueError(f"{where}: {value} does not fit {dtype.name} ({lo} to {hi}); pick a wider dtype")
    return Tensor(device, leaf(device, py_cast(value, dtype), dtype=dtype))


def filled(device, shape: tuple[int, ...], value, dtype, where: str) -> Tensor:
    """`value` expanded to `shape` (a stride-0 view of a 0-d leaf: 4 bytes uploaded)."""
    c = constant(device, value, dtype, where)
    device.executor.check_size(math.prod(shape) * c.dtype.itemsize, f"this {where} result")
    return c.expand(shape) if shape else c


# ---------------------------------------------------------------- the array API's constants


def full(shape, fill_value, *, dtype=None, device=None) -> Tensor:
    """A tensor of `shape` holding `fill_value`; dtype from the value where not given (bool -> bool, int ->
    int32, float -> float32). Made on the device: a 0-d leaf expanded."""
    return filled(device_arg(device, "full"), shape_arg(shape, "full"), fill_value, dtype, "full")


def zeros(shape, *, dtype=None, device=None) -> Tensor:
    """A tensor of `shape` holding 0 (float32 unless `dtype`)."""
    return filled(device_arg(device, "zeros"), shape_arg(shape, "zeros"), 0, _float(dtype), "zeros")


def ones(shape, *, dtype=None, device=None) -> Tensor:
    """A tensor of `shape` holding 1 (float32 unless `dtype`)."""
    return filled(device_arg(device, "ones"), shape_arg(shape, "ones"), 1, _float(dtype), "ones")


def empty(shape, *, dtype=None, device=None) -> Tensor:
    """A tensor of `shape` whose values are unspecified (here: zeros, made on the device)."""
    return filled(device_arg(device, "empty"), shape_arg(shape, "empty"), 0, _float(dtype), "empty")


def full_like(x, /, fill_value, *, dtype=None, device=None) -> Tensor:
    """full() of x's shape, dtype and device unless given."""
    return _like(x, fill_value, dtype, device, "full_like")


def zeros_like(x, /, *, dtype=None, device=None) -> Tensor:
    return _like(x, 0, dtype, device, "zeros_like")


def ones_like(x, /, *, dtype=None, device=None) -> Tensor:
    return _like(x, 1, dtype, device, "ones_like")


def empty_like(x, /, *, dtype=None, device=None) -> Tensor:
    return _like(x, 0, dtype, device, "empty_like")


def _float(dtype):
    return "float32" if dtype is None else dtype


def _like(x, value, dtype, device, where: str) -> Tensor:
    if not isinstance(x, (Tensor, DeviceArray)):
        raise TruenoTypeError(
            f"{where} takes a Tensor or DeviceArray (its shape, dtype, device); got {type(x).__name__}"
        )
    device = device_arg(x.device if device is None else device, where)
    return filled(device, x.shape, value, x.dtype if dtype is None else dtype, where)
