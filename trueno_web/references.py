"""The references the op catalog's rows name: pure-Python functions on `math` in float64, per element or
per row (`Op.ref`), and NumPy expressions (`Op.numpy`), with the special-value rules our kernels follow
(C99 pow, NaN-propagating max/min, flushed subnormals noted where they apply). The array API's elementwise
functions have theirs in references_array_api.py."""

from __future__ import annotations

import functools
import math
import os
from builtins import pow as builtins_pow
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from .runtime import is_browser

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
    if xs and all(isinstance(v, int) for v in xs):
        return sum(xs)  # integers (and bools) exactly: the caller wraps them to the dtype
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


def pow_mod(x: int, y: int) -> int:
    """x ** y modulo 2^64 (y >= 0): what a 32- or 64-bit integer holds of it, whatever y's size."""
    return builtins_pow(x, y, 1 << 64)


def np_pow(a, b):
    """np.power, with an integer's negative exponent as `pow` says (NumPy raises)."""
    np = numpy_module()
    b = np.array(b)  # a copy: a broadcast exponent would take NumPy's sqrt fast path (sqrt(-inf) is NaN)
    if np.result_type(a, b).kind not in "iu" or not (b < 0).any():
        return np.power(a, b)
    neg = b < 0
    got = np.power(a, np.where(neg, 0, b))
    one = np.ones_like(got)
    special = np.where(a == 1, one, np.where(a == -1, np.where(b % 2 == 1, -one, one), 0 * one))
    return np.where(neg, special, got).astype(got.dtype)


def pow(x: float, y: float) -> float:
    """C99 pow (what np.power gives), in float64. Integers: exact (the caller wraps), and for a negative y
    1 / x ** -y toward zero (1 for x = 1, +-1 for x = -1, else 0), where NumPy raises."""
    if isinstance(x, int) and isinstance(y, int):
        if y >= 0:
            return pow_mod(x, y)
        return 1 if x == 1 else (-1 if y % 2 else 1) if x == -1 else 0
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


def running(step):
    """The running fold of a row by `step`, in order (cumulative_sum, cumulative_prod)."""

    def scan(xs):
        out, acc = [], None
        for v in xs:
            acc = v if acc is None else step(acc, v)
            out.append(acc)
        return out

    return scan


def product(xs) -> float:
    xs = list(xs)
    return math.prod(xs, start=1 if xs and all(isinstance(v, int) for v in xs) else 1.0)  # integers exactly


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
    """0.5 x (1 + tanh(u)) as x / (1 + e^-2u): no cancellation for x < 0 (in float64: no overflow either)."""
    np = numpy_module()
    x = np_floor_finite(x)
    return x / (1 + np.exp(-2 * GELU_C * (x + 0.044715 * x * x * x)))


def np_where(c, a, b, out=None):
    """a where c, else b; c is read as bool (a bool c as it is: no pass of its own to compare it with 0). `out`:
    written with the result and returned (two masked copies; in place of a or b where it is one of them)."""
    np = numpy_module()
    c = c if c.dtype == bool else c != 0
    if out is None:
        return np.where(c, a, b)
    in_a, in_b = np.may_share_memory(a, out), np.may_share_memory(b, out)
    if a.dtype != out.dtype or b.dtype != out.dtype or np.may_share_memory(c, out) or (in_a and in_b and a is not b):
        out[...] = np.where(c, a, b)
    elif in_a:
        np.copyto(out, a)  # nothing to copy where it is out itself
        np.copyto(out, b, where=~c)
    else:
        np.copyto(out, b)
        np.copyto(out, a, where=c)
    return out


def reference_dtype(op):
    """The NumPy dtype a reference runs op.numpy in for float32 data: float64 (wider than the kernels), or
    float32 where the op's result depends on the dtype it runs in (Op.widens off: nextafter's steps)."""
    np = numpy_module()
    return np.float64 if op.widens else np.float32


WIDE_CHUNK = 1 << 15  # elements in_float64 widens at a time: its float64 values stay in cache (3x faster at 2^23)


def in_float64(expr: Callable) -> Callable:
    """A NumPy expression evaluated in float64 (complex128 for complex input) and rounded once to its input's
    dtype: the NumPy backend's activations, each within 0.5 ulp of float32 plus float64's error (the formulas
    are stable in float64). A large input goes through in blocks of leading rows of about WIDE_CHUNK elements
    (its other arguments numbers or arrays of its shape, sliced alike)."""

    def run(x, *params):
        np = numpy_module()
        wide = np.complex128 if x.dtype.kind == "c" else np.float64
        inner = math.prod(x.shape[1:])
        step = WIDE_CHUNK // inner if inner and x.ndim else 0
        if step < 1 or x.shape[0] <= step or any(np.ndim(p) and np.shape(p) != x.shape for p in params):
            return np.asarray(expr(x.astype(wide), *params)).astype(x.dtype, copy=False)
        out = np.empty(x.shape, x.dtype)
        for lo in range(0, x.shape[0], step):
            part = [p[lo : lo + step] if np.ndim(p) else p for p in params]
            out[lo : lo + step] = expr(x[lo : lo + step].astype(wide), *part)
        return out

    return run


SUM_BUFFER = 1 << 18  # elements NumPy's casting buffer holds in np_sum (its default 8192: 1.6x slower)
SPLIT_SUM_FROM = 1 << 20  # elements: a float sum this large runs on the host's cores, a part each (handing a part
# to a thread costs tens of microseconds)


