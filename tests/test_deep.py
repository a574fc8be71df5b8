"""Deep programs: a long elementwise chain splits into kernels as the fusion budget says (kernels/caps.py
FUSE_BUDGET, an executor's `fuse_budget`) and gives the unfused values; the Mandelbrot escape count (the
loop of bench/deep.py) on every backend against NumPy; chains of thousands of ops plan in linear work and
never recurse past Python's limit (realize's walk, the planner, the kernel generator, autodiff)."""

from __future__ import annotations

import gc
import math
from contextlib import contextmanager

import numpy as np

import trueno_web as tw
from trueno_web import planner
from trueno_web.kernels.caps import FUSE_BUDGET, HARDWARE_FUSE_BUDGET, Caps
from trueno_web.resident import DeviceArray
from trueno_web.runtime import block_on
from trueno_web.tensor.expr import CONSTANTS_KEPT


@contextmanager
def budget(dev, value: int):
    """The device's fusion budget set to `value` for the block (the GPU's caps, else the executor's)."""
    holder = getattr(dev.executor, "caps", None) or dev.executor
    before = holder.fuse_budget
    holder.fuse_budget = value
    try:
        yield
    finally:
        holder.fuse_budget = before


def chain(x, ops: int):
    """`ops` cost-1 ops alternating y * 0.5 and y + x (contractive: the error stays bounded; y tends to 2x)."""
    y = x
    for k in range(ops):
        y = y + x if k % 2 else y * 0.5
    return y


def chain_numpy(x: np.ndarray, ops: int) -> np.ndarray:
    y = x.astype(np.float64)
    for k in range(ops):
        y = y + x if k % 2 else y * 0.5
    return y


def run(dev, x_host: np.ndarray, ops: int) -> tuple[np.ndarray, int]:
    """(values, dispatches) of the chain on resident x."""
    x = dev.tensor(x_host)
    block_on(tw.realize(x))
    before = dev.stats.dispatches
    out = block_on(chain(x, ops).numpy())
    return out, dev.stats.dispatches - before


