"""Sorting and set functions (tensor/sorting.py, the sort and search kinds): sort, argsort, topk, searchsorted
and unique_* on every backend and dtype, bit for bit against NumPy's stable sort, searchsorted and unique
(and the pure-Python references on small sizes): awkward lengths (around the 2048-pair block of the GPU's
workgroup sort, past it into the global merge), many ties (stability shows in argsort), NaN, +-inf, -0.0 and
integer extremes, every axis of 2-D and 3-D tensors, descending, and the errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import trueno_web as tw
from trueno_web.dtypes import DTYPES, bool_, float32, int32, uint32
from trueno_web.errors import LimitError, TruenoTypeError, TruenoValueError, UnavailableError
from trueno_web.kernels import sort_radix
from trueno_web.runtime import block_on
from trueno_web.sort_kinds import np_argsort, np_sort, py_argsort, py_sort
from trueno_web.tensor import sorting

NP = {bool_: np.bool_, int32: np.int32, uint32: np.uint32, float32: np.float32}
SIZES = (0, 1, 2, 3, 255, 256, 257, 1000, 4097, 70000)
EXTREMES = {
    bool_: [True, False],
    int32: [2**31 - 1, -(2**31), -(2**31) + 1, 0, -1],
    uint32: [2**32 - 1, 2**31, 0, 2**32 - 2],
    float32: [math.nan, math.inf, -math.inf, -0.0, 0.0, 3.4e38, -3.4e38, 1e-45, -1e-45, math.nan],
}


def tied(dtype, n: int, seed: int = 0):
    """n values of `dtype` with many ties (a few dozen distinct), the extremes spread through them."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, n).astype(bool) if dtype is bool_ else rng.integers(0, 40, n).astype(NP[dtype])
    if dtype in (int32, float32):
        x = x - NP[dtype](20)
    special = np.array(EXTREMES[dtype], dtype=NP[dtype])
    if n:
        x[rng.integers(0, n, min(n, 3 * len(special)))] = np.resize(special, min(n, 3 * len(special)))
    return x


def words(dtype, shape, seed: int = 0):
    """Random values of `dtype` over its whole range (float32: every bit pattern, so NaNs of many payloads and
    signs, subnormals), the extremes spread through them: every digit of every radix pass varies."""
    rng = np.random.default_rng(seed)
    if dtype is bool_:
        return rng.integers(0, 2, shape).astype(bool)
    x = rng.integers(0, 2**32, shape, dtype=np.uint32).view(NP[dtype])
    special = np.resize(np.array(EXTREMES[dtype], NP[dtype]), 3 * len(EXTREMES[dtype]))
    x.flat[rng.integers(0, x.size, special.size)] = special
    return x


def same(got, want) -> bool:
    """Equal dtype, shape and bits (float32: -0.0 apart from 0.0, NaN equal to NaN)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype == np.float32:
        return np.array_equal(got.view(np.uint32), want.view(np.uint32))
    return np.array_equal(got, want)


def read(t):
    return block_on(t.numpy())


# ---------------------------------------------------------------- sort and argsort


@pytest.mark.parametrize("n", SIZES, ids=lambda n: f"n{n}")
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_sort_and_argsort_every_dtype_and_length(dev, dtype, n):
    x = tied(dtype, n, seed=n)
    t = tw.asarray(x, dev)
    for descending in (False, True):
        values, order = t.sort(descending=descending), t.argsort(descending=descending)
        got_values, got_order = read(values), read(order)
        assert same(got_values, np_sort(x, descending)), (dtype, n, descending)
        assert same(got_order, np_argsort(x, descending)), (dtype, n, descending)
        if n <= 300:  # the pure-Python references agree
            assert got_order.tolist() == py_argsort(x.tolist(), descending)
            assert same(np.array(py_sort(x.tolist(), descending), NP[dtype]).reshape(-1), got_values)


@pytest.mark.parametrize("shape", [(0, 4097), (0, 3), (3, 0)], ids=str)
def test_no_rows_or_empty_rows_sort_to_nothing(dev, shape):
    """Found by test_reliability's hypothesis run: no rows of a long length once asked for a chunk of 0 rows."""
    x = np.zeros(shape, np.float32)
    t = tw.asarray(x, dev)
    assert same(read(t.sort()), x) and same(read(t.argsort()), np.zeros(shape, np.int32))
    assert same(read(tw.asarray(np.ones(5, np.float32), dev).sort()), np.ones(5, np.float32))  # still usable


