"""GpuDevice: the async entry point. One-shot ops are one-op batches, so there is one code path."""

from __future__ import annotations

import os
import weakref

from . import ops, runtime
from .batch import GpuCommandBatch
from .calls import make_method
from .errors import DeviceLostError, TruenoValueError, UnavailableError
from .host import from_host, numpy_available, to_host
from .stats import Stats

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


class DeviceArray:
    """Data resident on a device, usable in any number of batches without another upload."""

    def __init__(self, device: "GpuDevice", buffer, shape: tuple[int, ...]):
        self.device = device
        self.shape = shape
        self._buffer = buffer
        self._finalizer = weakref.finalize(self, device._executor.free, buffer)

    @property
    def size(self) -> int:
        import math

        return math.prod(self.shape)

    def _check_alive(self) -> None:
        if not self._finalizer.alive:
            raise TruenoValueError("this DeviceArray was released; upload the data again")

    async def read(self):
        """Download the data (one transfer)."""
        return await self.device.read(self)

    def release(self) -> None:
        """Give the device memory back now rather than at garbage collection."""
        self._finalizer()

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, backend={self.device.backend!r})"


class GpuDevice:
    """A compute device: WebGPU (desktop wgpu-py or browser navigator.gpu), NumPy or WASM SIMD."""

    def __init__(self, executor):
        self._executor = executor
        self.stats = Stats()
        self._closed = False

    @classmethod
    async def create(cls, backend: str = "auto") -> "GpuDevice":
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
        return self._executor.backend

    @property
    def adapter_info(self) -> dict:
        return dict(self._executor.adapter_info)

    @property
    def limits(self) -> dict:
        return dict(self._executor.limits)

    def _check_open(self) -> None:
        if self._closed:
            raise DeviceLostError("this GpuDevice was closed; create a new one with `await GpuDevice.create()`")

    def batch(self, fuse: bool = True) -> GpuCommandBatch:
        """A new command batch on this device (fuse=False runs every op as its own kernel)."""
        self._check_open()
        return GpuCommandBatch(self, fuse=fuse)

    async def upload(self, data, shape: tuple[int, ...] | None = None) -> DeviceArray:
        """Upload once; use the DeviceArray in any batch or one-shot op without uploading again."""
        self._check_open()
        host = to_host(data, shape)
        self._executor.check_size(host.size * 4, "this input")
        return DeviceArray(self, self._executor.upload(host, (self.stats,)), host.shape)

    async def read(self, array: DeviceArray):
        """Download a DeviceArray."""
        self._check_open()
        array._check_alive()
        from .graph import Node

        node = Node(0, None, (), (), array.shape, buffer=array._buffer)
        return from_host(await self._executor.read(node, (self.stats,)), array.shape)

    def close(self) -> None:
        """Release the device; its batches and arrays become unusable."""
        if not self._closed:
            self._closed = True
            self._executor.close()

    def destroy(self) -> None:
        """Destroy the underlying GPU device as a loss would (for fault tests); later calls raise DeviceLostError."""
        driver = getattr(self._executor, "driver", None)
        if driver is not None:
            driver.destroy()
        self._closed = True

    def __repr__(self) -> str:
        return f"<GpuDevice {self.backend}: {self._executor.adapter_info.get('device', '')}>"


async def _one_shot(self, op, inputs, params, options):
    batch = self.batch()
    try:
        out = batch._record(op, inputs, params, options)
        await batch.execute()
        return await batch.read(out)
    finally:
        batch.release()


for _op in ops.CATALOG:
    for _name in (_op.name, *_op.aliases):
        setattr(GpuDevice, _name, make_method(_op, _one_shot, "One-shot and async: upload, run, read back."))
