"""Reads without NumPy: every read path returns an NDResult of the natural shape that prints, indexes,
compares and converts like a small float32 array, and still hands its float32 data to buffers.

On the desktop NumPy is hidden with monkeypatch (host.numpy_available); inside Pyodide
(e2e/test_parity_in_pyodide.py) NumPy is really absent. The NumPy cross-checks need NumPy itself."""

from __future__ import annotations

import array
import copy
import pickle
import random
import struct

import pytest
from _cases import HAVE_NUMPY, run

import trueno_web as tw
from trueno_web import host
from trueno_web.ndresult import NDResult, f32_repr
from trueno_web.runtime import block_on

needs_numpy = pytest.mark.skipif(not HAVE_NUMPY, reason="compares with NumPy itself")


def f32(v: float) -> float:
    return struct.unpack("f", struct.pack("f", v))[0]


@pytest.fixture
def no_numpy(monkeypatch):
    monkeypatch.setattr(host, "numpy_available", lambda: False)


def nd(values, shape) -> NDResult:
    return NDResult(array.array("f", values), shape)


# ---------------------------------------------------------------- the type


def test_shape_attributes_and_nested_lists():
    r = nd(range(24), (2, 3, 4))
    assert (r.shape, r.ndim, r.size, len(r)) == ((2, 3, 4), 3, 24, 2)
    assert r.dtype == "float32" and r.dtype.name == "float32" and str(r.dtype) == "float32"
    assert r.tolist()[1][2] == [20.0, 21.0, 22.0, 23.0]
    assert r.reshape(4, -1).shape == (4, 6) and r.reshape((24,)).tolist() == list(map(float, range(24)))
    assert nd([], (0, 3)).tolist() == [] and nd([], (2, 0)).tolist() == [[], []]
    with pytest.raises(tw.TruenoValueError, match="cannot reshape 24"):
        r.reshape(5, -1)


def test_indexing_gives_rows_elements_and_slices():
    r = nd(range(12), (3, 4))
    assert isinstance(r[1], NDResult) and r[1].shape == (4,) and r[1] == [4.0, 5.0, 6.0, 7.0]
    assert r[-1, -1] == 11.0 and isinstance(r[2, 0], float)
    assert r[1:].shape == (2, 4) and r[::2] == [[0, 1, 2, 3], [8, 9, 10, 11]]
    assert r[:, 1] == [1.0, 5.0, 9.0] and r[1:, 1:3] == [[5, 6], [9, 10]]
    assert r[5:].shape == (0, 4) and r[5:, :2].shape == (0, 2)
    assert [row.tolist() for row in r] == r.tolist() and list(r[0]) == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(IndexError):
        r[3]
    with pytest.raises(IndexError):
        r[0, 0, 0]
    with pytest.raises(tw.TruenoTypeError, match="ints and slices"):
        r[[0, 1]]


def test_repr_is_numpy_like_with_float32_shortest_digits():
    r = nd([1.0, 2.5, -3.0, 4.4, 0.1, 1e-5], (2, 3))
    assert repr(r) == "array([[  1.0,   2.5,  -3.0],\n       [  4.4,   0.1, 1e-05]], dtype=float32)"
    assert repr(nd([4.4], ())) == "array(4.4, dtype=float32)"
    assert repr(nd([], (0, 2))) == "array([], shape=(0, 2), dtype=float32)"
    big = repr(nd(range(5000), (5000,)))
    assert big.startswith("array([   0.0,    1.0,    2.0, ...,") and len(big) < 100


def test_float32_repr_is_the_shortest_that_reads_back():
    rng = random.Random(5)
    for _ in range(2000):
        v = f32(rng.uniform(-1, 1) * 10.0 ** rng.randint(-40, 38))
        text = f32_repr(v)
        assert f32(float(text)) == v, (v, text)
        digits = len(text.split("e")[0].replace("-", "").replace(".", "").strip("0"))  # significant digits
        shorter = f"{v:.{max(digits - 1, 1)}g}"
        assert digits == 1 or f32(float(shorter)) != v, (v, text, shorter)


