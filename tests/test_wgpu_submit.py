"""The desktop driver's submits: through wgpu-native's C functions (wgpu_internals.RawSubmit) and through
wgpu-py's objects, the same results; an error in the encoding or the submit raised there as GpuError, the
driver usable after; queued work (Driver.queue, a replay's) kept while the GPU is busy and sent, in order,
by the next use of the queue, the event loop's turn, QUEUE_MAX, every `queue_calls` calls, or an idle GPU."""

from __future__ import annotations

import array
import asyncio

import pytest

from trueno_web import errors, runtime
from trueno_web.backends import wgpu_internals
from trueno_web.runtime import block_on

pytestmark = pytest.mark.skipif(runtime.is_browser(), reason="the desktop driver (wgpu-py)")

ADD_ONE = """
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&x)) { x[g.x] = x[g.x] + 1.0; }
}
"""


@pytest.fixture
def driver():
    from trueno_web.backends.wgpu_native import WgpuNativeDriver

    d = block_on(WgpuNativeDriver.create())
    yield d
    d.close()
    d.destroy()


def run_add(driver, n: int, times: int) -> list[float]:
    pipeline = driver.compile(ADD_ONE, "main")
    raw = driver.create_buffer(4 * n)
    driver.write_buffer(raw, memoryview(array.array("f", range(n))))
    for _ in range(times):
        driver.submit([(pipeline, ((0, raw, 0, 4 * n),), (-(-n // 64), 1))])
    out = block_on(driver.read_buffer(raw, 4 * n))
    driver.destroy_buffer(raw)
    return array.array("f", bytes(out)).tolist()


@pytest.mark.parametrize("raw_path", [True, False], ids=["raw", "wgpu-py"])
def test_both_submit_paths_compute_the_same(driver, raw_path):
    assert driver._raw is not None  # wgpu-py 0.32 (the pinned one) has the private FFI
    if not raw_path:
        driver._raw = None
    assert run_add(driver, 1000, 3) == [i + 3.0 for i in range(1000)]


def test_an_error_in_the_raw_submit_is_raised_there(driver):
    pipeline = driver.compile(ADD_ONE, "main")
    raw = driver.create_buffer(256)
    too_many = driver.limits["max_compute_workgroups_per_dimension"] + 1
    with pytest.raises(errors.GpuError, match="running kernels failed"):
        driver.submit([(pipeline, ((0, raw, 0, 256),), (too_many, 1))])
    driver.destroy_buffer(raw)
    assert run_add(driver, 70, 2) == [i + 2.0 for i in range(70)]  # the driver works on


def test_raw_submit_needs_the_private_handles():
    assert wgpu_internals.raw_submit(object()) is None


class Busy:
    """The driver's RawSubmit, counted, with a GPU that stays busy (or idle) as the test says."""

    def __init__(self, raw, idle: bool = False):
        self.raw, self.is_idle, self.sends = raw, idle, []

    def idle(self) -> bool:
        return self.is_idle

    def __call__(self, work) -> None:
        self.sends.append(len(work))
        self.raw(work)


def add_one(driver, n: int):
    pipeline = driver.compile(ADD_ONE, "main")
    raw = driver.create_buffer(4 * n)
    driver.write_buffer(raw, memoryview(array.array("f", [0.0] * n)))
    return raw, [(pipeline, ((0, raw, 0, 4 * n),), (-(-n // 64), 1))]


def values(driver, raw, n: int) -> list[float]:
    return array.array("f", bytes(block_on(driver.read_buffer(raw, 4 * n)))).tolist()


def test_queued_work_waits_while_the_gpu_is_busy(driver):
    raw, work = add_one(driver, 100)
    driver._raw = busy = Busy(driver._raw)
    driver.queue_calls = 0  # the other rules alone (a hardware adapter's driver also sends every QUEUE_CALLS calls)

    async def five_then_read():
        for _ in range(5):
            driver.queue(work)
        assert busy.sends == []  # kept: the GPU is busy
        return array.array("f", bytes(await driver.read_buffer(raw, 400))).tolist()

    assert block_on(five_then_read()) == [5.0] * 100  # the read sent them first, in one submit
    assert busy.sends == [5]


def test_queued_work_goes_at_the_loop_turn_at_queue_max_and_when_idle(driver):
    from trueno_web.backends.wgpu_native import QUEUE_MAX

    raw, work = add_one(driver, 64)
    driver._raw = busy = Busy(driver._raw)
    driver.queue_calls = 0  # the other rules alone (a hardware adapter's driver also sends every QUEUE_CALLS calls)

    async def queued_then_turn():
        driver.queue(work)
        await asyncio.sleep(0)
        assert busy.sends == [1]
        for _ in range(QUEUE_MAX):
            driver.queue(work)
        assert busy.sends == [1, QUEUE_MAX]
        busy.is_idle = True
        driver.queue(work)
        assert busy.sends == [1, QUEUE_MAX, 1]

    block_on(queued_then_turn())
    assert values(driver, raw, 64) == [QUEUE_MAX + 2.0] * 64
    driver.queue(work)  # no running event loop: at once
    assert busy.sends[-1] == 1


def test_queued_work_goes_every_queue_calls_calls_on_hardware(driver):
    """With `queue_calls` 2 (hardware adapters' default, QUEUE_CALLS) every second call submits what waits, the
    GPU busy or not, however many dispatches each brought; a software adapter's driver (lavapipe) has no such
    limit (0)."""
    from trueno_web.backends.wgpu_native import QUEUE_CALLS

    assert driver.queue_calls == (0 if driver.adapter_info["software"] else QUEUE_CALLS) and QUEUE_CALLS == 2
    raw, work = add_one(driver, 64)
    driver._raw = busy = Busy(driver._raw)
    driver.queue_calls = QUEUE_CALLS

    async def calls():
        driver.queue(work * 3)
        assert busy.sends == []
        driver.queue(work)
        assert busy.sends == [4]
        for _ in range(3):
            driver.queue(work)
        assert busy.sends == [4, 2]  # the fifth call waits for the loop's turn
        await asyncio.sleep(0)
        assert busy.sends == [4, 2, 1]

    block_on(calls())
    assert values(driver, raw, 64) == [7.0] * 64


def test_queued_work_runs_before_a_later_write_and_destroy(driver):
    raw, work = add_one(driver, 32)
    other, other_work = add_one(driver, 32)
    driver._raw = busy = Busy(driver._raw)
    driver.queue_calls = 0  # the other rules alone (a hardware adapter's driver also sends every QUEUE_CALLS calls)

    async def queued_then_write():
        driver.queue(work)
        driver.queue(other_work)
        driver.write_buffer(raw, memoryview(array.array("f", [7.0] * 32)))  # after the queued add, not before
        assert busy.sends == [2]
        driver.queue(other_work)
        driver.destroy_buffer(other)  # the queued kernel that binds it is sent first

    block_on(queued_then_write())
    assert busy.sends == [2, 1]
    assert values(driver, raw, 32) == [7.0] * 32


def test_synchronize_spins_on_hardware_then_blocks(driver, monkeypatch):
    """synchronize() polls without blocking for up to `spin_s` (hardware adapters' default SPIN_S; 0 on a
    software adapter, whose kernels run on the cores a busy wait would take), then blocks in wgpu-native's
    poll: either way the queue has run everything when it returns."""
    from trueno_web.backends.wgpu_native import SPIN_S

    assert driver.spin_s == (0.0 if driver.adapter_info["software"] else SPIN_S) and 0 < SPIN_S < 0.1
    raw, work = add_one(driver, 1 << 16)
    real, blocking, poll = driver._raw, [], wgpu_internals.poll
    monkeypatch.setattr(wgpu_internals, "poll", lambda device: blocking.append(device) or poll(device))

    class Counted(Busy):
        polls = 0
        spin = wgpu_internals.RawSubmit.spin  # through the counted idle() below

        def idle(self) -> bool:
            self.polls += 1
            return self.raw.idle() if self.is_idle is None else self.is_idle

    for spin_s, idle, spins, blocks in ((5.0, None, True, 0), (1e-6, False, True, 1), (0.0, None, False, 1)):
        driver._raw, driver.spin_s, blocking[:] = Counted(real, idle), spin_s, []
        for _ in range(20):
            driver.submit(work)
        block_on(driver.synchronize())
        assert real.idle() and (driver._raw.polls > 0) == spins and len(blocking) == blocks, spin_s
    driver._raw = real
    assert values(driver, raw, 1 << 16) == [60.0] * (1 << 16)
