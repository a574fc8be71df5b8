"""tw.jit: replays give what eager evaluation gives, on every backend, for new argument values; a new
shape, static value or device traces again; the function runs once per signature; one submit per call;
what cannot be traced raises; the optimizers' jitted trainer matches their eager steps."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import device_for

import trueno_web as tw
from trueno_web.runtime import block_on

RNG = np.random.default_rng(2)


def data(*shape):
    return RNG.uniform(-2, 2, shape).astype(np.float32)


def body(x, w, scale):
    """Views, broadcasting, a row reduction, a matmul, a full reduction, a host constant."""
    h = (x @ w.T + 0.5).tanh() * scale
    return {"y": h - h.mean(-1, keepdims=True), "total": (h * h).sum(), "first": x[0, ::2]}


def test_replays_match_eager(dev):
    calls = []

    def f(x, w, scale):
        calls.append(1)
        return body(x, w, scale)

    jf = tw.jit(f, static_argnums=2)
    w = dev.tensor(data(4, 3))
    kept = []
    for _ in range(4):  # a new x each call, the same signature: the trace, a planned run, replays of its schedule
        x = data(5, 3)
        got = block_on(jf(dev.tensor(x), w, 2.0))
        want = {k: block_on(v.numpy()) for k, v in body(dev.tensor(x), w, 2.0).items()}
        for k in want:
            np.testing.assert_allclose(block_on(got[k].numpy()), want[k], rtol=1e-6, atol=1e-6)
        kept.append((got, want))
    for got, want in kept:  # every call's outputs are arrays of their own: later calls wrote elsewhere
        for k in want:
            np.testing.assert_allclose(block_on(got[k].numpy()), want[k], rtol=1e-6, atol=1e-6)
    assert len(calls) == 1
    block_on(jf(dev.tensor(data(5, 3)), w, 3.0))  # another static value: traced again
    block_on(jf(dev.tensor(data(2, 3)), w, 3.0))  # another shape: traced again
    assert len(calls) == 3 and len(jf.programs) == 3


def test_one_submit_per_call_and_lazy_arguments(dev2):
    dev = dev2
    jf = tw.jit(lambda a, b: (a * b).relu() + a)
    a, b = dev.tensor(data(64)), dev.tensor(data(64))
    block_on(tw.realize(a, b))
    block_on(jf(a, b))
    before = dev.stats.submits
    out = block_on(jf(a, b))
    assert dev.stats.submits - before == 1
    np.testing.assert_allclose(block_on(out.numpy()), block_on(((a * b).relu() + a).numpy()))
    lazy = a * 2.0  # computed first, then the program runs
    np.testing.assert_allclose(block_on(block_on(jf(lazy, b)).numpy()), block_on(((lazy * b).relu() + lazy).numpy()))
    big = dev.tensor(data(3, 64))
    block_on(tw.realize(big))
    for view in (big[0], big[1], big[:, ::2].reshape(-1)[:64]):  # a prefix (identity) view, an offset, a stride
        np.testing.assert_allclose(
            block_on(block_on(jf(view, b)).numpy()), block_on(((view * b).relu() + view).numpy())
        )
    host = dev.tensor(data(64))  # host data is uploaded with the program's kernels: still one submit
    before = dev.stats.submits
    block_on(jf(host, b))
    assert dev.stats.submits - before == 1


def test_identity_outputs_aliases_and_pytrees():
    dev = device_for("numpy")
    jf = tw.jit(lambda p: {"same": p["a"], "sum": p["a"] + p["b"][0]})
    a = dev.tensor(data(3))
    block_on(tw.realize(a))
    for _ in range(2):
        out = block_on(jf({"a": a, "b": [a]}))  # the same array twice: one signature
        assert out["same"].expr.leaf is a.expr.leaf
        np.testing.assert_allclose(block_on(out["sum"].numpy()), 2 * block_on(a.numpy()))
    b = dev.tensor(data(3))
    block_on(tw.realize(b))
    out = block_on(jf({"a": a, "b": [b]}))  # now two arrays: another trace, not the aliased program
    np.testing.assert_allclose(block_on(out["sum"].numpy()), block_on((a + b).numpy()))
    assert len(jf.programs) == 2


def test_views_as_outputs(dev2):
    jf = tw.jit(lambda a: (a[0], a.T, a[1:, ::2]))  # a prefix, a transpose, a strided slice: arrays of their own
    x = dev2.tensor(data(3, 4))
    block_on(tw.realize(x))
    for _ in range(3):
        outs = block_on(jf(x))
        for got, want in zip(outs, (x[0], x.T, x[1:, ::2])):
            np.testing.assert_array_equal(block_on(got.numpy()), block_on(want.numpy()))


def test_a_new_device_traces_again():
    x = data(8)
    first = block_on(tw.GpuDevice.create("numpy"))
    jf = tw.jit(lambda t: t.exp())
    block_on(jf(first.tensor(x)))
    stale = first.tensor(x)
    first.close()
    with pytest.raises(tw.DeviceLostError):
        block_on(jf(stale))
    second = block_on(tw.GpuDevice.create("numpy"))
    np.testing.assert_allclose(block_on(block_on(jf(second.tensor(x))).numpy()), np.exp(x), rtol=1e-6)
    assert len(jf.programs) == 1  # the new device's program replaced the closed one's
    second.close()


def test_what_cannot_be_traced_raises():
    dev = device_for("numpy")
    x = dev.tensor(data(4))

    async def coro(t):
        return t

    with pytest.raises(tw.TruenoTypeError, match="not an async function"):
        tw.jit(coro)
    with pytest.raises(tw.TruenoTypeError, match="truth value"):
        block_on(tw.jit(lambda t: t if t.sum() > 0 else -t)(x))
    with pytest.raises(tw.TruenoTypeError, match="output"):
        block_on(tw.jit(lambda t: (t, 3))(x))
    with pytest.raises(tw.TruenoValueError, match="needs a tensor argument"):
        block_on(tw.jit(lambda n: n)(3))
    with pytest.raises(tw.TruenoTypeError, match="hashable"):
        block_on(tw.jit(lambda t, s: t, static_argnums=1)(x, [1]))
    np.testing.assert_allclose(block_on(block_on(tw.jit(lambda t: t + 1.0)(x)).numpy()), block_on(x.numpy()) + 1)


def _mlp(dev):
    rng = np.random.default_rng(4)
    params = {"w": dev.tensor(rng.normal(0, 0.5, (6, 4)).astype(np.float32)), "b": dev.tensor(np.zeros(4, np.float32))}
    batches = [
        (rng.normal(size=(16, 6)).astype(np.float32), rng.integers(0, 4, 16).astype(np.float32)) for _ in range(6)
    ]
    return params, batches


def _loss(p, x, y):
    return tw.nn.cross_entropy(tw.nn.linear(x, p["w"], p["b"]).tanh() * 3.0, y)


@pytest.mark.parametrize(
    "make",
    [lambda p: tw.optim.AdamW(p, lr=0.05), lambda p: tw.optim.SGD(p, lr=0.1, momentum=0.9)],
    ids=["adamw", "sgd"],
)
def test_trainer_matches_eager_steps(dev, make):
    eager_params, batches = _mlp(dev)
    jit_params, _ = _mlp(dev)
    eager, jitted = make(eager_params), make(jit_params)
    vg = tw.value_and_grad(_loss)
    traces = []
    step = jitted.trainer(lambda p, x, y: traces.append(1) or _loss(p, x, y))
    for x, y in batches:
        loss, grads = vg(eager_params, dev.tensor(x), dev.tensor(y))
        block_on(eager.step(grads, loss))
        got = block_on(step(dev.tensor(x), dev.tensor(y)))
        assert block_on(got.item()) == pytest.approx(block_on(loss.item()), rel=1e-5, abs=1e-6)
    assert len(traces) == 1 and jitted.steps == eager.steps == len(batches)
    for k in eager_params:
        np.testing.assert_allclose(
            block_on(jit_params[k].numpy()), block_on(eager_params[k].numpy()), rtol=1e-5, atol=1e-6
        )


def test_equal_host_scalars_stay_separate_arguments(dev2):
    jf = tw.jit(lambda a, b: a - b)  # realize records equal constants once: argument slots are kept apart
    one = np.ones(1, np.float32)
    assert block_on(block_on(jf(dev2.tensor(one), dev2.tensor(one))).numpy()).tolist() == [0.0]
    got = block_on(jf(dev2.tensor(one * 5), dev2.tensor(one * 2)))
    assert block_on(got.numpy()).tolist() == [3.0]


def test_donated_arguments_are_updated_in_place_on_a_gpu(dev2):
    dev = dev2
    x, g = dev.tensor(data(256)), dev.tensor(data(256))
    block_on(tw.realize(x, g))
    want = block_on((x - g * 0.5).numpy())
    step = tw.jit(lambda p, grad: p - grad * 0.5, donate_argnums=0)
    block_on(step(x, g))  # the trace
    old = x.expr.leaf
    y = block_on(step(x, g))  # a replay: written into x's array where the backend can
    np.testing.assert_allclose(block_on(y.numpy()), want, rtol=1e-6)
    if dev.backend == "webgpu":
        assert y.expr.leaf.buffer is old.buffer
        with pytest.raises(tw.TruenoValueError, match="released"):
            block_on(x.numpy())  # a donated array is gone, as in JAX
    z = block_on(step(y, g))  # the schedule's replay, y donated: in place again
    np.testing.assert_allclose(block_on(z.numpy()), want - block_on(g.numpy()) * 0.5, rtol=1e-6)
    if dev.backend == "webgpu":
        assert z.expr.leaf.buffer is old.buffer
    matmul = tw.jit(lambda a, b: a @ b, donate_argnums=0)  # a matmul's output is not written in place
    a, b = dev.tensor(data(4, 4)), dev.tensor(data(4, 4))
    block_on(tw.realize(a, b))
    for _ in range(3):
        out = block_on(matmul(a, b))
    assert out.expr.leaf.buffer is not a.expr.leaf.buffer
    np.testing.assert_allclose(block_on(out.numpy()), block_on((a @ b).numpy()), rtol=1e-5)  # a still alive


def test_a_donated_gathers_data_is_not_written_in_place(dev2):
    """x[perm] + 1 with x donated: the gather reads x at other indices than the kernel writes, so the result
    needs its own buffer (written into x's, later threads read values already overwritten)."""
    n = 4099
    xn, perm = data(n), np.arange(n, dtype=np.int32)[::-1].copy()
    step = tw.jit(lambda x, i: x[i] + 1.0, donate_argnums=0)
    for _ in range(3):  # the trace, a replay, the schedule's replay
        x, i = dev2.tensor(xn), dev2.tensor(perm)
        block_on(tw.realize(x, i))
        got = block_on(block_on(step(x, i)).numpy())
        np.testing.assert_array_equal(got, xn[perm] + np.float32(1))


def test_the_trainer_allocates_nothing_once_it_runs(fresh_gpu):
    dev = fresh_gpu
    params, batches = _mlp(dev)
    opt = tw.optim.AdamW(params, lr=0.05)
    step = opt.trainer(_loss)
    data_ = [(dev.tensor(x), dev.tensor(y)) for x, y in batches]
    block_on(tw.realize(*(t for pair in data_ for t in pair)))
    made, create = [], dev.executor.driver.create_buffer
    dev.executor.driver.create_buffer = lambda n: made.append(n) or create(n)
    try:
        for x, y in data_[:3]:
            block_on(block_on(step(x, y)).item())
        weights, before = params["w"].expr.leaf.buffer, len(made)
        for x, y in data_[3:]:
            block_on(block_on(step(x, y)).item())
    finally:
        dev.executor.driver.create_buffer = create
    assert len(made) == before  # intermediates from the program's arena, parameters and state in place
    assert params["w"].expr.leaf.buffer is weights


def test_a_dropped_program_gives_its_buffers_back(fresh_gpu):
    import gc

    dev = fresh_gpu
    pool = dev.executor.pool
    w = dev.tensor(data(4, 3))
    block_on(tw.realize(w))
    dev.executor.forget()
    before = (pool.live, pool.kept)
    jf = tw.jit(lambda x, w: body(x, w, 2.0))
    for _ in range(3):  # the trace, a planned run (the arena), a replay of the schedule (its own parameters)
        out = block_on(jf(dev.tensor(data(5, 3)), w))
    assert pool.kept > before[1] and pool.live > before[0]
    del jf, out
    gc.collect()
    dev.executor.forget()  # the executor's own cache of planned dispatches (not the program's) emptied too
    assert (pool.live, pool.kept) == before


def test_outputs_are_freed_when_dropped_without_a_cycle_collection(fresh_gpu):
    """A jitted call's outputs go back to the pool as soon as the caller drops them (no reference cycle holds
    them until the collector runs: a replay then reuses their buffers instead of creating new ones)."""
    import gc

    dev = fresh_gpu
    x = dev.tensor(data(4096))
    block_on(tw.realize(x))
    jf = tw.jit(lambda t: {"y": [t * 2.0 + 1.0]})  # a pytree output: flatten and unflatten on every call
    for _ in range(3):
        block_on(jf(x))
    gc.disable()
    try:
        live = dev.executor.pool.live
        out = block_on(jf(x))
        assert dev.executor.pool.live == live + 1
        del out
        assert dev.executor.pool.live == live
    finally:
        gc.enable()


def test_arguments_the_function_never_reads(dev2):
    """An argument f ignores (one of several, a donated one, host data) takes no slot: replays bind the rest."""
    a, b = dev2.tensor(data(8)), dev2.tensor(data(8))
    block_on(tw.realize(a, b))
    jf = tw.jit(lambda x, unused, y: x * 2.0 + y, donate_argnums=1)
    for _ in range(3):
        host = dev2.tensor(data(8))  # an unread argument that is host data: never uploaded
        out = block_on(jf(a, host, b))
        np.testing.assert_allclose(block_on(out.numpy()), block_on((a * 2.0 + b).numpy()), rtol=1e-6)
    only = tw.jit(lambda x, y: y.sum())
    for _ in range(3):
        assert block_on(block_on(only(a, b)).item()) == pytest.approx(float(block_on(b.numpy()).sum()), rel=1e-5)
