"""The array API's creation functions (tensor/creation.py, tensor/iota.py) on every backend against NumPy,
bit for bit (linspace within its derived bound): every dtype, awkward shapes (0-size, 0-d, 1, 4097, 70000:
past 65535 workgroups of 1), negative and fractional steps, diagonal offsets; nothing of the result's size
uploaded; the `index` generator they are made from; the default device; the errors, device usable after."""

from __future__ import annotations

import math

import numpy as np
import pytest

import trueno_web as tw
from trueno_web import ops
from trueno_web.dtypes import DTYPES, bool_, float32, int32, uint32
from trueno_web.errors import TruenoTypeError, TruenoValueError
from trueno_web.runtime import block_on
from trueno_web.tensor.creation import generate

NP = {bool_: np.bool_, int32: np.int32, uint32: np.uint32, float32: np.float32}
SHAPES = [(), (0,), (1,), (4097,), (3, 0, 2), (2, 3, 5), (70000,)]
FILL = {
    bool_: [True, False],
    int32: [-(2**31), 2**31 - 1, 7],
    uint32: [2**32 - 1, 0],
    float32: [math.nan, -0.0, -math.inf, 2.5],
}


def same(got, want):
    """Bit for bit: dtype, shape and every value's bits (NaN's and -0's too)."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if got.dtype == np.float32:
        got, want = got.view(np.uint32), want.view(np.uint32)
    np.testing.assert_array_equal(got, want)


def read(t):
    return np.asarray(block_on(t.numpy()))


INDEXES = [
    ((0,), None),
    ((1,), None),
    ((4097,), None),
    ((3, 70000), None),
    ((), ()),
    ((4, 5), (0, 1)),
    ((4, 5), (1, 0)),
]
INDEXES += [((3, 4, 5), (0, 1, 0)), ((3, 7), (-3, 2)), ((2, 0, 3), (1, 1, 1)), ((70000, 2), (0, 1))]


@pytest.mark.parametrize("shape,strides", INDEXES, ids=str)
def test_the_index_generator_is_each_elements_strided_index(dev, shape, strides):
    """Element k of `shape` is sum(k_d * strides_d) (row-major strides by default: its flat index), against
    np.indices and the pure-Python reference (the kind's python call)."""
    index = ops.get("index")
    assert index in ops.GENERATORS and index.dtypes == (int32,) and tw.dtypes.signature(index, []) == (int32, int32)
    got = read(generate(dev, index, shape, (), strides))
    want = np.arange(math.prod(shape), dtype=np.int32).reshape(shape)
    if strides is not None:
        want = sum((np.indices(shape, dtype=np.int32)[d] * s for d, s in enumerate(strides)), np.zeros(shape, np.int32))
    same(got, want)
    _, options = index.row.shape(index, [], {"shape": shape} | ({} if strides is None else {"strides": strides}))
    assert index.row.python(index, [], [], (), options) == want.reshape(-1).tolist()


def test_only_the_index_generator_takes_strides():
    with pytest.raises(TruenoValueError, match="takes no strides"):
        ops.get("random_uniform").row.shape(ops.get("random_uniform"), [], {"shape": (2,), "strides": (1,)})
    with pytest.raises(TruenoValueError, match="one int per dimension"):
        ops.get("index").row.shape(ops.get("index"), [], {"shape": (2, 3), "strides": (1,)})


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_zeros_ones_empty_full(dev, dtype, shape):
    d = NP[dtype]
    same(read(tw.zeros(shape, dtype=dtype, device=dev)), np.zeros(shape, d))
    same(read(tw.ones(shape, dtype=dtype, device=dev)), np.ones(shape, d))
    same(read(tw.empty(shape, dtype=dtype, device=dev)), np.zeros(shape, d))  # empty is zeros here
    for v in FILL[dtype]:
        same(read(tw.full(shape, v, dtype=dtype, device=dev)), np.full(shape, v, d))


def test_full_infers_the_dtype_of_its_value(dev):
    for value, want in [(True, np.bool_), (-3, np.int32), (2.5, np.float32), (np.float32(1.5), np.float32)]:
        same(read(tw.full((2, 3), value, device=dev)), np.full((2, 3), value, want))
    assert tw.zeros(3, device=dev).dtype is float32 and tw.ones(3, dtype="int32", device=dev).dtype is int32


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_like_functions_take_shape_dtype_and_device_from_x(dev, dtype):
    x = tw.asarray(np.arange(6).reshape(2, 3).astype(NP[dtype]), device=dev)
    for fn, want in [(tw.zeros_like, np.zeros_like), (tw.ones_like, np.ones_like), (tw.empty_like, np.zeros_like)]:
        out = fn(x)
        assert out.device is dev
        same(read(out), want(np.asarray(block_on(x.numpy()))))
    same(read(tw.full_like(x, 1)), np.full((2, 3), 1, NP[dtype]))
    same(read(tw.zeros_like(x, dtype=float32)), np.zeros((2, 3), np.float32))
    same(read(tw.full_like(x, True, dtype=bool_)), np.full((2, 3), True))


INT_RANGES = [(5,), (2, 10), (10, 2, -1), (-7, 7, 3), (7, -7, -3), (3, 3), (5, 1), (0, 4097), (0, 70000), (0, 70000, 7)]
I32_RANGES = [
    (2**31 - 5, 2**31 - 1),
    (-(2**31), -(2**31) + 1000, 7),
    (-(2**31), 2**31 - 1, 2**30),
    (5, -(2**31), -(2**30)),
]
U32_RANGES = [(2**32 - 5, 2**32 - 1), (10, 0, -3), (0, 2**32 - 1, 2**31 - 1), (2**32 - 1, 0, -(2**31))]
FLOAT_RANGES = [(0.5, 3, 0.7), (-1.5, 2.25, 0.25), (10, -3.3, -0.37), (0, 1, 0.1), (1e6, 1e6 + 100, 0.7), (2.5,)]
FLOAT_RANGES += [(-3, 3, 0.001), (0, 70000.5, 1), (1, 0.5, 0.1), (0.1, 0.1, 0.1)]


@pytest.mark.parametrize(
    "args,dtype",
    [(a, int32) for a in INT_RANGES + I32_RANGES]
    + [(a, uint32) for a in U32_RANGES + [r for r in INT_RANGES if min(r) >= 0]]
    + [(a, float32) for a in FLOAT_RANGES + INT_RANGES],
    ids=str,
)
def test_arange_is_numpys(dev, args, dtype):
    same(read(tw.arange(*args, dtype=dtype, device=dev)), np.arange(*args, dtype=NP[dtype]))
    if dtype is not uint32 and all(isinstance(a, int) for a in args) == (dtype is int32):  # the inferred dtype
        same(read(tw.arange(*args, device=dev)), np.arange(*args, dtype=NP[dtype]))


def test_arange_of_random_float_ranges_is_numpys(dev):
    rng = np.random.default_rng(3)
    for _ in range(30):
        start, step = float(rng.uniform(-100, 100)), float(rng.choice([0.1, -0.37, 1.5, 0.001, -2.5, 3.3e-3]))
        stop = start + step * int(rng.integers(0, 3000))
        same(read(tw.arange(start, stop, step, device=dev)), np.arange(start, stop, step, dtype=np.float32))


LINSPACES = [
    (0, 1, 5),
    (-1, 1, 7),
    (3, -2, 4097),
    (1e-3, 1e3, 70000),
    (-5.5, 1e4, 333),
    (7, 7, 5),
    (0, 1, 1),
    (2, 3, 0),
]


@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("args", LINSPACES, ids=str)
def test_linspace_is_numpys_within_its_bound_with_exact_ends(dev, args, endpoint):
    got = read(tw.linspace(*args, endpoint=endpoint, device=dev))
    want = np.linspace(*args, endpoint=endpoint, dtype=np.float32)
    assert got.dtype == np.float32 and got.shape == want.shape
    # start + i * step in float32: step's rounding, the product's and the sum's (each at most 2^-24 of a
    # value within 2 max(|start|, |stop|)), and NumPy's own rounding of its float64 result: 6 m 2^-24
    m = max(abs(args[0]), abs(args[1]))
    assert np.all(np.abs(got.astype(np.float64) - want) <= 6 * m * 2.0**-24)
    if args[2]:
        assert got[0] == np.float32(args[0])
    if endpoint and args[2] > 1:
        assert got[-1] == np.float32(args[1])


EYES = [
    (3, None, 0),
    (3, 5, 2),
    (5, 3, -2),
    (4, 4, 10),
    (4, 4, -10),
    (0, 3, 0),
    (1, 1, 0),
    (70, 1000, -5),
    (2, 3, 2**40),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n,m,k", EYES, ids=str)
def test_eye_is_numpys(dev, n, m, k, dtype):
    same(read(tw.eye(n, m, k=k, dtype=dtype, device=dev)), np.eye(n, m, k=k, dtype=NP[dtype]))


def triangle_inputs(dtype):
    rng = np.random.default_rng(5)
    for shape in [(4, 5), (2, 3, 4), (5, 3), (1, 1), (0, 3), (3, 0), (2, 40000)]:
        x = rng.uniform(-10, 10, shape)
        if dtype is float32 and x.size:
            x.reshape(-1)[:3] = [math.nan, -0.0, math.inf][: x.size]
        yield x.astype(NP[dtype]) if dtype is not bool_ else x > 0


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_tril_and_triu_are_numpys(dev, dtype):
    for x in triangle_inputs(dtype):
        t = tw.asarray(x, device=dev)
        for k in (-2, 0, 1, 10, -10, 2**40, -(2**40)):
            same(read(tw.tril(t, k=k)), np.tril(x, k=k))
            same(read(tw.triu(t, k=k)), np.triu(x, k=k))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_is_numpys(dev, indexing):
    arrays = [np.arange(3, dtype=np.int32), np.arange(10, 15, dtype=np.int32), np.array([7, -1], np.int32)]
    for n in range(4):
        got = tw.meshgrid(*(tw.asarray(a, device=dev) for a in arrays[:n]), indexing=indexing)
        want = np.meshgrid(*arrays[:n], indexing=indexing)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(read(g), w)


def test_nothing_of_the_results_size_is_uploaded(dev):
    ups, downs = dev.stats.bytes_up, dev.stats.uploads
    block_on(tw.realize(tw.zeros((1000, 1000), device=dev), tw.full((512, 512), 3, device=dev)))
    block_on(tw.realize(tw.arange(0.5, 1e5, 0.5, device=dev), tw.eye(1000, device=dev)))
    block_on(tw.realize(tw.linspace(0, 1, 100000, device=dev)))
    assert dev.stats.bytes_up - ups <= 64 and dev.stats.uploads - downs <= 16  # 0-d constants only


def dispatches(dev, *tensors) -> int:
    before = dev.stats.dispatches
    block_on(tw.realize(*tensors))
    return dev.stats.dispatches - before


def test_the_functions_fuse_with_what_reads_them(dev2):
    x = tw.asarray(np.ones((40, 50), np.float32), device=dev2)
    assert dispatches(dev2, tw.zeros((40, 50), device=dev2) + x) == 1
    assert dispatches(dev2, tw.arange(0.5, 100, 0.3, device=dev2) * 2) == 1  # the iota, the affine map, the read
    assert dispatches(dev2, tw.linspace(0, 1, 2000, device=dev2) * 2) == 1
    # eye, tril and triu: their masks from strided iotas, computed in the kernel that reads them
    assert dispatches(dev2, tw.eye(40, 50, k=1, device=dev2) * x) == 1
    assert dispatches(dev2, tw.tril(x, k=-1) * 2 + tw.triu(x)) == 1
    assert dispatches(dev2, tw.triu(tw.asarray(np.ones((3, 40, 50), np.float32), device=dev2), k=2)) == 1


def test_the_default_device(monkeypatch):
    from trueno_web import device

    monkeypatch.setattr(device, "_default", None)
    monkeypatch.setenv("TRUENO_WEB_BACKEND", "numpy")
    made = tw.default_device()
    assert made.backend == "numpy" and tw.default_device() is made and tw.zeros(3).device is made
    made.close()
    again = tw.default_device()
    assert again is not made and again.backend == "numpy"
    cpu = block_on(tw.GpuDevice.create("numpy"))
    tw.set_default_device(cpu)
    assert tw.arange(4).device is cpu and tw.eye(2).device is cpu and tw.default_device() is cpu
    same(read(tw.arange(4)), np.arange(4, dtype=np.int32))
    with pytest.raises(TruenoTypeError, match="GpuDevice"):
        tw.set_default_device("numpy")
    for d in (again, cpu):
        d.close()


BAD = [
    (lambda dev: tw.zeros((2, -1), device=dev), TruenoValueError, "negative"),
    (lambda dev: tw.ones((2.5,), device=dev), TruenoTypeError, "tuple of ints"),
    (lambda dev: tw.full("3", 1, device=dev), TruenoTypeError, "tuple of ints"),
    (lambda dev: tw.empty((True, 2), device=dev), TruenoTypeError, "tuple of ints"),
    (lambda dev: tw.zeros(3, dtype="int8", device=dev), TruenoTypeError, "int8"),
    (lambda dev: tw.full(3, "a", device=dev), TruenoTypeError, "fill value"),
    (lambda dev: tw.full(3, 2**31, dtype=int32, device=dev), TruenoValueError, "does not fit int32"),
    (lambda dev: tw.zeros_like(np.zeros(3)), TruenoTypeError, "Tensor"),
    (lambda dev: tw.zeros(3, device="cpu"), TruenoTypeError, "GpuDevice"),
    (lambda dev: tw.arange(0, 5, 0, device=dev), TruenoValueError, "step must not be 0"),
    (lambda dev: tw.arange(0, math.inf, device=dev), TruenoValueError, "finite"),
    (lambda dev: tw.arange(0, "5", device=dev), TruenoTypeError, "stop"),
    (lambda dev: tw.arange(0.5, 5, dtype=int32, device=dev), TruenoTypeError, "int start"),
    (lambda dev: tw.arange(5, dtype=bool_, device=dev), TruenoTypeError, "bool"),
    (lambda dev: tw.arange(2**31 - 2, 2**31 + 2, device=dev), TruenoValueError, "do not fit int32"),
    (lambda dev: tw.arange(-3, 3, dtype=uint32, device=dev), TruenoValueError, "do not fit uint32"),
    (lambda dev: tw.linspace(0, 1, -1, device=dev), TruenoValueError, "num must be >= 0"),
    (lambda dev: tw.linspace(0, 1, 2.0, device=dev), TruenoTypeError, "num must be an int"),
    (lambda dev: tw.linspace(0, 1, 5, dtype=int32, device=dev), TruenoTypeError, "float32"),
    (lambda dev: tw.eye(-1, device=dev), TruenoValueError, ">= 0"),
    (lambda dev: tw.eye(3, k=0.5, device=dev), TruenoTypeError, "k must be an int"),
    (lambda dev: tw.tril(tw.zeros(3, device=dev)), TruenoValueError, "2 or more dimensions"),
    (lambda dev: tw.triu(np.zeros((2, 2))), TruenoTypeError, "Tensor"),
    (lambda dev: tw.meshgrid(tw.zeros(2, device=dev), indexing="xx"), TruenoValueError, "indexing"),
    (lambda dev: tw.meshgrid(tw.zeros((2, 2), device=dev)), TruenoValueError, "1-D"),
    (lambda dev: tw.meshgrid(tw.zeros(2, device=dev), tw.arange(2, device=dev)), TruenoTypeError, "one dtype"),
]


@pytest.mark.parametrize("make,error,words", BAD, ids=[w for _, _, w in BAD])
def test_bad_arguments_raise_at_the_call_and_the_device_stays_usable(dev, make, error, words):
    with pytest.raises(error, match=words):
        make(dev)
    same(read(tw.arange(3, device=dev) + tw.ones(3, dtype=int32, device=dev)), np.arange(1, 4, dtype=np.int32))


def test_meshgrid_of_two_devices_raises(dev):
    other = block_on(tw.GpuDevice.create("numpy"))
    try:
        with pytest.raises(TruenoValueError, match="one device"):
            tw.meshgrid(tw.zeros(2, device=dev), tw.zeros(2, device=other))
    finally:
        other.close()
