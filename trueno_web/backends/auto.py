"""`auto` on a hardware GPU: every execute() runs where it is fastest.

Small work runs on the CPU fallback (a GPU round trip has a fixed cost before any work), large work on
the GPU. A batch's step counts as large when its work reaches the threshold of its template below: the
crossovers of one-shot calls (upload, run, read back) measured with bench/auto.py (docs/benchmarks.md).
Data already on one side stays there unless the batch is large enough for the other to win. Software
adapters (lavapipe, SwiftShader) never get here: `auto` gives them the CPU fallback outright.
"""

from __future__ import annotations

from ..graph import MatmulStep, Node, OpStep, Plan, Step, computes, reads, storage, template
from ..host import HostData
from ..stats import Stats
from .gpu import GpuBuffer, GpuExecutor

# where the GPU starts to win, in units of work (see `work`); the measurements behind each are in
# docs/benchmarks.md ("Notes moved from code comments")
GPU_FROM = {
    "map": 1 << 21,  # elements x op cost^2
    "reduce": 1 << 22,  # input elements
    "rows": 1 << 22,  # input elements x op cost^2, as a full reduction (not measured on its own yet)
    "softmax": 1 << 18,  # elements
    "matmul": 1 << 29,  # m*k*n
    "conv2d": 1 << 20,  # output x kernel elements
    "scan": 1 << 22,  # elements, as a full reduction (not measured on its own yet)
    "scatter": 1 << 21,  # output + index elements (not measured)
    "sort": 1 << 20,  # elements x log2(row length) (not measured yet)
    "search": 1 << 20,  # elements of x2 x log2(len(x1)) (not measured yet)
    "attention": 1 << 27,  # (query, key) pairs x (E + Ev), as matmul's m*k*n (not measured yet)
}


def work(step: Step, nodes: list[Node]) -> tuple[str, int]:
    """(template, amount) of a plan step, in GPU_FROM's units. Each op weighs by its cost squared: the host's
    time per element grows faster than the cost says (NumPy's float64 gelu takes 30x relu's time at 2^20),
    while a GPU map kernel stays memory-bound."""
    ids = computes(step)
    amount = sum(
        nodes[i].op.cost ** 2
        * nodes[i].op.row.work(nodes[i].shape, [nodes[j].shape for j in nodes[i].inputs], nodes[i].options)
        for i in ids
    )
    return template(step, nodes), amount


def step_inputs(step: Step, nodes: list[Node]) -> list[int]:
    """The nodes whose storage a step reads (a view's base)."""
    return [storage(nodes, i).id for i in reads(step, nodes)]


class AutoExecutor:
    """Routes each execute() to the GPU executor or the CPU one; buffers say where they live."""

    backend = "auto"

    def __init__(self, gpu: GpuExecutor, cpu):
        self.gpu = gpu
        self.cpu = cpu
        self.adapter_info = dict(gpu.adapter_info, cpu_fallback=cpu.backend)
        self.limits = dict(gpu.limits)
        self.dtypes = gpu.dtypes & cpu.dtypes  # a buffer may live on either

    @property
    def fuse_budget(self) -> int:
        """The GPU's planning budget: a plan is made before its steps are routed."""
        return self.gpu.fuse_budget

    @property
    def epilogue_budget(self) -> int:
        """The GPU's, as fuse_budget."""
        return self.gpu.epilogue_budget

    def owner(self, buffer):
        return self.gpu if isinstance(buffer, GpuBuffer) else self.cpu

    def fits_gpu(self, nbytes: int) -> bool:
        return nbytes <= self.limits["max_storage_buffer_binding_size"]

    def check_size(self, nbytes: int, what: str) -> None:
        """Nothing is too large here: what does not fit one GPU binding runs on the CPU."""

    def check_rows(self, cols: int) -> None:
        """Nothing at record time: where the steps run is picked at execute (the GPU's kernels check there)."""

    def upload(self, host: HostData, stats: tuple[Stats, ...]):
        """Resident data goes where work of its size runs best."""
        big = host.size >= GPU_FROM["map"] and self.fits_gpu(host.size * 4)
        return (self.gpu if big else self.cpu).upload(host, stats)

    def pick(self, nodes: list[Node], steps: tuple[Step, ...], used: set[int]):
        """The executor for these steps, which read the storage nodes `used`: the GPU when any step is large
        or most of the resident data they read lives there, and every array fits it; else the CPU."""
        gpu = any(amount >= GPU_FROM[kind] for kind, amount in (work(s, nodes) for s in steps))
        if not gpu:
            on_gpu = on_cpu = 0
            for i in used:
                buffer = nodes[i].buffer
                if buffer is not None:
                    if isinstance(buffer, GpuBuffer):
                        on_gpu += nodes[i].size
                    else:
                        on_cpu += nodes[i].size
            gpu = on_gpu > on_cpu
        if gpu:
            arrays = [nodes[i] for i in used] + [nodes[s.node] for s in steps if isinstance(s, (OpStep, MatmulStep))]
            gpu = all(self.fits_gpu(n.size * 4) for n in arrays)
        return self.gpu if gpu else self.cpu

    async def execute(self, nodes: list[Node], plan: Plan, stats: tuple[Stats, ...], read: int | None = None) -> None:
        """Run the plan where `pick` says, moving the inputs that live on the other side first."""
        if not plan.steps:
            return
        used = {i for step in plan.steps for i in step_inputs(step, nodes)}
        target = self.pick(nodes, plan.steps, used)
        for i in used:
            node = nodes[i]
            if node.buffer is not None and self.owner(node.buffer) is not target:
                data = await self.owner(node.buffer).read(node.buffer, node.dtype.itemsize * node.size, stats)
                words = memoryview(data).cast("B").cast(node.dtype.typecode)
                moved = target.upload(HostData(words, node.shape, dtype=node.dtype), stats)
                if not node.imported:
                    self.owner(node.buffer).free(node.buffer)
                node.buffer, node.imported = moved, False  # the batch owns (and frees) the copy
        await target.execute(nodes, plan, stats, read)

    def schedule(self, nodes: list[Node], plan: Plan, varying: set[int], stats: tuple[Stats, ...]) -> None:
        """No schedule: each replay picks its side again through execute()."""

    async def read(self, buffer, nbytes: int, stats: tuple[Stats, ...], take: bool = False) -> memoryview:
        return await self.owner(buffer).read(buffer, nbytes, stats, take)

    def free(self, buffer) -> None:
        self.owner(buffer).free(buffer)

    async def synchronize(self) -> None:
        await self.gpu.synchronize()

    def destroy(self) -> None:
        self.gpu.destroy()

    def close(self) -> None:
        self.gpu.close()
        self.cpu.close()
