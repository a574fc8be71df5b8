"""The wasm-simd backend (trueno_web/kernels.wasm from wasm/kernels.c, run here under wasmtime): every op of
the catalog against its float64 NumPy reference with the catalog's tolerances, the special values, the
matmul/convolution shapes, fusion, the allocator, and the shipped module against its source."""

from __future__ import annotations

import array
import hashlib
import importlib.util
import math
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _cases import FLOAT_CATALOG
from _helpers import floats

np = pytest.importorskip("numpy")
pytest.importorskip("wasmtime")

import trueno_web as tw  # noqa: E402
from trueno_web import ops  # noqa: E402
from trueno_web.references import reference_dtype  # noqa: E402
from trueno_web.runtime import block_on  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SIZES = (0, 1, 3, 4, 255, 256, 257, 4097, 1 << 17)
F32_MAX = float(np.finfo(np.float32).max)
SPECIALS = [
    np.nan,
    np.inf,
    -np.inf,
    -0.0,
    0.0,
    1.0,
    -1.0,
    1e-30,
    -1e-30,
    1e-40,
    -1e-40,
    0.5,
    -0.5,
    9.0,
    -9.0,
    20.0,
    -20.0,
    88.0,
    -88.0,
    88.75,
    -88.75,
    89.5,
    -89.5,
    100.0,
    -100.0,
    104.0,
    -104.0,
    1e10,
    -1e10,
    1e30,
    -1e30,
    F32_MAX,
    -F32_MAX,
]
PARAMS = {"lo": -0.5, "hi": 0.75, "s": -1.5}
UNARY = [op for op in FLOAT_CATALOG if op.kind == "unary"]
BINARY = [op for op in FLOAT_CATALOG if op.kind == "binary"]
TERNARY = [op for op in FLOAT_CATALOG if op.kind == "ternary"]
REDUCE = [op for op in ops.CATALOG if op.kind == "reduce"]


@pytest.fixture(scope="module")
def dev(wasm):
    """This file's device: the session's wasm-simd one (conftest)."""
    return wasm


def params_of(op, **override):
    return {p.name: override.get(p.name, p.default if p.default is not None else PARAMS[p.name]) for p in op.params}


def reference(op, *arrays, **params):
    """op.numpy on float64 inputs (references.reference_dtype), rounded to float32 (a float32 overflow is +-inf
    on both sides)."""
    with np.errstate(all="ignore"):
        out = op.numpy(*[np.asarray(a, reference_dtype(op)) for a in arrays], *params.values())
        return np.asarray(out, np.float64).astype(np.float32).astype(np.float64)


def check(got, want, rtol, atol, what=""):
    got = np.asarray(got, np.float64).reshape(-1)
    want = np.asarray(want, np.float64)
    atol = np.broadcast_to(np.asarray(atol, np.float64), want.shape).reshape(-1)
    want = want.reshape(-1)
    assert got.shape == want.shape, what
    nan = np.isnan(want) | np.isnan(got)
    inf = ~nan & (np.isinf(want) | np.isinf(got))
    fin = ~nan & ~inf
    bad = (nan & ~(np.isnan(want) & np.isnan(got))) | (inf & (got != want))
    with np.errstate(all="ignore"):
        bad[fin] = np.abs(got[fin] - want[fin]) > atol[fin] + rtol * np.abs(want[fin])
    idx = np.flatnonzero(bad)
    assert idx.size == 0, f"{what}: {idx.size} mismatches, first at {idx[:5]}: got {got[idx[:5]]}, want {want[idx[:5]]}"


def factors(n, seed):
    """n float32 factors +-e^u, |u| <= min(1, 250 / n): no partial product of them leaves float32's range."""
    rng = np.random.default_rng(seed)
    a = min(1.0, 250.0 / max(n, 1))
    return (np.exp(rng.uniform(-a, a, n)) * rng.choice([-1.0, 1.0], n)).astype(np.float32)


def inputs(op, n):
    """Inputs of size n: uniform in [-4, 4); where's condition 0 where negative; prod's `factors`."""
    if op.name == "prod":
        return [factors(n, 0)]
    xs = [floats(n, seed) for seed in range(op.arity)]
    if op.kind == "ternary":
        xs[0] = np.maximum(xs[0], 0)
    return xs


# ---------------------------------------------------------------- elementwise


