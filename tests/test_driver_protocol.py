"""The written backend protocols (backends/base.py `Executor` and `Driver`) and the one list of limit names.

Both WebGPU drivers are built here on stand-ins for their adapter and device (the browser one on a
stand-in `js`/`pyodide` too), so the checks run on any desktop, GPU or not; one more runs on the real
adapter where there is one. Every executor is checked against `Executor`: the GPU one and `auto` over the
stand-in wgpu driver.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import sys
import types

import pytest

from trueno_web import errors, runtime
from trueno_web.backends import base
from trueno_web.runtime import block_on

pytestmark = pytest.mark.skipif(runtime.is_browser(), reason="builds the drivers on stand-ins (desktop only)")

MEMBERS = {
    "adapter_info",
    "limits",
    "features",
    "wgsl_enable_subgroups",
    "create_buffer",
    "destroy_buffer",
    "write_buffer",
    "compile",
    "compile_many",
    "submit",
    "queue",
    "hold_next",
    "read_buffer",
    "settle",
    "synchronize",
    "destroy",
    "close",
}


def protocol_members(proto) -> set[str]:
    """The attributes a Protocol declares: its annotations and its public methods."""
    return set(vars(proto).get("__annotations__", {})) | {
        name for name, value in vars(proto).items() if callable(value) and not name.startswith("_")
    }


EXECUTOR_MEMBERS = {
    "backend",
    "dtypes",
    "adapter_info",
    "limits",
    "fuse_budget",
    "epilogue_budget",
    "check_size",
    "check_rows",
    "upload",
    "execute",
    "schedule",
    "read",
    "free",
    "synchronize",
    "destroy",
    "close",
}


def check_methods(cls, proto) -> None:
    """Every method `proto` declares is on `cls`, async where the protocol's is, with its parameters."""
    for name in protocol_members(proto):
        declared = vars(proto).get(name)
        if callable(declared):
            got = getattr(cls, name, None)
            assert callable(got), f"{cls.__name__} lacks {name}"
            assert inspect.iscoroutinefunction(got) == inspect.iscoroutinefunction(declared), name
            assert list(inspect.signature(got).parameters) == list(inspect.signature(declared).parameters), name


def check_members(obj, proto) -> None:
    """`obj` has every member of `proto`, its methods as check_methods says."""
    for name in protocol_members(proto):
        assert hasattr(obj, name), f"{type(obj).__name__} lacks {name}"
    check_methods(type(obj), proto)


def check_driver(driver) -> None:
    """`driver` has every member of base.Driver, methods with the protocol's parameters (async where it is)."""
    check_members(driver, base.Driver)
    assert set(driver.limits) == set(base.LIMIT_NAMES)
    assert all(isinstance(v, int) for v in driver.limits.values())
    assert isinstance(driver.features, frozenset) and isinstance(driver.wgsl_enable_subgroups, bool)
    assert {"vendor", "architecture", "device", "description", "adapter_type", "backend_type", "software"} <= set(
        driver.adapter_info
    )


def test_the_protocol_lists_what_the_executor_uses():
    assert protocol_members(base.Driver) == MEMBERS


def test_the_executor_protocol_lists_what_the_device_and_batch_use():
    assert protocol_members(base.Executor) == EXECUTOR_MEMBERS


def check_executor(executor) -> None:
    """`executor` has every member of base.Executor and reports every limit."""
    check_members(executor, base.Executor)
    assert set(executor.limits) == set(base.LIMIT_NAMES)
    assert isinstance(executor.backend, str) and isinstance(executor.adapter_info, dict)
    assert base.WORD_DTYPES <= executor.dtypes <= base.WIDE_DTYPES  # the 32-bit four everywhere


def test_the_numpy_executor_keeps_the_protocol():
    pytest.importorskip("numpy")
    from trueno_web.backends.numpy_cpu import NumpyExecutor

    executor = NumpyExecutor()
    check_executor(executor)
    assert executor.dtypes == base.WIDE_DTYPES  # float64 and int64 too
    executor.check_rows(1 << 30)  # no loop budget on the CPU
    executor.destroy()


def test_the_wasm_executor_keeps_the_protocol():
    from trueno_web.backends.wasm_simd import WasmExecutor

    check_methods(WasmExecutor, base.Executor)
    pytest.importorskip("wasmtime")
    executor = block_on(WasmExecutor.create())
    try:
        check_executor(executor)
        executor.check_rows(1 << 30)
        executor.destroy()
    finally:
        executor.close()


def test_limit_names():
    assert len(set(base.LIMIT_NAMES)) == len(base.LIMIT_NAMES)
    assert set(base.CPU_LIMITS) == set(base.LIMIT_NAMES)
    assert base.webgpu_limit_name("max_buffer_size") == "maxBufferSize"
    assert base.webgpu_limit_name("max_compute_workgroups_per_dimension") == "maxComputeWorkgroupsPerDimension"


def test_every_backend_reports_every_limit(dev):
    assert set(dev.limits) == set(base.LIMIT_NAMES)


# ------------------------------------------------------------------ wgpu-py (desktop)

LIMIT_VALUE = 1 << 20


