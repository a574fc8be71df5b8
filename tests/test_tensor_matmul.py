"""Batched matmul with NumPy's rules on every backend, against a float64 reference: both operands batched,
batch dimensions that broadcast (never copied), the fold of (..., M, K) @ (K, N) into M, 1-D operands,
strided operands, empty batches, the grid past 65535 workgroups, the pure-Python reference, and the
errors raised where the expression is written.

The reference is _pyref.Ref's matmul (pure Python, float64, NumPy's broadcasting of batch dimensions;
test_the_reference_multiplies_like_numpy checks it against NumPy on the desktop) and the inputs come
from a seeded random.Random, so these bodies also run inside Pyodide (e2e/test_parity_in_pyodide.py).
The tests that need NumPy itself are marked `needs_numpy` with their reason."""

from __future__ import annotations

import math
import random
import struct

import pytest
from _cases import HAVE_NUMPY, Case, reference_python
from _helpers import refs, tensor
from _pyref import Ref, assert_close, concatenate, flat_values, uniform

import trueno_web as tw
from trueno_web import kernels, ops
from trueno_web.graph import Node, OpStep
from trueno_web.kernels import matmul as matmul_kernel
from trueno_web.matmul_kind import matmul_batches
from trueno_web.runtime import block_on

needs_numpy = pytest.mark.skipif(
    not HAVE_NUMPY,
    reason="needs NumPy (desktop only): the cross-checks of the pure-Python references against NumPy's matmul",
)

RNG = random.Random(11)
data = refs(RNG, -1.0, 1.0)
MATMUL = ops.get("matmul")


def check(got, a: Ref, b: Ref):
    """got == a @ b (float64) within float32 accumulation error, scaled by |a| @ |b| per element."""
    if isinstance(got, tw.Tensor):
        shape, got = got.shape, block_on(got.numpy())
    else:
        shape = None
    want, mag = a @ b, abs(a) @ abs(b)
    assert tuple(got.shape) == want.shape and got.dtype.name == "float32", (got.shape, want.shape)  # NumPy or NDResult
    assert shape is None or shape == want.shape, (shape, want.shape)
    errs = [abs(g - w) for g, w in zip(flat_values(got), want.flat)]
    assert all(e <= 2e-6 * m + 1e-30 for e, m in zip(errs, mag.flat)), max(errs)


def resolved(sa, sb):
    return MATMUL.row.shape(MATMUL, [sa, sb], {})


SHAPES = [
    ((1, 3, 4), (1, 4, 5)),  # a batch of one
    ((2, 7, 33), (2, 33, 65)),  # odd sizes, both batched
    ((3, 65, 1), (3, 1, 33)),
    ((4, 16, 8), (4, 8, 12)),  # vec4 rows
    ((4, 1, 7, 33), (1, 3, 33, 7)),  # broadcast in both operands: (4, 3)
    ((2, 3, 1, 5, 7), (2, 3, 4, 7, 1)),  # (2, 3) merge, (4) broadcast in a
    ((5, 7), (3, 7, 33)),  # a 2-D left against a batched right: a broadcast
    ((3, 33, 7), (7, 65)),  # a batched left against a 2-D right: folds into M
    ((2, 1, 33, 7), (1, 7, 5)),  # ... also with b's batch of ones
    ((17, 33), (33, 9)),  # 2-D, unchanged
    ((0, 3, 4), (0, 4, 5)),  # empty batch
    ((0, 3, 4), (4, 5)),
    ((3, 1, 2, 3), (0, 3, 2)),
    ((2, 0, 4), (2, 4, 3)),  # empty M
    ((2, 3, 0), (2, 0, 4)),  # K = 0: zeros
    ((7,), (3, 7, 5)),  # 1-D operands with batched others
    ((2, 3, 7), (7,)),
    ((7,), (2, 1, 7, 4)),
    ((1, 7), (4, 7, 1)),
]


@pytest.mark.parametrize("sa,sb", SHAPES, ids=str)
def test_batched_matmul_like_numpy(dev, sa, sb):
    a, b = data(*sa), data(*sb)
    check(tensor(dev, a) @ tensor(dev, b), a, b)


def test_one_shot_and_batch_api_take_stacks_too(dev):
    a, b = data(3, 5, 6), data(1, 6, 7)
    check(block_on(dev.matmul(a.tolist(), b.tolist())), a, b)
    with dev.batch() as batch:
        c = data(2, 3, 6)
        out = batch.matmul(batch.upload(c.f32(), c.shape), batch.upload(b[0].f32(), b[0].shape))
        assert out.shape == (2, 3, 7)
        block_on(batch.execute())
        check(block_on(batch.read(out)), c, b[0])


