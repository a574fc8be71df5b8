"""Host data in and out: every accepted input form becomes float32 of the right shape; outputs are
float32 NumPy arrays of the natural shape (an NDResult of that shape where NumPy is absent); bad data raises
TruenoTypeError / TruenoValueError."""

from __future__ import annotations

import array

import pytest
from _cases import HAVE_NUMPY, flat, has_shape, run

import trueno_web as tw
from trueno_web import host
from trueno_web.ndresult import NDResult

needs_numpy = pytest.mark.skipif(not HAVE_NUMPY, reason="NumPy input/output forms")


def roundtrip(dev, data):
    """scale(x, 1.0): the data as the device saw it, in the output form."""
    return run(dev.scale(data, 1.0))


# ---------------------------------------------------------------- pure-Python forms (also in Pyodide)


V3 = [1.0, -2.5, 3.0]
V6 = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


@pytest.mark.parametrize(
    "data,shape,want",
    [
        ([1.0, -2.5, 3.0], (3,), V3),
        ((1.0, -2.5, 3.0), (3,), V3),
        ([1, -2, 3], (3,), [1.0, -2.0, 3.0]),
        ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], (2, 3), V6),
        (((1.0, 2.0), (3.0, 4.0)), (2, 2), V6[:4]),
        ([[[1.0, 2.0]], [[3.0, 4.0]]], (2, 1, 2), V6[:4]),
        (array.array("f", V3), (3,), V3),
        (array.array("d", V3), (3,), V3),
        (array.array("i", [1, -2, 3]), (3,), [1.0, -2.0, 3.0]),
        (memoryview(array.array("f", V3)), (3,), V3),
        (memoryview(array.array("d", V3)), (3,), V3),
        (memoryview(array.array("f", V6)).cast("B").cast("f", (2, 3)), (2, 3), V6),
        (memoryview(array.array("f", [1.0, 9.0, -2.5, 9.0, 3.0, 9.0]))[::2], (3,), V3),
        (bytearray(b"\x00\x00\x80?"), None, None),
    ],
    ids=[
        "list",
        "tuple",
        "ints",
        "nested",
        "nested-tuples",
        "3-D",
        "array-f",
        "array-d",
        "array-i",
        "mv-f",
        "mv-d",
        "mv-2d",
        "mv-strided",
        "bytearray",
    ],
)
def test_python_inputs(dev, data, shape, want):
    if shape is None:  # raw bytes are not numbers: pass array('f') or a float memoryview
        with pytest.raises(tw.TruenoTypeError):
            roundtrip(dev, data)
        return
    got = roundtrip(dev, data)
    assert has_shape(got, shape)
    assert flat(got) == want


def test_values_are_rounded_to_float32(dev):
    got = flat(roundtrip(dev, [0.1, 1e39, -1e39, 16777217]))
    assert got == list(array.array("f", [0.1, 1e39, -1e39, 16777217]))
    assert got[1:3] == [float("inf"), float("-inf")] and got[3] == 16777216.0


def test_empty_and_degenerate_shapes(dev):
    assert has_shape(roundtrip(dev, []), (0,))
    assert has_shape(roundtrip(dev, [[], []]), (2, 0))
    assert has_shape(roundtrip(dev, [[5.0]]), (1, 1))


