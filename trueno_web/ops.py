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

CATALOG: tuple[Op, ...] = (
    Op("relu", Kind.UNARY, "tw_relu", _f(lambda x: _np().maximum(x, x.dtype.type(0))),  # np.maximum keeps NaN
       lambda x: x if x > 0 or math.isnan(x) else 0.0, "max(x, 0); NaN stays NaN", **T_EXACT),
    Op("leaky_relu", Kind.UNARY, "tw_leaky_relu", _f(lambda x, s: _np().where(x > 0, x, x * x.dtype.type(s))),
       lambda x, s: x if x > 0 else s * x, "x if x > 0 else negative_slope * x",
       params=(Param("negative_slope", 0.01),), **T_EXACT),
    Op("elu", Kind.UNARY, "tw_elu", _f(lambda x, a: _np().where(x > 0, x, x.dtype.type(a) * _np().expm1(x))),
       lambda x, a: x if x > 0 else a * (_exp(x) - 1.0), "x if x > 0 else alpha * (exp(x) - 1)",
       params=(Param("alpha", 1.0),), **T_TRANSCENDENTAL),
    Op("sigmoid", Kind.UNARY, "tw_sigmoid", _f(_np_sigmoid), _sigmoid, "1 / (1 + exp(-x))", **T_TRANSCENDENTAL),
    Op("tanh", Kind.UNARY, "tw_tanh", _f(lambda x: _np().tanh(x)), math.tanh, "hyperbolic tangent", **T_TRANSCENDENTAL),
    Op("swish", Kind.UNARY, "tw_swish", _f(lambda x: _np_floor_finite(x) * _np_sigmoid(x)),
       lambda x: _floor_finite(x) * _sigmoid(x), "x * sigmoid(x) (SiLU); swish(-inf) = -0", **T_TRANSCENDENTAL),
    Op("gelu", Kind.UNARY, "tw_gelu", _f(_np_gelu), _gelu,
       "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the tanh form", **T_TRANSCENDENTAL),
    Op("mish", Kind.UNARY, "tw_mish", _f(lambda x: _np_floor_finite(x) * _np().tanh(_np_softplus(x))),
       lambda x: _floor_finite(x) * math.tanh(_softplus(x)), "x * tanh(softplus(x))", **T_TRANSCENDENTAL),
    Op("selu", Kind.UNARY, "tw_selu",
       _f(lambda x: (SELU_SCALE * _np().where(x > 0, x, SELU_ALPHA * _np().expm1(x))).astype(x.dtype)),
       lambda x: SELU_SCALE * (x if x > 0 else SELU_ALPHA * (_exp(x) - 1.0)),
       "scale * (x if x > 0 else alpha * (exp(x) - 1)), the self-normalising constants", **T_TRANSCENDENTAL),
    Op("hardswish", Kind.UNARY, "tw_hardswish",
       _f(lambda x: (lambda y: y * _np().clip(y + 3, 0, 6) / 6)(_np_floor_finite(x)).astype(x.dtype)),
       _hardswish, "x * clip(x + 3, 0, 6) / 6", **T_EXACT),
    Op("clip", Kind.UNARY, "tw_clip",
       _f(lambda x, lo, hi: _np().minimum(_np().maximum(x, x.dtype.type(lo)), x.dtype.type(hi))),
       _clip, "min(max(x, lo), hi); NaN stays NaN", params=(Param("lo"), Param("hi")), **T_EXACT),
    Op("scale", Kind.UNARY, "tw_scale", _f(lambda x, s: x * x.dtype.type(s)), lambda x, s: x * s,
       "x * s", params=(Param("s"),), **T_EXACT),
    Op("add", Kind.BINARY, "tw_add", _f(lambda a, b: a + b), lambda a, b: a + b, "a + b",
       aliases=("vec_add",), **T_EXACT),
    Op("sub", Kind.BINARY, "tw_sub", _f(lambda a, b: a - b), lambda a, b: a - b, "a - b", **T_EXACT),
    Op("mul", Kind.BINARY, "tw_mul", _f(lambda a, b: a * b), lambda a, b: a * b, "a * b", **T_EXACT),
    Op("dot", Kind.REDUCE, "tw_mul(x, y)",
       _f(lambda a, b, axis=None: _np().dot(a, b) if axis is None else _np().einsum("ij,ij->i", a, b)),
       lambda a, b: _total(x * y for x, y in zip(a, b)), "sum(a * b)", input_names=("a", "b"), **T_REDUCE),
    Op("sum", Kind.REDUCE, "x", _f(lambda x, axis=None: _np().sum(x, axis=axis)), _total, "sum of all elements", **T_REDUCE),
    Op("max", Kind.REDUCE, "x", _f(lambda x, axis=None: _np().max(x, axis=axis)), _extreme(max), "largest element; NaN if any",
       combine="tw_max", identity="tw_neg_inf()", empty=False, **T_EXACT),
    Op("min", Kind.REDUCE, "x", _f(lambda x, axis=None: _np().min(x, axis=axis)), _extreme(min), "smallest element; NaN if any",
       combine="tw_min", identity="tw_inf()", empty=False, **T_EXACT),
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
