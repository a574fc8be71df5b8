"""tw.fft against numpy.fft on the numpy backend (odd and prime lengths, n= cutting and padding, negative axes,
every norm, complex64 and complex128 kept), the transform rows' pure-Python references against NumPy, the
frequencies and shifts on every backend, and the TruenoTypeError naming backend='numpy' elsewhere."""

from __future__ import annotations

import math

import numpy as np
import pytest

import trueno_web as tw
from trueno_web import ops
from trueno_web.runtime import block_on

RNG = np.random.default_rng(7)
C = (RNG.standard_normal((3, 5, 7)) + 1j * RNG.standard_normal((3, 5, 7))).astype(np.complex128)
R = RNG.standard_normal((4, 6, 5))
C[0, 0, 0] = complex(-0.0, 1e30)  # a huge value beside small ones: the transform's relative error is of the whole
ONE_AXIS = [{}, {"n": 4}, {"n": 11, "axis": 0}, {"axis": -2, "norm": "ortho"}, {"n": 1, "axis": 1, "norm": "forward"}]
MANY_AXES = [{}, {"axes": (0, 2)}, {"s": (2, 9), "axes": (-1, 0), "norm": "ortho"}, {"axes": (1,), "norm": "forward"}]


def close(got, want, dtype) -> bool:
    """Same dtype and shape; within float32's or float64's rounding of the largest magnitude (an FFT's error)."""
    scale = max(float(np.max(np.abs(want), initial=0.0)), 1e-300)
    tol = 2e-6 if dtype in (np.complex64, np.float32) else 1e-13
    return (
        got.dtype == dtype and got.shape == want.shape and float(np.max(np.abs(got - want), initial=0.0)) <= tol * scale
    )


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", ["fft", "ifft", "irfft", "hfft"])
@pytest.mark.parametrize("kwargs", ONE_AXIS, ids=str)
def test_one_axis_of_complex(cpu, name, kwargs, dtype):
    if name in ("irfft", "hfft") and kwargs.get("n") == 1:
        kwargs = {**kwargs, "n": 2}
    x = C.astype(dtype)
    got = block_on(getattr(tw.fft, name)(tw.asarray(x, device=cpu, dtype=x.dtype.name), **kwargs).numpy())
    want = getattr(np.fft, name)(x.astype(np.complex128), **kwargs)
    wanted = dtype if name in ("fft", "ifft") else np.float32 if dtype is np.complex64 else np.float64
    assert got.dtype == wanted and close(got, want, wanted)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["rfft", "ihfft"])
@pytest.mark.parametrize("kwargs", ONE_AXIS, ids=str)
def test_one_axis_of_real(cpu, name, kwargs, dtype):
    x = R.astype(dtype)
    got = block_on(getattr(tw.fft, name)(tw.asarray(x, device=cpu, dtype=x.dtype.name), **kwargs).numpy())
    want = getattr(np.fft, name)(x.astype(np.float64), **kwargs)
    wanted = np.complex64 if dtype is np.float32 else np.complex128
    assert got.dtype == wanted and close(got, want, wanted)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("kwargs", MANY_AXES, ids=str)
def test_many_axes(cpu, name, kwargs):
    x = R if name == "rfftn" else C
    got = block_on(getattr(tw.fft, name)(tw.asarray(x, device=cpu, dtype=x.dtype.name), **kwargs).numpy())
    want = getattr(np.fft, name)(x, **kwargs)
    assert close(got, want, want.dtype)


def test_transforms_are_lazy_and_fuse_with_their_neighbours(cpu):
    x = tw.asarray(C, device=cpu, dtype=tw.complex128)
    roundtrip = tw.fft.ifft(tw.fft.fft(x * 2.0, axis=0), axis=0) - x  # one batch: scale, two transforms, subtract
    assert close(block_on(roundtrip.numpy()), C, np.complex128)
    spectrum = tw.fft.rfft(tw.asarray(R, device=cpu, dtype=tw.float64))
    assert close(block_on(tw.fft.irfft(spectrum, n=R.shape[-1]).numpy()), R, np.float64)


@pytest.mark.parametrize("op", ops.TRANSFORMS, ids=lambda op: op.name)
@pytest.mark.parametrize("options", [{}, {"axes": (1, 0), "sizes": (4, 3), "norm": "ortho"}], ids=str)
def test_pure_python_references(op, options):
    x = C[:, :4, 0] if op.name != "rdft" else R[:3, :4, 0]
    shape, resolved = op.row.shape(op, [x.shape], dict(options, inverse=True) if "inverse" in op.options else options)
    got = np.array(op.row.python(op, [list(x.reshape(-1))], [x.shape], (), resolved)).reshape(shape)
    want = op.row.numpy(op, [x], (), resolved)
    assert np.allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_frequencies_and_shifts_on_every_backend(dev):
    for n, d in ((1, 1.0), (6, 0.5), (7, 3.0)):
        assert np.allclose(block_on(tw.fft.fftfreq(n, d=d, device=dev).numpy()), np.fft.fftfreq(n, d), rtol=1e-6)
        assert np.allclose(block_on(tw.fft.rfftfreq(n, d=d, device=dev).numpy()), np.fft.rfftfreq(n, d), rtol=1e-6)
    assert tw.fft.fftfreq(4, device=dev).dtype is tw.float32
    x = np.arange(35, dtype=np.float32).reshape(5, 7)
    t = tw.asarray(x, device=dev)
    for axes in (None, 0, (-1,), (1, 0)):
        assert np.array_equal(block_on(tw.fft.fftshift(t, axes=axes).numpy()), np.fft.fftshift(x, axes=axes))
        assert np.array_equal(block_on(tw.fft.ifftshift(t, axes=axes).numpy()), np.fft.ifftshift(x, axes=axes))
    with pytest.raises(tw.TruenoValueError, match="n must be >= 1"):
        tw.fft.fftfreq(0, device=dev)


def test_mistakes_raise_where_written(dev):
    t = tw.asarray(R[0].astype(np.float32), device=dev)
    if dev.backend != "numpy":
        for call in (tw.fft.fft, tw.fft.rfft, tw.fft.ihfft, tw.fft.rfftn, tw.fft.irfft):
            with pytest.raises(tw.TruenoTypeError, match=r"fft\..*complex64 needs backend='numpy'"):
                call(t)
        assert block_on((t * 2).numpy()).shape == (6, 5)  # still usable
        return
    with pytest.raises(tw.TruenoValueError, match="norm="):
        tw.fft.fft(t, norm="both")
    with pytest.raises(tw.TruenoValueError, match="out of range"):
        tw.fft.fft(t, axis=2)
    with pytest.raises(tw.TruenoValueError, match="repeat an axis"):
        tw.fft.fftn(t, axes=(0, -2))
    with pytest.raises(tw.TruenoValueError, match=">= 1"):
        tw.fft.irfft(tw.asarray([1j], device=dev))  # 2 (m - 1) = 0 points: pass n=
    with pytest.raises(tw.TruenoValueError, match="0-d"):
        tw.fft.fft(tw.asarray(1j, device=dev))
    with pytest.raises(tw.TruenoTypeError, match="real numbers"):
        tw.fft.rfft(tw.asarray([1j, 2j], device=dev))
    with pytest.raises(tw.TruenoTypeError, match="floating or complex"):
        tw.fft.fft(tw.asarray([1, 2], device=dev))
    assert math.isclose(block_on(tw.fft.fft(t, n=1).numpy())[0, 0].real, float(R[0, 0, 0]), rel_tol=1e-6)
