"""concatenate, stack and pad against a float64 reference on every backend: padding is a masked view
(layout.View.mask), composed by every movement op, read by the map kernel (GPU), as zeros plus as_strided
(numpy) and by the gather (wasm-simd); concatenate is one fused kernel; errors at the call.

The reference is _pyref.Ref (pure Python, float64; test_the_reference_joins_like_numpy checks its
concatenate/stack/pad against NumPy on the desktop) and the inputs come from a seeded random.Random, so
these bodies also run inside Pyodide (e2e/test_parity_in_pyodide.py). The tests that need NumPy itself
are marked `needs_numpy` with their reason."""

from __future__ import annotations

import array
import itertools
import math
import random

import pytest
from _cases import HAVE_NUMPY
from _helpers import refs, tensor
from _pyref import INF, NAN, Ref, assert_close, concatenate, flat_values, maximum, pad, stack, uniform

import trueno_web as tw
from trueno_web.kernels import map as map_kernel
from trueno_web.layout import View
from trueno_web.runtime import block_on
from trueno_web.tensor.views import _sliced, pad_widths

needs_numpy = pytest.mark.skipif(
    not HAVE_NUMPY,
    reason="needs NumPy (desktop only): the NumPy cross-check, NumPy integers as pad widths, the numpy device's batch",
)

RNG = random.Random(11)
data = refs(RNG, -3.0, 3.0)


def zeros(*shape) -> Ref:
    return Ref.full(shape, 0.0)


def check_result(got, want: Ref, rtol, atol, label=""):
    """A host result (float32 NumPy array or array.array('f')) of want's shape, within rtol/atol."""
    assert tuple(got.shape) == want.shape and got.dtype.name == "float32", (label, got.shape, want.shape)
    assert_close(got, want, rtol=rtol, atol=atol)


def check_all(pairs, rtol=2e-6, atol=2e-6):
    """Realise every tensor of (tensor, want) pairs in one batch, then compare each with its float64 want."""
    block_on(tw.realize(*(t for t, _ in pairs)))
    for k, (t, want) in enumerate(pairs):
        assert t.shape == want.shape, (k, t.shape, want.shape)
        check_result(block_on(t.numpy()), want, rtol, atol, f"case {k}")


# ---------------------------------------------------------------- concatenate and stack


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_concatenate_along_each_axis_of_1_to_4_inputs(dev, axis):
    base = [3, 5, 2]
    pairs = []
    for sizes in [(7,), (1, 4), (3, 0, 5), (2, 1, 6, 3)]:  # odd sizes, one empty along the axis
        xs = []
        for n in sizes:
            shape = list(base)
            shape[axis] = n
            xs.append(data(*shape))
        ts = [tensor(dev, x) for x in xs]
        pairs.append((tw.concatenate(ts, axis=axis), concatenate(xs, axis=axis)))
        pairs.append((tw.concatenate(ts, axis) * 2 - 1, concatenate(xs, axis) * 2.0 - 1))
    check_all(pairs)


def test_concatenate_of_views_and_host_data(dev):
    x, y, z = data(4, 6), data(6, 3), data(1, 6)
    tx, ty, tz = tensor(dev, x), tensor(dev, y), tensor(dev, z)
    pairs = [
        (tw.concatenate([tx, ty.T, tz.expand(2, 6)]), concatenate([x, y.T, z.broadcast_to((2, 6))])),
        (tw.concatenate([tx[::-2, 1::2], ty[1:3, ::-1]], axis=1), concatenate([x[::-2, 1::2], y[1:3, ::-1]], 1)),
        (tw.concatenate([tx.T, ty], axis=-1), concatenate([x.T, y], axis=-1)),
        (tw.concatenate([tx, x[:2].tolist()]), concatenate([x, x[:2]])),  # host data joins the tensor's device
        (tw.concatenate([tx.relu(), tz]), concatenate([maximum(x, 0), z])),  # a computed input
        (tw.concatenate([tx]), x),
        (tw.concatenate([tx[:, :0], ty[:4, :0]], axis=1), zeros(4, 0)),  # all empty along the axis
        (tw.concatenate((tz[:0], tz[:0])), zeros(0, 6)),
    ]
    check_all(pairs)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_stack_at_each_axis(dev, axis):
    xs = [data(3, 4) for _ in range(3)]
    ts = [tensor(dev, x) for x in xs]
    check_all(
        [
            (tw.stack(ts, axis=axis), stack(xs, axis=axis)),
            (tw.stack([ts[0].T, ts[1].T], axis), stack([xs[0].T, xs[1].T], axis)),
            (tw.stack(ts[:1], axis).sum(axis=axis), xs[0]),
        ]
    )


