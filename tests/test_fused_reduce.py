"""Full reductions fused with the elementwise chain that feeds them (graph.ReduceStep, kernels/reduce.py):
sum(relu(x) * 2) reads x once and writes nothing but its result, in the batch and for lazy tensors. Every
full reduction of the catalog after a chain, dot of two chains, NaN, strided and broadcast loads, chain
values needed elsewhere (not fused: still written), on every backend against float64 NumPy; the dispatch
counts (webgpu: the partial pass and the fold of the partials; the CPU backends count plan steps)."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import floats

from trueno_web import BatchError, ops
from trueno_web.graph import MapStep, Node, ReduceStep
from trueno_web.kernels import reduce as reduce_kernel
from trueno_web.planner import plan
from trueno_web.runtime import block_on

REDUCTIONS = [op.name for op in ops.CATALOG if op.kind == "reduce" and op.arity == 1]
SIZES = [1, 3, 4097]


def fused_dispatches(dev) -> int:
    """A fused map-reduce: its first pass and the fold of the partials on webgpu, one plan step on the CPU."""
    return 2 if dev.backend == "webgpu" else 1


def check(name: str, got: float, *terms: np.ndarray) -> None:
    """`got` against the float64 reference of the float32 `terms` (what the chain gives, one rounding
    each): max and min exactly, sums within 1e-5 of the op on |terms|, prod within its roundings."""
    op = ops.get(name)
    args = [t.astype(np.float64) for t in terms]
    want = float(op.numpy(*args))
    if not np.isfinite(want) or name in ("max", "min"):
        assert got == want or (np.isnan(got) and np.isnan(want)), (name, got, want)
        return
    bound = (
        2.0 * terms[0].size * 2.0**-24 * abs(want)
        if name == "prod"
        else 1e-5 * float(op.numpy(*[np.abs(a) for a in args]))
    )
    assert abs(got - want) <= bound, (name, got, want, bound)


def run_batch(dev, build, fuse=True):
    """Queue build(batch) -> result id, execute, read: (result, batch)."""
    b = dev.batch(fuse=fuse)
    out = build(b)
    block_on(b.execute())
    return block_on(b.read(out)), b


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_chain_into_each_full_reduction(dev, name, n):
    """|x| + ones (two loads), then the reduction: one fused step; fuse=False gives the same result."""
    x = floats(n, n) / 1024  # prod stays in range
    ones = np.ones(n, np.float32)
    chain = np.abs(x) + ones  # float32, as the kernels round it

    def build(b):
        return getattr(b, name)(b.add(b.abs(b.upload(x)), b.upload(ones)))

    got, b = run_batch(dev, build)
    check(name, got, chain)
    assert b.stats.dispatches == fused_dispatches(dev) and b.stats.submits == 1, b.stats
    plain, bp = run_batch(dev, build, fuse=False)
    check(name, plain, chain)
    assert bp.stats.dispatches == 2 + (2 if dev.backend == "webgpu" else 1), bp.stats  # abs, add, reduction


@pytest.mark.parametrize("n", SIZES)
def test_dot_of_two_chains(dev, n):
    x, y = floats(n, 1), floats(n, 2)
    got, b = run_batch(dev, lambda b: b.dot(b.scale(b.relu(b.upload(x)), 2.0), b.sub(b.upload(y), b.upload(x))))
    check("dot", got, np.maximum(x, 0) * np.float32(2), y - x)
    assert b.stats.dispatches == fused_dispatches(dev), b.stats
    got, _ = run_batch(dev, lambda b: b.dot(b.neg(b.upload(x)), b.upload(y)))  # one chain, one plain load
    check("dot", got, -x, y)
    got, _ = run_batch(dev, lambda b: b.dot(*(2 * [b.abs(b.upload(x))])))  # the same chain value twice
    check("dot", got, np.abs(x), np.abs(x))


@pytest.mark.parametrize("name", ["sum", "max", "min", "norm_l2"])
def test_nan_and_inf_through_the_chain(dev, name):
    x = floats(4097, 3)
    x[4000] = np.nan
    got, _ = run_batch(dev, lambda b: getattr(b, name)(b.scale(b.abs(b.upload(x)), 2.0)))
    assert np.isnan(got), (name, got)
    x[4000] = np.inf
    x[7] = -np.inf
    got, _ = run_batch(dev, lambda b: getattr(b, name)(b.neg(b.upload(x))))
    check(name, got, -x)


def test_sum_of_a_chain_on_lazy_tensors(dev):
    """(relu(t) * 2).sum(): one fused step, as are its max and the sum of a reshape; mean adds its scale."""
    x = floats(4097, 4)
    t = dev.tensor(x)
    chain = np.maximum(x, 0) * np.float32(2)
    for name, reduce, extra in (
        ("sum", lambda r: r.sum(), 0),
        ("sum", lambda r: r.reshape(17, 241).sum(), 0),
        ("max", lambda r: r.max(), 0),
        ("sum", lambda r: r.mean() * x.size, 1),
    ):
        before = dev.stats.dispatches
        got = float(block_on(reduce(t.relu() * 2).numpy()))
        assert dev.stats.dispatches - before == fused_dispatches(dev) + extra, name
        check(name, got, chain)


def test_strided_and_broadcast_loads(dev):
    """A transpose, a stepped slice and a broadcast bias read through index arithmetic in the fused pass."""
    x, bias = floats(60 * 70, 5).reshape(60, 70), floats(70, 6)
    t, tb = dev.tensor(x), dev.tensor(bias)
    cases = [
        ((t.T * 3).sum(), (x.T * np.float32(3))),
        ((t[::3, 1::2].abs()).max(), np.abs(x[::3, 1::2])),
        ((t + tb).relu().min(), np.maximum(x + bias, 0)),
        ((t.T + tb[:, None]).norm_l1(), np.abs(x.T + bias[:, None])),
    ]
    for k, (expr, chain) in enumerate(cases):
        before = dev.stats.dispatches
        got = float(block_on(expr.numpy()))
        assert dev.stats.dispatches - before == fused_dispatches(dev), k
        check(("sum", "max", "min", "norm_l1")[k], got, chain.reshape(-1))


def test_a_chain_value_needed_elsewhere_is_written(dev2):
    """y = relu(x) * 2 read by the sum and kept (or read by another op): y is written, the sum reads it."""
    x = floats(1000, 7)
    y_ref = np.maximum(x, 0) * np.float32(2)
    b = dev2.batch()
    y = b.scale(b.relu(b.upload(x)), 2.0)
    total, other = b.sum(y), b.neg(y)
    block_on(b.execute())
    check("sum", block_on(b.read(total)), y_ref)
    np.testing.assert_array_equal(block_on(b.read(other)), -y_ref)
    b = dev2.batch()
    y = b.scale(b.relu(b.upload(x)), 2.0)
    total = b.sum(y)
    b.keep(y)
    block_on(b.execute())
    np.testing.assert_array_equal(block_on(b.read(y)), y_ref)
    check("sum", block_on(b.read(total)), y_ref)
    b = dev2.batch()
    y = b.scale(b.relu(b.upload(x)), 2.0)
    total = b.sum(y)
    block_on(b.execute())
    with pytest.raises(BatchError, match="keep"):
        block_on(b.read(y))


def test_unrolled_loop_with_a_chain(gpu, monkeypatch):
    """One workgroup of partials, so each thread runs the unrolled loop (8 vec4s of one load, 4 of two)
    before its tail."""
    monkeypatch.setattr(gpu.executor.caps, "reduce_partials", 1)
    x, y = floats(12291, 8), floats(12291, 9)
    ones = np.ones_like(x)
    for name in REDUCTIONS:
        got, _ = run_batch(gpu, lambda b: getattr(b, name)(b.add(b.scale(b.upload(x), 2.0**-10), b.upload(ones))))
        check(name, got, x * np.float32(2.0**-10) + ones)
        got, _ = run_batch(gpu, lambda b: getattr(b, name)(b.neg(b.upload(y))))
        check(name, got, -y)
    y[9000] = np.nan
    for name in REDUCTIONS:
        got, _ = run_batch(gpu, lambda b: getattr(b, name)(b.abs(b.upload(y))))
        assert np.isnan(got), name
    got, _ = run_batch(gpu, lambda b: b.dot(b.relu(b.upload(x)), b.upload(y[::-1].copy())))
    check("dot", got, np.maximum(x, 0), y[::-1])
    # costly chains: fewer vec4s in flight (CODE_BUDGET), none unrolled for the longest
    t64 = np.tanh(x.astype(np.float64))
    for build, want, unroll in (
        (lambda b, v: b.tanh(v), t64, 4),
        (
            lambda b, v: b.tanh(b.sigmoid(b.exp(b.scale(b.tanh(v), 0.5)))),
            np.tanh(1 / (1 + np.exp(-np.exp(0.5 * t64)))),
            1,
        ),
    ):
        got, b = run_batch(gpu, lambda b: b.sum(build(b, b.upload(x))))
        check("sum", got, want)
        (step,) = plan(b._nodes, [n.id for n in b._nodes if n.op is not None], True, 8).steps
        assert reduce_kernel.unroll_for(step, b._nodes) == unroll


def test_plan_splits_the_group_and_respects_the_binding_limit():
    """A map group feeding a sum and a result of its own: the sum takes its ancestors there, the rest
    stays a map step; with too few bindings for the fused pass the group runs unfused."""
    relu, scale, neg, total = (ops.get(k) for k in ("relu", "scale", "neg", "sum"))
    nodes = [
        Node(0, None, (), (), (8,)),
        Node(1, relu, (0,), (), (8,)),
        Node(2, neg, (0,), (), (8,)),
        Node(3, scale, (1,), (2.0,), (8,)),
        Node(4, total, (3,), (), ()),
    ]
    planned = plan(nodes, [1, 2, 3, 4], True, 8)
    steps, fused_away = list(planned.steps), planned.fused_away
    assert steps == [ReduceStep(8, [0], [1, 3, 4], [4]), MapStep(8, [0], [2], [2])], steps
    assert 1 in fused_away and 3 in fused_away and 4 not in fused_away
    steps = plan(nodes, [1, 2, 3, 4], True, 2).steps  # one binding short of tw_meta, partials and x
    assert not any(isinstance(s, ReduceStep) for s in steps), steps