def test_strided_operands(dev):
    """Sliced batches are copied to row-major first, transposed matrices read in place; the results are
    NumPy's."""
    x, y = data(3, 9, 5), data(4, 3, 9, 6)
    tx, ty = tensor(dev, x), tensor(dev, y)
    check(tx.mT @ ty[1], x.transpose(0, 2, 1), y[1])  # (3, 5, 9) @ (3, 9, 6)
    check(
        ty.permute(1, 0, 2, 3)[:, ::2] @ tx[:, 3:, 1:4].unsqueeze(1),
        y.transpose(1, 0, 2, 3)[:, ::2],
        x[:, 3:, 1:4][:, None],
    )
    check(ty[::-1, :, :, :5].mT @ ty[0, :, :, :2], y[::-1, :, :, :5].transpose(0, 1, 3, 2), y[0, :, :, :2])


def _ops_under(t) -> list[str]:
    seen, stack, names = set(), [t.expr], []
    while stack:
        e = stack.pop()
        if id(e) not in seen:
            seen.add(id(e))
            names += [e.op.name] if e.op is not None else []
            stack.extend(e.inputs)
    return names


def test_a_broadcast_operand_is_never_copied(dev):
    """expand() along the batch costs nothing: the expression holds the matmul and no copy (a result
    that both operands broadcast is a view of fewer products)."""
    x, w, v = data(5, 6, 7), data(7, 4), data(3, 7, 4)
    tx, tw_, tv = tensor(dev, x), tensor(dev, w), tensor(dev, v)
    cases = [
        (tx @ tw_.expand(5, 7, 4), x @ w),
        (tx.unsqueeze(1).expand(5, 3, 6, 7) @ tv, x[:, None] @ v),
        (tx[0].expand(3, 5, 6, 7) @ tw_, (x[0] @ w).broadcast_to((3, 5, 6, 4))),
        (tx[:2].unsqueeze(1).expand(2, 3, 6, 7) @ tv.unsqueeze(0).expand(2, 3, 7, 4), x[:2, None] @ v),
    ]
    for expr, want in cases:
        assert _ops_under(expr) == ["matmul"], expr.shape
        assert expr.shape == want.shape, (expr.shape, want.shape)
        assert_close(block_on(expr.numpy()), want, rtol=1e-5, atol=1e-5)


TRANSPOSED = [((7, 5), (7, 3)), ((16, 8), (16, 12)), ((33, 65), (33, 17)), ((2, 3, 9, 4), (3, 9, 6)), ((1, 9), (1, 1))]


@pytest.mark.parametrize("sa,sb", TRANSPOSED, ids=str)
def test_transposed_operands_are_read_in_place(dev, sa, sb):
    """x.mT @ y, x @ y.mT and x.mT @ y.mT of row-major x and y: the expression holds the matmul and no copy
    (the kernels read the transpose where it lies: vec4 rows and odd ones, batched, broadcast, a vector)."""
    x, y = data(*sa), data(*sb)  # x.mT @ y: (..., a, b).mT @ (..., a, c)
    tx, ty = tensor(dev, x), tensor(dev, y)
    xt, yt = (
        x.transpose(*range(x.ndim - 2), x.ndim - 1, x.ndim - 2),
        y.transpose(*range(y.ndim - 2), y.ndim - 1, y.ndim - 2),
    )
    for expr, a, b in [(tx.mT @ ty, xt, y), (ty.mT @ tx, yt, x), (tx.mT @ tensor(dev, yt).mT, xt, y)]:
        assert _ops_under(expr) == ["matmul"], expr.shape
        check(expr, a, b)


def test_the_gradient_of_a_product_of_transposes(dev):
    """d/dx and d/dw of sum((x.T @ w.T) * c), the operands read in place, against the
    reference's products (f = sum(A @ B * C): dA = C @ B^T, dB = A^T @ C)."""
    x, w, c = data(6, 5), data(3, 6), data(5, 3)
    f = lambda x, w: ((x.T @ w.T) * tensor(dev, c)).sum()  # noqa: E731
    gx, gw = tw.grad(f, argnums=(0, 1))(tensor(dev, x), tensor(dev, w))
    a, b = x.T, w.T
    assert_close(block_on(gx.numpy()), (c @ b.T).T, rtol=1e-5, atol=1e-5)
    assert_close(block_on(gw.numpy()), (a.T @ c).T, rtol=1e-5, atol=1e-5)


