"""Desktop WebGPU driver on wgpu-py (wgpu-native: Vulkan, Metal, DX12; lavapipe on CPU-only Linux)."""

from __future__ import annotations

import asyncio
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor

from ..errors import DeviceLostError, UnavailableError
from . import wgpu_internals
from .base import LIMIT_NAMES, DriverBase
from .held_submit import gpu_call
from .staging import Transfers, Tuning  # noqa: F401 - Tuning re-exported: wgpu_native.Tuning

BIND_GROUP_CACHE = 4096  # cached bind groups at most (then the cache starts over)
QUEUE_MAX = 16  # queued dispatches at most (queue()) before they are submitted, the GPU busy or not
QUEUE_CALLS = 2  # on hardware, queue() calls at most whose dispatches wait together, the GPU busy or not
SPIN_S = 0.005  # on hardware, synchronize() polls without blocking this long before a blocking poll


# optional WebGPU features the kernels use where the adapter has them (wgpu-py name -> WebGPU name)
WANTED_FEATURES = {"subgroup": "subgroups"}


def _wgpu():
    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.gettempdir())  # quiets Mesa's WSI probe on headless Linux
    try:
        import wgpu
    except ImportError as exc:
        raise UnavailableError("wgpu-py is not installed; `pip install trueno_web[desktop]`") from exc
    return wgpu


async def find_adapter(power_preference: str = "high-performance"):
    """The wgpu adapter, or None where there is none (or wgpu is missing)."""
    try:
        wgpu = _wgpu()
    except UnavailableError:
        return None
    try:
        return await wgpu.gpu.request_adapter_async(power_preference=power_preference)
    except Exception:  # no Vulkan loader/driver: wgpu raises RuntimeError
        return None


