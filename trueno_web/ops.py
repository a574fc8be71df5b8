"""The op catalog: one row per op.

Device methods, batch methods, fusion, the CPU fallbacks, the docs and the test parametrization all
iterate `CATALOG`; adding an op is adding a row (and its WGSL function in `shaders/functions.wgsl`).

Each row carries two references: `numpy`, vectorised (the NumPy backend runs it in float32; desktop
tests run it in float64 as the reference; a reduction's takes `axis=None`, all of it, or `axis=1` of
2-D inputs, a value per row), and `ref`, pure Python on `math` in float64 (the reference where NumPy
is missing, e.g. inside Pyodide, and a cross-check of `numpy`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from .kinds import KINDS, Kind, KindRow

SELU_ALPHA = 1.6732632423543772
SELU_SCALE = 1.0507009873554805
GELU_C = 0.7978845608028654  # sqrt(2 / pi)
F32_MAX = 3.4028234663852886e38


@dataclass(frozen=True)
class Param:
    """A scalar parameter of an op; `default=None` means the caller must give it."""

    name: str
    default: float | None = None


@dataclass(frozen=True)
class Op:
    """One op: its kind, WGSL entry, references and tolerances."""

    name: str
    kind: Kind
    wgsl: str  # elementwise: WGSL function; reduce: WGSL load expression of x (and y)
    numpy: Callable
    ref: Callable
    doc: str
    params: tuple[Param, ...] = ()
    rtol: float = 1e-6
    atol: float = 0.0
    aliases: tuple[str, ...] = ()
    input_names: tuple[str, ...] = ()  # the arguments, where they differ from the kind's (dot: a, b)
    combine: str = "tw_add"  # reduce: WGSL function folding two partial results
    identity: str = "0.0"  # reduce: WGSL expression of the fold's identity
    finish: str = ""  # reduce: WGSL function applied to the total
    empty: bool = True  # reduce: has a value on an empty input (the fold's identity); max and min have none
    options: tuple[str, ...] = field(default=())  # non-scalar keyword options (shapes)
    cost: int = 1  # relative work per element on the host (exp/tanh/log ops: 4); `auto` weighs map work by it
    group: str = ""  # "activation": the activation-style one-input ops the demo page plots

    @property
    def row(self) -> KindRow:
        """The row of this op's kind (kinds.KINDS)."""
        return KINDS[self.kind]

    @property
    def inputs(self) -> tuple[str, ...]:
        return self.input_names or self.row.inputs

    @property
    def arity(self) -> int:
        return len(self.inputs)

    @property
    def elementwise(self) -> bool:
        return self.row.elementwise


# ---------------------------------------------------------------- pure-Python scalar helpers


def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _floor_finite(x: float) -> float:
    """-inf becomes -FLT_MAX so x * 0 gives -0.0 rather than NaN (the limit of x*sigmoid(x) etc.)."""
    return -F32_MAX if x < -F32_MAX else x


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + _exp(-x))


def _softplus(x: float) -> float:
    return max(x, 0.0) + math.log1p(_exp(-abs(x))) if not math.isnan(x) else x


def _gelu(x: float) -> float:
    x = _floor_finite(x)
    return 0.5 * x * (1.0 + math.tanh(GELU_C * (x + 0.044715 * x * x * x)))


def _hardswish(x: float) -> float:
    x = _floor_finite(x)
    return x * min(max(x + 3.0, 0.0), 6.0) / 6.0 if not math.isnan(x) else x


def _clip(x: float, lo: float, hi: float) -> float:
    if math.isnan(x) or math.isnan(lo) or math.isnan(hi):
        return math.nan
    return hi if max(x, lo) > hi else max(x, lo)


def _total(xs) -> float:
    xs = list(xs)
    return math.fsum(xs) if all(math.isfinite(v) for v in xs) else sum(xs)


def _extreme(pick):
    def reduce(xs):
        xs = list(xs)
        if any(math.isnan(v) for v in xs):
            return math.nan
        return pick(xs)

    return reduce


def _log(x: float) -> float:
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan  # NaN stays NaN


def _sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0 or math.isnan(x) else math.nan  # sqrt(-0.0) = -0.0


def _rsqrt(x: float) -> float:
    if x == 0:
        return math.copysign(math.inf, x)
    return 1.0 / _sqrt(x) if not math.isnan(_sqrt(x)) else math.nan


