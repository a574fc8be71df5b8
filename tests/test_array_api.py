"""The array API namespace (trueno_web/namespace.py) and Tensor's array API members (tensor/api.py) on every
backend against NumPy: NumPy's transpose and the spec's axis moves, the joining/tiling/linear-algebra
functions with awkward sizes, the Python conversions of one element, DLPack, result_type with Python
scalars, the inspection namespace and the default device. The official suite runs in test_array_api_suite.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import trueno_web as tw
from trueno_web.runtime import block_on

RNG = np.random.default_rng(11)


def arr(*shape, dtype=np.float32):
    return (RNG.standard_normal(shape) * 4).astype(dtype)


def same(t, want):
    """t's values, shape and dtype are NumPy's `want` (bit for bit: NaN where NaN)."""
    got = block_on(t.numpy())
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


def test_the_module_is_the_namespace(cpu):
    t = cpu.tensor(arr(2, 3))
    assert t.__array_namespace__() is tw and t.__array_namespace__(api_version="2024.12") is tw
    assert tw.__array_api_version__ == "2024.12"
    with pytest.raises(tw.TruenoValueError, match="2024.12"):
        t.__array_namespace__(api_version="2099.01")
    info = tw.__array_namespace_info__()
    defaults = {"real floating": tw.float32, "complex floating": tw.complex64, "integral": tw.int32}
    assert info.default_dtypes() == defaults | {"indexing": tw.int32}
    wide = {"int64", "float64", "complex64", "complex128"}
    assert set(info.dtypes(device=cpu)) == {"bool", "int32", "uint32", "float32"} | wide
    assert set(info.dtypes(device=cpu, kind="complex floating")) == {"complex64", "complex128"}
    assert set(info.dtypes(device=cpu, kind="integral")) == {"int32", "uint32", "int64"} and set(
        info.dtypes(device=cpu, kind=("bool", "real floating"))
    ) == {"bool", "float32", "float64"}
    assert info.capabilities() == {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}
    assert info.default_device() in info.devices()


def test_the_default_device(cpu):
    try:
        tw.set_default_device(cpu)
        assert tw.default_device() is cpu and tw.asarray([1.0, 2.0]).device is cpu
        own = block_on(tw.GpuDevice.create("numpy"))
        tw.set_default_device(own)
        own.close()
        fresh = tw.default_device()  # closed: a new one
        assert fresh is not own and tw.asarray([True]).device is fresh
        with pytest.raises(tw.TruenoTypeError, match="GpuDevice"):
            tw.set_default_device("numpy")
    finally:
        tw.set_default_device(None)


@pytest.mark.parametrize(
    "shape, axes",
    [((4, 6, 5), ()), ((4, 6, 5), (1, 2, 0)), ((4, 6, 5), (-1, 0, 1)), ((0, 3), ()), ((7,), ()), ((), ())],
)
def test_transpose_is_numpys(dev, shape, axes):
    x = arr(*shape)
    t = dev.tensor(x)
    same(t.transpose(*axes), x.transpose(*axes))
    same(tw.permute_dims(t, axes or tuple(range(len(shape)))[::-1]), x.transpose(*axes))
    if len(shape) >= 2:
        same(t.swapaxes(0, -1), x.swapaxes(0, -1))
        same(t.mT, np.swapaxes(x, -1, -2))
        same(tw.matrix_transpose(t), np.swapaxes(x, -1, -2))
        same(t.moveaxis(0, -1), np.moveaxis(x, 0, -1))
        same(tw.moveaxis(t, (0, 1), (-1, 0)), np.moveaxis(x, (0, 1), (-1, 0)))
    if len(shape) == 2:
        same(t.T, x.T)
    else:
        with pytest.raises(tw.TruenoValueError, match="2-D"):
            t.T


def test_axis_mistakes_raise_where_written(cpu):
    t = cpu.tensor(arr(2, 3))
    with pytest.raises(tw.TruenoValueError, match="permutation"):
        t.transpose(0, 0)
    with pytest.raises(tw.TruenoValueError, match="out of range"):
        t.swapaxes(0, 2)
    with pytest.raises(tw.TruenoValueError, match="moveaxis"):
        t.moveaxis((0, 1), 0)
    with pytest.raises(tw.TruenoValueError, match="mT"):
        cpu.tensor(arr(3)).mT
    with pytest.raises(tw.TruenoValueError, match="copy=False"):
        tw.reshape(t.T, (6,), copy=False)
    same(t + 1, block_on(t.numpy()) + np.float32(1))  # the device still works


@pytest.mark.parametrize("n", [0, 1, 5, 4097])
def test_flip_roll_repeat_tile(dev, n):
    x = arr(n, 3)
    t = dev.tensor(x)
    same(tw.flip(t), np.flip(x))
    same(tw.flip(t, axis=0), np.flip(x, axis=0))
    for shift, axis in [(1, 0), (-2, 1), (n + 7, 0), (4, None), ((1, -1), (0, 1)), (0, 1)]:
        same(tw.roll(t, shift, axis=axis), np.roll(x, shift, axis=axis))
    same(tw.repeat(t, 2, axis=1), np.repeat(x, 2, axis=1))
    same(tw.repeat(t, 3), np.repeat(x, 3))
    same(tw.repeat(t, 0, axis=0), np.repeat(x, 0, axis=0))
    counts = np.array([2, 0, 3], np.int32)  # per element: read from the device, a data-dependent shape
    same(tw.repeat(t, dev.tensor(counts), axis=1), np.repeat(x, counts, axis=1))
    same(tw.repeat(t, [1] * n, axis=0), np.repeat(x, [1] * n, axis=0))
    for reps in [(2,), (2, 1), (1, 3, 2), (0, 1)]:
        same(tw.tile(t, reps), np.tile(x, reps))
    same(tw.expand_dims(t, axis=-1), np.expand_dims(x, -1))
    same(tw.concat([t, t[:, :1]], axis=1), np.concatenate([x, x[:, :1]], axis=1))
    same(tw.concat([t, t[:1]], axis=None), np.concatenate([x, x[:1]], axis=None))
    for got, want in zip(tw.unstack(t, axis=1), [x[:, i] for i in range(3)]):
        same(got, want)
    for got, want in zip(tw.broadcast_arrays(t, t[:1], 2.0), np.broadcast_arrays(x, x[:1], np.float32(2.0))):
        same(got, want)


def test_repeat_and_roll_mistakes(cpu):
    t = cpu.tensor(arr(3))
    with pytest.raises(tw.TruenoTypeError, match="repeats is an int"):
        tw.repeat(t, 2.5)
    with pytest.raises(tw.TruenoTypeError, match="counts must be integers"):
        tw.repeat(t, cpu.tensor(np.array([1.0, 2.0, 3.0], np.float32)))
    with pytest.raises(tw.TruenoValueError, match="2 counts for an axis of 3"):
        tw.repeat(t, [1, 2])
    with pytest.raises(tw.TruenoValueError, match=">= 0"):
        tw.repeat(t, [1, -2, 0])
    with pytest.raises(tw.TruenoValueError, match=">= 0"):
        tw.repeat(t, -1)
    with pytest.raises(tw.TruenoValueError, match="same length"):
        tw.roll(t, (1, 2), axis=(0,))


def test_linear_algebra_functions(dev):
    a, b, v = arr(3, 4, 5), arr(4, 5, 2), arr(5)
    ta, tb, tv = dev.tensor(a), dev.tensor(b), dev.tensor(v)
    close = lambda t, want: np.testing.assert_allclose(block_on(t.numpy()), want, rtol=1e-5, atol=1e-4)  # noqa: E731
    close(tw.tensordot(ta, tb, axes=2), np.tensordot(a, b, axes=2))
    close(tw.tensordot(ta, tb, axes=([1, 2], [0, 1])), np.tensordot(a, b, axes=([1, 2], [0, 1])))
    close(tw.tensordot(ta, tv, axes=([2], [0])), np.tensordot(a, v, axes=([2], [0])))
    close(tw.tensordot(tv, tv, axes=0), np.tensordot(v, v, axes=0))
    close(tw.vecdot(ta, tv), np.sum(a * v, axis=-1))
    close(tw.vecdot(ta, ta[:1], axis=1), np.sum(a * a[:1], axis=1))
    same(tw.outer(tv, tv[:3]), np.outer(v, v[:3]))
    close(ta @ tv, a @ v)
    with pytest.raises(tw.TruenoValueError, match="tensordot"):
        tw.tensordot(ta, tb, axes=([0], [0]))
    with pytest.raises(tw.TruenoValueError, match="outer"):
        tw.outer(ta, tv)


def test_var_std_correction(dev):
    x = arr(6, 7)
    t = dev.tensor(x)
    x64 = x.astype(np.float64)
    for correction, axis in [(0, None), (1, 0), (1.5, 1), (7, 1)]:
        n = x.size if axis is None else x.shape[axis]
        want = np.var(x64, axis=axis, ddof=correction) if n > correction else np.full(6, np.nan)  # the standard: NaN
        np.testing.assert_allclose(block_on(tw.var(t, axis=axis, correction=correction).numpy()), want, rtol=1e-5)
        np.testing.assert_allclose(block_on(t.std(axis, correction=correction).numpy()), np.sqrt(want), rtol=1e-5)


def test_clip(dev):
    x = np.array([-3.0, -0.0, 0.5, 2.0, np.nan, np.inf], np.float32)
    lo = np.array([-1.0, 0.0, np.nan, 1.0, 0.0, 0.0], np.float32)
    t = dev.tensor(x)
    same(tw.clip(t, -1.0, 1.0), np.clip(x, -1.0, 1.0))
    same(tw.clip(t, min=dev.tensor(lo)), np.maximum(x, lo))
    same(tw.clip(t, max=0.25), np.minimum(x, np.float32(0.25)))
    same(tw.clip(t), x)


def test_one_element_as_a_python_number(dev):
    t = dev.tensor(np.array([[2.75]], np.float32))
    assert float(t) == 2.75 and int(t) == 2 and complex(t) == 2.75 and bool(t) is True
    assert (
        bool(dev.tensor(np.array(0.0, np.float32))) is False and bool(dev.tensor(np.array([-0.0], np.float32))) is False
    )
    assert bool(dev.tensor(np.array(np.nan, np.float32))) is True
    i = dev.tensor(np.array(-2147483648, np.int32))
    assert int(i) == -2147483648 and [10, 20, 30][dev.tensor(np.array(1, np.int32))] == 20 and i.__index__() == int(i)
    assert int(dev.tensor(np.array(4294967295, np.uint32))) == 4294967295
    assert bool(dev.tensor(np.array([True]))) is True
    with pytest.raises(tw.TruenoTypeError, match="one element"):
        float(dev.tensor(np.zeros(2, np.float32)))
    with pytest.raises(tw.TruenoTypeError, match="integer"):
        [1][dev.tensor(np.array(0.0, np.float32))]
    with pytest.raises(tw.TruenoValueError, match="nan"):
        int(dev.tensor(np.array(np.nan, np.float32)))
    with pytest.raises(OverflowError):
        int(dev.tensor(np.array(-np.inf, np.float32)))
    assert float(t + 1) == 3.75  # the device still works


def test_dlpack_on_cpu_backends(dev):
    x = arr(3, 4)
    t = dev.tensor(x)[1:, ::2]
    if dev.backend in ("numpy", "wasm-simd"):
        assert t.__dlpack_device__() == (1, 0)
        np.testing.assert_array_equal(np.from_dlpack(t), x[1:, ::2])
        same(tw.from_dlpack(np.ascontiguousarray(x)), x)
    else:
        with pytest.raises(tw.TruenoTypeError, match="CPU backend"):
            t.__dlpack__()


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_floordiv_and_mod_operators(dev, dtype):
    x = np.array([7, -7, 7, -7, 0, 5], dtype)
    y = np.array([2, 2, -2, -2, 3, 5], dtype)
    a, b = dev.tensor(x), dev.tensor(y)
    want_dtype = dtype  # Python's signs, in the operands' dtype
    same(a // b, (x // y).astype(want_dtype))
    same(a % b, (x % y).astype(want_dtype))
    same(7 // b, (7 // y).astype(want_dtype))
    same(-7 % b, (-7 % y).astype(want_dtype))


def test_standard_names_of_catalog_ops(dev):
    x, y = arr(5), arr(5)
    y[0] = x[0]
    a, b = dev.tensor(x), dev.tensor(y)
    for name, ref in [("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less), ("less_equal", np.less_equal),
                      ("greater", np.greater), ("greater_equal", np.greater_equal), ("multiply", np.multiply),
                      ("subtract", np.subtract), ("divide", np.divide)]:  # fmt: skip
        same(getattr(tw, name)(a, b), ref(x, y))
        same(getattr(a, name)(b), ref(x, y))
    same(tw.negative(a), -x)


def test_result_type_of_arrays_and_python_scalars(cpu):
    i = cpu.tensor(np.array([1], np.int32))
    assert tw.result_type(i, 1.0) == tw.float32 and tw.result_type(tw.int32, 1) == tw.int32
    assert tw.result_type(tw.bool, True) == tw.bool and tw.result_type(tw.bool, 1) == tw.int32
    assert tw.result_type(tw.uint32, 7, tw.bool) == tw.uint32 and tw.result_type(i, tw.float32) == tw.float32
    with pytest.raises(tw.TruenoTypeError, match="at least one array"):
        tw.result_type(1, 2.0)
    with pytest.raises(tw.TruenoValueError, match="does not fit"):
        tw.result_type(tw.uint32, -1)


def test_asarray_of_the_standard(cpu):
    t = tw.asarray([[True, 2], [3, 4]], device=cpu)
    same(t, np.array([[1, 2], [3, 4]], np.int32))
    same(tw.asarray(False, device=cpu), np.array(False))
    assert tw.asarray(t) is t and tw.asarray(t, copy=True) is not t
    same(tw.asarray(t, dtype=tw.float32), np.array([[1, 2], [3, 4]], np.float32))
    with pytest.raises(tw.TruenoValueError, match="copy=False"):
        tw.asarray([1.0], device=cpu, copy=False)
    with pytest.raises(tw.TruenoValueError, match="copy=False"):
        tw.asarray(t, dtype=tw.float32, copy=False)
    same(tw.astype(t, tw.bool), np.array([[True, True], [True, True]]))
    assert math.isclose(float(tw.asarray(2.5, device=cpu)), 2.5)


def test_promotion_corner_cases(dev):
    b = dev.tensor(np.array([True, False, True]))
    i = dev.tensor(np.array([-2147483648, 7, 2147483647], np.int32))
    u = dev.tensor(np.array([0, 4294967295, 5], np.uint32))
    for t in (b, i, u):
        want = block_on(t.numpy())
        for name in ("floor", "ceil", "trunc", "round", "positive"):  # the identity on integers: their dtype kept
            if t is not b:  # the standard defines them on numeric dtypes only
                same(getattr(tw, name)(t), want)
        same(tw.concat([t, t[:1]]), np.concatenate([want, want[:1]]))  # bools joined stay bool
        same(tw.stack([t, t], axis=1), np.stack([want, want], axis=1))
        same(tw.roll(t, 1), np.roll(want, 1))
    same(tw.floor(dev.tensor(np.array([-0.5, 1.5, np.nan], np.float32))), np.array([-1.0, 1.0, np.nan], np.float32))


def test_iteration_and_lists_of_tensors(dev):
    x = arr(3, 2)
    t = dev.tensor(x)
    rows = list(t)
    assert len(rows) == 3 and all(r.shape == (2,) for r in rows)
    same(
        tw.asarray([[t[0, 0], t[1, 1]], [t[2, 0], 1.5]], device=dev),
        np.array([[x[0, 0], x[1, 1]], [x[2, 0], 1.5]], np.float32),
    )
    same(tw.asarray(list(t), device=dev), x)
    with pytest.raises(tw.TruenoTypeError, match="0-d"):
        iter(t[0, 0])


def test_an_axis_out_of_range_is_an_index_error(cpu):
    t = cpu.tensor(arr(2, 3))
    for call in (lambda: tw.expand_dims(t, axis=3), lambda: t.swapaxes(0, -3), lambda: t.sum(axis=2)):
        with pytest.raises(IndexError, match="out of range"):
            call()
    with pytest.raises(tw.TruenoValueError):  # still a TruenoValueError, as before
        tw.expand_dims(t, axis=-4)
    same(tw.expand_dims(t, axis=-3), block_on(t.numpy())[None])


@pytest.mark.parametrize("dtype", [None, "int32", "uint32", "float32"])
def test_sum_and_prod_take_a_dtype(dev, dtype):
    x = np.array([[True, False, True], [True, True, True]])
    i = np.array([[4096, 1, 3], [0, 5, 70000]], np.int32)  # >= 0 and exact in float32: every conversion exact
    for data in (x, i, i.astype(np.float32)):
        t = dev.tensor(data)
        want = data if dtype is None else data.astype(dtype)
        want = want.astype(np.int32) if want.dtype == np.bool_ else want  # bool sums as the default integer
        same(tw.sum(t, axis=1, dtype=dtype), want.sum(axis=1, dtype=want.dtype))
        same(t.prod(axis=0, dtype=dtype), want.prod(axis=0, dtype=want.dtype))
