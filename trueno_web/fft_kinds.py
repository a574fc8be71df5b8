"""The fft kind's rules: discrete Fourier transforms along axes (ops.TRANSFORMS: dft complex to complex, rdft
real to complex, irdft complex to real), their output shapes (checked where the call is written), NumPy's
pocketfft as the NumPy backend's call, and a pure-Python DFT as the reference where NumPy is missing.

A transform's resolved options: `axes` (distinct, non-negative, in the order they transform), `sizes` (the
length each axis is cut or zero-padded to first; irdft's last one is its real output's length), `norm`
("backward": the inverse scales by 1/n, "forward": the forward one does, "ortho": both by 1/sqrt(n)) and, for
dft, `inverse`. Only the NumPy backend runs them: complex numbers have no kernel (dtypes.check_held)."""

from __future__ import annotations

import cmath
import math
from operator import index

from .errors import TruenoTypeError, TruenoValueError
from .references import numpy_module

NORMS = ("backward", "ortho", "forward")


def fft_shape(op, shapes, options):
    """The output shape and resolved options (see the module docstring) of `op` on an input of shapes[0]."""
    shape = shapes[0]
    if not shape:
        raise TruenoValueError(f"{op.name} needs an array of at least one dimension; got a 0-d one")
    try:
        axes = tuple(index(a) for a in options.get("axes") or range(len(shape)))
        sizes = options.get("sizes")
        sizes = None if sizes is None else tuple(index(s) for s in sizes)
    except TypeError:
        raise TruenoTypeError(f"{op.name}: axes and sizes are ints; got {options.get('axes')!r:.40}") from None
    if any(not -len(shape) <= a < len(shape) for a in axes):
        raise TruenoValueError(f"{op.name}: axes {axes} out of range for shape {shape}")
    axes = tuple(a % len(shape) for a in axes)
    if len(set(axes)) != len(axes):
        raise TruenoValueError(f"{op.name}: axes {axes} repeat an axis; name each at most once")
    if sizes is None:
        sizes = tuple(shape[a] for a in axes)
        if op.name == "irdft":  # the real signal of a half spectrum of m values: 2 (m - 1)
            sizes = sizes[:-1] + (2 * (shape[axes[-1]] - 1),)
    if len(sizes) != len(axes) or any(s < 1 for s in sizes):
        raise TruenoValueError(f"{op.name}: sizes {sizes} need one length >= 1 per axis of {axes} (n=, s=)")
    norm = options.get("norm", "backward")
    if norm not in NORMS:
        raise TruenoValueError(f"{op.name}: norm={norm!r}; one of {', '.join(NORMS)}")
    out = list(shape)
    for a, s in zip(axes, sizes):
        out[a] = s
    if op.name == "rdft":
        out[axes[-1]] = sizes[-1] // 2 + 1
    resolved = {"axes": axes, "sizes": sizes, "norm": norm}
    if "inverse" in op.options:
        resolved["inverse"] = bool(options.get("inverse", False))
    return tuple(out), resolved


def fft_work(out, ins, options) -> int:
    """n log2 n per transformed element, roughly."""
    return math.prod(out) * max(1, math.ceil(math.log2(max(2, max(options["sizes"])))))


def fft_numpy(op, arrays, params, options):
    """The row's NumPy transform of the input with the resolved options."""
    return op.numpy(arrays[0], **options)


def fft_python(op, lists, shapes, params, options):
    """The row's pure-Python transform of the flat input."""
    return op.ref(lists[0], shapes[0], **options)


# ---------------------------------------------------------------- the rows' references: NumPy's, pure Python's


def np_dft(x, axes, sizes, norm, inverse=False):
    fft = numpy_module().fft
    return (fft.ifftn if inverse else fft.fftn)(x, s=sizes, axes=axes, norm=norm)


def np_rdft(x, axes, sizes, norm):
    return numpy_module().fft.rfftn(x, s=sizes, axes=axes, norm=norm)


def np_irdft(x, axes, sizes, norm):
    return numpy_module().fft.irfftn(x, s=sizes, axes=axes, norm=norm)


def py_dft(values, shape, axes, sizes, norm, inverse=False):
    return _transform("dft", values, shape, axes, sizes, norm, inverse)


def py_rdft(values, shape, axes, sizes, norm):
    return _transform("rdft", values, shape, axes, sizes, norm, False)


def py_irdft(values, shape, axes, sizes, norm):
    return _transform("irdft", values, shape, axes, sizes, norm, True)


def _transform(name, values, shape, axes, sizes, norm, inverse):
    """The transform as naive DFTs, one axis at a time (O(n^2) each: a reference for small inputs)."""
    shape, values = list(shape), [complex(v) for v in values]
    last = len(axes) - 1
    for i, (a, n) in enumerate(zip(axes, sizes)):
        if name == "irdft" and i == last:  # the half spectrum to the whole: X[n - k] = conj(X[k])
            half = n // 2 + 1
            shape, values = _resize(shape, values, a, half)
            shape, values = _along(
                shape, values, a, lambda row: row + [row[n - k].conjugate() for k in range(half, n)], n
            )
        else:
            shape, values = _resize(shape, values, a, n)
        shape, values = _along(shape, values, a, lambda row: _dft(row, inverse, norm), n)
        if name == "rdft" and i == last:
            shape, values = _resize(shape, values, a, n // 2 + 1)
    return [v.real for v in values] if name == "irdft" else values


def _dft(row: list[complex], inverse: bool, norm: str) -> list[complex]:
    n = len(row)
    sign = 1 if inverse else -1
    scale = {"ortho": 1 / math.sqrt(n), "backward": 1 / n if inverse else 1.0, "forward": 1.0 if inverse else 1 / n}
    w = [cmath.exp(sign * 2j * math.pi * k / n) for k in range(n)]
    return [sum(x * w[(j * k) % n] for j, x in enumerate(row)) * scale[norm] for k in range(n)]


def _along(shape, values, axis, fn, size):
    """`fn` on every row along `axis` of the flat row-major `values` of `shape`; each result `size` long."""
    outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1 :])
    n = shape[axis]
    out_shape = shape[:axis] + [size] + shape[axis + 1 :]
    out = [0j] * math.prod(out_shape)
    for o in range(outer):
        for i in range(inner):
            row = fn([values[(o * n + k) * inner + i] for k in range(n)])
            for k, v in enumerate(row):
                out[(o * size + k) * inner + i] = v
    return out_shape, out


def _resize(shape, values, axis, size):
    """Rows along `axis` cut or zero-padded to `size`."""
    return _along(shape, values, axis, lambda row: (row + [0j] * size)[:size], size)
