"""Browser WebGPU driver: `navigator.gpu` through Pyodide's `js` FFI, same protocol as wgpu_native.py.

Bytes move as views over Python buffers (`PyProxy.getBuffer`), never element by element; descriptors
cross as plain JS objects. Validation and out-of-memory errors are caught with error scopes around each
compile and submit and raised as GpuError at the end of `execute()`; a lost device raises
DeviceLostError, after which a new GpuDevice can be created.
"""

from __future__ import annotations

import asyncio

from ..errors import DeviceLostError, GpuError, UnavailableError
from .base import LIMIT_NAMES, DriverBase, webgpu_limit_name

WANTED_LIMITS = {name: webgpu_limit_name(name) for name in LIMIT_NAMES}  # our name -> WebGPU's
WANTED_FEATURES = ("subgroups",)  # optional WebGPU features the kernels use where the adapter has them
STORAGE, COPY_SRC, COPY_DST, MAP_READ = 0x80, 0x04, 0x08, 0x01
QUEUE_MAX = 64  # queued dispatches at most (queue()) before they are submitted

# JS helpers: a zero-copy write from a Python buffer, and a whole compute pass from flat arrays
_JS_HELPERS = """
({
  write(queue, buffer, pybuf) {
    const view = pybuf.getBuffer("u8");
    try { queue.writeBuffer(buffer, 0, view.data, 0, view.data.byteLength); } finally { view.release(); }
  },
  submit(device, work) {
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    for (const [pipeline, binds, gx, gy] of work) {
      const entries = binds.map(([binding, buffer, offset, size]) => ({binding, resource: {buffer, offset, size}}));
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, device.createBindGroup({layout: pipeline.getBindGroupLayout(0), entries}));
      pass.dispatchWorkgroups(gx, gy, 1);
    }
    pass.end();
    device.queue.submit([encoder.finish()]);
  },
  async compileMany(device, jobs) {
    // every pipeline started before any is awaited; [first error message or null, pipelines]
    device.pushErrorScope("out-of-memory");
    device.pushErrorScope("validation");
    const started = jobs.map(([code, entryPoint]) => device.createComputePipelineAsync(
      {layout: "auto", compute: {module: device.createShaderModule({code}), entryPoint}}));
    const scopes = [device.popErrorScope(), device.popErrorScope()];
    const settled = await Promise.allSettled(started);
    const caught = (await Promise.all(scopes)).find((e) => e);
    const failed = settled.find((s) => s.status === "rejected");
    if (caught || failed) return [String(caught ? caught.message : (failed.reason?.message ?? failed.reason)), []];
    return [null, settled.map((s) => s.value)];
  },
  copy(device, src, dst, nbytes) {
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(src, 0, dst, 0, nbytes);
    device.queue.submit([encoder.finish()]);
  },
})
"""


def _js():
    try:
        import js
        from pyodide.code import run_js
        from pyodide.ffi import create_proxy, jsnull, to_js
    except ImportError as exc:
        raise UnavailableError("the browser backend needs Pyodide; on the desktop wgpu-py is used") from exc
    return js, run_js, create_proxy, jsnull, to_js


def _missing(value) -> bool:
    _, _, _, jsnull, _ = _js()
    return value is None or value is jsnull


async def find_adapter(power_preference: str = "high-performance"):
    """The WebGPU adapter, or None where the browser has no `navigator.gpu` or no adapter."""
    js = _js()[0]
    gpu = getattr(js.navigator, "gpu", None)
    if _missing(gpu):
        return None
    try:
        adapter = await gpu.requestAdapter(_obj({"powerPreference": power_preference}))
    except Exception:
        return None
    return None if _missing(adapter) else adapter


def _obj(d: dict):
    """A Python dict as a plain JS object (WebGPU descriptors must not be PyProxies)."""
    js, _, _, _, to_js = _js()
    return to_js(d, dict_converter=js.Object.fromEntries)


