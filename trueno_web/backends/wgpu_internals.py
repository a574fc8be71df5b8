"""What the desktop driver takes from wgpu-py's private fields: they are wgpu==0.32's (pinned in
pyproject.toml's `desktop` extra) and may move in any release. Where one is missing, each helper falls back
to the public API: a map is awaited through the event loop, a device poll is left to wgpu-py's own poller,
a read-only buffer's address comes from NumPy, a kernel is compiled with the WGSL runtime's checks."""

from __future__ import annotations

import asyncio
import time


def can_unhook(promise) -> bool:
    """Does this GPUPromise have the private fields unhook/hook use (`_lock`, `_state`,
    `_call_soon_threadsafe`, `_thread_event`)?"""
    return all(hasattr(promise, name) for name in ("_lock", "_state", "_call_soon_threadsafe", "_thread_event"))


def unhook(promise) -> bool:
    """Keep the event loop out of a pending map promise: once settled, wgpu-py's poller thread only sets the
    promise's thread event, instead of also waking the loop (call_soon_threadsafe: a self-pipe write and a
    loop turn). True where that wake-up was already sent."""
    with promise._lock:  # the poller thread settles the promise under it
        woke = promise._state != "pending" and promise._call_soon_threadsafe is not None
        promise._call_soon_threadsafe = None
    return woke


def hook(promise) -> None:
    """Undo unhook for a promise still pending (it is awaited: the loop must hear when it settles)."""
    with promise._lock:
        if promise._state == "pending":
            promise._call_soon_threadsafe = asyncio.get_running_loop().call_soon_threadsafe


def settled_within(promise, seconds: float) -> bool:
    """Block up to `seconds` on the promise's thread event (set from wgpu-py's poller thread)."""
    return promise._thread_event.wait(seconds)


def poll(device) -> bool:
    """Wait here for the device's queued work (callbacks fire on this thread, no hop through wgpu-py's poller
    thread): True once it has run; without the private FFI, False at once (the caller waits otherwise)."""
    try:
        from wgpu.backends.wgpu_native._api import ffi, libf
    except ImportError:
        return False
    libf.wgpuDevicePoll(device._internal, True, ffi.NULL)
    return True


def readonly_address(view: memoryview) -> int:
    """The address of a read-only contiguous buffer, kept valid by the caller."""
    try:
        from wgpu.backends.wgpu_native._helpers import get_memoryview_and_address
    except ImportError:
        import numpy

        return numpy.frombuffer(view, numpy.uint8).__array_interface__["data"][0]
    return get_memoryview_and_address(view)[1]


class RawSubmit:
    """A dispatch list encoded and submitted through wgpu-native's C functions: what wgpu-py's wrappers do for
    a command encoder, a compute pass and a queue submit, without a Python object, a descriptor struct and an
    error capture per call (most of a small submit's host time). Errors are still raised at the call: one
    capture around the encoding and one around the submit, as wgpu-py's own wrappers capture theirs. Made by
    `raw_submit(device)`, which gives None where wgpu-py's private FFI is missing (the public API then)."""

    def __init__(self, device, ffi, lib, errors):
        self.ffi, self.lib, self.errors = ffi, lib, errors
        self.device, self.queue = device._internal, device.queue._internal
        self.encoder_desc = ffi.new("WGPUCommandEncoderDescriptor *")
        self.pass_desc = ffi.new("WGPUComputePassDescriptor *")
        self.buffer_desc = ffi.new("WGPUCommandBufferDescriptor *")
        self.buffers = ffi.new("WGPUCommandBuffer[1]")

    def __call__(self, work) -> None:
        """Submit `work` [(pipeline, bind group, (x, y))] (wgpu-py objects) in one compute pass."""
        lib, null = self.lib, self.ffi.NULL
        set_pipeline = lib.wgpuComputePassEncoderSetPipeline
        set_group = lib.wgpuComputePassEncoderSetBindGroup
        dispatch = lib.wgpuComputePassEncoderDispatchWorkgroups
        self.errors.capture("trueno_web encode")
        try:
            encoder = lib.wgpuDeviceCreateCommandEncoder(self.device, self.encoder_desc)
            compute = lib.wgpuCommandEncoderBeginComputePass(encoder, self.pass_desc)
            for pipeline, group, grid in work:
                set_pipeline(compute, pipeline._internal)
                set_group(compute, 0, group._internal, 0, null)
                dispatch(compute, grid[0], grid[1], 1)
            lib.wgpuComputePassEncoderEnd(compute)
            command_buffer = lib.wgpuCommandEncoderFinish(encoder, self.buffer_desc)
            lib.wgpuComputePassEncoderRelease(compute)
            lib.wgpuCommandEncoderRelease(encoder)
        finally:
            failed = self.errors.release("trueno_web encode")
        try:
            if failed is not None:
                raise RuntimeError(failed[1])
            self.errors.capture("trueno_web submit")
            try:
                self.buffers[0] = command_buffer
                lib.wgpuQueueSubmit(self.queue, 1, self.buffers)
            finally:
                failed = self.errors.release("trueno_web submit")
            if failed is not None:
                raise RuntimeError(failed[1])
        finally:
            lib.wgpuCommandBufferRelease(command_buffer)

    def idle(self) -> bool:
        """Has the queue run everything submitted? wgpu-native's poll without waiting (its result is a one-byte
        bool where the header declares 32 bits: the low byte counts)."""
        return bool(self.lib.wgpuDevicePoll(self.device, False, self.ffi.NULL) & 0xFF)

    def spin(self, seconds: float) -> bool:
        """Poll without waiting until the queue has run everything submitted (True) or `seconds` have passed
        (False): a busy wait, as CUDA's default synchronize, where a blocking poll wakes later."""
        end = time.perf_counter() + seconds
        while not self.idle():
            if time.perf_counter() > end:
                return False
        return True


def raw_submit(device) -> RawSubmit | None:
    """A RawSubmit for this wgpu-py device, or None without wgpu-py 0.32's private FFI, error handler and
    handles (`_internal`)."""
    try:
        from wgpu.backends.wgpu_native._api import error_handler, ffi, lib

        return RawSubmit(device, ffi, lib, error_handler)
    except (ImportError, AttributeError):
        return None


def unchecked_module(device, source: str):
    """A shader module of WGSL `source` compiled by wgpu-native without runtime checks (no bounds checks on
    array indices, no loop bounding: wgpuDeviceCreateShaderModuleTrusted), or None without wgpu-py's private
    FFI (the caller compiles it checked). A compile error is raised as wgpu-py raises its own."""
    try:
        from wgpu.backends.wgpu_native._api import GPUShaderModule, ffi, lib, libf
    except ImportError:
        return None
    code = ffi.new("char[]", source.encode())
    wgsl = ffi.new("WGPUShaderSourceWGSL *")
    wgsl.chain.sType = lib.WGPUSType_ShaderSourceWGSL
    wgsl.code.data, wgsl.code.length = code, len(code) - 1
    desc = ffi.new("WGPUShaderModuleDescriptor *")
    desc.nextInChain = ffi.cast("WGPUChainedStruct *", wgsl)
    handle = libf.wgpuDeviceCreateShaderModuleTrusted(device._internal, desc, 0)  # WGPUShaderRuntimeChecks_None
    return GPUShaderModule("", handle, device)
