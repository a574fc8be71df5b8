"""trueno_web.runtime: environment detection and block_on, the sync bridge every test uses."""

from __future__ import annotations

import asyncio
import sys

import pytest

import trueno_web as tw
from trueno_web import runtime

desktop_only = pytest.mark.skipif(sys.platform == "emscripten", reason="desktop behaviour of runtime")


@desktop_only
def test_not_a_browser_here():
    assert runtime.is_browser() is False


@desktop_only
def test_sync_available_on_the_desktop():
    assert runtime.sync_available() is True


def test_block_on_returns_the_result():
    async def answer(x):
        await asyncio.sleep(0)
        return x * 2

    assert runtime.block_on(answer(21)) == 42
    assert runtime.block_on(answer("ab")) == "abab", "the loop is reusable"


def test_block_on_takes_any_awaitable():
    class Awaitable:
        def __await__(self):
            yield from asyncio.sleep(0).__await__()
            return 7

    assert runtime.block_on(Awaitable()) == 7


def test_block_on_propagates_exceptions():
    async def fail():
        raise tw.BatchError("boom")

    with pytest.raises(tw.BatchError, match="boom"):
        runtime.block_on(fail())
    assert runtime.block_on(asyncio.sleep(0, result=5)) == 5


@desktop_only
def test_block_on_inside_a_running_loop_raises_unavailable():
    async def work():
        return 1

    async def nested():
        coro = work()
        try:
            runtime.block_on(coro)
        finally:
            coro.close()

    with pytest.raises(tw.UnavailableError, match="use `await`") as info:
        asyncio.run(nested())
    assert isinstance(info.value, tw.TruenoError)
    assert runtime.block_on(work()) == 1, "block_on still works outside the loop"


@desktop_only
def test_auto_backend_and_force_cpu(monkeypatch):
    from conftest import gpu_available

    dev = runtime.block_on(tw.GpuDevice.create())
    try:
        # a software adapter (lavapipe here) is a CPU: auto gives the CPU fallback; a hardware GPU: the router
        software = gpu_available() and runtime.block_on(tw.GpuDevice.create("webgpu")).adapter_info["software"]
        assert dev.backend == ("numpy" if software or not gpu_available() else "auto")
    finally:
        dev.close()
    monkeypatch.setenv("TRUENO_FORCE_CPU", "1")
    dev = runtime.block_on(tw.GpuDevice.create("auto"))
    try:
        assert dev.backend == "numpy"
        assert dev.adapter_info["software"] is True and "numpy" in repr(dev).lower()
    finally:
        dev.close()


def test_is_available_is_a_bool():
    assert isinstance(runtime.block_on(tw.GpuDevice.is_available()), bool)


def test_device_properties(dev):
    assert dev.backend in ("webgpu", "numpy", "wasm-simd")
    limits = dev.limits
    for key in (
        "max_storage_buffer_binding_size",
        "max_buffer_size",
        "max_storage_buffers_per_shader_stage",
        "max_compute_workgroups_per_dimension",
    ):
        assert isinstance(limits[key], int) and limits[key] > 0
    assert isinstance(dev.adapter_info, dict) and "device" in dev.adapter_info
    assert set(dev.stats.as_dict()) == {
        "uploads",
        "downloads",
        "bytes_up",
        "bytes_down",
        "dispatches",
        "submits",
        "pipelines_compiled",
    }
