"""The software adapters' matmul (kernels/matmul_direct.py): every alignment case on awkward shapes against
NumPy in float64, operands stored transposed, batches and broadcasts, the edges of the per-thread block; when it
runs and when the tiled kernel does instead."""

from __future__ import annotations

import numpy as np
import pytest

from trueno_web import kernels
from trueno_web.kernels.matmul_direct import TILE, direct_fits
from trueno_web.runtime import block_on

DIRECT = "with no workgroup memory and no barrier"  # the direct kernel's header
TILED = "var<workgroup> a_tile"


def stored(gpu, x, transposed):
    """x on the device, or x stored transposed and viewed back (read in place by the product)."""
    return gpu.tensor(np.ascontiguousarray(np.swapaxes(x, -1, -2))).mT if transposed else gpu.tensor(x)


def run_checked(gpu, shapes, seed=0, transpose=""):
    """Each (A shape, B shape) product against float64; `transpose` names the operands stored transposed."""
    rng = np.random.default_rng(seed)
    for sa, sb in shapes:
        a, b = rng.standard_normal(sa, dtype=np.float32), rng.standard_normal(sb, dtype=np.float32)
        got = block_on((stored(gpu, a, "a" in transpose) @ stored(gpu, b, "b" in transpose)).numpy())
        ref, mag = a.astype(np.float64) @ b, np.abs(a).astype(np.float64) @ np.abs(b)
        assert got.shape == ref.shape, (sa, sb)
        assert np.all(np.abs(got - ref) <= 2e-6 * mag + 1e-30), (sa, sb, float(np.max(np.abs(got - ref) / mag)))


def compiled(gpu, part) -> bool:
    return any(part in source for source, _ in gpu.executor.pipelines)


@pytest.fixture
def direct_gpu(fresh_gpu):
    fresh_gpu.executor.caps.matmul_direct = True
    return fresh_gpu


@pytest.mark.parametrize(
    "shapes",
    [
        # K % 4 != 0: A by scalars, the K tail; sizes 1, 7, 65, 257, past the 64 x 64 tile and short of it
        [((1, 1), (1, 1)), ((7, 5), (5, 9)), ((65, 257), (257, 7)), ((33, 3), (3, 1)), ((9, 257), (257, 136))],
        # K % 4 == 0: A by vec4s along K; M, N not multiples of the tile, of the threads or of 4
        [((1, 4), (4, 4)), ((65, 256), (256, 68)), ((7, 8), (8, 260)), ((130, 64), (64, 7))],
    ],
    ids=["scalar-a", "vec4-a"],
)
def test_direct_against_numpy(direct_gpu, shapes):
    run_checked(direct_gpu, shapes)
    assert compiled(direct_gpu, DIRECT) and not compiled(direct_gpu, TILED)


def test_direct_batches_and_broadcasts(direct_gpu):
    """A batch of products in one dispatch (its offsets per product), one operand broadcast along the batch,
    a batch folded into M, and empty products."""
    shapes = [
        ((2, 33, 71), (2, 71, 19)),
        ((3, 2, 9, 12), (2, 12, 40)),
        ((1, 65, 8), (3, 8, 5)),
        ((4, 7, 6), (6, 9)),
        ((5, 0), (0, 3)),
        ((0, 4), (4, 4)),
    ]
    run_checked(direct_gpu, shapes, seed=1)
    assert compiled(direct_gpu, "LOCATE for a batch of products") and not compiled(direct_gpu, TILED)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_direct_integers_wrap_as_numpy(direct_gpu, dtype):
    """Integer products, exact and wrapping as NumPy's: A by scalars (K = 5) and by vec4s (K = 132)."""
    rng = np.random.default_rng(7)
    for m, k, n in ((7, 5, 9), (65, 132, 33)):
        a = rng.integers(-(2**31), 2**31, (m, k)).astype(np.int32).view(dtype)
        b = rng.integers(-(2**31), 2**31, (k, n)).astype(np.int32).view(dtype)
        got = block_on((direct_gpu.tensor(a) @ direct_gpu.tensor(b)).numpy())
        assert got.dtype == dtype and np.array_equal(got, a @ b), (m, k, n)
    assert compiled(direct_gpu, DIRECT) and not compiled(direct_gpu, TILED)


@pytest.mark.parametrize("transpose", ["a", "b", "ab"])
def test_direct_transposed_operands(direct_gpu, transpose):
    """Operands stored transposed (a backward pass's x.T @ d and d @ w.T), read in place: K % 4 == 0 and not,
    M and N off the tile and off 4, a batch."""
    shapes = [((65, 132), (132, 9)), ((7, 37), (37, 70)), ((1, 1), (1, 1)), ((2, 9, 12), (2, 12, 33))]
    run_checked(direct_gpu, shapes, seed=2, transpose=transpose)
    assert compiled(direct_gpu, DIRECT) and not compiled(direct_gpu, TILED)


def test_long_k_takes_the_tiled_kernel(direct_gpu):
    """A K past the loop budget runs the tiled kernel, correctly."""
    direct_gpu.executor.caps.loop_trips = 30  # K = 200: 50 trips of four
    run_checked(direct_gpu, [((9, 200), (200, 8))])
    assert compiled(direct_gpu, TILED) and not compiled(direct_gpu, DIRECT)


def test_when_the_direct_kernel_runs():
    caps = kernels.Caps(matmul_direct=True)
    assert direct_fits(1024, 0, caps)
    assert not direct_fits(4 * (caps.loop_trips - 4) + 4, 2, caps)  # loop budget, batch loop included
    assert not direct_fits(64, 0, kernels.Caps(matmul_direct=True, matmul="64x64x8"))  # forced tiling
    assert not direct_fits(64, 0, kernels.Caps())
    assert TILE.bm == TILE.tm * TILE.ty and TILE.bn == TILE.tn * TILE.tx


def test_software_adapters_ask_for_it(fresh_gpu):
    """Caps.for_driver turns the direct kernel on exactly for software adapters (lavapipe here)."""
    info = fresh_gpu.adapter_info
    assert fresh_gpu.executor.caps.matmul_direct == info["software"]
