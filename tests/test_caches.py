"""What the one-shot path caches and holds never shows: pooled buffers, cached bind groups, a plan's kept
parameters and the webgpu driver's held submit (a one-shot call's kernels and its read back in one queue
submit; a one-shot call is a private batch that names its read: `execute(read=out)`). Results stay right
across repeated calls with other data, sizes and scalars; a freed buffer is never bound again; held work
runs before a later write and without any read; a failed held submit is reported and the device goes on."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from _cases import f32, flat, run, uniform

import trueno_web as tw
from trueno_web.batch import GpuCommandBatch
from trueno_web.runtime import block_on

SIZES = (0, 1, 4097, 1, 0, 4097, 3)


def chain_ref(x, other, s: float) -> list[float]:
    """relu -> scale(s) -> add, each step rounded to float32 (exact in float64 before the rounding)."""
    s32 = f32([s])[0]
    scaled = f32(max(v, 0.0) * s32 for v in x)
    return list(f32(a + b for a, b in zip(scaled, other)))


def test_repeated_calls_with_other_data_sizes_and_scalars(dev):
    for k, n in enumerate(SIZES):
        x, other = uniform(n, seed=k), uniform(n, seed=k + 50)
        assert flat(run(dev.relu(x))) == [max(v, 0.0) for v in x], n
        s = (2.0, -0.5, 3.0)[k % 3]
        with dev.batch() as b:
            out = b.add(b.scale(b.relu(b.upload(x)), s), b.upload(other))
            run(b.execute())
            got, want = flat(run(b.read(out))), chain_ref(x, other, s)
            # the product's rounding may be skipped where a GPU contracts scale -> add into a multiply-add: the
            # sum's input moves by half an ulp of the product, its rounding by one ulp of the result
            scale = [abs(w) + abs(max(v, 0.0) * s) for v, w in zip(x, want)]
            assert len(got) == n and all(abs(g - w) <= 2**-23 * m for g, w, m in zip(got, want, scale)), (n, s)


def test_held_work_runs_before_a_later_write(dev):
    """A one-shot batch reads a resident array; the array is released and its pooled buffer handed to a new
    upload before the batch's kernels were submitted (held for the read): they still see the old data."""
    old, new = uniform(300, seed=1), uniform(300, seed=2)

    async def scenario():
        a = await dev.upload(old)
        b = GpuCommandBatch(dev, private=True)
        out = b.relu(a)
        await b.execute(read=out)  # held on webgpu: nothing in here yields to the event loop
        a.release()
        fresh = await dev.upload(new)  # takes the pooled buffer back on webgpu
        got = await b.read(out)
        b.release()
        return got, await fresh.read()

    got, fresh = run(scenario())
    assert flat(got) == [max(v, 0.0) for v in old]
    assert flat(fresh) == list(f32(new))


def test_freed_buffers_are_never_bound_again(fresh_gpu):
    """Every pooled buffer destroyed between two runs of the same batch structure: the second run binds
    new buffers (no cached bind group names a destroyed one) and is right."""
    ex, driver = fresh_gpu.executor, fresh_gpu.executor.driver
    destroyed = set()
    real_destroy = driver.destroy_buffer

    def destroy(raw):
        destroyed.add(id(raw))
        real_destroy(raw)

    driver.destroy_buffer = destroy
    for k in range(3):
        x, other = uniform(4097, seed=k), uniform(4097, seed=k + 9)
        with fresh_gpu.batch() as b:
            out = b.add(b.scale(b.relu(b.upload(x)), 2.0), b.upload(other))
            run(b.execute())
            assert flat(run(b.read(out))) == chain_ref(x, other, 2.0), k
        ex.pool.clear()
        assert destroyed and not any(id(raw) in destroyed for key in driver._groups for _, raw, _, _ in key[1])
    assert ex.pool.live == 0


def test_held_work_is_submitted_without_a_read(fresh_gpu):
    driver = fresh_gpu.executor.driver
    b = GpuCommandBatch(fresh_gpu, private=True)
    out = b.relu(b.upload([-1.0, 2.0]))

    async def execute():
        await b.execute(read=out)
        return len(driver._held)

    assert run(execute()) == 1, "held for a read"
    assert driver._held == [], "sent when the event loop turned"
    assert flat(run(b.read(out))) == [0.0, 2.0]
    b.release()


def test_a_failed_held_submit_is_reported_and_the_device_goes_on(fresh_gpu, monkeypatch):
    driver = fresh_gpu.executor.driver
    real = driver.device

    class Queue:
        def __getattr__(self, name):
            return getattr(real.queue, name)

        def submit(self, buffers):
            raise RuntimeError("simulated: the queue refused the submit")

    class Device:
        queue = Queue()

        def __getattr__(self, name):
            return getattr(real, name)

    b = GpuCommandBatch(fresh_gpu, private=True)
    out = b.relu(b.upload([-1.0, 2.0]))
    monkeypatch.setattr(driver, "device", Device())
    run(b.execute(read=out))  # recorded and held; the submit from the event loop fails
    monkeypatch.undo()
    with pytest.raises(tw.GpuError, match="running kernels failed.*simulated"):
        run(b.read(out))
    b.release()
    assert flat(run(fresh_gpu.relu([-3.0, 4.0]))) == [0.0, 4.0]
    assert fresh_gpu.executor.pool.live == 0


