"""Faults in the browser: a lost device, a WebGPU validation error and a kernel that fails to compile become
trueno_web exceptions, and the page can go on computing (a new device after a loss; the same device after a
validation or compile error)."""

from __future__ import annotations

LOSS = r"""
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
"""

LOST_MID_BATCH = r"""
import trueno_web as tw
dev = await tw.GpuDevice.create("webgpu")
b = dev.batch()
out = b.relu(b.upload([-1.0, 5.0]))
await b.execute()
dev.executor.driver.device.destroy()   # the GPU goes away under a running page, as a real loss would
try:
    await b.read(out)
    got = "no error"
except tw.TruenoError as exc:
    got = type(exc).__name__
{"error": got, "after": list(await (await tw.GpuDevice.create("webgpu")).add([1.0], [2.0]))}
"""

VALIDATION = r"""
import trueno_web as tw
dev = await tw.GpuDevice.create("webgpu")
driver = dev.executor.driver
driver.create_buffer(driver.limits["max_buffer_size"] * 4)   # past maxBufferSize: a validation error
try:
    await driver.settle()
    err = "no error"
except tw.GpuError as exc:
    err = str(exc)
{"error": err, "after": list(await dev.mul([2.0, 3.0], [4.0, 5.0]))}
"""

COMPILE_ERROR = r"""
import trueno_web as tw
dev = await tw.GpuDevice.create("webgpu")
ex = dev.executor
real = ex.driver.compile_many
async def broken(jobs):
    return await real([(source + "\nfn broken( {", entry, checked) for source, entry, checked in jobs])
ex.driver.compile_many = broken   # a plan's kernels fail to compile, through createComputePipelineAsync
compiled = dev.stats.pipelines_compiled
try:
    await dev.tensor([-1.5, 2.0, -0.25]).abs().sum().item()
    err = "no error"
except tw.GpuError as exc:
    err = str(exc)
counted, cached = dev.stats.pipelines_compiled - compiled, len(ex.pipelines)
del ex.driver.compile_many
after = await dev.tensor([-1.5, 2.0, -0.25]).abs().sum().item()
{"error": err, "counted": counted, "cached": cached, "after": after, "live": ex.pool.live,
 "compiled": dev.stats.pipelines_compiled - compiled, "pipelines": len(ex.pipelines)}
"""


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


def test_a_kernel_that_fails_to_compile_is_a_gpu_error_and_the_device_stays_usable(pyodide_page):
    """The async compile's failure (createComputePipelineAsync rejects; the shader module's error scope) is
    the GpuError naming "compiling WGSL"; nothing is cached or counted for it; the same call runs after."""
    r = pyodide_page.run(COMPILE_ERROR)
    assert r["error"].startswith("compiling WGSL failed"), r
    assert (r["counted"], r["cached"], r["live"]) == (0, 0, 0), r
    assert r["after"] == 3.75 and r["compiled"] == r["pipelines"] > 0, r


CANCEL = r'''
import asyncio
import trueno_web as tw
dev = await tw.GpuDevice.create("webgpu")
x = [float(i % 7) - 3.0 for i in range(1 << 16)]
want = [max(v, 0.0) for v in x]
stage = []

async def job():
    b = dev.batch()
    out = b.scale(b.relu(b.upload(x)), 1.0)
    try:
        stage.append("execute")
        await b.execute()
        stage.append("read")
        return list(await b.read(out))
    finally:
        b.release()

async def cancel_at(where):
    """Cancel a running batch as soon as it is suspended in `where` (None: before it starts)."""
    stage.clear()
    task = asyncio.ensure_future(job())
    while where is not None and not task.done() and (not stage or stage[-1] != where):
        await asyncio.sleep(0)
    task.cancel()
    try:
        got = await task
        return "done" if got == want else "WRONG"
    except asyncio.CancelledError:
        return f"cancelled in {stage[-1] if stage else 'nothing'}"

outcomes = []
for where in (None, "execute", "read", "execute", "read"):
    outcomes.append(await cancel_at(where))
    outcomes.append("ok" if await job() == want else "WRONG after cancel")
for timeout in (0.0001, 0.002, 0.01):
    try:
        got = await asyncio.wait_for(job(), timeout)
        outcomes.append("done" if got == want else "WRONG")
    except asyncio.TimeoutError:
        outcomes.append("timeout")
    outcomes.append("ok" if await job() == want else "WRONG after timeout")
b = dev.batch()                        # the same batch again after its execute() was cancelled
out = b.scale(b.relu(b.upload(x)), 1.0)
task = asyncio.ensure_future(b.execute())
await asyncio.sleep(0)
task.cancel()
try:
    await task
    first = "done"
except asyncio.CancelledError:
    first = "cancelled"
await b.execute()
retried = list(await b.read(out)) == want
b.release()
{"outcomes": outcomes, "first": first, "retried": retried, "live": dev.executor.pool.live,
 "after": list(await dev.add([1.0], [2.0]))}
'''


