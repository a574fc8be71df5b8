"""Indexing by data on every backend and dtype, bit for bit against NumPy's indexing of the same arrays: take,
take_along_axis, integer-array and boolean-mask indexing with NumPy's shape rules, nonzero, item assignment,
scatter_add with duplicates; the catalog's take and scatter_add against their pure-Python references; fusion
(an embedding lookup is one kernel); gradients against finite differences; and the mistakes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_autodiff import check

import trueno_web as tw
from trueno_web import ops
from trueno_web.dtypes import DTYPES, bool_, float32, int32, uint32
from trueno_web.errors import TruenoTypeError, TruenoValueError, UnavailableError
from trueno_web.runtime import block_on

NP = {bool_: np.bool_, int32: np.int32, uint32: np.uint32, float32: np.float32}
SPECIAL = {
    float32: [math.nan, -0.0, math.inf, -math.inf, 1e-45, 3.4e38, -1.5],
    int32: [2**31 - 1, -(2**31), -1, 0],
    uint32: [2**32 - 1, 2**31, 0, 1],
    bool_: [True, False],
}
DT = [pytest.param(d, id=d.name) for d in DTYPES]


def data(dtype, shape, seed=0):
    """An array of `dtype` and `shape`: its special values (NaN, -0, inf, extremes) first, then random ones."""
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    rest = rng.integers(-1000, 1000, n) if dtype is not uint32 else rng.integers(0, 2000, n)
    out = rest.astype(NP[dtype]) if dtype is not bool_ else rest % 2 == 1
    special = np.array(SPECIAL[dtype], dtype=NP[dtype])[:n]
    out[: len(special)] = special
    return out.reshape(shape)


def same(got, want):
    """Bit for bit: shape, dtype and values (NaN where NaN, -0 where -0)."""
    got = block_on(got.numpy()) if isinstance(got, tw.Tensor) else got
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    assert got.tobytes() == np.ascontiguousarray(want).tobytes(), (got, want)


I = np.int32  # the index dtype
GETS = {  # name -> the index NumPy and trueno_web both apply to a (3, 4, 5) array
    "x[idx]": lambda: np.array([2, 0, -1, 2], I),
    "x[:, idx]": lambda: (slice(None), np.array([[3, -4], [0, 1]], I)),
    "x[idx1, idx2]": lambda: (np.array([2, 0, -3], I), np.array([[1], [3]], I)),
    "x[idx, :, idx2]": lambda: (np.array([1, 2], I), slice(None), np.array([4, -5], I)),
    "x[0, :, list]": lambda: (0, slice(None), [1, 2, 1]),
    "x[..., idx]": lambda: (Ellipsis, np.array([0, 4], I)),
    "x[None, idx, 1:3]": lambda: (None, np.array([[2]], I), slice(1, 3)),
    "x[idx, ::-2] (uint32)": lambda: (np.array([2, 1], np.uint32), slice(None, None, -2)),
    "x[empty]": lambda: np.zeros(0, I),
    "x[:, empty, 0]": lambda: (slice(None), np.zeros((0, 2), I), 0),
}


@pytest.mark.parametrize("dtype", DT)
@pytest.mark.parametrize("name", list(GETS))
def test_integer_array_indexing_matches_numpy(dev, dtype, name):
    xn = data(dtype, (3, 4, 5))
    index = GETS[name]()
    same(dev.tensor(xn)[index], xn[index])


@pytest.mark.parametrize("dtype", DT)
def test_device_indices_and_a_strided_base(dev, dtype):
    xn = data(dtype, (6, 5), seed=1)
    ids = np.array([[5, -1], [0, -6]], I)
    same(dev.tensor(xn).T[:, dev.tensor(ids)], xn.T[:, ids])
    same(dev.tensor(xn)[dev.tensor(ids), dev.tensor(np.array([4, 0], I))], xn[ids, np.array([4, 0])])


@pytest.mark.parametrize("dtype", DT)
def test_take_and_take_along_axis(dev, dtype):
    xn = data(dtype, (4, 6), seed=2)
    idx = np.array([[5, 0, -2]], I)
    same(dev.tensor(xn).take(idx, axis=1), np.take(xn, idx, axis=1))
    same(dev.tensor(xn).take(idx), np.take(xn, idx))
    along = np.argsort(data(int32, (4, 6), seed=3), axis=0).astype(I)
    same(dev.tensor(xn).take_along_axis(along, 0), np.take_along_axis(xn, along, 0))
    same(dev.tensor(xn).take_along_axis(along[:1], 0), np.take_along_axis(xn, along[:1], 0))


def test_a_large_gather(dev):
    rng = np.random.default_rng(4)
    xn = rng.standard_normal(70001).astype(np.float32)
    idx = rng.integers(-70001, 70001, 70000).astype(I)
    same(dev.tensor(xn)[idx], xn[idx])


def test_the_catalog_rows_against_their_python_references():
    for op, x, ind, extra in (
        (ops.get("take"), [1.5, -2.0, 3.0], [2, -1, 7, -9], ()),
        (ops.get("scatter_add"), [1.0, 2.0, 3.0], [0, -1, 0, 9], ([10.0, 20.0, 30.0, 40.0],)),
    ):
        options = op.row.shape(op, [(3,), (4,), *((4,),) * len(extra)], {"axis": 0})[1]
        want = op.row.python(op, [x, ind, *extra], None, (), options)
        arrays = [np.array(x, np.float32), np.array(ind, I), *(np.array(e, np.float32) for e in extra)]
        got = op.row.numpy(op, arrays, (), options)
        assert list(got) == want, op.name
    assert want == [1.0 + 10.0 + 30.0, 2.0, 3.0 + 20.0 + 40.0]  # -1 wraps to 2, 9 clamps to 2


@pytest.mark.parametrize("dtype", DT)
def test_boolean_masks_and_nonzero(dev, dtype):
    xn = data(dtype, (3, 4), seed=5)
    x = dev.tensor(xn)
    for mask in (xn != 0, np.zeros((3, 4), bool), np.ones((3, 4), bool)):
        same(x[dev.tensor(mask)], xn[mask])
        same(x[mask], xn[mask])
        for got, want in zip(dev.tensor(mask).nonzero(), np.nonzero(mask)):
            same(got, want.astype(I))
    rows = np.array([True, False, True])
    same(x[rows, 1:], xn[rows, 1:])
    same(x[:, dev.tensor(np.array([False, True, True, False]))], xn[:, [False, True, True, False]])


@pytest.mark.parametrize("dtype", DT)
def test_item_assignment_rebinds_and_leaves_others(dev, dtype):
    xn = data(dtype, (3, 4, 5), seed=6)
    v = data(dtype, (5,), seed=7)
    for index, value in (
        (xn > xn.reshape(-1)[7], v[0]),
        ((slice(1, 3), 2), v),
        ((Ellipsis, 1), v[:4].reshape(4, 1)[:, 0]),
        ((0, slice(None, None, 2)), v[1]),
        ((np.array([0, 2, 0], I), 1), np.stack([v, v[::-1], v]).reshape(3, 5)),
        ((slice(None), np.array([[3, -1]], I), np.array([[0], [4]], I)), v[2]),
        ((np.zeros(0, I),), v[0]),
    ):
        x = dev.tensor(xn)
        shared = x[...]  # shares x's expression: keeps the old values
        want = xn.copy()
        want[index] = value
        x[index] = value
        same(x, want)
        same(shared, xn)
    x = dev.tensor(xn)
    x[dev.tensor(xn > xn.reshape(-1)[3])] = v[2]
    want = xn.copy()
    want[xn > xn.reshape(-1)[3]] = v[2]
    same(x, want)


def test_zero_d_masks_and_assignments(dev):
    """x[mask] with a 0-d mask adds an axis of 1 (True) or 0 (False), as NumPy; x[()] = v and x[...] = v of a
    0-d x replace its value."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for m in (True, False):
        for mask in (np.bool_(m), tw.asarray(np.bool_(m), dev)):
            assert np.array_equal(block_on(tw.asarray(x, dev)[mask].numpy()), x[np.bool_(m)])
            assert block_on(tw.asarray(np.float32(2), dev)[mask].numpy()).shape == np.float32(2)[np.bool_(m)].shape
    for key in ((), Ellipsis):
        t = tw.asarray(np.float32(3.0), dev)
        t[key] = 5
        assert t.shape == () and block_on(t.numpy()).tolist() == 5.0


