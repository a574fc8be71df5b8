"""Fused attention (the attention rows, attention_kind.py) on every backend: against the unfused NumPy
expression softmax(q @ k^T * scale, masked) @ v in float64 and against the unfused tensor expression on the
same device, at awkward sizes, causal, masked and broadcast; special values and fully masked rows; errors at
the call; gradients; inside tw.jit; one kernel and no L x S value in the graph."""

from __future__ import annotations

import math

import pytest

np = pytest.importorskip("numpy")

import trueno_web as tw  # noqa: E402
from trueno_web.runtime import block_on  # noqa: E402
from trueno_web.tensor.linalg import attention_weights  # noqa: E402


def unfused(q, k, v, mask=None, scale=None, causal=False):
    """The reference: the expression scaled_dot_product_attention computed before it was fused (float64)."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    with np.errstate(all="ignore"):
        s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
        if causal:
            s = np.where(np.arange(s.shape[-1]) <= np.arange(s.shape[-2])[:, None], s, -np.inf)
        if mask is not None:
            s = np.where(mask != 0, s, -np.inf)
        p = np.exp(s - s.max(-1, keepdims=True))
        return (p / p.sum(-1, keepdims=True)) @ v


def data(seed, *shape):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(np.float32)


def value(t):
    return block_on(t.numpy())


def close(got, want, tol=2e-5):
    assert got.shape == want.shape
    assert np.array_equal(np.isnan(got), np.isnan(want)), np.argwhere(np.isnan(got) != np.isnan(want))[:5]
    finite = ~np.isnan(want)
    assert np.allclose(got[finite], want[finite], rtol=tol, atol=tol), np.abs(got - want)[finite].max()


SIZES = [(1, 1, 2), (7, 33, 2), (33, 7, 1), (1000, 1025, 1), (1025, 1000, 1)]  # (L, S, batch)


@pytest.mark.parametrize("ev", [5, 12], ids=["Ev5", "Ev12"])  # rows of vec4s (bound as vec4 arrays) or not
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("n_q,n_k,b", SIZES, ids=[f"L{n_q}-S{n_k}" for n_q, n_k, _ in SIZES])
def test_matches_the_unfused_expression(dev, n_q, n_k, b, causal, ev):
    q, k, v = data(1, b, n_q, 8), data(2, b, n_k, 8), data(3, b, n_k, ev)
    ts = [dev.tensor(x) for x in (q, k, v)]
    got = value(tw.nn.scaled_dot_product_attention(*ts, causal=causal))
    close(got, unfused(q, k, v, causal=causal))
    if n_q * n_k < 1000:  # the tensor expression on this device: the same (float32) result
        close(got, value(attention_weights(ts[0], ts[1], 8**-0.5, causal) @ ts[2]), 1e-5)


KERNELS = {  # name: (attention.TILED, TILED_SHUFFLES, SPLITS and FULL_SPLITS, Caps.attention_direct)
    "split1": (False, False, 1, False),
    "split4": (False, False, 4, False),
    "direct": (False, False, 1, True),
    "tiled": (True, True, 1, False),
    "tiled-shared": (True, False, 1, False),
}


def use_kernel(gpu, monkeypatch, kernel):
    """Make the session's GPU device plan attention with one of KERNELS (the caller forgets its plans after)."""
    from trueno_web.kernels import attention

    tiled, shuffles, split, direct = KERNELS[kernel]
    monkeypatch.setattr(attention, "TILED", tiled)
    monkeypatch.setattr(attention, "TILED_MIN_VECS", 1)  # the tests' short head dims too
    monkeypatch.setattr(attention, "TILED_SHUFFLES", shuffles)
    monkeypatch.setattr(attention, "SPLITS", (split,))
    monkeypatch.setattr(attention, "FULL_SPLITS", (split,))
    monkeypatch.setattr(gpu.executor.caps, "attention_direct", direct)
    gpu.executor.forget()  # the session device's kept dispatches of these structures were built with the defaults