@pytest.mark.parametrize("n", SIZES, ids=lambda n: f"n{n}")
@pytest.mark.parametrize("op", UNARY + BINARY + TERNARY, ids=lambda op: op.name)
def test_elementwise_sizes(dev, op, n):
    xs = inputs(op, n)
    params = params_of(op)
    got = block_on(getattr(dev, op.name)(*xs, **params))
    assert got.shape == (n,) and got.dtype == tw.dtypes.signature(op, [tw.float32] * op.arity)[1]
    check(got, reference(op, *xs, **params), op.rtol, op.atol, op.name)


def test_transcendentals_over_their_whole_range(dev):
    """Every unary op over [-120, 120] and log-spaced magnitudes up to FLT_MAX (the exp/expm1/log
    approximations across all their reduction branches)."""
    rng = np.random.default_rng(5)
    mag = 10.0 ** rng.uniform(-38, 38.5, 20000)
    x = np.concatenate([rng.uniform(-120, 120, 20000), rng.uniform(-1, 1, 20000), mag, -mag]).astype(np.float32)
    for op in UNARY:
        params = params_of(op)
        got = block_on(getattr(dev, op.name)(x, **params))
        check(got, reference(op, x, **params), op.rtol, op.atol, op.name)


@pytest.mark.parametrize("op", UNARY, ids=lambda op: op.name)
def test_unary_special_values(dev, op):
    x = np.array(SPECIALS, np.float32)
    params = params_of(op)
    got = block_on(getattr(dev, op.name)(x, **params))
    check(got, reference(op, x, **params), op.rtol, op.atol, op.name)


@pytest.mark.parametrize("op", BINARY, ids=lambda op: op.name)
def test_binary_special_values(dev, op):
    sp = np.array(SPECIALS, np.float32)
    a, b = np.repeat(sp, sp.size), np.tile(sp, sp.size)
    check(block_on(getattr(dev, op.name)(a, b)), reference(op, a, b), op.rtol, op.atol, op.name)


@pytest.mark.parametrize("op", TERNARY, ids=lambda op: op.name)
def test_ternary_special_values(dev, op):
    sp = np.array(SPECIALS, np.float32)
    c, a, b = (g.reshape(-1) for g in np.meshgrid(sp, sp, sp, indexing="ij"))
    check(block_on(getattr(dev, op.name)(c, a, b)), reference(op, c, a, b), op.rtol, op.atol, op.name)


SIGNED_ZERO = {
    # WGSL semantics (shaders/functions.wgsl): the floor_finite trick makes f(-inf) = -0, not NaN
    "swish": [(-np.inf, -0.0), (-0.0, -0.0), (-200.0, -0.0)],
    "gelu": [(-np.inf, -0.0), (-0.0, -0.0), (-200.0, -0.0)],
    "mish": [(-np.inf, -0.0), (-0.0, -0.0)],
    "hardswish": [(-np.inf, -0.0), (-5.0, -0.0), (-0.0, -0.0)],
    "relu": [(-0.0, 0.0), (-5.0, 0.0), (-np.inf, 0.0)],
    "tanh": [(-0.0, -0.0), (0.0, 0.0)],
    "leaky_relu": [(-0.0, -0.0)],
}


@pytest.mark.parametrize("name", sorted(SIGNED_ZERO))
def test_signed_zeros(dev, name):
    xs, want = zip(*SIGNED_ZERO[name])
    got = block_on(getattr(dev, name)(np.array(xs, np.float32)))
    assert list(got) == list(want) and list(np.signbit(got)) == list(np.signbit(want)), (xs, got)


def test_nan_and_saturation_semantics(dev):
    nan, inf = np.nan, np.inf
    x = np.array([nan, inf, -inf, 50.0, -50.0], np.float32)
    assert np.isnan(block_on(dev.relu(x))[0])  # relu keeps NaN
    assert list(block_on(dev.tanh(x))[1:]) == [1.0, -1.0, 1.0, -1.0]  # tanh saturates
    assert list(block_on(dev.sigmoid(x))[1:3]) == [1.0, 0.0]
    assert list(block_on(dev.elu(x))[1:3]) == [inf, -1.0]
    assert list(block_on(dev.clip(x, -1.0, 2.0))[1:]) == [2.0, -1.0, 2.0, -1.0]
    assert np.isnan(block_on(dev.clip(x, -1.0, 2.0))[0])
    for name in ("sigmoid", "tanh", "swish", "gelu", "mish", "selu", "elu", "hardswish", "leaky_relu"):
        assert np.isnan(block_on(getattr(dev, name)(x))[0]), name
    # exp overflow: softmax and sigmoid of huge magnitudes stay finite where the math is finite
    assert list(block_on(dev.sigmoid(np.array([-1e30, 1e30], np.float32)))) == [0.0, 1.0]


