"""complex64 and complex128 on the numpy backend: every catalog row that computes in them against NumPy (complex128
rounded once, as the rows compute) on inf, NaN and signed-zero components; promotion and weak Python complex
scalars; real/imag/conj/abs, reductions, vecdot's conjugate, astype, asarray and reads; and the TruenoTypeError
that names backend='numpy' on the backends that hold no complex dtype, each device still usable after."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import trueno_web as tw
from trueno_web import ops
from trueno_web.dtypes import COMPLEX, bool_, complex64, complex128, float32, float64, int32
from trueno_web.runtime import block_on

NP = {complex64: np.complex64, complex128: np.complex128}
PARTS = [0.0, -0.0, 1.5, -2.25, math.inf, -math.inf, math.nan, 1e-3, 7.0]
# every pair of awkward components (81 values), then a few random ones
AWKWARD = [complex(a, b) for a, b in itertools.product(PARTS, PARTS)]


def cplx(re, im):
    """re + im j with the signs of both zeros (complex arithmetic on 0j would lose them)."""
    out = np.empty(np.shape(re), np.complex128)
    out.real, out.imag = re, im
    return out


def standard_expm1(z):
    """The standard's special values are exp's, minus 1 (NumPy's complex expm1 gives NaN for every one); of a
    zero, 0 + 0j with a +0 real part (NumPy's keeps -0's sign)."""
    zero = cplx(np.zeros(np.shape(z)), z.imag)
    return np.where(z == 0, zero, np.where(np.isfinite(z), np.expm1(z), np.exp(z) - 1))


def standard_tanh(z):
    """tanh(+-inf + b j) of a finite b is +-1 + 0j with b's sign (C99's, NumPy's: sin(2 b)'s)."""
    return np.where(np.isinf(z.real) & np.isfinite(z.imag), cplx(np.sign(z.real), np.copysign(0.0, z.imag)), np.tanh(z))


# NumPy's own functions, named independently of the rows' references (a row's `numpy` is one of these, or
# the same in complex128 rounded once), and the two where the standard's special values are not NumPy's
NUMPY = {
    "neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "square": np.square,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh, "tanh": standard_tanh,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "log1p": np.log1p, "expm1": standard_expm1, "log2": np.log2, "log10": np.log10,
    "sign": np.sign, "reciprocal": np.reciprocal, "positive": np.positive, "real": np.real, "imag": np.imag,
    "conj": np.conjugate, "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "copy": np.copy,
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "pow": np.power, "eq": np.equal,
    "ne": np.not_equal,
}  # fmt: skip
ROWS = [op for op in ops.CATALOG if op.elementwise and complex64 in op.dtypes and op.name not in ("where", "astype")]


def values(dtype, n_random: int = 15, seed: int = 0):
    rng = np.random.default_rng(seed)
    rest = rng.uniform(-3, 3, n_random) + 1j * rng.uniform(-3, 3, n_random)
    return np.array(AWKWARD + list(rest), NP[dtype])


def same(got, want, rtol: float) -> bool:
    """Dtypes alike; a finite result within rtol of NumPy's in magnitude (|got - want| <= rtol |want|, complex
    rounding's measure); a non-finite one NaN in the components NumPy's is, infinite where it is, its finite
    component close; zeros' signs alike."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.kind == "b":
        return bool(np.array_equal(got, want))
    g, w = got.astype(np.complex128), want.astype(np.complex128)
    finite = np.isfinite(w)
    if (np.isfinite(g) != finite).any() or (np.abs(g[finite] - w[finite]) > rtol * np.abs(w[finite])).any():
        return False
    for gp, wp in ((g.real, w.real), (g.imag, w.imag)):
        odd = ~finite & ~np.isnan(wp)
        if (np.isnan(gp) != np.isnan(wp)).any() or not np.isclose(gp[odd], wp[odd], rtol=rtol, atol=rtol).all():
            return False
        zeros = (gp == 0) & (wp == 0)
        if (np.signbit(gp[zeros]) != np.signbit(wp[zeros])).any():
            return False
    return True


def test_every_complex_row_has_its_numpy_function():
    assert {op.name for op in ROWS} == set(NUMPY)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("op", ROWS, ids=lambda op: op.name)
def test_complex_row_against_numpy(cpu, op, dtype):
    xs = [values(dtype, seed=s) for s in range(op.arity)]
    if op.arity == 2:  # every pair of awkward values, once
        pairs = list(itertools.product(AWKWARD[::4], AWKWARD[::4]))
        xs = [np.array([p[i] for p in pairs], NP[dtype]) for i in range(2)]
    ts = [tw.asarray(x, device=cpu, dtype=dtype) for x in xs]
    got = block_on(getattr(ts[0], op.name)(*ts[1:]).numpy())
    with np.errstate(all="ignore"):
        want = NUMPY[op.name](*[x.astype(np.complex128) for x in xs])
    _, out = tw.dtypes.signature(op, [dtype] * op.arity)
    want = want.astype({bool_: np.bool_, float32: np.float32, float64: np.float64, **NP}[out])
    assert same(got, want, rtol=4e-6 if dtype is complex64 else 1e-14), (op.name, got[:8], want[:8])