class BrowserDriver(DriverBase):
    """Moves bytes, compiles WGSL and records dispatches with the browser's WebGPU (base.Driver)."""

    NO_ADAPTER = (
        "this browser offers no WebGPU adapter (navigator.gpu missing or requestAdapter gave null); "
        "use Chrome/Edge with WebGPU on, or backend='wasm-simd'"
    )

    @staticmethod
    async def find_adapter(power_preference: str):
        return await find_adapter(power_preference)  # the module's, looked up at the call (tests stand it in)

    wgsl_enable_subgroups = True  # Tint wants `enable subgroups;` before the subgroup builtins

    def __init__(self, adapter, device):
        js, run_js, create_proxy, _, _ = _js()
        self.js = js
        self.adapter = adapter
        self.device = device
        self.helpers = run_js(_JS_HELPERS)
        info = adapter.info
        self.adapter_info = {
            "vendor": str(info.vendor or ""),
            "architecture": str(info.architecture or ""),
            "device": str(info.device or "") or str(info.architecture or ""),
            "description": str(info.description or ""),
            "backend_type": "WebGPU",
        }
        software = (
            bool(getattr(info, "isFallbackAdapter", False))
            or "swiftshader" in (self.adapter_info["architecture"] + self.adapter_info["description"]).lower()
        )
        self.adapter_info["software"] = software
        self.adapter_info["adapter_type"] = "CPU" if software else "GPU"
        self.limits = {ours: int(getattr(device.limits, theirs)) for ours, theirs in WANTED_LIMITS.items()}
        self.features = frozenset(f for f in WANTED_FEATURES if device.features.has(f))
        self.staging: dict[int, list] = {}
        self.errors: list = []  # popErrorScope promises not yet settled
        self.pending: list = []  # queued dispatches not submitted yet (queue())
        self._due = False  # a send of them from the event loop is scheduled
        self._failed: Exception | None = None  # that send's error, raised by the next call
        self.lost = None
        self._on_lost = create_proxy(self._lost)
        device.lost.then(self._on_lost)

    def _lost(self, info) -> None:
        self.lost = f"{getattr(info, 'reason', '')} {getattr(info, 'message', '')}".strip() or "lost"

    @staticmethod
    async def open_device(adapter):
        limits = {theirs: getattr(adapter.limits, theirs) for theirs in WANTED_LIMITS.values()}
        features = [f for f in WANTED_FEATURES if adapter.features.has(f)]
        return await adapter.requestDevice(
            _obj({"requiredLimits": limits, "requiredFeatures": features, "label": "trueno_web"})
        )

    def _check(self) -> None:
        if self.lost is not None:
            raise DeviceLostError(f"the WebGPU device was lost ({self.lost}); create a new GpuDevice")
        if self._failed is not None:
            failed, self._failed = self._failed, None
            raise failed

    def _scoped(self, what: str, fn, *args):
        """Run fn inside validation and out-of-memory error scopes; `settle()` reports what they caught."""
        self._check()
        self.device.pushErrorScope("out-of-memory")
        self.device.pushErrorScope("validation")
        try:
            return fn(*args)
        except Exception as exc:
            raise GpuError(f"{what} failed: {exc}") from exc
        finally:
            self.errors.append((what, self.device.popErrorScope()))
            self.errors.append((what, self.device.popErrorScope()))

    async def settle(self) -> None:
        """Raise GpuError for the first error a scope caught since the last settle()."""
        pending, self.errors = self.errors, []
        first = None
        for what, promise in pending:
            error = await promise
            if not _missing(error) and first is None:
                first = f"{what} failed: {error.message}"
        self._check()
        if first is not None:
            raise GpuError(first)

    def create_buffer(self, nbytes: int):
        return self._scoped(
            "creating a buffer",
            self.device.createBuffer,
            _obj({"size": nbytes, "usage": STORAGE | COPY_SRC | COPY_DST}),
        )

    def destroy_buffer(self, raw) -> None:
        if self.lost is None:
            self._send_pending()  # queued work may bind it
        raw.destroy()

    def write_buffer(self, raw, data: memoryview) -> None:
        self._check()
        self._send_pending()  # the queue's own write would land before it
        self.helpers.write(self.device.queue, raw, data.cast("B"))

    def compile(self, source: str, entry: str, checked: bool = True):  # WebGPU checks every kernel
        def build():
            module = self.device.createShaderModule(_obj({"code": source}))
            return self.device.createComputePipeline(
                _obj({"layout": "auto", "compute": _obj({"module": module, "entryPoint": entry})})
            )

        return self._scoped("compiling WGSL", build)

    async def compile_many(self, jobs) -> list:
        """Every job's shader module and createComputePipelineAsync started at once in one error scope, then
        awaited together (the GPU process compiles them while Python waits); a failure raises here."""
        self._check()
        _, _, _, _, to_js = _js()
        error, pipelines = await self.helpers.compileMany(
            self.device, to_js([[source, entry] for source, entry, _ in jobs], depth=2)
        )
        self._check()
        if not _missing(error):
            raise GpuError(f"compiling WGSL failed: {error}")
        return list(pipelines)

    def submit(self, work) -> None:
        """Every dispatch of `work` [(pipeline, [(binding, raw, offset, size)], grid)] in one submit."""
        self._send_pending()
        self._submit(work)

    def _submit(self, work) -> None:
        js_work = [[pipeline, [list(b) for b in binds], grid[0], grid[1]] for pipeline, binds, grid in work]
        _, _, _, _, to_js = _js()
        self._scoped("running kernels", self.helpers.submit, self.device, to_js(js_work, depth=3))

    def queue(self, work) -> None:
        """Driver.queue: `work` waits for the event loop's next turn (or QUEUE_MAX dispatches, or any other use
        of the queue) to go with later work in one JS call, one submit and one pair of error scopes, whose
        promises the next settle() awaits: a settle per call is a round trip to the GPU process."""
        self._check()
        self.pending.extend(work)
        if len(self.pending) >= QUEUE_MAX:
            self._send_pending()
        elif not self._due:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no event loop to wait for
                self._send_pending()
                return
            self._due = True
            loop.call_soon(self._send_later)

    def _send_pending(self) -> None:
        if self.pending:
            work, self.pending = self.pending, []
            self._submit(work)

    def _send_later(self) -> None:
        """_send_pending() from the event loop: a failure is kept for the driver's next call to raise."""
        self._due = False
        if self.lost is not None:
            self.pending = []
            return
        try:
            self._send_pending()
        except Exception as exc:
            self._failed = exc

    async def read_buffer(self, raw, nbytes: int) -> memoryview:
        """The first `nbytes` of a buffer through a pooled MAP_READ staging buffer, copied once."""
        self._check()
        self._send_pending()
        size = max(256, 1 << (nbytes - 1).bit_length())
        free = self.staging.setdefault(size, [])
        staging = free.pop() if free else self.device.createBuffer(_obj({"size": size, "usage": MAP_READ | COPY_DST}))
        out = bytearray(nbytes)
        try:
            self.helpers.copy(self.device, raw, staging, nbytes)
            try:
                await staging.mapAsync(MAP_READ, 0, size)
            except Exception as exc:
                self._check()
                raise GpuError(f"reading a result failed: {exc}") from exc
            staging.getMappedRange(0, nbytes).assign_to(out)  # nbytes: whole float32s
            staging.unmap()
        except BaseException:
            staging.destroy()
            raise
        free.append(staging)
        return memoryview(out)

    async def synchronize(self) -> None:
        """The queued work submitted, then the queue's onSubmittedWorkDone: returns once every submit so far
        has run (no buffer, copy or map, as DriverBase's read would take)."""
        self._check()
        self._send_pending()
        try:
            await self.device.queue.onSubmittedWorkDone()
        except Exception as exc:
            self._check()
            raise GpuError(f"waiting for the GPU failed: {exc}") from exc
        self._check()

    def destroy(self) -> None:
        """Destroy the device (as a loss would): later calls raise DeviceLostError."""
        self.pending = []
        self.device.destroy()
        self.lost = "destroyed"

    def close(self) -> None:
        for bufs in self.staging.values():
            for b in bufs:
                b.destroy()
        self.staging.clear()
