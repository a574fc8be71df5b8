"""Dtypes: every elementwise catalog op on every dtype it computes in (ops.Op.dtypes), on every backend, bit
for bit against its NumPy reference and its pure-Python one; astype between every pair of dtypes;
promotion, weak Python scalars, uploads and reads of each dtype, fusion across dtypes, and the errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import trueno_web as tw
from trueno_web import ops
from trueno_web.dtypes import DTYPES, bool_, float32, int32, py_cast, uint32
from trueno_web.errors import TruenoTypeError, TruenoValueError
from trueno_web.runtime import block_on

NP = {bool_: np.bool_, int32: np.int32, uint32: np.uint32, float32: np.float32}
SPECIAL = {
    int32: [0, 1, -1, 2, -2, 7, -7, 46341, 65536, 2**31 - 1, -(2**31), -(2**31) + 1, 2**30],
    uint32: [0, 1, 2, 7, 65535, 65536, 2**31, 2**32 - 1, 2**32 - 2, 2**16 + 1],
    bool_: [False, True],
    float32: [0.0, -0.0, 1.0, -1.5, 2.5, math.inf, -math.inf, math.nan, 1e-45, -1e-40, 3.4e38, 7.0, -7.0],
}


def values(dtype, n: int, seed: int):
    """n values of `dtype`: the special ones first, then seeded random ones (4097: past a vector's tail)."""
    rng = np.random.default_rng(seed)
    special = np.array(SPECIAL[dtype], dtype=NP[dtype])
    if dtype is bool_:
        rest = rng.integers(0, 2, n).astype(bool)
    elif dtype is float32:
        rest = rng.uniform(-100, 100, n).astype(np.float32)
    else:
        info = np.iinfo(NP[dtype])
        rest = rng.integers(info.min, int(info.max) + 1, n, dtype=np.int64).astype(NP[dtype])
    return (
        np.concatenate([special, rest])[:n] if n < len(special) else np.concatenate([special, rest[: n - len(special)]])
    )


def operands(op, dtype, n: int):
    """The op's inputs in `dtype` (a where's condition bool; shifts' amounts 0..40 and a few negative ones)."""
    xs = [values(dtype, n, seed) for seed in range(op.arity)]
    if op.name == "where":
        xs[0] = values(bool_, n, 7)
    if op.name.startswith("bitwise_") and "shift" in op.name:
        amounts = np.arange(n) % 41
        if dtype is int32:
            amounts[::13] = -3
        xs[1] = amounts.astype(NP[dtype])
    return xs


CASES = [
    pytest.param(op, d, id=f"{op.name}-{d.name}")
    for op in ops.CATALOG
    if op.elementwise and not op.params and op.name != "astype"
    for d in op.kernel_dtypes  # float64 and int64: tests/test_dtypes64.py
    if d is not float32 or op.returns == "bool"  # float32 in, float32 out: test_ops and test_accuracy
]


def equal(got, want) -> bool:
    """Bit for bit (NaN equal to NaN)."""
    return got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want, equal_nan=True)


@pytest.mark.parametrize("op,dtype", CASES)
def test_op_on_dtype(dev, op, dtype):
    xs = operands(op, dtype, 4097)
    _, out = tw.dtypes.signature(op, [dtype] * op.arity)
    got = block_on(
        getattr(tw.asarray(xs[0], dev) if op.name != "where" else tw, op.name)(
            *([tw.asarray(x, dev) for x in xs[1:]] if op.name != "where" else [tw.asarray(x, dev) for x in xs])
        ).numpy()
    )
    with np.errstate(all="ignore"):
        want = np.asarray(op.numpy(*xs)).astype(NP[out])
    assert got.dtype == NP[out]
    assert equal(got, want), f"{op.name} on {dtype}: {np.flatnonzero(got != want)[:8]}"
    python = [py_cast(op.ref(*(v.item() for v in column)), out) for column in zip(*(x[:300] for x in xs))]
    assert got[:300].tolist() == python or (dtype is float32 and np.array_equal(got[:300], python, equal_nan=True))


