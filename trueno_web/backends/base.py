"""The protocols of the backends (Executor, and the WebGPU Driver under GpuExecutor), the limit names
they report, and the pieces the CPU backends share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..errors import UnavailableError
from ..graph import Node, Plan
from ..host import HostData
from ..kernels.caps import EPILOGUE_BUDGET, FUSE_BUDGET
from ..stats import Stats

# The adapter limits every backend reports in `limits` (snake_case, as wgpu-py spells them with "-" for
# "_"; WebGPU's camelCase is `webgpu_limit_name`). The WebGPU drivers ask the device for the adapter's
# own values of all of them, not WebGPU's defaults.
LIMIT_NAMES = (
    "max_storage_buffer_binding_size",  # one binding: the largest array a kernel can see
    "max_buffer_size",
    "max_storage_buffers_per_shader_stage",  # bindings per kernel: bounds a fused group's inputs
    "max_compute_workgroups_per_dimension",
    "max_compute_workgroup_storage_size",  # matmul tiles: more than WebGPU's default 16 KiB where the adapter has it
)


def webgpu_limit_name(name: str) -> str:
    """WebGPU's JS spelling of a limit: max_buffer_size -> maxBufferSize."""
    first, *rest = name.split("_")
    return first + "".join(word.capitalize() for word in rest)


class Executor(Protocol):
    """Runs planned steps of a batch graph. Buffers are opaque to everything above this layer."""

    backend: str  # "webgpu" | "numpy" | "wasm-simd" | "auto"
    dtypes: frozenset[str]  # the names of the dtypes its buffers hold (WORD_DTYPES; the NumPy backend's add
    # float64 and int64): a tensor of another cannot be made on its device (dtypes.check_held)
    adapter_info: dict
    limits: dict  # name -> int, one entry per LIMIT_NAMES
    fuse_budget: int  # op costs (ops.Op.cost) one fused step holds at most: planner.plan's budget
    epilogue_budget: int  # op costs a matmul step's chain (its epilogue) holds at most: planner.plan's

    def check_size(self, nbytes: int, what: str) -> None:
        """Raise LimitError (naming the limit) if `what` cannot fit one buffer of this backend."""

    def check_rows(self, cols: int) -> None:
        """Raise LimitError where one reduction along rows of `cols` elements runs past this backend's loop
        budget (a WGSL executor's; checked when the op is recorded). CPU executors have none."""

    def upload(self, host: HostData, stats: tuple[Stats, ...]) -> object:
        """Host data to a backend buffer (counted as one upload)."""

    async def execute(self, nodes: list[Node], plan: Plan, stats: tuple[Stats, ...], read: int | None = None) -> None:
        """Upload pending host data, run the plan's steps in one submit, set `buffer` on every stored node. `read`:
        the id of a node the caller reads right after (a one-shot call): an executor whose driver stages reads
        joins that read's copy to the same submit; others ignore it."""

    def schedule(self, nodes: list[Node], plan: Plan, varying: set[int], stats: tuple[Stats, ...]) -> object | None:
        """The plan just executed on `nodes`, kept for replays (a jitted program's): an object whose
        `async run(given, stats)` submits it again with `given` (node id -> buffer) bound for the `varying`
        nodes and returns the buffers it took for the varying outputs not given (`release()` gives its own
        back); every other node keeps the buffer it has now. None where the executor replays through
        execute() (the CPU executors: their Python per step is the work itself)."""

    async def read(self, buffer: object, nbytes: int, stats: tuple[Stats, ...], take: bool = False) -> memoryview:
        """The first `nbytes` of a buffer: its elements as stored (bool: 32-bit words of 0 or 1, float16: two
        bytes each; counted as one download). `take`: the
        buffer is freed right after, unread (a one-shot call's result): a CPU backend may hand it over."""

    def free(self, buffer: object) -> None:
        """Give a buffer back (to a pool, or to the allocator)."""

    async def synchronize(self) -> None:
        """Return once every execute() so far has finished running (a CPU executor's have)."""

    def destroy(self) -> None:
        """Destroy the GPU device under it as a loss would (GpuDevice.destroy, for fault tests); a CPU
        executor has none and does nothing."""

    def close(self) -> None:
        """Release everything; the executor is unusable afterwards."""


