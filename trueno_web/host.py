"""Host arrays in and out.

In: NumPy arrays, `array.array`, memoryviews and other buffers, (nested) lists of numbers, and in the
browser JS typed arrays. Everything becomes contiguous little-endian 32-bit words of a trueno_web dtype
(dtypes.py): floats float32, signed integers int32, unsigned uint32, bools bool (as the standard's asarray
infers them: a list of Python ints is int32, of floats float32; a float64 or int64 NumPy array too: the
dtypes every backend holds; Python complex numbers and complex NumPy arrays complex64, as their components'
words); `dtype=` converts, to float64, int64 or complex128 as well (8-byte words, for the NumPy backend). A 64-bit integer out of its dtype's range raises. Out: a `numpy.ndarray` of the dtype and the natural shape where NumPy imports, else
an `NDResult` of that shape (ndresult.py: an array.array that looks like a small array).
"""

from __future__ import annotations

import array
import importlib.util
import math
import struct
from dataclasses import dataclass
from functools import lru_cache
from numbers import Number, Real

from .dtypes import DType, bool_, complex64, dtype_of, float16, float32, iinfo, int32, uint32
from .errors import TruenoTypeError, TruenoValueError
from .ndresult import NDResult, half_round, half_values


@dataclass(frozen=True)
class HostData:
    """32-bit words of a dtype plus a shape: what a backend uploads."""

    data: memoryview  # 1-D, contiguous, format the dtype's typecode ('f', 'i', 'I', 'd', 'q'; float16: 'H' of its bits; bool: 'I' of 0 and 1;
    # complex: 'f' or 'd' of its components, real and imaginary in turn)
    shape: tuple[int, ...]
    borrowed: bool = False  # unchanged while its buffer lives (a one-shot call's input, or a conversion nobody
    # else holds): a CPU backend may use it in place
    dtype: DType = float32

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@lru_cache(maxsize=1)
def numpy_available() -> bool:
    """True where NumPy can be imported (checked without importing it)."""
    return importlib.util.find_spec("numpy") is not None


NUMPY_KINDS = {"f": float32, "i": int32, "u": uint32, "b": bool_, "c": complex64}  # a NumPy dtype's kind -> its dtype
FORMATS = {"f": float32, "d": float32, "e": float16, "?": bool_, "Zf": complex64, "Zd": complex64}  # a buffer's format
FORMATS.update({c: int32 for c in "bhilq"} | {c: uint32 for c in "BHILQ"})


def _from_numpy(x, dtype: DType | None = None) -> HostData:
    import numpy as np

    if x.dtype.kind not in NUMPY_KINDS:
        raise TruenoTypeError(f"cannot use a NumPy array of dtype {x.dtype}; pass numbers or bools")
    dtype = dtype or (float16 if x.dtype == np.float16 else NUMPY_KINDS[x.dtype.kind])
    if x.dtype.kind == "c" and dtype.kind != "complex":
        raise TruenoTypeError(
            f"a {x.dtype} array as {dtype.name} would drop a component; pass np.real(x) or np.imag(x)"
        )
    if dtype.integral and x.dtype.kind in "iu" and x.dtype.itemsize > dtype.itemsize and x.size:
        lo, hi = iinfo(dtype).min, iinfo(dtype).max
        if x.min() < lo or x.max() > hi:
            raise TruenoValueError(
                f"this {x.dtype} array holds values outside {dtype.name}'s range ({lo} to {hi}); pass "
                "dtype=trueno_web.int64 (backend='numpy'), float data or smaller values"
            )
    word = np.uint32 if dtype is bool_ else np.dtype(dtype.name)
    flat = np.ascontiguousarray(x if dtype is not bool_ else x != 0, dtype=word).reshape(-1)
    return HostData(
        memoryview(flat).cast("B").cast(dtype.typecode),
        tuple(int(d) for d in x.shape),
        borrowed=not np.may_share_memory(flat, x),  # a converted copy is ours alone
        dtype=dtype,
    )