def test_stack_of_scalars_and_vectors(dev):
    arange3 = Ref([0.0, 1.0, 2.0])
    check_all(
        [
            (tw.stack([tw.asarray(1.5, device=dev), dev.tensor(array.array("f", [-2.0]), shape=())]), Ref([1.5, -2.0])),
            (tw.stack([tensor(dev, arange3)] * 2, axis=1), stack([arange3] * 2, 1)),
        ]
    )


def test_nan_and_inf_pass_through(dev):
    x = Ref.nested([[NAN, INF], [-INF, 1.0]]).astype_f32()
    y = Ref.nested([[0.0, -0.0], [NAN, 3e38]]).astype_f32()
    tx, ty = tensor(dev, x), tensor(dev, y)
    block_on(tw.realize(tw.concatenate([tx, ty]), tw.concatenate([tx, ty], 1), tx.pad(1), tw.stack([tx, ty])))
    exact = {"rtol": 0.0, "atol": 0.0}  # assert_array_equal: NaN == NaN, infinities and values exact
    check_result(block_on(tw.concatenate([tx, ty]).numpy()), concatenate([x, y]), **exact)
    check_result(block_on(tw.concatenate([tx, ty], 1).numpy()), concatenate([x, y], 1), **exact)
    check_result(block_on(tw.stack([tx, ty], 2).numpy()), stack([x, y], 2), **exact)
    got = block_on(tx.pad(1).numpy())
    check_result(got, pad(x, 1), **exact)
    assert all(math.copysign(1.0, v) > 0 for v in flat_values(got)[:4])  # padding is +0.0


def test_concatenate_is_one_fused_kernel(gpu):
    xs = [data(5, 7), data(2, 7), data(9, 7)]
    ts = [tensor(gpu, x) for x in xs]
    out = tw.concatenate(ts).relu() * 3
    block_on(tw.realize(*ts))  # the inputs are resident: only the concatenation is left to run
    before = gpu.stats.as_dict()
    got = block_on(out.numpy())
    after = gpu.stats.as_dict()
    assert after["dispatches"] - before["dispatches"] == 1
    assert after["uploads"] == before["uploads"]
    assert_close(got, maximum(concatenate(xs), 0) * 3.0, rtol=2e-6)


# ---------------------------------------------------------------- pad and masked views


PAD_FORMS = [1, (2,), (1, 3), ((0, 2),), ((1, 0), (0, 0), (2, 1)), ((1,), (0,), (3,)), [[0, 1], [2, 0], [0, 0]], 0]


def test_pad_forms_like_numpy(dev):
    x = data(3, 1, 4)
    t = tensor(dev, x)
    pairs = [(t.pad(w), pad(x, w)) for w in PAD_FORMS]
    pairs += [
        (tw.pad(t, 1), pad(x, 1)),
        (t.pad(((1, 2), (0, 1), (3, 0)), constant_values=-2.5), pad(x, ((1, 2), (0, 1), (3, 0)), constant_values=-2.5)),
        (t.transpose().pad((1, 2)), pad(x.T, (1, 2))),
        (t[::-1, :, ::2].pad(((2, 0), (1, 1), (0, 3))), pad(x[::-1, :, ::2], ((2, 0), (1, 1), (0, 3)))),
        (t[:, :1].expand(3, 5, 4).pad(1), pad(x[:, :1].broadcast_to((3, 5, 4)), 1)),
        (t.pad(1).pad(((0, 1), (2, 0), (1, 1))), pad(pad(x, 1), ((0, 1), (2, 0), (1, 1)))),
        (dev.tensor(array.array("f"), shape=(0, 3)).pad(((1, 1), (0, 1))), zeros(2, 4)),  # all padding
        (t.pad(2) * 2 + t.pad(2).exp(), pad(x, 2) * 2.0 + pad(x, 2).map("exp")),
    ]
    check_all(pairs, rtol=5e-6)


