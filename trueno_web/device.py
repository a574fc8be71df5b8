"""GpuDevice: the async entry point. One-shot ops are one-op batches, so there is one code path."""

from __future__ import annotations

import os

from . import runtime
from .batch import GpuCommandBatch
from .calls import install
from .dtypes import check_held
from .errors import DeviceClosedError, DeviceLostError, TruenoTypeError, TruenoValueError, UnavailableError
from .host import from_host, numpy_available, to_host
from .resident import DeviceArray
from .stats import Stats

# the array API's creation functions (tw.zeros, ...): here, where their device=None (this module's
# default_device) is installed, so tw.zeros(3) loads this module first
from .tensor import (  # noqa: F401 - re-exported: trueno_web's _LAZY table reads them here
    Tensor,
    arange,
    asarray,
    creation,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    linspace,
    meshgrid,
    ones,
    ones_like,
    realize,
    tril,
    triu,
    zeros,
    zeros_like,
)

BACKENDS = ("auto", "webgpu", "numpy", "wasm-simd")


async def _webgpu_driver():
    if runtime.is_browser():
        from .backends.browser import BrowserDriver

        return await BrowserDriver.create()
    from .backends.wgpu_native import WgpuNativeDriver

    return await WgpuNativeDriver.create()


async def _executor(backend: str):
    if backend == "webgpu":
        from .backends.gpu import GpuExecutor

        return GpuExecutor(await _webgpu_driver())
    if backend == "numpy":
        if not numpy_available():
            raise UnavailableError("NumPy is not installed here; use backend='wasm-simd' or 'auto'")
        from .backends.numpy_cpu import NumpyExecutor

        return NumpyExecutor()
    from .backends.wasm_simd import WasmExecutor

    return await WasmExecutor.create()


async def _auto_executor():
    """A hardware GPU: route each execute() by size (backends/auto.py). A software adapter (lavapipe,
    SwiftShader) is a CPU, and the CPU fallback beats it: use that. No adapter: the CPU fallback."""
    if os.environ.get("TRUENO_FORCE_CPU", "") not in ("", "0"):
        return await _executor(cpu_backend())
    try:
        gpu = await _executor("webgpu")
    except UnavailableError:
        return await _executor(cpu_backend())
    if gpu.adapter_info.get("software"):
        gpu.close()
        return await _executor(cpu_backend())
    from .backends.auto import AutoExecutor

    return AutoExecutor(gpu, await _executor(cpu_backend()))


def cpu_backend() -> str:
    """The CPU fallback here: NumPy where it imports, else the WASM SIMD kernels."""
    return "numpy" if numpy_available() else "wasm-simd"