def test_a_long_chain_splits_as_the_budget_says_and_gives_the_unfused_values(dev):
    x = np.linspace(-3, 3, 4096, dtype=np.float32)
    fused, kernels = run(dev, x, 1000)
    hardware = dev.backend == "webgpu" and not dev.executor.adapter_info["software"]
    assert dev.executor.fuse_budget == (HARDWARE_FUSE_BUDGET if hardware else FUSE_BUDGET)  # the adapter's default
    assert kernels == math.ceil(1000 / dev.executor.fuse_budget)
    with budget(dev, 100):
        split, kernels = run(dev, x, 1000)
    assert kernels == 10
    with budget(dev, 1):  # one op per kernel: the unfused program
        unfused, kernels = run(dev, x, 1000)
    assert kernels == 1000
    np.testing.assert_allclose(fused, unfused, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(split, unfused, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(fused, chain_numpy(x, 1000), rtol=1e-5, atol=1e-6)


def mandelbrot(cx, cy, zeros, iters: int):
    zx, zy, count = zeros, zeros, zeros
    for _ in range(iters):
        zx, zy = zx * zx - zy * zy + cx, 2 * zx * zy + cy
        inside = (zx * zx + zy * zy) <= 4.0
        count = count + inside
        zx, zy = tw.where(inside, zx, 0.0), tw.where(inside, zy, 0.0)
    return count


def test_mandelbrot_on_every_backend_against_numpy(dev):
    n, iters = 24, 30  # 420 ops: two kernels under the default budget
    cx_h, cy_h = np.meshgrid(np.linspace(-2, 1, n, dtype=np.float32), np.linspace(-1.5, 1.5, n, dtype=np.float32))
    zero = np.zeros((n, n), np.float32)
    got = block_on(mandelbrot(dev.tensor(cx_h), dev.tensor(cy_h), dev.tensor(zero), iters).numpy())
    zx, zy, want = zero, zero, zero
    for _ in range(iters):
        zx, zy = zx * zx - zy * zy + cx_h, np.float32(2) * zx * zy + cy_h
        inside = (zx * zx + zy * zy) <= np.float32(4)
        want = want + inside
        zx, zy = np.where(inside, zx, np.float32(0)), np.where(inside, zy, np.float32(0))
    assert got.shape == (n, n)
    # a point on the set's edge may escape an iteration apart where the GPU contracts a * b + c (one rounding)
    assert np.mean(got != want) <= 0.02 and np.abs(got - want).max() <= iters


def test_equal_constants_and_subexpressions_are_recorded_once():
    dev = block_on(tw.GpuDevice.create("numpy"))
    x = dev.tensor(np.arange(8, dtype=np.float32))
    seen = []
    real = planner.plan

    def spy(nodes, pending, *args):
        seen.append(nodes)
        return real(nodes, pending, *args)

    import trueno_web.batch as batch_module

    batch_module.plan, before = spy, batch_module.plan
    try:
        y = (x * x <= 4.0) + (x * x <= 4.0) + tw.where(x <= 4.0, x, 0.0)
        out = block_on(y.numpy())
    finally:
        batch_module.plan = before
        dev.close()
    ops = [n.op.name for n in seen[0] if n.op is not None]
    uploads = [n for n in seen[0] if n.op is None and n.view is None and n.shape == ()]
    # x * x and x * x <= 4.0 once; its bool converted to int32 once (bool + bool), the sum to float32 once
    assert sorted(ops) == ["add", "add", "astype", "astype", "le", "le", "mul", "where"]
    assert len(uploads) == 2  # 4.0 and 0.0
    a = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(out, 2 * (a * a <= 4) + np.where(a <= 4, a, 0))


def plan_work(dev, ops: int) -> int:
    """How many times the planner decides whether a member is stored, planning an `ops` chain once."""
    calls = 0
    stored = planner.Planner.stored

    def counted(self, *args):
        nonlocal calls
        calls += 1
        return stored(self, *args)

    planner.Planner.stored = counted
    planner.PLANS.clear()
    try:
        x = dev.tensor(np.ones(16, np.float32))
        block_on(chain(x, ops).numpy())
    finally:
        planner.Planner.stored = stored
    return calls


def test_planning_work_grows_linearly_with_the_chain():
    dev = block_on(tw.GpuDevice.create("numpy"))
    try:
        for value in (FUSE_BUDGET, 1 << 30):  # the default, and no budget at all (one step)
            with budget(dev, value):
                small, large = plan_work(dev, 2000), plan_work(dev, 10000)
            assert 0 < large <= 5 * small * 1.5, (value, small, large)
    finally:
        dev.close()


def test_ten_thousand_op_chains_plan_run_and_differentiate_without_recursion_error():
    dev = block_on(tw.GpuDevice.create("numpy"))
    try:
        x = np.linspace(-1, 1, 32, dtype=np.float32)
        out, kernels = run(dev, x, 10000)
        assert kernels == math.ceil(10000 / FUSE_BUDGET)
        np.testing.assert_allclose(out, chain_numpy(x, 10000), rtol=1e-5, atol=1e-6)
        grad = tw.grad(lambda t: chain(t, 10000).sum())(dev.tensor(x))
        g = block_on(grad.numpy())
        want = 1.0
        for _ in range(5000):  # each pair y * 0.5 + x: dy/dx -> dy/dx * 0.5 + 1
            want = want * 0.5 + 1
        np.testing.assert_allclose(g, np.full_like(x, want), rtol=1e-6)
        del grad
        gc.collect()
    finally:
        dev.close()


def test_the_default_budget_is_the_adapters():
    """A software adapter (lavapipe, SwiftShader: compile time counts) keeps FUSE_BUDGET; a hardware one
    fuses twice as many ops per kernel."""

    class Driver:
        limits = {
            "max_compute_workgroups_per_dimension": 65535,
            "max_storage_buffer_binding_size": 1 << 27,
            "max_compute_workgroup_storage_size": 16384,
        }
        features = frozenset()
        wgsl_enable_subgroups = False

        def __init__(self, software):
            self.adapter_info = {"device": "stand-in", "software": software}

    assert Caps.for_driver(Driver(True)).fuse_budget == FUSE_BUDGET
    assert Caps.for_driver(Driver(False)).fuse_budget == HARDWARE_FUSE_BUDGET > FUSE_BUDGET


def test_a_number_in_a_loop_is_one_shared_constant(dev):
    """`x <= 4.0` in a loop reads the device's one constant 4.0 at that shape (expr.constant), -0.0 apart
    from 0.0; realize keeps no buffer for a number, so a loop over ever new numbers holds none, and the
    device keeps a bounded number of them."""
    x = dev.tensor(np.linspace(-3, 3, 64, dtype=np.float32).reshape(8, 8))
    a, b = x <= 4.0, (x * 2.0) <= 4.0
    assert a.expr.inputs[1] is b.expr.inputs[1]
    never = x > 10.0
    zero, minus = tw.where(never, x, 0.0), tw.where(never, x, -0.0)
    assert zero.expr.inputs[2] is not minus.expr.inputs[2]
    assert (block_on(zero.numpy()).view(np.uint32) == 0).all()
    assert (block_on(minus.numpy()).view(np.uint32) == 0x80000000).all()
    for step in range(CONSTANTS_KEPT + 10):
        y = x * 1.0 + float(step)
    assert len(dev.constants) <= CONSTANTS_KEPT
    block_on(tw.realize(y))
    assert all(not isinstance(e.leaf, DeviceArray) for e in dev.constants.values() if e.view is None)
    np.testing.assert_array_equal(block_on(y.numpy()), block_on(x.numpy()) + np.float32(CONSTANTS_KEPT + 9))