@needs_numpy
def test_float32_repr_matches_numpy():
    import numpy as np

    values = np.random.default_rng(3).standard_normal(500).astype(np.float32) * 1e3
    for v in values:
        assert float(f32_repr(float(v))) == float(str(v)), (v, f32_repr(float(v)))
    r = nd(values.tolist(), (20, 25))
    back = np.asarray(r).reshape(r.shape)  # NumPy reads the buffer: flat float32
    assert np.array_equal(back, values.reshape(20, 25)) and back.dtype == np.float32


def test_equality_rounds_lists_to_float32_and_checks_the_shape():
    r = nd([1.0, 2.5, 4.4, 0.1], (2, 2))
    assert r == [[1.0, 2.5], [4.4, 0.1]] and r == ((1, 2.5), (4.4, 0.1)) and r == r.copy()
    assert r != [1.0, 2.5, 4.4, 0.1] and r != [[1.0, 2.5], [4.4, 0.2]] and r != r.reshape(4)
    assert r != [[1e40, 0.0], [0.0, 0.0]] and not (r == "text")


def test_buffer_protocol_gives_the_float32_data():
    r = nd([1.0, 2.0, 3.0, 4.0], (2, 2))
    view = memoryview(r)
    assert view.format == "f" and view.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert array.array("f", r.tobytes()) == array.array("f", [1.0, 2.0, 3.0, 4.0])
    assert isinstance(r, array.array) and r.typecode == "f"


def test_copies_and_pickles_keep_the_shape():
    r = nd(range(6), (3, 2))
    for other in (copy.copy(r), copy.deepcopy(r), pickle.loads(pickle.dumps(r))):
        assert isinstance(other, NDResult) and other.shape == (3, 2) and other == r


def test_mistakes_raise_with_what_to_do():
    r = nd(range(4), (2, 2))
    with pytest.raises(tw.TruenoTypeError, match="compute on the device"):
        r + 1
    with pytest.raises(tw.TruenoTypeError, match="compute on the device"):
        r * 2
    with pytest.raises(tw.TruenoTypeError, match="keeps its size"):
        r.append(1.0)
    with pytest.raises(tw.TruenoTypeError, match="len"):
        len(nd([1.0], ()))
    r[1, 0] = 7.0
    assert r.tolist() == [[0.0, 1.0], [7.0, 3.0]]
    with pytest.raises(tw.TruenoTypeError, match="one element at a time"):
        r[0] = 1.0
    assert nd([2.5], (1, 1)).item() == 2.5
    with pytest.raises(tw.TruenoValueError, match="one element"):
        r.item()


# ---------------------------------------------------------------- every read path, NumPy hidden


def test_every_read_returns_an_ndresult_of_its_shape(dev, no_numpy):
    data = [[-1.0, 2.0, -3.0], [4.4, -5.0, 6.0]]
    want = [[0.0, 2.0, 0.0], [4.4, 0.0, 6.0]]
    one_shot = run(dev.relu(data))
    assert isinstance(one_shot, NDResult) and one_shot.shape == (2, 3) and one_shot == want
    with dev.batch() as b:
        out = b.relu(b.upload(data))
        block_on(b.execute())
        got = block_on(b.read(out))
    assert isinstance(got, NDResult) and got == want
    resident = block_on(dev.upload(data))
    assert block_on(resident.read()) == data and block_on(dev.read(resident)).shape == (2, 3)
    t = dev.tensor(data).relu()
    assert block_on(t.numpy()) == want and block_on(t.T.numpy()) == [list(c) for c in zip(*want)]
    assert block_on(t[1].numpy()) == want[1] and block_on(t.sum().item()) == f32(f32(4.4) + 8.0)
    assert "4.4" in repr(block_on(t.numpy())) and "4.400000" not in repr(block_on(t.numpy()))


def test_a_result_goes_back_in_with_its_shape(dev, no_numpy):
    r = run(dev.relu([[1.0, -2.0], [3.0, 4.0]]))
    t = dev.tensor(r)
    assert t.shape == (2, 2) and block_on((t @ t).numpy()) == [[1.0, 0.0], [15.0, 16.0]]