def test_a_mask_assigned_an_array_of_values_and_device_indices_out_of_range(dev):
    xn = data(float32, (3, 4), seed=12)
    mask = xn > 0
    x = dev.tensor(xn)
    x[dev.tensor(mask)] = np.arange(mask.sum(), dtype=np.float32)  # one value per selected element, as NumPy
    want = xn.copy()
    want[mask] = np.arange(mask.sum())
    same(x, want)
    # device indices are not checked: a negative one wraps once, then each is clamped into its axis
    rows, cols = np.array([5, -1, -9], I), np.array([2**32 - 1, 0, 2**31], np.uint32)
    got = dev.tensor(xn)[dev.tensor(rows), dev.tensor(cols)]
    same(got, xn[[2, 2, 0], [3, 0, 3]])
    same(dev.tensor(xn)[:, dev.tensor(cols)], xn[:, [3, 0, 3]])
    want = xn.copy()
    np.add.at(want, (slice(None), [3, 0, 3]), np.float32(0.5))
    same(dev.tensor(xn).scatter_add(dev.tensor(cols), 0.5, axis=1), want)


@pytest.mark.parametrize("dtype", [pytest.param(d, id=d.name) for d in (float32, int32, uint32)])
def test_scatter_add_with_duplicates(dev, dtype):
    xn = data(dtype, (5, 3), seed=8) if dtype is not float32 else np.arange(15, dtype=np.float32).reshape(5, 3)
    idx = np.array([1, -1, 1, 1, 0, 4], I)
    vals = data(dtype, (6, 3), seed=9) if dtype is not float32 else np.full((6, 3), 0.25, np.float32)
    want = xn.copy()
    with np.errstate(over="ignore"):
        np.add.at(want, np.where(idx < 0, idx + 5, idx), vals)
    same(dev.tensor(xn).scatter_add(idx, vals, axis=0), want)
    same(dev.tensor(xn).index_add(0, dev.tensor(idx), dev.tensor(vals)), want)
    want = xn.copy()
    np.add.at(want, (slice(None), np.array([2, 2, 0])), 1)
    same(tw.scatter_add(dev.tensor(xn), np.array([2, 2, 0], I), 1, axis=1), want)


