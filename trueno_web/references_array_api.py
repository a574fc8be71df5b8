"""References of the array API's elementwise functions (the catalog's rows after floor and after div): pure
Python in float64 with NumPy's special values, where `math` raises (a domain error: NaN; an overflow: +-inf) or
differs (sign(-0.0) = 0.0, float32 steps), and NumPy expressions given the standard's special values where
NumPy's differ (floor_divide by infinities, complex tanh and expm1)."""

from __future__ import annotations

import math
import struct

from .references import div, numpy_module

LN2 = math.log(2.0)
F32_TRUE_MIN = 2.0**-149  # float32's smallest subnormal


def integral(fn):
    """round, ceil, trunc: fn's integer as a float with x's sign (ceil(-0.5) = -0.0); inf and NaN as they are."""
    return lambda x: math.copysign(float(fn(x)), x) if math.isfinite(x) else x


def sign(x: float) -> float:
    """np.sign: -1, 0 or 1; sign(-0.0) = 0.0; NaN stays NaN."""
    return x if math.isnan(x) else float((x > 0) - (x < 0))


def overflows(fn, even: bool = False):
    """expm1, sinh, cosh: fn, +-inf past float64's range (math raises OverflowError); `even`: +inf either way."""

    def run(x: float) -> float:
        try:
            return fn(x)
        except OverflowError:
            return math.inf if even else math.copysign(math.inf, x)

    return run


def within(fn, lo: float, hi: float):
    """asin, acos, acosh: fn on [lo, hi], NaN outside (math raises ValueError) and for NaN."""
    return lambda x: fn(x) if lo <= x <= hi else math.nan


def logs(fn):
    """log2, log10: as `log`: -inf at +-0, NaN below 0."""
    return lambda x: fn(x) if x > 0 else (-math.inf if x == 0 else math.nan)


def log1p(x: float) -> float:
    if x > -1 or math.isnan(x):
        return math.log1p(x)
    return -math.inf if x == -1 else math.nan


def atanh(x: float) -> float:
    if abs(x) == 1:
        return math.copysign(math.inf, x)
    return math.atanh(x) if abs(x) < 1 else math.nan


def logaddexp(a: float, b: float) -> float:
    """np.logaddexp: a + ln2 where a == b (infinities too), else max + log1p(exp(-|a - b|))."""
    if a == b:
        return a + LN2
    if math.isnan(a) or math.isnan(b):
        return math.nan
    return max(a, b) + math.log1p(math.exp(-abs(a - b)))


def _f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def nextafter32(a: float, b: float) -> float:
    """np.nextafter on float32: the next float32 after a toward b; b itself where a == b (nextafter(0, -0) = -0)."""
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b:
        return b
    if a == 0:
        return math.copysign(F32_TRUE_MIN, b)
    bits = _f32_bits(a) + (1 if (a < b) == (a > 0) else -1)
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def remainder(a: float, b: float) -> float:
    """np.remainder (Python's %): fmod, moved by b where its sign differs from b's; a zero has b's sign.
    Integers: Python's %, and 0 for b = 0 (as NumPy)."""
    if isinstance(a, int) and isinstance(b, int) and b == 0:
        return 0
    try:
        return a % b
    except ZeroDivisionError:
        return math.nan


def floor_divide(a: float, b: float) -> float:
    """np.floor_divide (Python's //: (a - fmod(a, b)) / b, floored, the zero signed as a / b); a / b by 0 and
    of +-inf by a finite b, a zero signed as a / b of a finite a by +-inf (the standard's special values).
    Integers: Python's //, and 0 for b = 0 (as NumPy)."""
    if isinstance(a, int) and isinstance(b, int):
        return a // b if b else 0
    if math.isinf(a) and math.isfinite(b):
        return div(a, b)
    if math.isfinite(a) and math.isinf(b):
        return math.copysign(0.0, math.copysign(1.0, a) * math.copysign(1.0, b))
    try:
        return a // b
    except ZeroDivisionError:
        return div(a, b)


def np_floor_divide(a, b, out=None):
    """np.floor_divide with the standard's special values of floats: +-inf // a finite b is a / b (NumPy: NaN),
    a finite a // +-inf the zero signed as a / b (NumPy: -1 where the signs differ)."""
    np = numpy_module()
    if np.result_type(a, b).kind != "f":
        return np.floor_divide(a, b, out=out)
    big, small = np.isinf(a) & np.isfinite(b), np.isfinite(a) & np.isinf(b)
    fix = np.where(big, a / b, np.where(np.signbit(a) ^ np.signbit(b), -0.0, 0.0)) if big.any() or small.any() else None
    q = np.floor_divide(a, b, out=out)  # `out` may be a or b: the special values were taken first
    if fix is not None:
        np.copyto(q, fix, where=big | small, casting="unsafe")
    return q


def np_tanh(x, out=None):
    """np.tanh; of complex x with a real part of +-inf and a finite imaginary one, the standard's +-1 + 0j with
    the imaginary part's sign (tanh is odd and conjugate-symmetric; C99's sign is sin(2 imag)'s)."""
    np = numpy_module()
    edge = np.isinf(x.real) & np.isfinite(x.imag) if x.dtype.kind == "c" else None
    if edge is not None and edge.any():
        fix = np.empty_like(x)
        fix.real, fix.imag = np.copysign(1.0, x.real), np.copysign(0.0, x.imag)
        y = np.tanh(x, out=out)  # `out` may be x: the special values were taken first
        np.copyto(y, fix, where=edge)
        return y
    return np.tanh(x, out=out)


def np_expm1(x):
    """np.expm1; of complex x with an infinite or NaN component exp(x) - 1, which keeps exp's special values
    (NumPy's complex expm1 gives NaN for every one of them), and of +-0 +- 0j the standard's +0 real part."""
    np = numpy_module()
    y = np.expm1(x)
    if x.dtype.kind == "c":
        odd = ~np.isfinite(x)
        y[odd] = np.exp(x[odd]) - 1
        y.real[x == 0] = 0.0
    return y


def real(x):
    """The real component (a real number: itself)."""
    return x.real if isinstance(x, complex) else x


def imag(x):
    """The imaginary component (a real number: 0 of its type)."""
    return x.imag if isinstance(x, complex) else type(x)(0)


def conj(x):
    """The complex conjugate (a real number: itself)."""
    return x.conjugate()
