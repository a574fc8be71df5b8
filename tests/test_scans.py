"""Scans and logical reductions: cumulative_sum and cumulative_prod (the SCAN kind) on every dtype and backend
against NumPy (float32 sums within the running sum of |x|, since the GPU adds in another order; integers bit
for bit, wrapping), along every axis, with include_initial and dtype=; all, any and count_nonzero (one fused
reduction kernel); diff; the errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import trueno_web as tw
from trueno_web import ops
from trueno_web.dtypes import DTYPES, bool_, float32, int32, uint32
from trueno_web.errors import TruenoTypeError, TruenoValueError
from trueno_web.runtime import block_on

NP = {bool_: np.bool_, int32: np.int32, uint32: np.uint32, float32: np.float32}
SIZES = [0, 1, 255, 256, 257, 4097, 70000]  # 4097 > BLOCK (2048): three passes; 70000: 35 blocks in one row
SCANS = ["cumulative_sum", "cumulative_prod"]
NUMPY = {"cumulative_sum": np.cumsum, "cumulative_prod": np.cumprod}


def inputs(name: str, dtype, n: int, seed: int = 0) -> np.ndarray:
    """n values of `dtype`: for products of floats factors near 1 (no partial product leaves float32's range);
    of integers odd ones (a product never sticks at 0, so every step's wrap shows)."""
    rng = np.random.default_rng(seed)
    if dtype is bool_:
        return rng.integers(0, 2, n).astype(bool)
    if dtype is float32:
        if name == "cumulative_prod":
            a = min(1.0, 250.0 / max(n, 1)) / 4
            return (np.exp(rng.uniform(-a, a, n)) * rng.choice([-1, 1], n)).astype(np.float32)
        return rng.uniform(-100, 100, n).astype(np.float32)
    info = np.iinfo(NP[dtype])
    x = rng.integers(info.min, int(info.max) + 1, n, dtype=np.int64).astype(NP[dtype])
    return x | 1 if name == "cumulative_prod" else x


def result_dtype(dtype):
    return int32 if dtype is bool_ else dtype


def expected(name: str, x: np.ndarray, axis: int, dtype):
    """NumPy's scan in the result dtype (integers wrap), and for floats the float64 one and its tolerance per
    element: the running sum of |x| (a product's: the running product of |x| times the factors so far)."""
    out = NP[result_dtype(dtype)]
    with np.errstate(over="ignore"):
        want = NUMPY[name](x.astype(out), axis=axis, dtype=out)
    if dtype is not float32:
        return want, None
    x64 = x.astype(np.float64)
    ref = NUMPY[name](x64, axis=axis)
    op = ops.get(name)
    mag = NUMPY[name](np.abs(x64), axis=axis)
    if name == "cumulative_prod":
        count = np.cumsum(np.ones_like(x64), axis=axis)
        mag = mag * count
    return ref, op.atol * mag + op.rtol * np.abs(ref)


def check(got: np.ndarray, name: str, x: np.ndarray, axis: int, dtype) -> None:
    want, tol = expected(name, x, axis, dtype)
    assert got.dtype == NP[result_dtype(dtype)] and got.shape == want.shape
    if tol is None:
        assert np.array_equal(got, want), f"{name}: first mismatch at {np.flatnonzero(got != want)[:5]}"
    else:
        bad = np.flatnonzero(~(np.abs(got.astype(np.float64) - want) <= tol))
        assert bad.size == 0, f"{name}: {bad.size} outside tolerance, first {bad[:5]}: {got.flat[bad[:3]]}"


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", SCANS)
def test_scan_of_every_dtype_and_size(dev, name, dtype, n):
    x = inputs(name, dtype, n)
    got = block_on(getattr(tw, name)(tw.asarray(x, dev)).numpy())
    check(got, name, x, 0, dtype)


@pytest.mark.parametrize(
    "shape,axis",
    [
        *(((3, 5000), 1), ((3, 5000), 0), ((5000, 3), 0), ((2, 2049), 1), ((700, 33), -1), ((1000, 1), 1)),
        *(((2, 3, 4), 0), ((2, 3, 4), 1), ((2, 3, 4), -1), ((4, 0), 0), ((0, 4), 1)),
    ],
)
@pytest.mark.parametrize("dtype", [float32, int32], ids=lambda d: d.name)
@pytest.mark.parametrize("name", SCANS)
def test_scan_along_an_axis(dev, name, dtype, shape, axis):
    """Rows in parallel: long ones (5000, 2049: three passes each), short ones many to a workgroup (3, 33, 1:
    a segmented scan; 5000 rows of 3 take several workgroups, the last one partly), a leading axis (moved
    last, scanned, moved back), and the standard's include_initial (a leading identity: 0, or 1 for a
    product)."""
    x = inputs(name, dtype, math.prod(shape), seed=3).reshape(shape)
    t = tw.asarray(x, dev)
    check(block_on(getattr(t, name)(axis=axis).numpy()), name, x, axis, dtype)
    got = block_on(getattr(t, name)(axis=axis, include_initial=True).numpy())
    a = axis % len(shape)
    initial = np.full(shape[:a] + (1,) + shape[a + 1 :], 0 if name == "cumulative_sum" else 1, NP[dtype])
    assert np.array_equal(np.take(got, [0], axis=a), initial)
    check(np.delete(got, 0, axis=a), name, x, axis, dtype)


def test_scan_special_values(dev):
    x = np.array([1.0, np.inf, 2.0, -np.inf, 3.0], np.float32)
    y = np.array([2.0, -0.0, np.nan, 4.0], np.float32)
    with np.errstate(invalid="ignore"):
        want_sum, want_prod = np.cumsum(x), np.cumprod(y)
    assert np.array_equal(block_on(tw.asarray(x, dev).cumulative_sum().numpy()), want_sum, equal_nan=True)
    got = block_on(tw.asarray(y, dev).cumulative_prod().numpy())
    assert np.array_equal(got, want_prod, equal_nan=True) and np.signbit(got[1])  # -0.0 kept


def test_scan_integers_wrap_and_dtype_argument(dev):
    x = np.array([2**31 - 1, 1, 1, -5], np.int32)
    t = tw.asarray(x, dev)
    assert block_on(t.cumulative_sum().numpy()).tolist() == [2**31 - 1, -(2**31), -(2**31) + 1, 2**31 - 4]
    u = tw.asarray(np.array([2**32 - 1, 2, 65536, 65536], np.uint32), dev)
    assert block_on(u.cumulative_prod().numpy()).tolist() == [2**32 - 1, 2**32 - 2, 2**32 - 2**17, 0]
    b = tw.asarray(np.array([True, True, False, True]), dev)
    assert block_on(b.cumulative_sum(dtype=tw.uint32).numpy()).tolist() == [1, 2, 2, 3]
    assert block_on(b.cumulative_sum().numpy()).dtype == np.int32  # bool: the default integer


def test_scan_errors(dev):
    t = tw.asarray(np.arange(6, dtype=np.int32).reshape(2, 3), dev)
    with pytest.raises(TruenoValueError, match="axis 2 is out of range"):
        t.cumulative_sum(axis=2)
    with pytest.raises(TruenoValueError, match="needs axis="):
        t.cumulative_prod()
    with pytest.raises(TruenoValueError, match="0-d"):
        tw.asarray(np.float32(1.0), dev).cumulative_sum()
    with pytest.raises(TruenoTypeError, match="dtype=float32"):
        t.cumulative_sum(axis=1, dtype=tw.float32)  # int to float: another kind
    with pytest.raises(TruenoTypeError, match="dtype=int32"):
        tw.asarray([1.5], dev).cumulative_sum(dtype=tw.int32)
    with pytest.raises(TruenoTypeError, match="dtype=bool"):
        t.cumulative_sum(axis=0, dtype=tw.bool)
    assert block_on(t.cumulative_sum(axis=0).numpy()).tolist() == [[0, 1, 2], [3, 5, 7]]  # still usable


def dispatches(dev, t) -> tuple[np.ndarray, int]:
    before = dev.stats.dispatches
    out = block_on(t.numpy())
    return out, dev.stats.dispatches - before


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_all_any_count_nonzero(dev, dtype):
    rng = np.random.default_rng(5)
    x = (rng.integers(0, 3, (4, 70000)) * rng.integers(0, 2, (4, 1))).astype(NP[dtype])
    if dtype is float32:
        x[0, 7], x[1, :] = np.nan, -0.0  # NaN is nonzero, -0 is zero
    t = tw.asarray(x, dev)
    for axis, keepdims in ((None, False), (1, False), (0, True), ((0, 1), True), (-1, True)):
        for name in ("all", "any", "count_nonzero"):
            got = block_on(getattr(t, name)(axis=axis, keepdims=keepdims).numpy())
            want = getattr(np, name)(x, axis=axis, **({"keepdims": keepdims} if name != "count_nonzero" else {}))
            if name == "count_nonzero":
                want = np.asarray(want, np.int32)
                want = want.reshape(got.shape) if keepdims else want
                assert got.dtype == np.int32
            else:
                assert got.dtype == np.bool_
            assert np.array_equal(got, want), (name, axis, keepdims)


def test_logical_reductions_fuse_and_take_empty_axes(dev):
    x = np.arange(-3, 5000, dtype=np.int32)
    flags = tw.asarray(x != 0, dev)
    for name, plain in (("any", "max"), ("all", "min"), ("count_nonzero", "sum")):
        got, n = dispatches(dev, getattr(tw.asarray(x, dev) * 2, name)())  # the product and bool read: fused
        _, reference = dispatches(dev, getattr(flags, plain)())
        assert n == reference, (name, n, reference)
        assert got == getattr(np, name)(x * 2)
    e = tw.asarray(np.zeros((0, 3), np.float32), dev)
    assert block_on(e.any(axis=0).numpy()).tolist() == [False] * 3
    assert block_on(e.all(axis=0, keepdims=True).numpy()).tolist() == [[True] * 3]
    assert block_on(e.all().numpy()) and not block_on(e.any().numpy())
    assert block_on(e.count_nonzero(axis=0).numpy()).tolist() == [0, 0, 0]
    for name in ("all", "any", "count_nonzero"):
        with pytest.raises(TruenoValueError, match=f"{name}: axis 2 is out of range"):
            getattr(e, name)(axis=2)


def test_diff(dev):
    x = np.array([[1, 4, 9, 16, 2**31 - 1], [0, -1, 5, 5, -(2**31)]], np.int32)
    t = tw.asarray(x, dev)
    with np.errstate(over="ignore"):
        for kw in ({}, {"n": 2}, {"axis": 0}, {"n": 0}, {"n": 7}, {"prepend": 0}, {"append": x[:, :1]}):
            want = np.diff(x, **{k: np.int32(v) if isinstance(v, int) else v for k, v in kw.items()})
            args = {k: tw.asarray(v, dev) if isinstance(v, np.ndarray) else v for k, v in kw.items()}  # 0: weak
            got = block_on(t.diff(**args).numpy())
            assert got.dtype == want.dtype and np.array_equal(got, want), kw
    f = np.array([1.0, np.inf, np.nan, 2.5], np.float32)
    with np.errstate(invalid="ignore"):
        assert np.array_equal(block_on(tw.diff(tw.asarray(f, dev)).numpy()), np.diff(f), equal_nan=True)
    b = np.array([True, False, False, True])
    assert block_on(tw.asarray(b, dev).diff().numpy()).tolist() == np.diff(b).tolist()
    with pytest.raises(TruenoValueError, match="n is a non-negative int"):
        t.diff(n=-1)
    with pytest.raises(TruenoValueError, match="out of range"):
        t.diff(axis=2)


def test_scan_gradients(dev):
    x = np.array([[0.5, -2.0, 1.5], [3.0, 0.25, -1.0]], np.float32)
    w = np.array([[1.0, 2.0, -1.0], [0.5, -3.0, 2.0]], np.float32)
    t, wt = tw.asarray(x, dev), tw.asarray(w, dev)
    got = block_on(tw.grad(lambda a: (a.cumulative_sum(axis=0) * wt).sum())(t).numpy())
    assert np.allclose(got, np.flip(np.cumsum(np.flip(w, 0), 0), 0))
    got = block_on(tw.grad(lambda a: (a.cumulative_prod(axis=1) * wt).sum())(t).numpy())
    y = np.cumprod(x.astype(np.float64), 1)
    want = np.flip(np.cumsum(np.flip(w * y, 1), 1), 1) / x
    assert np.allclose(got, want, rtol=1e-5)
