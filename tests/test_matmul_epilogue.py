"""The elementwise chain that reads a matrix product runs in the product's kernel (graph.MatmulStep: an epilogue,
kernels/matmul.py `epilogue`): what joins and what does not (planner), results against float64 NumPy on every
backend, the product bit for bit as it is alone, every GPU path (the direct kernel, tiles, split over K, K past
the loop budget, vec4 and scalar epilogues), jit replays and a donated output. Software adapters (lavapipe here)
plan no epilogue by default (Caps.epilogue_budget 0: slower there); these tests give them the hardware's budget so
that the kernels run."""

from __future__ import annotations

import numpy as np
import pytest

import trueno_web as tw
from trueno_web.graph import MapStep, MatmulStep, OpStep
from trueno_web.kernels.caps import EPILOGUE_BUDGET
from trueno_web.runtime import block_on

RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def hardware_budget(request, monkeypatch):
    """The hardware adapters' epilogue budget on this test's GPU device (software adapters have none)."""
    for name in ("dev", "dev2", "fresh_gpu", "gpu"):
        if name in request.fixturenames:
            executor = request.getfixturevalue(name).executor
            if executor.backend == "webgpu":
                monkeypatch.setattr(executor.caps, "epilogue_budget", EPILOGUE_BUDGET)


def test_software_adapters_plan_no_epilogue(fresh_gpu, monkeypatch):
    monkeypatch.undo()
    caps = fresh_gpu.executor.caps
    assert caps.epilogue_budget == (0 if fresh_gpu.adapter_info["software"] else EPILOGUE_BUDGET)
    x, w, b = fresh_gpu.tensor(arr(3, 4)), fresh_gpu.tensor(arr(4, 5)), fresh_gpu.tensor(arr(5))
    block_on(tw.realize(x, w, b))
    steps = steps_of(fresh_gpu, x @ w + b)
    assert isinstance(steps[0], MatmulStep) != fresh_gpu.adapter_info["software"]


def arr(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def steps_of(dev, *tensors) -> list:
    """The plan steps that realising `tensors` runs (the batch's planner, spied on)."""
    from trueno_web import batch

    seen, real = [], batch.plan

    def spy(*args, **kwargs):
        made = real(*args, **kwargs)
        seen.extend(made.steps)
        return made

    batch.plan = spy
    try:
        block_on(tw.realize(*tensors))
    finally:
        batch.plan = real
    return seen


def close(got, want, mag, tol=4e-6):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    with np.errstate(invalid="ignore"):
        ok = (got == want) | (np.abs(got - want) <= tol * mag + 1e-30) | (np.isnan(got) & np.isnan(want))
    bad = ~ok
    assert not bad.any(), (np.argwhere(bad)[:5], got[bad][:5], want[bad][:5])


def gelu64(z):
    return 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z**3)))


# ---------------------------------------------------------------- what joins


def test_a_bias_and_relu_join_the_product(dev):
    x, w, b = dev.tensor(arr(9, 7)), dev.tensor(arr(7, 12)), dev.tensor(arr(12))
    block_on(tw.realize(x, w, b))
    steps = steps_of(dev, (x @ w + b).relu())
    assert len(steps) == 1 and isinstance(steps[0], MatmulStep) and len(steps[0].nodes) == 2
    assert steps[0].stores == steps[0].nodes[-1:]  # the product and the bias's sum stay in registers


def test_what_does_not_join(dev):
    x, w, b = dev.tensor(arr(8, 6)), dev.tensor(arr(6, 8)), dev.tensor(arr(8))
    block_on(tw.realize(x, w, b))
    h = x @ w
    # the product read through a view (a transpose), a row reduction of it, a float16 conversion
    for tail in (lambda h: h.T + b, lambda h: h.sum(-1), lambda h: h.astype(tw.float16)):
        steps = steps_of(dev, tail(x @ w))
        assert isinstance(steps[0], OpStep), tail
    # the product a result too: stored beside the chain's value
    steps = steps_of(dev, h + b, h)
    assert isinstance(steps[0], MatmulStep) and steps[0].stores[0] == steps[0].node


def test_a_chain_past_the_budget_goes_on_as_a_map(dev):
    """The epilogue holds EPILOGUE_BUDGET op costs (it is inlined once per element a thread stores): a bias and a
    residual, not an activation that costs more; the rest of the chain is a map step that reads its last value."""
    x, w, b, r = dev.tensor(arr(4, 4)), dev.tensor(arr(4, 4)), dev.tensor(arr(4)), dev.tensor(arr(4, 4))
    steps = steps_of(dev, ((x @ w + b + r).tanh() * 0.5 - 1.0).relu())
    assert [type(s) for s in steps] == [MatmulStep, MapStep]
    assert steps[0].cost == EPILOGUE_BUDGET == 2 and len(steps[1].nodes) == 4


# ---------------------------------------------------------------- results on every backend


@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (7, 5, 3), (37, 129, 65), (64, 96, 128), (3, 40, 4097)])
def test_bias_gelu_and_a_residual_against_float64(dev, m, k, n):
    xa, wa, ba, ra = arr(m, k), arr(k, n), arr(n), arr(m, n)
    ba[0] = np.inf if n > 1 else ba[0]
    x, w, b, r = (dev.tensor(a) for a in (xa, wa, ba, ra))
    h = x @ w
    got = block_on(((h + b).gelu() + r * 0.5).numpy())
    p = xa.astype(np.float64) @ wa
    mag = np.abs(xa).astype(np.float64) @ np.abs(wa) + np.abs(ba) + np.abs(ra)
    with np.errstate(invalid="ignore"):
        close(got, gelu64(p + ba) + ra * 0.5, mag, 2e-5)


