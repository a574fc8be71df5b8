"""The Python array API standard's (2024.12) free functions that are not a Tensor method of the same name:
the inspection namespace, asarray with the default device, and the spec's names and keywords for the
movement, joining and linear-algebra functions, written with tensor methods. `import trueno_web as xp`
is the namespace (trueno_web/__init__.py exports these lazily; the catalog's ops come as Tensor methods)."""

from __future__ import annotations

import math
import operator

from .device import GpuDevice, default_device
from .dtypes import BY_NAME, INDEX, DType, complex64, dtype_of, float16, float32
from .dtypes import isdtype as is_kind
from .errors import TruenoTypeError, TruenoValueError
from .resident import DeviceArray
from .tensor import Tensor, matmul
from .tensor import asarray as tensor_asarray
from .tensor import concatenate as tensor_concatenate
from .tensor.core import as_tensors, broadcast_shapes
from .tensor.views import axes_tuple, axis_index, shape_arg

e, pi, inf, nan, newaxis = math.e, math.pi, math.inf, math.nan, None


class Info:
    """What `__array_namespace_info__()` returns: the capabilities, devices and dtypes of trueno_web."""

    def capabilities(self) -> dict:
        """Boolean masks index (`x[x > 0]`) and nonzero works: both read the mask to the host for the shape."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self) -> GpuDevice:
        return default_device()

    def devices(self) -> list[GpuDevice]:
        return [default_device()]

    def default_dtypes(self, *, device=None) -> dict[str, DType]:
        """float32, complex64 and int32 on every device (those every backend holds but complex64, numpy's;
        float64 is asked for by name)."""
        if device is not None:
            _device(device)  # a GpuDevice, or TruenoTypeError
        return {"real floating": float32, "complex floating": complex64, "integral": INDEX, "indexing": INDEX}

    def dtypes(self, *, device=None, kind=None) -> dict[str, DType]:
        """The standard's dtypes `device` (default: the default device) holds, of `kind` if given: the four
        32-bit ones everywhere, float64, int64, complex64 and complex128 too on backend='numpy'. float16, held
        everywhere, is no dtype of the standard: not listed."""
        held = _device(device).executor.dtypes
        return {
            d.name: d
            for d in BY_NAME.values()
            if d.name in held and d is not float16 and (kind is None or is_kind(d, kind))
        }


def __array_namespace_info__() -> Info:
    return Info()


def _device(device, *arrays) -> GpuDevice:
    """The device to make a tensor on: `device`, else the arrays' one, else the default device."""
    if device is not None:
        if not isinstance(device, GpuDevice):
            raise TruenoTypeError(f"device= takes a GpuDevice (e.g. x.device), got {type(device).__name__}")
        return device
    return next((a.device for a in arrays if isinstance(a, (Tensor, DeviceArray))), None) or default_device()


def _plain(obj):
    """Nested lists with tensors among their items as plain nested lists (each tensor read: blocking)."""
    if isinstance(obj, Tensor):
        return obj.numpy_sync().tolist()
    if isinstance(obj, (list, tuple)) and any([isinstance(v, (Tensor, list, tuple)) for v in obj]):
        return [_plain(v) for v in obj]
    return obj


def asarray(obj, /, device=None, shape=None, *, dtype=None, copy=None) -> Tensor:
    """A Tensor of `obj` (host data, a number, a nested list, a Tensor or DeviceArray; `shape` reshapes flat
    host data) on `device` (default: the array's, else tw.default_device()). copy=False refuses to copy host
    data or change the dtype."""
    is_array = isinstance(obj, (Tensor, DeviceArray))
    target = None if dtype is None else dtype_of(dtype)
    if copy is False and (not is_array or (target is not None and target is not obj.dtype)):
        raise TruenoValueError("asarray(copy=False) would need a copy here (host data, or another dtype)")
    if isinstance(obj, (list, tuple)):
        obj = _plain(obj)
    dev = _device(device, obj)
    if isinstance(obj, DeviceArray):
        obj = obj.device.tensor(obj)
    if is_array and obj.device is not dev:
        obj = obj.to_device(dev)
    out = tensor_asarray(obj, dev, shape, dtype=target)
    return Tensor(out.device, out.expr) if copy and out is obj else out


