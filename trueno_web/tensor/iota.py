"""The array API's ranges and grids, made on the device from the `index` generator (ops.GENERATORS: each
element's flat index as int32): arange, linspace, eye, tril, triu, meshgrid. Nothing of the result's size
is uploaded: only 0-d constants (4 bytes each) and the ops' parameters."""

from __future__ import annotations

import math
import struct
from numbers import Integral, Real

from ..dtypes import bool_, dtype_of, float32, iinfo, int32
from ..errors import TruenoTypeError, TruenoValueError
from .core import Tensor
from .creation import INDEX, constant, device_arg, filled, generate, int_arg


def f32(x: float) -> float:
    """x rounded to float32 (as the kernels hold it)."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        raise TruenoValueError(f"{x} is out of float32's range") from None


def iota(device, n: int) -> Tensor:
    """0, 1, ..., n - 1 as int32, made on the device (the `index` generator)."""
    return generate(device, INDEX, (n,), ())


def _number(value, name: str, where: str):
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TruenoTypeError(f"{where}: {name} must be an int or a float; got {type(value).__name__} {value!r:.40}")
    if not math.isfinite(value):
        raise TruenoValueError(f"{where}: {name} must be finite; got {value}")
    return value if isinstance(value, Integral) else float(value)


def arange(start, /, stop=None, step=1, *, dtype=None, device=None) -> Tensor:
    """start, start + step, ... up to stop (excluded): ceil((stop - start) / step) values (the standard's
    length). Integers: exact (integer arguments); float32 and float64: NumPy's np.arange(..., dtype=) bit for
    bit: the first two values rounded from start and start + step, then start + i * (their difference)."""
    if stop is None:
        start, stop = 0, start
    start, stop, step = (_number(v, n, "arange") for v, n in ((start, "start"), (stop, "stop"), (step, "step")))
    if step == 0:
        raise TruenoValueError("arange: step must not be 0")
    ints = all(isinstance(v, Integral) for v in (start, stop, step))
    dtype = (int32 if ints else float32) if dtype is None else dtype_of(dtype)
    dev = device_arg(device, "arange")
    if dtype is bool_:
        raise TruenoTypeError("arange makes numbers: pass dtype= int32, uint32 or float32, not bool")
    if dtype.integral:
        if not ints:
            raise TruenoTypeError(f"arange of {dtype.name} takes int start, stop and step; got floats")
        n = max(0, -(-(stop - start) // step))
        lo, hi = iinfo(dtype).min, iinfo(dtype).max
        if n and not (lo <= start <= hi and lo <= start + (n - 1) * step <= hi):
            raise TruenoValueError(f"arange: values from {start} to {start + (n - 1) * step} do not fit {dtype.name}")
        return _affine(dev, iota(dev, n), start, step, dtype)
    n = max(0, math.ceil((stop - start) / step))
    rounded = f32 if dtype is float32 else float
    first, second = rounded(start), rounded(start + step)
    i = iota(dev, n)
    values = _affine(dev, i, first, rounded(second - first), dtype)
    return (i == 1).where(second, values) if n > 1 else values  # NumPy's second value: start + step, rounded once


def _affine(dev, i: Tensor, start, step, dtype) -> Tensor:
    """start + i * step for the iota i, computed in `dtype` (integers wrap: the result is exact where it fits)."""
    i = i if dtype is int32 else i.astype(dtype)
    if dtype.integral:  # the step and start as the dtype's words (modular: wrapping is exact)
        bits = 1 << dtype.bits
        wrap = (lambda v: (v + bits // 2) % bits - bits // 2) if dtype.kind == "signed" else (lambda v: v % bits)
        step, start = constant(dev, wrap(step), dtype, "arange"), constant(dev, wrap(start), dtype, "arange")
    return i * step + start


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True) -> Tensor:
    """`num` evenly spaced float32 (or `dtype` float64) values from start to stop (stop included where endpoint): start + i * step,
    step = (stop - start) / (num - 1) (num with endpoint=False); the first value is start and (endpoint) the
    last is stop exactly."""
    start, stop = _number(start, "start", "linspace"), _number(stop, "stop", "linspace")
    num = int_arg(num, "num", "linspace")
    if num < 0:
        raise TruenoValueError(f"linspace: num must be >= 0; got {num}")
    dtype = float32 if dtype is None else dtype_of(dtype)
    if dtype.kind != "float":
        raise TruenoTypeError(f"linspace makes float values (float32, float64); got dtype={dtype.name}")
    dev = device_arg(device, "linspace")
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    i = iota(dev, num)
    rounded = f32 if dtype is float32 else float
    values = _affine(dev, i, rounded(start), rounded(step), dtype)
    return (i == num - 1).where(rounded(stop), values) if endpoint and num > 1 else values


def _grid(dev, shape: tuple[int, ...]) -> Tensor:
    """cols - rows over the last two axes of `shape`: two strided iotas (stride 0 along the other axes), so
    the kernel that reads them computes them (no view, no stored iota)."""
    lead = (0,) * (len(shape) - 2)
    return generate(dev, INDEX, shape, (), (*lead, 0, 1)) - generate(dev, INDEX, shape, (), (*lead, 1, 0))


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None) -> Tensor:
    """An (n_rows, n_cols) tensor with ones on diagonal k (k > 0 above the main one) and zeros elsewhere
    (float32 unless `dtype`): cols - rows == k, from two strided iotas, in one kernel."""
    n = int_arg(n_rows, "n_rows", "eye")
    m = n if n_cols is None else int_arg(n_cols, "n_cols", "eye")
    k = int_arg(k, "k", "eye")
    if n < 0 or m < 0:
        raise TruenoValueError(f"eye: sizes must be >= 0; got {n} x {m}")
    dev = device_arg(device, "eye")
    dtype = float32 if dtype is None else dtype_of(dtype)
    if not -n < k < m:  # no element on that diagonal (and k may be past int32)
        return filled(dev, (n, m), 0, dtype, "eye")
    dev.executor.check_size(n * m * dtype.itemsize, "this eye result")
    return (_grid(dev, (n, m)) == k).astype(dtype)


def tril(x, /, *, k=0) -> Tensor:
    """x with the elements above diagonal k of its last two axes zeroed: where(cols - rows <= k, x, 0)."""
    return _triangle(x, k, "tril")


def triu(x, /, *, k=0) -> Tensor:
    """x with the elements below diagonal k of its last two axes zeroed: where(cols - rows >= k, x, 0)."""
    return _triangle(x, k, "triu")


def _triangle(x, k, where: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TruenoTypeError(f"{where} takes a Tensor; got {type(x).__name__}")
    if x.ndim < 2:
        raise TruenoValueError(f"{where} needs a tensor of 2 or more dimensions; got shape {x.shape}")
    k = int_arg(k, "k", where)
    n, m = x.shape[-2:]
    k = max(-n, min(m, k))  # past the corners every diagonal is in (or out): an int32 comparison
    d = _grid(device_arg(x.device, where), x.shape)
    mask = d <= k if where == "tril" else d >= k
    return mask.where(x, constant(x.device, 0, x.dtype, where))


def meshgrid(*arrays, indexing: str = "xy") -> list[Tensor]:
    """Coordinate grids of 1-D tensors of one dtype and device: views (stride 0), nothing copied. "xy": the
    first two axes swapped (Cartesian, NumPy's default); "ij": matrix indexing."""
    if indexing not in ("xy", "ij"):
        raise TruenoValueError(f'meshgrid: indexing must be "xy" or "ij"; got {indexing!r:.40}')
    if not all(isinstance(a, Tensor) for a in arrays):
        raise TruenoTypeError("meshgrid takes 1-D Tensors")
    if any(a.ndim != 1 for a in arrays):
        raise TruenoValueError(f"meshgrid takes 1-D tensors; got shapes {[a.shape for a in arrays]}")
    if len({a.dtype for a in arrays}) > 1:
        raise TruenoTypeError(
            f"meshgrid takes tensors of one dtype; got {[a.dtype.name for a in arrays]}: convert them"
        )
    if len({id(a.device) for a in arrays}) > 1:
        raise TruenoValueError("meshgrid takes tensors on one device; read one and make it a tensor of the other's")
    axes = list(range(len(arrays)))
    if indexing == "xy" and len(arrays) > 1:
        axes[0], axes[1] = 1, 0
    shape = [0] * len(arrays)
    for a, axis in zip(arrays, axes):
        shape[axis] = a.shape[0]
    out = []
    for a, axis in zip(arrays, axes):
        one = [1] * len(arrays)
        one[axis] = a.shape[0]
        out.append(a.reshape(*one).expand(*shape))
    return out