def test_the_product_stored_beside_its_chain_is_the_product_alone(dev):
    xa, wa, ba = arr(33, 70), arr(70, 21), arr(21)
    x, w, b = dev.tensor(xa), dev.tensor(wa), dev.tensor(ba)
    alone = block_on((x @ w).numpy())
    h = x @ w
    y = (h + b).relu()
    block_on(tw.realize(h, y))
    h_out, y = block_on(h.numpy()), block_on(y.numpy())
    np.testing.assert_array_equal(h_out, alone)
    np.testing.assert_array_equal(y, np.maximum(alone + ba, 0))


def test_batched_and_transposed_operands(dev):
    xa, wa, ba, ca = arr(3, 2, 9, 6), arr(6, 10), arr(10), arr(2, 9, 10)
    x, w, b, c = (dev.tensor(a) for a in (xa, wa, ba, ca))
    got = block_on(((x @ w + b) * c - 1.0).numpy())
    want = (xa.astype(np.float64) @ wa + ba) * ca - 1.0
    close(got, want, np.abs(xa).astype(np.float64) @ np.abs(wa) * np.abs(ca) + 2, 1e-5)
    ta, tb = arr(6, 9), arr(11, 6)  # x.T @ y.T, both read in place
    got = block_on((dev.tensor(ta).T @ dev.tensor(tb).T + 2.0).exp().numpy())
    want = np.exp(ta.T.astype(np.float64) @ tb.T + 2.0)
    close(got, want, np.exp(np.abs(ta.T).astype(np.float64) @ np.abs(tb.T) + 2.0), 1e-5)


def test_integer_products_wrap_in_their_chain(dev):
    xa = RNG.integers(-(2**15), 2**15, (5, 3), dtype=np.int32)
    wa = RNG.integers(-(2**15), 2**15, (3, 6), dtype=np.int32)
    got = block_on((dev.tensor(xa) @ dev.tensor(wa) * 3 + 7).numpy())
    with np.errstate(over="ignore"):
        want = (xa.astype(np.int64) @ wa * 3 + 7).astype(np.int32)
    assert got.dtype == np.int32 and (got == want).all()


def test_jitted_chain_replays_with_new_values(dev):
    @tw.jit
    def layer(x, w, b):
        return (x @ w + b).gelu()

    w, b = dev.tensor(arr(16, 24)), dev.tensor(arr(24))
    for _ in range(3):
        xa = arr(10, 16)
        got = block_on(block_on(layer(dev.tensor(xa), w, b)).numpy())
        want = gelu64(xa.astype(np.float64) @ block_on(w.numpy()) + block_on(b.numpy()))
        close(got, want, np.abs(xa).astype(np.float64) @ np.abs(block_on(w.numpy())) + 1, 2e-5)


# ---------------------------------------------------------------- every GPU path


@pytest.mark.parametrize(
    "tiling, splits, trips",
    [(None, 0, 0), ("64x64x16", 1, 0), ("64x64x16", 3, 0), ("64x64x8", 1, 20), ("128x64x8", 2, 12)],
    ids=["direct-or-rule", "tiles", "split", "resumed", "split-resumed"],
)
@pytest.mark.parametrize("n", [65, 64], ids=["scalar", "vec4"])
def test_every_kernel_path_with_an_epilogue(fresh_gpu, tiling, splits, trips, n):
    caps = fresh_gpu.executor.caps
    caps.matmul, caps.matmul_splits = tiling, splits
    if trips:
        caps.loop_trips = trips
    xa, wa, ba, ra = arr(70, 300), arr(300, n), arr(n), arr(70, n)
    ra_t = np.ascontiguousarray(ra.T)
    x, w, b, r = (fresh_gpu.tensor(a) for a in (xa, wa, ba, ra_t))
    h = x @ w
    outs = (h, (h + b).tanh(), h * 2.0 + r.T)  # a strided residual: no vec4 epilogue
    block_on(tw.realize(*outs))
    h_out, y, z = (block_on(t.numpy()) for t in outs)
    p = xa.astype(np.float64) @ wa
    mag = np.abs(xa).astype(np.float64) @ np.abs(wa)
    close(h_out, p, mag)
    close(y, np.tanh(p + ba), mag + 1, 1e-5)
    close(z, 2 * p + ra, 2 * mag + np.abs(ra))
    close(block_on(((x @ w) + b).relu().numpy()), np.maximum(p + ba, 0), mag + np.abs(ba))


def test_a_donated_argument_takes_a_chain_value_where_the_step_does_not_read_it(dev2):
    """h donated: read by an earlier step (its sum), the chain's value goes into its buffer; read by the chain
    itself, not (other workgroups' tiles would read what one has written)."""
    x, w = dev2.tensor(arr(8, 8)), dev2.tensor(arr(8, 8))
    block_on(tw.realize(x, w))
    p = block_on(x.numpy()).astype(np.float64) @ block_on(w.numpy())
    earlier = tw.jit(lambda h, x, w: (x @ w + 1.0) * h.sum(), donate_argnums=0)
    same = tw.jit(lambda h, x, w: (x @ w + h) * 0.5, donate_argnums=0)
    for f, want, in_place in (
        (earlier, lambda ha: (p + 1.0) * ha.sum(), True),
        (same, lambda ha: (p + ha) * 0.5, False),
    ):
        for _ in range(3):  # the trace, then replays
            ha = arr(8, 8)
            h = dev2.tensor(ha)
            block_on(tw.realize(h))
            old = h.expr.leaf.buffer
            out = block_on(f(h, x, w))
            close(block_on(out.numpy()), want(ha.astype(np.float64)), 8 * 16.0 * (1 + np.abs(ha).sum()))
        if dev2.backend == "webgpu":
            assert (out.expr.leaf.buffer is old) == in_place
