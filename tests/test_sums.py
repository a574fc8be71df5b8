"""Compensated sums: sum, dot, norm_l1, norm_l2, mean and sums along an axis on every backend against
math.fsum of the float64 values, on data that defeats a plain float32 accumulation (cancellation, a count
past 2^24, a huge dynamic range) and on random data. The bound (docs/accuracy.md): |got - S| <= one
rounding of S (2^-24 |S|, twice that for mean and norm_l2) + 2^-44 sum|x|, where S is the float64 result.
A plain float32 sum misses the first case by 131072 (2^-44 sum|x| is 0.75 there). Softmax's denominator
(the softmax kernel, and softmax written with tensor ops: the row kernel) on a row whose plain float32 sum
drops 2^-18 of it."""

from __future__ import annotations

import array
import math
import random
from functools import lru_cache

import pytest
from _cases import flat

from trueno_web.accuracy import f32
from trueno_web.host import numpy_available
from trueno_web.kernels import softmax as softmax_kernel
from trueno_web.runtime import block_on

N = 1 << (18 if numpy_available() else 12)  # without NumPy (inside Pyodide) 2^12: the references are pure Python


def alternating(n=N):
    """1e8, 1, -1e8, 1, ...: the float64 sum is n / 2, a plain float32 sum 0."""
    return array.array("f", [1e8, 1, -1e8, 1]) * (n // 4)


@lru_cache(maxsize=8)
def normal(seed: int, n=N, spread: int = 0):
    """n standard normal float32 values, each times 10^k with k uniform in [-spread, spread] (seeded; the same
    array on each call: nothing changes it)."""
    rng = random.Random(seed)
    return array.array("f", (rng.gauss(0.0, 1.0) * 10.0 ** rng.randint(-spread, spread) for _ in range(n)))


CASES = {
    "alternating": alternating,
    "ones past 2^24": lambda: array.array("f", [1.0]) * ((1 << 24) + 3),  # 16777219: rounds to 16777220, not 2^24
    "wide range": lambda: normal(14, spread=15),  # 1e-15 to 1e15, both signs (the sum of squares stays finite)
    "random": lambda: normal(15),
}


def check(got, terms, rounding=1, what=""):
    """|got - S| within `rounding` roundings of S (float32) plus 2^-44 sum|terms| (float64 terms; summed only
    where the first part is not enough: 2^24 terms take seconds in Pyodide)."""
    exact = math.fsum(terms)
    miss = abs(float(got) - exact)
    bound = rounding * 2.0**-24 * abs(exact)
    if miss > bound:
        bound += 2.0**-44 * math.fsum(map(abs, terms))
    assert miss <= bound, f"{what}: got {float(got)!r}, float64 {exact!r}, bound {bound:.3g}"


@pytest.mark.parametrize("case", CASES)
def test_sum_and_norm_l1(dev, case):
    x = CASES[case]()
    check(block_on(dev.sum(x)), x, what=f"sum of {case}")
    if len(x) <= N:  # (norm_l1 of ones is their sum)
        check(block_on(dev.norm_l1(x)), [abs(v) for v in x], what=f"norm_l1 of {case}")


@pytest.mark.parametrize("case", ["alternating", "wide range", "random"])
def test_dot_mean_norm_l2_and_axis_sums(dev, case):
    """dot against ones (exact products), mean, norm_l2 (float32 squares: one rounding each, all of one
    sign), sums along the last axis of 4 rows (the row kernel on webgpu)."""
    x = CASES[case]()
    check(block_on(dev.dot(x, array.array("f", [1.0]) * len(x))), x, what=f"dot of {case}")
    check(flat(block_on(dev.tensor(x).mean().numpy()))[0] * len(x), x, rounding=2, what=f"mean of {case}")
    l2 = float(block_on(dev.norm_l2(x)))
    root = math.sqrt(math.fsum(f32(v * v) for v in x))
    assert abs(l2 - root) <= 2.0**-23 * root, case
    cols = len(x) // 4
    rows = flat(block_on(dev.tensor(x, shape=(4, cols)).sum(axis=-1).numpy()))
    for r, got in enumerate(rows):
        check(got, x[r * cols : (r + 1) * cols], what=f"row sum of {case}")


def test_dot_of_random_products(dev):
    """Random a . b: the float64 result of the float32 inputs within 1e-6 relative (a GPU rounds each
    product to float32 once: 2^-24 sum|a b| more there)."""
    a, b = normal(16), normal(17)
    products = [u * v for u, v in zip(a, b)]  # exact in float64
    exact, size = math.fsum(products), math.fsum(map(abs, products))
    got = float(block_on(dev.dot(a, b)))
    assert abs(got - exact) <= 2.0**-24 * (abs(exact) + size) + 2.0**-44 * size


def softmax_row(cols=1 << 19):
    """Blocks of 1024 elements at the row's max (terms exactly 1) and at max - 12.5 (terms ~2^-18), in turn:
    each GPU thread's running sum of the terms passes 256, past which a plain float32 sum drops every small
    term (3/4 of them: 2^-18.4 of the denominator); on the CPU backends a float64 sum keeps them."""
    return array.array("f", (0.0 if i // 1024 % 2 == 0 else -12.5 for i in range(cols)))


def check_softmax(got, x):
    """Every element within 2^-20 relative of exp(x - max) / math.fsum(exp(x - max)) in float64 (exp's
    1.5 ulp, a GPU division's 2.5, the denominator's rounding)."""
    top = max(x)
    terms = [math.exp(v - top) for v in x]
    total = math.fsum(terms)
    err = max(abs(g - t / total) / (t / total) for g, t in zip(flat(got), terms))
    assert err <= 2.0**-20, f"relative error {err:.3g} (2^{math.log2(err):.1f})"


@pytest.mark.parametrize("path", ["split row", "one workgroup per row"])
def test_softmax_denominator(dev, monkeypatch, path):
    """The softmax kernel's two webgpu paths (a long row split across workgroups, or one workgroup per
    row: forced by CHUNK_ROWS = 1, on a length of its own so that no plan made before is reused); one path on
    the CPU backends."""
    if path != "split row":
        monkeypatch.setattr(softmax_kernel, "CHUNK_ROWS", 1)
    x = softmax_row((1 << 19) + 4096 * (path != "split row"))
    check_softmax(block_on(dev.softmax(x)), x)


def test_softmax_denominator_as_tensor_ops(dev):
    """exp(x - max) / sum(exp(x - max)) with tensor ops: on webgpu the row kernel's sum."""
    x = softmax_row()
    t = dev.tensor(x, shape=(1, len(x)))
    e = (t - t.max(axis=-1, keepdims=True)).exp()
    check_softmax(block_on((e / e.sum(axis=-1, keepdims=True)).numpy()), x)


def test_numpy_sums_keep_numpy_buffer_size():
    """references.np_sum widens through a larger casting buffer (references.SUM_BUFFER) and gives NumPy's own
    back, also when the sum raises; its float64 result is the same either way."""
    np = pytest.importorskip("numpy")
    from trueno_web import references

    x = np.asarray(alternating(4 * references.SUM_BUFFER), np.float32).reshape(4, -1)
    before = np.getbufsize()
    got = references.np_sum(x, axis=1)
    assert np.getbufsize() == before
    assert np.array_equal(got, x.sum(axis=1, dtype=np.float64).astype(np.float32))
    assert got[0] == references.SUM_BUFFER // 2  # a float32 accumulation gives 0
    with pytest.raises(np.exceptions.AxisError):
        references.np_sum(x, axis=2)
    assert np.getbufsize() == before


def test_numpy_sums_split_over_threads(monkeypatch):
    """references.np_sum splits a large float sum along its outermost axis in memory over a thread pool: the
    float64 partials added (a reduced axis) or set side by side (a kept one) give the unsplit sum, rounded
    once, for every axis form, strided views and complex values; a bad axis raises NumPy's own error."""
    np = pytest.importorskip("numpy")
    from concurrent.futures import ThreadPoolExecutor

    from trueno_web import references

    pool, parts = ThreadPoolExecutor(3), []
    split = pool.map
    monkeypatch.setattr(pool, "map", lambda f, chunks: parts.append([c.shape for c in chunks]) or split(f, chunks))
    monkeypatch.setattr(references, "sum_threads", lambda: (pool, 3))
    monkeypatch.setattr(references, "SPLIT_SUM_FROM", 64)
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((7, 5, 11)) * 10.0 ** rng.integers(-6, 6, (7, 5, 11))).astype(np.float32)
    cases = [(x, None), (x, 0), (x, -1), (x, (0, 2)), (x, (1, 2)), (x, (2, 0)), (x.transpose(2, 0, 1), 1)]
    cases += [(x.transpose(2, 0, 1), (0, 2)), (x[:, ::2], 1), (x.reshape(1, -1), -1), (x.reshape(-1), 0)]
    cases += [(x.astype(np.complex64) * (1 - 2j), 1), (x[:2, :2, :2].reshape(2, 4), 1)]  # the last: too small
    for arr, axis in cases:
        got = references.np_sum(arr, axis)
        want = np.sum(arr, axis=axis, dtype=np.complex128 if arr.dtype.kind == "c" else np.float64)
        assert got.dtype == arr.dtype and np.array_equal(got, want.astype(arr.dtype)), (arr.shape, axis)
    assert [len(p) for p in parts] == [3] * (len(cases) - 1)
    assert [c[1] for c in parts[6]] == [3, 2, 2] and [c[0] for c in parts[0]] == [3, 2, 2]  # the outermost axis
    for bad, error in ((3, np.exceptions.AxisError), ((0, 0), ValueError), ((1, -2), ValueError)):
        with pytest.raises(error):
            references.np_sum(x, bad)
    pool.shutdown()