def _trig(fn):
    return lambda x: fn(x) if math.isfinite(x) else math.nan


def _floor(x: float) -> float:
    return math.copysign(float(math.floor(x)), x) if math.isfinite(x) else x  # floor(-0.0) = -0.0


def _div(a: float, b: float) -> float:
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _odd_integer(y: float) -> bool:
    return math.isfinite(y) and y == math.floor(y) and math.fmod(y, 2.0) != 0


def _pow(x: float, y: float) -> float:
    """C99 pow (what np.power gives), in float64."""
    if y == 0 or x == 1:
        return 1.0  # even for NaN
    if math.isnan(x) or math.isnan(y):
        return math.nan
    try:
        return math.pow(x, y)
    except ValueError:  # 0 ** negative, or a negative base with a non-integer exponent
        if x == 0:
            return math.copysign(math.inf, x) if _odd_integer(y) else math.inf
        return math.nan
    except OverflowError:
        return -math.inf if x < 0 and _odd_integer(y) else math.inf


def _nan_or(pick):
    return lambda a, b: math.nan if math.isnan(a) or math.isnan(b) else pick(a, b)


def _product(xs) -> float:
    return math.prod(xs, start=1.0)


def _softmax_row(row, log=False):
    m = _extreme(max)(row)
    shifted = [v - m for v in row]
    s = _total(_exp(v) for v in shifted)
    if log:
        return [v - math.log(s) for v in shifted]
    return [_exp(v) / s for v in shifted]


def _matmul_ref(a, b, m, k, n):
    return [_total(a[i * k + p] * b[p * n + j] for p in range(k)) for i in range(m) for j in range(n)]


def _conv2d_ref(img, h, w, ker, kh, kw):
    oh, ow = h - kh + 1, w - kw + 1
    return [
        _total(img[(r + p) * w + c + q] * ker[p * kw + q] for p in range(kh) for q in range(kw))
        for r in range(oh)
        for c in range(ow)
    ]


# ---------------------------------------------------------------- NumPy implementations (lazy np)


def _np():
    import numpy

    return numpy


def _np_floor_finite(x):
    np = _np()
    return np.maximum(x, np.asarray(-np.finfo(x.dtype).max, x.dtype), where=~np.isnan(x), out=x.copy())


def _np_sigmoid(x):
    np = _np()
    return (1 / (1 + np.exp(-x))).astype(x.dtype, copy=False)


def _np_softplus(x):
    np = _np()
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _np_gelu(x):
    np = _np()
    x = _np_floor_finite(x)
    return (0.5 * x * (1 + np.tanh(GELU_C * (x + 0.044715 * x * x * x)))).astype(x.dtype, copy=False)


def _np_softmax(x, log=False):
    np = _np()
    m = np.max(x, axis=-1, keepdims=True, initial=-np.inf)  # initial: rows of 0 columns have no max
    shifted = x - m
    s = np.sum(np.exp(shifted), axis=-1, keepdims=True)
    return shifted - np.log(s) if log else np.exp(shifted) / s


def _np_conv2d(img, ker):
    np = _np()
    kh, kw = ker.shape
    oh, ow = img.shape[0] - kh + 1, img.shape[1] - kw + 1
    out = np.zeros((oh, ow), dtype=img.dtype)
    for p in range(kh):
        for q in range(kw):
            out += img[p : p + oh, q : q + ow] * ker[p, q]
    return out


# np.power with a stride-0 (broadcast) exponent of 0.5 takes a sqrt fast path: pow(-inf, 0.5) = NaN and
# pow(-0, 0.5) = -0 there, where C99 pow (and our kernels) give +inf and +0; a contiguous exponent does not.
def _f(expr: Callable) -> Callable:
    """Run a NumPy expression with floating-point warnings off (NaN/Inf are data here)."""

    def run(*args, **kwargs):
        with _np().errstate(all="ignore"):
            return expr(*args, **kwargs)

    return run


# ---------------------------------------------------------------- the catalog

