"""Bad input gets a clear trueno_web exception that says what to do, and the device keeps working.

Each test makes one mistake, checks the exception class (a ValueError/TypeError subclass where that
fits, always a TruenoError) and its message, then runs a correct computation on the same device.
"""

from __future__ import annotations

import pytest
from _cases import flat, run

import trueno_web as tw


def still_works(dev):
    assert flat(run(dev.relu([-1.0, 2.0]))) == [0.0, 2.0]
    assert run(dev.sum([1.0, 2.0, 3.0])) == 6.0


def raises(dev, cls, match, coro_fn):
    with pytest.raises(cls, match=match) as info:
        run(coro_fn())
    assert isinstance(info.value, tw.TruenoError)
    still_works(dev)
    return info.value


def test_exception_hierarchy():
    assert issubclass(tw.TruenoValueError, ValueError) and issubclass(tw.TruenoValueError, tw.TruenoError)
    assert issubclass(tw.TruenoTypeError, TypeError) and issubclass(tw.TruenoTypeError, tw.TruenoError)
    assert issubclass(tw.LimitError, tw.TruenoValueError)
    assert issubclass(tw.DeviceLostError, tw.GpuError) and issubclass(tw.DeviceClosedError, tw.DeviceLostError)
    for cls in (tw.BatchError, tw.GpuError, tw.UnavailableError):
        assert issubclass(cls, tw.TruenoError) and issubclass(cls, RuntimeError)


def test_mismatched_lengths(dev):
    for name in ("add", "sub", "mul", "dot", "vec_add"):
        err = raises(dev, tw.TruenoValueError, "same length", lambda: getattr(dev, name)([1.0, 2.0, 3.0], [1.0, 2.0]))
        assert "3" in str(err) and "2" in str(err), "the message gives both lengths"


def test_softmax_of_a_3d_array(dev):
    x = [[[1.0, 2.0], [3.0, 4.0]]]
    raises(dev, tw.TruenoValueError, "1-D or 2-D", lambda: dev.softmax(x))
    raises(dev, tw.TruenoValueError, r"\(1, 2, 2\)", lambda: dev.log_softmax(x))


def test_convolve2d_of_a_1d_array(dev):
    raises(dev, tw.TruenoValueError, "2-D image.*reshape", lambda: dev.convolve2d([1.0, 2.0, 3.0], [[1.0]]))
    raises(dev, tw.TruenoValueError, "2-D kernel", lambda: dev.convolve2d([[1.0, 2.0]], [1.0]))


def test_matmul_inner_dimensions_differ(dev):
    err = raises(dev, tw.TruenoValueError, "inner dimensions", lambda: dev.matmul([[1.0, 2.0, 3.0]], [[1.0], [2.0]]))
    assert "1x3" in str(err) and "2x1" in str(err)
    raises(dev, tw.TruenoValueError, "2-D a", lambda: dev.matmul([1.0, 2.0], [[1.0], [2.0]]))


def test_matmul_flat_inputs_need_all_of_mkn(dev):
    raises(dev, tw.TruenoValueError, "all of m=, k= and n=", lambda: dev.matmul([1.0, 2.0], [1.0, 2.0], m=1, k=2))
    raises(dev, tw.TruenoValueError, "needs 6 and 6 elements", lambda: dev.matmul([1.0] * 6, [1.0] * 5, m=2, k=3, n=2))
    raises(dev, tw.TruenoTypeError, "non-negative int", lambda: dev.matmul([1.0], [1.0], m=-1, k=1, n=1))
    raises(dev, tw.TruenoTypeError, "non-negative int", lambda: dev.matmul([1.0], [1.0], m=1.0, k=1, n=1))


def test_kernel_larger_than_image(dev):
    err = raises(
        dev,
        tw.TruenoValueError,
        "no larger than the image",
        lambda: dev.convolve2d([[1.0, 2.0], [3.0, 4.0]], [[1.0, 1.0, 1.0]]),
    )
    assert "2x2" in str(err) and "1x3" in str(err)


@pytest.mark.parametrize(
    "bad",
    [
        "1.0, 2.0",
        b"\x00\x00\x80?",
        None,
        3.0,
        5,
        object(),
        {"a": 1.0},
        ["1.0", 2.0],
        [None, 1.0],
        [1.0, object()],
        2j,
    ],
    ids=[
        "str",
        "bytes",
        "None",
        "float",
        "int",
        "object",
        "dict",
        "list-of-str",
        "list-with-None",
        "list-with-object",
        "complex",
    ],
)
def test_bad_data_is_a_type_error(dev, bad):
    raises(dev, tw.TruenoTypeError, "cannot use|pass", lambda: dev.relu(bad))
    raises(dev, tw.TruenoTypeError, "cannot use|pass", lambda: dev.add([1.0, 2.0], bad))


def test_ragged_lists_are_a_value_error(dev):
    raises(dev, tw.TruenoValueError, "rectangular", lambda: dev.relu([[1.0, 2.0], [3.0]]))
    raises(dev, tw.TruenoValueError, "rectangular", lambda: dev.softmax([[1.0], 2.0]))


def test_non_number_scalar(dev):
    for bad in ("2", None, [2.0], True):
        raises(dev, tw.TruenoTypeError, "s must be a real number", lambda: dev.scale([1.0, 2.0], bad))
    raises(
        dev,
        tw.TruenoTypeError,
        "negative_slope must be a real number",
        lambda: dev.leaky_relu([1.0], negative_slope="0.1"),
    )