def test_hardware_adapters_pick_the_tiled_kernel_past_16_head_dims(gpu, monkeypatch):
    """Where an adapter stages tiles (hardware), causal attention with head dims past 16 runs the tiled kernel and
    with 16 or less the one-row one (faster there on the H100: docs/benchmarks.md), each against the reference."""
    monkeypatch.setattr(gpu.executor.caps, "attention_direct", False)
    gpu.executor.forget()
    try:
        for e, tiled in ((32, True), (16, False)):
            q, k, v = data(19, 2, 40, e), data(20, 2, 50, e), data(21, 2, 50, e)
            before = {src for src, _ in gpu.executor.pipelines}
            got = value(tw.nn.scaled_dot_product_attention(*(gpu.tensor(x) for x in (q, k, v)), causal=True))
            close(got, unfused(q, k, v, causal=True))
            (src,) = [src for src, _ in gpu.executor.pipelines if src not in before and "fn tw_offsets" in src]
            assert ("var<workgroup> qs:" in src) == tiled, e  # the tiled kernel's q tile
    finally:
        gpu.executor.forget()


@pytest.mark.parametrize("kernel", ["direct", "tiled"])
def test_past_65535_workgroups(gpu, monkeypatch, kernel):
    """65537 batch elements of one query row: a workgroup each, on a 2-D grid (the kernels that software and
    hardware adapters pick)."""
    use_kernel(gpu, monkeypatch, kernel)
    try:
        q, k, v = data(13, 65537, 1, 4), data(14, 65537, 2, 4), data(15, 65537, 2, 3)
        got = value(tw.nn.scaled_dot_product_attention(*(gpu.tensor(x) for x in (q, k, v))))
        close(got, unfused(q, k, v))
    finally:
        gpu.executor.forget()


def test_tiled_kernel_on_views_masks_broadcasts_and_scalar_rows(gpu, monkeypatch):
    """The register-tiled kernel, which hardware adapters pick, here on the software adapter too: on the
    layouts of the tests below (masks that broadcast, k and v shared by every head, views of one qkv
    product read in place, rows of whole vec4s or not) and over many tiles with rows of 5 values (scalar
    loads, a ragged last tile of keys and of rows)."""
    use_kernel(gpu, monkeypatch, "tiled")
    try:
        masks_and_broadcasts(gpu)
        for causal in (False, True):
            for e in (8, 6):
                views_in_place(gpu, causal, e)
            q, k, v = data(16, 1, 1000, 5), data(17, 1, 1025, 5), data(18, 1, 1025, 5)
            got = value(tw.nn.scaled_dot_product_attention(*(gpu.tensor(x) for x in (q, k, v)), causal=causal))
            close(got, unfused(q, k, v, causal=causal))
    finally:
        gpu.executor.forget()


@pytest.mark.parametrize("kernel", list(KERNELS))
def test_each_kernel_causal_full_and_masked(gpu, monkeypatch, kernel):
    """The staged kernel with one thread a query row and with four (their row states merged), each causal and
    over every key (the library picks four, or one for attention over every key with FULL_GROUPS workgroups,
    where the tiled kernel does not fit), the direct kernel (software adapters: keys and values read from the
    buffers, no barrier) and the register-tiled kernel (hardware adapters), its row maxima by subgroup shuffles
    (where the adapter's subgroups have 16 lanes: lavapipe's 8 take workgroup memory) and through workgroup
    memory, against the unfused expression, masked too."""
    use_kernel(gpu, monkeypatch, kernel)
    try:
        q, k, v = data(4, 2, 37, 8), data(5, 2, 70, 8), data(6, 2, 70, 12)
        ts = [gpu.tensor(x) for x in (q, k, v)]
        for causal in (False, True):
            got = value(tw.nn.scaled_dot_product_attention(*ts, causal=causal))
            close(got, unfused(q, k, v, causal=causal))
        band = np.abs(np.arange(70) - np.arange(37)[:, None]) < 9
        band[3] = False  # a row with every key masked: NaN
        got = value(ts[0].attention_masked(ts[1], ts[2], gpu.tensor(band), causal=True))
        close(got, unfused(q, k, v, band, causal=True))
        # whole tiles of 64 rows and keys inside the ends (the tiled kernel checks no mask there), a NaN and an
        # inf among their keys: the rows that see them NaN
        q, k, v = data(7, 1, 150, 8), data(8, 1, 200, 8), data(9, 1, 200, 12)
        k[0, 100, 3], k[0, 140, 0] = np.nan, np.inf
        ts = [gpu.tensor(x) for x in (q, k, v)]
        for causal in (False, True):
            got = value(tw.nn.scaled_dot_product_attention(*ts, causal=causal))
            close(got, unfused(q, k, v, causal=causal))
        special_values(gpu)
    finally:
        gpu.executor.forget()


