"""The NumPy backend: runs the same planned graph on the CPU, each op by its catalog `numpy` function."""

from __future__ import annotations

import platform

from ..graph import MapStep, Node, OpStep
from ..host import HostData
from ..stats import Stats, tally
from .base import CPU_LIMITS, upload_pending


def run_op(np, node: Node, args: list):
    """One node's result from its input arrays, by the catalog row."""
    op = node.op
    if op.elementwise or op.kind == "reduce":  # same length, any shapes: flat, as the WGSL kernels see them
        args = [a.reshape(-1) for a in args]
    if op.elementwise:
        return op.numpy(*args, *node.params)
    if op.kind == "reduce":
        return np.asarray([op.numpy(*args)], dtype=np.float32)
    if op.kind == "matmul":
        o = node.options
        return op.numpy(args[0].reshape(o["m"], o["k"]), args[1].reshape(o["k"], o["n"]))
    return op.numpy(*args)


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
        return self.np.frombuffer(host.data, dtype=self.np.float32).reshape(host.shape).copy()

    async def execute(self, nodes: list[Node], steps: list[MapStep | OpStep], stats: tuple[Stats, ...]) -> None:
        upload_pending(self, nodes, stats)
        for step in steps:
            values = {}
            for nid in step.nodes if isinstance(step, MapStep) else [step.node]:
                node = nodes[nid]
                args = [values[i] if i in values else nodes[i].buffer for i in node.inputs]
                values[nid] = run_op(self.np, node, args).astype(self.np.float32, copy=False).reshape(node.shape)
            for nid in step.stores if isinstance(step, MapStep) else [step.node]:
                nodes[nid].buffer = values[nid]
        if steps:
            tally(stats, dispatches=len(steps), submits=1)

    async def read(self, node: Node, stats: tuple[Stats, ...]) -> memoryview:
        return memoryview(self.np.array(node.buffer, dtype=self.np.float32, order="C").reshape(-1)).cast("B")  # a copy the caller owns

    def free(self, buffer) -> None:
        """NumPy arrays are freed by the garbage collector."""

    def close(self) -> None:
        """Nothing to release."""
