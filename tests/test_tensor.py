"""Lazy tensors against NumPy (float64 references) on every backend: broadcasting, views, reductions
along axes, softmax along an axis, matmul, realisation in one batch, and the errors at expression time."""

from __future__ import annotations

import math

import pytest

np = pytest.importorskip("numpy")

import trueno_web as tw  # noqa: E402
from trueno_web.runtime import block_on  # noqa: E402

RNG = np.random.default_rng(7)


def data(*shape, lo=-3.0, hi=3.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def check(t, want, rtol=2e-6, atol=2e-6):
    got = block_on(t.numpy())
    want = np.asarray(want, dtype=np.float64)
    assert tuple(got.shape) == want.shape and got.dtype == np.float32, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


SHAPE_PAIRS = [((64, 10), (10,)), ((3, 1, 5), (1, 4, 1)), ((1,), (4097,)), ((), (2, 3)), ((0, 3), (3,)),
               ((2, 3, 4), (2, 3, 4))]


@pytest.mark.parametrize("sa,sb", SHAPE_PAIRS, ids=str)
def test_binary_ops_broadcast_like_numpy(dev, sa, sb):
    a, b = data(*sa), data(*sb)
    ta, tb = dev.tensor(a) if sa else tw.asarray(float(a), device=dev), dev.tensor(b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    check(ta + tb, a64 + b64)
    check(ta - tb, a64 - b64)
    check(ta * tb, a64 * b64)
    check(tw.Tensor.add(tb, ta), b64 + a64)


def test_scalars_mix_in_and_expressions_chain(dev):
    x = data(5, 7)
    t = dev.tensor(x)
    x64 = x.astype(np.float64)
    check(2 * t + 1, 2 * x64 + 1)
    check(1 - t, 1 - x64)
    check((t * 0.5).relu().gelu() - t, _gelu(np.maximum(x64 * 0.5, 0)) - x64, rtol=2e-5, atol=2e-6)
    check(tw.sigmoid(t), 1 / (1 + np.exp(-x64)), rtol=2e-5, atol=2e-6)
    check(t.clip(-1, 0.5), np.clip(x64, -1, 0.5))


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def test_views_cost_nothing_and_read_right(dev):
    x = data(4, 6, 5)
    t = dev.tensor(x)
    check(t.T, x.T)
    check(t.transpose(0, 2).relu(), np.maximum(x.transpose(2, 1, 0), 0))
    check(t.permute(1, 2, 0), x.transpose(1, 2, 0))
    check(t[1:, ::2], x[1:, ::2])
    check(t[::-1, 2, -3:], x[::-1, 2, -3:])
    check(t[None, ..., 0], x[None, ..., 0])
    check(t[:, :1].expand(4, 3, 5), np.broadcast_to(x[:, :1], (4, 3, 5)))
    check(t.reshape(24, 5), x.reshape(24, 5))
    check(t.T.reshape(-1), x.T.reshape(-1))  # a reshape of a strided view copies first
    check(t[:, :1].squeeze(1).unsqueeze(0), x[:, 0][None])
    check(t[2:3].squeeze(), x[2])
    check((t.T + t.T)[1], (x.T + x.T)[1])


@pytest.mark.parametrize("name", ["sum", "max", "min", "mean", "var", "norm_l1", "norm_l2"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), 1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_along_axes(dev, name, axis, keepdims):
    x = data(3, 4097, 2) if axis == 1 else data(5, 6, 7)
    t = dev.tensor(x)
    x64 = x.astype(np.float64)
    ref = {
        "norm_l1": lambda a, axis, keepdims: np.sum(np.abs(a), axis=axis, keepdims=keepdims),
        "norm_l2": lambda a, axis, keepdims: np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdims)),
    }.get(name) or getattr(np, name)
    want = ref(x64, axis=axis, keepdims=keepdims)
    scale = ref(np.abs(x64), axis=axis, keepdims=keepdims) if name in ("sum", "mean") else 0
    got = block_on(getattr(t, name)(axis=axis, keepdims=keepdims).numpy())
    assert got.shape == np.shape(want)
    assert np.all(np.abs(got - want) <= 1e-5 * np.abs(want) + 1e-5 * np.abs(scale) + 1e-6), (name, axis)


def test_a_reduction_of_an_expression_and_specials(dev):
    x = data(6, 9)
    x[1, 3], x[2, 0], x[4, 4] = np.nan, np.inf, -np.inf
    t = dev.tensor(x)
    with np.errstate(invalid="ignore"):
        check(t.max(axis=1), np.max(x.astype(np.float64), axis=1))
        check(t.min(axis=0, keepdims=True), np.min(x.astype(np.float64), axis=0, keepdims=True))
        check((t * 2).relu().sum(axis=-1), np.sum(np.maximum(2 * x.astype(np.float64), 0), axis=-1))


def test_empty_and_zero_d(dev):
    e = dev.tensor(np.zeros((0, 3), np.float32))
    check(e.sum(axis=0), np.zeros(3))
    check(e.sum(axis=1), np.zeros(0))
    check(e + 1, np.zeros((0, 3)))
    z = tw.asarray(2.5, device=dev)
    assert z.shape == () and z.ndim == 0 and z.size == 1
    assert block_on((z * 2).item()) == 5.0
    with pytest.raises(tw.TruenoValueError, match="empty axis"):
        e.max(axis=0)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_along_an_axis(dev, axis):
    x = data(4, 5, 6) * 3
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=axis, keepdims=True))
    check(dev.tensor(x).softmax(axis=axis), e / e.sum(axis=axis, keepdims=True), rtol=1e-5, atol=1e-7)
    check(tw.log_softmax(dev.tensor(x), axis=axis), np.log(e / e.sum(axis=axis, keepdims=True)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sa,sb", [((17, 33), (33, 9)), ((2, 3, 5), (5, 4)), ((5,), (5, 3)), ((4, 5), (5,)),
                                   ((5,), (5,)), ((1, 1), (1, 1)), ((3, 0), (0, 2))], ids=str)
