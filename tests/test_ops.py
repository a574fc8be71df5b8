"""Every op of the catalog on every backend against its reference, with the catalog's tolerances.

Parametrized over `ops.CATALOG` (never a hand list); inputs, references and tolerances come from
_cases.py, which imports no NumPy, so these bodies also run inside Pyodide.
"""

from __future__ import annotations

import array
import math

import pytest
from _cases import (
    F32_MAX,
    F32_OVERFLOW,
    FLOAT_CATALOG,
    HAVE_NUMPY,
    INF,
    NAMES,
    NAN,
    Case,
    assert_matches,
    conv_case,
    f32,
    flat,
    has_shape,
    magnitudes,
    matmul_case,
    mismatches,
    params_for,
    reference,
    reference_numpy,
    reference_python,
    run,
    softmax_case,
    special_cases,
    sweep_case,
    uniform,
)

import trueno_web as tw
from trueno_web import ops

SIZES = (1, 3, 4, 255, 256, 257, 4097, 1 << 17)
op_params = pytest.mark.parametrize("op", FLOAT_CATALOG, ids=lambda op: op.name)


# ---------------------------------------------------------------- every op, awkward sizes


@op_params
@pytest.mark.parametrize("n", SIZES, ids=lambda n: f"n{n}")
def test_op_matches_reference(dev, op, n):
    case = sweep_case(op, n, seed=n)
    assert_matches(case, run(case.call(dev)))


@pytest.mark.parametrize("name,op", NAMES, ids=[n for n, _ in NAMES])
def test_every_name_and_alias_runs(dev, name, op):
    case = sweep_case(op, 33, seed=7)
    assert_matches(case, run(case.call(dev, name)))


@pytest.mark.parametrize("op", [op for op in FLOAT_CATALOG if op.params], ids=lambda op: op.name)
def test_scalar_params_positional_and_keyword(dev, op):
    """Non-default parameter values reach the kernel, given by keyword or by position."""
    values = {p.name: v for p, v in zip(op.params, (0.3, 1.75, 2.5))}
    x = uniform(300, seed=3)
    case = Case(op, [(x, (300,))], params_for(op, **values))
    assert_matches(case, run(getattr(dev, op.name)(x, **values)))
    assert_matches(case, run(getattr(dev, op.name)(x, *values.values())))


@pytest.mark.parametrize("s", [NAN, INF, -INF, 0.0, -0.0, 3e38, 1e39, -1e39], ids=repr)
def test_scale_by_special_scalars(dev, s):
    """Scalars travel as float32 data: NaN, inf and values past float32's range (which round to
    +-inf) are valid factors and give what float32 arithmetic gives."""
    x = f32([1.0, -2.0, 0.0, 3e38, NAN])
    case = Case(ops.get("scale"), [(x, (5,))], {"s": f32([s])[0]})  # 0 * inf is NaN: the factor is inf
    assert_matches(case, run(dev.scale(x, s)))


def test_scalars_do_not_compile_new_pipelines(gpu):
    x = uniform(64, seed=1)
    run(gpu.leaky_relu(x, 0.1))
    before = gpu.stats.pipelines_compiled
    for slope in (0.2, NAN, INF, -3.0, 1e30):
        run(gpu.leaky_relu(x, slope))
    assert gpu.stats.pipelines_compiled == before


# ---------------------------------------------------------------- special values


@op_params
def test_special_values(dev, op):
    """NaN, +-Inf, -0.0, exp-overflowing and float32-extreme inputs against the reference, NaN == NaN.

    The reference is float64 rounded to float32; the sign of zero is not compared here.
    Documented special-value behaviour (all backends compute in float32):
      swish, gelu, mish, hardswish of -inf are -0.0 (their limit, not NaN), as in the catalog's
        references (test_minus_inf_limit_is_negative_zero checks the sign);
      norm_l2 may be +inf once some |x| > 1.8e19 (x * x overflows; no rescaling; webgpu, numpy);
        (_cases.F32_OVERFLOW holds it; test_documented_float32_overflows pins it);
      exp-based ops (sigmoid, elu, selu, softplus inside mish) give 0 where float64 gives a float32
        subnormal (exp overflows at |x| > 88.7 in float32), inside the catalog's atol;
      exp, div and pow may give 0 where the reference is a float32 subnormal (exp(-88.75), 1 / F32_MAX):
        a GPU may flush subnormal results (SwiftShader does); their atol is 1.2e-38, the smallest normal;
      prod's partial products may leave float32's range (a factor F32_MAX): _cases.F32_ORDER decides;
      webgpu: a - a of ONE value is 0 even for NaN/inf (test_sub_of_a_value_and_itself).
    """
    problems = []
    for case in special_cases(op):
        try:
            got = run(case.call(dev))
        except Exception as exc:
            problems.append(f"{case!r} raised {exc!r}")
            continue
        problems += mismatches(case, got)
    assert not problems, f"{op.name} on {dev.backend}: {len(problems)} problems:\n  " + "\n  ".join(problems[:12])


#: float32 arguments whose argument reduction is hardest: the closest to a multiple of pi/2 of all float32
#: (cos is -1.6e-9 there) and of those below 6434 (wasm-simd reduces those differently), the ends of that
#: range, and float32's extremes
HARD_TRIG = (
    7.729178919452902e28,
    252.89820861816406,
    6433.99951171875,
    6434.00048828125,
    0.7853981852531433,
    0.785398125648498,
    1e30,
    F32_MAX,
)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_relative_accuracy_where_the_reduction_is_hardest(dev, name):
    """Relative accuracy (the catalog's rtol, no atol) even where sin or cos is tiny at a huge argument:
    the reduction is exact for every finite float32, not just up to some |x|."""
    x = f32([v * s for v in HARD_TRIG for s in (1.0, -1.0)])
    assert_matches(Case(ops.get(name), [(x, (len(x),))]), run(getattr(dev, name)(x)))


