"""Reductions of few long rows (kernels/rows_split.py): on a GPU each row is folded in chunks by as
many workgroups first, then the chunk folds per row (a float sum's chunks as compensated pairs: the rows of
tests/test_sums.py, which defeat a plain float32 sum, take this path and keep its bound); sum, mean, max, min
and prod against float64 NumPy on every backend, NaN and Inf in one chunk, int32 sums that wrap, and the steps that
stay one pass (a strided load, a length the chunks do not divide, many rows)."""

from __future__ import annotations

import numpy as np
import pytest

import trueno_web as tw
from trueno_web.kernels.rows_split import SPLIT_COLS
from trueno_web.runtime import block_on

RNG = np.random.default_rng(5)


def run(dev, t, name, axis):
    before = dev.stats.dispatches
    got = block_on(getattr(t, name)(axis=axis).numpy())
    return got, dev.stats.dispatches - before


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("shape", [(3, 2 * SPLIT_COLS), (2, 4, SPLIT_COLS // 2)], ids=str)
def test_few_long_rows_fold_in_chunks(dev, shape, name):
    low, high = (0.999, 1.001) if name == "prod" else (-2.0, 2.0)
    a = RNG.uniform(low, high, shape).astype(np.float32)
    if name != "prod":  # in one chunk of a row: a chunk's Inf sum keeps no NaN error term
        a[0, ..., 5000], a[1, ..., 7000] = np.nan, np.inf
    axis = tuple(range(1, len(shape)))
    got, dispatches = run(dev, dev.tensor(a), name, axis)
    want = getattr(np, name)(a.astype(np.float64), axis=axis)
    if dev.backend == "webgpu":
        assert dispatches == 2  # the chunks' folds, then each row's
    if name in ("max", "min"):
        np.testing.assert_array_equal(got, want.astype(np.float32))
    elif name == "prod":  # within its roundings, one per factor
        np.testing.assert_allclose(got, want, rtol=2.0 * a[0].size * 2.0**-24)
    else:  # the compensated sum's bound: one rounding of the result, twice for a mean (tests/test_sums.py)
        finite = np.abs(a[np.isfinite(a)])  # the NaN and Inf rows compare as NaN and Inf (assert_allclose)
        np.testing.assert_allclose(got, want, rtol=2.0 * 2.0**-24, atol=2.0**-44 * finite.sum())


def test_int32_sums_wrap_as_numpy(dev):
    a = RNG.integers(2**28, 2**30, (2, 2 * SPLIT_COLS)).astype(np.int32)
    got, dispatches = run(dev, dev.tensor(a), "sum", -1)
    np.testing.assert_array_equal(got, a.sum(axis=-1, dtype=np.int32))
    if dev.backend == "webgpu":
        assert dispatches == 2


def test_what_stays_one_pass(dev):
    a = RNG.standard_normal((3, 2 * SPLIT_COLS + 1)).astype(np.float32)
    x = dev.tensor(a)
    for t, ref in ((x, a), (x[:, ::2], a[:, ::2])):  # a length the chunks do not divide; a strided load
        got, dispatches = run(dev, t, "max", -1)
        np.testing.assert_array_equal(got, ref.max(-1))
        if dev.backend == "webgpu":
            assert dispatches == 1
    many = RNG.standard_normal((512, SPLIT_COLS)).astype(np.float32)
    got, dispatches = run(dev, tw.asarray(many, dev), "max", -1)
    np.testing.assert_array_equal(got, many.max(-1))
    if dev.backend == "webgpu":
        assert dispatches == 1
