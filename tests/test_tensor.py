"""Lazy tensors against a float64 reference on every backend: broadcasting, the operators (+ - * / **,
comparisons, unary -, abs, where) with NaN/Inf values, views, reductions along axes, softmax along an
axis, matmul, realisation in one batch, and the errors at expression time.

The reference is _pyref.Ref (pure Python, float64; test_the_reference_matches_numpy checks it against
NumPy on the desktop) and the inputs come from a seeded random.Random, so these bodies also run inside
Pyodide (e2e/test_parity_in_pyodide.py), where results come back as NDResults (no NumPy). The tests that
need NumPy itself (np.asarray of a tensor, the cross-check) are marked `needs_numpy` with their reason.
"""

from __future__ import annotations

import math
import random

import pytest
from _cases import HAVE_NUMPY
from _helpers import refs, tensor
from _pyref import (
    CATALOG_REDUCTIONS,
    INF,
    NAN,
    REDUCTIONS,
    Ref,
    apply,
    assert_close,
    choice,
    flat_values,
    uniform,
    where,
)

import trueno_web as tw
from trueno_web.runtime import block_on

needs_numpy = pytest.mark.skipif(
    not HAVE_NUMPY, reason="needs NumPy (desktop only): np.asarray / the NumPy cross-check"
)

RNG = random.Random(7)
data = refs(RNG, -3.0, 3.0)

#: values for the operator cases: equal pairs (for == <= >=), zeros of both signs (x / 0, 0 ** -1),
#: negative bases with integer and fractional exponents, NaN and both infinities
SPECIAL_VALUES = (NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 1.5, -2.75, 0.375)


def check(t, want: Ref, rtol=2e-6, atol=2e-6, dtype="float32"):
    """t's result is of `dtype` and want's shape, and within rtol/atol of it (NaN == NaN, infinities exact;
    a bool result against want's 1.0 and 0.0)."""
    got = block_on(t.numpy())
    assert t.shape == want.shape and t.dtype == dtype, (t.shape, want.shape, t.dtype)
    assert tuple(got.shape) == want.shape and got.dtype.name == dtype, (got.shape, want.shape)  # NumPy or NDResult
    assert_close(got, want, rtol=rtol, atol=atol)


SHAPE_PAIRS = [
    ((64, 10), (10,)),
    ((3, 1, 5), (1, 4, 1)),
    ((1,), (4097,)),
    ((), (2, 3)),
    ((0, 3), (3,)),
    ((2, 3, 4), (2, 3, 4)),
]


def _pair(dev, sa, sb, make):
    a, b = make(sa), make(sb)
    ta = tensor(dev, a) if sa else tw.asarray(a.flat[0], device=dev)  # 0-d: a Python float
    return a, b, ta, tensor(dev, b)


@pytest.mark.parametrize("sa,sb", SHAPE_PAIRS, ids=str)
def test_binary_ops_broadcast_like_numpy(dev, sa, sb):
    a, b, ta, tb = _pair(dev, sa, sb, lambda s: data(*s))
    check(ta + tb, a + b)
    check(ta - tb, a - b)
    check(ta * tb, a * b)
    check(tw.Tensor.add(tb, ta), b + a)


@pytest.mark.parametrize("sa,sb", SHAPE_PAIRS, ids=str)
def test_division_power_comparisons_and_where_broadcast_with_specials(dev, sa, sb):
    """/ and ** (NaN, +-inf, +-0, negative bases), the six comparisons (bool; NaN compares false but for
    !=), unary -, abs() and tw.where (a NaN condition counts as true), all broadcasting."""
    a, b, ta, tb = _pair(dev, sa, sb, lambda s: choice(RNG, s, SPECIAL_VALUES))
    check(ta / tb, a / b)
    check(ta**tb, a**b)
    check(ta < tb, a < b, dtype="bool")
    check(ta <= tb, a <= b, dtype="bool")
    check(ta > tb, a > b, dtype="bool")
    check(ta >= tb, a >= b, dtype="bool")
    check(ta == tb, a == b, dtype="bool")
    check(ta != tb, a != b, dtype="bool")
    check(-ta + tb, -a + b)
    check(abs(ta - tb), abs(a - b))
    check(abs(tb) * -ta, abs(b) * -a)
    check(tw.where(ta > tb, ta, tb), where(a > b, a, b))
    check(tw.where(tb, ta, -tb), where(b, a, -b))
    check(tw.maximum(ta, tb), apply("maximum", a, b))


