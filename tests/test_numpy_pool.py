"""The NumPy executor's array pool (backends/array_pool.py): pooled uploads and chain stores give the right
results call after call, and memory something still refers to (a handed-over result, a view, a DeviceArray,
an unreleased batch) is never lent again. Results are checked against float64 NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from _cases import run

import trueno_web as tw
from trueno_web.backends import numpy_cpu
from trueno_web.backends.array_pool import ArrayPool

SIZES = (0, 1, 4097)


@pytest.fixture
def small_chunks(monkeypatch):
    """Every size is pooled, and 4097 elements run as a chunked chain: 5 chunks, the last of one element."""
    monkeypatch.setattr(numpy_cpu, "POOL_FROM", 0)
    monkeypatch.setattr(numpy_cpu, "CHUNK", 1024)


def data(n: int, seed: int):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)


def chain_ref(x, b):
    """relu -> scale(2) -> add in float64, rounded once to float32 (the float32 chain rounds once too)."""
    return (np.maximum(x.astype(np.float64), 0) * 2 + b).astype(np.float32)


def queue_chain(batch, x, b):
    u = batch.upload(x)
    return u, batch.add(batch.scale(batch.relu(u), 2.0), batch.upload(b))


def address(a) -> int:
    return a.__array_interface__["data"][0]


@pytest.mark.parametrize("n", SIZES)
def test_repeated_chains_each_keep_their_result(dev, small_chunks, n):
    """Results (and uploads) read from batches released long ago are not overwritten by later calls."""
    held = []
    for seed in range(4):
        x, b = data(n, seed)
        with dev.batch() as batch:
            u, out = queue_chain(batch, x, b)
            run(batch.execute())
            held.append((x, b, run(batch.read(out)), run(batch.read(u))))
    for x, b, got, up in held:
        np.testing.assert_array_equal(np.asarray(got).reshape(-1), chain_ref(x, b))
        np.testing.assert_array_equal(np.asarray(up).reshape(-1), x)


@pytest.mark.parametrize("n", SIZES)
def test_a_handed_over_chain_result_is_never_lent_again(cpu, small_chunks, n):
    """A private batch hands its chain's pooled store over (read with take): it stays the caller's."""
    held = []
    for seed in range(4):
        x, b = data(n, seed)
        batch = tw.GpuCommandBatch(cpu, private=True)
        _, out = queue_chain(batch, x, b)
        run(batch.execute())
        got = run(batch.read(out))
        batch.release()
        held.append((x, b, got, got[::2]))  # and a view of it, the caller's too
    for x, b, got, every_other in held:
        np.testing.assert_array_equal(got, chain_ref(x, b))
        np.testing.assert_array_equal(every_other, chain_ref(x, b)[::2])


def test_device_arrays_and_unreleased_batches_keep_their_memory(cpu, small_chunks):
    x, b = data(4097, 0)
    resident = run(cpu.upload(x))
    live = cpu.batch()
    _, live_out = queue_chain(live, x, b)
    run(live.execute())
    for seed in range(1, 4):
        y, c = data(4097, seed)
        with cpu.batch() as batch:
            _, out = queue_chain(batch, y, c)
            run(batch.execute())
            np.testing.assert_array_equal(run(batch.read(out)), chain_ref(y, c))
        np.testing.assert_array_equal(run(cpu.relu(resident)), np.maximum(x, 0))
    np.testing.assert_array_equal(run(resident.read()), x)
    np.testing.assert_array_equal(run(live.read(live_out)), chain_ref(x, b))
    live.release()


def test_pool_lends_memory_again_only_once_nothing_refers_to_it():
    pool = ArrayPool(np)
    a = pool.take((4, 5))
    a[...] = 1.0
    first = address(a)
    tail = a[1:].reshape(-1)[::2]  # a view of a view: its base is the pooled block, not `a`
    del a
    b = pool.take((4, 5))
    assert address(b) != first, "a view of the block is alive"
    b[...] = 2.0
    assert (tail == 1.0).all()
    second = address(b)
    held = memoryview(b)
    del b, tail
    c, d = pool.take((20,)), pool.take((2, 10))
    assert address(c) == first, "the view is gone: its block is free"
    assert address(d) not in (first, second), "a memoryview still holds the other"
    del held
    e = pool.take((20,))
    assert address(e) == second
    assert pool.give_away(e) and not pool.give_away(e) and not pool.give_away(np.empty(20, np.float32))


def test_pool_keeps_what_a_program_needed_at_once(monkeypatch):
    """Past KEEP_BYTES the pool still keeps the blocks it lent at once at its peak (a (8192, 4096) step's input
    and centred values: 128 MiB each), so that the next call finds them instead of fresh pages."""
    from trueno_web.backends import array_pool

    monkeypatch.setattr(array_pool, "KEEP_BYTES", 100 * 4)
    pool = ArrayPool(np)
    a, b = pool.take((80,)), pool.take((80,))  # 640 bytes lent at once
    del a, b
    a, b = pool.take((80,)), pool.take((80,))
    assert pool.give_away(a) and pool.give_away(b), "a block of the program's own left the pool"


def test_chunked_chain_fills_uploads_it_reads_through_views(cpu, small_chunks):
    """An upload read plain and through a reversed view by one chunked chain, and an upload nothing reads."""
    x, b = data(4097, 1)
    with cpu.batch() as batch:
        u, spare = batch.upload(x), batch.upload(b)
        back = batch.view(u, (4097,), (-1,), 4096)
        out = batch.add(batch.relu(u), batch.scale(back, 2.0))
        run(batch.execute())
        want = (np.maximum(x, 0).astype(np.float64) + 2.0 * x[::-1]).astype(np.float32)
        np.testing.assert_array_equal(run(batch.read(out)), want)
        np.testing.assert_array_equal(run(batch.read(spare)), b)


def test_a_failed_execute_leaves_its_uploads_whole(cpu, small_chunks, monkeypatch):
    """An op that raises in the middle of a chunked chain: the uploads are still copied in whole, and the
    batch runs right once the op works again."""
    x, b = data(4097, 2)
    batch = cpu.batch()
    u, out = queue_chain(batch, x, b)

    def boom(*args):
        raise tw.TruenoValueError("failing on purpose")

    monkeypatch.setattr(cpu.executor, "_compute", boom)
    with pytest.raises(tw.TruenoValueError, match="on purpose"):
        run(batch.execute())
    monkeypatch.delattr(cpu.executor, "_compute")
    run(batch.execute())  # the uploads are not copied again
    np.testing.assert_array_equal(run(batch.read(u)), x)
    np.testing.assert_array_equal(run(batch.read(out)), chain_ref(x, b))
    batch.release()


@pytest.mark.parametrize("n", SIZES)
def test_converted_uploads_are_what_the_data_was(dev, n):
    """float64 arrays and lists are converted to float32 copies of our own (the NumPy backend uses them in
    place): a batch's uploads still read as the data was, whatever the caller does to it afterwards."""
    x64 = np.random.default_rng(n).standard_normal(n)
    listed = x64[::-1].tolist()
    with dev.batch() as batch:
        u, v = batch.upload(x64), batch.upload(listed)
        out = batch.add(batch.relu(u), v)
        run(batch.execute())
        x64[:] = 100.0
        listed[:] = [100.0] * n
        x32 = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        want = (np.maximum(x32.astype(np.float64), 0) + x32[::-1]).astype(np.float32)
        np.testing.assert_array_equal(np.asarray(run(batch.read(out))).reshape(-1), want)
        np.testing.assert_array_equal(np.asarray(run(batch.read(u))).reshape(-1), x32)
        np.testing.assert_array_equal(np.asarray(run(batch.read(v))).reshape(-1), x32[::-1])