@pytest.mark.parametrize("to", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("src", DTYPES, ids=lambda d: d.name)
def test_astype_every_pair(dev, src, to):
    x = values(src, 300, 3)
    if src is float32:  # out-of-range floats saturate, NaN gives 0 (as the kernels and py_cast do)
        x = np.concatenate([x, np.array([-2.5, 2.5, 2**31, -(2**31) - 1e3, 4.3e9, -0.9, 0.9], np.float32)])
    got = block_on(tw.asarray(x, dev).astype(to).numpy())
    assert got.dtype == NP[to]
    want = [py_cast(v.item(), to) for v in x]
    if to is float32:
        assert np.array_equal(got, np.asarray(want, np.float32), equal_nan=True)
    else:
        assert got.tolist() == want


def test_promotion_and_weak_scalars(dev):
    i = tw.asarray(np.array([1, -2, 3], np.int32), dev)
    u = tw.asarray(np.array([1, 2, 3], np.uint32), dev)
    f = tw.asarray([0.5, 1.5, 2.5], dev)
    b = tw.asarray([True, False, True], dev)
    assert (i + f).dtype == tw.float32 and (i + 1).dtype == tw.int32 and (i * 2).dtype == tw.int32
    assert (i + 1.5).dtype == tw.float32 and (b + b).dtype == tw.int32 and (b & True).dtype == tw.bool
    assert (u + 1).dtype == tw.uint32 and (i + b).dtype == tw.int32 and (f > 1).dtype == tw.bool
    assert block_on((i * 2 + 1).numpy()).tolist() == [3, -3, 7]
    assert block_on((b + b).numpy()).tolist() == [2, 0, 2]
    assert block_on((i + f).numpy()).tolist() == [1.5, -0.5, 5.5]
    if dev.backend == "numpy":  # int32 and uint32 promote to int64, which only the numpy backend holds
        assert (i + u).dtype == tw.int64 and block_on((i + u).numpy()).tolist() == [2, 0, 6]
    else:
        with pytest.raises(TruenoTypeError, match="int64 needs backend='numpy'"):
            i + u
    with pytest.raises(TruenoValueError, match="does not fit uint32"):
        u + (-1)
    with pytest.raises(TruenoTypeError, match="bitwise_and is not defined for float32"):
        f & f
    assert block_on((i - 1).numpy()).tolist() == [0, -3, 2]  # the device is still usable


def test_int32_exact_to_2_31(dev):
    x = np.array([2**31 - 1, -(2**31), 123456789, -987654321, 2**24 + 1], np.int32)
    t = tw.asarray(x, dev)
    with np.errstate(over="ignore"):
        want = (x * np.int32(3) + np.int32(1)) - x
    assert block_on((t * 3 + 1 - t).numpy()).tolist() == want.tolist()
    assert block_on((t + 0).numpy()).tolist() == x.tolist()  # 2^24 + 1 is no float32


def test_argmax_returns_int32_and_comparisons_bool(dev):
    x = tw.asarray([[1.0, 5.0, 5.0], [math.nan, 0.0, 2.0]], dev)
    got = block_on(x.argmax(axis=1).numpy())
    assert got.dtype == np.int32 and got.tolist() == [1, 0]
    assert block_on(x.argmin().numpy()).dtype == np.int32
    assert block_on((x > 1).numpy()).dtype == np.bool_


def test_fused_chain_reads_int_and_float_writes_bool(dev2):
    i = tw.asarray(np.arange(-5, 5, dtype=np.int32), dev2)
    f = tw.asarray(np.linspace(-2, 2, 10, dtype=np.float32), dev2)
    before = dev2.stats.dispatches
    out = ((i * 2 + f) > 0) & ~(i == 0)
    got = block_on(out.numpy())
    assert dev2.stats.dispatches - before == 1
    iv, fv = np.arange(-5, 5, dtype=np.int32), np.linspace(-2, 2, 10, dtype=np.float32)
    assert got.tolist() == (((iv * 2 + fv) > 0) & ~(iv == 0)).tolist()


def test_uploads_and_reads_of_each_dtype(dev):
    assert tw.asarray([1, 2], dev).dtype == tw.int32
    assert tw.asarray([1, 2.0], dev).dtype == tw.float32
    assert tw.asarray([True, False], dev).dtype == tw.bool
    assert tw.asarray(np.array([2**31 - 1, -5], np.int64), dev).dtype == tw.int32
    assert tw.asarray(np.arange(3, dtype=np.uint8), dev).dtype == tw.uint32
    with pytest.raises(TruenoValueError, match="int32's range"):
        tw.asarray(np.array([2**40], np.int64), dev)
    for x in (np.array([True, False, True]), np.array([2**32 - 1, 0], np.uint32), np.array([-(2**31)], np.int32)):
        got = block_on(tw.asarray(x, dev).numpy())
        assert got.dtype == x.dtype and got.tolist() == x.tolist()
    arr = block_on(dev.upload(np.array([True, False])))
    assert arr.dtype == tw.bool and block_on(arr.read()).tolist() == [True, False]


def test_integer_floor_divide_and_remainder_edges(dev):
    """Python's // and % signs, 0 for a zero divisor (as NumPy), and the int32 minimum over -1 (which wraps)."""
    a = np.array([-7, 7, -7, 7, -(2**31), -(2**31), 5, 0, 2**31 - 1], np.int32)
    b = np.array([2, -2, -2, 2, -1, 1, 0, 3, -1], np.int32)
    ta, tb = tw.asarray(a, dev), tw.asarray(b, dev)
    with np.errstate(all="ignore"):
        assert block_on(ta.floor_divide(tb).numpy()).tolist() == np.floor_divide(a, b).tolist()
        assert block_on(ta.remainder(tb).numpy()).tolist() == np.remainder(a, b).tolist()
    u = np.array([7, 2**32 - 1, 5], np.uint32)
    v = np.array([2, 16, 0], np.uint32)
    got = block_on(tw.asarray(u, dev).floor_divide(tw.asarray(v, dev)).numpy())
    assert got.dtype == np.uint32 and got.tolist() == [3, 2**28 - 1, 0]


def test_integer_pow_edges(dev):
    """Exact and wrapping (NumPy's int32), a negative exponent as 1 / a ** -b toward zero (NumPy raises)."""
    a = np.array([3, -7, 46341, 2, 10, 0, 1, -1, -1, 5, 0, -(2**31)], np.int32)
    b = np.array([5, 3, 2, 31, 9, 0, -3, -3, -4, -1, -2, 1], np.int32)
    got = block_on((tw.asarray(a, dev) ** tw.asarray(b, dev)).numpy())
    with np.errstate(all="ignore"):
        want = np.where(b < 0, np.where(a == 1, 1, np.where(a == -1, 1 - 2 * (b % 2), 0)), a ** np.maximum(b, 0))
    assert got.dtype == np.int32 and got.tolist() == want.astype(np.int32).tolist()
    assert (tw.asarray(a, dev) ** 2).dtype == tw.int32 and (tw.asarray(a, dev) ** 0.5).dtype == tw.float32


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (3, 4, 2), (65, 130, 33)])
def test_integer_matmul_is_exact(dev, dtype, m, k, n):
    """matmul, x.T @ y and tensordot of integers: exact, wrapping as NumPy's int32 and uint32 products do."""
    rng = np.random.default_rng(m * k * n)
    a = rng.integers(-(2**31), 2**31, (m, k)).astype(np.int32).view(dtype)
    b = rng.integers(-(2**31), 2**31, (k, n)).astype(np.int32).view(dtype)
    ta, tb = tw.asarray(a, dev), tw.asarray(b, dev)
    got = block_on((ta @ tb).numpy())
    assert got.dtype == dtype and np.array_equal(got, a @ b)
    assert np.array_equal(block_on((tw.asarray(a.T.copy(), dev).T @ tb).numpy()), a @ b)
    assert np.array_equal(block_on(tw.tensordot(ta, tb, axes=1).numpy()), np.tensordot(a, b, axes=1).astype(dtype))