async def _one_shots(dev, count: int) -> bool:
    """`count` pairs of one-shot calls in one coroutine (relu, and scale with another scalar each time, sizes
    from SIZES): True where every result equals its reference."""
    right = True
    for k in range(count):
        x, s = uniform(SIZES[k % len(SIZES)], seed=k), (2.0, -0.5, 3.0)[k % 3]
        right &= flat(await dev.relu(x)) == [max(v, 0.0) for v in x]
        right &= flat(await dev.scale(x, s)) == list(f32(v * f32([s])[0] for v in x))
    return right


def test_a_read_done_within_the_blocking_wait_does_not_wake_the_event_loop(fresh_gpu):
    """The driver keeps the event loop out of a read's map (wgpu-py would wake it from its poller thread
    through call_soon_threadsafe once the map is done): reads that settle within the blocking wait do not
    wake it (but where a map settled before the driver could unhook it: rare, never most of the time)."""
    import asyncio

    fresh_gpu.executor.driver.retune(block_s=5.0)  # every map here settles within it
    wakes = []

    async def counted():
        loop = asyncio.get_running_loop()
        real = loop.call_soon_threadsafe
        loop.call_soon_threadsafe = lambda *a, **k: wakes.append(a) or real(*a, **k)
        try:
            return await _one_shots(fresh_gpu, 40)
        finally:
            del loop.call_soon_threadsafe

    assert run(counted())
    assert len(wakes) < 40, f"{len(wakes)} event-loop wake-ups from 80 reads"
    assert fresh_gpu.executor.pool.live == 0


def test_reads_that_outlast_the_blocking_wait_are_awaited(fresh_gpu):
    """No blocking wait: every read's map is awaited through the event loop (the driver hooks it back in),
    one call at a time and several at once; results stay right and the device goes on."""
    import asyncio

    fresh_gpu.executor.driver.retune(block_s=0.0)

    async def together():
        xs = [uniform(n, seed=n) for n in (4097, 1, 0, 300)]
        got = await asyncio.gather(*(fresh_gpu.relu(x) for x in xs))
        return all(flat(g) == [max(v, 0.0) for v in x] for g, x in zip(got, xs))

    assert run(_one_shots(fresh_gpu, 12))
    assert run(together())
    assert fresh_gpu.executor.pool.live == 0


def test_a_read_other_than_the_staged_one_is_right(fresh_gpu):
    """A one-shot call's read copy is recorded with its kernels (the node it names: stage_read). A private batch
    read elsewhere (a kept intermediate, then the last node), a read past one staging chunk, and one-shot
    calls after them are all right, and no staging buffer is lost or made per call."""
    driver = fresh_gpu.executor.driver
    x = uniform(4097, seed=3)
    relu = [max(v, 0.0) for v in x]

    def staging() -> set:  # the staging buffers themselves (kept alive here: a new one cannot take an old id)
        return {buf for bufs in driver.staging.values() for buf in bufs} | (
            {driver._staged[2]} if driver._staged else set()
        )

    counts = []
    for _ in range(4):  # the first round makes the staging buffers of both sizes
        b = GpuCommandBatch(fresh_gpu, private=True)
        y = b.keep(b.relu(b.upload(x)))
        z = b.scale(y, 2.0)
        run(b.execute(read=z))
        assert flat(run(b.read(y))) == relu, "the staged copy is z's"
        assert flat(run(b.read(z))) == [2.0 * v for v in relu]
        b.release()
        assert flat(run(fresh_gpu.relu(x[:5]))) == relu[:5]
        assert flat(run(fresh_gpu.relu(x))) == relu
        counts.append(staging())
    assert all(c == counts[0] for c in counts), "staging buffers made after the first round"
    driver.retune(chunk_bytes=4096)  # a read of several chunks: not staged
    assert flat(run(fresh_gpu.relu(x))) == relu
    assert driver._staged is None and fresh_gpu.executor.pool.live == 0


def test_a_program_larger_than_the_idle_pool_creates_no_buffers_when_repeated(fresh_gpu, monkeypatch):
    """The pool keeps up to the peak it handed out at once (when that passes POOL_BYTES): a deep loop split
    into several kernels, whose intermediates together pass the limit, runs again without new buffers."""
    from trueno_web.backends import gpu

    monkeypatch.setattr(gpu, "POOL_BYTES", 1 << 16)
    dev = fresh_gpu
    dev.executor.caps.fuse_budget = 8  # a split every few ops: many intermediates of 64 KiB
    x = dev.tensor(np.linspace(-1, 1, 1 << 14, dtype=np.float32))
    block_on(tw.realize(x))

    def program():
        y = x
        for i in range(40):
            y = (y * 0.5 + x).tanh() + float(i)
        return y

    want = block_on(program().numpy())
    made, create = [], dev.executor.driver.create_buffer
    dev.executor.driver.create_buffer = lambda n: made.append(n) or create(n)
    try:
        for _ in range(3):
            np.testing.assert_array_equal(block_on(program().numpy()), want)
    finally:
        dev.executor.driver.create_buffer = create
    assert dev.stats.dispatches > 10 and made == []


