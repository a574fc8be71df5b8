"""Softmax's fast paths against float64 NumPy on every backend: the split-row kernel (a stats
pass and a write pass that walks the grid and each chunk backwards) on ragged chunks, several rows and
special values, forced at small sizes by a small CHUNK_VECS; the one-pass kernel with several rows per
workgroup and partial four-vector trips, its rows in registers and in loops; and attention's scale + causal mask read by the softmax's row
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


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("regs", [softmax_kernel.REGS, 0], ids=["registers", "loops"])
def test_one_pass_rows_in_registers_and_in_loops(dev, monkeypatch, regs, name):
    """The one-pass kernel with a thread's vectors of its row in registers (REGS, the default: the row read once,
    one tw_exp an element) and with its loops (REGS = 0: what rows of more vectors a thread take), on vec4 and
    f32 rows and rows of one vector a thread, with NaN, +inf, rows of -inf, -inf tails and +-1e30."""
    monkeypatch.setattr(softmax_kernel, "REGS", regs)
    if dev.backend == "webgpu":
        dev.executor.forget()  # dispatches of these shapes kept from the other REGS
    try:
        for cols in (1204, 1203, 64):
            x = np.random.default_rng(cols).standard_normal((softmax_kernel.CHUNK_ROWS + 12, cols), dtype=np.float32)
            x *= 6
            x[0, cols - 1], x[1, 7], x[2, :], x[3, cols // 2 :] = np.nan, np.inf, -np.inf, -np.inf
            x[4, cols - 1], x[5, ::7] = 1e30, -1e30
            check(dev, name, x)
    finally:
        if dev.backend == "webgpu":
            dev.executor.forget()


# ---------------------------------------------------------------- the row kernel: attention, strided loads


def dispatches(dev, t):
    """(t's values, the dispatches its realisation took)."""
    before = dev.stats.dispatches
    out = block_on(t.numpy())
    return out, dev.stats.dispatches - before


def positions(dev, n_q, n_k, shape):
    """Key and query positions broadcast to the scores' shape (as nn.scaled_dot_product_attention has them)."""
    key = dev.tensor(np.arange(n_k, dtype=np.float32)).expand(shape)
    query = dev.tensor(np.arange(n_q, dtype=np.float32)).reshape(n_q, 1).expand(shape)
    return key, query


def test_scaled_causal_masked_softmax_is_one_row_pass(dev):
    """softmax(where(key <= query, s * scale, -inf)): one dispatch, the masked scores never written."""
    s = np.random.default_rng(3).standard_normal((3, 9, 11), dtype=np.float32) * 4
    key, query = positions(dev, 9, 11, s.shape)
    t = tw.Tensor.where(key <= query, dev.tensor(s) * 0.125, -np.inf).softmax(axis=-1)
    got, n = dispatches(dev, t)
    z = np.where(np.arange(11) <= np.arange(9)[:, None], s.astype(np.float64) * 0.125, -np.inf)
    want = np.exp(z - z.max(-1, keepdims=True))
    np.testing.assert_allclose(got, want / want.sum(-1, keepdims=True), rtol=2e-5, atol=1e-7)
    assert n == 1


def test_causal_attention_is_one_dispatch(dev):
    """The fused attention op: no copy of k^T, no scores, one kernel (tests/test_attention.py has the rest)."""
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((2, 7, 8), dtype=np.float32) for _ in range(3))
    got, n = dispatches(dev, tw.scaled_dot_product_attention(dev.tensor(q), dev.tensor(k), dev.tensor(v), causal=True))
    z = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) / np.sqrt(8)
    z = np.where(np.tril(np.ones((7, 7), bool)), z, -np.inf)
    p = np.exp(z - z.max(-1, keepdims=True))
    np.testing.assert_allclose(got, p / p.sum(-1, keepdims=True) @ v, rtol=1e-5, atol=1e-6)
    assert n == 1


def test_row_reductions_of_strided_views(dev):
    """Views read by row (transposed, reversed, offset, several dimensions spanning a row, broadcast) and
    through the flat index (padded) feed row reductions and the softmax's row kernel."""
    x = np.random.default_rng(5).standard_normal((3, 5, 7), dtype=np.float32)
    t, x64 = dev.tensor(x), x.astype(np.float64)
    cases = [
        (t.permute(0, 2, 1).sum(-1), x64.transpose(0, 2, 1).sum(-1)),
        (t[:, ::-1, 1:].max(-1), x64[:, ::-1, 1:].max(-1)),
        (t.permute(1, 0, 2).sum(axis=(-2, -1)), x64.transpose(1, 0, 2).sum(axis=(-2, -1))),
        (t.softmax(axis=1), np.exp(x64) / np.exp(x64).sum(1, keepdims=True)),
        ((t[:, :1, :] * t[:1, :, :1]).sum(-1), (x64[:, :1, :] * x64[:1, :, :1]).sum(-1)),
        (t.pad(((0, 0), (1, 0), (2, 3))).sum(-1), np.pad(x64, ((0, 0), (1, 0), (2, 3))).sum(-1)),
    ]
    for got, want in cases:
        np.testing.assert_allclose(block_on(got.numpy()), want, rtol=1e-5, atol=1e-6)