REDUCTIONS = [
    pytest.param(op, d, id=f"{op.name}-{d.name}")
    for op in ops.CATALOG
    if op.kind == "reduce" and op.arity == 1
    for d in DTYPES
    if d is not float32 and (d in op.dtypes or d is bool_ and int32 in op.dtypes)  # float32: test_ops, test_sums
]


@pytest.mark.parametrize("n", [0, 1, 255, 256, 257, 4097, 70000])
@pytest.mark.parametrize("op,dtype", REDUCTIONS)
def test_reduction_on_dtype(dev, op, dtype, n):
    """sum, prod, max and min of integers and bools, exact (sums and products wrapping as NumPy's with
    dtype=), all of it and along each axis of a 2-D view (a row of 70000: many workgroups' reach)."""
    x = values(dtype, n, 11)
    _, out = tw.dtypes.signature(op, [dtype])
    if n == 0 and not op.empty:
        with pytest.raises(TruenoValueError, match="empty"):
            getattr(tw.asarray(x, dev), op.name)()
        return
    with np.errstate(over="ignore"):
        want = np.asarray(op.numpy(x.astype(NP[out]))).astype(NP[out])
    got = block_on(getattr(tw.asarray(x, dev), op.name)().numpy())
    assert got.dtype == NP[out] and got.shape == () and got == want, (got, want)
    assert py_cast(op.ref([v.item() for v in x]), out) == want.item()
    m = x[: n - n % 5].reshape(5, -1) if n >= 5 else x.reshape(1, -1)
    t = tw.asarray(m, dev)
    for axis, keepdims in ((1, False), (0, True), (-1, True)):
        if m.shape[axis] == 0 and not op.empty:
            continue
        with np.errstate(over="ignore"):
            want = np.asarray(op.numpy(m.astype(NP[out]), axis=axis % 2)).astype(NP[out])
        got = block_on(getattr(t, op.name)(axis=axis, keepdims=keepdims).numpy())
        assert got.dtype == NP[out] and np.array_equal(got.reshape(want.shape), want), (axis, keepdims)
        assert got.ndim == (2 if keepdims else 1)


def test_reductions_of_integers_fuse_and_mean_is_float(dev):
    x = np.array([2**31 - 1, 3, -7, 2**30], np.int32)
    t = tw.asarray(x, dev)
    with np.errstate(over="ignore"):
        assert block_on((t * 3 + 1).sum().numpy()) == np.sum(x * np.int32(3) + np.int32(1), dtype=np.int32)
    assert block_on((t - 1).max().numpy()) == 2**31 - 2 and block_on(t.min().numpy()) == -7
    mean = block_on(t.mean().numpy())
    assert mean.dtype == np.float32 and mean == np.float32(np.mean(x.astype(np.float64)))
    assert block_on(t.reshape(2, 2).var(axis=1).numpy()).dtype == np.float32
    assert block_on(tw.asarray([True, False, True], dev).sum().numpy()).dtype == np.int32