def test_a_plans_pipelines_compile_together_and_count_once(fresh_gpu, monkeypatch):
    """A plan's missing pipelines go to the driver in one compile_many (each source once, on worker threads on
    the desktop); two calls gathered that need the same new kernel compile it once; the counter counts each
    pipeline the cache holds, once; a repeated call compiles nothing."""
    ex = fresh_gpu.executor
    real, asked = ex.driver.compile_many, []

    async def spy(jobs):
        asked.append(list(jobs))
        return await real(jobs)

    monkeypatch.setattr(ex.driver, "compile_many", spy)
    x = np.linspace(-3.0, 2.0, 1031, dtype=np.float32)

    def program():
        t = fresh_gpu.tensor(x)
        return (t.relu() * 2.0 - t).sum(), (t * 0.5).exp().max()

    total, peak = program()
    run(tw.realize(total, peak))
    assert len(asked) == 1 and len(asked[0]) == len(set(asked[0])) > 1
    assert fresh_gpu.stats.pipelines_compiled == len(ex.pipelines) == len(asked[0])
    assert np.isclose(run(total.item()), np.sum(np.maximum(x, 0) * 2 - x, dtype=np.float64), rtol=1e-5)
    assert np.isclose(run(peak.item()), np.exp(np.float32(1.0)), rtol=1e-6)
    run(tw.realize(*program()))
    assert len(asked) == 1, "a repeated call compiles nothing"

    async def both():
        y = fresh_gpu.tensor(x[:5])
        return await asyncio.gather((y.abs() + 1.0).numpy(), (y.abs() + 1.0).numpy())

    first, second = run(both())
    assert np.array_equal(first, np.abs(x[:5]) + 1) and np.array_equal(second, first)
    assert len(asked) == 2 and fresh_gpu.stats.pipelines_compiled == len(ex.pipelines), asked[1:]


class PoolDriver:
    """What BufferPool asks of a driver, counted."""

    def __init__(self, max_buffer_size=1 << 40):
        self.limits = {"max_buffer_size": max_buffer_size}
        self.created, self.destroyed = 0, []

    def create_buffer(self, nbytes):
        self.created += 1
        return [nbytes, self.created]  # unhashable, as the browser's JS buffers are

    def destroy_buffer(self, raw):
        self.destroyed.append(raw)


def test_pool_capacities_are_powers_of_two_within_the_largest_buffer_and_remembered_boundedly():
    """A buffer's capacity: a power of two of 256 bytes at least, or the adapter's largest buffer (rounded down
    to 16) where that is smaller, but never below the size rounded up to 16; each size's capacity is
    remembered, up to CAPACITIES_KEPT sizes, then the memory starts over."""
    from trueno_web.backends.gpu import CAPACITIES_KEPT, BufferPool

    pool = BufferPool(PoolDriver(max_buffer_size=10_010))
    for nbytes, want in [(0, 256), (1, 256), (256, 256), (257, 512), (4097, 8192), (9_990, 10_000), (10_010, 10_016)]:
        buf = pool.take(nbytes)
        assert (buf.capacity, buf.nbytes, pool.capacities[nbytes]) == (want, nbytes, want), nbytes
        pool.give(buf)
    for nbytes in range(1, CAPACITIES_KEPT + 2):
        pool.give(pool.take(nbytes))
    assert len(pool.capacities) <= CAPACITIES_KEPT
    assert all(capacity == pool.capacity(nbytes) for nbytes, capacity in pool.capacities.items())


def test_a_full_pool_destroys_its_longest_idle_buffers_first():
    """Past its budget, the pool makes room for the buffer given back by destroying the buffers idle longest
    (of any capacity), so a loop's output of a new size is reused rather than created every call."""
    from trueno_web.backends.gpu import POOL_BYTES, BufferPool

    driver = PoolDriver()
    pool = BufferPool(driver)
    small = [pool.take(POOL_BYTES // 8) for _ in range(8)]  # the budget's worth, idle once given back
    for buf in small:
        pool.give(buf)
    assert driver.destroyed == [] and pool.idle_bytes == POOL_BYTES
    big = pool.take(POOL_BYTES // 2)
    pool.give(big)  # room made: the four idle longest go, oldest first
    assert driver.destroyed == [b.raw for b in small[:4]]
    for _ in range(3):  # the loop that follows takes and gives the new size: no buffer created or destroyed
        again = pool.take(POOL_BYTES // 2)
        assert again.raw is big.raw
        pool.give(again)
    assert driver.created == 9 and len(driver.destroyed) == 4
    assert pool.take(POOL_BYTES // 8).raw is small[-1].raw  # the rest still reused, the newest first
