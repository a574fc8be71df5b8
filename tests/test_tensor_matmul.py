"""Batched matmul with NumPy's rules on every backend, against float64 NumPy: both operands batched,
batch dimensions that broadcast (never copied), the fold of (..., M, K) @ (K, N) into M, 1-D operands,
strided operands, empty batches, the grid past 65535 workgroups, the pure-Python reference, and the
errors raised where the expression is written."""

from __future__ import annotations

import math

import pytest

np = pytest.importorskip("numpy")

import trueno_web as tw  # noqa: E402
from trueno_web import kernels, ops  # noqa: E402
from trueno_web.graph import Node, OpStep  # noqa: E402
from trueno_web.kernels import matmul as matmul_kernel  # noqa: E402
from trueno_web.kinds import matmul_batches  # noqa: E402
from trueno_web.runtime import block_on  # noqa: E402

from _cases import Case, reference_python  # noqa: E402

RNG = np.random.default_rng(11)
MATMUL = ops.get("matmul")


def data(*shape):
    return RNG.uniform(-1.0, 1.0, shape).astype(np.float32)


def check(got, a, b):
    """got == a @ b (float64) within float32 accumulation error, scaled by |a| @ |b| per element."""
    got = block_on(got.numpy()) if isinstance(got, tw.Tensor) else got
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    want, mag = a64 @ b64, np.abs(a64) @ np.abs(b64)
    assert tuple(got.shape) == want.shape and got.dtype == np.float32, (got.shape, want.shape)
    assert np.all(np.abs(got - want) <= 2e-6 * mag + 1e-30), np.max(np.abs(got - want))


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
    check(dev.tensor(a) @ dev.tensor(b), a, b)


def test_one_shot_and_batch_api_take_stacks_too(dev):
    a, b = data(3, 5, 6), data(1, 6, 7)
    check(block_on(dev.matmul(a, b)), a, b)
    with dev.batch() as batch:
        c = data(2, 3, 6)
        out = batch.matmul(batch.upload(c), batch.upload(b[0]))
        assert out.shape == (2, 3, 7)
        block_on(batch.execute())
        check(block_on(batch.read(out)), c, b[0])


def test_strided_operands(dev):
    """Transposed matrices and sliced batches are copied to row-major first; the results are NumPy's."""
    x, y = data(3, 9, 5), data(4, 3, 9, 6)
    tx, ty = dev.tensor(x), dev.tensor(y)
    check(tx.transpose(-1, -2) @ ty[1], x.transpose(0, 2, 1), y[1])  # (3, 5, 9) @ (3, 9, 6)
    check(ty.permute(1, 0, 2, 3)[:, ::2] @ tx[:, 3:, 1:4].unsqueeze(1), y.transpose(1, 0, 2, 3)[:, ::2],
          x[:, 3:, 1:4][:, None])
    check(ty[::-1, :, :, :5].transpose(-1, -2) @ ty[0, :, :, :2], y[::-1, :, :, :5].transpose(0, 1, 3, 2),
          y[0, :, :, :2])


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
    tx, tw_, tv = dev.tensor(x), dev.tensor(w), dev.tensor(v)
    cases = [(tx @ tw_.expand(5, 7, 4), x @ w),
             (tx.unsqueeze(1).expand(5, 3, 6, 7) @ tv, x[:, None] @ v),
             (tx[0].expand(3, 5, 6, 7) @ tw_, np.broadcast_to(x[0].astype(np.float64) @ w, (3, 5, 6, 4))),
             (tx[:2].unsqueeze(1).expand(2, 3, 6, 7) @ tv.unsqueeze(0).expand(2, 3, 7, 4), x[:2, None] @ v)]
    for expr, want in cases:
        assert _ops_under(expr) == ["matmul"], expr.shape
        np.testing.assert_allclose(block_on(expr.numpy()), want, rtol=1e-5, atol=1e-5)


def test_a_padded_broadcast_batch_dimension_keeps_its_zeros(dev):
    """A batch dimension that is broadcast and padded is partly zeros: it is not cut back to one matrix."""
    w = data(2, 2)
    t = dev.tensor(np.ones((1, 2, 2), np.float32)).expand(3, 2, 2).pad(((1, 0), (0, 0), (0, 0)))
    want = np.concatenate([np.zeros((1, 2, 2)), np.ones((3, 2, 2))])
    check(t @ dev.tensor(w), want, w)


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


@pytest.mark.parametrize("sa,sb", [((2, 1, 3, 4), (1, 3, 4, 2)), ((3, 2, 5), (5, 3)), ((0, 2, 2), (2, 2)),
                                   ((4, 3), (2, 3, 1))], ids=str)
