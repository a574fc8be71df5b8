"""GpuCommandBatch: queue uploads and ops, `execute()` once, `read()` what you need.

Readable after `execute()`: uploads, results nothing in the batch consumes, and any buffer marked with
`batch.keep(id)` before the execute. An intermediate of a fused chain is never written to memory, so
reading it raises BatchError (keep it, or build the batch with `fuse=False`).
`read()` before `execute()` raises BatchError. A second `execute()` runs only the ops queued since the
last one, on the results already on the device; with nothing new it does nothing.
"""

from __future__ import annotations

import math
import weakref

from .calls import install
from .dtypes import DType, check_held, dtype_of, input_dtypes, signature, written
from .errors import BatchError, TruenoTypeError, TruenoValueError
from .graph import Node, storage
from .host import HostData, from_host, to_host
from .layout import View
from .op_row import Op
from .ops import get
from .planner import plan
from .resident import DeviceArray
from .stats import Stats

ASTYPE = get("astype")


class BufferId:
    """A handle to one buffer of one batch: an upload or an op's result."""

    __slots__ = ("batch", "index", "shape", "__weakref__")

    @property
    def dtype(self) -> DType:
        return self.batch._nodes[self.index].dtype

    def __init__(self, batch: GpuCommandBatch, index: int, shape: tuple[int, ...]):
        self.batch = batch
        self.index = index
        self.shape = shape

    @property
    def size(self) -> int:
        return self.batch._nodes[self.index].size

    def __repr__(self) -> str:
        node = self.batch._nodes[self.index]
        return (
            f"BufferId({self.index}, {node.op.name if node.op else 'upload'}, shape={self.shape}, dtype={node.dtype})"
        )


def _release(executor, nodes: list[Node]) -> None:
    for node in nodes:
        if node.buffer is not None and not node.imported:
            executor.free(node.buffer)
        node.buffer = None