def test_a_padded_broadcast_batch_dimension_keeps_its_zeros(dev):
    """A batch dimension that is broadcast and padded is partly zeros: it is not cut back to one matrix."""
    w = data(2, 2)
    t = tensor(dev, Ref.full((1, 2, 2), 1.0)).expand(3, 2, 2).pad(((1, 0), (0, 0), (0, 0)))
    want = concatenate([Ref.full((1, 2, 2), 0.0), Ref.full((3, 2, 2), 1.0)])
    check(t @ tensor(dev, w), want, w)


def test_batch_strides_and_the_fold():
    """The kind's resolved options: strides 0 where an operand broadcasts, dimensions merged where both
    step evenly, the batch folded into M where b is one matrix."""
    assert resolved((3, 4), (4, 5)) == ((3, 5), {"m": 3, "k": 4, "n": 5, "batch": 1, "dims": ()})
    assert resolved((2, 3, 5, 4), (4, 6))[1] == {"m": 30, "k": 4, "n": 6, "batch": 1, "dims": ()}
    assert resolved((2, 3, 5, 4), (1, 1, 4, 6))[1]["dims"] == ()
    assert resolved((2, 3, 5, 4), (2, 3, 4, 6))[1]["dims"] == ((6, 20, 24),)
    shape, o = resolved((2, 1, 5, 4), (1, 3, 4, 6))
    assert shape == (2, 3, 5, 6) and o["batch"] == 6 and o["dims"] == ((2, 20, 0), (3, 0, 24))
    assert list(matmul_batches(o)) == [(0, 0), (0, 24), (0, 48), (20, 0), (20, 24), (20, 48)]
    assert resolved((5, 4), (3, 4, 6))[1]["dims"] == ((3, 0, 24),)
    assert resolved((0, 5, 4), (0, 4, 6))[1]["batch"] == 0


@needs_numpy
@pytest.mark.parametrize(
    "sa,sb", [((2, 1, 3, 4), (1, 3, 4, 2)), ((3, 2, 5), (5, 3)), ((0, 2, 2), (2, 2)), ((4, 3), (2, 3, 1))], ids=str
)
def test_pure_python_reference_per_product(sa, sb):
    """op.ref once per product of the batch (the reference where NumPy is missing) agrees with NumPy."""
    import numpy as np

    a, b = data(*sa), data(*sb)
    case = Case(MATMUL, [(a.flat, sa), (b.flat, sb)])
    want = np.array(a.flat).reshape(sa) @ np.array(b.flat).reshape(sb)
    np.testing.assert_allclose(reference_python(case), want.reshape(-1), rtol=1e-12, atol=1e-12)


@needs_numpy
def test_the_reference_multiplies_like_numpy():
    """_pyref's batched matmul (broadcast batch dimensions, 1-D operands, empty batches) against NumPy."""
    import numpy as np

    rng = random.Random(13)
    for sa, sb in SHAPES + [((7,), (7,)), ((3, 1, 2, 4), (2, 4, 1)), ((1, 2, 3), (5, 1, 3, 2))]:
        a, b = uniform(rng, sa, -1, 1), uniform(rng, sb, -1, 1)
        got = a @ b
        want = np.array(a.flat).reshape(sa) @ np.array(b.flat).reshape(sb)
        assert got.shape == want.shape, (sa, sb, got.shape, want.shape)
        np.testing.assert_allclose(np.array(got.flat).reshape(got.shape), want, rtol=1e-12, atol=1e-12)
        mag = np.abs(np.array(a.flat).reshape(sa)) @ np.abs(np.array(b.flat).reshape(sb))
        np.testing.assert_allclose(np.array((abs(a) @ abs(b)).flat).reshape(got.shape), mag, rtol=1e-12)


def _grid(sa, sb, caps):
    shape, o = resolved(sa, sb)
    nodes = [Node(0, None, (), (), sa), Node(1, None, (), (), sb), Node(2, MATMUL, (0, 1), (), shape, o)]
    (d,) = kernels.dispatches(OpStep(2), nodes, caps)
    meta = bytes(d.meta)
    return d, list(struct.unpack(f"<{len(meta) // 4}I", meta))