POWER_VALUES = SPECIAL_VALUES + (3e20, -1e19, 1e-9, 7.1e12, -5e12)  # 3e20 ** 2, 7.1e12 ** 4 and -5e12 ** 3 overflow


def test_small_integer_powers_are_products(dev):
    """t ** 2 (t.pow(2), tw.pow(t, 2)) is tw.square(t), as NumPy's fast path: the correctly rounded square (the
    float64 square of a float32 is exact) bit for bit; t ** 3 and t ** 4 are square(t) * t and square(square(t)),
    as JAX's integer_pow, within 1 and 1.5 ulp of the float64 power with the same special values (inf, -0, NaN,
    overflow); the dtype kept (int32 wraps as pow's does). Other exponents, and a float exponent that makes an int32
    tensor float, stay pow."""
    import struct

    from trueno_web.accuracy import f32

    x = Ref(POWER_VALUES)
    t = tensor(dev, x)
    xs = [f32(v) for v in flat_values(x)]
    want = [struct.pack("<f", f32(v * v)) for v in xs]
    for got in (t**2, t**2.0, t.pow(2), tw.pow(t, 2)):
        assert got.expr.op.name == "square" and got.dtype == "float32"
        assert [struct.pack("<f", v) for v in flat_values(block_on(got.numpy()))] == want
    for n, ulps, op in ((3, 1.0, "mul"), (4, 1.5, "square")):
        got = t**n
        assert got.expr.op.name == op and got.dtype == "float32"
        for v, g in zip(xs, flat_values(block_on(got.numpy()))):
            if math.isnan(v):
                assert math.isnan(g)
                continue
            exact = v**n  # float64: finite for every finite float32 at n <= 4
            w = f32(exact)
            if math.isinf(w) or w == 0:
                assert g == w and math.copysign(1, g) == math.copysign(1, w), (v, n, g)  # -0 ** 3 is -0
            else:
                assert abs(g - exact) <= ulps * 2.0**-23 * abs(w), (v, n, g)
    assert (t**5).expr.op.name == "pow" and (t**-1).expr.op.name == "pow" and (t**0.5).expr.op.name == "pow"
    ints = [3, -5, 46341, -46341, 0, 1291]  # 46341^2 and 1291^3 wrap
    i = tw.asarray(ints, dev, dtype=tw.int32)
    for n in (2, 3, 4):
        assert flat_values(block_on((i**n).numpy())) == [(v**n + 2**31) % 2**32 - 2**31 for v in ints]
    assert (i**2.0).expr.op.name == "pow" and (i**2.0).dtype == "float32"


def test_scalar_operands_of_division_power_and_comparisons(dev):
    x = choice(RNG, (6, 7), SPECIAL_VALUES)
    t = tensor(dev, x)
    check(t / 4, x / 4)
    check(3 / t, 3 / x)
    check(t**2, x**2)
    check(t**3, x**3)
    check(t**-1, x**-1)
    check(2**t, 2**x)
    check(t < 0.5, x < 0.5, dtype="bool")
    check(1.0 <= t, 1.0 <= x, dtype="bool")
    check(t > -1, x > -1, dtype="bool")
    check(t >= 2, x >= 2, dtype="bool")
    check(t == 0, x == 0, dtype="bool")
    check(t != 1, x != 1, dtype="bool")
    check(tw.where(t, 1.0, -1.0), where(x, 1.0, -1.0))
    check(-(-t), x)
    check(abs(t), abs(x))


def test_power_one_half_is_pow_not_sqrt(dev):
    """t ** 0.5 is C99 pow: pow(-inf, 0.5) = +inf (sqrt(-inf) is NaN), also where NumPy's power would take
    its sqrt fast path (a broadcast exponent)."""
    x = choice(RNG, (6, 7), SPECIAL_VALUES)
    check(tensor(dev, x) ** 0.5, x**0.5)