Bind = tuple[int, object, int, int]  # (binding in group 0, raw buffer, byte offset, byte size)
WorkItem = tuple[object, tuple[Bind, ...], tuple[int, int]]  # (pipeline, binds, (x, y) workgroups): Driver.submit


class DriverBase:
    """What both WebGPU drivers share. `create` opens the GPU: find an adapter (`find_adapter`), or refuse with
    the platform's own advice (`NO_ADAPTER`); then a device with the limits and features the library asks for
    (`open_device`). The optional members of Driver have their defaults here."""

    NO_ADAPTER: str

    @classmethod
    async def create(cls, power_preference: str = "high-performance"):
        adapter = await cls.find_adapter(power_preference)
        if adapter is None:
            raise UnavailableError(cls.NO_ADAPTER)
        return cls(adapter, await cls.open_device(adapter))

    def hold_next(self, read: tuple[object, int] | None) -> None:
        """Driver.hold_next's default: nothing is held (each submit goes to the queue at once)."""

    def queue(self, work) -> None:
        """Driver.queue's default: submitted at once."""
        self.submit(work)

    async def synchronize(self) -> None:
        """Driver.synchronize's default: a read of a few bytes waits for every submit before it (the queue
        runs in order)."""
        probe = self.create_buffer(16)
        try:
            await self.read_buffer(probe, 4)
        finally:
            self.destroy_buffer(probe)


class Driver(Protocol):
    """What GpuExecutor (backends/gpu.py) needs from a WebGPU implementation: wgpu_native.WgpuNativeDriver
    on the desktop, browser.BrowserDriver under Pyodide. A driver moves bytes, compiles WGSL and records
    dispatches; kernels, the pipeline cache, buffer reuse, counters and limit checks live above it.

    Buffers (`raw`) and pipelines are the driver's own objects, opaque to the executor. Once the device is
    lost or destroyed, every call that needs it (create_buffer, write_buffer, compile, submit, read_buffer,
    settle) raises DeviceLostError. Other failures raise GpuError: at the call, where the implementation
    reports them there (wgpu-py), else at the next settle() (the browser's error scopes)."""

    adapter_info: dict  # vendor, architecture, device, description, backend_type, adapter_type ("CPU" for
    # a software adapter), software (bool: lavapipe, SwiftShader and other CPU adapters)
    limits: dict  # name -> int, one entry per LIMIT_NAMES: what the device was created with (the adapter's)
    features: frozenset  # WebGPU names of the optional features the device enabled: those the driver asks
    # for (the kernels use "subgroups") that the adapter has
    wgsl_enable_subgroups: bool  # the WGSL compiler wants `enable subgroups;` before the subgroup builtins

    def create_buffer(self, nbytes: int) -> object:
        """A new device buffer of `nbytes` (STORAGE | COPY_SRC | COPY_DST), contents undefined."""

    def destroy_buffer(self, raw: object) -> None:
        """Free a buffer from create_buffer() now; it must not be used again (nor be in later work)."""

    def write_buffer(self, raw: object, data: memoryview) -> None:
        """The bytes of `data` (any contiguous buffer) into `raw` from offset 0, ahead of any later submit.
        `data` is copied before this returns: the caller may change or drop it afterwards."""

    def compile(self, source: str, entry: str, checked: bool = True) -> object:
        """A compute pipeline of WGSL `source` at `entry`, layout "auto" (its bindings are group 0). `checked`
        False: the kernel's indices are in range and its loops end by construction (Dispatch.checked), so a
        driver that can may leave out the WGSL runtime's bounds checks and loop bounding (the desktop's
        wgpu-native does; a browser's WebGPU cannot)."""

    async def compile_many(self, jobs: Sequence[tuple[str, str, bool]]) -> list[object]:
        """The pipelines of every (source, entry, checked) of `jobs`, as compile() makes them, in order: all
        started before any is awaited, off the event loop (the browser's createComputePipelineAsync; worker threads
        on the desktop), so that a plan's kernels compile in parallel. Raises GpuError naming "compiling
        WGSL" at once where one fails (no pipeline of `jobs` is kept then), DeviceLostError as compile()."""

    def submit(self, work: Sequence[WorkItem]) -> None:
        """Every dispatch of `work`, in order, in one compute pass and one queue submit; returns without
        waiting for the GPU. Each entry is (pipeline from compile(), binds, (x, y) workgroups; z is 1);
        binds is a tuple of (binding, raw, byte offset, byte size) tuples in group 0, hashable: a driver
        may cache bind groups by it."""

    def queue(self, work: Sequence[WorkItem]) -> None:
        """submit() of work that ran before (a jitted program's schedule: validated then): the driver may
        keep it to go with later work in one submit while the GPU is busy, sent by any other use of the
        queue (a submit, write, read, destroy, synchronize) or the event loop's next turn; an error of its
        submit is raised by the call that sends it. Optional: DriverBase's default is submit()."""

    def hold_next(self, read: tuple[object, int] | None) -> None:
        """The next submit() is a one-shot call's, its read following at once: a driver that can holds it so
        that the read's copy goes to the queue in the same submit. `read`: (raw, nbytes) that read will ask
        for, or None where unknown. Optional: DriverBase's default holds nothing."""

    async def read_buffer(self, raw: object, nbytes: int) -> memoryview:
        """The first `nbytes` (a multiple of 4) of `raw`, once the work submitted before has run: a new,
        writable, contiguous buffer of exactly `nbytes` bytes (a memoryview over a bytearray, or a uint8
        NumPy array) that the caller owns: no one else refers to it, so it may be taken over without a
        copy (host.from_host does). Raises DeviceLostError if the device goes while it waits, GpuError
        if the read fails otherwise."""

    async def settle(self) -> None:
        """Raise GpuError for the first validation or out-of-memory error of the calls since the last
        settle() (where the driver defers them), and DeviceLostError if the device is lost; else return.
        The executor awaits it after every submit."""

    async def synchronize(self) -> None:
        """Return once every submit so far has run on the GPU (GpuDevice.synchronize). Optional: DriverBase's
        default reads a few bytes of a new buffer, which waits for the work queued before it."""

    def destroy(self) -> None:
        """Destroy the device as a loss would: later calls raise DeviceLostError (GpuDevice.destroy)."""

    def close(self) -> None:
        """Release what the driver holds itself (staging buffers, cached bind groups, threads); buffers
        from create_buffer() are the caller's to destroy first. The driver is not used afterwards."""


