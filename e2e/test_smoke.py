"""Smoke tests of the browser test rig: WebGPU under Pyodide in headless Chromium.

(a) navigator.gpu and an adapter are reachable from Python; (b) a compute pass written with the js
FFI gives the right numbers, with the byte-moving patterns the browser backend can use; (c) JSPI's
run_sync works; (d) pytest runs inside Pyodide, sync tests calling run_sync included. Timings are
printed (run with -s to see them), never asserted on.
"""

from __future__ import annotations

import time

import pytest

from e2e.harness import NO_ADAPTER, NO_NAVIGATOR_GPU, PageBroken, PyodideError, run_py

# ---------------------------------------------------------------------------------------------
# The js-FFI WebGPU pattern (a reference for trueno_web/backends/browser.py).
#   * descriptors: to_js(dict, dict_converter=js.Object.fromEntries) (a bare dict would arrive
#     as a PyProxy, which WebGPU cannot read as a dictionary)
#   * upload: writeBuffer from a zero-copy view of the Python buffer (PyProxy.getBuffer() in a
#     small run_js helper), or to_js(memoryview) (one extra copy), or mappedAtCreation + assign
#   * read back: mapAsync, then getMappedRange() -> ArrayBuffer JsProxy -> .assign_to(out) into a
#     preallocated array('f') (one copy; the mapped range is detached by unmap()), or
#     Float32Array.new(range).to_py() -> memoryview
FFI_KERNEL = r'''
import array
import js
from pyodide.ffi import to_js
from pyodide.code import run_js

def jsobj(d):
    return to_js(d, dict_converter=js.Object.fromEntries)

_write_zero_copy = run_js("""(queue, buf, offset, pybuf) => {
    const view = pybuf.getBuffer("u8");      // a Uint8Array on the wasm heap, no copy
    try { queue.writeBuffer(buf, offset, view.data); } finally { view.release(); }
}""")

DOUBLE_WGSL = """
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < arrayLength(&data)) { data[i] = data[i] * 2.0; }
}
"""

class Doubler:
    @classmethod
    async def create(cls):
        self = cls()
        self.adapter = await js.navigator.gpu.requestAdapter()
        self.device = await self.adapter.requestDevice()
        module = self.device.createShaderModule(jsobj({"code": DOUBLE_WGSL}))
        self.pipeline = self.device.createComputePipeline(jsobj(
            {"layout": "auto", "compute": {"module": module, "entryPoint": "main"}}))
        return self

    async def run(self, x, up="getBuffer", down="assign_to"):
        now = js.performance.now
        dev, U = self.device, js.GPUBufferUsage
        nbytes = len(x) * x.itemsize
        size = max(nbytes, 4)
        src = memoryview(x).cast("B")
        t0 = now()
        if up == "mappedAtCreation":
            storage = dev.createBuffer(jsobj({"size": size, "mappedAtCreation": True,
                                             "usage": U.STORAGE | U.COPY_SRC | U.COPY_DST}))
            js.Uint8Array.new(storage.getMappedRange(0, nbytes)).assign(src)
            storage.unmap()
        else:
            storage = dev.createBuffer(jsobj({"size": size,
                                             "usage": U.STORAGE | U.COPY_SRC | U.COPY_DST}))
            if up == "getBuffer":
                _write_zero_copy(dev.queue, storage, 0, src)
            elif up == "to_js":
                dev.queue.writeBuffer(storage, 0, to_js(src))
            else:
                raise ValueError(up)
        staging = dev.createBuffer(jsobj({"size": size, "usage": U.MAP_READ | U.COPY_DST}))
        t1 = now()
        bind = dev.createBindGroup(jsobj({"layout": self.pipeline.getBindGroupLayout(0),
                                          "entries": [{"binding": 0, "resource": {"buffer": storage}}]}))
        enc = dev.createCommandEncoder()
        cpass = enc.beginComputePass()
        cpass.setPipeline(self.pipeline)
        cpass.setBindGroup(0, bind)
        cpass.dispatchWorkgroups((len(x) + 63) // 64)
        cpass.end()
        enc.copyBufferToBuffer(storage, 0, staging, 0, size)
        dev.queue.submit([enc.finish()])
        await staging.mapAsync(js.GPUMapMode.READ)
        t2 = now()
        mapped = staging.getMappedRange(0, nbytes)  # JsProxy of an ArrayBuffer
        if down == "assign_to":
            out = array.array("f", bytes(nbytes))
            mapped.assign_to(out)                  # byte lengths must match
        elif down == "to_py":
            out = js.Float32Array.new(mapped).to_py()   # memoryview, format "f"
        elif down == "to_bytes":
            out = array.array("f")
            out.frombytes(mapped.to_bytes())
        else:
            raise ValueError(down)
        staging.unmap()
        t3 = now()
        storage.destroy()
        staging.destroy()
        return out, {"upload_ms": t1 - t0, "gpu_ms": t2 - t1, "readback_ms": t3 - t2}
'''