@pytest.mark.parametrize("name", ["swish", "gelu", "mish", "hardswish"])
def test_minus_inf_limit_is_negative_zero(dev, name):
    got = flat(run(getattr(dev, name)(f32([-INF]))))[0]
    assert got == 0.0 and math.copysign(1.0, got) == -1.0, f"{name}(-inf) = {got!r}, documented as -0.0"


def test_documented_float32_overflows(dev):
    """norm_l2 with some |x| > 1.8e19 may overflow to +inf (it does on webgpu and numpy, whose formulas run
    in float32); a backend may also give the true value. hardswish does not overflow (x past 3 is x)."""
    big = f32([F32_MAX, 1e38, -F32_MAX])
    assert flat(run(dev.hardswish(big))) == [F32_MAX, float(f32([1e38])[0]), -0.0]
    got = run(dev.norm_l2(f32([1e20, 1.0])))
    assert got == INF or got == pytest.approx(1e20, rel=1e-6)
    assert run(dev.norm_l2(f32([1e19, 1e19]))) == pytest.approx(math.sqrt(2) * 1e19, rel=1e-5)
    assert set(F32_OVERFLOW) <= {op.name for op in ops.CATALOG}
    if dev.backend in ("webgpu", "numpy"):
        assert run(dev.norm_l2(f32([1e20, 1.0]))) == INF


def test_sub_of_a_value_and_itself(dev):
    """Documented difference: a - a of ONE value (the same BufferId on both sides, or equal
    expressions inside one fused kernel) may be 0 on webgpu even where a is NaN or +-inf: shader
    compilers fold a - a to 0 (WGSL lets an implementation assume no NaN/Inf; lavapipe does fold).
    Two uploads of the same data are two values and give NaN, as do the CPU backends."""
    x = f32([NAN, INF, -INF, 1.5, -0.0])
    b = dev.batch()
    a = b.upload(x)
    same = b.sub(a, a)
    run(b.execute())
    got = flat(run(b.read(same)))
    assert got[3:] == [0.0, 0.0]
    if dev.backend == "webgpu":
        assert all(v == 0.0 or math.isnan(v) for v in got[:3]), got
    else:
        assert all(math.isnan(v) for v in got[:3]), got
    assert all(math.isnan(v) for v in flat(run(dev.sub(x, x)))[:3]), "separate uploads keep NaN"


def test_softmax_of_huge_spread_is_finite_and_right(dev):
    x = f32([1000.0, 999.0, -1000.0])
    e = math.exp(-1.0)
    got = flat(run(dev.softmax(x)))
    assert all(math.isfinite(v) for v in got), got
    assert got == pytest.approx([1 / (1 + e), e / (1 + e), 0.0], rel=1e-5, abs=1e-7)
    logs = flat(run(dev.log_softmax(x)))
    lse = math.log1p(e)
    assert logs == pytest.approx([-lse, -1 - lse, -2000 - lse], rel=1e-5, abs=1e-5)


@pytest.mark.parametrize("name", ["dot", "sum"])
def test_million_element_reductions_within_1e4_of_float64(dev, name):
    n = 10**6
    case = Case(ops.get(name), [(uniform(n, 0.0, 1.0, seed=s), (n,)) for s in range(ops.get(name).arity)])
    got = run(case.call(dev))
    want = float(reference(case)[0])
    assert abs(got - want) <= 1e-4 * abs(want), f"{name}: got {got!r}, float64 {want!r}"


# ---------------------------------------------------------------- shapes: matmul, conv, softmax 2-D, empty


@pytest.mark.parametrize(
    "m,k,n",
    [(1, 1, 1), (17, 33, 9), (256, 256, 256), (513, 257, 129), (1, 300, 1), (70, 1, 65), (64, 64, 64), (65, 63, 66)],
    ids=lambda v: str(v),
)
def test_matmul_shapes(dev, m, k, n):
    case = matmul_case(m, k, n, seed=m + k + n)
    assert_matches(case, run(case.call(dev)))


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (17, 33, 9), (5, 7, 3)], ids=str)
def test_matmul_flat_inputs_with_mkn(dev, m, k, n):
    case = matmul_case(m, k, n, seed=11, flat=True)
    got = run(case.call(dev))
    assert has_shape(got, (m, n))
    assert_matches(case, got)
    two_d = matmul_case(m, k, n, seed=11)
    assert flat(got) == flat(run(two_d.call(dev)))


@pytest.mark.parametrize(
    "h,w,kh,kw",
    [
        (1, 1, 1, 1),
        (7, 5, 1, 1),
        (6, 4, 6, 4),
        (37, 53, 5, 3),
        (53, 37, 3, 5),
        (1, 40, 1, 7),
        (40, 1, 7, 1),
        (20, 300, 2, 9),
    ],
    ids=str,
)
def test_convolve2d_shapes(dev, h, w, kh, kw):
    case = conv_case(h, w, kh, kw, seed=h * w)
    assert_matches(case, run(case.call(dev)))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize(
    "rows,cols", [(1, 1), (3, 5), (1, 257), (7, 256), (9, 1000), (257, 3), (600, 1), (2, 4097)], ids=lambda v: str(v)
)
def test_softmax_2d(dev, name, rows, cols):
    case = softmax_case(name, rows, cols, seed=rows * cols)
    assert_matches(case, run(case.call(dev)))


