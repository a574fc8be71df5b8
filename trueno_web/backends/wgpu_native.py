"""Desktop WebGPU driver on wgpu-py (wgpu-native: Vulkan, Metal, DX12; lavapipe on CPU-only Linux)."""

from __future__ import annotations

import os
import tempfile

from ..errors import DeviceLostError, GpuError, UnavailableError

WANTED_LIMITS = (
    "max_storage_buffer_binding_size",
    "max_buffer_size",
    "max_storage_buffers_per_shader_stage",
    "max_compute_workgroups_per_dimension",
    "max_compute_workgroup_storage_size",  # matmul tiles: more than WebGPU's default 16 KiB where the adapter has it
)
# optional WebGPU features the kernels use where the adapter has them (wgpu-py name -> WebGPU name)
WANTED_FEATURES = {"subgroup": "subgroups"}


def _wgpu():
    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.gettempdir())  # quiets Mesa's WSI probe on headless Linux
    try:
        import wgpu
    except ImportError as exc:
        raise UnavailableError("wgpu-py is not installed; `pip install trueno_web[desktop]`") from exc
    return wgpu


def _gpu_call(what: str, fn, *args, **kwargs):
    """Run a wgpu call, turning its errors into trueno_web errors."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # wgpu raises GPUValidationError, GPUOutOfMemoryError, RuntimeError ...
        text = str(exc)
        if "lost" in text.lower() or "destroyed" in text.lower() and "device" in text.lower():
            raise DeviceLostError(f"{what}: the GPU device was lost ({text}); create a new GpuDevice") from exc
        raise GpuError(f"{what} failed: {text}") from exc


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


class WgpuNativeDriver:
    """Moves bytes, compiles WGSL and records dispatches with wgpu-py."""

    wgsl_enable_subgroups = False  # naga takes the subgroup builtins without (and refuses) `enable subgroups;`

    def __init__(self, adapter, device):
        self.wgpu = _wgpu()
        self.adapter = adapter
        self.device = device
        info = adapter.info
        self.adapter_info = {k: info.get(k, "") for k in ("vendor", "architecture", "device", "description", "adapter_type", "backend_type")}
        self.adapter_info["software"] = info.get("adapter_type", "") == "CPU"
        self.limits = {name: int(device.limits[name.replace("_", "-")]) for name in WANTED_LIMITS}
        self.features = frozenset(WANTED_FEATURES[f] for f in device.features if f in WANTED_FEATURES)
        self.storage_usage = self.wgpu.BufferUsage.STORAGE | self.wgpu.BufferUsage.COPY_SRC | self.wgpu.BufferUsage.COPY_DST
        self.staging: dict[int, list] = {}
        self.lost = False

    @classmethod
    async def create(cls, power_preference: str = "high-performance") -> "WgpuNativeDriver":
        adapter = await find_adapter(power_preference)
        if adapter is None:
            raise UnavailableError("no WebGPU adapter found (wgpu-py found no Vulkan/Metal/DX12 device); "
                                   "install a driver (e.g. Debian's mesa-vulkan-drivers) or use backend='numpy'")
        limits = {name.replace("_", "-"): adapter.limits[name.replace("_", "-")] for name in WANTED_LIMITS}
        features = [f for f in WANTED_FEATURES if f in adapter.features]
        device = await adapter.request_device_async(required_features=features, required_limits=limits, label="trueno_web")
        return cls(adapter, device)

    def _check(self):
        if self.lost:
            raise DeviceLostError("the GPU device was lost or destroyed; create a new GpuDevice")

    def create_buffer(self, nbytes: int):
        self._check()
        return _gpu_call("creating a buffer", self.device.create_buffer, size=nbytes, usage=self.storage_usage)

    def destroy_buffer(self, raw) -> None:
        raw.destroy()

    def write_buffer(self, raw, data: memoryview) -> None:
        self._check()
        _gpu_call("writing a buffer", self.device.queue.write_buffer, raw, 0, data.cast("B"))

    def compile(self, source: str, entry: str):
        self._check()
        module = _gpu_call("compiling WGSL", self.device.create_shader_module, code=source)
        return _gpu_call("creating a pipeline", self.device.create_compute_pipeline,
                         layout="auto", compute={"module": module, "entry_point": entry})

    def submit(self, work) -> None:
        """Every dispatch of `work` [(pipeline, [(binding, raw, offset, size)], grid)] in one submit."""
        self._check()

        def record():
            encoder = self.device.create_command_encoder()
            pass_ = encoder.begin_compute_pass()
            for pipeline, binds, grid in work:
                group = self.device.create_bind_group(
                    layout=pipeline.get_bind_group_layout(0),
                    entries=[{"binding": b, "resource": {"buffer": raw, "offset": off, "size": size}} for b, raw, off, size in binds],
                )
                pass_.set_pipeline(pipeline)
                pass_.set_bind_group(0, group)
                pass_.dispatch_workgroups(grid[0], grid[1], 1)
            pass_.end()
            self.device.queue.submit([encoder.finish()])

        _gpu_call("running kernels", record)

    async def read_buffer(self, raw, nbytes: int) -> memoryview:
        self._check()
        size = max(256, 1 << (nbytes - 1).bit_length())
        free = self.staging.setdefault(size, [])
        wgpu = self.wgpu
        staging = free.pop() if free else _gpu_call(
            "creating a staging buffer", self.device.create_buffer, size=size,
            usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
        try:
            def copy():
                encoder = self.device.create_command_encoder()
                encoder.copy_buffer_to_buffer(raw, 0, staging, 0, nbytes)
                self.device.queue.submit([encoder.finish()])

            _gpu_call("copying a result", copy)
            try:
                await staging.map_async(wgpu.MapMode.READ, 0, size)
            except Exception as exc:
                raise DeviceLostError(f"reading a result failed ({exc}); create a new GpuDevice") from exc
            data = memoryview(staging.read_mapped(0, nbytes, copy=True))
            staging.unmap()
        except BaseException:
            staging.destroy()
            raise
        free.append(staging)
        return data

    def destroy(self) -> None:
        """Destroy the device (as a loss would): later calls raise DeviceLostError."""
        self.device.destroy()
        self.lost = True

    def close(self) -> None:
        for bufs in self.staging.values():
            for b in bufs:
                b.destroy()
        self.staging.clear()
