"""What the desktop driver takes from wgpu-py's private fields: they are wgpu==0.32's (pinned in
pyproject.toml's `desktop` extra) and may move in any release. Where one is missing, each helper falls back
to the public API: a map is awaited through the event loop, a device poll is left to wgpu-py's own poller,
a read-only buffer's address comes from NumPy."""

from __future__ import annotations

import asyncio


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


def poll(device) -> None:
    """Wait here for the device's queued work (callbacks fire on this thread, no hop through wgpu-py's poller
    thread); without the private FFI, nothing: the caller's sync_wait() waits instead."""
    try:
        from wgpu.backends.wgpu_native._api import ffi, libf
    except ImportError:
        return
    libf.wgpuDevicePoll(device._internal, True, ffi.NULL)


def readonly_address(view: memoryview) -> int:
    """The address of a read-only contiguous buffer, kept valid by the caller."""
    try:
        from wgpu.backends.wgpu_native._helpers import get_memoryview_and_address
    except ImportError:
        import numpy

        return numpy.frombuffer(view, numpy.uint8).__array_interface__["data"][0]
    return get_memoryview_and_address(view)[1]