def test_a_adapter_and_time_to_first_gpu_result(pyodide_page):
    """The first GPU use in the session's page: adapter info, then the cold path from a ready
    Pyodide to the first kernel result (adapter, device, shader + pipeline, upload, dispatch,
    read back)."""
    info = run_py(
        pyodide_page,
        FFI_KERNEL
        + """
t0 = js.performance.now()
gpu = js.navigator.gpu
adapter = await gpu.requestAdapter()
t_adapter = js.performance.now() - t0
i = adapter.info
doubler = await Doubler.create()
t_device = js.performance.now() - t0
y, _ = await doubler.run(array.array("f", [1.0, 2.0, 3.0, 4.0]))
t_first = js.performance.now() - t0
dict(vendor=i.vendor, architecture=i.architecture, device=i.device, description=i.description,
     isFallbackAdapter=bool(getattr(i, "isFallbackAdapter", False)),
     features=sorted(adapter.features.to_py()) if hasattr(adapter.features, "to_py") else None,
     maxComputeWorkgroupsPerDimension=adapter.limits.maxComputeWorkgroupsPerDimension,
     maxStorageBufferBindingSize=adapter.limits.maxStorageBufferBindingSize,
     y=list(y), adapter_ms=t_adapter, adapter_device_pipeline_ms=t_device, first_result_ms=t_first)
""",
    )
    assert info["y"] == [2.0, 4.0, 6.0, 8.0]
    assert info["vendor"] or info["architecture"]
    swiftshader = "swiftshader" in (info["architecture"] + info["description"]).lower()
    print(
        "\nadapter:",
        {k: info[k] for k in ("vendor", "architecture", "device", "description", "isFallbackAdapter")},
        "SwiftShader:",
        swiftshader,
    )
    print("  features:", info["features"])
    print(f"Pyodide boot: {pyodide_page.timings}")
    print(
        f"ready -> first GPU result: {info['first_result_ms']:.1f} ms (requestAdapter "
        f"{info['adapter_ms']:.1f} ms, + device + pipeline {info['adapter_device_pipeline_ms']:.1f} ms)"
    )


def test_b_ffi_double_kernel(pyodide_page):
    res = run_py(
        pyodide_page,
        """
results = {}
for n in (0, 1, 3, 4097):
    x = array.array("f", [float(i) - 1.5 for i in range(n)] )
    for up in ("getBuffer", "to_js", "mappedAtCreation"):
        for down in ("assign_to", "to_py", "to_bytes"):
            y, _ = await doubler.run(x, up, down)
            results[f"{n}/{up}/{down}"] = list(y) == [2 * v for v in x]
results
""",
    )
    assert all(res.values()), {k: v for k, v in res.items() if not v}

    # byte moving at 1 Mi floats (4 MiB): best of 5 per pattern
    timings = run_py(
        pyodide_page,
        """
n = 1 << 20
x = array.array("f", (float(i % 1000) - 0.5 for i in range(n)))
want = array.array("f", (2 * v for v in x)).tobytes()
table = {}
for up, down in [("getBuffer", "assign_to"), ("to_js", "assign_to"),
                 ("mappedAtCreation", "assign_to"), ("getBuffer", "to_py"),
                 ("getBuffer", "to_bytes")]:
    runs = []
    for _ in range(5):
        y, t = await doubler.run(x, up, down)
        assert bytes(memoryview(y).cast("B")) == want, (up, down)
        runs.append(t)
    best = {k: round(min(r[k] for r in runs), 2) for k in runs[0]}
    table[f"{up} -> {down}"] = best
table
""",
    )
    print("\nbyte moving, 4 MiB each way (ms, best of 5):")
    for k, v in timings.items():
        print(f"  {k:32s} {v}")


def test_c_jspi_run_sync(pyodide_page):
    res = run_py(
        pyodide_page,
        """
import js
from pyodide.ffi import can_run_sync, run_sync

async def arch():
    adapter = await js.navigator.gpu.requestAdapter()
    return adapter.info.architecture

def sync_caller():                        # a plain function, called from top-level code
    return can_run_sync(), run_sync(arch()), run_sync(js.Promise.resolve(42))

[can_run_sync(), *sync_caller()]
""",
    )
    can, can_inner, arch, forty_two = res
    assert can is True and can_inner is True
    assert arch and forty_two == 42
    # entered through pyodide.runPython (sync), there is no JSPI frame to suspend
    assert run_py(pyodide_page, "from pyodide.ffi import can_run_sync; can_run_sync()", sync=True) is False