def test_pure_python_reference_per_product(sa, sb):
    """op.ref once per product of the batch (the reference where NumPy is missing) agrees with NumPy."""
    a, b = data(*sa), data(*sb)
    case = Case(MATMUL, [(a.reshape(-1).tolist(), sa), (b.reshape(-1).tolist(), sb)])
    want = a.astype(np.float64) @ b
    np.testing.assert_allclose(reference_python(case), want.reshape(-1), rtol=1e-12, atol=1e-12)


def _grid(sa, sb, caps):
    shape, o = resolved(sa, sb)
    nodes = [Node(0, None, (), (), sa), Node(1, None, (), (), sb), Node(2, MATMUL, (0, 1), (), shape, o)]
    (d,) = kernels.dispatches(OpStep(2), nodes, caps)
    return d, np.frombuffer(d.meta, "<u4")


def test_the_grid_past_65535_workgroups():
    """70000 one-tile products need 70000 workgroups: a 2-D grid; the meta words say how to find each
    product's matrices (the run of such a grid on the device: the next test, on a small max_per_dim)."""
    caps = kernels.Caps()
    d, meta = _grid((70000, 1, 3), (70000, 3, 2), caps)
    assert d.grid == (65535, 2)
    assert list(meta[:8]) == [1, 3, 2, 1, 1, 70000, 1, 0] and list(meta[8:]) == [70000, 3, 6]
    d, meta = _grid((70000, 1, 3), (1, 3, 2), caps)  # one b for all: the batch folds into M
    assert list(meta[:8]) == [70000, 3, 2, 1, math.ceil(70000 / 128), 1, 0, 0] and len(meta) == 8
    cfg, _ = matmul_kernel.matmul_config(130, 8, 129, caps, batch=700)
    d, meta = _grid((700, 130, 8), (700, 8, 129), caps)
    tiles = math.ceil(130 / cfg.bm) * math.ceil(129 / cfg.bn)
    assert d.grid[0] * d.grid[1] >= tiles * 700 > d.grid[0] * (d.grid[1] - 1)
    assert max(d.grid) <= 65535


@pytest.mark.parametrize("config", ["64x64x8", "128x64x16"])
def test_a_2d_grid_of_batched_tiles_on_the_device(gpu, monkeypatch, config):
    """With max_per_dim = 5 the batch's tiles spread over a 2-D grid with spare workgroups, as past
    65535 on a real adapter; two tilings, vec4 and scalar edges."""
    caps = gpu.executor.caps
    monkeypatch.setattr(caps, "max_per_dim", 5)
    monkeypatch.setattr(caps, "matmul", config)
    for sa, sb in [((3, 1, 65, 33), (1, 4, 33, 67)), ((7, 9, 16), (7, 16, 132)), ((2, 70, 1), (2, 1, 1))]:
        a, b = data(*sa), data(*sb)
        check(gpu.tensor(a) @ gpu.tensor(b), a, b)


def test_errors_where_written(dev):
    a, b = dev.tensor(data(2, 3, 4)), dev.tensor(data(3, 4, 5))
    with pytest.raises(tw.TruenoValueError, match=r"batch dimensions do not broadcast") as err:
        a @ b
    assert "(2, 3, 4)" in str(err.value) and "(3, 4, 5)" in str(err.value)
    with pytest.raises(tw.TruenoValueError, match=r"do not broadcast.*\(4, 3, 3, 4\).*\(2, 4, 5\)"):
        dev.tensor(data(4, 3, 3, 4)) @ dev.tensor(data(2, 4, 5))
    with pytest.raises(tw.TruenoValueError, match=r"do not broadcast"):  # an expanded operand is no exception
        a[:1].expand(3, 3, 4) @ dev.tensor(data(2, 4, 5))
    with pytest.raises(tw.TruenoValueError, match=r"inner dimensions differ.*\(2, 3, 4\).*\(2, 5, 4\)"):
        a @ dev.tensor(data(2, 5, 4))
    with pytest.raises(tw.TruenoValueError, match=r"inner dimensions differ.*\(5,\).*\(2, 4, 3\)"):
        dev.tensor(data(5)) @ dev.tensor(data(2, 4, 3))
    with pytest.raises(tw.TruenoValueError, match="at least one dimension"):
        a @ tw.asarray(1.0, device=dev)
    # the same rule under the one-shot and batch calls
    with pytest.raises(tw.TruenoValueError, match=r"do not broadcast.*\(2, 3, 4\).*\(3, 4, 5\)"):
        block_on(dev.matmul(data(2, 3, 4), data(3, 4, 5)))
    with pytest.raises(tw.TruenoValueError, match=r"inner dimensions differ.*\(2, 3, 4\).*\(2, 3, 5\)"):
        dev.batch().matmul(data(2, 3, 4), data(2, 3, 5))
    with pytest.raises(tw.TruenoValueError, match="2-D a or a stack"):
        block_on(dev.matmul(data(4), data(2, 4, 5)))
