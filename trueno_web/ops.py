"""The op catalog: one row per op.

Device methods, batch methods, fusion, the CPU fallbacks, the docs and the test parametrization all
iterate `CATALOG`; adding an op is adding a row (and its WGSL function in `shaders/functions.wgsl`).

Each row carries two references: `numpy`, vectorised (the NumPy backend runs it in the node's dtype: float32,
or float64 where asked for; desktop tests run it in float64 as the reference; a reduction's takes `axis=None`, all of it, or `axis=1` of
2-D inputs, a value per row), and `ref`, pure Python on `math` in float64 (the reference where NumPy
is missing, e.g. inside Pyodide, and a cross-check of `numpy`). An elementwise `numpy` that is one ufunc
takes `out=` too (`Op.writes_out`): the NumPy backend's fused chains write into their own arrays with it.
"""

from __future__ import annotations

import math

from . import attention_kind as ak
from . import fft_kinds as fk
from . import prng
from . import references as ref
from . import references_array_api as ref_api
from . import sort_kinds as sk
from .dtypes import COMPLEX, DTYPES, WIDE, bool_, float32, float64, int32, int64, uint32
from .errors import TruenoValueError
from .kinds import Kind
from .op_row import Op, Param
from .references import SELU_ALPHA, SELU_SCALE

# ---------------------------------------------------------------- the catalog

T_EXACT = dict(rtol=1e-6, atol=0.0)  # one rounding at most: ulp 0.5
T_BITS = dict(rtol=1e-6, atol=0.0, ulp=0)  # no rounding: the result is one of the inputs, or a fixed value
T_TRANSCENDENTAL = dict(rtol=2e-5, atol=2e-6, cost=4)
T_REDUCE = dict(rtol=1e-4, atol=1e-5)  # atol is scaled by sum(|x|) in the tests
# prod: each of the n - 1 float32 multiplications rounds once (2^-24 relative), in any order: the tests scale
# atol by n * prod(|x|), so atol is that bound per factor (while no partial product leaves the normal range)
T_PROD = dict(rtol=1e-6, atol=6e-8)
# rtol/atol: what the composite tests (chains, graphs, tensors) allow per op; `ulp` is each elementwise op's
# accuracy bound, measured by tests/test_accuracy.py and docs/accuracy.md (own exp, expm1, log, tanh, sin, cos
# and pow in WGSL and C). atol 1.2e-38 (float32's smallest normal): a GPU may flush subnormal results.
T_EXP = dict(rtol=5e-6, atol=1.2e-38, cost=4)
T_LOG = dict(rtol=1e-6, atol=2e-7, cost=4)
T_FLUSH = dict(rtol=1e-6, atol=1.2e-38)
ACT = dict(group="activation")
# Each row's dtypes: the 32-bit ones the kernels compute in, then float64 and int64 where it has float32 and
# int32 (the NumPy backend computes those in NumPy's own dtypes)
NUMBERS = (float32, int32, uint32, float64, int64)
NUM = dict(dtypes=NUMBERS)  # arithmetic: exact in integers (wrapping, as NumPy's int32 and int64)
ALL = dict(dtypes=DTYPES + WIDE)
COMPARE = dict(dtypes=NUMBERS, returns="bool")
EQUALITY = dict(dtypes=DTYPES + WIDE + COMPLEX, returns="bool")
# complex64 and complex128 (the NumPy backend's) on the rows the standard defines for complex numbers
NUMC = dict(dtypes=NUMBERS + COMPLEX)
FLOATC = dict(dtypes=(float32, float64) + COMPLEX)  # float-only ops that take complex numbers too
ANY = dict(dtypes=DTYPES + WIDE + COMPLEX)
INTEGER = dict(dtypes=(bool_, int32, uint32, int64))  # bitwise ops: integers and bool
F64 = lambda expr: ref.Quiet(ref.in_float64(expr))  # noqa: E731 - the NumPy backend's activations, in float64