def test_operators_on_views_chain_and_fuse(dev):
    """The new operators read views (a transposed, a sliced, a broadcast operand) in one fused chain."""
    x, y = data(4, 6), data(6, lo=0.25, hi=2.0)
    tx, ty = tensor(dev, x), tensor(dev, y)
    got = tw.where(tx.T[::2] > 0, (tx.T[::2] / ty[::2, None]) ** 2, -abs(tx.T[::2]))
    xs = x.T[::2]
    check(got, where(xs > 0, (xs / y[::2, None]) ** 2, -abs(xs)))


def test_scalars_mix_in_and_expressions_chain(dev):
    x = data(5, 7)
    t = tensor(dev, x)
    check(2 * t + 1, 2 * x + 1)
    check(1 - t, 1 - x)
    check((t * 0.5).relu().gelu() - t, (x * 0.5).map("relu").map(_gelu) - x, rtol=2e-5, atol=2e-6)
    check(tw.sigmoid(t), x.map(lambda v: 1 / (1 + math.exp(-v))), rtol=2e-5, atol=2e-6)
    check(t.clip(-1, 0.5), x.clip(-1, 0.5))


def _gelu(x):
    return 0.5 * x * (1 + math.tanh(0.7978845608028654 * (x + 0.044715 * x**3)))


def test_views_cost_nothing_and_read_right(dev):
    x = data(4, 6, 5)
    t = tensor(dev, x)
    check(t.transpose(), x.T)
    check(t[1].T, x[1].T)
    check(t.swapaxes(0, 2).relu(), x.transpose(2, 1, 0).map("relu"))
    check(t.permute(1, 2, 0), x.transpose(1, 2, 0))
    check(t[1:, ::2], x[1:, ::2])
    check(t[::-1, 2, -3:], x[::-1, 2, -3:])
    check(t[None, ..., 0], x[None, ..., 0])
    check(t[:, :1].expand(4, 3, 5), x[:, :1].broadcast_to((4, 3, 5)))
    check(t.reshape(24, 5), x.reshape(24, 5))
    check(t.transpose().reshape(-1), x.T.reshape(-1))  # a reshape of a strided view copies first
    check(t[:, :1].squeeze(1).unsqueeze(0), x[:, 0][None])
    check(t[2:3].squeeze(), x[2])
    check((t.transpose() + t.transpose())[1], (x.T + x.T)[1])