def _moves(rng, t, x):
    """A random movement op applied to both (tensor, Ref)."""
    kind = rng.randrange(7)
    if kind == 0 and x.ndim > 1:
        axes = list(range(x.ndim))
        rng.shuffle(axes)
        return t.permute(axes), x.transpose(*axes)
    if kind == 1 and x.ndim:
        index = []
        for n in x.shape:
            step = rng.choice([1, 2, -1, -3])
            start, stop = sorted(rng.randrange(-n - 1, n + 2) for _ in range(2))
            index.append(slice(start, stop, step) if step > 0 else slice(stop, start, step))
        return t[tuple(index)], x[tuple(index)]
    if kind == 2 and x.ndim and x.shape[0]:
        i = rng.randrange(-x.shape[0], x.shape[0])
        return t[i], x[i]
    if kind == 3:
        a = rng.randrange(0, x.ndim + 1)
        return t.unsqueeze(a), x.unsqueeze(a)
    if kind == 4 and 1 in x.shape:
        shape = tuple(rng.randrange(1, 4) if n == 1 else n for n in x.shape)
        return t.expand(shape), x.broadcast_to(shape)
    if kind == 5 and 1 in x.shape:
        return t.squeeze(), x.squeeze()
    widths = [(rng.randrange(0, 3), rng.randrange(0, 3)) for _ in x.shape]
    return t.pad(widths), pad(x, widths)


def test_masked_views_compose_with_every_movement_op(dev):
    rng = random.Random(3)
    x = data(4, 3, 5)
    t = tensor(dev, x)
    pairs = []
    for _ in range(24):
        tt, xx = t.pad(((1, 2), (0, 1), (2, 0))), pad(x, ((1, 2), (0, 1), (2, 0)))
        for _ in range(4):
            if xx.size > 4000:
                break
            tt, xx = _moves(rng, tt, xx)
        pairs.append((tt + 0, xx))
    check_all(pairs)


def test_masked_views_read_as_zeros_outside(dev):
    x = data(3, 4)
    t = tensor(dev, x)
    p = t.pad(((2, 1), (1, 1)))
    xp = pad(x, ((2, 1), (1, 1)))
    check_all(
        [
            (p[0], xp[0]),
            (p[0, 0], xp[0, 0]),
            (p[3, 2], xp[3, 2]),
            (p[-1, -1], xp[-1, -1]),  # 0-d, inside and out
            (p[0:2, 1:5], zeros(2, 4)),
            (p[2:5, 1:5], x),
            (p[::-1, ::-1], xp[::-1, ::-1]),
            (p[:1].expand(3, 6), zeros(3, 6)),
            (p[:1].squeeze(0), xp[0]),
            (p[None, :, None], xp[None, :, None]),
            (p.reshape(36), xp.reshape(36)),
            (p.T.reshape(6, 6), xp.T.reshape(6, 6)),  # a reshape copies first
            (p[2:5, 1:5] * 1, x),
        ]
    )


def test_reductions_softmax_and_matmul_of_masked_views(dev):
    x, w = data(3, 5), data(7, 2)
    t, tw_ = tensor(dev, x), tensor(dev, w)
    xp = pad(x, ((1, 0), (0, 2)))
    p = t.pad(((1, 0), (0, 2)))
    check_all(
        [
            (p.sum(), xp.sum()),
            (p.sum(axis=0), xp.sum(axis=0)),
            (p.max(axis=1, keepdims=True), xp.max(axis=1, keepdims=True)),
            (p.T.mean(axis=-1), xp.T.mean(axis=-1)),
            (p.softmax(axis=0), xp.map("exp") / xp.map("exp").sum(axis=0)),
            (p @ tw_, xp @ w),
            (tw.concatenate([t, t * 2], axis=1).sum(axis=1), concatenate([x, 2.0 * x], 1).sum(1)),
        ],
        rtol=1e-5,
        atol=1e-5,
    )