# One row per op, so the catalog reads as a table:
# fmt: off
CATALOG: tuple[Op, ...] = (
    Op("relu", Kind.UNARY, "tw_relu",  # np.maximum keeps NaN
       ref.Quiet(lambda x, out=None: ref.numpy_module().maximum(x, x.dtype.type(0), out=out)),
       lambda x: x if x > 0 or math.isnan(x) else 0.0, "max(x, 0); NaN stays NaN", **T_BITS, **ACT),
    Op("leaky_relu", Kind.UNARY, "tw_leaky_relu", ref.Quiet(lambda x, s: ref.numpy_module().where(x > 0, x, x * x.dtype.type(s))),
       lambda x, s: x if x > 0 else s * x, "x if x > 0 else negative_slope * x",
       params=(Param("negative_slope", 0.01),), **T_EXACT, **ACT),
    Op("elu", Kind.UNARY, "tw_elu", F64(lambda x, a: ref.numpy_module().where(x > 0, x, a * ref.numpy_module().expm1(x))),
       lambda x, a: x if x > 0 else a * math.expm1(x), "x if x > 0 else alpha * (exp(x) - 1)",
       params=(Param("alpha", 1.0),), **T_TRANSCENDENTAL, **ACT, ulp=2, exact=ref.exact_elu),
    Op("sigmoid", Kind.UNARY, "tw_sigmoid", F64(ref.np_sigmoid), ref.sigmoid, "1 / (1 + exp(-x))", **T_TRANSCENDENTAL, **ACT,
       ulp=3, exact=ref.exact_sigmoid),
    Op("tanh", Kind.UNARY, "tw_tanh", ref.Quiet(ref_api.np_tanh),
       math.tanh, "hyperbolic tangent", **T_TRANSCENDENTAL, **ACT, ulp=2, **FLOATC),
    Op("swish", Kind.UNARY, "tw_swish", F64(lambda x: ref.np_floor_finite(x) * ref.np_sigmoid(x)),
       lambda x: ref.floor_finite(x) * ref.sigmoid(x), "x * sigmoid(x) (SiLU); swish(-inf) = -0", **T_TRANSCENDENTAL, **ACT,
       ulp=4, exact=ref.exact_swish),
    Op("gelu", Kind.UNARY, "tw_gelu", F64(ref.np_gelu), ref.gelu,
       "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the tanh form", **T_TRANSCENDENTAL, **ACT, ulp=4,
       exact=ref.exact_gelu),
    Op("mish", Kind.UNARY, "tw_mish", F64(lambda x: ref.np_floor_finite(x) * ref.numpy_module().tanh(ref.np_softplus(x))),
       lambda x: ref.floor_finite(x) * math.tanh(ref.softplus(x)), "x * tanh(softplus(x))", **T_TRANSCENDENTAL, **ACT,
       ulp=4.5, exact=ref.exact_mish),
    Op("selu", Kind.UNARY, "tw_selu",
       F64(lambda x: SELU_SCALE * ref.numpy_module().where(x > 0, x, SELU_ALPHA * ref.numpy_module().expm1(x))),
       lambda x: SELU_SCALE * (x if x > 0 else SELU_ALPHA * math.expm1(x)),
       "scale * (x if x > 0 else alpha * (exp(x) - 1)), the self-normalising constants", **T_TRANSCENDENTAL, **ACT,
       ulp=2.5, exact=ref.exact_selu),
    Op("hardswish", Kind.UNARY, "tw_hardswish",
       F64(lambda x: (lambda y: y * ref.numpy_module().clip(y + 3, 0, 6) / 6)(ref.np_floor_finite(x))),
       ref.hardswish, "x * clip(x + 3, 0, 6) / 6", **T_EXACT, **ACT, ulp=2.5, exact=ref.exact_hardswish),
    Op("clip", Kind.UNARY, "tw_clip",
       ref.Quiet(lambda x, lo, hi: ref.numpy_module().minimum(ref.numpy_module().maximum(x, x.dtype.type(lo)), x.dtype.type(hi))),
       ref.clip, "min(max(x, lo), hi); NaN stays NaN", params=(Param("lo"), Param("hi")), **T_BITS, **ACT),
    Op("scale", Kind.UNARY, "tw_scale", ref.Quiet(lambda x, s, out=None: ref.numpy_module().multiply(x, x.dtype.type(s), out=out)),
       lambda x, s: x * s, "x * s", params=(Param("s"),), **T_EXACT, **ACT),
    Op("neg", Kind.UNARY, "tw_neg", ref.Quiet(lambda x, out=None: ref.numpy_module().negative(x, out=out)),
       lambda x: -x, "-x", aliases=("negative",), **T_BITS, **NUMC),
    Op("abs", Kind.UNARY, "tw_abs", ref.Quiet(lambda x, out=None: ref.numpy_module().abs(x, out=out)), abs, "|x| (a complex number's: its magnitude, real)",
       **T_BITS, **NUMC, returns="real"),
    Op("exp", Kind.UNARY, "tw_exp", F64(lambda x: ref.numpy_module().exp(x)), ref.exp, "e^x", **T_EXP, ulp=1.5,
       exact=ref.exact_exp, **FLOATC),
    Op("log", Kind.UNARY, "tw_log", F64(lambda x: ref.numpy_module().log(x)), ref.log,
       "natural logarithm; log(0) = -inf, log(x < 0) = NaN", **T_LOG, ulp=1.5, exact=ref.exact_log, **FLOATC),
    Op("sqrt", Kind.UNARY, "tw_sqrt", ref.Quiet(lambda x, out=None: ref.numpy_module().sqrt(x, out=out)),
       ref.sqrt, "square root; sqrt(x < 0) = NaN", **T_EXACT, ulp=1, **FLOATC),
    Op("rsqrt", Kind.UNARY, "tw_rsqrt", ref.Quiet(lambda x: (1 / ref.numpy_module().sqrt(x)).astype(x.dtype, copy=False)), ref.rsqrt,
       "1 / sqrt(x); rsqrt(+-0) = +-inf, rsqrt(x < 0) = NaN", **T_EXACT, ulp=1.5),
    Op("square", Kind.UNARY, "tw_square", ref.Quiet(lambda x, out=None: ref.numpy_module().square(x, out=out)),
       lambda x: x * x, "x * x", **T_EXACT, **NUMC),
    Op("sin", Kind.UNARY, "tw_sin", ref.Quiet(lambda x, out=None: ref.numpy_module().sin(x, out=out)), ref.trig(math.sin),
       "sine (radians); our own reduction, accurate for every finite float32", **T_EXACT, cost=4, ulp=2.5, **FLOATC),
    Op("cos", Kind.UNARY, "tw_cos", ref.Quiet(lambda x, out=None: ref.numpy_module().cos(x, out=out)), ref.trig(math.cos),
       "cosine (radians); our own reduction, accurate for every finite float32", **T_EXACT, cost=4, ulp=2.5, **FLOATC),
    Op("floor", Kind.UNARY, "tw_floor", ref.Quiet(lambda x, out=None: ref.numpy_module().floor(x, out=out)),
       ref.floor, "largest integer <= x", **T_BITS, **NUM),
    Op("round", Kind.UNARY, "tw_round", ref.Quiet(lambda x, out=None: ref.numpy_module().round(x, out=out)),
       ref_api.integral(round), "the nearest integer, half to even (np.round); round(-0.5) = -0", **T_BITS, **NUM),
    Op("ceil", Kind.UNARY, "tw_ceil", ref.Quiet(lambda x, out=None: ref.numpy_module().ceil(x, out=out)),
       ref_api.integral(math.ceil), "smallest integer >= x; ceil(-0.5) = -0", **T_BITS, **NUM),
    Op("trunc", Kind.UNARY, "tw_trunc", ref.Quiet(lambda x, out=None: ref.numpy_module().trunc(x, out=out)),
       ref_api.integral(math.trunc), "x's integer part, toward 0; trunc(-0.5) = -0", **T_BITS, **NUM),
    Op("sign", Kind.UNARY, "tw_sign", ref.Quiet(lambda x, out=None: ref.numpy_module().sign(x, out=out)),
       ref_api.sign, "-1, 0 or 1 as np.sign: sign(-0) = 0, NaN stays NaN", **T_BITS, **NUMC),
    Op("log1p", Kind.UNARY, "tw_log1p", F64(lambda x: ref.numpy_module().log1p(x)), ref_api.log1p,
       "log(1 + x) without cancellation; log1p(-1) = -inf, log1p(x < -1) = NaN", **T_TRANSCENDENTAL, ulp=2, **FLOATC),
    Op("expm1", Kind.UNARY, "tw_expm1", F64(ref_api.np_expm1), ref_api.overflows(math.expm1),
       "e^x - 1 without cancellation", **T_TRANSCENDENTAL, ulp=2, **FLOATC),
    Op("log2", Kind.UNARY, "tw_log2", F64(lambda x: ref.numpy_module().log2(x)), ref_api.logs(math.log2),
       "base-2 logarithm, exact at powers of 2; log2(0) = -inf, log2(x < 0) = NaN", **T_TRANSCENDENTAL, ulp=1, **FLOATC),
    Op("log10", Kind.UNARY, "tw_log10", F64(lambda x: ref.numpy_module().log10(x)), ref_api.logs(math.log10),
       "base-10 logarithm; log10(0) = -inf, log10(x < 0) = NaN", **T_TRANSCENDENTAL, ulp=1, **FLOATC),
    Op("sinh", Kind.UNARY, "tw_sinh", F64(lambda x: ref.numpy_module().sinh(x)), ref_api.overflows(math.sinh),
       "hyperbolic sine; finite up to |x| = 89.4", **T_TRANSCENDENTAL, ulp=2.5, **FLOATC),
    Op("cosh", Kind.UNARY, "tw_cosh", F64(lambda x: ref.numpy_module().cosh(x)), ref_api.overflows(math.cosh, even=True),
       "hyperbolic cosine; finite up to |x| = 89.4", **T_TRANSCENDENTAL, ulp=2, **FLOATC),
    Op("tan", Kind.UNARY, "tw_tan", F64(lambda x: ref.numpy_module().tan(x)), ref.trig(math.tan),
       "tangent (radians); sin's and cos's reduction, accurate for every finite float32", **T_TRANSCENDENTAL, ulp=3, **FLOATC),
    Op("asin", Kind.UNARY, "tw_asin", F64(lambda x: ref.numpy_module().arcsin(x)), ref_api.within(math.asin, -1, 1),
       "inverse sine in [-pi/2, pi/2]; NaN outside [-1, 1]", **T_TRANSCENDENTAL, ulp=3, **FLOATC),
    Op("acos", Kind.UNARY, "tw_acos", F64(lambda x: ref.numpy_module().arccos(x)), ref_api.within(math.acos, -1, 1),
       "inverse cosine in [0, pi]; NaN outside [-1, 1]", **T_TRANSCENDENTAL, ulp=2, **FLOATC),
    Op("atan", Kind.UNARY, "tw_atan", F64(lambda x: ref.numpy_module().arctan(x)), math.atan,
       "inverse tangent in [-pi/2, pi/2]", **T_TRANSCENDENTAL, ulp=2.5, **FLOATC),
    Op("asinh", Kind.UNARY, "tw_asinh", F64(lambda x: ref.numpy_module().arcsinh(x)), math.asinh,
       "inverse hyperbolic sine", **T_TRANSCENDENTAL, ulp=2.5, **FLOATC),
    Op("acosh", Kind.UNARY, "tw_acosh", F64(lambda x: ref.numpy_module().arccosh(x)),
       ref_api.within(math.acosh, 1, math.inf), "inverse hyperbolic cosine; NaN below 1", **T_TRANSCENDENTAL, ulp=3, **FLOATC),
    Op("atanh", Kind.UNARY, "tw_atanh", F64(lambda x: ref.numpy_module().arctanh(x)), ref_api.atanh,
       "inverse hyperbolic tangent; atanh(+-1) = +-inf, NaN outside [-1, 1]", **T_TRANSCENDENTAL, ulp=3, **FLOATC),
    Op("reciprocal", Kind.UNARY, "tw_reciprocal", ref.Quiet(lambda x, out=None: ref.numpy_module().reciprocal(x, out=out)),
       lambda x: ref.div(1.0, x), "1 / x; reciprocal(+-0) = +-inf", **T_FLUSH, ulp=2.5, **FLOATC),
    Op("positive", Kind.UNARY, "tw_positive", ref.Quiet(lambda x, out=None: ref.numpy_module().positive(x, out=out)),
       lambda x: x, "x itself (+x)", **T_BITS, **NUMC),
    Op("real", Kind.UNARY, "tw_positive", ref.Quiet(lambda x: ref.numpy_module().real(x).copy()), ref_api.real,
       "the real component (a real number: itself)", **T_BITS, **NUMC, returns="real"),
    Op("imag", Kind.UNARY, "tw_imag", ref.Quiet(lambda x: ref.numpy_module().imag(x).copy()), ref_api.imag,
       "the imaginary component (a real number: 0)", **T_BITS, **NUMC, returns="real"),
    Op("conj", Kind.UNARY, "tw_positive", ref.Quiet(lambda x, out=None: ref.numpy_module().conjugate(x, out=out)),
       ref_api.conj, "the complex conjugate (a real number: itself)", **T_BITS, **NUMC),
    Op("copy", Kind.UNARY, "tw_copy", ref.Quiet(lambda x: x.copy()), lambda x: x,
       "x itself, written to a buffer of its own (the tensor layer's contiguous copy of a view)", **T_BITS, **ANY),
    Op("add", Kind.BINARY, "tw_add", ref.Quiet(lambda a, b, out=None: ref.numpy_module().add(a, b, out=out)),
       lambda a, b: a + b, "a + b", aliases=("vec_add",), **T_EXACT, **NUMC),
    Op("sub", Kind.BINARY, "tw_sub", ref.Quiet(lambda a, b, out=None: ref.numpy_module().subtract(a, b, out=out)),
       lambda a, b: a - b, "a - b", aliases=("subtract",), **T_EXACT, **NUMC),
    Op("mul", Kind.BINARY, "tw_mul", ref.Quiet(lambda a, b, out=None: ref.numpy_module().multiply(a, b, out=out)),
       lambda a, b: a * b, "a * b", aliases=("multiply",), **T_EXACT, **NUMC),
    Op("div", Kind.BINARY, "tw_div", ref.Quiet(lambda a, b, out=None: ref.numpy_module().divide(a, b, out=out)),
       ref.div, "a / b", aliases=("divide",), **T_FLUSH, ulp=2.5, **FLOATC),
    Op("atan2", Kind.BINARY, "tw_atan2", F64(lambda a, b: ref.numpy_module().arctan2(a, b)), math.atan2,
       "the angle of the point (b, a) in [-pi, pi], as C99 atan2(a, b): signed zeros and infinities give its "
       "special values", **T_TRANSCENDENTAL, ulp=3),
    Op("hypot", Kind.BINARY, "tw_hypot", F64(lambda a, b: ref.numpy_module().hypot(a, b)), math.hypot,
       "sqrt(a^2 + b^2) without overflow or underflow; inf if either is +-inf (even with a NaN)", **T_EXACT,
       cost=4, ulp=2),
    Op("logaddexp", Kind.BINARY, "tw_logaddexp", F64(lambda a, b: ref.numpy_module().logaddexp(a, b)), ref_api.logaddexp,
       "log(e^a + e^b) without overflow; near a result of 0 its error is absolute (~2^-24), as NumPy's float32 one",
       **T_TRANSCENDENTAL, ulp=400),
    Op("copysign", Kind.BINARY, "tw_copysign",
       ref.Quiet(lambda a, b, out=None: ref.numpy_module().copysign(a, b, out=out)), math.copysign,
       "|a| with the sign of b (its sign bit: NaN's and zero's too)", **T_BITS),
    Op("nextafter", Kind.BINARY, "tw_nextafter",
       ref.Quiet(lambda a, b, out=None: ref.numpy_module().nextafter(a, b, out=out)), ref_api.nextafter32,
       "the next value of its dtype after a toward b (np.nextafter); b where a == b", **T_BITS, widens=False),
    Op("remainder", Kind.BINARY, "tw_remainder",
       ref.Quiet(lambda a, b, out=None: ref.numpy_module().remainder(a, b, out=out)), ref_api.remainder,
       "a - floor(a / b) b with the sign of b, as np.remainder and Python's %: an exact fmod, moved by b",
       **T_EXACT, cost=8, **NUM),
    Op("floor_divide", Kind.BINARY, "tw_floor_divide",
       ref.Quiet(ref_api.np_floor_divide), ref_api.floor_divide,
       "floor(a / b) as np.floor_divide and Python's //: (a - fmod(a, b)) / b, floored; the standard's +-inf // "
       "finite = +-inf, finite // +-inf = a zero signed as a / b", **T_EXACT, cost=8, ulp=1, **NUM),
    Op("pow", Kind.BINARY, "tw_pow", ref.Quiet(ref.np_pow), ref.pow,
       "a ** b as np.power: pow(a, 0) = 1 and pow(1, b) = 1 even for NaN; a negative a needs an integer b "
       "(else NaN); 0 ** negative = inf; integers exact (wrapping), a negative b: 1 / a ** -b toward zero",
       **T_FLUSH, cost=8, ulp=3, **NUMC),
    Op("maximum", Kind.BINARY, "tw_max", ref.Quiet(lambda a, b, out=None: ref.numpy_module().maximum(a, b, out=out)),
       ref.nan_or(max), "the larger of a and b; NaN if either is NaN", **T_BITS, **NUM),
    Op("minimum", Kind.BINARY, "tw_min", ref.Quiet(lambda a, b, out=None: ref.numpy_module().minimum(a, b, out=out)),
       ref.nan_or(min), "the smaller of a and b; NaN if either is NaN", **T_BITS, **NUM),
    Op("lt", Kind.BINARY, "tw_lt", ref.Quiet(lambda a, b: a < b), lambda a, b: a < b,
       "a < b (NaN: False)", aliases=("less",), **T_BITS, **COMPARE),
    Op("le", Kind.BINARY, "tw_le", ref.Quiet(lambda a, b: a <= b), lambda a, b: a <= b,
       "a <= b (NaN: False)", aliases=("less_equal",), **T_BITS, **COMPARE),
    Op("gt", Kind.BINARY, "tw_gt", ref.Quiet(lambda a, b: a > b), lambda a, b: a > b,
       "a > b (NaN: False)", aliases=("greater",), **T_BITS, **COMPARE),
    Op("ge", Kind.BINARY, "tw_ge", ref.Quiet(lambda a, b: a >= b), lambda a, b: a >= b,
       "a >= b (NaN: False)", aliases=("greater_equal",), **T_BITS, **COMPARE),
    Op("eq", Kind.BINARY, "tw_eq", ref.Quiet(lambda a, b: a == b), lambda a, b: a == b,
       "a == b (NaN: False)", aliases=("equal",), **T_BITS, **EQUALITY),
    Op("ne", Kind.BINARY, "tw_ne", ref.Quiet(lambda a, b: a != b), lambda a, b: a != b,
       "a != b (NaN: True)", aliases=("not_equal",), **T_BITS, **EQUALITY),
    Op("where", Kind.TERNARY, "tw_where", ref.Quiet(ref.np_where),
       lambda c, a, b: a if c != 0 else b, "a where cond, else b (cond is read as bool: a nonzero or NaN number is True)", **T_BITS, **ANY),
    Op("astype", Kind.UNARY, "tw_astype", ref.Quiet(lambda x: x), lambda x: x,
       "x converted to dtype=: float to int truncates toward zero (saturating; NaN: 0), to bool is x != 0 "
       "(NaN: True), int to int wraps", **T_BITS, **ANY, returns="target",
       options=("dtype",)),
    Op("logical_and", Kind.BINARY, "tw_logical_and", ref.Quiet(lambda a, b: ref.numpy_module().logical_and(a, b)),
       lambda a, b: bool(a and b), "a and b", **T_BITS, dtypes=(bool_,)),
    Op("logical_or", Kind.BINARY, "tw_logical_or", ref.Quiet(lambda a, b: ref.numpy_module().logical_or(a, b)),
       lambda a, b: bool(a or b), "a or b", **T_BITS, dtypes=(bool_,)),
    Op("logical_xor", Kind.BINARY, "tw_logical_xor", ref.Quiet(lambda a, b: ref.numpy_module().logical_xor(a, b)),
       lambda a, b: bool(a) != bool(b), "a xor b", **T_BITS, dtypes=(bool_,)),
    Op("logical_not", Kind.UNARY, "tw_logical_not", ref.Quiet(lambda x: ref.numpy_module().logical_not(x)),
       lambda x: not x, "not x", **T_BITS, dtypes=(bool_,)),
    Op("bitwise_and", Kind.BINARY, "tw_bitwise_and", ref.Quiet(lambda a, b: ref.numpy_module().bitwise_and(a, b)),
       lambda a, b: a & b, "a & b", **T_BITS, **INTEGER),
    Op("bitwise_or", Kind.BINARY, "tw_bitwise_or", ref.Quiet(lambda a, b: ref.numpy_module().bitwise_or(a, b)),
       lambda a, b: a | b, "a | b", **T_BITS, **INTEGER),
    Op("bitwise_xor", Kind.BINARY, "tw_bitwise_xor", ref.Quiet(lambda a, b: ref.numpy_module().bitwise_xor(a, b)),
       lambda a, b: a ^ b, "a ^ b", **T_BITS, **INTEGER),
    Op("bitwise_invert", Kind.UNARY, "tw_bitwise_invert", ref.Quiet(lambda x: ref.numpy_module().invert(x)),
       lambda x: not x if isinstance(x, bool) else ~x, "~x (not x for bool)", **T_BITS, **INTEGER),
    Op("bitwise_left_shift", Kind.BINARY, "tw_bitwise_left_shift", ref.Quiet(lambda a, b: ref.numpy_module().left_shift(a, b)), lambda a, b: a << b if 0 <= b < 64 else 0,
       "a << b; 0 for b >= 32 or b < 0", **T_BITS, dtypes=(int32, uint32, int64)),
    Op("bitwise_right_shift", Kind.BINARY, "tw_bitwise_right_shift", ref.Quiet(lambda a, b: ref.numpy_module().right_shift(a, b)), lambda a, b: a >> b if b >= 0 else -int(a < 0),
       "a >> b, arithmetic for int32; b >= 32 or b < 0 shifts every bit out", **T_BITS,
       dtypes=(int32, uint32, int64)),
    Op("isnan", Kind.UNARY, "tw_isnan_of", ref.Quiet(lambda x: ref.numpy_module().isnan(x)), math.isnan, "x is NaN",
       **T_BITS, returns="bool", **FLOATC),
    Op("isinf", Kind.UNARY, "tw_isinf_of", ref.Quiet(lambda x: ref.numpy_module().isinf(x)), math.isinf, "x is +-inf",
       **T_BITS, returns="bool", **FLOATC),
    Op("isfinite", Kind.UNARY, "tw_isfinite_of", ref.Quiet(lambda x: ref.numpy_module().isfinite(x)), math.isfinite,
       "x is neither NaN nor +-inf", **T_BITS, returns="bool", **FLOATC),
    Op("signbit", Kind.UNARY, "tw_signbit", ref.Quiet(lambda x: ref.numpy_module().signbit(x)),
       lambda x: math.copysign(1.0, x) < 0, "the sign bit of x is set (-0.0 and -NaN too)", **T_BITS, returns="bool"),
    Op("dot", Kind.REDUCE, "tw_mul(x, y)",
       ref.Quiet(ref.np_dot),
       lambda a, b: ref.total(x * y for x, y in zip(a, b)), "sum(a * b)", input_names=("a", "b"), **T_REDUCE),
    Op("sum", Kind.REDUCE, "x", ref.Quiet(ref.np_sum), ref.total, "sum of all elements", **T_REDUCE, **NUMC),
    Op("max", Kind.REDUCE, "x", ref.Quiet(lambda x, axis=None: ref.numpy_module().max(x, axis=axis)), ref.extreme(max), "largest element; NaN if any",
       combine="tw_max", identity="tw_neg_inf()", empty=False, **T_BITS, **ALL),
    Op("min", Kind.REDUCE, "x", ref.Quiet(lambda x, axis=None: ref.numpy_module().min(x, axis=axis)), ref.extreme(min), "smallest element; NaN if any",
       combine="tw_min", identity="tw_inf()", empty=False, **T_BITS, **ALL),
    Op("prod", Kind.REDUCE, "x", ref.Quiet(lambda x, axis=None: ref.numpy_module().prod(x, axis=axis, dtype=x.dtype)),
       ref.product, "product of all elements", combine="tw_mul", identity="1.0", **T_PROD, **NUMC),
    Op("norm_l1", Kind.REDUCE, "abs(x)", ref.Quiet(lambda x, axis=None: ref.np_sum(ref.numpy_module().abs(x), axis)),
       lambda xs: ref.total(abs(v) for v in xs), "sum(|x|)", **T_REDUCE),
    Op("norm_l2", Kind.REDUCE, "x * x", ref.Quiet(lambda x, axis=None: ref.numpy_module().sqrt(ref.np_sum(x * x, axis))),
       lambda xs: math.sqrt(ref.total(v * v for v in xs)), "sqrt(sum(x^2))", finish="sqrt", **T_REDUCE),
    Op("softmax", Kind.SOFTMAX, "softmax", ref.Quiet(ref.np_softmax), ref.softmax_row,
       "exp(x - max) / sum(exp(x - max)) along the last axis", rtol=1e-5, atol=1e-7),
    Op("log_softmax", Kind.SOFTMAX, "log_softmax", ref.Quiet(lambda x: ref.np_softmax(x, log=True)),
       lambda row: ref.softmax_row(row, log=True), "x - max - log(sum(exp(x - max))) along the last axis",
       rtol=1e-5, atol=1e-5),
    Op("cumulative_sum", Kind.SCAN, "x", ref.Quiet(lambda x, axis, dtype: ref.numpy_module().cumsum(x, axis, dtype)),
       ref.running(lambda a, b: a + b), "running sum of all of it as one row (a tensor's: along `axis`)", **T_REDUCE, **NUM),
    Op("cumulative_prod", Kind.SCAN, "x", ref.Quiet(lambda x, axis, dtype: ref.numpy_module().cumprod(x, axis, dtype)),
       ref.running(lambda a, b: a * b), "running product of all of it as one row (a tensor's: along `axis`)", combine="tw_mul",
       identity="1.0", **T_PROD, **NUM),
    Op("matmul", Kind.MATMUL, "matmul", ref.Quiet(lambda a, b: a @ b), ref.matmul_ref,
       "(M, K) @ (K, N); integers exact (wrapping)", rtol=1e-4, atol=1e-5, options=("m", "k", "n"), **NUMC),
    Op("take", Kind.GATHER, "tw_take", lambda x, at: x[at], lambda xs, at: xs[at],
       "x's elements at `indices` along axis= (default 0): indices of the output's shape "
       "x.shape[:axis] + J + x.shape[axis+1:] (Tensor.take takes NumPy's); a negative index counts from the "
       "end, one out of range is clamped into it (indices from the host are checked first)",
       options=("axis",), dtypes=(int32, uint32, int64), returns="data", **T_BITS),
    Op("scatter_add", Kind.SCATTER, "tw_scatter_add", ref.Quiet(lambda out, at, v: ref.numpy_module().add.at(out, at, v)),
       lambda a, b: a + b, "x with `values` added at `indices` along axis= (take's indices; np.add.at: "
       "duplicates all add, float32 in any order)", options=("axis",), dtypes=NUMBERS,
       rtol=1e-5, atol=2e-5),  # atol: of |x| + the |values| added there (k adds in any order round k times)
    Op("convolve2d", Kind.CONV2D, "conv2d", ref.Quiet(ref.np_conv2d), ref.conv2d_ref,
       'valid 2-D convolution without kernel flip (scipy.signal.correlate2d(img, k, "valid"))',
       rtol=1e-4, atol=1e-5),
    Op("sort", Kind.SORT, "sort", sk.np_sort, sk.py_sort,
       "x sorted along the last axis, stable; NaN last (first where descending=True), -0.0 equal to 0.0",
       options=("descending",), **T_BITS, **ALL),
    Op("argsort", Kind.SORT, "sort", sk.np_argsort, sk.py_argsort,
       "the int32 indices that sort x along the last axis, stable (ties in input order); the order of sort",
       options=("descending",), **T_BITS, **ALL, returns="index"),
    Op("searchsorted", Kind.SEARCH, "searchsorted", sk.np_searchsorted, sk.py_searchsorted,
       'int32 insertion points of x2 in the sorted 1-D x1 (side="left": before equal values, "right": after), '
       "a binary search per element; NaN sorts last", options=("side",), **T_BITS, **ALL, returns="index"),
    Op("attention", Kind.ATTENTION, "attention", ak.np_attention, ak.py_attention,
       "softmax(q @ k^T * scale) @ v over the last two axes, fused (no L x S scores in memory): q (..., L, E), "
       "k (..., S, E), v (..., S, Ev); scale= (default 1/sqrt(E)), causal=True masks keys j > query i",
       options=("scale", "causal"), rtol=1e-4, atol=1e-5),
    Op("attention_masked", Kind.ATTENTION, "attention", ak.np_attention, ak.py_attention,
       "attention with a mask broadcast to (..., L, S): a score where it is 0 is -inf (not attended); a row "
       "with none attended is NaN", options=("scale", "causal"), input_names=("q", "k", "v", "mask"),
       rtol=1e-4, atol=1e-5),
)
# fmt: on