# every reduction of the tensors but prod, whose product of up to 4097 * 3 * 2 inputs leaves float32's range
@pytest.mark.parametrize("name", [name for name in REDUCTIONS if name != "prod"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), 1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_along_axes(dev, name, axis, keepdims):
    x = data(3, 4097, 2) if axis == 1 else data(5, 6, 7)
    t = dev.tensor(x.f32(), shape=x.shape)
    want = x.reduce(name, axis=axis, keepdims=keepdims)  # norm_l1: sum(|x|), norm_l2: sqrt(sum(x * x))
    scale = abs(x).reduce(name, axis=axis, keepdims=keepdims).flat if name in ("sum", "mean") else [0.0] * want.size
    out = getattr(t, name)(axis=axis, keepdims=keepdims)
    got = block_on(out.numpy())
    assert out.shape == want.shape and tuple(getattr(got, "shape", want.shape)) == want.shape
    got = flat_values(got)
    assert len(got) == want.size
    assert all(abs(g - w) <= 1e-5 * abs(w) + 1e-5 * abs(s) + 1e-6 for g, w, s in zip(got, want.flat, scale)), (
        name,
        axis,
    )


def test_a_reduction_of_an_expression_and_specials(dev):
    x = data(6, 9)
    x.flat[1 * 9 + 3], x.flat[2 * 9 + 0], x.flat[4 * 9 + 4] = NAN, INF, -INF
    t = tensor(dev, x)
    check(t.max(axis=1), x.max(axis=1))
    check(t.min(axis=0, keepdims=True), x.min(axis=0, keepdims=True))
    check((t * 2).relu().sum(axis=-1), (2 * x).map("relu").sum(axis=-1))


def test_empty_and_zero_d(dev):
    e = tensor(dev, Ref.full((0, 3), 0.0))
    check(e.sum(axis=0), Ref.full((3,), 0.0))
    check(e.sum(axis=1), Ref.full((0,), 0.0))
    check(e + 1, Ref.full((0, 3), 0.0))
    z = tw.asarray(2.5, device=dev)
    assert z.shape == () and z.ndim == 0 and z.size == 1
    assert block_on((z * 2).item()) == 5.0
    with pytest.raises(tw.TruenoValueError, match="empty axis"):
        e.max(axis=0)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_along_an_axis(dev, axis):
    x = (data(4, 5, 6) * 3).astype_f32()
    e = (x - x.max(axis=axis, keepdims=True)).map("exp")
    check(tensor(dev, x).softmax(axis=axis), e / e.sum(axis=axis, keepdims=True), rtol=1e-5, atol=1e-7)
    check(
        tw.log_softmax(tensor(dev, x), axis=axis),
        (e / e.sum(axis=axis, keepdims=True)).map("log"),
        rtol=1e-5,
        atol=1e-5,
    )


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((17, 33), (33, 9)),
        ((2, 3, 5), (5, 4)),
        ((5,), (5, 3)),
        ((4, 5), (5,)),
        ((5,), (5,)),
        ((1, 1), (1, 1)),
        ((3, 0), (0, 2)),
    ],
    ids=str,
)
def test_matmul(dev, sa, sb):
    a, b = data(*sa, lo=-1, hi=1), data(*sb, lo=-1, hi=1)
    want = a @ b
    check(tensor(dev, a) @ tensor(dev, b), want, rtol=1e-5, atol=1e-5)
    host_b = b.tolist() if b.size else tensor(dev, b)  # host data mixes in (nested lists cannot say (0, 2))
    check(tw.matmul(tensor(dev, a).transpose().transpose(), host_b), want, rtol=1e-5, atol=1e-5)


def test_matmul_of_a_transposed_operand(dev):
    a, b = data(6, 4, lo=-1, hi=1), data(6, 5, lo=-1, hi=1)
    check(tensor(dev, a).T @ tensor(dev, b), a.T @ b, rtol=1e-5, atol=1e-5)


def test_realize_runs_several_tensors_in_one_execute_and_uploads_each_input_once(dev2):
    dev = dev2
    x, b = data(64, 10), data(10)
    tx, tb = tensor(dev, x), tensor(dev, b)
    y = tx + tb
    s = y.sum(axis=1)
    before = dev.stats.as_dict()
    block_on(tw.realize(y, s))
    after = dev.stats.as_dict()
    assert after["submits"] - before["submits"] == 1
    if dev.backend == "webgpu":
        assert after["uploads"] - before["uploads"] == 2  # b once, never expanded
        assert after["bytes_up"] - before["bytes_up"] == (640 + 10) * 4
    check(y, x + b)
    check(s, (x + b).sum(axis=1), rtol=1e-5, atol=1e-5)
    again = dev.stats.as_dict()
    check(tx * 2, x * 2.0)  # x is resident now: no second upload
    assert dev.stats.uploads == again["uploads"]
    assert y.expr.op is None and y.expr.inputs == ()  # the realised graph is dropped


def test_shared_subexpressions_run_once(dev2):
    x = data(1000)
    t = tensor(dev2, x)
    h = t.relu() * 3
    out = h.sum() + h.max()  # h feeds both reductions: computed once
    before = dev2.stats.dispatches
    r = x.map("relu")
    assert math.isclose(block_on(out.item()), r.sum().flat[0] * 3 + r.max().flat[0] * 3, rel_tol=1e-5)
    # relu * 3 once, sum and max (two dispatches each on a GPU: partials, then their fold), add
    assert dev2.stats.dispatches - before == (6 if dev2.backend == "webgpu" else 4)


