"""GpuCommandBatch: queue uploads and ops, `execute()` once, `read()` what you need.

Readable after `execute()`: uploads, results nothing in the batch consumes, and any buffer marked with
`batch.keep(id)` before the execute. An intermediate of a fused chain is never written to memory, so
reading it raises BatchError (keep it, or build the batch with `fuse=False`).
`read()` before `execute()` raises BatchError. A second `execute()` runs only the ops queued since the
last one, on the results already on the device; with nothing new it does nothing.
"""

from __future__ import annotations

import weakref

from .calls import install
from .errors import BatchError, TruenoTypeError
from .graph import Node, plan
from .host import from_host, to_host
from .ops import Op
from .resident import DeviceArray
from .stats import Stats


class BufferId:
    """A handle to one buffer of one batch: an upload or an op's result."""

    __slots__ = ("batch", "index", "shape", "__weakref__")

    def __init__(self, batch: "GpuCommandBatch", index: int, shape: tuple[int, ...]):
        self.batch = batch
        self.index = index
        self.shape = shape

    @property
    def size(self) -> int:
        return self.batch._nodes[self.index].size

    def __repr__(self) -> str:
        node = self.batch._nodes[self.index]
        return f"BufferId({self.index}, {node.op.name if node.op else 'upload'}, shape={self.shape})"


def _release(executor, nodes: list[Node]) -> None:
    for node in nodes:
        if node.buffer is not None and not node.imported:
            executor.free(node.buffer)
        node.buffer = None


class GpuCommandBatch:
    """A recorded graph of uploads and ops on one device, run with one submit per `execute()`."""

    def __init__(self, device, fuse: bool = True):
        device.check_open()
        self.device = device
        self.executor = device.executor
        self.fuse = fuse
        self.stats = Stats()
        self._nodes: list[Node] = []
        self._pending: list[int] = []
        self._executed = False
        self._finalizer = weakref.finalize(self, _release, self.executor, self._nodes)

    # ------------------------------------------------------------ recording

    @property
    def num_operations(self) -> int:
        """Ops queued so far (uploads and imports not counted)."""
        return sum(1 for n in self._nodes if n.op is not None)

    @property
    def num_buffers(self) -> int:
        """Buffers the batch knows: uploads, imports and op results."""
        return len(self._nodes)

    def _add(self, node: Node) -> BufferId:
        self._nodes.append(node)
        if node.op is not None:
            self._pending.append(node.id)
        return BufferId(self, node.id, node.shape)

    def upload(self, data, shape: tuple[int, ...] | None = None) -> BufferId:
        """Queue host data for upload at the next execute(); a DeviceArray is imported instead."""
        if isinstance(data, DeviceArray):
            return self.import_buffer(data)
        if isinstance(data, BufferId):
            return self._own(data)
        host = to_host(data, shape)
        self.executor.check_size(host.size * 4, "this input")
        return self._add(Node(len(self._nodes), None, (), (), host.shape, host=host))

    def import_buffer(self, array) -> BufferId:
        """Use a device-resident DeviceArray (from `await dev.upload(x)`) without uploading it again."""
        if array.device is not self.device:
            raise BatchError("this DeviceArray belongs to another GpuDevice; upload it to this device first")
        array.check_alive()
        for node in self._nodes:  # the same array twice is one buffer of the batch
            if node.imported and node.buffer is array.buffer:
                return BufferId(self, node.id, node.shape)
        return self._add(Node(len(self._nodes), None, (), (), array.shape, buffer=array.buffer, imported=True,
                              done=True))

    def keep(self, buf: BufferId) -> BufferId:
        """Keep a buffer readable after execute() even if a fused chain would not write it."""
        self._own(buf)
        node = self._nodes[buf.index]
        if node.fused_away:
            raise BatchError(f"{buf!r} was already fused away by an earlier execute(); call keep() before execute()")
        node.keep = True
        return buf

    def _own(self, buf) -> BufferId:
        if not isinstance(buf, BufferId):
            raise TruenoTypeError(f"expected a BufferId from batch.upload() or a batch op, got {type(buf).__name__}")
        if buf.batch is not self:
            raise BatchError(f"{buf!r} belongs to another batch; BufferIds cannot cross batches "
                             "(use `await dev.upload(x)` for data shared between batches)")
        return buf

    def _input(self, x) -> BufferId:
        if isinstance(x, BufferId):
            buf = self._own(x)
            node = self._nodes[buf.index]
            if node.fused_away:
                raise BatchError(f"{buf!r} was fused away by an earlier execute() and no longer exists; "
                                 "call batch.keep(id) before execute() to use it later")
            return buf
        if isinstance(x, DeviceArray):
            return self.import_buffer(x)
        return self.upload(x)

    def record(self, op: Op, inputs: tuple, params: tuple[float, ...] = (), options: dict | None = None) -> BufferId:
        """Queue one op of the catalog on bound arguments (what every op method calls); returns its BufferId."""
        first_new = len(self._nodes)
        try:
            ids = [self._input(x) for x in inputs]
            shape, options = op.row.shape(op, [b.shape for b in ids], options or {})
        except BaseException:
            del self._nodes[first_new:]  # a rejected call leaves no uploads behind
            raise
        return self._add(Node(len(self._nodes), op, tuple(b.index for b in ids), params, shape, options))

    # ------------------------------------------------------------ running and reading

    async def execute(self) -> None:
        """Upload what is queued and run every op queued since the last execute, in one submit."""
        executor = self.executor
        self.device.check_open()
        pending, self._pending = self._pending, []
        steps = plan(self._nodes, pending, self.fuse, executor.limits["max_storage_buffers_per_shader_stage"])
        try:
            await executor.execute(self._nodes, steps, (self.stats, self.device.stats))
        except BaseException:
            self._pending = pending + self._pending
            for nid in pending:
                self._nodes[nid].fused_away = False
            raise
        for node in self._nodes:
            node.done = True
        self._executed = True

    async def read(self, buf: BufferId):
        """Download one buffer: a float32 NumPy array (or array.array('f')), a Python float for reductions."""
        node = self._nodes[self._own(buf).index]
        if node.fused_away:
            raise BatchError(f"{buf!r} was fused into a chain and never written to memory; "
                             "call batch.keep(id) before execute(), or use dev.batch(fuse=False)")
        if self._finalizer.alive is False:
            raise BatchError("this batch was released; its buffers are gone (read before release())")
        if not node.done:
            raise BatchError(f"{buf!r} has not been computed yet; call `await batch.execute()` before read()")
        data = await self.executor.read(node.buffer, node.size, (self.stats, self.device.stats))
        if node.shape == ():
            return float(memoryview(data).cast("B").cast("f")[0])
        return from_host(data, node.shape)

    def release(self) -> None:
        """Give the batch's device buffers back for reuse; its BufferIds become unreadable."""
        self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        self.release()

    def __repr__(self) -> str:
        return (f"<GpuCommandBatch on {self.device.backend}: {self.num_operations} ops, {self.num_buffers} buffers, "
                f"{'executed' if self._executed else 'not executed'}>")


install(GpuCommandBatch, GpuCommandBatch.record, "Queues the op; returns a BufferId.")