class WgpuNativeDriver(Transfers, DriverBase):
    """Moves bytes, compiles WGSL and records dispatches with wgpu-py (base.Driver)."""

    NO_ADAPTER = (
        "no WebGPU adapter found (wgpu-py found no Vulkan/Metal/DX12 device); install a driver "
        "(e.g. Debian's mesa-vulkan-drivers) or use backend='numpy'"
    )

    @staticmethod
    async def find_adapter(power_preference: str):
        return await find_adapter(power_preference)  # the module's, looked up at the call (tests stand it in)

    wgsl_enable_subgroups = False  # naga takes the subgroup builtins without (and refuses) `enable subgroups;`
    wanted_features = WANTED_FEATURES  # asked for where the adapter has them (a subclass may ask for more)

    def __init__(self, adapter, device):
        self.wgpu = _wgpu()
        self.adapter = adapter
        self.device = device
        info = adapter.info
        self.adapter_info = {
            k: info.get(k, "")
            for k in ("vendor", "architecture", "device", "description", "adapter_type", "backend_type")
        }
        self.adapter_info["software"] = info.get("adapter_type", "") == "CPU"
        self.limits = {name: int(device.limits[name.replace("_", "-")]) for name in LIMIT_NAMES}
        self.features = frozenset(self.wanted_features[f] for f in device.features if f in self.wanted_features)
        self.storage_usage = (
            self.wgpu.BufferUsage.STORAGE | self.wgpu.BufferUsage.COPY_SRC | self.wgpu.BufferUsage.COPY_DST
        )
        self._init_transfers()
        self._groups: dict = {}  # (pipeline, binds) -> bind group
        self._groups_of: dict = {}  # buffer -> its bind group keys (dropped when it is destroyed)
        self._buffers: dict = {}  # id -> every buffer made and not destroyed: none is ever garbage, so the collector
        # never releases one in a cycle (a DeviceArray and its buffer) that the pool is given back at the same time
        self._layouts: dict = {}  # pipeline -> bind group layout
        self._hold_next = False  # hold the next submit (hold_next)
        self._read_next = None  # (raw, nbytes) the read after it is expected to ask for
        self._compiler: ThreadPoolExecutor | None = None  # compile_many's worker threads, made on first use
        self._raw = wgpu_internals.raw_submit(device)
        # a software adapter's kernels run on the host's own cores: no GPU to keep fed, each submit only costs
        self.queue_calls = 0 if self.adapter_info["software"] else QUEUE_CALLS  # 0: no limit
        self.spin_s = 0.0 if self.adapter_info["software"] else SPIN_S  # a busy wait takes the kernels' cores there
        self.lost = False

    @classmethod
    async def open_device(cls, adapter):
        limits = {name.replace("_", "-"): adapter.limits[name.replace("_", "-")] for name in LIMIT_NAMES}
        features = [f for f in cls.wanted_features if f in adapter.features]
        return await adapter.request_device_async(
            required_features=features, required_limits=limits, label="trueno_web"
        )

    def _check(self):
        if self.lost:
            raise DeviceLostError("the GPU device was lost or destroyed; create a new GpuDevice")
        self._raise_failed()

    def create_buffer(self, nbytes: int):
        self._check()
        raw = gpu_call("creating a buffer", self.device.create_buffer, size=nbytes, usage=self.storage_usage)
        self._buffers[id(raw)] = raw
        return raw

    def destroy_buffer(self, raw) -> None:
        if (self._held or self._pending) and not self.lost:
            self.send_held()  # held work may use it
        for key in self._groups_of.pop(raw, ()):
            self._groups.pop(key, None)
        self._buffers.pop(id(raw), None)
        raw.destroy()

    def compile(self, source: str, entry: str, checked: bool = True):
        self._check()
        module = None if checked else gpu_call("compiling WGSL", wgpu_internals.unchecked_module, self.device, source)
        if module is None:
            module = gpu_call("compiling WGSL", self.device.create_shader_module, code=source)
        return gpu_call(
            "creating a pipeline",
            self.device.create_compute_pipeline,
            layout="auto",
            compute={"module": module, "entry_point": entry},
        )

    async def compile_many(self, jobs) -> list:
        """compile() of every job on worker threads, awaited together. wgpu-py's create_compute_pipeline_async
        is the synchronous call under another name (wgpu-native leaves the async one unimplemented), but
        wgpu-native's device takes pipeline creations from several threads at once and the calls release the
        GIL: a plan's kernels compile in parallel, the event loop free meanwhile (docs/benchmarks.md)."""
        self._check()
        if self._compiler is None:
            self._compiler = ThreadPoolExecutor(os.cpu_count() or 1, thread_name_prefix="trueno_web-compile")
        loop = asyncio.get_running_loop()
        done = await asyncio.gather(
            *[loop.run_in_executor(self._compiler, self.compile, *job) for job in jobs],
            return_exceptions=True,
        )
        for outcome in done:
            if isinstance(outcome, BaseException):
                raise outcome
        return done

    def submit(self, work) -> None:
        """Every dispatch of `work` [(pipeline, ((binding, raw, offset, size), ...), grid)] in one submit;
        after hold_next(), held for the read that follows. Through wgpu-native's C functions where
        wgpu_internals has them (RawSubmit), else wgpu-py's objects."""
        held, self._hold_next = self._hold_next, False
        read, self._read_next = self._read_next, None
        if not held and self._raw is not None:
            self._check()
            self.send_held()
            self.unstage(self._staged)  # an earlier one never read: its copy runs, unused
            self._staged = None
            gpu_call("running kernels", self._submit_raw, work)
            return
        command_buffer = self._encode(work, read if held else None)
        if held:
            self.hold(command_buffer)
        else:
            self.send_held([command_buffer])

    def _submit_raw(self, work) -> None:
        self._raw(self._with_groups(work))

    def _with_groups(self, work) -> list:
        return [(pipeline, self._bind_group(pipeline, binds), grid) for pipeline, binds, grid in work]

    def queue(self, work) -> None:
        """Driver.queue: while the GPU is busy (wgpu-native's queue has work left), `work` waits to go with
        later work in one submit (HeldSubmit.keep): each submit costs the host time and the GPU a gap. It goes
        at once where the GPU is idle, past QUEUE_MAX waiting dispatches, with the `queue_calls`-th call
        waiting (a submit every other call: the next one reaches the GPU before it runs dry, where waiting
        for idle let it drain first; docs/benchmarks.md), or without the C functions (submit())."""
        if self._raw is None:
            self.submit(work)
            return
        self._check()
        self.unstage(self._staged)  # an earlier one never read: its copy runs, unused
        self._staged = None
        self.keep(gpu_call("running kernels", self._with_groups, work))  # bind groups' errors raised here
        if len(self._pending) >= QUEUE_MAX or self._calls == self.queue_calls or self._raw.idle():
            self.send_held()

    def hold_next(self, read: tuple[object, int] | None) -> None:
        """The next submit() is held for the read that follows (Transfers.hold): its copy joins the same queue
        submit. `read`: (raw, nbytes) that read is expected to ask for: its copy into a staging buffer is
        recorded after the kernels, in their command buffer (Transfers.stage_read)."""
        self._hold_next = True
        self._read_next = read

    def _encode(self, work, read: tuple | None = None):
        """A finished command buffer of one compute pass running `work` (validated here), then the copy of
        `read` (raw, nbytes) to a staging buffer where given."""
        self._check()

        def run():
            encoder = self.device.create_command_encoder()
            pass_ = encoder.begin_compute_pass()
            self.record(pass_, work)
            pass_.end()
            staged = self.stage_read(encoder, *read) if read else None
            try:
                command_buffer = encoder.finish()
            except BaseException:
                self.unstage(staged)
                raise
            self.unstage(self._staged)  # an earlier one never read: its copy runs, unused
            self._staged = staged
            return command_buffer

        return gpu_call("running kernels", run)

    def record(self, compute_pass, work) -> None:
        """Set pipeline and bind group and dispatch, for every entry of `work` (as submit() takes it), into
        an open wgpu compute pass (bench/grid.py records a batch's work many times into one pass). Bind
        groups are cached by (pipeline, bindings): the pool hands the same buffers out again, so a
        repeated batch records without creating any."""
        for pipeline, binds, grid in work:
            compute_pass.set_pipeline(pipeline)
            compute_pass.set_bind_group(0, self._bind_group(pipeline, binds))
            compute_pass.dispatch_workgroups(grid[0], grid[1], 1)

    def _bind_group(self, pipeline, binds):
        key = (pipeline, tuple(binds))
        group = self._groups.get(key)
        if group is None:
            layout = self._layouts.get(pipeline)
            if layout is None:
                layout = self._layouts[pipeline] = pipeline.get_bind_group_layout(0)
            group = self.device.create_bind_group(
                layout=layout,
                entries=[
                    {"binding": b, "resource": {"buffer": raw, "offset": off, "size": size}}
                    for b, raw, off, size in binds
                ],
            )
            if len(self._groups) >= BIND_GROUP_CACHE:
                self._groups.clear()
                self._groups_of.clear()
            self._groups[key] = group
            for _, raw, _, _ in binds:
                self._groups_of.setdefault(raw, []).append(key)
        return group

    async def settle(self) -> None:
        """wgpu-py raises validation errors at the call that caused them: nothing is left to report."""
        self._check()

    async def synchronize(self) -> None:
        """The held work submitted, then non-blocking polls for up to `spin_s` (a busy wait: a blocking poll
        returns tens of microseconds after the GPU finishes on the lent H100; docs/benchmarks.md), then a
        blocking device poll (wgpu_internals.poll); else DriverBase's read."""
        self._check()
        gpu_call("running kernels", self.send_held)
        if self._raw is not None and self.spin_s and gpu_call("waiting for the GPU", self._raw.spin, self.spin_s):
            self._check()
            return
        if not gpu_call("waiting for the GPU", wgpu_internals.poll, self.device):
            await super().synchronize()
        self._check()

    def destroy(self) -> None:
        """Destroy the device (as a loss would): later calls raise DeviceLostError; held work is dropped."""
        self.drop_held()
        self.device.destroy()
        self.lost = True

    def close(self) -> None:
        if self._compiler is not None:
            self._compiler.shutdown()
        self._groups.clear()
        self._groups_of.clear()
        self._layouts.clear()
        self._buffers.clear()
        self._close_transfers()
