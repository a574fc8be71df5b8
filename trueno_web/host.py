"""Host arrays in and out.

In: NumPy arrays, `array.array`, memoryviews and other buffers, (nested) lists of numbers, and in the
browser JS typed arrays. Everything becomes contiguous little-endian float32 (float64, ints and
non-contiguous inputs are converted). Out: a float32 `numpy.ndarray` of the natural shape where NumPy
imports, else an `NDResult` of that shape (ndresult.py: an array.array('f') that looks like a small array).
"""

from __future__ import annotations

import array
import importlib.util
import math
from dataclasses import dataclass
from functools import lru_cache
from numbers import Real

from .errors import TruenoTypeError, TruenoValueError
from .ndresult import NDResult


@dataclass(frozen=True)
class HostData:
    """float32 bytes plus a shape: what a backend uploads."""

    data: memoryview  # format 'f', 1-D, contiguous
    shape: tuple[int, ...]
    borrowed: bool = False  # unchanged while its buffer lives (a one-shot call's input, or a conversion nobody
    # else holds): a CPU backend may use it in place

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@lru_cache(maxsize=1)
def numpy_available() -> bool:
    """True where NumPy can be imported (checked without importing it)."""
    return importlib.util.find_spec("numpy") is not None


def _from_numpy(x) -> HostData:
    import numpy as np

    if x.dtype.kind not in "fiub":
        raise TruenoTypeError(
            f"cannot use a NumPy array of dtype {x.dtype}; pass real numbers (it is converted to float32)"
        )
    flat = np.ascontiguousarray(x, dtype=np.float32).reshape(-1)
    return HostData(
        memoryview(flat).cast("B").cast("f"), tuple(int(d) for d in x.shape), borrowed=not np.may_share_memory(flat, x)
    )  # a converted copy is ours alone


def _from_buffer(x) -> HostData:
    view = memoryview(x)
    shape = tuple(view.shape or ())
    if view.format in ("f", "<f", "=f") and view.c_contiguous:
        return HostData(view.cast("B").cast("f"), shape)
    if numpy_available():
        import numpy as np

        return _from_numpy(np.asarray(view))
    if view.format.lstrip("<=@") not in "bBhHiIlLqQfd":
        raise TruenoTypeError(f"cannot use a buffer of format {view.format!r}; pass float32/float64 or integer data")
    flat = array.array("f", view.tolist() if view.ndim <= 1 else _flatten(view.tolist(), shape))
    return HostData(memoryview(flat), shape, borrowed=True)


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
    if isinstance(x, Real) and not isinstance(x, bool):
        return ()
    raise TruenoTypeError(f"cannot use {type(x).__name__} {x!r:.40} as a number; pass numbers (lists, arrays, buffers)")


def _from_list(x) -> HostData:
    if x and set(map(type, x)) <= {float, int}:  # the common case, at C speed: a flat list of plain numbers
        return _from_flat(x, (len(x),))
    shape = _shape_of(x)
    if shape == ():
        raise TruenoTypeError("pass a sequence of numbers, not a single number")
    flat = x
    for _ in range(len(shape) - 1):
        flat = [v for row in flat for v in row]
    return _from_flat(flat, shape)


def _from_flat(flat, shape: tuple[int, ...]) -> HostData:
    try:
        return HostData(memoryview(array.array("f", flat)), shape, borrowed=True)
    except OverflowError:
        raise TruenoValueError(
            "a number in the list is too large to convert to float; pass values within float range"
        ) from None


def _from_js(x) -> HostData:
    return _from_buffer(x.to_py())


def to_host(x, shape: tuple[int, ...] | None = None) -> HostData:
    """Convert input data to float32 HostData; `shape` reshapes flat data (same element count)."""
    if x is None or isinstance(x, (str, bytes, bytearray)) or isinstance(x, (Real, complex)):
        raise TruenoTypeError(
            f"cannot use {type(x).__name__} as array data; pass a NumPy array, array.array('f'), a list of numbers "
            "or a JS typed array"
        )
    kind = type(x).__module__.split(".")[0]
    if isinstance(x, NDResult):  # a read-back: its buffer is flat, its shape is its own
        host = HostData(memoryview(x), x.shape)
    elif kind == "numpy":
        host = _from_numpy(x)
    elif kind in ("pyodide", "_pyodide", "js") and hasattr(x, "to_py"):
        host = _from_js(x)
    elif isinstance(x, (list, tuple)):
        host = _from_list(x)
    else:
        try:
            host = _from_buffer(x)
        except TypeError:
            raise TruenoTypeError(f"cannot use {type(x).__name__} as array data; pass numbers") from None
    if shape is not None:
        shape = tuple(int(d) for d in shape)
        if math.prod(shape) != host.size or any(d < 0 for d in shape):
            raise TruenoValueError(f"shape {shape} does not fit {host.size} elements")
        host = HostData(host.data, shape, host.borrowed)
    return host


def from_host(data, shape: tuple[int, ...]):
    """float32 bytes to the user-facing array: NumPy where it imports, else an NDResult of `shape`.
    Writable `data` is taken over (backends' reads return fresh memory); read-only data is copied."""
    view = memoryview(data).cast("B")
    if numpy_available():
        import numpy as np

        out = np.frombuffer(view, dtype=np.float32).reshape(shape)
        return out.copy() if view.readonly else out  # backends hand over fresh memory the caller owns
    return NDResult(view, shape)
