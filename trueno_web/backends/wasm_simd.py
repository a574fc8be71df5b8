"""The wasm-simd backend: the planned graph on hand-written WASM SIMD128 kernels (trueno_web/kernels.wasm,
built from wasm/kernels.c by `python wasm/build.py`, loaded by wasm_module.py).

No NumPy: buffers are offsets into the module's linear memory, placed by its allocator (tw_alloc/tw_free).
A map step runs the per-op kernels one after another over cache-sized chunks, the intermediates of a fused
chain living only in chunk-sized scratch; an op step is one kernel call. The module runs under
`js.WebAssembly` in the browser (Pyodide) and under wasmtime on the desktop (tests, benchmarks).
"""

from __future__ import annotations

import array
import platform
import sys

from .. import runtime
from ..dtypes import DType
from ..errors import DeviceLostError, LimitError
from ..graph import MapStep, Node, OpStep, Plan, ReduceStep, RowStep, gathers, row_reduction, storage, template
from ..host import HostData
from ..layout import contiguous_strides
from ..sort_kinds import key_kind
from ..stats import Stats, tally
from .base import CPU_LIMITS, WORD_DTYPES, CpuExecutor, upload_pending
from .wasm_module import BrowserModule, WasmtimeModule, i32, wasm_bytes

CHUNK = 16384  # floats per map-step pass (64 KiB per value: the chain's working set stays in L2)
MAX_BYTES = 2**31  # one buffer at most; all of them together share wasm32's 4 GiB


class WasmBuffer:
    """`nbytes` of float32 data at `ptr` in the module's linear memory."""

    __slots__ = ("ptr", "nbytes", "__weakref__")

    def __init__(self, ptr: int, nbytes: int):
        self.ptr = ptr
        self.nbytes = nbytes

    def __repr__(self) -> str:
        return f"WasmBuffer(ptr={self.ptr:#x}, nbytes={self.nbytes})"


