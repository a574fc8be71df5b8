"""float16: a storage dtype on every backend (two bytes an element), computed in float32 and rounded per op,
as NumPy's float16 loops. References are pure Python (struct's 'e': round to nearest even), so the same
bodies run inside Pyodide; every conversion is checked bit for bit, NaN by its class."""

from __future__ import annotations

import math
import random
import struct

import pytest

import trueno_web as tw
from trueno_web.runtime import block_on

F16, F32 = struct.Struct("<e"), struct.Struct("<f")
SPECIAL = [
    0.0,
    -0.0,
    1.0,
    -2.5,
    65504.0,
    65519.0,
    65520.0,
    -65520.0,
    1e9,
    math.inf,
    -math.inf,
    math.nan,
    2.0**-24,
    2.0**-25,
    2.0**-25 * 1.5,
    -(2.0**-14),
    6.1e-5,
    1e-45,
    1.0 / 3.0,
    0.1,
]


def f32(v: float) -> float:
    return F32.unpack(F32.pack(v))[0]


def half(v: float) -> float:
    """v (a float32) rounded to float16: nearest even, past 65520 to Inf."""
    if not -65520.0 < v < 65520.0 and v == v:
        return math.copysign(math.inf, v)
    return F16.unpack(F16.pack(v))[0]