def from_dlpack(x, /, *, device=None, copy=None) -> Tensor:
    """A Tensor of the values of any DLPack producer (copied through NumPy onto `device`), of the producer's
    dtype where the device holds it (a float64 array stays float64 on backend='numpy'; float32 elsewhere)."""
    import numpy as np

    values = np.from_dlpack(x) if copy is None else np.from_dlpack(x, copy=copy)
    device = _device(device, x)
    held = values.dtype.name in device.executor.dtypes
    return asarray(values, device=device, dtype=values.dtype.name if held else None)


def astype(x, dtype, /, *, copy: bool = True, device=None) -> Tensor:
    return asarray(x, device=device).astype(dtype, copy=copy)


# ---------------------------------------------------------------- shapes and axes


def reshape(x, /, shape, *, copy=None) -> Tensor:
    if copy is False and not x.expr.row_major():
        raise TruenoValueError("reshape(copy=False): this tensor is a strided view; a reshape of it copies")
    return x.reshape(shape_arg((shape,) if isinstance(shape, int) else tuple(shape)))


def permute_dims(x, /, axes) -> Tensor:
    return x.permute(tuple(axes))


def matrix_transpose(x, /) -> Tensor:
    return x.mT


def expand_dims(x, /, axis: int = 0) -> Tensor:
    return x.unsqueeze(axis)


def broadcast_to(x, /, shape) -> Tensor:
    return x.expand(tuple(shape))


def broadcast_arrays(*arrays) -> list[Tensor]:
    ts = as_tensors(list(arrays))
    shape = broadcast_shapes(*(t.shape for t in ts))
    return [t.expand(shape) for t in ts]


def flip(x, /, *, axis=None) -> Tensor:
    axes = axes_tuple(axis, x.ndim, "flip")
    return x[tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(x.ndim))]


def roll(x, /, shift, *, axis=None) -> Tensor:
    """The elements shifted along `axis` (None: the flattened tensor), wrapping around: two slices joined."""
    if axis is None:
        return roll(x.reshape(-1), shift, axis=0).reshape(x.shape)
    shifts = shift if isinstance(shift, tuple) else (shift,)
    axes = axis if isinstance(axis, tuple) else (axis,) * len(shifts)
    if len(shifts) != len(axes):
        raise TruenoValueError(f"roll: shift {shift} and axis {axis} must have the same length")
    for s, a in zip(shifts, axes):
        a = axis_index(a, x.ndim, "roll")
        n = x.shape[a]
        s = operator.index(s) % n if n else 0
        if s:
            head = [slice(None)] * x.ndim
            tail = list(head)
            head[a], tail[a] = slice(n - s, None), slice(None, n - s)
            x = tensor_concatenate([x[tuple(head)], x[tuple(tail)]], a)
    return x


