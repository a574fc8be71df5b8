"""NDResult: a read-back where NumPy is missing (Pyodide without numpy): data of a dtype plus a shape.

It is an `array.array` of the row-major values ('f' for float32, 'i' for int32, 'I' for uint32 and bool: so
`memoryview(r)` and JS typed arrays see the data) that otherwise behaves like a small NumPy array: `shape`,
`ndim`, `size`, `dtype`, `repr` with nested brackets and float32's shortest digits (4.4, not
4.400000095367432), `tolist()` (nested), indexing with ints and slices (a row is an NDResult, an element a
Python scalar),
`len`, iteration over rows, `reshape`, and `==` against lists or other results (True or False).
Arithmetic is not NumPy's here: `+` and `*` raise instead of concatenating or repeating. NumPy reads
the buffer, which is flat: `np.asarray(r).reshape(r.shape)`.
"""

from __future__ import annotations

import array
import math
import struct

from .dtypes import dtype_of
from .errors import TruenoTypeError, TruenoValueError

_F32 = struct.Struct("f")
_FLOATS = ("float32", "float16")
_SUMMARY = 1000  # more elements than this: repr shows the first and last EDGE per axis, as NumPy does
_EDGE = 3


# bool: 32-bit words of 0 and 1; float16: its values as float32 (exact), decoded by `half_values`
TYPECODES = {"float32": "f", "float16": "f", "int32": "i", "uint32": "I", "bool": "I"}
_F16 = struct.Struct("e")


def f32_repr(v: float, fmt: struct.Struct = _F32) -> str:
    """The shortest decimal that reads back as the same float32 (4.4 for float32(4.4)), Python-style;
    `fmt`: of another width (_F16: float16's)."""
    if math.isnan(v) or math.isinf(v) or v == 0.0:
        return repr(v)
    for digits in range(1, 10):
        text = f"{v:.{digits}g}"
        if fmt.unpack(fmt.pack(float(text)))[0] == v:
            return repr(float(text))
    return repr(v)


def half_round(v: float) -> float:
    """A Python float rounded to float16 (nearest even; past the range: Inf, as NumPy's astype)."""
    if not -65520.0 < v < 65520.0 and v == v:
        return math.copysign(math.inf, v)
    return _F16.unpack(_F16.pack(v))[0]


def half_values(data) -> array.array:
    """float16 bits (two bytes each, native order) as an array.array('f') of their values."""
    raw = memoryview(data).cast("B")
    return array.array("f", struct.unpack(f"{len(raw) // 2}e", raw))


def _no_arithmetic(self, other=None):
    raise TruenoTypeError(
        "a result read back without NumPy does no arithmetic; compute on the device (dev.tensor(r) + 1), "
        "or use r.tolist()"
    )