# ---------------------------------------------------------------- errors


def _spare_device():
    """A second device (NumPy's where it imports, else wasm-simd): the caller closes it."""
    return block_on(tw.GpuDevice.create("numpy" if HAVE_NUMPY else "wasm-simd"))


def test_mistakes_raise_where_written(dev):
    x = data(3, 4)
    a, b = tensor(dev, x), tensor(dev, data(3, 5))
    with pytest.raises(tw.TruenoValueError, match=r"axis 0 .*\(3, 4\), \(3, 5\)"):
        tw.concatenate([a, b])
    with pytest.raises(tw.TruenoValueError, match=r"same number of dimensions.*\(3, 4\), \(4,\)"):
        tw.concatenate([a, tensor(dev, data(4))])
    with pytest.raises(tw.TruenoValueError, match="at least one tensor"):
        tw.concatenate([])
    with pytest.raises(tw.TruenoValueError, match="axis 2 is out of range for 2"):
        tw.concatenate([a, a], axis=2)
    with pytest.raises(tw.TruenoValueError, match="axis -4 is out of range for 3"):
        tw.stack([a, a], axis=-4)
    with pytest.raises(tw.TruenoValueError, match="zero-dimensional"):
        tw.concatenate([a.sum(), a.sum()])
    with pytest.raises(tw.TruenoTypeError, match="list or tuple"):
        tw.concatenate(a)
    with pytest.raises(tw.TruenoValueError, match=r"same shape.*\(3, 4\), \(3, 5\)"):
        tw.stack([a, b])
    with pytest.raises(tw.TruenoValueError, match="at least one tensor"):
        tw.stack(())
    other = _spare_device()
    try:
        with pytest.raises(tw.TruenoValueError, match="different devices"):
            tw.concatenate([a, tensor(other, data(3, 4))])
    finally:
        other.close()
    with pytest.raises(tw.TruenoValueError, match=r">= 0.*\(3, 4\)"):
        a.pad((1, -1))
    with pytest.raises(tw.TruenoValueError, match=r"does not fit a tensor of shape \(3, 4\)"):
        a.pad(((1, 1), (1, 1), (1, 1)))
    with pytest.raises(tw.TruenoValueError, match="does not fit"):
        a.pad((1, 2, 3))
    with pytest.raises(tw.TruenoTypeError, match="ints"):
        a.pad(1.5)
    with pytest.raises(tw.TruenoValueError, match="mode='constant'"):
        a.pad(1, mode="reflect")
    check_all([(tw.concatenate([a, a], axis=-2), zeros(6, 4) + concatenate([x] * 2))])