def test_promotion_and_weak_complex_scalars(cpu):
    for a, b in itertools.product((float32, float64, complex64, complex128), repeat=2):
        assert tw.result_type(a, b).name == np.result_type(a.name, b.name).name, (a, b)
    assert tw.result_type(int32, complex64) is complex64  # an integer beside a float kind: that one
    f32, f64 = tw.asarray([1.5], device=cpu), tw.asarray([1.5], device=cpu, dtype=tw.float64)
    c64 = tw.asarray([1 + 2j], device=cpu)
    assert (f32 + 1j).dtype is complex64 and (f64 * 2j).dtype is complex128 and (c64 + 2.5).dtype is complex64
    assert (tw.asarray([3], device=cpu) - 1j).dtype is complex64 and (c64 + f64).dtype is complex128
    assert block_on((f32 + 1j).numpy()).tolist() == [1.5 + 1j]
    assert tw.isdtype(complex64, "complex floating") and tw.isdtype(complex128, "numeric")
    assert not tw.isdtype(complex64, "real floating") and not tw.isdtype(float64, "complex floating")
    assert tw.can_cast(float32, complex64) and tw.can_cast(complex64, complex128)
    assert not tw.can_cast(float64, complex64) and not tw.can_cast(complex64, float32)
    for d, f in ((complex64, np.float32), (complex128, np.float64)):
        info = tw.finfo(d)
        assert info.dtype == np.dtype(f).name and info.eps == np.finfo(f).eps and info.max == np.finfo(f).max


def test_components_reductions_and_vecdot(cpu):
    x = values(complex64, seed=3).reshape(6, 16)
    t = tw.asarray(x, device=cpu)
    for name, want in (("real", x.real), ("imag", x.imag), ("conj", np.conj(x)), ("abs", np.abs(x))):
        got = block_on(getattr(tw, name)(t).numpy())
        assert same(got, want, 0), name
    finite = np.where(np.isfinite(x), x, 0.5 - 0.25j)
    tf = tw.asarray(finite, device=cpu)
    for name, want in (("sum", finite.sum(1)), ("prod", finite.prod(1)), ("mean", finite.mean(1))):
        got = block_on(getattr(tf, name)(axis=1).numpy())
        assert got.dtype == np.complex64 and np.allclose(got, want, rtol=1e-5, atol=1e-5), name
    y = (finite[::-1] * 1j).astype(np.complex64)
    got = block_on(tw.vecdot(tf, tw.asarray(y, device=cpu)).numpy())
    assert np.allclose(got, np.vecdot(finite, y), rtol=1e-5, atol=1e-5)  # conj of the first argument
    assert not np.allclose(got, (finite * y).sum(-1), rtol=1e-5, atol=1e-5)


def test_astype_asarray_and_reads(cpu):
    x = np.array([1 + 2j, -0.0 - 1j, math.inf + math.nan * 1j, 0j], np.complex128)
    t = tw.asarray(x, device=cpu, dtype=tw.complex128)
    assert block_on(t.numpy()).tobytes() == x.tobytes()  # bit for bit, NaN and -0 included
    assert tw.asarray(x, device=cpu).dtype is complex64  # NumPy's complex128 as the default complex
    assert tw.asarray([1j, 2, True], device=cpu).dtype is complex64 and tw.asarray(2j, device=cpu).dtype is complex64
    assert block_on(tw.asarray([[1j, 2]], device=cpu).numpy()).tolist() == [[1j, 2 + 0j]]
    assert complex(t[0]) == 1 + 2j and block_on(t[1].item()) == complex(-0.0, -1.0)
    assert block_on(t.astype(tw.complex64).numpy()).dtype == np.complex64
    assert block_on(t.astype(tw.bool).numpy()).tolist() == [True, True, True, False]
    r = tw.asarray([1.5, -0.0], device=cpu)
    assert block_on(r.astype(tw.complex128).numpy()).tolist() == [1.5 + 0j, complex(-0.0, 0.0)]
    with pytest.raises(tw.TruenoTypeError, match=r"real\(x\) or tw.imag\(x\)"):
        t.astype(tw.float64)
    with pytest.raises(tw.TruenoTypeError, match="drop a component"):
        tw.asarray(x, device=cpu, dtype=tw.float32)
    with pytest.raises(tw.TruenoTypeError, match="drop a component"):
        tw.asarray([1j], device=cpu, dtype=tw.float32)
    with pytest.raises(tw.TruenoTypeError, match="not defined for complex64"):
        tw.asarray([1j], device=cpu) < 1  # no order on complex numbers
    assert block_on((r + 1).numpy()).tolist() == [2.5, 1.0]  # the device still works


def test_backends_without_complex_refuse_it(dev):
    if dev.backend == "numpy":
        assert block_on((tw.asarray([1.0], device=dev) * 1j).numpy()).tolist() == [1j]
        return
    for make in (
        lambda: tw.asarray(np.array([1 + 1j], np.complex64), device=dev),
        lambda: tw.asarray([2j], device=dev),
        lambda: tw.asarray([1.0], device=dev) + 1j,
        lambda: tw.asarray([1.0], device=dev).astype(tw.complex64),
        lambda: tw.full((2,), 1j, device=dev),
    ):
        with pytest.raises(tw.TruenoTypeError, match="complex64 needs backend='numpy'"):
            make()
    assert "complex64" not in tw.__array_namespace_info__().dtypes(device=dev)
    assert block_on((tw.asarray([1.0, 2.0], device=dev).real() * 2).numpy()).tolist() == [2.0, 4.0]