def test_ascending_order_is_numpys_and_descending_its_flip():
    """The references themselves: NaN last, ties in input order; descending keeps ties in input order."""
    x = np.array([2.0, np.nan, -0.0, 1.0, 0.0, np.nan, 2.0], np.float32)
    assert np_argsort(x).tolist() == [2, 4, 3, 0, 6, 1, 5] == py_argsort(x.tolist())
    assert np_argsort(x, True).tolist() == [1, 5, 0, 6, 3, 2, 4] == py_argsort(x.tolist(), True)


@pytest.mark.parametrize("shape", [(7, 300), (3, 4, 5), (2, 5000, 3), (3, 2, 2049)], ids=str)
def test_along_every_axis(dev, shape):
    x = tied(float32, math.prod(shape), seed=len(shape)).reshape(shape)
    t = tw.asarray(x, dev)
    for axis in [*range(len(shape)), -1]:
        for descending in (False, True):
            want_order = np.moveaxis(np_argsort(np.moveaxis(x, axis, -1), descending), -1, axis)
            want_values = np.moveaxis(np_sort(np.moveaxis(x, axis, -1), descending), -1, axis)
            assert same(read(t.argsort(axis=axis, descending=descending)), want_order), (axis, descending)
            assert same(read(tw.sort(t, axis=axis, descending=descending)), want_values), (axis, descending)


def test_many_short_rows_and_a_device_call(dev):
    """70000 rows of 3 (many rows per workgroup) through the device's one-shot call, and int32 rows."""
    x = tied(int32, 210000, seed=5).reshape(70000, 3)
    assert same(block_on(dev.argsort(x)), np_argsort(x))
    assert same(block_on(dev.sort(x, descending=True)), np_sort(x, True))


def test_sort_of_a_fused_chain_and_a_view(dev):
    """The input of a sort may be an elementwise chain or a strided view: it is made row-major first."""
    x = tied(float32, 6 * 4100, seed=9).reshape(6, 4100)
    t = tw.asarray(x, dev)
    got = read((t * 2.0 + 1.0).sort() - 1.0)
    with np.errstate(over="ignore"):  # 3.4e38 * 2: inf, as on the devices
        assert same(got, np_sort(x * np.float32(2) + np.float32(1)) - np.float32(1))
    assert same(read(t.T.argsort()), np_argsort(x.T))
    assert same(read(t[:, ::-3].sort(axis=0)), np.sort(x[:, ::-3], 0, kind="stable"))


def test_long_rows_in_chunks_on_a_small_grid(gpu, monkeypatch):
    """Rows whose scratch passes the binding limit run in chunks of rows; a 2-D grid of 3 per dimension
    covers every kernel's grid arithmetic; a row past the limit itself raises LimitError."""
    monkeypatch.setattr(gpu.executor.caps, "binding_limit", 8 * 4096 * 2)  # two padded rows of 3000 a chunk
    monkeypatch.setattr(gpu.executor.caps, "max_per_dim", 3)
    x = tied(float32, 5 * 3000, seed=11).reshape(5, 3000)
    t = tw.asarray(x, gpu)
    for descending in (False, True):
        assert same(read(t.argsort(descending=descending)), np_argsort(x, descending))
        assert same(read(t.sort(descending=descending)), np_sort(x, descending))
    with pytest.raises(LimitError, match="past this GPU's binding limit"):
        read(tw.asarray(tied(float32, 9000), gpu).sort())
    assert same(read(t.sort(axis=0)), np_sort(x.T).T)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_long_rows_of_every_bit_pattern(dev, dtype):
    """Rows past the GPU's 2048-pair block (its radix sort): two rows of 5000 (no whole number of tiles), a row
    of 4097 equal keys (float32: -0.0 and 0.0 mixed, which come back as they were, in input order) and one
    row of 65537, ascending and descending."""
    equal = np.full((1, 4097), words(dtype, 1, 2)[0])
    if dtype is float32:
        equal = np.where(np.arange(4097) % 3 == 0, -0.0, 0.0).astype(np.float32)[None]
    for x in (words(dtype, (2, 5000), 1), equal, words(dtype, 65537, 3)):
        t = tw.asarray(x, dev)
        for descending in (False, True):
            assert same(read(t.sort(descending=descending)), np_sort(x, descending)), (x.shape, descending)
            assert same(read(t.argsort(descending=descending)), np_argsort(x, descending)), (x.shape, descending)