def _spare_device():
    """A second device (NumPy's where it imports, else wasm-simd): the caller closes it."""
    return block_on(tw.GpuDevice.create("numpy" if HAVE_NUMPY else "wasm-simd"))


def test_mistakes_raise_where_written_and_the_device_still_works(dev):
    x = data(3, 4)
    t = tensor(dev, x)
    with pytest.raises(tw.TruenoValueError, match=r"\(3, 4\) and \(5,\)"):
        t + tensor(dev, data(5))
    with pytest.raises(tw.TruenoValueError, match="axis 2 is out of range for 2"):
        t.sum(axis=2)
    with pytest.raises(tw.TruenoValueError, match=r"cannot reshape \(3, 4\).*\(5, 3\)"):
        t.reshape(5, 3)
    with pytest.raises(tw.TruenoValueError, match="inner dimensions differ"):
        t @ tensor(dev, data(3, 4))
    with pytest.raises(tw.TruenoValueError, match="out of range for axis 0"):
        t[3]
    other = _spare_device()
    try:
        with pytest.raises(tw.TruenoValueError, match="different devices"):
            t + tensor(other, data(3, 4))
    finally:
        other.close()
    with pytest.raises(tw.TruenoTypeError, match="one element"):
        bool(t)  # bool() of one element runs it (tests/test_array_api.py); of several it is ambiguous
    check(t + 1, Ref(flat_values(block_on(t.numpy())), t.shape) + 1)
    check(t, x)


def test_a_tensor_of_a_closed_device_says_so(backend):
    dev = block_on(tw.GpuDevice.create(backend))
    t = dev.tensor([1.0, 2.0])
    dev.close()
    with pytest.raises(tw.DeviceLostError, match="closed"):
        block_on(t.numpy())


def test_sync_reads(dev):
    """float(t) and numpy_sync() without await: on the desktop, and under JSPI inside Pyodide."""
    t = dev.tensor([1.0, 4.0, 9.0])
    assert float(t.sum()) == 14.0
    assert flat_values(t.numpy_sync()) == [1.0, 4.0, 9.0]
    assert flat_values((t * 2).numpy_sync()) == [2.0, 8.0, 18.0]


@needs_numpy
def test_sync_reads_on_the_desktop(cpu):
    import numpy as np

    t = cpu.tensor([1.0, 4.0, 9.0])
    assert float(t.sum()) == 14.0
    assert np.asarray(t * 2).tolist() == [2.0, 8.0, 18.0]
    assert t.numpy_sync().tolist() == [1.0, 4.0, 9.0]


# ---------------------------------------------------------------- the reference itself, against NumPy