T_EXACT = dict(rtol=1e-6, atol=0.0)
T_TRANSCENDENTAL = dict(rtol=2e-5, atol=2e-6, cost=4)
T_REDUCE = dict(rtol=1e-4, atol=1e-5)  # atol is scaled by sum(|x|) in the tests
# prod: each of the n - 1 float32 multiplications rounds once (2^-24 relative), in any order: the tests scale
# atol by n * prod(|x|), so atol is that bound per factor (while no partial product leaves the normal range)
T_PROD = dict(rtol=1e-6, atol=6e-8)
# measured (README, docs): exp is the WGSL builtin, within 4.02e-6 relative on lavapipe and SwiftShader near the
# ends of its range (4.3e-7 on [-4, 4]); log the builtin, within 1.7e-7 absolute near 1; both give 0 for
# results below float32's normal range, as div and pow may on a GPU that flushes subnormals (WGSL allows it):
# atol 1.2e-38, float32's smallest normal. div, pow, sin, cos, sqrt, rsqrt stay within 2.1e-7 relative.
T_EXP = dict(rtol=5e-6, atol=1.2e-38, cost=4)
T_LOG = dict(rtol=1e-6, atol=2e-7, cost=4)
T_FLUSH = dict(rtol=1e-6, atol=1.2e-38)
ACT = dict(group="activation")