def test_cancelled_and_timed_out_batches_leave_the_device_usable(pyodide_page):
    """Tasks running a batch, cancelled before they start, while suspended in execute() (its error
    scopes settling) and while suspended in read() (mapAsync pending), and asyncio.wait_for timeouts:
    each ends cancelled (or with the right result), the next batch on the same device is right, and
    no pooled buffer is left checked out. A batch whose execute() was cancelled runs when retried."""
    r = pyodide_page.run(CANCEL)
    outcomes = r["outcomes"]
    assert not [o for o in outcomes if o.startswith("WRONG")], outcomes
    assert outcomes[0:10:2] == [
        "cancelled in nothing",
        "cancelled in execute",
        "cancelled in read",
        "cancelled in execute",
        "cancelled in read",
    ], outcomes
    assert outcomes[1:10:2] == ["ok"] * 5, outcomes
    assert r["first"] == "cancelled" and r["retried"], "a batch whose execute() was cancelled runs when retried"
    assert r["live"] == 0
    assert r["after"] == [3.0]


DESTROYED_WHILE_READING = r"""
import asyncio
import trueno_web as tw
outcomes = []
for n in (1 << 16, 1 << 20, 1 << 20):
    dev = await tw.GpuDevice.create("webgpu")
    stage = []

    async def job():
        b = dev.batch()
        out = b.gelu(b.mish(b.upload([float(i % 7) - 3.0 for i in range(n)])))
        await b.execute()
        stage.append("read")
        return await b.read(out)

    task = asyncio.ensure_future(job())
    while not task.done() and not stage:
        await asyncio.sleep(0)
    dev.destroy()                          # mapAsync of the read is pending now
    try:
        await asyncio.wait_for(task, 10)
        outcomes.append("done")
    except tw.TruenoError as exc:
        outcomes.append(type(exc).__name__)
    except asyncio.TimeoutError:
        outcomes.append("HANG")
    except Exception as exc:
        outcomes.append(f"FOREIGN {type(exc).__name__}: {exc}")
{"outcomes": outcomes, "after": list(await (await tw.GpuDevice.create("webgpu")).relu([-1.0, 4.0]))}
"""


def test_device_destroyed_while_a_read_is_pending(pyodide_page):
    """dev.destroy() while a read's mapAsync is pending: the read ends at once with a trueno_web
    error (or its result), never a hang or a foreign exception; a new device works."""
    pyodide_page.expect_console_error("destroyed|lost|Destroyed|Lost|invalid|Invalid|abort|Abort")
    r = pyodide_page.run(DESTROYED_WHILE_READING)
    assert all(o in ("done", "DeviceLostError", "GpuError") for o in r["outcomes"]), r
    assert r["outcomes"] != ["done"] * 3, "the destroy hit no pending read"
    assert r["after"] == [0.0, 4.0]


PENDING = r"""
import traceback
import trueno_web as tw
dev = await tw.GpuDevice.create("webgpu")
pending = dev.relu([-1.0, 1.0])
shown = repr(pending)
value = list(await pending)
try:
    await dev.softmax([[[1.0, 2.0]]])
    frames = "no error"
except tw.TruenoValueError as exc:
    frames = [(f.filename.rsplit("/", 1)[-1], f.name) for f in traceback.extract_tb(exc.__traceback__)]
{"repr": shown, "value": value, "frames": frames}
"""


def test_a_pending_call_says_await_it_and_errors_end_at_the_callers_line(pyodide_page):
    """In Pyodide too: a one-shot call not awaited shows `<pending relu(...): await it>`, and an
    error's traceback is the caller's line and the call's entry point, not the library's insides."""
    r = pyodide_page.run(PENDING)
    assert r["repr"] == "<pending relu(...): await it>"
    assert r["value"] == [0.0, 1.0]
    assert r["frames"][-1] == ["calls.py", "__await__"], r["frames"]
    assert not [f for f in r["frames"] if f[0] in ("device.py", "batch.py", "kinds.py", "graph.py")], r["frames"]