class GpuDevice:
    """A compute device: WebGPU (desktop wgpu-py or browser navigator.gpu), NumPy or WASM SIMD."""

    def __init__(self, executor):
        self.executor = executor  # the backend that runs this device's batches (backends/)
        self.stats = Stats()
        self.constants: dict = {}  # (dtype, number, shape) -> its expression (tensor/expr.py: constant)
        self._closed = False
        self._destroyed = False  # destroy() stands for a loss: its error says lost, not closed

    @classmethod
    async def create(cls, backend: str = "auto") -> GpuDevice:
        """Open a device. `auto` on a hardware GPU routes each execute() to the GPU or the CPU
        fallback by size (backend "auto"); on a software adapter or none it is the CPU fallback
        (NumPy where it imports, else wasm-simd). TRUENO_FORCE_CPU=1 forces the CPU fallback."""
        if backend not in BACKENDS:
            raise TruenoValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        if backend == "auto":
            return cls(await _auto_executor())
        return cls(await _executor(backend))

    @staticmethod
    async def is_available() -> bool:
        """Is a WebGPU adapter reachable here?"""
        if runtime.is_browser():
            from .backends.browser import find_adapter
        else:
            from .backends.wgpu_native import find_adapter
        return (await find_adapter()) is not None

    @property
    def backend(self) -> str:
        return self.executor.backend

    @property
    def adapter_info(self) -> dict:
        return dict(self.executor.adapter_info)

    @property
    def limits(self) -> dict:
        return dict(self.executor.limits)

    def check_open(self) -> None:
        """Raise DeviceClosedError once the device is closed (DeviceLostError once destroyed)."""
        if self._destroyed:
            raise DeviceLostError(
                "this GpuDevice was lost or destroyed; create a new one with `await GpuDevice.create()`"
            )
        if self._closed:
            raise DeviceClosedError(
                "this GpuDevice was closed by dev.close() earlier in this program; create a new one with "
                "`dev = await tw.GpuDevice.create()` (or remove the close())"
            )

    def batch(self, fuse: bool = True) -> GpuCommandBatch:
        """A new command batch on this device (fuse=False runs every op as its own kernel)."""
        return GpuCommandBatch(self, fuse=fuse)

    def tensor(self, data, shape: tuple[int, ...] | None = None, dtype=None):
        """A lazy Tensor on this device from host data or a DeviceArray (nothing runs yet): of its dtype, or
        converted to `dtype`."""
        return asarray(data, self, shape, dtype=dtype)

    async def upload(self, data, shape: tuple[int, ...] | None = None, dtype=None) -> DeviceArray:
        """Upload once; use the DeviceArray in any batch or one-shot op without uploading again."""
        self.check_open()
        host = to_host(data, shape, dtype)
        check_held(host.dtype, self.backend, self.executor.dtypes)
        self.executor.check_size(host.size * host.dtype.itemsize, "this input")
        return DeviceArray(self, self.executor.upload(host, (self.stats,)), host.shape, host.dtype)

    async def read(self, array: DeviceArray):
        """Download a DeviceArray."""
        self.check_open()
        array.check_alive()
        data = await self.executor.read(array.buffer, array.dtype.itemsize * array.size, (self.stats,))
        return from_host(data, array.shape, array.dtype)

    async def synchronize(self) -> None:
        """Wait until the device has finished all work submitted so far (`tw.realize` returns before the GPU
        is done; time with this, as with torch.cuda.synchronize)."""
        self.check_open()
        await self.executor.synchronize()

    def close(self) -> None:
        """Release the device; its batches and arrays become unusable."""
        if not self._closed:
            self._closed = True
            self.executor.close()

    def destroy(self) -> None:
        """Destroy the underlying GPU device as a loss would (for fault tests); later calls raise DeviceLostError."""
        self.executor.destroy()
        self._closed = self._destroyed = True

    def __repr__(self) -> str:
        return f"<GpuDevice {self.backend}: {self.executor.adapter_info.get('device', '')}>"


async def _one_shot(self, op, inputs, params, options):
    batch = GpuCommandBatch(self, private=True)
    try:
        out = batch.record(op, inputs, params, options)
        await batch.execute(read=out)
        return await batch.read(out)
    finally:
        batch.release()


install(GpuDevice, _one_shot, "One-shot and async: upload, run, read back.")


async def synchronize(*items) -> None:
    """Wait until the given tensors are computed on their devices (realised first, in one batch per device,
    where they are lazy) and the given devices have finished all work submitted so far: the end of a
    timing, as torch.cuda.synchronize."""
    devices, lazy = {}, {}
    for item in items:
        if isinstance(item, Tensor):
            devices[id(item.device)] = item.device
            if item.expr.leaf is None or item.expr.view is not None:
                lazy.setdefault(id(item.device), []).append(item)
        elif isinstance(item, GpuDevice):
            devices[id(item)] = item
        else:
            raise TruenoTypeError(f"synchronize() takes tensors and devices, got {type(item).__name__}")
    if not devices:
        raise TruenoValueError("synchronize() needs a tensor or a device to wait for")
    for tensors in lazy.values():
        await realize(*tensors)
    for device in devices.values():
        await device.synchronize()


_default: GpuDevice | None = None  # set_default_device's, or the one default_device made


def default_device() -> GpuDevice:
    """The device of `device=None` (tw.zeros(3), tw.arange(5), ...): the one set with set_default_device,
    else one opened on first use with the backend $TRUENO_WEB_BACKEND (default "auto"), opened again if it
    was closed. Opening blocks (runtime.block_on): where that cannot work (a running event loop, a browser
    without JSPI), open one with `await GpuDevice.create()` and pass it to set_default_device."""
    global _default
    if _default is None or _default._closed:
        _default = runtime.block_on(GpuDevice.create(os.environ.get("TRUENO_WEB_BACKEND", "auto")))
    return _default


def set_default_device(dev: GpuDevice | None) -> None:
    """Make `dev` the device of `device=None` (None: open one on next use, as default_device says)."""
    global _default
    if dev is not None and not isinstance(dev, GpuDevice):
        raise TruenoTypeError(f"set_default_device takes a GpuDevice (or None); got {type(dev).__name__}")
    _default = dev


creation.use_default_device(default_device)