def _empty_cases(op):
    """(case, raises) pairs of size-0 inputs: allowed where the op has a value for them."""
    e = f32([])
    if op.elementwise:
        return [(Case(op, [(e, (0,))] * op.arity, params_for(op)), False)]
    if op.kind == "reduce":
        return [(Case(op, [(e, (0,))] * op.arity), op.name in ("max", "min"))]
    if op.kind in ("softmax", "scan"):
        return [(Case(op, [(e, s)]), False) for s in ((0,), (3, 0), (0, 5))]
    if op.kind == "sort":
        return [(Case(op, [(e, s)]), False) for s in ((0,), (3, 0), (0, 5))]
    if op.kind == "search":
        return [
            (Case(op, [(e, (0,)), (f32([1.0, -2.0]), (2,))]), False),
            (Case(op, [(f32([1.0]), (1,)), (e, (0, 3))]), False),
        ]
    if op.kind == "matmul":
        return [
            (Case(op, [(e, (0, 3)), (f32([1.0] * 6), (3, 2))]), False),
            (Case(op, [(e, (2, 0)), (e, (0, 2))]), False),
            (Case(op, [(f32([1.0] * 6), (2, 3)), (e, (3, 0))]), False),
            (Case(op, [(e, (0,)), (e, (0,))], options={"m": 0, "k": 5, "n": 0}), False),
        ]
    if op.kind == "attention":  # no queries, no batch or Ev = 0: empty; no keys or E = 0: no value
        mask = [(f32([1.0] * 3), (1, 3))] if op.arity == 4 else []
        q, k, v = (f32([1.0] * 4), (2, 2)), (f32([1.0] * 6), (3, 2)), (f32([1.0] * 6), (3, 2))
        return [
            (Case(op, [(e, (0, 2)), k, v, *mask]), False),
            (Case(op, [(e, (0, 2, 2)), k, v, *mask]), False),
            (Case(op, [q, k, (e, (3, 0)), *mask]), False),
            (Case(op, [q, (e, (0, 2)), (e, (0, 2)), *([(e, (1, 0))] if mask else [])]), True),
            (Case(op, [(e, (2, 0)), (e, (3, 0)), v, *mask]), True),
        ]
    if op.kind == "scatter":  # no values: x itself; an empty x has nothing to add into
        none = array.array("i")
        return [
            (Case(op, [(f32([1.0, -0.0]), (2,)), (none, (0,)), (e, (0,))]), False),
            (Case(op, [(e, (0,)), (none, (0,)), (e, (0,))]), False),
            (Case(op, [(e, (0,)), (array.array("i", [0]), (1,)), (f32([1.0]), (1,))]), True),
        ]
    return [
        (Case(op, [(e, (0, 3)), (f32([1.0]), (1, 1))]), True),
        (Case(op, [(f32([1.0]), (1, 1)), (e, (0, 0))]), True),
    ]


@op_params
def test_empty_inputs(dev, op):
    """Size 0: elementwise -> empty, sum/dot/norms -> 0, softmax, scans and matmul keep their shapes
    (matmul with k = 0 is all zeros); max/min of nothing and an empty convolution raise ValueError."""
    for case, raises in _empty_cases(op):
        if raises:
            with pytest.raises(tw.TruenoValueError):
                run(case.call(dev))
            continue
        got = run(case.call(dev))
        assert has_shape(got, case.out_shape(), case.out_dtype()), case
        assert not mismatches(case, got), case


# ---------------------------------------------------------------- known values (no reference involved)