RADIX_SETTINGS = [  # kernels/sort_radix.py's constants other than the defaults
    dict(BITS=4, THREADS=64, PER=3, SUBGROUPS=False, UNROLL=False),
    dict(THREADS=32, PER=5, SUBGROUPS=False),
    dict(THREADS=64, PER=2, STAGED=False, SUBGROUPS=False),
    dict(THREADS=64, PER=3, SG_MIN=8, NARROW=0, UNROLL=False),
    dict(BITS=4, THREADS=128, PER=5, STAGED=False, SG_MIN=4),
    dict(SUBGROUPS=False),
]


@pytest.mark.parametrize("settings", RADIX_SETTINGS, ids=lambda d: " ".join(f"{k}={v}" for k, v in d.items()))
def test_radix_sort_constants(gpu, monkeypatch, settings):
    """The radix sort's tuning constants other than the defaults: 4-bit digits (8 passes), fewer threads than
    digits, keys a thread and counts a scan thread that divide nothing, rows of more scan chunks than one
    carry tile holds, keys written straight to their places (not staged), the loops over a thread's keys as
    WGSL loops (not written out); ranked by workgroup masks (SUBGROUPS off: the core WebGPU kernels) and by
    subgroup ballots (SG_MIN 8 or 4: lavapipe's subgroups of 8 lanes rank by one-word ballots, or by four-word
    ones with NARROW 0). With the default SG_MIN (the other tests' kernels) lavapipe's subgroups are under it:
    its workgroups choose masks at run time."""
    for name, value in {"SCAN_PER": 3, **settings}.items():
        monkeypatch.setattr(sort_radix, name, value)
    gpu.executor.forget()  # the session device's kept dispatches of this structure were built from other constants
    try:
        x = words(float32, (2, 6001), seed=len(settings))
        t = tw.asarray(x, gpu)
        for descending in (False, True):
            assert same(read(t.sort(descending=descending)), np_sort(x, descending)), descending
            assert same(read(t.argsort(descending=descending)), np_argsort(x, descending)), descending
    finally:
        gpu.executor.forget()


# ---------------------------------------------------------------- topk


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_topk(dev, dtype):
    x = tied(dtype, 5 * 700, seed=3).reshape(5, 700)
    t = tw.asarray(x, dev)
    for axis, k in ((-1, 10), (0, 5), (1, 0), (1, 700)):
        for largest in (True, False):
            values, indices = t.topk(k, axis=axis, largest=largest)
            order = np.moveaxis(np_argsort(np.moveaxis(x, axis, -1), largest), -1, axis)
            want_indices = np.take(order, np.arange(k), axis=axis)
            assert same(read(indices), want_indices), (axis, k, largest)
            assert same(read(values), np.take_along_axis(x, want_indices, axis)), (axis, k, largest)


# ---------------------------------------------------------------- searchsorted