def _reshaped(shape, size: int) -> tuple[int, ...]:
    shape = tuple(int(d) for d in shape)
    if shape.count(-1) == 1:
        known = math.prod(d for d in shape if d != -1)
        if known and size % known == 0:
            shape = tuple(size // known if d == -1 else d for d in shape)
    if math.prod(shape) != size or any(d < 0 for d in shape):
        raise TruenoValueError(f"cannot reshape {size} elements into shape {shape}")
    return shape


class NDResult(array.array):
    """Values of a dtype and a shape (an `array.array` of 32-bit words underneath: 'f', 'i', or 'I' for uint32
    and bool): what reads return without NumPy."""

    __slots__ = ("_shape", "_dtype")

    def __new__(cls, data=b"", shape: tuple[int, ...] | None = None, dtype: str = "float32"):
        dtype = getattr(dtype, "name", dtype)
        self = super().__new__(cls, TYPECODES[dtype])
        array.array.frombytes(self, memoryview(data).cast("B"))
        n = len(memoryview(self))
        self._shape = (n,) if shape is None else _reshaped(shape, n)
        self._dtype = dtype
        return self

    def _py(self, v):
        """One stored word as the Python scalar of the dtype."""
        return bool(v) if self._dtype == "bool" else float(v) if self._dtype in _FLOATS else int(v)

    def _text(self, v) -> str:
        if self._dtype in _FLOATS:
            return f32_repr(v, _F16 if self._dtype == "float16" else _F32)
        return repr(self._py(v))

    # ------------------------------------------------------------ NumPy's attributes

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        return math.prod(self._shape)

    @property
    def dtype(self):
        """The trueno_web dtype (equal to its name, with `.name` and `.itemsize` as NumPy's dtype)."""
        return dtype_of(self._dtype)

    def reshape(self, *shape) -> NDResult:
        """The same values in another shape (one -1 is inferred)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return NDResult(self, shape, self._dtype)

    def ravel(self) -> NDResult:
        return NDResult(self, None, self._dtype)

    flatten = ravel

    def copy(self) -> NDResult:
        return NDResult(self, self._shape, self._dtype)

    def item(self):
        """The one element as a Python scalar (float, int or bool)."""
        if self.size != 1:
            raise TruenoValueError(f"item() needs one element; this result has shape {self._shape}")
        return self._py(memoryview(self)[0])

    def tolist(self):
        """Nested lists of Python scalars, as NumPy's tolist()."""
        flat = [self._py(v) for v in array.array.tolist(self)] if self._dtype == "bool" else array.array.tolist(self)
        if not self._shape:
            return flat[0]
        if 0 in self._shape:
            return _empty(self._shape)
        for d in reversed(self._shape[1:]):
            flat = [flat[i : i + d] for i in range(0, len(flat), d)]
        return flat

    # ------------------------------------------------------------ sequence behaviour

    def __len__(self) -> int:
        if not self._shape:
            raise TruenoTypeError("len() of a 0-d result; use r.item()")
        return self._shape[0]

    def __iter__(self):
        if self.ndim == 1:
            return iter(self.tolist())
        return (self[i] for i in range(len(self)))

    def _row(self, i: int):
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for axis 0 with size {n}")
        i %= n
        if self.ndim == 1:
            return self._py(memoryview(self)[i])
        step = math.prod(self._shape[1:])
        return NDResult(memoryview(self)[i * step : (i + 1) * step], self._shape[1:], self._dtype)

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        if not self._shape:
            raise IndexError("a 0-d result has no axes to index; use r.item()")
        if len(key) > self.ndim:
            raise IndexError(f"too many indices: {len(key)} for a result of {self.ndim} dimension(s)")
        first, rest = key[0], key[1:]
        if isinstance(first, slice):
            rows = [self._row(i) for i in range(*first.indices(len(self)))]
            if rest:
                rows = [r[rest] for r in rows]
            inner = rows[0].shape if rows and isinstance(rows[0], NDResult) else self._inner(rest)
            data = array.array(self.typecode)
            for r in rows:
                if isinstance(r, NDResult):
                    data.frombytes(memoryview(r).cast("B"))
                else:
                    data.append(r)
            return NDResult(data, (len(rows), *inner), self._dtype)
        if isinstance(first, bool) or not hasattr(first, "__index__"):
            raise TruenoTypeError(
                f"index a result with ints and slices, not {type(first).__name__}; for more, use r.tolist() or NumPy"
            )
        row = self._row(first.__index__())
        return row[rest] if rest else row

    def _inner(self, rest: tuple) -> tuple[int, ...]:
        """The shape of an empty slice's rows: the rest of the key applied to an empty row's shape."""
        shape = list(self._shape[1:])
        for axis, k in enumerate(rest):
            shape[axis] = len(range(*k.indices(shape[axis]))) if isinstance(k, slice) else None
        return tuple(d for d in shape if d is not None)

    def __setitem__(self, key, value):
        index = key if isinstance(key, tuple) else (key,)
        if len(index) != self.ndim or not all(hasattr(k, "__index__") and not isinstance(k, bool) for k in index):
            raise TruenoTypeError("set one element at a time, with one int per axis (r[i, j] = v)")
        flat = 0
        for k, d in zip(index, self._shape):
            k = k.__index__()
            if not -d <= k < d:
                raise IndexError(f"index {k} is out of bounds for an axis of size {d}")
            flat = flat * d + k % d
        value = float(value) if self._dtype in _FLOATS else int(value != 0 if self._dtype == "bool" else value)
        if self._dtype == "float16":
            value = half_round(value)
        array.array.__setitem__(self, flat, value)

    def __eq__(self, other):
        if isinstance(other, NDResult):
            return self._shape == other._shape and self._dtype == other._dtype and array.array.__eq__(self, other)
        if isinstance(other, (list, tuple)):
            flat = _flat_of_shape(other, self._shape)
            if flat is None:
                return False
            if self._dtype == "float16":
                flat = [half_round(float(v)) for v in flat]
            try:
                return array.array.__eq__(
                    self, array.array(self.typecode, flat)
                )  # the list as stored (float32: rounded)
            except (OverflowError, TypeError):
                return False
        return NotImplemented

    def __ne__(self, other):
        same = self.__eq__(other)
        return same if same is NotImplemented else not same

    __hash__ = None
    __add__ = __radd__ = __iadd__ = __mul__ = __rmul__ = __imul__ = _no_arithmetic

    def _fixed_size(self, *args):
        raise TruenoTypeError("a read-back result keeps its size; copy it to a list (r.tolist()) to grow or shrink it")

    append = extend = insert = pop = remove = fromlist = frombytes = fromunicode = fromfile = _fixed_size

    # ------------------------------------------------------------ copies and pickling keep the shape

    def __copy__(self) -> NDResult:
        return self.copy()

    def __deepcopy__(self, memo) -> NDResult:
        return self.copy()

    def __reduce_ex__(self, protocol):
        return NDResult, (bytes(memoryview(self).cast("B")), self._shape, self._dtype)

    # ------------------------------------------------------------ repr

    def __repr__(self) -> str:
        suffix = "" if self._dtype in ("int32", "bool") else f", dtype={self._dtype}"  # NumPy's repr leaves these out
        if not self._shape:
            return f"array({self._text(memoryview(self)[0])}{suffix})"
        summarize = self.size > _SUMMARY
        cells = _cells(self, summarize)
        width = max((len(c) for c in _leaves(cells)), default=0)
        body = _format(cells, width, indent=len("array("))
        if self.size == 0 and self.ndim > 1:
            return f"array({body}, shape={self._shape}, dtype={self._dtype})"
        return f"array({body}{suffix})"

    __str__ = __repr__


def _empty(shape):
    return [] if shape[0] == 0 else [_empty(shape[1:]) for _ in range(shape[0])]


def _flat_of_shape(x, shape: tuple[int, ...]) -> list | None:
    """The row-major values of nested lists of exactly `shape`, else None."""
    if not shape:
        return None if isinstance(x, (list, tuple)) else [x]
    if not isinstance(x, (list, tuple)) or len(x) != shape[0]:
        return None
    flat = []
    for row in x:
        inner = _flat_of_shape(row, shape[1:])
        if inner is None:
            return None
        flat.extend(inner)
    return flat


def _cells(r: NDResult, summarize: bool):
    """Nested lists of element strings, with '...' where a long axis is cut."""
    n = len(r)
    if summarize and n > 2 * _EDGE:
        picks = [*range(_EDGE), None, *range(n - _EDGE, n)]
    else:
        picks = range(n)
    out = []
    for i in picks:
        if i is None:
            out.append("...")
        elif r.ndim == 1:
            out.append(r._text(memoryview(r)[i]))
        else:
            out.append(_cells(r[i], summarize))
    return out


def _leaves(cells):
    for c in cells:
        if isinstance(c, list):
            yield from _leaves(c)
        elif c != "...":
            yield c


def _format(cells, width: int, indent: int) -> str:
    if not cells or not isinstance(next((c for c in cells if c != "..."), ""), list):
        return "[" + ", ".join(c if c == "..." else c.rjust(width) for c in cells) + "]"
    depth = _depth(cells)
    sep = "," + "\n" * (depth - 1) + "\n" + " " * (indent + 1)
    parts = [c if c == "..." else _format(c, width, indent + 1) for c in cells]
    return "[" + sep.join(parts) + "]"


def _depth(cells) -> int:
    first = next((c for c in cells if c != "..."), None)
    return 1 + _depth(first) if isinstance(first, list) else 0