class WasmExecutor(CpuExecutor):
    """CPU executor on the WASM SIMD kernels; transfers are zero, dispatches count the steps it ran."""

    backend = "wasm-simd"
    dtypes = WORD_DTYPES  # the C kernels' 32-bit words

    def __init__(self, module):
        self.module = module
        simd = bool(module.call("tw_simd"))
        self.adapter_info = {
            "vendor": "trueno_web",
            "device": f"WASM {'SIMD128' if simd else 'scalar'} kernels on {module.runtime} "
            f"({platform.machine() or sys.platform})",
            "description": "CPU fallback",
            "software": True,
        }
        self.limits = dict(CPU_LIMITS, max_storage_buffer_binding_size=MAX_BYTES, max_buffer_size=MAX_BYTES)
        self.closed = False

    @classmethod
    async def create(cls, wasm: bytes | None = None) -> WasmExecutor:
        """Instantiate the shipped module (or `wasm`, e.g. the scalar build for a benchmark)."""
        wasm = wasm_bytes() if wasm is None else wasm
        if runtime.is_browser():
            return cls(await BrowserModule.create(wasm))
        return cls(WasmtimeModule(wasm))

    # ------------------------------------------------------------ memory

    def check_size(self, nbytes: int, what: str) -> None:
        if nbytes > MAX_BYTES:
            raise LimitError(
                f"{what} needs {nbytes} bytes in one buffer, past the wasm-simd backend's "
                f"max_buffer_size of {MAX_BYTES} bytes (wasm32 linear memory); split the data"
            )

    def _alloc(self, nbytes: int, what: str) -> WasmBuffer:
        if self.closed:
            raise DeviceLostError("this wasm-simd device was closed; create a new one with `await GpuDevice.create()`")
        self.check_size(nbytes, what)
        ptr = self.module.call("tw_alloc", i32(nbytes)) & 0xFFFFFFFF
        if ptr == 0:
            raise LimitError(
                f"{what} needs {nbytes} bytes, but the wasm-simd backend's linear memory cannot grow "
                "that far (wasm32 holds 4 GiB at most, browsers often less); free data or split it"
            )
        return WasmBuffer(ptr, nbytes)

    def upload(self, host: HostData, stats: tuple[Stats, ...]) -> WasmBuffer:
        buf = self._alloc(host.size * 4, "this input")
        self.module.write(buf.ptr, host.data)
        return buf

    def free(self, buffer: WasmBuffer) -> None:
        if not self.closed and buffer is not None and buffer.ptr:
            self.module.call("tw_free", i32(buffer.ptr))
            buffer.ptr = 0

    def live_bytes(self) -> int:
        """Bytes held by live allocations in linear memory (a leak check for tests)."""
        return self.module.call("tw_live_bytes") & 0xFFFFFFFF

    def close(self) -> None:
        self.closed = True
        self.module = None

    # ------------------------------------------------------------ running

    async def execute(self, nodes: list[Node], plan: Plan, stats: tuple[Stats, ...], read: int | None = None) -> None:
        if self.closed:
            raise DeviceLostError("this wasm-simd device was closed; create a new one with `await GpuDevice.create()`")
        upload_pending(self, nodes, stats)
        for step in plan.steps:
            RUNNERS[template(step, nodes)](self, nodes, step)
        if plan.steps:
            tally(stats, dispatches=len(plan.steps), submits=1)

    async def read(self, buffer: WasmBuffer, size: int, stats: tuple[Stats, ...], take: bool = False) -> memoryview:
        if self.closed:
            raise DeviceLostError("this wasm-simd device was closed; create a new one with `await GpuDevice.create()`")
        return self.module.read(buffer.ptr, size * 4)

    def _result(self, node: Node) -> WasmBuffer:
        if node.buffer is None:
            node.buffer = self._alloc(node.size * 4, f"the result of {node.op.name}")
        return node.buffer

    def _map(self, nodes: list[Node], step: MapStep) -> None:
        """The chain in chunks: stored values go to their buffers, the others to chunk-sized scratch.
        With nothing fused away there is nothing to keep in cache: one call per op over the whole array."""
        call = self.module.call
        n = step.size
        stores = set(step.stores)
        for nid in step.stores:
            self._result(nodes[nid])
        chunk = max(1, min(n, CHUNK if len(stores) < len(step.nodes) else n))
        scratch, gathered, strides = {}, {}, {}
        try:
            for nid in step.nodes:
                if nid not in stores:
                    scratch[nid] = self._alloc(chunk * 4, "a fused intermediate")
            for nid in step.loads:  # strided views (broadcasts, transposes, slices): a row-major copy first
                copy = self._gather(nodes, nid)
                if copy is not None:
                    gathered[nid] = copy
            for nid in step.nodes:  # a generator's strides= (the index iota): (size, stride), the last dimension first
                if "strides" in nodes[nid].options:
                    dims = list(zip(nodes[nid].shape, nodes[nid].options["strides"]))[::-1] or [(1, 0)]
                    strides[nid] = (self._alloc(8 * len(dims), "a generator's strides"), len(dims))
                    self.module.write(strides[nid][0].ptr, words(dims))

            def at(nid: int, offset: int) -> int:
                if nid in scratch:
                    return i32(scratch[nid].ptr)
                buf = gathered.get(nid) or storage(nodes, nid).buffer
                return i32(buf.ptr + 4 * offset)

            for offset in range(0, n, chunk):
                count = min(chunk, n - offset)
                for nid in step.nodes:
                    node = nodes[nid]
                    if node.op.generator:  # no inputs: the index of the chunk's first element instead
                        call(
                            symbol(node, nodes), at(nid, offset), count, offset, *node.params, *self._dims(strides, nid)
                        )
                        continue
                    if gathers(node):  # its data whole; the index of the chunk's first element
                        data, index = node.inputs
                        geometry = (node.options[w] for w in ("outer", "n", "inner"))
                        call(
                            symbol(node, nodes),
                            at(data, 0),
                            at(index, offset),
                            at(nid, offset),
                            count,
                            offset,
                            *geometry,
                        )
                        continue
                    ins = [at(i, offset) for i in node.inputs]
                    call(symbol(node, nodes), *ins, at(nid, offset), count, *node.params)
        finally:
            for buf in [*scratch.values(), *gathered.values(), *(b for b, _ in strides.values())]:
                self.free(buf)

    @staticmethod
    def _dims(strides: dict, nid: int) -> tuple:
        """The (address, count) arguments of a generator's strides, or none."""
        return (i32(strides[nid][0].ptr), strides[nid][1]) if nid in strides else ()

    def _reduce(self, nodes: list[Node], step: OpStep | ReduceStep) -> None:
        """All of the input as one row, or (option rows) R rows, in one kernel call; a strided input is
        gathered first. A fused chain (ReduceStep) runs before, storing only what the reduction reads."""
        if isinstance(step, ReduceStep):
            chain = step.chain(nodes)
            try:
                self._map(nodes, chain)
                self._reduce(nodes, OpStep(step.node))
            finally:
                for nid in chain.stores:
                    if nodes[nid].buffer is not None:
                        self.free(nodes[nid].buffer)
                        nodes[nid].buffer = None
            return
        node = nodes[step.node]
        rows = node.options.get("rows")
        n = nodes[node.inputs[0]].size
        gathered = [self._gather(nodes, i) for i in node.inputs]
        try:
            ptrs = [i32((g or storage(nodes, i).buffer).ptr) for g, i in zip(gathered, node.inputs)]
            self.module.call(
                symbol(node, nodes),
                *ptrs,
                i32(self._result(node).ptr),
                1 if rows is None else rows,
                n // rows if rows else n,
            )
        finally:
            for g in gathered:
                if g is not None:
                    self.free(g)

    def _rows(self, nodes: list[Node], step: RowStep) -> None:
        """A row step op by op on whole arrays (broadcast row values gathered like any view); its fused
        values live in buffers of their own until the step ends."""
        try:
            for nid in step.nodes:
                node = nodes[nid]
                if row_reduction(node):
                    self._reduce(nodes, OpStep(nid))
                else:
                    self._map(nodes, MapStep(node.size, list(node.inputs), [nid], [nid]))
        finally:
            for nid in step.nodes:
                if nodes[nid].fused_away and nodes[nid].buffer is not None:
                    self.free(nodes[nid].buffer)
                    nodes[nid].buffer = None

    def _gather(self, nodes: list[Node], i: int) -> WasmBuffer | None:
        """A row-major copy of node i where it is a strided view (the caller frees it), else None: one
        tw_gather call, each dimension's size, stride and valid range written after the copy's floats."""
        view = nodes[i].view
        if view is None or view.identity:
            return None
        mask = view.mask or [(0, d) for d in view.shape]
        dims = [(d, s, lo, hi) for d, s, (lo, hi) in zip(view.shape, view.strides, mask)]
        return self._copy(storage(nodes, i).buffer, view.offset, dims, nodes[i].size)

    def _transposed(self, node: Node) -> WasmBuffer:
        """A row-major copy of node's matrices transposed (its last two dimensions swapped; the caller frees it)."""
        *lead, r, c = node.shape
        dims = [(d, s, 0, d) for d, s in zip(lead, contiguous_strides(node.shape))] + [(c, 1, 0, c), (r, c, 0, r)]
        return self._copy(node.buffer, 0, dims, node.size)

    def _copy(self, src: WasmBuffer, offset: int, dims: list, n: int) -> WasmBuffer:
        """tw_gather of the n elements at `dims` (size, stride, valid range per dimension) from `offset` of src."""
        dims = dims or [(1, 0, 0, 1)]
        out = self._alloc(4 * n + 16 * len(dims), "a copy of a strided view")
        if n:
            self.module.write(out.ptr + 4 * n, words(dims))
            self.module.call("tw_gather", i32(src.ptr), offset, i32(out.ptr), i32(out.ptr + 4 * n), len(dims))
        return out

    def _scan(self, nodes: list[Node], step: OpStep) -> None:
        """One kernel call over the rows (all of the input as one row without the option); the input is
        row-major (batch.record_checked)."""
        node = nodes[step.node]
        rows = node.options.get("rows") or 1
        out = self._result(node)
        if node.size:
            src = storage(nodes, node.inputs[0]).buffer
            self.module.call(symbol(node, nodes), i32(src.ptr), i32(out.ptr), rows, node.size // rows)

    def _scatter(self, nodes: list[Node], step: OpStep) -> None:
        """scatter_add: one call copies x and adds the values at their positions in order."""
        node = nodes[step.node]
        x, index, values = (i32(storage(nodes, i).buffer.ptr) for i in node.inputs)
        o, unsigned = node.options, nodes[node.inputs[1]].dtype.kind == "unsigned"
        self.module.call(
            symbol(node, nodes), x, index, values, i32(self._result(node).ptr), node.size,
            nodes[node.inputs[1]].size, o["outer"], o["n"], o["inner"], int(unsigned),
        )  # fmt: skip

    def _softmax(self, nodes: list[Node], step: OpStep) -> None:
        node = nodes[step.node]
        cols = node.shape[-1] if node.shape else 1
        rows = node.size // cols if cols else 0
        out = self._result(node)
        if node.size:
            self.module.call(
                symbol(node, nodes),
                i32(storage(nodes, node.inputs[0]).buffer.ptr),
                i32(out.ptr),
                rows,
                cols,
                int(node.op.name == "log_softmax"),
            )

    def _matmul(self, nodes: list[Node], step: OpStep) -> None:
        """One product: tw_matmul; a batch: tw_matmul_batch, one call that walks the batch dimensions
        (their sizes and strides written to linear memory for it). A transposed operand is copied row-major
        first (the module's kernel packs B and streams A along rows)."""
        node = nodes[step.node]
        o = node.options
        copies = [  # an operand given transposed (options ta, tb): a row-major copy of it
            self._transposed(storage(nodes, i)) if o.get(t) else None for i, t in zip(node.inputs, ("ta", "tb"))
        ]
        a, b = (i32((t or storage(nodes, i).buffer).ptr) for t, i in zip(copies, node.inputs))
        c, mkn = i32(self._result(node).ptr), (o["m"], o["k"], o["n"])
        try:
            if not o["dims"]:
                if o["batch"]:
                    self.module.call(symbol(node, nodes), a, b, c, *mkn)
                return
            batch_dims = words(o["dims"])
            dims = self._alloc(batch_dims.nbytes, "the batch dimensions")
            try:
                self.module.write(dims.ptr, batch_dims)
                self.module.call("tw_matmul_batch", a, b, c, *mkn, o["batch"], i32(dims.ptr), len(o["dims"]))
            finally:
                self.free(dims)
        finally:
            for t in copies:
                if t is not None:
                    self.free(t)

    def _conv2d(self, nodes: list[Node], step: OpStep) -> None:
        node = nodes[step.node]
        img, ker = (nodes[i] for i in node.inputs)
        self.module.call(
            symbol(node, nodes),
            i32(storage(nodes, img.id).buffer.ptr),
            *img.shape,
            i32(storage(nodes, ker.id).buffer.ptr),
            *ker.shape,
            i32(self._result(node).ptr),
        )

    def _sort(self, nodes: list[Node], step: OpStep) -> None:
        """tw_sort over the rows (a strided input gathered first), with 16 bytes of scratch per column."""
        node = nodes[step.node]
        n = node.shape[-1]
        out = self._result(node)
        if not node.size:
            return
        gathered = self._gather(nodes, node.inputs[0])
        scratch = self._alloc(16 * n, "the sort's scratch")
        try:
            src = gathered or storage(nodes, node.inputs[0]).buffer
            flags = (
                key_kind(nodes[node.inputs[0]].dtype),
                int(node.options["descending"]),
                int(node.op.name == "argsort"),
            )
            self.module.call("tw_sort", i32(src.ptr), i32(out.ptr), node.size // n, n, *flags, i32(scratch.ptr))
        finally:
            self.free(scratch)
            if gathered is not None:
                self.free(gathered)

    def _search(self, nodes: list[Node], step: OpStep) -> None:
        """tw_searchsorted: a binary search in x1 per element of x2 (strided inputs gathered first)."""
        node = nodes[step.node]
        out = self._result(node)
        x1, x2 = node.inputs
        gathered = [self._gather(nodes, i) for i in node.inputs]
        try:
            a, b = (i32((g or storage(nodes, i).buffer).ptr) for g, i in zip(gathered, node.inputs))
            right = int(node.options["side"] == "right")
            kind = key_kind(nodes[x1].dtype)
            self.module.call("tw_searchsorted", a, nodes[x1].size, b, node.size, i32(out.ptr), kind, right)
        finally:
            for g in gathered:
                if g is not None:
                    self.free(g)

    def _attention(self, nodes: list[Node], step: OpStep) -> None:
        """tw_attention: one call for the batch, its dimensions written to linear memory (row-major inputs,
        batch.record_checked)."""
        node = nodes[step.node]
        o = node.options
        out = i32(self._result(node).ptr)
        if not node.size:
            return
        q, k, v, *mask = (i32(storage(nodes, i).buffer.ptr) for i in node.inputs)
        batch_dims = words(o["dims"])
        dims = self._alloc(max(batch_dims.nbytes, 4), "the batch dimensions")
        try:
            self.module.write(dims.ptr, batch_dims)
            shape = (o["l"], o["s"], o["e"], o["ev"], o["batch"])
            strides = o["mask"] if mask else (0, 0)
            args = (*shape, i32(dims.ptr), len(o["dims"]), o["scale"], int(o["causal"]), *strides)
            self.module.call("tw_attention", q, k, v, mask[0] if mask else 0, out, *args)
        finally:
            self.free(dims)


def words(rows: list) -> memoryview:
    """The integers of `rows` (tuples) as little-endian i32 words (wasm's byte order)."""
    out = array.array("i", [w for row in rows for w in row])
    if sys.byteorder == "big":
        out.byteswap()
    return memoryview(out)


def symbol(node: Node, nodes: list[Node]) -> str:
    """The module's export that runs a node's op (`export`, for the dtypes graph.function reads)."""
    compute = nodes[node.inputs[-1]].dtype if node.inputs else node.dtype
    return export(node.op, compute, node.dtype)


#: templates with one export for every op and dtype (flags pick): softmax and log_softmax; sort and argsort of
#: every dtype (a key kind); searchsorted
SHARED = {"softmax": "tw_softmax", "sort": "tw_sort", "search": "tw_searchsorted", "attention": "tw_attention"}


def export(op, compute: DType, out: DType) -> str:
    """The module's export of `op` computing in `compute`, returning `out`: tw_<name>, an elementwise op's with
    the suffix of its WGSL function for those dtypes (ops.Op.function), another kind's with its dtype's
    suffix (tw_sum_i32); a template of SHARED's has one export for all its ops and dtypes."""
    if op.row.template in SHARED:
        return SHARED[op.row.template]
    if op.elementwise:
        return "tw_" + op.name + op.function(compute, out)[len(op.wgsl) :]
    return f"tw_{op.name}{compute.suffix}"


#: kernel template -> the executor method that runs a step of it
RUNNERS = {
    "map": WasmExecutor._map,
    "reduce": WasmExecutor._reduce,
    "rows": WasmExecutor._rows,
    "softmax": WasmExecutor._softmax,
    "matmul": WasmExecutor._matmul,
    "conv2d": WasmExecutor._conv2d,
    "scan": WasmExecutor._scan,
    "scatter": WasmExecutor._scatter,
    "sort": WasmExecutor._sort,
    "search": WasmExecutor._search,
    "attention": WasmExecutor._attention,
}
