"""The wasm-simd executor's runners: one function per kernel template that runs a plan step as calls of the
module's exports (`export` names them), with the scratch, copies and argument words each call needs.

A map step runs the per-op kernels one after another over cache-sized chunks, the intermediates of a fused
chain living only in chunk-sized scratch; an op step is one kernel call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..dtypes import DType
from ..graph import MapStep, MatmulStep, Node, OpStep, ReduceStep, RowStep, gathers, row_reduction, storage
from ..sort_kinds import key_kind
from .wasm_module import i32, words

if TYPE_CHECKING:
    from .wasm_simd import WasmExecutor

CHUNK = 16384  # floats per map-step pass (64 KiB per value: the chain's working set stays in L2)


def run_map(ex: WasmExecutor, nodes: list[Node], step: MapStep) -> None:
    """The chain in chunks: stored values go to their buffers, the others to chunk-sized scratch.
    With nothing fused away there is nothing to keep in cache: one call per op over the whole array."""
    call = ex.module.call
    n = step.size
    stores = set(step.stores)
    for nid in step.stores:
        ex.result_buffer(nodes[nid])
    chunk = max(1, min(n, CHUNK if len(stores) < len(step.nodes) else n))
    scratch, gathered, strides = {}, {}, {}
    try:
        for nid in step.nodes:
            if nid not in stores:
                scratch[nid] = ex.alloc(chunk * 4, "a fused intermediate")
        for nid in step.loads:  # strided views (broadcasts, transposes, slices): a row-major copy first
            copy = ex.gather(nodes, nid)
            if copy is not None:
                gathered[nid] = copy
        for nid in step.nodes:  # a generator's strides= (the index iota): (size, stride), the last dimension first
            if "strides" in nodes[nid].options:
                dims = list(zip(nodes[nid].shape, nodes[nid].options["strides"]))[::-1] or [(1, 0)]
                strides[nid] = (ex.alloc(8 * len(dims), "a generator's strides"), len(dims))
                ex.module.write(strides[nid][0].ptr, words(dims))

        def at(nid: int, offset: int) -> int:
            if nid in scratch:
                return i32(scratch[nid].ptr)
            buf = gathered.get(nid) or storage(nodes, nid).buffer
            return i32(buf.ptr + nodes[nid].dtype.itemsize * offset)

        for offset in range(0, n, chunk):
            count = min(chunk, n - offset)
            for nid in step.nodes:
                node = nodes[nid]
                if node.op.generator:  # no inputs: the index of the chunk's first element instead
                    call(symbol(node, nodes), at(nid, offset), count, offset, *node.params, *_dims(strides, nid))
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
            ex.free(buf)


def _dims(strides: dict, nid: int) -> tuple:
    """The (address, count) arguments of a generator's strides, or none."""
    return (i32(strides[nid][0].ptr), strides[nid][1]) if nid in strides else ()


def run_reduce(ex: WasmExecutor, nodes: list[Node], step: OpStep | ReduceStep) -> None:
    """All of the input as one row, or (option rows) R rows, in one kernel call; a strided input is
    gathered first. A fused chain (ReduceStep) runs before, storing only what the reduction reads."""
    if isinstance(step, ReduceStep):
        chain = step.chain(nodes)
        try:
            run_map(ex, nodes, chain)
            run_reduce(ex, nodes, OpStep(step.node))
        finally:
            for nid in chain.stores:
                if nodes[nid].buffer is not None:
                    ex.free(nodes[nid].buffer)
                    nodes[nid].buffer = None
        return
    node = nodes[step.node]
    rows = node.options.get("rows")
    n = nodes[node.inputs[0]].size
    gathered = [ex.gather(nodes, i) for i in node.inputs]
    try:
        ptrs = [i32((g or storage(nodes, i).buffer).ptr) for g, i in zip(gathered, node.inputs)]
        ex.module.call(
            symbol(node, nodes),
            *ptrs,
            i32(ex.result_buffer(node).ptr),
            1 if rows is None else rows,
            n // rows if rows else n,
        )
    finally:
        for g in gathered:
            if g is not None:
                ex.free(g)


