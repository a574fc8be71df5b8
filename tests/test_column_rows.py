"""Reductions over leading axes (`x.sum(axis=0)`): rows whose elements are far apart in memory and whose
neighbours are adjacent. On a GPU the row kernel then puts adjacent threads on adjacent rows
(kernels/rows.py column_spread), so a warp's loads are coalesced. Every reduction and the fused ones
(mean, var, argmax) against float64 NumPy on every backend, with awkward lengths, NaN and Inf; on webgpu,
which steps take the column layout."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from trueno_web import kernels
from trueno_web.kernels import rows
from trueno_web.runtime import block_on

RNG = np.random.default_rng(11)
CASES = [
    ((37, 1000), 0),
    ((4097, 33), 0),
    ((3, 5, 4097), 0),
    ((6, 40, 7), (0, 1)),
    ((40, 3, 50), (0, 2)),
    ((1024, 40), 0),  # few columns of a length the chunks divide: folded in chunks first (rows_split)
    ((2048, 3, 16), 0),
]


@pytest.fixture(autouse=True)
def hardware_form(request, monkeypatch):
    """The layouts here are the hardware adapters' row kernel (a row's threads folding together): the webgpu
    device of a test on `dev` runs it whatever this adapter picks (test_one_thread_a_row: the software
    adapters' form)."""
    dev = request.getfixturevalue("dev") if "dev" in request.fixturenames else None
    if dev is None or dev.backend != "webgpu":
        yield
        return
    monkeypatch.setattr(dev.executor.caps, "rows_direct", False)
    dev.executor.forget()
    yield
    dev.executor.forget()


@pytest.fixture
def spreads(monkeypatch):
    """The spread each row dispatch built during the test took (1: along rows; more: the column layout)."""
    seen = []
    real = rows.column_spread
    monkeypatch.setattr(rows, "column_spread", lambda *a: seen.append(real(*a)) or seen[-1])
    return seen


def column_layout(shape, axis) -> bool:
    """What the column layout is for: the kept axes trail the reduced ones, 32 outputs or more."""
    axes = (axis,) if isinstance(axis, int) else axis
    kept = [d for d in range(len(shape)) if d not in axes]
    return kept == list(range(len(axes), len(shape))) and np.prod([shape[d] for d in kept]) >= rows.COLUMN_ROWS


@pytest.mark.filterwarnings("ignore:invalid value")
@pytest.mark.parametrize(
    "shape,axis,name",
    [(s, a, n) for s, a in CASES for n in ("sum", "mean", "var", "max", "min", "prod", "argmax")[: 7 if a == 0 else 6]]
    + [((37, 1000), 0, "argmin")],  # argmax/argmin take one axis (NumPy's)
    ids=str,
)
def test_reductions_over_leading_axes(dev, spreads, shape, axis, name):
    a = RNG.uniform(0.9, 1.1, shape) if name == "prod" else RNG.standard_normal(shape)
    a = a.astype(np.float32)
    a.reshape(-1)[[3, 17]] = [np.nan, np.inf]  # two of the outputs see a NaN or an Inf
    got = block_on(getattr(dev.tensor(a), name)(axis=axis).numpy())
    want = getattr(np, name)(a.astype(np.float64), axis=axis)
    if name.startswith("arg"):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.int32
    elif name in ("max", "min"):
        np.testing.assert_array_equal(got, want.astype(np.float32))
    else:
        n = a.size // want.size
        np.testing.assert_allclose(got, want, rtol=4 * n * 2.0**-24, atol=1e-6)
    if dev.backend == "webgpu":
        assert max(spreads) == (rows.COLUMN_ROWS if column_layout(shape, axis) else 1)


@pytest.mark.filterwarnings("ignore:invalid value")
@pytest.mark.parametrize("shape,axis", CASES, ids=str)
def test_one_thread_a_row(gpu, monkeypatch, shape, axis):
    """The software adapters' row kernel (Caps.rows_direct): a thread folds its row alone, columns of memory
    included, with no workgroup memory and no barrier; sum, var and argmax against float64 NumPy."""
    monkeypatch.setattr(gpu.executor.caps, "rows_direct", True)
    gpu.executor.forget()
    sources = []
    real = rows.rows_source
    monkeypatch.setattr(rows, "rows_source", lambda *a: sources.append(real(*a)) or sources[-1])
    a = RNG.standard_normal(shape).astype(np.float32)
    a.reshape(-1)[[3, 17]] = [np.nan, np.inf]
    try:
        x = gpu.tensor(a)
        for name in ("sum", "var", "argmax"):
            ax = axis if isinstance(axis, int) or name != "argmax" else axis[0]
            got = block_on(getattr(x, name)(axis=ax).numpy())
            want = getattr(np, name)(a.astype(np.float64), axis=ax)
            if name == "argmax":
                np.testing.assert_array_equal(got, want)
            else:
                np.testing.assert_allclose(got, want, rtol=4 * (a.size // want.size) * 2.0**-24, atol=1e-6)
    finally:
        gpu.executor.forget()
    assert sources and not any("workgroupBarrier" in s or "var<workgroup>" in s for s in sources)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "prod"])
@pytest.mark.parametrize("shape", [(2048, 40), (1024, 1024)], ids=str)  # the chunks' folds along rows; side by side
def test_few_columns_fold_in_chunks_first(dev, shape, name):
    a = RNG.uniform(0.99, 1.01, shape).astype(np.float32)
    a[700, 7] = np.nan  # in one chunk of one column
    if name != "prod":
        a[900, 9] = np.inf
    before = dev.stats.dispatches
    got = block_on(getattr(dev.tensor(a), name)(axis=0).numpy())
    if dev.backend == "webgpu":
        assert dev.stats.dispatches - before == 2  # the chunks' folds, then each column's
    want = getattr(np, name)(a.astype(np.float64), axis=0)
    np.testing.assert_allclose(got, want, rtol=2 * shape[0] * 2.0**-24 if name == "prod" else 2 * 2.0**-24)


@pytest.mark.filterwarnings("ignore:invalid value")
@pytest.mark.parametrize("shape", [(300, 1024), (33, 2048), (5, 4096)], ids=str)
def test_two_folds_over_columns_take_more_workgroups(dev, monkeypatch, shape):
    """var over the leading axis is two folds, never folded in chunks: where its columns side by side would make
    fewer than rows_split.COLUMN_GROUPS workgroups, the column layout narrows to COLUMN_ROWS_MIN rows a
    workgroup (four times the workgroups; 32-byte segments a warp's load). Against float64 NumPy, a NaN and
    an Inf in two columns; the short rows in registers (their squares folded with their sums)."""
    a = RNG.standard_normal(shape).astype(np.float32) + 100.0
    a[1, 3], a[2, 5] = np.nan, np.inf
    spreads = []
    if dev.backend == "webgpu":
        planned = kernels.TEMPLATES["rows"]
        monkeypatch.setitem(
            kernels.TEMPLATES,
            "rows",
            lambda *x: [spreads.append(struct.unpack("<4I", d.meta[:16])[3]) or d for d in planned(*x)],
        )
    got = block_on(dev.tensor(a).var(axis=0).numpy())
    np.testing.assert_allclose(got, a.astype(np.float64).var(axis=0), rtol=1e-5, atol=1e-6)
    if dev.backend == "webgpu":
        assert set(spreads) == {rows.COLUMN_ROWS_MIN}


@pytest.mark.parametrize("shape", [(9, 70), (4096, 33)], ids=str)
def test_int32_column_sums_wrap_as_numpy(dev, shape):
    a = RNG.integers(2**28, 2**30, shape).astype(np.int32)
    got = block_on(dev.tensor(a).sum(axis=0).numpy())
    np.testing.assert_array_equal(got, a.sum(axis=0, dtype=np.int32))


def test_a_step_that_stores_elements_stays_along_rows(dev, spreads):
    """softmax along the rows of a transposed matrix reads columns, but stores an element value per element:
    written along its rows, the column layout would scatter those stores, so the step keeps the row layout."""
    a = RNG.standard_normal((50, 64)).astype(np.float32)
    if dev.backend == "webgpu":
        dev.executor.forget()
    got = block_on(dev.tensor(a).T.softmax(-1).numpy())
    e = np.exp(a.T.astype(np.float64) - a.T.max(-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)
    if dev.backend == "webgpu":
        assert spreads == [1]