def _xcheck_cases():
    """(label, function of the inputs) pairs run on both Refs and float64 NumPy arrays: the inputs are
    a (3, 1, 5) and b (1, 4, 1) of SPECIAL_VALUES, x (4, 6, 5) uniform, m (2, 3, 4) and n (4, 5)."""
    return [
        ("a + b", lambda L, a, b, x, m, n: a + b),
        ("a - b", lambda L, a, b, x, m, n: a - b),
        ("a * b", lambda L, a, b, x, m, n: a * b),
        ("a / b", lambda L, a, b, x, m, n: a / b),
        ("a ** b", lambda L, a, b, x, m, n: a**b),
        ("2 ** a, a ** 3, 1 - a, 3 / a", lambda L, a, b, x, m, n: ((2**a) + (a**3)) * (1 - a) + 3 / a),
        ("a < b", lambda L, a, b, x, m, n: L.f(a < b)),
        ("a <= b", lambda L, a, b, x, m, n: L.f(a <= b)),
        ("a > b", lambda L, a, b, x, m, n: L.f(a > b)),
        ("a >= b", lambda L, a, b, x, m, n: L.f(a >= b)),
        ("a == b", lambda L, a, b, x, m, n: L.f(a == b)),
        ("a != b", lambda L, a, b, x, m, n: L.f(a != b)),
        ("-a, abs(b)", lambda L, a, b, x, m, n: -a + abs(b)),
        ("where(a, b, -a)", lambda L, a, b, x, m, n: L.where(a, b, -a)),
        ("where(a > b, a, b)", lambda L, a, b, x, m, n: L.where(a > b, a, b)),
        ("maximum", lambda L, a, b, x, m, n: L.maximum(a, b)),
        (
            "relu, gelu, exp, clip",
            lambda L, a, b, x, m, n: (
                L.map(x, "relu") + L.map(x, "gelu") + L.map(x, "exp") + L.map(x, "clip", -1.0, 0.5)
            ),
        ),
        ("x.T", lambda L, a, b, x, m, n: x.T),
        ("transpose(2, 1, 0)", lambda L, a, b, x, m, n: x.transpose(2, 1, 0)),
        ("transpose(1, 2, 0)", lambda L, a, b, x, m, n: x.transpose(1, 2, 0)),
        ("swapaxes(0, 2)", lambda L, a, b, x, m, n: x.swapaxes(0, 2)),
        ("x[1:, ::2]", lambda L, a, b, x, m, n: x[1:, ::2]),
        ("x[::-1, 2, -3:]", lambda L, a, b, x, m, n: x[::-1, 2, -3:]),
        ("x[None, ..., 0]", lambda L, a, b, x, m, n: x[None, ..., 0]),
        ("x[-1, ::-2, 1::3]", lambda L, a, b, x, m, n: x[-1, ::-2, 1::3]),
        ("x[..., None, 2:0:-1]", lambda L, a, b, x, m, n: x[..., None, 2:0:-1]),
        ("x[2:2]", lambda L, a, b, x, m, n: x[2:2]),
        ("x[:, :1] broadcast", lambda L, a, b, x, m, n: L.broadcast_to(x[:, :1], (4, 3, 5))),
        ("reshape", lambda L, a, b, x, m, n: x.reshape(24, 5)),
        ("x.T.reshape(-1)", lambda L, a, b, x, m, n: x.T.reshape(-1)),
        ("squeeze / unsqueeze", lambda L, a, b, x, m, n: L.unsqueeze(x[:, :1].squeeze(1), 0) + x[2:3].squeeze()[:4]),
        ("(x.T + x.T)[1]", lambda L, a, b, x, m, n: (x.T + x.T)[1]),
        *[
            (
                f"{name}(axis={axis}, keepdims={keep})",
                (lambda name, axis, keep: lambda L, a, b, x, m, n: L.reduce(x, name, axis, keep))(name, axis, keep),
            )
            for name in REDUCTIONS
            for axis in (None, 0, -1, (0, 2), (2, 0, 1))
            for keep in (False, True)
        ],
        *[
            (f"{name} of specials", (lambda name: lambda L, a, b, x, m, n: L.reduce(a * b, name, 1, False))(name))
            for name in CATALOG_REDUCTIONS
        ],
        ("sum of an empty axis", lambda L, a, b, x, m, n: L.reduce(x[:, :0], "sum", 1, False)),
        ("sum over no rows", lambda L, a, b, x, m, n: L.reduce(x[:, :0], "sum", 2, True)),
        ("sum of 0-d", lambda L, a, b, x, m, n: L.reduce(x[1, 2, 3], "sum", None, False)),
        *[
            (f"softmax(axis={axis})", (lambda axis: lambda L, a, b, x, m, n: L.softmax(x * 3, axis))(axis))
            for axis in (-1, 0, 1)
        ],
        *[
            (f"log_softmax(axis={axis})", (lambda axis: lambda L, a, b, x, m, n: L.log_softmax(x * 3, axis))(axis))
            for axis in (-1, 0, 2)
        ],
        ("softmax with -inf", lambda L, a, b, x, m, n: L.softmax(L.where(x > 2, -INF, x), 1)),
        ("m @ n", lambda L, a, b, x, m, n: m @ n),
        ("x[0] @ m[0]", lambda L, a, b, x, m, n: x[0][:3, :3] @ m[0][:, :3]),
        ("1-D @ 2-D", lambda L, a, b, x, m, n: n[:, 0] @ n),
        ("2-D @ 1-D", lambda L, a, b, x, m, n: m[1] @ n[:, 1]),
        ("1-D @ 1-D", lambda L, a, b, x, m, n: L.f(n[:, 2] @ n[:, 3])),
        ("batched @ batched", lambda L, a, b, x, m, n: m @ L.broadcast_to(n, (2, 4, 5))),
        (
            "broadcast batches",
            lambda L, a, b, x, m, n: x.reshape(4, 1, 6, 5) @ L.broadcast_to(n.T, (3, 5, 4))[:, :, :2],
        ),
        ("(3, 0) @ (0, 2)", lambda L, a, b, x, m, n: m[0][:, :0] @ n[:0, :2]),
    ]