# ---------------------------------------------------------------- reductions


def check_reduce(op, got, *xs):
    want = float(reference(op, *xs).reshape(-1)[0])
    if op.name == "norm_l2" and np.any(np.isfinite(xs[0]) & (np.abs(xs[0]) > 1.8446743e19)):
        want = math.inf  # sqrt(sum(x * x)) in float32 on every backend: x * x overflows
    mag = float(reference(op, *[np.abs(x) for x in xs]).reshape(-1)[0])
    if op.name == "prod":
        mag *= xs[0].size  # n - 1 roundings, each relative to the product
    check([got], [want], op.rtol, op.atol * max(mag, 1.0) if op.name not in ("max", "min") else 0.0, op.name)


@pytest.mark.parametrize("n", SIZES, ids=lambda n: f"n{n}")
@pytest.mark.parametrize("op", REDUCE, ids=lambda op: op.name)
def test_reduction_sizes(dev, op, n):
    if n == 0 and op.name in ("max", "min"):
        with pytest.raises(tw.TruenoValueError):
            block_on(getattr(dev, op.name)(floats(0, 0)))
        return
    xs = inputs(op, n)
    got = block_on(getattr(dev, op.name)(*xs))
    assert isinstance(got, float)
    check_reduce(op, got, *xs)


@pytest.mark.parametrize("op", REDUCE, ids=lambda op: op.name)
@pytest.mark.parametrize("where", [0, 5, 16, 1000, 1026], ids=lambda w: f"at{w}")
@pytest.mark.parametrize("v", [np.nan, np.inf, -np.inf, 1e30, -0.0], ids=repr)
def test_reduction_special_values(dev, op, where, v):
    xs = inputs(op, 1027)
    xs[0][where] = v
    check_reduce(op, block_on(getattr(dev, op.name)(*xs)), *xs)


@pytest.mark.parametrize("name", ["dot", "sum", "norm_l1", "norm_l2"])
def test_long_sums_are_accurate(dev, name):
    """10^6 elements: within 1e-4 relative of the float64 result (pairwise blocks, many accumulators)."""
    rng = np.random.default_rng(11)
    a = rng.uniform(0.0, 1.0, 10**6).astype(np.float32)
    b = rng.uniform(0.0, 2.0, 10**6).astype(np.float32)
    args = (a, b) if name == "dot" else (a,)
    got = block_on(getattr(dev, name)(*args))
    want = ops.get(name).numpy(*[x.astype(np.float64) for x in args])
    assert abs(got - want) <= 1e-4 * abs(want), (got, want)
    # and with cancellation, against the magnitude
    c = rng.standard_normal(10**6).astype(np.float32)
    got = block_on(dev.sum(c))
    assert abs(got - c.astype(np.float64).sum()) <= 1e-6 * np.abs(c).astype(np.float64).sum()


def test_max_min_propagate_nan_in_the_tail(dev):
    for n in (1, 3, 5, 17, 33):
        for i in range(n):
            x = floats(n, n)
            x[i] = np.nan
            assert math.isnan(block_on(dev.max(x))) and math.isnan(block_on(dev.min(x))), (n, i)
    x = floats(37, 1)
    assert block_on(dev.max(x)) == x.max() and block_on(dev.min(x)) == x.min()
    assert block_on(dev.max(np.full(5, -np.inf, np.float32))) == -np.inf


# ---------------------------------------------------------------- softmax


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize(
    "shape", [(1,), (3,), (4,), (257,), (4097,), (1, 1), (3, 5), (7, 256), (5, 1027), (2, 0)], ids=str
)
def test_softmax_shapes(dev, name, shape):
    op = ops.get(name)
    x = floats(math.prod(shape), 3, -8, 8).reshape(shape)
    got = block_on(getattr(dev, name)(x))
    assert got.shape == shape
    check(got, reference(op, x) if x.size else x, op.rtol, op.atol, name)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_extremes(dev, name):
    op = ops.get(name)
    x = np.array(
        [
            [1000.0, 999.0, -1000.0, 0.0],
            [np.nan, 1.0, 2.0, 3.0],
            [np.inf, 1.0, 2.0, 3.0],
            [-np.inf, 1.0, 2.0, 3.0],
            [-np.inf] * 4,
            [88.0, -88.0, 1e30, -1e30],
            [-0.0, 0.0, 0.0, -0.0],
        ],
        np.float32,
    )
    got = block_on(getattr(dev, name)(x))
    check(got, reference(op, x), op.rtol, op.atol, name)
    if name == "softmax":
        p = block_on(dev.softmax(np.array([1000.0, 999.0, -1000.0], np.float32)))
        e = math.exp(-1)
        check(p, [1 / (1 + e), e / (1 + e), 0.0], 1e-6, 1e-7, "softmax([1000, 999, -1000])")