def test_the_grid_past_65535_workgroups():
    """70000 one-tile products need 70000 workgroups: a 2-D grid; the meta words say how to find each
    product's matrices (the run of such a grid on the device: the next test, on a small max_per_dim)."""
    caps = kernels.Caps()
    d, meta = _grid((70000, 1, 3), (70000, 3, 2), caps)
    assert d.grid == (65535, 2)
    assert list(meta[:8]) == [1, 3, 2, 1, 1, 70000, 1, 0] and list(meta[8:]) == [1, 1, 1, 70000, 3, 6]
    d, meta = _grid((70000, 1, 3), (1, 3, 2), caps)  # one b for all: the batch folds into M
    bm = matmul_kernel.matmul_config(70000, 3, 2, caps).cfg.bm
    assert list(meta[:8]) == [70000, 3, 2, 1, math.ceil(70000 / bm), 1, 0, 0] and meta[8:] == [1, 1, 1]
    cfg = matmul_kernel.matmul_config(130, 8, 129, caps, batch=700).cfg
    d, meta = _grid((700, 130, 8), (700, 8, 129), caps)
    tiles = math.ceil(130 / cfg.bm) * math.ceil(129 / cfg.bn)
    assert d.grid[0] * d.grid[1] >= tiles * 700 > d.grid[0] * (d.grid[1] - 1)
    assert max(d.grid) <= 65535


@pytest.mark.parametrize("config", ["64x64x8", "128x64x16"])
def test_a_2d_grid_of_batched_tiles_on_the_device(fresh_gpu, config):
    """With max_per_dim = 5 the batch's tiles spread over a 2-D grid with spare workgroups, as past
    65535 on a real adapter; two tilings, vec4 and scalar edges (a fresh device each: the executor keeps
    the dispatches of a graph of the same structure, whatever its caps say since)."""
    caps = fresh_gpu.executor.caps
    caps.max_per_dim, caps.matmul = 5, config
    for sa, sb in [((3, 1, 65, 33), (1, 4, 33, 67)), ((7, 9, 16), (7, 16, 132)), ((2, 70, 1), (2, 1, 1))]:
        a, b = data(*sa), data(*sb)
        check(tensor(fresh_gpu, a) @ tensor(fresh_gpu, b), a, b)


def test_errors_where_written(dev):
    a, b = tensor(dev, data(2, 3, 4)), tensor(dev, data(3, 4, 5))
    with pytest.raises(tw.TruenoValueError, match=r"batch dimensions do not broadcast") as err:
        a @ b
    assert "(2, 3, 4)" in str(err.value) and "(3, 4, 5)" in str(err.value)
    with pytest.raises(tw.TruenoValueError, match=r"do not broadcast.*\(4, 3, 3, 4\).*\(2, 4, 5\)"):
        tensor(dev, data(4, 3, 3, 4)) @ tensor(dev, data(2, 4, 5))
    with pytest.raises(tw.TruenoValueError, match=r"do not broadcast"):  # an expanded operand is no exception
        a[:1].expand(3, 3, 4) @ tensor(dev, data(2, 4, 5))
    with pytest.raises(tw.TruenoValueError, match=r"inner dimensions differ.*\(2, 3, 4\).*\(2, 5, 4\)"):
        a @ tensor(dev, data(2, 5, 4))
    with pytest.raises(tw.TruenoValueError, match=r"inner dimensions differ.*\(5,\).*\(2, 4, 3\)"):
        tensor(dev, data(5)) @ tensor(dev, data(2, 4, 3))
    with pytest.raises(tw.TruenoValueError, match="at least one dimension"):
        a @ tw.asarray(1.0, device=dev)
    # the same rule under the one-shot and batch calls (nested lists: host data of those shapes)
    with pytest.raises(tw.TruenoValueError, match=r"do not broadcast.*\(2, 3, 4\).*\(3, 4, 5\)"):
        block_on(dev.matmul(data(2, 3, 4).tolist(), data(3, 4, 5).tolist()))
    with pytest.raises(tw.TruenoValueError, match=r"inner dimensions differ.*\(2, 3, 4\).*\(2, 3, 5\)"):
        dev.batch().matmul(data(2, 3, 4).tolist(), data(2, 3, 5).tolist())
    with pytest.raises(tw.TruenoValueError, match="2-D a or a stack"):
        block_on(dev.matmul(data(4).tolist(), data(2, 4, 5).tolist()))