def tile(x, repetitions, /) -> Tensor:
    """x repeated `repetitions` times along each axis (a broadcast view of a new axis before each, reshaped)."""
    reps = tuple(operator.index(r) for r in repetitions)
    nd = max(len(reps), x.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    x = x.reshape((1,) * (nd - x.ndim) + x.shape)
    wide = x.reshape([v for d in x.shape for v in (1, d)]).expand([v for r, d in zip(reps, x.shape) for v in (r, d)])
    return wide.reshape([r * d for r, d in zip(reps, x.shape)])


def repeat(x, repeats, /, *, axis=None) -> Tensor:
    """Each element repeated `repeats` times along `axis` (None: of the flattened tensor): an int, or per-element
    counts (a sequence or an integer tensor, one count or one per element; a tensor's are read: the result's
    shape depends on them, as boolean masks' do)."""
    if axis is None:
        x, axis = x.reshape(-1), 0
    a = axis_index(axis, x.ndim, "repeat")
    if isinstance(repeats, Tensor) or isinstance(repeats, (list, tuple)):
        if isinstance(repeats, Tensor) and not repeats.dtype.integral:
            raise TruenoTypeError(f"repeat: counts must be integers, got a {repeats.dtype} tensor")
        given = repeats.numpy_sync().reshape(-1).tolist() if isinstance(repeats, Tensor) else list(repeats)
        if any(isinstance(c, (bool, float)) or not hasattr(c, "__index__") for c in given):
            raise TruenoTypeError(f"repeat: counts must be ints, got {repeats!r:.60}")
        counts = [operator.index(c) for c in given]
        if len(counts) == 1:
            return repeat(x, counts[0], axis=a)
        if len(counts) != x.shape[a] or any(c < 0 for c in counts):
            raise TruenoValueError(
                f"repeat: {len(counts)} counts for an axis of {x.shape[a]}: give one count, or one int >= 0 per element"
            )
        at = [i for i, c in enumerate(counts) for _ in range(c)]
        return x.take(tensor_asarray(at, device=x.device, dtype=INDEX), axis=a)
    if not isinstance(repeats, int) or isinstance(repeats, bool):
        raise TruenoTypeError(
            f"repeat: repeats is an int, a sequence of ints or an integer tensor; got {repeats!r:.40}"
        )
    if repeats < 0:
        raise TruenoValueError(f"repeat: repeats must be >= 0, got {repeats}")
    wide = x.unsqueeze(a + 1).expand(x.shape[: a + 1] + (repeats,) + x.shape[a + 1 :])
    return wide.reshape(x.shape[:a] + (x.shape[a] * repeats,) + x.shape[a + 1 :])


def concat(arrays, /, *, axis=0) -> Tensor:
    if axis is None:
        return tensor_concatenate([t.reshape(-1) for t in as_tensors(list(arrays))], 0)
    return tensor_concatenate(arrays, axis)


def unstack(x, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    a = axis_index(axis, x.ndim, "unstack")
    return tuple(x[(slice(None),) * a + (i,)] for i in range(x.shape[a]))


# ---------------------------------------------------------------- reductions and linear algebra


def vecdot(x1, x2, /, *, axis: int = -1) -> Tensor:
    """sum(conj(x1) * x2) along `axis`, after broadcasting (the conjugate of complex x1 only)."""
    a, b = as_tensors([x1, x2])
    a = a.conj() if a.dtype.kind == "complex" else a
    if a.ndim == 0 or b.ndim == 0:
        raise TruenoValueError("vecdot needs arrays of at least one dimension")
    shape = broadcast_shapes(a.shape, b.shape)
    ax = axis_index(axis, len(shape), "vecdot")
    if a.shape[ax - len(shape)] != b.shape[ax - len(shape)]:
        raise TruenoValueError(f"vecdot: axis {axis} differs: {a.shape} and {b.shape}")
    return (a * b).sum(ax)


def tensordot(x1, x2, /, *, axes=2) -> Tensor:
    """sum over the paired axes of x1 and x2 (NumPy's tensordot): one matmul of the reshaped operands."""
    a, b = as_tensors([x1, x2])
    if isinstance(axes, int):
        if axes < 0 or axes > min(a.ndim, b.ndim):
            raise TruenoValueError(f"tensordot: axes={axes} does not fit shapes {a.shape} and {b.shape}")
        xa, xb = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        xa = [axis_index(v, a.ndim, "tensordot") for v in axes[0]]
        xb = [axis_index(v, b.ndim, "tensordot") for v in axes[1]]
    if len(xa) != len(xb) or any(a.shape[i] != b.shape[j] for i, j in zip(xa, xb)):
        raise TruenoValueError(f"tensordot: axes {axes} pair sizes that differ in {a.shape} and {b.shape}")
    ra, rb = [d for d in range(a.ndim) if d not in xa], [d for d in range(b.ndim) if d not in xb]
    k = math.prod(a.shape[i] for i in xa)
    ma = a.permute(ra + xa).reshape(math.prod(a.shape[d] for d in ra), k)
    mb = b.permute(xb + rb).reshape(k, math.prod(b.shape[d] for d in rb))
    return matmul(ma, mb).reshape([a.shape[d] for d in ra] + [b.shape[d] for d in rb])


def clip(x, /, min=None, max=None) -> Tensor:
    """x limited to [min, max] (numbers or arrays, broadcast; either may be None); NaN anywhere gives NaN."""
    out = x if min is None else x.maximum(min)
    return out if max is None else out.minimum(max)


def outer(x1, x2, /) -> Tensor:
    a, b = as_tensors([x1, x2])
    if a.ndim != 1 or b.ndim != 1:
        raise TruenoValueError(f"outer takes two 1-D arrays, got shapes {a.shape} and {b.shape}")
    return a.unsqueeze(1) * b.unsqueeze(0)