def test_to_host_shape_argument():
    h = host.to_host([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=(3, 2))
    assert h.shape == (3, 2) and h.size == 6 and list(h.data) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    with pytest.raises(tw.TruenoValueError, match=r"shape \(4, 2\) does not fit 6"):
        host.to_host([1.0] * 6, shape=(4, 2))
    with pytest.raises(tw.TruenoValueError):
        host.to_host([1.0] * 6, shape=(-2, -3))


def test_outputs_without_numpy(dev, monkeypatch):
    """Where NumPy is absent, inputs are converted in pure Python and outputs are NDResults of their shape."""
    monkeypatch.setattr(host, "numpy_available", lambda: False)
    h = host.to_host(memoryview(array.array("d", [1.5, -2.0])))
    assert h.data.format == "f" and list(h.data) == [1.5, -2.0]
    h = host.to_host(memoryview(array.array("d", [1.0, 2.0, 3.0, 4.0])).cast("B").cast("d", (2, 2)))
    assert h.shape == (2, 2) and list(h.data) == [1.0, 2.0, 3.0, 4.0]
    h = host.to_host(memoryview(array.array("i", [1, 2, 3]))[::2])
    assert list(h.data) == [1.0, 3.0]
    out = host.from_host(array.array("f", [1.0, 2.0, 3.0, 4.0]), (2, 2))
    assert isinstance(out, NDResult) and out.shape == (2, 2) and out.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert isinstance(out, array.array) and out.typecode == "f" and list(memoryview(out)) == [1.0, 2.0, 3.0, 4.0]
    with pytest.raises(tw.TruenoTypeError, match="cannot use"):
        host.to_host(memoryview(b"ab").cast("c"))
    if dev.backend != "numpy":
        got = run(dev.relu([[-1.0, 2.0], [3.0, -4.0]]))
        assert isinstance(got, NDResult) and got == [[0.0, 2.0], [3.0, 0.0]]


@pytest.mark.parametrize(
    "bad",
    [["a", "b"], [[1.0], ["x"]], [None], [object()], "abc", None, {}, set(), range(3)],
    ids=["strs", "nested-str", "None-item", "object-item", "str", "None", "dict", "set", "range"],
)
def test_bad_python_data(bad):
    with pytest.raises(tw.TruenoTypeError):
        host.to_host(bad)


@pytest.mark.parametrize(
    "bad", [[[1.0, 2.0], [3.0]], [[1.0], 2.0], [[[1.0]], [[1.0, 2.0]]]], ids=["ragged", "mixed-depth", "ragged-3d"]
)
def test_ragged_lists(bad):
    with pytest.raises(tw.TruenoValueError, match="rectangular"):
        host.to_host(bad)


def test_int_too_large_for_float():
    with pytest.raises(tw.TruenoValueError):
        host.to_host([1.0, 10**400])


# ---------------------------------------------------------------- NumPy forms


@needs_numpy
@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "float16", "int32", "int64", "uint8", "int8", ">f4", "<f8", "bool"]
)
def test_numpy_dtypes(dev, dtype):
    import numpy as np

    x = np.array([[1, 0, 3], [4, 5, 1]]).astype(dtype)
    got = roundtrip(dev, x)
    kept = np.float16 if dtype == "float16" else np.float32  # float16 is held (two bytes an element)
    assert isinstance(got, np.ndarray) and got.dtype == kept and got.shape == (2, 3)
    assert np.array_equal(got, x.astype(kept))


@needs_numpy
def test_numpy_non_contiguous(dev):
    import numpy as np

    base = np.arange(48, dtype=np.float64).reshape(6, 8) - 20.0
    for view in (base[::2], base.T, base[1:5, 2:7], base[::-1, ::3], base[:, 3], np.asfortranarray(base)):
        got = roundtrip(dev, view)
        assert got.shape == view.shape and np.array_equal(got, view.astype(np.float32))
        assert np.array_equal(run(dev.relu(view)), np.maximum(view, 0).astype(np.float32))
    mv = memoryview(np.arange(10, dtype=np.float32))[::3]
    assert np.array_equal(roundtrip(dev, mv), np.arange(10, dtype=np.float32)[::3])


@needs_numpy
def test_numpy_outputs_have_the_natural_shape(dev):
    import numpy as np

    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    for out, shape in (
        (run(dev.relu(x)), (3, 4)),
        (run(dev.softmax(x)), (3, 4)),
        (run(dev.matmul(x, x.T)), (3, 3)),
        (run(dev.convolve2d(x, np.ones((2, 2)))), (2, 3)),
        (run(dev.add(x, x)), (3, 4)),
        (run(dev.relu(x.reshape(-1))), (12,)),
    ):
        assert isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == shape
        assert out.flags.c_contiguous and out.flags.writeable
    assert type(run(dev.sum(x))) is float


@needs_numpy
def test_result_does_not_alias_the_input(dev):
    import numpy as np

    x = np.array([1.0, 2.0], dtype=np.float32)
    y = run(dev.scale(x, 1.0))
    y[0] = 99.0
    assert x[0] == 1.0
    x[1] = 42.0
    assert y[1] == 2.0


@needs_numpy
@pytest.mark.parametrize("dtype", ["U3", "O", "datetime64[s]", "timedelta64[s]"])  # complex: tests/test_complex.py
def test_bad_numpy_dtypes(dev, dtype):
    import numpy as np

    x = np.zeros(3, dtype=dtype)
    with pytest.raises(tw.TruenoTypeError, match="dtype"):
        run(dev.relu(x))
    assert flat(run(dev.relu([-1.0]))) == [0.0]


@needs_numpy
def test_numpy_scalars_in_lists_and_as_params(dev):
    import numpy as np

    assert flat(roundtrip(dev, [np.float32(1.5), np.float64(2.0), np.int64(3)])) == [1.5, 2.0, 3.0]
    assert flat(run(dev.scale([1.0, 2.0], np.float32(3.0)))) == [3.0, 6.0]
    assert flat(run(dev.clip([-5.0, 5.0], np.int32(-1), np.float64(1.0)))) == [-1.0, 1.0]
    with pytest.raises(tw.TruenoTypeError, match="array data"):
        run(dev.relu(np.float32(1.0)))