# ---------------------------------------------------------------- matmul and convolve2d


@pytest.mark.parametrize(
    "mkn",
    [
        (1, 1, 1),
        (17, 33, 9),
        (256, 256, 256),
        (513, 257, 129),
        (3, 1, 5),
        (5, 300, 3),
        (4, 8, 8),
        (2, 7, 300),
        (1, 600, 1),
        (9, 0, 4),
    ],
    ids=lambda s: "x".join(map(str, s)),
)
def test_matmul(dev, mkn):
    m, k, n = mkn
    op = ops.get("matmul")
    a, b = floats(m * k, 1, -1, 1).reshape(m, k), floats(k * n, 2, -1, 1).reshape(k, n)
    got = block_on(dev.matmul(a, b))
    assert got.shape == (m, n)
    mag = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    check(got, reference(op, a, b), op.rtol, op.atol * np.maximum(mag, 1.0), "matmul")
    flat = block_on(dev.matmul(a.reshape(-1), b.reshape(-1), m=m, k=k, n=n))
    assert np.array_equal(flat, got)


def test_matmul_special_values(dev):
    a = np.array([[1.0, np.nan, 2.0], [np.inf, 1.0, 0.0], [1.0, 2.0, 3.0]], np.float32)
    b = np.array([[1.0, 0.0], [2.0, 1.0], [-np.inf, 1.0]], np.float32)
    op = ops.get("matmul")
    check(block_on(dev.matmul(a, b)), reference(op, a, b), op.rtol, op.atol, "matmul")


@pytest.mark.parametrize(
    "shapes",
    [
        ((1, 1), (1, 1)),
        ((7, 9), (3, 2)),
        ((31, 45), (5, 7)),
        ((64, 67), (1, 67)),
        ((100, 37), (13, 1)),
        ((5, 40), (5, 3)),
        ((9, 23), (2, 3)),
        ((3, 3), (3, 3)),
        ((50, 29), (7, 8)),
    ],
    ids=str,
)
def test_convolve2d(dev, shapes):
    (h, w), (kh, kw) = shapes
    op = ops.get("convolve2d")
    img, ker = floats(h * w, 4, -1, 1).reshape(h, w), floats(kh * kw, 5, -1, 1).reshape(kh, kw)
    got = block_on(dev.convolve2d(img, ker))
    assert got.shape == (h - kh + 1, w - kw + 1)
    mag = reference(op, np.abs(img), np.abs(ker))
    check(got, reference(op, img, ker), op.rtol, op.atol * np.maximum(mag, 1.0), "convolve2d")


def test_convolve2d_special_values(dev):
    img = floats(6 * 21, 6).reshape(6, 21)
    img[2, 3], img[4, 17], img[0, 20] = np.nan, np.inf, -np.inf
    ker = np.array([[1.0, 0.5], [-1.0, 2.0]], np.float32)
    op = ops.get("convolve2d")
    check(block_on(dev.convolve2d(img, ker)), reference(op, img, ker), op.rtol, op.atol * 20, "convolve2d")


# ---------------------------------------------------------------- batches, fusion, memory


@pytest.mark.parametrize("n", [1, 4097, 3 * 16384 + 7], ids=lambda n: f"n{n}")
def test_fused_chain_matches_numpy_and_the_unfused_path(dev, n):
    x, other = floats(n, 8), floats(n, 9)
    want = np.float32(2.0) * np.maximum(x, 0) + other
    results = []
    for fuse in (True, False):
        batch = dev.batch(fuse=fuse)
        a = batch.upload(x)
        r = batch.relu(a)
        s = batch.scale(r, 2.0)
        out = batch.add(s, batch.upload(other))
        block_on(batch.execute())
        results.append(block_on(batch.read(out)))
        assert batch.stats.dispatches == (1 if fuse else 3) and batch.stats.submits == 1
        assert batch.stats.uploads == batch.stats.downloads == batch.stats.bytes_up == 0
        batch.release()
    assert np.array_equal(results[0], want) and np.array_equal(results[1], want)