# The generators: rows of kind GENERATOR, with no inputs (tw.random makes them, random.py; no device or
# tensor methods). Their first six parameters are a Threefry key's two words and a counter offset as
# 16-bit halves (prng.key_params); element i draws from the counter offset + i (docs/random.md).
# A table of their own: CATALOG lists the ops called on arrays (methods, the accuracy sweep, the README).
KEY = tuple(Param(name) for name in prng.KEY_PARAMS)
T_RANDOM = dict(rtol=1e-6, atol=0.0, ulp=0, dtypes=(float32,))
# fmt: off
GENERATORS: tuple[Op, ...] = (
    Op("random_uniform", Kind.GENERATOR, "tw_random_uniform", prng.np_uniform, prng.py_uniform,
       "uniform float32 in [minval, maxval): max(minval, u * (maxval - minval) + minval), u from the top 23 bits",
       params=(*KEY, Param("minval", 0.0), Param("maxval", 1.0)), cost=8, **T_RANDOM),
    Op("random_normal", Kind.GENERATOR, "tw_random_normal", prng.np_normal, prng.py_normal,
       "standard normal float32 by Box-Muller on the counter's two words (|z| <= 5.64)",
       params=KEY, cost=16, rtol=2e-6, atol=2e-7, ulp=4, dtypes=(float32,)),
    Op("random_bernoulli", Kind.GENERATOR, "tw_random_bernoulli", prng.np_bernoulli, prng.py_bernoulli,
       "1.0 where u < p, else 0.0 (u uniform in [0, 1))", params=(*KEY, Param("p", 0.5)), cost=8, **T_RANDOM),
    Op("index", Kind.GENERATOR, "tw_index", prng.np_index, prng.py_index,
       "the element's index as int32: its flat (row-major) index, or sum(k_d * strides_d) of its position k with "
       "the option strides= (an iota broadcast, stride 0, without a view): arange, linspace, eye, tril, triu",
       options=("strides",), **T_RANDOM | dict(dtypes=(int32,))),
)
# fmt: on