CATALOG: tuple[Op, ...] = (
    Op("relu", Kind.UNARY, "tw_relu", _f(lambda x: _np().maximum(x, x.dtype.type(0))),  # np.maximum keeps NaN
       lambda x: x if x > 0 or math.isnan(x) else 0.0, "max(x, 0); NaN stays NaN", **T_EXACT, **ACT),
    Op("leaky_relu", Kind.UNARY, "tw_leaky_relu", _f(lambda x, s: _np().where(x > 0, x, x * x.dtype.type(s))),
       lambda x, s: x if x > 0 else s * x, "x if x > 0 else negative_slope * x",
       params=(Param("negative_slope", 0.01),), **T_EXACT, **ACT),
    Op("elu", Kind.UNARY, "tw_elu", _f(lambda x, a: _np().where(x > 0, x, x.dtype.type(a) * _np().expm1(x))),
       lambda x, a: x if x > 0 else a * (_exp(x) - 1.0), "x if x > 0 else alpha * (exp(x) - 1)",
       params=(Param("alpha", 1.0),), **T_TRANSCENDENTAL, **ACT),
    Op("sigmoid", Kind.UNARY, "tw_sigmoid", _f(_np_sigmoid), _sigmoid, "1 / (1 + exp(-x))", **T_TRANSCENDENTAL, **ACT),
    Op("tanh", Kind.UNARY, "tw_tanh", _f(lambda x: _np().tanh(x)), math.tanh, "hyperbolic tangent", **T_TRANSCENDENTAL, **ACT),
    Op("swish", Kind.UNARY, "tw_swish", _f(lambda x: _np_floor_finite(x) * _np_sigmoid(x)),
       lambda x: _floor_finite(x) * _sigmoid(x), "x * sigmoid(x) (SiLU); swish(-inf) = -0", **T_TRANSCENDENTAL, **ACT),
    Op("gelu", Kind.UNARY, "tw_gelu", _f(_np_gelu), _gelu,
       "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the tanh form", **T_TRANSCENDENTAL, **ACT),
    Op("mish", Kind.UNARY, "tw_mish", _f(lambda x: _np_floor_finite(x) * _np().tanh(_np_softplus(x))),
       lambda x: _floor_finite(x) * math.tanh(_softplus(x)), "x * tanh(softplus(x))", **T_TRANSCENDENTAL, **ACT),
    Op("selu", Kind.UNARY, "tw_selu",
       _f(lambda x: (SELU_SCALE * _np().where(x > 0, x, SELU_ALPHA * _np().expm1(x))).astype(x.dtype)),
       lambda x: SELU_SCALE * (x if x > 0 else SELU_ALPHA * (_exp(x) - 1.0)),
       "scale * (x if x > 0 else alpha * (exp(x) - 1)), the self-normalising constants", **T_TRANSCENDENTAL, **ACT),
    Op("hardswish", Kind.UNARY, "tw_hardswish",
       _f(lambda x: (lambda y: y * _np().clip(y + 3, 0, 6) / 6)(_np_floor_finite(x)).astype(x.dtype)),
       _hardswish, "x * clip(x + 3, 0, 6) / 6", **T_EXACT, **ACT),
    Op("clip", Kind.UNARY, "tw_clip",
       _f(lambda x, lo, hi: _np().minimum(_np().maximum(x, x.dtype.type(lo)), x.dtype.type(hi))),
       _clip, "min(max(x, lo), hi); NaN stays NaN", params=(Param("lo"), Param("hi")), **T_EXACT, **ACT),
    Op("scale", Kind.UNARY, "tw_scale", _f(lambda x, s: x * x.dtype.type(s)), lambda x, s: x * s,
       "x * s", params=(Param("s"),), **T_EXACT, **ACT),
    Op("neg", Kind.UNARY, "tw_neg", _f(lambda x: -x), lambda x: -x, "-x", **T_EXACT),
    Op("abs", Kind.UNARY, "tw_abs", _f(lambda x: _np().abs(x)), abs, "|x|", **T_EXACT),
    Op("exp", Kind.UNARY, "tw_exp", _f(lambda x: _np().exp(x)), _exp, "e^x", **T_EXP),
    Op("log", Kind.UNARY, "tw_log", _f(lambda x: _np().log(x)), _log,
       "natural logarithm; log(0) = -inf, log(x < 0) = NaN", **T_LOG),
    Op("sqrt", Kind.UNARY, "tw_sqrt", _f(lambda x: _np().sqrt(x)), _sqrt, "square root; sqrt(x < 0) = NaN",
       **T_EXACT),
    Op("rsqrt", Kind.UNARY, "tw_rsqrt", _f(lambda x: (1 / _np().sqrt(x)).astype(x.dtype, copy=False)), _rsqrt,
       "1 / sqrt(x); rsqrt(+-0) = +-inf, rsqrt(x < 0) = NaN", **T_EXACT),
    Op("square", Kind.UNARY, "tw_square", _f(lambda x: _np().square(x)), lambda x: x * x, "x * x", **T_EXACT),
    Op("sin", Kind.UNARY, "tw_sin", _f(lambda x: _np().sin(x)), _trig(math.sin),
       "sine (radians); our own reduction, accurate for every finite float32", **T_EXACT, cost=4),
    Op("cos", Kind.UNARY, "tw_cos", _f(lambda x: _np().cos(x)), _trig(math.cos),
       "cosine (radians); our own reduction, accurate for every finite float32", **T_EXACT, cost=4),
    Op("floor", Kind.UNARY, "tw_floor", _f(lambda x: _np().floor(x)), _floor, "largest integer <= x", **T_EXACT),
    Op("copy", Kind.UNARY, "tw_copy", _f(lambda x: x.copy()), lambda x: x,
       "x itself, written to a buffer of its own (the tensor layer's contiguous copy of a view)", **T_EXACT),
    Op("add", Kind.BINARY, "tw_add", _f(lambda a, b: a + b), lambda a, b: a + b, "a + b",
       aliases=("vec_add",), **T_EXACT),
    Op("sub", Kind.BINARY, "tw_sub", _f(lambda a, b: a - b), lambda a, b: a - b, "a - b", **T_EXACT),
    Op("mul", Kind.BINARY, "tw_mul", _f(lambda a, b: a * b), lambda a, b: a * b, "a * b", **T_EXACT),
    Op("div", Kind.BINARY, "tw_div", _f(lambda a, b: a / b), _div, "a / b", **T_FLUSH),
    Op("pow", Kind.BINARY, "tw_pow", _f(lambda a, b: _np().power(a, _np().ascontiguousarray(b))), _pow,
       "a ** b as np.power: pow(a, 0) = 1 and pow(1, b) = 1 even for NaN; a negative a needs an integer b "
       "(else NaN); 0 ** negative = inf", **T_FLUSH, cost=8),
    Op("maximum", Kind.BINARY, "tw_max", _f(lambda a, b: _np().maximum(a, b)), _nan_or(max),
       "the larger of a and b; NaN if either is NaN", **T_EXACT),
    Op("minimum", Kind.BINARY, "tw_min", _f(lambda a, b: _np().minimum(a, b)), _nan_or(min),
       "the smaller of a and b; NaN if either is NaN", **T_EXACT),
    Op("lt", Kind.BINARY, "tw_lt", _f(lambda a, b: (a < b).astype(a.dtype)), lambda a, b: float(a < b),
       "1.0 where a < b, else 0.0 (NaN: 0.0)", **T_EXACT),
    Op("le", Kind.BINARY, "tw_le", _f(lambda a, b: (a <= b).astype(a.dtype)), lambda a, b: float(a <= b),
       "1.0 where a <= b, else 0.0 (NaN: 0.0)", **T_EXACT),
    Op("gt", Kind.BINARY, "tw_gt", _f(lambda a, b: (a > b).astype(a.dtype)), lambda a, b: float(a > b),
       "1.0 where a > b, else 0.0 (NaN: 0.0)", **T_EXACT),
    Op("ge", Kind.BINARY, "tw_ge", _f(lambda a, b: (a >= b).astype(a.dtype)), lambda a, b: float(a >= b),
       "1.0 where a >= b, else 0.0 (NaN: 0.0)", **T_EXACT),
    Op("eq", Kind.BINARY, "tw_eq", _f(lambda a, b: (a == b).astype(a.dtype)), lambda a, b: float(a == b),
       "1.0 where a == b, else 0.0 (NaN: 0.0)", **T_EXACT),
    Op("ne", Kind.BINARY, "tw_ne", _f(lambda a, b: (a != b).astype(a.dtype)), lambda a, b: float(a != b),
       "1.0 where a != b, else 0.0 (NaN: 1.0)", **T_EXACT),
    Op("where", Kind.TERNARY, "tw_where", _f(lambda c, a, b: _np().where(c != 0, a, b)),
       lambda c, a, b: a if c != 0 else b, "a where cond != 0, else b (a NaN cond counts as true)", **T_EXACT),
    Op("dot", Kind.REDUCE, "tw_mul(x, y)",
       _f(lambda a, b, axis=None: _np().dot(a, b) if axis is None else _np().einsum("ij,ij->i", a, b)),
       lambda a, b: _total(x * y for x, y in zip(a, b)), "sum(a * b)", input_names=("a", "b"), **T_REDUCE),
    Op("sum", Kind.REDUCE, "x", _f(lambda x, axis=None: _np().sum(x, axis=axis)), _total, "sum of all elements", **T_REDUCE),
    Op("max", Kind.REDUCE, "x", _f(lambda x, axis=None: _np().max(x, axis=axis)), _extreme(max), "largest element; NaN if any",
       combine="tw_max", identity="tw_neg_inf()", empty=False, **T_EXACT),
    Op("min", Kind.REDUCE, "x", _f(lambda x, axis=None: _np().min(x, axis=axis)), _extreme(min), "smallest element; NaN if any",
       combine="tw_min", identity="tw_inf()", empty=False, **T_EXACT),
    Op("prod", Kind.REDUCE, "x", _f(lambda x, axis=None: _np().prod(x, axis=axis)), _product,
       "product of all elements", combine="tw_mul", identity="1.0", **T_PROD),
    Op("norm_l1", Kind.REDUCE, "abs(x)", _f(lambda x, axis=None: _np().sum(_np().abs(x), axis=axis)),
       lambda xs: _total(abs(v) for v in xs), "sum(|x|)", **T_REDUCE),
    Op("norm_l2", Kind.REDUCE, "x * x", _f(lambda x, axis=None: _np().sqrt(_np().sum(x * x, axis=axis))),
       lambda xs: math.sqrt(_total(v * v for v in xs)), "sqrt(sum(x^2))", finish="sqrt", **T_REDUCE),
    Op("softmax", Kind.SOFTMAX, "softmax", _f(_np_softmax), _softmax_row,
       "exp(x - max) / sum(exp(x - max)) along the last axis", rtol=1e-5, atol=1e-7),
    Op("log_softmax", Kind.SOFTMAX, "log_softmax", _f(lambda x: _np_softmax(x, log=True)),
       lambda row: _softmax_row(row, log=True), "x - max - log(sum(exp(x - max))) along the last axis",
       rtol=1e-5, atol=1e-5),
    Op("matmul", Kind.MATMUL, "matmul", _f(lambda a, b: a @ b), _matmul_ref, "(M, K) @ (K, N)",
       rtol=1e-4, atol=1e-5, options=("m", "k", "n")),
    Op("convolve2d", Kind.CONV2D, "conv2d", _f(_np_conv2d), _conv2d_ref,
       'valid 2-D convolution without kernel flip (scipy.signal.correlate2d(img, k, "valid"))',
       rtol=1e-4, atol=1e-5),
)

BY_NAME: dict[str, Op] = {op.name: op for op in CATALOG} | {a: op for op in CATALOG for a in op.aliases}


def get(name: str) -> Op:
    """The catalog row of an op, by name or alias."""
    try:
        return BY_NAME[name]
    except KeyError:
        from .errors import TruenoValueError

        raise TruenoValueError(f"unknown op {name!r}; known ops: {', '.join(sorted(BY_NAME))}") from None
