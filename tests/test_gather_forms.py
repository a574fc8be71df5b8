"""The map kernel's gather forms (kernels/map_gather.py) bit for bit against NumPy on every backend, with device
indices negative and out of range (the kernels' rule: a negative index wraps once, then it is clamped into the
axis): the vec4 "lanes" form (an index per output element, index and data plain or through their views), the vec4
"row" form (one index and one aligned vec4 of data per vec4 of output: an embedding's ids, inner sizes a multiple
of 4) and the scalar form they fall back to (a masked data view, a strided index also read as a value, a constant
in the chain), alone and fused with elementwise ops; gathers in a row step. On webgpu each case also checks the
form it ran in (at 3 vec4s per thread, so that its plans are fresh: no cached dispatches)."""

from __future__ import annotations

import numpy as np
import pytest
from test_indexing import DT, NP, data, same

from trueno_web.dtypes import float32, int32
from trueno_web.kernels import map as map_kernel


def wrapped(idx, n: int):
    """The position along an axis of n that a device index reads (gathers.take_positions' rule)."""
    j = idx.astype(np.int64)
    return np.clip(np.where(j < 0, j + n, j), 0, n - 1)


def pad(x, widths):
    """x zero-padded: the tensor's (a masked view) or NumPy's."""
    return np.pad(x, widths) if isinstance(x, np.ndarray) else x.pad(widths)


GATHERS = {  # how a gather is written: the view of x and of the indices it applies to, take or take_along_axis
    "take": (lambda x: x, lambda i: i, "take"),
    "along": (lambda x: x, lambda i: i, "along"),
    "along i.T": (lambda x: x, lambda i: i.T, "along"),  # the indices a strided view
    "x.T take": (lambda x: x.T, lambda i: i, "take"),  # the data a strided view
    "x padded take": (lambda x: pad(x, ((1, 2), (0, 1))), lambda i: i, "take"),  # the data a masked view
}
CASES = {  # name -> (x's shape, the indices' shape, the gather, its axis, the form on webgpu)
    "x[idx] inner 1": ((37,), (23,), "take", 0, "lanes"),
    "x[idx] one index": ((5,), (1,), "take", 0, "lanes"),
    "x[empty]": ((37,), (0,), "take", 0, None),
    "w[ids] inner 3": ((11, 3), (2, 5), "take", 0, "lanes"),
    "w[ids] inner 4": ((11, 4), (2, 5), "take", 0, "row"),
    "w[ids] inner 64": ((11, 64), (7,), "take", 0, "row"),
    "w[ids] inner 68": ((11, 68), (3, 3), "take", 0, "row"),
    "take axis 1 inner 4": ((3, 9, 4), (5,), "take", 1, "row"),
    "take axis 1 inner 1": ((3, 9), (2, 5), "take", 1, "lanes"),
    "take_along_axis 0 inner 4": ((6, 4), (5, 4), "along", 0, "lanes"),
    "take_along_axis 1 inner 1": ((3, 6), (3, 5), "along", 1, "lanes"),
    "take_along_axis 1 inner 68": ((2, 5, 68), (2, 3, 68), "along", 1, "lanes"),
    "take_along_axis 0 inner 4, indices transposed": ((6, 4), (4, 5), "along i.T", 0, "lanes"),
    "x.T[ids] inner 3": ((3, 7), (4,), "x.T take", 0, "lanes"),
    "x.T[ids] inner 4": ((4, 7), (2, 3), "x.T take", 0, "lanes"),
    "x padded [ids] (a masked view)": ((7, 3), (5,), "x padded take", 0, "scalar"),
}


def gather(how: str, axis: int, x, i):
    """The gather `how` of a tensor x at tensor indices i, or its NumPy reference (arrays: the kernels' positions)."""
    view, iview, kind = GATHERS[how]
    x, i = view(x), iview(i)
    if isinstance(x, np.ndarray):
        i = wrapped(i, x.shape[axis])
        return np.take(x, i, axis=axis) if kind == "take" else np.take_along_axis(x, i, axis)
    return x.take(i, axis=axis) if kind == "take" else x.take_along_axis(i, axis)


@pytest.fixture
def forms(dev, monkeypatch):
    """The forms the map kernels of the test ran in, on webgpu (else None)."""
    return recorded(dev, monkeypatch) if dev.backend == "webgpu" else None


def recorded(gpu, monkeypatch) -> list[str]:
    """A list that the map kernels compiled from now on add their gathers' forms to ("scalar", "lanes", "row"
    per gather member), at 3 vec4s per thread."""
    seen = []
    monkeypatch.setattr(gpu.executor.caps, "map_vpt", 3)
    source = map_kernel.map_source

    def spy(key, vec, vpt):
        index = [refs[1][0] for _, refs, _ in key[1] if refs and refs[0][0] == "whole"]
        seen.extend(("row" if kind == "row" else "lanes") if vec else "scalar" for kind in index)
        return source(key, vec, vpt)

    monkeypatch.setattr(map_kernel, "map_source", spy)
    return seen


def indices(shape, n: int, dtype, seed: int):
    """Indices of `shape` over an axis of n: in range, negative and out of range both ways (uint32: past n)."""
    rng = np.random.default_rng(seed)
    low = 0 if dtype == np.uint32 else -2 * n - 1
    return rng.integers(low, 2 * n + 2, shape).astype(dtype)