class GpuCommandBatch:
    """A recorded graph of uploads and ops on one device, run with one submit per `execute()`."""

    def __init__(self, device, fuse: bool = True, private: bool = False):
        """`private`: a one-shot call's batch (nothing outside the call sees its uploads, its result is read
        once, then it is released), so a CPU backend uses the host data in place and hands the result over."""
        device.check_open()
        self.device = device
        self.executor = device.executor
        self.fuse = fuse
        self.private = private
        self.stats = Stats()
        self._nodes: list[Node] = []
        self._pending: list[int] = []
        self._executed = False
        self._handles: dict[int, list] = {}  # upload not yet run -> weak refs to the BufferIds of it and its views
        self._imports: dict[int, int] = {}  # id of an imported DeviceArray's buffer -> its node
        self._finalizer = weakref.finalize(self, _release, self.executor, self._nodes)

    # ------------------------------------------------------------ recording

    @property
    def num_operations(self) -> int:
        """Ops queued so far (uploads and imports not counted)."""
        return sum(1 for n in self._nodes if n.op is not None)

    @property
    def nodes(self) -> list[Node]:
        """The recorded graph, in recording order (to read, not to change: jit copies it into a Program)."""
        return self._nodes

    @property
    def num_buffers(self) -> int:
        """Buffers the batch knows: uploads, imports and op results."""
        return len(self._nodes)

    def _add(self, node: Node) -> BufferId:
        self._nodes.append(node)
        if node.op is not None:
            self._pending.append(node.id)
        buf = BufferId(self, node.id, node.shape)
        if node.host is not None:
            self._handles[node.id] = [weakref.ref(buf)]
        elif node.view is not None and node.inputs[0] in self._handles:
            self._handles[node.inputs[0]].append(weakref.ref(buf))
        return buf

    def _borrow_unreachable(self) -> None:
        """Uploads that no BufferId reaches any more (`b.relu(b.upload(x))`) can be read by this execute only:
        a CPU backend uses their data in place instead of copying it (nothing can read it later)."""
        for nid, refs in self._handles.items():
            host = self._nodes[nid].host
            if host is not None and not host.borrowed and all(r() is None for r in refs):
                self._nodes[nid].host = HostData(host.data, host.shape, borrowed=True, dtype=host.dtype)
        self._handles.clear()

    def upload(self, data, shape: tuple[int, ...] | None = None, dtype=None) -> BufferId:
        """Queue host data for upload at the next execute() (of its dtype, or converted to `dtype`); a
        DeviceArray is imported instead."""
        if isinstance(data, DeviceArray):
            return self.import_buffer(data)
        if isinstance(data, BufferId):
            return self._own(data)
        host = to_host(data, shape, dtype)
        check_held(host.dtype, self.executor.backend, self.executor.dtypes)
        self.executor.check_size(host.size * host.dtype.itemsize, "this input")
        if self.private:
            host = HostData(host.data, host.shape, borrowed=True, dtype=host.dtype)
        return self._add(Node(len(self._nodes), None, (), (), host.shape, host=host, dtype=host.dtype))

    def import_buffer(self, array) -> BufferId:
        """Use a device-resident DeviceArray (from `await dev.upload(x)`) without uploading it again."""
        if array.device is not self.device:
            raise BatchError("this DeviceArray belongs to another GpuDevice; upload it to this device first")
        array.check_alive()
        nid = self._imports.get(id(array.buffer))  # the same array twice is one buffer of the batch
        if nid is not None and nid < len(self._nodes) and self._nodes[nid].buffer is array.buffer:
            return BufferId(self, nid, self._nodes[nid].shape)
        self._imports[id(array.buffer)] = len(self._nodes)
        return self._add(
            Node(
                len(self._nodes),
                None,
                (),
                (),
                array.shape,
                buffer=array.buffer,
                imported=True,
                done=True,
                dtype=array.dtype,
            )
        )

    def view(
        self, buf: BufferId, shape: tuple[int, ...], strides: tuple[int, ...], offset: int = 0, mask=None
    ) -> BufferId:
        """A view of the storage under `buf` (its base, where `buf` is a view itself); nothing is copied.
        Element (i0, i1, ...) of `shape` is element offset + i0 * strides[0] + ... of that flat storage.
        Elementwise ops read any view through index arithmetic; other ops, read() and keep() need a
        row-major view from the start (reshapes): give them a `copy` of any other view. `mask`: per
        dimension a valid range (lo, hi); the elements outside read as 0.0 (padding)."""
        base = storage(self._nodes, self._input(buf).index)
        shape, strides, offset = tuple(int(d) for d in shape), tuple(int(s) for s in strides), int(offset)
        if len(shape) != len(strides) or any(d < 0 for d in shape):
            raise TruenoValueError(
                f"a view needs one non-negative size and one stride per dimension; got shape {shape}, strides {strides}"
            )
        if mask is not None and (len(mask) != len(shape) or any(len(m) != 2 for m in mask)):
            raise TruenoValueError(f"a view mask needs one (lo, hi) per dimension of {shape}; got {mask}")
        view = View(shape, strides, offset, None if mask is None else tuple((int(a), int(b)) for a, b in mask))
        reach = view.reach() if math.prod(shape) else None
        if reach is not None and (reach[0] < 0 or reach[1] >= base.size):
            raise TruenoValueError(
                f"a view of shape {shape}, strides {strides}, offset {offset} reaches "
                f"elements {reach[0]}..{reach[1]}, outside the {base.size} elements of its base"
            )
        return self._add(
            Node(len(self._nodes), None, (base.id,), (), shape, view=view, done=base.done, dtype=base.dtype)
        )

    def _flat(self, buf: BufferId, what: str) -> Node:
        """The node whose storage holds `buf` row-major from its start (itself, or the base of a reshape)."""
        node = self._nodes[self._own(buf).index]
        if node.view is not None and not node.view.identity:
            raise BatchError(f"{buf!r} is a strided view; {what} needs row-major data: queue batch.copy(id) first")
        return storage(self._nodes, node.id)

    def keep(self, buf: BufferId) -> BufferId:
        """Keep a buffer readable after execute() even if a fused chain would not write it."""
        node = self._flat(buf, "keep()")
        if node.fused_away:
            raise BatchError(f"{buf!r} was already fused away by an earlier execute(); call keep() before execute()")
        node.keep = True
        return buf

    def _own(self, buf) -> BufferId:
        if not isinstance(buf, BufferId):
            raise TruenoTypeError(f"expected a BufferId from batch.upload() or a batch op, got {type(buf).__name__}")
        if buf.batch is not self:
            raise BatchError(
                f"{buf!r} belongs to another batch; BufferIds cannot cross batches "
                "(use `await dev.upload(x)` for data shared between batches)"
            )
        return buf

    def _input(self, x) -> BufferId:
        if isinstance(x, BufferId):
            buf = self._own(x)
            node = self._nodes[buf.index]
            if node.fused_away:
                raise BatchError(
                    f"{buf!r} was fused away by an earlier execute() and no longer exists; "
                    "call batch.keep(id) before execute() to use it later"
                )
            return buf
        if isinstance(x, DeviceArray):
            return self.import_buffer(x)
        return self.upload(x)

    def record(self, op: Op, inputs: tuple, params: tuple[float, ...] = (), options: dict | None = None) -> BufferId:
        """Queue one op of the catalog on bound arguments (what every op method calls); returns its BufferId.
        Inputs of other dtypes than the op computes in are converted first (dtypes.signature)."""
        first_new = len(self._nodes)
        try:
            ids = [self._input(x) for x in inputs]
            target = (options or {}).get("dtype")  # astype's
            shape, options = op.row.shape(op, [b.shape for b in ids], options or {})
            compute, out = signature(op, [b.dtype for b in ids], None if target is None else dtype_of(target))
            for d in (compute, out):
                check_held(d, self.executor.backend, self.executor.dtypes, f"{op.name} here: ")
            wanted = input_dtypes(op, [b.dtype for b in ids], compute)
            ids = [b if b.dtype == d else self._cast(b, d) for b, d in zip(ids, wanted)]
            buf = self.record_checked(op, ids, params, shape, options, written(op, out))
            return buf if buf.dtype is out else self._cast(buf, out)  # a float16 result: rounded by astype
        except BaseException:
            del self._nodes[first_new:]  # a rejected call leaves no uploads behind
            for nid in [n for n in self._handles if n >= first_new]:
                del self._handles[nid]
            raise

    def _cast(self, buf: BufferId, dtype: DType) -> BufferId:
        """Queue `buf` converted to `dtype` (the catalog's astype: an input of another dtype than its op's)."""
        return self.record_checked(ASTYPE, [buf], (), buf.shape, {}, dtype)

    def record_checked(
        self, op: Op, ids: list, params: tuple, shape: tuple, options: dict, dtype: DType | None = None
    ) -> BufferId:
        """record() of inputs that are this batch's BufferIds and of the output shape and options that
        `op.row.shape` gave for them, of the input dtypes the op computes on, returning `dtype` (default:
        dtypes.signature's): the tensor layer's entry, its expressions checked when written."""
        if dtype is None:
            dtype = signature(op, [self._nodes[b.index].dtype for b in ids])[1]
        rows = options.get("rows") if op.row.template == "reduce" else None  # scans' rows: any length, flat
        if not op.row.mapped and rows is None:  # only these kernels read strided views, and an op's first `views`
            for j, b in enumerate(ids):
                view = self._nodes[b.index].view
                if j >= op.row.views or view is None or not view.rows_in_place:
                    self._flat(b, f"{op.name}'s input")
        if rows:  # a row too long for even one reduction's own pass raises here, not at execute
            self.executor.check_rows(math.prod(ids[0].shape) // rows)
        return self._add(Node(len(self._nodes), op, tuple([b.index for b in ids]), params, shape, options, dtype=dtype))

    # ------------------------------------------------------------ running and reading

    async def execute(self, read: BufferId | None = None) -> None:
        """Upload what is queued and run every op queued since the last execute, in one submit. `read`: the
        buffer read right after (a one-shot call): where the backend can, its copy joins this submit."""
        executor = self.executor
        self.device.check_open()
        pending, self._pending = self._pending, []
        limits = executor.limits["max_storage_buffers_per_shader_stage"]
        planned = plan(self._nodes, pending, self.fuse, limits, executor.fuse_budget, executor.epilogue_budget)
        stats = (self.stats, self.device.stats)
        read_id = None if read is None else self._own(read).index
        self._borrow_unreachable()
        try:
            for nid in planned.fused_away:  # never written to memory: reading them raises (undone on failure)
                self._nodes[nid].fused_away = True
            await executor.execute(self._nodes, planned, stats, read=read_id)
        except BaseException:
            self._pending = pending + self._pending
            for nid in pending:
                self._nodes[nid].fused_away = False
            raise
        for node in self._nodes:
            node.done = True
        self._executed = True

    async def read(self, buf: BufferId):
        """Download one buffer: a NumPy array of its dtype (an NDResult without NumPy), a Python scalar for a
        0-d buffer (a full reduction's)."""
        shape = self._own(buf).shape
        node = self._computed(buf, "read()")
        data = await self.executor.read(
            node.buffer, node.dtype.itemsize * math.prod(shape), (self.stats, self.device.stats), take=self.private
        )
        if shape == ():
            return from_host(data, (1,), node.dtype).tolist()[0]
        return from_host(data, shape, node.dtype)

    def detach(self, buf: BufferId) -> DeviceArray:
        """Hand a computed buffer over to a DeviceArray that outlives the batch (no copy)."""
        node = self._computed(buf, "detach()")
        if node.view is not None or node.imported or node.size != buf.size:
            raise BatchError(f"{buf!r} is not a buffer of this batch's own; only uploads and op results detach")
        node.imported = True  # the DeviceArray frees it now, not the batch
        return DeviceArray(self.device, node.buffer, node.shape, node.dtype)

    def _computed(self, buf: BufferId, what: str) -> Node:
        node = self._flat(buf, what)
        if node.fused_away:
            raise BatchError(
                f"{buf!r} was fused into a chain and never written to memory; "
                "call batch.keep(id) before execute(), or use dev.batch(fuse=False)"
            )
        if self._finalizer.alive is False:
            raise BatchError("this batch was released; its buffers are gone (read before release())")
        if not node.done:
            raise BatchError(f"{buf!r} has not been computed yet; call `await batch.execute()` before {what}")
        return node

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
        return (
            f"<GpuCommandBatch on {self.device.backend}: {self.num_operations} ops, {self.num_buffers} buffers, "
            f"{'executed' if self._executed else 'not executed'}>"
        )


install(GpuCommandBatch, GpuCommandBatch.record, "Queues the op; returns a BufferId.")