def same(got: list, want: list) -> bool:
    """Equal values with equal signs (-0.0 is not 0.0), NaN where NaN is wanted."""
    return len(got) == len(want) and all(
        (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
        for a, b in zip(got, want)
    )


def values(n: int, seed: int) -> list[float]:
    """float32 values over every float16 range (subnormal to overflow), with the specials first."""
    rng = random.Random(seed)
    out = [f32(v) for v in SPECIAL]
    while len(out) < n:
        out.append(f32(rng.uniform(-1, 1) * 2.0 ** rng.randint(-27, 17)))
    return out[:n]


def randoms(n: int, seed: int, scale: float = 1.0) -> list[float]:
    """n float16 values in [-scale, scale), no specials."""
    rng = random.Random(seed)
    return [half(f32(rng.uniform(-scale, scale))) for _ in range(n)]


def read(t) -> list:
    return block_on(t.numpy()).tolist()


@pytest.mark.parametrize("n", [1, 7, 20, 4097])
def test_astype_to_float16_rounds_as_numpy(dev, n):
    x = values(n, n)
    t = tw.asarray(x, device=dev).astype(tw.float16)
    assert t.dtype == tw.float16 and t.shape == (n,)
    assert same(read(t), [half(v) for v in x])


def test_every_float16_survives_float32_and_back(dev):
    bits = list(range(1 << 16))
    x = [F16.unpack(struct.pack("<H", b))[0] for b in bits]
    t = tw.asarray(x, device=dev, dtype=tw.float16)
    wide = t.astype(tw.float32)
    assert same(read(wide), x)
    assert same(read(wide.astype(tw.float16)), x)


@pytest.mark.parametrize("dtype", ["int32", "uint32", "bool"])
def test_integers_and_bools_to_float16_and_back(dev, dtype):
    x = {
        "int32": [0, 1, -7, 2049, 65504, 65519, 65520, -70000, 2**31 - 1],
        "uint32": [0, 3, 2049, 65535, 2**32 - 1],
        "bool": [True, False, True],
    }[dtype]
    t = tw.asarray(x, device=dev, dtype=dtype).astype(tw.float16)
    want = [half(float(v)) for v in x]
    assert same(read(t), want)
    back = read(t.astype(dtype))
    if dtype == "bool":
        assert back == [v != 0 for v in want]
    else:  # toward zero, saturating (Inf to the dtype's end)
        lo, hi = (-(2**31), 2**31 - 1) if dtype == "int32" else (0, 2**32 - 1)
        assert back == [max(lo, min(hi, int(v))) if math.isfinite(v) else (hi if v > 0 else lo) for v in want]


@pytest.mark.parametrize(
    "name, fn, exact",
    [
        ("add", lambda a, b: a + b, True),
        ("sub", lambda a, b: a - b, True),
        ("mul", lambda a, b: a * b, True),
        ("div", lambda a, b: a / b, False),
    ],
)
def test_arithmetic_is_float16_per_op(dev, name, fn, exact):
    """Each op computes in float32 and rounds to float16: add, sub and mul exactly as NumPy (float32 holds
    a float16 product or sum exactly, so one rounding); div within one float16 step."""
    a = [half(v) for v in values(300, 1)]
    b = [half(v) for v in values(300, 2)][::-1]
    ta, tb = tw.asarray(a, device=dev, dtype=tw.float16), tw.asarray(b, device=dev, dtype=tw.float16)
    got = fn(ta, tb)
    assert got.dtype == tw.float16
    want = [half(fn(x, y)) if not (name == "div" and y == 0) else None for x, y in zip(a, b)]
    for g, w, x, y in zip(read(got), want, a, b):
        if w is None:
            continue
        if exact or not math.isfinite(w) or not math.isfinite(g):
            assert same([g], [w]), (name, x, y, g, w)
        else:
            step = half(abs(w) * (1 + 2**-10)) - abs(w) or 2.0**-24
            assert abs(g - w) <= step, (name, x, y, g, w)


def test_a_fused_chain_rounds_every_op(dev):
    """(x * 3 + 1) in float16: the product rounded before the sum, as NumPy's loops, though one kernel."""
    x = [half(v) for v in values(64, 3)]
    t = tw.asarray(x, device=dev, dtype=tw.float16)
    got = t * 3 + 1
    assert got.dtype == tw.float16
    assert same(read(got), [half(half(v * 3) + 1) for v in x])


def test_promotion_and_returns(dev):
    h = tw.asarray([1.5, -2.0, 3.0], device=dev, dtype=tw.float16)
    f = tw.asarray([1.0, 1.0, 1.0], device=dev)
    i = tw.asarray([1, 2, 3], device=dev)
    assert (h + f).dtype == tw.float32 and (h + 1.0).dtype == tw.float16 and (h * i).dtype == tw.float16
    assert (h > 0).dtype == tw.bool and h.argmax().dtype == tw.int32
    assert tw.result_type(tw.float16, tw.float32) == tw.float32
    assert tw.can_cast(tw.float16, tw.float32) and not tw.can_cast(tw.float32, tw.float16)
    info = tw.finfo(tw.float16)
    assert (info.bits, info.eps, info.max, info.smallest_normal) == (16, 2.0**-10, 65504.0, 2.0**-14)
    assert read(h > 0) == [True, False, True] and block_on(h.argmax().numpy()).tolist() == 2
    e = tw.exp(h)  # float32's exp (ulp-bounded) rounded once: within one float16 step
    assert e.dtype == tw.float16
    for g, v in zip(read(e), (1.5, -2.0, 3.0)):
        assert abs(g - half(math.exp(v))) <= 2.0**-10 * abs(half(math.exp(v))), (g, v)


@pytest.mark.parametrize("shape, axis", [((5, 7), None), ((5, 7), 0), ((3, 4097), -1), ((1,), None)])
def test_reductions_accumulate_in_float32(dev, shape, axis):
    n = math.prod(shape)
    x = randoms(n, 4, 8.0)
    t = tw.asarray(x, device=dev, dtype=tw.float16).reshape(shape)
    got = t.sum(axis=axis)
    assert got.dtype == tw.float16
    rows = (
        [x]
        if axis is None
        else [list(r) for r in zip(*[x[i : i + shape[1]] for i in range(0, n, shape[1])])]
        if (axis == 0)
        else [x[i : i + shape[-1]] for i in range(0, n, shape[-1])]
    )
    want = [half(math.fsum(r)) for r in rows]
    got = read(got)
    got = got if isinstance(got, list) else [got]
    for g, w, r in zip(got, want, rows):  # float32 accumulation, one rounding: within a float16 step
        assert abs(g - w) <= max(abs(w) * 2.0**-10, 2.0**-24) + 1e-6 * sum(map(abs, r)), (g, w)


def test_views_and_odd_sizes(dev):
    """Strided loads of float16 (a transpose, a step, a broadcast) into float16 results of odd size: one
    element a thread, each writing its half of a shared word."""
    rows, cols = 7, 5
    x = [half(v) for v in values(rows * cols, 6)]
    t = tw.asarray(x, device=dev, dtype=tw.float16).reshape(rows, cols)
    want_t = [x[r * cols + c] for c in range(cols) for r in range(rows)]
    assert same(read(t.T.reshape(-1)), want_t)
    assert same(read((t.T + 0).reshape(-1)), [half(v + 0) for v in want_t])
    assert same(read(t[::2, 1::2].reshape(-1)), [x[r * cols + c] for r in range(0, rows, 2) for c in range(1, cols, 2)])
    b = tw.asarray([1.5, -0.5, 2.0, 0.25, 4.0], device=dev, dtype=tw.float16)
    assert same(
        read((t * b).reshape(-1)), [half(x[i] * [1.5, -0.5, 2.0, 0.25, 4.0][i % cols]) for i in range(rows * cols)]
    )


def test_float16_weights_halve_the_upload(dev):
    """A layer's float16 weights take half the bytes on the device (and half the upload on webgpu); the
    forward pass computes in float32 and returns float16, as NumPy's float16 matmul rounds its result."""
    k, m = 32, 9  # an even count: an odd one pads its last word
    w, x = randoms(k * m, 7, 0.5), randoms(2 * k, 9, 4.0)
    sizes = {}
    for dtype in (tw.float16, tw.float32):
        before = dev.stats.as_dict().get("bytes_up", 0)
        arr = block_on(dev.upload(w, (k, m), dtype))
        sizes[dtype.name] = (arr.buffer.nbytes, dev.stats.as_dict().get("bytes_up", 0) - before)
        if dtype is tw.float16:
            w16 = arr
    assert sizes["float16"][0] * 2 == sizes["float32"][0] == 4 * k * m
    if dev.backend == "webgpu":  # the CPU backends count no transfers
        assert sizes["float16"][1] * 2 == sizes["float32"][1] == 4 * k * m
    tx = tw.asarray(x, device=dev, dtype=tw.float16).reshape(2, k)
    got = tx @ w16
    assert got.dtype == tw.float16
    for r in range(2):
        for c in range(m):
            terms = [x[r * k + j] * w[j * m + c] for j in range(k)]
            want = half(math.fsum(terms))
            g = read(got)[r][c]
            assert abs(g - want) <= max(abs(want) * 2.0**-10, 2.0**-24) + 1e-6 * sum(map(abs, terms)), (g, want)


def test_take_and_where_of_float16(dev):
    x = [half(v) for v in values(12, 10)]
    t = tw.asarray(x, device=dev, dtype=tw.float16)
    idx = tw.asarray([3, 0, 11, -1, 5], device=dev)
    got = t[idx]
    assert got.dtype == tw.float16 and same(read(got), [x[i] for i in (3, 0, 11, -1, 5)])
    w = tw.where(t > 0, t, tw.asarray(x[::-1], device=dev, dtype=tw.float16))
    assert w.dtype == tw.float16 and same(read(w), [a if a > 0 else b for a, b in zip(x, x[::-1])])


def test_jit_replays_float16(dev):
    f = tw.jit(lambda a, b: (a * b + 1).sum(axis=0))
    for seed in (11, 12):
        a = randoms(15, seed, 4.0)
        ta = tw.asarray(a, device=dev, dtype=tw.float16).reshape(3, 5)
        tb = tw.asarray([0.5] * 15, device=dev, dtype=tw.float16).reshape(3, 5)
        got = block_on(f(ta, tb))
        assert got.dtype == tw.float16 and same(read(got), read((ta * tb + 1).sum(axis=0)))


def test_grad_through_float16(dev):
    """The gradient of a float16 input is float16: the astype's transpose rounds it."""
    x = [0.5, -1.25, 2.0]
    t = tw.asarray(x, device=dev, dtype=tw.float16)
    g = tw.grad(lambda v: (v.astype(tw.float32) ** 2).sum())(t)
    assert g.dtype == tw.float16 and same(read(g), [2 * v for v in x])


def test_creation_in_float16(dev):
    h = {"dtype": tw.float16, "device": dev}
    assert same(read(tw.full(3, 0.1, **h)), [half(f32(0.1))] * 3)  # the float32 parameter, rounded
    assert same(read(tw.arange(5, **h)), [0.0, 1.0, 2.0, 3.0, 4.0])
    assert same(read(tw.linspace(0, 1, 5, **h)), [0.0, 0.25, 0.5, 0.75, 1.0])
    assert read(tw.eye(2, **h)) == [[1.0, 0.0], [0.0, 1.0]] and tw.zeros((2, 3), **h).dtype == tw.float16