def test_d_pytest_inside_pyodide(pyodide_page):
    t0 = time.perf_counter()
    res = pyodide_page.run_pytest(
        {
            "test_inner.py": """
import js
import pytest
from pyodide.ffi import can_run_sync, run_sync

def block_on(awaitable):                 # what trueno_web.runtime.block_on does in the browser
    return run_sync(awaitable)

async def adapter_arch():
    adapter = await js.navigator.gpu.requestAdapter()
    return adapter.info.architecture

def test_sync_test_can_block_on_gpu():
    assert can_run_sync()
    assert block_on(adapter_arch())

@pytest.mark.parametrize("n", [1, 2, 3])
def test_param(n):
    assert n > 0

def test_fails():
    assert 1 == 2

@pytest.mark.skip(reason="demo")
def test_skipped():
    pass

@pytest.mark.xfail(strict=True)
def test_xfail():
    assert False

def test_project_wheel_importable():
    import trueno_web
"""
        },
        args=["-q", "-rf"],
    )
    # nodeids are relative to the in-Pyodide rootdir
    print(
        f"\npytest in Pyodide: {time.perf_counter() - t0:.2f} s; "
        + ", ".join(f"{k}={res[k]}" for k in ("passed", "failed", "skipped", "xfailed", "errors"))
    )
    assert (res["passed"], res["failed"], res["skipped"], res["xfailed"], res["errors"]) == (5, 1, 1, 1, 0), res[
        "output"
    ]
    assert res["exit_code"] == 1
    assert res["failures"] == ["test_inner.py::test_fails"], res
    # a second run re-reads changed test files
    res2 = pyodide_page.run_pytest({"test_inner.py": "def test_ok():\n    pass\n"})
    assert (res2["passed"], res2["failed"], res2["exit_code"]) == (1, 0, 0), res2["output"]


# --------------------------------------------------------------------------- harness behaviour


def test_fallback_modes(pyodide_page_fallback):
    res = run_py(
        pyodide_page_fallback,
        """
import js
from pyodide.ffi import jsnull
has = hasattr(js.navigator, "gpu")
adapter = (await js.navigator.gpu.requestAdapter()) if has else None
[has, adapter is None or adapter is jsnull]
""",
    )
    has_gpu, no_adapter = res
    assert no_adapter
    assert has_gpu == (pyodide_page_fallback.gpu == NO_ADAPTER)


def test_python_exception_carries_traceback(pyodide_page):
    with pytest.raises(PyodideError) as ei:
        run_py(pyodide_page, "def f():\n    raise ValueError('boom')\nf()")
    assert ei.value.py_type == "ValueError"
    assert "in f" in ei.value.py_traceback and "ValueError: boom" in ei.value.py_traceback


def test_external_requests_are_blocked_and_recorded(pyodide_page):
    with pytest.raises(PyodideError):
        run_py(pyodide_page, "from pyodide.http import pyfetch\nawait pyfetch('https://example.com/x')")
    assert pyodide_page.log.blocked == ["https://example.com/x"]
    assert pyodide_page.log.problems()
    pyodide_page.log.reset()  # this test wanted it; don't fail at teardown


def test_uncaptured_webgpu_error_is_reported(pyodide_page):
    run_py(
        pyodide_page,
        """
import js
from pyodide.ffi import to_js
adapter = await js.navigator.gpu.requestAdapter()
device = await adapter.requestDevice()
device.createBuffer(to_js({"size": 4, "usage": 0}, dict_converter=js.Object.fromEntries))
# Chrome logs uncaptured errors when the device next ticks (a submit), not at the bad call
device.queue.submit([])
await device.queue.onSubmittedWorkDone()
""",
    )
    deadline = time.time() + 5
    while not pyodide_page.log.webgpu_errors and time.time() < deadline:
        pyodide_page.page.wait_for_timeout(50)
    assert pyodide_page.log.webgpu_errors, pyodide_page.log.console
    pyodide_page.log.reset()


# Last in the module: they break the (shared) no-navigator-gpu page; the pool boots a new one
# if a later test asks for that mode.
@pytest.mark.parametrize("pyodide_page", [NO_NAVIGATOR_GPU], indirect=True)
def test_hang_times_out_and_page_is_replaced(pyodide_page):
    with pytest.raises(PageBroken):
        run_py(pyodide_page, "while True: pass", timeout_s=2)
    assert pyodide_page.broken


@pytest.mark.parametrize("pyodide_page", [NO_NAVIGATOR_GPU], indirect=True)
def test_hang_after_an_await_times_out(pyodide_page):
    """The loop starts only after the harness began waiting (what a loaded machine does to the test
    above by chance): a wait that polls the page (Playwright's wait_for_function) would hang here for
    good, since its clean-up after the timeout awaits the spinning page. The deadline holds, and the
    tab is closed at once (its renderer no longer spins)."""
    t0 = time.monotonic()
    with pytest.raises(PageBroken):
        run_py(pyodide_page, "import asyncio\nawait asyncio.sleep(0.5)\nwhile True: pass", timeout_s=2)
    assert pyodide_page.broken
    assert time.monotonic() - t0 < 60
    assert pyodide_page.page.is_closed()