def _from_buffer(x, dtype: DType | None = None) -> HostData:
    view = memoryview(x)
    shape = tuple(view.shape or ())
    fmt = view.format.lstrip("<=@")
    if fmt not in FORMATS:
        raise TruenoTypeError(f"cannot use a buffer of format {view.format!r}; pass float, integer or bool data")
    dtype = dtype or FORMATS[fmt]
    if fmt == dtype.typecode and dtype is not bool_ and view.c_contiguous:
        if dtype.kind == "complex":  # its components' words, real and imaginary in turn (a HostData's own)
            return HostData(view.cast("B").cast(fmt), (view.nbytes // dtype.itemsize,), dtype=dtype)
        return HostData(view.cast("B").cast(fmt), shape, dtype=dtype)
    if numpy_available():
        import numpy as np

        return _from_numpy(np.asarray(view), dtype)
    return _from_flat(view.tolist() if view.ndim <= 1 else _flatten(view.tolist(), shape), shape, dtype)


def _flatten(rows, shape):
    out = []
    for row in rows:
        out.extend(row if len(shape) == 2 else _flatten(row, shape[1:]))
    return out


def _shape_of(x) -> tuple[int, ...]:
    if isinstance(x, (list, tuple)):
        if not x:
            return (0,)
        inner = {_shape_of(e) for e in x}
        if len(inner) != 1:
            raise TruenoValueError("nested lists must be rectangular (every row the same length)")
        return (len(x), *inner.pop())
    if isinstance(x, Number):  # bools too: nested lists of bools (and of bools and ints) are data
        return ()
    raise TruenoTypeError(f"cannot use {type(x).__name__} {x!r:.40} as a number; pass numbers (lists, arrays, buffers)")


def _from_list(x, dtype: DType | None = None) -> HostData:
    types = set(map(type, x))
    if x and types <= {float, int, bool, complex}:  # the common case, at C speed: a flat list of plain numbers
        return _from_flat(x, (len(x),), dtype or _inferred(types))
    shape = _shape_of(x)
    if shape == ():
        raise TruenoTypeError("pass a sequence of numbers, not a single number")
    flat = x
    for _ in range(len(shape) - 1):
        flat = [v for row in flat for v in row]
    return _from_flat(flat, shape, dtype or _inferred(set(map(type, flat))))


def _inferred(types: set) -> DType:
    """The dtype of a list of Python scalars of `types` (the standard's asarray): bool if all are, int32
    if all are ints, complex64 if any is complex, else float32."""
    if types == {bool}:
        return bool_
    if any(issubclass(t, complex) or not issubclass(t, Real) for t in types):
        return complex64
    return int32 if types and types <= {int, bool} else float32


def _from_flat(flat, shape: tuple[int, ...], dtype: DType = float32) -> HostData:
    if dtype.kind != "complex" and any(not isinstance(v, Real) for v in flat):
        raise TruenoTypeError(
            f"complex numbers as {dtype.name} would drop a component; pass dtype=trueno_web.complex64"
        )
    if dtype is bool_:
        flat = [v != 0 for v in flat]
    elif dtype is float16:  # its bits, rounded as NumPy's astype (struct's 'e' refuses values past the range)
        bits = struct.pack(f"{len(flat)}e", *[half_round(float(v)) for v in flat])
        return HostData(memoryview(bits).cast("H"), shape, borrowed=True, dtype=dtype)
    elif dtype.kind == "complex":  # its components in turn
        flat = [part for v in flat for part in (complex(v).real, complex(v).imag)]
    elif dtype.integral and any(isinstance(v, float) for v in flat):
        flat = [int(v) for v in flat]
    try:
        return HostData(memoryview(array.array(dtype.typecode, flat)), shape, borrowed=True, dtype=dtype)
    except OverflowError:
        raise TruenoValueError(
            f"a number in the list does not fit {dtype.name}; pass values within its range"
        ) from None


def _from_js(x, dtype: DType | None = None) -> HostData:
    return _from_buffer(x.to_py(), dtype)


def to_host(x, shape: tuple[int, ...] | None = None, dtype=None) -> HostData:
    """Convert input data to HostData of its dtype (or `dtype`); `shape` reshapes flat data (same count)."""
    if x is None or isinstance(x, (str, bytes, bytearray)) or isinstance(x, (Real, complex)):
        raise TruenoTypeError(
            f"cannot use {type(x).__name__} as array data; pass a NumPy array, array.array('f'), a list of numbers "
            "or a JS typed array"
        )
    kind = type(x).__module__.split(".")[0]
    dtype = None if dtype is None else dtype_of(dtype)
    if isinstance(x, NDResult):  # a read-back: its buffer is flat, its shape is its own
        host = HostData(memoryview(x), x.shape, dtype=dtype_of(x.dtype.name))
        if (dtype is not None and dtype != host.dtype) or host.dtype is float16:  # float16: held as float32
            flat = x.tolist() if x.ndim <= 1 else _flatten(x.tolist(), x.shape)
            host = _from_flat(flat, x.shape, dtype or host.dtype)
    elif kind == "numpy":
        host = _from_numpy(x, dtype)
    elif kind in ("pyodide", "_pyodide", "js") and hasattr(x, "to_py"):
        host = _from_js(x, dtype)
    elif isinstance(x, (list, tuple)):
        host = _from_list(x, dtype)
    else:
        try:
            host = _from_buffer(x, dtype)
        except TypeError:
            raise TruenoTypeError(f"cannot use {type(x).__name__} as array data; pass numbers") from None
    if shape is not None:
        shape = tuple(int(d) for d in shape)
        if math.prod(shape) != host.size or any(d < 0 for d in shape):
            raise TruenoValueError(f"shape {shape} does not fit {host.size} elements")
        host = HostData(host.data, shape, host.borrowed, host.dtype)
    return host


def from_host(data, shape: tuple[int, ...], dtype: DType = float32):
    """32-bit words of `dtype` to the user-facing array: NumPy where it imports, else an NDResult of
    `shape`. Writable `data` is taken over (backends' reads return fresh memory); read-only data is copied."""
    view = memoryview(data).cast("B")
    if numpy_available():
        import numpy as np

        if dtype is bool_:
            return np.frombuffer(view, dtype=np.uint32).reshape(shape) != 0
        out = np.frombuffer(view, dtype=np.dtype(dtype.name)).reshape(shape)
        return out.copy() if view.readonly else out  # backends hand over fresh memory the caller owns
    return NDResult(half_values(view) if dtype is float16 else view, shape, dtype.name)