@pytest.mark.parametrize("sizes", [(0, 5), (1, 4097), (1000, 0), (1000, 70000), (70000, 1000)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_searchsorted(dev, dtype, sizes):
    n, m = sizes
    x1 = np.sort(tied(dtype, n, seed=n), kind="stable")
    x2 = tied(dtype, m, seed=m + 1)
    for side in ("left", "right"):
        got = read(tw.searchsorted(tw.asarray(x1, dev), tw.asarray(x2, dev), side=side))
        assert same(got, np.searchsorted(x1, x2, side).astype(np.int32)), side


def test_searchsorted_shapes_sorter_and_promotion(dev):
    x1 = np.array([3.0, np.nan, -1.0, 2.0, 2.0, -0.0], np.float32)
    sorter = np.argsort(x1, kind="stable")
    x2 = np.array([[2.0, 0.0], [np.nan, -np.inf]], np.float32)
    t1 = tw.asarray(x1, dev)
    got = read(t1.searchsorted(tw.asarray(x2, dev), side="right", sorter=tw.asarray(sorter.astype(np.int32), dev)))
    assert same(got, np.searchsorted(x1, x2, "right", sorter).astype(np.int32))
    ints = tw.asarray(np.array([1, 3, 5], np.int32), dev)
    assert read(ints.searchsorted(tw.asarray(np.array([2.5, 5.0], np.float32), dev))).tolist() == [1, 2]
    assert read(ints.searchsorted(3)).tolist() == 1


# ---------------------------------------------------------------- unique


@pytest.mark.parametrize("shape", [(), (0,), (1,), (4097,), (30, 70)], ids=str)  # (): inverse_indices 0-d too
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_unique_all(dev, dtype, shape):
    x = tied(dtype, math.prod(shape), seed=7).reshape(shape)
    u = tw.unique_all(tw.asarray(x, dev))
    values, index, inverse, counts = np.unique(
        x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False
    )
    assert np.array_equal(read(u.values), values, equal_nan=True) and read(u.values).dtype == x.dtype
    assert same(read(u.indices), index.astype(np.int32))
    assert same(read(u.inverse_indices), inverse.reshape(shape).astype(np.int32))
    assert same(read(u.counts), counts.astype(np.int32))
    t = tw.asarray(x, dev)
    assert np.array_equal(read(t.unique_values()), values, equal_nan=True)
    assert same(read(t.unique_counts().counts), counts.astype(np.int32))
    assert same(read(t.unique_inverse().inverse_indices), inverse.reshape(shape).astype(np.int32))


def test_unique_nans_are_each_distinct_and_zeros_one(dev):
    x = np.array([np.nan, 0.0, -0.0, np.nan, 1.0], np.float32)
    u = tw.asarray(x, dev).unique_counts()
    assert np.array_equal(read(u.values), [0.0, 1.0, np.nan, np.nan], equal_nan=True)
    assert read(u.counts).tolist() == [2, 1, 1, 1]


def test_unique_without_numpy(dev, monkeypatch):
    """Where NumPy is missing (Pyodide without it) reads are NDResults and the results are built from lists."""
    monkeypatch.setattr(tw.host, "numpy_available", lambda: False)
    u = tw.asarray([3.0, math.nan, -0.0, 1.0, 0.0, 3.0, math.nan], dev).unique_all()
    got = [read(x) for x in u]
    assert all(type(g) is tw.NDResult for g in got)
    want = [[-0.0, 1.0, 3.0, math.nan, math.nan], [2, 3, 0, 1, 6], [2, 3, 0, 1, 0, 2, 4], [2, 1, 2, 1, 1]]
    assert [repr(g.tolist()) for g in got] == [repr(w) for w in want]


def test_unique_without_synchronous_reads_says_so(dev, monkeypatch):
    monkeypatch.setattr(sorting, "sync_available", lambda: False)
    with pytest.raises(UnavailableError, match="await t.numpy"):
        tw.asarray(np.array([1.0, 2.0], np.float32), dev).unique_values()


# ---------------------------------------------------------------- errors


def test_errors_say_what_to_do_and_leave_the_device_usable(dev):
    t = tw.asarray(np.array([[3.0, 1.0], [2.0, 0.0]], np.float32), dev)
    with pytest.raises(TruenoValueError, match="axis 2 is out of range"):
        t.sort(axis=2)
    with pytest.raises(TruenoValueError, match="axis -3 is out of range"):
        t.argsort(axis=-3)
    with pytest.raises(TruenoValueError, match="0-d"):
        tw.asarray(1.0, dev).sort()
    with pytest.raises(TruenoValueError, match="k must be an int from 0 to 2"):
        t.topk(3)
    with pytest.raises(TruenoValueError, match="k must be"):
        t.topk(-1)
    with pytest.raises(TruenoTypeError, match="descending must be True or False"):
        t.sort(descending="yes")
    with pytest.raises(TruenoTypeError, match="descending must be True or False"):
        block_on(dev.sort([1.0, 2.0], descending=1))
    with pytest.raises(TruenoValueError, match="1-D sorted x1"):
        t.searchsorted(t)
    with pytest.raises(TruenoValueError, match='side must be "left" or "right"'):
        t.reshape(-1).searchsorted(t, side="middle")
    with pytest.raises(TruenoValueError, match="sorter must be integer indices"):
        t.reshape(-1).searchsorted(t, sorter=t)
    assert read(t.sort(axis=0)).tolist() == [[2.0, 0.0], [3.0, 1.0]]


@pytest.mark.parametrize("descending", [False, True])
def test_sort_gradient_goes_back_through_the_stable_argsort(dev, descending):
    """d/dx sum(sort(x) * w) puts w[i] where the i-th sorted value came from (ties: the stable order), along
    any axis; against NumPy's stable argsort."""
    rng = np.random.default_rng(4)
    x = rng.integers(-3, 4, (3, 7)).astype(np.float32)  # many ties
    w = rng.standard_normal((3, 7)).astype(np.float32)
    for axis in (0, 1):
        g = tw.grad(lambda a: (a.sort(axis=axis, descending=descending) * tw.asarray(w, dev)).sum())(tw.asarray(x, dev))
        order = np.argsort(-x if descending else x, axis=axis, kind="stable")
        want = np.zeros_like(w)
        np.put_along_axis(want, order, w, axis=axis)
        np.testing.assert_array_equal(read(g), want)