def test_exp2_of_scores_within_an_ulp(gpu):
    """tw_exp2_neg (shaders/functions.wgsl: both attention kernels' p = 2^(s - m) and rescale, t <= 0) within exp's
    1.5 ulp (docs/accuracy.md; 0.94 where the compiler fuses its multiply-adds, 1.14 on lavapipe) of 2^t in
    float64 over [-126, 0], exact at integers, flushed to 0 below 2^-126.5 and at -inf, NaN as NaN."""
    from trueno_web.kernels.source import functions

    drv = gpu.executor.driver
    rng = np.random.default_rng(11)
    t = np.concatenate(
        [-rng.uniform(0, 126, 60000), -rng.uniform(0, 1, 20000), -np.arange(127.0), [-126.5, -127, -130, -1e30]]
    ).astype(np.float32)
    t = np.concatenate([t, np.array([-np.inf, np.nan, -0.0], np.float32)])
    source = functions() + (
        "@group(0) @binding(0) var<storage, read> t_in: array<f32>;\n"
        "@group(0) @binding(1) var<storage, read_write> t_out: array<f32>;\n"
        "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {\n"
        "    if (g.x < arrayLength(&t_in)) { t_out[g.x] = tw_exp2_neg(t_in[g.x]); }\n}\n"
    )
    bufs = [drv.create_buffer(t.nbytes) for _ in range(2)]
    try:
        drv.write_buffer(bufs[0], memoryview(t.tobytes()))
        drv.submit(
            [
                (
                    drv.compile(source, "main"),
                    tuple((i, b, 0, t.nbytes) for i, b in enumerate(bufs)),
                    (-(-t.size // 64), 1),
                )
            ]
        )
        got = np.frombuffer(bytes(block_on(drv.read_buffer(bufs[1], t.nbytes))), np.float32)
    finally:
        for b in bufs:
            drv.destroy_buffer(b)
    want = np.exp2(t.astype(np.float64))
    normal = want >= 2.0**-126
    ulps = np.abs(got[normal] - want[normal]) / np.spacing(want[normal].astype(np.float32))
    assert ulps.max() <= 1.5, (ulps.max(), t[normal][ulps.argmax()])
    assert np.array_equal(got[t == np.round(t)][:127], want[t == np.round(t)][:127].astype(np.float32))
    tiny = (want < 2.0**-126) & ~np.isnan(t)  # flushed: 0 past -126.5, under 2^-126 (or 0) up to it
    assert np.all((got[tiny] >= 0) & (got[tiny] < 2.0**-126)) and np.all(got[t < -126.5] == 0)
    assert np.isnan(got[-2]) and got[-1] == 1.0


@pytest.mark.parametrize("e", [64, 128])  # on a GPU: several threads a query row (merged at the end), or one
def test_head_dims_of_models(dev, e):
    q, k, v = data(10, 2, 37, e), data(11, 2, 70, e), data(12, 2, 70, e)
    got = value(tw.nn.scaled_dot_product_attention(*(dev.tensor(x) for x in (q, k, v)), causal=True))
    close(got, unfused(q, k, v, causal=True))


def test_masks_and_broadcast_batches(dev):
    """A (B, 1, 1, S) padding mask, a (L, S) bool mask with causal, k and v shared by every head, scale=."""
    masks_and_broadcasts(dev)


def masks_and_broadcasts(dev):
    q, k, v = data(4, 2, 3, 37, 6), data(5, 2, 1, 41, 6), data(6, 41, 3)
    pad = np.ones((2, 1, 1, 41), np.float32)
    pad[1, ..., 30:] = 0
    t = [dev.tensor(x) for x in (q, k, v)]
    got = value(tw.nn.scaled_dot_product_attention(*t, mask=dev.tensor(pad), scale=0.7))
    close(got, unfused(q, k, v, pad, scale=0.7))
    band = np.abs(np.arange(41) - np.arange(37)[:, None]) < 5
    got = value(t[0].attention_masked(t[1], t[2], dev.tensor(band), causal=True))
    close(got, unfused(q, k, v, band, causal=True))


def test_special_values_and_fully_masked_rows(dev):
    """NaN or inf in q or k, a NaN in v at an attended key, a score of -inf, rows with every key masked:
    NaN where the unfused expression gives NaN, the same values elsewhere."""
    special_values(dev)


def special_values(dev):
    q, k, v = data(7, 6, 4), data(8, 9, 4), data(9, 9, 3)
    q[1, 0], k[4, 2], v[0, 1] = np.nan, np.inf, np.nan  # v[0]: every row attends key 0
    q[3] = [1e30, 0, 0, 0]
    k[6] = [-1e30, 0, 0, 0]  # row 3's score of key 6 is -inf: weight 0
    mask = np.ones((6, 9), bool)
    mask[2] = False
    mask[5, :] = False
    mask[5, 6] = True  # row 5 attends only key 6
    got = value(tw.nn.scaled_dot_product_attention(*(dev.tensor(x) for x in (q, k, v)), mask=dev.tensor(mask)))
    want = unfused(q, k, v, mask)
    assert np.isnan(got[2]).all() and np.isnan(got[1]).all()
    close(got, want, 1e-4)


@pytest.mark.parametrize(
    "shapes,error",
    [
        (((4, 3), (5, 2), (5, 2)), "same E and S"),
        (((4, 3), (5, 3), (6, 2)), "same E and S"),
        (((3,), (5, 3), (5, 2)), "q \\(..., L, E\\)"),
        (((2, 4, 3), (3, 5, 3), (5, 2)), "do not broadcast"),
        (((4, 3), (0, 3), (0, 2)), "at least one key"),
        (((4, 3), (5, 3), (5, 2), (3, 5)), "does not broadcast"),
    ],
)
def test_bad_shapes_raise_at_the_call(dev, shapes, error):
    ts = [dev.tensor(np.zeros(s, np.float32)) for s in shapes]
    with pytest.raises(tw.TruenoValueError, match=error):
        tw.nn.scaled_dot_product_attention(*ts[:3], mask=ts[3] if len(ts) == 4 else None)
    with pytest.raises(tw.TruenoTypeError, match="scale"):
        tw.nn.scaled_dot_product_attention(*[dev.tensor(np.ones((2, 2), np.float32))] * 3, scale="big")
    assert value(dev.tensor(np.ones(2, np.float32)) + 1).tolist() == [2.0, 2.0]  # the device still works


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_numpy_reference_in_blocks_of_rows(monkeypatch, causal):
    """The numpy backend's attention (attention_kind.np_attention) a few query rows at a time: blocks of 3
    rows of 2 batches, a ragged last one, masked and not, causal blocks seeing only their keys."""
    from trueno_web import attention_kind

    monkeypatch.setattr(attention_kind, "BLOCK_ELEMENTS", 3 * 2 * 70)
    q, k, v = data(20, 2, 37, 8), data(21, 2, 70, 8), data(22, 2, 70, 12)
    band = np.abs(np.arange(70) - np.arange(37)[:, None]) < 9
    band[3] = False  # a row with every key masked: NaN
    for mask in (None, band):
        close(attention_kind.np_attention(q, k, v, mask, 8**-0.5, causal), unfused(q, k, v, mask, causal=causal))


def test_gradients_match_finite_differences(dev):
    q, k, v = (data(s, 2, n, 3).astype(np.float64) for s, n in ((10, 5), (11, 7), (12, 7)))
    mask = np.arange(7) % 3 != 2

    def loss(q, k, v):
        y = tw.nn.scaled_dot_product_attention(q, k, v, mask=dev.tensor(mask), causal=True)
        return (y * y).sum()

    grads = tw.grad(loss, argnums=(0, 1, 2))(*(dev.tensor(x.astype(np.float32)) for x in (q, k, v)))
    base = [q, k, v]
    for which, g in enumerate(grads):
        num = np.zeros_like(base[which])
        for idx in np.ndindex(num.shape):
            for sign in (1, -1):
                moved = [x.copy() for x in base]
                moved[which][idx] += sign * 1e-6
                num[idx] += sign * (unfused(*moved, mask, causal=True) ** 2).sum() / 2e-6
        assert np.allclose(value(g), num, rtol=1e-3, atol=1e-4), (which, np.abs(value(g) - num).max())


def test_jit_replays_what_eager_gives(dev):
    f = tw.jit(lambda q, k, v: tw.nn.scaled_dot_product_attention(q, k, v, causal=True) * 2)
    for seed in (13, 14):
        q, k, v = data(seed, 3, 19, 8), data(seed + 1, 3, 23, 8), data(seed + 2, 3, 23, 4)
        ts = [dev.tensor(x) for x in (q, k, v)]
        eager = value(tw.nn.scaled_dot_product_attention(*ts, causal=True) * 2)
        assert np.array_equal(value(block_on(f(*ts))), eager)
        close(eager, 2 * unfused(q, k, v, causal=True))


def test_one_kernel_and_no_scores_in_memory(dev):
    """The graph holds no value of L x S elements (or more), and it runs as one step (its only kernel)."""
    b, n_q, n_k = 2, 40, 50
    ts = [dev.tensor(data(s, b, n, 8)) for s, n in ((15, n_q), (16, n_k), (17, n_k))]
    out = tw.nn.scaled_dot_product_attention(*ts, causal=True)
    stack, sizes = [out.expr], []
    while stack:
        e = stack.pop()
        sizes.append(math.prod(e.shape))
        stack += e.inputs
    assert max(sizes) < n_q * n_k
    block_on(tw.realize(*ts))
    before = dev.stats.dispatches
    block_on(tw.realize(out))
    assert dev.stats.dispatches - before == 1


@pytest.mark.parametrize("e", [8, 6], ids=["vec4", "scalar"])  # offsets and strides of whole vec4s, or not
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_views_of_one_qkv_product_are_read_in_place(dev, causal, e):
    """q, k and v as the transformer block makes them: views (3, batch, heads, L, E) of one (batch, L, 3 heads
    E) tensor, each at its offset, rows 3 heads E apart, heads E apart; a key slice with a step along S
    (rows 2 rows apart) and k as a broadcast batch too. The kernel reads them where they are: one dispatch
    on top of what computes qkv, no copy; the result is the unfused expression's on row-major copies."""
    views_in_place(dev, causal, e)


def views_in_place(dev, causal, e):
    b, heads, n = 2, 3, 37
    qkv_host = data(31, b, n, 3 * heads * e)
    qkv = dev.tensor(qkv_host)
    block_on(tw.realize(qkv))
    views = qkv.reshape(b, n, 3, heads, e).permute(2, 0, 3, 1, 4)
    host = qkv_host.reshape(b, n, 3, heads, e).transpose(2, 0, 3, 1, 4)
    cases = [
        ((views[0], views[1], views[2]), (host[0], host[1], host[2])),
        ((views[0], views[1][:, :, ::2], views[2][:, :, ::2]), (host[0], host[1][:, :, ::2], host[2][:, :, ::2])),
        ((views[0], views[1][:1], views[2]), (host[0], host[1][:1], host[2])),
    ]
    for ts, arrays in cases:
        out = tw.nn.scaled_dot_product_attention(*ts, causal=causal)
        before = dev.stats.dispatches
        got = value(out)
        assert dev.stats.dispatches - before == 1  # the attention kernel alone: no copy of q, k or v
        close(got, unfused(*arrays, causal=causal))
    mask = data(32, n, n) > -1  # the masked kernel reads the views too
    got = value(tw.nn.scaled_dot_product_attention(views[0], views[1], views[2], mask=dev.tensor(mask)))
    close(got, unfused(host[0], host[1], host[2], mask=mask))


def test_views_it_cannot_read_in_place_are_copied_or_refused(dev):
    """A view whose rows are not rows of memory (q transposed: a row's elements apart) or that is padded is
    copied by the tensor layer first; the batch refuses such a view with a message that says what to do."""
    q, k, v = data(33, 2, 8, 5), data(34, 2, 5, 8), data(35, 2, 9, 5)
    ts = [dev.tensor(x) for x in (q, k, v)]
    padded = tw.nn.scaled_dot_product_attention(ts[0].mT, ts[1], ts[2][:, :4].pad(((0, 0), (0, 1), (0, 0))))
    close(value(padded), unfused(np.swapaxes(q, -1, -2), k, np.pad(v[:, :4], ((0, 0), (0, 1), (0, 0)))))
    bt = dev.batch()
    base = bt.upload(q)
    with pytest.raises(tw.BatchError, match="copy"):
        bt.attention(bt.view(base, (2, 5, 8), (40, 1, 5)), bt.upload(k), bt.upload(v[:, :5]))
    assert value(tw.nn.scaled_dot_product_attention(ts[1], ts[1], ts[1])).shape == (2, 5, 8)  # the device still works
