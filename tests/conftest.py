"""Fixtures: one device per backend per session (pipelines compile once), and the `gpu` skip rule.

Tests are plain sync functions that drive async code with `trueno_web.runtime.block_on`, so the same
bodies run inside Pyodide (JSPI) later. Backends: "webgpu" (lavapipe here), "numpy" and "wasm-simd"
(under wasmtime on the desktop); one that cannot start here skips with its reason. A test marked `gpu`
(or using the webgpu device) is skipped only where `GpuDevice.is_available()` is False, and the reason
says so.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import trueno_web as tw
from trueno_web.runtime import block_on

BACKENDS = ("webgpu", "numpy", "wasm-simd")
NO_ADAPTER = (
    "no WebGPU adapter here: GpuDevice.is_available() is False (on Linux install mesa-vulkan-drivers for lavapipe)"
)


@cache
def gpu_available() -> bool:
    return bool(block_on(tw.GpuDevice.is_available()))


@cache
def backend_unavailable(name: str) -> str | None:
    """Why `name` cannot run here (a skip reason), or None."""
    if name == "webgpu":
        return None if gpu_available() else NO_ADAPTER
    if name == "numpy":
        return None if importlib.util.find_spec("numpy") else "NumPy is not installed here"
    if not tw.runtime.is_browser() and importlib.util.find_spec("wasmtime") is None:
        return "wasmtime is not installed here (the wasm-simd backend's runtime on the desktop)"
    return None


_DEVICES: dict[str, object] = {}


def device_for(name: str):
    """The session's device of a backend (created on first use, closed at the end)."""
    reason = backend_unavailable(name)
    if reason:
        pytest.skip(reason)
    if name not in _DEVICES:
        try:
            _DEVICES[name] = block_on(tw.GpuDevice.create(name))
        except tw.UnavailableError as exc:
            pytest.skip(f"backend {name!r} unavailable: {exc}")
    return _DEVICES[name]


def pytest_configure(config):
    """Register the marks here too: inside Pyodide the suite runs without pyproject.toml."""
    config.addinivalue_line("markers", "slow: large inputs (still run in CI)")
    config.addinivalue_line("markers", "gpu: needs a WebGPU adapter (lavapipe on CI)")


def pytest_sessionfinish(session, exitstatus):
    for dev in _DEVICES.values():
        dev.close()
    _DEVICES.clear()


def pytest_report_header(config):
    try:
        lines = [f"trueno_web: webgpu adapter: {'yes' if gpu_available() else 'NONE, gpu tests skip'}"]
    except Exception as exc:
        lines = [f"trueno_web: adapter probe failed: {exc!r}"]
    for name in BACKENDS[1:]:
        reason = backend_unavailable(name)
        lines.append(f"trueno_web: {name}: {'available' if reason is None else 'skipped: ' + reason}")
    return lines


def pytest_collection_modifyitems(config, items):
    """Tests on the webgpu device carry the `gpu` mark (so `-m "not gpu"` leaves them out)."""
    for item in items:
        if {"gpu", "fresh_gpu"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.gpu)


def pytest_runtest_setup(item):
    if item.get_closest_marker("gpu") is not None and not gpu_available():
        pytest.skip(NO_ADAPTER)


def _backend_params(names=BACKENDS):
    return [pytest.param(n, id=n, marks=[pytest.mark.gpu] if n == "webgpu" else []) for n in names]


@pytest.fixture(scope="session", params=_backend_params())
def backend(request) -> str:
    """Every backend available here (the others skip with their reason)."""
    reason = backend_unavailable(request.param)
    if reason:
        pytest.skip(reason)
    return request.param


@pytest.fixture(scope="session")
def dev(backend):
    """The session's device of `backend`."""
    return device_for(backend)


@pytest.fixture(scope="session", params=_backend_params(("webgpu", "numpy")))
def dev2(request):
    """webgpu and numpy only (tests about the batch graph and its counters)."""
    return device_for(request.param)


@pytest.fixture(scope="session")
def gpu():
    """The session's webgpu device (skips where there is no adapter)."""
    return device_for("webgpu")


@pytest.fixture(scope="session")
def cpu():
    """The session's NumPy device."""
    return device_for("numpy")


@pytest.fixture(scope="session")
def wasm():
    """The session's wasm-simd device (skips where wasmtime is missing on the desktop)."""
    return device_for("wasm-simd")


@pytest.fixture(params=["tree", "direct"], ids=["webgpu-tree", "webgpu-direct"])
def row_kernel(request, gpu, monkeypatch):
    """The session's webgpu device with the row kernel (kernels/rows.py) in one form, whatever this adapter
    picks by itself: "tree", a row's threads folding through workgroup memory (hardware adapters), or
    "direct", one thread a row with no barrier (software adapters: Caps.rows_direct). The ids name webgpu:
    the Pyodide parity suite selects its tests by backend."""
    monkeypatch.setattr(gpu.executor.caps, "rows_direct", request.param == "direct")
    gpu.executor.forget()  # dispatches kept from other tests were built for the adapter's own form
    yield gpu
    gpu.executor.forget()


@pytest.fixture
def known_bug(request):
    """known_bug(reason, when=True, strict=True): the test is an xfail while the reported bug stands
    (strict: an XPASS fails the run, so the mark goes once the bug is fixed)."""

    def mark(reason: str, when: bool = True, strict: bool = True) -> None:
        if when:
            request.node.add_marker(pytest.mark.xfail(strict=strict, reason=f"known bug: {reason}"))

    return mark


@pytest.fixture
def fresh_gpu():
    """A webgpu device of this test alone (for tests that break or patch it)."""
    reason = backend_unavailable("webgpu")
    if reason:
        pytest.skip(reason)
    device = block_on(tw.GpuDevice.create("webgpu"))
    yield device
    device.close()