@pytest.mark.parametrize("dtype", DT)
@pytest.mark.parametrize("name", list(CASES))
def test_each_gather_form_matches_numpy(dev, forms, dtype, name):
    shape, ishape, how, axis, form = CASES[name]
    xn = data(dtype, shape, seed=len(name))
    idx = indices(ishape, GATHERS[how][0](xn).shape[axis], np.int32, seed=len(shape))
    same(gather(how, axis, dev.tensor(xn), dev.tensor(idx)), gather(how, axis, xn, idx))
    if forms is not None and form is not None:
        assert forms == [form], forms


@pytest.mark.parametrize("name", [n for n in CASES if CASES[n][4] != "scalar"])
def test_uint32_indices_in_the_vec4_forms(dev, forms, name):
    shape, ishape, how, axis, form = CASES[name]
    xn = data(float32, shape, seed=3)
    idx = indices(ishape, GATHERS[how][0](xn).shape[axis], np.uint32, seed=4)
    same(gather(how, axis, dev.tensor(xn), dev.tensor(idx)), gather(how, axis, xn, idx))
    if forms is not None and form is not None:
        assert forms == [form], forms


@pytest.mark.parametrize("dtype", [float32, int32], ids=["float32", "int32"])
def test_gathers_fused_with_elementwise_ops(dev, forms, dtype):
    """One kernel each: two row gathers added; two lanes gathers added; a gather of a computed index; a chain
    with constants (broadcast leaves: the scalar form); a strided index also read as a value (scalar form)."""
    wn, xn = data(dtype, (13, 8), seed=5), data(dtype, (29,), seed=6)
    ids, i1, i2 = indices((3, 2), 13, np.int32, 7), indices((10,), 29, np.int32, 8), indices((10,), 29, np.int32, 9)
    w, x, t1, t2 = dev.tensor(wn), dev.tensor(xn), dev.tensor(i1), dev.tensor(i2)
    mn, i3 = data(dtype, (6, 4), seed=10), indices((4, 5), 6, np.int32, 11)
    m, it = dev.tensor(mn), dev.tensor(i3).T  # it: a strided index that the chain also reads as a value
    for got, want, form in (
        (
            w[dev.tensor(ids)] + w[t1[:6].reshape(3, 2)],
            wn[wrapped(ids, 13)] + wn[wrapped(i1[:6], 13)].reshape(3, 2, 8),
            ["row", "row"],
        ),
        (x[t1] + x[t2], xn[wrapped(i1, 29)] + xn[wrapped(i2, 29)], ["lanes", "lanes"]),
        (x[t1 + t2], xn[wrapped(i1 + i2, 29)], ["lanes"]),
        (x[t1 * 2 - 5] - 1, xn[wrapped(i1 * 2 - 5, 29)] - NP[dtype](1), None),
        (
            m.take_along_axis(it, 0) + it.astype(dtype),
            np.take_along_axis(mn, wrapped(i3.T, 6), 0) + i3.T.astype(NP[dtype]),
            ["scalar"],
        ),
    ):
        if forms is not None:
            forms.clear()
        same(got, want)
        if forms is not None and form is not None:
            assert forms == form, forms


def test_vec4_gathers_on_a_two_d_grid(gpu, monkeypatch):
    """Both vec4 forms past max_per_dim workgroups in one dimension (here 3, as past 65535 on a GPU): 4 each."""
    monkeypatch.setattr(gpu.executor.caps, "max_per_dim", 3)
    forms = recorded(gpu, monkeypatch)
    rng = np.random.default_rng(12)
    xn, idx = rng.standard_normal(9001, dtype=np.float32), indices((12001,), 9001, np.int32, 13)
    same(gpu.tensor(xn)[gpu.tensor(idx)], xn[wrapped(idx, 9001)])
    wn, ids = rng.standard_normal((50, 12), dtype=np.float32), indices((1000,), 50, np.int32, 14)
    same(gpu.tensor(wn)[gpu.tensor(ids)], wn[wrapped(ids, 50)])
    assert forms == ["lanes", "row"], forms


def test_gathers_in_a_row_step(dev):
    """A gather as a row step's element value (kernels/rows.py, the same tw_take and its geometry's flags): one
    outer block with inner 1, several blocks with inner 1, inner 5; int32 data (sums exact, wrapping, any order)."""
    xn, wn = data(int32, (3, 9), seed=15), data(int32, (7, 5), seed=16)
    flat, ids = indices((4, 6), 27, np.int32, 17), indices((2, 5), 9, np.int32, 18)
    x, w = dev.tensor(xn), dev.tensor(wn)
    same(x.reshape(-1)[dev.tensor(flat)].max(axis=-1), xn.reshape(-1)[wrapped(flat, 27)].max(-1))
    same(x.take(dev.tensor(ids), axis=1).sum(axis=-1), np.take(xn, wrapped(ids, 9), axis=1).sum(-1, dtype=np.int32))
    same(w[dev.tensor(ids)].min(axis=-1), wn[wrapped(ids, 7)].min(-1))