def np_sum(x, axis=None):
    """Sum accumulated in float64 (complex128), rounded once to float32 (complex64): its error does not grow
    with the count. Integers sum in their own dtype (wrapping, as the kernels). A large float sum is split
    along its outermost axis in memory over the host's cores, its float64 partials then added or set side by
    side (NumPy's reductions release the GIL; on one core the float64 cast and sum cost 2-4x NumPy's float32
    sum; docs/benchmarks.md)."""
    np = numpy_module()
    if x.dtype.kind in "iu":
        return np.sum(x, axis=axis, dtype=x.dtype)
    wide = np.complex128 if x.dtype.kind == "c" else np.float64
    pool, threads = sum_threads() if x.size >= SPLIT_SUM_FROM else (None, 1)
    split = [d for d, n in enumerate(x.shape) if n >= threads] if pool else []
    d = max(split, key=lambda d: abs(x.strides[d])) if split else None  # the outermost in memory: parts apart
    given = range(x.ndim) if axis is None else [int(a) for a in ((axis,) if np.ndim(axis) == 0 else axis)]
    axes = tuple({a % x.ndim for a in given if -x.ndim <= a < x.ndim})
    if d is None or len(axes) != len(given):  # one thread; or a bad axis, for NumPy's own error
        return wide_sum(x, axis, wide).astype(x.dtype)
    parts = list(pool.map(lambda part: wide_sum(part, axes, wide, True), np.array_split(x, threads, d)))
    total = functools.reduce(np.add, parts) if d in axes else np.concatenate(parts, axis=d)
    return total.reshape([n for a, n in enumerate(x.shape) if a not in axes]).astype(x.dtype)


def wide_sum(x, axis, wide, keepdims: bool = False):
    """np.sum in `wide` through a casting buffer of SUM_BUFFER elements (still in cache: each refill's cost
    amortised over more elements; the setting is the calling thread's)."""
    np = numpy_module()
    old = np.setbufsize(SUM_BUFFER) if x.size > SUM_BUFFER else None  # (setting it costs ~2 us: large sums only)
    try:
        return np.sum(x, axis=axis, dtype=wide, keepdims=keepdims)
    finally:
        if old is not None:
            np.setbufsize(old)


@functools.cache
def sum_threads():
    """(the pool np_sum splits large sums over, its threads): one a core, at most 8; none under Pyodide, which
    starts no threads."""
    cores = 1 if is_browser() else min(os.cpu_count() or 1, 8)
    return (ThreadPoolExecutor(cores, thread_name_prefix="trueno_web-sum") if cores > 1 else None), cores


def np_dot(a, b, axis=None):
    """Dot product in float64 (exact products; float32 BLAS lost 3.9e-4 on 2^20 terms of 1e16), rounded once."""
    np = numpy_module()
    dtype = np.result_type(a, b)
    a, b = a.astype(np.float64), b.astype(np.float64)
    return (np.dot(a, b) if axis is None else np.einsum("ij,ij->i", a, b)).astype(dtype)


def np_softmax(x, log=False):
    np = numpy_module()
    m = np.max(x, axis=-1, keepdims=True, initial=-np.inf)  # initial: rows of 0 columns have no max
    shifted = x - m
    s = np_sum(np.exp(shifted), axis=-1)[..., None]
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
class Quiet:
    """A NumPy expression run with floating-point warnings off (NaN/Inf are data here); `raw` is the expression
    itself, for a caller that has them off already (the NumPy backend: one errstate per execute, not one per
    op). Its signature shows through (inspect follows __wrapped__)."""

    def __init__(self, expr: Callable):
        functools.update_wrapper(self, expr)
        self.raw = expr

    def __call__(self, *args, **kwargs):
        with numpy_module().errstate(all="ignore"):
            return self.raw(*args, **kwargs)


# ---------------------------------------------------------------- accuracy: float64 references and ulp
# `Op.exact` functions: float64 NumPy written from each op's definition by a route of its own (logaddexp,
# tanh, expm1), independent of the kernels' formulas; every float32 input maps to its value within far less
# than a float32 ulp (tests/test_accuracy.py checks them against 60-digit decimal arithmetic).


def exact_sigmoid(x):
    np = numpy_module()
    return np.exp(-np.logaddexp(0.0, -x))


def exact_swish(x):
    np = numpy_module()
    return np.where(x == -np.inf, -0.0, x * exact_sigmoid(x))


def exact_gelu(x):
    np = numpy_module()
    v = np.clip(x, -1e4, 1e4)  # gelu is x or -0 long before; keeps the cube finite in float64
    return np.where(x == -np.inf, -0.0, x * exact_sigmoid(2 * GELU_C * (v + 0.044715 * v**3)))


def exact_mish(x):
    np = numpy_module()
    return np.where(x == -np.inf, -0.0, x * np.tanh(np.logaddexp(0.0, x)))


def exact_elu(x, alpha):
    np = numpy_module()
    return np.where(x > 0, x, alpha * np.expm1(x))


def exact_selu(x):
    return SELU_SCALE * exact_elu(x, SELU_ALPHA)


def exact_hardswish(x):
    np = numpy_module()
    return np.where(x >= 3, x, np.where(x <= -3, np.copysign(0.0, x), x * (x + 3) / 6))


def exact_exp(x):
    np = numpy_module()
    return np.exp2(x * (1 / math.log(2.0)))  # libm's exp2, not its exp: the NumPy backend runs np.exp


def exact_log(x):
    np = numpy_module()
    return np.log2(x) * math.log(2.0)  # libm's log2, not its log