def test_matmul(dev, sa, sb):
    a, b = data(*sa, lo=-1, hi=1), data(*sb, lo=-1, hi=1)
    want = a.astype(np.float64) @ b.astype(np.float64)
    check(dev.tensor(a) @ dev.tensor(b), want, rtol=1e-5, atol=1e-5)
    check(tw.matmul(dev.tensor(a).T.T, b), want, rtol=1e-5, atol=1e-5)


def test_matmul_of_a_transposed_operand(dev):
    a, b = data(6, 4, lo=-1, hi=1), data(6, 5, lo=-1, hi=1)
    check(dev.tensor(a).T @ dev.tensor(b), a.T.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_realize_runs_several_tensors_in_one_execute_and_uploads_each_input_once(dev2):
    dev = dev2
    x, b = data(64, 10), data(10)
    tx, tb = dev.tensor(x), dev.tensor(b)
    y = tx + tb
    s = y.sum(axis=1)
    before = dev.stats.as_dict()
    block_on(tw.realize(y, s))
    after = dev.stats.as_dict()
    assert after["submits"] - before["submits"] == 1
    if dev.backend == "webgpu":
        assert after["uploads"] - before["uploads"] == 2  # b once, never expanded
        assert after["bytes_up"] - before["bytes_up"] == (640 + 10) * 4
    check(y, x.astype(np.float64) + b)
    check(s, (x.astype(np.float64) + b).sum(axis=1), rtol=1e-5, atol=1e-5)
    again = dev.stats.as_dict()
    check(tx * 2, x * 2.0)  # x is resident now: no second upload
    assert dev.stats.uploads == again["uploads"]
    assert y.expr.op is None and y.expr.inputs == ()  # the realised graph is dropped


def test_shared_subexpressions_run_once(dev2):
    x = data(1000)
    t = dev2.tensor(x)
    h = t.relu() * 3
    out = h.sum() + h.max()  # h feeds both reductions: computed once
    before = dev2.stats.dispatches
    assert math.isclose(block_on(out.item()), float(np.maximum(x, 0).sum() * 3 + np.maximum(x, 0).max() * 3),
                        rel_tol=1e-5)
    # relu * 3 once, sum and max (two dispatches each on a GPU: partials, then their fold), add
    assert dev2.stats.dispatches - before == (6 if dev2.backend == "webgpu" else 4)


def test_mistakes_raise_where_written_and_the_device_still_works(dev, cpu):
    t = dev.tensor(data(3, 4))
    with pytest.raises(tw.TruenoValueError, match=r"\(3, 4\) and \(5,\)"):
        t + dev.tensor(data(5))
    with pytest.raises(tw.TruenoValueError, match="axis 2 is out of range for 2"):
        t.sum(axis=2)
    with pytest.raises(tw.TruenoValueError, match=r"cannot reshape \(3, 4\).*\(5, 3\)"):
        t.reshape(5, 3)
    with pytest.raises(tw.TruenoValueError, match="inner dimensions differ"):
        t @ dev.tensor(data(3, 4))
    with pytest.raises(tw.TruenoValueError, match="out of range for axis 0"):
        t[3]
    if cpu is not dev:
        with pytest.raises(tw.TruenoValueError, match="different devices"):
            t + cpu.tensor(data(3, 4))
    with pytest.raises(tw.TruenoTypeError, match="item"):
        bool(t.sum())
    check(t + 1, block_on(t.numpy()).astype(np.float64) + 1)


def test_a_tensor_of_a_closed_device_says_so():
    dev = block_on(tw.GpuDevice.create("numpy"))
    t = dev.tensor([1.0, 2.0])
    dev.close()
    with pytest.raises(tw.DeviceLostError, match="closed"):
        block_on(t.numpy())


def test_sync_reads_on_the_desktop(cpu):
    t = cpu.tensor([1.0, 4.0, 9.0])
    assert float(t.sum()) == 14.0
    assert np.asarray(t * 2).tolist() == [2.0, 8.0, 18.0]
    assert t.numpy_sync().tolist() == [1.0, 4.0, 9.0]