class _RefLib:
    """The operations the cross-check cases call, on Refs."""

    f = staticmethod(lambda r: r if isinstance(r, Ref) else Ref.scalar(r))
    where = staticmethod(where)
    maximum = staticmethod(lambda a, b: apply("maximum", a, b))
    map = staticmethod(lambda r, name, *params: r.map(name, *params))
    broadcast_to = staticmethod(lambda r, shape: r.broadcast_to(shape))
    unsqueeze = staticmethod(lambda r, axis: r.unsqueeze(axis))
    reduce = staticmethod(lambda r, name, axis, keep: r.reduce(name, axis, keep))
    softmax = staticmethod(lambda r, axis: r.softmax(axis))
    log_softmax = staticmethod(lambda r, axis: r.log_softmax(axis))


def _numpy_lib(np):
    from trueno_web import ops

    def reduce(r, name, axis, keep):
        if name == "norm_l1":
            return np.sum(np.abs(r), axis=axis, keepdims=keep)
        if name == "norm_l2":
            return np.sqrt(np.sum(r * r, axis=axis, keepdims=keep))
        return getattr(np, name)(r, axis=axis, keepdims=keep)

    def softmax(r, axis, log=False):
        e = np.exp(r - np.max(r, axis=axis, keepdims=True))
        s = np.sum(e, axis=axis, keepdims=True)
        return np.log(e / s) if log else e / s

    class NumpyLib:
        f = staticmethod(lambda r: np.asarray(r, dtype=np.float64))
        where = staticmethod(lambda c, a, b: np.where(c != 0, a, b))
        maximum = staticmethod(np.maximum)
        map = staticmethod(lambda r, name, *params: ops.get(name).numpy(r, *params))
        broadcast_to = staticmethod(np.broadcast_to)
        unsqueeze = staticmethod(np.expand_dims)

    NumpyLib.reduce = staticmethod(reduce)
    NumpyLib.softmax = staticmethod(softmax)
    NumpyLib.log_softmax = staticmethod(lambda r, axis: softmax(r, axis, log=True))
    return NumpyLib


@needs_numpy
def test_the_reference_matches_numpy():
    """_pyref.Ref against float64 NumPy (operators with NaN/Inf/+-0, views, reductions, softmax, matmul)."""
    import numpy as np

    rng = random.Random(11)
    refs = [
        choice(rng, (3, 1, 5), SPECIAL_VALUES),
        choice(rng, (1, 4, 1), SPECIAL_VALUES),
        uniform(rng, (4, 6, 5)),
        uniform(rng, (2, 3, 4), -1, 1),
        uniform(rng, (4, 5), -1, 1),
    ]
    arrays = [np.array(r.flat, dtype=np.float64).reshape(r.shape) for r in refs]
    lib = _numpy_lib(np)
    problems = []
    for label, fn in _xcheck_cases():
        got = fn(_RefLib, *refs)
        with np.errstate(all="ignore"):
            want = np.asarray(fn(lib, *arrays), dtype=np.float64)
        if got.shape != want.shape:
            problems.append(f"{label}: shape {got.shape}, NumPy {want.shape}")
            continue
        try:
            np.testing.assert_allclose(
                np.array(got.flat, dtype=np.float64).reshape(got.shape), want, rtol=1e-9, atol=1e-12
            )
        except AssertionError as exc:
            problems.append(f"{label}: {exc}")
    assert not problems, "\n".join(problems)
    nested = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert Ref.nested(nested).tolist() == nested and Ref.nested(nested).T.tolist() == np.array(nested).T.tolist()
