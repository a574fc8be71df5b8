"""One-shot calls return a Pending (a coroutine that says `await it`), and trueno_web's errors end at the
caller's line: the library's own frames (device, batch, kinds, ...) are left out of the traceback."""

from __future__ import annotations

import asyncio
import gc
import traceback
import warnings

import pytest
from _cases import flat, run

import trueno_web as tw
from trueno_web import calls

INTERNAL = (
    "device.py",
    "batch.py",
    "kinds.py",
    "graph.py",
    "planner.py",
    "host.py",
    "core.py",
    "expr.py",
    "lower.py",
    "views.py",
    "reduce.py",
    "linalg.py",
    "creation.py",
)


def frames(error: BaseException) -> list[tuple[str, str]]:
    """(file name, function) of each frame of the error's traceback, outermost first."""
    return [(f.filename.rsplit("/", 1)[-1], f.name) for f in traceback.extract_tb(error.__traceback__)]


def test_a_one_shot_call_says_await_it(cpu):
    pending = cpu.relu([1.0, -1.0])
    assert repr(pending) == "<pending relu(...): await it>"
    assert asyncio.iscoroutine(pending)
    assert flat(run(pending)) == [1.0, 0.0]


def test_pending_calls_run_wherever_a_coroutine_does(cpu):
    async def main():
        a = await cpu.add([1.0], [2.0])
        b, c = await asyncio.gather(cpu.relu([-1.0, 3.0]), cpu.sum([1.0, 2.0]))
        d = await asyncio.create_task(cpu.scale([2.0], 3.0))
        return flat(a), flat(b), c, flat(d)

    assert run(main()) == ([3.0], [0.0, 3.0], 3.0, [6.0])
    assert flat(asyncio.run(cpu.neg([1.0]))) == [-1.0]


def test_a_forgotten_await_warns_with_the_method_name(cpu):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cpu.relu([1.0])
        gc.collect()
    assert any("'GpuDevice.relu' was never awaited" in str(w.message) for w in caught), caught


@pytest.mark.parametrize(
    "call",
    [
        lambda d: d.softmax([[[1.0, 2.0]]]),  # 3-D: the shape rule in kinds.py raises
        lambda d: d.relu("1, 2"),  # host conversion (host.py)
    ],
    ids=["shape", "host"],
)
def test_an_awaited_error_ends_at_the_callers_line(cpu, call):
    async def user_code():
        await call(cpu)

    with pytest.raises(tw.TruenoError) as info:
        run(user_code())
    names = frames(info.value)
    assert ("test_pending.py", "user_code") in names
    assert names[-1] == ("calls.py", "__await__"), names
    assert not [n for n in names if n[0] in INTERNAL], names


@pytest.mark.parametrize(
    "call",
    [
        lambda d: d.batch().relu("1, 2"),  # host conversion (host.py)
        lambda d: d.scale([1.0]),  # argument binding (calls.py)
        lambda d: d.batch().softmax(d.batch().upload([[[1.0]]])),  # a batch's shape rule (batch.py, kinds.py)
        lambda d: d.tensor([1.0, 2.0]).matmul(d.tensor([1.0])),  # a tensor method (tensor/core.py, kinds.py)
    ],
    ids=["host", "bind", "batch", "tensor"],
)
def test_a_call_time_error_ends_at_the_callers_line(cpu, call):
    with pytest.raises(tw.TruenoError) as info:
        call(cpu)
    names = frames(info.value)
    assert names[-1] == ("calls.py", "method"), names
    assert not [n for n in names if n[0] in INTERNAL], names


def test_full_tracebacks_on_request_and_for_other_exceptions(cpu, monkeypatch):
    monkeypatch.setattr(calls, "FULL_TRACEBACKS", True)
    with pytest.raises(tw.TruenoValueError) as info:
        run(cpu.softmax([[[1.0]]]))
    assert ("kinds.py", "_softmax_shape") in frames(info.value)
    monkeypatch.undo()
    # not a trueno_web error (a bug, or the caller's own): every frame stays
    with pytest.raises(ZeroDivisionError) as info:
        cpu.scale([1.0], BrokenFloat())
    assert ("calls.py", "bind") in frames(info.value)


class BrokenFloat(float):
    def __float__(self):
        return 1 / 0


def test_tensor_reads_without_await_say_await_it(dev):
    t = dev.tensor([[1.0, 2.0], [3.0, 4.5]])
    pending, one = t.numpy(), t.sum().item()
    assert repr(pending) == "<pending t.numpy(): await it>" and str(one) == "<pending t.item(): await it>"
    assert asyncio.iscoroutine(pending) and f"{one}" == "<pending t.item(): await it>"
    for mistake in (lambda: pending[0], lambda: one * 2, lambda: one > 0, lambda: float(one), lambda: f"{one:.3f}"):
        with pytest.raises(tw.TruenoTypeError, match=r"has not run yet.*write `await` before it"):
            mistake()
    with pytest.raises(tw.TruenoTypeError, match=r"`await dev.relu\(...\)`"):
        cpu_pending = dev.relu([1.0])
        try:
            cpu_pending + 1
        finally:
            cpu_pending.close()
    assert flat(run(pending)) == [1.0, 2.0, 3.0, 4.5] and run(one) == 10.5


def test_a_closed_device_says_it_was_closed(backend):
    dev = run(tw.GpuDevice.create(backend))
    t = dev.tensor([1.0, 2.0])
    dev.close()
    for call in (lambda: run(dev.relu([1.0])), lambda: run(t.numpy()), dev.batch, lambda: dev.tensor([1.0])):
        with pytest.raises(tw.DeviceClosedError, match=r"closed by dev\.close\(\).*create a new one") as info:
            call()
        assert isinstance(info.value, tw.DeviceLostError)