def test_batch_mixed_steps_and_kept_intermediates(dev):
    x = floats(3000, 10)
    batch = dev.batch()
    a = batch.upload(x)
    t = batch.keep(batch.tanh(a))
    sig = batch.sigmoid(t)
    y = batch.mul(sig, t)
    total = batch.sum(y)
    sm = batch.softmax(batch.upload(x.reshape(30, 100)))
    block_on(batch.execute())
    tanh, yv = block_on(batch.read(t)), block_on(batch.read(y))
    assert np.allclose(tanh, np.tanh(x.astype(np.float64)), rtol=2e-5, atol=2e-6)
    assert np.allclose(yv, tanh / (1 + np.exp(-tanh.astype(np.float64))), rtol=2e-5, atol=2e-6)
    assert abs(block_on(batch.read(total)) - yv.astype(np.float64).sum()) < 1e-3
    assert np.allclose(block_on(batch.read(sm)).sum(axis=1), 1.0, atol=1e-5)
    with pytest.raises(tw.BatchError):
        block_on(batch.read(sig))  # fused away: never written to memory
    batch.release()


def test_device_arrays_and_no_leaks(dev):
    ex = dev.executor
    before = ex.live_bytes()
    x = floats(5000, 12)
    arr = block_on(dev.upload(x))
    assert np.array_equal(block_on(arr.read()), x)
    for _ in range(3):
        assert np.allclose(block_on(dev.relu(arr)), np.maximum(x, 0))
        block_on(dev.matmul(x[:100].reshape(10, 10), x[100:200].reshape(10, 10)))
        batch = dev.batch()
        out = batch.scale(batch.relu(batch.upload(arr)), 3.0)
        block_on(batch.execute())
        block_on(batch.read(out))
        batch.release()
    arr.release()
    assert ex.live_bytes() == before
    assert dev.stats.uploads == 0 and dev.stats.downloads == 0


def test_allocator_reuses_and_never_overlaps(dev):
    """Random alloc/free: live blocks never overlap, keep their contents, and everything comes back."""
    ex = dev.executor
    before = ex.live_bytes()
    rng = random.Random(3)
    live = {}
    for step in range(600):
        if live and (rng.random() < 0.45 or len(live) > 40):
            buf, fill = live.pop(rng.choice(list(live)))
            assert ex.module.read(buf.ptr, buf.nbytes) == bytes([fill]) * buf.nbytes
            ex.free(buf)
        else:
            nbytes = rng.choice([0, 1, 4, 15, 16, 17, 100, 4096, 70000, 300000])
            buf = ex.alloc(nbytes, "test")
            assert buf.ptr % 16 == 0
            fill = step % 251
            ex.module.write(buf.ptr, memoryview(bytes([fill]) * nbytes))
            live[buf.ptr] = (buf, fill)
        spans = sorted((b.ptr, b.ptr + b.nbytes) for b, _ in live.values())
        assert all(e <= s for (_, e), (s, _) in zip(spans, spans[1:]))
    for buf, _ in live.values():
        ex.free(buf)
    assert ex.live_bytes() == before


def test_executor_without_numpy_types(dev):
    """The executor itself speaks memoryviews and array('f') (what it gets inside Pyodide)."""
    from trueno_web.graph import MapStep, Node, OpStep, Plan
    from trueno_web.host import HostData

    ex = dev.executor
    x = array.array("f", [-1.0, 2.0, -3.0, 4.0, 5.0])
    nodes = [
        Node(0, None, (), (), (5,), host=HostData(memoryview(x), (5,))),
        Node(1, ops.get("relu"), (0,), (), (5,)),
        Node(2, ops.get("sum"), (1,), (), ()),
    ]
    block_on(ex.execute(nodes, Plan((MapStep(5, [0], [1], [1]), OpStep(2)), frozenset(), ()), ()))
    out = block_on(ex.read(nodes[1].buffer, 4 * nodes[1].size, ()))
    assert out.format == "B" and list(out.cast("f")) == [0.0, 2.0, 0.0, 4.0, 5.0]
    assert list(block_on(ex.read(nodes[2].buffer, 4, ())).cast("f")) == [11.0]
    for node in nodes:
        ex.free(node.buffer)


