"""The NumPy backend: runs the same planned graph on the CPU, each op by its catalog `numpy` function,
called the way its kind says (kinds.KindRow.numpy)."""

from __future__ import annotations

import platform

from ..graph import MapStep, Node, OpStep, Step, storage
from ..host import HostData
from ..stats import Stats, tally
from .base import CPU_LIMITS, upload_pending


CHUNK = 65536  # elements of a fused chain evaluated together (256 KiB per value: a few stay in L2)


class NumpyExecutor:
    """CPU fallback on NumPy; transfers are zero, dispatches count the steps it ran."""

    backend = "numpy"

    def __init__(self):
        import numpy

        self.np = numpy
        self.adapter_info = {"vendor": "numpy", "device": f"NumPy {numpy.__version__} on {platform.machine() or 'CPU'}",
                             "description": "CPU fallback", "software": True}
        self.limits = dict(CPU_LIMITS)

    def check_size(self, nbytes: int, what: str) -> None:
        """Host memory is the only limit here."""

    def upload(self, host: HostData, stats: tuple[Stats, ...]):
        data = self.np.frombuffer(host.data, dtype=self.np.float32).reshape(host.shape)
        return data if host.borrowed else data.copy()

    async def execute(self, nodes: list[Node], steps: list[Step], stats: tuple[Stats, ...]) -> None:
        upload_pending(self, nodes, stats)
        for step in steps:
            if isinstance(step, MapStep) and step.size > CHUNK and len(step.nodes) > 1:
                self._map_chunked(nodes, step)
                continue
            members = [step.node] if isinstance(step, OpStep) else step.nodes
            for nid in members:  # each op on whole arrays; a fused value lives until the step ends
                node = nodes[nid]
                result = self._compute(node, [self._value(nodes, i) for i in node.inputs])
                node.buffer = result if result.shape == node.shape else result.reshape(node.shape)
            for nid in members:
                if nodes[nid].fused_away:
                    nodes[nid].buffer = None
        if steps:
            tally(stats, dispatches=len(steps), submits=1)

    def _map_chunked(self, nodes: list[Node], step: MapStep) -> None:
        """A fused elementwise chain CHUNK elements at a time: its intermediates stay in cache (whole-array
        intermediates would each be a pass through memory), only its stored values are written."""
        np = self.np
        loads = {i: self._value(nodes, i).reshape(-1) for i in step.loads}  # a strided view: one flat copy
        outs = {nid: np.empty(nodes[nid].shape, dtype=np.float32) for nid in step.stores}
        flat_outs = {nid: out.reshape(-1) for nid, out in outs.items()}
        for lo in range(0, step.size, CHUNK):
            values = {i: a[lo:lo + CHUNK] for i, a in loads.items()}
            for nid in step.nodes:
                values[nid] = self._compute(nodes[nid], [values[i] for i in nodes[nid].inputs])
                if nid in flat_outs:
                    flat_outs[nid][lo:lo + CHUNK] = values[nid]
        for nid in step.nodes:
            nodes[nid].buffer = outs.get(nid)

    def _compute(self, node: Node, args: list):
        """One op on its input arrays, the way its kind calls it, as float32."""
        return self.np.asarray(node.op.row.numpy(node.op, args, node.params, node.options), dtype=self.np.float32)

    def _value(self, nodes: list[Node], i: int):
        """Node i's array; a view is NumPy's view of its base with the same strides (no copy); a masked
        view (padding) is zeros with its valid region copied in from such a view."""
        view = nodes[i].view
        if view is None:
            return nodes[i].buffer
        flat = storage(nodes, i).buffer.reshape(-1)
        if view.mask is None:
            return self._strided(flat, view.offset, view.shape, view.strides)
        out = self.np.zeros(view.shape, dtype=self.np.float32)
        shape = tuple(hi - lo for lo, hi in view.mask)
        if all(shape):
            offset = view.offset + sum(lo * s for (lo, _), s in zip(view.mask, view.strides))
            out[tuple(slice(lo, hi) for lo, hi in view.mask)] = self._strided(flat, offset, shape, view.strides)
        return out

    def _strided(self, flat, offset: int, shape, strides):
        start = flat[offset:]  # negative strides reach back before it
        return self.np.lib.stride_tricks.as_strided(start, shape, tuple(4 * s for s in strides), writeable=False)

    async def read(self, buffer, size: int, stats: tuple[Stats, ...], take: bool = False) -> memoryview:
        if take and buffer.size and buffer.base is None and buffer.flags.writeable and buffer.flags.c_contiguous:
            return memoryview(buffer.reshape(-1)).cast("B")  # an array an op made (uploads and views have a base): handed over
        return memoryview(self.np.array(buffer, dtype=self.np.float32, order="C").reshape(-1)).cast("B")  # a copy the caller owns

    def free(self, buffer) -> None:
        """NumPy arrays are freed by the garbage collector."""

    def close(self) -> None:
        """Nothing to release."""
