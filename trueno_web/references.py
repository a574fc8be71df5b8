"""The references the op catalog's rows name: pure-Python functions on `math` in float64, per element or
per row (`Op.ref`), and NumPy expressions (`Op.numpy`), with the special-value rules our kernels follow
(C99 pow, NaN-propagating max/min, flushed subnormals noted where they apply)."""

from __future__ import annotations

import math
from typing import Callable

SELU_ALPHA = 1.6732632423543772
SELU_SCALE = 1.0507009873554805
GELU_C = 0.7978845608028654  # sqrt(2 / pi)
F32_MAX = 3.4028234663852886e38


def exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def floor_finite(x: float) -> float:
    """-inf becomes -FLT_MAX so x * 0 gives -0.0 rather than NaN (the limit of x*sigmoid(x) etc.)."""
    return -F32_MAX if x < -F32_MAX else x


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + exp(-x))


def softplus(x: float) -> float:
    return max(x, 0.0) + math.log1p(exp(-abs(x))) if not math.isnan(x) else x


def gelu(x: float) -> float:
    x = floor_finite(x)
    return 0.5 * x * (1.0 + math.tanh(GELU_C * (x + 0.044715 * x * x * x)))


def hardswish(x: float) -> float:
    x = floor_finite(x)
    return x * min(max(x + 3.0, 0.0), 6.0) / 6.0 if not math.isnan(x) else x


def clip(x: float, lo: float, hi: float) -> float:
    if math.isnan(x) or math.isnan(lo) or math.isnan(hi):
        return math.nan
    return hi if max(x, lo) > hi else max(x, lo)


def total(xs) -> float:
    xs = list(xs)
    return math.fsum(xs) if all(math.isfinite(v) for v in xs) else sum(xs)


def extreme(pick):
    def reduce(xs):
        xs = list(xs)
        if any(math.isnan(v) for v in xs):
            return math.nan
        return pick(xs)

    return reduce


def log(x: float) -> float:
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan  # NaN stays NaN


def sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0 or math.isnan(x) else math.nan  # sqrt(-0.0) = -0.0


def rsqrt(x: float) -> float:
    if x == 0:
        return math.copysign(math.inf, x)
    return 1.0 / sqrt(x) if not math.isnan(sqrt(x)) else math.nan


def trig(fn):
    return lambda x: fn(x) if math.isfinite(x) else math.nan


def floor(x: float) -> float:
    return math.copysign(float(math.floor(x)), x) if math.isfinite(x) else x  # floor(-0.0) = -0.0


def div(a: float, b: float) -> float:
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def odd_integer(y: float) -> bool:
    return math.isfinite(y) and y == math.floor(y) and math.fmod(y, 2.0) != 0


def pow(x: float, y: float) -> float:
    """C99 pow (what np.power gives), in float64."""
    if y == 0 or x == 1:
        return 1.0  # even for NaN
    if math.isnan(x) or math.isnan(y):
        return math.nan
    try:
        return math.pow(x, y)
    except ValueError:  # 0 ** negative, or a negative base with a non-integer exponent
        if x == 0:
            return math.copysign(math.inf, x) if odd_integer(y) else math.inf
        return math.nan
    except OverflowError:
        return -math.inf if x < 0 and odd_integer(y) else math.inf


def nan_or(pick):
    return lambda a, b: math.nan if math.isnan(a) or math.isnan(b) else pick(a, b)


def product(xs) -> float:
    return math.prod(xs, start=1.0)


def softmax_row(row, log=False):
    m = extreme(max)(row)
    shifted = [v - m for v in row]
    s = total(exp(v) for v in shifted)
    if log:
        return [v - math.log(s) for v in shifted]
    return [exp(v) / s for v in shifted]


def matmul_ref(a, b, m, k, n):
    return [total(a[i * k + p] * b[p * n + j] for p in range(k)) for i in range(m) for j in range(n)]


def conv2d_ref(img, h, w, ker, kh, kw):
    oh, ow = h - kh + 1, w - kw + 1
    return [
        total(img[(r + p) * w + c + q] * ker[p * kw + q] for p in range(kh) for q in range(kw))
        for r in range(oh)
        for c in range(ow)
    ]


# ---------------------------------------------------------------- NumPy implementations (lazy np)


def numpy_module():
    import numpy

    return numpy


def np_floor_finite(x):
    np = numpy_module()
    return np.maximum(x, np.asarray(-np.finfo(x.dtype).max, x.dtype), where=~np.isnan(x), out=x.copy())


def np_sigmoid(x):
    np = numpy_module()
    return (1 / (1 + np.exp(-x))).astype(x.dtype, copy=False)


def np_softplus(x):
    np = numpy_module()
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def np_gelu(x):
    np = numpy_module()
    x = np_floor_finite(x)
    return (0.5 * x * (1 + np.tanh(GELU_C * (x + 0.044715 * x * x * x)))).astype(x.dtype, copy=False)


def np_softmax(x, log=False):
    np = numpy_module()
    m = np.max(x, axis=-1, keepdims=True, initial=-np.inf)  # initial: rows of 0 columns have no max
    shifted = x - m
    s = np.sum(np.exp(shifted), axis=-1, keepdims=True)
    return shifted - np.log(s) if log else np.exp(shifted) / s


def np_conv2d(img, ker):
    np = numpy_module()
    kh, kw = ker.shape
    oh, ow = img.shape[0] - kh + 1, img.shape[1] - kw + 1
    out = np.zeros((oh, ow), dtype=img.dtype)
    for p in range(kh):
        for q in range(kw):
            out += img[p : p + oh, q : q + ow] * ker[p, q]
    return out


# np.power with a stride-0 (broadcast) exponent of 0.5 takes a sqrt fast path: pow(-inf, 0.5) = NaN and
# pow(-0, 0.5) = -0 there, where C99 pow (and our kernels) give +inf and +0; a contiguous exponent does not.
def quiet(expr: Callable) -> Callable:
    """Run a NumPy expression with floating-point warnings off (NaN/Inf are data here)."""

    def run(*args, **kwargs):
        with numpy_module().errstate(all="ignore"):
            return expr(*args, **kwargs)

    return run
