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
    """0.5 x (1 + tanh(u)) as x / (1 + e^-2u): no cancellation for x < 0 (in float64: no overflow either)."""
    np = numpy_module()
    x = np_floor_finite(x)
    return x / (1 + np.exp(-2 * GELU_C * (x + 0.044715 * x * x * x)))


def in_float64(expr: Callable) -> Callable:
    """A NumPy expression evaluated in float64 and rounded once to its input's dtype: the NumPy backend's
    activations, each within 0.5 ulp of float32 plus float64's error (the formulas are stable in float64)."""

    def run(x, *params):
        np = numpy_module()
        return np.asarray(expr(x.astype(np.float64), *params)).astype(x.dtype, copy=False)

    return run


def np_sum(x, axis=None):
    """Sum accumulated in float64, rounded once to float32: its error does not grow with the count."""
    np = numpy_module()
    return np.sum(x, axis=axis, dtype=np.float64).astype(x.dtype)


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
def quiet(expr: Callable) -> Callable:
    """Run a NumPy expression with floating-point warnings off (NaN/Inf are data here)."""

    def run(*args, **kwargs):
        with numpy_module().errstate(all="ignore"):
            return expr(*args, **kwargs)

    return run


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


F32_TINY = 2.0**-126  # float32's smallest normal


def ulp_errors(got, want, flush: bool = False):
    """Per element, |got - want| in ulps of float32 at `want` (float64), the ulp at a subnormal being
    2^-149. NaN must meet NaN and an infinity its own value (where float32 rounds `want` to it); a zero
    must have `want`'s sign; each miss counts as inf. `flush`: values below float32's normal range on both
    sides count as equal, zero or not, of either sign (a GPU may flush subnormals to zero; WGSL allows it)."""
    np = numpy_module()
    with np.errstate(all="ignore"):
        got = np.asarray(got, np.float64)
        want = np.asarray(want, np.float64)
        w32 = want.astype(np.float32).astype(np.float64)
        _, e = np.frexp(np.abs(want))
        ulp = np.ldexp(1.0, np.maximum(e - 1, -126) - 23)
        err = np.abs(got - want) / ulp
    special = np.isnan(got) | np.isnan(want) | np.isinf(got) | np.isinf(w32)
    same = (np.isnan(got) & np.isnan(want)) | (got == w32)
    err = np.where(special, np.where(same, 0.0, np.inf), err)
    zero = (got == 0) & (want == 0)
    err = np.where(zero & (np.signbit(got) != np.signbit(want)), np.inf, err)
    if flush:
        err = np.where((np.abs(got) < F32_TINY) & (np.abs(want) < F32_TINY), 0.0, err)
    return err


def flush_subnormals(x):
    """x with its subnormals replaced by zeros of their sign: what a GPU that flushes subnormal inputs reads."""
    np = numpy_module()
    return np.where(np.abs(x) < F32_TINY, np.copysign(np.zeros_like(x), x), x)


def sweep_sample(n: int, seed: int = 0):
    """n float32 values for an accuracy sweep: half one per equal interval of the 2^32 bit patterns (every
    exponent of both signs, subnormals, infinities, NaN), half uniform in [-16, 16) (where the activations
    bend), and the edge values (+-0, +-inf, NaN, the smallest and largest subnormal, normal and finite, and
    the places where a formula is known to break: gelu near -4.4, mish at -20, hardswish's knees, exp's ends)."""
    np = numpy_module()
    rng = np.random.default_rng(seed)
    half = n // 2
    step = 2**32 // max(half, 1)
    bits = (np.arange(half, dtype=np.uint64) * step + rng.integers(0, step, half, dtype=np.uint64)).astype(np.uint32)
    edges = np.array([0.0, np.inf, np.nan, 1e-45, 1.1754942e-38, F32_TINY, F32_MAX, 1.0, 0.5, 3.0, 4.4, 10.0, 20.0,
                      88.72, 103.9], np.float32)
    edges = np.concatenate([edges, -edges])
    dense = rng.uniform(-16.0, 16.0, n - half - len(edges)).astype(np.float32)
    return np.concatenate([edges, bits.view(np.float32), dense])


SWEEP_PARAMS = {"lo": -0.5, "hi": 0.75, "s": -1.5}  # parameters without a default, in the sweep


def sweep_inputs(op, n: int, seed: int = 0):
    """An elementwise op's sampled inputs, one `sweep_sample` per input; pow also gets bases in (0, 4] with
    exponents in [-40, 40] (random bit patterns mostly overflow or underflow it)."""
    np = numpy_module()
    inputs = [sweep_sample(n, seed + j) for j in range(len(op.inputs))]
    if op.name == "pow":
        rng = np.random.default_rng(seed)
        inputs[0][-n // 4:] = rng.uniform(0, 4, n // 4).astype(np.float32)
        inputs[1][-n // 4:] = rng.uniform(-40, 40, n // 4).astype(np.float32)
    return inputs


def sweep_params(op) -> dict:
    """The op's scalar parameters as the float32 values the kernels see (the reference gets the same)."""
    np = numpy_module()
    return {p.name: float(np.float32(SWEEP_PARAMS[p.name] if p.default is None else p.default)) for p in op.params}


def float64_reference(op, inputs, params: dict):
    """op.exact (else op.numpy) on the inputs in float64."""
    np = numpy_module()
    with np.errstate(all="ignore"):
        xs = [np.asarray(x).astype(np.float64) for x in inputs]
        return np.asarray((op.exact or op.numpy)(*xs, *params.values()), np.float64).reshape(-1)


def sweep_errors(op, inputs, got, params: dict, flush: bool):
    """Per element, the ulp error of `got` (ulp_errors); with `flush`, the smaller of that and the error against
    the inputs and scalar parameters with their subnormals flushed (a GPU may read a subnormal input as zero)."""
    np = numpy_module()
    got = np.asarray(got).reshape(-1)
    err = ulp_errors(got, float64_reference(op, inputs, params), flush)
    if flush:
        flushed = {k: float(flush_subnormals(np.float64(v))) for k, v in params.items()}
        err = np.minimum(err, ulp_errors(got, float64_reference(op, [flush_subnormals(x) for x in inputs], flushed), True))
    return err