class FakeWgpuDevice:
    def __init__(self, features):
        self.limits = {name.replace("_", "-"): LIMIT_VALUE for name in base.LIMIT_NAMES}
        self.features = set(features)


class FakeWgpuAdapter:
    info = {
        "vendor": "v",
        "architecture": "a",
        "device": "fake",
        "description": "d",
        "adapter_type": "CPU",
        "backend_type": "Vulkan",
    }

    def __init__(self):
        self.limits = {name.replace("_", "-"): LIMIT_VALUE for name in base.LIMIT_NAMES}
        self.features = {"subgroup", "timestamp-query", "float32-filterable"}
        self.asked = None

    async def request_device_async(self, required_features, required_limits, label):
        self.asked = (list(required_features), dict(required_limits))
        return FakeWgpuDevice(required_features)


@pytest.fixture
def wgpu_native(monkeypatch):
    pytest.importorskip("wgpu")
    from trueno_web.backends import wgpu_native

    adapter = FakeWgpuAdapter()

    async def find_adapter(power_preference="high-performance"):
        return adapter

    monkeypatch.setattr(wgpu_native, "find_adapter", find_adapter)
    return wgpu_native, adapter


def test_wgpu_native_driver_keeps_the_protocol(wgpu_native):
    module, adapter = wgpu_native
    driver = block_on(module.WgpuNativeDriver.create())
    check_driver(driver)
    assert adapter.asked == (["subgroup"], {name.replace("_", "-"): LIMIT_VALUE for name in base.LIMIT_NAMES})
    assert driver.features == {"subgroups"}  # WebGPU's name; timestamps are bench/'s, not asked for here
    assert driver.adapter_info["software"] is True


def test_a_subclass_may_ask_for_more_features(wgpu_native):
    module, adapter = wgpu_native

    class Timed(module.WgpuNativeDriver):
        wanted_features = {**module.WgpuNativeDriver.wanted_features, "timestamp-query": "timestamp-query"}

    driver = block_on(Timed.create())
    assert sorted(adapter.asked[0]) == ["subgroup", "timestamp-query"]
    assert driver.features == {"subgroups", "timestamp-query"}


def test_tuning_lives_in_one_object(wgpu_native):
    module, _ = wgpu_native
    driver = block_on(module.WgpuNativeDriver.create())
    assert driver.tuning == module.Tuning()
    assert driver.tuning.map_wait == "await" and driver.tuning.eager_remap is False
    old = driver.retune(chunk_bytes=4 << 20, map_wait="sync")
    assert old == module.Tuning() and (driver.tuning.chunk_bytes, driver.tuning.map_wait) == (4 << 20, "sync")
    with pytest.raises(errors.TruenoValueError, match="map_wait"):
        driver.retune(map_wait="spin")
    assert driver.tuning.map_wait == "sync"  # a refused change leaves the tuning as it was
    driver.retune(**dataclasses.asdict(old))
    assert driver.tuning == old


def test_the_gpu_and_auto_executors_keep_the_protocol(wgpu_native):
    pytest.importorskip("numpy")
    from trueno_web.backends.auto import AutoExecutor
    from trueno_web.backends.gpu import GpuExecutor
    from trueno_web.backends.numpy_cpu import NumpyExecutor

    module, _ = wgpu_native
    gpu = GpuExecutor(block_on(module.WgpuNativeDriver.create()))
    check_executor(gpu)
    with pytest.raises(errors.LimitError, match="loop budget"):
        gpu.check_rows(1 << 30)
    check_executor(AutoExecutor(gpu, NumpyExecutor()))
    assert gpu.dtypes == AutoExecutor(gpu, NumpyExecutor()).dtypes == base.WORD_DTYPES  # what both members hold


@pytest.mark.gpu
def test_the_real_wgpu_driver_keeps_the_protocol():
    from trueno_web.backends.wgpu_native import WgpuNativeDriver

    driver = block_on(WgpuNativeDriver.create())
    try:
        check_driver(driver)
        assert driver.features <= {"subgroups"}
    finally:
        driver.close()
        driver.destroy()


# ------------------------------------------------------------------ the browser's WebGPU (Pyodide)


class FakeFeatures:
    def __init__(self, names):
        self.names = set(names)

    def has(self, name):
        return name in self.names


class FakeJsDevice:
    def __init__(self, limits, features):
        self.limits = types.SimpleNamespace(**limits)
        self.features = FakeFeatures(features)
        self.lost = types.SimpleNamespace(then=lambda callback: None)


class FakeJsAdapter:
    def __init__(self):
        self.info = types.SimpleNamespace(
            vendor="v", architecture="swiftshader", device="", description="d", isFallbackAdapter=False
        )
        self.limits = types.SimpleNamespace(**{base.webgpu_limit_name(n): LIMIT_VALUE for n in base.LIMIT_NAMES})
        self.features = FakeFeatures({"subgroups", "shader-f16"})
        self.asked = None

    async def requestDevice(self, descriptor):
        self.asked = descriptor
        return FakeJsDevice(descriptor["requiredLimits"], descriptor["requiredFeatures"])


