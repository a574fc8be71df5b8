"""Reductions along axes fused with the elementwise ops around them (graph.RowStep, kernels/rows.py), and
the layers built on them (linear, layer_norm, attention, argmax), on every backend against the float64
reference (_pyref.Ref, pure Python, so these bodies also run inside Pyodide); the dispatch counts
they must take are asserted on every backend (the CPU backends count plan steps)."""

from __future__ import annotations

import math
import random

import pytest
from _helpers import refs, tensor
from _pyref import INF, NAN, Ref, apply, assert_close, matmul, where

import trueno_web as tw
from trueno_web import kernels
from trueno_web.runtime import block_on

RNG = random.Random(11)
data = refs(RNG, -3.0, 3.0)


def run(dev, t):
    """(result, dispatches it took)."""
    before = dev.stats.dispatches
    out = block_on(t.numpy())
    return out, dev.stats.dispatches - before


def ref_layer_norm(x: Ref, w: Ref, b: Ref, eps=1e-5, axes=(-1,)) -> Ref:
    centred = x - x.mean(axes, keepdims=True)
    return centred / apply("sqrt", (centred * centred).mean(axes, keepdims=True) + eps) * w + b


# ---------------------------------------------------------------- dispatch counts


def test_matmul_bias_relu_scale_sum_is_two_dispatches(dev):
    x, w, b = data(33, 20), data(20, 10), data(10)
    y = ((tensor(dev, x) @ tensor(dev, w) + tensor(dev, b)).relu() * 2).sum(axis=-1)
    out, dispatches = run(dev, y)
    assert dispatches <= 2
    assert_close(out, (apply("relu", matmul(x, w) + b) * 2).sum(axis=-1), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("shape", [(4, 7), (3, 300), (1, 4097), (65, 1)])
def test_layer_norm_is_at_most_two_dispatches(dev, shape):
    x, w, b = data(*shape), data(shape[-1]), data(shape[-1])
    out, dispatches = run(dev, tw.layer_norm(tensor(dev, x), tensor(dev, w), tensor(dev, b)))
    assert dispatches <= 2
    assert_close(out, ref_layer_norm(x, w, b), rtol=2e-5, atol=2e-5)


def test_bias_add_uploads_the_bias_once_and_never_expands_it(dev):
    x, b = data(64, 10), data(10)
    before = (dev.stats.uploads, dev.stats.bytes_up)
    out, dispatches = run(dev, tensor(dev, x) + tensor(dev, b))
    assert dispatches == 1
    if dev.backend == "webgpu":  # the CPU backends move no bytes
        assert (dev.stats.uploads - before[0], dev.stats.bytes_up - before[1]) == (2, (64 * 10 + 10) * 4)
    assert_close(out, x + b)


VIEW_CASES = {  # name: (x's shape, operand's shape, x read as, vec4 form on webgpu)
    "row-broadcast bias": ((5, 8), (8,), lambda x: x, True),
    "a slice of whole rows": ((6, 12), (12,), lambda x: x[1:4], True),
    "a bias over the middle axis": ((2, 3, 8), (3, 8), lambda x: x, True),
    "a column broadcast": ((6, 8), (6, 1), lambda x: x, False),
    "an unaligned slice of columns": ((6, 8), (4,), lambda x: x[:, 2:6], False),
}


@pytest.mark.parametrize("case", VIEW_CASES)
def test_broadcast_and_sliced_operands_of_a_map(dev, monkeypatch, case):
    """An operand read through a view whose rows are whole, aligned vec4s (a bias, a slice of rows) keeps the map
    kernel in its vec4 form, a vec4 at a time (kernels/map.vec4_view); a column broadcast or an unaligned slice
    runs element by element. Every backend against the reference, NaN and inf in the operand."""
    shape, oshape, view, vec4 = VIEW_CASES[case]
    x, b = data(*shape), data(*oshape)
    b.flat[0], b.flat[-1] = NAN, -INF
    forms = []
    if dev.backend == "webgpu":
        from trueno_web.kernels import map as map_kernel

        monkeypatch.setattr(dev.executor.caps, "map_vpt", 3)  # plans of their own: the kernels compiled here
        source = map_kernel.map_source
        monkeypatch.setattr(map_kernel, "map_source", lambda key, vec, vpt: forms.append(vec) or source(key, vec, vpt))
    out, dispatches = run(dev, (view(tensor(dev, x)) * 2 + tensor(dev, b)).tanh())
    assert dispatches == 1
    assert_close(out, apply("tanh", view(x) * 2 + b), rtol=1e-6, atol=1e-6)
    assert forms == ([vec4] if dev.backend == "webgpu" else [])


def test_a_centred_square_mean_reads_its_input_through_the_chain(dev):
    x, m = data(9, 40), data(9, 1)
    out, dispatches = run(dev, ((tensor(dev, x) - tensor(dev, m)) ** 2).mean(axis=-1))
    assert dispatches == 1
    assert_close(out, ((x - m) ** 2).mean(axis=-1), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- row steps: what they fuse, and when they stop


@pytest.mark.parametrize("axis", [0, 1, -1, (0, 2), None])
def test_var_and_std_along_any_axes(dev, axis):
    x = data(5, 6, 7)
    t = tensor(dev, x)
    block_on(tw.realize(v := t.var(axis=axis), s := t.std(axis=axis, keepdims=True)))
    assert_close(block_on(v.numpy()), x.var(axis=axis), rtol=1e-5, atol=1e-6)
    assert_close(block_on(s.numpy()), x.std(axis=axis, keepdims=True), rtol=1e-5, atol=1e-6)


def test_a_value_of_the_chain_that_is_also_a_result_is_stored(dev):
    x = data(6, 33)
    c = tensor(dev, x) * 2 + 1
    r = c.max(axis=-1)
    before = dev.stats.dispatches
    block_on(tw.realize(c, r))
    assert dev.stats.dispatches - before == 1
    assert_close(block_on(c.numpy()), x * 2 + 1)
    assert_close(block_on(r.numpy()), (x * 2 + 1).max(axis=-1))


def test_a_row_value_broadcast_along_another_axis_is_computed_correctly(dev):
    """s has one value per row of x; adding it to z (K, M) broadcasts it along z's first axis: not a row
    broadcast of x's rows, so the row step ends and a map kernel reads s from memory."""
    x, z = data(8, 5), data(3, 8)
    s = tensor(dev, x).sum(axis=-1)
    out, _ = run(dev, (tensor(dev, z) + s).sum(axis=-1) + s[:3])
    assert_close(out, (z + x.sum(axis=-1)).sum(axis=-1) + x.sum(axis=-1)[:3], rtol=1e-5, atol=1e-5)


def test_row_values_feed_later_reductions_and_elementwise_ops(dev):
    """softmax written with tensor ops: max, exp(x - max), its sum, the division: one row step."""
    x = data(7, 19)
    t = tensor(dev, x)
    e = (t - t.max(axis=-1, keepdims=True)).exp()
    out, dispatches = run(dev, e / e.sum(axis=-1, keepdims=True))
    assert dispatches == 1
    assert_close(out, x.softmax(axis=-1), rtol=1e-5, atol=1e-7)


def test_more_inputs_than_bindings_still_compute(dev):
    xs = [data(4, 9) for _ in range(12)]
    total = tensor(dev, xs[0])
    for x in xs[1:]:
        total = total + tensor(dev, x)
    want = xs[0]
    for x in xs[1:]:
        want = want + x
    out, _ = run(dev, (total * total).sum(axis=-1))
    assert_close(out, (want * want).sum(axis=-1), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("shape", [(0, 5), (3, 0)])
def test_empty_rows_and_empty_axes(dev, shape):
    x = Ref([], shape)
    assert_close(block_on(tensor(dev, x).sum(axis=-1).numpy()), x.sum(axis=-1))
    assert_close(block_on((tensor(dev, x) * 2).sum(axis=0).numpy()), x.sum(axis=0))


def test_nan_and_inf_pass_through_a_fused_reduction(dev):
    x = Ref([1.0, NAN, 2.0, 3.0, INF, 1.0, -INF, 0.0, 5.0], (3, 3))
    t = tensor(dev, x)
    out, _ = run(dev, (t * 2).max(axis=-1))
    assert_close(out, (x * 2).max(axis=-1))
    out, _ = run(dev, (t - t.max(axis=-1, keepdims=True)).sum(axis=-1))
    assert_close(out, (x - x.max(axis=-1, keepdims=True)).sum(axis=-1))


# ---------------------------------------------------------------- layers


def test_layer_norm_over_trailing_axes_with_broadcast_weights(dev):
    x, w, b = data(3, 4, 5), data(4, 5), data(5)
    out, _ = run(dev, tw.layer_norm(tensor(dev, x), tensor(dev, w), tensor(dev, b), eps=1e-3, axis=(-2, -1)))
    assert_close(out, ref_layer_norm(x, w, b, 1e-3, (-2, -1)), rtol=2e-5, atol=2e-5)
    out, _ = run(dev, tw.layer_norm(tensor(dev, x)))
    centred = x - x.mean(-1, keepdims=True)
    assert_close(out, centred / apply("sqrt", (centred * centred).mean(-1, keepdims=True) + 1e-5), rtol=2e-5, atol=2e-5)


def test_linear(dev):
    x, w, b = data(2, 3, 6), data(6, 4), data(4)
    assert_close(
        block_on(tw.linear(tensor(dev, x), tensor(dev, w), tensor(dev, b)).numpy()),
        matmul(x, w) + b,
        rtol=1e-5,
        atol=1e-5,
    )
    assert_close(block_on(tw.linear(tensor(dev, x), tensor(dev, w)).numpy()), matmul(x, w), rtol=1e-5, atol=1e-5)


def _attention(q: Ref, k: Ref, v: Ref, keep: Ref | None) -> Ref:
    scores = matmul(q, k.T) * (1.0 / math.sqrt(q.shape[-1]))
    if keep is not None:
        scores = where(keep, scores, -INF)
    return matmul(scores.softmax(axis=-1), v)


def test_scaled_dot_product_attention_with_causal_and_given_masks(dev):
    q, k, v = data(5, 8), data(7, 8), data(7, 3)
    tq, tk, tv = tensor(dev, q), tensor(dev, k), tensor(dev, v)
    assert_close(
        block_on(tw.scaled_dot_product_attention(tq, tk, tv).numpy()), _attention(q, k, v, None), rtol=1e-5, atol=1e-6
    )
    causal = Ref([float(j <= i) for i in range(5) for j in range(7)], (5, 7))
    assert_close(
        block_on(tw.scaled_dot_product_attention(tq, tk, tv, causal=True).numpy()),
        _attention(q, k, v, causal),
        rtol=1e-5,
        atol=1e-6,
    )
    keep = Ref([float((i + j) % 3 != 0) for i in range(5) for j in range(7)], (5, 7))
    assert_close(
        block_on(tw.scaled_dot_product_attention(tq, tk, tv, mask=tensor(dev, keep)).numpy()),
        _attention(q, k, v, keep),
        rtol=1e-5,
        atol=1e-6,
    )


def test_layer_errors_are_raised_where_written(dev):
    x = tensor(dev, data(3, 4))
    with pytest.raises(tw.TruenoValueError, match="w must be 2-D"):
        tw.linear(x, tensor(dev, data(4)))
    with pytest.raises(tw.TruenoValueError, match=r"q \(\.\.\., L, E\)"):
        tw.scaled_dot_product_attention(x, tensor(dev, data(3, 5)), x)
    with pytest.raises(tw.TruenoValueError, match="out of range"):
        tw.layer_norm(x, axis=2)
    with pytest.raises(tw.TruenoValueError, match="empty axis"):
        tensor(dev, Ref([], (3, 0))).argmax(axis=1)


# ---------------------------------------------------------------- argmax / argmin


def _arg(x: Ref, axis: int, pick) -> Ref:
    """The first index of the extreme (or of the first NaN) along `axis`, NumPy's rule."""
    moved = x.permute([d for d in range(x.ndim) if d != axis % x.ndim] + [axis % x.ndim])
    n = x.shape[axis]
    rows = [moved.flat[r * n : (r + 1) * n] for r in range(moved.size // n)]
    out = []
    for row in rows:
        nans = [i for i, v in enumerate(row) if v != v]
        out.append(float(nans[0] if nans else row.index(pick(row))))
    return Ref(out, moved.shape[:-1])


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_argmax_and_argmin_along_an_axis(dev, axis):
    x = Ref([3.0, 1.0, 3.0, NAN, 0.0, -1.0, 2.0, 2.0, -INF, INF, 4.0, 4.0], (3, 4))
    t = tensor(dev, x)
    assert_close(block_on(t.argmax(axis=axis).numpy()), _arg(x, axis, max))
    assert_close(block_on(tw.argmin(t, axis=axis).numpy()), _arg(x, axis, min))


def test_argmax_of_everything_and_keepdims_and_one_dispatch(dev):
    x = data(6, 50)
    t = tensor(dev, x)
    assert block_on(t.argmax().item()) == x.flat.index(max(x.flat))
    out, dispatches = run(dev, t.argmax(axis=-1, keepdims=True))
    assert dispatches == 1
    assert_close(out, Ref(_arg(x, -1, max).flat, (6, 1)))


@pytest.mark.parametrize(
    "shape", [(4, 7), (5, 30), (9, 100), (3, 300), (3, 2000), (1, 4097), (65, 1), (37, 16), (5, 64), (3, 1024)], ids=str
)
def test_row_steps_in_both_kernel_forms(row_kernel, shape):
    """The row kernel's two forms (conftest.row_kernel: a row's threads folding through workgroup memory, or
    one thread a row) on rows of one column, of a register slot's few, of many (2 to 256 threads a row: every
    last level of the fold's tree of fan-in 4, kernels/rows.FOLD_RADIX), rows that fill their register slots
    exactly (16, 64, 1024: unguarded folds) and rows past the end in the last workgroup: layer_norm (two folds
    and the stores), var of a chain along either axis, argmax with a NaN and an Inf, an int32 sum."""
    x, w, b = data(*shape), data(shape[-1]), data(shape[-1])
    x.flat[0], x.flat[-1] = NAN, INF
    t = tensor(row_kernel, x)
    out, dispatches = run(row_kernel, tw.layer_norm(t, tensor(row_kernel, w), tensor(row_kernel, b)))
    assert dispatches <= 2
    assert_close(out, ref_layer_norm(x, w, b), rtol=2e-5, atol=2e-5)
    for axis in (0, -1):
        assert_close(block_on((t * 2 + 1).var(axis=axis).numpy()), (x * 2 + 1).var(axis=axis), rtol=1e-5, atol=1e-5)
    assert_close(block_on(t.argmax(axis=-1).numpy()), _arg(x, -1, max))
    ints = [RNG.randrange(2**28, 2**30) for _ in range(math.prod(shape))]
    got = block_on(tw.asarray(ints, device=row_kernel, dtype=tw.int32).reshape(shape).sum(axis=-1).numpy())
    want = [(sum(ints[r * shape[-1] : (r + 1) * shape[-1]]) + 2**31) % 2**32 - 2**31 for r in range(shape[0])]
    assert list(got.reshape(-1)) == want


def test_light_row_steps_fold_across_fewer_threads(fresh_gpu):
    """A row step whose element values are light (var, layer_norm: no exponential) takes 32 columns a thread
    in registers (rows of 4096: 128 threads, register slots c_0 .. c_31); softmax's, with its exponentials,
    16 (256 threads, c_0 .. c_15); each against its reference. (The row kernel's tree form: a device of
    this test alone, so the kernels compiled are its own.)"""
    fresh_gpu.executor.caps.rows_direct = False
    x, w, b = data(3, 4096), data(4096), data(4096)
    t = tensor(fresh_gpu, x)

    def compiled_now() -> list[str]:
        sources = [src for src, _ in fresh_gpu.executor.pipelines if src not in seen]
        seen.update(sources)
        return sources

    seen: set[str] = set()
    assert_close(block_on(t.var(axis=-1).numpy()), x.var(axis=-1), rtol=1e-5, atol=1e-6)
    var_sources = compiled_now()
    assert any("let c_31 = " in src for src in var_sources), "var: 32 register slots"
    assert not any("c < cols" in src for src in var_sources), "4096 = 128 threads x 32 slots: unguarded folds"
    assert_close(block_on(t.softmax(-1).numpy()), x.softmax(axis=-1), rtol=1e-5, atol=1e-7)
    heavy = compiled_now()
    assert any("let c_15 = " in src for src in heavy) and not any("let c_16 = " in src for src in heavy)
    out, _ = run(fresh_gpu, tw.layer_norm(t, tensor(fresh_gpu, w), tensor(fresh_gpu, b)))
    assert_close(out, ref_layer_norm(x, w, b), rtol=2e-5, atol=2e-5)
    assert any("let c_31 = " in src for src in compiled_now()), "layer_norm: 32 register slots"


@pytest.mark.parametrize(
    "shape, axis",
    [((3, 4096), -1), ((5, 4000), -1), ((9, 33), -1), ((1000, 5), -1), ((2, 9000), -1), ((2, 64), 0)],
    ids=str,
)
def test_var_folds_its_squares_with_its_sum(row_kernel, monkeypatch, shape, axis):
    """var and layer_norm fold sum(x) and sum((x - mean)^2) in one pass over a row (kernels/rows.centred_squares:
    each thread's sum pair, squares and count, combined across the row's threads by Chan's update), as
    accurately as two passes: rows whose mean is far from their spread (1e4 +- 3: the means' difference taken
    from pairs), rows that fill the register slots or not, rows too long for them (a loop: each trip's
    columns' moments added to the thread's), a NaN and an Inf; along the leading axis too."""
    x = data(*shape, lo=1e4 - 3.0, hi=1e4 + 3.0)
    x.flat[0], x.flat[-1] = NAN, INF
    t = tensor(row_kernel, x)
    sources = []
    planned = kernels.TEMPLATES["rows"]
    monkeypatch.setitem(kernels.TEMPLATES, "rows", lambda *a: [sources.append(d.source) or d for d in planned(*a)])
    # atol: the mean var centres on is sum * (1 / n) rounded, off by up to an ulp of 1e4 (~1e-3), squared
    assert_close(block_on(t.var(axis=axis).numpy()), x.var(axis=axis), rtol=3e-6, atol=2e-6)
    if not row_kernel.executor.caps.rows_direct:  # the tree form: one fold, no second tree
        (src,) = set(sources)
        assert "tw_moments_add(a, " in src and src.count("workgroupBarrier();\n        width = stride;") == 1
    if axis == -1:  # its elements a chain (exact: x - 1e4 is); 1e4 would be in its output as a rounded mean
        out, dispatches = run(row_kernel, tw.layer_norm(t - 1e4))
        assert dispatches == 1
        assert_close(out, ref_layer_norm(x - 1e4, 1.0, 0.0), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("shape, axis", [((300, 7), 0), ((4, 5, 6), (0, 2)), ((3, 4, 5), (2, 0))], ids=str)
def test_var_over_leading_axes_is_one_row_step(row_kernel, shape, axis):
    """var over leading axes (or axes in any order) centres a view of its input whose reduced axes are last:
    one row step reads it in place (two dispatches where its rows are folded in chunks), no copy of the
    centred values; keepdims puts the 1s back where the axes were."""
    x = data(*shape)
    for keepdims in (False, True):
        out, dispatches = run(row_kernel, tensor(row_kernel, x).var(axis=axis, keepdims=keepdims))
        assert dispatches <= 2
        assert_close(out, x.var(axis=axis, keepdims=keepdims), rtol=1e-5, atol=1e-6)
        assert out.shape == x.var(axis=axis, keepdims=keepdims).shape


# ---------------------------------------------------------------- the planner's bindings bound


def test_no_step_needs_more_bindings_than_the_device_has():
    """Six inputs in two chains of three, then one op on both: merging the chains into the op's step
    would need 1 + 6 + 1 bindings; with a device of 4 every step stays within 4."""
    from trueno_web import ops
    from trueno_web.graph import Node, OpStep
    from trueno_web.planner import plan

    add, total = ops.get("add"), ops.get("sum")
    nodes = [Node(i, None, (), (), (8,)) for i in range(6)]

    def op(o, *inputs, **options):
        nodes.append(Node(len(nodes), o, inputs, (), (2,) if options else (8,), options))
        return len(nodes) - 1

    a = op(add, op(add, 0, 1), 2)
    b = op(add, op(add, 3, 4), 5)
    c = op(add, a, b)
    op(total, op(add, c, a), rows=2)
    steps = plan(nodes, [n.id for n in nodes if n.op is not None], True, 4).steps
    for step in steps:
        if not isinstance(step, OpStep):
            assert 1 + len(step.loads) + len(step.stores) <= 4, step
    assert sorted(m for s in steps for m in ([s.node] if isinstance(s, OpStep) else s.nodes)) == [
        n.id for n in nodes if n.op is not None
    ]