def test_an_embedding_lookup_is_one_kernel(dev):
    rng = np.random.default_rng(10)
    wn, ids = rng.standard_normal((50, 16)).astype(np.float32), rng.integers(-50, 50, (4, 7)).astype(I)
    w, t, wt = dev.tensor(wn), dev.tensor(ids), dev.tensor(wn.T.copy()).T  # wt: a strided view of w's values
    block_on(tw.realize(w, t, wt))
    for f, want, kernels in (
        (lambda: w[t], wn[ids], 1),
        (lambda: w[t] * 2.0 + 1.0, wn[ids] * np.float32(2) + np.float32(1), 1),
        (lambda: (w[t] * 2.0).sum(axis=-1), (wn[ids] * np.float32(2)).sum(-1), 1),  # a row step's element value
        (lambda: w[t].softmax(axis=-1), np.exp(wn[ids]) / np.exp(wn[ids]).sum(-1, keepdims=True), 1),
        (lambda: (lambda g: g.max(axis=-1) - g.min(axis=-1))(wt[t]), wn[ids].max(-1) - wn[ids].min(-1), 1),
        (lambda: w[:, :1][t].sum(axis=-1), wn[:, :1][ids].sum(-1), 2),  # one column: its map step, then the rows
    ):
        before = dev.stats.dispatches
        got = block_on(f().numpy())
        assert dev.stats.dispatches - before == kernels
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_gradients_of_take_and_scatter_add(dev):
    ids = np.array([[2, 0, 2], [-1, 1, 2]], I)
    rng = np.random.default_rng(11)

    def f(xp, w, v):
        if xp.__name__ == "TW":
            picked, added = w[ids], w.scatter_add(ids[0], v, axis=0)
        else:
            picked, added = w[ids], w.copy()
            np.add.at(added, ids[0], v)
        return (picked * picked).sum() + (added * added * 0.5).sum()

    check(f, [rng.standard_normal((3, 4)), rng.standard_normal((3, 4))], dev)