@pytest.fixture
def browser(monkeypatch):
    """trueno_web.backends.browser over stand-ins for Pyodide's `js`, `pyodide.code` and `pyodide.ffi`."""
    adapter = FakeJsAdapter()

    async def request_adapter(options):
        return adapter

    js = types.ModuleType("js")
    js.navigator = types.SimpleNamespace(gpu=types.SimpleNamespace(requestAdapter=request_adapter))
    js.Object = types.SimpleNamespace(fromEntries=dict)
    code = types.ModuleType("pyodide.code")
    code.run_js = lambda source: types.SimpleNamespace()
    ffi = types.ModuleType("pyodide.ffi")
    ffi.create_proxy = lambda fn: fn
    ffi.jsnull = object()
    ffi.to_js = lambda value, dict_converter=None, depth=-1: value
    pyodide = types.ModuleType("pyodide")
    pyodide.code, pyodide.ffi = code, ffi
    for name, module in (("js", js), ("pyodide", pyodide), ("pyodide.code", code), ("pyodide.ffi", ffi)):
        monkeypatch.setitem(sys.modules, name, module)
    from trueno_web.backends import browser

    return browser, adapter


def test_browser_module_imports_without_pyodide():
    saved = {name: sys.modules.pop(name) for name in list(sys.modules) if name == "trueno_web.backends.browser"}
    try:
        import trueno_web.backends.browser  # noqa: F401 - `js` is imported on first use only

        assert "js" not in sys.modules
    finally:
        sys.modules.update(saved)


def test_browser_driver_class_keeps_the_protocol():
    """Checked by its class alone: no stand-ins, no browser."""
    from trueno_web.backends.browser import BrowserDriver

    check_methods(BrowserDriver, base.Driver)
    assert isinstance(BrowserDriver.wgsl_enable_subgroups, bool)


def test_browser_driver_keeps_the_protocol(browser):
    module, adapter = browser
    driver = block_on(module.BrowserDriver.create())
    check_driver(driver)
    assert adapter.asked["requiredLimits"] == {base.webgpu_limit_name(n): LIMIT_VALUE for n in base.LIMIT_NAMES}
    assert adapter.asked["requiredFeatures"] == ["subgroups"]
    assert driver.limits == {name: LIMIT_VALUE for name in base.LIMIT_NAMES}
    assert driver.features == {"subgroups"}
    assert driver.adapter_info["software"] is True and driver.adapter_info["adapter_type"] == "CPU"


def test_browser_driver_queues_replayed_work_until_the_loop_turns(browser):
    module, _ = browser
    driver = block_on(module.BrowserDriver.create())
    sent = []
    driver.helpers = types.SimpleNamespace(
        submit=lambda device, work: sent.append(len(work)), write=lambda queue, raw, data: sent.append("write")
    )
    driver.device.pushErrorScope = lambda kind: None
    driver.device.popErrorScope = lambda: asyncio.sleep(0)  # resolves to no error
    driver.device.queue = None
    work = [("pipeline", ((0, "buffer", 0, 16),), (1, 1))]

    async def replays():
        driver.queue(work)
        driver.queue(work)
        assert sent == []  # one JS call, submit and error-scope pair for both, at the loop's turn
        await asyncio.sleep(0)
        assert sent == [2]
        driver.queue(work)
        driver.write_buffer("buffer", memoryview(b"\0" * 16))  # the queued work goes first
        assert sent == [2, 1, "write"]
        for _ in range(module.QUEUE_MAX):
            driver.queue(work)
        assert sent == [2, 1, "write", module.QUEUE_MAX]
        await driver.settle()

    block_on(replays())


def test_browser_driver_synchronize_sends_queued_work_then_waits_for_the_queue(browser):
    """synchronize(): the queued dispatches submitted first, then onSubmittedWorkDone awaited (no probe
    buffer); a lost device raises DeviceLostError, a failed wait GpuError."""
    module, _ = browser
    driver = block_on(module.BrowserDriver.create())
    events = []

    async def done():
        events.append("done")

    driver.helpers = types.SimpleNamespace(submit=lambda device, work: events.append(len(work)))
    driver.device.pushErrorScope = lambda kind: None
    driver.device.popErrorScope = lambda: asyncio.sleep(0)
    driver.device.queue = types.SimpleNamespace(onSubmittedWorkDone=done)
    driver.device.createBuffer = lambda descriptor: pytest.fail("synchronize created a buffer")
    work = [("pipeline", ((0, "buffer", 0, 16),), (1, 1))]

    async def run():
        driver.queue(work)
        driver.queue(work)
        await driver.synchronize()
        assert events == [2, "done"]
        await driver.settle()

    block_on(run())

    async def fails():
        raise RuntimeError("OperationError: the queue is gone")

    driver.device.queue = types.SimpleNamespace(onSubmittedWorkDone=fails)
    with pytest.raises(errors.GpuError, match="waiting for the GPU failed: OperationError"):
        block_on(driver.synchronize())
    driver._lost(types.SimpleNamespace(reason="destroyed", message=""))
    with pytest.raises(errors.DeviceLostError):
        block_on(driver.synchronize())