def run_rows(ex: WasmExecutor, nodes: list[Node], step: RowStep) -> None:
    """A row step op by op on whole arrays (broadcast row values gathered like any view); its fused
    values live in buffers of their own until the step ends."""
    try:
        for nid in step.nodes:
            node = nodes[nid]
            if row_reduction(node):
                run_reduce(ex, nodes, OpStep(nid))
            else:
                run_map(ex, nodes, MapStep(node.size, list(node.inputs), [nid], [nid]))
    finally:
        for nid in step.nodes:
            if nodes[nid].fused_away and nodes[nid].buffer is not None:
                ex.free(nodes[nid].buffer)
                nodes[nid].buffer = None


def run_scan(ex: WasmExecutor, nodes: list[Node], step: OpStep) -> None:
    """One kernel call over the rows (all of the input as one row without the option); the input is
    row-major (batch.record_checked)."""
    node = nodes[step.node]
    rows = node.options.get("rows") or 1
    out = ex.result_buffer(node)
    if node.size:
        src = storage(nodes, node.inputs[0]).buffer
        ex.module.call(symbol(node, nodes), i32(src.ptr), i32(out.ptr), rows, node.size // rows)


def run_scatter(ex: WasmExecutor, nodes: list[Node], step: OpStep) -> None:
    """scatter_add: one call copies x and adds the values at their positions in order."""
    node = nodes[step.node]
    x, index, values = (i32(storage(nodes, i).buffer.ptr) for i in node.inputs)
    o, unsigned = node.options, nodes[node.inputs[1]].dtype.kind == "unsigned"
    ex.module.call(
        symbol(node, nodes), x, index, values, i32(ex.result_buffer(node).ptr), node.size,
        nodes[node.inputs[1]].size, o["outer"], o["n"], o["inner"], int(unsigned),
    )  # fmt: skip


def run_softmax(ex: WasmExecutor, nodes: list[Node], step: OpStep) -> None:
    node = nodes[step.node]
    cols = node.shape[-1] if node.shape else 1
    rows = node.size // cols if cols else 0
    out = ex.result_buffer(node)
    if node.size:
        ex.module.call(
            symbol(node, nodes),
            i32(storage(nodes, node.inputs[0]).buffer.ptr),
            i32(out.ptr),
            rows,
            cols,
            int(node.op.name == "log_softmax"),
        )


def run_matmul(ex: WasmExecutor, nodes: list[Node], step: OpStep | MatmulStep) -> None:
    """One product: tw_matmul; a batch: tw_matmul_batch, one call that walks the batch dimensions
    (their sizes and strides written to linear memory for it). A transposed operand is copied row-major
    first (the module's kernel packs B and streams A along rows). A matmul step's chain runs after its
    product (run_map), the product's buffer freed after it where nothing else reads it."""
    if isinstance(step, MatmulStep):
        try:
            run_matmul(ex, nodes, OpStep(step.node))
            run_map(ex, nodes, step.chain())
        finally:
            product = nodes[step.node]
            if product.fused_away and product.buffer is not None:
                ex.free(product.buffer)
                product.buffer = None
        return
    node = nodes[step.node]
    o = node.options
    copies = [  # an operand given transposed (options ta, tb): a row-major copy of it
        ex.transposed(storage(nodes, i)) if o.get(t) else None for i, t in zip(node.inputs, ("ta", "tb"))
    ]
    a, b = (i32((t or storage(nodes, i).buffer).ptr) for t, i in zip(copies, node.inputs))
    c, mkn = i32(ex.result_buffer(node).ptr), (o["m"], o["k"], o["n"])
    try:
        if not o["dims"]:
            if o["batch"]:
                ex.module.call(symbol(node, nodes), a, b, c, *mkn)
            return
        batch_dims = words(o["dims"])
        dims = ex.alloc(batch_dims.nbytes, "the batch dimensions")
        try:
            ex.module.write(dims.ptr, batch_dims)
            batched = "tw_matmul_batch" + node.dtype.suffix  # float32's, or an integer's (tw_matmul_batch_i32)
            ex.module.call(batched, a, b, c, *mkn, o["batch"], i32(dims.ptr), len(o["dims"]))
        finally:
            ex.free(dims)
    finally:
        for t in copies:
            if t is not None:
                ex.free(t)


def run_conv2d(ex: WasmExecutor, nodes: list[Node], step: OpStep) -> None:
    node = nodes[step.node]
    img, ker = (nodes[i] for i in node.inputs)
    ex.module.call(
        symbol(node, nodes),
        i32(storage(nodes, img.id).buffer.ptr),
        *img.shape,
        i32(storage(nodes, ker.id).buffer.ptr),
        *ker.shape,
        i32(ex.result_buffer(node).ptr),
    )


def run_sort(ex: WasmExecutor, nodes: list[Node], step: OpStep) -> None:
    """tw_sort over the rows (a strided input gathered first), with 16 bytes of scratch per column."""
    node = nodes[step.node]
    n = node.shape[-1]
    out = ex.result_buffer(node)
    if not node.size:
        return
    gathered = ex.gather(nodes, node.inputs[0])
    scratch = ex.alloc(16 * n, "the sort's scratch")
    try:
        src = gathered or storage(nodes, node.inputs[0]).buffer
        flags = (
            key_kind(nodes[node.inputs[0]].dtype),
            int(node.options["descending"]),
            int(node.op.name == "argsort"),
        )
        ex.module.call("tw_sort", i32(src.ptr), i32(out.ptr), node.size // n, n, *flags, i32(scratch.ptr))
    finally:
        ex.free(scratch)
        if gathered is not None:
            ex.free(gathered)


def run_search(ex: WasmExecutor, nodes: list[Node], step: OpStep) -> None:
    """tw_searchsorted: a binary search in x1 per element of x2 (strided inputs gathered first)."""
    node = nodes[step.node]
    out = ex.result_buffer(node)
    x1, x2 = node.inputs
    gathered = [ex.gather(nodes, i) for i in node.inputs]
    try:
        a, b = (i32((g or storage(nodes, i).buffer).ptr) for g, i in zip(gathered, node.inputs))
        right = int(node.options["side"] == "right")
        kind = key_kind(nodes[x1].dtype)
        ex.module.call("tw_searchsorted", a, nodes[x1].size, b, node.size, i32(out.ptr), kind, right)
    finally:
        for g in gathered:
            if g is not None:
                ex.free(g)


def run_attention(ex: WasmExecutor, nodes: list[Node], step: OpStep) -> None:
    """tw_attention: one call for the batch, its dimensions written to linear memory; q, k and v given as
    strided views (kinds.KindRow.views) gathered row-major first."""
    node = nodes[step.node]
    o = node.options
    out = i32(ex.result_buffer(node).ptr)
    if not node.size:
        return
    gathered = []  # freed at the end: the views' copies, then the batch dimensions' words
    try:
        for i in node.inputs:
            gathered.append(ex.gather(nodes, i))
        q, k, v, *mask = (i32((g or storage(nodes, i).buffer).ptr) for g, i in zip(gathered, node.inputs))
        batch_dims = words(o["dims"])
        dims = ex.alloc(max(batch_dims.nbytes, 4), "the batch dimensions")
        gathered.append(dims)
        ex.module.write(dims.ptr, batch_dims)
        shape = (o["l"], o["s"], o["e"], o["ev"], o["batch"])
        strides = o["mask"] if mask else (0, 0)
        args = (*shape, i32(dims.ptr), len(o["dims"]), o["scale"], int(o["causal"]), *strides)
        ex.module.call("tw_attention", q, k, v, mask[0] if mask else 0, out, *args)
    finally:
        for buf in gathered:
            if buf is not None:
                ex.free(buf)


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


#: kernel template -> the function that runs a step of it on the executor
RUNNERS = {
    "map": run_map,
    "reduce": run_reduce,
    "rows": run_rows,
    "softmax": run_softmax,
    "matmul": run_matmul,
    "conv2d": run_conv2d,
    "scan": run_scan,
    "scatter": run_scatter,
    "sort": run_sort,
    "search": run_search,
    "attention": run_attention,
}
