"""The webgpu kernels' fast paths, each forced in turn: every matmul tiling on odd shapes (vec4 and
scalar loads), map kernels with 1-4 vec4s per thread around the vec4 tails, reductions with and
without subgroups past the unrolled loop, softmax on the one-workgroup-per-row, rows-per-workgroup
and split-row paths with special values, and transfers large enough for the staging rings.

Runs under pytest (skips without an adapter) and as a script on any machine with an adapter:
    python tests/test_gpu_kernels.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

np = pytest.importorskip("numpy") if "pytest" in sys.modules else __import__("numpy")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trueno_web as tw  # noqa: E402
from trueno_web import kernels  # noqa: E402
from trueno_web.runtime import block_on  # noqa: E402

pytestmark = pytest.mark.gpu

_DEV = []


def device():
    if not _DEV:
        if not block_on(tw.GpuDevice.is_available()):
            pytest.skip("no WebGPU adapter here")
        _DEV.append(block_on(tw.GpuDevice.create("webgpu")))
    return _DEV[0]


def rng(seed):
    return np.random.default_rng(seed)


MATMUL_SHAPES = [
    (1, 1, 1),
    (3, 5, 7),
    (17, 33, 9),
    (64, 64, 64),
    (65, 33, 17),
    (129, 12, 131),
    (130, 8, 4),
    (200, 37, 260),
    (5, 300, 8),
    (256, 256, 256),
    (1, 257, 3),
    (131, 1, 129),
]


@pytest.mark.parametrize("config", ["", *kernels.MATMUL_CONFIGS])
def test_matmul_tilings_on_odd_shapes(config, monkeypatch):
    dev = device()
    caps = dev.executor.caps
    monkeypatch.setattr(caps, "matmul", config)  # undone after the test
    for i, (m, k, n) in enumerate(MATMUL_SHAPES):
        r = rng(i)
        a, b = r.standard_normal((m, k), dtype=np.float32), r.standard_normal((k, n), dtype=np.float32)
        got = block_on(dev.matmul(a, b))
        ref = a.astype(np.float64) @ b
        mag = np.abs(a).astype(np.float64) @ np.abs(b)
        assert got.shape == (m, n)
        assert np.all(np.abs(got - ref) <= 1e-5 * mag + 1e-30), (config, m, k, n)


@pytest.mark.slow
def test_matmul_past_65535_workgroups_in_one_dimension():
    dev = device()
    m = 65536 * 128 + 5  # > 65535 tiles even of 128 rows
    a = rng(5).standard_normal((m, 1), dtype=np.float32)
    b = np.array([[2.0, -1.0]], np.float32)
    got = block_on(dev.matmul(a, b))
    assert np.array_equal(got, a @ b)


@pytest.mark.parametrize("vpt", [1, 2, 4])
def test_map_vec4_tails(vpt, monkeypatch):
    dev = device()
    caps = dev.executor.caps
    monkeypatch.setattr(caps, "map_vpt", vpt)  # undone after the test
    for n in (0, 1, 3, 4, 5, 255, 256, 257, 1023, 2049, 4097, (1 << 18) + 3):
        x = rng(n).standard_normal(n, dtype=np.float32)
        o = rng(n + 1).standard_normal(n, dtype=np.float32)
        with dev.batch() as b:
            out = b.add(b.scale(b.relu(b.upload(x)), 2.0), b.upload(o))
            kept = b.keep(b.sigmoid(b.upload(x)))
            block_on(b.execute())
            assert np.array_equal(block_on(b.read(out)), np.maximum(x, 0) * np.float32(2) + o), n
            assert block_on(b.read(kept)).shape == (n,)


def test_long_chain_is_one_dispatch_of_one_copy():
    """A chain past kernels.map.CODE_BUDGET runs as one f32 dispatch (the chain once per thread, not 4 x vpt
    times); its results match float64 NumPy, on sizes around the vec4 tail."""
    dev = device()
    names = ("relu", "sigmoid", "tanh", "gelu")
    for n in (1, 4097):
        x = rng(n).standard_normal(n, dtype=np.float32)
        with dev.batch() as b:
            v = b.upload(x)
            for i in range(40):
                v = getattr(b, names[i % 4])(v)
            block_on(b.execute())
            got = block_on(b.read(v))
        assert b.stats.dispatches == 1
        ref = x.astype(np.float64)
        for i in range(40):
            ref = tw.ops.get(names[i % 4]).numpy(ref)
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    source = [s for s, _ in dev.executor.pipelines if s.count("tw_gelu(") >= 10]
    assert source and all("array<f32>" in s and "vec4<f32>(" not in s.split("fn tw_chain")[1] for s in source)


@pytest.mark.parametrize("subgroups", [False, True])
def test_reductions_sizes(subgroups, monkeypatch):
    dev = device()
    caps = dev.executor.caps
    if subgroups and not caps.subgroups:
        pytest.skip("this adapter has no subgroups")
    monkeypatch.setattr(caps, "subgroups", subgroups)  # undone after the test
    for n in (1, 2, 3, 4, 5, 7, 255, 1024, 1025, 4097, 4 * 256 * 4 * 3 + 1, (1 << 20) + 1, (1 << 22) + 3):
        x = rng(n).standard_normal(n, dtype=np.float32)
        y = rng(n + 1).standard_normal(n, dtype=np.float32)
        for name in ("sum", "dot", "max", "min", "norm_l1", "norm_l2"):
            args = (x, y) if name == "dot" else (x,)
            got = block_on(getattr(dev, name)(*args))
            op = tw.ops.get(name)
            ref = op.numpy(*[a.astype(np.float64) for a in args])
            if name in ("max", "min"):
                assert got == ref, (name, n)
                continue
            mag = op.numpy(*[np.abs(a.astype(np.float64)) for a in args])
            assert abs(got - ref) <= 1e-5 * mag, (name, n, got, ref)
    x = rng(9).standard_normal(5000, dtype=np.float32)
    x[4097] = np.nan
    for name in ("max", "min", "sum"):
        assert np.isnan(block_on(getattr(dev, name)(x))), name


SOFTMAX_SHAPES = [
    (1,),
    (3,),
    (4,),
    (7,),
    (1, 1000),
    (5, 4096),
    (3, 70000),
    (2, 65537),
    (1, 1 << 20),
    (1000, 3),
    (333, 64),
    (64, 100),
    (40, 12),
    (1, 20000),
    (300, 1),
    (129, 5),
]


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_paths(name):
    dev = device()
    for i, shape in enumerate(SOFTMAX_SHAPES):
        x = rng(i).standard_normal(shape, dtype=np.float32) * 4
        got = block_on(getattr(dev, name)(x))
        ref = tw.ops.get(name).numpy(x.astype(np.float64))
        assert got.shape == x.shape
        assert np.allclose(got, ref, rtol=2e-5, atol=1e-6), (name, shape)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_special_values_on_every_path(name):
    dev = device()
    inf, nan = np.inf, np.nan
    rows = np.array(
        [
            [nan, 1, 2, 3],
            [inf, 1, 2, 3],
            [-inf, 1, 2, 3],
            [-inf] * 4,
            [inf, inf, 0, 0],
            [1e30, -1e30, 0, 1],
            [-inf, -inf, 5, -inf],
            [3, 2, 1, -inf],
        ],
        np.float32,
    )
    for x in (rows, rows[:, :3].copy(), np.tile(rows, (1, 5000)), np.tile(rows[2:3], (1, 30000))):
        got = block_on(getattr(dev, name)(x))
        with np.errstate(all="ignore"):
            ref = tw.ops.get(name).numpy(x.astype(np.float64))
        assert np.allclose(got, ref, rtol=2e-5, atol=1e-6, equal_nan=True), (name, x.shape)


def test_large_transfers_round_trip():
    dev = device()
    for n in ((1 << 18) + 1, (1 << 20) + 3, 3 * (1 << 21) + 7):
        x = rng(n).standard_normal(n, dtype=np.float32)
        a = block_on(dev.upload(x))
        assert np.array_equal(block_on(a.read()), x)
        ro = x.copy()
        ro.setflags(write=False)
        assert np.array_equal(block_on(dev.scale(ro, -2.0)), ro * np.float32(-2))
        a.release()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-x"]))
