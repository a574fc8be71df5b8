"""The NumPy backend: runs the same planned graph on the CPU, each op by its catalog `numpy` function,
called the way its kind says (kinds.KindRow.numpy)."""

from __future__ import annotations

import platform

from ..dtypes import bool_
from ..graph import MapStep, MatmulStep, Node, OpStep, Plan, Step, computes, map_only, storage
from ..host import HostData
from ..stats import Stats, tally
from .array_pool import ArrayPool
from .base import CPU_LIMITS, WIDE_DTYPES, CpuExecutor

CHUNK = 262144  # elements of a fused chain with temporaries run together (1 MiB a value; smaller chunks pay each
# op's Python call more often)
POOL_FROM = 32768  # elements (128 KiB): smaller arrays come from malloc's heap, which keeps their pages anyway


class NumpyExecutor(CpuExecutor):
    """CPU fallback on NumPy; transfers are zero, dispatches count the steps it ran."""

    backend = "numpy"
    dtypes = WIDE_DTYPES  # NumPy's own arrays: float64 and int64 too

    def __init__(self):
        import numpy

        self.np = numpy
        self.adapter_info = {
            "vendor": "numpy",
            "device": f"NumPy {numpy.__version__} on {platform.machine() or 'CPU'}",
            "description": "CPU fallback",
            "software": True,
        }
        self.limits = dict(CPU_LIMITS)
        self.pool = ArrayPool(numpy)  # uploads and fused chains' values: their pages are reused

    def check_size(self, nbytes: int, what: str) -> None:
        """Host memory is the only limit here."""

    def upload(self, host: HostData, stats: tuple[Stats, ...]):
        data = self._words(host).reshape(host.shape)
        if host.borrowed or host.dtype is bool_:  # a bool array is a new one already
            return data
        if host.size < POOL_FROM:
            return data.copy()
        out = self.pool.take(host.shape, data.dtype)
        self.np.copyto(out, data)
        return out

    def _words(self, host: HostData):
        """The host data as a flat NumPy array of its dtype (bool: from its 0/1 words)."""
        if host.dtype is bool_:
            return self.np.frombuffer(host.data, dtype=self.np.uint32) != 0
        return self.np.frombuffer(host.data, dtype=host.dtype.name)

    async def execute(self, nodes: list[Node], plan: Plan, stats: tuple[Stats, ...], read: int | None = None) -> None:
        fills = self._upload_pending(nodes)
        with self.np.errstate(all="ignore"):  # NaN/Inf are data: one switch for the graph, not one per op
            try:
                self._run(nodes, plan, fills)
            finally:
                self._fill(nodes, list(fills), fills)  # uploads nothing read: the batch may read them
        if plan.steps:
            tally(stats, dispatches=len(plan.steps), submits=1)

    def _run(self, nodes: list[Node], plan: Plan, fills: dict) -> None:
        """The plan's steps in order, each op on whole arrays but for fused chains (_map); a matmul step's
        product, then its chain."""
        for step in plan.steps:
            if isinstance(step, MatmulStep):
                self._step(nodes, OpStep(step.node), fills, keep=True)
                self._step(nodes, step.chain(), fills)
                if nodes[step.node].fused_away:
                    nodes[step.node].buffer = None
            else:
                self._step(nodes, step, fills)

    def _step(self, nodes: list[Node], step: Step, fills: dict, keep: bool = False) -> None:
        """One step (`keep`: its values stay, fused away or not, for the chain that reads them next)."""
        if isinstance(step, MapStep) and len(step.nodes) > 1 and step.size >= POOL_FROM:
            self._map(nodes, step, fills)
            return
        members = computes(step)
        last = {storage(nodes, i).id: nid for nid in members for i in nodes[nid].inputs}  # views read their base
        inside = set(members) if len(members) > 1 else None
        for nid in members:  # each op on whole arrays; a fused value lives until the step ends
            node = nodes[nid]
            if fills:
                self._fill(nodes, node.inputs, fills)
            out = self._out(nodes, node, last, inside) if inside else None
            result = self._compute(node, [self._value(nodes, i) for i in node.inputs], out)
            node.buffer = result if result.shape == node.shape else result.reshape(node.shape)
        for nid in members:
            if nodes[nid].fused_away and not keep:
                nodes[nid].buffer = None

    def _out(self, nodes: list[Node], node: Node, last: dict, members: set):
        """Where a fused step's elementwise member that takes out= writes (flat), else None: in place of a
        member's value it reads for the last time, directly or through a view (`last`: storage id -> its last
        reader), that nothing else keeps (var's centred values squared where they are), else a pooled array
        (its pages warm from the last call, not fresh ones to fault in)."""
        if not (node.op.writes_out and node.op.row.elementwise):
            return None
        for i in node.inputs:
            n = nodes[i]
            if n.view is None and last.get(i) == node.id and i in members and n.fused_away and n.buffer is not None:
                if n.buffer.dtype == node.dtype.name and n.buffer.shape == node.shape and n.buffer.flags.c_contiguous:
                    return n.buffer.reshape(-1)
        return self.pool.take((node.size,), node.dtype.name)

    def _upload_pending(self, nodes: list[Node]) -> dict:
        """Give every node still holding host data its array: the data itself where it is borrowed, a copy
        where it is small, else a pooled array filled where it is first read (a chunked chain copies it in
        as it reads it). Returns those waiting: node id -> its host data, flat."""
        fills = {}
        for node in nodes:
            if node.host is not None and node.buffer is None:
                if node.host.borrowed or node.size < POOL_FROM:
                    node.buffer = self.upload(node.host, ())
                else:
                    fills[node.id] = self._words(node.host)
                    node.buffer = self.pool.take(node.host.shape, fills[node.id].dtype)
                node.host = None
        return fills

    def _fill(self, nodes: list[Node], ids, fills: dict) -> None:
        """Copy in the host data of the uploads under nodes `ids` that still wait for it."""
        for i in ids:
            src = fills.pop(storage(nodes, i).id, None)
            if src is not None:
                self.np.copyto(storage(nodes, i).buffer.reshape(-1), src)

    def _map(self, nodes: list[Node], step: MapStep, fills: dict) -> None:
        """A fused elementwise chain of two ops or more, of POOL_FROM elements or more (one op runs as NumPy's
        call alone, its result a new array as NumPy's own). Ops that take out= write into pooled arrays, in
        place of an input that nothing reads afterwards where there is one (relu -> scale -> add: one array,
        as NumPy's own temporaries). A chain longer than CHUNK elements with an op that makes temporaries of
        its own (its float64 paths) runs CHUNK at a time (they stay in cache), copying in the uploads it is
        first to read as it goes; one whose every op writes out= runs whole (NumPy streams each op at the same
        speed either way, and chunks would only add Python calls)."""
        ops = [nodes[nid].op for nid in step.nodes]  # a generator (tw.random) or a gather: no chunks
        whole = any(map_only(nodes[nid]) for nid in step.nodes)  # they index from the chain's first element
        chunked = step.size > CHUNK and not all(op.writes_out for op in ops) and not whole
        self._fill(nodes, [i for i in step.loads if not chunked or nodes[i].view is not None], fills)
        copies = [(nodes[i].buffer.reshape(-1), fills[i]) for i in step.loads if i in fills]
        values = {i: self._value(nodes, i).reshape(-1) for i in step.loads}  # a strided view: one flat copy
        chain = self._chain(nodes, step, chunked)
        for lo in range(0, step.size, CHUNK) if chunked else (0,):
            hi = lo + CHUNK if chunked else step.size
            for to, src in copies:
                to[lo:hi] = src[lo:hi]
            part = {i: a[lo:hi] for i, a in values.items()} if chunked else values
            for nid, node, out, flat, dead in chain:
                out = out if out is None or not chunked else out[lo:hi]
                result = self._compute(node, [part[i] for i in node.inputs], out, flat)
                if out is not None and result is not out:
                    out[...] = result  # an op without out= in a chunked chain: its stored value
                part[nid] = result if flat else result.reshape(-1)  # a generator's: of its own shape
                for i in dead:  # an intermediate read for the last time: its array goes
                    del part[i]
        for i in step.loads:
            fills.pop(i, None)  # copied in (were the loop cut short, execute's finally copies it whole)
        for nid, node, out, _, _ in chain:
            if nid in step.stores:
                node.buffer = out if out is not None else part[nid]
                if node.buffer.shape != node.shape:
                    node.buffer = node.buffer.reshape(node.shape)
            else:
                node.buffer = None

    def _chain(self, nodes: list[Node], step: MapStep, chunked: bool) -> list[tuple]:
        """The chain's members in order as (id, node, the flat array it is written to or None, whether its inputs
        are flat arrays of the op's own (not a generator's or a gather's), the intermediates it reads last).
        Written to: the ops taking out=, and in a chunked chain every stored value. An intermediate's array
        passes to the op that reads it last (in place), or once dead to the next op that needs one: a deep chain
        cycles through a few arrays that stay in cache, as NumPy's own temporaries do."""
        last = {i: nid for nid in step.nodes for i in nodes[nid].inputs}
        stores = set(step.stores)
        members = set(step.nodes)
        holds: dict[int, tuple[str, object]] = {}  # a member whose value is in an array of ours -> (dtype, array)
        free: dict[str, list] = {}  # dtype -> arrays whose values are dead (the last freed first: still in cache)
        chain = []
        for nid in step.nodes:
            node = nodes[nid]
            dead = [i for i in dict.fromkeys(node.inputs) if last[i] == nid and i in members and i not in stores]
            out = None
            if node.op.writes_out:
                kind = node.dtype.name
                for i in dead:
                    if i in holds and holds[i][0] == kind:
                        out = holds.pop(i)[1]
                        break
                else:
                    spare = free.get(kind)
                    out = spare.pop() if spare else self.pool.take((step.size,), kind)
                holds[nid] = (kind, out)
            elif chunked and nid in stores:
                out = self.pool.take((step.size,), node.dtype.name)
            for i in dead:
                if i in holds:
                    kind, array = holds.pop(i)
                    free.setdefault(kind, []).append(array)
            chain.append((nid, node, out, not map_only(node), dead))
        return chain

    def _compute(self, node: Node, args: list, out=None, flat: bool = False):
        """One op on its input arrays, the way its kind calls it, as the node's dtype (astype converts here);
        `out` (elementwise ops): written and returned where the op takes out= (kinds._map_numpy). `flat`: the
        arrays are a fused chain's, flat and of the same length, and the op elementwise: kinds._map_numpy's
        call without its reshapes, warnings being off already (execute)."""
        op = node.op
        if not flat:
            result = op.row.numpy(op, args, node.params, node.options, *(() if out is None else (out,)))
        elif out is not None and op.writes_out:
            return op.numpy_quiet(*args, *node.params, out=out)
        else:
            result = op.numpy_quiet(*args, *node.params)
        if result is out:
            return result
        kind = getattr(result, "dtype", None)
        if kind is None or kind == node.dtype.name:
            return self.np.asarray(result, dtype=node.dtype.name)
        if node.dtype.integral and kind.kind == "f":  # a cast: float64 past float32's range is +-inf, as NumPy's
            return _float_to_int(self.np, result, node.dtype.name)  # WGSL's conversion: saturating, NaN to 0
        return self.np.asarray(result, dtype=node.dtype.name)

    def _value(self, nodes: list[Node], i: int):
        """Node i's array; a view is NumPy's view of its base with the same strides (no copy); a masked
        view (padding) is zeros with its valid region copied in from such a view."""
        view = nodes[i].view
        if view is None:
            return nodes[i].buffer
        flat = storage(nodes, i).buffer.reshape(-1)
        if view.mask is None:
            return self._strided(flat, view.offset, view.shape, view.strides)
        out = self.np.zeros(view.shape, dtype=flat.dtype)
        shape = tuple(hi - lo for lo, hi in view.mask)
        if all(shape):
            offset = view.offset + sum(lo * s for (lo, _), s in zip(view.mask, view.strides))
            out[tuple(slice(lo, hi) for lo, hi in view.mask)] = self._strided(flat, offset, shape, view.strides)
        return out

    def _strided(self, flat, offset: int, shape, strides):
        start = flat[offset:]  # negative strides reach back before it
        return self.np.lib.stride_tricks.as_strided(
            start, shape, tuple(flat.itemsize * s for s in strides), writeable=False
        )

    async def read(self, buffer, nbytes: int, stats: tuple[Stats, ...], take: bool = False) -> memoryview:
        if (
            take
            and buffer.dtype != bool
            and buffer.size
            and (
                (buffer.base is None and buffer.flags.writeable and buffer.flags.c_contiguous)
                or self.pool.give_away(buffer)
            )
        ):
            return memoryview(buffer.reshape(-1)).cast("B")  # an op's own array or the pool's: handed over
        word = self.np.uint32 if buffer.dtype == bool else buffer.dtype  # bool: 32-bit words of 0 and 1
        return memoryview(self.np.array(buffer, dtype=word, order="C").reshape(-1)).cast("B")  # a copy the caller owns

    def free(self, buffer) -> None:
        """Nothing to do: an array goes (back to the pool, or to the allocator) once nothing refers to it."""

    def close(self) -> None:
        """Forget the pool's arrays."""
        self.pool.clear()


def _float_to_int(np, x, name: str):
    """Float values as integers of dtype `name` the way the kernels convert them: toward zero, saturating
    at the dtype's range, NaN to 0 (NumPy's own cast leaves those undefined)."""
    info = np.iinfo(name)
    wide = np.asarray(x, dtype=np.float64)  # float16's nan_to_num would make Inf its own 65504
    clipped = np.clip(np.nan_to_num(wide, nan=0.0), float(info.min), float(info.max))
    return np.where(clipped >= float(info.max), info.max, clipped.astype(np.int64)).astype(name)