def test_mistakes_raise_and_leave_the_device_usable(dev):
    x = dev.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    with pytest.raises(TruenoTypeError, match="int32 or uint32"):
        x[dev.tensor(np.array([0.0, 1.0], np.float32))]
    with pytest.raises(TruenoTypeError, match="integers"):
        x[np.array([0.5])]
    with pytest.raises(TruenoValueError, match="out of range for axis 0 of size 3"):
        x[[0, 3]]
    with pytest.raises(TruenoValueError, match="out of range"):
        x.take([-13])
    with pytest.raises(TruenoValueError, match="mask of shape"):
        x[np.ones((4, 3), bool)]
    with pytest.raises(TruenoValueError, match="mask of shape"):
        x[dev.tensor(np.ones(4, bool))]
    with pytest.raises(TruenoValueError, match="indices need the shape"):
        block_on(dev.take(np.zeros((3, 2), np.float32), np.zeros((2, 3), I), axis=0))
    with pytest.raises(TruenoValueError, match="indices and values"):
        block_on(dev.scatter_add(np.zeros(3, np.float32), np.zeros(2, I), np.zeros(3, np.float32)))
    same(x[[2, -3]] + 1.0, np.arange(12, dtype=np.float32).reshape(3, 4)[[2, 0]] + 1)


def test_masks_without_synchronous_reads_say_what_to_do(dev, monkeypatch):
    x = dev.tensor(np.arange(4, dtype=np.float32))
    monkeypatch.setattr(tw.runtime, "sync_available", lambda: False)
    with pytest.raises(UnavailableError, match="await t.numpy"):
        x[x > 1]
    same(x[np.array([False, True, True, False])], np.array([1, 2], np.float32))  # host masks need no read


def test_one_hot_takes_int_labels_and_gives_float32(dev):
    labels = np.array([[2, 0], [3, 7]], I)
    got = tw.nn.one_hot(dev.tensor(labels), 4)
    same(got, (labels[..., None] == np.arange(4)).astype(np.float32))
    same(tw.nn.one_hot(dev.tensor(labels.astype(np.float32)), 4, axis=0), np.moveaxis(block_on(got.numpy()), -1, 0))


def test_two_d_grids_of_workgroups(gpu, monkeypatch):
    """Gathers (map and row kernels) and scatter_add on 2-D grids of workgroups, as past 65535 of them (here
    at small sizes: max_per_dim 3)."""
    monkeypatch.setattr(gpu.executor.caps, "max_per_dim", 3)
    rng = np.random.default_rng(13)
    xn, ids = rng.integers(-1000, 1000, 5000).astype(I), rng.integers(-5000, 5000, 3001).astype(I)
    same(gpu.tensor(xn)[ids] * 3, xn[ids] * 3)
    wn = rng.integers(-1000, 1000, (50, 9)).astype(np.float32)  # integers: their sums are exact in any order
    rows = rng.integers(0, 50, 4000).astype(I)
    same((gpu.tensor(wn)[rows] * 2).sum(axis=-1), (wn[rows] * 2).sum(-1))
    want = xn.copy()
    np.add.at(want, np.where(ids < 0, ids + 5000, ids), np.arange(3001, dtype=I))
    same(gpu.tensor(xn).scatter_add(ids, np.arange(3001, dtype=I)), want)