@pytest.mark.parametrize("n", (1, 4097, 70000))
def test_unreachable_uploads_are_read_in_place(n):
    """An upload no BufferId reaches at execute (`b.relu(b.upload(x))`) is read from the caller's memory, not
    copied; one whose BufferId (or a view's) lives on is a copy: it reads as the data was at execute after
    the caller changes it. Results right either way."""
    dev = run(tw.GpuDevice.create("numpy"))
    x, b = data(n, seed=5)
    with dev.batch() as bt:
        kept, out = queue_chain(bt, x, b)  # x's BufferId kept; b's dropped
        view = bt.view(kept, (n,), (1,))
        del kept
        run(bt.execute())
        assert np.array_equal(run(bt.read(out)), chain_ref(x, b))
        up_x, up_b = (node.buffer for node in bt._nodes if node.op is None and node.view is None)
        assert not np.shares_memory(up_x, x) and np.shares_memory(up_b, b)
        before = x.copy()
        x[:] = 7.0
        assert np.array_equal(run(bt.read(view)), before)


@pytest.mark.parametrize("n", (1, 4097))
def test_where_in_a_chain_writes_over_the_inputs_it_reads_last(cpu, small_chunks, n):
    """A fused where writes into the array of an input it reads for the last time: its a, its b, both, or its
    condition (a where of bools); each result is NumPy's np.where, whole and chunked."""
    x, y = data(n, 5)
    x[: n // 2] = np.nan  # NaN and -0.0 come through as they are
    y[::3] = -0.0
    with cpu.batch() as batch:
        u, v = batch.upload(x), batch.upload(y)
        cond = batch.gt(u, v)
        outs = [
            batch.where(cond, batch.scale(u, 2.0), v),
            batch.where(cond, v, batch.neg(u)),
            batch.where(cond, batch.abs(v), batch.abs(v)),
            batch.where(batch.lt(u, v), batch.ge(u, v), batch.ne(u, v)),
        ]
        run(batch.execute())
        got = [np.asarray(run(batch.read(o))).reshape(-1) for o in outs]
    c = x > y
    want = [np.where(c, 2 * x, y), np.where(c, y, -x), np.abs(y), np.where(x < y, x >= y, x != y)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(
            g.view(np.uint32) if w.dtype == np.float32 else g != 0, w.view(np.uint32) if w.dtype == np.float32 else w
        )