@needs_numpy
def test_the_reference_joins_like_numpy():
    """_pyref's concatenate, stack and pad (every pad_width form, constant_values) against NumPy."""
    import numpy as np

    rng = random.Random(5)
    x, y, z = uniform(rng, (3, 1, 4)), uniform(rng, (3, 2, 4)), uniform(rng, (2, 3))
    npx, npy, npz = (np.array(r.flat).reshape(r.shape) for r in (x, y, z))

    def same(got: Ref, want):
        assert got.shape == want.shape and got.tolist() == want.tolist(), (got, want)

    for w in PAD_FORMS + [((2, 1),), [[1, 0], [0, 2], [3, 1]], (0, 2)]:
        same(pad(x, w), np.pad(npx, w))
        same(x.pad(w, constant_values=-1.5), np.pad(npx, w, constant_values=-1.5))
    same(pad(Ref([], (0, 3)), ((1, 1), (0, 1))), np.pad(np.zeros((0, 3)), ((1, 1), (0, 1))))
    same(pad(z, 2), np.pad(npz, 2))
    for axis in (1, -2):
        same(concatenate([x, y, x], axis), np.concatenate([npx, npy, npx], axis))
    same(concatenate([z, z[:0], z]), np.concatenate([npz, npz[:0], npz]))
    same(concatenate([z]), npz)
    for axis in (0, 1, 2, -1, -3):
        same(stack([z, z * 2.0, z], axis), np.stack([npz, npz * 2.0, npz], axis))
    same(stack([Ref.scalar(1.5), Ref.scalar(-2.0)]), np.stack([np.float64(1.5), np.float64(-2.0)]))
    for bad in (
        lambda: concatenate([x, z]),
        lambda: concatenate([x, y], 0),
        lambda: stack([x, y]),
        lambda: pad(x, ((1, 2), (3, 4))),
        lambda: pad(x, -1),
    ):
        with pytest.raises(ValueError):
            bad()


# ---------------------------------------------------------------- the pieces, on the host


def test_sliced_mask_range_matches_a_brute_force():
    for lo, hi, n in itertools.product(range(0, 6), range(0, 7), [5, 6]):
        for start, stop, step in itertools.product(range(-7, 8), range(-7, 8), [1, 2, 3, -1, -2, -4]):
            s, e, st = slice(start, stop, step).indices(n)
            js = [j for j, k in enumerate(range(s, e, st)) if lo <= k < hi]
            want = (js[0], js[-1] + 1) if js else (0, 0)
            assert _sliced((lo, hi), s, st, len(range(s, e, st))) == want, (lo, hi, n, start, stop, step)


def test_view_masks_normalise_and_reach_their_valid_region():
    assert View((3, 4), (4, 1), 0, ((0, 3), (0, 4))).mask is None  # all of it: no mask
    assert View((3, 4), (4, 1), 0, ((0, 3), (0, 4))).identity
    assert not View((3, 4), (4, 1), 0, ((0, 3), (1, 4))).identity
    assert View((3, 4), (4, 1), 0, ((2, 1), (0, 4))).mask == ((0, 0), (0, 0))  # nothing valid: one form
    assert View((5, 6), (4, 1), -5, ((1, 4), (1, 5))).reach() == (0, 11)
    assert View((5, 6), (4, 1), -5, ((0, 0), (0, 0))).reach() is None
    assert pad_widths(2, (3, 4)) == [(2, 2), (2, 2)]
    assert pad_widths(((1,), (2,)), (3, 4)) == [(1, 1), (2, 2)]


@needs_numpy
def test_pad_widths_take_numpy_integers():
    import numpy as np

    assert pad_widths(np.int64(1), (3,)) == [(1, 1)]


@needs_numpy
def test_batch_view_with_a_mask(cpu):
    import numpy as np

    batch = cpu.batch()
    try:
        x = batch.upload(np.arange(6, dtype=np.float32))
        v = batch.view(x, (4, 4), (3, 1), -4, mask=((1, 3), (1, 4)))  # (2, 3) padded by 1 on each side
        out = batch.copy(v)
        block_on(batch.execute())
        np.testing.assert_array_equal(block_on(batch.read(out)), np.pad(np.arange(6.0).reshape(2, 3), ((1, 1), (1, 0))))
        with pytest.raises(tw.TruenoValueError, match="outside the 6 elements"):
            batch.view(x, (4, 4), (3, 1), -4, mask=((0, 3), (1, 4)))
    finally:
        batch.release()