def test_missing_required_scalar(dev):
    raises(dev, tw.TruenoTypeError, r"needs the scalar 'lo'.*lo=", lambda: dev.clip([1.0, 2.0], hi=1.0))
    raises(dev, tw.TruenoTypeError, r"needs the scalar 'hi'", lambda: dev.clip([1.0, 2.0], 0.0))
    raises(dev, tw.TruenoTypeError, r"needs the scalar 's'", lambda: dev.scale([1.0]))


def test_wrong_arguments(dev):
    raises(dev, tw.TruenoTypeError, "missing b", lambda: dev.add([1.0]))
    raises(dev, tw.TruenoTypeError, "unexpected argument.*alpha", lambda: dev.relu([1.0], alpha=2.0))
    raises(dev, tw.TruenoTypeError, "positional arguments", lambda: dev.relu([1.0], 2.0))
    raises(dev, tw.TruenoTypeError, "twice", lambda: dev.scale([1.0], 2.0, s=3.0))


def test_max_and_min_of_nothing(dev):
    raises(dev, tw.TruenoValueError, "empty.*check the input", lambda: dev.max([]))
    raises(dev, tw.TruenoValueError, "empty", lambda: dev.min([]))


def test_unknown_backend():
    with pytest.raises(tw.TruenoValueError, match="choose one of auto, webgpu, numpy, wasm-simd"):
        run(tw.GpuDevice.create("cuda"))


def test_unknown_op_name():
    with pytest.raises(tw.TruenoValueError, match="known ops:.*relu"):
        tw.ops.get("frobnicate")


def test_batch_errors_leave_the_batch_usable(dev):
    b = dev.batch()
    a = b.upload([1.0, -2.0])
    with pytest.raises(tw.TruenoTypeError):
        b.scale(a, "x")
    with pytest.raises(tw.TruenoTypeError):
        b.upload("1, 2")
    with pytest.raises(tw.TruenoValueError):
        b.softmax(b.upload([[[1.0]]]))
    out = b.relu(a)
    run(b.execute())
    assert flat(run(b.read(out))) == [1.0, 0.0]


def test_input_past_the_binding_limit_is_a_limit_error(gpu, monkeypatch):
    """Pretend the adapter's binding limit is 1 KiB: a larger input raises LimitError naming it."""
    monkeypatch.setitem(gpu.executor.limits, "max_storage_buffer_binding_size", 1024)
    with pytest.raises(tw.LimitError, match="max_storage_buffer_binding_size.*1024"):
        run(gpu.relu([0.0] * 257))
    with pytest.raises(tw.LimitError):
        gpu.batch().upload([0.0] * 300)
    with pytest.raises(tw.LimitError):
        run(gpu.upload([0.0] * 300))
    assert flat(run(gpu.relu([0.0] * 256)))[:1] == [0.0]
    monkeypatch.undo()
    still_works(gpu)


def test_invalid_wgsl_is_a_gpu_error(gpu):
    with pytest.raises(tw.GpuError, match="compiling WGSL"):
        gpu.executor.driver.compile("fn main( {", "main")
    still_works(gpu)


def test_a_plan_whose_kernel_fails_to_compile_is_a_gpu_error(fresh_gpu, monkeypatch):
    """A plan's pipelines compile together (Driver.compile_many); one that fails raises GpuError naming
    "compiling WGSL" from the call, nothing is cached or counted for it, no buffer is left out, and the
    same call compiles and runs once the source is right."""
    ex = fresh_gpu.executor
    real = ex.driver.compile_many

    async def broken(jobs):
        return await real([(source + "\nfn broken( {", entry, checked) for source, entry, checked in jobs])

    monkeypatch.setattr(ex.driver, "compile_many", broken)
    compiled, cached = fresh_gpu.stats.pipelines_compiled, len(ex.pipelines)
    with pytest.raises(tw.GpuError, match="compiling WGSL"):
        run(fresh_gpu.tensor([-1.5, 2.0, -0.25]).abs().sum().item())
    assert (fresh_gpu.stats.pipelines_compiled, len(ex.pipelines), ex.compiling) == (compiled, cached, {})
    assert ex.pool.live == 0
    monkeypatch.undo()
    assert run(fresh_gpu.tensor([-1.5, 2.0, -0.25]).abs().sum().item()) == 3.75
    assert fresh_gpu.stats.pipelines_compiled == compiled + len(ex.pipelines) - cached > compiled
    still_works(fresh_gpu)


def test_closed_device_raises_device_lost(fresh_gpu):
    fresh_gpu.close()
    with pytest.raises(tw.DeviceLostError, match="create a new one"):
        run(fresh_gpu.relu([1.0]))
    with pytest.raises(tw.DeviceLostError):
        fresh_gpu.batch()


def test_destroyed_device_raises_and_a_new_device_works(fresh_gpu):
    b = fresh_gpu.batch()
    out = b.relu(b.upload([1.0]))
    fresh_gpu.destroy()
    with pytest.raises(tw.DeviceLostError):
        run(b.execute())
    with pytest.raises(tw.DeviceLostError):
        run(fresh_gpu.relu([1.0]))
    dev = run(tw.GpuDevice.create("webgpu"))
    try:
        still_works(dev)
    finally:
        dev.close()
    del out
