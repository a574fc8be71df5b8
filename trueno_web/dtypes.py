"""Data types: the dtype objects, the array API standard's promotion rules, and each op's signature.

The four 32-bit dtypes are stored in 32-bit words on the devices (WGSL and WASM have no narrower loads, and
no 64-bit numbers): float32 as f32, int32 as i32, uint32 and bool as u32 (bool 0 or 1). float16 is a storage
dtype on every backend: two bytes an element (two to a 32-bit word on the GPU), computed in float32: an op
of float16 inputs computes in float32 and rounds its result to float16 (`written`), as NumPy's float16 loops
do, so only astype reads or writes float16 storage. float64 and int64
(`WIDE`) exist where a backend holds them (its executor's `dtypes`: the NumPy backend, with NumPy's own
dtypes, and complex64 and complex128: `COMPLEX`); `check_held` refuses them elsewhere. Promotion follows the
standard's lattice (bool apart, signed and unsigned integers, floats, complex; int32 and uint32 together are
int64; an integer beside a float is that float; a float beside a complex is the complex of the wider
components), with Python scalars weakly typed: they take the dtype of the array they meet where its kind can
hold them (a Python complex beside a float array: the complex of its precision).

An op's catalog row lists the dtypes it computes on natively (`Op.dtypes`, float32 first by default) and
what it returns (`Op.returns`: the dtype it computed in, bool, the target dtype, or take's data's). `signature` picks the
dtype an op computes in for given inputs: their promoted dtype where the op has it, else the first of the
op's dtypes that holds it (bool to int32, int32 and uint32 to float32, int64 to float64 for float-only ops such
as exp), else a TruenoTypeError; a generator (no inputs) computes in the first of its dtypes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Complex, Integral, Number, Real

from .errors import TruenoTypeError, TruenoValueError


@dataclass(frozen=True, eq=False)
class DType:
    """One data type: its name, kind ("bool", "signed", "unsigned", "float", "complex"), bits, the WGSL scalar
    of its 32-bit storage word, the `array` typecode of that word (a complex's: of its components), and the
    suffix of its kernels' functions."""

    name: str
    kind: str
    bits: int
    wgsl: str  # "" for the 64-bit and complex dtypes: no kernel sees them
    typecode: str
    suffix: str

    def __repr__(self) -> str:
        return f"trueno_web.{self.name}"

    __str__ = lambda self: self.name  # noqa: E731 - str(dtype) is its name, as NumPy's

    def __eq__(self, other) -> bool:
        """Equal to itself, its name, and NumPy's dtype of that name (code written for NumPy keeps working)."""
        if isinstance(other, DType):
            return other is self
        name = getattr(other, "name", other)
        return isinstance(name, str) and name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    @property
    def itemsize(self) -> int:
        """Bytes of one element in device memory: 4 (32-bit words), 2 for float16, 8 for float64, int64 and
        complex64, 16 for complex128."""
        return 2 if self.bits == 16 else max(4, self.bits // 8)

    def nbytes(self, count: int) -> int:
        """Bytes of `count` elements in device memory, in whole 32-bit words (a float16 tensor of odd size
        fills its last word's low half)."""
        return -(-count * self.itemsize // 4) * 4

    @property
    def wide(self) -> bool:
        """No 32-bit word holds it (float64, int64, complex): only where a backend holds it (`check_held`)."""
        return not self.wgsl

    @property
    def integral(self) -> bool:
        return self.kind in ("signed", "unsigned")


bool_ = DType("bool", "bool", 8, "u32", "I", "_bool")
int32 = DType("int32", "signed", 32, "i32", "i", "_i32")
uint32 = DType("uint32", "unsigned", 32, "u32", "I", "_u32")
float32 = DType("float32", "float", 32, "f32", "f", "")
float16 = DType("float16", "float", 16, "f16", "H", "_f16")  # wgsl "f16": two halves a u32 word (map.py)
int64 = DType("int64", "signed", 64, "", "q", "_i64")
float64 = DType("float64", "float", 64, "", "d", "_f64")
complex64 = DType("complex64", "complex", 64, "", "f", "_c64")
complex128 = DType("complex128", "complex", 128, "", "d", "_c128")

DTYPES: tuple[DType, ...] = (bool_, int32, uint32, float32)  # every backend computes in these
HALF: tuple[DType, ...] = (float16,)  # every backend holds it; ops compute it in float32
WIDE: tuple[DType, ...] = (int64, float64)  # the CPU backends' own (the NumPy backend holds them)
COMPLEX: tuple[DType, ...] = (complex64, complex128)  # the NumPy backend's too
BY_NAME: dict[str, DType] = {d.name: d for d in DTYPES + HALF + WIDE + COMPLEX}
DEFAULT_INT, DEFAULT_FLOAT, DEFAULT_COMPLEX, INDEX = int32, float32, complex64, int32
SHORT = {
    bool_: "bool",
    int32: "i32",
    uint32: "u32",
    float32: "f32",
    float16: "f16",
    int64: "i64",
    float64: "f64",
}  # in cast
# functions' names: tw_astype_i32_f32
_PARTS = {complex64: float32, complex128: float64}  # a complex dtype's components


def real_dtype(d: DType) -> DType:
    """The dtype of a complex dtype's components (complex64: float32); any other dtype itself."""
    return _PARTS.get(d, d)


def complex_dtype(d: DType) -> DType:
    """The complex dtype of a float's precision (float32: complex64); a complex dtype itself."""
    return d if d.kind == "complex" else complex128 if d is float64 else complex64


def dtype_of(x) -> DType:
    """A DType from a DType, its name, or a NumPy dtype / scalar type of that name; else TruenoTypeError."""
    if isinstance(x, DType):
        return x
    if x is bool:
        return bool_
    if x is int:
        return DEFAULT_INT
    if x is float:
        return DEFAULT_FLOAT
    if x is complex:
        return DEFAULT_COMPLEX
    name = getattr(x, "name", None) or getattr(x, "__name__", None) if not isinstance(x, str) else x
    if name == "bool_":
        name = "bool"
    found = BY_NAME.get(name) if isinstance(name, str) else None
    if found is None:
        known = ", ".join(BY_NAME)
        raise TruenoTypeError(
            f"unsupported dtype {x!r:.40}; trueno_web has {known} (64-bit and complex ones on backend='numpy')"
        )
    return found


def check_held(d: DType, backend: str, held: frozenset[str], why: str = "") -> DType:
    """`d` itself where a backend of dtypes `held` has it, else the TruenoTypeError that says which backend
    does (a float64, int64 or complex tensor on webgpu or wasm-simd); `why`: what asked for it."""
    if d.name not in held:
        have = ", ".join(x.name for x in BY_NAME.values() if x.name in held)
        instead = {"float": "astype(trueno_web.float32)", "complex": "real and imaginary float32 tensors"}
        raise TruenoTypeError(
            f"{why}{d.name} needs backend='numpy'; {backend} holds {have}: use "
            f"{instead.get(d.kind, 'astype(trueno_web.int32)')} or open a numpy device"
        )
    return d


# ---------------------------------------------------------------- promotion


def result_type(*arrays_and_dtypes) -> DType:
    """The standard's promotion of dtypes and arrays' dtypes; Python scalars among them are weak (they take
    the others' dtype where its kind holds them: `weak_dtype`)."""
    if all([isinstance(d, DType) for d in arrays_and_dtypes]) and arrays_and_dtypes:
        out = arrays_and_dtypes[0]  # the common call, the library's own: dtypes only
        for d in arrays_and_dtypes[1:]:
            out = _promote(out, d)
        return out
    scalars = [x for x in arrays_and_dtypes if isinstance(x, Number)]
    strong = [dtype_of(getattr(x, "dtype", x)) for x in arrays_and_dtypes if not isinstance(x, Number)]
    if not strong:
        raise TruenoTypeError("result_type needs at least one array or dtype (Python scalars alone have no dtype)")
    out = result_type(*strong)
    for value in scalars:
        out = _promote(out, weak_dtype(value, out))
    return out


def _promote(a: DType, b: DType) -> DType:
    if a is b:
        return a
    if a.kind == "complex" or b.kind == "complex":  # the complex of the wider components (an integer's: the other)
        parts = [real_dtype(d) for d in (a, b) if d.kind in ("float", "complex")]
        return complex_dtype(max(parts, key=lambda d: d.bits))
    if a.kind == "float" or b.kind == "float":  # the wider float; an integer beside a float promotes to that
        return max((d for d in (a, b) if d.kind == "float"), key=lambda d: d.bits)  # float (NumPy's, JAX's)
    if a is bool_ or b is bool_:
        return b if a is bool_ else a
    if a.kind == b.kind:
        return a if a.bits >= b.bits else b
    signed, unsigned = (a, b) if a.kind == "signed" else (b, a)
    if signed.bits > unsigned.bits:
        return signed
    if unsigned.bits < 64:
        return int64  # int32 and uint32: held where the device holds int64 (check_held says where not)
    raise TruenoTypeError(f"{a.name} and {b.name} have no common integer dtype; convert one with astype")


def can_cast(from_: DType, to: DType) -> bool:
    """Can `from_` promote to `to` (the standard's can_cast: `to` is the promotion of both, kinds kept)?"""
    if from_ is to or from_ is bool_:
        return True
    if to.kind == "complex" and from_.kind in ("float", "complex"):  # float32 -> complex64, not float64 -> complex64
        return real_dtype(to).bits >= real_dtype(from_).bits
    if from_.kind in ("float", "complex") or to.kind in ("float", "complex"):
        return from_.kind == to.kind and to.bits >= from_.bits  # int32 -> float32 is lossy: kinds kept apart
    if to is bool_:
        return False
    return _promote(from_, to) is to


def weak_dtype(value, strong: DType) -> DType:
    """The dtype a Python scalar takes beside an array of dtype `strong` (the standard's weak scalars): the
    array's own where its kind can hold the scalar's kind (bool anywhere, an int in ints, floats and complex, a
    float in floats and complex, a complex in complex), a complex beside a float array the complex of its
    precision, else the default dtype of the scalar's kind; an int out of the integer dtype's range raises."""
    if isinstance(value, bool):
        return strong
    if isinstance(value, Integral):
        if strong is bool_:
            return DEFAULT_INT
        if strong.integral:
            lo, hi = iinfo(strong).min, iinfo(strong).max
            if not lo <= value <= hi:
                raise TruenoValueError(f"{value} does not fit {strong.name} ({lo} to {hi}); convert the array first")
        return strong
    if isinstance(value, Real):
        return strong if strong.kind in ("float", "complex") else DEFAULT_FLOAT
    if isinstance(value, Complex):
        return complex_dtype(strong) if strong.kind in ("float", "complex") else DEFAULT_COMPLEX
    raise TruenoTypeError(f"cannot use {type(value).__name__} {value!r:.40} as a number")


def scalar_dtype(value) -> DType:
    """The dtype of a Python scalar on its own (bool, int32, float32, complex64)."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, Integral):
        return DEFAULT_INT
    return DEFAULT_FLOAT if isinstance(value, Real) else DEFAULT_COMPLEX


# ---------------------------------------------------------------- finfo, iinfo, isdtype


@dataclass(frozen=True)
class FInfo:
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType


@dataclass(frozen=True)
class IInfo:
    bits: int
    max: int
    min: int
    dtype: DType


def finfo(d) -> FInfo:
    """A float dtype's limits; a complex dtype's are those of its components (its `dtype`: that float)."""
    d = real_dtype(dtype_of(d if isinstance(d, type) else getattr(d, "dtype", d)))  # an array's, or a scalar type
    if d.kind != "float":
        raise TruenoTypeError(f"finfo() takes a floating dtype; got {d.name} (use iinfo)")
    mant, emin = {64: (52, -1022), 32: (23, -126), 16: (10, -14)}[d.bits]
    top = (2 - 2.0**-mant) * 2.0 ** (-emin + 1)
    return FInfo(d.bits, 2.0**-mant, top, -top, 2.0**emin, d)


def iinfo(d) -> IInfo:
    d = dtype_of(d if isinstance(d, type) else getattr(d, "dtype", d))  # an array's, or a scalar type
    if not d.integral:
        raise TruenoTypeError(f"iinfo() takes an integer dtype; got {d.name} (use finfo)")
    if d.kind == "signed":
        return IInfo(d.bits, 2 ** (d.bits - 1) - 1, -(2 ** (d.bits - 1)), d)
    return IInfo(d.bits, 2**d.bits - 1, 0, d)


KINDS = {
    "bool": ("bool",),
    "signed integer": ("signed",),
    "unsigned integer": ("unsigned",),
    "integral": ("signed", "unsigned"),
    "real floating": ("float",),
    "complex floating": ("complex",),
    "numeric": ("signed", "unsigned", "float", "complex"),
}


def isdtype(dtype, kind) -> bool:
    """The standard's isdtype: is `dtype` of `kind` (a dtype, a kind name, or a tuple of those)?"""
    d = dtype_of(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(d, k) for k in kind)
    if isinstance(kind, str):
        if kind not in KINDS:
            raise TruenoValueError(f"unknown dtype kind {kind!r}; one of {', '.join(KINDS)}")
        return d.kind in KINDS[kind]
    return d == dtype_of(kind)


# ---------------------------------------------------------------- ops' signatures


def signature(op, dtypes: list[DType], target: DType | None = None) -> tuple[DType, DType]:
    """(the dtype `op` computes in, the dtype it returns) for inputs of `dtypes` (see the module docstring).
    A `where`'s condition is not promoted with its values: it is read as bool. `target`: astype's dtype."""
    if op.returns == "target":
        if target is None:
            raise TruenoTypeError(f"{op.name} needs dtype= the dtype to convert to, e.g. {op.name}(x, dtype=tw.int32)")
        return dtypes[0], target
    if "indices" in op.inputs:
        if op.returns == "data":  # take: computed in (named for) its index dtype, returns its data's
            return dtypes[1], dtypes[0]
        dtypes = [d for name, d in zip(op.inputs, dtypes) if name != "indices"]
    values = dtypes[1:] if op.name == "where" else dtypes
    wanted = result_type(*values) if values else op.dtypes[0]  # a generator (no inputs) computes in its first
    compute = wanted if wanted in op.dtypes else next((d for d in _widening(op.dtypes) if _holds(d, wanted)), None)
    if compute is None:
        have = ", ".join(d.name for d in op.dtypes)
        raise TruenoTypeError(f"{op.name} is not defined for {wanted.name} inputs; it takes {have}")
    returns = {"bool": bool_, "index": INDEX, "real": real_dtype(compute), "complex": complex_dtype(compute)}
    returns = returns.get(op.returns, compute)
    return compute, float16 if wanted is float16 and returns is float32 else returns  # computed in float32


def written(op, out: DType) -> DType:
    """The dtype `op`'s own kernel writes for a result of dtype `out`: float32 for a float16 result (an
    astype after it rounds it), else `out`. Only astype reads and writes float16 storage."""
    return float32 if out is float16 and op.returns != "target" else out


def _index_dtype(op, d: DType) -> None:
    if not d.integral:
        raise TruenoTypeError(
            f"{op.name} needs int32 or uint32 indices (int64 on backend='numpy'); got {d.name} (use .astype(tw.int32))"
        )


def input_dtypes(op, dtypes: list[DType], compute: DType) -> list[DType]:
    """The dtype each input of `op` is converted to when it computes in `compute`: a where's condition to bool,
    indices and take's data stay as they are (float16 data read as float32), the rest to `compute`."""
    if op.name == "where":
        return [bool_, *[compute] * (len(dtypes) - 1)]
    if "indices" in op.inputs:
        _index_dtype(op, dtypes[op.inputs.index("indices")])
        keep = {"indices", "x"} if op.returns == "data" else {"indices"}
        return [(float32 if d is float16 else d) if name in keep else compute for name, d in zip(op.inputs, dtypes)]
    return [compute] * len(dtypes)


def _widening(dtypes: tuple[DType, ...]) -> list[DType]:
    """An op's dtypes in the order a missing dtype tries them: integers, floats, complex (bool + bool counts)."""
    return sorted(dtypes, key=lambda d: ("float", "complex").index(d.kind) + 1 if d.kind in ("float", "complex") else 0)


def _holds(to: DType, from_: DType) -> bool:
    """May an op that lacks `from_` compute in `to` instead? bool in anything; 32-bit integers in float32,
    int64 in float64 (as NumPy's float functions of integers); a float in the complex of its precision or wider
    (a complex-only op of real numbers: fft's)."""
    if from_.kind == "float" and to.kind in ("float", "complex"):  # float16 in float32 (then `written`)
        return real_dtype(to).bits >= from_.bits
    return from_ is bool_ or (from_.integral and to.kind == "float" and to.bits >= from_.bits)


def py_cast(value, d: DType):
    """A Python number as dtype `d` holds it (the pure-Python references' results): bool, an int (an int
    wrapped, a float converted as astype does), a float or a complex."""
    if d.kind == "complex":
        return complex(value)
    if d is bool_:
        return bool(value) if not (isinstance(value, float) and math.isnan(value)) else True
    if d.integral:
        if isinstance(value, float):  # toward zero, saturating, NaN to 0 (the kernels' conversion)
            lo, hi = iinfo(d).min, iinfo(d).max
            return 0 if math.isnan(value) else max(lo, min(hi, int(value) if math.isfinite(value) else hi * value))
        bits = int(value) & (2**d.bits - 1)
        return bits - 2**d.bits if d.kind == "signed" and bits >= 2 ** (d.bits - 1) else bits
    return float(value)
