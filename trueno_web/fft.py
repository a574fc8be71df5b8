"""tw.fft: the array API's fft extension (2024.12).

The transforms are lazy tensors of the rows ops.TRANSFORMS (dft, rdft, irdft; NumPy's pocketfft on the NumPy
backend): fft/ifft/fftn/ifftn are dft, rfft/rfftn rdft, irfft/irfftn irdft; hfft is irfft of the conjugate and
ihfft the conjugate of rfft, each with the opposite norm (NumPy's definitions). Their results (or inputs) are
complex, which only backend='numpy' holds: elsewhere they raise TruenoTypeError at the call (WGSL has no
complex type). fftfreq, rfftfreq, fftshift and ifftshift are real tensor ops and run on every backend.
"""

from __future__ import annotations

from . import ops
from .device import arange
from .dtypes import check_held, complex_dtype, dtype_of, float32, real_dtype
from .errors import TruenoTypeError, TruenoValueError
from .namespace import roll
from .tensor import Tensor
from .tensor.creation import device_arg, int_arg

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft"]
__all__ += ["fftfreq", "rfftfreq", "fftshift", "ifftshift"]

DFT, RDFT, IRDFT = ops.get("dft"), ops.get("rdft"), ops.get("irdft")
OPPOSITE = {"backward": "forward", "forward": "backward", "ortho": "ortho"}  # hfft's and ihfft's norm


def _transform(name: str, op, x, sizes, axes, norm: str, **options) -> Tensor:
    """A tensor of transform row `op` of x: refused at once where x's backend holds no complex dtype."""
    if not isinstance(x, Tensor):
        raise TruenoTypeError(f"fft.{name} takes a Tensor; make one with tw.asarray(x)")
    if x.dtype.kind not in ("float", "complex"):
        raise TruenoTypeError(f"fft.{name} takes floating or complex numbers; got {x.dtype.name} (use astype)")
    executor = x.device.executor
    check_held(complex_dtype(real_dtype(x.dtype)), executor.backend, executor.dtypes, f"fft.{name}: ")
    if norm not in OPPOSITE:
        raise TruenoValueError(f"fft.{name}: norm={norm!r}; one of backward, ortho, forward")
    return x._apply(op, [x], options={"axes": axes, "sizes": sizes, "norm": norm, **options})


def _one(n, axis):
    """(sizes, axes) of a one-axis transform's n= and axis=."""
    return (None if n is None else (int_arg(n, "n", "fft"),)), (int_arg(axis, "axis", "fft"),)


def _many(s, axes):
    """(sizes, axes) of an n-axis transform's s= and axes= (axes None: every axis, or the last len(s))."""
    if axes is None and s is not None:
        axes = tuple(range(-len(s), 0))
    return (None if s is None else tuple(s)), (None if axes is None else tuple(axes))


def fft(x, /, *, n=None, axis=-1, norm="backward") -> Tensor:
    return _transform("fft", DFT, x, *_one(n, axis), norm)


def ifft(x, /, *, n=None, axis=-1, norm="backward") -> Tensor:
    return _transform("ifft", DFT, x, *_one(n, axis), norm, inverse=True)


def fftn(x, /, *, s=None, axes=None, norm="backward") -> Tensor:
    return _transform("fftn", DFT, x, *_many(s, axes), norm)


def ifftn(x, /, *, s=None, axes=None, norm="backward") -> Tensor:
    return _transform("ifftn", DFT, x, *_many(s, axes), norm, inverse=True)


def rfft(x, /, *, n=None, axis=-1, norm="backward") -> Tensor:
    return _transform("rfft", RDFT, _real("rfft", x), *_one(n, axis), norm)


def irfft(x, /, *, n=None, axis=-1, norm="backward") -> Tensor:
    return _transform("irfft", IRDFT, x, *_one(n, axis), norm)


def rfftn(x, /, *, s=None, axes=None, norm="backward") -> Tensor:
    return _transform("rfftn", RDFT, _real("rfftn", x), *_many(s, axes), norm)


def irfftn(x, /, *, s=None, axes=None, norm="backward") -> Tensor:
    return _transform("irfftn", IRDFT, x, *_many(s, axes), norm)


def hfft(x, /, *, n=None, axis=-1, norm="backward") -> Tensor:
    """The transform of a Hermitian-symmetric signal given by its first half: real numbers."""
    if isinstance(x, Tensor) and x.dtype.kind == "complex":
        x = x.conj()
    return _transform("hfft", IRDFT, x, *_one(n, axis), OPPOSITE.get(norm, norm))


def ihfft(x, /, *, n=None, axis=-1, norm="backward") -> Tensor:
    """The inverse of hfft: the first half of a real signal's Hermitian spectrum."""
    out = _transform("ihfft", RDFT, _real("ihfft", x), *_one(n, axis), OPPOSITE.get(norm, norm))
    return out.conj()


def _real(name: str, x):
    if isinstance(x, Tensor) and x.dtype.kind == "complex":
        raise TruenoTypeError(f"fft.{name} takes real numbers; got {x.dtype.name} (fft.fft takes complex ones)")
    return x


# ---------------------------------------------------------------- frequencies and shifts (every backend)


def fftfreq(n, /, *, d=1.0, dtype=None, device=None) -> Tensor:
    """The sample frequencies of an n-point transform: [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d n)."""
    n = int_arg(n, "n", "fftfreq")
    if n < 1:
        raise TruenoValueError(f"fftfreq: n must be >= 1, got {n}")
    k = arange(n, device=device_arg(device, "fftfreq"))
    return ((k + n // 2) % n - n // 2).astype(_float(dtype)) / (d * n)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None) -> Tensor:
    """The non-negative sample frequencies of an n-point rfft: [0, 1, ..., n // 2] / (d n)."""
    n = int_arg(n, "n", "rfftfreq")
    if n < 1:
        raise TruenoValueError(f"rfftfreq: n must be >= 1, got {n}")
    return arange(n // 2 + 1, device=device_arg(device, "rfftfreq")).astype(_float(dtype)) / (d * n)


def _float(dtype):
    d = float32 if dtype is None else dtype_of(dtype)
    if d.kind != "float":
        raise TruenoTypeError(f"the frequencies are real floating numbers; got dtype={d.name}")
    return d


def fftshift(x, /, *, axes=None) -> Tensor:
    """The zero frequency moved to the middle: each axis (default: all) rolled by half its length."""
    axes = tuple(range(x.ndim)) if axes is None else (axes,) if isinstance(axes, int) else tuple(axes)
    return roll(x, tuple(x.shape[a] // 2 for a in axes), axis=axes) if axes else x


def ifftshift(x, /, *, axes=None) -> Tensor:
    """The inverse of fftshift: each axis rolled back by half its length."""
    axes = tuple(range(x.ndim)) if axes is None else (axes,) if isinstance(axes, int) else tuple(axes)
    return roll(x, tuple(-(x.shape[a] // 2) for a in axes), axis=axes) if axes else x
