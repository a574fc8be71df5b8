"""GpuExecutor: plan steps -> WGSL pipelines, pooled buffers and one submit, over any WebGPU driver.

The driver (wgpu_native.py on the desktop, browser.py under Pyodide) only moves bytes, compiles WGSL
and records dispatches; everything else (kernels, the pipeline cache, buffer reuse, counters, limits)
lives here once.
"""

from __future__ import annotations

import array
import asyncio
from dataclasses import dataclass, field

from .. import kernels
from ..errors import GpuError, LimitError
from ..graph import Key, Node, Plan, storage
from ..host import HostData
from ..kernels.source import Dispatch
from ..stats import Stats, tally
from .base import WORD_DTYPES, upload_pending
from .replay import Schedule, bind

META_ALIGN = 256  # >= every adapter's minStorageBufferOffsetAlignment
POOL_BYTES = 256 << 20  # idle buffers kept for reuse at most, or more: twice the largest buffer, the peak in use
CAPACITIES_KEPT = 4096  # sizes whose pooled capacity the pool remembers at most (then it starts over)


@dataclass(eq=False)
class GpuBuffer:
    """A pooled device buffer: `capacity` bytes allocated, `nbytes` in use."""

    raw: object
    capacity: int
    nbytes: int


class BufferPool:
    """Reuses device buffers by power-of-two capacity instead of creating one per call. Past its budget it
    destroys the buffers idle longest first, of any capacity: the one just given back is the likeliest to be
    asked for again (a loop's output of a size the idle buffers of earlier work do not have)."""

    def __init__(self, driver):
        self.driver = driver
        self.idle: dict[int, list[object]] = {}
        self.age: dict[int, tuple[object, int]] = {}  # id of an idle buffer -> (it, its capacity), the longest
        # idle first (by id: a driver's buffers need not be hashable, the browser's JS objects are not)
        self.idle_bytes = 0
        self.live = 0  # buffers handed out and not yet given back (those kept with plans not counted)
        self.kept = 0  # buffers handed out to be kept (a plan's parameters)
        self.largest = 0  # the largest capacity handed out: a loop over arrays that size reuses them
        self.in_use = 0  # bytes of the buffers handed out and not given back
        self.peak = 0  # the most bytes ever handed out at once: a program that needs them again finds them idle
        self.capacities: dict[int, int] = {}  # nbytes -> capacity(nbytes) of the sizes asked lately

    def capacity(self, nbytes: int) -> int:
        """The pooled capacity for `nbytes`: a power of two of 256 bytes at least, within the adapter's largest
        buffer; kernels bind arrays rounded up to 16 bytes (vec4 access), so every capacity has that room."""
        capacity = max(256, 1 << (max(nbytes, 1) - 1).bit_length())
        return min(capacity, max(self.driver.limits["max_buffer_size"] // 16 * 16, kernels.round16(nbytes), 256))

    def take(self, nbytes: int, kept: bool = False) -> GpuBuffer:
        capacity = self.capacities.get(nbytes)
        if capacity is None:
            if len(self.capacities) >= CAPACITIES_KEPT:
                self.capacities.clear()
            capacity = self.capacities[nbytes] = self.capacity(nbytes)
        if kept:
            self.kept += 1
        else:
            self.live += 1
        if capacity > self.largest:
            self.largest = capacity
        self.in_use += capacity
        if self.in_use > self.peak:
            self.peak = self.in_use
        free = self.idle.get(capacity)
        if free:
            self.idle_bytes -= capacity
            raw = free.pop()
            del self.age[id(raw)]
            return GpuBuffer(raw, capacity, nbytes)
        return GpuBuffer(self.driver.create_buffer(capacity), capacity, nbytes)

    def give(self, buf: GpuBuffer, kept: bool = False) -> None:
        if kept:
            self.kept -= 1
        else:
            self.live -= 1
        self.in_use -= buf.capacity
        budget = max(POOL_BYTES, 2 * self.largest, self.peak)
        if buf.capacity > budget:
            self.driver.destroy_buffer(buf.raw)
            return
        while self.idle_bytes + buf.capacity > budget:
            raw, capacity = self.age.pop(next(iter(self.age)))  # the longest idle
            self.idle[capacity].remove(raw)
            self.idle_bytes -= capacity
            self.driver.destroy_buffer(raw)
        self.idle.setdefault(buf.capacity, []).append(buf.raw)
        self.age[id(buf.raw)] = (buf.raw, buf.capacity)
        self.idle_bytes += buf.capacity

    def clear(self) -> None:
        for raws in self.idle.values():
            for raw in raws:
                self.driver.destroy_buffer(raw)
        self.idle.clear()
        self.age.clear()
        self.idle_bytes = 0


@dataclass(eq=False)
class Planned:
    """The dispatches of a plan's steps, their pipelines, and their parameters written once into `meta`
    (dispatch i's at byte offsets[i])."""

    key: tuple | None  # the scalars and options they were made for (None: not kept)
    dispatches: list
    offsets: list = field(default_factory=list)
    pipelines: list = field(default_factory=list)
    meta: GpuBuffer | None = None
    meta_bytes: bytes = b""


class GpuExecutor:
    """The webgpu backend: same kernels on the desktop and in the browser."""

    backend = "webgpu"
    dtypes = WORD_DTYPES  # WGSL has no 64-bit numbers

    def __init__(self, driver):
        self.driver = driver
        self.adapter_info = driver.adapter_info
        self.limits = driver.limits
        self.pool = BufferPool(driver)
        self.pipelines: dict[tuple[str, str], object] = {}
        self.compiling: dict[tuple[str, str], tuple[asyncio.Future, int]] = {}  # (source, entry) -> (its
        # compile_many still running, its index there): a call that needs it awaits that one, not a second
        self.on_compile = None  # called with the number of kernels a compile_many starts, then 0 once it ended (the
        # demo page's "compiling N kernels" note)
        self.caps = kernels.Caps.for_driver(driver)
        self.planned: dict[Key, Planned] = {}  # plan.key -> its dispatches, for the scalars and options in it

    @property
    def fuse_budget(self) -> int:
        """Op costs one fused step holds at most on this adapter (the planner's budget)."""
        return self.caps.fuse_budget

    @property
    def epilogue_budget(self) -> int:
        """Op costs a matmul step's chain holds at most on this adapter (none on software adapters)."""
        return self.caps.epilogue_budget

    def check_size(self, nbytes: int, what: str) -> None:
        """Refuse a buffer larger than one storage binding, naming the limit."""
        limit = self.limits["max_storage_buffer_binding_size"]
        if nbytes > limit:
            raise LimitError(
                f"{what} needs {nbytes} bytes in one storage binding, past this adapter's "
                f"max_storage_buffer_binding_size of {limit} bytes; split the data into smaller arrays"
            )

    def check_rows(self, cols: int) -> None:
        """Refuse rows too long for one reduction's own pass within the adapter's loop budget (a lone
        reduction is a light row step)."""
        kernels.rows.check_budget(cols, 1, 1, self.caps, kernels.rows.LIGHT_PER_THREAD)

    def upload(self, host: HostData, stats: tuple[Stats, ...]) -> GpuBuffer:
        nbytes = host.dtype.nbytes(host.size)
        self.check_size(nbytes, "this input")
        buf = self.pool.take(nbytes)
        if nbytes:
            data = host.data.cast("B")
            if len(data) < nbytes:  # float16 of odd size: its last word's high half (writes are whole words)
                data = memoryview(bytes(data) + bytes(nbytes - len(data)))
            self.driver.write_buffer(buf.raw, data)
            tally(stats, uploads=1, bytes_up=nbytes)
        return buf

    def pipeline(self, d: Dispatch, stats: tuple[Stats, ...]):
        key = (d.source, d.entry)
        if key not in self.pipelines:
            self.pipelines[key] = self.driver.compile(d.source, d.entry, d.checked)
            tally(stats, pipelines_compiled=1)
        return self.pipelines[key]

    async def compile_all(self, dispatches: list, stats: tuple[Stats, ...]) -> list:
        """The pipeline of every dispatch: the cached ones, the missing compiled together off the event loop
        (Driver.compile_many), each stored and counted once; one that another call is compiling is awaited."""
        checked = {(d.source, d.entry): d.checked for d in dispatches}
        keys = [(d.source, d.entry) for d in dispatches]
        found = {k: self.pipelines[k] for k in keys if k in self.pipelines}
        waits = {k: self.compiling[k] for k in keys if k not in found and k in self.compiling}
        missing = [k for k in checked if k not in found and k not in waits]
        if missing:
            job = asyncio.ensure_future(self.driver.compile_many([(*k, checked[k]) for k in missing]))
            self.compiling.update({k: (job, i) for i, k in enumerate(missing)})
            if self.on_compile is not None:
                self.on_compile(len(missing))
            try:
                made = await job
            finally:
                for k in missing:
                    del self.compiling[k]
                if self.on_compile is not None:
                    self.on_compile(0)
            self.pipelines.update(zip(missing, made))
            found.update(zip(missing, made))
            tally(stats, pipelines_compiled=len(missing))
        for k, (job, i) in waits.items():
            found[k] = (await job)[i]
        return [found[k] for k in keys]

    async def execute(self, nodes: list[Node], plan: Plan, stats: tuple[Stats, ...], read: int | None = None) -> None:
        """Run the plan's steps in one submit, its missing pipelines compiled together first (compile_all).
        `read`: the node read right after (a one-shot call): the driver holds the submit for it
        (Driver.hold_next), so that the read's copy joins it."""
        upload_pending(self, nodes, stats)
        planned = self.plan_dispatches(nodes, plan)
        while planned.dispatches and not planned.pipelines:
            try:
                pipelines = await self.compile_all(planned.dispatches, stats)
            except BaseException:
                if planned.key is None:
                    self.pool.give(planned.meta)
                raise
            if planned.key is None or self.planned.get(plan.key) is planned:
                planned.pipelines = pipelines
            else:  # another call planned this graph with other scalars meanwhile: its parameters replaced these
                planned = self.plan_dispatches(nodes, plan)
        work, release = self.prepare(nodes, planned)
        if not work:
            return
        try:
            if read is not None:
                out = storage(nodes, read)
                held = None if out.buffer is None else (out.buffer.raw, out.dtype.nbytes(out.size))
                self.driver.hold_next(held)
            await self.submit(work, stats)
        finally:
            release()

    async def submit(self, work: list, stats: tuple[Stats, ...], queued: bool = False) -> None:
        """Submit a dispatch list and settle it; an error there drops the kept plans and pipelines (one
        pipeline may be invalid: compiled afresh next time). `queued`: work that ran before (a replay), given
        to Driver.queue."""
        if queued:
            self.driver.queue(work)
        else:
            self.driver.submit(work)
        tally(stats, dispatches=len(work), submits=1)
        try:
            await self.driver.settle()
        except GpuError:
            self.forget()
            self.pipelines.clear()
            raise

    def dispatches(self, nodes: list[Node], plan: Plan, stats: tuple[Stats, ...]) -> Planned:
        """plan_dispatches() with its pipelines, those missing compiled here one by one (schedule()'s path: execute()
        has compiled them, unless the plan was dropped since)."""
        planned = self.plan_dispatches(nodes, plan)
        if planned.dispatches and not planned.pipelines:
            try:
                planned.pipelines = [self.pipeline(d, stats) for d in planned.dispatches]
            except BaseException:
                if planned.key is None:
                    self.pool.give(planned.meta)
                raise
        return planned

    def plan_dispatches(self, nodes: list[Node], plan: Plan) -> Planned:
        """kernels.dispatches of every step, with their parameters in one device buffer; no pipelines yet
        where they are new. A plan of the same key (the graph's structure) with the same scalars (bit for bit:
        -0.0 is not 0.0), options and caps (tests and benchmarks change them) has the same dispatches and
        parameters: they are reused (256 kept), so a repeated call neither builds kernel sources nor writes
        parameters."""
        ops = [n for n in nodes if n.op is not None]
        key = (  # every scalar in one run of bytes (how many each node has is the plan key's)
            tuple(vars(self.caps).values()),
            array.array("d", [p for n in ops for p in n.params]).tobytes(),
            tuple([(n.id, tuple(n.options.items())) for n in ops if n.options]),
        )
        try:
            hit = self.planned.get(plan.key)
            if hit is not None and hit.key == key:
                return hit
            hash(key)
        except TypeError:  # an option that does not hash: nothing to compare against
            key = None
        planned = Planned(key, [d for step in plan.steps for d in kernels.dispatches(step, nodes, caps=self.caps)])
        if not planned.dispatches:
            return planned
        meta_bytes = bytearray()
        for d in planned.dispatches:
            planned.offsets.append(len(meta_bytes))
            meta_bytes += d.meta + bytes(-len(d.meta) % META_ALIGN)
        planned.meta_bytes = bytes(meta_bytes)
        planned.meta = self.pool.take(len(meta_bytes), kept=key is not None)
        try:
            self.driver.write_buffer(planned.meta.raw, memoryview(meta_bytes))
        except BaseException:
            self.pool.give(planned.meta, kept=key is not None)
            raise
        if key is not None:
            self.forget(plan.key)  # the same plan with other scalars
            if len(self.planned) >= 256:
                self.forget(next(iter(self.planned)))
            self.planned[plan.key] = planned
        return planned

    def forget(self, plan_key: Key | None = None) -> None:
        """Drop a kept plan's dispatches (every plan's where `plan_key` is None), its parameters back to the pool."""
        for pk in list(self.planned) if plan_key is None else [plan_key]:
            gone = self.planned.pop(pk, None)
            if gone is not None:
                self.pool.give(gone.meta, kept=True)

    def prepare(self, nodes: list[Node], planned: Planned):
        """The dispatch list [(pipeline, binds, grid)] of a plan's dispatches, their pipelines compiled;
        `release()` gives the scratch buffer (where a dispatch needs one) and parameters not kept back once
        it is submitted."""
        if not planned.dispatches:
            return [], lambda: None
        need = max(d.scratch for d in planned.dispatches)
        scratch = self.pool.take(max(16, need)) if need else None
        meta = planned.meta
        kept = planned.key is not None

        def release():
            if scratch is not None:
                self.pool.give(scratch)
            if not kept:
                self.pool.give(meta)

        try:
            work = []
            for d, offset, pipeline in zip(planned.dispatches, planned.offsets, planned.pipelines):
                binds = [(0, meta.raw, offset, len(d.meta))]
                for index, ref in d.bindings:
                    if ref == "partials":
                        binds.append(bind(index, scratch))
                        continue
                    node = storage(nodes, ref)  # a view binds its base
                    if node.buffer is None:
                        nbytes = node.dtype.nbytes(node.size)
                        self.check_size(nbytes, f"the result of {node.op.name}")
                        node.buffer = self.pool.take(nbytes)
                    binds.append(bind(index, node.buffer))
                work.append((pipeline, tuple(binds), d.grid))
        except BaseException:
            release()
            raise
        return work, release

    def schedule(self, nodes: list[Node], plan: Plan, varying: set[int], stats: tuple[Stats, ...]) -> Schedule:
        """The plan just executed on `nodes`, kept to be replayed with new buffers for the `varying` nodes
        (replay.Schedule); every other node bound keeps the buffer it has now."""
        return Schedule(self, nodes, self.dispatches(nodes, plan, stats), varying)

    async def read(self, buffer: GpuBuffer, nbytes: int, stats: tuple[Stats, ...], take: bool = False) -> memoryview:
        if nbytes == 0:
            return memoryview(b"")
        words = -(-nbytes // 4) * 4  # copies are whole words: a float16 result of odd size drops its padding
        data = await self.driver.read_buffer(buffer.raw, words)
        tally(stats, downloads=1, bytes_down=words)
        return data if words == nbytes else memoryview(data).cast("B")[:nbytes]

    def free(self, buffer: GpuBuffer) -> None:
        self.pool.give(buffer)

    async def synchronize(self) -> None:
        await self.driver.synchronize()

    def destroy(self) -> None:
        self.driver.destroy()

    def close(self) -> None:
        self.forget()
        self.pool.clear()
        self.pipelines.clear()
        self.driver.close()