E = math.e
GELU_1 = 0.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * (1 + 0.044715)))
EYE2 = [[1.0, 0.0], [0.0, 1.0]]
KNOWN = {
    # name: [(args, kwargs, expected flat values)]
    "relu": [(([-1.0, 0.0, 2.5, -0.0, -1e30],), {}, [0.0, 0.0, 2.5, 0.0, 0.0])],
    "leaky_relu": [(([-2.0, 3.0],), {}, [-0.02, 3.0]), (([-2.0, 3.0],), {"negative_slope": 0.5}, [-1.0, 3.0])],
    "elu": [(([0.0, 2.0, -INF],), {}, [0.0, 2.0, -1.0]), (([-INF, -1.0],), {"alpha": 2.0}, [-2.0, 2 * (1 / E - 1)])],
    "sigmoid": [(([0.0, INF, -INF, 1.0],), {}, [0.5, 1.0, 0.0, 1 / (1 + 1 / E)])],
    "tanh": [(([0.0, INF, -INF, 1.0, 20.0],), {}, [0.0, 1.0, -1.0, (E * E - 1) / (E * E + 1), 1.0])],
    "swish": [(([0.0, 1.0, INF],), {}, [0.0, 1 / (1 + 1 / E), INF])],
    "gelu": [(([0.0, 1.0, INF, 50.0],), {}, [0.0, GELU_1, INF, 50.0])],
    "mish": [(([0.0, 1.0, INF],), {}, [0.0, math.tanh(math.log(1 + E)), INF])],
    "selu": [(([0.0, 1.0, -INF],), {}, [0.0, 1.0507009873554805, -1.0507009873554805 * 1.6732632423543772])],
    "hardswish": [(([-4.0, -3.0, 0.0, 1.0, 3.0, 5.0],), {}, [0.0, 0.0, 0.0, 4 / 6, 3.0, 5.0])],
    "clip": [(([-2.0, 0.5, 3.0, -INF, INF],), {"lo": -1.0, "hi": 1.0}, [-1.0, 0.5, 1.0, -1.0, 1.0])],
    "scale": [(([1.0, -2.0, 0.0],), {"s": 3.0}, [3.0, -6.0, 0.0])],
    "neg": [(([1.5, -2.0, 0.0, INF],), {}, [-1.5, 2.0, -0.0, -INF])],
    "abs": [(([-1.5, 2.0, -0.0, -INF],), {}, [1.5, 2.0, 0.0, INF])],
    "exp": [(([0.0, 1.0, -1.0, -INF, INF, 100.0],), {}, [1.0, E, 1 / E, 0.0, INF, INF])],
    "log": [(([1.0, 4.0, 0.0, -0.0, -1.0, INF],), {}, [0.0, math.log(4.0), -INF, -INF, NAN, INF])],
    "sqrt": [(([4.0, 2.0, 0.0, -1.0, INF],), {}, [2.0, math.sqrt(2.0), 0.0, NAN, INF])],
    "rsqrt": [(([4.0, 0.25, 0.0, -0.0, -4.0, INF],), {}, [0.5, 2.0, INF, -INF, NAN, 0.0])],
    "square": [(([3.0, -1.5, 0.0, 1e20],), {}, [9.0, 2.25, 0.0, INF])],
    # sin(float32(pi)) is float32(pi)'s distance to pi; 1e6 and 1e30 need the exact argument reduction
    "sin": [
        (
            ([0.0, math.pi / 2, math.pi, -math.pi / 6, 1e6, INF],),
            {},
            [0.0, 1.0, -8.742278e-08, -0.5, -0.34999350217129294, NAN],
        ),
        (([1e30],), {}, [math.sin(1.0000000150474662e30)]),
    ],
    "cos": [
        (([0.0, math.pi, math.pi / 3, 1e6, NAN],), {}, [1.0, -1.0, 0.5, 0.9367521275331447, NAN]),
        (([1e30],), {}, [math.cos(1.0000000150474662e30)]),
    ],
    "floor": [(([-1.5, 1.5, -0.0, 2.0, -INF, 1e30],), {}, [-2.0, 1.0, -0.0, 2.0, -INF, 1.0000000150474662e30])],
    "copy": [(([1.0, NAN, -INF, -0.0],), {}, [1.0, NAN, -INF, -0.0])],
    # the array API's functions (the rows after floor and after div): NumPy's special values
    "round": [(([0.5, 1.5, 2.5, -0.5, -2.5, 2.6, -INF, NAN],), {}, [0.0, 2.0, 2.0, -0.0, -2.0, 3.0, -INF, NAN])],
    "ceil": [(([-1.5, 1.5, -0.5, 2.0, INF],), {}, [-1.0, 2.0, -0.0, 2.0, INF])],
    "trunc": [(([-1.5, 1.5, -0.5, 2.9, -INF],), {}, [-1.0, 1.0, -0.0, 2.0, -INF])],
    "sign": [(([-3.0, 0.0, -0.0, 2.0, INF, -INF, NAN],), {}, [-1.0, 0.0, 0.0, 1.0, 1.0, -1.0, NAN])],
    "log1p": [(([0.0, -1.0, -2.0, E - 1, INF, 1e-10],), {}, [0.0, -INF, NAN, 1.0, INF, 1e-10])],
    "expm1": [(([0.0, 1.0, -INF, INF, 1e-10],), {}, [0.0, E - 1, -1.0, INF, 1e-10])],
    "log2": [(([8.0, 0.5, 0.0, -1.0, INF],), {}, [3.0, -1.0, -INF, NAN, INF])],
    "log10": [(([1000.0, 0.01, 0.0, -1.0, INF],), {}, [3.0, -2.0, -INF, NAN, INF])],
    "sinh": [
        (([0.0, 1.0, -1.0, INF, -INF, 89.0],), {}, [0.0, math.sinh(1.0), -math.sinh(1.0), INF, -INF, math.sinh(89.0)])
    ],
    "cosh": [
        (([0.0, 1.0, -1.0, INF, -INF, -89.0],), {}, [1.0, math.cosh(1.0), math.cosh(1.0), INF, INF, math.cosh(89.0)])
    ],
    "tan": [(([0.0, math.pi / 4, -1.0, INF],), {}, [0.0, 1.0, math.tan(-1.0), NAN])],
    "asin": [(([0.0, 1.0, -1.0, 0.5, 1.5],), {}, [0.0, math.pi / 2, -math.pi / 2, math.pi / 6, NAN])],
    "acos": [(([1.0, -1.0, 0.0, 0.5, -1.5],), {}, [0.0, math.pi, math.pi / 2, math.pi / 3, NAN])],
    "atan": [(([0.0, 1.0, -INF, INF],), {}, [0.0, math.pi / 4, -math.pi / 2, math.pi / 2])],
    "asinh": [(([0.0, 1.0, -INF, 1e10],), {}, [0.0, math.asinh(1.0), -INF, math.asinh(1e10)])],
    "acosh": [(([1.0, 2.0, 0.5, INF],), {}, [0.0, math.acosh(2.0), NAN, INF])],
    "atanh": [(([0.0, 0.5, 1.0, -1.0, 2.0],), {}, [0.0, math.atanh(0.5), INF, -INF, NAN])],
    "reciprocal": [(([4.0, -0.5, 0.0, -0.0, INF],), {}, [0.25, -2.0, INF, -INF, 0.0])],
    "positive": [(([1.0, NAN, -INF, -0.0],), {}, [1.0, NAN, -INF, -0.0])],
    # of real numbers (complex ones: tests/test_complex.py)
    "real": [(([1.0, NAN, -INF, -0.0],), {}, [1.0, NAN, -INF, -0.0])],
    "imag": [(([1.0, NAN, -INF, -0.0],), {}, [0.0, 0.0, 0.0, 0.0])],
    "conj": [(([1.0, NAN, -INF, -0.0],), {}, [1.0, NAN, -INF, -0.0])],
    "add": [(([1.0, 2.0], [3.0, 4.5]), {}, [4.0, 6.5])],
    "sub": [(([1.0, 2.0], [3.0, 4.5]), {}, [-2.0, -2.5])],
    "mul": [(([1.0, -2.0], [3.0, 4.5]), {}, [3.0, -9.0])],
    "div": [(([1.0, -3.0, 1.0, -1.0, 0.0], [4.0, 2.0, 0.0, 0.0, 0.0]), {}, [0.25, -1.5, INF, -INF, NAN])],
    "atan2": [
        (
            ([1.0, 0.0, -0.0, 0.0, 1.0, INF, -INF, 1.0, -1.0], [1.0, 1.0, -1.0, -0.0, 0.0, INF, -INF, -INF, INF]),
            {},
            [math.pi / 4, 0.0, -math.pi, math.pi, math.pi / 2, math.pi / 4, -3 * math.pi / 4, math.pi, -0.0],
        )
    ],
    "hypot": [(([3.0, 3e30, 3e-30, INF, NAN], [4.0, 4e30, 4e-30, NAN, 1.0]), {}, [5.0, 5e30, 5e-30, INF, NAN])],
    "logaddexp": [(([0.0, 100.0, -INF, INF], [0.0, 1.0, -INF, -INF]), {}, [math.log(2), 100.0, -INF, INF])],
    "copysign": [(([1.0, -2.0, 3.0, INF], [-0.0, 1.0, -1.0, -5.0]), {}, [-1.0, 2.0, -3.0, -INF])],
    "nextafter": [
        (([1.0, 1.0, 0.0, 2.0], [2.0, 0.0, -1.0, 2.0]), {}, [1.0000001192092896, 0.9999999403953857, -1e-45, 2.0])
    ],
    # the sign of the divisor, as Python's %
    "remainder": [(([5.0, -5.0, 5.0, -1.0, 1.0], [3.0, 3.0, -3.0, INF, 0.0]), {}, [2.0, 1.0, -1.0, INF, NAN])],
    # and the standard's special values: +-inf // finite is +-inf, finite // +-inf a zero signed as a / b
    "floor_divide": [
        (
            ([5.0, -5.0, 5.0, -1.0, 1.0, 7.0, INF, -INF, 3.0], [3.0, 3.0, -3.0, INF, 0.0, 0.5, 2.0, 2.0, -INF]),
            {},
            [1.0, -2.0, -2.0, -0.0, INF, 14.0, INF, -INF, -0.0],
        )
    ],
    # pow(a, 0) = 1 and pow(1, b) = 1 even for NaN; odd integer powers of negatives are negative
    "pow": [
        (
            ([2.0, -2.0, -8.0, 0.0, -0.0, NAN, 1.0, 4.0, -1.0], [10.0, 3.0, 1 / 3, -1.0, -3.0, 0.0, NAN, 0.5, INF]),
            {},
            [1024.0, -8.0, NAN, INF, -INF, 1.0, 1.0, 2.0, 1.0],
        )
    ],
    "maximum": [(([1.0, NAN, -INF, 5.0], [2.0, 0.0, 3.0, NAN]), {}, [2.0, NAN, 3.0, NAN])],
    "minimum": [(([1.0, NAN, -INF, 5.0], [2.0, 0.0, 3.0, NAN]), {}, [1.0, NAN, -INF, NAN])],
    "lt": [(([1.0, 2.0, NAN, 3.0], [2.0, 2.0, 1.0, NAN]), {}, [1.0, 0.0, 0.0, 0.0])],
    "le": [(([1.0, 2.0, NAN, 3.0], [2.0, 2.0, 1.0, NAN]), {}, [1.0, 1.0, 0.0, 0.0])],
    "gt": [(([1.0, 2.0, NAN, 3.0], [2.0, 2.0, 1.0, NAN]), {}, [0.0, 0.0, 0.0, 0.0])],
    "ge": [(([1.0, 2.0, NAN, 3.0], [2.0, 2.0, 1.0, NAN]), {}, [0.0, 1.0, 0.0, 0.0])],
    "eq": [(([1.0, 2.0, NAN, -0.0], [2.0, 2.0, NAN, 0.0]), {}, [0.0, 1.0, 0.0, 1.0])],
    "ne": [(([1.0, 2.0, NAN, -0.0], [2.0, 2.0, NAN, 0.0]), {}, [1.0, 0.0, 1.0, 0.0])],
    # a NaN condition counts as true, -0.0 as false
    "where": [(([1.0, 0.0, NAN, -0.0], [1.0, 2.0, 3.0, 4.0], [-1.0, -2.0, -3.0, -4.0]), {}, [1.0, -2.0, 3.0, -4.0])],
    "isnan": [(([1.0, NAN, INF, -0.0],), {}, [False, True, False, False])],
    "isinf": [(([1.0, NAN, INF, -INF],), {}, [False, False, True, True])],
    "isfinite": [(([1.0, NAN, INF, -1e-45],), {}, [True, False, False, True])],
    "signbit": [(([1.0, -0.0, -INF, 0.0, -2.0],), {}, [False, True, True, False, True])],
    "astype": [
        (([1.9, -1.9, NAN, 3e9, -0.0],), {"dtype": "int32"}, [1, -1, 0, 2**31 - 1, 0]),
        (([0.0, -0.0, NAN, 1e-45],), {"dtype": "bool"}, [False, False, True, True]),
        (([-1, 7],), {"dtype": "uint32"}, [2**32 - 1, 7]),
    ],
    "logical_and": [(([True, True, False], [True, False, False]), {}, [True, False, False])],
    "logical_or": [(([True, True, False], [True, False, False]), {}, [True, True, False])],
    "logical_xor": [(([True, True, False], [True, False, False]), {}, [False, True, False])],
    "logical_not": [(([True, False],), {}, [False, True])],
    "bitwise_and": [(([12, -1, 5], [10, 7, 0]), {}, [8, 7, 0])],
    "bitwise_or": [(([12, -8, 5], [10, 3, 0]), {}, [14, -5, 5])],
    "bitwise_xor": [(([12, -1, 5], [10, 7, 5]), {}, [6, -8, 0])],
    "bitwise_invert": [(([0, -1, 5],), {}, [-1, 0, -6]), (([True, False],), {}, [False, True])],
    "bitwise_left_shift": [(([1, -3, 1, 1], [4, 1, 31, 32]), {}, [16, -6, -(2**31), 0])],
    "bitwise_right_shift": [(([16, -16, -1, 5], [2, 2, 40, 32]), {}, [4, -4, -1, 0])],
    "dot": [(([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]), {}, [32.0])],
    "sum": [(([1.0, 2.0, 3.0, 4.0],), {}, [10.0]), (([1.0] * 100000,), {}, [100000.0])],
    "max": [(([-1.0, 5.0, 3.0],), {}, [5.0]), (([-INF, -7.0],), {}, [-7.0]), (([1.0, NAN, 2.0],), {}, [NAN])],
    "min": [(([-1.0, 5.0, 3.0],), {}, [-1.0]), (([INF, 7.0],), {}, [7.0]), (([1.0, NAN, 2.0],), {}, [NAN])],
    "prod": [(([1.0, 2.0, -3.0, 4.0],), {}, [-24.0]), (([],), {}, [1.0]), (([2.0] * 100,), {}, [2.0**100])],
    "norm_l1": [(([3.0, -4.0],), {}, [7.0])],
    "norm_l2": [(([3.0, -4.0],), {}, [5.0]), (([0.0] * 300,), {}, [0.0])],
    "softmax": [
        (([2.0] * 4,), {}, [0.25] * 4),
        (([0.0, math.log(3.0)],), {}, [0.25, 0.75]),
        (([[5.0, 5.0], [-1.0, -1.0]],), {}, [0.5] * 4),
    ],
    "log_softmax": [
        (([7.0] * 4,), {}, [-math.log(4.0)] * 4),
        (([0.0, math.log(3.0)],), {}, [math.log(0.25), math.log(0.75)]),
    ],
    "cumulative_sum": [
        (([1.0, 2.0, -3.5, INF],), {}, [1.0, 3.0, -0.5, INF]),
        (([2**31 - 1, 1, 5, True],), {}, [2**31 - 1, -(2**31), -(2**31) + 5, -(2**31) + 6]),  # int32 wraps
    ],
    "cumulative_prod": [
        (([2.0, -1.5, 4.0, 0.5],), {}, [2.0, -3.0, -12.0, -6.0]),
        (([65536, 65536, 3],), {}, [65536, 0, 0]),
    ],
    "matmul": [
        (([[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]), {}, [19.0, 22.0, 43.0, 50.0]),
        (
            ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
            {},
            [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        ),
        (([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [1.0, 1.0, 1.0]), {"m": 2, "k": 3, "n": 1}, [6.0, 15.0]),
    ],
    "take": [
        (([1.5, -0.0, NAN], [2, -1, 0, 5, -9]), {}, [NAN, NAN, 1.5, NAN, 1.5]),  # 5 clamps to 2, -9 to 0
        (([[1, 2, 3], [4, 5, 6]], [[2, 0], [-1, 1]]), {"axis": 1}, [3, 1, 6, 5]),
        (([True, False, True], [2, 2, 1]), {"axis": 0}, [True, True, False]),
    ],
    "scatter_add": [
        (([1.0, 2.0, 3.0], [0, -1, 0, 2], [10.0, 20.0, 30.0, 0.5]), {}, [41.0, 2.0, 23.5]),
        # int32 wraps: 2^31 - 1 + 1 is -2^31
        (([[1, 2], [2**31 - 1, 4]], [[1, 1], [0, 0]], [[5, 6], [1, 0]]), {"axis": 1}, [1, 13, -(2**31), 4]),
    ],
    "convolve2d": [
        # a delta kernel picks the centre window; no kernel flip: [[0, 1], [0, 0]] picks the right neighbour
        (
            ([[float(5 * r + c) for c in range(5)] for r in range(5)], [[0, 0, 0], [0, 1, 0], [0, 0, 0]]),
            {},
            [6.0, 7.0, 8.0, 11.0, 12.0, 13.0, 16.0, 17.0, 18.0],
        ),
        (([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[0.0, 1.0], [0.0, 0.0]]), {}, [2.0, 3.0]),
        (([[1.0, 2.0], [3.0, 4.0]], [[1.0, 10.0], [100.0, 1000.0]]), {}, [4321.0]),
    ],
    # stable: -0.0 and 0.0 keep their order; NaN last, first where descending
    "sort": [
        (([3.0, -1.0, NAN, 2.0, -0.0, 0.0],), {}, [-1.0, -0.0, 0.0, 2.0, 3.0, NAN]),
        (([3.0, -1.0, NAN, 2.0, -0.0, 0.0],), {"descending": True}, [NAN, 3.0, 2.0, -0.0, 0.0, -1.0]),
        (([[3, -1, 2], [0, 5, -7]],), {}, [-1, 2, 3, -7, 0, 5]),
    ],
    "argsort": [
        (([3.0, -1.0, NAN, 2.0, -0.0, 0.0],), {}, [1, 4, 5, 3, 0, 2]),
        (([3.0, -1.0, NAN, 2.0, -0.0, 0.0],), {"descending": True}, [2, 0, 3, 4, 5, 1]),
        (([1, 0, 1, 0],), {"descending": True}, [0, 2, 1, 3]),
    ],
    # scores (ln 3) I: weights 3/4 and 1/4; causal: row 0 sees key 0 only; a row with every key masked is NaN
    "attention": [
        ((EYE2, EYE2, [[1.0, 2.0], [3.0, 4.0]]), {"scale": math.log(3)}, [1.5, 2.5, 2.5, 3.5]),
        ((EYE2, EYE2, [[1.0, 2.0], [3.0, 4.0]]), {"scale": math.log(3), "causal": True}, [1.0, 2.0, 2.5, 3.5]),
    ],
    "attention_masked": [
        ((EYE2, EYE2, [[1.0, 2.0], [3.0, 4.0]], [[1.0, 0.0], [0.0, 0.0]]), {}, [1.0, 2.0, NAN, NAN]),
        ((EYE2, EYE2, [[1.0, 2.0], [3.0, 4.0]], [[0.0, 1.0]]), {"causal": True}, [NAN, NAN, 3.0, 4.0]),
    ],
    "searchsorted": [
        (([1.0, 2.0, 2.0, 3.0], [2.0, 0.0, 4.0, NAN]), {}, [1, 0, 4, 4]),
        (([1.0, 2.0, 2.0, 3.0], [2.0, 0.0, 4.0, NAN]), {"side": "right"}, [3, 0, 4, 4]),
    ],
}


def test_known_values_cover_catalog():
    assert set(KNOWN) == {op.name for op in ops.CATALOG}, "add known values for new ops to KNOWN"


@pytest.mark.parametrize("op", ops.CATALOG, ids=lambda op: op.name)
def test_known_values(dev, op):
    """Every op (the integer and bool ones on lists of Python ints and bools: int32 and bool arrays)."""
    for args, kwargs, want in KNOWN[op.name]:
        got = flat(run(getattr(dev, op.name)(*args, **kwargs)))
        if isinstance(want[0], float):
            assert got == pytest.approx(want, rel=max(op.rtol, 1e-6), abs=max(op.atol, 1e-7), nan_ok=True), args
        else:  # exact, and of the kind expected (a bool is no int here)
            assert got == want and [type(v) for v in got] == [type(v) for v in want], (args, kwargs)


def test_reductions_return_python_floats(dev):
    for op in ops.CATALOG:
        if op.kind == "reduce":
            assert type(run(getattr(dev, op.name)(*[[1.0, 2.0]] * op.arity))) is float


# ---------------------------------------------------------------- the two references agree


@pytest.mark.skipif(not HAVE_NUMPY, reason="cross-checks op.ref against op.numpy, which needs NumPy")
@op_params
def test_python_reference_agrees_with_numpy_reference(op):
    """op.ref (pure Python) and op.numpy (float64) agree on random inputs and on every special value."""
    if op.kind == "matmul":
        cases = [matmul_case(3, 4, 5, seed=1), matmul_case(2, 3, 2, seed=2, flat=True)]
    elif op.kind == "conv2d":
        cases = [conv_case(5, 6, 2, 3, seed=1), conv_case(3, 3, 3, 3, seed=2)]
    elif op.kind == "softmax":
        cases = [softmax_case(op.name, None, 17, seed=1), softmax_case(op.name, 3, 5, seed=2)]
    else:
        cases = [sweep_case(op, 17, seed=1), sweep_case(op, 1, seed=2)]
    for case in cases + special_cases(op):
        py = reference_python(case)
        npy = [float(v) for v in reference_numpy(case)]
        assert len(py) == len(npy), case
        for i, (a, b) in enumerate(zip(py, npy)):
            assert (math.isnan(a) and math.isnan(b)) or a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-12, (
                f"{case!r}[{i}]: op.ref {a!r} != op.numpy {b!r}"
            )


# ---------------------------------------------------------------- the harness itself


@op_params
def test_checker_catches_wrong_results(op):
    """mismatches() flags a result one tolerance-and-a-bit off, a NaN for a number, inf for F32_MAX."""
    case = sweep_case(op, 64, seed=5) if op.kind != "softmax" else softmax_case(op.name, 4, 16, seed=5)
    want = [float(v) for v in f32(reference(case))]
    assert not mismatches(case, want), "the float32-rounded reference itself passes"
    i = next(j for j in range(len(want) // 2, len(want)) if math.isfinite(want[j]))  # log, sqrt of x < 0: NaN
    mag = magnitudes(case) if op.kind in ("reduce", "matmul", "conv2d", "scan", "scatter") else None
    tol = op.atol * (mag[i] if mag else 1.0) + op.rtol * abs(want[i])
    for wrong in (want[i] + 2 * tol + 1e-30, NAN, INF if want[i] != INF else 0.0):
        got = list(want)
        got[i] = wrong
        assert mismatches(case, got), f"{op.name}: {wrong!r} for {want[i]!r} passed"
    assert mismatches(case, want[:-1] if len(want) > 1 else []), "a missing element is caught"


@op_params
def test_harness_without_numpy(dev, op, monkeypatch):
    """The pure-Python path of _cases (inputs, op.ref references, checks: what Pyodide without NumPy
    runs) passes the same results."""
    import _cases

    monkeypatch.setattr(_cases, "HAVE_NUMPY", False)
    cases = [sweep_case(op, n, seed=n) for n in (1, 4, 257)] + special_cases(op)[:6]
    if op.kind == "softmax":
        cases.append(softmax_case(op.name, 3, 0))
    for case in cases:
        assert_matches(case, run(case.call(dev)))


# ---------------------------------------------------------------- shape semantics


def test_elementwise_and_reductions_take_same_length_inputs_of_any_shape(dev):
    """Binary elementwise ops and reductions need the same number of elements, not the same shape;
    the result has the first input's shape."""
    a = [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    b = [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    s = run(dev.add(a, b))
    assert has_shape(s, (2, 3)) and flat(s) == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert flat(run(dev.add(a, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]))) == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert run(dev.dot(a, b)) == 55.0
    assert run(dev.dot(a, a)) == 55.0
    assert run(dev.sum(a)) == 15.0
    assert has_shape(run(dev.relu(a)), (2, 3))


# ---------------------------------------------------------------- kernel variants (webgpu tuning knobs)

VARIANTS = [
    {},
    {"subgroups": False},  # shared-memory folds (adapters without the subgroups feature)
    {"map_vpt": 1},
    {"map_vpt": 3},
    {"max_per_dim": 3},  # 2-D grids of workgroups at small sizes
    {"binding_limit": 1024},  # scalar (non-vec4) map, softmax and matmul kernels past 256 elements
    {"matmul_min_groups": 1},  # the largest matmul tiles even for small products
    *({"matmul": name} for name in __import__("trueno_web.kernels", fromlist=["x"]).MATMUL_CONFIGS),
]


def _variant_cases():
    chain = [sweep_case(ops.get(name), n, seed=n) for name in ("gelu", "add") for n in (5, 4097, 1 << 15)]
    reduce = [sweep_case(ops.get(name), n, seed=n) for name in ("sum", "max", "dot", "norm_l2") for n in (3, 100003)]
    soft = [
        softmax_case("softmax", None, 4097, seed=1),
        softmax_case("log_softmax", 3, 9000, seed=2),
        softmax_case("softmax", 300, 7, seed=3),
        softmax_case("softmax", 130, 4100, seed=4),
        softmax_case("softmax", 2, 16384, seed=5),
    ]
    mm = [
        matmul_case(65, 33, 67, seed=1),
        matmul_case(129, 20, 131, seed=2),
        matmul_case(7, 8, 12, seed=3),
        matmul_case(200, 64, 256, seed=4),
    ]
    conv = [conv_case(37, 53, 5, 3, seed=1), conv_case(300, 20, 3, 3, seed=2)]
    return chain + reduce + soft + mm + conv


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: ",".join(f"{k}={w}" for k, w in v.items()) or "default")
def test_kernel_variants(gpu, monkeypatch, variant):
    """Every tiling, alignment and fold variant of the WGSL kernels gives the reference's numbers."""
    for key, value in variant.items():
        monkeypatch.setattr(gpu.executor.caps, key, value)
    problems = []
    for case in _variant_cases():
        if "matmul" in variant and case.op.kind != "matmul":
            continue  # a forced tiling changes only the matmul kernel
        problems += [f"{case!r} {p}" for p in mismatches(case, run(case.call(gpu)))][:3]
    assert not problems, "\n".join(problems[:12])


# ---------------------------------------------------------------- past 65535 workgroups


@pytest.mark.slow
def test_past_65535_workgroups(dev):
    """More than 65535 * 256 elements through an elementwise op and a reduction, and a softmax of
    more than 65535 rows. (The vec4 map kernel, 2 vec4s per thread, stays under 65535 workgroups
    here; the 2-D grid paths of every kernel are covered by test_kernel_variants[max_per_dim=3].)"""
    np = pytest.importorskip("numpy", reason="builds 64 MiB inputs with NumPy")
    n = 65535 * 256 + 300
    x = np.random.default_rng(5).uniform(-4, 4, n).astype(np.float32)
    x[-1], x[-300], x[65535 * 256] = -2.5, 7.25, 3.5  # the last workgroups sit on the grid's 2nd row
    got = run(dev.relu(x))
    assert got.shape == (n,) and np.array_equal(got, np.maximum(x, 0))
    y = run(dev.scale(x, -0.5))
    assert np.array_equal(y, x * np.float32(-0.5))
    total = run(dev.norm_l1(x))
    want = float(np.sum(np.abs(x.astype(np.float64))))
    assert abs(total - want) <= 1e-5 * want
    rows = 65537
    xs = np.random.default_rng(6).uniform(-8, 8, (rows, 3)).astype(np.float32)
    case = Case(ops.get("softmax"), [(f32(xs.reshape(-1)), (rows, 3))])
    assert_matches(case, run(dev.softmax(xs)))
    case = Case(ops.get("log_softmax"), [(f32(xs.reshape(-1)), (rows, 3))])
    assert_matches(case, run(dev.log_softmax(xs)))