def test_module_import_is_light():
    code = (
        "import sys, trueno_web.backends.wasm_simd as w; "
        "assert not {'numpy', 'wasmtime', 'js'} & set(sys.modules), sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_limits_are_clear_errors(dev):
    from trueno_web.graph import Plan

    ex = dev.executor
    with pytest.raises(tw.LimitError, match="max_buffer_size"):
        ex.check_size(2**31 + 4, "this input")
    assert ex.module.call("tw_alloc", -16) == 0  # 0xFFFFFFF0 bytes: no room, a null pointer (LimitError above)
    closed = block_on(tw.GpuDevice.create("wasm-simd"))
    x = block_on(closed.upload([1.0, 2.0]))
    closed.close()
    x.release()  # freeing after close is harmless
    with pytest.raises(tw.DeviceLostError):
        block_on(closed.executor.execute([], Plan((), frozenset(), ()), ()))


def test_device_reports_the_backend(dev):
    assert dev.backend == "wasm-simd"
    assert "SIMD128" in dev.adapter_info["device"] and dev.adapter_info["software"] is True
    assert dev.limits["max_buffer_size"] == 2**31


# ---------------------------------------------------------------- the shipped module and its source


def _build_module():
    spec = importlib.util.spec_from_file_location("trueno_wasm_build", ROOT / "wasm" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_shipped_wasm_matches_its_source():
    """kernels.wasm.sha256 records the hash of wasm/kernels.c + flags and of the built module: a source
    edit without `python wasm/build.py` (or a stale .wasm) fails here, no clang needed. The module stays
    small beside Pyodide's megabytes: under 128 KiB (64 KiB held the float32 kernels alone; every op on
    int32, uint32 and bool, vectorised but not unrolled, took it to 82 KiB)."""
    build = _build_module()
    recorded = build.read_hash_file()
    assert recorded["source"] == build.source_hash(), "wasm/kernels.c changed: run `python wasm/build.py`"
    shipped = (ROOT / "trueno_web" / "kernels.wasm").read_bytes()
    assert recorded["wasm"] == hashlib.sha256(shipped).hexdigest(), "kernels.wasm is not the recorded build"
    assert len(shipped) < 128 * 1024
    from trueno_web.backends.wasm_simd import wasm_bytes

    assert wasm_bytes() == shipped  # what the package loads (importlib.resources)


def _clang_or_skip(build):
    cc = build.clang()
    if cc is None or shutil.which(cc) is None:
        pytest.skip("clang is not installed here")
    return cc


def test_rebuild_gives_the_same_bytes(tmp_path):
    build = _build_module()
    cc = _clang_or_skip(build)
    recorded = build.read_hash_file()
    if build.clang_version(cc) != recorded["clang"]:
        pytest.skip(f"clang {build.clang_version(cc)} here, the module was built with clang {recorded['clang']}")
    out = build.compile_wasm(tmp_path / "kernels.wasm", build.SIMD_FLAGS, cc)
    assert hashlib.sha256(out.read_bytes()).hexdigest() == recorded["wasm"]


def test_scalar_build_computes_the_same(tmp_path):
    """`python wasm/build.py --scalar`: the same C without -msimd128 (for benchmarks) gives the same results."""
    build = _build_module()
    cc = _clang_or_skip(build)
    wasm = build.compile_wasm(tmp_path / "scalar.wasm", build.SCALAR_FLAGS, cc).read_bytes()
    assert not _validates_with_simd_off(build.SHIPPED.read_bytes()) and _validates_with_simd_off(wasm)
    from trueno_web.backends.wasm_simd import WasmExecutor

    scalar = tw.GpuDevice(block_on(WasmExecutor.create(wasm)))
    assert "scalar" in scalar.adapter_info["device"]
    x = floats(1027, 13, -30, 30)
    x[:4] = [np.nan, np.inf, -np.inf, -0.0]
    for op in UNARY:
        params = params_of(op)
        check(block_on(getattr(scalar, op.name)(x, **params)), reference(op, x, **params), op.rtol, op.atol, op.name)
    a, b = floats(37 * 19, 1).reshape(37, 19), floats(19 * 23, 2).reshape(19, 23)
    assert np.allclose(block_on(scalar.matmul(a, b)), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    want = np.dot(x[4:].astype(np.float64), x[4:])
    assert abs(block_on(scalar.dot(x[4:], x[4:])) - want) < 1e-6 * want
    scalar.close()


def _validates_with_simd_off(wasm: bytes) -> bool:
    import wasmtime

    config = wasmtime.Config()
    config.wasm_relaxed_simd = False
    config.wasm_simd = False
    try:
        wasmtime.Module(wasmtime.Engine(config), wasm)
    except wasmtime.WasmtimeError:
        return False
    return True
