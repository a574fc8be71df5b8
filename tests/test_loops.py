"""Bounded kernel loops: no kernel loop runs past the adapter's loop budget (Mesa's llvmpipe stops a
shader's loops after 65535 iterations in all, with no error). A long K of matmul and a long convolution
kernel are split over dispatches that add their partial sums; a row reduction too long for the budget
raises LimitError. Small integers, so every result is exact (float64 reference)."""

from __future__ import annotations

import array
import itertools
import math

import pytest
from _cases import as_arg, flat
from _helpers import tensor
from _pyref import Ref

import trueno_web as tw
from trueno_web import kernels
from trueno_web.graph import Node, OpStep
from trueno_web.kinds import KINDS, Kind
from trueno_web.ops import get
from trueno_web.runtime import block_on

LLVMPIPE = 65535  # LP_MAX_TGSI_LOOP_ITERATIONS


def ints(shape, mod: int, shift: int) -> Ref:
    """Small integers varying along every axis (a wrong or repeated slice of K changes the sum)."""
    return Ref([(sum(i) * 7 + shift) % mod - mod // 2 for i in itertools.product(*map(range, shape))], shape)


def host(r: Ref):
    """Host data of r's shape (2-D: a memoryview of that shape; NumPy is not needed)."""
    return as_arg(r.f32(), r.shape)


def matmul_dispatches(sa, sb, caps) -> list:
    op = get("matmul")
    shape, o = KINDS[Kind.MATMUL].shape(op, [sa, sb], {})
    nodes = [Node(0, None, (), (), sa), Node(1, None, (), (), sb), Node(2, op, (0, 1), (), shape, o)]
    return kernels.dispatches(OpStep(2), nodes, caps)


@pytest.mark.parametrize("dims, batch_a, batch_b", [(0, (), ()), (1, (2,), (2,)), (2, (2, 1), (3,))])
def test_matmul_dispatches_split_k_within_the_budget(dims, batch_a, batch_b):
    """K in slices of BK: one dispatch up to (budget - batch dimensions) slices, then one more per as many."""
    caps = kernels.Caps(loop_trips=20, matmul="64x64x8", matmul_splits=1)  # no split over workgroups
    per = 20 - dims
    for slices, count in [(1, 1), (per, 1), (per + 1, 2), (2 * per, 2), (2 * per + 1, 3)]:
        k = slices * 8 - 3  # the last slice partly filled
        ds = matmul_dispatches(batch_a + (2, k), batch_b + (k, 3), caps)
        assert len(ds) == count, (dims, k)
        assert [int.from_bytes(d.meta[28:32], "little") for d in ds] == list(range(0, count * per, per))
        assert all(f"const SLICES: u32 = {per}u;" in d.source for d in ds)


def test_matmul_split_k_on_the_device(gpu, monkeypatch):
    """With a budget of 12 slices of 8: K just below, at and past each multiple of it, 2-D and batched,
    vec4 and scalar loads (K % 4), every product exact."""
    caps = gpu.executor.caps
    monkeypatch.setattr(caps, "loop_trips", 12)
    monkeypatch.setattr(caps, "matmul", "64x64x8")
    for k in (95, 96, 97, 188, 196, 299):
        for sa, sb in [((3, k), (k, 5)), ((2, 3, k), (2, k, 8)), ((2, 1, 5, k), (3, k, 4))]:
            a, b = ints(sa, 7, 1), ints(sb, 5, 2)
            got = block_on((tensor(gpu, a) @ tensor(gpu, b)).numpy())
            assert flat(got) == (a @ b).flat, f"{sa} @ {sb}"


@pytest.mark.slow
def test_matmul_past_llvmpipes_loop_limit(dev):
    """The boundary case: ones (2, K) @ (K, 2) with K = 2^19 + 8 (65536 slices of 8 in one loop on lavapipe
    gave 524280), on every backend (~15 s on lavapipe)."""
    k = 8 * LLVMPIPE + 16
    ones = array.array("f", [1.0]) * (2 * k)
    got = block_on(dev.matmul(as_arg(ones, (2, k)), as_arg(ones, (k, 2))))
    assert flat(got) == [float(k)] * 4


def test_convolve2d_just_below_at_and_past_the_budget(dev):
    """1 x n image and kernel of small integers: n taps in one output; 65535 taps is the most one loop
    may run on lavapipe (it stopped there: 1 x 70000 of ones gave 65535)."""
    for n in (LLVMPIPE - 1, LLVMPIPE, LLVMPIPE + 1, 70000, 2 * LLVMPIPE + 1):
        img, ker = ints((1, n), 5, 0), ints((1, n), 3, 1)
        got = block_on(dev.convolve2d(host(img), host(ker)))
        assert flat(got) == [math.fsum(u * v for u, v in zip(img.flat, ker.flat))], n


def test_convolve2d_split_taps_on_the_device(gpu, monkeypatch):
    """With a budget of 7 taps: kernels whose taps split inside a row, at a row's end and across rows."""
    monkeypatch.setattr(gpu.executor.caps, "loop_trips", 7)
    for (h, w), (kh, kw) in [
        ((9, 11), (3, 4)),
        ((6, 20), (2, 7)),
        ((5, 30), (1, 15)),
        ((8, 8), (8, 1)),
        ((4, 5), (1, 1)),
        ((10, 12), (5, 6)),
    ]:
        img, ker = ints((h, w), 9, 2), ints((kh, kw), 5, 1)
        got = block_on(gpu.convolve2d(host(img), host(ker)))
        want = [
            math.fsum(img.flat[(r + p) * w + c + q] * ker.flat[p * kw + q] for p in range(kh) for q in range(kw))
            for r in range(h - kh + 1)
            for c in range(w - kw + 1)
        ]
        assert flat(got) == want, f"{(h, w)} * {(kh, kw)}"


def test_a_row_too_long_for_the_budget_raises(gpu, monkeypatch):
    """A row reduction runs ceil(cols / 256) trips per pass over the row plus 4 per fold (a tree of fan-in 4 over
    256 threads): with a budget of 40, one sum fits rows of 36 * 256 elements; one more element raises
    LimitError naming the budget; two passes (sum, then the row minus it) halve it."""
    monkeypatch.setattr(gpu.executor.caps, "loop_trips", 40)
    x = ints((2, 36 * 256), 3, 0)
    assert flat(block_on(tensor(gpu, x).sum(axis=-1).numpy())) == x.sum(axis=-1).flat
    for t in (
        tensor(gpu, ints((2, 36 * 256 + 1), 3, 0)).sum(axis=-1),
        (tensor(gpu, x) - tensor(gpu, x).sum(axis=-1, keepdims=True)).sum(axis=-1),
    ):
        with pytest.raises(tw.LimitError, match=r"loop budget of 40 .*llvmpipe.*reshape each row"):
            block_on(t.numpy())


def test_one_long_row_reduces_as_a_whole(gpu, monkeypatch):
    """A single row longer than tensor.reduce.ONE_ROW_MAX is a full reduction (partials over many workgroups, not
    one workgroup's loop): past the row kernel's budget it still sums, and softmax (max, sum) keeps working."""
    monkeypatch.setattr(gpu.executor.caps, "loop_trips", 40)
    x = ints((1, 70001), 3, 0)
    assert flat(block_on(tensor(gpu, x).sum(axis=-1).numpy())) == x.sum(axis=-1).flat
    assert flat(block_on(tensor(gpu, x).max(axis=1, keepdims=True).numpy())) == [1.0]
    got = flat(block_on(tensor(gpu, x).softmax().numpy()))
    e = [math.exp(v - 1.0) for v in x.flat]
    total = math.fsum(e)
    assert all(abs(g - w / total) <= 1e-5 * w / total for g, w in zip(got, e))


def test_a_row_too_long_for_one_pass_raises_when_recorded(gpu, monkeypatch):
    """A reduction whose rows are too long for its own pass raises at record, before execute, with the
    message execute gives; the longest row that fits records and runs."""
    monkeypatch.setattr(gpu.executor.caps, "loop_trips", 40)
    b = gpu.batch()
    fits = ints((2, 36 * 256), 3, 0)
    out = b.record(tw.ops.get("sum"), (host(fits),), options={"rows": 2})
    with pytest.raises(tw.LimitError, match=r"rows of 9217 elements .* loop budget of 40 .*llvmpipe.*up to 9216"):
        b.record(tw.ops.get("sum"), (host(ints((2, 36 * 256 + 1), 3, 0)),), options={"rows": 2})
    block_on(b.execute())
    assert flat(block_on(b.read(out))) == fits.sum(axis=-1).flat