# The transforms: rows of kind FFT (tw.fft makes them, fft.py; no methods), NumPy's pocketfft on the NumPy
# backend, the only one that holds complex numbers; their options and references in fft_kinds.py.
FFT_OPTIONS = ("axes", "sizes", "norm")
# fmt: off
TRANSFORMS: tuple[Op, ...] = (
    Op("dft", Kind.FFT, "", fk.np_dft, fk.py_dft, "the discrete Fourier transform along axes, or its inverse: "
       "complex to complex", options=(*FFT_OPTIONS, "inverse"), dtypes=COMPLEX, rtol=1e-5, atol=1e-6),
    Op("rdft", Kind.FFT, "", fk.np_rdft, fk.py_rdft, "the transform of real numbers along axes: the last axis's "
       "non-negative frequencies", options=FFT_OPTIONS, dtypes=(float32, float64), returns="complex",
       rtol=1e-5, atol=1e-6),
    Op("irdft", Kind.FFT, "", fk.np_irdft, fk.py_irdft, "the inverse of rdft: a Hermitian half spectrum to real "
       "numbers", options=FFT_OPTIONS, dtypes=COMPLEX, returns="real", rtol=1e-5, atol=1e-6),
)
# fmt: on

BY_NAME: dict[str, Op] = (
    {op.name: op for op in CATALOG}
    | {a: op for op in CATALOG for a in op.aliases}
    | {op.name: op for op in GENERATORS + TRANSFORMS}
)


def get(name: str) -> Op:
    """The catalog row of an op, by name or alias."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise TruenoValueError(f"unknown op {name!r}; known ops: {', '.join(sorted(BY_NAME))}") from None
