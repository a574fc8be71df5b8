"""Faults in the browser: a lost device and a WebGPU validation error become trueno_web exceptions,
and the page can go on computing (a new device after a loss; the same device after a validation error)."""

from __future__ import annotations

LOSS = r'''
import trueno_web as tw
dev = await tw.GpuDevice.create("webgpu")
before = list(await dev.relu([-1.0, 2.0]))
dev.destroy()
try:
    await dev.relu([1.0])
    lost = "no error"
except tw.DeviceLostError as exc:
    lost = str(exc)
again = await tw.GpuDevice.create("webgpu")
{"before": before, "lost": lost, "after": list(await again.relu([-3.0, 4.0]))}
'''

LOST_MID_BATCH = r'''
import trueno_web as tw
dev = await tw.GpuDevice.create("webgpu")
b = dev.batch()
out = b.relu(b.upload([-1.0, 5.0]))
await b.execute()
dev._executor.driver.device.destroy()   # the GPU goes away under a running page, as a real loss would
try:
    await b.read(out)
    got = "no error"
except tw.TruenoError as exc:
    got = type(exc).__name__
{"error": got, "after": list(await (await tw.GpuDevice.create("webgpu")).add([1.0], [2.0]))}
'''

VALIDATION = r'''
import trueno_web as tw
dev = await tw.GpuDevice.create("webgpu")
driver = dev._executor.driver
driver.create_buffer(driver.limits["max_buffer_size"] * 4)   # past maxBufferSize: a validation error
try:
    await driver.settle()
    err = "no error"
except tw.GpuError as exc:
    err = str(exc)
{"error": err, "after": list(await dev.mul([2.0, 3.0], [4.0, 5.0]))}
'''


def test_destroyed_device_raises_device_lost_and_a_new_one_works(pyodide_page):
    r = pyodide_page.run(LOSS)
    assert r["before"] == [0.0, 2.0]
    assert "create a new" in r["lost"]
    assert r["after"] == [0.0, 4.0]


def test_device_lost_mid_batch_raises_a_trueno_error(pyodide_page):
    pyodide_page.expect_console_error("destroyed|lost|Destroyed|Lost|invalid|Invalid")
    r = pyodide_page.run(LOST_MID_BATCH)
    assert r["error"] in ("DeviceLostError", "GpuError")
    assert r["after"] == [3.0]


def test_validation_error_is_a_gpu_error_and_the_device_stays_usable(pyodide_page):
    r = pyodide_page.run(VALIDATION)
    assert r["error"].startswith("creating a buffer failed"), r
    assert r["after"] == [8.0, 15.0]