def test_wgsl_depends_on_whether_a_load_is_masked_never_on_its_values():
    masked = View((5, 6), (4, 1), -5, ((1, 4), (1, 5)))
    key = map_kernel.view_key(masked)
    assert key == (2, True) == map_kernel.view_key(View((9, 2), (1, 9), 3, ((0, 9), (1, 2))))
    assert map_kernel.view_key(View((9, 2), (1, 9), 3)) == (2, False)
    assert map_kernel.view_key(View((9, 2), (2, 1), 0)) is None
    text = map_kernel.index_fn(1, key, 20)
    assert "fn tw_ld1(i: u32) -> f32" in text and "select(f32(0), in1[u32(max(at, 0))], ok)" in text
    assert map_kernel.load_expr(1, key, "i") == "tw_ld1(i)"
    assert map_kernel.load_expr(0, (2, False), "i") == "in0[tw_at0(i)]"
    assert map_kernel.load_expr(0, None, "k") == "in0[k]"
    words = map_kernel.view_words(masked)
    assert len(words) == map_kernel.meta_len(key) and words[0] == (-5) & 0xFFFFFFFF and words[-4:] == [1, 4, 1, 5]


def test_leading_broadcast_dimensions_cost_no_index_arithmetic():
    """An unmasked view's leading dimensions of stride 0 (a value broadcast along them) are left out of its
    index function: a broadcast scalar reads one address with no division or remainder, a row broadcast over
    rows takes one remainder; a stride 0 inside a view, and a masked view, are kept whole."""
    scalar = View((784, 256), (0, 0), 7)
    assert map_kernel.view_key(scalar) == (0, False) and map_kernel.view_words(scalar) == [7]
    text = map_kernel.index_fn(4, (0, False), 12)
    assert "%" not in text and "/" not in text and "tw_meta[12u]" in text
    row = View((128, 256), (0, 1), 3)
    assert map_kernel.view_key(row) == (1, False) and map_kernel.view_words(row) == [3, 256, 1]
    assert map_kernel.view_key(View((4, 5, 6), (6, 0, 1), 0)) == (3, False)
    assert map_kernel.view_key(View((2, 3), (0, 1), 0, ((0, 1), (0, 3)))) == (2, True)


def test_broadcast_values_in_the_map_and_row_kernels(dev):
    """Values broadcast along leading dimensions (a 0-d tensor, a (1, 1) one, a row) in elementwise chains
    and row reductions, against the reference."""
    x, r, one, s = data(6, 5), Ref.nested([[0.5, -1.0, 2.0, 0.0, 3.0]]), Ref.nested([[-0.25]]), Ref.scalar(2.5)
    tx, tr, tone, ts = (tensor(dev, v) for v in (x, r, one, s))
    cases = [
        ((tx * ts + tr).sum(axis=-1), (x * s + r).sum(-1)),
        ((tx - tone).max(axis=0), (x - one).max(0)),
        ((tr * ts + tone + tx * 0.0).sum(axis=0), (r * s + one + x * 0.0).sum(0)),
        (tx * ts - tr, x * s - r),
    ]
    for got, want in cases:
        assert_close(block_on(got.numpy()), want, rtol=1e-6, atol=1e-6)


def test_masked_loads_in_the_row_kernel(gpu):
    """A row reduction fused with the elementwise chain that feeds it (kernels/rows.py) reads padded and
    concatenated inputs through the same masked loads as the map kernel: one dispatch."""
    pytest.importorskip("trueno_web.kernels.rows")
    x, y = data(6, 5), data(6, 3)
    tx, ty = tensor(gpu, x), tensor(gpu, y)
    block_on(tw.realize(tx, ty))
    cases = [
        ((tx.pad(((0, 0), (2, 1))) * 2).sum(axis=-1), (pad(x, ((0, 0), (2, 1))) * 2.0).sum(-1)),
        (tw.concatenate([tx, ty], axis=1).exp().max(axis=-1), concatenate([x, y], 1).map("exp").max(-1)),
        (
            tx.pad(((1, 2), (0, 0))).T.pad(((0, 0), (3, 0))).sum(axis=1, keepdims=True),
            pad(pad(x, ((1, 2), (0, 0))).T, ((0, 0), (3, 0))).sum(1, keepdims=True),
        ),
    ]
    for t, want in cases:
        before = gpu.stats.dispatches
        got = block_on(t.numpy())
        assert gpu.stats.dispatches - before == 1
        assert_close(got, want, rtol=1e-5, atol=1e-5)