WORD_DTYPES = frozenset({"bool", "int32", "uint32", "float32", "float16"})  # what every backend holds: 32-bit
# words, and float16's halves
WIDE_DTYPES = WORD_DTYPES | {"int64", "float64", "complex64", "complex128"}  # NumPy's own arrays hold these too

CPU_LIMITS = {  # the CPU executors hold arrays in host memory: nothing is as tight as on a GPU
    "max_storage_buffer_binding_size": 2**62,
    "max_buffer_size": 2**62,
    "max_storage_buffers_per_shader_stage": 64,  # bounds the bindings of a fused group (planner.plan)
    "max_compute_workgroups_per_dimension": 2**31,
    "max_compute_workgroup_storage_size": 2**62,
}


class CpuExecutor:
    """The defaults the CPU executors share: no loop budget, no GPU device to destroy, the default planning
    budgets (an executor's `fuse_budget` and `epilogue_budget`: op costs one fused step and one matmul step's
    chain hold at most; read by batch.execute)."""

    fuse_budget = FUSE_BUDGET
    epilogue_budget = EPILOGUE_BUDGET

    def check_rows(self, cols: int) -> None:
        """No loop budget on the CPU."""

    def schedule(self, nodes: list[Node], plan: Plan, varying: set[int], stats: tuple[Stats, ...]) -> None:
        """No schedule: a replay runs execute()."""

    async def synchronize(self) -> None:
        """The work is done when execute() returns."""

    def destroy(self) -> None:
        """No GPU device here."""


def upload_pending(executor: Executor, nodes: list[Node], stats: tuple[Stats, ...]) -> None:
    """Give every node still holding host data its backend buffer (the uploads of an execute())."""
    for node in nodes:
        if node.host is not None and node.buffer is None:
            node.buffer = executor.upload(node.host, stats)
            node.host = None
